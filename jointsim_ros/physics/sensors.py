"""
The wrench a joint transmits, from the accumulated impulses of all its rows in the last step.

Every row of the joint acts on its child body through the child's slot of its Jacobian,
J_child = [d, r x d] (a force d through the child's COM and the torque r x d about it), so the
impulse the parent gave the child over the step is
    P_child = sum over rows of J_child^T lambda
over the joint's bilateral block (which also holds the reactions of the coordinate rows),
its coordinate rows (the drive's output effort, friction, damping, limits, speed limits and
the commanded effort's impulse tau dt, all along the coordinate Jacobian), the Coulomb rows
of a spherical or planar joint, and the mimic blocks that couple it.  Divided by dt it is the
mean wrench of the step; the Jacobians are this step's, taken at the poses the step started
from (``Work.backup``), so the caller moves the torque to the sensor point with those poses.
"""
from .axes import coordinate_jacobian
from .math3d import (cross, entry, mat_mul, mat_sandwich, mat_t_vec, mat_vec, quat_mul,
                     quat_to_mat, read3, read4, read_mat)


@entry
def joint_impulse_on_child(j, x, f, joints, blocks, mimics, axes, state, work, dt, out):
    """
    Impulse the parent applied to joint j's child in the last step, about the child's COM.

    Args:
        j: joint index.
        x: the joint's axis index (coordinate rows), -1 if none.
        f: the joint's multi-DOF friction index, -1 if none.
        joints: Joints (arrays.py).
        blocks: Blocks.
        mimics: Mimics.
        axes: Axes.
        state: State after the step.
        work: Work after the step (this step's Jacobians and start poses).
        dt: time step, s.
        out: (6,) written with the force impulse (N s) and the torque impulse about the child's
            COM (N m s), world frame.
    """
    for c in range(6):
        out[c] = 0.0
    k = joints.block[j]
    if k >= 0:
        for i in range(blocks.dim[k]):
            r = blocks.row0[k] + i
            for c in range(6):
                out[c] += work.row_J[r, 1, c] * state.row_impulse[r]
    for m in range(mimics.follower.shape[0]):
        slot = 1 if mimics.follower[m] == j else (3 if mimics.leader[m] == j else -1)
        if slot < 0:
            continue
        for kb in range(blocks.kind.shape[0]):
            if blocks.kind[kb] == 1 and blocks.source[kb] == m:
                r = blocks.row0[kb]
                for c in range(6):
                    out[c] += work.row_J[r, slot, c] * state.row_impulse[r]
    coordinate = state.joint_effort[j] * dt
    if x >= 0:
        for row in range(state.axis_impulse.shape[1]):
            coordinate += state.axis_impulse[x, row]
        d = axes.drive[x]
        if d >= 0:
            coordinate += state.drive_effort[d] * dt  # the gear and its losses
    if coordinate != 0.0:
        coordinate_jacobian(j, joints.type, joints.body, joints.axis_body, joints.cpos,
                            work.rot, state.body_pos, work.jrow, 0)
        for c in range(6):
            out[c] += work.jrow[0, 1, c] * coordinate
    if f >= 0:
        for row in range(3):
            for c in range(6):
                out[c] += work.free_J[f, row, 1, c] * state.free_impulse[f, row]


@entry
def imu_reading(body_quat, body_lin_vel, body_ang_mom, inv_inertia, start, b, offset,
                rot_in_body, quat_in_body, gravity, dt, moving, out):
    """
    Write an IMU's exact reading (orientation, angular velocity, specific force) of the step.

    The acceleration is the change of the sensor point's velocity over the step (``start``:
    the bodies at its start), seen in the sensor's axes halfway through the step (the
    normalised sum of the two quaternions is their exact slerp midpoint), so a point turning
    at w gets its centripetal w^2 r with no sideways part of order w dt (sim/sensing.py).

    Args:
        body_quat: the State's (n_body, 4) orientations (w, x, y, z).
        body_lin_vel: the State's (n_body, 3) COM velocities, m/s.
        body_ang_mom: the State's (n_body, 3) angular momenta about the COMs, N m s.
        inv_inertia: (n_body, 3, 3) body-frame inverse inertias.
        start: (n_body, 13) the bodies at the last step's start: pos, quat, lin vel, L.
        b: the sensor's body.
        offset: (3,) the sensor point from the body's COM, body frame, m.
        rot_in_body: (3, 3) the sensor's axes in the body frame.
        quat_in_body: (4,) the same as a quaternion (w, x, y, z).
        gravity: (3,) m/s^2.
        dt: the step, s.
        moving: False before the first step (no acceleration is read then).
        out: (10,) orientation (w, x, y, z; w >= 0), angular velocity in the sensor's axes
            (rad/s), specific force in the sensor's axes (m/s^2).
    """
    quat = read4(body_quat, b)
    rot = quat_to_mat(quat)
    iinv = read_mat(inv_inertia, b)
    w = mat_vec(mat_sandwich(rot, iinv), read3(body_ang_mom, b))
    off = (offset[0], offset[1], offset[2])
    arm = mat_vec(rot, off)
    wr = cross(w, arm)
    lin = read3(body_lin_vel, b)
    v = (lin[0] + wr[0], lin[1] + wr[1], lin[2] + wr[2])
    mount = ((rot_in_body[0, 0], rot_in_body[0, 1], rot_in_body[0, 2]),
             (rot_in_body[1, 0], rot_in_body[1, 1], rot_in_body[1, 2]),
             (rot_in_body[2, 0], rot_in_body[2, 1], rot_in_body[2, 2]))
    frame = mat_mul(rot, mount)
    accel = (0.0, 0.0, 0.0)
    middle = frame
    q0 = (start[b, 3], start[b, 4], start[b, 5], start[b, 6])
    if moving and (q0[0] != 0.0 or q0[1] != 0.0 or q0[2] != 0.0 or q0[3] != 0.0):
        rot0 = quat_to_mat(q0)
        w0 = mat_vec(mat_sandwich(rot0, iinv), (start[b, 10], start[b, 11], start[b, 12]))
        wr0 = cross(w0, mat_vec(rot0, off))
        accel = ((v[0] - start[b, 7] - wr0[0]) / dt, (v[1] - start[b, 8] - wr0[1]) / dt,
                 (v[2] - start[b, 9] - wr0[2]) / dt)
        sign = 1.0 if (q0[0] * quat[0] + q0[1] * quat[1] + q0[2] * quat[2]
                       + q0[3] * quat[3]) >= 0.0 else -1.0
        half = (sign * q0[0] + quat[0], sign * q0[1] + quat[1], sign * q0[2] + quat[2],
                sign * q0[3] + quat[3])
        norm = (half[0] * half[0] + half[1] * half[1] + half[2] * half[2]
                + half[3] * half[3]) ** 0.5
        middle = mat_mul(quat_to_mat((half[0] / norm, half[1] / norm, half[2] / norm,
                                      half[3] / norm)), mount)
    q = quat_mul(quat, (quat_in_body[0], quat_in_body[1], quat_in_body[2], quat_in_body[3]))
    sign = 1.0 if q[0] >= 0.0 else -1.0
    for k in range(4):
        out[k] = sign * q[k]
    rate = mat_t_vec(frame, w)
    force = mat_t_vec(middle, (accel[0] - gravity[0], accel[1] - gravity[1],
                               accel[2] - gravity[2]))
    for k in range(3):
        out[4 + k] = rate[k]
        out[7 + k] = force[k]
