"""
Planar joints: translation in the plane normal to the axis and rotation about the axis.

Position constraint (3 rows): p_b stays in the plane through p_a with normal a1 (parent),
C_1 = (p_b - p_a).a1 (``rows.slide_row``), and the normal stays aligned with the child's,
C_2 = a1.b2, C_3 = a1.c2 (``rows.align_row``, as in a revolute joint).
"""
import numpy as np

from .placement import angular, at_rest, linear, no_twist, TREE_FREE
from .rows import align_row, slide_row
from ..math3d import jit

N_ROWS = 3
TREE_KIND = TREE_FREE


@jit
def constraint(f, C, J):
    """Fill C[0:3], J[0:3] from the joint's world frames ``f``."""
    row = slide_row(f, f.axis_a, C, J, 0)
    row = align_row(f.axis_a, f.perp1_b, C, J, row)
    return align_row(f.axis_a, f.perp2_b, C, J, row)


# -- placement outside the kernels (joints/placement.py) ----------------------------------
def columns(axis, perp1, perp2):
    """Return two translations in the plane, then the rotation about its normal (the axis)."""
    return [linear(perp1), linear(perp2), angular(axis)]


def allowed(rel_quat, rel_pos, axis):
    """Return the position in the plane and the rotation about its normal."""
    rel_pos = rel_pos - axis * (rel_pos @ axis)
    rel_quat = np.concatenate(([rel_quat[0]], axis * (rel_quat[1:] @ axis)))
    return rel_quat / np.linalg.norm(rel_quat), rel_pos


def anchor_gap(gap, axis):
    """Return the gap off the plane."""
    return axis * (gap @ axis)


relative_pose = at_rest
relative_twist = no_twist
