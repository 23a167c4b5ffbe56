"""
One robot's topics and services on the simulator node (docs/node.md).

A :class:`RobotTopics` holds what belongs to one robot: its joint states, dynamic joint states,
force-torque and IMU topics, ``robot_description`` and ``joint_command_order`` (latched), the
command topics (efforts and voltages in both forms, ``joint_commands``, the ros2_control topic
interface, ``joint_trajectory``) and its grasp services.  The node makes one for its robot, on
the Simulator itself with no prefix, or one per robot of a world, on ``sim.robots[NAME]`` with
the prefix ``NAME/``: every name then lives under ``NAME/`` in the node's namespace, while the
messages carry the robot's own joint names (as its URDF has them), so a controller written for
the robot alone works unchanged in that namespace.  The world-level parts (/tf, /clock,
/diagnostics, markers, the simulation services) stay in the node.
"""
import functools

from control_msgs.msg import DynamicJointState
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image, Imu, JointState, LaserScan, PointCloud2
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory

from . import messages
from .frames import optical_frame
from ..errors import CommandError

# Topics of the two forms of each command kind: array (Float64MultiArray, announced order) and
# named (JointState, values in the effort field).
COMMAND_TOPICS = {
    'effort': ('joint_effort_commands', 'joint_efforts'),
    'voltage': ('joint_voltage_commands', 'joint_voltages'),
}


def grasp_service(grasp_name):
    """Return the service (std_srvs/SetBool, relative) that switches a grasp on and off."""
    return f'grasp/{grasp_name}'


def range_topics(spec):
    """
    Return the topics (relative) and message types of a lidar's or depth camera's samples.

    A one-row lidar: ``NAME/scan`` (LaserScan); a lidar of several rows: ``NAME/points``
    (PointCloud2); a depth camera: ``NAME/depth/image_raw`` (Image, 32FC1) and
    ``NAME/depth/camera_info`` (CameraInfo).
    """
    name = spec.name.rsplit('/', 1)[-1]
    if spec.kind == 'depth_camera':
        return ((f'{name}/depth/image_raw', Image), (f'{name}/depth/camera_info', CameraInfo))
    if spec.vertical[0] == 1:
        return ((f'{name}/scan', LaserScan),)
    return ((f'{name}/points', PointCloud2),)


def wrench_topic(sensor_name):
    """Return the topic of a force-torque sensor's WrenchStamped samples (relative)."""
    return f'{sensor_name}/wrench'


class RobotTopics:
    """
    The publishers, subscriptions and services of one robot of the node.

    Args:
        node: the JointsimNode (creates the entities; its ``frames``, ``latched`` QoS,
            ``serialized`` topics, ``warn_throttled`` and logger).
        robot: the Simulator (one robot) or a RobotView (``sim.robots[NAME]``): joint and drive
            names, state, commands, ``joint_sensors``, ``sensors``, ``grasps``, ``time``.
        commands: its ``runner.RobotCommands`` (channels and watchdog).
        urdf_xml: its URDF text for ``robot_description``, or None not to publish it.
        ros2_control: its ``<ros2_control>`` tags.
        imus: its ImuModels (names as ``robot`` has them).
        prefix: '' for the one robot of a node, ``NAME/`` for a world's: the namespace of its
            topics and services, and what its link names carry in the simulator's model.
    """

    def __init__(self, node, robot, commands, urdf_xml, ros2_control=(), imus=(), prefix=''):
        self.node = node
        self.robot = robot
        self.commands = commands
        self.prefix = prefix
        self.name = prefix.rstrip('/')
        self._urdf_xml = urdf_xml
        self._dynamic_interfaces = messages.dynamic_interfaces(robot)
        # the serialized templates' key: robots of one world may share joint names but not
        # their drives
        self._interface_key = tuple(tuple(keys) for keys in self._dynamic_interfaces)
        latched = node.latched

        # published: joint states, every joint's and drive's state (as ros2_control's
        # joint_state_broadcaster publishes extra interfaces), the latched announcements
        self._pub_joint_states = node.create_publisher(JointState, self.topic('joint_states'),
                                                       10)
        self._pub_dynamic = node.create_publisher(
            DynamicJointState, self.topic('dynamic_joint_states'), 10)
        self._pub_description = None
        if urdf_xml is not None:
            self._pub_description = node.create_publisher(
                String, self.topic('robot_description'), latched)
        self._pub_command_order = node.create_publisher(
            String, self.topic('joint_command_order'), latched)
        # one WrenchStamped topic per force-torque sensor, at the sensor's rate
        sensors = robot.sensors
        self._pub_wrench = {name: node.create_publisher(WrenchStamped,
                                                        self.topic(wrench_topic(name)), 10)
                            for name in sensors.names}
        self._wrench_count = dict.fromkeys(sensors.names, 0)
        # one sensor_msgs/Imu topic per IMU (its topic setting, NAME/imu by default)
        self._pub_imu = {imu.name: (node.create_publisher(Imu, self.topic(imu.topic), 10),
                                    messages.imu_covariances(imu))
                         for imu in imus}
        self._imu_count = dict.fromkeys(self._pub_imu, 0)
        # lidars and depth cameras: their topics with the sensor-data QoS (best effort, the
        # last 5), as Gazebo's bridge publishes them
        self._pub_range = {}
        for name in getattr(sensors, 'range_names', ()):
            spec = sensors.range_sensor(name)
            self._pub_range[name] = [node.create_publisher(kind, self.topic(topic),
                                                           qos_profile_sensor_data)
                                     for topic, kind in range_topics(spec)]
        self._range_count = dict.fromkeys(self._pub_range, 0)

        # subscriptions: two forms per command kind
        for kind, (array_topic, named_topic) in COMMAND_TOPICS.items():
            if kind not in commands.channels:
                continue
            node.create_subscription(Float64MultiArray, self.topic(array_topic),
                                     self._array_callback(kind), 10)
            node.create_subscription(JointState, self.topic(named_topic),
                                     self._named_callback(kind), 10)
        # servo modes and ros2_control's topic-based hardware interface (docs/ros2_control.md):
        # a JointState whose filled field (position, velocity, effort) picks each joint's mode
        node.create_subscription(JointState, self.topic('joint_commands'),
                                 self._on_joint_commands, 10)
        # a <ros2_control> tag with a topic-based plugin: serve its two topics as well
        self._pub_hardware_states = []
        for system in ros2_control:
            if system.topic_based:
                node.create_subscription(
                    JointState, self.topic(system.topic('joint_commands_topic')),
                    functools.partial(self._on_joint_commands, layout=system.command_layout()),
                    10)
                self._pub_hardware_states.append(node.create_publisher(
                    JointState, self.topic(system.topic('joint_states_topic')), 10))
        # prescribed motion (docs/prescribed.md): the joints follow the trajectory exactly and
        # joint_states reports the efforts it needs
        node.create_subscription(JointTrajectory, self.topic('joint_trajectory'),
                                 self._on_trajectory, 10)
        # grasps (config grasps, docs/valve.md): grasp/NAME, true grasps and false lets go;
        # like every callback here it runs between ticks, so it acts from the next step on
        for name in robot.grasps.names:
            node.create_service(SetBool, self.topic(grasp_service(name)),
                                functools.partial(self._on_grasp, name))

    def rebind(self, robot):
        """Serve ``robot`` from now on (its view after a robot was added or removed)."""
        self.robot = robot
        # the simulator's sensors started again: their sample counts too
        self._wrench_count = dict.fromkeys(self._wrench_count, 0)
        self._imu_count = dict.fromkeys(self._imu_count, 0)
        self._range_count = dict.fromkeys(self._range_count, 0)

    def destroy(self):
        """Destroy its publishers, subscriptions and services (the robot was removed)."""
        node = self.node
        for entity in getattr(self, 'entities', ()):
            kind = type(entity).__name__
            if kind == 'Publisher':
                node.destroy_publisher(entity)
            elif kind == 'Subscription':
                node.destroy_subscription(entity)
            elif kind == 'Service':
                node.destroy_service(entity)

    def topic(self, name):
        """Return a topic or service name of this robot: under its prefix (absolute: inside)."""
        if not self.prefix:
            return name
        return self.prefix + name.lstrip('/')

    def frame(self, link):
        """Return the TF frame id of one of its links or sensor frames (its own name)."""
        return self.node.frames.frame(self.prefix + link)

    # -- publishing ---------------------------------------------------------------------------
    def announce(self):
        """Publish the latched announcements: robot_description and joint_command_order."""
        if self._pub_description is not None:
            self._pub_description.publish(messages.text(self._urdf_xml))
        self._pub_command_order.publish(
            messages.text(messages.command_order_text(self.commands.channels)))

    def publish_state(self, seconds):
        """Publish joint_states (and the hardware states) and dynamic_joint_states."""
        robot = self.robot
        serialized = self.node.serialized
        names = robot.joint_names
        build = functools.partial(messages.joint_state_message, names)
        values = messages.joint_state_values(robot)
        for publisher in [self._pub_joint_states] + self._pub_hardware_states:
            serialized.publish(publisher, ('joint_states', names), build, values, seconds)
        interfaces = self._dynamic_interfaces
        serialized.publish(
            self._pub_dynamic, ('dynamic_joint_states', names, self._interface_key),
            functools.partial(messages.dynamic_joint_state_message, names, interfaces),
            messages.dynamic_joint_state_values(robot), seconds)

    def publish_sensors(self):
        """Publish every force-torque and IMU sample taken since the last call."""
        serialized = self.node.serialized
        sensors = self.robot.sensors
        for name, publisher in self._pub_wrench.items():
            frame = self.frame(sensors.frame(name))

            def build(values, seconds, frame=frame):
                return messages.wrench_stamped(values, frame, seconds)
            # every sample since the last tick (after a reset, the new ones)
            for when, values, count in sensors.history(name, self._wrench_count[name]):
                serialized.publish(publisher, ('wrench', name, frame), build, values, when)
                self._wrench_count[name] = count
        for name, (publisher, covariances) in self._pub_imu.items():
            frame = self.frame(name)

            def build(values, seconds, frame=frame, covariances=covariances):
                return messages.imu_message(values, frame, seconds, covariances)
            for when, values, count in sensors.history(name, self._imu_count[name]):
                serialized.publish(publisher, ('imu', name, frame), build, values, when)
                self._imu_count[name] = count
        for name, publishers in self._pub_range.items():
            self._publish_range(sensors, name, publishers)

    def _publish_range(self, sensors, name, publishers):
        """Publish a lidar's or depth camera's latest sample if it is new (its rate, REP 117)."""
        sample = sensors.range_sample(name)
        if sample.count == 0 or sample.count == self._range_count[name]:
            return
        self._range_count[name] = sample.count
        spec = sensors.range_sensor(name)
        if spec.kind == 'depth_camera':
            frame = self.frame(optical_frame(name))
            publishers[0].publish(messages.depth_image(sample.ranges, frame, sample.time))
            publishers[1].publish(messages.camera_info(spec, frame, sample.time))
        elif spec.vertical[0] == 1:
            publishers[0].publish(messages.laser_scan(spec, sample.ranges, self.frame(name),
                                                      sample.time))
        else:
            publishers[0].publish(messages.point_cloud(
                sample.ranges, sensors.ray_directions(name), self.frame(name), sample.time))

    def log_start(self, log):
        """Log the array commands' joint orders (one line per kind)."""
        for kind, (array_topic, named_topic) in COMMAND_TOPICS.items():
            channel = self.commands.channels.get(kind)
            if channel is not None and channel.joints:
                log.info(f'{self.topic(array_topic)} (std_msgs/Float64MultiArray, '
                         f'{channel.unit}) order: [{", ".join(channel.joints)}]; named form: '
                         f'{self.topic(named_topic)} (sensor_msgs/JointState, values in effort)')

    # -- commands -----------------------------------------------------------------------------
    def _array_callback(self, kind):
        def callback(msg):
            self._apply(kind, self.commands.command_array, messages.array_values(msg))
        return callback

    def _named_callback(self, kind):
        def callback(msg):
            try:
                values = messages.named_values(msg, kind)
            except CommandError as error:
                self._refused(kind, error)
                return
            self._apply(kind, self.commands.command, values)
        return callback

    def _apply(self, kind, command, values):
        try:
            clipped = command(kind, values)
        except CommandError as error:
            self._refused(kind, error)
            return
        if clipped:
            self._warn(
                f'{kind} command clipped to the supply: '
                + ', '.join(f'{name} -> {value:g}' for name, value in clipped.items()))

    def _on_joint_commands(self, msg, layout=None):
        """Servo targets for driven joints, efforts for the others (docs/ros2_control.md)."""
        robot, commands = self.robot, self.commands
        try:
            positions, velocities, efforts = messages.servo_values(msg, layout)
            driven = set(robot.drive_names)
            direct = {}
            for name in dict(positions, **velocities, **efforts):
                if name not in robot.joint_names:
                    raise CommandError(
                        f'joint_commands: unknown joint {name!r}; the movable joints are '
                        f'{", ".join(robot.joint_names)}.  Nothing was changed.')
                if name in driven:
                    continue
                if name in positions or name in velocities:
                    raise CommandError(
                        f'joint_commands: joint {name!r} has no drive, so no position or '
                        f'velocity loop; give it an effort, or a drive in the config (drives '
                        f'section, docs/drives.md).  Nothing was changed.')
                direct[name] = efforts[name]
            if direct and 'effort' not in commands.channels:
                raise CommandError('joint_commands: this robot takes no effort commands.  '
                                   'Nothing was changed.')

            def servoed(values):
                return {n: v for n, v in values.items() if n in driven}
            clipped = robot.set_servo_targets(servoed(positions), servoed(velocities),
                                              servoed(efforts))
            if any(n in driven for n in msg.name) and 'voltage' in commands.channels:
                # servo targets are held; the voltage watchdog would take the drives back
                commands.channels['voltage'].holding = False
            if direct:
                commands.command('effort', direct)
        except CommandError as error:
            self._refused('joint', error)
            return
        if clipped:
            self._warn('position command clipped to the joint limits: ' + ', '.join(
                f'{name} -> {value:g}' for name, value in clipped.items()))

    def _on_trajectory(self, msg):
        """Prescribe the motion of a JointTrajectory (no points: release those joints)."""
        try:
            self.commands.command_trajectory(
                *messages.trajectory_samples(msg, self.robot.time))
        except CommandError as error:
            self._refused('trajectory', error)

    def _on_grasp(self, name, request, response):
        """Grasp (``data`` true) or let go; a refusal answers False with the reason."""
        grasps = self.robot.grasps
        try:
            if request.data:
                gap = grasps.grasp(name)
                response.message = f'{name}: grasped, {gap:.4f} m from the rim'
            else:
                grasps.release(name)
                response.message = f'{name}: released'
        except CommandError as error:
            # the message names the grasp and gives the distance; once per distinct message
            response.success, response.message = False, str(error)
            self._warn(response.message)
            return response
        response.success = True
        self.node.get_logger().info(self._whose(response.message))
        return response

    def _whose(self, text):
        return f"robot '{self.name}': {text}" if self.name else text

    def _refused(self, kind, error):
        self._warn(f'refused {kind} command: {error}')

    def _warn(self, text):
        self.node.warn_throttled(self._whose(text))
