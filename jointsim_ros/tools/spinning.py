"""The entry-point form the package's ROS tools share (ros2/demos' demo_nodes_py talker)."""
import sys

import rclpy
from rclpy.executors import ExternalShutdownException


def spin_node(make_node, args=None):
    """
    Initialise rclpy, spin the node ``make_node()`` returns until Ctrl-C, shut down; return 0.

    Args:
        make_node: callable that builds the node (after rclpy.init).
        args: the process arguments with the ROS ones (default sys.argv).
    """
    rclpy.init(args=sys.argv if args is None else args)
    node = None
    try:
        node = make_node()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RuntimeError:
        # Ctrl-C shuts the context down; a message being taken at that moment makes rclpy
        # raise this ('Unable to convert call argument'), which is the shutdown, not an error
        if rclpy.ok():
            raise
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
