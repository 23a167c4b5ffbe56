"""
3-D math for the compiled engine on value tuples (no heap allocation in the hot loops).

A vector is a 3-tuple of floats, a quaternion a 4-tuple (w, x, y, z), a matrix a 3-tuple of
row 3-tuples.  ``read3``/``write3`` move vectors in and out of the state arrays.
"""
import numpy as np

# the engine's decorators (physics/compile/compiler.py), which the engine modules import from here
from .compile.compiler import (entry, jit, jit_inline, jit_inline_entry,  # noqa: F401
                               jit_views)


@jit
def read3(a, i):
    """Row i of an (n, 3) array as a vector."""
    return (a[i, 0], a[i, 1], a[i, 2])


@jit
def read4(a, i):
    """Row i of an (n, 4) array as a quaternion."""
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3])


@jit
def read_mat(a, i):
    """Matrix i of an (n, 3, 3) array."""
    return ((a[i, 0, 0], a[i, 0, 1], a[i, 0, 2]),
            (a[i, 1, 0], a[i, 1, 1], a[i, 1, 2]),
            (a[i, 2, 0], a[i, 2, 1], a[i, 2, 2]))


@jit
def write3(a, i, v):
    """Store vector v in row i of an (n, 3) array."""
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]


@jit
def write4(a, i, q):
    """Store quaternion q in row i of an (n, 4) array."""
    a[i, 0] = q[0]
    a[i, 1] = q[1]
    a[i, 2] = q[2]
    a[i, 3] = q[3]


@jit
def write_mat(a, i, m):
    """Store matrix m as a[i]."""
    for r in range(3):
        a[i, r, 0] = m[r][0]
        a[i, r, 1] = m[r][1]
        a[i, r, 2] = m[r][2]


@jit
def vadd(a, b):
    """Return a + b."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jit
def vsub(a, b):
    """Return a - b."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jit
def vscale(a, s):
    """Return s a."""
    return (a[0] * s, a[1] * s, a[2] * s)


@jit
def vneg(a):
    """Return -a."""
    return (-a[0], -a[1], -a[2])


@jit
def dot3(a, b):
    """Return a . b."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def cross(a, b):
    """Return a x b."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@jit
def mat_vec(m, v):
    """Return m v."""
    return (dot3(m[0], v), dot3(m[1], v), dot3(m[2], v))


@jit
def mat_t_vec(m, v):
    """Return m^T v."""
    return (m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
            m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
            m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2])


@jit
def mat_sandwich(r, m):
    """Return r m r^T (a body-frame tensor expressed in the world)."""
    rm = (mat_t_vec(m, r[0]), mat_t_vec(m, r[1]), mat_t_vec(m, r[2]))  # rows of r m (m symmetric)
    return ((dot3(rm[0], r[0]), dot3(rm[0], r[1]), dot3(rm[0], r[2])),
            (dot3(rm[1], r[0]), dot3(rm[1], r[1]), dot3(rm[1], r[2])),
            (dot3(rm[2], r[0]), dot3(rm[2], r[1]), dot3(rm[2], r[2])))


@jit
def mat_mul(a, b):
    """Return the matrix product a b."""
    return ((a[0][0] * b[0][0] + a[0][1] * b[1][0] + a[0][2] * b[2][0],
             a[0][0] * b[0][1] + a[0][1] * b[1][1] + a[0][2] * b[2][1],
             a[0][0] * b[0][2] + a[0][1] * b[1][2] + a[0][2] * b[2][2]),
            (a[1][0] * b[0][0] + a[1][1] * b[1][0] + a[1][2] * b[2][0],
             a[1][0] * b[0][1] + a[1][1] * b[1][1] + a[1][2] * b[2][1],
             a[1][0] * b[0][2] + a[1][1] * b[1][2] + a[1][2] * b[2][2]),
            (a[2][0] * b[0][0] + a[2][1] * b[1][0] + a[2][2] * b[2][0],
             a[2][0] * b[0][1] + a[2][1] * b[1][1] + a[2][2] * b[2][1],
             a[2][0] * b[0][2] + a[2][1] * b[1][2] + a[2][2] * b[2][2]))


@jit
def quat_mul(a, b):
    """Hamilton product a * b."""
    return (a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0])


@jit
def quat_conj(q):
    """Conjugate, the inverse of a unit quaternion."""
    return (q[0], -q[1], -q[2], -q[3])


@jit
def quat_to_mat(q):
    """Rotation matrix of a unit quaternion."""
    w, x, y, z = q
    return ((1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)),
            (2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)),
            (2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)))


@jit
def quat_from_rotvec(v):
    """
    Exact unit quaternion of the rotation vector v (axis * angle, rad).

    sin(a/2)/a comes from its series below 1e-4 rad, so the result is exact to rounding.
    """
    angle = np.sqrt(dot3(v, v))
    if angle < 1e-4:
        s = 0.5 - angle * angle / 48.0
    else:
        s = np.sin(0.5 * angle) / angle
    return (np.cos(0.5 * angle), s * v[0], s * v[1], s * v[2])


@jit
def quat_normalized(q):
    """Return q / |q| (removes rounding only; every rotation update in the engine is exact)."""
    n = 1.0 / np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] * n, q[1] * n, q[2] * n, q[3] * n)


@jit
def rotate_by(q, v):
    """exp(v) q: q turned by the world rotation vector v, renormalised."""
    return quat_normalized(quat_mul(quat_from_rotvec(v), q))


@jit
def quat_twist_angle(q, axis):
    """Signed angle in (-pi, pi] of the twist of unit quaternion q about the unit axis."""
    s = dot3((q[1], q[2], q[3]), axis)
    if q[0] >= 0.0:
        return 2.0 * np.arctan2(s, q[0])
    return 2.0 * np.arctan2(-s, -q[0])


@jit
def rotation_error(q):
    """Small-rotation vector of a unit quaternion: 2 sign(w) (x, y, z), rad."""
    s = 2.0 if q[0] >= 0.0 else -2.0
    return (s * q[1], s * q[2], s * q[3])


@jit
def invert_spd(k, n, out, scratch):
    """
    Invert the leading n x n block of the SPD matrix k into out.

    Gauss-Jordan without pivoting (stable for SPD) on ``scratch`` (6 x 12); a pivot below 1e-12
    of the largest diagonal entry zeroes that row and column of the inverse, so a redundant
    constraint row takes no impulse.
    """
    a = scratch
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(k[i, i]))
        for j in range(12):
            a[i, j] = 0.0
        for j in range(n):
            a[i, j] = k[i, j]
        a[i, 6 + i] = 1.0
    tiny = 1e-12 * scale if scale > 0.0 else 1e-300
    dead = 0
    for col in range(n):
        if abs(a[col, col]) <= tiny:
            dead |= 1 << col
            for r in range(n):
                a[r, col] = 0.0
                a[col, r] = 0.0
            continue
        p = 1.0 / a[col, col]
        for j in range(12):
            a[col, j] *= p
        for r in range(n):
            if r != col and a[r, col] != 0.0:
                f = a[r, col]
                for j in range(12):
                    a[r, j] -= f * a[col, j]
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0 if ((dead >> i) & 1 or (dead >> j) & 1) else a[i, 6 + j]
