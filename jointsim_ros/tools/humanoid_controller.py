"""
Controller node for the bundled humanoid: walks it, or (``--valve``) turns the valve.

    python -m jointsim_ros.tools.humanoid_controller [--steps N] [--stride M] [--open-loop]
    python -m jointsim_ros.tools.humanoid_controller --valve
    ros2 run jointsim_ros jointsim_humanoid_controller --ros-args -r __ns:=/r1

Talks to ``jointsim_node`` only over topics and services: on every ``joint_states`` message it
publishes one ``joint_voltages`` message (sensor_msgs/JointState: names, volts in ``effort``)
for every joint.  By default the balancing walk (jointsim_ros.control.balance: a state
estimator and DCM feedback with step adjustment, docs/humanoid.md, "Balance"), which reads only
what the robot measures: ``joint_states`` (as the encoders give them), the pelvis IMU
(``pelvis_imu/imu``, sensor_msgs/Imu) and the ankle sensors (``l_ankle_ft/wrench``,
``r_ankle_ft/wrench``), never /tf.  ``--open-loop``: jointsim_ros.control.walking's planned
gait on joint states only.  The plan is made at start-up from the robot's URDF and config
(``--robot``, ``--config``, by default the bundled humanoid), in simulated time from the first
``joint_states`` stamp.  After the walk it keeps standing.

``--valve`` (the node running urdf/jointsim_humanoid_valve.urdf.xacro, docs/valve.md): the
valve controller (jointsim_ros.control.valve.ValveController) on the humanoid's own
description (``--robot``, ``--config`` stay the humanoid's files, not the scenario's: the
controller knows its body, the valve's place is in ValveSettings); ``--steps``, ``--stride``
are ignored.  It stands, reaches the rim with both hands, grasps, turns the valve and lets go,
reading the wrist sensors (``l_wrist_ft/wrench``, ``r_wrist_ft/wrench``) as well.  It asks the
node for its grasps through the ``grasp/l_grasp`` and ``grasp/r_grasp`` services
(std_srvs/SetBool, called asynchronously; the answers go back to the controller), logs what the
controller does as it happens and once a second a status line
``t=5.00s phase turning: valve 42 deg, squeeze 20.1/19.8 N, tangential 1.2/1.3 N, torque
0.50 N m`` (the controller's own figures, from its sensors), and keeps standing after the task.

The node steps from the moment it is ready, with every drive at 0 V, so a robot whose
controller starts a few seconds later has sunk on its braking motors by then.  The controller
therefore first calls the node's ``reset`` service (std_srvs/Trigger) and starts from the
initial state; ``--no-reset`` stands the robot up from wherever it is instead.  Sensor samples
stamped before the reset (later than the joint state, the clock having gone back) are not
read: it waits for fresh ones.
"""
import argparse
import math
import sys

from geometry_msgs.msg import WrenchStamped
import numpy as np
from rclpy.node import Node
from rclpy.utilities import remove_ros_args
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import SetBool, Trigger

from .spinning import spin_node
from .. import resources
from ..control.balance import BalancingWalkingController, Measurements
from ..control.valve import ValveController
from ..control.walking import GaitSettings, WalkingController
from ..description import load_model
from ..errors import JointsimError
from ..ros.messages import stamp_seconds
from ..ros.node import grasp_service, wrench_topic

ROBOT = ('urdf', 'jointsim_humanoid.urdf.xacro')
CONFIG = ('config', 'jointsim_humanoid.yaml')
#: The topics of the sensors the balancing walk reads (the bundled humanoid's config).
IMU_TOPIC = 'pelvis_imu/imu'
#: s: a sensor sample stamped this much later than the joint state it is read with is from
#: before a reset (the simulation's clock went back) and is not used.
STALE = 0.05
ANKLE_SENSORS = {'l': 'l_ankle_ft', 'r': 'r_ankle_ft'}


class HumanoidController(Node):
    """Publishes the walking (or valve) controller's voltages on each joint state."""

    def __init__(self, controller, reset=True):
        super().__init__('jointsim_humanoid_controller')
        self.controller = controller
        # None: no reset wanted or done; a future: waiting for the node's reset
        self.reset_client = self.create_client(Trigger, 'reset') if reset else None
        self.resetting = None
        self.names = list(controller.joint_names)
        self.rows = None            # where our joints sit in joint_states ...
        self.names_seen = None      # ... for messages naming the joints in this order
        self.t0 = None
        self.last_report = -1.0
        self.finished = False
        self.publisher = self.create_publisher(JointState, 'joint_voltages', 10)
        self.valve = isinstance(controller, ValveController)
        self.closed_loop = self.valve or isinstance(controller, BalancingWalkingController)
        # the latest IMU sample, ankle and wrist wrenches (closed loop): what the robot measures
        self.imu = None
        self.wrenches = {}
        self.wrists = {}
        if self.closed_loop:
            self.create_subscription(Imu, IMU_TOPIC, self.on_imu, 1)
            for side, sensor in ANKLE_SENSORS.items():
                self.create_subscription(
                    WrenchStamped, wrench_topic(sensor),
                    lambda msg, side=side: self.on_wrench(self.wrenches, side, msg), 1)
        # the valve: the wrist sensors, and the node's grasp services (asked asynchronously)
        self.grasp_clients = {}
        self.generation = 0         # a reset restarts the controller: older answers are stale
        self.logged = 0             # controller.log lines logged so far
        if self.valve:
            for side, sensor in controller.valve.sensors.items():
                self.create_subscription(
                    WrenchStamped, wrench_topic(sensor),
                    lambda msg, side=side: self.on_wrench(self.wrists, side, msg), 1)
            self.grasp_clients = {name: self.create_client(SetBool, grasp_service(name))
                                  for name in controller.valve.grasp_names.values()}
        # depth 1: a controller that falls behind answers the newest state, not a queue of
        # old ones (the balancing walk takes about 1.2 ms a period)
        self.create_subscription(JointState, 'joint_states', self.on_state, 1)
        if self.valve:
            v = controller.valve
            self.get_logger().info(
                f'turning the valve {math.degrees(v.turn):.0f} deg with a squeeze of '
                f'{v.squeeze:g} N, {controller.duration():.1f} s, closed loop on joint_states, '
                'the pelvis IMU, the ankle and the wrist sensors; grasps through '
                + ', '.join(c.srv_name for c in self.grasp_clients.values())
                + '; waiting for joint_states')
            return
        self.get_logger().info(
            f'walking {controller.settings.steps} steps of {controller.settings.stride:g} m, '
            f'{controller.duration():.1f} s, '
            + ('closed loop on joint_states, the pelvis IMU and the ankle sensors'
               if self.closed_loop else 'open loop on joint_states')
            + '; waiting for joint_states')

    def on_imu(self, msg):
        """Keep the latest IMU sample as the controller reads it (10,), with its stamp."""
        q, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        self.imu = (stamp_seconds(msg.header.stamp),
                    np.array([q.w, q.x, q.y, q.z, w.x, w.y, w.z, a.x, a.y, a.z]))

    def on_wrench(self, latest, side, msg):
        """Keep the latest ankle or wrist wrench (6,), in the sensor's (foot's, hand's) frame."""
        f, t = msg.wrench.force, msg.wrench.torque
        latest[side] = (stamp_seconds(msg.header.stamp),
                        np.array([f.x, f.y, f.z, t.x, t.y, t.z]))

    def fresh_samples(self, t):
        """
        Return (imu, ankle wrenches, wrist wrenches) of the samples stamped up to ``t``, or None.

        A sample stamped later than the joint state (by more than STALE) is from before a
        reset of the simulation, whose clock went back: the robot it measured had sunk on its
        braking motors, and a state estimator started on it (its first orientation, the feet
        it latches) is off by centimetres for the rest of the task.  Such samples are dropped
        and the controller waits for fresh ones.
        """
        def fresh(sample):
            return sample is not None and sample[0] <= t + STALE
        for latest in (self.wrenches, self.wrists):
            for side in [side for side, sample in latest.items() if not fresh(sample)]:
                del latest[side]
        if not fresh(self.imu):
            self.imu = None
        if self.imu is None or len(self.wrenches) < 2 or (self.valve and len(self.wrists) < 2):
            return None
        return (self.imu[1].copy(), {side: w for side, (_, w) in self.wrenches.items()},
                {side: w for side, (_, w) in self.wrists.items()})

    def on_state(self, msg):
        """Compute and publish the voltages for one joint state."""
        if self.reset_client is not None:
            if self.resetting is None:
                if not self.reset_client.service_is_ready():
                    return
                self.get_logger().info('resetting the simulation to its initial state')
                self.resetting = self.reset_client.call_async(Trigger.Request())
                return
            if not self.resetting.done():
                return
            self.reset_client = None              # done: the next state starts the walk
            self.t0 = None
            return
        if msg.name != self.names_seen:
            index = {name: i for i, name in enumerate(msg.name)}
            missing = [name for name in self.names if name not in index]
            if missing:
                self.get_logger().error(
                    'joint_states lacks the joints ' + ', '.join(missing)
                    + ': is the node running the humanoid (--robot, --config)?',
                    throttle_duration_sec=5.0)
                return
            self.rows = [index[name] for name in self.names]
            self.names_seen = list(msg.name)
        t = stamp_seconds(msg.header.stamp)
        if self.t0 is None or t < self.t0:
            self.t0 = t                      # first message, or the simulation was reset
            self.controller.restart()
            self.generation += 1
            self.logged = 0
            self.last_report = -1.0
            self.finished = False
        elapsed = t - self.t0
        q = np.array([msg.position[i] for i in self.rows])
        qd = np.array([msg.velocity[i] for i in self.rows])
        if self.closed_loop:
            samples = self.fresh_samples(t)
            if samples is None:
                self.get_logger().info(
                    'waiting for the pelvis IMU and the ankle '
                    + ('and wrist sensors' if self.valve else 'sensors'),
                    throttle_duration_sec=2.0)
                self.t0 = None
                return
            imu, wrenches, wrists = samples
            measured = Measurements(elapsed, q, qd, imu, wrenches)
            if self.valve:
                measured.wrists = wrists
            volts = self.controller.voltages(measured)
        else:
            volts = self.controller.voltages(elapsed, q, qd)
        out = JointState(name=self.names, effort=volts.tolist())
        out.header.stamp = msg.header.stamp
        self.publisher.publish(out)
        if self.valve:
            self.valve_bookkeeping(elapsed)
            return
        if elapsed - self.last_report >= 1.0:
            self.last_report = elapsed
            self.get_logger().info(f't = {elapsed:5.2f} s  {self.controller.phase(elapsed)}')
        if not self.finished and elapsed >= self.controller.duration():
            self.finished = True
            self.get_logger().info('walk done; standing')

    # -- the valve ------------------------------------------------------------------------------
    def valve_bookkeeping(self, elapsed):
        """Ask for the controller's grasps, log its new lines and, once a second, its status."""
        controller = self.controller
        while controller.requests:
            action, name = controller.requests.pop(0)
            self.ask(action, name)
        self.log_lines()
        if elapsed - self.last_report >= 1.0:
            self.last_report = elapsed
            self.get_logger().info(status_line(elapsed, controller.status))
        if not self.finished and controller.state == 'done':
            self.finished = True
            self.get_logger().info('valve done; standing')

    def log_lines(self):
        """Log the controller's log lines that are new since the last call."""
        for t, line in self.controller.log[self.logged:]:
            self.get_logger().info(f't={t:.2f}s {line}')
        self.logged = len(self.controller.log)

    def ask(self, action, name):
        """Call the node's grasp/NAME service for a grasp or a release, without waiting."""
        client = self.grasp_clients.get(name)
        if client is None or not client.service_is_ready():
            why = (f'the service {grasp_service(name)} is not available (is the node running '
                   'the valve scenario, urdf/jointsim_humanoid_valve.urdf.xacro?)')
            self.get_logger().warning(f'{action} {name}: {why}')
            if action == 'grasp':
                self.controller.grasp_answer(name, False, why)
            return
        future = client.call_async(SetBool.Request(data=action == 'grasp'))
        generation = self.generation
        future.add_done_callback(
            lambda done: self.on_answer(action, name, generation, done))

    def on_answer(self, action, name, generation, future):
        """Hand the node's answer to a grasp request to the controller; log it."""
        if generation != self.generation:
            return                          # asked before a reset restarted the controller
        try:
            response = future.result()
            ok, message = response.success, response.message
        except Exception as error:          # the call itself failed (the node went away)
            ok, message = False, f'{grasp_service(name)} failed: {error}'
        if ok:
            self.get_logger().info(message)
        else:
            self.get_logger().warning(f'{action} {name}: {message}')
        if action == 'grasp':
            self.controller.grasp_answer(name, ok, message)
        self.log_lines()


def status_line(elapsed, status):
    """Return ``t=5.00s phase turning: valve 42 deg, squeeze L/R N, tangential L/R N, ...``."""
    squeeze, tangential = status['squeeze'], status['tangential']
    return (f't={elapsed:.2f}s phase {status["phase"]}: valve '
            f'{math.degrees(status["angle"]):.0f} deg, squeeze {squeeze["l"]:.1f}/'
            f'{squeeze["r"]:.1f} N, tangential {tangential["l"]:.1f}/{tangential["r"]:.1f} N, '
            f'torque {status["torque"]:.2f} N m')


def parse_args(argv):
    """Command-line arguments (ROS arguments removed)."""
    defaults = GaitSettings()
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('--robot', help='URDF or xacro of the humanoid (default: the bundled '
                        'urdf/jointsim_humanoid.urdf.xacro)')
    parser.add_argument('--config', help='its simulator config, for the drives and the start '
                        'pose (default: config/jointsim_humanoid.yaml)')
    parser.add_argument('--no-reset', dest='reset', action='store_false',
                        help='do not reset the simulation first: stand up from where it is')
    parser.add_argument('--steps', type=int, default=defaults.steps,
                        help=f'number of steps ({defaults.steps}); 0 stands')
    parser.add_argument('--stride', type=float, default=defaults.stride,
                        help=f'step length, m ({defaults.stride})')
    parser.add_argument('--open-loop', action='store_true',
                        help='the planned gait on joint states only (no IMU, no feedback)')
    parser.add_argument('--valve', action='store_true',
                        help='turn the valve (the node runs the valve scenario, docs/valve.md): '
                             "--robot and --config stay the humanoid's own files; --steps "
                             'and --stride are ignored')
    return parser.parse_args(argv)


def build(options):
    """Return the walking or valve controller for the options; raise JointsimError with the fix."""
    robot = options.robot or str(resources.share_file(*ROBOT))
    config = options.config or str(resources.share_file(*CONFIG))
    model, sim_config = load_model(robot, config)
    if options.valve:
        if options.open_loop:
            raise JointsimError('--valve stands on the balancing controller: drop --open-loop')
        return ValveController(model, sim_config)
    if options.steps < 0 or not 0.0 <= options.stride <= 0.2:
        raise JointsimError('--steps must be >= 0 and --stride between 0 and 0.2 m')
    settings = GaitSettings.for_steps(options.steps, stride=options.stride)
    if options.open_loop:
        return WalkingController(model, sim_config, settings)
    return BalancingWalkingController(model, sim_config, settings)


def main(args=None):
    """Entry point of ``jointsim_humanoid_controller``."""
    argv = remove_ros_args(sys.argv if args is None else args)[1:]
    options = parse_args(argv)
    try:
        controller = build(options)
    except (JointsimError, ValueError) as error:
        print(f'jointsim_humanoid_controller: {error}', file=sys.stderr)
        return 2
    return spin_node(lambda: HumanoidController(controller, options.reset), args)


if __name__ == '__main__':
    sys.exit(main())
