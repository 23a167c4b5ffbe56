"""
The tree formulation's mechanics of the shared rows, and their sequential-impulse solve.

Contacts, limits and joint friction on the generalized velocities.

The contact pipeline (physics/contacts.py: detection, manifolds, materials, the rows' targets
and projection) and the coordinate rows' definitions (physics/axes.py: ``coordinate_rows``,
``row_change``) exist once; this module supplies how a row sees and moves the tree's velocity
vector, the generalized velocities qd (physics/tree.py), as physics/body_mechanics.py does for
the bodies' twists of the maximal formulation.

Jacobian.  A unit force d at the world point p is the spatial force f = (p x d; d) about the
origin (a unit torque d: f = (d; 0)); the velocity of a row through body b is
    J qd = sum over the joints i on b's path to the root of (S_i^T f) qd_i,
(S_i the joint's world motion subspace, physics/tree.py), so J is S_i^T f on those coordinates
and 0 elsewhere: Featherstone's B^T applied to one body's force.  A row between two bodies takes
J_A - J_B.

Response.  The step's velocity change already factored (H + A + h B) (the articulated-body
algorithm's U_i and D_i^-1, ``tree_velocity_change``), so the velocity response to a unit impulse
along the row, U = (H + A + h B)^-1 J^T, is one more pair of O(n) sweeps
(``articulated_solve``: Featherstone's test impulse, Mirtich's collision matrix column through the
articulated-body algorithm; Bullet's btMultiBody ``fillConstraintJacobianMultiDof`` does the
same).  Its effective mass is k = J U, the diagonal of the Delassus matrix J H^-1 J^T that
MuJoCo's solvers work on.  The armature A and the implicit damping h B (joint damping, drives'
back-EMF) are in it, so a contact or a limit meets the drive's rotor and its electrical damping
as the step does.

Groups.  The robot's nodes and each free scene object form separate groups (independent trees:
H is block diagonal), each a contiguous range of nodes and of coordinates, so a row has one
segment of qd per body's group (two when it joins two groups) and its response is computed over
those groups alone.  A scalar joint's coordinate row (limit, friction, speed limit) has
J = e_v: its response is the column v of (H + A + h B)^-1 over the joint's group.

Links: bilateral rows the tree's coordinates do not hold by themselves, unbounded and
warm-started.  A mimic pair (follower f, leader l, q_f = r q_l + o) is one row on two
coordinates of one group, J = e_f - r e_l, U = column f - r column l of (H + A + h B)^-1.  A
loop joint between bodies A and B (a loop_joints entry, a URDF loop joint, a grasp while it
holds) has its type's rows (physics/joints/: 3 for a ball joint, 5 for a hinge, 6 for a weld),
each a row on the two bodies' twists, (lin_A, ang_A, lin_B, ang_B), which is the spatial force
f = (x x lin + ang; lin) on each body (x its COM) and so J = sum over the bodies of B_b^T f, as
a contact row.  Their velocity target is 0 (or the rate of a moving reference); the drift the
first-order position update leaves (a loop's curvature, unconverged sweeps) is removed after the
positions by a pseudo-velocity solve with targets -C / dt integrated into the positions only
(``link_push_targets``), so it adds no kinetic energy.

A scalar loop joint's coordinate rows (friction, damping, limits, speed limits, prescribed
motion; physics/axes.py's definitions) and its commanded effort act on the relative motion of
its two bodies: its coordinate row J_q on their twists is a pair of spatial forces, as a loop
row, seen through the joint's own link rows as maximal mode's axes are through their joint's
block (``loop_axis_rows``); its limits and prescribed motion also clamp the position push.  A
drive on it is maximal mode's rotor with its gear and motor rows, solved by the same functions
(physics/drives.py, ``axes.solve_axis_rows``).  A spherical loop joint's Coulomb friction is
maximal mode's three rows on its bodies' relative rotation, norm-bounded, seen through its
rows the same way (``loop_friction_rows``).
"""
import numpy as np

from . import joints as jt
from .axes import (coordinate_rows, geared_inverse_mass, push_limit_change, push_limit_targets,
                   solve_axis_rows, sweep_coordinate_rows, within_reach)
from .contacts import has_angular_rows, leave_out, N_ROWS, row_apply, row_dot
from .drives import prepare_drive, warm_start_drive
from .math3d import cross, invert_spd, jit
from .solver import frames_of_joint, joint_coordinate

#: A row a link's coordinates cannot move (a loop joint constraining a direction no joint of the
#: tree turns or slides along) has J U below this fraction of its link's largest: left out.
LINK_DEGENERATE = 1e-10


@jit
def outward_solve(tm, wk, out, n0, n1):
    """
    Write out[v] from the inward sweep's wk.u: the factor's outward sweep over one group.

    The velocity changes node by node from the root: qd_i = D_i^-1 (u_i - U_i^T a_parent),
    a_i = a_parent + S_i qd_i (``articulated_solve`` and ``path_solve`` share it).
    """
    for i in range(n0, n1):
        p = tm.parent[i]
        d = tm.dof[i]
        v0 = tm.v0[i]
        for m in range(6):
            wk.acc[i, m] = wk.acc[p, m] if p >= 0 else 0.0
        for k in range(d):
            acc = wk.u[i, k]
            for r in range(6):
                acc -= wk.U[i, k, r] * wk.acc[i, r]
            wk.vec6a[k] = acc
        for k in range(d):
            acc = 0.0
            for m in range(d):
                acc += wk.Dinv[i, k, m] * wk.vec6a[m]
            out[v0 + k] = acc
        for k in range(d):
            for r in range(6):
                wk.acc[i, r] += wk.S[i, k, r] * out[v0 + k]


@jit
def articulated_solve(tm, wk, rhs, out, n0, n1):
    """
    Return in out[v] (H + diag)^-1 rhs over the nodes n0 .. n1 - 1 (one group).

    The factor's two sweeps (U_i and D_i^-1 from the step's inward pass): an inward sweep of
    bias impulses and an outward sweep of velocity changes.  Reads rhs and writes out only on
    the group's coordinates.
    """
    for i in range(n0, n1):
        for r in range(6):
            wk.PA[i, r] = 0.0
    for i in range(n1 - 1, n0 - 1, -1):
        d = tm.dof[i]
        v0 = tm.v0[i]
        for k in range(d):
            acc = rhs[v0 + k]
            for r in range(6):
                acc -= wk.S[i, k, r] * wk.PA[i, r]
            wk.u[i, k] = acc
        p = tm.parent[i]
        if p < 0:
            continue
        for r in range(6):
            acc = wk.PA[i, r]
            for k in range(d):
                for m in range(d):
                    acc += wk.U[i, k, r] * wk.Dinv[i, k, m] * wk.u[i, m]
            wk.PA[p, r] += acc
    outward_solve(tm, wk, out, n0, n1)


@jit
def path_solve(tm, wk, rhs, out, n0, n1, leaf):
    """
    ``articulated_solve`` of a rhs that is zero off the path from node leaf to its root.

    A unit force on a body or a unit impulse on a coordinate: the inward sweep's bias
    impulses are exactly zero in every subtree holding none of the rhs, so the sweep runs up
    the path alone (the same operations on the path's nodes, in the same order: the result is
    articulated_solve's to the bit); the outward sweep runs over the whole group.
    """
    for i in range(n0, n1):
        for k in range(tm.dof[i]):
            wk.u[i, k] = 0.0
    i = leaf
    while i >= 0:
        for r in range(6):
            wk.PA[i, r] = 0.0
        i = tm.parent[i]
    i = leaf
    while i >= 0:
        d = tm.dof[i]
        v0 = tm.v0[i]
        for k in range(d):
            acc = rhs[v0 + k]
            for r in range(6):
                acc -= wk.S[i, k, r] * wk.PA[i, r]
            wk.u[i, k] = acc
        p = tm.parent[i]
        if p >= 0:
            for r in range(6):
                acc = wk.PA[i, r]
                for k in range(d):
                    for m in range(d):
                        acc += wk.U[i, k, r] * wk.Dinv[i, k, m] * wk.u[i, m]
                wk.PA[p, r] += acc
        i = p
    outward_solve(tm, wk, out, n0, n1)


@jit
def node_velocities(tm, qd, wk):
    """Outward pass v_i = v_lambda(i) + S_i qd_i (world axes, about the origin)."""
    for i in range(tm.parent.shape[0]):
        p = tm.parent[i]
        for m in range(6):
            wk.vel[i, m] = wk.vel[p, m] if p >= 0 else 0.0
        for k in range(tm.dof[i]):
            for m in range(6):
                wk.vel[i, m] += wk.S[i, k, m] * qd[tm.v0[i] + k]


@jit
def body_velocities(tm, wk, qd):
    """Fill wk.body_vel: the bodies' COM and angular velocities (n_body, 6; world) from qd."""
    node_velocities(tm, qd, wk)
    for i in range(tm.parent.shape[0]):
        b = tm.body[i]
        w = (wk.vel[i, 0], wk.vel[i, 1], wk.vel[i, 2])
        wx = cross(w, (wk.body_x[b, 0], wk.body_x[b, 1], wk.body_x[b, 2]))
        for m in range(3):
            wk.body_vel[b, m] = wk.vel[i, 3 + m] + wx[m]
            wk.body_vel[b, 3 + m] = w[m]


@jit
def six_solves(tm, wk, n0, n1, g0):
    """
    Six ``path_solve`` runs side by side over the nodes n0 .. n1 - 1 (one group).

    Right-hand side j in wk.six_rhs[:, j] (the group's coordinates from g0), zero off the
    nodes marked in wk.six_mark (the paths to the root of the nodes it touches; a side
    unused: zero everywhere); results in wk.six_res[:, j].  The marked nodes a right-hand
    side's path misses give it exactly zero (its bias impulses there are +0.0 and add
    nothing), so each result is path_solve's alone to the bit, while each node's S, U and
    D^-1 are read once for all six and the loops over them vectorise.
    """
    u = wk.six_u
    pa = wk.six_pa
    acc = wk.six_acc
    w = wk.six_w
    out = wk.six_out
    for i in range(n0, n1):
        for k in range(tm.dof[i]):
            for m in range(6):
                u[i, k, m] = 0.0
        if wk.six_mark[i] > 0.0:
            for r in range(6):
                for m in range(6):
                    pa[i, r, m] = 0.0
    # inward, over the marked paths: u_i = rhs_i - S_i^T P^A_i;
    # P^A_parent += P^A_i + U_i D_i^-1 u_i
    for i in range(n1 - 1, n0 - 1, -1):
        if wk.six_mark[i] == 0.0:
            continue
        d = tm.dof[i]
        c0 = tm.v0[i] - g0
        for k in range(d):
            for m in range(6):
                w[k, m] = wk.six_rhs[c0 + k, m]
            for r in range(6):
                f = wk.S[i, k, r]
                for m in range(6):
                    w[k, m] -= f * pa[i, r, m]
            for m in range(6):
                u[i, k, m] = w[k, m]
        p = tm.parent[i]
        if p >= 0:
            for r in range(6):
                for m in range(6):
                    w[0, m] = pa[i, r, m]
                for k in range(d):
                    for q in range(d):
                        f = wk.U[i, k, r] * wk.Dinv[i, k, q]
                        for m in range(6):
                            w[0, m] += f * u[i, q, m]
                for m in range(6):
                    pa[p, r, m] += w[0, m]
    # outward, over the group: velocity changes
    for i in range(n0, n1):
        p = tm.parent[i]
        d = tm.dof[i]
        c0 = tm.v0[i] - g0
        for r in range(6):
            for m in range(6):
                acc[i, r, m] = acc[p, r, m] if p >= 0 else 0.0
        for k in range(d):
            for m in range(6):
                w[k, m] = u[i, k, m]
            for r in range(6):
                f = wk.U[i, k, r]
                for m in range(6):
                    w[k, m] -= f * acc[i, r, m]
        for k in range(d):
            for m in range(6):
                out[k, m] = 0.0
            for q in range(d):
                f = wk.Dinv[i, k, q]
                for m in range(6):
                    out[k, m] += f * w[q, m]
            for m in range(6):
                wk.six_res[c0 + k, m] = out[k, m]
        for k in range(d):
            for r in range(6):
                f = wk.S[i, k, r]
                for m in range(6):
                    acc[i, r, m] += f * out[k, m]


@jit
def _mark_path(tm, wk, i):
    """Mark node i and its ancestors in wk.six_mark (the paths ``six_solves`` sweeps inward)."""
    while i >= 0 and wk.six_mark[i] == 0.0:
        wk.six_mark[i] = 1.0
        i = tm.parent[i]


@jit
def _clear_marks(wk, n0, n1):
    """Clear wk.six_mark over the nodes n0 .. n1 - 1."""
    for i in range(n0, n1):
        wk.six_mark[i] = 0.0


@jit
def _group_range(tm, b):
    """Return body b's node, its group's first coordinate and size, first and end node."""
    i0 = tm.body_node[b]
    g = tm.node_group[i0]
    g0 = tm.group_v[g]
    return i0, g0, tm.group_v[g + 1] - g0, tm.group_node[g], tm.group_node[g + 1]


@jit
def _solve_body_columns(tm, wk, b, columns):
    """
    Solve the first ``columns`` right-hand sides in wk.six_rhs over body b's group.

    They are zero off b's path to the root (``six_solves`` sweeps inward over that path only);
    they become wk.body_J[b, m] and their responses wk.body_U[b, m], m < columns.
    """
    i0, g0, n, n0, n1 = _group_range(tm, b)
    _clear_marks(wk, n0, n1)
    _mark_path(tm, wk, i0)
    six_solves(tm, wk, n0, n1, g0)
    for m in range(columns):
        for c in range(n):
            wk.body_J[b, m, c] = wk.six_rhs[c, m]
            wk.body_U[b, m, c] = wk.six_res[c, m]


@jit
def _body_response(tm, wk, b):
    """
    Jacobian and response of a unit spatial force on body b, once per body and step.

    wk.body_J[b, m] holds B_b^T e_m (S_i^T e_m on the joints of b's path to the root, over
    b's group) and wk.body_U[b, m] = (H + A + h B)^-1 B_b^T e_m, so any row through body b is
    a combination of the six: J = sum_m f_m body_J[b, m].  The six solves run side by side
    (``six_solves``).
    """
    if wk.body_ready[b] > 0.0:
        return
    wk.body_ready[b] = 1.0
    i0, g0, n, _, _ = _group_range(tm, b)
    for c in range(n):
        for m in range(6):
            wk.six_rhs[c, m] = 0.0
    i = i0
    while i >= 0:
        for k in range(tm.dof[i]):
            for m in range(6):
                wk.six_rhs[tm.v0[i] + k - g0, m] = wk.S[i, k, m]
        i = tm.parent[i]
    _solve_body_columns(tm, wk, b, 6)


@jit
def _point_columns(tm, wk, b, i, contacts, g0, c0):
    """
    Write contact point i's three unit forces on body b into wk.six_rhs[:, c0 .. c0 + 2].

    The spatial forces (p x d_k; d_k) (d_k the point's normal and tangents) seen by the
    coordinates of b's path to the root (S^T f), zero elsewhere in b's group (from g0).
    """
    f = wk.vec6b
    for k in range(3):
        row_force(contacts, i, k, f)
        node = tm.body_node[b]
        while node >= 0:
            for q in range(tm.dof[node]):
                s = 0.0
                for m in range(6):
                    s += wk.S[node, q, m] * f[m]
                wk.six_rhs[tm.v0[node] + q - g0, c0 + k] = s
            node = tm.parent[node]


@jit
def _point_pair(tm, wk, b, i, b2, i2, contacts):
    """
    Bodies b's and b2's responses to their points i's and i2's rows (b2 < 0: b's alone).

    Both bodies in one group, each with one point's three rows this step
    (``_single_points``): wk.body_J[b, k] and wk.body_U[b, k], k < 3, become the rows' own
    Jacobians and responses, found in one ``six_solves`` (b's in columns 0-2, b2's in 3-5;
    each column's result is its own path solve's to the bit, see ``six_solves``).  Marks the
    bodies with 2 + i in wk.body_ready.
    """
    i0, g0, n, n0, n1 = _group_range(tm, b)
    for c in range(n):
        for k in range(6):
            wk.six_rhs[c, k] = 0.0
    _clear_marks(wk, n0, n1)
    _point_columns(tm, wk, b, i, contacts, g0, 0)
    _mark_path(tm, wk, i0)
    wk.body_ready[b] = 2.0 + i
    if b2 >= 0:
        _point_columns(tm, wk, b2, i2, contacts, g0, 3)
        _mark_path(tm, wk, tm.body_node[b2])
        wk.body_ready[b2] = 2.0 + i2
    six_solves(tm, wk, n0, n1, g0)
    for k in range(3):
        for c in range(n):
            wk.body_J[b, k, c] = wk.six_rhs[c, k]
            wk.body_U[b, k, c] = wk.six_res[c, k]
    if b2 >= 0:
        for k in range(3):
            for c in range(n):
                wk.body_J[b2, k, c] = wk.six_rhs[c, 3 + k]
                wk.body_U[b2, k, c] = wk.six_res[c, 3 + k]


@jit
def _point_responses(tm, wk, contacts):
    """
    Solve the responses of the bodies ``_single_points`` marked, two bodies a solve.

    A body whose only rows are one point's three needs three columns of the factor: two such
    bodies of one group (two feet of a robot) share one ``six_solves`` (``_point_pair``).
    """
    held = -1       # a body waiting for a partner, and its point
    held_i = -1
    for i in range(contacts.count[0]):
        for side in range(2):
            r = contacts.body[i, side]
            if r < 0 or wk.body_ready[r] != -(1.0 + i):
                continue
            if held < 0:
                held = r
                held_i = i
                continue
            if tm.node_group[tm.body_node[r]] == tm.node_group[tm.body_node[held]]:
                _point_pair(tm, wk, held, held_i, r, i, contacts)
                held = -1
            else:
                _point_pair(tm, wk, held, held_i, -1, -1, contacts)
                held = r
                held_i = i
    if held >= 0:
        _point_pair(tm, wk, held, held_i, -1, -1, contacts)


@jit
def _single_points(tm, wk, contacts, cwork, body_pos, dt):
    """
    Mark the bodies whose only rows this step are one point's three (``_point_responses``).

    A body touching a fixed surface (the ground, a static shape) at one point in the solve,
    without rolling or spinning rows, and whose unit responses are not made yet (a loop
    joint's rows): wk.body_ready[b] = -(1 + i) for its point i (``_point_responses`` solves
    its rows); a body with more rows -0.5.
    Each point's ``leave_out`` answer goes to cwork.row_seg[i, 0] for ``contact_rows``: -2
    left out of the solve, -1 in it.
    """
    for i in range(contacts.count[0]):
        left = leave_out(contacts, cwork, i, wk.body_vel, body_pos, dt, True)
        cwork.row_seg[i, 0] = -2 if left else -1
        if left:
            continue
        a = contacts.body[i, 0]
        b = contacts.body[i, 1]
        single = (a >= 0) != (b >= 0) and not has_angular_rows(contacts.material, i)
        for side in range(2):
            r = a if side == 0 else b
            if r < 0 or wk.body_ready[r] > 0.0:
                continue
            if single and wk.body_ready[r] == 0.0:
                wk.body_ready[r] = -(1.0 + i)
            else:
                wk.body_ready[r] = -0.5


@jit
def forget_body_responses(wk):
    """Mark every body's unit responses stale (once per step, before the rows that use them)."""
    for b in range(wk.body_ready.shape[0]):
        wk.body_ready[b] = 0.0


@jit
def _add_body_row(wk, b, f, sign, row_J, row_U, n):
    """Add sign times the row of force f on body b (from its six) to row_J, row_U (n long)."""
    for c in range(n):
        j = 0.0
        u = 0.0
        for m in range(6):
            j += f[m] * wk.body_J[b, m, c]
            u += f[m] * wk.body_U[b, m, c]
        row_J[c] += sign * j
        row_U[c] += sign * u


@jit
def _row_segments(tm, wk, body_a, body_b, seg, length, i):
    """
    Set row set i's segments of qd: the group of each moving body; return B's segment (0 or 1).

    One group when both bodies are in it (self-collision, a loop inside the robot); A's rows go
    into segment 0 when it moves, B's into the segment of its group.  Each moving body's six
    unit responses are made ready (``_body_response``).  Contact points and loop joints alike.
    """
    seg[i, 0] = -1
    seg[i, 1] = -1
    length[i, 0] = 0
    length[i, 1] = 0
    slot_b = 0
    for side in range(2):
        b = body_a if side == 0 else body_b
        if b < 0:
            continue
        _body_response(tm, wk, b)
        g = tm.node_group[tm.body_node[b]]
        if side == 1 and seg[i, 0] == tm.group_v[g]:
            continue
        slot = 0 if seg[i, 0] < 0 else 1
        seg[i, slot] = tm.group_v[g]
        length[i, slot] = tm.group_v[g + 1] - tm.group_v[g]
        if side == 1:
            slot_b = slot
    return slot_b


@jit
def row_force(contacts, i, k, f):
    """
    Write row k of contact point i as a spatial force on f (moment about the origin; force).

    Rows 0-2: a unit force along the normal and the tangents at the point, (p x d; d); rows
    3-5: a unit torque about them, (d; 0).
    """
    d = (contacts.frame[i, k % 3, 0], contacts.frame[i, k % 3, 1], contacts.frame[i, k % 3, 2])
    if k < 3:
        moment = cross((contacts.pos[i, 0], contacts.pos[i, 1], contacts.pos[i, 2]), d)
        for m in range(3):
            f[m] = moment[m]
            f[3 + m] = d[m]
    else:
        for m in range(3):
            f[m] = d[m]
            f[3 + m] = 0.0


@jit
def contact_rows(tm, wk, contacts, cwork, body_pos, dt):
    """
    Rows of every contact point on the generalized velocities (module docstring).

    Fills ContactWork.row_seg .. row_U, kinv, k_normal and the rigid softness; the points left
    out of the solve (``contacts.leave_out``) get none.  Kinematics (wk.S, body_x) and the
    factor of the step's velocity change must be current, wk.body_vel the bodies' motion
    after this step's forces, and the body responses forgotten (``forget_body_responses``).
    A touching body's six unit responses are found once (``_body_response``), each row is
    their combination; a body whose only rows are one point's three against a fixed surface
    (a foot on the ground) has those rows' responses solved directly instead
    (``_point_responses``: no combination, and bodies of one point each are the common case;
    two of them share a solve).
    """
    seg = cwork.row_seg
    length = cwork.row_len
    row_J = cwork.row_J
    row_U = cwork.row_U
    f = wk.vec6b
    _single_points(tm, wk, contacts, cwork, body_pos, dt)
    _point_responses(tm, wk, contacts)
    for i in range(contacts.count[0]):
        left = seg[i, 0] == -2     # leave_out's answer (_single_points)
        seg[i, 0] = -1
        seg[i, 1] = -1
        if left:
            continue
        single = -1     # the body whose responses are this point's rows, if any
        for side in range(2):
            r = contacts.body[i, side]
            if r >= 0 and wk.body_ready[r] == 2.0 + i:
                single = r
        slot_b = _row_segments(tm, wk, contacts.body[i, 0], contacts.body[i, 1], seg, length,
                               i)
        angular = has_angular_rows(contacts.material, i)
        for k in range(N_ROWS):
            cwork.kinv[i, k] = 0.0
            if k >= 3 and not angular:
                continue
            row_force(contacts, i, k, f)
            a = contacts.body[i, 0]
            b = contacts.body[i, 1]
            if single >= 0:   # the row's own response (k < 3: no angular rows; one segment)
                slot = 0 if single == a else slot_b
                sign = 1.0 if single == a else -1.0
                for m in range(length[i, slot]):
                    row_J[i, k, slot, m] = sign * wk.body_J[single, k, m]
                    row_U[i, k, slot, m] = sign * wk.body_U[single, k, m]
            else:
                for s in range(2):
                    if seg[i, s] >= 0:
                        for m in range(length[i, s]):
                            row_J[i, k, s, m] = 0.0
                            row_U[i, k, s, m] = 0.0
                if a >= 0:
                    _add_body_row(wk, a, f, 1.0, row_J[i, k, 0], row_U[i, k, 0],
                                  length[i, 0])
                if b >= 0:
                    _add_body_row(wk, b, f, -1.0, row_J[i, k, slot_b], row_U[i, k, slot_b],
                                  length[i, slot_b])
            ktot = 0.0
            for s in range(2):
                if seg[i, s] < 0:
                    continue
                for m in range(length[i, s]):
                    ktot += row_J[i, k, s, m] * row_U[i, k, s, m]
            cwork.kinv[i, k] = 1.0 / ktot if ktot > 0.0 else 0.0
            if k == 0:
                cwork.k_normal[i] = ktot
        cwork.soft[i, 0] = cwork.kinv[i, 0]
        cwork.soft[i, 1] = 0.0


@jit
def axis_rows(tm, ts, wk, axes, dt, paths):
    """
    Set up this step's coordinate rows (limits, friction, speeds, prescribed) of live axes.

    ``paths``: their responses in the path form (``axis_paths``) rather than as columns.

    An axis is live when it has friction or a speed limit, follows a prescribed motion, or its
    joint is within reach of a limit (the last step's speed twice over, as
    ``axes.prepare_axes``); its rows are the shared
    definitions of ``axes.coordinate_rows`` without the damping row (joint damping and the
    drives are implicit in the tree's step already), its response the column of
    (H + A + h B)^-1 of its coordinate.
    """
    n_live = 0
    impulses = ts.axis_impulse
    for x in range(axes.joint.shape[0]):
        v = tm.axis_v[x]
        if v < 0:
            continue  # a loop joint's coordinate: not one of the tree's (loop_axis_rows)
        q = ts.node_q[tm.v_node[v]]
        near = within_reach(axes, x, q, ts.axis_rate[x], dt)
        if not (tm.axis_always[x] > 0 or near or ts.axis_prescribed[x] > 0.0):
            for r in range(impulses.shape[1]):
                impulses[x, r] = 0.0
            continue
        wk.axis_live[n_live] = x
        n_live += 1
        coordinate_rows(axes, x, wk.axis_rows, q, ts.qd[v], ts.axis_rate[x],
                        ts.axis_prescribed[x], ts.axis_target_rate[x], impulses, dt, False)
    wk.axis_live_n[0] = n_live
    if paths:
        axis_paths(tm, ts, wk)
        return
    # the responses, up to six live axes of a group side by side (six_solves)
    t = 0
    while t < n_live:
        g = tm.node_group[tm.v_node[tm.axis_v[wk.axis_live[t]]]]
        count = 1
        while (count < 6 and t + count < n_live
               and tm.node_group[tm.v_node[tm.axis_v[wk.axis_live[t + count]]]] == g):
            count += 1
        _axis_responses(tm, wk, t, count, g)
        t += count


#: Fewer live axes of a group than this are solved one at a time (path_solve): six solves
#: side by side cost about three alone.
SIDE_BY_SIDE = 3


@jit
def _axis_responses(tm, wk, t0, count, g):
    """Responses of live axes t0 .. t0 + count - 1 (all of group g): columns of the factor."""
    g0 = tm.group_v[g]
    n = tm.group_v[g + 1] - g0
    n0 = tm.group_node[g]
    n1 = tm.group_node[g + 1]
    if count < SIDE_BY_SIDE:
        for m in range(count):
            x = wk.axis_live[t0 + m]
            v = tm.axis_v[x]
            for c in range(n):
                wk.unit[g0 + c] = 0.0
            wk.unit[v] = 1.0
            path_solve(tm, wk, wk.unit, wk.resp, n0, n1, tm.v_node[v])
            for c in range(n):
                wk.axis_U[x, c] = wk.resp[g0 + c]
            wk.axis_k[x] = wk.resp[v]
        return
    _clear_marks(wk, n0, n1)
    for c in range(n):
        for m in range(6):
            wk.six_rhs[c, m] = 0.0
    for m in range(count):
        v = tm.axis_v[wk.axis_live[t0 + m]]
        wk.six_rhs[v - g0, m] = 1.0
        _mark_path(tm, wk, tm.v_node[v])
    six_solves(tm, wk, n0, n1, g0)
    for m in range(count):
        x = wk.axis_live[t0 + m]
        v = tm.axis_v[x]
        for c in range(n):
            wk.axis_U[x, c] = wk.six_res[c, m]
        wk.axis_k[x] = wk.six_res[v - g0, m]


@jit
def _move_group(tm, wk, x, qd, impulse):
    """Apply a coordinate impulse of axis x: qd += (H + A + h B)^-1 e_v impulse on its group."""
    g = tm.node_group[tm.v_node[tm.axis_v[x]]]
    g0 = tm.group_v[g]
    for m in range(tm.group_v[g + 1] - g0):
        qd[g0 + m] += wk.axis_U[x, m] * impulse


@jit
def _axis_rate(tm, wk, x, vec, paths, constant):
    """
    Return axis x's coordinate rate in vec (qd or the push's pseudo-velocities): vec[v].

    In the path form (``paths``) y . w over its group, plus its J qd0 with ``constant`` (the
    velocity solve; not the push, whose pseudo-velocities start from zero).
    """
    v = tm.axis_v[x]
    if not paths:
        return vec[v]
    g = tm.node_group[tm.v_node[v]]
    s = aug_start(tm, g)
    n = tm.group_v[g + 1] - tm.group_v[g]
    rate = wk.axis_Y[x, n] if constant else 0.0
    for m in range(n):
        rate += wk.axis_Y[x, m] * vec[s + m]
    return rate


@jit
def _axis_move(tm, wk, x, vec, impulse, paths):
    """Apply a coordinate impulse of axis x to vec: qd += U impulse, or w += D^-1 y impulse."""
    if paths:
        g = tm.node_group[tm.v_node[tm.axis_v[x]]]
        s = aug_start(tm, g)
        for m in range(tm.group_v[g + 1] - tm.group_v[g]):
            vec[s + m] += wk.axis_U[x, m] * impulse
    else:
        _move_group(tm, wk, x, vec, impulse)


@jit
def warm_start_axes(tm, ts, wk, warm, vec, paths):
    """Apply the live axes' last impulses again (or clear them without warm start)."""
    for t in range(wk.axis_live_n[0]):
        x = wk.axis_live[t]
        P = 0.0
        for r in range(ts.axis_impulse.shape[1]):
            if not warm:
                ts.axis_impulse[x, r] = 0.0
            P += ts.axis_impulse[x, r]
        if P != 0.0:
            _axis_move(tm, wk, x, vec, P, paths)


@jit
def solve_axes(tm, ts, wk, items, lo, hi, vec, paths):
    """
    One Gauss-Seidel pass over live axes items[lo:hi]' rows (``axes.sweep_coordinate_rows``).

    On qd, or in the path form on w (``paths``: the rate y . w + qd0[v]).
    """
    largest = 0.0
    rows = wk.axis_rows
    impulses = ts.axis_impulse
    for t in range(lo, hi):
        x = items[t]
        moved, _, largest = sweep_coordinate_rows(
            rows, impulses, x, _axis_rate(tm, wk, x, vec, paths, True), wk.axis_k[x], 0.0,
            largest)
        if moved != 0.0:
            _axis_move(tm, wk, x, vec, moved, paths)
    return largest


@jit
def prepare_push_axes(tm, ts, wk, axes, push_limit, dt):
    """Set the live axes' push rows at the coordinates after this step's motion (axes.py's)."""
    for t in range(wk.axis_live_n[0]):
        x = wk.axis_live[t]
        push_limit_targets(push_limit, x, axes, ts.node_q[tm.v_node[tm.axis_v[x]]], dt)


@jit
def solve_push_axes(tm, wk, push, push_limit, items, lo, hi, paths):
    """
    One pass over the limit rows of live axes items[lo:hi] in the push (pseudo-velocities).

    As ``axes.solve_push_limits`` (the same clamp, ``axes.push_limit_change``), on the
    coordinate itself: a push may close a limit's gap, never cross it.  ``push``: the
    pseudo-velocities, or in the path form (``paths``) its vector w.
    """
    largest = 0.0
    for t in range(lo, hi):
        x = items[t]
        k = wk.axis_k[x]
        if not k > 0.0:
            continue
        P = push_limit_change(push_limit, x, _axis_rate(tm, wk, x, push, paths, False), k)
        if P != 0.0:
            _axis_move(tm, wk, x, push, P, paths)
            largest = max(largest, abs(P))
    return largest


@jit
def free_rows(tm, ts, wk, dt):
    """
    Set up the friction rows of spherical and planar joints (tree.TreeModel.free_*).

    Rows J = e_v on the joint's own coordinates (a spherical joint's three child-frame angular
    rates, a planar joint's two in-plane translations): the relative angular velocity and the
    sliding of the maximal formulation's free_friction.py, in the frames of the tree's
    coordinates (the norm bound is frame-free).  Responses are columns of (H + A + h B)^-1;
    the block K = J U is inverted once (an impulse vector takes the joint to rest in one
    projection).  The bound is the breakaway value while the joint stuck in the last step (its
    impulse inside the bound), the sliding value once it slips, as in maximal mode.
    """
    K = wk.mat6
    for f in range(tm.free_v.shape[0]):
        v0 = tm.free_v[f]
        if v0 < 0:
            continue  # a loop joint's: rows between its bodies (loop_friction_rows)
        d = tm.free_dim[f]
        g = tm.node_group[tm.v_node[v0]]
        g0 = tm.group_v[g]
        n = tm.group_v[g + 1] - g0
        for r in range(d):
            for c in range(n):
                wk.unit[g0 + c] = 0.0
            wk.unit[v0 + r] = 1.0
            path_solve(tm, wk, wk.unit, wk.resp, tm.group_node[g], tm.group_node[g + 1],
                       tm.v_node[v0])
            for c in range(n):
                wk.free_U[f, r, c] = wk.resp[g0 + c]
            for q in range(d):
                K[q, r] = wk.resp[v0 + q]
        invert_spd(K, d, wk.free_kinv[f], wk.gj)
        norm = 0.0
        for r in range(d):
            norm += ts.free_impulse[f, r] ** 2
        sliding = tm.free_force[f, 0]
        stuck = np.sqrt(norm) < dt * sliding * (1.0 - 1e-9)
        wk.free_bound[f] = dt * (tm.free_force[f, 1] if stuck else sliding)


@jit
def _move_free(tm, wk, qd, f, impulse):
    """Apply friction impulse vector impulse (d,) of joint f: qd += U impulse on its group."""
    g = tm.node_group[tm.v_node[tm.free_v[f]]]
    g0 = tm.group_v[g]
    for r in range(tm.free_dim[f]):
        if impulse[r] != 0.0:
            for c in range(tm.group_v[g + 1] - g0):
                qd[g0 + c] += wk.free_U[f, r, c] * impulse[r]


@jit
def warm_start_free(tm, ts, wk, warm):
    """Apply the friction rows' last impulses again (or clear them without warm start)."""
    for f in range(tm.free_v.shape[0]):
        if tm.free_v[f] < 0:
            continue
        if not warm:
            for r in range(3):
                ts.free_impulse[f, r] = 0.0
        else:
            _move_free(tm, wk, ts.qd, f, ts.free_impulse[f])


@jit
def solve_free(tm, ts, wk, items, lo, hi):
    """
    One pass over the spherical and planar joints' friction (free_friction.py's projection).

    The impulse that stops the joint, L* = L - K^-1 (J qd), is scaled back onto the ball
    |L| = bound when it lies outside (static friction holds exactly, sliding friction opposes
    the slip at full strength).  Returns the largest change, N m s or N s.
    """
    largest = 0.0
    change = wk.vec6a
    for n in range(lo, hi):
        f = items[n]
        v0 = tm.free_v[f]
        if v0 < 0:
            continue
        d = tm.free_dim[f]
        norm = 0.0
        for r in range(d):
            want = ts.free_impulse[f, r]
            for q in range(d):
                want -= wk.free_kinv[f, r, q] * ts.qd[v0 + q]
            change[r] = want
            norm += want * want
        norm = np.sqrt(norm)
        scale = wk.free_bound[f] / norm if norm > wk.free_bound[f] else 1.0
        for r in range(d):
            new = change[r] * scale
            change[r] = new - ts.free_impulse[f, r]
            ts.free_impulse[f, r] = new
            largest = max(largest, abs(change[r]))
        for r in range(d, 3):
            change[r] = 0.0
        _move_free(tm, wk, ts.qd, f, change)
    return largest


@jit
def link_rows(tm, ts, wk, joints, links, paths):
    """
    Set up the links' rows at the step's start (module docstring): mimic pairs, loop joints.

    Kinematics and the factor of the step's velocity change must be current, the body
    responses forgotten (``forget_body_responses``).  A switched-off element gets no rows and
    its impulses are cleared.  ``paths``: in the path form (y, D^-1 y and J qd0 of each row,
    as ``contact_rows_paths``).
    """
    for m in range(links.rows.shape[0]):
        j = tm.link_joint[m]
        if j < 0:
            _mimic_row(tm, ts, wk, links, m, paths)
        elif ts.joint_active[j] == 0.0:
            links.rows[m] = 0
            for k in range(6):
                ts.link_impulse[m, k] = 0.0
                links.carried[m, k] = 0.0
        else:
            _loop_rows(tm, ts, wk, joints, links, m, j, paths)


@jit
def _mimic_row(tm, ts, wk, links, m, paths):
    """
    Set the row of mimic pair m, J = e_f - r e_l.

    With U its column of (H + A + h B)^-1, or in the path form (``paths``) y = L^-T J^T,
    D^-1 y and J qd0 in the constant slot.
    """
    f = tm.mimic_v[m, 0]
    leader = tm.mimic_v[m, 1]
    r = tm.mimic_ratio[m]
    g = tm.node_group[tm.v_node[f]]
    g0 = tm.group_v[g]
    n = tm.group_v[g + 1] - g0
    links.seg[m, 1] = -1
    links.length[m, 1] = 0
    if paths:
        links.seg[m, 0] = aug_start(tm, g)
        links.length[m, 0] = n + 1
        y = links.J[m, 0, 0]
        dy = links.U[m, 0, 0]
        for c in range(n + 1):
            y[c] = 0.0
            dy[c] = 0.0
        _path_sweep(tm, wk, tm.v_node[f], wk.vec6b, f, 1.0, y, dy, g0, ts.qd, ts.qd)
        _path_sweep(tm, wk, tm.v_node[leader], wk.vec6b, leader, -r, y, dy, g0, ts.qd, ts.qd)
        k = _group_dot(tm, y, dy, g)
        y[n] = ts.qd[f] - r * ts.qd[leader]
    else:
        links.seg[m, 0] = g0
        links.length[m, 0] = n
        for c in range(n):
            wk.unit[g0 + c] = 0.0
        wk.unit[f] = 1.0
        wk.unit[leader] -= r
        articulated_solve(tm, wk, wk.unit, wk.resp, tm.group_node[g], tm.group_node[g + 1])
        for c in range(n):
            links.J[m, 0, 0, c] = wk.unit[g0 + c]
            links.U[m, 0, 0, c] = wk.resp[g0 + c]
        k = wk.resp[f] - r * wk.resp[leader]
    links.kinv[m, 0] = 1.0 / k if k > 0.0 else 0.0
    links.target[m, 0] = 0.0
    links.rows[m] = 1


@jit
def _loop_rows(tm, ts, wk, joints, links, m, j, paths):
    """
    Set the rows of loop joint j (link m): its type's rows on the two bodies, through the tree.

    Each row (lin_A, ang_A; lin_B, ang_B) on the bodies' twists (joints.constraint at the
    step's start) is the spatial force f = (x x lin + ang; lin) on each body, combined from the
    body's six unit responses as a contact row's, or in the path form (``paths``) swept up the
    body's path (``_path_sweep``: y, D^-1 y, and J qd0 in the constant slot).
    """
    frames = frames_of_joint(j, joints, ts.joint_anchor, wk.body_x, wk.body_q)
    d = jt.constraint(joints.type[j], frames, links.error[m], links.body_rows[m],
                      ts.joint_length[j])
    links.rows[m] = d
    length = links.length
    a = joints.body[j, 0]
    b = joints.body[j, 1]
    if paths:
        groups, slot_b = _link_segments(tm, links.seg, length, m, a, b)
    else:
        groups = (-1, -1)
        slot_b = _row_segments(tm, wk, a, b, links.seg, length, m)
    f = wk.vec6b
    largest = 0.0
    for k in range(d):
        for s in range(2):
            for c in range(length[m, s]):
                links.J[m, k, s, c] = 0.0
                links.U[m, k, s, c] = 0.0
        rate = 0.0
        ktot = 0.0
        for side in range(2):
            body = a if side == 0 else b
            if body < 0:
                continue
            slot = 0 if side == 0 else slot_b
            lin = (links.body_rows[m, k, side, 0], links.body_rows[m, k, side, 1],
                   links.body_rows[m, k, side, 2])
            moment = cross((wk.body_x[body, 0], wk.body_x[body, 1], wk.body_x[body, 2]), lin)
            for c in range(3):
                f[c] = moment[c] + links.body_rows[m, k, side, 3 + c]
                f[3 + c] = lin[c]
            if paths:
                side_rate, _, own = _path_sweep(tm, wk, tm.body_node[body], f, -1, 1.0,
                                                links.J[m, k, slot], links.U[m, k, slot],
                                                tm.group_v[_body_group(tm, body)], ts.qd, ts.qd)
                rate += side_rate
                ktot += own
            else:
                _add_body_row(wk, body, f, 1.0, links.J[m, k, slot], links.U[m, k, slot],
                              length[m, slot])
        if paths:
            if a >= 0 and b >= 0 and groups[1] < 0:   # one group: the two paths meet
                ktot = _group_dot(tm, links.J[m, k, 0], links.U[m, k, 0], groups[0])
            links.J[m, k, 0, length[m, 0] - 1] = rate
        else:
            for s in range(2):
                for c in range(length[m, s]):
                    ktot += links.J[m, k, s, c] * links.U[m, k, s, c]
        links.kinv[m, k] = ktot
        largest = max(largest, ktot)
        # a moving reference's rows anticipate the step's curvature (the last step's error
        # before its drift correction): the step lands by its velocity, the impulse is the
        # whole force of the motion and the push has only the change of curvature left
        links.target[m, k] = ts.joint_row_rate[j, k] - links.carried[m, k]
    for k in range(d):
        ktot = links.kinv[m, k]
        links.kinv[m, k] = 1.0 / ktot if ktot > LINK_DEGENERATE * largest else 0.0


@jit
def warm_start_links(ts, links, qd, warm):
    """Apply the links' last impulses again (or clear them without warm start)."""
    for m in range(links.rows.shape[0]):
        for k in range(links.rows[m]):
            if not warm:
                ts.link_impulse[m, k] = 0.0
            elif ts.link_impulse[m, k] != 0.0:
                row_apply(qd, links.seg, links.length, links.U, m, k, ts.link_impulse[m, k])


@jit
def sweep_links(x, links, impulse, target, items, lo, hi):
    """
    One Gauss-Seidel pass over links items[lo:hi]' rows on the velocity vector x: J x -> target.

    Unbounded: impulse += (target - J x) / (J U), x += U times the change.  Returns the largest
    change (N s or N m s).  The velocity solve passes qd, the accumulated impulses and
    links.target; the drift correction the pseudo-velocities, links.push and links.push_target.
    """
    largest = 0.0
    for n in range(lo, hi):
        m = items[n]
        for k in range(links.rows[m]):
            kinv = links.kinv[m, k]
            if kinv <= 0.0:
                continue
            change = (target[m, k] - row_dot(x, links.seg, links.length, links.J, m, k)) * kinv
            impulse[m, k] += change
            row_apply(x, links.seg, links.length, links.U, m, k, change)
            largest = max(largest, abs(change))
    return largest


@jit
def link_push_targets(tm, ts, wk, joints, links, dt):
    """
    Find the links' position errors after this step's motion and their push targets -C / dt.

    Kinematics must be at the step's new positions.  Clears the pseudo-impulses; returns the
    largest error (m or rad) of a row the tree can move.
    """
    largest = 0.0
    for m in range(links.rows.shape[0]):
        j = tm.link_joint[m]
        if j < 0:
            f = tm.mimic_v[m, 0]
            leader = tm.mimic_v[m, 1]
            links.error[m, 0] = (ts.node_q[tm.v_node[f]] - tm.mimic_ratio[m]
                                 * ts.node_q[tm.v_node[leader]] - tm.mimic_offset[m])
        elif links.rows[m] > 0:
            frames = frames_of_joint(j, joints, ts.joint_anchor, wk.body_x, wk.body_q)
            jt.constraint(joints.type[j], frames, links.error[m], None, ts.joint_length[j])
        for k in range(links.rows[m]):
            links.push[m, k] = 0.0
            links.push_target[m, k] = -links.error[m, k] / dt
            # the step aimed carried off its reference: what it missed is the curvature
            links.carried[m, k] += links.carry[m] * links.error[m, k] / dt
            if links.kinv[m, k] > 0.0:
                largest = max(largest, abs(links.error[m, k]))
    return largest


@jit
def loop_coordinates(tm, ts, wk, joints, links):
    """
    Set the scalar loop joints' coordinates and rates from the bodies' poses and twists.

    State.joint_q and State.axis_rate: q from the poses, its rate J v from the bodies'
    twists through the coordinate row at these poses (as the maximal formulation's
    ``step.joint_rates``).  Kinematics and wk.vel must be current (``tree_fill_state``).
    """
    J = links.jrow
    for t in range(tm.loop_axes.shape[0]):
        x = tm.loop_axes[t]
        j = tm.link_joint[tm.axis_link[x]]
        ts.joint_q[j] = joint_coordinate(j, joints, ts.joint_anchor, wk.body_x, wk.body_q,
                                         ts.joint_q, J, 0)
        rate = 0.0
        for side in range(2):
            b = joints.body[j, side]
            if b < 0:
                continue
            i = tm.body_node[b]
            for c in range(3):
                rate += J[0, side, c] * ts.body_lin_vel[b, c] + J[0, side, 3 + c] * wk.vel[i, c]
        ts.axis_rate[x] = rate


# -- a loop joint's own rows: between its two bodies, through the tree ------------------------
@jit
def loop_axis_rows(tm, ts, wk, joints, links, axes, drives, dt):
    """
    Set up the coordinate rows and drives of the scalar loop joints; apply their efforts.

    A loop joint's coordinate is not one of the tree's: its rows (axes.coordinate_rows, the
    damping row included, as no implicit joint damping holds it) act on the relative motion
    of its two bodies, the joint type's coordinate row J_q = (lin_A, ang_A; lin_B, ang_B)
    (``joints.coordinate``, as the maximal formulation's axes) at the step's start, which is
    the spatial force (x x lin + ang; lin) on each body: J and U combined from the bodies'
    unit responses as a loop joint's rows (``_loop_rows``).  As the maximal formulation's
    axes (``axes.prepare_axes``) it is seen through its own joint's rows (their J_L, U_L of
    this step, ``link_rows`` first), so a coordinate impulse does not pull the loop open:
        w = J_L U,  r = (J_L U_L)^-1 w,  u = U - U_L r,  k = J u,
    the coordinate moves along u and the joint's rows take the reaction -r per unit impulse
    (their accumulated impulses, so warm starts and the joint's wrench stay consistent).
    A drive on the joint is the maximal formulation's: a rotor of its own (State.rotor_speed)
    geared to the coordinate, whose gear and motor rows (``drives.prepare_drive``, with this
    k) are solved with the coordinate rows on the geared inverse mass
    k_g = 1 / (1/k + N^2 J_m) (``axes.solve_axis_rows``).
    Live as a tree axis (a drive, friction, damping or speed rows, a prescribed motion, a
    limit within reach) or while an effort is commanded, whose impulse tau dt goes in along U
    before the rows are set.  Kinematics and the factor as for ``contact_rows``, the body
    responses forgotten; the coordinates of the step's start are written to State.joint_q.
    """
    for t in range(tm.loop_axes.shape[0]):
        x = tm.loop_axes[t]
        m = tm.axis_link[x]
        j = tm.link_joint[m]
        q = joint_coordinate(j, joints, ts.joint_anchor, wk.body_x, wk.body_q, ts.joint_q,
                             links.axis_rows[m], 0)
        ts.joint_q[j] = q
        effort = ts.joint_effort[j]
        near = within_reach(axes, x, q, ts.axis_rate[x], dt)
        if not (tm.axis_always[x] > 0 or near or ts.axis_prescribed[x] > 0.0
                or effort != 0.0):
            links.axis_on[m] = 0
            for r in range(ts.axis_impulse.shape[1]):
                ts.axis_impulse[x, r] = 0.0
            continue
        links.axis_on[m] = 1
        slot_b = _row_segments(tm, wk, joints.body[j, 0], joints.body[j, 1], links.seg,
                               links.length, m)
        _own_row(wk, joints, links, m, j, 0, slot_b)
        k = _loop_response(wk, links, m, 1)
        links.axis_k[m] = k
        d = axes.drive[x]
        if d >= 0:
            links.axis_kg[m] = geared_inverse_mass(k, axes.gear[x], axes.rotor_inertia[x])
            prepare_drive(drives, ts, d, links.drive_soft, links.drive_ainv, k, dt)
        else:
            links.axis_kg[m] = k
        if effort != 0.0:
            # a force along U: the joint's rows answer it in the sweeps (their warm start,
            # applied after this, holds the last step's answer)
            row_apply(ts.qd, links.seg, links.length, links.axis_U, m, 0, effort * dt)
    # the rows, at the velocities after every loop joint's effort
    for t in range(tm.loop_axes.shape[0]):
        x = tm.loop_axes[t]
        m = tm.axis_link[x]
        if links.axis_on[m] == 0:
            continue
        qdot = row_dot(ts.qd, links.seg, links.length, links.axis_J, m, 0)
        coordinate_rows(axes, x, wk.axis_rows, ts.joint_q[tm.link_joint[m]], qdot,
                        ts.axis_rate[x], ts.axis_prescribed[x], ts.axis_target_rate[x],
                        ts.axis_impulse, dt, True)


@jit
def _own_row(wk, joints, links, m, j, r, slot_b):
    """
    Set link m's own row r (links.axis_rows[m, r] on the bodies' twists) on qd: its J and U.

    The row (lin_A, ang_A; lin_B, ang_B) is the spatial force (x x lin + ang; lin) on each
    body, combined from the body's six unit responses (``_add_body_row``) as a loop row.
    """
    length = links.length
    f = wk.vec6b
    for s in range(2):
        for c in range(length[m, s]):
            links.axis_J[m, r, s, c] = 0.0
            links.axis_U[m, r, s, c] = 0.0
    for side in range(2):
        b = joints.body[j, side]
        if b < 0:
            continue
        lin = (links.axis_rows[m, r, side, 0], links.axis_rows[m, r, side, 1],
               links.axis_rows[m, r, side, 2])
        moment = cross((wk.body_x[b, 0], wk.body_x[b, 1], wk.body_x[b, 2]), lin)
        for c in range(3):
            f[c] = moment[c] + links.axis_rows[m, r, side, 3 + c]
            f[3 + c] = lin[c]
        slot = 0 if side == 0 else slot_b
        _add_body_row(wk, b, f, 1.0, links.axis_J[m, r, slot], links.axis_U[m, r, slot],
                      length[m, slot])


@jit
def _loop_response(wk, links, m, n):
    """
    Link m's first n own rows seen through its joint's rows: axis_Uc, axis_reaction, J u.

    With W = J_L U (the joint's rows along each own row's response) and R = (J_L U_L)^-1 W,
    each own row r moves qd along u_r = U_r - U_L R_r (the loop stays closed) and the
    joint's rows take the reaction -R_r per unit impulse; the own rows' block is
    K = J U - W^T R.  Returns K[0, 0] for one row (a scalar coordinate's k); for three (a
    spherical joint's friction) writes K^-1 into links.axis_block[m] and returns K[0, 0].
    The joint's degenerate rows (kinv 0: no joint of the tree moves them) are left out of
    J_L U_L (``math3d.invert_spd`` then gives them no reaction).
    """
    d = links.rows[m]
    K = wk.mat6
    W = wk.gj  # (n, d) scratch until the own rows' block is formed
    length = links.length
    for a in range(d):
        for b in range(d):
            K[a, b] = 0.0
        if links.kinv[m, a] <= 0.0:
            continue
        for b in range(d):
            if links.kinv[m, b] > 0.0:
                acc = 0.0
                for s in range(2):
                    for c in range(length[m, s]):
                        acc += links.J[m, a, s, c] * links.U[m, b, s, c]
                K[a, b] = acc
    invert_spd(K, d, wk.Ud, wk.gj)
    for r in range(n):
        for a in range(d):
            acc = 0.0
            if links.kinv[m, a] > 0.0:
                for s in range(2):
                    for c in range(length[m, s]):
                        acc += links.J[m, a, s, c] * links.axis_U[m, r, s, c]
            W[r, a] = acc
    for r in range(n):
        for s in range(2):
            for c in range(length[m, s]):
                links.axis_Uc[m, r, s, c] = links.axis_U[m, r, s, c]
        for a in range(d):
            acc = 0.0
            for b in range(d):
                acc += wk.Ud[a, b] * W[r, b]
            links.axis_reaction[m, r, a] = acc
            if acc != 0.0:
                for s in range(2):
                    for c in range(length[m, s]):
                        links.axis_Uc[m, r, s, c] -= acc * links.U[m, a, s, c]
    block = links.axis_block[m]
    for r in range(n):
        for q in range(n):
            acc = 0.0
            for s in range(2):
                for c in range(length[m, s]):
                    acc += links.axis_J[m, r, s, c] * links.axis_U[m, q, s, c]
            for a in range(d):
                acc -= links.axis_reaction[m, q, a] * W[r, a]
            block[r, q] = acc
    k = block[0, 0]
    if n > 1:
        invert_spd(block, n, block, wk.gj)
    return k


@jit
def _move_loop_row(ts, links, x, m, r, impulse):
    """Apply impulse ``impulse`` of link m's own row r on x along u_r; its joint's reaction."""
    row_apply(x, links.seg, links.length, links.axis_Uc, m, r, impulse)
    for a in range(links.rows[m]):
        ts.link_impulse[m, a] -= links.axis_reaction[m, r, a] * impulse


@jit
def warm_start_loop_axes(tm, ts, links, axes, drives, warm):
    """
    Apply the live loop axes' last impulses again (or clear them without warm start).

    Along U alone: the joint's rows' warm start holds last step's reactions already.  A
    drive's gear and motor impulses turn its rotor again and its gear's share goes in along
    the coordinate (``drives.warm_start_drive``).
    """
    for t in range(tm.loop_axes.shape[0]):
        x = tm.loop_axes[t]
        m = tm.axis_link[x]
        if links.axis_on[m] == 0:
            continue
        P = 0.0
        for r in range(ts.axis_impulse.shape[1]):
            if not warm:
                ts.axis_impulse[x, r] = 0.0
            P += ts.axis_impulse[x, r]
        d = axes.drive[x]
        if d >= 0:
            P += warm_start_drive(drives, ts, d, warm)
        if P != 0.0:
            row_apply(ts.qd, links.seg, links.length, links.axis_U, m, 0, P)


@jit
def solve_loop_axes(tm, ts, wk, links, axes, drives, items, lo, hi):
    """
    One pass over loop axes tm.loop_axes[items[lo:hi]]' drives and rows on qd.

    (``axes.solve_axis_rows``.)

    The maximal formulation's clamps on the coordinate's rate J qd with its k and k_g; the
    coordinate impulse goes along u and the joint's rows take the reaction.
    """
    largest = 0.0
    for n in range(lo, hi):
        x = tm.loop_axes[items[n]]
        m = tm.axis_link[x]
        k = links.axis_k[m]
        if links.axis_on[m] == 0 or not k > 0.0:
            continue
        qdot = row_dot(ts.qd, links.seg, links.length, links.axis_J, m, 0)
        P, _, largest = solve_axis_rows(wk.axis_rows, ts.axis_impulse, x, axes.drive[x], qdot,
                                        k, links.axis_kg[m], links.drive_soft,
                                        links.drive_ainv, ts.drive_impulse, ts.rotor_speed,
                                        drives.gear, drives.inv_rotor_inertia, largest)
        if P != 0.0:
            _move_loop_row(ts, links, ts.qd, m, 0, P)
    return largest


# -- a spherical loop joint's Coulomb friction: three rows between its bodies ------------------
@jit
def loop_friction_rows(tm, ts, wk, joints, links, dt):
    """
    Set up the friction rows of the spherical loop joints (tree.TreeModel.free_link).

    The maximal formulation's rows (free_friction.py): the relative angular velocity of the
    joint's two bodies along world x, y, z, J_k = (0, -e_k; 0, e_k) on their twists, each the
    spatial force (e_k; 0) on a body, through the tree as the joint's own rows
    (``_own_row``) and seen through them (``_loop_response``: the block K = J u, inverted
    once, so an impulse vector takes the joint to rest in one projection).  The bound is the
    breakaway value while the joint stuck in the last step (its impulse inside the sliding
    bound), the sliding value once it slips, as in both formulations' other ball joints.
    Kinematics and the links' rows as for ``loop_axis_rows``.
    """
    for f in range(tm.free_link.shape[0]):
        m = tm.free_link[f]
        if m < 0:
            continue
        j = tm.link_joint[m]
        if links.rows[m] == 0:
            links.axis_on[m] = 0  # a switched-off element
            for r in range(3):
                ts.free_impulse[f, r] = 0.0
            continue
        links.axis_on[m] = 1
        slot_b = _row_segments(tm, wk, joints.body[j, 0], joints.body[j, 1], links.seg,
                               links.length, m)
        for r in range(3):
            for side in range(2):
                for c in range(6):
                    links.axis_rows[m, r, side, c] = 0.0
            links.axis_rows[m, r, 0, 3 + r] = -1.0
            links.axis_rows[m, r, 1, 3 + r] = 1.0
            _own_row(wk, joints, links, m, j, r, slot_b)
        _loop_response(wk, links, m, 3)
        norm = 0.0
        for r in range(3):
            norm += ts.free_impulse[f, r] ** 2
        sliding = tm.free_force[f, 0]
        stuck = np.sqrt(norm) < dt * sliding * (1.0 - 1e-9)
        links.friction_bound[m] = dt * (tm.free_force[f, 1] if stuck else sliding)


@jit
def warm_start_loop_friction(tm, ts, links, warm):
    """Apply the spherical loop joints' last friction impulses along U (or clear them)."""
    for f in range(tm.free_link.shape[0]):
        m = tm.free_link[f]
        if m < 0 or links.axis_on[m] == 0:
            continue
        for r in range(3):
            if not warm:
                ts.free_impulse[f, r] = 0.0
            elif ts.free_impulse[f, r] != 0.0:
                row_apply(ts.qd, links.seg, links.length, links.axis_U, m, r,
                          ts.free_impulse[f, r])


@jit
def solve_loop_friction(tm, ts, wk, links, items, lo, hi):
    """
    One pass over the spherical loop joints' friction (free_friction.py's projection) on qd.

    The impulse that stops the relative rotation, L* = L - K^-1 (J qd), scaled back onto the
    ball |L| = bound when it lies outside; each row's change goes along its u, the joint's
    rows taking the reaction.  Returns the largest change, N m s.
    """
    largest = 0.0
    rate = wk.vec6a
    change = wk.vec6b
    for n in range(lo, hi):
        f = items[n]
        m = tm.free_link[f]
        if m < 0 or links.axis_on[m] == 0:
            continue
        for r in range(3):
            rate[r] = row_dot(ts.qd, links.seg, links.length, links.axis_J, m, r)
        norm = 0.0
        for r in range(3):
            want = ts.free_impulse[f, r]
            for q in range(3):
                want -= links.axis_block[m, r, q] * rate[q]
            change[r] = want
            norm += want * want
        norm = np.sqrt(norm)
        bound = links.friction_bound[m]
        scale = bound / norm if norm > bound else 1.0
        for r in range(3):
            delta = change[r] * scale - ts.free_impulse[f, r]
            ts.free_impulse[f, r] += delta
            largest = max(largest, abs(delta))
            if delta != 0.0:
                _move_loop_row(ts, links, ts.qd, m, r, delta)
    return largest


@jit
def loop_axis_push_targets(tm, ts, wk, joints, links, axes, push_limit, dt, excess):
    """
    Set the live loop axes' push rows at the poses after this step's motion; return the error.

    As a tree axis' (``axes.push_limit_targets``: the push may close a limit's gap, never
    cross it, and takes an overlap back out); a prescribed loop joint's two rows both aim at
    its curve, (q* - q) / dt, so the push lands it there (a prescribed tree coordinate is set
    onto it).  Kinematics must be at the step's new positions.  Returns the largest overlap
    of a limit or distance from the curve, rad or m (0 when none); each axis' in excess[x].
    """
    largest = 0.0
    for t in range(tm.loop_axes.shape[0]):
        x = tm.loop_axes[t]
        m = tm.axis_link[x]
        excess[x] = 0.0
        if links.axis_on[m] == 0:
            continue
        q = joint_coordinate(tm.link_joint[m], joints, ts.joint_anchor, wk.body_x, wk.body_q,
                             ts.joint_q, None, 0)
        push_limit_targets(push_limit, x, axes, q, dt)
        if ts.axis_prescribed[x] > 0.0:
            push_limit[x, 0] = push_limit[x, 1] = (ts.axis_target_q[x] - q) / dt
            excess[x] = abs(ts.axis_target_q[x] - q)
        else:
            excess[x] = max(axes.lower[x] - q, q - axes.upper[x])
        largest = max(largest, excess[x])
    return largest


@jit
def solve_push_loop_axes(tm, links, push, push_limit, items, lo, hi):
    """
    One pass over the live loop axes' push rows on the pseudo-velocities (axes.py's clamp).

    Along u, as ``axes.solve_push_limits`` along its constrained response: the push keeps
    the loop closed while it clamps the coordinate.
    """
    largest = 0.0
    for n in range(lo, hi):
        x = tm.loop_axes[items[n]]
        m = tm.axis_link[x]
        k = links.axis_k[m]
        if links.axis_on[m] == 0 or not k > 0.0:
            continue
        qdot = row_dot(push, links.seg, links.length, links.axis_J, m, 0)
        P = push_limit_change(push_limit, x, qdot, k)
        if P != 0.0:
            row_apply(push, links.seg, links.length, links.axis_Uc, m, 0, P)
            largest = max(largest, abs(P))
    return largest


# -- the path form: rows that cost their bodies' paths, not the tree ----------------------------
#
# The articulated-body factor is H' = L^T D L (H' = H + A + h B; Featherstone's LTDL: the
# articulated-body algorithm's inward sweep of a right-hand side r is L^-T r, its D_i the
# joint-space articulated inertias, its outward sweep L^-1 D^-1), so H'^-1 = L^-1 D^-1 L^-T.
# A row's y = L^-T J^T is its inward sweep: nonzero on its bodies' paths to the root alone.
# With w = D^-1 z and z = sum_r y_r lambda_r, the velocities qd = qd0 + L^-1 z give a row the
# velocity J_r qd = J_r qd0 + y_r . w, its effective mass k_r = y_r . D^-1 y_r, and an impulse
# on it moves w by D^-1 y_r: all over the row's paths.  The sweeps run on the vector w_aug
# (each group's w, then a 1.0 that multiplies the row's J_r qd0 stored after its y), so the
# shared contact solve reads and moves it as any formulation's velocity vector; after them
# qd += L^-1 z, one outward sweep (``velocities_from_paths``).  MuJoCo's sparse Delassus
# assembly rests on the same factor (mj_solveM2: the rows' L^-T J^T, then their products).


@jit
def aug_start(tm, g):
    """Group g's first entry in the path form's vector (its coordinates, then the 1.0)."""
    return tm.group_v[g] + g


@jit
def _path_sweep(tm, wk, i, f, unit, sign, y, dy, g0, qd, qd_start):
    """
    Add sign L^-T r to y and sign D^-1 L^-T r to dy on node i's path to the root.

    r: the spatial force f (moment about the origin; force, world) on node i's body seen by
    the path's coordinates, r = B^T f (unit < 0), or the unit coordinate impulse e_unit (f
    unused).  y and dy hold the group's coordinates from g0.  The inward sweep of
    ``path_solve`` carried up the path alone: u_i = r_i - S_i^T p_i, p_parent = p_i +
    U_i D_i^-1 u_i.  Returns (sign J qd, sign J qd_start, y . D^-1 y of r alone), J = r^T.
    """
    pa = wk.vec6a
    du = wk.Ud[0]
    for r in range(6):
        pa[r] = 0.0
    c = 0.0
    c0 = 0.0
    k = 0.0
    while i >= 0:
        d = tm.dof[i]
        v0 = tm.v0[i]
        for a in range(d):
            sp = 0.0
            for r in range(6):
                sp += wk.S[i, a, r] * pa[r]
            if unit < 0:
                sf = 0.0
                for r in range(6):
                    sf += wk.S[i, a, r] * f[r]
                c += sf * qd[v0 + a]
                c0 += sf * qd_start[v0 + a]
            else:
                sf = 1.0 if v0 + a == unit else 0.0
            wk.u[i, a] = sf - sp
        for a in range(d):
            acc = 0.0
            for b in range(d):
                acc += wk.Dinv[i, a, b] * wk.u[i, b]
            du[a] = acc
            k += wk.u[i, a] * acc
            y[v0 + a - g0] += sign * wk.u[i, a]
            dy[v0 + a - g0] += sign * acc
        if tm.parent[i] >= 0:
            for r in range(6):
                acc = 0.0
                for a in range(d):
                    acc += wk.U[i, a, r] * du[a]
                pa[r] += acc
        i = tm.parent[i]
    return sign * c, sign * c0, k


@jit
def _group_dot(tm, y, dy, g):
    """Return y . dy over group g's coordinates (a row whose two bodies share the group)."""
    k = 0.0
    for m in range(tm.group_v[g + 1] - tm.group_v[g]):
        k += y[m] * dy[m]
    return k


@jit
def _body_group(tm, b):
    """Group of body b (b >= 0)."""
    return tm.node_group[tm.body_node[b]]


@jit
def contact_rows_paths(tm, ts, wk, contacts, cwork, body_pos, dt):
    """
    ``contact_rows`` in the path form: each row's y, D^-1 y, J qd0 and k on its paths.

    Fills ContactWork.row_seg (each segment's first entry of w_aug), row_len (its group's
    coordinates and the 1.0), row_J (y, then J qd0 on the first segment and 0 on a second),
    row_U (D^-1 y, then 0), kinv, k_normal, the rigid softness and ``speed`` (the normal row's
    J qd0 and J qd at the step's start, for ``contacts.targets_from_speeds``).
    """
    seg = cwork.row_seg
    length = cwork.row_len
    row_J = cwork.row_J
    row_U = cwork.row_U
    f = wk.vec6b
    for i in range(contacts.count[0]):
        seg[i, 0] = -1
        seg[i, 1] = -1
        if leave_out(contacts, cwork, i, wk.body_vel, body_pos, dt, True):
            continue
        a = contacts.body[i, 0]
        b = contacts.body[i, 1]
        groups, slot_b = _link_segments(tm, seg, length, i, a, b)
        angular = has_angular_rows(contacts.material, i)
        for k in range(N_ROWS):
            cwork.kinv[i, k] = 0.0
            if k >= 3 and not angular:
                continue
            row_force(contacts, i, k, f)
            for s in range(2):
                if seg[i, s] >= 0:
                    for m in range(length[i, s]):
                        row_J[i, k, s, m] = 0.0
                        row_U[i, k, s, m] = 0.0
            c = 0.0
            c0 = 0.0
            ktot = 0.0
            if a >= 0:
                c, c0, ktot = _path_sweep(tm, wk, tm.body_node[a], f, -1, 1.0, row_J[i, k, 0],
                                          row_U[i, k, 0], tm.group_v[groups[0]], ts.qd,
                                          wk.qd_backup)
            if b >= 0:
                cb, cb0, kb = _path_sweep(tm, wk, tm.body_node[b], f, -1, -1.0,
                                          row_J[i, k, slot_b], row_U[i, k, slot_b],
                                          tm.group_v[groups[slot_b]], ts.qd, wk.qd_backup)
                c += cb
                c0 += cb0
                if a >= 0 and slot_b == 0:  # one group: the two paths meet
                    ktot = _group_dot(tm, row_J[i, k, 0], row_U[i, k, 0], groups[0])
                else:
                    ktot += kb
            row_J[i, k, 0, length[i, 0] - 1] = c
            cwork.kinv[i, k] = 1.0 / ktot if ktot > 0.0 else 0.0
            if k == 0:
                cwork.k_normal[i] = ktot
                cwork.speed[i, 0] = c
                cwork.speed[i, 1] = c0
        cwork.soft[i, 0] = cwork.kinv[i, 0]
        cwork.soft[i, 1] = 0.0


@jit
def axis_paths(tm, ts, wk):
    """Set the live axes' rows in the path form: axis_Y (y, then qd0[v]), axis_U (D^-1 y, 0)."""
    for t in range(wk.axis_live_n[0]):
        x = wk.axis_live[t]
        v = tm.axis_v[x]
        g = tm.node_group[tm.v_node[v]]
        g0 = tm.group_v[g]
        n = tm.group_v[g + 1] - g0
        for m in range(n + 1):
            wk.axis_Y[x, m] = 0.0
            wk.axis_U[x, m] = 0.0
        _, _, wk.axis_k[x] = _path_sweep(tm, wk, tm.v_node[v], wk.vec6b, v, 1.0,
                                         wk.axis_Y[x], wk.axis_U[x], g0, ts.qd, ts.qd)
        wk.axis_Y[x, n] = ts.qd[v]


@jit
def _link_segments(tm, seg, length, m, a, b):
    """
    Set row set m's segments of the path form's vector for bodies a and b (-1: fixed).

    Returns (the group of each segment, -1 unused; B's segment).  One segment when both
    bodies are in one group.
    """
    ga = _body_group(tm, a) if a >= 0 else -1
    gb = _body_group(tm, b) if b >= 0 else -1
    groups = (ga if ga >= 0 else gb, gb if ga >= 0 and gb != ga else -1)
    for s in range(2):
        g = groups[s]
        seg[m, s] = aug_start(tm, g) if g >= 0 else -1
        length[m, s] = tm.group_v[g + 1] - tm.group_v[g] + 1 if g >= 0 else 0
    return groups, 1 if groups[1] >= 0 else 0


@jit
def start_paths(tm, xa, one):
    """
    Set the path form's vector to w = 0, each group's constant slot to ``one``.

    1.0 for the velocity solve (a row's velocity is J qd0 + y . w), 0.0 for the push, whose
    pseudo-velocities start from zero.
    """
    for g in range(tm.group_v.shape[0] - 1):
        s = aug_start(tm, g)
        n = tm.group_v[g + 1] - tm.group_v[g]
        for m in range(n):
            xa[s + m] = 0.0
        xa[s + n] = one


@jit
def velocities_from_paths(tm, wk, S, xa, out):
    """
    Add L^-1 z to out (qd, or the push's pseudo-velocities) from w = D^-1 z in xa.

    One outward sweep after the sweeps: ``outward_solve`` with D_i^-1 u_i = w_i known,
    out_i += w_i - D_i^-1 U_i^T a_parent, a_i = a_parent + S_i (that change).  S: the
    motion subspaces the factor was made with (wk.S in the velocity solve; the push runs after
    the kinematics moved on: the step's copy, wk.S_push).
    """
    for i in range(tm.parent.shape[0]):
        p = tm.parent[i]
        d = tm.dof[i]
        v0 = tm.v0[i]
        s = v0 + tm.node_group[i]   # aug_start(g) + v0 - group_v[g]
        for m in range(6):
            wk.acc[i, m] = wk.acc[p, m] if p >= 0 else 0.0
        for k in range(d):
            acc = 0.0
            for r in range(6):
                acc += wk.U[i, k, r] * wk.acc[i, r]
            wk.vec6a[k] = acc
        for k in range(d):
            acc = xa[s + k]
            for m in range(d):
                acc -= wk.Dinv[i, k, m] * wk.vec6a[m]
            out[v0 + k] += acc
            for r in range(6):
                wk.acc[i, r] += S[i, k, r] * acc
