"""
Print messages of a topic, a small stand-in for ``ros2 topic echo`` where ros2cli is missing.

    python -m jointsim_ros.tools.echo joint_states [--rate 2] [--count N]
    python -m jointsim_ros.tools.echo /tf_static --count 1

The message type is read from the ROS graph (the topic must have a publisher), and the QoS
follows the publishers' (transient-local topics such as /tf_static and robot_description reach
a late subscriber; best-effort ones such as a lidar's scan are read best effort).  JointState
messages print as one line; others as YAML.  Set ROS_DOMAIN_ID to the simulator's domain.
"""
import argparse
import importlib
import sys
import time

import numpy as np
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.utilities import remove_ros_args
import yaml

#: How long to look for a publisher of the topic, s.
DISCOVERY_TIMEOUT = 10.0


def message_class(type_name):
    """Return the message class of a type name such as 'sensor_msgs/msg/JointState'."""
    package, kind, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.{kind}'), name)


def to_plain(msg):
    """Return a message as plain Python data (dicts, lists, numbers, strings)."""
    if hasattr(msg, 'get_fields_and_field_types'):
        return {field: to_plain(getattr(msg, field)) for field in msg.get_fields_and_field_types()}
    if isinstance(msg, (list, tuple)) or type(msg).__name__ == 'array':
        return [to_plain(v) for v in msg]
    if isinstance(msg, np.ndarray):
        return msg.tolist()
    if isinstance(msg, bytes):  # a byte field (one byte) or a byte array
        return msg[0] if len(msg) == 1 else list(msg)
    return msg


def format_message(msg):
    """Return the text printed for one message."""
    if type(msg).__name__ == 'JointState' and msg.position:
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        rows = zip(msg.name, msg.position, msg.velocity or [0.0] * len(msg.name))
        joints = '  '.join(f'{name} {q:+.3f} ({qd:+.2f}/s)' for name, q, qd in rows)
        return f't = {t:8.3f} s  {joints}'
    return yaml.safe_dump(to_plain(msg), sort_keys=False, width=99).rstrip() + '\n---'


def parse_args(argv):
    """Command-line arguments (ROS arguments removed)."""
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('topic', help='topic name, relative (joint_states) or absolute (/tf)')
    parser.add_argument('--rate', type=float, default=2.0,
                        help='print at most this many messages per second (0: all)')
    parser.add_argument('--count', type=int, default=0, help='stop after N messages')
    return parser.parse_args(argv)


def main(args=None):
    """Entry point of ``python -m jointsim_ros.tools.echo``."""
    argv = sys.argv if args is None else args
    options = parse_args(remove_ros_args(argv)[1:])
    rclpy.init(args=argv)
    node = rclpy.create_node('jointsim_echo')
    status = 0
    try:
        topic = node.resolve_topic_name(options.topic)
        deadline = time.monotonic() + DISCOVERY_TIMEOUT
        publishers = []
        while time.monotonic() < deadline and not publishers:
            publishers = node.get_publishers_info_by_topic(topic)
            if not publishers:
                rclpy.spin_once(node, timeout_sec=0.1)
        if not publishers:
            print(f'echo: no publisher of {topic} found in {DISCOVERY_TIMEOUT:g} s '
                  f'(is the simulator running on this ROS_DOMAIN_ID?)', file=sys.stderr)
            return 1
        latched = all(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                      for p in publishers)
        # a best-effort publisher (the sensor-data QoS of scans, clouds and images) is heard
        # only by a best-effort reader
        best_effort = any(p.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
                          for p in publishers)
        # latched: one history for every publisher's kept message (tf2 reads /tf_static so)
        qos = QoSProfile(depth=100 if latched else 10,
                         reliability=(ReliabilityPolicy.BEST_EFFORT if best_effort
                                      else ReliabilityPolicy.RELIABLE),
                         durability=(DurabilityPolicy.TRANSIENT_LOCAL if latched
                                     else DurabilityPolicy.VOLATILE))
        printed = [0, -float('inf')]

        def show(msg):
            now = time.monotonic()
            if options.rate > 0 and now - printed[1] < 1.0 / options.rate:
                return
            printed[0] += 1
            printed[1] = now
            print(format_message(msg), flush=True)
            if options.count and printed[0] >= options.count:
                raise SystemExit(0)

        node.create_subscription(message_class(publishers[0].topic_type), topic, show, qos)
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except SystemExit as done:
        status = done.code or 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return status


if __name__ == '__main__':
    sys.exit(main())
