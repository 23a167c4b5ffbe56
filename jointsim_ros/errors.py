"""User-facing errors: one clear message naming the thing and the fix, never a traceback."""


class JointsimError(Exception):
    """
    A problem with user input (robot description, config, command) described for a user.

    The message names the file/element/key at fault and says how to fix it.  Front ends (the
    node, the command-line tools) print ``str(error)`` without a traceback.
    """


class DescriptionError(JointsimError):
    """The robot description (URDF/xacro) cannot be turned into a model."""


class ConfigError(JointsimError):
    """The simulator configuration (YAML or dict) has a bad key or value."""


class DivergenceError(JointsimError):
    """The simulation produced a non-finite or runaway state and stopped stepping."""


class CommandError(JointsimError):
    """A command (joint name, value) cannot be applied; the state is left unchanged."""
