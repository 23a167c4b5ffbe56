"""One time step of the engine, as a list of stages (Box2D v3 ``solver.c`` style).

Semi-implicit (symplectic) Euler in maximal coordinates:
    v+ = v + dt (g + F/m) + M^-1 J^T lambda,      L+ = L + dt tau + (J^T lambda)_angular,
    w+ = I_world(q)^-1 L+,   x+ = x + dt v+,   q+ = exp(dt w+) q   (exact rotation),
with lambda from sequential impulses on J v+ + b = 0.  The bias b carries the constraint's
curvature over the step, b = (C(x + dt v) - C(x)) / dt - J v, evaluated with the velocity before
the solve, so the step aims at C(x+) = 0 like SHAKE/RATTLE instead of only J(x) v+ = 0; the
latter rotates velocity out of every turning joint and bleeds energy at (w dt)^2 per step.
Position drift left over is removed by a nonlinear Gauss-Seidel projection of the positions
(Box2D v2.3 ``SolvePositionConstraints``) that does not touch velocities, so it adds no energy.
"""
import numpy as np

from . import joints as jt
from .arrays import (INFO_BODY, INFO_POS_ERROR, INFO_STATUS, STATUS_DIVERGED, STATUS_OK)
from .math3d import jit, quat_from_rotvec, quat_mul, quat_normalized, quat_to_mat
from .solver import (block_constraint, block_mass_terms, block_velocity, joint_coordinate,
                     solve_velocity_blocks, warm_start)

#: Speeds beyond these are divergence (m/s, rad/s): nothing in a robot gets near them.
MAX_LINEAR_SPEED = 1.0e4
MAX_ANGULAR_SPEED = 1.0e5


@jit
def update_world_inertia(bodies, state, work):
    """Rotation, world inertia and inverse inertia of every body; w = I_world^-1 L."""
    for b in range(state.body_pos.shape[0]):
        r = quat_to_mat(state.body_quat[b])
        work.rot[b] = r
        work.inertia_w[b] = r @ bodies.inertia[b] @ r.T
        work.inv_inertia_w[b] = r @ bodies.inv_inertia[b] @ r.T
        work.vel[b, 0:3] = state.body_lin_vel[b]
        work.vel[b, 3:6] = work.inv_inertia_w[b] @ state.body_ang_mom[b]


@jit
def integrate_velocities(bodies, joints, state, work, dt, gravity):
    """Gravity on every body and commanded joint efforts as impulses along the joint rows."""
    for b in range(state.body_pos.shape[0]):
        work.vel[b, 0:3] += dt * gravity
    jrow = np.zeros((1, 4, 6))
    for j in range(joints.type.shape[0]):
        tau = state.joint_effort[j]
        if tau == 0.0:
            continue
        joint_coordinate(j, joints, state.body_pos, state.body_quat, state.joint_q, jrow, 0)
        for s in range(2):
            b = joints.body[j, s]
            if b < 0:
                continue
            work.vel[b, 0:3] += bodies.inv_mass[b] * jrow[0, s, 0:3] * (tau * dt)
            work.vel[b, 3:6] += work.inv_inertia_w[b] @ jrow[0, s, 3:6] * (tau * dt)


@jit
def predict_poses(state, work, dt):
    """Poses after the step if the current velocities were kept (for the curvature bias)."""
    for b in range(state.body_pos.shape[0]):
        work.pred_pos[b] = state.body_pos[b] + dt * work.vel[b, 0:3]
        work.pred_quat[b] = quat_mul(quat_from_rotvec(dt * work.vel[b, 3:6]), state.body_quat[b])


@jit
def prepare_blocks(blocks, bodies, joints, mimics, state, work, dt):
    """Jacobians, effective masses and curvature biases of every block."""
    C_pred = np.zeros(6)
    J_pred = np.zeros((6, 4, 6))
    jv = np.zeros(6)
    for k in range(blocks.dim.shape[0]):
        r0 = blocks.row0[k]
        d = blocks.dim[k]
        block_constraint(k, blocks, joints, mimics, state.body_pos, state.body_quat,
                         state.joint_q, work.row_C[r0:r0 + d], work.row_J[r0:r0 + d])
        block_constraint(k, blocks, joints, mimics, work.pred_pos, work.pred_quat,
                         state.joint_q, C_pred, J_pred)
        block_mass_terms(k, blocks, bodies, work)
        block_velocity(k, blocks, work, jv)
        for i in range(d):
            work.row_bias[r0 + i] = (C_pred[i] - work.row_C[r0 + i]) / dt - jv[i]


@jit
def store_angular_momentum(state, work):
    """Linear velocity and angular momentum L = I_world w from the solved velocities."""
    for b in range(state.body_pos.shape[0]):
        state.body_lin_vel[b] = work.vel[b, 0:3]
        state.body_ang_mom[b] = work.inertia_w[b] @ work.vel[b, 3:6]


@jit
def integrate_positions(state, work, dt):
    """x += dt v; q = exp(dt w) q (exact rotation; normalising only removes rounding)."""
    for b in range(state.body_pos.shape[0]):
        state.body_pos[b] += dt * work.vel[b, 0:3]
        q = quat_mul(quat_from_rotvec(dt * work.vel[b, 3:6]), state.body_quat[b])
        state.body_quat[b] = quat_normalized(q)
        work.rot[b] = quat_to_mat(state.body_quat[b])


@jit
def project_positions(blocks, joints, mimics, state, work, iterations, tolerance):
    """Nonlinear Gauss-Seidel on the position errors; returns the largest error left.

    Each pass moves the two bodies of a block by dx = M^-1 J^T mu, dtheta = I^-1 J_ang^T mu with
    mu = -K^-1 C(x), using this step's J and K (a quasi-Newton step, exact to first order).
    """
    C = np.zeros(6)
    J = np.zeros((6, 4, 6))
    mu = np.zeros(6)
    largest = 0.0
    for it in range(iterations + 1):
        largest = 0.0
        for k in range(blocks.dim.shape[0]):
            d = blocks.dim[k]
            r0 = blocks.row0[k]
            block_constraint(k, blocks, joints, mimics, state.body_pos, state.body_quat,
                             state.joint_q, C, J)
            for i in range(d):
                largest = max(largest, abs(C[i]))
            if it == iterations:
                continue
            for i in range(d):
                acc = 0.0
                for j in range(d):
                    acc -= work.block_kinv[k, i, j] * C[j]
                mu[i] = acc
            for s in range(4):
                b = blocks.body[k, s]
                if b < 0:
                    continue
                dx = np.zeros(3)
                dth = np.zeros(3)
                for i in range(d):
                    dx += work.row_MJ[r0 + i, s, 0:3] * mu[i]
                    dth += work.row_MJ[r0 + i, s, 3:6] * mu[i]
                state.body_pos[b] += dx
                state.body_quat[b] = quat_normalized(
                    quat_mul(quat_from_rotvec(dth), state.body_quat[b]))
        if largest < tolerance:
            break
    return largest


@jit
def update_joint_coordinates(joints, state):
    """Unwrapped scalar joint coordinates at the new poses."""
    jrow = np.zeros((1, 4, 6))
    for j in range(joints.type.shape[0]):
        t = joints.type[j]
        if t == jt.REVOLUTE or t == jt.CONTINUOUS or t == jt.PRISMATIC:
            state.joint_q[j] = joint_coordinate(j, joints, state.body_pos, state.body_quat,
                                                state.joint_q, jrow, 0)


@jit
def save_backup(state, work):
    """Copy the body state so a divergent step can be undone."""
    for b in range(state.body_pos.shape[0]):
        work.backup[b, 0:3] = state.body_pos[b]
        work.backup[b, 3:7] = state.body_quat[b]
        work.backup[b, 7:10] = state.body_lin_vel[b]
        work.backup[b, 10:13] = state.body_ang_mom[b]


@jit
def diverged_body(state, work):
    """Index of the first body with a non-finite or runaway state, or -1."""
    for b in range(state.body_pos.shape[0]):
        ok = True
        for c in range(3):
            ok = ok and np.isfinite(state.body_pos[b, c]) and np.isfinite(work.vel[b, c])
            ok = ok and np.isfinite(state.body_ang_mom[b, c])
        for c in range(4):
            ok = ok and np.isfinite(state.body_quat[b, c])
        v2 = work.vel[b, 0] ** 2 + work.vel[b, 1] ** 2 + work.vel[b, 2] ** 2
        w2 = work.vel[b, 3] ** 2 + work.vel[b, 4] ** 2 + work.vel[b, 5] ** 2
        if not ok or v2 > MAX_LINEAR_SPEED ** 2 or w2 > MAX_ANGULAR_SPEED ** 2:
            return b
    return -1


@jit
def restore_backup(state, work):
    """Undo the step that diverged."""
    for b in range(state.body_pos.shape[0]):
        state.body_pos[b] = work.backup[b, 0:3]
        state.body_quat[b] = work.backup[b, 3:7]
        state.body_lin_vel[b] = work.backup[b, 7:10]
        state.body_ang_mom[b] = work.backup[b, 10:13]


@jit
def step(bodies, joints, mimics, blocks, state, work, dt, gravity, iterations, tolerance,
         time_budget, position_iterations, position_tolerance, warm, info, n_steps):
    """Advance the state by n_steps steps of dt seconds; stop early on divergence.

    Returns:
        The number of steps taken.  info holds the last step's solver report.
    """
    for n in range(n_steps):
        save_backup(state, work)
        # 1. orientation-dependent inertia, w = I^-1 L
        update_world_inertia(bodies, state, work)
        # 2. external forces: gravity and joint efforts
        integrate_velocities(bodies, joints, state, work, dt, gravity)
        # 3. constraint rows at x, with the curvature bias from the predicted poses
        predict_poses(state, work, dt)
        prepare_blocks(blocks, bodies, joints, mimics, state, work, dt)
        # 4. warm start from the previous step's impulses
        warm_start(blocks, work, state.row_impulse, warm)
        # 5. sequential impulses
        solve_velocity_blocks(blocks, work, state.row_impulse, iterations, tolerance,
                              time_budget, info)
        # 6. velocities and angular momenta
        store_angular_momentum(state, work)
        # 7. positions with the exact rotation update
        integrate_positions(state, work, dt)
        # 8. remove leftover drift without touching velocities
        info[INFO_POS_ERROR] = project_positions(blocks, joints, mimics, state, work,
                                                 position_iterations, position_tolerance)
        # 9. divergence check, scalar joint coordinates, clock
        bad = diverged_body(state, work)
        if bad >= 0:
            restore_backup(state, work)
            info[INFO_STATUS] = STATUS_DIVERGED
            info[INFO_BODY] = bad
            return n
        update_joint_coordinates(joints, state)
        state.time[0] += dt
    info[INFO_STATUS] = STATUS_OK
    info[INFO_BODY] = -1
    return n_steps

