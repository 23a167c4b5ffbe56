"""
Building blocks shared by the joint types: 1-D velocity-constraint rows for two bodies.

A row is the Jacobian of one scalar position constraint C(x) with respect to the two bodies'
twists: dC/dt = J v with J = [lin_a, ang_a, lin_b, ang_b] (world frame), stored as
``J[row, slot, 0:3]`` (linear) and ``J[row, slot, 3:6]`` (angular), slot 0 = parent body a,
slot 1 = child body b.  Each helper writes C[row] and J[row] and returns the next row index;
given ``J=None`` it writes only C (the position projection needs no Jacobian: numba compiles
that case separately and drops the Jacobian's arithmetic).
(Formulation as in Box2D v3 ``joint.c``/``revolute_joint.c`` and Jolt
``PointConstraintPart``/``HingeRotationConstraintPart``/``RotationEulerConstraintPart``.)
"""
from ..math3d import cross, dot3, jit, mat_vec, quat_conj, quat_mul, rotation_error, vneg, vsub

_ZERO = (0.0, 0.0, 0.0)
_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


@jit
def set_row(J, row, lin_a, ang_a, lin_b, ang_b):
    """Store one two-body Jacobian row (slots 0 and 1)."""
    for c in range(3):
        J[row, 0, c] = lin_a[c]
        J[row, 0, 3 + c] = ang_a[c]
        J[row, 1, c] = lin_b[c]
        J[row, 1, 3 + c] = ang_b[c]


@jit
def point_rows(f, C, J, row):
    """
    Coincident points: C = p_b - p_a (3 rows along world x, y, z).

    dC/dt = v_b + w_b x r_b - v_a - w_a x r_a, with r the anchor relative to the body's COM,
    so for axis e: lin_a = -e, ang_a = -(r_a x e), lin_b = e, ang_b = r_b x e.
    """
    ra = vsub(f.anchor_a, f.xa)
    rb = vsub(f.anchor_b, f.xb)
    d = vsub(f.anchor_b, f.anchor_a)
    for k in range(3):
        e = _AXES[k]
        C[row] = d[k]
        if J is not None:
            set_row(J, row, vneg(e), vneg(cross(ra, e)), e, cross(rb, e))
        row += 1
    return row


@jit
def slide_row(f, n, C, J, row):
    """
    Distance of p_b from the plane through p_a with normal n fixed in body a: C = (p_b - p_a).n.

    dC/dt = n.(v_b + w_b x r_b - v_a - w_a x r_a) + (p_b - p_a).(w_a x n)
          = n.(v_b + w_b x r_b - v_a - w_a x r_a'),  r_a' = p_b - x_a (the lever to p_b).
    """
    ra = vsub(f.anchor_b, f.xa)
    rb = vsub(f.anchor_b, f.xb)
    C[row] = dot3(vsub(f.anchor_b, f.anchor_a), n)
    if J is not None:
        set_row(J, row, vneg(n), vneg(cross(ra, n)), n, cross(rb, n))
    return row + 1


@jit
def align_row(a1, b2, C, J, row):
    """
    Keep axis a1 (on body a) perpendicular to b2 (on body b): C = a1.b2.

    dC/dt = (w_a x a1).b2 + a1.(w_b x b2) = (w_b - w_a).(b2 x a1).
    """
    C[row] = dot3(a1, b2)
    if J is not None:
        g = cross(b2, a1)
        set_row(J, row, _ZERO, vneg(g), _ZERO, g)
    return row + 1


@jit
def lock_rows(f, C, J, row):
    """
    Equal orientations of the joint frame seen from a and b (3 rows along world x, y, z).

    q_err = q_pj^-1 q_cj; a small relative rotation d (world) of b gives q_err = exp(R_pj^T d),
    so C = R_pj 2 vec(q_err) and dC/dt = w_b - w_a: ang_a = -e, ang_b = e.
    """
    err = mat_vec(f.rot_a, rotation_error(quat_mul(quat_conj(f.quat_a), f.quat_b)))
    for k in range(3):
        e = _AXES[k]
        C[row] = err[k]
        if J is not None:
            set_row(J, row, _ZERO, vneg(e), _ZERO, e)
        row += 1
    return row
