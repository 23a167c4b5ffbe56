"""Building blocks shared by the joint types: 1-D velocity-constraint rows for two bodies.

A row is the Jacobian of one scalar position constraint C(x) with respect to the two bodies'
twists: dC/dt = J v with J = [lin_a, ang_a, lin_b, ang_b] (world frame), stored as
``J[row, slot, 0:3]`` (linear) and ``J[row, slot, 3:6]`` (angular), slot 0 = parent body a,
slot 1 = child body b.  Each helper writes C[row] and J[row] and returns the next row index.
(Formulation as in Box2D v3 ``joint.c``/``revolute_joint.c`` and Jolt
``PointConstraintPart``/``HingeRotationConstraintPart``/``RotationEulerConstraintPart``.)
"""
import numpy as np

from ..math3d import cross, dot3, jit, rotation_error


@jit
def point_rows(anchor_a, anchor_b, xa, xb, C, J, row):
    """Coincident points: C = p_b - p_a (3 rows along world x, y, z).

    dC/dt = v_b + w_b x r_b - v_a - w_a x r_a, with r the anchor relative to the body's COM,
    so for axis e: lin_a = -e, ang_a = -(r_a x e), lin_b = e, ang_b = r_b x e.
    """
    ra = anchor_a - xa
    rb = anchor_b - xb
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        C[row] = anchor_b[k] - anchor_a[k]
        J[row, 0, 0:3] = -e
        J[row, 0, 3:6] = -cross(ra, e)
        J[row, 1, 0:3] = e
        J[row, 1, 3:6] = cross(rb, e)
        row += 1
    return row


@jit
def slide_row(n, anchor_a, anchor_b, xa, xb, C, J, row):
    """Distance of p_b from the plane through p_a with normal n fixed in body a: C = (p_b - p_a).n.

    dC/dt = n.(v_b + w_b x r_b - v_a - w_a x r_a) + (p_b - p_a).(w_a x n)
          = n.(v_b + w_b x r_b - v_a - w_a x r_a'),  r_a' = p_b - x_a (the lever to p_b).
    """
    ra = anchor_b - xa
    rb = anchor_b - xb
    d = anchor_b - anchor_a
    C[row] = dot3(d, n)
    J[row, 0, 0:3] = -n
    J[row, 0, 3:6] = -cross(ra, n)
    J[row, 1, 0:3] = n
    J[row, 1, 3:6] = cross(rb, n)
    return row + 1


@jit
def align_row(a1, b2, C, J, row):
    """Keep axis a1 (on body a) perpendicular to b2 (on body b): C = a1.b2.

    dC/dt = (w_a x a1).b2 + a1.(w_b x b2) = (w_b - w_a).(b2 x a1).
    """
    g = cross(b2, a1)
    C[row] = dot3(a1, b2)
    J[row, 0, 0:3] = 0.0
    J[row, 0, 3:6] = -g
    J[row, 1, 0:3] = 0.0
    J[row, 1, 3:6] = g
    return row + 1


@jit
def lock_rows(q_parent_joint, q_child_joint, r_parent_joint, C, J, row):
    """Equal orientations of the joint frame seen from a and b (3 rows along world x, y, z).

    q_err = q_pj^-1 q_cj; a small relative rotation d (world) of b gives q_err = exp(R_pj^T d),
    so C = R_pj * 2 vec(q_err) and dC/dt = w_b - w_a: ang_a = -e, ang_b = e.
    """
    qe = np.empty(4)
    # q_pj^-1 * q_cj written out (conjugate of the first factor)
    a = q_parent_joint
    b = q_child_joint
    qe[0] = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
    qe[1] = a[0] * b[1] - a[1] * b[0] - a[2] * b[3] + a[3] * b[2]
    qe[2] = a[0] * b[2] + a[1] * b[3] - a[2] * b[0] - a[3] * b[1]
    qe[3] = a[0] * b[3] - a[1] * b[2] + a[2] * b[1] - a[3] * b[0]
    err = r_parent_joint @ rotation_error(qe)
    for k in range(3):
        C[row] = err[k]
        J[row, 0, 0:3] = 0.0
        J[row, 0, 3:6] = 0.0
        J[row, 1, 0:3] = 0.0
        J[row, 1, 3:6] = 0.0
        J[row, 0, 3 + k] = -1.0
        J[row, 1, 3 + k] = 1.0
        row += 1
    return row
