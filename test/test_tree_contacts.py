"""
Contacts, limits and dry friction in reduced coordinates: the impulse-based verification set.

Each scenario runs in the tree formulation (rows on the generalized velocities, their response
from the articulated-body factor) and, where the comparison says something, in the maximal one
too; the expected values are worked out here: a restitution law, momentum conservation, the
bead on a turntable's r0 cosh(w t), energy kept at elastic limits, the gravity torque a limit
holds, a stalled drive's current, and the maximal formulation's own loads and speeds.
"""
import math
import os

from jointsim_ros import Simulator
import numpy as np
import pytest
from robots import box_inertial, inertial, joint, link, robot

G = 9.81
FORMULATIONS = ('maximal', 'tree')
both = pytest.mark.parametrize('formulation', FORMULATIONS)
ROVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'urdf',
                     'jointsim_rover.urdf.xacro')


def solver(formulation, **more):
    """Return the solver section selecting the formulation."""
    return {'formulation': formulation, **more}


def sphere(radius):
    """Return a sphere collision element."""
    return f'<collision><geometry><sphere radius="{radius}"/></geometry></collision>'


def dumbbell(radius=0.05, half=0.15, mass=1.0):
    """Two balls on a hinge about z: a 2-body articulated body lying along x, 2 half apart."""
    i = 0.4 * mass * radius ** 2

    def ball(x):
        return (inertial(mass, i, i, i, xyz=f'{x} 0 0') + f'<collision><origin xyz="{x} 0 0"/>'
                f'<geometry><sphere radius="{radius}"/></geometry></collision>')
    return robot('dumbbell', link('back', ball(0.0)), link('front', ball(half)),
                 joint('hinge', 'continuous', 'back', 'front', xyz=f'{half} 0 0',
                       axis='0 0 1'))


def link_momentum(sim):
    """Return the robot's and objects' linear momentum, N s (every body)."""
    engine = sim._engine
    mass = 1.0 / engine.bodies.inv_mass
    return (mass[:, None] * engine.state.body_lin_vel).sum(axis=0)


@both
@pytest.mark.parametrize('e', [0.5, 1.0])
def test_an_articulated_body_bounces_off_the_ground_with_its_restitution(formulation, e):
    sim = Simulator.from_urdf(dumbbell(), {
        'base': 'floating', 'base_pose': {'position': [0.0, 0.0, 0.3]},
        'collision': {'contact_model': 'rigid'},
        'contacts': {'back': {'restitution': e}, 'front': {'restitution': e}},
        'solver': solver(formulation)})
    before = after = None
    previous = 0.0
    for _ in range(400):
        sim.step(1)
        vz = sim.link_twist('back')[0][2]
        if previous < -1.0 and vz > 0.0:
            before, after = previous, vz
            break
        previous = vz
    assert before is not None
    # both balls land together and bounce at -e times the approach speed
    assert after / -before == pytest.approx(e, rel=0.01)
    assert sim.link_twist('front')[0][2] == pytest.approx(after, rel=1e-6)
    assert max(sim.joint_anchor_errors().values()) < (1e-12 if formulation == 'tree' else 1e-6)


@both
@pytest.mark.parametrize('e', [0.0, 0.5, 1.0])
def test_an_articulated_body_strikes_a_free_body_and_momentum_is_kept(formulation, e):
    # no gravity: the dumbbell slides along x into a free ball of 2 kg, centres in line
    sim = Simulator.from_urdf(dumbbell(), {
        'base': 'floating', 'gravity': [0, 0, 0], 'ground': {'enabled': False},
        'collision': {'contact_model': 'rigid'},
        'contacts': {'front': {'restitution': e}},
        'scene': {'ball': {'shape': 'sphere', 'radius': 0.05, 'mass': 2.0,
                           'restitution': e, 'pose': {'position': [0.5, 0.0, 0.0]}}},
        'solver': solver(formulation)})
    sim.set_base_state([0.0, 0.0, 0.0], [1, 0, 0, 0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    p0 = link_momentum(sim)
    assert p0 == pytest.approx([4.0, 0.0, 0.0])
    sim.step(300)
    p1 = link_momentum(sim)
    assert np.allclose(p1, p0, rtol=0.0, atol=1e-12 * 4.0)
    v_robot = sim.link_twist('front')[0][0]
    v_ball = sim.link_twist('ball')[0][0]
    # the closing speed 2 m/s comes back as e times 2 m/s, apart
    assert v_ball - v_robot == pytest.approx(e * 2.0, rel=0.01, abs=1e-6)
    # 2 kg at 2 m/s against 2 kg: the ball takes (1 + e) / 2 of it
    assert v_ball == pytest.approx((1 + e) / 2 * 2.0, rel=0.01)
    assert sim.link_twist('back')[0][0] == pytest.approx(v_robot, rel=1e-6, abs=1e-9)


def turntable(r_lower=0.1, r_upper=1.0):
    """Return a heavy disc on a vertical axle carrying a light bead free on a radial rail."""
    disc = box_inertial(1e6, (2.0, 2.0, 0.1))
    bead = inertial(0.01, 1e-6, 1e-6, 1e-6)
    return robot('turntable', link('stand'), link('disc', disc), link('bead', bead),
                 joint('axle', 'continuous', 'stand', 'disc', axis='0 0 1'),
                 joint('rail', 'prismatic', 'disc', 'bead', axis='1 0 0',
                       extra=f'<limit lower="{r_lower}" upper="{r_upper}" effort="1" '
                             f'velocity="100"/>'))


@both
def test_a_bead_on_a_turntable_moves_as_r0_cosh_wt_until_its_limit(formulation):
    w, r0 = 2.0, 0.1
    sim = Simulator.from_urdf(turntable(r_lower=0.0), {
        'gravity': [0, 0, 0], 'solver': solver(formulation)})
    sim.set_joint_state({'rail': r0}, {'axle': w})
    times, radii = [], []
    while sim.time < 1.5:
        sim.step(10)
        times.append(sim.time)
        radii.append(sim.joint_positions()[1])
    times, radii = np.array(times), np.array(radii)
    free = radii < 0.999
    exact = r0 * np.cosh(w * times[free])
    # first order in dt: within 0.5 % of the exact motion at 1 ms
    assert np.max(np.abs(radii[free] - exact) / exact) < 5e-3
    # the limit stops it: at 1.0 m from then on, the disc still turning at w
    assert radii[-1] == pytest.approx(1.0, abs=1e-6)
    # (the maximal engine reads the rate from the joint's rows at the poses after the step:
    # the centripetal w^2 r dt)
    bound = 1e-9 if formulation == 'tree' else 1.01 * w * w * sim.dt
    assert abs(sim.joint_velocities()[1]) < bound
    assert sim.joint_velocities()[0] == pytest.approx(w, rel=1e-4)


def spinner(jtype, lower, upper):
    """Return a 2 kg body on a joint about (or along) z (the tests turn gravity off)."""
    axis = '0 0 1'
    body = box_inertial(2.0, (0.4, 0.1, 0.1), xyz='0.2 0 0')
    return robot('spinner', link('base'), link('arm', body),
                 joint('j', jtype, 'base', 'arm', axis=axis,
                       extra=f'<limit lower="{lower}" upper="{upper}" effort="10" '
                             f'velocity="100"/>'))


@pytest.mark.parametrize('jtype, lower, upper, rate', [
    ('revolute', -0.5, 0.5, 3.0), ('revolute', -0.02, 0.01, 0.7),     # wide, narrow
    ('prismatic', -0.1, 0.1, 1.0), ('prismatic', 0.0, 0.003, 0.2)])
def test_elastic_limits_keep_the_energy_and_are_never_passed(jtype, lower, upper, rate):
    sim = Simulator.from_urdf(spinner(jtype, lower, upper), {
        'gravity': [0, 0, 0], 'limits': {'restitution': 1.0}, 'solver': solver('tree')})
    sim.set_joint_state({'j': 0.5 * (lower + upper)}, {'j': rate})
    e0 = sim.mechanical_energy()[0]
    impacts, previous = 0, rate
    while impacts < 10:
        sim.step(1)
        q, v = sim.joint_positions()[0], sim.joint_velocities()[0]
        assert lower - 1e-3 <= q <= upper + 1e-3
        if v * previous < 0:
            impacts += 1
        previous = v
        assert sim.time < 60.0
    assert sim.mechanical_energy()[0] == pytest.approx(e0, rel=5e-3)


@pytest.mark.parametrize('jtype', ['revolute', 'prismatic'])
def test_a_plastic_limit_stops_the_joint_on_it(jtype):
    sim = Simulator.from_urdf(spinner(jtype, -0.1, 0.1), {
        'gravity': [0, 0, 0], 'limits': {'restitution': 0.0}, 'solver': solver('tree')})
    sim.set_joint_state({'j': 0.0}, {'j': 1.0})
    sim.step(300)
    assert sim.joint_positions()[0] == pytest.approx(0.1, abs=1e-9)
    assert abs(sim.joint_velocities()[0]) < 1e-9


def test_a_pendulum_resting_on_its_limit_holds_the_gravity_torque_impulse():
    mass, lever = 3.0, 0.4
    arm = robot('arm', link('base'), link('arm', inertial(mass, 0.01, 0.05, 0.05,
                                                          xyz=f'{lever} 0 0')),
                joint('shoulder', 'revolute', 'base', 'arm', axis='0 1 0',
                      extra='<limit lower="-1" upper="0.3" effort="10" velocity="10"/>'))
    sim = Simulator.from_urdf(arm, {'solver': solver('tree')})
    sim.set_joint_state({'shoulder': 0.3})
    engine = sim._engine
    axis = list(engine.axes.joint).index(0)
    torque = mass * G * lever * math.cos(0.3)
    for _ in range(10):
        sim.step(1000)
        assert sim.joint_positions()[0] == pytest.approx(0.3, abs=1e-12)
        assert abs(sim.joint_velocities()[0]) < 1e-12
        # the upper limit row's impulse is the gravity torque's over the step
        held = -engine.state.axis_impulse[axis, 3]
        assert held == pytest.approx(torque * sim.dt, rel=1e-6)


@both
def test_a_drive_run_into_a_limit_stalls_at_its_stall_current(formulation):
    drive = {'resistance': 2.0, 'inductance': 0.0, 'torque_constant': 0.05,
             'rotor_inertia': 1e-5, 'gear_ratio': 50.0, 'supply_voltage': 24.0}
    arm = robot('arm', link('base'), link('arm', inertial(1.0, 0.01, 0.01, 0.01,
                                                          xyz='0.2 0 0')),
                joint('j', 'revolute', 'base', 'arm', axis='0 0 1',
                      extra='<limit lower="-0.5" upper="0.5" effort="1000" velocity="100"/>'))
    sim = Simulator.from_urdf(arm, {'drives': {'j': drive}, 'solver': solver(formulation)})
    sim.set_voltages({'j': 12.0})
    sim.step(3000)
    assert sim.joint_positions()[0] == pytest.approx(0.5, abs=1e-6)
    assert abs(sim.joint_velocities()[0]) < 1e-6
    state = sim.drive_state('j')
    assert state['current'] == pytest.approx(12.0 / 2.0, rel=1e-6)


def test_a_table_carries_the_same_loads_in_both_formulations():
    from test_compliant_contacts import table  # noqa: I100 - the same table as there
    out = {}
    for formulation in FORMULATIONS:
        sim = Simulator.from_urdf(table((0.1, 0.05)), {
            'base': 'floating', 'base_pose': {'position': [0, 0, 0.25]},
            'solver': solver(formulation)})
        sim.step(1000)
        loads = sorted((round(c.position[0], 1), round(c.position[1], 1), c.normal_force)
                       for c in sim.contacts())
        out[formulation] = np.array([load for *_, load in loads])
    assert len(out['tree']) == 4
    np.testing.assert_allclose(out['tree'], out['maximal'], rtol=1e-3)


def rolling_run(formulation, path, height, torque, radius, seconds):
    """Return (wheel rim speeds, base speed, axle loads) after driving on equal torques."""
    sim = Simulator.from_urdf(path, {'base': 'floating',
                                     'base_pose': {'position': [0.0, 0.0, height]},
                                     'solver': solver(formulation)})
    wheels = [n for n in sim.joint_names if 'wheel' in n]
    sim.step(1000)
    loads = np.array(sorted(c.normal_force for c in sim.contacts()))
    sim.set_joint_efforts(dict.fromkeys(wheels, torque))
    sim.step(int(seconds / sim.dt))
    v = sim.joint_velocities()
    rims = np.array([v[sim.joint_names.index(w)] * radius for w in wheels])
    return rims, sim.link_twist('base_link')[0][0], loads


@pytest.mark.slow
@pytest.mark.parametrize('robot_name', ['rover', 'husky'])
def test_wheeled_robots_roll_the_same_in_both_formulations(robot_name):
    if robot_name == 'rover':
        args = (ROVER, 0.0805, 0.5, 0.08, 1.5)
    else:
        pybullet_data = pytest.importorskip('pybullet_data')
        args = (os.path.join(pybullet_data.getDataPath(), 'husky', 'husky.urdf'), 0.16, 6.0,
                0.17775, 1.0)
    maximal = rolling_run('maximal', *args)
    tree = rolling_run('tree', *args)
    np.testing.assert_allclose(tree[2].sum(), maximal[2].sum(), rtol=1e-3)
    assert tree[1] == pytest.approx(maximal[1], rel=1e-3)
    np.testing.assert_allclose(tree[0], maximal[0], rtol=1e-3)


def test_the_friction_door_coasts_the_same_in_both_formulations():
    from test_joint_friction_limits import door  # noqa: I100 - the same door as there
    stops = []
    for formulation in FORMULATIONS:
        sim = Simulator.from_urdf(door(20.0), {'solver': solver(formulation)})
        sim.set_joint_state({'hinge': 0.0}, {'hinge': 1.3})
        sim.step(700)
        stops.append((sim.joint_positions()[0], sim.joint_velocities()[0]))
    # stopped at the same angle (to 1e-6 of it) and at rest in both
    assert stops[1][0] == pytest.approx(stops[0][0], rel=1e-6)
    assert stops[0][1] == stops[1][1] == 0.0
