"""
The simulator facade and its parts: :class:`Simulator` and the components it is made of.

``simulator.py`` steps the engine and holds state and commands; ``sensing.py``
(``sim.sensors``), ``prescribed.py`` (``sim.prescribed``), ``elements.py`` (``sim.elements``) and
``servo.py`` (the drives' amplifier loops) are its parts; ``trajectory.py`` holds the splines
prescribed motion and the procedures share; ``loading.py`` builds a Simulator from the node's
parameters.  No rclpy here.
"""
