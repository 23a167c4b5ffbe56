"""
Twice-differentiable curves through samples: the clamped cubic spline of prescribed motion.

Pure numpy, no ROS.  A spline through (t_i, y_i) with given end velocities (default 0: the
motion starts and ends at rest) has continuous position, velocity and acceleration; outside
[t_0, t_n] it holds the end value at rest.
"""
import numpy as np

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
        h = np.diff(t)
        if np.any(h <= 0.0):
            raise CommandError('trajectory times must be strictly increasing (s).')
        n = len(t)
        m = y.shape[1]
        v0 = np.broadcast_to(np.asarray(start_velocity, dtype=float), (m,))
        v1 = np.broadcast_to(np.asarray(end_velocity, dtype=float), (m,))
        # second derivatives M_i from the clamped spline's tridiagonal system, solved in O(n)
        # (Thomas algorithm: the system is diagonally dominant, no pivoting needed)
        lower = np.zeros(n)
        diag = np.zeros(n)
        upper = np.zeros(n)
        rhs = np.zeros((n, m))
        slope = np.diff(y, axis=0) / h[:, None]
        diag[0], upper[0] = 2.0 * h[0], h[0]
        rhs[0] = 6.0 * (slope[0] - v0)
        lower[-1], diag[-1] = h[-1], 2.0 * h[-1]
        rhs[-1] = 6.0 * (v1 - slope[-1])
        lower[1:-1], diag[1:-1], upper[1:-1] = h[:-1], 2.0 * (h[:-1] + h[1:]), h[1:]
        rhs[1:-1] = 6.0 * (slope[1:] - slope[:-1])
        for i in range(1, n):
            factor = lower[i] / diag[i - 1]
            diag[i] -= factor * upper[i - 1]
            rhs[i] -= factor * rhs[i - 1]
        curvature = np.zeros((n, m))
        curvature[-1] = rhs[-1] / diag[-1]
        for i in range(n - 2, -1, -1):
            curvature[i] = (rhs[i] - upper[i] * curvature[i + 1]) / diag[i]
        self.t = t
        self.y = y
        self.h = h
        self.curvature = curvature

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
        i = min(int(np.searchsorted(self.t, t, side='right')) - 1, len(self.h) - 1)
        h = self.h[i]
        u = self.t[i + 1] - t   # time to the right sample
        w = t - self.t[i]       # time from the left sample
        m0, m1 = self.curvature[i], self.curvature[i + 1]
        y0, y1 = self.y[i], self.y[i + 1]
        if derivative == 0:
            out = (m0 * u ** 3 + m1 * w ** 3) / (6.0 * h) + (y0 / h - m0 * h / 6.0) * u \
                + (y1 / h - m1 * h / 6.0) * w
        elif derivative == 1:
            out = (-m0 * u ** 2 + m1 * w ** 2) / (2.0 * h) - (y0 / h - m0 * h / 6.0) \
                + (y1 / h - m1 * h / 6.0)
        else:
            out = (m0 * u + m1 * w) / h
        return out.copy() if self.vector else float(out[0])
