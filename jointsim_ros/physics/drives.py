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
from .math3d import jit_inline
from .solver import joint_coordinate

GEAR, MOTOR, GEAR_FRICTION = 0, 1, 2


@jit_inline
def prepare_drives(drives, blocks, bodies, joints, state, work, dt):
    """
    Coordinate Jacobians, constrained responses and implicit electrical terms of each drive.

    Arrays are taken out of their containers once (see ``solve_drives``).
    """
    coord_J = work.drive_J
    response = work.drive_u
    reaction = work.drive_kcw
    row_J = work.row_J
    row_MJ = work.row_MJ
    kinv = work.block_kinv
    inv_inertia = work.inv_inertia_w
    inv_mass = bodies.inv_mass
    body = joints.body
    mj = work.vec12
    w = work.vec6a
    for d in range(drives.joint.shape[0]):
        j = drives.joint[d]
        joint_coordinate(j, joints, state.body_pos, state.body_quat, state.joint_q, coord_J, d)
        for s in range(2):
            b = body[j, s]
            for c in range(6):
                mj[6 * s + c] = 0.0
            if b >= 0:
                for c in range(3):
                    mj[6 * s + c] = inv_mass[b] * coord_J[d, s, c]
                    mj[6 * s + 3 + c] = (inv_inertia[b, c, 0] * coord_J[d, s, 3]
                                         + inv_inertia[b, c, 1] * coord_J[d, s, 4]
                                         + inv_inertia[b, c, 2] * coord_J[d, s, 5])
        k = joints.block[j]
        r0 = blocks.row0[k]
        n = blocks.dim[k]
        # w = J_c M^-1 J_q^T and K_c^-1 w
        for i in range(n):
            acc = 0.0
            for s in range(2):
                for c in range(6):
                    acc += row_J[r0 + i, s, c] * mj[6 * s + c]
            w[i] = acc
        for i in range(n):
            acc = 0.0
            for m in range(n):
                acc += kinv[k, i, m] * w[m]
            reaction[d, i] = acc
        # u = M^-1 J_q^T - M^-1 J_c^T K_c^-1 w and the constrained inverse mass k = J_q u
        k_coord = 0.0
        for s in range(2):
            for c in range(6):
                u = mj[6 * s + c]
                for i in range(n):
                    u -= reaction[d, i] * row_MJ[r0 + i, s, c]
                response[d, s, c] = u
                k_coord += coord_J[d, s, c] * u
        work.drive_k[d] = k_coord
        # implicit electrical step: lambda_m = f - damping * w_m+
        r_eff = drives.resistance[d] + drives.inductance[d] / dt
        kt = drives.kt[d]
        tau0 = kt * (drives.inductance[d] / dt * state.drive_current[d]
                     + state.drive_voltage[d]) / r_eff
        work.drive_soft[d, 0] = dt * tau0
        work.drive_soft[d, 1] = dt * (kt * drives.ke[d] / r_eff + drives.viscous[d])
        # the gear/motor matrix is constant over the step: invert it for both motor modes
        jm = drives.inv_rotor_inertia[d]
        n_gear = drives.gear[d]
        a11 = jm + n_gear * n_gear * k_coord
        for mode in range(2):
            damp = work.drive_soft[d, 1] if mode == 0 else dt * drives.viscous[d]
            a21 = damp * jm
            a22 = 1.0 + damp * jm
            det = a11 * a22 - jm * a21
            work.drive_ainv[d, mode, 0, 0] = a22 / det
            work.drive_ainv[d, mode, 0, 1] = -jm / det
            work.drive_ainv[d, mode, 1, 0] = -a21 / det
            work.drive_ainv[d, mode, 1, 1] = a11 / det
        work.drive_kg[d] = 1.0 / (1.0 / k_coord + n_gear * n_gear / jm)


@jit_inline
def warm_start_drives(bodies, joints, blocks, drives, state, work, enabled):
    """
    Apply last step's gear, motor and gear-friction impulses (or clear them).

    The coordinate impulse goes in along M^-1 J_q^T alone: the joint block's warm start
    already holds last step's reactions.
    """
    vel = work.vel
    coord_J = work.drive_J
    inv_inertia = work.inv_inertia_w
    inv_mass = bodies.inv_mass
    impulses = state.drive_impulse
    body = joints.body
    for d in range(drives.joint.shape[0]):
        if not enabled:
            impulses[d, GEAR] = impulses[d, MOTOR] = impulses[d, GEAR_FRICTION] = 0.0
        g = impulses[d, GEAR]
        state.rotor_speed[d] += drives.inv_rotor_inertia[d] * (g + impulses[d, MOTOR])
        P = -drives.gear[d] * g + impulses[d, GEAR_FRICTION]
        j = drives.joint[d]
        for s in range(2):
            b = body[j, s]
            if b >= 0:
                for c in range(3):
                    vel[b, c] += inv_mass[b] * coord_J[d, s, c] * P
                    vel[b, 3 + c] += (inv_inertia[b, c, 0] * coord_J[d, s, 3]
                                      + inv_inertia[b, c, 1] * coord_J[d, s, 4]
                                      + inv_inertia[b, c, 2] * coord_J[d, s, 5]) * P


@jit_inline
def solve_drives(bodies, joints, blocks, drives, state, work, dt):
    """
    One Gauss-Seidel pass over the drives; returns the largest impulse change.

    Gear and motor rows of a drive are solved exactly as a 2 x 2 system,
        gear:  (jm + N^2 k) dg + jm dm = -(w_m - N qdot)
        motor: D jm dg + (1 + D jm) dm = F - D w_m - lambda_m     (lambda_m+ = F - D w_m+)
    with jm = 1/J_m, k the constrained inverse mass of the coordinate and (F, D) the soft row;
    when the electrical impulse exceeds the current limit, (F, D) = (+-dt Kt i_max, dt b_m).
    The matrix of each mode is inverted once per step (``prepare_drives``).

    Every array is taken out of its container once, here: numba otherwise pays an atomic
    reference-count pair for each container access inside the loop (about 1 us per drive).
    """
    vel = work.vel
    coord_J = work.drive_J
    response = work.drive_u
    inv_k = work.drive_k
    reaction = work.drive_kcw
    soft = work.drive_soft
    ainv = work.drive_ainv
    geared = work.drive_kg
    impulses = state.drive_impulse
    rotor = state.rotor_speed
    row_impulse = state.row_impulse
    body = joints.body
    joint_block = joints.block
    row0 = blocks.row0
    dim = blocks.dim
    largest = 0.0
    for d in range(drives.joint.shape[0]):
        j = drives.joint[d]
        a = body[j, 0]
        b = body[j, 1]
        k = joint_block[j]
        r0 = row0[k]
        nrow = dim[k]
        n = drives.gear[d]
        jm = drives.inv_rotor_inertia[d]
        qdot = 0.0
        for c in range(6):
            if a >= 0:
                qdot += coord_J[d, 0, c] * vel[a, c]
            qdot += coord_J[d, 1, c] * vel[b, c]
        w_m = rotor[d]
        lam_m = impulses[d, MOTOR]
        r1 = n * qdot - w_m
        r2 = soft[d, 0] - soft[d, 1] * w_m - lam_m
        dg = ainv[d, 0, 0, 0] * r1 + ainv[d, 0, 0, 1] * r2
        dm = ainv[d, 0, 1, 0] * r1 + ainv[d, 0, 1, 1] * r2
        b_dt = dt * drives.viscous[d]
        electric = lam_m + dm + b_dt * (w_m + jm * (dg + dm))
        limit = dt * drives.kt[d] * drives.current_limit[d]
        if abs(electric) > limit:
            r2 = (limit if electric > 0.0 else -limit) - b_dt * w_m - lam_m
            dg = ainv[d, 1, 0, 0] * r1 + ainv[d, 1, 0, 1] * r2
            dm = ainv[d, 1, 1, 0] * r1 + ainv[d, 1, 1, 1] * r2
        # gear losses: friction on the geared coordinate, bounded by the transmitted impulse,
        # with the rotor carried along (the rate after the gear impulse is qdot - k N dg)
        df = 0.0
        dg_carry = 0.0
        if drives.efficiency[d] < 1.0:
            bound = (1.0 - drives.efficiency[d]) * abs(n * (impulses[d, GEAR] + dg))
            old = impulses[d, GEAR_FRICTION]
            new = min(max(old - (qdot - inv_k[d] * n * dg) / geared[d], -bound), bound)
            df = new - old
            dg_carry = n * geared[d] * df / jm
            impulses[d, GEAR_FRICTION] = new
        impulses[d, GEAR] += dg + dg_carry
        impulses[d, MOTOR] += dm
        rotor[d] += jm * (dg + dm + dg_carry)
        P = df - n * (dg + dg_carry)  # coordinate impulse, moved with the joint's reaction
        for c in range(6):
            if a >= 0:
                vel[a, c] += response[d, 0, c] * P
            vel[b, c] += response[d, 1, c] * P
        for i in range(nrow):
            row_impulse[r0 + i] -= reaction[d, i] * P
        largest = max(largest, abs(dg), abs(dm), abs(df))
    return largest


@jit_inline
def finish_drives(drives, state, dt):
    """Armature current i+ = (lambda_m + dt b_m w_m+) / (dt Kt) from the motor row's impulse."""
    for d in range(drives.joint.shape[0]):
        electric = state.drive_impulse[d, MOTOR] + dt * drives.viscous[d] * state.rotor_speed[d]
        state.drive_current[d] = electric / (dt * drives.kt[d])
