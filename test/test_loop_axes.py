"""
A loop joint's own rows: friction, damping, limits, speed limits, efforts, prescription, drives.

The parallelogram (crank and rocker on pivots 0.4 m apart, a coupler across their ends, closed
by the loop pin ``rocker_pin`` between coupler and rocker) has one degree of freedom: the
coupler translates, so the pin turns at the crank's rate theta' and a torque tau about the pin
is the generalized force on theta.  Its equation of motion is that of one pendulum,
    I_eff theta'' = -M sin(theta) + tau,
with the pin's friction, damping, effort, limit or DC drive in tau; each scenario is integrated
here with RK4 (or solved at rest) and run in both formulations.  The maximal formulation solves
the pin's rows on the bodies (physics/axes.py), the tree on the relative motion of the pin's
two bodies through the tree (physics/tree_rows.py, ``loop_axis_rows``); a drive on the pin is
the same rotor, gear and motor rows in both (physics/drives.py).  A spherical pin's Coulomb
friction is a norm-bounded vector of rows on its bodies' relative rotation in both
(physics/free_friction.py, ``tree_rows.loop_friction_rows``), also checked in 3-D on a ball
held in its socket by a loop joint alone.  docs/tree.md gives the figures.
"""
import math

from jointsim_ros import ConfigError, Simulator
from jointsim_ros.physics.axes import FRICTION
import numpy as np
import pytest
import robots
from robots import chain, parallelogram
from test_joint_friction_limits import sliding_reference

G = 9.81
BAR = 0.5
#: The parallelogram's inertia about theta: both bars about their pivots, the coupler at L.
I_EFF = (1.0 * (0.04 ** 2 + BAR ** 2) / 12 + 1.0 * 0.25 ** 2
         + 0.6 * (0.04 ** 2 + BAR ** 2) / 12 + 0.6 * 0.25 ** 2 + 2.0 * BAR ** 2)
#: Gravity's moment about theta per sin(theta), N m.
MOMENT = (1.0 * 0.25 + 0.6 * 0.25 + 2.0 * BAR) * G
THETA0 = 0.5
FORMULATIONS = ['maximal', 'tree']


def config(formulation, pin=None, joint=None, **extra):
    """Return the parallelogram's config: the loop pin with ``pin`` keys, ``joint`` overrides."""
    out = {'loop_joints': {'rocker_pin': {
        'type': 'revolute', 'parent': 'coupler', 'child': 'rocker',
        'origin': {'position': [0.4, 0.0, 0.0]}, 'axis': [0.0, 1.0, 0.0], **(pin or {})}},
        'initial_positions': {'crank_pivot': THETA0, 'rocker_pivot': THETA0,
                              'crank_pin': -THETA0},
        'solver': {'formulation': formulation}, **extra}
    if joint:
        out['joints'] = {'rocker_pin': joint}
    return out


def make(formulation, pin=None, joint=None, **extra):
    """Return the parallelogram simulator at theta = THETA0, at rest (the pin's q is 0)."""
    return Simulator.from_urdf(parallelogram(), config(formulation, pin, joint, **extra))


def run(sim, n):
    """Step n times; return the joint positions and velocities after each step."""
    q, v = [], []
    for _ in range(n):
        sim.step(1)
        q.append(sim.joint_positions())
        v.append(sim.joint_velocities())
    return np.array(q), np.array(v)


def reference(torque, n, dt=1e-3, sub=10):
    """(theta, theta') after each of n steps of dt: RK4 of I_eff theta'' = -M sin + torque."""
    h = dt / sub

    def rate(s):
        return np.array([s[1], (-MOMENT * np.sin(s[0]) + torque(s)) / I_EFF])

    state = np.array([THETA0, 0.0])
    out = []
    for _ in range(n):
        for _ in range(sub):
            k1 = rate(state)
            k2 = rate(state + 0.5 * h * k1)
            k3 = rate(state + 0.5 * h * k2)
            k4 = rate(state + h * k3)
            state = state + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        out.append(state)
    return np.array(out)


def pin(sim):
    """Return the loop pin's index in joint_names."""
    return sim.joint_names.index('rocker_pin')


def axis(sim):
    """Return the loop pin's axis index (its row in State.axis_impulse)."""
    engine = sim._engine
    return list(engine.axes.joint).index(engine.joint_index['rocker_pin'])


# -- the configuration --------------------------------------------------------------------------
def test_loop_joints_take_the_joints_section_and_their_own_limits():
    sim = make('maximal', pin={'lower': -0.3, 'upper': 0.2, 'velocity': 2.0, 'effort': 5.0},
               joint={'friction': 1.5, 'static_friction': 2.0, 'damping': 0.4,
                      'restitution': 0.5})
    j = sim.model.joints[-1]
    assert j.loop and j.name == 'rocker_pin'
    assert (j.lower, j.upper, j.velocity_limit, j.effort_limit) == (-0.3, 0.2, 2.0, 5.0)
    assert (j.friction, j.static_friction, j.damping, j.restitution) == (1.5, 2.0, 0.4, 0.5)
    assert sim.set_joint_efforts({'rocker_pin': 9.0}) == {'rocker_pin': 5.0}  # clipped
    free = make('maximal').model.joints[-1]
    assert (free.lower, free.upper, free.friction, free.damping) == (-np.inf, np.inf, 0.0, 0.0)


@pytest.mark.parametrize('pin_keys, match', [
    ({'type': 'continuous', 'lower': -1.0}, "'rocker_pin' is continuous and has no position"),
    ({'lower': 0.5, 'upper': 0.1}, 'lower limit 0.5 above its upper limit 0.1'),
])
def test_bad_loop_joint_limits_are_one_line_config_errors(pin_keys, match):
    with pytest.raises(ConfigError, match=match) as error:
        make('maximal', pin=pin_keys)
    assert '\n' not in str(error.value)


#: The pin's DC drive (physics/drives.py): back-EMF damping N^2 Kt Ke / R = 5.76 N m s/rad on
#: theta, about critical for the pendulum's 0.64 kg m^2 and 12.8 N m/rad at theta = 0.36.
R, KT, JM, N = 1.0, 0.24, 1e-4, 10.0


def drive(**overrides):
    """Return the pin's drive parameters (no inductance unless given), with overrides."""
    return {'resistance': R, 'inductance': 0.0, 'torque_constant': KT, 'rotor_inertia': JM,
            'gear_ratio': N, **overrides}


@pytest.mark.parametrize('pin_keys, extra', [
    ({}, {'drives': {'rocker_pin': drive()}}),
    ({'type': 'spherical'}, {'joints': {'rocker_pin': {'friction': 0.5}}}),
])
@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_both_formulations_take_a_drive_on_a_loop_joint_and_friction_on_a_ball_one(
        pin_keys, extra, formulation):
    """Tree mode refused both until it had them as rows between the joint's bodies."""
    sim = make(formulation, pin=pin_keys, **extra)
    assert sim.step(10).steps == 10
    assert max(sim.joint_anchor_errors().values()) < 1e-9


def test_a_tree_without_loop_joints_has_no_loop_axes():
    engine = Simulator.from_urdf(chain(3), {'solver': {'formulation': 'tree'}})._engine
    assert len(engine.tree.loop_axes) == 0 and np.all(engine.tree.axis_link < 0)
    engine = make('tree', joint={'friction': 1.0})._engine
    assert len(engine.tree.loop_axes) == 1


# -- physics against physics, both formulations ------------------------------------------------
@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_pin_friction_above_gravitys_torque_holds_the_parallelogram(formulation):
    """Breakaway 7 N m against M sin(0.5) = 6.585 N m: it stays where it was let go."""
    assert MOMENT * np.sin(THETA0) < 7.0
    sim = make(formulation, joint={'friction': 7.0})
    q, v = run(sim, 1000)
    # measured: tree 1.3e-12 rad; maximal creeps 7.7e-5 rad in its first 0.1 s (its loop
    # pin's friction row is not converged with the tree joints' blocks in 20 sweeps), then holds
    creep = np.abs(q[:, 0] - THETA0).max()
    assert creep < (1e-9 if formulation == 'tree' else 1e-4), creep
    assert np.abs(v[-100:]).max() < 1e-8
    assert max(sim.joint_anchor_errors().values()) < 1e-9
    # the friction row carries gravity's moment: its impulse over dt (tree 6.58443, maximal
    # 6.58350 N m at the pose it crept to; M sin(0.5) = 6.58443 N m)
    held = sim._engine.state.axis_impulse[axis(sim), FRICTION] / sim.dt
    assert held == pytest.approx(MOMENT * np.sin(q[-1, 0]), rel=1e-6)


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_pin_friction_below_gravitys_torque_lets_it_slide_with_the_analytic_deceleration(
        formulation):
    """Friction 4 N m < 6.585 N m: theta'' = (-M sin(theta) + 4) / I_eff while it slides."""
    friction = 4.0
    sim = make(formulation, joint={'friction': friction})
    q, v = run(sim, 300)
    ref = reference(lambda s: friction, 300)  # theta' < 0 throughout: friction pushes back
    assert np.all(ref[:, 1] < 0.0)
    # measured 1.1e-3 rad (maximal) and 4.5e-4 rad (tree) after 0.3 s; first order in dt
    assert np.abs(q[:, 0] - ref[:, 0]).max() < 1.5e-3
    # it slides slower than the frictionless swing: the friction did its work
    free = reference(lambda s: 0.0, 300)
    assert q[-1, 0] - free[-1, 0] > 0.8 * (ref[-1, 0] - free[-1, 0])
    # the pin's rate is the crank's (the coupler translates); maximal's first step is 7e-3
    # rad/s apart (its first sweeps start cold), then 9e-8
    assert np.abs(v[10:, pin(sim)] - v[10:, 0]).max() < 1e-6


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_pin_damping_decays_the_swing_as_the_viscous_pendulum(formulation):
    damping = 0.5
    sim = make(formulation, joint={'damping': damping})
    q, _ = run(sim, 2000)
    ref = reference(lambda s: -damping * s[1], 2000)
    # measured 8.9e-4 rad over 2 s in both formulations (first order, as the free swing)
    assert np.abs(q[:, 0] - ref[:, 0]).max() < 1.5e-3
    # the amplitude decays: 0.5 rad at the start, 0.216 rad in the last 0.3 s
    assert np.abs(q[-300:, 0]).max() == pytest.approx(np.abs(ref[-300:, 0]).max(), abs=1e-3)


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_limit_on_the_pin_stops_the_mechanism_at_it(formulation):
    """The pin (q = theta - 0.5) swings down to its lower limit -0.3 and rests there."""
    sim = make(formulation, pin={'lower': -0.3})
    q, v = run(sim, 1000)
    k = pin(sim)
    beyond = -0.3 - q[:, k].min()
    if formulation == 'tree':
        # the limit rows are speculative and the position push clamps at the limit too:
        # measured 2.8e-16 rad beyond, never more than the position tolerance
        assert beyond <= sim.config.solver.position_tolerance
        assert q[-1, k] == pytest.approx(-0.3, abs=1e-9)
    else:
        # maximal: 1.9e-3 rad beyond at the impact (20 sweeps over the joints' blocks), none
        # of it projected back (a loop joint's limit has no position stage there); 1e-5 at rest
        assert beyond < 2.5e-3, beyond
        assert q[-1, k] == pytest.approx(-0.3, abs=2e-5)
    assert q[-1, 0] == pytest.approx(0.2, abs=2e-5)  # theta = 0.5 + q
    assert np.abs(v[-100:]).max() < 1e-6
    assert max(sim.joint_anchor_errors().values()) < 1e-9


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_the_pins_rate_is_the_finite_difference_of_its_position(formulation):
    sim = make(formulation, joint={'damping': 0.2})
    q, v = run(sim, 1000)
    k = pin(sim)
    difference = np.diff(q[:, k]) / sim.dt
    assert np.abs(v[:, k]).max() > 2.0  # it moves
    # measured 6e-13 (tree) and 8e-8 (maximal) rad/s: the rate after the step is the one
    # the positions moved with
    assert np.abs(difference - v[1:, k]).max() < 1e-6


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_an_effort_on_the_pin_holds_the_parallelogram_against_gravity(formulation):
    sim = make(formulation)
    sim.set_joint_efforts({'rocker_pin': MOMENT * np.sin(THETA0)})
    q, v = run(sim, 1000)
    # measured 3e-11 (maximal) and 1.8e-9 (tree) rad over 1 s
    assert np.abs(q[:, 0] - THETA0).max() < 1e-8
    assert np.abs(v).max() < 1e-5
    # 1 N m more turns it up with the analytic acceleration
    sim = make(formulation)
    sim.set_joint_efforts({'rocker_pin': MOMENT * np.sin(THETA0) + 1.0})
    q, _ = run(sim, 200)
    ref = reference(lambda s: MOMENT * np.sin(THETA0) + 1.0, 200)
    # measured 1.39e-4 rad in both after 0.2 s (it turned 0.03 rad; first order in dt)
    assert np.abs(q[:, 0] - ref[:, 0]).max() < 2e-4


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_an_enforced_speed_limit_on_the_pin_caps_the_swing(formulation):
    sim = make(formulation, pin={'velocity': 0.5}, limits={'enforce_velocity': True})
    q, v = run(sim, 1000)
    assert np.abs(v[:, pin(sim)]).max() <= 0.5 * (1 + 1e-9)
    # the crank with it: tree 0.5 + 1e-10; maximal 0.509 (its loop's rows and the pin's
    # speed row are not converged together in 20 sweeps)
    assert np.abs(v[:, 0]).max() < (0.5 + 1e-8 if formulation == 'tree' else 0.52)
    assert max(sim.joint_anchor_errors().values()) < 1e-9


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_prescribed_motion_of_the_pin_moves_the_mechanism(formulation):
    """The pin turns 0.3 rad in 1 s along a spline; the crank follows (theta = 0.5 + q)."""
    sim = make(formulation)
    sim.prescribed.joints([0.0, 1.0], [[0.0], [0.3]], ['rocker_pin'])
    q, _ = run(sim, 1000)
    k = pin(sim)
    t = sim.dt * np.arange(1, 1001)
    curve = 0.3 * (3 * t ** 2 - 2 * t ** 3)  # the clamped cubic through (0, 0), (1, 0.3)
    # measured 2.8e-15 rad off the curve (tree: the push lands it there), 3.4e-5 (maximal:
    # its rows follow the curve's rate, no position stage for a loop joint)
    off = np.abs(q[:, k] - curve).max()
    assert off < (1e-9 if formulation == 'tree' else 5e-5), off
    assert q[-1, k] == pytest.approx(0.3, abs=1e-4)
    assert q[-1, 0] == pytest.approx(0.8, abs=1e-4)
    assert max(sim.joint_anchor_errors().values()) < 1e-9
    # the last step's effort: gravity's moment at theta = 0.8 and the spline's deceleration
    # q'' = 0.3 (6 - 12 t) at t = 1 (measured 2.3e-4 off in both)
    assert sim.prescribed.efforts()['rocker_pin'] == pytest.approx(
        MOMENT * np.sin(q[-1, 0]) + I_EFF * 0.3 * (6 - 12), rel=1e-3)


def test_the_loop_pins_rows_agree_between_formulations():
    """Friction sliding, damping: the same motion (measured 6.3e-4, 3.4e-7 rad apart)."""
    for joint, steps, apart in (({'friction': 4.0}, 300, 1e-3),
                                ({'damping': 0.5}, 2000, 1e-6)):
        runs = [run(make(f, joint=joint), steps)[0] for f in FORMULATIONS]
        assert np.abs(runs[0] - runs[1]).max() < apart
    # what the pin transmits while it holds (its rows' and effort's impulses on the rocker,
    # engine.joint_wrench; measured 17.0316, 6.6511 N and 3.6450 N m in both with the effort;
    # with friction maximal's 4.4e-3 N off, at the pose its friction crept to)
    for joint, efforts, close in (({'friction': 7.0}, None, 6e-3),
                                  (None, MOMENT * np.sin(THETA0), 1e-4)):
        wrenches = []
        for formulation in FORMULATIONS:
            sim = make(formulation, joint=joint)
            if efforts:
                sim.set_joint_efforts({'rocker_pin': efforts})
            run(sim, 500)
            force, torque = sim._engine.joint_wrench(sim._engine.joint_index['rocker_pin'])[:2]
            wrenches.append(np.concatenate((force, torque)))
        assert np.allclose(wrenches[0], wrenches[1], rtol=0, atol=close), wrenches
        assert wrenches[1][4] == pytest.approx(3.64495, abs=1e-4)
    # a prescribed pin: the same efforts
    efforts = []
    for formulation in FORMULATIONS:
        sim = make(formulation)
        sim.prescribed.joints([0.0, 1.0], [[0.0], [0.3]], ['rocker_pin'])
        out = []
        for _ in range(1000):
            sim.step(1)
            out.append(sim.prescribed.efforts()['rocker_pin'])
        efforts.append(np.array(out))
    # measured after the first 50 steps: 7e-5 of the peak apart (maximal's efforts swing by
    # 0.8 N m in its first steps while its sweeps warm up, the tree's do not)
    peak = np.abs(efforts[1]).max()
    assert np.abs(efforts[0][50:] - efforts[1][50:]).max() < 2e-4 * peak


# -- a DC drive on the loop pin: the maximal formulation's rotor, gear and motor rows -----------
def driven_reference(voltage, n, gravity=True, dt=1e-3, sub=10):
    """
    (theta, theta', i) after each of n steps: RK4 of the parallelogram driven through the pin.

    (I_eff + N^2 J_m) theta'' = -M sin(theta) + N Kt i,  i = (V - Ke N theta') / R (no
    inductance, Ke = Kt), the rotor geared rigidly to the pin (w_m = N theta').
    """
    h = dt / sub
    moment = MOMENT if gravity else 0.0

    def rate(s):
        current = (voltage - KT * N * s[1]) / R
        return np.array([s[1], (-moment * np.sin(s[0]) + N * KT * current)
                         / (I_EFF + N * N * JM)])

    state = np.array([THETA0, 0.0])
    out = []
    for _ in range(n):
        for _ in range(sub):
            k1 = rate(state)
            k2 = rate(state + 0.5 * h * k1)
            k3 = rate(state + 0.5 * h * k2)
            k4 = rate(state + h * k3)
            state = state + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        out.append((state[0], state[1], (voltage - KT * N * state[1]) / R))
    return np.array(out)


def run_driven(sim, n):
    """Step n times; return positions, velocities and the pin drive's state after each step."""
    q, v, drive_states = [], [], []
    for _ in range(n):
        sim.step(1)
        q.append(sim.joint_positions())
        v.append(sim.joint_velocities())
        drive_states.append(sim.drive_state('rocker_pin'))
    return np.array(q), np.array(v), drive_states


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_drive_on_the_pin_holds_the_parallelogram_at_stall(formulation):
    """V = R M sin(theta0) / (N Kt): the stall torque N Kt V / R is gravity's moment."""
    held = MOMENT * np.sin(THETA0)
    voltage = R * held / (N * KT)
    sensors = {'pivot_ft': {'joint': 'rocker_pivot', 'rate': 0}}
    sim = make(formulation, drives={'rocker_pin': drive()}, force_torque_sensors=sensors)
    sim.set_voltages({'rocker_pin': voltage})
    q, v, states = run_driven(sim, 1000)
    # measured over 1 s: tree 2e-12 rad; maximal 2.2e-8 rad, moving at up to 2.9e-5 rad/s
    # while its first sweeps start cold (its effort-held pin: 3e-11 rad)
    tree = formulation == 'tree'
    assert np.abs(q[:, 0] - THETA0).max() < (1e-10 if tree else 1e-7)
    assert np.abs(v).max() < (1e-8 if tree else 1e-4)
    state = states[-1]
    assert state['current'] == pytest.approx(voltage / R, rel=1e-7)
    assert state['motor_torque'] == pytest.approx(KT * voltage / R, rel=1e-7)
    assert state['output_effort'] == pytest.approx(held, rel=1e-7)
    assert state['rotor_speed'] == pytest.approx(0.0, abs=1e-6)
    assert sim.joint_efforts()[pin(sim)] == pytest.approx(held, rel=1e-7)
    # the pin transmits what the effort M sin(theta0) made it transmit (the rows' test above:
    # 3.64495 N m about y on the rocker), and the rocker's pivot reads what it read then (the
    # Newton-Euler pass in tree mode counts the drive's impulse on the rocker)
    by_effort = make(formulation, force_torque_sensors=sensors)
    by_effort.set_joint_efforts({'rocker_pin': held})
    by_effort.step(1000)
    assert np.allclose(sim.sensors.wrench('pivot_ft'), by_effort.sensors.wrench('pivot_ft'),
                       rtol=0, atol=1e-6)
    pin_wrench = [np.concatenate(s._engine.joint_wrench(s._engine.joint_index['rocker_pin'])[:2])
                  for s in (sim, by_effort)]
    assert np.allclose(pin_wrench[0], pin_wrench[1], rtol=0, atol=1e-6)
    assert pin_wrench[0][4] == pytest.approx(3.64495, abs=1e-4)


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_drive_on_the_pin_settles_where_its_stall_torque_meets_gravity(formulation):
    """V = 2: it swings from 0.5 to asin(N Kt V / (R M)) = 0.3571 rad as the analytic motor."""
    voltage = 2.0
    sim = make(formulation, drives={'rocker_pin': drive()})
    sim.set_voltages({'rocker_pin': voltage})
    q, v, states = run_driven(sim, 4000)
    ref = driven_reference(voltage, 4000)
    # measured 3.5e-5 rad in both, and 1.1e-3 A at the first steps (the back-EMF of the
    # step's end speed; first order in dt, no inductance)
    assert np.abs(q[:, 0] - ref[:, 0]).max() < 1e-4
    current = np.array([s['current'] for s in states])
    assert np.abs(current - ref[:, 2]).max() < 2e-3
    # the rotor turns with the pin through the gear (to rounding)
    rotor = np.array([s['rotor_speed'] for s in states])
    assert np.abs(rotor - N * v[:, pin(sim)]).max() < 1e-9
    # at rest: the stall torque holds gravity's moment
    stall = N * KT * voltage / R
    assert q[-1, 0] == pytest.approx(np.arcsin(stall / MOMENT), abs=1e-6)
    assert states[-1]['current'] == pytest.approx(voltage / R, rel=1e-6)
    assert states[-1]['output_effort'] == pytest.approx(stall, rel=1e-6)
    assert max(sim.joint_anchor_errors().values()) < 1e-9


def test_a_driven_pin_moves_the_same_in_both_formulations():
    """Positions, currents and efforts of the swing above; an inductance and gear losses."""
    runs = {}
    for formulation in FORMULATIONS:
        sim = make(formulation, drives={'rocker_pin': drive(inductance=5e-4, efficiency=0.9,
                                                            viscous_friction=1e-4)})
        sim.set_voltages({'rocker_pin': 2.0})
        q, _, states = run_driven(sim, 2000)
        runs[formulation] = (q, np.array([[s['current'], s['output_effort']]
                                          for s in states]))
    (q_max, drive_max), (q_tree, drive_tree) = runs['maximal'], runs['tree']
    # measured 3.8e-7 rad apart; 7.4e-4 A and 7e-3 N m in the first step (maximal's sweeps
    # start cold, its gear-friction row among them), 6.9e-6 A and 1.8e-5 N m after 50 steps
    assert np.abs(q_max - q_tree).max() < 1e-6
    assert np.abs(drive_max[:, 0] - drive_tree[:, 0]).max() < 1e-3
    assert np.abs(drive_max[50:, 0] - drive_tree[50:, 0]).max() < 2e-5
    assert np.abs(drive_max[:, 1] - drive_tree[:, 1]).max() < 1e-2
    assert np.abs(drive_max[50:, 1] - drive_tree[50:, 1]).max() < 5e-5


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_driven_pin_runs_at_the_motors_no_load_speed_without_gravity(formulation):
    """The rotor at V Kt / (R b + Kt Ke) (b: the motor's viscous friction), the pin 1/N."""
    voltage, b = 1.5, 2e-3
    sim = make(formulation, drives={'rocker_pin': drive(viscous_friction=b)},
               gravity=[0.0, 0.0, 0.0])
    sim.set_voltages({'rocker_pin': voltage})
    _, v, states = run_driven(sim, 2000)
    rotor = voltage * KT / (R * b + KT * KT)
    # measured: maximal 1e-10; tree 3e-6 slow (the tree's loop, closed at the velocities of
    # each step's start, takes that much energy from the turning mechanism)
    assert v[-1, pin(sim)] == pytest.approx(rotor / N, rel=1e-5)
    assert states[-1]['rotor_speed'] == pytest.approx(rotor, rel=1e-5)
    assert states[-1]['current'] == pytest.approx(b * rotor / KT, rel=1e-3)
    # with a gear efficiency against the pin's damping c: eta N (Kt i - b w_m) = c qd
    eta, c = 0.8, 2.0
    sim = make(formulation, drives={'rocker_pin': drive(viscous_friction=b, efficiency=eta)},
               joint={'damping': c}, gravity=[0.0, 0.0, 0.0])
    sim.set_voltages({'rocker_pin': voltage})
    _, v, states = run_driven(sim, 2000)
    speed = eta * N * KT * voltage / R / (c + eta * N * N * (KT * KT / R + b))
    assert v[-1, pin(sim)] == pytest.approx(speed, rel=1e-5)
    assert states[-1]['output_effort'] == pytest.approx(c * speed, rel=1e-5)


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_the_pins_effort_limit_caps_its_drives_current(formulation):
    """Effort limit 2 N m: the current loop holds E / (N Kt); constant acceleration."""
    effort = 2.0
    sim = make(formulation, pin={'effort': effort}, drives={'rocker_pin': drive()},
               gravity=[0.0, 0.0, 0.0])
    sim.set_voltages({'rocker_pin': 12.0})  # 50 A unlimited
    q, v, states = run_driven(sim, 500)
    assert states[-1]['current'] == pytest.approx(effort / (N * KT), rel=1e-9)
    accel = effort / (I_EFF + N * N * JM)  # the rotor's inertia geared in
    # the gear's output: the motor's torque less what accelerates the rotor
    assert states[-1]['output_effort'] == pytest.approx(effort - N * N * JM * accel, rel=1e-6)
    t = sim.dt * np.arange(1, 501)
    assert v[-1, 0] == pytest.approx(accel * t[-1], rel=1e-6)
    # measured 7.8e-4 rad in both: semi-implicit Euler's a t dt / 2
    assert np.abs(q[:, 0] - (THETA0 + 0.5 * accel * t ** 2)).max() < 1e-3


# -- Coulomb friction of a spherical loop joint -------------------------------------------------
@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_ball_pins_friction_holds_above_and_slides_below_gravitys_moment(formulation):
    """The pin as a ball joint: the parallelogram turns it about y alone, as the hinge above."""
    sim = make(formulation, pin={'type': 'spherical'}, joint={'friction': 7.0})
    q, v = run(sim, 1000)
    # measured: tree 1.3e-12 rad; maximal creeps 7.8e-5 rad, as with the hinge
    creep = np.abs(q[:, 0] - THETA0).max()
    assert creep < (1e-9 if formulation == 'tree' else 1e-4), creep
    assert np.abs(v[-100:]).max() < 1e-8
    assert max(sim.joint_anchor_errors().values()) < 1e-9
    # the friction's torque about y is gravity's moment, and the pin transmits it
    torque = sim._engine.joint_wrench(sim._engine.joint_index['rocker_pin'])[1]
    assert torque[1] == pytest.approx(3.64495, abs=(1e-4 if formulation == 'tree' else 1e-3))
    friction = 4.0
    sim = make(formulation, pin={'type': 'spherical'}, joint={'friction': friction})
    q, _ = run(sim, 300)
    ref = reference(lambda s: friction, 300)
    # measured 1.1e-3 rad (maximal) and 4.5e-4 rad (tree) after 0.3 s, as with the hinge
    assert np.abs(q[:, 0] - ref[:, 0]).max() < 1.5e-3


def ball_in_socket(formulation, friction):
    """Return a 2 kg ball free in the tree, held at its centre by a spherical loop joint."""
    urdf = robots.robot('ball', robots.link('socket'),
                        robots.link('ball', robots.inertial(2.0, 0.1, 0.1, 0.1)),
                        robots.joint('float', 'floating', 'socket', 'ball'))
    return Simulator.from_urdf(urdf, {
        'gravity': [0.0, 0.0, 0.0], 'solver': {'formulation': formulation},
        'loop_joints': {'cup': {'type': 'spherical', 'parent': 'socket', 'child': 'ball'}},
        'joints': {'cup': {'friction': friction}}})


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_ball_loop_joints_friction_holds_a_load_below_it_in_any_direction(formulation):
    sim = ball_in_socket(formulation, 1.0)
    quat0 = sim.link_pose('ball')[1]
    for k in range(50):
        direction = np.array([math.cos(k), math.sin(k), math.cos(2 * k)])
        sim.set_link_wrench('ball', [0, 0, 0], 0.95 * direction / np.linalg.norm(direction))
        sim.step(100)
    # measured 1e-19 rad/s (tree) and 3e-45 (maximal)
    assert np.linalg.norm(sim.link_twist('ball')[1]) < 1e-9
    assert np.allclose(sim.link_pose('ball')[1], quat0, atol=1e-9)
    assert np.linalg.norm(sim.link_pose('ball')[0]) < 1e-9


BALL_FRICTION, TORQUE, SPIN = 1.0, 3.0, 2.0


def turning_torque(t):
    """Return the load at time t: 3 N m turning at 2 rad/s in the x-y plane, N m."""
    return TORQUE * np.array([math.cos(SPIN * t), math.sin(SPIN * t), 0.0])


def slip(formulation):
    """Return the ball's angular velocity after each of 1000 steps under the turning torque."""
    sim = ball_in_socket(formulation, BALL_FRICTION)
    rates = []
    for _ in range(1000):
        sim.set_link_wrench('ball', [0, 0, 0], turning_torque(sim.time))
        sim.step(1)
        rates.append(sim.link_twist('ball')[1])
    assert np.linalg.norm(sim.link_pose('ball')[0]) < 1e-9  # the loop joint holds it
    return np.array(rates)


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_a_ball_loop_joints_friction_opposes_the_slip_under_a_turning_torque(formulation):
    """3 N m against 1 N m of friction: the friction disc's analytic slip (sliding_reference)."""
    rates = slip(formulation)
    reference_rates = sliding_reference(0.1, BALL_FRICTION, turning_torque, [0, 0, 0], 1.0)
    worst = np.linalg.norm(rates - reference_rates[:1000], axis=1).max()
    # first order in dt, the load held over each 1 ms step (as the tree ball joint's test)
    assert worst < 0.02 * np.max(np.linalg.norm(reference_rates, axis=1))


def test_a_ball_loop_joints_friction_is_the_same_in_both_formulations():
    rates = [slip(f) for f in FORMULATIONS]
    # measured 1e-12 rad/s apart (their rows are the same, seen through the joint's rows)
    assert np.abs(rates[0] - rates[1]).max() < 1e-6
