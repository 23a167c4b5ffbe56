"""
Joint Coulomb friction, viscous damping and limits against their analytic behaviour.

The scalar joints' tests run in both formulations (``formulation``): the rows are defined once
(physics/axes.py) and each formulation solves them on its own velocities.
"""
import logging
import math

from jointsim_ros import ConfigError, Simulator
import numpy as np
import pytest
from robots import inertial, joint, link, robot

G = 9.81
FORMULATIONS = ('maximal', 'tree')
both = pytest.mark.parametrize('formulation', FORMULATIONS)


def configured(config, formulation):
    """Return config (a dict or None) with solver.formulation set."""
    out = dict(config or {})
    out['solver'] = {**out.get('solver', {}), 'formulation': formulation}
    return out


def door(friction=20.0, damping=0.0, limits=None):
    """Return a door on a vertical hinge: 10 kg at 0.8 m, 8 kg m^2 about the hinge."""
    # 10 * 0.8^2 = 6.4, plus 1.6 about its own centre of mass
    extra = f'<dynamics damping="{damping}" friction="{friction}"/>'
    jtype = 'continuous'
    if limits is not None:
        jtype = 'revolute'
        extra += (f'<limit lower="{limits[0]}" upper="{limits[1]}" effort="1000" '
                  f'velocity="100"/>')
    return robot('door', link('frame'),
                 link('leaf', inertial(10.0, 1.0, 1.0, 1.6, xyz='0.8 0 0')),
                 joint('hinge', jtype, 'frame', 'leaf', axis='0 0 1', extra=extra))


@pytest.mark.parametrize('dt', [0.001, 0.01])
@both
def test_door_decelerates_linearly_and_stops(dt, formulation):
    inertia, w0, friction = 8.0, 1.3, 20.0
    sim = Simulator.from_urdf(door(friction), configured({'dt': dt}, formulation))
    sim.set_joint_state({'hinge': 0.0}, {'hinge': w0})
    t_stop = inertia * w0 / friction
    angle = inertia * w0 ** 2 / (2 * friction)
    speeds = []
    while sim.joint_velocities()[0] > 1e-6 and sim.time < 2 * t_stop:
        speeds.append((sim.time, sim.joint_velocities()[0]))
        sim.step(1)
    assert sim.time == pytest.approx(t_stop, rel=0.01)
    # semi-implicit Euler turns through exactly dt * sum of the post-step speeds, which lags
    # the exact angle by (friction / inertia) dt t_stop / 2 (0.2 % at 1 ms, 1.9 % at 10 ms)
    n = round(t_stop / dt)
    discrete = dt * (n * w0 - friction / inertia * dt * n * (n + 1) / 2)
    assert sim.joint_positions()[0] == pytest.approx(discrete, rel=1e-4)
    if dt <= 0.001:
        assert sim.joint_positions()[0] == pytest.approx(angle, rel=0.01)
    # linear deceleration at friction / inertia
    times, rates = np.array(speeds).T
    assert np.allclose(rates, w0 - friction / inertia * times, atol=friction / inertia * dt)
    stopped = sim.joint_positions()[0]
    sim.step(int(round(2.0 / dt)))
    assert sim.joint_positions()[0] == pytest.approx(stopped, abs=1e-9)
    assert abs(sim.joint_velocities()[0]) < 1e-9


@both
def test_revolute_joint_sticks_below_and_slides_above_breakaway(formulation):
    config = {'joints': {'hinge': {'friction': 20.0, 'static_friction': 30.0}},
              'gravity': [0, 0, 0]}
    sim = Simulator.from_urdf(door(), configured(config, formulation))
    sim.set_joint_efforts({'hinge': 25.0})  # above sliding, below breakaway friction
    sim.step(60000)  # a simulated minute
    assert abs(sim.joint_positions()[0]) < 1e-9
    sim.set_joint_efforts({'hinge': 31.0})  # breaks away, then slides against 20 N m
    sim.step(1)
    t0, w0 = sim.time, sim.joint_velocities()[0]
    sim.step(500)
    accel = (sim.joint_velocities()[0] - w0) / (sim.time - t0)
    assert accel == pytest.approx((31.0 - 20.0) / 8.0, rel=1e-4)


@both
def test_prismatic_joint_sticks_and_slides(formulation):
    sled = robot('sled', link('rail'), link('carriage', inertial(4.0, 0.1, 0.1, 0.1)),
                 joint('slide', 'prismatic', 'rail', 'carriage', axis='1 0 0',
                       extra='<limit lower="-100" upper="100" effort="100" velocity="10"/>'
                             '<dynamics friction="8"/>'))
    sim = Simulator.from_urdf(sled, configured(None, formulation))
    sim.set_joint_efforts({'slide': 7.9})
    sim.step(10000)
    assert abs(sim.joint_positions()[0]) < 1e-9
    sim.set_joint_efforts({'slide': -12.0})
    t0 = sim.time
    sim.step(1000)
    assert sim.joint_velocities()[0] == pytest.approx(-(12.0 - 8.0) / 4.0 * (sim.time - t0),
                                                      rel=1e-6)


@pytest.mark.parametrize('dt', [0.001, 0.01])
@both
def test_damping_decays_exponentially(dt, formulation):
    c, inertia, w0 = 4.0, 8.0, 2.0
    sim = Simulator.from_urdf(door(friction=0.0, damping=c),
                              configured({'dt': dt}, formulation))
    sim.set_joint_state({'hinge': 0.0}, {'hinge': w0})
    for _ in range(5):
        sim.step(int(round(0.4 / dt)))
        # implicit Euler: exactly w0 / (1 + c dt / I)^n, within (c dt / I)/2 of the exponential
        n = round(sim.time / dt)
        assert sim.joint_velocities()[0] == pytest.approx(w0 / (1 + c * dt / inertia) ** n,
                                                          rel=1e-4)
        assert sim.joint_velocities()[0] == pytest.approx(w0 * math.exp(-c * sim.time / inertia),
                                                          rel=c * dt / inertia * sim.time)


@both
def test_huge_damping_is_slow_not_unstable(formulation):
    sim = Simulator.from_urdf(door(friction=0.0, damping=1e9),
                              configured({'dt': 0.01}, formulation))
    sim.set_joint_state({'hinge': 0.0}, {'hinge': 100.0})
    sim.step(10)
    assert 0.0 < sim.joint_positions()[0] < 100.0 * 8.0 / 1e9 * 1.01
    assert abs(sim.joint_velocities()[0]) < 1e-6


@pytest.mark.parametrize('restitution', [1.0, 0.5, 0.0])
@both
def test_limit_bounce(restitution, formulation):
    sim = Simulator.from_urdf(door(friction=0.0, limits=(-0.5, 0.5)),
                              configured({'limits': {'restitution': restitution}}, formulation))
    sim.set_joint_state({'hinge': 0.0}, {'hinge': 1.7})
    sim.step(int(0.5 / 1.7 / sim.dt) + 20)  # past the first impact
    assert sim.joint_velocities()[0] == pytest.approx(-restitution * 1.7, abs=1e-5)
    assert sim.joint_positions()[0] <= 0.5 + 1e-9
    energy_ratio = sim.mechanical_energy()[0] / (0.5 * 8.0 * 1.7 ** 2)
    assert energy_ratio == pytest.approx(restitution ** 2, abs=0.01)


@both
def test_bouncing_pendulum_keeps_its_energy_with_restitution_one(formulation):
    bob = inertial(2.0, 1e-3, 1e-3, 1e-3, xyz='0 0 -0.5')
    pendulum = robot('bell', link('base'), link('bob', bob),
                     joint('hinge', 'revolute', 'base', 'bob', axis='0 1 0',
                           extra='<limit lower="-0.3" upper="0.3" effort="10" velocity="10"/>'))
    sim = Simulator.from_urdf(pendulum, configured({'limits': {'restitution': 1.0}}, formulation))
    sim.set_joint_state({'hinge': 0.0}, {'hinge': 3.0})
    e0 = sum(sim.mechanical_energy())
    bounces, previous = 0, 3.0
    for _ in range(4000):
        sim.step(1)
        rate = sim.joint_velocities()[0]
        if rate * previous < 0 and abs(sim.joint_positions()[0]) > 0.29:
            bounces += 1
            assert sum(sim.mechanical_energy()) == pytest.approx(e0, rel=0.01 * bounces)
        previous = rate
    assert bounces >= 8


@both
def test_pendulum_rests_on_its_limit_without_jitter_or_creep(formulation):
    arm = robot('arm', link('base'), link('arm', inertial(3.0, 0.01, 0.05, 0.05,
                                                          xyz='0.4 0 0')),
                joint('shoulder', 'revolute', 'base', 'arm', axis='0 1 0',
                      extra='<limit lower="-1" upper="0.3" effort="10" velocity="10"/>'))
    # a positive angle lowers the arm onto the limit
    sim = Simulator.from_urdf(arm, configured(None, formulation))
    sim.step(2000)
    for _ in range(8):
        sim.step(1000)
        assert sim.joint_positions()[0] == pytest.approx(0.3, abs=1e-7)
        assert abs(sim.joint_velocities()[0]) < 1e-6


@both
def test_fast_prismatic_joint_does_not_tunnel_through_its_limit(formulation):
    sled = robot('sled', link('rail'), link('carriage', inertial(1.0, 0.01, 0.01, 0.01)),
                 joint('slide', 'prismatic', 'rail', 'carriage', axis='1 0 0',
                       extra='<limit lower="-0.1" upper="0.1" effort="10" velocity="100"/>'))
    sim = Simulator.from_urdf(sled, configured({'gravity': [0, 0, 0]}, formulation))
    sim.set_joint_state({'slide': 0.0}, {'slide': 50.0})  # 5 cm per step, 10 cm to go
    for _ in range(20):
        sim.step(1)
        assert sim.joint_positions()[0] <= 0.1 + 1e-9
    assert sim.joint_positions()[0] == pytest.approx(0.1, abs=1e-9)
    assert abs(sim.joint_velocities()[0]) < 1e-9


@both
def test_effort_limit_clips_commands(formulation):
    sim = Simulator.from_urdf(door(friction=0.0, limits=(-10, 10)),
                              configured({'gravity': [0, 0, 0]}, formulation))
    # the door's URDF effort limit is 1000 N m
    assert sim.set_joint_efforts({'hinge': 2500.0}) == {'hinge': 1000.0}
    sim.step(100)
    assert sim.joint_velocities()[0] == pytest.approx(1000.0 / 8.0 * sim.time, rel=1e-3)
    assert sim.joint_efforts()[0] == 1000.0
    free = Simulator.from_urdf(door(friction=0.0, limits=(-10, 10)),
                               configured({'limits': {'enforce_effort': False}}, formulation))
    assert free.set_joint_efforts({'hinge': 2500.0}) == {}


@both
def test_velocity_limit_reported_once_or_enforced(caplog, formulation):
    fast = door(friction=0.0, limits=(-100, 100)).replace('velocity="100"', 'velocity="1.5"')
    sim = Simulator.from_urdf(fast, configured({'gravity': [0, 0, 0]}, formulation))
    sim.set_joint_efforts({'hinge': 80.0})
    with caplog.at_level(logging.WARNING, logger='jointsim_ros'):
        for _ in range(5):
            sim.step(100)
    assert sim.joint_velocities()[0] > 1.5
    messages = [r.getMessage() for r in caplog.records if 'velocity limit' in r.getMessage()]
    assert len(messages) == 1 and "'hinge'" in messages[0]
    held = Simulator.from_urdf(fast, configured({'gravity': [0, 0, 0],
                                                 'limits': {'enforce_velocity': True}},
                                                formulation))
    held.set_joint_efforts({'hinge': 80.0})
    held.step(500)
    assert held.joint_velocities()[0] == pytest.approx(1.5, rel=1e-9)


@both
def test_friction_holds_a_driven_joint_with_its_rotor(formulation):
    # the friction row acts on link and geared rotor together: a 25 N m load against 30 N m of
    # friction does not move the joint even though the rotor adds N^2 J_m of inertia
    drive = {'resistance': 1e6, 'inductance': 0.0, 'torque_constant': 0.05,
             'rotor_inertia': 1e-4, 'gear_ratio': 100.0}
    sim = Simulator.from_urdf(door(friction=30.0), configured(
        {'gravity': [0, 0, 0], 'drives': {'hinge': drive}}, formulation))
    sim.set_joint_efforts({'hinge': 25.0})
    sim.step(5000)
    assert abs(sim.joint_positions()[0]) < 1e-9
    sim.set_joint_efforts({'hinge': 40.0})
    sim.step(1000)
    assert sim.joint_velocities()[0] == pytest.approx((40.0 - 30.0) / (8.0 + 1e4 * 1e-4)
                                                      * 0.999, rel=2e-3)


def test_bad_joint_overrides_are_clear_errors():
    with pytest.raises(ConfigError, match="joints names joint 'hing'.*'hinge'"):
        Simulator.from_urdf(door(), {'joints': {'hing': {'friction': 1.0}}})
    with pytest.raises(ConfigError, match="unknown key 'frict'.*did you mean 'friction'"):
        Simulator.from_urdf(door(), {'joints': {'hinge': {'frict': 1.0}}})
    with pytest.raises(ConfigError, match='restitution'):
        Simulator.from_urdf(door(), {'limits': {'restitution': 1.5}})


def sliding_reference(inertia, friction, load, v0, duration, h=1e-5):
    """
    Integrate v' = (load(t) - F v/|v|) / m by RK4 (the vector Coulomb law, sliding only).

    Returns v at every millisecond.
    """
    def f(t, v):
        speed = np.linalg.norm(v)
        direction = v / speed if speed > 0 else load(t) / np.linalg.norm(load(t))
        return (load(t) - friction * direction) / inertia
    t, v, out = 0.0, np.array(v0, dtype=float), []
    for _ in range(int(round(duration / 1e-3))):
        for _ in range(int(round(1e-3 / h))):
            k1 = f(t, v)
            k2 = f(t + h / 2, v + h / 2 * k1)
            k3 = f(t + h / 2, v + h / 2 * k2)
            k4 = f(t + h, v + h * k3)
            v = v + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            t += h
        out.append(v.copy())
    return np.array(out)


def ball_joint(friction):
    """Return a sphere (0.1 kg m^2 about every axis) on a spherical joint at its centre."""
    return robot('ball', link('socket'), link('ball', inertial(2.0, 0.1, 0.1, 0.1)),
                 joint('ball_joint', 'spherical', 'socket', 'ball',
                       extra=f'<dynamics friction="{friction}"/>'))


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_spherical_friction_opposes_the_slip_under_a_turning_torque(formulation):
    friction, size, spin = 1.0, 3.0, 2.0
    sim = Simulator.from_urdf(ball_joint(friction), {'gravity': [0, 0, 0],
                                                     'solver': {'formulation': formulation}})

    def torque(t):
        return size * np.array([math.cos(spin * t), math.sin(spin * t), 0.0])

    reference = sliding_reference(0.1, friction, torque, [0, 0, 0], 1.0)
    worst = 0.0
    for k in range(1000):
        sim.set_link_wrench('ball', [0, 0, 0], torque(sim.time))
        sim.step(1)
        worst = max(worst, np.linalg.norm(sim.link_twist('ball')[1] - reference[k]))
    # first-order in dt: the load is held over each 1 ms step
    assert worst < 0.02 * np.max(np.linalg.norm(reference, axis=1))


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_spherical_friction_holds_a_load_below_it(formulation):
    sim = Simulator.from_urdf(ball_joint(1.0), {'gravity': [0, 0, 0],
                                                'solver': {'formulation': formulation}})
    quat0 = sim.link_pose('ball')[1]
    for k in range(50):
        direction = np.array([math.cos(k), math.sin(k), math.cos(2 * k)])
        sim.set_link_wrench('ball', [0, 0, 0], 0.95 * direction / np.linalg.norm(direction))
        sim.step(100)
    assert np.linalg.norm(sim.link_twist('ball')[1]) < 1e-9
    assert np.allclose(sim.link_pose('ball')[1], quat0, atol=1e-9)


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_planar_friction_opposes_the_sliding_direction(formulation):
    mass, friction = 2.0, 3.0
    puck = robot('puck', link('table'), link('puck', inertial(mass, 0.01, 0.01, 0.01)),
                 joint('slide', 'planar', 'table', 'puck', axis='0 0 1',
                       extra=f'<dynamics friction="{friction}"/>'))
    # the plane carries the weight
    sim = Simulator.from_urdf(puck, {'solver': {'formulation': formulation}})

    def push(t):
        return np.array([5.0, 0.0, 0.0]) if t < 0.5 else np.array([0.0, 2.0, 0.0])

    reference = sliding_reference(mass, friction, push, [0, 0, 0], 1.0)
    stop = np.argmax(np.linalg.norm(reference, axis=1) < 1e-3)
    worst = 0.0
    for k in range(stop - 5):
        sim.set_link_wrench('puck', push(sim.time))
        sim.step(1)
        worst = max(worst, np.linalg.norm(sim.link_twist('puck')[0][:2] - reference[k][:2]))
    assert worst < 0.02 * np.max(np.linalg.norm(reference, axis=1))
    sim.step(1000)  # stopped: 2 N against 3 N of friction holds it
    assert np.linalg.norm(sim.link_twist('puck')[0]) < 1e-9
