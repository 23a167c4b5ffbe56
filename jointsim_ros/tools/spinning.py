"""The entry-point form the package's ROS tools share (ros2/demos' demo_nodes_py talker)."""
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.signals import SignalHandlerOptions

from ..ros.node import make_executor, spin, stop_on_signals


def spin_node(make_node, args=None):
    """
    Initialise rclpy, spin the node ``make_node()`` returns until Ctrl-C, shut down; return 0.

    As the simulator's node: SIGINT and SIGTERM only ask the loop to end, and the node spins on
    rclpy's events executor where it exists (a controller takes every sample of the sensors,
    the walking humanoid's about 2900 messages a second: 63 -> 52 % of a core against the
    single-threaded executor, docs/benchmarks.md, "Issue 33").

    Args:
        make_node: callable that builds the node (after rclpy.init).
        args: the process arguments with the ROS ones (default sys.argv).
    """
    rclpy.init(args=sys.argv if args is None else args,
               signal_handler_options=SignalHandlerOptions.NO)
    stop = stop_on_signals()
    node = executor = None
    try:
        node = make_node()
        executor = make_executor(1.0, node.context)   # paced by its messages: events
        spin(node, executor, stop)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if executor is not None:
            executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
