"""
jointsim_node with a world file (two arms, config/two_arms.world.yaml), over real DDS.

One node serves every test of this module.  Each robot's topics live under its name with the
joint names of its own URDF; TF frames carry the robot's prefix; a command to one robot moves
that robot only, and its watchdog zeroes only the robot whose commands stopped.  The browser
view's ROS side (in this process) finds both robots through the node's ``robots`` topic.
Waits are generous; nothing asserts a timing.
"""
import math
import time

from control_msgs.msg import DynamicJointState
from jointsim_ros.description import parse_urdf
from jointsim_ros.ros.messages import read_robots_text
from node_harness import (domain, LATCHED, PACKAGE_ROOT, RosClient, running_node, STATIC_TF,
                          view_in_process)
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

WORLD = PACKAGE_ROOT / 'config' / 'two_arms.world.yaml'
ARM = PACKAGE_ROOT / 'urdf' / 'jointsim_arm.urdf.xacro'
JOINTS = [f'joint_a{i}' for i in range(1, 8)]


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    """Yield (node process, client, domain id) for the two-arm world node."""
    folder = tmp_path_factory.mktemp('world_node')
    with domain() as domain_id:
        with running_node(domain_id, folder / 'node.log',
                          parameters={'world_file': str(WORLD), 'command_timeout': 0.5}) as node:
            client = RosClient(domain_id)
            try:
                yield node, client, domain_id
            finally:
                client.close()


def joint(messages, name='joint_a1', field='position'):
    """Return a joint's value in the last JointState received."""
    msg = messages[-1]
    return getattr(msg, field)[list(msg.name).index(name)]


def drive_value(messages, name, interface):
    """Return one interface of a joint in the last DynamicJointState received."""
    msg = messages[-1]
    values = msg.interface_values[list(msg.joint_names).index(name)]
    return dict(zip(values.interface_names, values.values))[interface]


def test_each_robot_has_its_topics_under_its_name_and_its_frames_prefixed(world):
    node, client, _ = world
    left = client.subscribe(JointState, '/left/joint_states')
    right = client.subscribe(JointState, '/right/joint_states')
    described = client.subscribe(String, '/left/robot_description', LATCHED)
    order = client.subscribe(String, '/right/joint_command_order', LATCHED)
    robots = client.subscribe(String, '/robots', LATCHED)
    moving = client.subscribe(TFMessage, '/tf', 100)
    static = client.subscribe(TFMessage, '/tf_static', STATIC_TF)

    def children(messages):
        return {t.child_frame_id for m in messages for t in m.transforms}
    assert client.wait_for(lambda: left and right and described and order and robots
                           and {'left/link_1', 'right/link_1'} <= children(moving)
                           and {'left/tool0', 'right/tool0'} <= children(static)), node.output()
    # each robot's own joint names, as its URDF has them
    assert list(left[-1].name) == JOINTS and list(right[-1].name) == JOINTS
    # its own URDF, not the world's merged model
    own = parse_urdf(described[-1].data).robot
    assert {link.name for link in own.links} == {
        link.name for link in parse_urdf(str(ARM)).robot.links}
    assert f'joint_voltage_commands: [{", ".join(JOINTS)}]' in order[-1].data
    assert read_robots_text(robots[-1].data) == [('left', 'left/', 'left/'),
                                                 ('right', 'right/', 'right/')]
    # each robot's root link hangs from the world frame at its pose in the world file
    edges = {(t.header.frame_id, t.child_frame_id): t.transform.translation
             for m in static for t in m.transforms}
    assert edges[('world', 'left/world')].y == pytest.approx(-0.55)
    assert edges[('world', 'right/world')].y == pytest.approx(0.55)
    assert ('left/world', 'left/base_link') in edges
    # the world-level services are the node's, once
    assert client.call(Trigger, 'reset').success


def test_a_voltage_on_one_robot_moves_that_robot_only(world):
    _, client, _ = world
    assert client.call(Trigger, 'reset').success
    left = client.subscribe(JointState, '/left/joint_states')
    right = client.subscribe(JointState, '/right/joint_states')
    assert client.wait_for(lambda: left and right)
    command = client.publisher(JointState, '/left/joint_voltages')
    msg = JointState(name=['joint_a1'], effort=[12.0])
    # joint_a1 turns about the vertical: gravity leaves it alone, the voltage turns it
    assert client.wait_for(lambda: abs(joint(left)) > 0.3, timeout=20.0,
                           every=(0.1, lambda: command.publish(msg))), joint(left)
    assert abs(joint(right)) < 1e-3, joint(right)
    assert abs(joint(right, field='velocity')) < 1e-2


def test_the_watchdog_zeroes_only_the_robot_whose_commands_stopped(world):
    _, client, _ = world
    assert client.call(Trigger, 'reset').success
    left = client.subscribe(DynamicJointState, '/left/dynamic_joint_states')
    right = client.subscribe(DynamicJointState, '/right/dynamic_joint_states')
    to_left = client.publisher(JointState, '/left/joint_voltages')
    to_right = client.publisher(JointState, '/right/joint_voltages')
    msg = JointState(name=['joint_a1'], effort=[6.0])
    # both hold 6 V ...
    assert client.wait_for(
        lambda: left and right and drive_value(left, 'joint_a1', 'voltage') == 6.0
        and drive_value(right, 'joint_a1', 'voltage') == 6.0,
        every=(0.1, lambda: (to_left.publish(msg), to_right.publish(msg))))
    # ... then only the left one keeps being commanded: the right one is zeroed
    assert client.wait_for(lambda: drive_value(right, 'joint_a1', 'voltage') == 0.0,
                           every=(0.1, lambda: to_left.publish(msg)))
    client.spin_for(0.3)
    assert drive_value(left, 'joint_a1', 'voltage') == 6.0


def test_the_view_finds_every_robot_of_the_world_and_frames_them_all(world):
    # the view node in this process (its own context): it reads the node's robots topic,
    # draws each robot's robot_description under its prefix and frames the whole world
    _, _, domain_id = world
    with view_in_process(domain_id, 8092) as (view, executor):
        wanted = {f'{robot}/{link}' for robot in ('left', 'right')
                  for link in ('base_link', 'link_1', 'link_7')}
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline and not (
                wanted <= set(view.scene.robot_frames()) and view.framed is not None
                and len(view._sliders) == 14):
            executor.spin_once(timeout_sec=0.05)
        assert wanted <= set(view.scene.robot_frames()), view.scene.robot_frames()
        assert view.robots == ['left', 'right']
        # one slider per driven joint of every robot, named with the robot
        assert {'left/joint_a2', 'right/joint_a2'} <= set(view._sliders)
        # the camera frames both arms: it looks between them, from far enough to see both
        position, look_at = view.framed
        assert abs(look_at[1]) < 0.2, look_at
        assert math.dist(position, look_at) > 1.5, (position, look_at)


def test_a_robot_spawned_and_deleted_brings_and_takes_its_topics(world):
    """spawn_entity with a URDF that moves adds a robot with its topics; delete takes them."""
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import DeleteEntity, GetEntities, SpawnEntity
    node, client, _ = world
    third = client.subscribe(JointState, '/third/joint_states')
    robots = client.subscribe(String, '/robots', LATCHED)
    request = SpawnEntity.Request(name='third', uri=str(ARM))
    request.initial_pose.pose.position.x = 2.0
    answer = client.call(SpawnEntity, '/jointsim_node/spawn_entity', request)
    assert answer.result.result == Result.RESULT_OK, node.output()
    assert client.wait_for(lambda: third and any(
        name == 'third' for name, _, _ in read_robots_text(robots[-1].data)))
    assert list(third[-1].name) == JOINTS
    entities = client.call(GetEntities, '/jointsim_node/get_entities').entities
    assert 'third' in entities and 'third/link_7' in entities and 'left/link_7' in entities
    # a taken name is refused, the world left as it was
    taken = client.call(SpawnEntity, '/jointsim_node/spawn_entity',
                        SpawnEntity.Request(name='left', uri=str(ARM)))
    assert taken.result.result != Result.RESULT_OK and "'left' is taken" in \
        taken.result.error_message
    deleted = client.call(DeleteEntity, '/jointsim_node/delete_entity',
                          DeleteEntity.Request(entity='third'))
    assert deleted.result.result == Result.RESULT_OK, deleted.result.error_message
    assert client.wait_for(lambda: [n for n, _, _ in read_robots_text(robots[-1].data)]
                           == ['left', 'right'])
    client.spin_for(0.5)
    count = len(third)
    client.spin_for(1.0)
    assert len(third) == count   # its joint_states stopped
    left = client.subscribe(JointState, '/left/joint_states')
    assert client.wait_for(lambda: left)   # the others go on
