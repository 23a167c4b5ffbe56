"""
Rotation helpers for set-up and facade code, on transforms3d (one copy of each).

The numba kernels keep their own compiled versions (physics/math3d.py); everything else (model
building, placing bodies, frames, sensors, the servo loops' load inertia) uses these.
Quaternions are (w, x, y, z), as in transforms3d and the rest of the package.
"""
import numpy as np
from transforms3d.axangles import axangle2mat
from transforms3d.euler import euler2mat
from transforms3d.quaternions import axangle2quat, mat2quat, qconjugate, qmult, quat2mat


def quat_to_matrix(quat):
    """Return the (3, 3) rotation matrix of a quaternion (w, x, y, z), normalised first."""
    return quat2mat(np.asarray(quat, dtype=float))


def quat_multiply(a, b):
    """Return the Hamilton product a * b of two quaternions (w, x, y, z)."""
    return qmult(a, b)


def quat_conjugate(quat):
    """Return the conjugate of a quaternion: the inverse of a unit quaternion."""
    return qconjugate(np.asarray(quat, dtype=float))


def quat_about_axis(axis, angle):
    """Return the unit quaternion of a rotation by angle (rad) about a unit axis."""
    return axangle2quat(axis, angle, is_normalized=True)


def matrix_to_quat(rotation):
    """Return the unit quaternion (w, x, y, z) of a rotation matrix, with w >= 0."""
    q = mat2quat(np.asarray(rotation, dtype=float))
    q = q / np.linalg.norm(q)
    return -q if q[0] < 0.0 else q


def rpy_to_matrix(rpy):
    """Return Rz(yaw) Ry(pitch) Rx(roll), the rotation of URDF roll-pitch-yaw angles (rad)."""
    roll, pitch, yaw = (float(a) for a in rpy)
    return euler2mat(roll, pitch, yaw, 'sxyz')


def axis_angle_matrix(axis, angle):
    """Return the (3, 3) rotation by angle (rad) about an axis of any length; identity for 0."""
    if np.linalg.norm(axis) == 0.0:
        return np.eye(3)
    return axangle2mat(axis, angle)


def relative_quat(parent, child):
    """Return the orientation of ``child`` in ``parent``, conj(parent) * child, w >= 0, unit."""
    q = qmult(qconjugate(np.asarray(parent, dtype=float)), np.asarray(child, dtype=float))
    q = q / np.linalg.norm(q)
    return tuple(float(v) for v in (-q if q[0] < 0.0 else q))


# -- batched forms (transforms3d has none; scipy's Rotation takes about 100 us for the 24
# links the node poses 200 times a second, these about 15) --------------------------------------
def quats_multiply(a, b):
    """Return the Hamilton products a_k * b_k of two (n, 4) arrays of quaternions (w, x, y, z)."""
    aw, ax, ay, az = a.T
    bw, bx, by, bz = b.T
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[:, 0] = aw * bw - ax * bx - ay * by - az * bz
    out[:, 1] = aw * bx + ax * bw + ay * bz - az * by
    out[:, 2] = aw * by - ax * bz + ay * bw + az * bx
    out[:, 3] = aw * bz + ax * by - ay * bx + az * bw
    return out


def quats_rotate(q, v, inverse=False):
    """Return R(q_k) v_k (or R(q_k)^T v_k) for (n, 4) unit quaternions and (n, 3) vectors."""
    w, x, y, z = q.T
    if inverse:
        x, y, z = -x, -y, -z
    vx, vy, vz = v.T
    out = np.empty(np.broadcast_shapes(v.shape, (len(q), 3)))
    out[:, 0] = ((1.0 - 2.0 * (y * y + z * z)) * vx + 2.0 * (x * y - w * z) * vy
                 + 2.0 * (x * z + w * y) * vz)
    out[:, 1] = (2.0 * (x * y + w * z) * vx + (1.0 - 2.0 * (x * x + z * z)) * vy
                 + 2.0 * (y * z - w * x) * vz)
    out[:, 2] = (2.0 * (x * z - w * y) * vx + 2.0 * (y * z + w * x) * vy
                 + (1.0 - 2.0 * (x * x + y * y)) * vz)
    return out
