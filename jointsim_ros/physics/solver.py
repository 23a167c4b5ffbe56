"""
Sequential impulses over constraint blocks.

After Catto 2005, 'Iterative dynamics with temporal coherence', and Box2D v3 ``solver.c``; a
joint's rows are solved as one block as in Jolt's constraint parts.

Every block holds d <= 6 rows with Jacobian J (per body slot), M^-1 J^T and the inverse
effective mass K^-1 = (J M^-1 J^T)^-1.  One block update is
    delta = -K^-1 (J v + bias),   lambda += delta,   v += M^-1 J^T delta,
and the sweeps (``physics/step.py``) stop at the tolerance, the iteration cap or the wall-clock
budget.
"""
import numpy as np

from . import joints as jt
from .arrays import BLOCK_JOINT, STOP_TIME_BUDGET, STOP_TOLERANCE
from .compile.clock import monotonic
from .math3d import invert_spd, jit, jit_inline, read3, read4

_ORIGIN = (0.0, 0.0, 0.0)
_IDENTITY = (1.0, 0.0, 0.0, 0.0)


@jit
def frames_of_joint(j, joints, anchor, pos, quat):
    """
    Return the JointFrames of joint j at the body poses (pos, quat); body -1 is the world.

    ``anchor`` is ``State.joint_anchor``: the joint origins in their parent frames, m.
    """
    a = joints.body[j, 0]
    b = joints.body[j, 1]
    xa = read3(pos, a) if a >= 0 else _ORIGIN
    qa = read4(quat, a) if a >= 0 else _IDENTITY
    return jt.joint_frames(xa, qa, read3(pos, b), read4(quat, b), read3(anchor, j),
                           read4(joints.pquat, j), read3(joints.cpos, j),
                           read4(joints.cquat, j), read3(joints.axis, j),
                           read3(joints.perp1, j), read3(joints.perp2, j))


@jit
def unwrap(q, q_prev, jtype):
    """Continuous revolute angle: q (in (-pi, pi]) moved by whole turns next to q_prev."""
    if jtype == jt.REVOLUTE or jtype == jt.CONTINUOUS:
        return q_prev + (q - q_prev + np.pi) % (2.0 * np.pi) - np.pi
    return q


@jit
def joint_coordinate(j, joints, anchor, pos, quat, q_prev, J, row):
    """Unwrapped coordinate of scalar joint j and its Jacobian in J[row, 0:2]."""
    f = frames_of_joint(j, joints, anchor, pos, quat)
    q = jt.coordinate(joints.type[j], f, read3(joints.axis, j), J, row)
    return unwrap(q, q_prev[j], joints.type[j])


@jit_inline
def block_constraint(k, blocks, joints, mimics, state, pos, quat, C, J, r0):
    """
    Position error C[r0:r0+d] and Jacobian J[r0:r0+d] of block k at the given poses.

    The joints' references (anchor, element length, switched on or off) and the previous
    coordinates (for unwrapping) come from ``state``; the poses may be predicted ones.

    ``J=None``: the error only (the position projection); numba compiles that case on its
    own and drops the Jacobian's arithmetic.

    One return only: an early return from a function holding the engine's namedtuple
    containers makes numba release and re-acquire every array in them (~0.6 us).
    """
    if blocks.kind[k] == BLOCK_JOINT:
        j = blocks.source[k]
        f = frames_of_joint(j, joints, state.joint_anchor, pos, quat)
        if J is None:
            # position error only (the projection): numba prunes the other branch
            rows = jt.constraint(joints.type[j], f, C[r0:], None, state.joint_length[j])
        else:
            rows = jt.constraint(joints.type[j], f, C[r0:], J[r0:], state.joint_length[j])
        if state.joint_active[j] == 0.0:
            for i in range(rows):
                C[r0 + i] = 0.0  # a switched-off element: no error to correct
    else:
        m = blocks.source[k]
        multiplier = mimics.multiplier[m]
        anchor = state.joint_anchor
        q_prev = state.joint_q
        if J is None:
            qf = joint_coordinate(mimics.follower[m], joints, anchor, pos, quat, q_prev, None, r0)
            ql = joint_coordinate(mimics.leader[m], joints, anchor, pos, quat, q_prev, None, r0)
        else:
            qf = joint_coordinate(mimics.follower[m], joints, anchor, pos, quat, q_prev, J, r0)
            # the follower's row waits in slots 2-3 while the leader's is built in slots 0-1;
            # then they swap, the leader's scaled by -multiplier (in place: the engine
            # allocates nothing)
            for s in range(2):
                for c in range(6):
                    J[r0, 2 + s, c] = J[r0, s, c]
            ql = joint_coordinate(mimics.leader[m], joints, anchor, pos, quat, q_prev, J, r0)
            for s in range(2):
                for c in range(6):
                    leader = J[r0, s, c]
                    J[r0, s, c] = J[r0, 2 + s, c]
                    J[r0, 2 + s, c] = -multiplier * leader
        C[r0] = qf - multiplier * ql - mimics.offset[m]
        rows = 1
    return rows


@jit_inline
def block_mass_terms(k, blocks, bodies, work, joint_active):
    """Fill M^-1 J^T of block k's rows and its inverse effective mass K^-1."""
    r0 = blocks.row0[k]
    d = blocks.dim[k]
    J = work.row_J
    MJ = work.row_MJ
    for i in range(d):
        r = r0 + i
        for s in range(4):
            b = blocks.body[k, s]
            if b < 0:
                for c in range(6):
                    MJ[r, s, c] = 0.0
                continue
            m = bodies.inv_mass[b]
            iw = work.inv_inertia_w[b]
            for c in range(3):
                MJ[r, s, c] = m * J[r, s, c]
                MJ[r, s, 3 + c] = iw[c, 0] * J[r, s, 3] + iw[c, 1] * J[r, s, 4] + \
                    iw[c, 2] * J[r, s, 5]
    K = work.mat6
    for i in range(d):
        for j in range(i, d):
            acc = 0.0
            for s in range(4):
                bs = blocks.body[k, s]
                if bs < 0:
                    continue
                for t in range(4):
                    if blocks.body[k, t] != bs:
                        continue
                    for c in range(6):
                        acc += J[r0 + i, s, c] * MJ[r0 + j, t, c]
            K[i, j] = acc
            K[j, i] = acc
    if blocks.kind[k] == BLOCK_JOINT and joint_active[blocks.source[k]] == 0.0:
        work.block_kinv[k, :d, :d] = 0.0  # a switched-off element applies no impulse
    else:
        invert_spd(K, d, work.block_kinv[k], work.gj)


@jit_inline
def block_velocity(k, blocks, work, out):
    """J v of block k's rows into out[0:d]."""
    r0 = blocks.row0[k]
    for i in range(blocks.dim[k]):
        acc = 0.0
        for s in range(4):
            b = blocks.body[k, s]
            if b < 0:
                continue
            for c in range(6):
                acc += work.row_J[r0 + i, s, c] * work.vel[b, c]
        out[i] = acc
    return out


@jit_inline
def apply_block_impulse(k, blocks, work, delta):
    """Apply v += M^-1 J^T delta for block k."""
    r0 = blocks.row0[k]
    for i in range(blocks.dim[k]):
        if delta[i] == 0.0:
            continue
        for s in range(4):
            b = blocks.body[k, s]
            if b < 0:
                continue
            for c in range(6):
                work.vel[b, c] += work.row_MJ[r0 + i, s, c] * delta[i]


@jit_inline
def warm_start(blocks, work, impulse, enabled):
    """Apply last step's accumulated impulses (or clear them when warm starting is off)."""
    if not enabled:
        impulse[:] = 0.0
    else:
        for k in range(blocks.dim.shape[0]):
            r0 = blocks.row0[k]
            apply_block_impulse(k, blocks, work, impulse[r0:r0 + blocks.dim[k]])


@jit_inline
def sweep_blocks(vel, row_J, row_MJ, bias, kinv, jv, delta, body, row0, dim, impulse, items, lo,
                 hi, direct):
    """
    One Gauss-Seidel sweep over blocks items[lo:hi] (an island's); returns the largest change.

    Plain arrays, taken out of the containers once per step (see ``axes.solve_axes``).
    ``direct``: the items are lo .. hi - 1 in order (``in_order``), read as the loop's index.
    """
    largest = 0.0
    for n in range(lo, hi):
        k = n if direct else items[n]
        d = dim[k]
        r0 = row0[k]
        for i in range(d):
            acc = bias[r0 + i]
            for s in range(4):
                b = body[k, s]
                if b >= 0:
                    for c in range(6):
                        acc += row_J[r0 + i, s, c] * vel[b, c]
            jv[i] = acc
        for i in range(d):
            acc = 0.0
            for j in range(d):
                acc -= kinv[k, i, j] * jv[j]
            delta[i] = acc
            impulse[r0 + i] += acc
            largest = max(largest, abs(acc))
        for s in range(4):
            b = body[k, s]
            if b >= 0:
                for i in range(d):
                    for c in range(6):
                        vel[b, c] += row_MJ[r0 + i, s, c] * delta[i]
    return largest


@jit_inline
def in_order(items, lo, hi):
    """Return True when items[lo:hi] are lo .. hi - 1 (one island holding every block)."""
    for n in range(lo, hi):
        if items[n] != n:
            return False
    return True


@jit
def sweep_stop(largest, tolerance, time_budget, clock, t0):
    """
    Return why the sweeps stop after this one, or -1 to go on (both formulations' solves).

    STOP_TOLERANCE when no impulse changed by ``tolerance`` (N s or N m s) in it,
    STOP_TIME_BUDGET when the sweeps since ``t0`` (s, ``monotonic(clock)``) took more than
    ``time_budget`` (0: none); the iteration cap is the caller's loop.
    """
    if largest < tolerance:
        return STOP_TOLERANCE
    if time_budget > 0.0 and monotonic(clock) - t0 > time_budget:
        return STOP_TIME_BUDGET
    return -1
