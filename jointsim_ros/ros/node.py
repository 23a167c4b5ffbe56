"""
jointsim_node: the ROS 2 node of the simulator (docs/node.md).

    ros2 run jointsim_ros jointsim_node --ros-args -p robot_description_file:=arm.urdf.xacro
    python -m jointsim_ros.ros.node --ros-args --params-file config/jointsim_node.yaml

A thin rclpy layer: parameters are read once into the simulator's configuration
(``loading.load_robot``, or ``loading.load_world`` for a world of several robots), a
wall-clock timer calls ``SimulationRunner.tick`` and publishes the state through
``ros_messages``; subscriptions and services call the runner.  Each robot's topics and services
are a ``RobotTopics`` (ros/robot_topics.py): one for a robot alone, one per robot of a world
under its namespace ``NAME/``.  No physics here.
"""
from dataclasses import dataclass
import functools
import logging
import math
import signal
import sys
import textwrap
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
import numpy as np
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType)
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rosgraph_msgs.msg import Clock as ClockMsg
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray
import yaml

from . import messages
from .cdr import SerializedTopics
from .frames import FrameTree, world_urdf_tree
# grasp_service and wrench_topic: the names of a robot's services and topics, used by tools
from .robot_topics import grasp_service, RobotTopics, wrench_topic  # noqa: F401
from .runner import RobotCommands, RunSettings, SimulationRunner
from .sim_interfaces import SimulationInterfaces
from ..errors import CommandError, JointsimError
from ..sim.loading import load_robot, load_world

NODE_NAME = 'jointsim_node'
#: Wall-clock period of the diagnostics message, s.
DIAGNOSTICS_PERIOD = 1.0
#: Wall-clock period of the status log line, s.
STATUS_LOG_PERIOD = 10.0
#: Shortest interval between two warnings about refused commands, s.
COMMAND_WARNING_PERIOD = 1.0
#: Shortest interval between two warnings about dropped lag, s.
LAG_LOG_PERIOD = 5.0


@dataclass(frozen=True)
class Param:
    """A ROS parameter of the node: name, default, unit, closed range, description."""

    name: str
    default: object
    unit: str
    limits: tuple
    description: str
    read_only: bool = True


PARAMETERS = (
    Param('robot_description', '', 'URDF XML', None,
          'URDF XML text of the robot (the ROS convention; launch files fill it with xacro). '
          'Give this or robot_description_file; neither runs the bundled arm.'),
    Param('robot_description_file', '', 'path', None,
          'Path of a .urdf or .xacro file, used when robot_description is empty.'),
    Param('world_file', '', 'path', None,
          'A world file (YAML: several robots, each with its description, config and pose, '
          'e.g. config/two_arms.world.yaml). Each robot gets its topics and services under '
          'NAME/ and its TF frames prefixed NAME/. Replaces robot_description, '
          'robot_description_file and config_file; empty: one robot, as those say.'),
    Param('config_file', '', 'path', None,
          'Simulator YAML config (docs/config.md): base, initial state, solver, drives. '
          'Empty: the defaults (config/jointsim_arm.yaml for the bundled arm). Its dt is '
          "replaced by 1 / physics_rate (a world file's dt too)."),
    Param('formulation', '', 'maximal | tree', None,
          "Replaces the config's solver.formulation: maximal (bodies and constraint rows) or "
          "tree (generalized coordinates, exact joints; docs/tree.md). Empty: the config's."),
    Param('physics_rate', 1000.0, 'Hz', (1.0, 100000.0),
          'Physics steps per simulated second; the time step is 1 / physics_rate.'),
    Param('publish_rate', 100.0, 'Hz', (0.1, 10000.0),
          'Ticks per wall-clock second: each tick steps what is due and publishes once. At most '
          'physics_rate.'),
    Param('real_time_factor', 1.0, '1', (0.0, 1000.0),
          'Simulated seconds per wall-clock second; 0 runs as fast as possible.'),
    Param('catch_up_ticks', 4.0, 'ticks', (1.0, 100.0),
          'A late tick takes at most this many ticks of steps and drops the rest of the lag. '
          '1 keeps a controller that answers each joint_states at its period (the humanoid: '
          'its balancing walk falls when a late tick holds its voltages for 20 steps).'),
    Param('command_timeout', 0.5, 's', (0.0, 3600.0),
          'Wall-clock time without a command of a kind (efforts, voltages) after which that '
          'kind is set to 0; 0 disables the watchdog.'),
    Param('publish_clock', True, 'bool', None,
          'Publish simulated time on /clock.'),
    Param('publish_tf', True, 'bool', None,
          'Publish the links on /tf and /tf_static. false when robot_state_publisher (fed by '
          'joint_states) publishes them instead.'),
    Param('publish_robot_description', True, 'bool', None,
          'Publish the URDF on robot_description (latched). false when robot_state_publisher '
          'publishes it instead.'),
    Param('publish_contact_markers', True, 'bool', None,
          'Publish the contact points and normal forces on contact_markers '
          '(visualization_msgs/MarkerArray, for rviz2) while there are contacts.'),
    Param('contact_marker_scale', messages.CONTACT_MARKER_SCALE, 'm/N', (1e-06, 10.0),
          'Length of a contact force arrow on contact_markers per newton of normal force.'),
    Param('contact_marker_rate', 50.0, 'Hz', (0.0, 100000.0),
          'Most contact_markers messages per second of simulated time (a display draws '
          '30-60 frames a second; building the markers of 8 feet contacts costs 0.4 ms). 0: with '
          'every joint_states message.'),
    Param('frame_prefix', '', 'string', None,
          'Prepended to every link name to make its TF frame id (e.g. "robot1/").'),
    Param('world_frame', 'world', 'frame id', None,
          'TF frame of the simulation world (not prefixed); the root link is published in it.'),
    Param('step_count', 0, 'steps', (0, 1000000),
          'Physics steps taken by one call of the step service while paused; 0 = one publish '
          'period.', read_only=False),
)

_TYPES = {bool: ParameterType.PARAMETER_BOOL, int: ParameterType.PARAMETER_INTEGER,
          float: ParameterType.PARAMETER_DOUBLE, str: ParameterType.PARAMETER_STRING}

#: Topic of the contact markers (relative: in the node's namespace).
CONTACT_MARKERS_TOPIC = 'contact_markers'
#: The scene's shapes (free objects and static geometry), latched, again after each spawn and
#: delete (visualization_msgs/MarkerArray; rviz2 and jointsim_view draw them).
SCENE_MARKERS_TOPIC = 'scene_markers'


#: Topic of external wrenches on links (geometry_msgs/WrenchStamped, frame_id the link).
LINK_WRENCH_TOPIC = 'link_wrench'
#: Its QoS: reliable, transient-local, 100 deep (a schedule sent before the node is up).
LINK_WRENCH_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: With a world file: the robots of the world (std_msgs/String, latched, relative), a YAML list
#: of ``{name, namespace, frame_prefix}``; jointsim_view reads it to draw every robot.
ROBOTS_TOPIC = 'robots'


LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                     reliability=ReliabilityPolicy.RELIABLE)


def parameters_yaml():
    """
    Return config/jointsim_node.yaml: every parameter at its default, in the ROS layout.

    A test keeps the file equal to this text; regenerate it after changing PARAMETERS with
    ``python -c 'from jointsim_ros.ros.node import parameters_yaml;
    print(parameters_yaml(), end="")' > config/jointsim_node.yaml``.
    """
    lines = [
        '# jointsim_node parameters, every one at its default (docs/node.md).',
        '# Generated by jointsim_ros.ros.node.parameters_yaml(); a test keeps the two in step.',
        '#   ros2 run jointsim_ros jointsim_node --ros-args --params-file jointsim_node.yaml',
        '# The key below matches a node named jointsim_node in the root namespace; use',
        '# /**/jointsim_node (any namespace) or /robot1/jointsim_node for namespaced nodes.',
        'jointsim_node:',
        '  ros__parameters:',
    ]
    for param in PARAMETERS:
        value = yaml.safe_dump(param.default, default_flow_style=True).split('\n')[0]
        limits = f', {param.limits[0]} to {param.limits[1]}' if param.limits else ''
        lines += textwrap.wrap(f'[{param.unit}{limits}] {param.description}', width=95,
                               initial_indent='    # ', subsequent_indent='    #   ')
        lines.append(f'    {param.name}: {value}')
    return '\n'.join(lines) + '\n'


def descriptor(param):
    """Return the rcl_interfaces/ParameterDescriptor of a Param."""
    text = f'{param.description} [{param.unit}]'
    desc = ParameterDescriptor(name=param.name, type=_TYPES[type(param.default)],
                               description=text, read_only=param.read_only)
    if param.limits and isinstance(param.default, float):
        desc.floating_point_range = [FloatingPointRange(
            from_value=param.limits[0], to_value=param.limits[1], step=0.0)]
        desc.additional_constraints = f'{param.limits[0]:g} to {param.limits[1]:g} {param.unit}'
    elif param.limits:
        desc.integer_range = [IntegerRange(
            from_value=param.limits[0], to_value=param.limits[1], step=1)]
        desc.additional_constraints = f'{param.limits[0]} to {param.limits[1]} {param.unit}'
    return desc


class _RosLogHandler(logging.Handler):
    """Forward the Python ``jointsim_ros`` logger (model repairs, warnings) to the ROS log."""

    def __init__(self, ros_logger):
        super().__init__()
        self.ros_logger = ros_logger

    def emit(self, record):
        """Log one record at the matching ROS severity."""
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            self.ros_logger.error(message)
        elif record.levelno >= logging.WARNING:
            self.ros_logger.warning(message)
        else:
            self.ros_logger.info(message)


class JointsimNode(Node):
    """
    The simulator node: one robot, or a world of several, stepped on a wall-clock timer.

    Raises (from the constructor):
        JointsimError: bad robot description, config or parameter combination.
        rclpy.exceptions.ParameterException: a parameter of the wrong type or out of range.
    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        log = self.get_logger()
        self._python_log = _RosLogHandler(log)
        logging.getLogger('jointsim_ros').addHandler(self._python_log)
        logging.getLogger('jointsim_ros').propagate = False
        # info too: the line that says the kernels are being compiled (physics/compile/kernels.py)
        logging.getLogger('jointsim_ros').setLevel(logging.INFO)
        p = {param.name: self.declare_parameter(param.name, param.default,
                                                descriptor(param)).value
             for param in PARAMETERS}
        if p['publish_rate'] > p['physics_rate']:
            raise JointsimError(
                f"parameter publish_rate ({p['publish_rate']:g} Hz) is above physics_rate "
                f"({p['physics_rate']:g} Hz): a tick takes at least one physics step.  Lower "
                f'publish_rate or raise physics_rate.')
        if p['world_file'].strip():
            if p['robot_description'].strip() or p['robot_description_file'].strip() \
                    or p['config_file'].strip():
                raise JointsimError(
                    'world_file is set together with robot_description, '
                    'robot_description_file or config_file; a world file names the '
                    'descriptions and configs of its robots itself: give world_file alone.')
            loaded = load_world(p['world_file'], p['physics_rate'], p['formulation'])
            self.sim = loaded.sim
            self._urdf_robot = world_urdf_tree(self.sim.world)
        else:
            loaded = load_robot(p['robot_description'], p['robot_description_file'],
                                p['config_file'], p['physics_rate'], p['formulation'])
            self.sim = loaded.sim
            self._urdf_robot = loaded.urdf_robot
        #: Set by set_simulation_state STATE_QUITTING: spin returns and the node shuts down.
        self.quit_requested = threading.Event()
        for note in loaded.notes:
            log.info(note)
        problems = (loaded.ros2_control_problems if not self.sim.robots else
                    [text for robot in loaded.robots for text in robot.ros2_control_problems])
        for problem in problems:
            log.warning(problem)
        self.settings = RunSettings(p['physics_rate'], p['publish_rate'],
                                    p['real_time_factor'], p['command_timeout'],
                                    p['catch_up_ticks'])
        self.frames = FrameTree(self.sim, self._urdf_robot, p['frame_prefix'],
                                p['world_frame'])
        self.publish_clock = p['publish_clock']
        self._warn_about_anchor()
        compile_start = time.perf_counter()
        self._warm_up()
        compile_seconds = time.perf_counter() - compile_start

        self.runner = SimulationRunner(self.sim, self.settings, report=self._report)
        self._warned = {}
        self._last_lag_log = -math.inf
        self._published_version = None
        self._last_tf_time = None
        #: The QoS of the latched announcements (RobotTopics reads it).
        self.latched = LATCHED
        #: The high-rate topics go out as serialized templates refilled (ros/cdr.py).
        self.serialized = SerializedTopics(self.get_logger())

        # world-level publishers: TF, clock, diagnostics, the scene and its contacts
        self._pub_tf = self._pub_tf_static = None
        if p['publish_tf']:
            self._pub_tf = self.create_publisher(TFMessage, '/tf', 100)
            self._pub_tf_static = self.create_publisher(TFMessage, '/tf_static', LATCHED)
        self._pub_clock = None
        if self.publish_clock:
            self._pub_clock = self.create_publisher(ClockMsg, '/clock', 10)
        # absolute, as diagnostic_aggregator listens (REP 107)
        self._pub_diagnostics = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._pub_scene = self.create_publisher(MarkerArray, SCENE_MARKERS_TOPIC, LATCHED)
        # contact points and normal forces for rviz2, with the state; a robot that never
        # touches anything publishes nothing on it
        self._pub_contacts = None
        if p['publish_contact_markers']:
            self._pub_contacts = self.create_publisher(MarkerArray, CONTACT_MARKERS_TOPIC, 10)
        self._contact_marker_scale = p['contact_marker_scale']
        self._contact_marker_period = (1.0 / p['contact_marker_rate']
                                       if p['contact_marker_rate'] > 0.0 else 0.0)
        self._last_marker_time = None
        self._contacts_shown = False

        # each robot's topics and services: the robot alone in the node's namespace, or every
        # robot of a world under NAME/ (its own joint names in the messages)
        describe = p['publish_robot_description']
        self._describe = describe
        if self.sim.robots:
            self.robot_topics = [
                self._robot_topics(robot.view, self.runner.robots[robot.name],
                                   robot.urdf_xml if describe else None, robot.ros2_control,
                                   robot.view.sensors.imus, robot.name + '/')
                for robot in loaded.robots]
        else:
            self.robot_topics = [self._robot_topics(
                self.sim, self.runner.robots[''], loaded.urdf_xml if describe else None,
                loaded.ros2_control, self.sim.model.imus)]
        self._pub_robots = None
        if self.sim.robots:
            self._pub_robots = self.create_publisher(String, ROBOTS_TOPIC, LATCHED)

        # external pushes (docs/node.md, "Pushing links"): a WrenchStamped whose frame_id is a
        # link, force and torque in the world axes through the link's body's centre of mass,
        # held from its stamp (simulated time; 0: at once) until the next one for that link;
        # transient-local so that a pusher started before the node is heard
        self.create_subscription(WrenchStamped, LINK_WRENCH_TOPIC, self._on_link_wrench,
                                 LINK_WRENCH_QOS)

        # the ROS 2 simulator standard under ~/ (docs/entities.md); the Trigger services below
        # are its aliases
        self.interfaces = SimulationInterfaces(self)

        # services
        self.create_service(Trigger, 'pause', self._on_pause)
        self.create_service(Trigger, 'resume', self._on_resume)
        self.create_service(Trigger, 'step', self._on_step)
        self.create_service(Trigger, 'reset', self._on_reset)

        # latched announcements and the initial state
        for topics in self.robot_topics:
            topics.announce()
        if self._pub_robots is not None:
            self._pub_robots.publish(messages.text(messages.robots_text(
                [(t.name, t.prefix, self.frames.frame(t.prefix)) for t in self.robot_topics])))
        self._publish_scene()
        if self._pub_tf_static is not None:
            self._pub_tf_static.publish(messages.tf_message(self.frames.static, 0.0))
        self._publish_state()

        # timers on the steady clock: the node's own clock may be /clock (use_sim_time), which
        # this node publishes itself
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._tick_timer = self.create_timer(self.settings.tick_period, self._tick, clock=steady)
        self.create_timer(DIAGNOSTICS_PERIOD, self._publish_diagnostics, clock=steady)
        self._status_stats = []
        self.create_timer(STATUS_LOG_PERIOD, self._log_status, clock=steady)
        self._log_start(compile_seconds)

    # -- start-up -----------------------------------------------------------------------------
    def _warm_up(self):
        """Take one step (numba compiles or loads the engine) and return to the start state."""
        try:
            self.sim.step(1)
        except JointsimError:
            pass
        self.sim.reset()

    def _warn_about_anchor(self):
        if self.frames.has_anchor:
            return
        distance, angle = self.frames.anchor_offset()
        if distance > 1e-9 or angle > 1e-9:
            self.get_logger().warning(
                f'the root link {self.frames.root_link!r} has the name of the world frame, so '
                f'its pose in the simulation world ({distance:.3g} m, {angle:.3g} rad from the '
                f'origin, from base_pose) is not on /tf; set frame_prefix or world_frame to '
                f'publish it.')

    def _log_start(self, compile_seconds):
        sim, settings = self.sim, self.settings
        log = self.get_logger()
        model = sim.model
        mode = ('as fast as possible' if settings.real_time_factor == 0.0
                else f'real_time_factor {settings.real_time_factor:g}')
        if sim.robots:
            log.info(f'world: {len(sim.robots)} robots ({", ".join(sim.robots)}), '
                     f'{len(model.bodies)} bodies')
            for name, robot in sim.robots.items():
                log.info(f'robot {name!r} (topics under {name}/, TF frames '
                         f'{self.frames.frame(name + "/")}LINK): {len(robot.joint_names)} '
                         f'joints ({", ".join(robot.joint_names)}), {len(robot.drive_names)} '
                         f'drives, {"floating" if robot.floating else "fixed"} base')
        else:
            log.info(f'robot {model.name!r}: {len(model.bodies)} bodies, '
                     f'{len(sim.joint_names)} joints ({", ".join(sim.joint_names)}), '
                     f'{len(sim.drive_names)} drives, '
                     f'{"floating" if model.floating_base else "fixed"} base')
        for topics in self.robot_topics:
            topics.log_start(log)
        log.info(f'ready: physics {settings.physics_rate:g} Hz (dt {sim.dt * 1e3:g} ms, solver '
                 f'time budget {sim.config.solver.time_budget * 1e6:g} us), ticks and publishes '
                 f'at {settings.publish_rate:g} Hz, {mode}, command timeout '
                 f'{settings.command_timeout:g} s; first step {compile_seconds:.2f} s')

    # -- stepping and publishing ----------------------------------------------------------------
    def _tick(self):
        self.runner.tick()
        self.interfaces.tick()
        if self.runner.state_version != self._published_version:
            self._publish_state()
        for topics in self.robot_topics:
            topics.publish_sensors()

    def _publish_state(self):
        sim = self.sim
        self._published_version = self.runner.state_version
        t = sim.time
        for topics in self.robot_topics:
            topics.publish_state(t)
        # tf2 buffers drop a transform whose stamp they already hold (TF_REPEATED_DATA)
        if self._pub_tf is not None and t != self._last_tf_time:
            frames = self.frames.moving_frames()
            if frames:
                xyz, quat = self.frames.moving_arrays()
                self.serialized.publish(self._pub_tf, ('tf', tuple(frames)),
                                        functools.partial(messages.tf_message_arrays, frames),
                                        np.concatenate([xyz, quat], axis=1).ravel(), t)
            self._last_tf_time = t
        if self._pub_clock is not None:
            self._pub_clock.publish(messages.clock(t))
        if self._pub_contacts is not None and self._markers_due(t):
            self._last_marker_time = t
            contacts = sim.contacts()
            # after the last contact, one message (its DELETEALL clears rviz), then silence
            if contacts or self._contacts_shown:
                self._pub_contacts.publish(messages.contact_markers(
                    contacts, self.frames.world_frame, t, self._contact_marker_scale))
                self._contacts_shown = bool(contacts)

    def _markers_due(self, t):
        """Return whether contact_markers are due at simulated time t (contact_marker_rate)."""
        last = self._last_marker_time
        return (last is None or t < last  # the first, or after a reset
                or t - last >= self._contact_marker_period - 1e-9)

    def publish_now(self):
        """Publish the state if it changed since the last publish (after a service's change)."""
        if self.runner.state_version != self._published_version:
            self._publish_state()

    def _robot_topics(self, *args):
        """Return a RobotTopics, with the publishers, subscriptions and services it made."""
        before = {id(e) for e in self._entities()}
        topics = RobotTopics(self, *args)
        topics.entities = [e for e in self._entities() if id(e) not in before]
        return topics

    def _entities(self):
        return list(self.publishers) + list(self.subscriptions) + list(self.services)

    def robots_changed(self):
        """
        After a robot was spawned or deleted: its topics come or go, every robot's frames.

        The robots that stay keep their topics (the node's first robot at the node's own
        namespace); each is served from its new view (``sim.robots``).
        """
        sim = self.sim
        self._urdf_robot = world_urdf_tree(sim.world)
        views = dict(sim.robots)
        first = next((r.name for r in sim.world.robots if not r.own_prefix), None)
        kept = []
        for topics in self.robot_topics:
            name = topics.name or first
            if name in views:
                topics.rebind(views[name])
                self.runner.robots[topics.name].rebind(views[name])
                kept.append(topics)
            else:
                topics.destroy()
                self.runner.robots.pop(topics.name, None)
        served = {t.name or first for t in kept}
        for robot in sim.world.robots:
            if robot.name in served:
                continue
            view = views[robot.name]
            commands = RobotCommands(view, self.runner.clock, view.mimic_joints, robot.name)
            self.runner.robots[robot.name] = commands
            topics = self._robot_topics(
                view, commands, robot.description.xml if self._describe else None,
                robot.description.ros2_control, view.sensors.imus, robot.name + '/')
            topics.announce()
            kept.append(topics)
        self.robot_topics = kept
        if self._pub_robots is None:
            self._pub_robots = self.create_publisher(String, ROBOTS_TOPIC, LATCHED)
        self.world_changed()
        # the robots under names of their own (a node started with one robot keeps it at its
        # own namespace: the view has it already)
        self._pub_robots.publish(messages.text(messages.robots_text(
            [(t.name, t.prefix, self.frames.frame(t.prefix)) for t in self.robot_topics
             if t.prefix])))

    def world_changed(self):
        """After a spawn or delete: new frames on /tf_static, the state published again."""
        self.frames = FrameTree(self.sim, self._urdf_robot, self.frames.prefix,
                                self.frames.world_frame)
        if self._pub_tf_static is not None:
            self._pub_tf_static.publish(messages.tf_message(self.frames.static, 0.0))
        self._publish_scene()
        self.runner.state_version += 1
        self._last_tf_time = None
        self.publish_now()

    def _publish_scene(self):
        """Publish the scene's shapes on scene_markers (latched)."""
        self._pub_scene.publish(messages.scene_markers(self.sim.model, self.frames.world_frame,
                                                       self.frames.prefix))

    def request_quit(self):
        """Ask spin to return (set_simulation_state STATE_QUITTING)."""
        self.quit_requested.set()

    def _report(self, key, level, text):
        """Log a runner event; lag reports at most every LAG_LOG_PERIOD."""
        # (rclpy's throttle_duration_sec cannot differ between calls from one line)
        if key == 'lag':
            now = time.monotonic()
            if now - self._last_lag_log < LAG_LOG_PERIOD:
                return
            self._last_lag_log = now
        log = self.get_logger()
        if level == 'error':
            log.error(text)
        elif level == 'warn':
            log.warning(text)
        else:
            log.info(text)

    def _publish_diagnostics(self):
        stats = self.runner.take_stats()
        self._status_stats.append(stats)
        self._pub_diagnostics.publish(messages.diagnostics(
            stats, self.get_fully_qualified_name(), self.sim.model.name,
            self.get_clock().now().to_msg()))

    def _log_status(self):
        windows, self._status_stats = self._status_stats, []
        if not windows:
            return
        wall = sum(w.wall for w in windows)
        steps = sum(w.steps for w in windows)
        last = windows[-1]
        if last.diverged:
            state = 'diverged (call reset)'
        elif last.paused:
            state = 'paused'
        else:
            state = 'running'
        advanced = sum(w.real_time_factor * w.wall for w in windows)
        step_us = (sum(w.step_time_mean * w.steps for w in windows) / steps * 1e6
                   if steps else 0.0)
        iterations = (sum(w.iterations_mean for w in windows) / len(windows))
        dropped = sum(w.dropped for w in windows)
        self.get_logger().info(
            f't = {last.sim_time:.2f} s, {state}: real-time factor {advanced / wall:.2f}, '
            f'step {step_us:.1f} us, solver iterations {iterations:.1f} (max '
            f'{max(w.iterations_max for w in windows)}), {steps} steps in {wall:.1f} s'
            + (f', {dropped * 1e3:.0f} ms of simulated time dropped' if dropped else ''))

    # -- commands -----------------------------------------------------------------------------
    def _on_link_wrench(self, msg):
        link = msg.header.frame_id
        prefix = self.frames.prefix
        if prefix and link.startswith(prefix):
            link = link[len(prefix):]
        at = messages.stamp_seconds(msg.header.stamp)
        w = msg.wrench
        try:
            self.runner.schedule_wrench(link, (w.force.x, w.force.y, w.force.z),
                                        (w.torque.x, w.torque.y, w.torque.z), at or None)
        except CommandError as error:
            self._refused('link_wrench', error)

    def _refused(self, kind, error):
        self.warn_throttled(f'refused {kind} command: {error}')

    def warn_throttled(self, text):
        """Log a warning, at most once per COMMAND_WARNING_PERIOD for the same text."""
        now = time.monotonic()
        if now - self._warned.get(text, -math.inf) >= COMMAND_WARNING_PERIOD:
            self._warned[text] = now
            self.get_logger().warning(text)
            if len(self._warned) > 1000:  # a stream of distinct bad commands
                self._warned.clear()

    # -- services -----------------------------------------------------------------------------
    # pause, resume, step and reset: aliases of ~/set_simulation_state (PAUSED, PLAYING),
    # ~/step_simulation (step_count steps) and ~/reset_simulation (SCOPE_ALL: spawned objects
    # go too), answering std_srvs/Trigger as before
    def _on_pause(self, request, response):
        response.success, response.message = True, self.runner.pause()
        self.interfaces.stopped = False
        self.get_logger().info(response.message)
        return response

    def _on_resume(self, request, response):
        response.message = self.runner.resume()
        response.success = not self.sim.diverged
        if response.success:
            self.interfaces.stopped = False
        self.get_logger().info(response.message)
        return response

    def _on_step(self, request, response):
        n = self.get_parameter('step_count').value or self.settings.steps_per_publish
        answer = self.interfaces.step(n)
        response.success = answer.result == answer.RESULT_OK
        response.message = answer.error_message.replace('step_simulation ', '', 1)
        self._publish_state()
        return response

    def _on_reset(self, request, response):
        robots = list(self.sim.entities.spawned_robots)
        gone = self.sim.entities.delete_spawned()
        if robots:
            self.robots_changed()
        elif gone:
            self.world_changed()
        response.success, response.message = True, self.runner.reset()
        if gone:
            response.message += f'; spawned objects removed: {", ".join(gone)}'
        self.get_logger().info(response.message)
        self._publish_state()
        return response

    def destroy_node(self):
        """Detach the Python log handler, then destroy the node."""
        self.interfaces.destroy()
        logging.getLogger('jointsim_ros').removeHandler(self._python_log)
        logging.getLogger('jointsim_ros').propagate = True
        logging.getLogger('jointsim_ros').setLevel(logging.NOTSET)
        super().destroy_node()


def make_executor(real_time_factor, context=None):
    """
    Return the executor: EventsExecutor when available and pacing in real time, else single.

    The events executor (rclpy >= kilted) needs much less CPU per callback.  Running as fast as
    possible keeps the timer always ready; the single-threaded executor still serves
    subscriptions and services between ticks, the events executor would starve them.
    """
    if real_time_factor > 0.0:
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:
            pass
        else:
            return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)


def stop_on_signals():
    """
    Return an Event that SIGINT and SIGTERM set (call after ``rclpy.init`` without handlers).

    They only ask the spin loop to end: Python's own handler would raise KeyboardInterrupt
    inside whichever callback runs (the events executor logs it as a crash, or pybind11 prints
    'Unable to convert call argument').
    """
    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    return stop


def spin(node, executor, *stops):
    """Spin until one of the ``stops`` Events is set or the context shuts down."""
    executor.add_node(node)
    context = node.context
    # spin_once in a loop rather than spin(): the events executor's spin() does not return on
    # Ctrl-C with rclpy 9.1 (kilted wheels); checking here works for every executor.
    while context.ok() and not any(stop.is_set() for stop in stops):
        executor.spin_once(timeout_sec=0.1)


def usage():
    """Return the ``--help`` text: how to start the node and every parameter with its default."""
    lines = [
        'usage: jointsim_node [-h] [--ros-args -p NAME:=VALUE ... | --params-file FILE]',
        '',
        'The jointsim_ros simulator node (docs/node.md): one robot from a URDF or xacro (or a',
        'world of several, each under its NAME/), stepped on a wall-clock timer; joint_states,',
        '/tf, /clock, dynamic_joint_states, force-torque wrenches, contact markers and',
        '/diagnostics out; voltage, effort and servo commands in.',
        '',
        'examples:',
        '  jointsim_node --ros-args -p robot_description_file:=robot.urdf.xacro \\',
        '                          -p config_file:=robot.yaml',
        '  jointsim_node --ros-args -p world_file:=config/two_arms.world.yaml   # several robots',
        '  ros2 launch jointsim_ros sim.launch.py',
        '',
        'parameters [unit, range] default:',
    ]
    for param in PARAMETERS:
        limits = f', {param.limits[0]:g} to {param.limits[1]:g}' if param.limits else ''
        value = yaml.safe_dump(param.default, default_flow_style=True).split('\n')[0]
        lines.append(f'  {param.name} [{param.unit}{limits}] {value}')
        lines += textwrap.wrap(param.description, width=92, initial_indent='      ',
                               subsequent_indent='      ')
    return '\n'.join(lines) + '\n'


def wants_help(args):
    """Return True when the command line (before any --ros-args) asks for help."""
    args = sys.argv[1:] if args is None else list(args)
    if '--ros-args' in args:
        args = args[:args.index('--ros-args')]
    return '-h' in args or '--help' in args


def main(args=None):
    """Entry point of ``jointsim_node`` and ``python -m jointsim_ros.ros.node``."""
    if wants_help(args):
        sys.stdout.write(usage())
        return 0
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = stop_on_signals()
    node = None
    status = 0
    try:
        node = JointsimNode()
        spin(node, make_executor(node.settings.real_time_factor), stop, node.quit_requested)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except (JointsimError, FileNotFoundError) as error:
        rclpy.logging.get_logger(NODE_NAME).fatal(str(error))
        status = 1
    except ParameterException as error:
        rclpy.logging.get_logger(NODE_NAME).fatal(
            f'bad parameter: {error}.  docs/node.md lists every parameter with its type and '
            f'range (floating-point parameters need a decimal point: 500.0, not 500).')
        status = 1
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return status


if __name__ == '__main__':
    sys.exit(main())
