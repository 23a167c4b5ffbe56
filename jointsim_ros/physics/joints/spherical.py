"""
Spherical (ball) joints: three rotational degrees of freedom.

Position constraint (3 rows): coincident anchors, C = p_b - p_a (``rows.point_rows``).
"""
import numpy as np

from .placement import angular, at_rest, no_twist, TREE_FREE, whole_gap
from .rows import point_rows
from ..math3d import jit

N_ROWS = 3
TREE_KIND = TREE_FREE


@jit
def constraint(f, C, J):
    """Fill C[0:3], J[0:3] from the joint's world frames ``f``."""
    return point_rows(f, C, J, 0)


# -- placement outside the kernels (joints/placement.py) ----------------------------------
def columns(axis, perp1, perp2):
    """Return three rotations, about the joint frame's axes."""
    return [angular(e) for e in np.eye(3)]


def allowed(rel_quat, rel_pos, axis):
    """Return the orientation, with the anchors together."""
    return rel_quat, np.zeros(3)


relative_pose = at_rest
relative_twist = no_twist
anchor_gap = whole_gap
