"""
DC motors with gears, driven by voltage, solved inside the sequential-impulse loop.

Model (per drive; rotor speed w_m is a state of its own, relative to the stator on the parent):
    u = R i + L di/dt + Ke w_m,      J_m dw_m/dt = Kt i - b_m w_m - tau_gear,
    gear (bilateral row): w_m - N qdot = 0, which puts N tau_gear on the joint coordinate q,
    so the joint sees the reflected inertia N^2 J_m and can back-drive the motor.

Implicit discretisation (backward Euler on the current, inside the solve):
    i+ = (L/dt i + u - Ke w_m+) / R',   R' = R + L/dt,
so the motor is a *soft row* on the rotor whose impulse obeys
    lambda_m = dt tau0 - dt c w_m+,     tau0 = Kt (L/dt i + u) / R',  c = Kt Ke / R' + b_m,
which is stable for any dt (dt >> L/R included): the back-EMF and the friction act as an implicit
damper.  With a current limit the electrical part is clamped, |lambda_m + dt b_m w_m+| <=
dt Kt i_max, and the row becomes lambda_m = +-dt Kt i_max - dt b_m w_m+.

Exact per drive: the joint coordinate is seen through its joint's own bilateral block, i.e. with
the *constrained* inverse mass (Schur complement)
    k = J_q M^-1 J_q^T - w^T K_c^-1 w,   w = J_c M^-1 J_q^T,
and a coordinate impulse P moves the bodies by u P, u = M^-1 J_q^T - M^-1 J_c^T K_c^-1 w,
while the joint block's accumulated impulse takes the reaction -K_c^-1 w P.  The gear and motor
rows then form a 2 x 2 system in (rotor, coordinate), solved exactly each sweep, so large gear
ratios on light links (N^2 J_m >> link inertia) converge at once.

Gear losses (efficiency eta < 1) are Coulomb friction on the geared coordinate, bounded by
(1 - eta) times the impulse the gear transmits, as contact friction is bounded by the normal
impulse.
"""
from .math3d import jit
from .solver import joint_coordinate

GEAR, MOTOR, GEAR_FRICTION = 0, 1, 2


@jit
def prepare_drives(drives, blocks, bodies, joints, state, work, dt):
    """Coordinate Jacobians, constrained responses and implicit electrical terms of each drive."""
    mj = work.vec12
    w = work.vec6a
    for d in range(drives.joint.shape[0]):
        j = drives.joint[d]
        joint_coordinate(j, joints, state.body_pos, state.body_quat, state.joint_q,
                         work.drive_J, d)
        for s in range(2):
            b = joints.body[j, s]
            for c in range(6):
                mj[6 * s + c] = 0.0
            if b < 0:
                continue
            iw = work.inv_inertia_w[b]
            jd = work.drive_J[d, s]
            for c in range(3):
                mj[6 * s + c] = bodies.inv_mass[b] * jd[c]
                mj[6 * s + 3 + c] = iw[c, 0] * jd[3] + iw[c, 1] * jd[4] + iw[c, 2] * jd[5]
        k = joints.block[j]
        r0 = blocks.row0[k]
        n = blocks.dim[k]
        # w = J_c M^-1 J_q^T and K_c^-1 w
        for i in range(n):
            acc = 0.0
            for s in range(2):
                for c in range(6):
                    acc += work.row_J[r0 + i, s, c] * mj[6 * s + c]
            w[i] = acc
        for i in range(n):
            acc = 0.0
            for m in range(n):
                acc += work.block_kinv[k, i, m] * w[m]
            work.drive_kcw[d, i] = acc
        # u = M^-1 J_q^T - M^-1 J_c^T K_c^-1 w and the constrained inverse mass k = J_q u
        k_coord = 0.0
        for s in range(2):
            for c in range(6):
                u = mj[6 * s + c]
                for i in range(n):
                    u -= work.drive_kcw[d, i] * work.row_MJ[r0 + i, s, c]
                work.drive_u[d, s, c] = u
                k_coord += work.drive_J[d, s, c] * u
        work.drive_k[d] = k_coord
        # implicit electrical step: lambda_m = f - damping * w_m+
        r_eff = drives.resistance[d] + drives.inductance[d] / dt
        kt = drives.kt[d]
        tau0 = kt * (drives.inductance[d] / dt * state.drive_current[d]
                     + state.drive_voltage[d]) / r_eff
        work.drive_soft[d, 0] = dt * tau0
        work.drive_soft[d, 1] = dt * (kt * drives.ke[d] / r_eff + drives.viscous[d])


@jit
def coordinate_rate(d, joints, drives, work):
    """Joint coordinate velocity of drive d's joint from the solver velocities."""
    j = drives.joint[d]
    acc = 0.0
    for s in range(2):
        b = joints.body[j, s]
        if b < 0:
            continue
        for c in range(6):
            acc += work.drive_J[d, s, c] * work.vel[b, c]
    return acc


@jit
def push_coordinate(d, bodies, joints, blocks, drives, work, impulse, P, constrained):
    """
    Apply a coordinate impulse P (N m s or N s) to drive d's joint.

    constrained: move the bodies by u P and give the joint block its reaction -K_c^-1 w P (in
    the solve); otherwise by M^-1 J_q^T P alone (in the warm start, whose block impulses already
    hold last step's reactions).
    """
    if P == 0.0:
        return
    j = drives.joint[d]
    for s in range(2):
        b = joints.body[j, s]
        if b < 0:
            continue
        if constrained:
            for c in range(6):
                work.vel[b, c] += work.drive_u[d, s, c] * P
        else:
            jd = work.drive_J[d, s]
            iw = work.inv_inertia_w[b]
            for c in range(3):
                work.vel[b, c] += bodies.inv_mass[b] * jd[c] * P
                work.vel[b, 3 + c] += (iw[c, 0] * jd[3] + iw[c, 1] * jd[4]
                                       + iw[c, 2] * jd[5]) * P
    if constrained:
        k = joints.block[j]
        r0 = blocks.row0[k]
        for i in range(blocks.dim[k]):
            impulse[r0 + i] -= work.drive_kcw[d, i] * P


@jit
def warm_start_drives(bodies, joints, blocks, drives, state, work, enabled):
    """Apply last step's gear, motor and gear-friction impulses (or clear them)."""
    for d in range(drives.joint.shape[0]):
        if not enabled:
            state.drive_impulse[d, :] = 0.0
            continue
        g = state.drive_impulse[d, GEAR]
        m = state.drive_impulse[d, MOTOR]
        state.rotor_speed[d] += drives.inv_rotor_inertia[d] * (g + m)
        P = -drives.gear[d] * g + state.drive_impulse[d, GEAR_FRICTION]
        push_coordinate(d, bodies, joints, blocks, drives, work, state.row_impulse, P, False)


@jit
def solve_gear_and_motor(d, drives, state, work, qdot, dt):
    """
    Solve the gear and motor rows of drive d exactly (2 x 2); return (d_gear, d_motor).

    gear:  (jm + N^2 k) dg + jm dm = -(w_m - N qdot)
    motor: D jm dg + (1 + D jm) dm = F - D w_m - lambda_m      (lambda_m+ = F - D w_m+)
    with jm = 1/J_m, k the constrained inverse mass of the coordinate and (F, D) the soft row;
    when the electrical impulse exceeds the current limit, (F, D) = (+-dt Kt i_max, dt b_m).
    """
    jm = drives.inv_rotor_inertia[d]
    n = drives.gear[d]
    k = work.drive_k[d]
    w_m = state.rotor_speed[d]
    lam_m = state.drive_impulse[d, MOTOR]
    a11 = jm + n * n * k
    r1 = -(w_m - n * qdot)
    f = work.drive_soft[d, 0]
    damp = work.drive_soft[d, 1]
    for mode in range(2):
        a21 = damp * jm
        a22 = 1.0 + damp * jm
        r2 = f - damp * w_m - lam_m
        det = a11 * a22 - jm * a21
        dg = (r1 * a22 - jm * r2) / det
        dm = (a11 * r2 - a21 * r1) / det
        if mode == 1:
            break
        # electrical part of the motor impulse: lambda_m + dt b w_m+
        w_new = w_m + jm * (dg + dm)
        electric = lam_m + dm + dt * drives.viscous[d] * w_new
        limit = dt * drives.kt[d] * drives.current_limit[d]
        if abs(electric) <= limit:
            break
        f = limit if electric > 0.0 else -limit
        damp = dt * drives.viscous[d]
    return dg, dm


@jit
def solve_drives(bodies, joints, blocks, drives, state, work, dt):
    """One Gauss-Seidel pass over the drives; returns the largest impulse change."""
    largest = 0.0
    for d in range(drives.joint.shape[0]):
        n = drives.gear[d]
        jm = drives.inv_rotor_inertia[d]
        qdot = coordinate_rate(d, joints, drives, work)
        dg, dm = solve_gear_and_motor(d, drives, state, work, qdot, dt)
        state.drive_impulse[d, GEAR] += dg
        state.drive_impulse[d, MOTOR] += dm
        state.rotor_speed[d] += jm * (dg + dm)
        push_coordinate(d, bodies, joints, blocks, drives, work, state.row_impulse, -n * dg,
                        True)
        largest = max(largest, abs(dg), abs(dm))
        eta = drives.efficiency[d]
        if eta >= 1.0:
            continue
        # gear losses: friction on the geared coordinate, the rotor carried along rigidly
        qdot = coordinate_rate(d, joints, drives, work)
        k = work.drive_k[d]
        k_geared = 1.0 / (1.0 / k + n * n / jm)
        bound = (1.0 - eta) * abs(n * state.drive_impulse[d, GEAR])
        old = state.drive_impulse[d, GEAR_FRICTION]
        new = min(max(old - qdot / k_geared, -bound), bound)
        df = new - old
        if df == 0.0:
            continue
        state.drive_impulse[d, GEAR_FRICTION] = new
        dg_carry = n * k_geared * df / jm  # the gear impulse that brings the rotor along
        state.drive_impulse[d, GEAR] += dg_carry
        state.rotor_speed[d] += jm * dg_carry
        push_coordinate(d, bodies, joints, blocks, drives, work, state.row_impulse,
                        df - n * dg_carry, True)
        largest = max(largest, abs(df))
    return largest


@jit
def finish_drives(drives, state, dt):
    """Armature current i+ = (lambda_m + dt b_m w_m+) / (dt Kt) from the motor row's impulse."""
    for d in range(drives.joint.shape[0]):
        electric = state.drive_impulse[d, MOTOR] + dt * drives.viscous[d] * state.rotor_speed[d]
        state.drive_current[d] = electric / (dt * drives.kt[d])
