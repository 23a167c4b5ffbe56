"""
One time step of the engine, as a list of stages (Box2D v3 ``solver.c`` style).

Semi-implicit (symplectic) Euler in maximal coordinates:
    v+ = v + dt (g + F/m) + M^-1 J^T lambda,      L+ = L + dt tau + (J^T lambda)_angular,
    w+ = I_world(q)^-1 L+,   x+ = x + dt v+,   q+ = exp(dt w+) q   (exact rotation),
with lambda from sequential impulses on J v+ + b = 0.  The bias b carries the constraint's
curvature over the step, b = (C(x + dt v) - C(x)) / dt - J v, evaluated with the velocity before
the solve, so the step aims at C(x+) = 0 as SHAKE/RATTLE do instead of only J(x) v+ = 0; the
latter turns velocity out of every rotating joint and bleeds energy at (w dt)^2 per step.
Drift left over is removed by a nonlinear Gauss-Seidel projection of the positions
(Box2D v2.3 ``SolvePositionConstraints``) that does not touch velocities, so it adds no energy.
"""
import numpy as np

from . import joints as jt
from .arrays import (BLOCK_JOINT, INFO_BODY, INFO_CONTACTS, INFO_ITERATIONS, INFO_OVERFLOW,
                     INFO_PENETRATION, INFO_POS_ERROR, INFO_RESIDUAL, INFO_STATUS, INFO_STOP,
                     STATUS_CONTACT_OVERFLOW, STATUS_DIVERGED, STATUS_OK, STOP_ITERATIONS,
                     STOP_TOLERANCE)
from .axes import (prepare_axes, prepare_push_limits, project_limits, solve_axes,
                   solve_push_limits, warm_start_axes)
from .body_mechanics import (find_body_contacts, prepare_body_contacts, store_start_velocities,
                             warm_start_body_contacts)
from .compile.clock import monotonic
from .contacts import P_DRIFT, prepare_push, resting_on_compliant, solve_contacts
from .drives import finish_drives, prepare_drives, warm_start_drives
from .free_friction import prepare_free_friction, solve_free_friction, warm_start_free_friction
from .math3d import (entry, jit_inline, mat_sandwich, mat_vec, quat_from_rotvec, quat_mul,
                     quat_normalized, quat_to_mat, read3, read4, read_mat, rotate_by, vadd, vscale,
                     write3, write4, write_mat)
from .solver import (block_constraint, block_mass_terms, block_velocity, joint_coordinate,
                     sweep_blocks, sweep_stop, warm_start)

#: Speeds beyond these are divergence (m/s, rad/s): nothing in a robot gets near them.
MAX_LINEAR_SPEED = 1.0e4
MAX_ANGULAR_SPEED = 1.0e5
MAX_ROTOR_SPEED = 1.0e7


@jit_inline
def update_world_inertia(bodies, state, work):
    """Rotation, world inertia and inverse inertia of every body; w = I_world^-1 L."""
    for b in range(state.body_pos.shape[0]):
        r = quat_to_mat(read4(state.body_quat, b))
        write_mat(work.rot, b, r)
        write_mat(work.inertia_w, b, mat_sandwich(r, read_mat(bodies.inertia, b)))
        iw = mat_sandwich(r, read_mat(bodies.inv_inertia, b))
        write_mat(work.inv_inertia_w, b, iw)
        w = mat_vec(iw, read3(state.body_ang_mom, b))
        for c in range(3):
            work.vel[b, c] = state.body_lin_vel[b, c]
            work.vel[b, 3 + c] = w[c]


@jit_inline
def integrate_velocities(bodies, joints, state, work, dt, gravity):
    """Gravity, external wrenches and commanded joint efforts (impulses along joint rows)."""
    for b in range(state.body_pos.shape[0]):
        torque = (state.body_wrench[b, 3] * dt, state.body_wrench[b, 4] * dt,
                  state.body_wrench[b, 5] * dt)
        dw = mat_vec(read_mat(work.inv_inertia_w, b), torque)
        for c in range(3):
            work.vel[b, c] += dt * (gravity[c] + bodies.inv_mass[b] * state.body_wrench[b, c])
            work.vel[b, 3 + c] += dw[c]
    jrow = work.jrow
    for j in range(joints.type.shape[0]):
        impulse = state.joint_effort[j] * dt
        if impulse == 0.0:
            continue
        joint_coordinate(j, joints, state.joint_anchor, state.body_pos, state.body_quat,
                         state.joint_q, jrow, 0)
        for s in range(2):
            b = joints.body[j, s]
            if b < 0:
                continue
            dw = mat_vec(read_mat(work.inv_inertia_w, b),
                         (jrow[0, s, 3], jrow[0, s, 4], jrow[0, s, 5]))
            for c in range(3):
                work.vel[b, c] += bodies.inv_mass[b] * jrow[0, s, c] * impulse
                work.vel[b, 3 + c] += dw[c] * impulse


@jit_inline
def predict_poses(state, work, dt):
    """Poses after the step if the current velocities were kept (for the curvature bias)."""
    for b in range(state.body_pos.shape[0]):
        v = (work.vel[b, 0], work.vel[b, 1], work.vel[b, 2])
        w = (work.vel[b, 3], work.vel[b, 4], work.vel[b, 5])
        write3(work.pred_pos, b, vadd(read3(state.body_pos, b), vscale(v, dt)))
        write4(work.pred_quat, b, rotate_by(read4(state.body_quat, b), vscale(w, dt)))


@jit_inline
def prepare_blocks(blocks, bodies, joints, mimics, state, work, dt):
    """Jacobians, effective masses and curvature biases of every block."""
    for k in range(blocks.dim.shape[0]):
        r0 = blocks.row0[k]
        block_constraint(k, blocks, joints, mimics, state, state.body_pos, state.body_quat,
                         work.row_C, work.row_J, r0)
        block_mass_terms(k, blocks, bodies, work, state.joint_active)
    curvature_bias(blocks, joints, mimics, state, work, dt)


@jit_inline
def curvature_bias(blocks, joints, mimics, state, work, dt):
    """
    Row biases b = (C(x + dt v) - C(x)) / dt - J v at the current solver velocities v.

    Evaluated before the solve and again after its first sweep: the second-order term is only
    right for velocities close to the step's result, and a solve that changes them a lot (a
    stiff damper or a limit stopping a fast joint) would otherwise be steered by the old ones.
    """
    jv = work.vec6a
    predict_poses(state, work, dt)
    for k in range(blocks.dim.shape[0]):
        r0 = blocks.row0[k]
        d = blocks.dim[k]
        block_constraint(k, blocks, joints, mimics, state, work.pred_pos, work.pred_quat,
                         work.C_pred, None, 0)
        block_velocity(k, blocks, work, jv)
        for i in range(d):
            work.row_bias[r0 + i] = (work.C_pred[i] - work.row_C[r0 + i]) / dt - jv[i]
        if blocks.kind[k] == BLOCK_JOINT:
            # a moving reference (path anchor, element length): aim at dC/dt = dC*/dt
            j = blocks.source[k]
            for i in range(d):
                work.row_bias[r0 + i] -= state.joint_row_rate[j, i]


@jit_inline
def solve_velocities(joints, mimics, blocks, axes, drives, free, state, work, bodies, shapes,
                     contacts, cwork, dt, iterations, tolerance, time_budget, info):
    """
    Sweep blocks and drives until the tolerance, the iteration cap or the wall-clock budget.

    Writes the sweeps used, the last sweep's largest impulse change (N s or N m s) and the stop
    reason into info.
    """
    t0 = monotonic(work.clock) if time_budget > 0.0 else 0.0
    stop = STOP_ITERATIONS
    largest = 0.0
    used = 0
    # the sweeps take plain arrays, out of the containers once per step (see axes.solve_axes)
    vel = work.vel
    row_J = work.row_J
    row_MJ = work.row_MJ
    bias = work.row_bias
    kinv = work.block_kinv
    jv = work.vec6a
    delta = work.vec6b
    block_body = blocks.body
    row0 = blocks.row0
    dim = blocks.dim
    row_impulse = state.row_impulse
    coord_J = work.axis_J
    response = work.axis_u
    inv_k = work.axis_k
    geared = work.axis_kg
    reaction = work.axis_kcw
    rows = work.axis_rows
    axis_impulse = state.axis_impulse
    axis_rate = state.axis_rate
    live = work.axis_live
    soft = work.drive_soft
    ainv = work.drive_ainv
    drive_impulse = state.drive_impulse
    rotor = state.rotor_speed
    joint_body = joints.body
    joint_block = joints.block
    axis_joint = axes.joint
    axis_drive = axes.drive
    gear = drives.gear
    inv_rotor = drives.inv_rotor_inertia
    n_live = work.axis_live_n[0]
    n_contact = contacts.count[0]  # (0 without collision shapes: find_contacts never runs)
    for it in range(iterations):
        largest = sweep_blocks(vel, row_J, row_MJ, bias, kinv, jv, delta, block_body, row0,
                               dim, row_impulse)
        if n_live > 0:
            largest = max(largest, solve_axes(
                vel, coord_J, response, inv_k, geared, reaction, rows, axis_impulse,
                row_impulse, soft, ainv, drive_impulse, rotor, joint_body, joint_block, row0,
                dim, live, n_live, axis_joint, axis_drive, gear, inv_rotor, axis_rate))
        if free.joint.shape[0] > 0:
            largest = max(largest, solve_free_friction(free, blocks, joints, state, work))
        if n_contact > 0:
            largest = max(largest, solve_contacts(
                cwork.vel_flat, n_contact, contacts.material, contacts.impulse, cwork.row_seg,
                cwork.row_len, cwork.row_J, cwork.row_U, cwork.kinv, cwork.target, cwork.soft))
        if it == 0 and iterations > 1:
            curvature_bias(blocks, joints, mimics, state, work, dt)
        used = it + 1
        done = sweep_stop(largest, tolerance, time_budget, work.clock, t0)
        if done >= 0:
            stop = done
            break
    if blocks.dim.shape[0] == 0 and axes.joint.shape[0] == 0 and n_contact == 0:
        stop = STOP_TOLERANCE
    info[INFO_ITERATIONS] = used
    info[INFO_RESIDUAL] = largest
    info[INFO_STOP] = stop


@jit_inline
def store_angular_momentum(state, work):
    """Linear velocity and angular momentum L = I_world w from the solved velocities."""
    for b in range(state.body_pos.shape[0]):
        w = (work.vel[b, 3], work.vel[b, 4], work.vel[b, 5])
        write3(state.body_ang_mom, b, mat_vec(read_mat(work.inertia_w, b), w))
        for c in range(3):
            state.body_lin_vel[b, c] = work.vel[b, c]


@jit_inline
def integrate_positions(state, work, dt):
    """Move x += dt v and q = exp(dt w) q (exact rotation; normalising removes rounding only)."""
    for b in range(state.body_pos.shape[0]):
        for c in range(3):
            state.body_pos[b, c] += dt * work.vel[b, c]
        w = (work.vel[b, 3] * dt, work.vel[b, 4] * dt, work.vel[b, 5] * dt)
        write4(state.body_quat, b, rotate_by(read4(state.body_quat, b), w))


@jit_inline
def push_out_penetration(blocks, joints, mimics, axes, state, work, bodies, contacts, cwork,
                         param, dt, iterations, tolerance, info):
    """
    Split impulse: remove penetration beyond the slop with the joints and limits in one solve.

    Returns True when there was penetration to remove and the solve ran (the joints' drift is
    then corrected here, and the nonlinear projection is skipped).  Pseudo-velocities u, zero at
    the start, are swept as the velocities are: the joints' blocks ask J u = -C / dt (their
    drift at the poses after this step's motion), the live axes' limit rows keep a push from
    crossing a limit and take an overlap out (``axes.prepare_push_limits``), and the contacts'
    rows ask their push targets (``contacts.prepare_push``), friction cone included; then
    x += dt u, q = exp(dt u_w) q.  Corrected on its own, a contact's push moves the touching body
    alone (a foot), opening its joints; the joints' projection and the limits' projection then
    drive it back into the ground, and the velocity stage keeps whatever joint error is left
    (docs/contacts.md).  The real velocities are untouched and angular momenta turn with their
    bodies, so no energy is added (pseudo-velocities: Catto, 'Iterative dynamics with temporal
    coherence', 2005; Bullet's split impulse).
    """
    n_contact = contacts.count[0]
    deepest = prepare_push(contacts, cwork, state, param, dt) if n_contact > 0 else 0.0
    info[INFO_PENETRATION] = deepest
    if deepest <= 0.0:
        return False
    push = cwork.push_vel
    push[:, :] = 0.0
    bias = cwork.push_bias
    C = work.C_pred
    for k in range(blocks.dim.shape[0]):
        r0 = blocks.row0[k]
        block_constraint(k, blocks, joints, mimics, state, state.body_pos, state.body_quat,
                         C, None, 0)
        for i in range(blocks.dim[k]):
            bias[r0 + i] = C[i] / dt
            cwork.push_impulse[r0 + i] = 0.0
    prepare_push_limits(axes, joints, state, work, cwork, dt)
    n_live = work.axis_live_n[0]
    for it in range(iterations):
        largest = sweep_blocks(push, work.row_J, work.row_MJ, bias, work.block_kinv, work.vec6a,
                               work.vec6b, blocks.body, blocks.row0, blocks.dim,
                               cwork.push_impulse)
        if n_live > 0:
            largest = max(largest, solve_push_limits(
                push, work.axis_J, work.axis_u, work.axis_k, cwork.push_limit, work.axis_live,
                n_live, axes.joint, joints.body))
        largest = max(largest, solve_contacts(cwork.push_flat, n_contact, contacts.material,
                                              cwork.push, cwork.row_seg, cwork.row_len,
                                              cwork.row_J, cwork.row_U, cwork.kinv,
                                              cwork.push_target, cwork.push_soft))
        if largest < tolerance:
            break
    for b in range(state.body_pos.shape[0]):
        for c in range(3):
            state.body_pos[b, c] += dt * push[b, c]
        turn = quat_from_rotvec((dt * push[b, 3], dt * push[b, 4], dt * push[b, 5]))
        write4(state.body_quat, b, quat_normalized(quat_mul(turn, read4(state.body_quat, b))))
        write3(state.body_ang_mom, b, mat_vec(quat_to_mat(turn), read3(state.body_ang_mom, b)))
    return True


@jit_inline
def project_positions(blocks, joints, mimics, state, work, iterations, tolerance):
    """
    Nonlinear Gauss-Seidel on the joints' position errors; returns the largest error found.

    Each pass moves the bodies of a block by dx = M^-1 J^T mu, dtheta = I^-1 J_ang^T mu with
    mu = -K^-1 C(x), using this step's J and K (a quasi-Newton step, exact to first order).
    Velocities are left alone and angular momenta turn with their bodies, so the correction
    changes no kinetic energy.  The error returned is the largest the last pass found before
    its corrections (an upper bound of what is left: no separate pass re-measures it); with no
    passes, one pass measures.  (Skipping the blocks already within the tolerance was tried:
    it changed how the G1 humanoid comes to rest after a drop, test_landing.py, and was left
    out.)
    """
    C = work.C_pred
    mu = work.vec6b
    largest = 0.0
    for it in range(max(iterations, 1)):
        largest = 0.0
        for k in range(blocks.dim.shape[0]):
            d = blocks.dim[k]
            r0 = blocks.row0[k]
            # the error only: the correction uses this step's M^-1 J^T and K^-1
            block_constraint(k, blocks, joints, mimics, state, state.body_pos, state.body_quat,
                             C, None, 0)
            error = 0.0
            for i in range(d):
                error = max(error, abs(C[i]))
            largest = max(largest, error)
            if iterations == 0:
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
                dx0 = dx1 = dx2 = dt0 = dt1 = dt2 = 0.0
                for i in range(d):
                    m = work.row_MJ[r0 + i, s]
                    dx0 += m[0] * mu[i]
                    dx1 += m[1] * mu[i]
                    dx2 += m[2] * mu[i]
                    dt0 += m[3] * mu[i]
                    dt1 += m[4] * mu[i]
                    dt2 += m[5] * mu[i]
                state.body_pos[b, 0] += dx0
                state.body_pos[b, 1] += dx1
                state.body_pos[b, 2] += dx2
                turn = quat_from_rotvec((dt0, dt1, dt2))
                write4(state.body_quat, b,
                       quat_normalized(quat_mul(turn, read4(state.body_quat, b))))
                # the correction turns the body's momentum with it (body-frame L is unchanged),
                # so the kinetic energy 1/2 L.I^-1 L does not change
                write3(state.body_ang_mom, b,
                       mat_vec(quat_to_mat(turn), read3(state.body_ang_mom, b)))
        if largest < tolerance:
            break
    return largest


@jit_inline
def update_joint_coordinates(joints, state, work):
    """Unwrapped scalar joint coordinates at the new poses."""
    for j in range(joints.type.shape[0]):
        t = joints.type[j]
        if t == jt.REVOLUTE or t == jt.CONTINUOUS or t == jt.PRISMATIC:
            state.joint_q[j] = joint_coordinate(j, joints, state.joint_anchor, state.body_pos,
                                                state.body_quat, state.joint_q, work.jrow, 0)


@jit_inline
def save_backup(state, work):
    """Copy the body and rotor state so a divergent step can be undone."""
    for d in range(state.rotor_speed.shape[0]):
        work.drive_backup[d, 0] = state.rotor_speed[d]
        work.drive_backup[d, 1] = state.drive_current[d]
    store_body_states(state, work.backup)


@jit_inline
def store_body_states(state, out):
    """Copy every body's state into out (n_body, 13): position, quaternion, velocity, L."""
    for b in range(state.body_pos.shape[0]):
        for c in range(3):
            out[b, c] = state.body_pos[b, c]
            out[b, 7 + c] = state.body_lin_vel[b, c]
            out[b, 10 + c] = state.body_ang_mom[b, c]
        for c in range(4):
            out[b, 3 + c] = state.body_quat[b, c]


@jit_inline
def restore_backup(state, work):
    """Undo the step that diverged."""
    for d in range(state.rotor_speed.shape[0]):
        state.rotor_speed[d] = work.drive_backup[d, 0]
        state.drive_current[d] = work.drive_backup[d, 1]
    for b in range(state.body_pos.shape[0]):
        for c in range(3):
            state.body_pos[b, c] = work.backup[b, c]
            state.body_lin_vel[b, c] = work.backup[b, 7 + c]
            state.body_ang_mom[b, c] = work.backup[b, 10 + c]
        for c in range(4):
            state.body_quat[b, c] = work.backup[b, 3 + c]


@jit_inline
def diverged_body(state, work):
    """Index of the first body (then n_body + drive) with a non-finite or runaway state, or -1."""
    for b in range(state.body_pos.shape[0]):
        total = 0.0
        for c in range(3):
            total += state.body_pos[b, c] + state.body_ang_mom[b, c]
        for c in range(4):
            total += state.body_quat[b, c]
        v2 = work.vel[b, 0] ** 2 + work.vel[b, 1] ** 2 + work.vel[b, 2] ** 2
        w2 = work.vel[b, 3] ** 2 + work.vel[b, 4] ** 2 + work.vel[b, 5] ** 2
        if not np.isfinite(total + v2 + w2):
            return b
        if v2 > MAX_LINEAR_SPEED ** 2 or w2 > MAX_ANGULAR_SPEED ** 2:
            return b
    for d in range(state.rotor_speed.shape[0]):
        total = state.rotor_speed[d] + state.drive_current[d]
        if not np.isfinite(total) or abs(state.rotor_speed[d]) > MAX_ROTOR_SPEED:
            return state.body_pos.shape[0] + d
    return -1


@entry
def step(bodies, joints, mimics, blocks, axes, drives, free, state, work, shapes, polys, contacts,
         cwork, contact_param, dt, gravity, iterations, tolerance, time_budget,
         position_iterations, position_tolerance, warm, info, n_steps):
    """
    Advance the state by n_steps steps of dt seconds; stop early on divergence.

    Returns:
        The number of steps taken.  info holds the last step's solver report.
    """
    # one kernel for robots with and without collision shapes (their containers are empty):
    # the contact stages are skipped at run time, as they would be with nothing touching
    touching = shapes.body.shape[0] > 0
    for n in range(n_steps):
        save_backup(state, work)
        # 1. orientation-dependent inertia, w = I^-1 L
        update_world_inertia(bodies, state, work)
        if touching:
            store_start_velocities(work, cwork)  # for the contacts' restitution
        # 2. external forces: gravity and joint efforts
        integrate_velocities(bodies, joints, state, work, dt, gravity)
        # 2b. contact points at x, matched to the last step's
        if touching:
            if find_body_contacts(shapes, polys, contacts, cwork, state, work, contact_param,
                                  dt) < 0:
                # more pairs or points than the arrays hold: undo this step and return, the
                # engine grows the arrays and takes it again
                restore_backup(state, work)
                info[INFO_OVERFLOW] = 1.0
                info[INFO_STATUS] = STATUS_CONTACT_OVERFLOW
                return n
            info[INFO_CONTACTS] = contacts.count[0]
        # 3. constraint rows at x, with the curvature bias from the predicted poses
        prepare_blocks(blocks, bodies, joints, mimics, state, work, dt)
        prepare_axes(axes, blocks, bodies, joints, state, work, dt)
        prepare_drives(drives, work, state, dt)
        if free.joint.shape[0] > 0:
            prepare_free_friction(free, blocks, bodies, joints, state, work, dt)
        if touching:
            prepare_body_contacts(contacts, cwork, bodies, state, work, contact_param, dt)
        # 4. warm start from the previous step's impulses
        warm_start(blocks, work, state.row_impulse, warm)
        warm_start_axes(axes, bodies, joints, state, work, warm)
        warm_start_drives(bodies, joints, drives, state, work, warm)
        warm_start_free_friction(free, bodies, joints, state, work, warm)
        if touching:
            warm_start_body_contacts(contacts, cwork, warm)
        # 5. sequential impulses
        solve_velocities(joints, mimics, blocks, axes, drives, free, state, work, bodies,
                         shapes, contacts, cwork, dt, iterations, tolerance, time_budget, info)
        # 6. velocities, angular momenta, armature currents
        store_angular_momentum(state, work)
        finish_drives(drives, state, dt)
        # 7. positions with the exact rotation update
        integrate_positions(state, work, dt)
        # 8. remove the joints' leftover drift without touching velocities: with penetration
        # to remove, in one solve with the contacts and limits (split impulse), otherwise by
        # the nonlinear projection; at rest on loaded compliant contacts, only once the last
        # step left an error of solver.contact_position_tolerance (info still holds it):
        # projecting less moves the touching bodies against their springs for nothing
        passes = position_iterations
        if touching:
            if push_out_penetration(blocks, joints, mimics, axes, state, work, bodies, contacts,
                                    cwork, contact_param, dt, iterations, tolerance, info):
                passes = 0  # only measure what is left
            elif (info[INFO_POS_ERROR] < contact_param[P_DRIFT]
                  and resting_on_compliant(contacts, contact_param, state, dt)):
                passes = 0
        info[INFO_POS_ERROR] = project_positions(blocks, joints, mimics, state, work, passes,
                                                 position_tolerance)
        # 9. divergence check, scalar joint coordinates, clock
        bad = diverged_body(state, work)
        if bad >= 0:
            restore_backup(state, work)
            info[INFO_STATUS] = STATUS_DIVERGED
            info[INFO_BODY] = bad
            return n
        update_joint_coordinates(joints, state, work)
        project_limits(axes, joints, state, work, position_tolerance)
        state.time[0] += dt
    info[INFO_STATUS] = STATUS_OK
    info[INFO_BODY] = -1
    return n_steps


@entry
def joint_rates(bodies, joints, state, work, out):
    """Scalar joint velocities dq/dt = J v at the current state into out (rad/s or m/s)."""
    for j in range(joints.type.shape[0]):
        out[j] = 0.0
        t = joints.type[j]
        if not (t == jt.REVOLUTE or t == jt.CONTINUOUS or t == jt.PRISMATIC):
            continue
        joint_coordinate(j, joints, state.joint_anchor, state.body_pos, state.body_quat,
                         state.joint_q, work.jrow, 0)
        for s in range(2):
            b = joints.body[j, s]
            if b < 0:
                continue
            r = quat_to_mat(read4(state.body_quat, b))
            w = mat_vec(mat_sandwich(r, read_mat(bodies.inv_inertia, b)),
                        read3(state.body_ang_mom, b))
            for c in range(3):
                out[j] += work.jrow[0, s, c] * state.body_lin_vel[b, c]
                out[j] += work.jrow[0, s, 3 + c] * w[c]
