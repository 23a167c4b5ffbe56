"""
Coulomb friction of spherical and planar joints: a vector of rows with one norm bound.

Rows: spherical, the relative angular velocity along world x, y, z, J_k = [0, -e_k, 0, e_k];
planar, the sliding of the child's anchor in the plane along the parent's in-plane unit vectors
b1, c1 (the ``rows.slide_row`` Jacobian).  As for scalar joints (``axes.py``) the rows are seen
through the joint's own bilateral block:
    K_f = J_f M^-1 J_f^T - W^T K_c^-1 W,   W = J_c M^-1 J_f^T,
    an impulse vector L moves the bodies by U L, U = M^-1 J_f^T - M^-1 J_c^T K_c^-1 W,
    and the joint block's accumulated impulse takes the reaction -K_c^-1 W L.
Each sweep computes the impulse that stops the relative motion, L* = L - K_f^-1 (J_f v), and,
when |L*| > F dt, scales it back onto the ball |L| = F dt (not each row clamped on its own), so
static friction holds exactly and sliding friction opposes the slip direction at full strength.
F is the breakaway value while the joint stuck in the last step (its friction impulse stayed
inside the bound), the sliding value once it slips.
"""
import numpy as np

from .math3d import cross, invert_spd, jit_inline, vneg, vsub
from .solver import frames_of_joint

PLANAR_DIM = 2


@jit_inline
def prepare_free_friction(free, blocks, bodies, joints, state, work, dt):
    """Rows, constrained responses, inverse effective masses and bounds of every joint."""
    J = work.free_J
    U = work.free_u
    kcw = work.free_kcw
    row_J = work.row_J
    row_MJ = work.row_MJ
    kinv = work.block_kinv
    inv_inertia = work.inv_inertia_w
    mj = work.free_mj
    w = work.free_w
    for f in range(free.joint.shape[0]):
        j = free.joint[f]
        m = free.dim[f]
        frames = frames_of_joint(j, joints, state.joint_anchor, state.body_pos, state.body_quat)
        for r in range(3):
            for s in range(2):
                for c in range(6):
                    J[f, r, s, c] = 0.0
        if m == PLANAR_DIM:
            for r in range(2):
                n = frames.perp1_a if r == 0 else frames.perp2_a
                ang_a = vneg(cross(vsub(frames.anchor_b, frames.xa), n))
                ang_b = cross(vsub(frames.anchor_b, frames.xb), n)
                for c in range(3):
                    J[f, r, 0, c] = -n[c]
                    J[f, r, 0, 3 + c] = ang_a[c]
                    J[f, r, 1, c] = n[c]
                    J[f, r, 1, 3 + c] = ang_b[c]
        else:
            for r in range(3):
                J[f, r, 0, 3 + r] = -1.0
                J[f, r, 1, 3 + r] = 1.0
        # M^-1 J_f^T per row and slot
        for r in range(m):
            for s in range(2):
                b = joints.body[j, s]
                for c in range(6):
                    mj[r, s, c] = 0.0
                if b >= 0:
                    for c in range(3):
                        mj[r, s, c] = bodies.inv_mass[b] * J[f, r, s, c]
                        mj[r, s, 3 + c] = (inv_inertia[b, c, 0] * J[f, r, s, 3]
                                           + inv_inertia[b, c, 1] * J[f, r, s, 4]
                                           + inv_inertia[b, c, 2] * J[f, r, s, 5])
        k = joints.block[j]
        r0 = blocks.row0[k]
        nc = blocks.dim[k]
        # W = J_c M^-1 J_f^T (row r: W[r, i]) and K_c^-1 W
        for r in range(m):
            for i in range(nc):
                acc = 0.0
                for s in range(2):
                    for c in range(6):
                        acc += row_J[r0 + i, s, c] * mj[r, s, c]
                w[r, i] = acc
            for i in range(nc):
                acc = 0.0
                for q in range(nc):
                    acc += kinv[k, i, q] * w[r, q]
                kcw[f, r, i] = acc
        # U = M^-1 J_f^T - M^-1 J_c^T K_c^-1 W and K_f = J_f U
        for r in range(m):
            for s in range(2):
                for c in range(6):
                    u = mj[r, s, c]
                    for i in range(nc):
                        u -= kcw[f, r, i] * row_MJ[r0 + i, s, c]
                    U[f, r, s, c] = u
        K = work.mat6
        for r in range(m):
            for q in range(m):
                acc = 0.0
                for s in range(2):
                    for c in range(6):
                        acc += J[f, r, s, c] * U[f, q, s, c]
                K[r, q] = acc
        invert_spd(K, m, work.free_kinv[f], work.gj)
        # breakaway bound while it stuck last step, sliding bound once it slips
        norm = 0.0
        for r in range(m):
            norm += state.free_impulse[f, r] ** 2
        stuck = np.sqrt(norm) < dt * free.friction[f] * (1.0 - 1e-9)
        work.free_bound[f] = dt * (free.static_friction[f] if stuck else free.friction[f])


@jit_inline
def warm_start_free_friction(free, bodies, joints, state, work, enabled):
    """Apply last step's friction impulses along M^-1 J_f^T (or clear them)."""
    vel = work.vel
    J = work.free_J
    inv_inertia = work.inv_inertia_w
    for f in range(free.joint.shape[0]):
        j = free.joint[f]
        for r in range(free.dim[f]):
            if not enabled:
                state.free_impulse[f, r] = 0.0
            lam = state.free_impulse[f, r]
            for s in range(2):
                b = joints.body[j, s]
                if b >= 0 and lam != 0.0:
                    for c in range(3):
                        vel[b, c] += bodies.inv_mass[b] * J[f, r, s, c] * lam
                        vel[b, 3 + c] += (inv_inertia[b, c, 0] * J[f, r, s, 3]
                                          + inv_inertia[b, c, 1] * J[f, r, s, 4]
                                          + inv_inertia[b, c, 2] * J[f, r, s, 5]) * lam


@jit_inline
def solve_free_friction(free, blocks, joints, state, work, items, lo, hi):
    """One pass over the friction of multi-DOF joints items[lo:hi]; return the largest change."""
    vel = work.vel
    J = work.free_J
    U = work.free_u
    kcw = work.free_kcw
    kinv = work.free_kinv
    impulse = state.free_impulse
    row_impulse = state.row_impulse
    largest = 0.0
    for n in range(lo, hi):
        f = items[n]
        j = free.joint[f]
        m = free.dim[f]
        a = joints.body[j, 0]
        b = joints.body[j, 1]
        rel = work.vec6a
        for r in range(m):
            acc = 0.0
            for c in range(6):
                if a >= 0:
                    acc += J[f, r, 0, c] * vel[a, c]
                acc += J[f, r, 1, c] * vel[b, c]
            rel[r] = acc
        new = work.vec6b
        norm = 0.0
        for r in range(m):
            acc = impulse[f, r]
            for q in range(m):
                acc -= kinv[f, r, q] * rel[q]
            new[r] = acc
            norm += acc * acc
        norm = np.sqrt(norm)
        bound = work.free_bound[f]
        scale = bound / norm if norm > bound else 1.0
        k = joints.block[j]
        r0 = blocks.row0[k]
        for r in range(m):
            delta = new[r] * scale - impulse[f, r]
            impulse[f, r] += delta
            largest = max(largest, abs(delta))
            for c in range(6):
                if a >= 0:
                    vel[a, c] += U[f, r, 0, c] * delta
                vel[b, c] += U[f, r, 1, c] * delta
            for i in range(blocks.dim[k]):
                row_impulse[r0 + i] -= kcw[f, r, i] * delta
    return largest
