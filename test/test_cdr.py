"""
The node's serialized-message templates (jointsim_ros/ros/cdr.py) and batched link poses.

A template's bytes, deserialized by rclpy, must be the message built field by field from the
same numbers, for every message kind the node publishes through one (joint states, dynamic
joint states, TF, wrenches, IMU); and the batched poses /tf is made from must be the ones
``Simulator.link_pose`` composes link by link.
"""
import math

from control_msgs.msg import DynamicJointState
from geometry_msgs.msg import WrenchStamped
from jointsim_ros.ros import messages
from jointsim_ros.ros.cdr import MessageTemplate, TemplateError
from jointsim_ros.ros.frames import FrameTree
from jointsim_ros.sim.loading import load_robot
from node_harness import PACKAGE_ROOT
import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Imu, JointState
from tf2_msgs.msg import TFMessage

HUMANOID = PACKAGE_ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
HUMANOID_CONFIG = PACKAGE_ROOT / 'config' / 'jointsim_humanoid.yaml'


@pytest.fixture(scope='module')
def humanoid():
    loaded = load_robot('', str(HUMANOID), str(HUMANOID_CONFIG), 1000.0)
    loaded.sim.step(250)          # landed, moving a little: every pose and number non-trivial
    return loaded


def same_after_refills(template, build, msg_type, count, rng):
    """Refill a template three times; each time its bytes must read back as build's message."""
    for seconds in (0.0, 1.25, 123456.789012345):
        values = rng.normal(size=count) * 10.0 ** rng.integers(-6, 6, size=count)
        read = deserialize_message(template.fill(values, seconds), msg_type)
        assert read == build(values, seconds), seconds


def test_templates_read_back_as_the_messages_built_field_by_field(humanoid):
    sim, rng = humanoid.sim, np.random.default_rng(7)
    names = sim.joint_names
    cases = [
        (JointState, 3 * len(names),
         lambda v, s: messages.joint_state_message(names, v, s)),
        (DynamicJointState, len(messages.dynamic_joint_state_values(sim)),
         lambda v, s: messages.dynamic_joint_state_message(
             names, messages.dynamic_interfaces(sim), v, s)),
        (WrenchStamped, 6, lambda v, s: messages.wrench_stamped(v, 'l_foot', s)),
        (Imu, 10, lambda v, s: messages.imu_message(
            v, 'pelvis_imu', s, messages.imu_covariances(sim.model.imus[0]))),
    ]
    frames = FrameTree(sim, humanoid.urdf_robot).moving_frames()
    cases.append((TFMessage, 7 * len(frames),
                  lambda v, s: messages.tf_message_arrays(frames, v, s)))
    for msg_type, count, build in cases:
        template = MessageTemplate(build, count)
        assert template.stamps >= 1
        same_after_refills(template, build, msg_type, count, rng)
    # the humanoid's TF: one stamp per transform
    assert template.stamps == len(frames) == 24


def test_the_state_messages_are_the_simulators_numbers(humanoid):
    sim = humanoid.sim
    msg = messages.joint_state(sim)
    positions, velocities = sim.joint_sensors.read()
    assert msg.position.tolist() == positions.tolist()
    assert msg.velocity.tolist() == velocities.tolist()
    assert msg.effort.tolist() == sim.joint_efforts().tolist()
    dynamic = messages.dynamic_joint_state(sim)
    knee = list(dynamic.joint_names).index('l_knee')
    values = dict(zip(dynamic.interface_values[knee].interface_names,
                      dynamic.interface_values[knee].values))
    drive = sim.drive_state('l_knee')
    assert values['voltage'] == drive['voltage']
    assert values['position'] == positions[sim.joint_names.index('l_knee')]


def test_a_build_that_does_not_keep_its_numbers_verbatim_is_refused():
    def scaled(values, seconds):
        return messages.wrench_stamped(2.0 * values, 'l_foot', seconds)
    with pytest.raises(TemplateError, match='value 0 of 6'):
        MessageTemplate(scaled, 6)


def test_batched_link_poses_and_tf_equal_the_link_by_link_composition(humanoid):
    sim = humanoid.sim
    names = list(sim.link_names)
    xyz, quat = sim.link_poses(names)
    for k, name in enumerate(names):
        p, q = sim.link_pose(name)
        assert np.allclose(xyz[k], p, atol=1e-14) and np.allclose(quat[k], q, atol=1e-14)
    # TF: child in parent from the world poses, by matrices here
    tree = FrameTree(sim, humanoid.urdf_robot)
    xyz, quat = tree.moving_arrays()
    assert np.allclose(np.linalg.norm(quat, axis=1), 1.0, atol=1e-14)
    assert (quat[:, 0] >= 0.0).all()
    for (parent, child), p, q in zip(tree.moving_frames(), xyz, quat):
        parent_xyz, parent_quat = ((np.zeros(3), np.array([1.0, 0, 0, 0]))
                                   if parent == 'world' else sim.link_pose(parent))
        child_xyz, child_quat = sim.link_pose(child)
        rp, rc, r = (quat_matrix(parent_quat), quat_matrix(child_quat), quat_matrix(q))
        assert np.allclose(rp @ p + parent_xyz, child_xyz, atol=1e-13), child
        assert np.allclose(rp @ r, rc, atol=1e-13), child


def quat_matrix(q):
    """Return the rotation matrix of a unit quaternion (w, x, y, z), written out here."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_link_poses_follow_a_rebuilt_model():
    loaded = load_robot('', str(PACKAGE_ROOT / 'urdf' / 'jointsim_arm.urdf.xacro'),
                        str(PACKAGE_ROOT / 'config' / 'jointsim_arm.yaml'), 1000.0)
    sim = loaded.sim
    names = list(sim.link_names)
    before = sim.link_poses(names)[0]
    sim.entities.spawn('ball', {'shape': 'sphere', 'radius': 0.05, 'mass': 1.0},
                       position=(1.0, 1.0, 0.5))
    sim.step(10)
    after, _ = sim.link_poses(names + ['ball'])
    assert np.allclose(after[:len(names)], sim.link_poses(names)[0])
    assert np.allclose(after[-1], sim.link_pose('ball')[0])
    assert math.isclose(after[-1][0], 1.0, abs_tol=1e-9) and not np.allclose(before, 0.0)
