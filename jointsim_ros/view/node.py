"""
jointsim_view: a browser view of a running simulation, from its ROS topics (docs/view.md).

    python -m jointsim_ros.view.node --ros-args -p port:=8080
    ros2 run jointsim_ros jointsim_view

It draws the robot of ``robot_description`` posed by /tf, the contact points and normal forces
of ``contact_markers``, each force-torque sensor's wrench (``*/wrench``) as arrows and each
IMU's frame, each lidar's and depth camera's latest points (``*/scan``, ``*/points``,
``*/depth/image_raw`` with its ``camera_info``) in the world, posed at their stamps, plots
chosen joints' positions and drive currents and voltages from ``joint_states`` and
``dynamic_joint_states``, and has buttons calling the simulator's ``pause``, ``resume``,
``step`` and ``reset`` and sliders sending servo position targets on ``joint_commands``.  Any
ROS 2 source of ``robot_description`` and /tf will do for the drawing.
A simulator running a world announces its robots on ``robots`` (latched); the view then draws
every robot from its own ``NAME/robot_description`` on its TF frames ``NAME/link``, plots its
joints as ``NAME/joint`` and sends its sliders' targets on ``NAME/joint_commands``.
It prints ``view: http://127.0.0.1:PORT`` when it serves.
"""
from collections import deque
import logging
import os
import sys

from control_msgs.msg import DynamicJointState
from geometry_msgs.msg import WrenchStamped
import numpy as np
import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import (CameraInfo, Image, Imu, JointState, LaserScan, PointCloud2,
                             PointField)
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from .drawing import (CAMERA_FOV, CAMERA_LOOK_AT, CAMERA_POSITION, cloud_points, depth_points,
                      framing, most_moving, PlotBuffer, scan_points, strip_prefix, to_world,
                      ViewScene, Visual, world_poses, wrench_arrows)
from ..description.urdf import parse_urdf
from ..ros.messages import read_robots_text
from ..ros.node import make_executor, ROBOTS_TOPIC, spin, stop_on_signals

NODE_NAME = 'jointsim_view'
#: The plots are redrawn every PLOT_EVERY drawings (10 Hz at the default 30 Hz).
PLOT_EVERY = 3
#: Joints a plot shows (those that moved most, unless the plot_joints parameter names them),
#: chosen again every PICK_PERIOD simulated seconds.
PLOT_SERIES = 4
PICK_PERIOD = 2.0
#: Poses of a range sensor's frame kept, one per drawing, to draw a sample where it was taken
#: (at 30 Hz: half a second).
POSE_HISTORY = 16
#: The topics of range sensors, by the end of their names: (suffix, message type, kind).
RANGE_TOPICS = (('/scan', 'sensor_msgs/msg/LaserScan', 'scan'),
                ('/points', 'sensor_msgs/msg/PointCloud2', 'cloud'),
                ('/depth/image_raw', 'sensor_msgs/msg/Image', 'depth'))
RANGE_TYPES = {'scan': LaserScan, 'cloud': PointCloud2, 'depth': Image}
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)
STATIC_TF = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                       reliability=ReliabilityPolicy.RELIABLE)
#: Parameters: name -> (default, unit, description).
PARAMETERS = {
    'port': (8080, 'port', 'HTTP port of the page (in use: a free one, announced)'),
    'host': ('127.0.0.1', 'address', 'where the page listens (0.0.0.0: other machines too)'),
    'rate': (30.0, 'Hz', 'scene and plot updates per second'),
    'plot_joints': ([''], 'joint names', 'joints whose position, current and voltage are '
                                         'plotted (empty: the four driven joints that moved '
                                         'most, chosen again every 2 s of simulated time)'),
    'world_frame': ('world', 'frame id', 'the TF frame the robot is drawn in'),
    'frame_prefix': ('', 'string', "the simulator's frame_prefix (stripped from TF frames)"),
    'sliders': (True, 'bool', 'a servo position slider per driven joint (joint_commands)'),
    'camera_position': (list(CAMERA_POSITION), 'm', "where the page's camera starts (world)"),
    'camera_look_at': (list(CAMERA_LOOK_AT), 'm', 'the point it looks at (world)'),
    'camera_fov': (CAMERA_FOV, 'rad', 'its vertical field of view'),
    'camera_frame': (True, 'bool',
                     'frame the whole world when its first poses come (unless '
                     'camera_position or camera_look_at is given)'),
}


def marker_visuals(msg, prefix=''):
    """
    Return the Visuals of a scene_markers MarkerArray (boxes, spheres, cylinders, meshes).

    Each hangs on its marker's frame (``prefix`` stripped); other marker types are left out.
    """
    out = []
    for m in msg.markers:
        if m.action != Marker.ADD:
            continue
        frame = m.header.frame_id
        frame = frame[len(prefix):] if prefix and frame.startswith(prefix) else frame
        o, p, c = m.pose.orientation, m.pose.position, m.color
        pose = ((p.x, p.y, p.z), (o.w, o.x, o.y, o.z))
        colour = tuple(int(round(255 * min(max(v, 0.0), 1.0))) for v in (c.r, c.g, c.b))
        scale = (m.scale.x, m.scale.y, m.scale.z)
        if m.type == Marker.CUBE:
            out.append(Visual(frame, 'box', scale, *pose, colour))
        elif m.type == Marker.SPHERE:
            out.append(Visual(frame, 'sphere', (0.5 * scale[0],), *pose, colour))
        elif m.type == Marker.CYLINDER:
            out.append(Visual(frame, 'cylinder', (0.5 * scale[0], scale[2]), *pose, colour))
        elif m.type == Marker.TRIANGLE_LIST and len(m.points) >= 3:
            vertices = np.array([(q.x, q.y, q.z) for q in m.points], float) * scale
            faces = np.arange(len(vertices) - len(vertices) % 3, dtype=np.int64).reshape(-1, 3)
            out.append(Visual(frame, 'mesh', (), *pose, colour, vertices, faces))
    return out


def pose_at(history, stamp):
    """Return the (pos, quat) of a frame's history [(stamp, pos, quat)] nearest a stamp."""
    if not history:
        return None
    _, pos, quat = min(history, key=lambda entry: abs(entry[0] - stamp))
    return pos, quat


def range_message_points(kind, msg, k=None):
    """
    Return a range sensor's message's points in its frame, (n, 3) m (none it cannot read).

    ``kind``: 'scan' (LaserScan), 'cloud' (PointCloud2: its x, y, z FLOAT32 fields) or 'depth'
    (a 32FC1 Image, with its CameraInfo's camera matrix ``k``).
    """
    if kind == 'scan':
        return scan_points(msg.ranges, msg.angle_min, msg.angle_increment)
    if kind == 'cloud':
        fields = {f.name: f.offset for f in msg.fields if f.datatype == PointField.FLOAT32}
        if not {'x', 'y', 'z'} <= set(fields):
            return np.zeros((0, 3))
        return cloud_points(msg.data, fields, msg.point_step, msg.width * msg.height,
                            msg.is_bigendian)
    if msg.encoding != '32FC1' or k is None:
        return np.zeros((0, 3))
    depth = np.frombuffer(bytes(msg.data), dtype='>f4' if msg.is_bigendian else '<f4')
    return depth_points(depth.reshape(msg.height, msg.step // 4)[:, :msg.width], k)


class ViewNode(Node):
    """The view's ROS side: subscriptions fill the latest data, a timer draws it."""

    def __init__(self, announce=print, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        p = {name: self.declare_parameter(name, value[0]).value
             for name, value in PARAMETERS.items()}
        self.world_frame, self.prefix = p['world_frame'], p['frame_prefix']
        self.plot_joints = [j for j in p['plot_joints'] if j]
        self.sliders_on = p['sliders']
        self.scene = ViewScene(int(p['port']), p['host'], announce=announce)
        self.scene.set_camera(p['camera_position'], p['camera_look_at'], p['camera_fov'])
        # the camera frames the world once its poses come, unless placed by the parameters
        self.fov = p['camera_fov']
        self._frame_camera = (p['camera_frame']
                              and list(p['camera_position']) == list(CAMERA_POSITION)
                              and list(p['camera_look_at']) == list(CAMERA_LOOK_AT))
        #: Where the camera was put to frame the world once: (position, look_at), or None.
        self.framed = None
        self._next_pick = 0.0
        announce(f'view: {self.scene.url}')
        self.edges = {}
        self.static_edges = {}
        self.contacts = None
        self.wrenches = {}
        self.imus = {}
        self.limits = {}
        self.plots = {'position': PlotBuffer(), 'current': PlotBuffer(),
                      'voltage': PlotBuffer()}
        self._plots_made = False
        self._sliders = {}
        self._subscribed = set()
        self._wrench_topics, self._imu_topics = {}, {}
        # range sensors: name -> (kind, topic, its camera_info topic or None); a depth
        # camera's camera matrix; the latest sample not drawn yet; their frames' recent world
        # poses (stamp s, pos, quat)
        self._range_topics, self._camera_k, self._range_pending = {}, {}, {}
        self._pose_history = {}
        self._tf_stamp = None
        self._frame = 0
        #: The robots of a world (the simulator's ``robots`` topic), in its order; [] for one.
        self.robots = []
        # per robot: its joint_states and dynamic_joint_states topics and what its joint names
        # are prefixed with here ('' for the one robot of a node), its drives, its commands
        self._state_topics = [('joint_states', 'dynamic_joint_states', '')]
        self._driven_by = {}
        self._commands = {'': self.create_publisher(JointState, 'joint_commands', 10)}
        self.create_subscription(String, 'robot_description', self._on_description, LATCHED)
        self.create_subscription(String, ROBOTS_TOPIC, self._on_robots, LATCHED)
        self.create_subscription(MarkerArray, 'scene_markers', self._on_scene, LATCHED)
        self.create_subscription(TFMessage, '/tf_static', self._on_tf_static, STATIC_TF)
        # the fast topics (a simulator publishes them at its publish rate, 200 Hz for the
        # humanoid) arrive serialized and only the latest message of each is read, at the
        # drawing rate (the plots' at theirs): jointsim_node and robot_state_publisher put all
        # their moving transforms in each /tf message
        self._raw = {}
        for msg_type, topic, keep in ((TFMessage, '/tf', 1), (MarkerArray, 'contact_markers', 1),
                                      (JointState, 'joint_states', 1),
                                      (DynamicJointState, 'dynamic_joint_states', 1)):
            self._subscribe_raw(msg_type, topic, keep)
        self._triggers = {name: self.create_client(Trigger, name)
                          for name in ('pause', 'resume', 'step', 'reset')}
        self.scene.add_controls([(label.capitalize(), lambda n=label: self._call(n))
                                 for label in ('pause', 'resume', 'step', 'reset')])
        self.create_timer(1.0 / float(p['rate']), self._draw)
        self.create_timer(1.0, self._discover)

    # -- inputs -------------------------------------------------------------------------------
    def _subscribe_raw(self, msg_type, topic, keep, qos=10):
        """Keep the last ``keep`` serialized messages of a topic, read when drawing."""
        store = self._raw[topic] = (msg_type, deque(maxlen=keep))
        self.create_subscription(msg_type, topic, lambda data: store[1].append(data), qos,
                                 raw=True)

    def _take(self, topic):
        """Return the messages of a topic received since the last call, deserialized."""
        msg_type, store = self._raw[topic]
        taken = [deserialize_message(data, msg_type) for data in store]
        store.clear()
        return taken

    def _on_description(self, msg, frame_prefix='', joint_prefix=''):
        try:
            self.scene.set_robot(msg.data, frame_prefix)
            robot = parse_urdf(msg.data).robot
        except Exception as error:  # noqa: B902 (a bad description is said, the view goes on)
            self.get_logger().error(f'view: {joint_prefix}robot_description cannot be drawn: '
                                    f'{error}')
            return
        self.limits.update({joint_prefix + j.name: (j.limit.lower, j.limit.upper)
                            for j in robot.joints
                            if j.limit is not None and j.type in ('revolute', 'prismatic')})

    def _on_robots(self, msg):
        """Draw, plot and command each robot of a world in its namespace."""
        try:
            robots = read_robots_text(msg.data)
        except ValueError as error:
            self.get_logger().error(f'view: {ROBOTS_TOPIC}: {error}')
            return
        for name, namespace, frame_prefix in robots:
            if name in self.robots:
                continue
            self.robots.append(name)
            joint_prefix = name + '/'
            # its links' frames as drawn: the TF frames less the view's own frame_prefix
            if self.prefix and frame_prefix.startswith(self.prefix):
                frame_prefix = frame_prefix[len(self.prefix):]
            self.create_subscription(
                String, f'{namespace}robot_description',
                lambda m, f=frame_prefix, j=joint_prefix: self._on_description(m, f, j), LATCHED)
            states, dynamic = f'{namespace}joint_states', f'{namespace}dynamic_joint_states'
            self._subscribe_raw(JointState, states, 1)
            self._subscribe_raw(DynamicJointState, dynamic, 1)
            self._state_topics.append((states, dynamic, joint_prefix))
            self._commands[joint_prefix] = self.create_publisher(
                JointState, f'{namespace}joint_commands', 10)

    def _on_scene(self, msg):
        self.scene.set_scene(marker_visuals(msg, self.prefix))

    def _on_tf(self, msg, static=False):
        edges = self.static_edges if static else self.edges
        if not static and msg.transforms:
            stamp = msg.transforms[0].header.stamp
            self._tf_stamp = stamp.sec + 1e-9 * stamp.nanosec
        for t in msg.transforms:
            r, q = t.transform.translation, t.transform.rotation
            edges[t.child_frame_id] = (t.header.frame_id, (r.x, r.y, r.z), (q.w, q.x, q.y, q.z))

    def _on_tf_static(self, msg):
        self._on_tf(msg, static=True)

    def _on_contacts(self, msg):
        points, arrows = [], []
        for marker in msg.markers:
            if marker.action == Marker.DELETEALL:
                points, arrows = [], []
            elif marker.type == Marker.SPHERE:
                p = marker.pose.position
                points.append((p.x, p.y, p.z))
            elif marker.type == Marker.ARROW and len(marker.points) == 2:
                a, b = marker.points
                arrows.append(((a.x, a.y, a.z), (b.x, b.y, b.z)))
        self.contacts = (points, arrows)

    def _on_joint_states(self, msg, prefix=''):
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.plots['position'].add(t, {prefix + n: v for n, v in zip(msg.name, msg.position)})

    def _on_dynamic(self, msg, prefix=''):
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        current, voltage = {}, {}
        for joint, values in zip(msg.joint_names, msg.interface_values):
            named = dict(zip(values.interface_names, values.values))
            if 'current' in named:
                current[prefix + joint] = named['current']
            if 'voltage' in named:
                voltage[prefix + joint] = named['voltage']
        self.plots['current'].add(t, current)
        self.plots['voltage'].add(t, voltage)
        if not self._plots_made and voltage:
            self._driven_by[prefix] = list(voltage)
            # every robot's drives: the plots and sliders once each robot has been heard
            expected = [p for _, _, p in self._state_topics if p] or ['']
            if all(p in self._driven_by for p in expected):
                self._make_plots([j for p in expected for j in self._driven_by[p]])

    def _make_plots(self, driven):
        self._plots_made = True
        self._driven = list(driven)
        joints = self.plot_joints or driven[:PLOT_SERIES]
        for kind, unit in (('position', 'rad or m'), ('current', 'A'), ('voltage', 'V')):
            self.scene.add_plot(f'{kind} ({unit})', joints)
        if self.sliders_on:
            for joint in driven:
                low, high = self.limits.get(joint, (-3.14, 3.14))
                self._sliders[joint] = self.scene.add_slider(
                    f'{joint} target', low, high, 0.0,
                    lambda value, j=joint: self._send_target(j, value))

    def _on_wrench(self, name, msg):
        f, m = msg.wrench.force, msg.wrench.torque
        self.wrenches[name] = (msg.header.frame_id, (f.x, f.y, f.z), (m.x, m.y, m.z))

    def _on_imu(self, name, msg):
        self.imus[name] = msg.header.frame_id
        self._imu_topics.pop(name, None)      # its frame is known: no need to read it again

    def _discover(self):
        """Subscribe to every force-torque sensor's, IMU's and range sensor's topic."""
        for topic, types in self.get_topic_names_and_types():
            if topic in self._subscribed:
                continue
            ranging = next(((suffix, kind) for suffix, type_name, kind in RANGE_TOPICS
                            if topic.endswith(suffix) and type_name in types), None)
            if ranging is not None:
                suffix, kind = ranging
                name = topic.strip('/')[:-len(suffix)]
                # best effort, as a simulator publishes them (a reliable reader hears nothing)
                self._subscribe_raw(RANGE_TYPES[kind], topic, 1, qos_profile_sensor_data)
                info = None
                if kind == 'depth':
                    info = topic[:-len('image_raw')] + 'camera_info'
                    self._subscribe_raw(CameraInfo, info, 1, qos_profile_sensor_data)
                self._range_topics[name] = (kind, topic, info)
                self._subscribed.add(topic)
                continue
            name = topic.strip('/').rsplit('/', 1)[0] or topic
            if topic.endswith('/wrench') and 'geometry_msgs/msg/WrenchStamped' in types:
                self._subscribe_raw(WrenchStamped, topic, 1)
                self._wrench_topics[name] = topic
                self._subscribed.add(topic)
            elif 'sensor_msgs/msg/Imu' in types:
                self._subscribe_raw(Imu, topic, 1)
                self._imu_topics[name] = topic
                self._subscribed.add(topic)

    # -- outputs ------------------------------------------------------------------------------
    def _call(self, name):
        client = self._triggers[name]
        if not client.service_is_ready():
            self.get_logger().warning(f'view: no {name} service (is the simulator running?)')
            return
        client.call_async(Trigger.Request())

    def _send_target(self, joint, value):
        # a world's joint NAME/joint goes to NAME/joint_commands under its own name
        prefix = max((p for p in self._commands if joint.startswith(p)), key=len)
        msg = JointState()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.name, msg.position = [joint[len(prefix):]], [float(value)]
        self._commands[prefix].publish(msg)

    def _read(self):
        """Read the fast topics' latest messages."""
        for msg in self._take('/tf'):
            self._on_tf(msg)
        for msg in self._take('contact_markers')[-1:]:
            self._on_contacts(msg)
        if self._frame % PLOT_EVERY == 0:
            for states, dynamic, prefix in self._state_topics:
                for msg in self._take(states)[-1:]:
                    self._on_joint_states(msg, prefix)
                for msg in self._take(dynamic)[-1:]:
                    self._on_dynamic(msg, prefix)
        for name, topic in self._wrench_topics.items():
            for msg in self._take(topic)[-1:]:
                self._on_wrench(name, msg)
        for name, topic in list(self._imu_topics.items()):
            for msg in self._take(topic)[-1:]:
                self._on_imu(name, msg)
        for name, (kind, topic, info) in self._range_topics.items():
            for msg in self._take(topic)[-1:]:
                self._range_pending[name] = (kind, msg)
            if info is not None:
                for msg in self._take(info)[-1:]:
                    self._camera_k[name] = tuple(msg.k)

    def _draw_ranges(self, full):
        """Draw the range sensors' new samples, each from its frame's pose at its stamp."""
        if self._tf_stamp is not None:
            for frame, history in self._pose_history.items():
                if frame in full and (not history or history[-1][0] != self._tf_stamp):
                    history.append((self._tf_stamp, *full[frame]))
        for name, (kind, msg) in list(self._range_pending.items()):
            frame = msg.header.frame_id
            self._pose_history.setdefault(frame, deque(maxlen=POSE_HISTORY))
            stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            pose = pose_at(self._pose_history[frame], stamp) or full.get(frame)
            if pose is None or (kind == 'depth' and name not in self._camera_k):
                continue                   # its frame or its camera matrix not known yet
            del self._range_pending[name]
            points = range_message_points(kind, msg, self._camera_k.get(name))
            self.scene.set_range_points(name, to_world(points, *pose), kind == 'depth')

    def _draw(self):
        self._read()
        self._frame += 1
        # frame ids as TF has them (the sensors' frames), link names for the drawing
        full = world_poses({**self.static_edges, **self.edges}, self.world_frame)
        self.scene.set_poses(strip_prefix(full, self.prefix))
        if self._frame_camera and self.edges and full:
            # the first poses: frame every link of the world
            self._frame_camera = False
            self.framed = framing([pos for pos, _ in full.values()], self.fov)
            self.scene.set_camera(*self.framed, now=True)
        for name, (frame, force, torque) in self.wrenches.items():
            if frame in full:
                self.scene.set_wrench(name, wrench_arrows(force, torque, *full[frame]))
        for name, frame in self.imus.items():
            if frame in full:
                self.scene.add_frame_axes(name, *full[frame])
        if self.contacts is not None:
            self.scene.set_contacts(*self.contacts)
            self.contacts = None
        self._draw_ranges(full)
        if self._plots_made and self._frame % PLOT_EVERY == 0:
            names = None
            buffer = self.plots['position']
            if not self.plot_joints and buffer.time and buffer.time[-1] >= self._next_pick:
                # the plots show the joints that moved most over their window
                self._next_pick = buffer.time[-1] + PICK_PERIOD
                names = most_moving(buffer, self._driven, PLOT_SERIES)
            for kind, unit in (('position', 'rad or m'), ('current', 'A'), ('voltage', 'V')):
                self.scene.update_plot(f'{kind} ({unit})', self.plots[kind], names)


#: The view's scheduling niceness: below the simulator's, so that on a loaded machine the
#: drawing waits, not the simulation (JOINTSIM_VIEW_NICE overrides; 0 keeps the parent's).
NICE = 19


def main(args=None):
    """Entry point of ``jointsim_view`` and ``python -m jointsim_ros.view.node``."""
    try:
        os.nice(int(os.environ.get('JOINTSIM_VIEW_NICE', NICE)))
    except (OSError, ValueError):
        pass
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = stop_on_signals()
    logging.getLogger('jointsim_ros').setLevel(logging.WARNING)
    node = None
    try:
        node = ViewNode(announce=lambda text: print(text, flush=True))
        # the events executor spends far less per callback than the single-threaded one, and
        # the view gets over a thousand messages a second from a walking humanoid
        spin(node, make_executor(1.0), stop)
    except KeyboardInterrupt:
        pass
    finally:
        if node is not None:
            node.scene.close()
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
