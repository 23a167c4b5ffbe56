"""
Revolute and continuous joints: one rotational degree of freedom about the joint axis.

Position constraint (5 rows): the anchors coincide, C_1..3 = p_b - p_a; and the axis a1 (fixed
in the parent's joint frame) stays perpendicular to the two vectors b2, c2 that span the plane
normal to the same axis in the child's joint frame, C_4 = a1.b2, C_5 = a1.c2.
Jacobian: ``rows.point_rows`` and ``rows.align_row``; effective mass K = J M^-1 J^T (5 x 5).
Coordinate q = twist angle of q_pj^-1 q_cj about the axis; dq/dt = a1.(w_b - w_a).
"""
import numpy as np

from .placement import angular, keep_all, TREE_ROTATION, whole_gap
from .rows import align_row, point_rows, set_row
from ..math3d import jit, jit_inline, quat_conj, quat_mul, quat_twist_angle, vneg, vscale
from ...rotations import quat_about_axis

N_ROWS = 5
TREE_KIND = TREE_ROTATION


@jit
def constraint(f, C, J):
    """Fill C[0:5], J[0:5] from the joint's world frames ``f`` (see joints.JointFrames)."""
    row = point_rows(f, C, J, 0)
    row = align_row(f.axis_a, f.perp1_b, C, J, row)
    return align_row(f.axis_a, f.perp2_b, C, J, row)


@jit_inline
def coordinate(f, axis):
    """Return q: the twist angle of q_pj^-1 q_cj about the axis, in (-pi, pi] (rad)."""
    return quat_twist_angle(quat_mul(quat_conj(f.quat_a), f.quat_b), axis)


@jit_inline
def coordinate_row(axis_w, lever_a, lever_b, J, row):
    """Write dq/dt = a.(w_b - w_a) into J[row] (world axis ``axis_w``; levers unused)."""
    zero = (0.0, 0.0, 0.0)
    set_row(J, row, zero, vneg(axis_w), zero, axis_w)


@jit_inline
def coordinate_motion(axis_w, shift):
    """Return (rotation vector, translation) that moves the coordinate by ``shift`` (rad)."""
    return vscale(axis_w, shift), (0.0, 0.0, 0.0)


# -- placement outside the kernels (joints/placement.py) ----------------------------------
def columns(axis, perp1, perp2):
    """Return one rotation about the axis."""
    return [angular(axis)]


def relative_pose(axis, q):
    """Return the pose rotated by q (rad) about the axis, anchors together."""
    return quat_about_axis(axis, q), np.zeros(3)


def relative_twist(axis, rate):
    """Return the twist turning at ``rate`` (rad/s) about the axis."""
    return axis * rate, np.zeros(3)


allowed = keep_all  # a scalar joint is placed from its coordinate
anchor_gap = whole_gap
