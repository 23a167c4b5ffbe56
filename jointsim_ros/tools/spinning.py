"""The entry-point form the package's ROS tools share (ros2/demos' demo_nodes_py talker)."""
import sys

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor


def make_executor(context=None):
    """
    Return rclpy's events executor where it exists (rclpy >= kilted), else the single one.

    A controller takes every sample of the simulator's sensors (the walking humanoid's: about
    2900 messages a second); the events executor costs much less CPU per callback than the
    wait-set executor (docs/benchmarks.md, "Issue 33"), CPU the simulator beside it needs.
    """
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor(context=context)
    return EventsExecutor(context=context)


def spin_node(make_node, args=None):
    """
    Initialise rclpy, spin the node ``make_node()`` returns until Ctrl-C, shut down; return 0.

    Args:
        make_node: callable that builds the node (after rclpy.init).
        args: the process arguments with the ROS ones (default sys.argv).
    """
    rclpy.init(args=sys.argv if args is None else args)
    node = executor = None
    try:
        node = make_node()
        executor = make_executor(node.context)
        executor.add_node(node)
        # spin_once in a loop: the events executor's spin() does not return on Ctrl-C with
        # rclpy 9.1 (the kilted wheels), and the context's end is seen here for either
        while rclpy.ok(context=node.context):
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RuntimeError:
        # Ctrl-C shuts the context down; a message being taken at that moment makes rclpy
        # raise this ('Unable to convert call argument'), which is the shutdown, not an error
        if rclpy.ok():
            raise
    finally:
        if executor is not None:
            executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
