"""jointsim_ros: URDF robots as maximal-coordinate rigid bodies stepped by sequential impulses."""
from .errors import (CommandError, ConfigError, DescriptionError, DivergenceError,
                     JointsimError)
from .sim.simulator import Simulator, StepReport

__all__ = ['Simulator', 'StepReport', 'JointsimError', 'DescriptionError', 'ConfigError',
           'CommandError', 'DivergenceError']
