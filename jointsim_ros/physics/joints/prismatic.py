"""
Prismatic joints: one translational degree of freedom along the joint axis.

Position constraint (5 rows): p_b stays on the line through p_a along the parent's axis a1,
C_1 = (p_b - p_a).b1, C_2 = (p_b - p_a).c1 with b1, c1 normal to a1 in the parent's joint frame,
and the joint frames keep equal orientation, C_3..5 = R_pj 2 vec(q_pj^-1 q_cj).
Jacobian: ``rows.slide_row`` and ``rows.lock_rows``.
Coordinate q = (p_b - p_a).a1; dq/dt = a1.(v_b + w_b x r_b - v_a - w_a x r_a').
"""
import numpy as np

from .placement import IDENTITY, keep_all, linear, TREE_SLIDE
from .rows import lock_rows, set_row, slide_row
from ..math3d import cross, dot3, jit, jit_inline, vneg, vscale, vsub

N_ROWS = 5
TREE_KIND = TREE_SLIDE


@jit
def constraint(f, C, J):
    """Fill C[0:5], J[0:5] from the joint's world frames ``f``."""
    row = slide_row(f, f.perp1_a, C, J, 0)
    row = slide_row(f, f.perp2_a, C, J, row)
    return lock_rows(f, C, J, row)


@jit_inline
def coordinate(f, axis):
    """Return q = (p_b - p_a).a1, m."""
    return dot3(vsub(f.anchor_b, f.anchor_a), f.axis_a)


@jit_inline
def coordinate_row(axis_w, lever_a, lever_b, J, row):
    """
    Write dq/dt = a1.(v_b + w_b x r_b - v_a - w_a x r_a) into J[row].

    ``lever_a`` and ``lever_b``: the child anchor relative to each body's COM (world, m).
    """
    set_row(J, row, vneg(axis_w), vneg(cross(lever_a, axis_w)), axis_w,
            cross(lever_b, axis_w))


@jit_inline
def coordinate_motion(axis_w, shift):
    """Return (rotation vector, translation) that moves the coordinate by ``shift`` (m)."""
    return (0.0, 0.0, 0.0), vscale(axis_w, shift)


# -- placement outside the kernels (joints/placement.py) ----------------------------------
def columns(axis, perp1, perp2):
    """Return one translation along the axis."""
    return [linear(axis)]


def relative_pose(axis, q):
    """Return the pose slid by q (m) along the axis, orientations equal."""
    return IDENTITY.copy(), axis * q


def relative_twist(axis, rate):
    """Return the twist sliding at ``rate`` (m/s) along the axis."""
    return np.zeros(3), axis * rate


def anchor_gap(gap, axis):
    """Return the gap off the axis line."""
    return gap - axis * (gap @ axis)


allowed = keep_all  # a scalar joint is placed from its coordinate
