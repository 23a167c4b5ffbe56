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

from . import islands
from . import joints as jt
from .arrays import (Axes, BLOCK_JOINT, Blocks, Bodies, Contacts, ContactWork, Drives,
                     FreeFriction, INFO_BODY, INFO_CONTACTS, INFO_ITERATIONS, INFO_OVERFLOW,
                     INFO_PENETRATION, INFO_POS_ERROR, INFO_RESIDUAL, INFO_STATUS, INFO_STOP,
                     Joints, Mimics, Polytopes, Shapes, State, STATUS_CONTACT_OVERFLOW,
                     STATUS_DIVERGED, STATUS_OK, STOP_ITERATIONS, STOP_TOLERANCE, Work)
from .axes import (prepare_axes, prepare_push_limits, project_limits, solve_axes,
                   solve_push_limits, warm_start_axes)
from .body_mechanics import (find_body_contacts, prepare_body_contacts, store_start_velocities,
                             warm_start_body_contacts)
from .compile.clock import monotonic
from .compile.flat import bound_view, keep_container, slots_bound
from .contacts import I_NORMAL, P_COMPLIANT, P_DRIFT, prepare_push, solve_contacts
from .drives import finish_drives, prepare_drives, warm_start_drives
from .free_friction import prepare_free_friction, solve_free_friction, warm_start_free_friction
from .math3d import (entry, jit_inline, mat_sandwich, mat_vec, quat_from_rotvec, quat_mul,
                     quat_normalized, quat_to_mat, read3, read4, read_mat, rotate_by, vadd, vscale,
                     write3, write4, write_mat)
from .solver import (block_constraint, block_mass_terms, block_velocity, in_order,
                     joint_coordinate, sweep_blocks, sweep_stop, warm_start)

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
def predict_pose(state, work, dt, b):
    """Body b's pose after the step if its current velocity were kept (the curvature bias)."""
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
    for b in range(state.body_pos.shape[0]):
        predict_pose(state, work, dt, b)
    for k in range(blocks.dim.shape[0]):
        block_bias(k, blocks, joints, mimics, state, work, dt)


@jit_inline
def block_bias(k, blocks, joints, mimics, state, work, dt):
    """
    Row biases b = (C(x + dt v) - C(x)) / dt - J v of block k at the current velocities v.

    Evaluated before the solve and again after its first sweep (``curvature_bias``): the
    second-order term is only right for velocities close to the step's result, and a solve that
    changes them a lot (a stiff damper or a limit stopping a fast joint) would otherwise be
    steered by the old ones.  The predicted poses (``predict_pose``) must be those of v.
    """
    jv = work.vec6a
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
def curvature_bias(blocks, joints, mimics, state, work, dt, labels, g, items, lo, hi):
    """
    Set the biases of blocks items[lo:hi] (island g's) again at their bodies' velocities.

    The poses predicted once per body of the island (``labels``: each body's island), not
    once per block it belongs to.
    """
    for b in range(state.body_pos.shape[0]):
        if labels[b] == g:
            predict_pose(state, work, dt, b)
    for n in range(lo, hi):
        block_bias(items[n], blocks, joints, mimics, state, work, dt)


@jit_inline
def find_islands(blocks, axes, joints, free, contacts, work, cwork):
    """
    Group the bodies into islands and sort the solver's items by them (physics/islands.py).

    Bodies are the units; joint and mimic blocks and contact points join theirs.  Items: the
    blocks, the live axes (``prepare_axes``), the multi-DOF joints' friction and the points.
    """
    parent = cwork.isl_parent
    islands.begin(cwork)
    for k in range(blocks.dim.shape[0]):
        first = -1
        for s in range(4):
            b = blocks.body[k, s]
            if b >= 0:
                if first < 0:
                    first = b
                else:
                    islands.join(parent, first, b)
    n_contact = contacts.count[0]
    for i in range(n_contact):
        islands.join(parent, contacts.body[i, 0], contacts.body[i, 1])
    islands.label(cwork)
    for k in range(blocks.dim.shape[0]):
        b = blocks.body[k, 0]
        islands.put(cwork, islands.ROWS, k, b if b >= 0 else blocks.body[k, 1], k)
    islands.sort(cwork, islands.ROWS, blocks.dim.shape[0])
    n_live = work.axis_live_n[0]
    for t in range(n_live):
        x = work.axis_live[t]
        islands.put(cwork, islands.AXES, t, joints.body[axes.joint[x], 1], x)
    islands.sort(cwork, islands.AXES, n_live)
    for f in range(free.joint.shape[0]):
        islands.put(cwork, islands.FREE, f, joints.body[free.joint[f], 1], f)
    islands.sort(cwork, islands.FREE, free.joint.shape[0])
    for i in range(n_contact):
        b = contacts.body[i, 0]
        islands.put(cwork, islands.POINTS, i, b if b >= 0 else contacts.body[i, 1], i)
    islands.sort(cwork, islands.POINTS, n_contact)


@jit_inline
def solve_velocities(joints, mimics, blocks, axes, drives, free, state, work, bodies, shapes,
                     contacts, cwork, dt, iterations, tolerance, time_budget, info):
    """
    Sweep each island's blocks, drives and points until its tolerance, the cap or the budget.

    Islands (``find_islands``) are solved one after the other, each for the sweeps it needs
    alone.  Writes the most sweeps an island used, the largest of the islands' last impulse
    changes (N s or N m s) and the stop reason (the time budget before the cap before the
    tolerance, over the islands) into info.
    """
    t0 = monotonic(work.clock) if time_budget > 0.0 else 0.0
    stop = STOP_TOLERANCE
    residual = 0.0
    most = 0
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
    block_items = cwork.isl_items[islands.ROWS]
    axis_items = cwork.isl_items[islands.AXES]
    free_items = cwork.isl_items[islands.FREE]
    point_items = cwork.isl_items[islands.POINTS]
    for g in range(cwork.isl_count[0] + 1):
        if islands.size(cwork, g) == 0:
            continue
        b0, b1 = islands.span(cwork, islands.ROWS, g)
        a0, a1 = islands.span(cwork, islands.AXES, g)
        f0, f1 = islands.span(cwork, islands.FREE, g)
        p0, p1 = islands.span(cwork, islands.POINTS, g)
        reason = STOP_ITERATIONS
        largest = 0.0
        used = 0
        direct = in_order(block_items, b0, b1)
        for it in range(iterations):
            largest = sweep_blocks(vel, row_J, row_MJ, bias, kinv, jv, delta, block_body, row0,
                                   dim, row_impulse, block_items, b0, b1, direct)
            if a1 > a0:
                largest = max(largest, solve_axes(
                    vel, coord_J, response, inv_k, geared, reaction, rows, axis_impulse,
                    row_impulse, soft, ainv, drive_impulse, rotor, joint_body, joint_block, row0,
                    dim, axis_items, a0, a1, axis_joint, axis_drive, gear, inv_rotor,
                    axis_rate))
            if f1 > f0:
                largest = max(largest, solve_free_friction(free, blocks, joints, state, work,
                                                           free_items, f0, f1))
            if p1 > p0:
                largest = max(largest, solve_contacts(
                    cwork.vel_flat, point_items, p0, p1, contacts.material, contacts.impulse,
                    cwork.row_seg, cwork.row_len, cwork.row_J, cwork.row_U, cwork.kinv,
                    cwork.target, cwork.soft))
            if it == 0 and iterations > 1 and b1 > b0:
                curvature_bias(blocks, joints, mimics, state, work, dt, cwork.isl_label, g,
                               block_items, b0, b1)
            used = it + 1
            done = sweep_stop(largest, tolerance, time_budget, work.clock, t0)
            if done >= 0:
                reason = done
                break
        most = max(most, used)
        residual = max(residual, largest)
        stop = max(stop, reason)
    info[INFO_ITERATIONS] = most
    info[INFO_RESIDUAL] = residual
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

    Island by island (``find_islands``): an island with penetration to remove is marked
    (``ContactWork.isl_flag[g, 0]``), solved until its own tolerance, and its joints' drift is
    corrected here (the nonlinear projection then only measures it).  Pseudo-velocities u, zero
    at the start, are swept as the velocities are: the joints' blocks ask J u = -C / dt (their
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
    flag = cwork.isl_flag
    count = cwork.isl_count[0]
    for g in range(count + 1):
        flag[g, 0] = 0.0
    if deepest <= 0.0:
        return
    block_items = cwork.isl_items[islands.ROWS]
    axis_items = cwork.isl_items[islands.AXES]
    point_items = cwork.isl_items[islands.POINTS]
    excess = cwork.isl_excess[islands.POINTS]
    for g in range(count + 1):
        p0, p1 = islands.span(cwork, islands.POINTS, g)
        for n in range(p0, p1):
            if excess[point_items[n]] > 0.0:
                flag[g, 0] = 1.0
                break
    push = cwork.push_vel
    push[:, :] = 0.0
    bias = cwork.push_bias
    C = work.C_pred
    prepare_push_limits(axes, joints, state, work, cwork, dt)
    for g in range(count + 1):
        if flag[g, 0] == 0.0:
            continue
        b0, b1 = islands.span(cwork, islands.ROWS, g)
        a0, a1 = islands.span(cwork, islands.AXES, g)
        p0, p1 = islands.span(cwork, islands.POINTS, g)
        for n in range(b0, b1):
            k = block_items[n]
            r0 = blocks.row0[k]
            block_constraint(k, blocks, joints, mimics, state, state.body_pos, state.body_quat,
                             C, None, 0)
            for i in range(blocks.dim[k]):
                bias[r0 + i] = C[i] / dt
                cwork.push_impulse[r0 + i] = 0.0
        for it in range(iterations):
            largest = sweep_blocks(push, work.row_J, work.row_MJ, bias, work.block_kinv,
                                   work.vec6a, work.vec6b, blocks.body, blocks.row0, blocks.dim,
                                   cwork.push_impulse, block_items, b0, b1,
                                   in_order(block_items, b0, b1))
            if a1 > a0:
                largest = max(largest, solve_push_limits(
                    push, work.axis_J, work.axis_u, work.axis_k, cwork.push_limit, axis_items,
                    a0, a1, axes.joint, joints.body))
            largest = max(largest, solve_contacts(cwork.push_flat, point_items, p0, p1,
                                                  contacts.material, cwork.push, cwork.row_seg,
                                                  cwork.row_len, cwork.row_J, cwork.row_U,
                                                  cwork.kinv, cwork.push_target,
                                                  cwork.push_soft))
            if largest < tolerance:
                break
    labels = cwork.isl_label
    for b in range(state.body_pos.shape[0]):
        if flag[labels[b], 0] == 0.0:
            continue
        for c in range(3):
            state.body_pos[b, c] += dt * push[b, c]
        turn = quat_from_rotvec((dt * push[b, 3], dt * push[b, 4], dt * push[b, 5]))
        write4(state.body_quat, b, quat_normalized(quat_mul(turn, read4(state.body_quat, b))))
        write3(state.body_ang_mom, b, mat_vec(quat_to_mat(turn), read3(state.body_ang_mom, b)))


@jit_inline
def settle_flags(blocks, contacts, cwork, param, state, work, dt):
    """
    Mark the islands at rest on loaded compliant contacts (``isl_flag[g, 1]`` 0 and [g, 2] 1).

    At rest: no body's centre of mass moves more than ``P_DRIFT`` (the joints' error left to
    the velocity stage) in a step, so landings and walking are projected as before.  Also puts
    each island's largest joint error left by the last step's projection in ``isl_flag[g, 3]``.
    """
    flag = cwork.isl_flag
    labels = cwork.isl_label
    count = cwork.isl_count[0]
    for g in range(count + 1):
        flag[g, 1] = 0.0
        flag[g, 2] = 0.0
        flag[g, 3] = 0.0
    still = param[P_DRIFT] / dt
    for b in range(state.body_lin_vel.shape[0]):
        v = state.body_lin_vel[b]
        if v[0] * v[0] + v[1] * v[1] + v[2] * v[2] > still * still:
            flag[labels[b], 1] = 1.0
    for i in range(contacts.count[0]):
        if contacts.impulse[i, I_NORMAL] > 0.0:
            b = contacts.body[i, 0]
            flag[labels[b if b >= 0 else contacts.body[i, 1]], 2] = 1.0
    for k in range(blocks.dim.shape[0]):
        b = blocks.body[k, 0]
        g = labels[b if b >= 0 else blocks.body[k, 1]]
        flag[g, 3] = max(flag[g, 3], work.block_error[k])


@jit_inline
def project_positions(blocks, joints, mimics, state, work, cwork, param, touching, iterations,
                      tolerance):
    """
    Nonlinear Gauss-Seidel on the joints' position errors; returns the largest error found.

    Island by island, each until its own tolerance or the cap.  Each pass moves the bodies of a
    block by dx = M^-1 J^T mu, dtheta = I^-1 J_ang^T mu with mu = -K^-1 C(x), using this step's
    J and K (a quasi-Newton step, exact to first order).  Velocities are left alone and angular
    momenta turn with their bodies, so the correction changes no kinetic energy.  The error
    returned is the largest the last pass found before its corrections (an upper bound of what
    is left: no separate pass re-measures it).  An island whose penetration push corrected its
    drift, or at rest on loaded compliant contacts with less error than
    ``solver.contact_position_tolerance`` left by the last step (``settle_flags``: projecting
    less moves the touching bodies against their springs for nothing), only gets one pass that
    measures.  (Skipping the blocks already within the tolerance was tried: it changed how the
    G1 humanoid comes to rest after a drop, test_landing.py, and was left out.)
    """
    C = work.C_pred
    mu = work.vec6b
    flag = cwork.isl_flag
    items = cwork.isl_items[islands.ROWS]
    compliant = touching and param[P_COMPLIANT] > 0.0
    worst = 0.0
    for g in range(cwork.isl_count[0] + 1):
        b0, b1 = islands.span(cwork, islands.ROWS, g)
        if b1 == b0:
            continue
        passes = iterations
        if touching and flag[g, 0] > 0.0:
            passes = 0  # the push corrected the drift: only measure what is left
        elif (compliant and flag[g, 3] < param[P_DRIFT] and flag[g, 1] == 0.0
              and flag[g, 2] > 0.0):
            passes = 0
        largest = 0.0
        for it in range(max(passes, 1)):
            largest = 0.0
            for n in range(b0, b1):
                k = items[n]
                d = blocks.dim[k]
                # the error only: the correction uses this step's M^-1 J^T and K^-1
                block_constraint(k, blocks, joints, mimics, state, state.body_pos,
                                 state.body_quat, C, None, 0)
                error = 0.0
                for i in range(d):
                    error = max(error, abs(C[i]))
                work.block_error[k] = error
                largest = max(largest, error)
                if passes == 0:
                    continue
                for i in range(d):
                    acc = 0.0
                    for j in range(d):
                        acc -= work.block_kinv[k, i, j] * C[j]
                    mu[i] = acc
                move_block_bodies(k, blocks, state, work, mu)
            if largest < tolerance:
                break
        worst = max(worst, largest)
    return worst


@jit_inline
def move_block_bodies(k, blocks, state, work, mu):
    """Move block k's bodies by M^-1 J^T mu (turning their angular momenta with them)."""
    r0 = blocks.row0[k]
    d = blocks.dim[k]
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
        write4(state.body_quat, b, quat_normalized(quat_mul(turn, read4(state.body_quat, b))))
        # the correction turns the body's momentum with it (body-frame L is unchanged), so the
        # kinetic energy 1/2 L.I^-1 L does not change
        write3(state.body_ang_mom, b, mat_vec(quat_to_mat(turn), read3(state.body_ang_mom, b)))


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
        # 5. sequential impulses, island by island
        find_islands(blocks, axes, joints, free, contacts, work, cwork)
        solve_velocities(joints, mimics, blocks, axes, drives, free, state, work, bodies,
                         shapes, contacts, cwork, dt, iterations, tolerance, time_budget, info)
        # 6. velocities, angular momenta, armature currents
        store_angular_momentum(state, work)
        finish_drives(drives, state, dt)
        # 7. positions with the exact rotation update
        integrate_positions(state, work, dt)
        # 8. remove the joints' leftover drift without touching velocities, island by island:
        # with penetration to remove, in one solve with the contacts and limits (split
        # impulse), otherwise by the nonlinear projection; at rest on loaded compliant
        # contacts, only once the last step left an error of
        # solver.contact_position_tolerance: projecting less moves the touching bodies against
        # their springs for nothing
        if touching:
            push_out_penetration(blocks, joints, mimics, axes, state, work, bodies, contacts,
                                 cwork, contact_param, dt, iterations, tolerance, info)
            settle_flags(blocks, contacts, cwork, contact_param, state, work, dt)
        info[INFO_POS_ERROR] = project_positions(blocks, joints, mimics, state, work, cwork,
                                                 contact_param, touching, position_iterations,
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


#: The containers :func:`step_bind` keeps for :func:`step_bound` (flat.view_slots), in the
#: order of :func:`step`'s arguments.
VIEW_SLOTS = (Bodies, Joints, Mimics, Blocks, Axes, Drives, FreeFriction, State, Work, Shapes,
              Polytopes, Contacts, ContactWork)


@entry
def step_bind(bodies, joints, mimics, blocks, axes, drives, free, state, work, shapes, polys,
              contacts, cwork, views):
    """
    Keep the step's containers in ``views`` (flat.keep_container) for :func:`step_bound`.

    Returns the slots kept: all 13 of :data:`VIEW_SLOTS` unless one is too small.  A call of
    :func:`step` unboxes its containers' arrays, about 190 for a robot with collision shapes
    (about 1 us per call, 4 % of a 7-DOF arm's step); the Engine binds them once (again when
    it hands the kernel new contact arrays) and steps with :func:`step_bound`.
    """
    kept = int(keep_container(bodies, views, views[0], views[1]))
    kept += int(keep_container(joints, views, views[2], views[3]))
    kept += int(keep_container(mimics, views, views[4], views[5]))
    kept += int(keep_container(blocks, views, views[6], views[7]))
    kept += int(keep_container(axes, views, views[8], views[9]))
    kept += int(keep_container(drives, views, views[10], views[11]))
    kept += int(keep_container(free, views, views[12], views[13]))
    kept += int(keep_container(state, views, views[14], views[15]))
    kept += int(keep_container(work, views, views[16], views[17]))
    kept += int(keep_container(shapes, views, views[18], views[19]))
    kept += int(keep_container(polys, views, views[20], views[21]))
    kept += int(keep_container(contacts, views, views[22], views[23]))
    kept += int(keep_container(cwork, views, views[24], views[25]))
    return kept


@entry
def step_bound(views, contact_param, dt, gravity, iterations, tolerance, time_budget,
               position_iterations, position_tolerance, warm, info, n_steps):
    """
    :func:`step` on the containers :func:`step_bind` kept (the Engine's per-call entry).

    Takes no step (returns 0) when a slot of ``views`` holds no containers (flat.views_bound).
    The other arguments are :func:`step`'s.
    """
    if not slots_bound(views):
        return 0
    return step(bound_view(Bodies, views, views[0], views[1]),
                bound_view(Joints, views, views[2], views[3]),
                bound_view(Mimics, views, views[4], views[5]),
                bound_view(Blocks, views, views[6], views[7]),
                bound_view(Axes, views, views[8], views[9]),
                bound_view(Drives, views, views[10], views[11]),
                bound_view(FreeFriction, views, views[12], views[13]),
                bound_view(State, views, views[14], views[15]),
                bound_view(Work, views, views[16], views[17]),
                bound_view(Shapes, views, views[18], views[19]),
                bound_view(Polytopes, views, views[20], views[21]),
                bound_view(Contacts, views, views[22], views[23]),
                bound_view(ContactWork, views, views[24], views[25]), contact_param, dt,
                gravity, iterations, tolerance, time_budget, position_iterations,
                position_tolerance, warm, info, n_steps)


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
