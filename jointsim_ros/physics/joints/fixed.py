"""
Fixed joints kept as welds (force/torque sensors, ``keep_fixed_joints``).

Position constraint (6 rows): coincident anchors C_1..3 = p_b - p_a and equal orientations
C_4..6 = R_pj 2 vec(q_pj^-1 q_cj).  Jacobian: ``rows.point_rows`` and ``rows.lock_rows``.
"""
import numpy as np

from .placement import at_rest, IDENTITY, no_columns, no_twist, TREE_FREE, whole_gap
from .rows import lock_rows, point_rows
from ..math3d import jit

N_ROWS = 6
TREE_KIND = TREE_FREE


@jit
def constraint(f, C, J):
    """Fill C[0:6], J[0:6] from the joint's world frames ``f``."""
    row = point_rows(f, C, J, 0)
    return lock_rows(f, C, J, row)


# -- placement outside the kernels (joints/placement.py) ----------------------------------
def allowed(rel_quat, rel_pos, axis):
    """Return the identity pose: nothing moves."""
    return IDENTITY.copy(), np.zeros(3)


relative_pose = at_rest
relative_twist = no_twist
anchor_gap = whole_gap
columns = no_columns
