"""
Conversions between the simulator's state and ROS messages, in one place.

State -> messages: joint states, transforms, clock, diagnostics, text, contact markers.
Messages -> commands: the array and named forms of joint commands, checked for shape here (the
facade checks names and values).  Units are SI; ROS quaternions are (x, y, z, w), the
simulator's (w, x, y, z).
"""
import array
import math

from builtin_interfaces.msg import Time
from control_msgs.msg import DynamicJointState, InterfaceValue
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, TransformStamped, WrenchStamped
import numpy as np
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import (CameraInfo, Image, Imu, JointState, LaserScan, PointCloud2,
                             PointField)
from std_msgs.msg import ColorRGBA, String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray
import yaml

from ..description.ros2_control import DRIVE_STATE_INTERFACES, JOINT_STATE_INTERFACES
from ..errors import CommandError
from ..rotations import quat_conjugate, quat_multiply, quat_to_matrix


def stamp(seconds):
    """Return a builtin_interfaces/Time for a simulated time in seconds (>= 0)."""
    nanoseconds = int(round(seconds * 1e9))
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def stamp_seconds(time_stamp):
    """Return a builtin_interfaces/Time (a header's stamp) in seconds."""
    return time_stamp.sec + time_stamp.nanosec * 1e-9


def joint_state(sim):
    """
    Return the sensor_msgs/JointState of every scalar joint, stamped with simulated time.

    position rad or m, velocity rad/s or m/s, effort N m or N (the drive's output effort on
    driven joints, the commanded effort on the others), names ``sim.joint_names``.
    """
    return joint_state_message(sim.joint_names, joint_state_values(sim), sim.time)


def joint_state_values(sim):
    """Return the joint states' numbers: positions, velocities, efforts, concatenated (3 n,)."""
    positions, velocities = sim.joint_sensors.read()   # as measured (config joint_sensors)
    return np.concatenate([positions, velocities, sim.joint_efforts()])


def joint_state_message(names, values, seconds):
    """Return the sensor_msgs/JointState of joint_state_values' numbers."""
    n = len(names)
    values = np.asarray(values, dtype=float)
    msg = JointState()
    msg.header.stamp = stamp(seconds)
    msg.name = list(names)
    msg.position = values[:n].tolist()
    msg.velocity = values[n:2 * n].tolist()
    msg.effort = values[2 * n:3 * n].tolist()
    return msg


def dynamic_joint_state(sim):
    """
    Return the control_msgs/DynamicJointState of every scalar joint and its drive.

    Every joint: ``position`` (rad or m), ``velocity`` (rad/s or m/s), ``effort`` (N m or N, as
    in joint_states).  A driven joint adds ``voltage`` (applied armature voltage, V),
    ``current`` (armature current, A), ``motor_torque`` (Kt i, N m, motor side), ``rotor_speed``
    (rad/s, motor side) and ``output_effort`` (the drive's effort on the joint, N m or N).
    Positions, velocities and currents as measured (config ``joint_sensors``).  Stamped with
    simulated time.
    """
    return dynamic_joint_state_message(sim.joint_names, dynamic_interfaces(sim),
                                       dynamic_joint_state_values(sim), sim.time)


def dynamic_interfaces(sim):
    """Return each scalar joint's interface names in dynamic_joint_states (lists)."""
    driven = set(sim.drive_names)
    return [list(JOINT_STATE_INTERFACES) + (list(DRIVE_STATE_INTERFACES) if name in driven
                                            else [])
            for name in sim.joint_names]


def dynamic_joint_state_values(sim):
    """Return dynamic_joint_states' numbers, joint by joint, concatenated (dynamic_interfaces)."""
    positions, velocities = (values.tolist() for values in sim.joint_sensors.read())
    efforts = sim.joint_efforts().tolist()
    driven = set(sim.drive_names)
    numbers = []
    for k, name in enumerate(sim.joint_names):
        numbers += [positions[k], velocities[k], efforts[k]]
        if name in driven:
            drive = sim.drive_state(name)
            drive['current'] = sim.joint_sensors.current(name, drive['current'])
            numbers += [drive[key] for key in DRIVE_STATE_INTERFACES]
    return np.array(numbers, dtype=float)


def dynamic_joint_state_message(names, interfaces, values, seconds):
    """Return the control_msgs/DynamicJointState of dynamic_joint_state_values' numbers."""
    msg = DynamicJointState()
    msg.header.stamp = stamp(seconds)
    msg.joint_names = list(names)
    out, at = [], 0
    for keys in interfaces:
        out.append(InterfaceValue(interface_names=list(keys),
                                  values=[float(v) for v in values[at:at + len(keys)]]))
        at += len(keys)
    msg.interface_values = out
    return msg


def transform_stamped(transform, time_stamp):
    """Return a geometry_msgs/TransformStamped of a ``frames.Transform``."""
    msg = TransformStamped()
    msg.header.stamp = time_stamp
    msg.header.frame_id = transform.parent
    msg.child_frame_id = transform.child
    t = msg.transform.translation
    t.x, t.y, t.z = transform.xyz
    r = msg.transform.rotation
    r.w, r.x, r.y, r.z = transform.quat
    return msg


def tf_message(transforms, seconds):
    """Return one tf2_msgs/TFMessage holding every transform, all stamped at ``seconds``."""
    time_stamp = stamp(seconds)
    return TFMessage(transforms=[transform_stamped(t, time_stamp) for t in transforms])


def tf_message_arrays(frames, values, seconds):
    """
    Return the tf2_msgs/TFMessage of transforms given as numbers.

    Args:
        frames: [(parent frame, child frame)].
        values: (7 n,) per transform its translation xyz (m) and rotation (w, x, y, z).
        seconds: the stamp, s.
    """
    rows = np.asarray(values, dtype=float).reshape(len(frames), 7)
    time_stamp = stamp(seconds)
    out = []
    for (parent, child), row in zip(frames, rows):
        msg = TransformStamped()
        msg.header.stamp = time_stamp
        msg.header.frame_id = parent
        msg.child_frame_id = child
        t = msg.transform.translation
        t.x, t.y, t.z = (float(v) for v in row[:3])
        r = msg.transform.rotation
        r.w, r.x, r.y, r.z = (float(v) for v in row[3:])
        out.append(msg)
    return TFMessage(transforms=out)


def trajectory_samples(msg, now):
    """
    Turn a trajectory_msgs/JointTrajectory into prescribed-motion samples.

    Args:
        msg: the message; ``header.stamp`` zero means "start now".
        now: simulated time, s.

    Returns:
        (joint names, times (n,) s from the start, positions (n, m), start time s); an empty
        ``points`` gives times and positions None (release the joints).

    Raises:
        CommandError: a point whose positions do not match joint_names.
    """
    names = list(msg.joint_names)
    at = stamp_seconds(msg.header.stamp)
    start = max(at, now) if at > 0.0 else now
    if not msg.points:
        return names, None, None, start
    times, positions = [], []
    for k, point in enumerate(msg.points):
        if len(point.positions) != len(names):
            raise CommandError(
                f'trajectory point {k} has {len(point.positions)} positions for '
                f'{len(names)} joint_names; give one position per joint.')
        times.append(point.time_from_start.sec + point.time_from_start.nanosec * 1e-9)
        positions.append(list(point.positions))
    return names, times, positions, start


def wrench_stamped(values, frame_id, seconds):
    """
    Return a geometry_msgs/WrenchStamped of a force-torque sample.

    Args:
        values: (6,) force xyz (N) and torque xyz (N m), as ``Simulator.wrench`` gives them.
        frame_id: the frame they are expressed in.
        seconds: simulated time of the sample.
    """
    msg = WrenchStamped()
    msg.header.stamp = stamp(seconds)
    msg.header.frame_id = frame_id
    f = msg.wrench.force
    f.x, f.y, f.z = (float(v) for v in values[:3])
    t = msg.wrench.torque
    t.x, t.y, t.z = (float(v) for v in values[3:6])
    return msg


def imu_message(values, frame_id, seconds, covariances):
    """
    Return a sensor_msgs/Imu of an IMU sample.

    Args:
        values: (10,) orientation wxyz, angular velocity (rad/s), specific force (m/s^2), as
            ``sim.sensors.imu`` gives them.
        frame_id: the sensor frame.
        seconds: simulated time of the sample.
        covariances: (3, 3) the diagonals of the orientation (rad^2), angular velocity
            ((rad/s)^2) and linear acceleration ((m/s^2)^2) covariances (:func:`imu_covariances`).
    """
    msg = Imu()
    msg.header.stamp = stamp(seconds)
    msg.header.frame_id = frame_id
    q = msg.orientation
    q.w, q.x, q.y, q.z = (float(v) for v in values[:4])
    w = msg.angular_velocity
    w.x, w.y, w.z = (float(v) for v in values[4:7])
    a = msg.linear_acceleration
    a.x, a.y, a.z = (float(v) for v in values[7:10])
    for field, diagonal in zip(('orientation_covariance', 'angular_velocity_covariance',
                                'linear_acceleration_covariance'), covariances):
        matrix = [0.0] * 9
        matrix[0], matrix[4], matrix[8] = (float(v) for v in diagonal)
        setattr(msg, field, matrix)
    return msg


def _floats(values):
    """Return an array.array('f') of values (what rclpy takes fastest for a float32[] field)."""
    out = array.array('f')
    out.frombytes(np.ascontiguousarray(values, dtype=np.float32).tobytes())
    return out


def _bytes(values):
    """Return an array.array('B') holding the bytes of a numpy array (a uint8[] field)."""
    out = array.array('B')
    out.frombytes(np.ascontiguousarray(values).tobytes())
    return out


def laser_scan(spec, ranges, frame_id, seconds):
    """
    Return a sensor_msgs/LaserScan of a one-row lidar's sample.

    Args:
        spec: the sensor's RangeSensorModel (``sim.sensors.range_sensor``).
        ranges: (1, samples) or (samples,) ray lengths, m (+inf: nothing within range_max,
            -inf: nearer than range_min, REP 117).
        frame_id: the sensor frame.
        seconds: simulated time of the sample.
    """
    samples, lo, hi = spec.horizontal
    msg = LaserScan()
    msg.header.stamp = stamp(seconds)
    msg.header.frame_id = frame_id
    msg.angle_min = float(lo)
    msg.angle_max = float(hi)
    msg.angle_increment = float((hi - lo) / (samples - 1)) if samples > 1 else 0.0
    msg.time_increment = 0.0  # every ray of a sample is cast at one instant
    msg.scan_time = float(1.0 / spec.rate) if spec.rate > 0.0 else 0.0
    msg.range_min = float(spec.range_min)
    msg.range_max = float(spec.range_max)
    msg.ranges = _floats(np.asarray(ranges).reshape(-1))
    return msg


#: PointCloud2 fields of a multi-row lidar's cloud (as Gazebo's gpu_lidar): name, offset,
#: datatype, count
CLOUD_FIELDS = (('x', 0, PointField.FLOAT32), ('y', 4, PointField.FLOAT32),
                ('z', 8, PointField.FLOAT32), ('intensity', 12, PointField.FLOAT32),
                ('ring', 16, PointField.UINT16))
CLOUD_POINT_STEP = 18
_CLOUD_DTYPE = np.dtype({'names': ['x', 'y', 'z', 'intensity', 'ring'],
                         'formats': ['<f4', '<f4', '<f4', '<f4', '<u2'],
                         'offsets': [0, 4, 8, 12, 16], 'itemsize': CLOUD_POINT_STEP})


def point_cloud(ranges, directions, frame_id, seconds):
    """
    Return an organised sensor_msgs/PointCloud2 of a lidar's sample, in the sensor frame.

    Args:
        ranges: (rows, columns) ray lengths, m; a ray without a hit (+-inf) gives a NaN point
            (the cloud is organised: height rows from the lowest elevation up, ``is_dense``
            false).
        directions: (rows, columns, 3) unit ray directions in the sensor frame
            (``sim.sensors.ray_directions``).
        frame_id: the sensor frame.
        seconds: simulated time of the sample.
    """
    ranges = np.asarray(ranges, dtype=float)
    rows, columns = ranges.shape
    points = np.zeros(rows * columns, dtype=_CLOUD_DTYPE)
    with np.errstate(invalid='ignore'):
        xyz = (np.where(np.isfinite(ranges), ranges, np.nan)[..., None]
               * directions).reshape(-1, 3)
    points['x'], points['y'], points['z'] = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    points['ring'] = np.repeat(np.arange(rows, dtype=np.uint16), columns)
    msg = PointCloud2()
    msg.header.stamp = stamp(seconds)
    msg.header.frame_id = frame_id
    msg.height = rows
    msg.width = columns
    msg.fields = [PointField(name=name, offset=offset, datatype=kind, count=1)
                  for name, offset, kind in CLOUD_FIELDS]
    msg.is_bigendian = False
    msg.point_step = CLOUD_POINT_STEP
    msg.row_step = CLOUD_POINT_STEP * columns
    msg.is_dense = False
    msg.data = _bytes(points)
    return msg


def depth_image(depth, frame_id, seconds):
    """
    Return a sensor_msgs/Image (32FC1, metres along the optical axis, REP 118) of a depth sample.

    Args:
        depth: (height, width) depth, m, the top row first (+inf: nothing within the far clip,
            -inf: nearer than the near one).
        frame_id: the camera's optical frame.
        seconds: simulated time of the sample.
    """
    height, width = np.shape(depth)
    msg = Image()
    msg.header.stamp = stamp(seconds)
    msg.header.frame_id = frame_id
    msg.height = height
    msg.width = width
    msg.encoding = '32FC1'
    msg.is_bigendian = 0
    msg.step = 4 * width
    msg.data = _bytes(np.asarray(depth, dtype='<f4'))
    return msg


def camera_info(spec, frame_id, seconds):
    """Return the sensor_msgs/CameraInfo of a depth camera: an ideal pinhole, no distortion."""
    f = float(spec.focal_length)
    cx, cy = (float(v) for v in spec.principal_point)
    msg = CameraInfo()
    msg.header.stamp = stamp(seconds)
    msg.header.frame_id = frame_id
    msg.width = int(spec.width)
    msg.height = int(spec.height)
    msg.distortion_model = 'plumb_bob'
    msg.d = [0.0] * 5
    msg.k = [f, 0.0, cx, 0.0, f, cy, 0.0, 0.0, 1.0]
    msg.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    msg.p = [f, 0.0, cx, 0.0, 0.0, f, cy, 0.0, 0.0, 0.0, 1.0, 0.0]
    return msg


def imu_covariances(imu):
    """
    Return the (3, 3) covariance diagonals an IMU's noise settings give (ImuModel).

    Each axis: the mean square of the reading's error about the truth,
    mean^2 + stddev^2 + bias_mean^2 + bias_stddev^2 + dynamic_bias_stddev^2 (the turn-on bias
    has a random sign, so its mean counts as spread); the orientation: its stddev^2.
    """
    out = [[float(imu.orientation_stddev) ** 2] * 3]
    for noise in (imu.gyro, imu.accel):
        out.append([float(sum(noise[row][axis] ** 2 for row in range(5)))
                    for axis in range(3)])
    return out


#: Length of a contact force arrow per newton of normal force, m/N (node parameter
#: ``contact_marker_scale``): 1 kg resting on one point (9.81 N) draws a 2 cm arrow.
CONTACT_MARKER_SCALE = 0.002
#: Diameter of the sphere drawn at a contact point, m.
CONTACT_POINT_DIAMETER = 0.02
#: Shaft and head diameters of a contact force arrow, m (the head length is rviz's default,
#: a fixed fraction of the arrow's length).
CONTACT_ARROW_DIAMETERS = (0.008, 0.016)
#: Marker namespaces of the contact points and of their normal forces.
CONTACT_POINTS_NS = 'contact_points'
CONTACT_FORCES_NS = 'contact_forces'
#: Colours (r, g, b, a) of the contact points and of the force arrows.
CONTACT_POINT_COLOR = (1.0, 0.85, 0.1, 1.0)
CONTACT_FORCE_COLOR = (0.1, 0.8, 1.0, 1.0)


def contact_markers(contacts, frame_id, seconds, scale=CONTACT_MARKER_SCALE):
    """
    Return the visualization_msgs/MarkerArray of a step's contact points and normal forces.

    The first marker is a DELETEALL (empty namespace: every marker of the display), so the
    points of the previous message vanish; then, per contact ``k``, a SPHERE at the point
    (namespace ``contact_points``, id ``k``) and an ARROW (namespace ``contact_forces``, id
    ``k``, only for a positive force) from the point along the normal, of length
    ``normal_force x scale``: the force the second shape (``link_b``, e.g. the ground) exerts
    on the first.  Friction is not drawn.
    A contact with a non-finite value is left out, so no marker holds NaN or infinity.

    Args:
        contacts: list of ``simulator.Contact`` (``Simulator.contacts()``): position (3,) m and
            unit normal (3,) in the simulation world, normal_force N.
        frame_id: TF frame of the simulation world (the node's ``world_frame``).
        seconds: simulated time of the step, s.
        scale: arrow length per newton, m/N (> 0).

    Returns:
        MarkerArray: 1 + 2 len(contacts) markers at most, all with ``frame_id`` and the stamp.
    """
    header_stamp = stamp(seconds)
    clear = Marker(action=Marker.DELETEALL)
    clear.header.frame_id = frame_id
    clear.header.stamp = header_stamp
    points, arrows = [], []
    for contact in contacts:
        position = [float(v) for v in contact.position]
        normal = [float(v) for v in contact.normal]
        length = float(contact.normal_force) * scale
        end = [p + n * length for p, n in zip(position, normal)]
        if not all(math.isfinite(v) for v in position + end):
            continue
        k = len(points)
        sphere = _marker(CONTACT_POINTS_NS, k, Marker.SPHERE, frame_id, header_stamp,
                         CONTACT_POINT_COLOR)
        sphere.pose.position = Point(x=position[0], y=position[1], z=position[2])
        sphere.scale.x = sphere.scale.y = sphere.scale.z = CONTACT_POINT_DIAMETER
        arrow = _marker(CONTACT_FORCES_NS, k, Marker.ARROW, frame_id, header_stamp,
                        CONTACT_FORCE_COLOR)
        # start and end points: scale.x is the shaft diameter, scale.y the head's, scale.z 0
        # lets rviz size the head from the length
        arrow.points = [Point(x=position[0], y=position[1], z=position[2]),
                        Point(x=end[0], y=end[1], z=end[2])]
        arrow.scale.x, arrow.scale.y = CONTACT_ARROW_DIAMETERS
        points.append(sphere)
        if length > 0.0:  # a speculative point (touching=False) carries no force
            arrows.append(arrow)
    return MarkerArray(markers=[clear] + points + arrows)


#: Namespace and colour (RGBA 0-1) of the scene's shapes (``scene_markers``).
SCENE_NS = 'scene'
SCENE_COLOR = (0.55, 0.62, 0.72, 1.0)


def scene_markers(model, world_frame, prefix=''):
    """
    Return the visualization_msgs/MarkerArray of the scene's collision shapes.

    The scene: every free object (config ``scene`` with a mass, or spawned) and the static
    geometry, not the robot (robot_description draws it) nor the ground plane.  The first
    marker is a DELETEALL; then one marker per shape (namespace ``scene``, ids from 0): an
    object's in its TF frame (``prefix`` + its name; the shape's pose in that frame), static
    geometry in ``world_frame``.  A box is a CUBE, a sphere a SPHERE, a cylinder a CYLINDER
    (axis z), a capsule a CYLINDER as long as the capsule (its caps drawn flat), a convex hull
    a TRIANGLE_LIST of its faces.

    Args:
        model: RobotModel (``sim.model``).
        world_frame: TF frame of the simulation world.
        prefix: the node's frame_prefix.
    """
    clear = Marker(action=Marker.DELETEALL)
    clear.header.frame_id = world_frame
    markers = [clear]
    objects = {o.body: o.name for o in model.objects}
    for shape in model.shapes:
        if shape.kind == 'plane' or (shape.body >= 0 and shape.body not in objects):
            continue
        pos = np.asarray(shape.pos, float)
        quat = np.asarray(shape.quat, float)
        frame = world_frame
        if shape.body >= 0:
            # the shape's pose in the object's frame (the link frame; the body frame is its COM)
            name = objects[shape.body]
            link = model.links[name]
            inverse = quat_to_matrix(link.quat).T
            pos = inverse @ (pos - np.asarray(link.pos, float))
            quat = quat_multiply(quat_conjugate(np.asarray(link.quat, float)), quat)
            frame = prefix + name
        kind = {'box': Marker.CUBE, 'sphere': Marker.SPHERE, 'cylinder': Marker.CYLINDER,
                'capsule': Marker.CYLINDER}.get(shape.kind, Marker.TRIANGLE_LIST)
        marker = _marker(SCENE_NS, len(markers) - 1, kind, frame, Time(), SCENE_COLOR)
        marker.pose.position = Point(x=float(pos[0]), y=float(pos[1]), z=float(pos[2]))
        (marker.pose.orientation.w, marker.pose.orientation.x, marker.pose.orientation.y,
         marker.pose.orientation.z) = (float(v) for v in quat)
        size = [float(v) for v in shape.size]
        if shape.kind == 'box':
            marker.scale.x, marker.scale.y, marker.scale.z = (2.0 * v for v in size)
        elif shape.kind == 'sphere':
            marker.scale.x = marker.scale.y = marker.scale.z = 2.0 * size[0]
        elif shape.kind in ('cylinder', 'capsule'):
            marker.scale.x = marker.scale.y = 2.0 * size[0]
            marker.scale.z = 2.0 * size[1] + (2.0 * size[0] if shape.kind == 'capsule' else 0.0)
        else:
            marker.scale.x = marker.scale.y = marker.scale.z = 1.0
            vertices = np.asarray(shape.vertices, float)
            marker.points = [Point(x=float(v[0]), y=float(v[1]), z=float(v[2]))
                             for face in shape.faces for k in range(1, len(face) - 1)
                             for v in (vertices[face[0]], vertices[face[k]],
                                       vertices[face[k + 1]])]
        markers.append(marker)
    return MarkerArray(markers=markers)


def _marker(namespace, marker_id, marker_type, frame_id, header_stamp, color):
    """Return an ADD marker with identity pose (rviz warns about a zero quaternion)."""
    marker = Marker(ns=namespace, id=marker_id, type=marker_type, action=Marker.ADD)
    marker.header.frame_id = frame_id
    marker.header.stamp = header_stamp
    marker.pose.orientation.w = 1.0
    marker.color = ColorRGBA(r=color[0], g=color[1], b=color[2], a=color[3])
    return marker


def clock(seconds):
    """Return the rosgraph_msgs/Clock of a simulated time."""
    return Clock(clock=stamp(seconds))


def text(value):
    """Return a std_msgs/String."""
    return String(data=value)


def robots_text(robots):
    """
    Return the announcement of a world's robots (YAML, the node's ``robots`` topic).

    Args:
        robots: [(name, namespace relative to the node's, TF frame prefix of its links)].

    Returns:
        str, a YAML list with one ``{name: left, namespace: left/, frame_prefix: left/}`` per
        robot, in the world's order.
    """
    return yaml.safe_dump([{'name': name, 'namespace': namespace, 'frame_prefix': prefix}
                           for name, namespace, prefix in robots], sort_keys=False)


def read_robots_text(text):
    """
    Return the robots of a ``robots`` announcement: [(name, namespace, frame_prefix)].

    Raises:
        ValueError: the text is not such a list.
    """
    data = yaml.safe_load(text)
    if not isinstance(data, list) or not all(isinstance(r, dict) and 'name' in r for r in data):
        raise ValueError('the robots announcement is not a YAML list of {name, namespace, '
                         'frame_prefix}')
    return [(str(r['name']), str(r.get('namespace', '')), str(r.get('frame_prefix', '')))
            for r in data]


def command_order_text(channels):
    """
    Return the announcement of the array commands' joint order (YAML).

    Args:
        channels: dict kind -> runner.CommandChannel.

    Returns:
        str, e.g. ``joint_effort_commands: [joint_a1, joint_a2]`` one line per kind.
    """
    lines = []
    for kind, channel in channels.items():
        lines.append(f'joint_{kind}_commands: [{", ".join(channel.joints)}]')
    return '\n'.join(lines) + '\n'


def array_values(msg):
    """Return the values of a std_msgs/Float64MultiArray command as a list of floats."""
    return [float(v) for v in msg.data]


def named_values(msg, kind):
    """
    Return joint name -> value of a sensor_msgs/JointState command (values in ``effort``).

    Args:
        msg: JointState with ``name`` and ``effort`` of the same length; position and velocity
            are ignored.
        kind: 'effort' or 'voltage', for messages.

    Raises:
        CommandError: lengths differ, or a joint is named twice.
    """
    names = list(msg.name)
    values = list(msg.effort)
    if len(names) != len(values):
        raise CommandError(
            f'{kind} command (JointState): {len(names)} names but {len(values)} values in '
            f'the effort field; give one value per name.  Nothing was changed.')
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise CommandError(f'{kind} command (JointState): joint {twice[0]!r} is named twice.  '
                           f'Nothing was changed.')
    return {name: float(value) for name, value in zip(names, values)}


def servo_values(msg, layout=None):
    """
    Split a sensor_msgs/JointState command of ``joint_commands`` into its filled fields.

    Each of position, velocity and effort is either empty or holds one value per name (what
    ros2_control's topic-based hardware interface publishes when every joint has the same
    command interfaces).  That interface names every joint of its ``<ros2_control>`` tag and
    fills a field only for the joints with that command interface, so with mixed interfaces a
    field is shorter than the names: ``layout`` (from the tag) then says whose values they are.

    Args:
        msg: the sensor_msgs/JointState.
        layout: optional dict field -> tuple of the joints that have that command interface,
            in the tag's order (Ros2ControlSystem.command_layout()).

    Returns:
        (positions, velocities, efforts): dicts joint name -> float, empty for empty fields.

    Raises:
        CommandError: a field of another length, a joint named twice, a value not finite.
    """
    names = list(msg.name)
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise CommandError(f'joint_commands: joint {twice[0]!r} is named twice.  Nothing was '
                           f'changed.')
    out = []
    for field in ('position', 'velocity', 'effort'):
        values = list(getattr(msg, field))
        owners = names
        if values and len(values) != len(names):
            owners = list((layout or {}).get(field, ()))
            if len(owners) != len(values) or not set(owners) <= set(names):
                raise CommandError(
                    f'joint_commands: {len(names)} names but {len(values)} values in the '
                    f'{field} field; fill a field with one value per name or leave it empty.  '
                    f'Nothing was changed.')
        for name, value in zip(owners, values):
            if not math.isfinite(value):
                raise CommandError(f'joint_commands: {field} {value} for joint {name!r} is not '
                                   f'finite.  Nothing was changed.')
        out.append({name: float(value) for name, value in zip(owners, values)})
    return tuple(out)


def diagnostics(stats, node_name, hardware_id, time_stamp):
    """
    Return the diagnostic_msgs/DiagnosticArray of one statistics window.

    Args:
        stats: runner.Stats.
        node_name: the node's fully qualified name (the status name starts with it).
        hardware_id: the robot name.
        time_stamp: builtin_interfaces/Time from the node's clock, as diagnostic_updater does.
    """
    status = DiagnosticStatus(name=f'{node_name.lstrip("/")}: simulation',
                              hardware_id=hardware_id)
    target = stats.target_real_time_factor
    if stats.diverged:
        status.level = DiagnosticStatus.ERROR
        status.message = 'diverged: stepping stopped, call reset'
    elif stats.paused:
        status.level = DiagnosticStatus.OK
        status.message = 'paused'
    elif stats.dropped > 0.0 or (target > 0.0 and stats.real_time_factor < 0.9 * target):
        status.level = DiagnosticStatus.WARN
        status.message = (f'slower than real_time_factor {target:g}: achieved '
                          f'{stats.real_time_factor:.2f}')
    else:
        status.level = DiagnosticStatus.OK
        status.message = f'running, real-time factor {stats.real_time_factor:.2f}'
    values = [
        ('sim_time [s]', f'{stats.sim_time:.6f}'),
        ('real_time_factor', f'{stats.real_time_factor:.3f}'),
        ('target_real_time_factor', f'{target:g}'),
        ('steps', str(stats.steps)),
        ('step_time_mean [us]', f'{stats.step_time_mean * 1e6:.1f}'),
        ('step_time_max [us]', f'{stats.step_time_max * 1e6:.1f}'),
        ('solver_iterations_mean', f'{stats.iterations_mean:.1f}'),
        ('solver_iterations_max', str(stats.iterations_max)),
        ('solver_time_budget_stops', str(stats.budget_stops)),
        ('dropped_sim_time [s]', f'{stats.dropped:.6f}'),
        ('dropped_sim_time_total [s]', f'{stats.dropped_total:.6f}'),
        ('paused', str(stats.paused).lower()),
        ('diverged', stats.diverged or ''),
    ]
    status.values = [KeyValue(key=k, value=v) for k, v in values]
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = time_stamp
    return msg
