"""
Force-torque sensors against statics, a Newton-Euler computation from the motion, and DDS.

The wrench a sensor reads is the one its joint transmitted in the last step: in maximal
coordinates from the joint's accumulated impulses, in tree mode from the recursive
Newton-Euler pass over the step's velocity change (docs/sensors.md).  The physical scenarios
run in both formulations.
"""
import math

from geometry_msgs.msg import WrenchStamped
from jointsim_ros import Simulator
from jointsim_ros.errors import CommandError, ConfigError
from jointsim_ros.rotations import quat_to_matrix, rpy_to_matrix
from node_harness import domain, RosClient, running_node, stamp_seconds
import numpy as np
import pytest
from robots import box_inertial, inertial, joint, link, robot

G = 9.81
LIM = '<limit lower="-3" upper="3" effort="1000" velocity="100"/>'
#: The physical scenarios run in both formulations.
both = pytest.mark.parametrize('formulation', ['maximal', 'tree'])
GAZEBO_SENSOR = ('<gazebo reference="wrist"><sensor name="wrist_ft" type="force_torque">'
                 '<update_rate>250</update_rate><force_torque><frame>parent</frame>'
                 '<measure_direction>parent_to_child</measure_direction></force_torque>'
                 '</sensor></gazebo>')


def arm(extra=''):
    """Shoulder and elbow about y, a 3 kg hand welded on at the wrist (a fixed joint)."""
    return robot(
        'ft_arm', link('base'),
        link('upper', box_inertial(2.0, (0.5, 0.05, 0.05), xyz='0.25 0 0')),
        link('fore', box_inertial(1.0, (0.4, 0.05, 0.05), xyz='0.2 0 0')),
        link('hand', box_inertial(3.0, (0.1, 0.1, 0.1), xyz='0.05 0 0.02')),
        joint('shoulder', 'revolute', 'base', 'upper', axis='0 1 0', extra=LIM),
        joint('elbow', 'revolute', 'upper', 'fore', xyz='0.5 0 0', axis='0 1 0', extra=LIM),
        joint('wrist', 'fixed', 'fore', 'hand', xyz='0.4 0 0'), extra)


def held_arm(sensors, pose=None, formulation='maximal'):
    """Return the arm held still by dry friction at a bent pose, sensors sampled every step."""
    pose = pose or {'shoulder': -0.3, 'elbow': 0.6}
    sim = Simulator.from_urdf(arm(), {
        'force_torque_sensors': sensors, 'initial_positions': pose,
        'joints': {'shoulder': {'friction': 1000.0}, 'elbow': {'friction': 1000.0}},
        'solver': {'formulation': formulation}})
    sim.step(100)
    return sim


def com_world(sim, link_name):
    """Return the world centre of mass of a (root) link's body."""
    body = sim.model.links[link_name].body
    xyz, quat = sim.link_pose(sim.model.bodies[body].name)
    return xyz + quat_to_matrix(quat) @ sim.model.bodies[body].com


def weight_wrench(sim, links, point, frame_quat):
    """
    Return the weight of some links and its moment about a point, in a frame: (F, tau).

    Links merged into one body (fixed joints) count once: name one of them.
    """
    force = np.zeros(3)
    torque = np.zeros(3)
    for name in links:
        body = sim.model.links[name].body
        weight = np.array([0.0, 0.0, -G * sim.model.bodies[body].mass])
        force += weight
        torque += np.cross(com_world(sim, name) - point, weight)
    rot = quat_to_matrix(frame_quat)
    return rot.T @ force, rot.T @ torque


@both
def test_held_arm_sensors_read_the_distal_weight_and_its_moment(formulation):
    sim = held_arm({'wrist_ft': {'joint': 'wrist', 'rate': 0},
                    'elbow_ft': {'joint': 'elbow', 'rate': 0}}, formulation=formulation)
    # the wrist is kept as a weld, not merged, because it carries a sensor
    assert 'wrist' in [j.name for j in sim.model.joints]
    assert np.linalg.norm(sim.link_twist('hand')[0]) < 1e-9  # at rest
    for sensor, point_link, distal in (('wrist_ft', 'hand', ['hand']),
                                       ('elbow_ft', 'fore', ['fore', 'hand'])):
        point, quat = sim.link_pose(point_link)  # the joint origin, child link frame
        force, torque = weight_wrench(sim, distal, point, quat)
        # child_to_parent: the distal part presses on the parent
        reading = sim.sensors.wrench(sensor)
        assert reading[:3] == pytest.approx(force, abs=1e-3 * np.linalg.norm(force)), sensor
        assert reading[3:] == pytest.approx(torque, abs=1e-3 * np.linalg.norm(torque)), sensor


@both
def test_sensors_read_the_same_weight_after_a_spawn_rebuilds_the_engine(formulation):
    # a sensor keeps where it sits on its bodies per engine (sensing.py); a spawn makes a new
    # engine, with the spawned body after the robot's: the readings stay those of the load
    sim = held_arm({'wrist_ft': {'joint': 'wrist', 'rate': 0},
                    'elbow_ft': {'joint': 'elbow', 'rate': 0, 'frame': 'parent'}},
                   formulation=formulation)
    before = {name: sim.sensors.wrench(name) for name in ('wrist_ft', 'elbow_ft')}
    engine = sim._engine
    sim.entities.spawn('crate', {'shape': 'box', 'size': [0.2, 0.2, 0.2], 'mass': 2.0},
                       position=(3.0, 0.0, 0.1))
    assert sim._engine is not engine
    for name in ('wrist_ft', 'elbow_ft'):  # the last step's reading carried over
        assert sim.sensors.measure(name) == pytest.approx(before[name], rel=1e-5, abs=1e-6)
    sim.step(5)
    point, quat = sim.link_pose('hand')
    force, torque = weight_wrench(sim, ['hand'], point, quat)
    wrist = sim.sensors.wrench('wrist_ft')
    assert wrist[:3] == pytest.approx(force, abs=1e-3 * np.linalg.norm(force))
    assert wrist[3:] == pytest.approx(torque, abs=1e-3 * np.linalg.norm(torque))
    for name in ('wrist_ft', 'elbow_ft'):
        assert sim.sensors.wrench(name) == pytest.approx(before[name], rel=1e-5, abs=1e-6), name


@both
def test_frames_and_directions_read_the_same_load(formulation):
    pose = {'position': [0.03, -0.02, 0.05], 'rpy': [0.3, -0.2, 1.0]}
    sensors = {'child': {'joint': 'elbow', 'rate': 0},
               'parent': {'joint': 'elbow', 'rate': 0, 'frame': 'parent'},
               'sensor': {'joint': 'elbow', 'rate': 0, 'frame': 'sensor', 'pose': pose},
               'reverse': {'joint': 'elbow', 'rate': 0,
                           'measure_direction': 'parent_to_child'}}
    sim = held_arm(sensors, formulation=formulation)
    child = sim.sensors.wrench('child')
    assert sim.sensors.wrench('reverse') == pytest.approx(-child, abs=1e-12)
    # parent frame: the child frame turned by the elbow angle about y
    elbow = sim.joint_positions()[sim.joint_names.index('elbow')]
    turn = rpy_to_matrix((0.0, elbow, 0.0))
    parent = sim.sensors.wrench('parent')
    assert parent[:3] == pytest.approx(turn @ child[:3], abs=1e-9)
    assert parent[3:] == pytest.approx(turn @ child[3:], abs=1e-9)
    # sensor frame: its own axes, torque about its own origin
    rot = rpy_to_matrix(pose['rpy'])
    offset = np.array(pose['position'])
    reading = sim.sensors.wrench('sensor')
    assert reading[:3] == pytest.approx(rot.T @ child[:3], abs=1e-9)
    assert reading[3:] == pytest.approx(rot.T @ (child[3:] - np.cross(offset, child[:3])),
                                        abs=1e-9)
    assert sim.sensors.frame('parent') == 'upper' and sim.sensors.frame('sensor') == 'sensor'


def cantilever():
    """
    Return a beam welded to a tilted mount, a hinge held by dry friction, a load hooked on.

    The mount carries a sensor (kept as a weld); the beam's own weld and the hook are merged,
    so the body beyond the mount is root + beam and the one beyond the hinge tip + load.
    """
    return robot(
        'cantilever', link('base'),
        link('root', box_inertial(1.0, (0.1, 0.1, 0.1), xyz='0.05 0 0')),
        link('beam', box_inertial(2.0, (0.5, 0.05, 0.05), xyz='0.25 0 0')),
        link('tip', box_inertial(0.5, (0.1, 0.1, 0.1), xyz='0.05 0.02 -0.01')),
        link('load', box_inertial(3.0, (0.1, 0.1, 0.1), xyz='0 0.03 -0.1')),
        joint('mount', 'fixed', 'base', 'root', xyz='0 0 1', rpy='0.2 -0.3 0.1'),
        joint('weld', 'fixed', 'root', 'beam', xyz='0.1 0 0', rpy='0 0.2 0'),
        joint('hinge', 'revolute', 'beam', 'tip', xyz='0.5 0 0', axis='0 1 0', extra=LIM),
        joint('hook', 'fixed', 'tip', 'load', xyz='0.1 0 0'))


@both
def test_cantilever_sensors_read_the_weight_beyond_them_exactly(formulation):
    # at rest every step's joint impulses are the weight's: to rounding in both formulations
    sim = Simulator.from_urdf(cantilever(), {
        'force_torque_sensors': {'mount_ft': {'joint': 'mount', 'rate': 0},
                                 'hinge_ft': {'joint': 'hinge', 'rate': 0}},
        'initial_positions': {'hinge': 0.4}, 'joints': {'hinge': {'friction': 1000.0}},
        'solver': {'formulation': formulation}})
    assert [j.name for j in sim.model.joints] == ['mount', 'hinge']
    sim.step(1000)
    for sensor, point_link, distal in (('mount_ft', 'root', ['root', 'tip']),
                                       ('hinge_ft', 'tip', ['tip'])):
        point, quat = sim.link_pose(point_link)
        force, torque = weight_wrench(sim, distal, point, quat)
        reading = sim.sensors.wrench(sensor)
        assert np.abs(reading[:3] - force).max() <= 1e-9 * np.linalg.norm(force), sensor
        assert np.abs(reading[3:] - torque).max() <= 1e-9 * np.linalg.norm(torque), sensor


@both
def test_a_link_wrench_on_the_hand_reaches_the_wrist_sensor(formulation):
    sim = held_arm({'wrist_ft': {'joint': 'wrist', 'rate': 0}}, formulation=formulation)
    push, twist = np.array([5.0, -3.0, 20.0]), np.array([0.5, 1.0, -0.3])
    sim.set_link_wrench('hand', push, twist)
    sim.step(500)  # (the maximal rows settle on the new load in a few hundred steps)
    point, quat = sim.link_pose('hand')
    force, torque = weight_wrench(sim, ['hand'], point, quat)
    rot = quat_to_matrix(quat)
    # the hand presses on the forearm with its weight and what pushes it
    force = force + rot.T @ push
    torque = torque + rot.T @ (np.cross(com_world(sim, 'hand') - point, push) + twist)
    reading = sim.sensors.wrench('wrist_ft')
    assert reading[:3] == pytest.approx(force, abs=1e-3 * np.linalg.norm(force))
    assert reading[3:] == pytest.approx(torque, abs=1e-3 * np.linalg.norm(torque))


@both
def test_a_spinning_rotor_reads_its_gyroscopic_torque(formulation):
    """
    A rotor spinning freely at 10 rad/s about z, its principal axes tilted, its COM off the axis.

    No gravity: the hinge holds the COM on its circle, F = m w x (w x c), and turns the
    angular momentum with the rotor, tau_com = w x (I_c w); about the joint origin
    tau = tau_com + c x F, constant in the rotor's frame.
    """
    mass, com = 2.0, np.array([0.05, 0.02, 0.1])
    rpy = (0.4, -0.3, 0.2)
    sim = Simulator.from_urdf(robot(
        'rotor', link('base'),
        link('rotor', inertial(mass, 0.02, 0.03, 0.05, xyz=' '.join(map(str, com)),
                               rpy=' '.join(map(str, rpy)))),
        joint('spin', 'continuous', 'base', 'rotor', axis='0 0 1')), {
            'gravity': [0.0, 0.0, 0.0], 'initial_velocities': {'spin': 10.0},
            'force_torque_sensors': {'ft': {'joint': 'spin', 'rate': 0,
                                            'measure_direction': 'parent_to_child'}},
            'solver': {'formulation': formulation}})
    sim.step(200)
    rate = sim.joint_velocities()[0]
    assert rate == pytest.approx(10.0, rel=1e-3)
    w = np.array([0.0, 0.0, rate])
    rot = rpy_to_matrix(rpy)
    inertia = rot @ np.diag([0.02, 0.03, 0.05]) @ rot.T   # about the COM, rotor frame
    force = mass * np.cross(w, np.cross(w, com))
    torque = np.cross(w, inertia @ w) + np.cross(com, force)
    reading = sim.sensors.wrench('ft')
    # the tree's Newton-Euler pass takes the step's gyroscopic term v x* I v as the step does:
    # exact; the maximal rows turn the momentum over the step, first order (2.3e-3 at 1 ms)
    tol = 1e-12 if formulation == 'tree' else 5e-3
    assert reading[:3] == pytest.approx(force, abs=tol * np.linalg.norm(force))
    assert reading[3:] == pytest.approx(torque, abs=tol * np.linalg.norm(torque))


@both
def test_a_commanded_effort_is_the_torque_about_the_joint_axis(formulation):
    # the pendulum swings under gravity and a constant effort: whatever the joint's reaction,
    # its torque about its own axis at its origin is the effort
    from robots import pendulum
    sim = Simulator.from_urdf(pendulum(), {
        'initial_positions': {'hinge': 0.5}, 'solver': {'formulation': formulation},
        'force_torque_sensors': {'ft': {'joint': 'hinge', 'rate': 0,
                                        'measure_direction': 'parent_to_child'}}})
    sim.set_joint_efforts({'hinge': 3.0})
    readings = []
    for _ in range(300):
        sim.step(1)
        readings.append(sim.sensors.wrench('ft'))
    readings = np.array(readings)
    assert np.abs(sim.joint_velocities()[0]) > 0.2   # it swings
    assert readings[:, 4] == pytest.approx(3.0, abs=1e-6)
    assert np.abs(readings[:, 2]).max() > 5.0        # the rod's pull changes as it swings


def two_link_arm():
    """Two uniform bars on revolute joints about y (the second one carries the sensor)."""
    return robot(
        'swing', link('base'),
        link('upper', box_inertial(2.0, (0.5, 0.06, 0.04), xyz='0.25 0 0')),
        link('fore', box_inertial(1.5, (0.4, 0.05, 0.08), xyz='0.2 0.01 0')),
        joint('shoulder', 'continuous', 'base', 'upper', axis='0 1 0'),
        joint('elbow', 'continuous', 'upper', 'fore', xyz='0.5 0 0', axis='0 1 0'))


def swinging_arm_errors(formulation='maximal', dt=0.001):
    """
    Return (RMS error, RMS reading, scale, RMS axis torque) of the swinging arm's elbow sensor.

    Over 2 s, Newton-Euler on the forearm from its simulated motion, step by step: over step k
    the elbow gave the forearm F = m (v_k+1 - v_k) / dt - m g and, about its COM,
    (L_k+1 - L_k) / dt with L = R I R^T w; about the elbow, tau = tau_com + (c - p) x F at the
    poses step k started from.  The last value is the RMS reading about the elbow's axis (y).
    """
    sim = Simulator.from_urdf(two_link_arm(), {
        'force_torque_sensors': {'elbow_ft': {'joint': 'elbow', 'rate': 0,
                                              'measure_direction': 'parent_to_child'}},
        'initial_positions': {'shoulder': 0.3, 'elbow': -0.8}, 'dt': dt,
        'solver': {'formulation': formulation}})
    body = sim.model.links['fore'].body
    mass = sim.model.bodies[body].mass
    inertia = sim.model.bodies[body].inertia
    gravity = np.array([0.0, 0.0, -G])

    def motion():
        xyz, quat = sim.link_pose('fore')
        rot = quat_to_matrix(quat)
        com = xyz + rot @ sim.model.bodies[body].com
        v, w = sim.link_twist('fore')
        v_com = v + np.cross(w, com - xyz)
        return xyz, rot, com, v_com, rot @ inertia @ rot.T @ w

    errors, magnitudes, axis = [], [], []
    before = motion()
    while sim.time < 2.0:
        sim.step(1)
        after = motion()
        point, rot, com = before[0], before[1], before[2]
        force = mass * (after[3] - before[3]) / sim.dt - mass * gravity
        torque = (after[4] - before[4]) / sim.dt + np.cross(com - point, force)
        expected = np.concatenate((rot.T @ force, rot.T @ torque))
        if sim.time > 0.1:
            reading = sim.sensors.wrench('elbow_ft')
            errors.append(reading - expected)
            magnitudes.append(expected)
            axis.append(reading[4])
        before = after
    rms_error = np.sqrt(np.mean(np.square(errors), axis=0))
    rms = np.sqrt(np.mean(np.square(magnitudes), axis=0))
    scale = np.array([np.linalg.norm(rms[:3])] * 3 + [np.linalg.norm(rms[3:])] * 3)
    return rms_error, rms, scale, np.sqrt(np.mean(np.square(axis)))


@both
def test_swinging_arm_sensor_matches_newton_euler_of_the_motion(formulation):
    """
    Check the elbow sensor against Newton-Euler on the forearm from its motion.

    Maximal: within 1 % RMS, the reading is the impulses that made the motion.  Tree: the
    reading is the step's own Newton-Euler pass, and the motion as published is the
    semi-implicit Euler position update of it, first order apart (1.2 % of the force at 1 ms):
    the difference halves with dt.  In both the frictionless elbow transmits no torque about
    its axis.
    """
    rms_error, rms, scale, axis = swinging_arm_errors(formulation)
    assert axis <= 1e-7 * scale[3], axis
    if formulation == 'maximal':
        assert np.all(rms_error <= 0.01 * scale), (rms_error, rms)
        return
    off_axis = [0, 1, 2, 3, 5]  # about the axis the motion's figure is the integrator's
    assert np.all(rms_error[off_axis] <= 0.02 * scale[off_axis]), (rms_error, rms)
    finer, _, finer_scale, finer_axis = swinging_arm_errors(formulation, dt=0.0005)
    assert finer_axis <= 1e-7 * finer_scale[3], finer_axis
    in_plane = [0, 2, 3, 5]  # (the arm swings in the x-z plane: fy is zero in both)
    ratio = finer[in_plane] / rms_error[in_plane]
    assert np.all((ratio > 0.4) & (ratio < 0.6)), ratio


@both
def test_gazebo_sensor_tag_declares_a_sensor_at_its_rate(formulation):
    sim = Simulator.from_urdf(arm(GAZEBO_SENSOR), {
        'initial_positions': {'shoulder': -0.3, 'elbow': 0.6},
        'joints': {'shoulder': {'friction': 1000.0}, 'elbow': {'friction': 1000.0}},
        'solver': {'formulation': formulation}})
    assert sim.sensors.names == ('wrist_ft',)
    spec = sim.model.sensors[0]
    assert (spec.joint, spec.rate, spec.frame, spec.measure_direction) == (
        'wrist', 250.0, 'parent', 'parent_to_child')
    sim.step(400)
    when, reading, count = sim.sensors.sample('wrist_ft')
    assert count == 100 and when == pytest.approx(0.4)  # 250 Hz of simulated time
    point, _ = sim.link_pose('hand')
    _, fore = sim.link_pose('fore')
    force, torque = weight_wrench(sim, ['hand'], point, fore)
    assert reading[:3] == pytest.approx(-force, abs=1e-3 * np.linalg.norm(force))
    assert reading[3:] == pytest.approx(-torque, abs=1e-3 * np.linalg.norm(torque))


def test_noise_and_low_pass_filter():
    noisy = {'joint': 'wrist', 'rate': 0, 'noise': {'force': 0.5, 'torque': 0.05}}
    filtered = dict(noisy, filter={'cutoff': 5.0})
    clean = {'joint': 'wrist', 'rate': 0}
    sim = held_arm({'noisy': noisy, 'filtered': filtered, 'clean': clean})
    samples = {name: [] for name in ('noisy', 'filtered', 'clean')}
    for _ in range(3000):
        sim.step(1)
        for name in samples:
            samples[name].append(sim.sensors.wrench(name))
    noise = np.array(samples['noisy'][500:]) - np.array(samples['clean'][500:])
    assert np.std(noise[:, :3]) == pytest.approx(0.5, rel=0.1)
    assert np.std(noise[:, 3:]) == pytest.approx(0.05, rel=0.1)
    smooth = np.array(samples['filtered'][500:]) - np.array(samples['clean'][500:])
    # a first-order low-pass at fc over samples dt apart passes sqrt(a / (2 - a)) of white
    # noise, a = 1 - exp(-2 pi fc dt)
    a = 1.0 - math.exp(-2.0 * math.pi * 5.0 * sim.dt)
    assert np.std(smooth[:, :3]) == pytest.approx(0.5 * math.sqrt(a / (2.0 - a)), rel=0.2)
    assert np.mean(smooth[:, 2]) == pytest.approx(0.0, abs=0.05)


def standing_biped_with_ankle_sensors(formulation='maximal'):
    """Return the biped with ankle sensors after 3 s standing under a joint PD (settled)."""
    from robots import biped
    bend = {'l_hip': -0.3, 'r_hip': -0.3, 'l_knee': 0.6, 'r_knee': 0.6, 'l_ankle': -0.3,
            'r_ankle': -0.3}
    config = {'base': 'floating', 'initial_positions': bend, 'force_torque_sensors': {
        f'{side}_ankle_ft': {'joint': f'{side}_ankle', 'rate': 0} for side in 'lr'},
        'solver': {'formulation': formulation}}
    probe = Simulator.from_urdf(biped(), {**config, 'base_pose': {'position': [0, 0, 1.0]}})
    low = min(probe.link_pose(f'{side}_foot')[0][2] for side in 'lr')
    sim = Simulator.from_urdf(biped(), {**config, 'base_pose': {
        'position': [0.0, 0.0, 1.0 - low + 0.0405]}})
    names = sim.joint_names
    target = np.array([bend[n] for n in names])
    for _ in range(3000):
        q, qd = sim.joint_positions(), sim.joint_velocities()
        sim.set_joint_efforts(dict(zip(names, 800.0 * (target - q) - 20.0 * qd)))
        sim.step(1)
    return sim


@both
def test_foot_sensor_reads_its_share_of_the_weight(formulation):
    # the ground's push on the foot reaches the sensor through the foot: in tree mode the
    # contact impulses are external forces of the Newton-Euler pass
    sim = standing_biped_with_ankle_sensors(formulation)
    for side in 'lr':
        foot = f'{side}_foot'
        pressed = sum(c.normal_force for c in sim.contacts() if c.link_a == foot)
        foot_mass = sim.model.bodies[sim.model.links[foot].body].mass
        _, quat = sim.link_pose(foot)
        force = quat_to_matrix(quat) @ sim.sensors.wrench(f'{side}_ankle_ft')[:3]  # to the world
        # the foot presses on the shin with the ground's push less its own weight
        assert force[2] == pytest.approx(pressed - foot_mass * G, rel=2e-3)
        assert pressed == pytest.approx(0.5 * 18.0 * G, rel=0.05)


def test_unknown_sensor_or_joint_is_a_clear_error():
    sim = held_arm({'wrist_ft': {'joint': 'wrist'}})
    with pytest.raises(CommandError, match="unknown force-torque sensor 'wrist'.*wrist_ft"):
        sim.sensors.wrench('wrist')
    with pytest.raises(ConfigError, match="sits on joint 'wirst'.*did you mean 'wrist'"):
        Simulator.from_urdf(arm(), {'force_torque_sensors': {'s': {'joint': 'wirst'}}})


def test_node_publishes_wrench_stamped_at_the_sensor_rate(tmp_path):
    urdf = tmp_path / 'arm.urdf'
    urdf.write_text(arm())
    config = tmp_path / 'sim.yaml'
    config.write_text('force_torque_sensors:\n  wrist_ft: {joint: wrist, rate: 50, '
                      'frame: sensor, pose: {position: [0, 0, 0.1]}}\n'
                      'joints: {shoulder: {friction: 1000}, elbow: {friction: 1000}}\n')
    with domain() as domain_id:
        with running_node(domain_id, tmp_path / 'node.log',
                          parameters={'robot_description_file': str(urdf),
                                      'config_file': str(config)}):
            client = RosClient(domain_id)
            try:
                received = client.subscribe(WrenchStamped, 'wrist_ft/wrench')
                assert client.wait_for(lambda: len(received) >= 10)
                last = received[-1]
                assert last.header.frame_id == 'wrist_ft'
                stamps = [stamp_seconds(m.header.stamp) for m in received[-5:]]
                assert np.diff(stamps) == pytest.approx([0.02] * 4, abs=1e-6)
                # the hand's weight, 3 kg, pressing down on the forearm
                assert last.wrench.force.z == pytest.approx(-3.0 * G, rel=1e-3)
            finally:
                client.close()
