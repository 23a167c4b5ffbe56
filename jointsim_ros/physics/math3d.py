"""Small 3-D helpers compiled with numba: quaternions (w, x, y, z), rotations, 3x3 algebra.

Everything here works on plain float64 arrays so the solver's inner loops stay in nopython code.
"""
import numba
import numpy as np

jit = numba.njit(cache=True, fastmath=False, nogil=True)


@jit
def quat_mul(a, b):
    """Hamilton product a * b of two quaternions (w, x, y, z)."""
    out = np.empty(4)
    out[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3]
    out[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2]
    out[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1]
    out[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]
    return out


@jit
def quat_conj(q):
    """Conjugate (the inverse of a unit quaternion)."""
    return np.array((q[0], -q[1], -q[2], -q[3]))


@jit
def quat_to_mat(q):
    """Rotation matrix (3, 3) of a unit quaternion."""
    w, x, y, z = q[0], q[1], q[2], q[3]
    m = np.empty((3, 3))
    m[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    m[0, 1] = 2.0 * (x * y - w * z)
    m[0, 2] = 2.0 * (x * z + w * y)
    m[1, 0] = 2.0 * (x * y + w * z)
    m[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    m[1, 2] = 2.0 * (y * z - w * x)
    m[2, 0] = 2.0 * (x * z - w * y)
    m[2, 1] = 2.0 * (y * z + w * x)
    m[2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return m


@jit
def quat_from_rotvec(v):
    """Exact unit quaternion of the rotation vector v (axis * angle, rad).

    Uses the series of sin(a/2)/a below 1e-4 rad, so it is exact to rounding at any angle.
    """
    angle = np.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    half = 0.5 * angle
    if angle < 1e-4:
        s = 0.5 - angle * angle / 48.0
    else:
        s = np.sin(half) / angle
    return np.array((np.cos(half), s * v[0], s * v[1], s * v[2]))


@jit
def quat_normalized(q):
    """q / |q| (removes rounding only; every update in the engine is an exact rotation)."""
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return q / n


@jit
def quat_rotate(q, v):
    """Rotate vector v by unit quaternion q."""
    return quat_to_mat(q) @ v


@jit
def quat_axis_angle_about(q, axis):
    """Signed angle (rad, in (-pi, pi]) of the twist of q about the unit axis (swing-twist)."""
    s = q[1] * axis[0] + q[2] * axis[1] + q[3] * axis[2]
    return 2.0 * np.arctan2(s, q[0]) if q[0] >= 0.0 else 2.0 * np.arctan2(-s, -q[0])


@jit
def cross(a, b):
    """Cross product of two 3-vectors."""
    return np.array((a[1] * b[2] - a[2] * b[1],
                     a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]))


@jit
def dot3(a, b):
    """Dot product of two 3-vectors."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jit
def perpendicular_basis(a):
    """Two unit vectors b, c with (a, b, c) right-handed and orthonormal (a unit)."""
    if abs(a[0]) < 0.57735:
        t = np.array((1.0, 0.0, 0.0))
    else:
        t = np.array((0.0, 1.0, 0.0))
    b = cross(a, t)
    b /= np.sqrt(dot3(b, b))
    c = cross(a, b)
    return b, c


@jit
def rotation_error(q):
    """Small-rotation vector of a unit quaternion: 2 * sign(w) * (x, y, z), rad."""
    s = 2.0 if q[0] >= 0.0 else -2.0
    return np.array((s * q[1], s * q[2], s * q[3]))


@jit
def invert_spd(k, n, out):
    """Invert the leading n x n block of k (symmetric positive definite) into out.

    Gauss-Jordan with partial pivoting; a pivot below 1e-12 of the largest diagonal entry
    makes that row and column of the inverse zero (a redundant constraint row takes no impulse).
    """
    a = np.zeros((6, 12))
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(k[i, i]))
        for j in range(n):
            a[i, j] = k[i, j]
        a[i, 6 + i] = 1.0
    tiny = 1e-12 * scale if scale > 0.0 else 1e-300
    dead = np.zeros(6, dtype=np.bool_)
    for col in range(n):
        piv = col
        best = abs(a[col, col])
        for r in range(col + 1, n):
            if abs(a[r, col]) > best:
                best = abs(a[r, col])
                piv = r
        if best <= tiny:
            dead[col] = True
            continue
        if piv != col:
            for j in range(12):
                t = a[col, j]
                a[col, j] = a[piv, j]
                a[piv, j] = t
        p = a[col, col]
        for j in range(12):
            a[col, j] /= p
        for r in range(n):
            if r != col and a[r, col] != 0.0:
                f = a[r, col]
                for j in range(12):
                    a[r, j] -= f * a[col, j]
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0 if (dead[i] or dead[j]) else a[i, 6 + j]
