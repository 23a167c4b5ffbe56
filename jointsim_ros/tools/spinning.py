"""The entry-point form the package's ROS tools share (ros2/demos' demo_nodes_py talker)."""
import signal
import sys
import threading

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions


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

    SIGINT and SIGTERM only ask the loop to end, as the simulator's node has them: Python's
    own handler would raise KeyboardInterrupt inside whichever callback runs (from the events
    executor: pybind11's 'Unable to convert call argument' traceback).

    Args:
        make_node: callable that builds the node (after rclpy.init).
        args: the process arguments with the ROS ones (default sys.argv).
    """
    rclpy.init(args=sys.argv if args is None else args,
               signal_handler_options=SignalHandlerOptions.NO)
    stop = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    node = executor = None
    try:
        node = make_node()
        executor = make_executor(node.context)
        executor.add_node(node)
        # spin_once in a loop: the events executor's spin() does not return on Ctrl-C with
        # rclpy 9.1 (the kilted wheels)
        while node.context.ok() and not stop.is_set():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if executor is not None:
            executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
