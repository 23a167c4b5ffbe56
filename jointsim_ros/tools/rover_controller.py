"""
The rover's controller: drive ahead among obstacles, steering away from what the lidar sees.

    python -m jointsim_ros.tools.rover_controller [--scan TOPIC] [--cruise-voltage V]
    ros2 run jointsim_ros jointsim_rover_controller --ros-args -r __ns:=/rover

It reads only what the rover measures: every ``sensor_msgs/LaserScan`` on ``lidar/scan``
(sensor-data QoS: best effort, as the simulator publishes it) goes through
``control/rover.py``'s :class:`ReactiveSteering`, and the answer is one
``sensor_msgs/JointState`` on ``joint_voltages``: the armature voltage of each wheel's DC drive
in the ``effort`` field, the left wheels at one voltage and the right ones at another (skid
steering).  The wheels are the driven joints the simulator announces on the latched
``joint_command_order`` topic, the left ones named with 'left', the right ones with 'right'
(the bundled rover: urdf/jointsim_rover.urdf.xacro with config/jointsim_rover.yaml).  It logs
what it does (``steering 30 deg left, 0.84 m free ahead``): turning on the spot or backing
away at once, other changes at most once a second of simulated time, and a line every 5 s.
A scan stamped earlier than the last (the simulation was reset) starts the steering again.
"""
import argparse
import math
import sys

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from rclpy.utilities import remove_ros_args
from sensor_msgs.msg import JointState, LaserScan
from std_msgs.msg import String
import yaml

from .spinning import spin_node
from ..control.rover import ReactiveSteering, RoverSettings, wheel_sides

NODE_NAME = 'jointsim_rover_controller'
#: s of simulated time between two status lines.
STATUS_PERIOD = 5.0


def scan_angles(msg):
    """Return the angle of each reading of a LaserScan, (n,) rad."""
    return msg.angle_min + msg.angle_increment * np.arange(len(msg.ranges))


class RoverController(Node):
    """Skid steering of the simulated rover from its LaserScan, by wheel voltages."""

    def __init__(self, scan_topic='lidar/scan', settings=None):
        super().__init__(NODE_NAME)
        self.steering = ReactiveSteering(settings)
        self.wheels = None
        self.last_stamp = None
        self.last_status = -math.inf
        self.last_mode = None
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.command = self.create_publisher(JointState, 'joint_voltages', 10)
        self.create_subscription(String, 'joint_command_order', self.on_order, latched)
        self.create_subscription(LaserScan, scan_topic, self.on_scan, qos_profile_sensor_data)
        self.get_logger().info(f'waiting for joint_command_order and the scans on '
                               f'{self.resolve_topic_name(scan_topic)}')

    def on_order(self, msg):
        """Learn the wheels: the driven joints, by side."""
        order = yaml.safe_load(msg.data) or {}
        try:
            left, right = wheel_sides(order.get('joint_voltage_commands') or [])
        except ValueError as error:
            self.get_logger().error(f'the simulated robot cannot be skid steered: {error}')
            return
        self.wheels = (left, right)
        self.get_logger().info(f'left wheels {", ".join(left)}; right wheels '
                               f'{", ".join(right)} (voltages on joint_voltages)')

    def on_scan(self, msg):
        """Steer by one scan: publish the wheels' voltages."""
        if self.wheels is None:
            return
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if self.last_stamp is not None and t < self.last_stamp:
            self.steering.reset()              # time went back: the simulation was reset
            self.last_status = -math.inf
        self.last_stamp = t
        decision = self.steering.command(np.asarray(msg.ranges, dtype=float),
                                         scan_angles(msg), msg.range_min)
        left, right = self.wheels
        command = JointState()
        command.header.stamp = msg.header.stamp
        command.name = list(left) + list(right)
        command.effort = [decision.left] * len(left) + [decision.right] * len(right)
        self.command.publish(command)
        changed = decision.mode != self.last_mode
        self.last_mode = decision.mode
        # what it does: a turn on the spot, backing away or standing at once, other changes
        # at most once a second, and a line every STATUS_PERIOD in any case
        if ((changed and decision.mode in ('spin', 'reverse', 'stand'))
                or (changed and t - self.last_status >= 1.0)
                or t - self.last_status >= STATUS_PERIOD):
            self.last_status = t
            near = ('nothing in range' if not math.isfinite(decision.nearest) else
                    f'nearest {decision.nearest:.2f} m at '
                    f'{math.degrees(decision.nearest_angle):+.0f} deg')
            self.get_logger().info(f't = {t:7.2f} s  {decision.describe()}; {near} '
                                   f'(left {decision.left:+.1f} V, right {decision.right:+.1f} V)')


def parse_args(argv):
    """Command-line arguments (ROS arguments removed)."""
    defaults = RoverSettings()
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('--scan', default='lidar/scan',
                        help='the LaserScan topic (relative to the namespace; default '
                             "lidar/scan, the bundled rover's lidar)")
    parser.add_argument('--cruise-voltage', type=float, default=defaults.cruise_voltage,
                        help=f'V, both sides straight ahead in the open '
                             f'(default {defaults.cruise_voltage:g})')
    return parser.parse_args(argv)


def main(args=None):
    """Entry point of ``jointsim_rover_controller``."""
    argv = remove_ros_args(sys.argv if args is None else args)[1:]
    options = parse_args(argv)
    settings = RoverSettings(cruise_voltage=options.cruise_voltage)
    return spin_node(lambda: RoverController(options.scan, settings), args)


if __name__ == '__main__':
    sys.exit(main())
