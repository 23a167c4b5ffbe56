"""
Controllers and procedures built on the facade (no rclpy here).

``walking.py``: the humanoid's gait (ZMP preview control over joint PD on the DC drives);
``inverse_dynamics.py``: the three-stage inverse-dynamics procedure by prescribed motion;
``mechanisms.py``: the example mechanisms it runs on (the three-bar and the slewing crane);
``rover.py``: the rover's reactive steering from its lidar's scan.
"""
