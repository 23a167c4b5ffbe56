"""
The thin rclpy layer: the node, its message conversions, its pure-Python core and the TF tree.

``node.py`` (``jointsim_node``) declares parameters, publishers, subscriptions and services and
calls ``runner.py`` (pacing, commands, watchdog, services; no rclpy), ``frames.py`` (the TF tree)
and ``messages.py`` (the one place state becomes messages).  No physics here: the simulator is
reached through :class:`jointsim_ros.Simulator` (docs/node.md).
"""
