"""
The valve scenario through the node over DDS (issue 30, docs/valve.md).

jointsim_node runs urdf/jointsim_humanoid_valve.urdf.xacro with its config; the test talks to
it as a separate process: the grasp services, and the whole task with
jointsim_humanoid_controller --valve as a third process, the test only listening (joint
states, the four force-torque sensors, TF).
"""
import math
import os
from pathlib import Path
import re
import subprocess
import sys
import time

from geometry_msgs.msg import WrenchStamped
from jointsim_ros.control.walking import SOLE
from jointsim_ros.rotations import quat_to_matrix
from node_harness import (domain, PACKAGE_ROOT, ROS_ENVIRONMENT, RosClient, running_node,
                          stamp_seconds, STATIC_TF, stop_process)
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool
from tf2_msgs.msg import TFMessage

URDF = PACKAGE_ROOT / 'urdf' / 'jointsim_humanoid_valve.urdf.xacro'
CONFIG = PACKAGE_ROOT / 'config' / 'jointsim_humanoid_valve.yaml'
#: The node as make run ARGS='--humanoid --valve' and humanoid.launch.py valve:=true run it
#: (no contact markers: nobody looks at them here, and the node needs its CPU for real time).
NODE_PARAMETERS = {'robot_description_file': str(URDF), 'config_file': str(CONFIG),
                   'publish_rate': 200.0, 'catch_up_ticks': 1.0,
                   'publish_contact_markers': False}
#: Half real time, as the walk's DDS test runs (test_node_humanoid.py): node, controller and
#: this test share two cores.  At real time the node reaches about 0.83 of it on an idle 2-core
#: machine (it drops the rest, catch_up_ticks 1) and the task passed every run; with another
#: process taking a core the controller's answers came several ticks late, which the arms' PD
#: at 1000 N m/rad did not stand (since 600, ValveSettings.arm_kp: headless, voltages one or
#: two periods late still turn the valve 184 deg with a squeeze RMS error of 1.2 N).
REAL_TIME_FACTOR = 0.5
SENSORS = ('l_ankle_ft', 'r_ankle_ft', 'l_wrist_ft', 'r_wrist_ft')
#: The hand's mass, kg (urdf/jointsim_humanoid.urdf.xacro), and gravity, m/s^2.
HAND_MASS, G = 0.5, 9.81
#: The valve's wheel (urdf/jointsim_humanoid_valve.urdf.xacro): centre (world, m), axis.
WHEEL_CENTRE, WHEEL_AXIS = np.array([0.38, 0.0, 1.30]), np.array([1.0, 0.0, 0.0])
#: The hands' grasp point in the hand frame, m (config grasps).
GRASP_POINT = np.array([0.0, 0.0, -0.09])
#: The controller's set squeeze, N (ValveSettings.squeeze).
SQUEEZE = 20.0


def test_a_grasp_far_from_the_rim_is_refused_with_the_distance_and_release_answers(
        tmp_path):
    with domain() as domain_id:
        with running_node(domain_id, tmp_path / 'node.log',
                          parameters=dict(NODE_PARAMETERS, real_time_factor=1.0)) as node:
            client = RosClient(domain_id)
            try:
                states = client.subscribe(JointState, 'joint_states', 10)
                assert client.wait_for(lambda: states), node.output()
                # standing at the start the hands hang 0.4-0.5 m from the rim
                refused = client.call(SetBool, 'grasp/l_grasp', SetBool.Request(data=True))
                assert refused.success is False
                assert re.search(r'0\.\d+ m from the rim', refused.message), refused.message
                distance = float(re.search(r'(0\.\d+) m from the rim', refused.message)[1])
                assert 0.1 < distance < 1.0
                # the node goes on stepping and publishing
                count = len(states)
                last = stamp_seconds(states[-1].header.stamp)
                assert client.wait_for(
                    lambda: len(states) > count + 20
                    and stamp_seconds(states[-1].header.stamp) > last + 0.05), node.output()
                released = client.call(SetBool, 'grasp/r_grasp', SetBool.Request(data=False))
                assert released.success is True
                assert released.message == 'r_grasp: released'
            finally:
                client.close()
            assert node.process.poll() is None, node.output()
    log = node.output()
    assert 'Traceback' not in log
    # one warning line for the refusal, with the distance
    warnings = [line for line in log.splitlines() if "grasp 'l_grasp' refused" in line]
    assert len(warnings) == 1 and 'WARN' in warnings[0], log
    assert f'{distance:.4f} m' in warnings[0]


# -- the whole task through the node ------------------------------------------------------------
def start_controller(domain_id, log_path):
    """Start jointsim_humanoid_controller --valve (it reads the humanoid's own files)."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), **ROS_ENVIRONMENT)
    log = open(log_path, 'w')
    return subprocess.Popen([sys.executable, '-m', 'jointsim_ros.tools.humanoid_controller',
                             '--valve'], cwd=PACKAGE_ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)


def transforms(message):
    """Return child frame -> (parent frame, rotation (3, 3), translation (3,)) of a TFMessage."""
    out = {}
    for t in message.transforms:
        r, p = t.transform.rotation, t.transform.translation
        out[t.child_frame_id] = (t.header.frame_id, quat_to_matrix((r.w, r.x, r.y, r.z)),
                                 np.array([p.x, p.y, p.z]))
    return out


def world_pose(tree, frame, world='world'):
    """Return (rotation (3, 3), position (3,)) of a frame in the world through the TF tree."""
    rot, pos = np.eye(3), np.zeros(3)
    while frame != world:
        parent, r, p = tree[frame]         # frame in parent: x_parent = r x_frame + p
        rot, pos = r @ rot, r @ pos + p
        frame = parent
    return rot, pos


def after_reset(samples):
    """Keep the (stamp, ...) samples after the last time the stamps went back (a reset)."""
    stamps = [sample[0] for sample in samples]
    back = [i for i in range(1, len(stamps)) if stamps[i] < stamps[i - 1]]
    return samples[back[-1] if back else 0:]


@pytest.fixture(scope='module')
def turn(tmp_path_factory):
    """Run the valve task over DDS at REAL_TIME_FACTOR; return what the listening test saw."""
    folder = tmp_path_factory.mktemp('valve_node')
    with domain() as domain_id:
        with running_node(domain_id, folder / 'node.log',
                          parameters=dict(NODE_PARAMETERS,
                                          real_time_factor=REAL_TIME_FACTOR)) as node:
            client = RosClient(domain_id)
            states = client.subscribe(JointState, 'joint_states', 100)
            tf = client.subscribe(TFMessage, '/tf', 100)
            static = client.subscribe(TFMessage, '/tf_static', STATIC_TF)
            wrenches = {name: client.subscribe(WrenchStamped, f'{name}/wrench', 100)
                        for name in SENSORS}
            log_path = folder / 'controller.log'
            controller = start_controller(domain_id, log_path)
            wall = time.monotonic()
            checked = [0.0, '']

            def finished():
                # the controller logs this once its task is over (every 0.25 s is enough)
                if time.monotonic() - checked[0] > 0.25:
                    checked[:] = time.monotonic(), log_path.read_text(errors='replace')
                return 'valve done' in checked[1] or controller.poll() is not None
            try:
                done = client.wait_for(finished, timeout=240.0)
                client.spin_for(0.5)
                assert done, log_path.read_text() + node.output()
            finally:
                wall = time.monotonic() - wall
                stop_process(controller, timeout=10.0)
                client.close()
            return {'states': states, 'tf': tf, 'static': static, 'wrenches': wrenches,
                    'controller': Path(log_path).read_text(errors='replace'),
                    'node': node.output(), 'status': controller.returncode, 'wall': wall}


@pytest.fixture(scope='module')
def seen(turn):
    """Return the run as arrays, from the controller's reset on (the stamps start at 0 again)."""
    static = {}
    for message in turn['static']:
        static.update(transforms(message))
    valve = after_reset([(stamp_seconds(m.header.stamp), m.position[list(m.name).index('valve')])
                         for m in turn['states']])
    frames = ('pelvis', 'l_hand', 'r_hand', 'l_foot', 'r_foot')
    poses = []
    for message in turn['tf']:
        tree = dict(static, **transforms(message))
        poses.append((stamp_seconds(message.transforms[0].header.stamp),
                      {frame: world_pose(tree, frame) for frame in frames}))
    poses = after_reset(poses)
    readings = {}
    for name, messages in turn['wrenches'].items():
        readings[name] = after_reset([
            (stamp_seconds(m.header.stamp), m.header.frame_id,
             np.array([m.wrench.force.x, m.wrench.force.y, m.wrench.force.z]))
            for m in messages])
    return {'valve': np.array(valve), 'poses': poses, 'readings': readings, 'static': static,
            'log': turn['controller'] + turn['node']}


@pytest.mark.slow
def test_through_the_node_the_humanoid_turns_the_valve_half_a_turn_standing(turn, seen):
    log = seen['log']
    assert 'grasped the rim with both hands' in turn['controller'], log
    assert 'valve done; standing' in turn['controller'], log
    assert turn['status'] == 0, log
    assert 'Traceback' not in log
    # the controller's grasps and releases went through the node's services
    for name in ('l_grasp', 'r_grasp'):
        assert f'{name}: grasped' in turn['node'] and f'{name}: released' in turn['node'], log
    # the valve joint, as joint_states gives it: at least half a turn
    valve = seen['valve']
    turned = math.degrees(valve[-1, 1] - valve[0, 1])
    assert turned >= 180.0, log
    # standing: the pelvis never tilts 3 deg nor drops 3 cm; the soles do not slip 1 mm
    poses = seen['poses']
    assert len(poses) > 1000, log
    tilt = max(math.degrees(math.acos(min(1.0, pose['pelvis'][0][2, 2]))) for _, pose in poses)
    assert tilt < 3.0, log
    heights = [pose['pelvis'][1][2] for _, pose in poses]
    assert min(heights) > heights[0] - 0.03, log
    for side in 'lr':
        soles = np.array([rot @ SOLE + pos for rot, pos in
                          (pose[f'{side}_foot'] for _, pose in poses)])
        slip = np.linalg.norm(soles[:, :2] - soles[0, :2], axis=1).max()
        assert slip < 1e-3, (side, slip)
    # both feet carry the robot throughout (the ankle sensors' force along the foot's z), once
    # it has landed from the 1 mm its start pose leaves
    for side in 'lr':
        loads = np.array([force[2] for stamp, _, force in seen['readings'][f'{side}_ankle_ft']
                          if stamp >= 0.2])
        assert len(loads) > 1000 and loads.min() > 100.0, (side, loads.min())


@pytest.mark.slow
def test_through_the_node_the_wrist_sensors_see_the_set_squeeze_while_it_turns(turn, seen):
    """
    The hands' push towards the wheel's centre, from the wrist sensors and TF, is 20 N.

    The sensor reads what the hand passes to the forearm in the hand's frame; the hand's own
    force on the rim is its weight less that, in the world: F = m g - R f (the hand's
    acceleration is neglected).
    """
    valve = seen['valve']
    poses = seen['poses']
    tf_stamps = np.array([stamp for stamp, _ in poses])
    errors = []
    for side in 'lr':
        for stamp, frame, force in seen['readings'][f'{side}_wrist_ft']:
            angle = math.degrees(np.interp(stamp, valve[:, 0], valve[:, 1]) - valve[0, 1])
            if not 10.0 <= angle <= 170.0:
                continue
            pose = poses[min(np.searchsorted(tf_stamps, stamp), len(poses) - 1)][1]
            assert frame == f'{side}_hand'         # the sensor's child frame (config)
            rot, pos = pose[f'{side}_hand']
            on_rim = HAND_MASS * np.array([0.0, 0.0, -G]) - rot @ force
            rel = pos + rot @ GRASP_POINT - WHEEL_CENTRE
            radial = rel - WHEEL_AXIS * (WHEEL_AXIS @ rel)
            radial /= np.linalg.norm(radial)
            errors.append(-on_rim @ radial - SQUEEZE)
    errors = np.array(errors)
    assert len(errors) > 1000, seen['log']          # 2 x 500 Hz over the turn's 4.5 s
    rms = math.sqrt(np.mean(errors ** 2))
    assert rms < 0.2 * SQUEEZE, (rms, np.mean(errors))


@pytest.mark.slow
def test_through_the_node_the_wrist_sensors_tangential_forces_turn_the_valve(turn, seen):
    """
    R (t_l + t_r) from the wrist topics = the valve's friction + damping + inertial torque.

    Over 0.25 s windows of the turn (10-170 deg), within 5 %: the hands' tangential forces on
    the rim (F = m g - R f, as above) from the two wrist sensors' messages, against
    tau_c + c w + J alpha of the valve (3 N m, 0.5 N m s/rad, J = 5/6 m r^2 + 0.002 =
    0.102 kg m^2: urdf/jointsim_valve.xacro) with w and alpha from its joint_states positions.
    """
    friction, damping, inertia, radius = 3.0, 0.5, 5.0 / 6.0 * 3.0 * 0.04 + 0.002, 0.2
    valve = seen['valve']
    poses = seen['poses']
    tf_stamps = np.array([stamp for stamp, _ in poses])
    turned = np.degrees(valve[:, 1] - valve[0, 1])
    inside = (turned >= 10.0) & (turned <= 170.0)
    t0, t1 = valve[inside, 0].min(), valve[inside, 0].max()
    edges = np.arange(t0, t1 - 0.25, 0.25)
    tangential = {side: [[] for _ in edges] for side in 'lr'}
    for side in 'lr':
        for stamp, _, force in seen['readings'][f'{side}_wrist_ft']:
            k = int((stamp - t0) // 0.25)
            if not 0 <= k < len(edges):
                continue
            rot, pos = poses[min(np.searchsorted(tf_stamps, stamp), len(poses) - 1)][1][
                f'{side}_hand']
            on_rim = HAND_MASS * np.array([0.0, 0.0, -G]) - rot @ force
            rel = pos + rot @ GRASP_POINT - WHEEL_CENTRE
            radial = rel - WHEEL_AXIS * (WHEEL_AXIS @ rel)
            radial /= np.linalg.norm(radial)
            tangential[side][k].append(on_rim @ np.cross(WHEEL_AXIS, radial))

    def angle(t):
        return np.interp(t, valve[:, 0], valve[:, 1])
    checked = 0
    for k, a in enumerate(edges):
        if not (tangential['l'][k] and tangential['r'][k]):
            continue
        rate = (angle(a + 0.25) - angle(a)) / 0.25
        alpha = ((angle(a + 0.375) - angle(a + 0.125)) - (angle(a + 0.125) - angle(a - 0.125))
                 ) / 0.25 ** 2
        expected = friction + damping * rate + inertia * alpha
        measured = radius * (np.mean(tangential['l'][k]) + np.mean(tangential['r'][k]))
        assert measured == pytest.approx(expected, rel=0.05), (a, measured, expected)
        checked += 1
    assert checked >= 12, seen['log']
