"""
Rows on a scalar joint's coordinate: drive, Coulomb friction, viscous damping, limits.

An *axis* is a revolute, continuous or prismatic joint that has any of these rows.  All of them
act on the joint coordinate q through its Jacobian J_q, seen through the joint's own bilateral
block (Schur complement), so each axis is solved exactly relative to its joint:
    k = J_q M^-1 J_q^T - w^T K_c^-1 w,   w = J_c M^-1 J_q^T       (constrained inverse mass)
    a coordinate impulse P moves the bodies by u P, u = M^-1 J_q^T - M^-1 J_c^T K_c^-1 w,
    and the joint block's accumulated impulse takes the reaction -K_c^-1 w P.
On a driven joint the rotor is geared to the coordinate, so the coordinate rows see the geared
inverse mass k_g = 1 / (1/k + N^2 J_m) and carry the rotor along (``drives.py``).

Every one of these rows is the same generic 1-D row on the coordinate (Jolt's
AxisConstraintPart, Box2D's soft joint rows): a target velocity v*, impulse bounds [lo, hi] and
a softness g, solved by one clamp (``row_change``) with the axis's geared inverse mass k_g,
    lambda+ = clamp(lambda + (v* - qdot - g lambda) / (k_g + g), lo, hi),
the rows differing only in what ``prepare_axes`` writes into Work.axis_rows each step:
- friction (Jolt ``HingeConstraint`` friction, Box2D motor rows): target qdot+ = 0, accumulated
  impulse in [-F dt, F dt]; F is the static (breakaway) value while the joint is at rest at the
  start of the step, the dynamic value once it slides;
- damping, implicit: lambda = -dt c qdot+, target 0 with softness g = 1 / (dt c), so
  dl = -(lambda + dt c qdot) / (1 + dt c k_g) (stable for any c and dt: a huge damping makes the
  joint slow, never unstable);
- limits (speculative, one-sided; Catto's speculative contacts): with C = q - lower, the lower
  row is active when the joint is at the limit or within LIMIT_HOLD of it, or would cross it
  within the step, C + dt qdot <= 0, and asks qdot+ >= -C / dt (it may close the gap, never
  cross it) with an accumulated impulse >= 0; when it approaches faster than the restitution
  threshold it asks qdot+ >= -e qdot instead (a bounce with coefficient e).  The upper limit
  mirrors it.  A leftover overlap is removed by turning the joint's subtree rigidly
  (``project_limits``), never by velocity, so no energy is added;
- velocity limits (optional): one-sided rows qdot+ <= v_max and qdot+ >= -v_max;
- prescribed motion (``sim.prescribed.joints``): a velocity row with an unbounded impulse
  asking qdot+ = qdot*(t + dt), the curve's rate at the end of the step, and a position row in
  ``project_limits`` that turns the joint's subtree rigidly onto q*(t + dt) (positions only, as
  for limits); the velocity row's impulse over dt is the effort the motion needs on top of the
  other rows.
"""
import numpy as np

from .arrays import EFFICIENCY, LIMIT_IMPULSE, MOTOR_D, MOTOR_F, ROTOR_D
from .joints import PRISMATIC, prismatic, revolute
from .math3d import (jit, jit_inline, mat_vec, quat_from_rotvec, quat_mul, quat_normalized,
                     quat_to_mat, vadd, vsub)
from .solver import frames_of_joint, joint_coordinate

#: The coordinate rows of an axis, in the order a sweep solves them (State.axis_impulse columns).
FRICTION, DAMPING, LOWER, UPPER, SPEED_UP, SPEED_DOWN, PRESCRIBED = range(7)
#: Columns of one coordinate row this step (Work.axis_rows[x, row]): the generic 1-D row.
ROW_TARGET, ROW_LO, ROW_HI, ROW_SOFTNESS, ROW_ON = range(5)
#: Joint speed below which a joint counts as at rest for static friction, rad/s or m/s.
REST_SPEED = 1e-6
#: Approach speed above which a limit bounces with its restitution, rad/s or m/s.
RESTITUTION_SPEED = 1e-2
#: A limit row stays active (and its impulse warm) while the joint is within this of the limit,
#: rad or m, whatever its speed: the speculative row asks qdot+ >= -C / dt, so it only acts if
#: the joint would otherwise cross the limit within the step (exact, no force at a distance).
#: Without it a joint resting on its limit that creeps off by rounding (1e-12 rad at 1e-8
#: rad/s) lost its row and its impulse, and the next solve rebuilt them from nothing.
LIMIT_HOLD = 1e-6


@jit_inline
def within_reach(axes, x, q, rate, dt):
    """
    Return True when axis x's coordinate q is within reach of a limit this step.

    Within the last step's speed twice over (gravity cannot close more than that in one step)
    or within LIMIT_HOLD: the limit's row can act this step (both formulations' live axes).
    """
    reach = 2.0 * dt * abs(rate) + LIMIT_HOLD
    return q - axes.lower[x] <= reach or axes.upper[x] - q <= reach


@jit_inline
def coordinate_jacobian(j, jtype, body, axis_body, cpos, rot, pos, out, x):
    """
    Write joint j's coordinate Jacobian into out[x] from this step's body rotations.

    The joint type's own row (``revolute.coordinate_row``, ``prismatic.coordinate_row``, as
    ``joints.coordinate`` uses it) without building the joint's frames: the world axis is the
    parent's rotation times the axis in the parent body frame (``Joints.axis_body``), and the
    levers come from the child anchor.  Plain arrays in (see ``solve_axes``).
    """
    a = body[j, 0]
    b = body[j, 1]
    ax = (axis_body[j, 0], axis_body[j, 1], axis_body[j, 2])
    if a >= 0:
        ax = (rot[a, 0, 0] * ax[0] + rot[a, 0, 1] * ax[1] + rot[a, 0, 2] * ax[2],
              rot[a, 1, 0] * ax[0] + rot[a, 1, 1] * ax[1] + rot[a, 1, 2] * ax[2],
              rot[a, 2, 0] * ax[0] + rot[a, 2, 1] * ax[1] + rot[a, 2, 2] * ax[2])
    if jtype[j] != PRISMATIC:
        revolute.coordinate_row(ax, ax, ax, out, x)
        return
    rb = (rot[b, 0, 0] * cpos[j, 0] + rot[b, 0, 1] * cpos[j, 1] + rot[b, 0, 2] * cpos[j, 2],
          rot[b, 1, 0] * cpos[j, 0] + rot[b, 1, 1] * cpos[j, 1] + rot[b, 1, 2] * cpos[j, 2],
          rot[b, 2, 0] * cpos[j, 0] + rot[b, 2, 1] * cpos[j, 1] + rot[b, 2, 2] * cpos[j, 2])
    ra = (pos[b, 0] + rb[0], pos[b, 1] + rb[1], pos[b, 2] + rb[2])  # the anchor, world
    if a >= 0:
        ra = (ra[0] - pos[a, 0], ra[1] - pos[a, 1], ra[2] - pos[a, 2])
    prismatic.coordinate_row(ax, ra, rb, out, x)


@jit_inline
def prepare_axes(axes, blocks, bodies, joints, state, work, dt):
    """
    Coordinate Jacobian, constrained response and row set-up of every axis.

    Arrays are taken out of their containers once per function (see ``solve_axes``).
    """
    coord_J = work.axis_J
    response = work.axis_u
    reaction = work.axis_kcw
    row_J = work.row_J
    row_MJ = work.row_MJ
    kinv = work.block_kinv
    inv_inertia = work.inv_inertia_w
    inv_mass = bodies.inv_mass
    vel = work.vel
    body = joints.body
    mj = work.vec12
    w = work.vec6a
    live = work.axis_live
    impulses = state.axis_impulse
    jtype = joints.type
    axis_body = joints.axis_body
    cpos = joints.cpos
    rot = work.rot
    pos = state.body_pos
    n_live = 0
    for x in range(axes.joint.shape[0]):
        # live this step: a drive, friction, damping or speed row, or a limit within reach
        # (last step's speed twice over: gravity cannot close more than that in one step)
        j = axes.joint[x]
        q = state.joint_q[j]
        near = within_reach(axes, x, q, state.axis_rate[x], dt)
        if not (axes.always_live[x] or near or state.axis_prescribed[x] > 0.0):
            for r in range(impulses.shape[1]):
                impulses[x, r] = 0.0
            continue
        live[n_live] = x
        n_live += 1
        coordinate_jacobian(j, jtype, body, axis_body, cpos, rot, pos, coord_J, x)
        for s in range(2):
            b = body[j, s]
            for c in range(6):
                mj[6 * s + c] = 0.0
            if b >= 0:
                for c in range(3):
                    mj[6 * s + c] = inv_mass[b] * coord_J[x, s, c]
                    mj[6 * s + 3 + c] = (inv_inertia[b, c, 0] * coord_J[x, s, 3]
                                         + inv_inertia[b, c, 1] * coord_J[x, s, 4]
                                         + inv_inertia[b, c, 2] * coord_J[x, s, 5])
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
            reaction[x, i] = acc
        # u = M^-1 J_q^T - M^-1 J_c^T K_c^-1 w and the constrained inverse mass k = J_q u
        k_coord = 0.0
        qdot = 0.0
        for s in range(2):
            b = body[j, s]
            for c in range(6):
                u = mj[6 * s + c]
                for i in range(n):
                    u -= reaction[x, i] * row_MJ[r0 + i, s, c]
                response[x, s, c] = u
                k_coord += coord_J[x, s, c] * u
                if b >= 0:
                    qdot += coord_J[x, s, c] * vel[b, c]
        work.axis_k[x] = k_coord
        d = axes.drive[x]
        work.axis_kg[x] = (geared_inverse_mass(k_coord, axes.gear[x], axes.rotor_inertia[x])
                           if d >= 0 else k_coord)
        coordinate_rows(axes, x, work.axis_rows, state.joint_q[j], qdot, state.axis_rate[x],
                        state.axis_prescribed[x], state.axis_target_rate[x],
                        state.axis_impulse, dt, True)
    work.axis_live_n[0] = n_live


@jit_inline
def coordinate_rows(axes, x, rows, q, qdot, rate, prescribed, target_rate, impulses, dt,
                    damping):
    """
    Write this step's coordinate rows of axis x (the module docstring's), both formulations.

    Args:
        axes: arrays.Axes.
        x: axis index.
        rows: (n_axis, 7, 5) the rows to write (set_row).
        q: the joint coordinate at the start of the step, rad or m.
        qdot: its rate after this step's forces, rad/s or m/s.
        rate: its rate at the end of the last step (static friction holds at rest).
        prescribed: 1.0 where the joint follows a prescribed motion.
        target_rate: the prescribed motion's rate at the end of the step.
        impulses: (n_axis, 7) accumulated impulses (an inactive limit's is cleared).
        dt: step, s.
        damping: False where the formulation integrates the joint damping itself.
    """
    # friction: static bound while at rest at the start of the step, dynamic when sliding
    rest = abs(rate) <= REST_SPEED
    bound = dt * (axes.static_friction[x] if rest else axes.friction[x])
    set_row(rows, x, FRICTION, bound > 0.0, 0.0, -bound, bound, 0.0)
    damp = dt * axes.damping[x] if damping else 0.0
    set_row(rows, x, DAMPING, damp > 0.0, 0.0, -np.inf, np.inf,
            1.0 / damp if damp > 0.0 else 0.0)
    # limits: speculative activation and velocity targets
    for side in range(2):
        gap = q - axes.lower[x] if side == 0 else axes.upper[x] - q
        approach = qdot if side == 0 else -qdot  # < 0 when moving towards the limit
        active = gap <= LIMIT_HOLD or gap + dt * approach <= 0.0
        target = -max(gap, 0.0) / dt  # may close the gap within the step, never cross
        if active and approach < -RESTITUTION_SPEED and axes.restitution[x] > 0.0:
            target = max(target, -axes.restitution[x] * approach)
        if side == 0:
            set_row(rows, x, LOWER, active, target, 0.0, np.inf, 0.0)
        else:
            set_row(rows, x, UPPER, active, -target, -np.inf, 0.0, 0.0)
        if not active:
            impulses[x, LOWER + side] = 0.0
    speed = axes.velocity_limit[x]
    limited = speed < np.inf
    set_row(rows, x, SPEED_UP, limited, speed, -np.inf, 0.0, 0.0)
    set_row(rows, x, SPEED_DOWN, limited, -speed, 0.0, np.inf, 0.0)
    set_row(rows, x, PRESCRIBED, prescribed > 0.0, target_rate, -np.inf, np.inf, 0.0)


@jit_inline
def set_row(rows, x, row, on, target, lo, hi, softness):
    """Write coordinate row ``row`` of axis x for this step (Work.axis_rows)."""
    rows[x, row, ROW_TARGET] = target
    rows[x, row, ROW_LO] = lo
    rows[x, row, ROW_HI] = hi
    rows[x, row, ROW_SOFTNESS] = softness
    rows[x, row, ROW_ON] = 1.0 if on else 0.0


@jit_inline
def row_change(old, target, lo, hi, softness, qdot, k):
    """
    Return the new accumulated impulse of a generic 1-D row (the module docstring's clamp).

    Args:
        old: accumulated impulse, N s or N m s.
        target: velocity the row asks for, m/s or rad/s.
        lo: lower bound of the accumulated impulse.
        hi: its upper bound.
        softness: g (0 for a rigid row), (m/s) / (N s).
        qdot: current velocity along the row.
        k: inverse effective mass along the row.
    """
    return min(max(old + (target - qdot - softness * old) / (k + softness), lo), hi)


@jit
def sweep_coordinate_rows(rows, impulses, x, qdot, k, moved, largest):
    """
    Clamp each live coordinate row of axis x once, in order (both formulations' sweep).

    Args:
        rows: (n_axis, 7, 5) this step's rows (coordinate_rows).
        impulses: (n_axis, 7) accumulated impulses, updated.
        x: axis index.
        qdot: the coordinate's rate now, rad/s or m/s.
        k: inverse effective mass of the coordinate.
        moved: the impulse already applied along the coordinate in this pass, added to.
        largest: the largest impulse change so far, compared with.

    Returns:
        (moved, qdot, largest) after the rows.
    """
    for r in range(impulses.shape[1]):
        if rows[x, r, ROW_ON] == 0.0:
            continue
        old = impulses[x, r]
        new = row_change(old, rows[x, r, ROW_TARGET], rows[x, r, ROW_LO],
                         rows[x, r, ROW_HI], rows[x, r, ROW_SOFTNESS], qdot, k)
        impulses[x, r] = new
        moved += new - old
        qdot += k * (new - old)
        largest = max(largest, abs(new - old))
    return moved, qdot, largest


@jit_inline
def push_along_jacobian(vel, coord_J, x, body, j, inv_mass, inv_inertia, P):
    """Apply the coordinate impulse P along M^-1 J_q^T of axis x (joint j) to both bodies."""
    for s in range(2):
        b = body[j, s]
        if b >= 0 and P != 0.0:
            for c in range(3):
                vel[b, c] += inv_mass[b] * coord_J[x, s, c] * P
                vel[b, 3 + c] += (inv_inertia[b, c, 0] * coord_J[x, s, 3]
                                  + inv_inertia[b, c, 1] * coord_J[x, s, 4]
                                  + inv_inertia[b, c, 2] * coord_J[x, s, 5]) * P


@jit_inline
def warm_start_axes(axes, bodies, joints, state, work, enabled):
    """
    Apply last step's coordinate impulses of every axis (or clear them).

    They go in along M^-1 J_q^T alone: the joint block's warm start already holds last step's
    reactions.  The rotor's share is the drive's gear impulse (``drives.warm_start_drives``).
    """
    vel = work.vel
    coord_J = work.axis_J
    inv_inertia = work.inv_inertia_w
    inv_mass = bodies.inv_mass
    impulses = state.axis_impulse
    body = joints.body
    for x in range(axes.joint.shape[0]):
        P = 0.0
        for r in range(impulses.shape[1]):
            if not enabled:
                impulses[x, r] = 0.0
            P += impulses[x, r]
        push_along_jacobian(vel, coord_J, x, body, axes.joint[x], inv_mass, inv_inertia, P)


@jit_inline
def solve_axes(vel, coord_J, response, inv_k, geared, reaction, rows, impulses,
               row_impulse, soft, ainv, drive_impulse, rotor, body, joint_block, row0, dim,
               live, lo, hi, axis_joint, axis_drive, gear, inv_rotor, axis_rate):
    """
    One Gauss-Seidel pass over live axes live[lo:hi] (an island's); returns the largest change.

    Per axis: the drive's gear and motor rows (exact 2 x 2, ``drives.py``), then the coordinate
    rows (friction, damping, limits, velocity limits, prescribed motion) on the geared
    coordinate, each the generic 1-D row set up in Work.axis_rows (``row_change``): one
    ``solve_axis_rows``, whose coordinate impulse goes along the constrained response.  It takes
    plain arrays, taken out of the engine's containers once per step by
    ``step.solve_velocities``.
    """
    largest = 0.0
    for t in range(lo, hi):
        x = live[t]
        j = axis_joint[x]
        a = body[j, 0]
        b = body[j, 1]
        blk = joint_block[j]
        r0 = row0[blk]
        nrow = dim[blk]
        qdot = 0.0
        for c in range(6):
            if a >= 0:
                qdot += coord_J[x, 0, c] * vel[a, c]
            qdot += coord_J[x, 1, c] * vel[b, c]
        P, qdot, largest = solve_axis_rows(rows, impulses, x, axis_drive[x], qdot, inv_k[x],
                                           geared[x], soft, ainv, drive_impulse, rotor, gear,
                                           inv_rotor, largest)
        # apply: bodies along u, the joint block takes the reaction
        for c in range(6):
            if a >= 0:
                vel[a, c] += response[x, 0, c] * P
            vel[b, c] += response[x, 1, c] * P
        for i in range(nrow):
            row_impulse[r0 + i] -= reaction[x, i] * P
        axis_rate[x] = qdot
    return largest


@jit_inline
def geared_inverse_mass(k, gear, rotor_inertia):
    """
    Return a driven coordinate's inverse mass with its rotor geared in, 1 / (1/k + N^2 J_m).

    Args:
        k: the coordinate's constrained inverse mass (0: a coordinate nothing moves).
        gear: N, rotor speed / joint speed.
        rotor_inertia: J_m, kg m^2.
    """
    return 1.0 / (1.0 / k + gear * gear * rotor_inertia) if k > 0.0 else 0.0


@jit_inline
def solve_axis_rows(rows, impulses, x, d, qdot, k, kg, soft, ainv, drive_impulse, rotor, gear,
                    inv_rotor, largest):
    """
    Clamp axis x's rows once: its drive's gear and motor rows, gear losses, coordinate rows.

    The mechanics of one axis in either formulation, on its coordinate alone: the caller
    reads the rate qdot along the coordinate Jacobian, and applies the returned coordinate
    impulse along the coordinate's constrained response (the bodies through their joint's
    block in maximal coordinates, ``solve_axes``; the generalized velocities through a loop
    joint's rows in the tree, ``tree_rows.solve_loop_axes``), the joint's rows taking the
    reaction.  The drive's gear and motor rows are an exact 2 x 2 system in (rotor,
    coordinate) with the inverses of ``drives.prepare_drive``; the rotor speed is updated
    here.  Then the gear friction (Coulomb, bounded by (1 - eta) times the impulse the gear
    transmits) and the coordinate rows (``sweep_coordinate_rows``) on the geared coordinate,
    whose impulses carry the rotor along through the gear.

    Args:
        rows: (n_axis, 7, 5) this step's coordinate rows (``coordinate_rows``).
        impulses: (n_axis, 7) their accumulated impulses, updated.
        x: axis index.
        d: its drive, -1 for none.
        qdot: the coordinate's rate now, rad/s or m/s.
        k: the coordinate's constrained inverse mass.
        kg: the same with the rotor geared in (``geared_inverse_mass``; k without a drive).
        soft: (n_drive, 5) the drives' motor rows this step (arrays.MOTOR_F .. EFFICIENCY).
        ainv: (n_drive, 2, 2, 2) the inverse gear/motor matrices, free and current-limited.
        drive_impulse: (n_drive, 3) accumulated gear, motor and gear-friction impulses.
        rotor: (n_drive,) rotor speeds, rad/s, updated.
        gear: (n_drive,) N.
        inv_rotor: (n_drive,) 1/J_m.
        largest: the largest impulse change so far.

    Returns:
        (P, qdot, largest): the coordinate impulse to apply (N m s or N s), the rate after
        it, the largest change.
    """
    gear_part = 0.0  # the drive's own coordinate impulse, -N dg
    moved = 0.0  # sum of the coordinate rows' impulses (acting on the geared coordinate)
    if d >= 0:
        n = gear[d]
        jm = inv_rotor[d]
        w_m = rotor[d]
        lam_m = drive_impulse[d, 1]
        r1 = n * qdot - w_m
        r2 = soft[d, MOTOR_F] - soft[d, MOTOR_D] * w_m - lam_m
        dg = ainv[d, 0, 0, 0] * r1 + ainv[d, 0, 0, 1] * r2
        dm = ainv[d, 0, 1, 0] * r1 + ainv[d, 0, 1, 1] * r2
        b_dt = soft[d, ROTOR_D]
        electric = lam_m + dm + b_dt * (w_m + jm * (dg + dm))
        limit = soft[d, LIMIT_IMPULSE]
        if abs(electric) > limit:
            r2 = (limit if electric > 0.0 else -limit) - b_dt * w_m - lam_m
            dg = ainv[d, 1, 0, 0] * r1 + ainv[d, 1, 0, 1] * r2
            dm = ainv[d, 1, 1, 0] * r1 + ainv[d, 1, 1, 1] * r2
        drive_impulse[d, 0] += dg
        drive_impulse[d, 1] += dm
        rotor[d] += jm * (dg + dm)
        gear_part = -n * dg
        qdot -= k * n * dg
        largest = max(largest, abs(dg), abs(dm))
        # gear losses: Coulomb friction bounded by the transmitted impulse
        if soft[d, EFFICIENCY] < 1.0:
            bound = (1.0 - soft[d, EFFICIENCY]) * abs(n * drive_impulse[d, 0])
            old = drive_impulse[d, 2]
            new = row_change(old, 0.0, -bound, bound, 0.0, qdot, kg)
            drive_impulse[d, 2] = new
            moved += new - old
            qdot += kg * (new - old)
            largest = max(largest, abs(new - old))
    # the coordinate rows, in order: one clamp each
    moved, qdot, largest = sweep_coordinate_rows(rows, impulses, x, qdot, kg, moved, largest)
    P = gear_part + moved
    if d >= 0 and moved != 0.0:
        # the rows moved link and rotor together: the gear brings the rotor along
        n = gear[d]
        jm = inv_rotor[d]
        carry = n * kg * moved / jm
        drive_impulse[d, 0] += carry
        rotor[d] += jm * carry
        P -= n * carry
    return P, qdot, largest


@jit_inline
def prepare_push_limits(axes, joints, state, work, cwork, dt):
    """
    Limit rows of the penetration push (``step.push_out_penetration``) of every live axis.

    With q at the poses after this step's motion, the lower row asks the pseudo-rate
    qdot_u >= (lower - q) / dt and the upper one qdot_u <= (upper - q) / dt: a push may close a
    limit's gap, never cross it, and takes an overlap back out, so the push and the limits do
    not undo each other.
    """
    for t in range(work.axis_live_n[0]):
        x = work.axis_live[t]
        q = joint_coordinate(axes.joint[x], joints, state.joint_anchor, state.body_pos,
                             state.body_quat, state.joint_q, work.jrow, 0)
        push_limit_targets(cwork.push_limit, x, axes, q, dt)


@jit
def push_limit_targets(push_limit, x, axes, q, dt):
    """Write axis x's push rows: target rates (lower - q) / dt, (upper - q) / dt; no impulse."""
    push_limit[x, 0] = (axes.lower[x] - q) / dt
    push_limit[x, 1] = (axes.upper[x] - q) / dt
    push_limit[x, 2] = 0.0
    push_limit[x, 3] = 0.0


@jit
def push_limit_change(push_limit, x, qdot, k):
    """
    Clamp axis x's two push rows once at pseudo-rate qdot; return the pseudo-impulse applied.

    Accumulated pseudo-impulses >= 0 (lower) and <= 0 (upper); k is the coordinate's inverse
    effective mass (both formulations).
    """
    P = 0.0
    if push_limit[x, 0] > -np.inf:
        old = push_limit[x, 2]
        new = max(old + (push_limit[x, 0] - qdot) / k, 0.0)
        push_limit[x, 2] = new
        P += new - old
        qdot += k * (new - old)
    if push_limit[x, 1] < np.inf:
        old = push_limit[x, 3]
        new = min(old + (push_limit[x, 1] - qdot) / k, 0.0)
        push_limit[x, 3] = new
        P += new - old
    return P


@jit_inline
def solve_push_limits(push, coord_J, response, inv_k, rows, live, lo, hi, axis_joint, body):
    """
    One pass over the limit rows of live[lo:hi] in the push (pseudo-velocities ``push``).

    Returns the largest change.

    The rows act along the constrained response u of ``prepare_axes``, so the joint's own block
    stays satisfied; accumulated pseudo-impulses >= 0 (lower) and <= 0 (upper).
    """
    largest = 0.0
    for t in range(lo, hi):
        x = live[t]
        k = inv_k[x]
        if not k > 0.0:
            continue
        j = axis_joint[x]
        a = body[j, 0]
        b = body[j, 1]
        qdot = 0.0
        for c in range(6):
            if a >= 0:
                qdot += coord_J[x, 0, c] * push[a, c]
            qdot += coord_J[x, 1, c] * push[b, c]
        P = push_limit_change(rows, x, qdot, k)
        if P != 0.0:
            for c in range(6):
                if a >= 0:
                    push[a, c] += response[x, 0, c] * P
                push[b, c] += response[x, 1, c] * P
            largest = max(largest, abs(P))
    return largest


@jit_inline
def project_limits(axes, joints, state, work, tolerance):
    """
    Turn (or slide) a joint that overlaps a position limit back onto it; return the overlap.

    The whole subtree beyond the joint (its child body and every body carried by it) moves
    rigidly about the joint axis through the joint origin (along the axis for a prismatic
    joint), so no other joint is disturbed, whatever the mass ratios.  Angular momenta turn with
    the bodies and linear velocities are kept, so neither the kinetic energy nor the robot's
    linear momentum changes.  A loop joint (no subtree: its child hangs on a tree joint too)
    is left to its rows: its speculative limit rows never cross a limit, a prescribed one
    follows its curve's rate.
    """
    largest = 0.0
    for x in range(axes.joint.shape[0]):
        if axes.subtree_start[x] == axes.subtree_start[x + 1]:
            continue  # a loop joint's
        j = axes.joint[x]
        q = state.joint_q[j]  # updated after this step's positions (step stage 9)
        shift = 0.0
        if state.axis_prescribed[x] > 0.0:
            shift = state.axis_target_q[x] - q  # a prescribed joint lands on its curve
        elif q < axes.lower[x] - tolerance:
            shift = axes.lower[x] - q
        elif q > axes.upper[x] + tolerance:
            shift = axes.upper[x] - q
        if state.axis_prescribed[x] == 0.0:
            largest = max(largest, abs(shift))
        if shift != 0.0:
            f = frames_of_joint(j, joints, state.joint_anchor, state.body_pos, state.body_quat)
            # the joint type's motion of its coordinate: a turn about, or a slide along, the axis
            if joints.type[j] == PRISMATIC:
                rotvec, slide = prismatic.coordinate_motion(f.axis_a, shift)
            else:
                rotvec, slide = revolute.coordinate_motion(f.axis_a, shift)
            turn = quat_from_rotvec(rotvec)
            rot = quat_to_mat(turn)
            for i in range(axes.subtree_start[x], axes.subtree_start[x + 1]):
                b = axes.subtree_body[i]
                p = (state.body_pos[b, 0], state.body_pos[b, 1], state.body_pos[b, 2])
                p_new = vadd(vadd(f.anchor_a, mat_vec(rot, vsub(p, f.anchor_a))), slide)
                q_b = (state.body_quat[b, 0], state.body_quat[b, 1], state.body_quat[b, 2],
                       state.body_quat[b, 3])
                q_new = quat_normalized(quat_mul(turn, q_b))
                L_new = mat_vec(rot, (state.body_ang_mom[b, 0], state.body_ang_mom[b, 1],
                                      state.body_ang_mom[b, 2]))
                for c in range(3):
                    state.body_pos[b, c] = p_new[c]
                    state.body_ang_mom[b, c] = L_new[c]
                for c in range(4):
                    state.body_quat[b, c] = q_new[c]
            state.joint_q[j] = q + shift
    return largest
