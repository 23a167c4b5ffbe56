"""
Contact markers (visualization_msgs/MarkerArray) and the rviz2 config's topics.

The conversion ``ros_messages.contact_markers`` is checked against hand-made contacts without
DDS.  Over real DDS: a box resting on the ground (floating base, ground on) under the node, whose
markers must put the contact points on the ground plane with upward arrows whose lengths add up
to the box's weight; and the bundled arm under the node, whose topic graph must hold every topic
the shipped rviz config (rviz/jointsim.rviz) displays, with the display's message type.
"""
import math
from pathlib import Path

from jointsim_ros.ros import messages as ros_messages
from jointsim_ros.ros.node import CONTACT_MARKERS_TOPIC
from jointsim_ros.sim.simulator import Contact
from node_harness import domain, latest, PACKAGE_ROOT, RosClient, running_node, stamp_seconds
import numpy as np
import pytest
from robots import box_inertial, collision_box, link, robot
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from visualization_msgs.msg import Marker, MarkerArray
import yaml

MASS = 2.0                  # kg
SIZE = (0.2, 0.3, 0.1)      # m
GRAVITY = 9.81              # m/s^2
SCALE = 0.01                # m/N, not the default: the parameter must reach the markers
WORLD = 'sim_world'         # not the default: the markers must use the node's world_frame
RVIZ_FILE = PACKAGE_ROOT / 'rviz' / 'jointsim.rviz'
# The message type each rviz display class subscribes to.
DISPLAY_TYPES = {
    'rviz_default_plugins/RobotModel': 'std_msgs/msg/String',
    'rviz_default_plugins/MarkerArray': 'visualization_msgs/msg/MarkerArray',
    'rviz_default_plugins/Wrench': 'geometry_msgs/msg/WrenchStamped',
}


def contact(position, normal, force, link_b='ground'):
    """Return a hand-made Contact."""
    return Contact(id=7, link_a='box', link_b=link_b, position=np.asarray(position, float),
                   normal=np.asarray(normal, float), depth=0.0, normal_force=force,
                   friction_force=np.zeros(3))


def floats(marker):
    """Return every floating-point value a marker carries (pose, scale, colour, points)."""
    p, q, s, c = marker.pose.position, marker.pose.orientation, marker.scale, marker.color
    values = [p.x, p.y, p.z, q.x, q.y, q.z, q.w, s.x, s.y, s.z, c.r, c.g, c.b, c.a]
    for point in marker.points:
        values += [point.x, point.y, point.z]
    return values


def split(msg):
    """Return (points, arrows) of a contact MarkerArray, each sorted by id."""
    points = sorted((m for m in msg.markers if m.ns == ros_messages.CONTACT_POINTS_NS),
                    key=lambda m: m.id)
    arrows = sorted((m for m in msg.markers if m.ns == ros_messages.CONTACT_FORCES_NS),
                    key=lambda m: m.id)
    return points, arrows


def arrow_vector(arrow):
    """Return the end point minus the start point of an ARROW given by two points."""
    start, end = arrow.points
    return np.array([end.x - start.x, end.y - start.y, end.z - start.z])


# -- the conversion, without DDS ----------------------------------------------------------------
def test_contact_markers_put_a_sphere_at_each_point_and_an_arrow_along_its_normal_force():
    contacts = [contact([0.1, -0.2, 0.0], [0.0, 0.0, 1.0], 50.0),
                contact([0.3, 0.4, 0.5], [0.6, 0.0, 0.8], 10.0, link_b='table')]
    msg = ros_messages.contact_markers(contacts, 'odom', 1.25, scale=0.004)
    assert isinstance(msg, MarkerArray)
    first = msg.markers[0]
    assert first.action == Marker.DELETEALL and first.ns == ''
    assert len(msg.markers) == 1 + 2 * len(contacts)
    assert all(m.header.frame_id == 'odom' for m in msg.markers)
    assert all(stamp_seconds(m.header.stamp) == 1.25 for m in msg.markers)
    points, arrows = split(msg)
    assert [m.id for m in points] == [0, 1] and [m.id for m in arrows] == [0, 1]
    for sphere, arrow, c in zip(points, arrows, contacts):
        assert sphere.type == Marker.SPHERE and sphere.action == Marker.ADD
        p = sphere.pose.position
        assert [p.x, p.y, p.z] == pytest.approx(list(c.position))
        assert sphere.scale.x == sphere.scale.y == sphere.scale.z > 0.0
        assert arrow.type == Marker.ARROW and arrow.action == Marker.ADD
        start = arrow.points[0]
        assert [start.x, start.y, start.z] == pytest.approx(list(c.position))
        assert arrow_vector(arrow) == pytest.approx(c.normal * c.normal_force * 0.004)
        assert arrow.scale.x > 0.0 and arrow.scale.y > arrow.scale.x and arrow.scale.z == 0.0
        for marker in (sphere, arrow):
            assert marker.pose.orientation.w == 1.0  # identity, not rviz's "uninitialised"
            assert marker.color.a == 1.0
    # 50 N at 4 mm/N: a 20 cm arrow straight up
    assert arrow_vector(arrows[0]) == pytest.approx([0.0, 0.0, 0.2])


def test_contact_markers_leave_out_non_finite_contacts_and_draw_no_arrow_without_force():
    contacts = [contact([math.nan, 0.0, 0.0], [0.0, 0.0, 1.0], 5.0),
                contact([0.0, 0.0, 0.0], [0.0, 0.0, 1.0], math.inf),
                contact([1.0, 0.0, 0.0], [0.0, 0.0, 1.0], 0.0),    # speculative: no force
                contact([2.0, 0.0, 0.0], [0.0, 0.0, 1.0], 3.0)]
    msg = ros_messages.contact_markers(contacts, 'world', 0.0)
    points, arrows = split(msg)
    assert [m.pose.position.x for m in points] == [1.0, 2.0]
    assert [m.id for m in points] == [0, 1]
    assert [m.id for m in arrows] == [1]   # the arrow keeps its point's id
    assert arrow_vector(arrows[0]) == pytest.approx(
        [0.0, 0.0, 3.0 * ros_messages.CONTACT_MARKER_SCALE])
    assert all(math.isfinite(v) for m in msg.markers for v in floats(m))
    empty = ros_messages.contact_markers([], 'world', 0.0)
    assert [m.action for m in empty.markers] == [Marker.DELETEALL]


# -- a box resting on the ground, over DDS -------------------------------------------------------
def box_robot():
    """Return one box link with its collision box (a single link: the floating base)."""
    return robot('box', link('box', box_inertial(MASS, SIZE) + collision_box(SIZE)))


def write_box(folder):
    """Write the box's URDF and config (floating base resting on the ground); return paths."""
    urdf = Path(folder) / 'box.urdf'
    urdf.write_text(box_robot())
    config = Path(folder) / 'box.yaml'
    config.write_text(yaml.safe_dump({
        'base': 'floating', 'gravity': [0.0, 0.0, -GRAVITY],
        'base_pose': {'position': [0.0, 0.0, SIZE[2] / 2]}}))
    return urdf, config


@pytest.fixture(scope='module')
def box(tmp_path_factory):
    """Yield the client of a node simulating the box resting on the ground."""
    folder = tmp_path_factory.mktemp('box_node')
    urdf, config = write_box(folder)
    with domain() as domain_id:
        with running_node(domain_id, folder / 'node.log', parameters={
                'robot_description_file': str(urdf), 'config_file': str(config),
                'contact_marker_scale': SCALE, 'world_frame': WORLD}):
            client = RosClient(domain_id)
            try:
                yield client
            finally:
                client.close()


def test_markers_of_a_resting_box_lie_on_the_ground_and_add_up_to_its_weight(box):
    received = box.subscribe(MarkerArray, CONTACT_MARKERS_TOPIC)

    def settled():
        # a message 0.3 s of simulated time in: the box has rested for many steps
        msg = latest(received)
        return msg is not None and stamp_seconds(msg.markers[0].header.stamp) > 0.3
    assert box.wait_for(settled), 'no contact_markers after 0.3 s of simulated time'
    msg = latest(received)
    assert msg.markers[0].action == Marker.DELETEALL
    assert {m.header.frame_id for m in msg.markers} == {WORLD}
    assert len({stamp_seconds(m.header.stamp) for m in msg.markers}) == 1
    points, arrows = split(msg)
    assert len(points) == 4      # the four corners of the bottom face
    assert len(arrows) == 4
    for sphere in points:
        assert abs(sphere.pose.position.z) < 3e-3                       # on the plane z = 0
        assert abs(abs(sphere.pose.position.x) - SIZE[0] / 2) < 3e-3    # at a corner
        assert abs(abs(sphere.pose.position.y) - SIZE[1] / 2) < 3e-3
    total = 0.0
    for arrow in arrows:
        vector = arrow_vector(arrow)
        assert vector[2] > 0.0
        assert np.hypot(vector[0], vector[1]) < 1e-6 * vector[2]         # straight up (+z)
        total += np.linalg.norm(vector) / SCALE
    assert total == pytest.approx(MASS * GRAVITY, rel=0.02)
    assert all(math.isfinite(v) for m in msg.markers for v in floats(m))


def test_a_reset_without_contacts_publishes_one_message_that_clears_the_markers(box):
    received = box.subscribe(MarkerArray, CONTACT_MARKERS_TOPIC)
    assert box.wait_for(lambda: received), 'no contact_markers'
    assert box.call(Trigger, 'reset').success
    # the reset state (t = 0) has no contact yet: one DELETEALL alone, then the box's again

    def cleared():
        return any(len(m.markers) == 1 and stamp_seconds(m.markers[0].header.stamp) == 0.0
                   for m in received)
    assert box.wait_for(cleared), 'no clearing message after the reset'
    (clear,) = next(m.markers for m in received if len(m.markers) == 1)
    assert clear.action == Marker.DELETEALL and clear.header.frame_id == WORLD
    count = len(received)
    assert box.wait_for(lambda: len(received) > count and len(split(received[-1])[0]) == 4)


def test_publish_contact_markers_false_creates_no_publisher(tmp_path):
    urdf, config = write_box(tmp_path)
    with domain() as domain_id:
        with running_node(domain_id, tmp_path / 'node.log', parameters={
                'robot_description_file': str(urdf), 'config_file': str(config),
                'publish_contact_markers': False}):
            client = RosClient(domain_id)
            try:
                states = client.subscribe(JointState, 'joint_states')
                assert client.wait_for(lambda: len(states) > 5), 'no joint_states'
                assert client.node.count_publishers(f'/{CONTACT_MARKERS_TOPIC}') == 0
            finally:
                client.close()


# -- the shipped rviz config against a running node ----------------------------------------------
def rviz_topics():
    """Return (display class, topic, enabled) of every display of rviz/jointsim.rviz with one."""
    config = yaml.safe_load(RVIZ_FILE.read_text())
    out = []
    for display in config['Visualization Manager']['Displays']:
        topic = display.get('Topic') or display.get('Description Topic')
        if topic is not None:
            out.append((display['Class'], topic['Value'], display['Enabled']))
    return out


def test_the_rviz_config_names_topics_the_node_publishes_with_their_types(tmp_path):
    # the bundled arm with its config, plus the wrist sensor of docs/sensors.md's example (the
    # name of the config's disabled Wrench display): every display, enabled or not, must find
    # its topic and type
    arm = yaml.safe_load((PACKAGE_ROOT / 'config' / 'jointsim_arm.yaml').read_text())
    arm['force_torque_sensors'] = {'wrist_ft': {'joint': 'joint_a7'}}
    config = tmp_path / 'arm_wrist_ft.yaml'
    config.write_text(yaml.safe_dump(arm))
    displays = rviz_topics()
    assert {cls for cls, _, _ in displays} == set(DISPLAY_TYPES)
    with domain() as domain_id:
        with running_node(domain_id, tmp_path / 'node.log',
                          parameters={'config_file': str(config)}):
            client = RosClient(domain_id)
            try:
                expected = {f'/{topic}': DISPLAY_TYPES[cls] for cls, topic, _ in displays}

                def published():
                    graph = dict(client.node.get_topic_names_and_types())
                    return all(kind in graph.get(topic, []) for topic, kind in expected.items())
                assert client.wait_for(published), (
                    f'rviz topics {expected} not all in the graph '
                    f'{client.node.get_topic_names_and_types()}')
                for topic in expected:
                    assert client.node.count_publishers(topic) == 1, topic
            finally:
                client.close()
