"""
Spherical (ball) joints: three rotational degrees of freedom.

Position constraint (3 rows): coincident anchors, C = p_b - p_a (``rows.point_rows``).
"""
from .rows import point_rows
from ..math3d import jit

N_ROWS = 3


@jit
def constraint(f, C, J):
    """Fill C[0:3], J[0:3] from the joint's world frames ``f``."""
    return point_rows(f, C, J, 0)
