"""
Twice-differentiable curves through samples: the clamped cubic spline of prescribed motion.

numpy and scipy, no ROS.  A spline through (t_i, y_i) with given end velocities (default 0:
the motion starts and ends at rest) has continuous position, velocity and acceleration;
outside [t_0, t_n] it holds the end value at rest.  The curve and its derivatives are
``scipy.interpolate.CubicSpline``'s with clamped ends (first derivatives given).
"""
import numpy as np
from scipy import interpolate

from ..errors import CommandError


class CubicSpline:
    """
    Clamped cubic spline y(t) through samples, one curve per column.

    Args:
        times: (n,) strictly increasing sample times, s, n >= 2.
        values: (n,) or (n, m) samples (rad, m, ...).
        start_velocity, end_velocity: end slopes (units per s), scalars or (m,); default 0.

    Raises:
        CommandError: fewer than 2 samples, times not strictly increasing, non-finite values.
    """

    def __init__(self, times, values, start_velocity=0.0, end_velocity=0.0):
        t = np.asarray(times, dtype=float).ravel()
        y = np.asarray(values, dtype=float)
        self.vector = y.ndim == 2
        y = y.reshape(len(y), -1) if y.ndim else y.reshape(1, 1)
        if len(t) < 2 or len(y) != len(t):
            raise CommandError(f'a trajectory needs at least 2 samples with one time each; got '
                               f'{len(t)} times and {len(y)} samples.')
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(y))):
            raise CommandError('trajectory times and values must be finite numbers.')
        if np.any(np.diff(t) <= 0.0):
            raise CommandError('trajectory times must be strictly increasing (s).')
        m = y.shape[1]
        v0 = np.broadcast_to(np.asarray(start_velocity, dtype=float), (m,))
        v1 = np.broadcast_to(np.asarray(end_velocity, dtype=float), (m,))
        self._curve = interpolate.CubicSpline(t, y, axis=0, bc_type=((1, v0), (1, v1)))
        self.t = t
        self.y = y

    @property
    def start(self):
        """First sample time, s."""
        return float(self.t[0])

    @property
    def end(self):
        """Last sample time, s."""
        return float(self.t[-1])

    def evaluate(self, time, derivative=0):
        """
        Return the value (derivative 0), velocity (1) or acceleration (2) at a time.

        Before the first sample and after the last the curve holds its end value at rest.
        """
        t = float(time)
        if t <= self.t[0] or t >= self.t[-1]:
            out = self.y[0] if t <= self.t[0] else self.y[-1]
            out = out if derivative == 0 else np.zeros_like(out)
            return out.copy() if self.vector else float(out[0])
        out = self._curve(t, derivative if derivative in (0, 1) else 2)   # a new array
        return out if self.vector else float(out[0])
