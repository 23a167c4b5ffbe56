"""The browser view (viser): drawing from a Simulator or from ROS topics (docs/view.md)."""
