"""
Planar joints: translation in the plane normal to the axis and rotation about the axis.

Position constraint (3 rows): p_b stays in the plane through p_a with normal a1 (parent),
C_1 = (p_b - p_a).a1 (``rows.slide_row``), and the normal stays aligned with the child's,
C_2 = a1.b2, C_3 = a1.c2 (``rows.align_row``, as in a revolute joint).
"""
from .rows import align_row, slide_row
from ..math3d import jit

N_ROWS = 3


@jit
def constraint(f, C, J):
    """Fill C[0:3], J[0:3] from the joint's world frames ``f``."""
    row = slide_row(f, f.axis_a, C, J, 0)
    row = align_row(f.axis_a, f.perp1_b, C, J, row)
    return align_row(f.axis_a, f.perp2_b, C, J, row)
