"""
Example controller: PD control of every joint to a moving target, by voltages or by efforts.

    python -m jointsim_ros.tools.example_controller [--mode auto|voltage|effort] [--amplitude RAD]
    ros2 run jointsim_ros jointsim_example_controller --ros-args -r __ns:=/r1

It learns the joint order of the array commands from the node's latched ``joint_command_order``
topic and, on every ``joint_states`` message, publishes one ``joint_voltage_commands`` (V, the
DC drives, e.g. config/jointsim_arm.yaml) or ``joint_effort_commands`` (N m) message:

    u = kp (q* - q) + kd (qd* - qd) + kff qd*,    clipped to +-limit,

with the target ``q*(t) = home + amplitude sin(2 pi t / period + phase_i)`` in simulated time
(the joint_states stamps), blended in from the measured start pose over the first two seconds.
``--mode auto`` (the default) commands voltages when the robot has drives, else efforts.

The gains suit the bundled arm (urdf/jointsim_arm.urdf.xacro) at 100 Hz, without gravity
compensation. With its drives (gear ratios 100 to 160) each joint sees a large reflected
inertia, so independent joint PD is well damped: the arm tracks within about 0.01 rad (kff is
the back-EMF of the target speed). The bare arm under effort control is much harder: its distal
links are light and several joint axes line up when it is straight, so PD gains that stay
stable at 100 Hz with a tick of delay are low, and the arm follows loosely (errors up to about
2 rad). Stiff effort control of that arm needs a faster loop or a model (gravity and inertia
compensation); the gains here only keep it stable.
"""
import argparse
import math
import sys

import numpy as np
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.utilities import remove_ros_args
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
import yaml

from .spinning import spin_node

#: Bundled arm, per joint a1..a7: home pose (rad), phase (rad) and gains.
ARM_HOME = (0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0)
ARM_PHASE = tuple(i * math.pi / 4 for i in range(7))
#: Effort gains: kp N m/rad, kd N m s/rad, limit N m (the URDF effort limits).
ARM_EFFORT_GAINS = {
    'kp': (36.0, 240.0, 7.2, 36.0, 4.8, 3.0, 0.24),
    'kd': (1.44, 19.2, 0.36, 3.6, 0.24, 0.3, 0.0144),
    'kff': (0.0,) * 7,
    'limit': (176.0, 176.0, 110.0, 110.0, 110.0, 40.0, 40.0),
}
#: Voltage gains (config/jointsim_arm.yaml drives): kp V/rad, kd V s/rad, kff V s/rad (the
#: back-EMF of the target speed, back_emf_constant x gear_ratio), limit V (the supply).
ARM_VOLTAGE_GAINS = {
    'kp': (60.0, 120.0, 60.0, 120.0, 60.0, 120.0, 60.0),
    'kd': (1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0),
    'kff': (11.2, 11.2, 8.0, 8.0, 8.0, 3.5, 3.5),
    'limit': (48.0,) * 7,
}
BLEND_TIME = 2.0  # s


def target(t, home, amplitude, period, phase):
    """
    Return the target position and velocity at simulated time t.

    Args:
        t: s since the start of the motion.
        home, phase: (n,) rad.
        amplitude: rad.
        period: s.

    Returns:
        (q*, qd*) arrays of shape (n,).
    """
    w = 2.0 * math.pi / period
    angle = w * t + np.asarray(phase)
    return (np.asarray(home) + amplitude * np.sin(angle), amplitude * w * np.cos(angle))


def blend(t, start, q_target, qd_target):
    """Blend from the start pose to the target over BLEND_TIME (smoothstep); return (q*, qd*)."""
    s = min(1.0, max(0.0, t / BLEND_TIME))
    weight = s * s * (3.0 - 2.0 * s)
    rate = 6.0 * s * (1.0 - s) / BLEND_TIME if s < 1.0 else 0.0
    q = start + weight * (q_target - start)
    return q, weight * qd_target + rate * (q_target - start)


def pd(q, qd, q_target, qd_target, gains):
    """Return the clipped command kp (q* - q) + kd (qd* - qd) + kff qd*, per joint."""
    u = (np.asarray(gains['kp']) * (q_target - q)
         + np.asarray(gains['kd']) * (qd_target - qd)
         + np.asarray(gains['kff']) * qd_target)
    limit = np.asarray(gains['limit'])
    return np.clip(u, -limit, limit)


def gains_for(mode, n):
    """Return the bundled arm's gains for n joints (repeating the wrist's for more joints)."""
    table = ARM_VOLTAGE_GAINS if mode == 'voltage' else ARM_EFFORT_GAINS
    return {key: np.array([values[min(i, len(values) - 1)] for i in range(n)])
            for key, values in table.items()}


class ExampleController(Node):
    """PD control of the simulated robot through jointsim_node's array command topics."""

    def __init__(self, mode='auto', amplitude=0.4, period=6.0):
        super().__init__('jointsim_example_controller')
        self.requested_mode = mode
        self.mode = None
        self.command = None
        self.amplitude = amplitude
        self.period = period
        self.joints = None
        self.start = None
        self.t0 = None
        self.last_report = -math.inf
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.create_subscription(String, 'joint_command_order', self.on_order, latched)
        self.create_subscription(JointState, 'joint_states', self.on_state, 10)
        self.get_logger().info(f'waiting for joint_command_order ({mode} mode)')

    def on_order(self, msg):
        """Learn the joint order of the array command of the chosen mode."""
        order = yaml.safe_load(msg.data) or {}
        mode = self.requested_mode
        if mode == 'auto':
            mode = 'voltage' if order.get('joint_voltage_commands') else 'effort'
        joints = order.get(f'joint_{mode}_commands') or []
        if not joints:
            self.get_logger().error(
                f'the simulated robot takes no {mode} commands'
                + (' (no drives: run the node with a drives config, e.g. '
                   'config/jointsim_arm.yaml)' if mode == 'voltage' else ''))
            return
        if self.command is None or mode != self.mode:
            self.command = self.create_publisher(Float64MultiArray, f'joint_{mode}_commands', 10)
        self.mode = mode
        self.joints = list(joints)
        n = len(self.joints)
        self.gains = gains_for(mode, n)
        self.home = np.array([ARM_HOME[i % len(ARM_HOME)] for i in range(n)])
        self.phase = np.array([ARM_PHASE[i % len(ARM_PHASE)] for i in range(n)])
        self.start = None
        self.get_logger().info(f'commanding {", ".join(self.joints)} by '
                               f'{"effort (N m)" if mode == "effort" else "voltage (V)"}')

    def on_state(self, msg):
        """Compute and publish one command from a joint state."""
        if self.joints is None:
            return
        index = {name: i for i, name in enumerate(msg.name)}
        try:
            rows = [index[name] for name in self.joints]
        except KeyError:
            return
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        q = np.array([msg.position[i] for i in rows])
        qd = np.array([msg.velocity[i] for i in rows])
        if self.start is None or t < self.t0:
            self.start, self.t0 = q.copy(), t  # first message, or the simulation was reset
        elapsed = t - self.t0
        q_target, qd_target = blend(elapsed, self.start, *target(
            elapsed, self.home, self.amplitude, self.period, self.phase))
        u = pd(q, qd, q_target, qd_target, self.gains)
        self.command.publish(Float64MultiArray(data=u.tolist()))
        if elapsed - self.last_report >= 2.0 or elapsed < self.last_report:
            self.last_report = elapsed
            error = np.max(np.abs(q_target - q))
            self.get_logger().info(f't = {t:6.2f} s  largest tracking error {error:.3f} rad')


def parse_args(argv):
    """Command-line arguments (ROS arguments removed)."""
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('--mode', choices=('auto', 'voltage', 'effort'), default='auto',
                        help='command drive voltages (V) or joint efforts (N m); auto: '
                        'voltages when the robot has drives')
    parser.add_argument('--amplitude', type=float, default=0.4, help='target amplitude, rad')
    parser.add_argument('--period', type=float, default=6.0, help='target period, s')
    return parser.parse_args(argv)


def main(args=None):
    """Entry point of ``jointsim_example_controller``."""
    argv = remove_ros_args(sys.argv if args is None else args)[1:]
    options = parse_args(argv)
    return spin_node(
        lambda: ExampleController(options.mode, options.amplitude, options.period), args)


if __name__ == '__main__':
    sys.exit(main())
