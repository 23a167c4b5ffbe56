"""
Fixed joints kept as welds (force/torque sensors, ``keep_fixed_joints``).

Position constraint (6 rows): coincident anchors C_1..3 = p_b - p_a and equal orientations
C_4..6 = R_pj 2 vec(q_pj^-1 q_cj).  Jacobian: ``rows.point_rows`` and ``rows.lock_rows``.
"""
from .rows import lock_rows, point_rows
from ..math3d import jit

N_ROWS = 6


@jit
def constraint(f, C, J):
    """Fill C[0:6], J[0:6] from the joint's world frames ``f``."""
    row = point_rows(f, C, J, 0)
    return lock_rows(f, C, J, row)
