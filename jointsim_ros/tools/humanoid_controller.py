"""
Walking controller for the bundled humanoid: stands it up, shifts its weight and walks.

    python -m jointsim_ros.tools.humanoid_controller [--steps N] [--stride M] [--open-loop]
    ros2 run jointsim_ros jointsim_humanoid_controller --ros-args -r __ns:=/r1

Talks to ``jointsim_node`` only over topics: on every ``joint_states`` message it publishes
one ``joint_voltages`` message (sensor_msgs/JointState: names, volts in ``effort``) for every
joint.  By default the balancing walk (jointsim_ros.control.balance: a state estimator and DCM
feedback with step adjustment, docs/humanoid.md, "Balance"), which reads only what the robot
measures: ``joint_states`` (as the encoders give them), the pelvis IMU (``pelvis_imu/imu``,
sensor_msgs/Imu) and the ankle sensors (``l_ankle_ft/wrench``, ``r_ankle_ft/wrench``), never
/tf.  ``--open-loop``: jointsim_ros.control.walking's planned gait on joint states only.  The
plan is made at start-up from the robot's URDF and config (the node's own files: ``--robot``,
``--config``, by default the bundled humanoid), in simulated time from the first
``joint_states`` stamp.  After the walk it keeps standing.

The node steps from the moment it is ready, with every drive at 0 V, so a robot whose
controller starts a few seconds later has sunk on its braking motors by then.  The controller
therefore first calls the node's ``reset`` service (std_srvs/Trigger) and starts from the
initial state; ``--no-reset`` stands the robot up from wherever it is instead.
"""
import argparse
import sys

from geometry_msgs.msg import WrenchStamped
import numpy as np
from rclpy.node import Node
from rclpy.utilities import remove_ros_args
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from .spinning import spin_node
from .. import resources
from ..control.balance import BalancingWalkingController, Measurements
from ..control.walking import GaitSettings, WalkingController
from ..description import load_model
from ..errors import JointsimError

ROBOT = ('urdf', 'jointsim_humanoid.urdf.xacro')
CONFIG = ('config', 'jointsim_humanoid.yaml')
#: The topics of the sensors the balancing walk reads (the bundled humanoid's config).
IMU_TOPIC = 'pelvis_imu/imu'
ANKLE_SENSORS = {'l': 'l_ankle_ft', 'r': 'r_ankle_ft'}


class HumanoidController(Node):
    """Publishes the walking controller's voltages on each joint state."""

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
        self.closed_loop = isinstance(controller, BalancingWalkingController)
        # the latest IMU sample and ankle wrenches (closed loop): what the robot measures
        self.imu = None
        self.wrenches = {}
        if self.closed_loop:
            self.create_subscription(Imu, IMU_TOPIC, self.on_imu, 1)
            for side, sensor in ANKLE_SENSORS.items():
                self.create_subscription(
                    WrenchStamped, f'{sensor}/wrench',
                    lambda msg, side=side: self.on_wrench(side, msg), 1)
        # depth 1: a controller that falls behind answers the newest state, not a queue of
        # old ones (the balancing walk takes about 1.2 ms a period)
        self.create_subscription(JointState, 'joint_states', self.on_state, 1)
        self.get_logger().info(
            f'walking {controller.settings.steps} steps of {controller.settings.stride:g} m, '
            f'{controller.duration():.1f} s, '
            + ('closed loop on joint_states, the pelvis IMU and the ankle sensors'
               if self.closed_loop else 'open loop on joint_states')
            + '; waiting for joint_states')

    def on_imu(self, msg):
        """Keep the latest IMU sample as the controller reads it (10,)."""
        q, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
        self.imu = np.array([q.w, q.x, q.y, q.z, w.x, w.y, w.z, a.x, a.y, a.z])

    def on_wrench(self, side, msg):
        """Keep the latest ankle wrench (6,), in the sensor's (the foot's) frame."""
        f, t = msg.wrench.force, msg.wrench.torque
        self.wrenches[side] = np.array([f.x, f.y, f.z, t.x, t.y, t.z])

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
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if self.t0 is None or t < self.t0:
            self.t0 = t                      # first message, or the simulation was reset
            self.controller.restart()
        elapsed = t - self.t0
        q = np.array([msg.position[i] for i in self.rows])
        qd = np.array([msg.velocity[i] for i in self.rows])
        if self.closed_loop:
            if self.imu is None or len(self.wrenches) < 2:
                self.get_logger().info('waiting for the pelvis IMU and the ankle sensors',
                                       throttle_duration_sec=2.0)
                self.t0 = None
                return
            volts = self.controller.voltages(
                Measurements(elapsed, q, qd, self.imu.copy(), dict(self.wrenches)))
        else:
            volts = self.controller.voltages(elapsed, q, qd)
        out = JointState(name=self.names, effort=volts.tolist())
        out.header.stamp = msg.header.stamp
        self.publisher.publish(out)
        if elapsed - self.last_report >= 1.0:
            self.last_report = elapsed
            self.get_logger().info(f't = {elapsed:5.2f} s  {self.controller.phase(elapsed)}')
        if not self.finished and elapsed >= self.controller.duration():
            self.finished = True
            self.get_logger().info('walk done; standing')


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
    return parser.parse_args(argv)


def build(options):
    """Return the walking controller for the options; raise JointsimError with the fix."""
    robot = options.robot or str(resources.share_file(*ROBOT))
    config = options.config or str(resources.share_file(*CONFIG))
    model, sim_config = load_model(robot, config)
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
