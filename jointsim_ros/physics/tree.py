"""
Tree dynamics in generalized coordinates: an O(n) articulated-body step in impulse form.

Equations (docs/tree.md gives the derivation and the mapping to the issue's notation).

Coordinates.  Every tree joint i (the floating base is a 6-DOF joint from the world) carries
its child joint frame relative to its parent joint frame as (r_i, Q_i) (position m, unit
quaternion) and n_i <= 6 velocity coordinates qd_i: components of the relative twist in the
*child* joint frame selected by the joint's columns s_ik = (a_k; l_k) (angular, linear parts):
revolute (axis; 0), prismatic (0; axis), spherical (e_x, e_y, e_z; 0), planar (0; t1), (0; t2),
(n; 0), floating all six.  Scalar joints also keep the unwrapped coordinate q_i.

Spatial algebra (Featherstone, Rigid Body Dynamics Algorithms, 2008, ch. 2 and 7) with every
spatial vector in world axes *about the world origin*, so the transforms between bodies are the
identity: a motion vector is v = (w; v_O), v_O the velocity of the body point passing the
origin; a force is f = (n_O; F).  Joint i's motion subspace in world coordinates is
    S_i = [R_cj a_k; p_cj x R_cj a_k + R_cj l_k]_k        (6 x n_i, p_cj the joint origin),
fixed in the child body, so its rate is S_i' = v_i x S_i.  The body's spatial inertia about the
origin (m, COM c, rotational inertia I_c in world axes) is
    I = [[I_c + m (|c|^2 1 - c c^T), m [c]x], [m [c]x^T, m 1]].

Impulse form of one step (the issue's Poisson impulses p = B^T M v: B^T maps body impulses to
joint impulses, here S_i^T).  Over a step h the generalized momentum changes by the impulses of
the applied efforts, the velocity-product (gyroscopic, Coriolis) terms and gravity:
    (H(q) + A + h B) dqd = h (tau - C(q, qd) - G(q) - B qd),
A the rotor armature N^2 J_m and B the joint damping (both diagonal in joint space, so implicit
damping is exact to add).  The articulated-body algorithm solves this in O(n) without forming H
(Featherstone eq. 7.1-7.4, ABA Table 7.1, here with velocity *changes* instead of
accelerations):
    outward:  v_i = v_lambda(i) + S_i qd_i;   c_i = h v_i x S_i qd_i;
              I^A_i = I_i;   P^A_i = h (v_i x* I_i v_i - f_ext,i)
    inward:   U_i = I^A_i S_i;   D_i = S_i^T U_i + A_i + h B_i;   u_i = h tau_i - S_i^T P^A_i
              I^A_lambda += I^A_i - U_i D_i^-1 U_i^T
              P^A_lambda += P^A_i + (I^A_i - U_i D_i^-1 U_i^T) c_i + U_i D_i^-1 u_i
    outward:  a'_i = a_lambda(i) + c_i (a_world = -h g, Featherstone's gravity trick);
              dqd_i = D_i^-1 (u_i - U_i^T a'_i);   a_i = a'_i + S_i dqd_i
Only the joint-sized D_i (at most 6 x 6, symmetric positive definite) are inverted.

Integrators.  Semi-implicit Euler (the default): qd+ = qd + dqd(q, qd) from the recursion
above, then q+ = q + h qd+ for scalar joints, Q+ = Q exp(h w_c+) (exact quaternion
exponential) and r+ = r + h R(Q+) v_c+ for spherical, planar and floating joints.
Symplectic Euler in (q, p) (``_symplectic_step``): the discrete Euler-Lagrange equations with
the impulses p = S_i^T h_i carried between steps, dp_i/dt = tau_i + S_i^T (f_sub,i - v_i x* h_i)
taken implicitly by a fixed-point iteration over articulated inertias factored once per step
(Hairer, Lubich, Wanner, Geometric Numerical Integration, VI.6).  Classical RK4 on
(q, r, Q, qd) with dQ/dt = Q (0, w_c) / 2 (renormalised at each stage) for reference runs
(explicit damping, no drives).  docs/tree.md has the measured behaviour of each.
"""
from collections import namedtuple

import numpy as np

from . import islands
from .arrays import (Axes, Contacts, ContactWork, Drives, INFO_CONTACTS, INFO_ITERATIONS,
                     INFO_OVERFLOW, INFO_PENETRATION, INFO_POS_ERROR, INFO_RESIDUAL, INFO_STOP,
                     Joints, Polytopes, Shapes, State, STATUS_CONTACT_OVERFLOW, STOP_ITERATIONS,
                     STOP_TOLERANCE)
from .compile.clock import monotonic
from .compile.containers import by_reference
from .compile.flat import bound_view, declare, in_order, keep_views, slots_bound
from .contacts import (contact_targets, find_contacts, has_angular_rows, P_COMPLIANT,
                       prepare_push, ROW_IMPULSE, solve_contacts, targets_from_speeds,
                       warm_start_contacts)
from .drives import (current_after_step, finish_drive, gear_gain, limited_motor_row,
                     output_effort)
from .joints.placement import TREE_FREE, TREE_ROTATION, TREE_SLIDE
from .math3d import (cross, entry, invert_spd, jit, jit_inline, jit_views, quat_conj,
                     quat_from_rotvec, quat_mul, quat_normalized, quat_to_mat, read3, read4,
                     read_mat, write3, write4)
from .solver import sweep_stop
from .step import store_body_states
from .tree_rows import (articulated_solve, axis_rows, body_velocities, contact_rows,
                        contact_rows_paths, forget_body_responses, free_rows, link_push_targets,
                        link_rows, loop_axis_push_targets, loop_axis_rows, loop_coordinates,
                        loop_friction_rows, node_velocities, prepare_push_axes, solve_axes,
                        solve_free, solve_loop_axes, solve_loop_friction, solve_push_axes,
                        solve_push_loop_axes, start_paths, sweep_links, velocities_from_paths,
                        warm_start_axes, warm_start_free, warm_start_links,
                        warm_start_loop_axes, warm_start_loop_friction)

#: Static tree data, one node per tree joint in parents-first order (the floating base is node 0).
TreeModel = by_reference(namedtuple('TreeModel', [
    'parent',         # (n_node,) int64 parent node, -1 = the world
    'body',           # (n_node,) int64 child body
    'parent_body',    # (n_node,) int64 parent body, -1 = the world
    'joint',          # (n_node,) int64 model joint index, -1 for the floating base
    'kind',           # (n_node,) int64 KIND_REVOLUTE, KIND_PRISMATIC or KIND_FREE
    'ppos',           # (n_node, 3) joint origin in the parent body frame from its COM, m
    'pquat',          # (n_node, 4) joint frame in the parent body frame, wxyz
    'cpos',           # (n_node, 3) joint origin in the child body frame from its COM, m
    'cquat',          # (n_node, 4) joint frame in the child body frame, wxyz
    'dof',            # (n_node,) int64 velocity coordinates n_i (0..6)
    'v0',             # (n_node,) int64 first coordinate of the node in qd
    'col',            # (n_node, 6, 6) column k: (angular; linear) unit direction, joint frame
    'mass',           # (n_body,) kg
    'inertia',        # (n_body, 3, 3) about the COM, body frame, kg m^2
    'v_joint',        # (n_v,) int64 scalar joint of each coordinate, -1 for multi-DOF ones
    'v_node',         # (n_v,) int64 node of each coordinate
    'damping',        # (n_v,) viscous damping, N m s/rad or N s/m
    'armature',       # (n_v,) reflected rotor inertia N^2 J_m, kg m^2 or kg
    'drive_v',        # (n_drive,) int64 coordinate of each drive, -1 on a loop joint (its
                      # rotor, gear and motor rows: tree_rows.loop_axis_rows)
    'gear',           # (n_drive,) N
    'resistance',     # (n_drive,) ohm
    'inductance',     # (n_drive,) H
    'kt',             # (n_drive,) N m/A
    'ke',             # (n_drive,) V s/rad
    'viscous',        # (n_drive,) N m s/rad, rotor side
    'efficiency',     # (n_drive,) 1
    'current_limit',  # (n_drive,) A
    'rotor_inertia',  # (n_drive,) kg m^2
    # groups: the robot and each free scene object are separate trees (physics/tree_rows.py)
    'body_node',      # (n_body,) int64 node of each body
    'node_group',     # (n_node,) int64 group of each node
    'group_node',     # (n_group + 1,) int64 first node of each group (nodes contiguous)
    'group_v',        # (n_group + 1,) int64 first coordinate of each group (contiguous)
    'axis_v',         # (n_axis,) int64 coordinate of each axis (arrays.Axes), -1 for a loop
                      # joint's (not a coordinate of the tree)
    'axis_always',    # (n_axis,) int64 1 where the axis has rows every step (friction, speed)
    # links: bilateral rows between coordinates or bodies (physics/tree_rows.py), mimic pairs
    # first (link l < n_mimic is mimic pair l), then the loop joints
    'link_joint',     # (n_link,) int64 model joint of each loop link, -1 for a mimic pair
    'mimic_v',        # (n_mimic, 2) int64 follower, leader coordinate
    'mimic_ratio',    # (n_mimic,) multiplier r of q_f = r q_l + o, 1
    'mimic_offset',   # (n_mimic,) offset o, rad or m
    # Coulomb friction of spherical and planar joints (arrays.FreeFriction): a norm-bounded
    # vector of rows on the joint's own coordinates (physics/tree_rows.py, ``free_rows``)
    'free_v',         # (n_free,) int64 first coordinate of the rows: a spherical joint's
                      # three angular ones, a planar joint's two in-plane translations; -1
                      # for a spherical loop joint's (free_link)
    'free_dim',       # (n_free,) int64 3 (spherical) or 2 (planar)
    'free_force',     # (n_free, 2) sliding, breakaway friction, N m or N
    # the scalar loop joints' coordinate rows: between their two bodies (physics/tree_rows.py,
    # ``loop_axis_rows``); empty without loop joints, and then nothing per step
    'axis_link',      # (n_axis,) int64 link of a loop joint's axis, -1 for the tree's own
    'loop_axes',      # (n_loop_axis,) int64 the loop joints' axes
    # a spherical loop joint's Coulomb friction: three rows between its bodies, through its
    # link (physics/tree_rows.py, ``loop_friction_rows``)
    'free_link',      # (n_free,) int64 link of a loop joint's friction, -1 for a tree joint's
]))

#: Mutable tree state; the body_* , joint_*, drive_* and time arrays are the facade's State
#: arrays (physics.arrays.State), filled from forward kinematics after every step.
TreeState = by_reference(namedtuple('TreeState', [
    'node_q',         # (n_node,) unwrapped scalar coordinate, rad or m (0 for others)
    'node_rel',       # (n_node, 7) child joint frame in the parent joint frame: r m, Q wxyz
    'qd',             # (n_v,) generalized velocities, rad/s, m/s (child joint frame twist)
    'p',              # (n_v,) generalized (Poisson) impulses (H(q_prev) + A) qd, N m s or N s
    'drive_limited',  # (n_drive,) +1 or -1 while the current limit holds the motor torque
    'drive_gain',     # (n_drive,) gear output per motor torque this step: eta N when the
                      # motor drives the load, (2 - eta) N when the load drives the motor
    'link_impulse',   # (n_link, 6) accumulated impulses of the links' rows, N s or N m s
    'joint_effort', 'drive_voltage', 'drive_current', 'rotor_speed',
    'body_wrench', 'body_pos', 'body_quat', 'body_lin_vel', 'body_ang_mom', 'joint_q', 'time',
    'drive_effort', 'axis_impulse', 'axis_rate', 'joint_anchor', 'joint_length', 'joint_active',
    'joint_row_rate',
    'axis_prescribed', 'axis_target_rate', 'axis_target_q',  # prescribed motion (aim())
    'free_impulse',   # (n_free, 3) spherical and planar joints' friction impulses on their
                      # coordinates (child-frame torque, parent-frame force), N m s or N s; a
                      # spherical loop joint's on its bodies' relative rotation (world axes)
    'drive_impulse',  # (n_drive, 3) a loop joint's drive: gear, motor and gear-friction
                      # impulses (arrays.State; the tree's own drives are implicit)
]))

#: Scratch arrays of the recursion and the integrators.
TreeWork = by_reference(namedtuple('TreeWork', [
    'body_x', 'body_q', 'body_rot',   # (n_body, 3), (n_body, 4), (n_body, 3, 3) poses
    'joint_origin',                   # (n_node, 3) child joint origin, world, m
    'S',                              # (n_node, 6, 6) world motion subspace, column k in row k
    'vel', 'cbias', 'PA', 'acc', 'u',  # (n_node, 6) spatial quantities
    'IA', 'U', 'Dinv',                # (n_node, 6, 6)
    'Ud', 'mat6', 'gj',               # (6, 6), (6, 6), (6, 12) scratch
    'vec6a', 'vec6b',                 # (6,) scratch
    'force', 'extra', 'dqd', 'damp', 'rhs',  # (n_v,) per coordinate
    'Ibody', 'hsub',                  # (n_node, 6, 6), (n_node, 6) isolated inertia, momentum
    'q_backup', 'rel_backup', 'qd_backup', 'p_backup', 'drive_backup',
    'fallbacks',                      # (1,) steps that fell back to the velocity form
    'stage_q', 'stage_rel', 'stage_qd', 'k_q', 'k_rel', 'k_qd', 'sum_q', 'sum_rel', 'sum_qd',
    # the rows (physics/tree_rows.py)
    'body_vel',       # (n_body, 6) COM velocity, angular velocity, world
    'axis_U',         # (n_axis, width + 1) response of the axis' group to a unit coordinate
                      # impulse (path form: D^-1 y and 0, tree_rows.py)
    'axis_Y',         # (n_axis, width + 1) path form: the axis' y = L^-T e_v and its rate
    'w_aug',          # (n_v + n_group,) path form's solve vector: per group D^-1 z and 1.0
    'S_push',         # (n_node, 6, 6) the step's S kept for the push's velocities (path form)
    'axis_k',         # (n_axis,) inverse effective mass of the coordinate
    'axis_rows',      # (n_axis, 7, 5) this step's coordinate rows (axes.coordinate_rows)
    'unit', 'resp',   # (n_v,) right-hand side and result of one articulated solve
    'push_qd',        # (n_v,) pseudo-velocities of the penetration push
    'axis_live',      # (n_axis,) int64 the axes with rows this step, first axis_live_n[0]
    'axis_live_n',    # (1,) int64
    'clock',          # (2,) int64 clock_gettime scratch
    'body_J', 'body_U',  # (n_body, 6, width) a unit spatial force on a body: its Jacobian,
                         # its response (tree_rows._body_response)
    'body_ready',     # (n_body,) 1.0 once body_J, body_U hold this step's
    'body_start',     # (n_body, 13) the bodies at the step's start: pos, quat, lin vel, L
    'rel_posed',      # (n_node, 7) the relative poses the kinematics in wk are of (body_x,
                      # body_q, body_rot, S, joint_origin: tree_kinematics), NaN at first
    'free_U',         # (n_free, 3, width) each friction row's response on its group's qd
    'free_kinv',      # (n_free, 3, 3) inverse of the rows' block J U
    'free_bound',     # (n_free,) the impulse vector's norm bound this step, N m s or N s
    # up to six articulated solves side by side (tree_rows.six_solves: a body's six unit
    # responses, the live axes' columns), the last index the solve: (n_node, 6, 6) the joint
    # impulses u, bias impulses P^A and velocity changes, (6, 6) the joint-sized terms of one
    # node, (n_node,) 1.0 on the paths swept inward, (width, 6) right-hand sides and results
    'six_u', 'six_pa', 'six_acc', 'six_w', 'six_out', 'six_mark', 'six_rhs', 'six_res',
]))

#: The links' rows of one step (physics/tree_rows.py, ``link_rows``): up to 6 per link (a mimic
#: pair 1, a loop joint its type's rows), each over at most two segments of qd (the groups of
#: its two bodies) as a contact point's rows (arrays.ContactWork.row_*).
LinkWork = by_reference(namedtuple('LinkWork', [
    'seg',            # (n_link, 2) int64 first coordinate of each segment, -1 unused
    'length',         # (n_link, 2) int64 coordinates in each segment
    'rows',           # (n_link,) int64 rows this step (0: an element switched off)
    'J',              # (n_link, 6, 2, width + 1) the rows' Jacobians on qd (path form: y, J qd0)
    'U',              # (n_link, 6, 2, width + 1) their responses (H + A + h B)^-1 J^T (D^-1 y)
    'kinv',           # (n_link, 6) 1 / (J U), 0 for a row the tree cannot move
    'target',         # (n_link, 6) velocity target J qd+, m/s or rad/s (a moving reference)
    'error',          # (n_link, 6) position error C, m or rad
    'push_target',    # (n_link, 6) pseudo-velocity target of the drift correction, -C / dt
    'push',           # (n_link, 6) pseudo-impulses of the drift correction
    'body_rows',      # (n_link, 6, 2, 6) a loop joint's rows on its bodies' twists (joints/)
    'carry',          # (n_link,) 1.0 for an element with a moving reference (a prescribed
                      # length or path): its rows anticipate the step's curvature (carried)
    'carried',        # (n_link, 6) the step's curvature over dt, m/s or rad/s: taken off
                      # the next step's target; each step adds the error it left (tree_rows.py)
    # a loop joint's own rows on the relative motion of its bodies (tree_rows.py): a scalar
    # one's coordinate row (row 0: friction, damping, limits, speed, prescribed, efforts and
    # a drive, ``loop_axis_rows``), a spherical one's three friction rows
    # (``loop_friction_rows``)
    'axis_rows',      # (n_link, 3, 2, 6) the own rows on the bodies' twists (joints/)
    'axis_J',         # (n_link, 3, 2, width) their Jacobians on qd
    'axis_U',         # (n_link, 3, 2, width) their responses (H + A + h B)^-1 J^T
    'axis_Uc',        # (n_link, 3, 2, width) their responses seen through the joint's rows
    'axis_reaction',  # (n_link, 3, 6) the joint's rows' impulses per unit own-row impulse
    'axis_block',     # (n_link, 3, 3) the own rows' block J axis_Uc (inverted for three rows)
    'axis_k',         # (n_link,) J axis_Uc of a coordinate, its inverse effective mass
    'axis_kg',        # (n_link,) the same with a drive's rotor geared in (axes.py)
    'axis_on',        # (n_link,) int64 1 while the joint's own rows act this step
    'friction_bound',  # (n_link,) a spherical loop joint's friction impulse bound, N m s
    'drive_soft',     # (n_drive, 5) a loop joint's drive: its motor row (arrays.MOTOR_F ..)
    'drive_ainv',     # (n_drive, 2, 2, 2) and its inverse gear/motor matrices (drives.py)
    'jrow',           # (1, 2, 6) scratch: a coordinate row at the step's end
]))

#: The TreeState fields the tree engine owns; the others are the facade's State arrays.
TreeCoordinates = by_reference(namedtuple('TreeCoordinates', TreeState._fields[:7]))

# How tree_bind rebuilds the TreeState from the buffers flat.pack made (flat.keep_views): from
# the packed TreeCoordinates (source 0, in order) and the facade's packed State (source 1: each
# field's row is that of the State field of the same name).  The other containers are declared
# by flat.pack_together when the engine packs them (the model, work and mechanism together,
# the contact arrays together).
declare(TreeState, in_order('f1 f2 f1 f1 f1 f1 f2') + [  # then joint_effort .. free_impulse:
    (1, State._fields.index(name), ndim) for name, ndim in zip(
        TreeState._fields[7:],
        (1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 2, 1, 2, 1, 1, 2, 1, 1, 1, 2, 2))],
    [np.float64] * len(TreeState._fields))

#: The containers of tree_step_packed's view cache (flat.view_slots), in its order.
VIEW_SLOTS = (TreeModel, TreeState, TreeWork, Joints, LinkWork, Axes, Drives, Shapes, Polytopes,
              Contacts, ContactWork)

#: Cap and relative tolerance of the symplectic step's fixed-point iteration.
MAX_FIXED_POINT = 20
FIXED_POINT_TOLERANCE = 1e-11
#: Integrator codes.
SEMI_IMPLICIT_EULER, SYMPLECTIC_EULER, RK4 = 0, 1, 2
#: Status codes (as physics.arrays).
_OK, _DIVERGED = 0, 1
#: Node kinds: a scalar joint with a rotation about its axis, one sliding along it, or a joint
#: whose relative pose (r, Q) is integrated (spherical, planar, floating, fixed); each joint
#: type's module says which it is (``TREE_KIND``, physics/joints/placement.py).
KIND_REVOLUTE, KIND_PRISMATIC, KIND_FREE = TREE_ROTATION, TREE_SLIDE, TREE_FREE


@jit
def tree_kinematics(tm, node_rel, wk):
    """
    Forward kinematics: body poses, joint origins and world motion subspaces.

    Args:
        tm: TreeModel.
        node_rel: (n_node, 7) relative pose r (m), Q (wxyz) of each child joint frame in its
            parent joint frame.
        wk: TreeWork; fills body_x (COM, world, m), body_q (wxyz), body_rot, S (n_node, 6, 6:
            column k in row k, world axes about the origin), joint_origin, and rel_posed (a
            copy of node_rel: what they are of).
    """
    for i in range(tm.parent.shape[0]):
        pb = tm.parent_body[i]
        if pb >= 0:
            xp = read3(wk.body_x, pb)
            qp = read4(wk.body_q, pb)
        else:
            xp = (0.0, 0.0, 0.0)
            qp = (1.0, 0.0, 0.0, 0.0)
        rp = quat_to_mat(qp)
        q_pj = quat_mul(qp, read4(tm.pquat, i))
        ppos = read3(tm.ppos, i)
        p_pj = (xp[0] + rp[0][0] * ppos[0] + rp[0][1] * ppos[1] + rp[0][2] * ppos[2],
                xp[1] + rp[1][0] * ppos[0] + rp[1][1] * ppos[1] + rp[1][2] * ppos[2],
                xp[2] + rp[2][0] * ppos[0] + rp[2][1] * ppos[1] + rp[2][2] * ppos[2])
        r_pj = quat_to_mat(q_pj)
        r = read3(node_rel, i)
        rel_q = (node_rel[i, 3], node_rel[i, 4], node_rel[i, 5], node_rel[i, 6])
        q_cj = quat_mul(q_pj, rel_q)
        p_cj = (p_pj[0] + r_pj[0][0] * r[0] + r_pj[0][1] * r[1] + r_pj[0][2] * r[2],
                p_pj[1] + r_pj[1][0] * r[0] + r_pj[1][1] * r[1] + r_pj[1][2] * r[2],
                p_pj[2] + r_pj[2][0] * r[0] + r_pj[2][1] * r[1] + r_pj[2][2] * r[2])
        q_b = quat_normalized(quat_mul(q_cj, quat_conj(read4(tm.cquat, i))))
        r_b = quat_to_mat(q_b)
        cpos = read3(tm.cpos, i)
        b = tm.body[i]
        for k in range(3):
            wk.body_x[b, k] = p_cj[k] - (r_b[k][0] * cpos[0] + r_b[k][1] * cpos[1]
                                         + r_b[k][2] * cpos[2])
            for m in range(3):
                wk.body_rot[b, k, m] = r_b[k][m]
        write4(wk.body_q, b, q_b)
        write3(wk.joint_origin, i, p_cj)
        r_cj = quat_to_mat(q_cj)
        # a free joint's linear columns are fixed in its parent joint frame (the module doc)
        r_lin = r_pj if tm.kind[i] == KIND_FREE else r_cj
        for k in range(tm.dof[i]):
            a = _turn_column(r_cj, tm.col, i, k, 0)
            lin = _turn_column(r_lin, tm.col, i, k, 3)
            pa = cross(p_cj, a)
            for m in range(3):
                wk.S[i, k, m] = a[m]
                wk.S[i, k, 3 + m] = pa[m] + lin[m]
        for m in range(7):
            wk.rel_posed[i, m] = node_rel[i, m]


@jit
def _posed(tm, node_rel, wk):
    """Return True when wk's kinematics are those of node_rel already (tree_kinematics)."""
    for i in range(tm.parent.shape[0]):
        for m in range(7):
            if node_rel[i, m] != wk.rel_posed[i, m]:
                return False
    return True


@jit
def _turn_column(r, col, i, k, o):
    """Return the rotation r applied to col[i, k, o:o + 3] (a column's part, joint frame)."""
    c = (col[i, k, o], col[i, k, o + 1], col[i, k, o + 2])
    return (r[0][0] * c[0] + r[0][1] * c[1] + r[0][2] * c[2],
            r[1][0] * c[0] + r[1][1] * c[1] + r[1][2] * c[2],
            r[2][0] * c[0] + r[2][1] * c[1] + r[2][2] * c[2])


@jit
def _linear_column(tm, i, k):
    """Return True where column k of node i is a translation (no angular part)."""
    return tm.col[i, k, 0] == 0.0 and tm.col[i, k, 1] == 0.0 and tm.col[i, k, 2] == 0.0


@jit
def _linear_velocity(tm, wk, i, qd):
    """World velocity v of node i's linear columns (a free joint's translation), m/s."""
    v0 = v1 = v2 = 0.0
    for k in range(tm.dof[i]):
        if _linear_column(tm, i, k):
            x = qd[tm.v0[i] + k]
            v0 += wk.S[i, k, 3] * x
            v1 += wk.S[i, k, 4] * x
            v2 += wk.S[i, k, 5] * x
    return v0, v1, v2


@jit
def _parent_fixed_bias(tm, wk, i, qd, bias):
    """
    Correct v_i x S_i qd_i for a free joint's linear columns, fixed in the parent frame.

    Their rate is v_parent x S, not v_i x S: the difference is -(S_ang w) x (S_lin v) =
    (0; -w x v), w the joint's world angular velocity and v its world linear one.
    """
    w0 = w1 = w2 = 0.0
    for k in range(tm.dof[i]):
        x = qd[tm.v0[i] + k]
        w0 += wk.S[i, k, 0] * x
        w1 += wk.S[i, k, 1] * x
        w2 += wk.S[i, k, 2] * x
    wv = cross((w0, w1, w2), _linear_velocity(tm, wk, i, qd))
    for m in range(3):
        bias[3 + m] -= wv[m]


@jit
def _motion_cross(v, m, out):
    """Return in out v x m for spatial motion vectors (angular; linear about the origin)."""
    w = (v[0], v[1], v[2])
    v0 = (v[3], v[4], v[5])
    mw = (m[0], m[1], m[2])
    m0 = (m[3], m[4], m[5])
    a = cross(w, mw)
    b = cross(w, m0)
    c = cross(v0, mw)
    for k in range(3):
        out[k] = a[k]
        out[3 + k] = b[k] + c[k]


@jit
def _force_cross(v, f, out):
    """Return in out v x* f for a motion vector v and a force vector f (moment; force)."""
    w = (v[0], v[1], v[2])
    v0 = (v[3], v[4], v[5])
    n = (f[0], f[1], f[2])
    ff = (f[3], f[4], f[5])
    a = cross(w, n)
    b = cross(v0, ff)
    c = cross(w, ff)
    for k in range(3):
        out[k] = a[k] + b[k]
        out[3 + k] = c[k]


@jit
def _spatial_inertia(mass, rot, inertia_body, c, out):
    """Spatial inertia about the world origin of a body: mass kg, COM c (m), I_c = R I R^T."""
    for r in range(3):
        for s in range(3):
            acc = 0.0
            for k in range(3):
                for m in range(3):
                    acc += rot[r, k] * inertia_body[k, m] * rot[s, m]
            out[r, s] = acc - mass * c[r] * c[s]
        out[r, r] += mass * (c[0] * c[0] + c[1] * c[1] + c[2] * c[2])
    cx = ((0.0, -c[2], c[1]), (c[2], 0.0, -c[0]), (-c[1], c[0], 0.0))
    for r in range(3):
        for s in range(3):
            out[r, 3 + s] = mass * cx[r][s]
            out[3 + r, s] = mass * cx[s][r]
            out[3 + r, 3 + s] = mass if r == s else 0.0


@jit_inline
def _joint_inertia(i, d, v0, wk, dof_extra):
    """
    Project node i's articulated inertia onto its joint: U = I^A S, D = S^T U + extra.

    Fills wk.U[i, :d] and wk.mat6[:d, :d] (the joint-sized matrix the step inverts); ``extra``
    adds the rotor's reflected inertia and h times the implicit damping on the diagonal.
    """
    for k in range(d):
        for r in range(6):
            acc = 0.0
            for s in range(6):
                acc += wk.IA[i, r, s] * wk.S[i, k, s]
            wk.U[i, k, r] = acc
    for k in range(d):
        for m in range(d):
            acc = 0.0
            for r in range(6):
                acc += wk.S[i, k, r] * wk.U[i, m, r]
            wk.mat6[k, m] = acc
        wk.mat6[k, k] += dof_extra[v0 + k]


@jit_inline
def _node_bias(tm, qd, h, body_wrench, wk, i):
    """
    Fill the outward pass's terms of node i (its parent's velocity current).

    The step's dynamics (``tree_velocity_change``; ``tree_joint_impulses`` takes the same):
    wk.vel[i] = v_i = v_parent + S_i qd_i, wk.cbias[i] = c_i = h v_i x S_i qd_i (a free
    joint's linear columns turn with the parent), wk.IA[i] = I_i (the body's spatial inertia
    about the origin) and wk.PA[i] = h (v_i x* I_i v_i - f_ext,i), f_ext the applied wrench.
    Uses wk.vec6a and wk.vec6b as scratch.
    """
    sq = wk.vec6a
    tmp = wk.vec6b
    p = tm.parent[i]
    v0 = tm.v0[i]
    for m in range(6):
        sq[m] = 0.0
    for k in range(tm.dof[i]):
        for m in range(6):
            sq[m] += wk.S[i, k, m] * qd[v0 + k]
    for m in range(6):
        wk.vel[i, m] = (wk.vel[p, m] if p >= 0 else 0.0) + sq[m]
    _motion_cross(wk.vel[i], sq, tmp)
    if tm.kind[i] == KIND_FREE:
        _parent_fixed_bias(tm, wk, i, qd, tmp)
    for m in range(6):
        wk.cbias[i, m] = h * tmp[m]
    b = tm.body[i]
    _spatial_inertia(tm.mass[b], wk.body_rot[b], tm.inertia[b], wk.body_x[b], wk.IA[i])
    for r in range(6):
        acc = 0.0
        for s in range(6):
            acc += wk.IA[i, r, s] * wk.vel[i, s]
        sq[r] = acc
    _force_cross(wk.vel[i], sq, tmp)
    f = body_wrench[b]
    x = wk.body_x[b]
    ext_n = cross((x[0], x[1], x[2]), (f[0], f[1], f[2]))
    for m in range(3):
        wk.PA[i, m] = h * (tmp[m] - f[3 + m] - ext_n[m])
        wk.PA[i, 3 + m] = h * (tmp[3 + m] - f[m])


@jit
def _parent_velocity_change(tm, wk, i, h, gravity):
    """
    Start node i's velocity change over a step: its parent's plus its bias c_i (wk.acc[i]).

    The root's parent is the world, whose velocity change -h g stands for gravity (the step's
    outward sweep and the Newton-Euler pass of the sensors alike).
    """
    p = tm.parent[i]
    for m in range(6):
        if p >= 0:
            wk.acc[i, m] = wk.acc[p, m] + wk.cbias[i, m]
        elif m < 3:
            wk.acc[i, m] = wk.cbias[i, m]
        else:
            wk.acc[i, m] = -h * gravity[m - 3] + wk.cbias[i, m]


@jit
def tree_velocity_change(tm, qd, h, gravity, dof_force, dof_extra, body_wrench, wk, out):
    """
    Generalized velocity change over h from the articulated-body recursion (module docstring).

    Args:
        tm: TreeModel.
        qd: (n_v,) generalized velocities.
        h: impulse interval, s (the step for Euler; 1 for an acceleration).
        gravity: (3,) m/s^2.
        dof_force: (n_v,) generalized force per coordinate, N m or N.
        dof_extra: (n_v,) diagonal added to D: armature (+ h damping when implicit).
        body_wrench: (n_body, 6) external force through the COM (N) and torque (N m), world.
        wk: TreeWork (kinematics must be current).
        out: (n_v,) velocity change, rad/s or m/s.
    """
    n = tm.parent.shape[0]
    sq = wk.vec6a
    # outward: velocities, velocity-product terms, isolated inertias and bias impulses
    for i in range(n):
        _node_bias(tm, qd, h, body_wrench, wk, i)
    # inward: articulated inertias and bias impulses
    for i in range(n - 1, -1, -1):
        d = tm.dof[i]
        v0 = tm.v0[i]
        _joint_inertia(i, d, v0, wk, dof_extra)
        for k in range(d):
            acc = 0.0
            for r in range(6):
                acc += wk.S[i, k, r] * wk.PA[i, r]
            wk.u[i, k] = h * dof_force[v0 + k] - acc
        invert_spd(wk.mat6, d, wk.Dinv[i], wk.gj)
        p = tm.parent[i]
        if p < 0:
            continue
        # Ud = U D^-1 (6 x d) in rows k: wk.Ud[k, r]
        for k in range(d):
            for r in range(6):
                acc = 0.0
                for m in range(d):
                    acc += wk.U[i, m, r] * wk.Dinv[i, m, k]
                wk.Ud[k, r] = acc
        # Ia = I^A - U D^-1 U^T, stored in place in IA[i]
        for r in range(6):
            for s in range(6):
                acc = 0.0
                for k in range(d):
                    acc += wk.Ud[k, r] * wk.U[i, k, s]
                wk.IA[i, r, s] -= acc
        for r in range(6):
            acc = wk.PA[i, r]
            for s in range(6):
                acc += wk.IA[i, r, s] * wk.cbias[i, s]
            for k in range(d):
                acc += wk.Ud[k, r] * wk.u[i, k]
            wk.PA[p, r] += acc
            for s in range(6):
                wk.IA[p, r, s] += wk.IA[i, r, s]
    # outward: velocity changes
    for i in range(n):
        d = tm.dof[i]
        v0 = tm.v0[i]
        _parent_velocity_change(tm, wk, i, h, gravity)
        for k in range(d):
            acc = wk.u[i, k]
            for r in range(6):
                acc -= wk.U[i, k, r] * wk.acc[i, r]
            sq[k] = acc
        for k in range(d):
            acc = 0.0
            for m in range(d):
                acc += wk.Dinv[i, k, m] * sq[m]
            out[v0 + k] = acc
        for k in range(d):
            for r in range(6):
                wk.acc[i, r] += wk.S[i, k, r] * out[v0 + k]


@jit
def _set_scalar_pose(tm, i, q, node_rel):
    """Relative pose of a scalar joint from its coordinate (rad about / m along the axis)."""
    ax = (tm.col[i, 0, 0], tm.col[i, 0, 1], tm.col[i, 0, 2])
    if tm.kind[i] == KIND_REVOLUTE:
        s = np.sin(0.5 * q)
        node_rel[i, 0] = node_rel[i, 1] = node_rel[i, 2] = 0.0
        node_rel[i, 3] = np.cos(0.5 * q)
        node_rel[i, 4] = s * ax[0]
        node_rel[i, 5] = s * ax[1]
        node_rel[i, 6] = s * ax[2]
    else:
        for m in range(3):
            node_rel[i, m] = q * tm.col[i, 0, 3 + m]
        node_rel[i, 3] = 1.0
        node_rel[i, 4] = node_rel[i, 5] = node_rel[i, 6] = 0.0


@jit
def _relative_twist(tm, i, qd):
    """Angular w_c and linear v_c relative velocity of node i in its child joint frame."""
    w0 = w1 = w2 = v0 = v1 = v2 = 0.0  # scalars, not lists: the engine allocates nothing
    for k in range(tm.dof[i]):
        x = qd[tm.v0[i] + k]
        w0 += tm.col[i, k, 0] * x
        w1 += tm.col[i, k, 1] * x
        w2 += tm.col[i, k, 2] * x
        v0 += tm.col[i, k, 3] * x
        v1 += tm.col[i, k, 4] * x
        v2 += tm.col[i, k, 5] * x
    return (w0, w1, w2), (v0, v1, v2)


@jit
def tree_integrate_positions(tm, node_q, node_rel, qd, h, n0, n1):
    """Symplectic Euler position update of nodes n0..n1-1 with the new velocities (module doc)."""
    for i in range(n0, n1):
        if tm.kind[i] != KIND_FREE:
            node_q[i] += h * qd[tm.v0[i]]
            _set_scalar_pose(tm, i, node_q[i], node_rel)
            continue
        if tm.dof[i] == 0:
            continue
        w, v = _relative_twist(tm, i, qd)
        q_old = read4(node_rel[:, 3:], i)
        q_new = quat_normalized(quat_mul(q_old, quat_from_rotvec((h * w[0], h * w[1],
                                                                  h * w[2]))))
        for m in range(3):
            node_rel[i, m] += h * v[m]  # the translation's rate, in the parent joint frame
        for m in range(4):
            node_rel[i, 3 + m] = q_new[m]


@jit
def _position_rates(tm, node_rel, qd, dq, drel):
    """dq/dt and d(r, Q)/dt of every node for RK4."""
    for i in range(tm.parent.shape[0]):
        for m in range(7):
            drel[i, m] = 0.0
        if tm.kind[i] != KIND_FREE:
            dq[i] = qd[tm.v0[i]]
            continue
        dq[i] = 0.0
        w, v = _relative_twist(tm, i, qd)
        q = read4(node_rel[:, 3:], i)
        for m in range(3):
            drel[i, m] = v[m]
        qdot = quat_mul(q, (0.0, w[0], w[1], w[2]))
        for m in range(4):
            drel[i, 3 + m] = 0.5 * qdot[m]


@jit
def _normalize_rel(tm, node_q, node_rel):
    for i in range(tm.parent.shape[0]):
        if tm.kind[i] != KIND_FREE:
            _set_scalar_pose(tm, i, node_q[i], node_rel)
        else:
            q = quat_normalized(read4(node_rel[:, 3:], i))
            for m in range(4):
                node_rel[i, 3 + m] = q[m]


@jit
def _dof_terms(tm, ts, qd, dt, out_force, out_damp):
    """
    Generalized force per coordinate split as tau0 - b qd: efforts and drives.

    out_force: tau0, the joint effort plus the drive's g tau0 (``drives.limited_motor_row``,
    the current limit judged at the start-of-step speed), N m or N.  out_damp: b, the joint
    damping plus the drive's back-EMF and friction g N c, N m s/rad or N s/m.  The gear gain
    g (``drives.gear_gain``) is judged on the motor torque at the start-of-step speed.
    The symplectic step takes -b qd+ implicitly (h b on the diagonal of D); RK4 explicitly.
    """
    for v in range(qd.shape[0]):
        out_force[v] = ts.joint_effort[tm.v_joint[v]] if tm.v_joint[v] >= 0 else 0.0
        out_damp[v] = tm.damping[v]
    for d in range(tm.drive_v.shape[0]):
        v = tm.drive_v[d]
        if v < 0:
            continue  # a loop joint's drive: its rows (tree_rows.loop_axis_rows)
        n = tm.gear[d]
        w_m = n * qd[v]
        tau0, c, held = limited_motor_row(ts.drive_voltage[d], ts.drive_current[d], w_m, dt,
                                          tm.resistance[d], tm.inductance[d], tm.kt[d],
                                          tm.ke[d], tm.viscous[d], tm.current_limit[d])
        ts.drive_limited[d] = held
        # joint effort g (tau0 - c N qd)
        gain = gear_gain(n, tm.efficiency[d], (tau0 - c * w_m) * w_m)
        ts.drive_gain[d] = gain
        out_force[v] += gain * tau0
        out_damp[v] += gain * n * c


@jit
def _isolated_inertias(tm, wk):
    """Spatial inertia of every node's body about the world origin (kinematics current)."""
    for i in range(tm.parent.shape[0]):
        b = tm.body[i]
        _spatial_inertia(tm.mass[b], wk.body_rot[b], tm.inertia[b], wk.body_x[b], wk.Ibody[i])


@jit
def _subtree_momenta(tm, wk):
    """Inward pass: composite spatial momentum h_i = sum over i's subtree of I_j v_j."""
    n = tm.parent.shape[0]
    for i in range(n):
        for r in range(6):
            acc = 0.0
            for s in range(6):
                acc += wk.Ibody[i, r, s] * wk.vel[i, s]
            wk.hsub[i, r] = acc
    for i in range(n - 1, -1, -1):
        p = tm.parent[i]
        if p >= 0:
            for r in range(6):
                wk.hsub[p, r] += wk.hsub[i, r]


@jit
def tree_momentum(tm, qd, wk, out):
    """
    Generalized (Poisson) impulses p = S_i^T h_i + A qd, N m s or N s (velocities current).

    h_i is the subtree's composite momentum, so p = (H + A) qd without forming H.
    """
    _subtree_momenta(tm, wk)
    for i in range(tm.parent.shape[0]):
        for k in range(tm.dof[i]):
            v = tm.v0[i] + k
            acc = tm.armature[v] * qd[v]
            for r in range(6):
                acc += wk.S[i, k, r] * wk.hsub[i, r]
            out[v] = acc


@jit
def _lagrangian_force(tm, wk, gravity, body_wrench, out):
    """
    dL/dq of every coordinate at the current velocities (Poisson-impulse rates without tau).

    p_i = S_i^T h_i with S_i fixed in the child body (S_i' = v_i x S_i) and h_i' the external
    force on the subtree (gravity, applied wrenches; joint i's own force projects to tau_i):
        p_i' = tau_i + S_i^T (f_sub,i - v_i x* h_i).
    """
    n = tm.parent.shape[0]
    _subtree_momenta(tm, wk)
    for i in range(n):
        b = tm.body[i]
        m = tm.mass[b]
        x = wk.body_x[b]
        f = body_wrench[b]
        force = (m * gravity[0] + f[0], m * gravity[1] + f[1], m * gravity[2] + f[2])
        moment = cross((x[0], x[1], x[2]), force)
        for r in range(3):
            wk.PA[i, r] = moment[r] + f[3 + r]
            wk.PA[i, 3 + r] = force[r]
    for i in range(n - 1, -1, -1):
        p = tm.parent[i]
        if p >= 0:
            for r in range(6):
                wk.PA[p, r] += wk.PA[i, r]
    for i in range(n):
        _force_cross(wk.vel[i], wk.hsub[i], wk.vec6a)
        p = tm.parent[i]
        for m in range(6):  # a free joint's linear columns turn with the parent (v_parent)
            wk.vec6b[m] = 0.0
        if tm.kind[i] == KIND_FREE and p >= 0:
            _force_cross(wk.vel[p], wk.hsub[i], wk.vec6b)
        for k in range(tm.dof[i]):
            linear = tm.kind[i] == KIND_FREE and _linear_column(tm, i, k)
            acc = 0.0
            for r in range(6):
                acc += wk.S[i, k, r] * (wk.PA[i, r] - (wk.vec6b[r] if linear
                                                       else wk.vec6a[r]))
            out[tm.v0[i] + k] = acc


@jit
def _articulated_factor(tm, wk, dof_extra):
    """
    Inward pass of the articulated inertias (no bias): U_i, D_i^-1 and I^A for (H + diag).

    After it, ``tree_rows.articulated_solve`` applies (H + diag(dof_extra))^-1 to any
    right-hand side in two O(n) vector sweeps.
    """
    n = tm.parent.shape[0]
    for i in range(n):
        for r in range(6):
            for s in range(6):
                wk.IA[i, r, s] = wk.Ibody[i, r, s]
    for i in range(n - 1, -1, -1):
        d = tm.dof[i]
        v0 = tm.v0[i]
        _joint_inertia(i, d, v0, wk, dof_extra)
        invert_spd(wk.mat6, d, wk.Dinv[i], wk.gj)
        p = tm.parent[i]
        if p < 0:
            continue
        for r in range(6):
            for s in range(6):
                acc = 0.0
                for k in range(d):
                    for m in range(d):
                        acc += wk.U[i, k, r] * wk.Dinv[i, k, m] * wk.U[i, m, s]
                wk.IA[p, r, s] += wk.IA[i, r, s] - acc


@jit
def _symplectic_step(tm, ts, wk, dt, gravity, info, posed):
    """
    Symplectic Euler in (q, p): the discrete Euler-Lagrange equations of L_d = h L(q, dq/h).

        (H(q_n) + A + h B) qd_{n+1} = p_n + h (tau0 + dL/dq(q_n, qd_{n+1}))
        p_{n+1} = (H(q_n) + A) qd_{n+1},    q_{n+1} = q_n + h qd_{n+1}
    The implicit dL/dq is found by fixed-point iteration (contraction ~ h |omega|), each
    iteration two O(n) vector sweeps over the articulated inertias factored once per step.
    ``posed``: as :func:`_velocity_step`.
    """
    n_v = ts.qd.shape[0]
    if not posed:
        tree_kinematics(tm, ts.node_rel, wk)
    _isolated_inertias(tm, wk)
    _dof_terms(tm, ts, ts.qd, dt, wk.force, wk.damp)
    for v in range(n_v):
        wk.extra[v] = tm.armature[v] + dt * wk.damp[v]
    _articulated_factor(tm, wk, wk.extra)
    iterations = 0
    change = 0.0
    previous = np.inf
    converged = False
    for it in range(MAX_FIXED_POINT):
        iterations = it + 1
        node_velocities(tm, ts.qd, wk)
        _lagrangian_force(tm, wk, gravity, ts.body_wrench, wk.dqd)
        for v in range(n_v):
            wk.rhs[v] = ts.p[v] + dt * (wk.force[v] + wk.dqd[v])
        articulated_solve(tm, wk, wk.rhs, wk.dqd, 0, tm.parent.shape[0])
        change = 0.0
        size = 0.0
        for v in range(n_v):
            change = max(change, abs(wk.dqd[v] - ts.qd[v]))
            size = max(size, abs(wk.dqd[v]))
            ts.qd[v] = wk.dqd[v]
        if change <= FIXED_POINT_TOLERANCE * (1.0 + size):
            converged = True
            break
        if it >= 2 and change > previous:
            break  # not contracting: h |omega| too large for the fixed point
        previous = change
    info[0] = iterations
    info[1] = change
    info[2] = 0.0
    if not converged:
        # fall back to the velocity form of this step (docs/tree.md)
        info[2] = 1.0
        wk.fallbacks[0] += 1.0
        for v in range(n_v):
            ts.qd[v] = wk.qd_backup[v]
        _velocity_change_step(tm, ts, wk, dt, gravity)


@jit
def _velocity_change_step(tm, ts, wk, dt, gravity):
    """Add dqd to qd, with (H + A + h B) dqd = h (tau0 - C qd - G - B qd) (forces in wk.force)."""
    for v in range(ts.qd.shape[0]):
        wk.force[v] -= wk.damp[v] * ts.qd[v]
    tree_velocity_change(tm, ts.qd, dt, gravity, wk.force, wk.extra, ts.body_wrench, wk,
                         wk.dqd)
    for v in range(ts.qd.shape[0]):
        ts.qd[v] += wk.dqd[v]


@jit
def _velocity_step(tm, ts, wk, dt, gravity, info, posed):
    """
    Semi-implicit Euler in (q, qd): qd+ = qd + dqd(q, qd), then q+ = q + h qd+.

    The articulated-body recursion in impulse form (module docstring) with the damping and
    the drives' back-EMF implicit on D.  ``posed``: wk's kinematics are those of ts.node_rel
    already (the last step's end).
    """
    if not posed:
        tree_kinematics(tm, ts.node_rel, wk)
    _dof_terms(tm, ts, ts.qd, dt, wk.force, wk.damp)
    for v in range(ts.qd.shape[0]):
        wk.extra[v] = tm.armature[v] + dt * wk.damp[v]
    _velocity_change_step(tm, ts, wk, dt, gravity)
    info[0] = 1.0
    info[1] = 0.0
    info[2] = 0.0


@jit
def _finish_drives(tm, ts, drives, qd_old, qd, dt):
    """
    Rotor speed, current (``drives.current_after_step``) and the output effort.

    The output effort is the gear's g (Kt i - b_m w_m) (``drives.output_effort`` without the
    rotor's inertia, which is the joint's armature here) less the armature's N J_m dw_m/dt.
    A loop joint's drive kept its rotor speed in its rows; its current and effort are the
    maximal formulation's (``drives.finish_drive``).
    """
    for d in range(tm.drive_v.shape[0]):
        v = tm.drive_v[d]
        if v < 0:
            finish_drive(drives, ts, d, dt)
            continue
        n = tm.gear[d]
        w_new = n * qd[v]
        w_old = n * qd_old[v]
        i_new = current_after_step(ts.drive_voltage[d], ts.drive_current[d], w_new, dt,
                                   tm.resistance[d], tm.inductance[d], tm.ke[d],
                                   tm.current_limit[d], ts.drive_limited[d])
        ts.drive_current[d] = i_new
        ts.rotor_speed[d] = w_new
        ts.drive_effort[d] = (output_effort(ts.drive_gain[d], i_new, w_new, 0.0, tm.kt[d],
                                            tm.viscous[d], tm.rotor_inertia[d])
                              - n * tm.rotor_inertia[d] * (w_new - w_old) / dt)


@entry
def tree_reset_momentum(tm, ts, wk):
    """Start the carried impulses from the current state: p = (H(q) + A) qd."""
    tree_kinematics(tm, ts.node_rel, wk)
    _isolated_inertias(tm, wk)
    node_velocities(tm, ts.qd, wk)
    tree_momentum(tm, ts.qd, wk, ts.p)


@entry
def tree_fill_state(tm, ts, wk, qd):
    """Body states (COM, orientation, COM velocity, angular momentum) for the facade."""
    node_velocities(tm, qd, wk)
    for i in range(tm.parent.shape[0]):
        b = tm.body[i]
        w = (wk.vel[i, 0], wk.vel[i, 1], wk.vel[i, 2])
        x = read3(wk.body_x, b)
        wx = cross(w, x)
        rot = read_mat(wk.body_rot, b)
        for m in range(3):
            ts.body_pos[b, m] = x[m]
            ts.body_lin_vel[b, m] = wk.vel[i, 3 + m] + wx[m]
        for m in range(4):
            ts.body_quat[b, m] = wk.body_q[b, m]
        # L = R I R^T w
        wb = (rot[0][0] * w[0] + rot[1][0] * w[1] + rot[2][0] * w[2],
              rot[0][1] * w[0] + rot[1][1] * w[1] + rot[2][1] * w[2],
              rot[0][2] * w[0] + rot[1][2] * w[1] + rot[2][2] * w[2])
        lb = (tm.inertia[b, 0, 0] * wb[0] + tm.inertia[b, 0, 1] * wb[1]
              + tm.inertia[b, 0, 2] * wb[2],
              tm.inertia[b, 1, 0] * wb[0] + tm.inertia[b, 1, 1] * wb[1]
              + tm.inertia[b, 1, 2] * wb[2],
              tm.inertia[b, 2, 0] * wb[0] + tm.inertia[b, 2, 1] * wb[1]
              + tm.inertia[b, 2, 2] * wb[2])
        for m in range(3):
            ts.body_ang_mom[b, m] = rot[m][0] * lb[0] + rot[m][1] * lb[1] + rot[m][2] * lb[2]
        j = tm.joint[i]
        if j >= 0:
            ts.joint_q[j] = ts.node_q[i] if tm.kind[i] != KIND_FREE else 0.0


@entry
def tree_joint_impulses(tm, ts, wk, contacts, links, joints, axes, dt, gravity, out):
    """
    Impulse each body's parent joint transmitted to it over the last step (Newton-Euler).

    The recursive Newton-Euler pass over the step's own velocity change, at the kinematics the
    step started from (wk.rel_backup) and with its velocity-product terms at the start-of-step
    velocities (wk.qd_backup), as ``tree_velocity_change`` takes them: outward
        a_i = a_parent + c_i + S_i (qd+_i - qd_i)       (a_world = -h g: gravity)
        f_i = I_i a_i + h (v_i x* I_i v_i - f_ext,i) - P_contact,i - P_loop,i
    (``_node_bias``: c_i, I_i, v_i, f_ext the applied link wrenches; P_contact the contact
    points' impulses on body i, their rows as the solve applied them; P_loop the rows of the
    loop joints and grasps on it, each row's spatial force times its impulse, a scalar loop
    joint's coordinate row with its rows' impulses, effort tau dt and drive's output effort
    over the step, a spherical loop joint's friction rows), then inward
    f_parent += f_i.  f_i is the joint's impulse on its child, spatial about the world origin:
    with semi-implicit Euler S_i^T f_i is the joint-space impulse the step applied to that
    joint (effort, drive, damping, friction, limits, less the rotor's armature), to rounding;
    with symplectic Euler and RK4 the velocity-product terms are first order off the step's.
    Then the end-of-step kinematics and velocities are put back into wk.

    Args:
        tm: TreeModel.
        ts: TreeState after the step (qd+, the applied wrenches as the step had them).
        wk: TreeWork after the step (its backups hold the step's start).
        contacts: arrays.Contacts of the step (points, frames, accumulated impulses).
        links: LinkWork of the step (the loop joints' rows on their bodies, their coordinate
            rows').
        joints: arrays.Joints (the loop joints' bodies).
        axes: arrays.Axes (a loop joint's drive).
        dt: step, s.
        gravity: (3,) m/s^2.
        out: (n_body, 6) written with the impulse: moment about the world origin (N m s),
            force (N s), world axes.
    """
    n = tm.parent.shape[0]
    tree_kinematics(tm, wk.rel_backup, wk)
    for i in range(n):
        _node_bias(tm, wk.qd_backup, dt, ts.body_wrench, wk, i)
        _parent_velocity_change(tm, wk, i, dt, gravity)
        for k in range(tm.dof[i]):
            change = ts.qd[tm.v0[i] + k] - wk.qd_backup[tm.v0[i] + k]
            for m in range(6):
                wk.acc[i, m] += wk.S[i, k, m] * change
        for r in range(6):
            acc = wk.PA[i, r]
            for s in range(6):
                acc += wk.IA[i, r, s] * wk.acc[i, s]
            wk.PA[i, r] = acc
    for c in range(contacts.count[0]):
        angular = has_angular_rows(contacts.material, c)
        moment = (0.0, 0.0, 0.0)
        force = (0.0, 0.0, 0.0)
        for k in range(3):
            d = (contacts.frame[c, k, 0], contacts.frame[c, k, 1], contacts.frame[c, k, 2])
            lam = contacts.impulse[c, ROW_IMPULSE[k]]
            force = (force[0] + lam * d[0], force[1] + lam * d[1], force[2] + lam * d[2])
            if angular:
                lam = contacts.impulse[c, ROW_IMPULSE[3 + k]]
                moment = (moment[0] + lam * d[0], moment[1] + lam * d[1],
                          moment[2] + lam * d[2])
        arm = cross(read3(contacts.pos, c), force)
        for side in range(2):
            b = contacts.body[c, side]
            if b < 0:
                continue
            i = tm.body_node[b]
            sign = 1.0 if side == 0 else -1.0  # the normal points from B to A
            for m in range(3):
                wk.PA[i, m] -= sign * (moment[m] + arm[m])
                wk.PA[i, 3 + m] -= sign * force[m]
    # loop joints and grasps: row k on body b is the spatial force (x_b x lin + ang; lin) times
    # its impulse (tree_rows._loop_rows), x_b the COM at the step's start (wk.body_x now)
    for m in range(links.rows.shape[0]):
        j = tm.link_joint[m]
        if j < 0:
            continue  # a mimic pair: joint-space, inside the joints' own impulses
        for k in range(links.rows[m]):
            _body_row_impulse(tm, wk, joints, j, links.body_rows[m, k], ts.link_impulse[m, k])
    # a scalar loop joint's coordinate rows and commanded effort along its coordinate row
    for t in range(tm.loop_axes.shape[0]):
        x = tm.loop_axes[t]
        m = tm.axis_link[x]
        if links.axis_on[m] == 0:
            continue
        j = tm.link_joint[m]
        lam = ts.joint_effort[j] * dt
        for r in range(ts.axis_impulse.shape[1]):
            lam += ts.axis_impulse[x, r]
        d = axes.drive[x]
        if d >= 0:
            lam += ts.drive_effort[d] * dt  # the gear and its losses (drives.finish_drive)
        _body_row_impulse(tm, wk, joints, j, links.axis_rows[m, 0], lam)
    # a spherical loop joint's friction rows
    for f in range(tm.free_link.shape[0]):
        m = tm.free_link[f]
        if m < 0 or links.axis_on[m] == 0:
            continue
        for r in range(3):
            _body_row_impulse(tm, wk, joints, tm.link_joint[m], links.axis_rows[m, r],
                              ts.free_impulse[f, r])
    for i in range(n - 1, -1, -1):
        p = tm.parent[i]
        if p >= 0:
            for m in range(6):
                wk.PA[p, m] += wk.PA[i, m]
    for i in range(n):
        for m in range(6):
            out[tm.body[i], m] = wk.PA[i, m]
    tree_kinematics(tm, ts.node_rel, wk)
    node_velocities(tm, ts.qd, wk)


@jit
def _body_row_impulse(tm, wk, joints, j, row, lam):
    """
    Take impulse lam of a row of loop joint j on its bodies' twists out of their nodes' wk.PA.

    row: (2, 6) (lin, ang) on each body; on body b it is the spatial force
    (x_b x lin + ang; lin), x_b the COM (wk.body_x).
    """
    for side in range(2):
        b = joints.body[j, side]
        if b < 0 or lam == 0.0:
            continue
        i = tm.body_node[b]
        lin = (row[side, 0], row[side, 1], row[side, 2])
        arm = cross((wk.body_x[b, 0], wk.body_x[b, 1], wk.body_x[b, 2]), lin)
        for c in range(3):
            wk.PA[i, c] -= lam * (arm[c] + row[side, 3 + c])
            wk.PA[i, 3 + c] -= lam * lin[c]


@entry
def tree_loop_state(tm, ts, wk, joints, links):
    """Set the scalar loop joints' coordinates and rates from the bodies (after a placement)."""
    loop_coordinates(tm, ts, wk, joints, links)


@jit
def _healthy(tm, ts):
    for b in range(ts.body_pos.shape[0]):
        for m in range(3):
            if not (np.isfinite(ts.body_pos[b, m]) and np.isfinite(ts.body_lin_vel[b, m])
                    and np.isfinite(ts.body_ang_mom[b, m])):
                return b
        if (ts.body_lin_vel[b, 0] ** 2 + ts.body_lin_vel[b, 1] ** 2
                + ts.body_lin_vel[b, 2] ** 2) > 1e8:
            return b
    for v in range(ts.qd.shape[0]):
        if not np.isfinite(ts.qd[v]) or abs(ts.qd[v]) > 1e5:
            return tm.body[tm.v_node[v]]
    return -1


@jit
def _solve_rows(tm, ts, wk, links, axes, drives, contacts, cwork, dt, iterations, tolerance,
                time_budget, warm, paths, info):
    """
    Sequential impulses on qd: axes, multi-DOF friction, links and contacts, warm-started.

    The live axes' rows, the spherical and planar joints' friction, the links, the loop
    joints' own rows (coordinate rows and drives, a spherical one's friction) and the
    contacts.  ``paths``: the rows are in the path form (physics/tree_rows.py; no multi-DOF
    friction and no loop joints' own rows then): the sweeps move its vector w
    (``tree_rows.start_paths``) and the velocities follow once after them
    (``tree_rows.velocities_from_paths``).

    Island by island (``_find_islands``), each until its own tolerance (largest impulse change,
    N s or N m s), the iteration cap or the wall-clock budget, as the maximal solver; writes the
    most sweeps an island used, the largest residual and the stop reason into info.

    Each sweep takes the contacts first and the coordinate rows (limits, friction) after them,
    so a capped solve ends with the rigid limit rows held and the error left on the compliant
    contacts: with the limits first, the contacts' last corrections pushed joints resting on
    their limits into them at up to 0.09 rad/s (A1, G1 at rest), the projection set them back,
    and the capped solves cycled (docs/benchmarks.md, "Why G1, A1 and Go2 did not converge").
    """
    t0 = monotonic(wk.clock) if time_budget > 0.0 else 0.0
    x = wk.w_aug if paths else ts.qd
    if paths:
        start_paths(tm, x, 1.0)
    warm_start_axes(tm, ts, wk, warm, x, paths)
    n_free = tm.free_v.shape[0]
    if n_free > 0:
        warm_start_free(tm, ts, wk, warm)
    n_link = links.rows.shape[0]
    if n_link > 0:
        warm_start_links(ts, links, x, warm)
    looped = tm.loop_axes.shape[0] > 0
    if looped:
        warm_start_loop_axes(tm, ts, links, axes, drives, warm)
    if n_free > 0:
        warm_start_loop_friction(tm, ts, links, warm)
    warm_start_contacts(contacts, cwork, x, warm)
    stop = STOP_TOLERANCE
    residual = 0.0
    most = 0
    items = cwork.isl_items
    for g in range(cwork.isl_count[0] + 1):
        if islands.size(cwork, g) == 0:
            continue
        a0, a1 = islands.span(cwork, islands.AXES, g)
        f0, f1 = islands.span(cwork, islands.FREE, g)
        m0, m1 = islands.span(cwork, islands.ROWS, g)
        x0, x1 = islands.span(cwork, islands.LOOP_AXES, g)
        r0, r1 = islands.span(cwork, islands.LOOP_FREE, g)
        p0, p1 = islands.span(cwork, islands.POINTS, g)
        reason = STOP_ITERATIONS
        largest = 0.0
        used = 0
        for it in range(iterations):
            largest = 0.0
            if p1 > p0:
                largest = solve_contacts(
                    x, items[islands.POINTS], p0, p1, contacts.material, contacts.impulse,
                    cwork.row_seg, cwork.row_len, cwork.row_J, cwork.row_U, cwork.kinv,
                    cwork.target, cwork.soft)
            largest = max(largest, solve_axes(tm, ts, wk, items[islands.AXES], a0, a1, x,
                                              paths))
            if f1 > f0:
                largest = max(largest, solve_free(tm, ts, wk, items[islands.FREE], f0, f1))
            if m1 > m0:
                largest = max(largest, sweep_links(x, links, ts.link_impulse, links.target,
                                                   items[islands.ROWS], m0, m1))
            if x1 > x0:
                largest = max(largest, solve_loop_axes(tm, ts, wk, links, axes, drives,
                                                       items[islands.LOOP_AXES], x0, x1))
            if r1 > r0:
                largest = max(largest, solve_loop_friction(tm, ts, wk, links,
                                                           items[islands.LOOP_FREE], r0, r1))
            used = it + 1
            done = sweep_stop(largest, tolerance, time_budget, wk.clock, t0)
            if done >= 0:
                reason = done
                break
        most = max(most, used)
        residual = max(residual, largest)
        stop = max(stop, reason)
    if paths:
        velocities_from_paths(tm, wk, wk.S, x, ts.qd)
    info[INFO_ITERATIONS] = most
    info[INFO_RESIDUAL] = residual
    info[INFO_STOP] = stop


@jit
def _group_of_body(tm, b):
    """Return the tree (group) that moves body b, -1 for the world or a tree that cannot move."""
    if b < 0:
        return -1
    g = tm.node_group[tm.body_node[b]]
    return g if tm.group_v[g + 1] > tm.group_v[g] else -1


@jit
def _link_group(tm, joints, m, side):
    """Return the tree that side 0 or 1 of link m moves (-1: none)."""
    j = tm.link_joint[m]
    if j >= 0:
        return _group_of_body(tm, joints.body[j, side])
    g = tm.node_group[tm.v_node[tm.mimic_v[m, side]]]
    return g


@jit
def _find_islands(tm, wk, joints, links, contacts, cwork):
    """
    Group the trees into islands and sort the rows by them (physics/islands.py).

    The forest's trees (``group``) are the units; links (mimic pairs, loop joints) and contact
    points join theirs.  Items: the links, the live axes, the tree joints' multi-DOF friction,
    the points, the loop joints' axes and spherical loop joints' friction.
    """
    parent = cwork.isl_parent
    islands.begin(cwork)
    n_link = links.rows.shape[0]
    for m in range(n_link):
        islands.join(parent, _link_group(tm, joints, m, 0), _link_group(tm, joints, m, 1))
    n_contact = contacts.count[0]
    for i in range(n_contact):
        islands.join(parent, _group_of_body(tm, contacts.body[i, 0]),
                     _group_of_body(tm, contacts.body[i, 1]))
    islands.label(cwork)
    for m in range(n_link):
        first = _link_group(tm, joints, m, 0)
        islands.put(cwork, islands.ROWS, m,
                    first if first >= 0 else _link_group(tm, joints, m, 1), m)
    islands.sort(cwork, islands.ROWS, n_link)
    n_live = wk.axis_live_n[0]
    for t in range(n_live):
        x = wk.axis_live[t]
        islands.put(cwork, islands.AXES, t, tm.node_group[tm.v_node[tm.axis_v[x]]], x)
    islands.sort(cwork, islands.AXES, n_live)
    n = 0
    for f in range(tm.free_v.shape[0]):
        if tm.free_v[f] >= 0:
            islands.put(cwork, islands.FREE, n, tm.node_group[tm.v_node[tm.free_v[f]]], f)
            n += 1
    islands.sort(cwork, islands.FREE, n)
    for i in range(n_contact):
        first = _group_of_body(tm, contacts.body[i, 0])
        islands.put(cwork, islands.POINTS, i,
                    first if first >= 0 else _group_of_body(tm, contacts.body[i, 1]), i)
    islands.sort(cwork, islands.POINTS, n_contact)
    for t in range(tm.loop_axes.shape[0]):
        m = tm.axis_link[tm.loop_axes[t]]
        first = _link_group(tm, joints, m, 0)
        islands.put(cwork, islands.LOOP_AXES, t,
                    first if first >= 0 else _link_group(tm, joints, m, 1), t)
    islands.sort(cwork, islands.LOOP_AXES, tm.loop_axes.shape[0])
    n = 0
    for f in range(tm.free_link.shape[0]):
        m = tm.free_link[f]
        if m >= 0:
            first = _link_group(tm, joints, m, 0)
            islands.put(cwork, islands.LOOP_FREE, n,
                        first if first >= 0 else _link_group(tm, joints, m, 1), f)
            n += 1
    islands.sort(cwork, islands.LOOP_FREE, n)


@jit
def _project_limits(tm, ts, axes, tolerance):
    """
    Put a coordinate past a limit by more than the tolerance back on it (positions only).

    A joint on a prescribed motion is put on its curve (``axis_target_q``), as the maximal
    projection does: its velocity row followed the curve's rate, this removes the rest.
    """
    for x in range(axes.joint.shape[0]):
        if tm.axis_v[x] < 0:
            continue  # a loop joint's coordinate
        i = tm.v_node[tm.axis_v[x]]
        q = ts.node_q[i]
        if ts.axis_prescribed[x] > 0.0:
            ts.node_q[i] = ts.axis_target_q[x]  # a prescribed joint lands on its curve
        elif q < axes.lower[x] - tolerance:
            ts.node_q[i] = axes.lower[x]
        elif q > axes.upper[x] + tolerance:
            ts.node_q[i] = axes.upper[x]
        else:
            continue
        _set_scalar_pose(tm, i, ts.node_q[i], ts.node_rel)


@jit
def _push_out(tm, ts, wk, joints, links, axes, contacts, cwork, param, dt, iterations,
              tolerance, position_tolerance, rigid, paths, info):
    """
    Split impulse on the pseudo-velocities u (positions only): penetration and the links' drift.

    As ``step.push_out_penetration``: the rigid contact rows ask their push targets
    (``contacts.prepare_push``), the links theirs (-C / dt, ``link_push_targets``: a loop's or
    a mimic pair's error after this step's motion, when above the position tolerance) and the
    live limits keep the push from crossing them; then q += dt u.  The tree's joints are exact;
    the velocities are untouched.  Island by island (``_find_islands``): only the islands with
    something to remove are solved, each until its own tolerance, and move.  Returns True when
    there was something to remove.  ``paths``: the rows are in the path form (tree_rows.py):
    the sweeps move its vector from zero (constant slots 0: no J qd0 in a push) and the
    pseudo-velocities follow from it.
    """
    n_contact = contacts.count[0] if rigid else 0
    deepest = prepare_push(contacts, cwork, ts, param, dt) if n_contact > 0 else 0.0
    info[INFO_PENETRATION] = deepest
    n_link = links.rows.shape[0]
    drift = link_push_targets(tm, ts, wk, joints, links, dt) if n_link > 0 else 0.0
    info[INFO_POS_ERROR] = drift
    looped = tm.loop_axes.shape[0] > 0
    overlap = (loop_axis_push_targets(tm, ts, wk, joints, links, axes, cwork.push_limit, dt,
                                      cwork.isl_excess[islands.LOOP_AXES]) if looped else 0.0)
    if deepest <= 0.0 and drift <= position_tolerance and overlap <= position_tolerance:
        return False
    # the islands with something to remove
    flag = cwork.isl_flag
    items = cwork.isl_items
    count = cwork.isl_count[0]
    for g in range(count + 1):
        push = False
        if deepest > 0.0:
            p0, p1 = islands.span(cwork, islands.POINTS, g)
            for n in range(p0, p1):
                push = push or cwork.isl_excess[islands.POINTS, items[islands.POINTS, n]] > 0.0
        m0, m1 = islands.span(cwork, islands.ROWS, g)
        for n in range(m0, m1):
            m = items[islands.ROWS, n]
            for k in range(links.rows[m]):
                push = push or (links.kinv[m, k] > 0.0
                                and abs(links.error[m, k]) > position_tolerance)
        x0, x1 = islands.span(cwork, islands.LOOP_AXES, g)
        for n in range(x0, x1):
            x = tm.loop_axes[items[islands.LOOP_AXES, n]]
            push = push or cwork.isl_excess[islands.LOOP_AXES, x] > position_tolerance
        flag[g, 0] = 1.0 if push else 0.0
    for v in range(ts.qd.shape[0]):
        wk.push_qd[v] = 0.0
    x = wk.w_aug if paths else wk.push_qd
    if paths:
        start_paths(tm, x, 0.0)
    prepare_push_axes(tm, ts, wk, axes, cwork.push_limit, dt)
    for g in range(count + 1):
        if flag[g, 0] == 0.0:
            continue
        a0, a1 = islands.span(cwork, islands.AXES, g)
        m0, m1 = islands.span(cwork, islands.ROWS, g)
        x0, x1 = islands.span(cwork, islands.LOOP_AXES, g)
        p0, p1 = islands.span(cwork, islands.POINTS, g) if n_contact > 0 else (0, 0)
        for it in range(iterations):
            largest = solve_push_axes(tm, wk, x, cwork.push_limit, items[islands.AXES], a0,
                                      a1, paths)
            if m1 > m0:
                largest = max(largest, sweep_links(x, links, links.push, links.push_target,
                                                   items[islands.ROWS], m0, m1))
            if x1 > x0:
                largest = max(largest, solve_push_loop_axes(tm, links, wk.push_qd,
                                                            cwork.push_limit,
                                                            items[islands.LOOP_AXES], x0, x1))
            if p1 > p0:
                largest = max(largest, solve_contacts(
                    x, items[islands.POINTS], p0, p1, contacts.material, cwork.push,
                    cwork.row_seg, cwork.row_len, cwork.row_J, cwork.row_U, cwork.kinv,
                    cwork.push_target, cwork.push_soft))
            if largest < tolerance:
                break
    if paths:
        velocities_from_paths(tm, wk, wk.S_push, x, wk.push_qd)
    # each pushed island's trees move (the others' coordinates stay as they are, bit for bit)
    for u in range(tm.group_node.shape[0] - 1):
        if flag[cwork.isl_label[u], 0] > 0.0:
            tree_integrate_positions(tm, ts.node_q, ts.node_rel, wk.push_qd, dt,
                                     tm.group_node[u], tm.group_node[u + 1])
    return True


@jit
def _restore(tm, ts, wk):
    """Undo the step: coordinates, velocities, impulses and the drives' state."""
    for i in range(tm.parent.shape[0]):
        ts.node_q[i] = wk.q_backup[i]
        for m in range(7):
            ts.node_rel[i, m] = wk.rel_backup[i, m]
    for v in range(ts.qd.shape[0]):
        ts.qd[v] = wk.qd_backup[v]
        ts.p[v] = wk.p_backup[v]
    for d in range(tm.drive_v.shape[0]):
        ts.drive_current[d] = wk.drive_backup[d, 0]
        ts.rotor_speed[d] = wk.drive_backup[d, 1]
    tree_kinematics(tm, ts.node_rel, wk)
    tree_fill_state(tm, ts, wk, ts.qd)


@jit_views
def tree_step(tm, ts, wk, joints, links, axes, drives, shapes, polys, contacts, cwork, param, dt,
              gravity, integrator, iterations, tolerance, time_budget, position_tolerance, warm,
              info, n_steps):
    """
    Advance n_steps of dt; returns the steps taken (fewer when the state diverged).

    Args:
        tm: TreeModel.
        ts: TreeState.
        wk: TreeWork.
        joints: arrays.Joints (the loop joints' frames and types; the tree's are in tm).
        links: LinkWork (the mimic pairs' and loop joints' rows).
        axes: arrays.Axes (limits, friction, speed limits of the scalar joints).
        drives: arrays.Drives (a loop joint's drive: its rotor, gear and motor rows).
        shapes: arrays.Shapes (empty: nothing touches).
        polys: arrays.Polytopes.
        contacts: arrays.Contacts.
        cwork: arrays.ContactWork.
        param: (contacts.N_PARAM,) contact settings.
        dt: step, s.
        gravity: (3,) m/s^2.
        integrator: SEMI_IMPLICIT_EULER, SYMPLECTIC_EULER or RK4 (no rows).
        iterations: the rows' sweep cap (as the maximal solver's).
        tolerance: the largest impulse change that ends the sweeps, N s or N m s.
        time_budget: wall-clock budget of the sweeps, s (0: none).
        position_tolerance: a limit overlap beyond it is projected away, and a link's error
            beyond it is corrected, rad or m.
        warm: warm-start the rows from the last step's impulses.
        info: (INFO_SIZE,) results (iterations, residual, stop, status, body, contacts).
        n_steps: steps to take.
    """
    n_node = tm.parent.shape[0]
    n_v = ts.qd.shape[0]
    touching = shapes.body.shape[0] > 0
    linked = links.rows.shape[0] > 0
    limited = _axes_can_act(tm, ts, axes)
    rows = touching or limited or linked or tm.free_v.shape[0] > 0
    rigid = touching and param[P_COMPLIANT] <= 0.0
    # the rows in the path form (tree_rows.py) unless there are spherical or planar joints'
    # friction or loop joints' coordinate rows (they take the columns)
    paths = tm.free_v.shape[0] == 0 and tm.loop_axes.shape[0] == 0
    for step in range(n_steps):
        # back-up for divergence
        for i in range(n_node):
            wk.q_backup[i] = ts.node_q[i]
            for m in range(7):
                wk.rel_backup[i, m] = ts.node_rel[i, m]
        for v in range(n_v):
            wk.qd_backup[v] = ts.qd[v]
            wk.p_backup[v] = ts.p[v]
        for d in range(tm.drive_v.shape[0]):
            wk.drive_backup[d, 0] = ts.drive_current[d]
            wk.drive_backup[d, 1] = ts.rotor_speed[d]
        store_body_states(ts, wk.body_start)
        if integrator == RK4:
            _rk4_step(tm, ts, wk, dt, gravity)
            info[0] = 4.0  # recursions per step
            info[1] = 0.0
            info[2] = 0.0
        else:
            # 1. the free velocity change: forces, gravity, drives (the factor stays in wk)
            # (wk holds the kinematics the last step ended with, unless the coordinates were
            # set between calls)
            posed = step > 0 or _posed(tm, ts.node_rel, wk)
            if integrator == SEMI_IMPLICIT_EULER:
                _velocity_step(tm, ts, wk, dt, gravity, info, posed)
            else:
                _symplectic_step(tm, ts, wk, dt, gravity, info, posed)
            if rows:
                if (touching or linked) and not paths:
                    forget_body_responses(wk)   # the column form's per-body responses
                if linked:
                    link_rows(tm, ts, wk, joints, links, paths)
                # the loop joints' efforts and coordinate rows (through their joints' rows;
                # the efforts before the contacts' targets, as the tree's own efforts are in
                # the free step)
                if tm.loop_axes.shape[0] > 0:
                    loop_axis_rows(tm, ts, wk, joints, links, axes, drives, dt)
                # 2. contact points at the start-of-step poses, matched to the last step's
                if touching:
                    body_velocities(tm, wk, ts.qd)
                    if find_contacts(shapes, polys, contacts, cwork, ts, wk.body_rot,
                                     wk.body_vel, param, dt) < 0:
                        _restore(tm, ts, wk)
                        info[INFO_OVERFLOW] = 1.0
                        info[4] = STATUS_CONTACT_OVERFLOW
                        return step
                    info[INFO_CONTACTS] = contacts.count[0]
                    # 3. the rows on qd (tree_rows.py) and their targets (contacts.py)
                    if paths:
                        contact_rows_paths(tm, ts, wk, contacts, cwork, ts.body_pos, dt)
                        targets_from_speeds(contacts, cwork, param, dt)
                    else:
                        contact_rows(tm, wk, contacts, cwork, ts.body_pos, dt)
                        contact_targets(contacts, cwork, ts.qd, wk.qd_backup, param, dt)
                axis_rows(tm, ts, wk, axes, dt, paths)
                rubbing = tm.free_v.shape[0] > 0
                if rubbing:
                    free_rows(tm, ts, wk, dt)
                    if linked:
                        loop_friction_rows(tm, ts, wk, joints, links, dt)
                # 4-5. warm start and sequential impulses, island by island (without rows,
                # the integrator's report stands; the islands are also the push's)
                live = (wk.axis_live_n[0] > 0 or (touching and contacts.count[0] > 0)
                        or linked or rubbing)
                if live or rigid:
                    _find_islands(tm, wk, joints, links, contacts, cwork)
                if live:
                    _solve_rows(tm, ts, wk, links, axes, drives, contacts, cwork, dt,
                                iterations, tolerance, time_budget, warm, paths, info)
                _store_axis_rates(tm, ts, axes)
            if integrator == SYMPLECTIC_EULER:
                node_velocities(tm, ts.qd, wk)
                tree_momentum(tm, ts.qd, wk, ts.p)
            # 6. drives, 7. positions
            _finish_drives(tm, ts, drives, wk.qd_backup, ts.qd, dt)
            tree_integrate_positions(tm, ts.node_q, ts.node_rel, ts.qd, dt, 0, n_node)
            if limited:
                _project_limits(tm, ts, axes, position_tolerance)
        if paths and (rigid or linked) and integrator != RK4:
            # the push's rows were made with the step's factor, and so its velocities
            for i in range(n_node):
                for k in range(tm.dof[i]):
                    for m in range(6):
                        wk.S_push[i, k, m] = wk.S[i, k, m]
        tree_kinematics(tm, ts.node_rel, wk)
        tree_fill_state(tm, ts, wk, ts.qd)
        # 8. the rigid contacts' penetration and the links' drift, by positions only
        info[INFO_POS_ERROR] = 0.0
        if (rigid or linked) and integrator != RK4:
            if _push_out(tm, ts, wk, joints, links, axes, contacts, cwork, param, dt,
                         iterations, tolerance, position_tolerance, rigid, paths, info):
                if limited:
                    _project_limits(tm, ts, axes, position_tolerance)
                tree_kinematics(tm, ts.node_rel, wk)
                tree_fill_state(tm, ts, wk, ts.qd)
        if tm.loop_axes.shape[0] > 0:
            loop_coordinates(tm, ts, wk, joints, links)
        # 9. divergence
        bad = _healthy(tm, ts)
        if bad >= 0:
            _restore(tm, ts, wk)
            info[4] = _DIVERGED
            info[5] = bad
            return step
        ts.time[0] += dt
    if not rows:
        _rest_axes(tm, ts, axes)
    info[4] = _OK
    return n_steps


@jit
def _axes_can_act(tm, ts, axes):
    """
    Return True when a tree axis may have rows this call.

    An axis with a finite limit, friction or a speed limit (``axis_always``) or a prescribed
    motion.  Without any (an arm of continuous joints), the steps skip the axes' reach checks
    and the limits' projection.
    """
    for x in range(axes.joint.shape[0]):
        if tm.axis_v[x] >= 0 and (tm.axis_always[x] > 0 or ts.axis_prescribed[x] > 0.0
                                  or np.isfinite(axes.lower[x])
                                  or np.isfinite(axes.upper[x])):
            return True
    return False


@jit
def _store_axis_rates(tm, ts, axes):
    """Set the tree axes' rates from the step's velocities (a loop joint's: its bodies)."""
    for x in range(axes.joint.shape[0]):
        if tm.axis_v[x] >= 0:
            ts.axis_rate[x] = ts.qd[tm.axis_v[x]]


@jit
def _rest_axes(tm, ts, axes):
    """After a call without the axes' rows: their impulses none, their rates the last step's."""
    _store_axis_rates(tm, ts, axes)
    for x in range(axes.joint.shape[0]):
        if tm.axis_v[x] >= 0:
            for r in range(ts.axis_impulse.shape[1]):
                ts.axis_impulse[x, r] = 0.0


@entry
def tree_bind(own, own_layout, state, state_layout, mech_floats, mech_ints, mech_bools,
              mech_layout, contact_floats, contact_ints, contact_bools, contact_layout, views):
    """
    Keep the views of the tree step's containers in ``views`` (flat.keep_views).

    Returns the slots kept: all 11 of :data:`VIEW_SLOTS` unless one is too small.  The
    TreeEngine calls it after it zeroed the slots' flags (new contact arrays); then
    :func:`tree_step_packed` reads the containers from ``views`` alone, so its call unboxes a
    few arrays.

    Args:
        own: the packed TreeCoordinates' buffer (the TreeState's own arrays).
        own_layout: its layout.
        state: the packed facade State's buffer (the TreeState's other arrays).
        state_layout: its layout.
        mech_floats: the float64 buffer of the TreeModel, TreeWork, Joints, LinkWork, Axes,
            Drives, Shapes and Polytopes packed together (flat.pack_together).
        mech_ints: their int64 buffer.
        mech_bools: their bool buffer.
        mech_layout: their layout.
        contact_floats: the float64 buffer of the Contacts and ContactWork packed together.
        contact_ints: their int64 buffer.
        contact_bools: their bool buffer.
        contact_layout: their layout.
        views: flat.view_slots of :data:`VIEW_SLOTS`.
    """
    mech = ((mech_floats, mech_layout), (mech_ints, mech_layout), (mech_bools, mech_layout))
    contact = ((contact_floats, contact_layout), (contact_ints, contact_layout),
               (contact_bools, contact_layout))
    state_sources = ((own, own_layout), (state, state_layout))
    kept = int(keep_views(TreeModel, mech, views, views[0], views[1]))
    kept += int(keep_views(TreeState, state_sources, views, views[2], views[3]))
    kept += int(keep_views(TreeWork, mech, views, views[4], views[5]))
    kept += int(keep_views(Joints, mech, views, views[6], views[7]))
    kept += int(keep_views(LinkWork, mech, views, views[8], views[9]))
    kept += int(keep_views(Axes, mech, views, views[10], views[11]))
    kept += int(keep_views(Drives, mech, views, views[12], views[13]))
    kept += int(keep_views(Shapes, mech, views, views[14], views[15]))
    kept += int(keep_views(Polytopes, mech, views, views[16], views[17]))
    kept += int(keep_views(Contacts, contact, views, views[18], views[19]))
    kept += int(keep_views(ContactWork, contact, views, views[20], views[21]))
    return kept


@entry
def tree_step_packed(views, param, dt, gravity, integrator, iterations, tolerance, time_budget,
                     position_tolerance, warm, info, n_steps):
    """
    :func:`tree_step` on the containers :func:`tree_bind` kept (the TreeEngine's per-call entry).

    Takes no step (returns 0) when a slot of ``views`` holds no views (flat.views_bound).

    Args:
        views: flat.view_slots of :data:`VIEW_SLOTS`, bound by :func:`tree_bind`.
        param: as :func:`tree_step`.
        dt: step, s.
        gravity: (3,) m/s^2.
        integrator: SEMI_IMPLICIT_EULER, SYMPLECTIC_EULER or RK4.
        iterations: as :func:`tree_step`.
        tolerance: as :func:`tree_step`.
        time_budget: as :func:`tree_step`.
        position_tolerance: as :func:`tree_step`.
        warm: as :func:`tree_step`.
        info: (INFO_SIZE,) results.
        n_steps: steps to take.
    """
    if not slots_bound(views):
        return 0
    return tree_step(bound_view(TreeModel, views, views[0], views[1]),
                     bound_view(TreeState, views, views[2], views[3]),
                     bound_view(TreeWork, views, views[4], views[5]),
                     bound_view(Joints, views, views[6], views[7]),
                     bound_view(LinkWork, views, views[8], views[9]),
                     bound_view(Axes, views, views[10], views[11]),
                     bound_view(Drives, views, views[12], views[13]),
                     bound_view(Shapes, views, views[14], views[15]),
                     bound_view(Polytopes, views, views[16], views[17]),
                     bound_view(Contacts, views, views[18], views[19]),
                     bound_view(ContactWork, views, views[20], views[21]), param, dt, gravity,
                     integrator, iterations, tolerance, time_budget, position_tolerance, warm,
                     info, n_steps)


@jit
def _rk4_derivative(tm, ts, wk, q, rel, qd, gravity, k_q, k_rel, k_qd):
    """Rates of (q, r, Q, qd) at one RK4 stage (accelerations from the recursion, h = 1)."""
    tree_kinematics(tm, rel, wk)
    _dof_terms(tm, ts, qd, 1.0, wk.force, wk.damp)
    for v in range(qd.shape[0]):
        wk.force[v] -= wk.damp[v] * qd[v]
        wk.extra[v] = tm.armature[v]
    tree_velocity_change(tm, qd, 1.0, gravity, wk.force, wk.extra, ts.body_wrench, wk,
                         k_qd)
    _position_rates(tm, rel, qd, k_q, k_rel)


@jit
def _rk4_step(tm, ts, wk, dt, gravity):
    """Classical RK4 on (q, r, Q, qd); quaternions renormalised at each stage."""
    n_node = tm.parent.shape[0]
    n_v = ts.qd.shape[0]
    weights = (1.0, 2.0, 2.0, 1.0)
    offsets = (0.0, 0.5, 0.5, 1.0)
    for i in range(n_node):
        wk.sum_q[i] = 0.0
        for m in range(7):
            wk.sum_rel[i, m] = 0.0
    for v in range(n_v):
        wk.sum_qd[v] = 0.0
    for stage in range(4):
        c = offsets[stage] * dt
        for i in range(n_node):
            wk.stage_q[i] = wk.q_backup[i] + (c * wk.k_q[i] if stage > 0 else 0.0)
            for m in range(7):
                wk.stage_rel[i, m] = wk.rel_backup[i, m] + (c * wk.k_rel[i, m]
                                                            if stage > 0 else 0.0)
        for v in range(n_v):
            wk.stage_qd[v] = wk.qd_backup[v] + (c * wk.k_qd[v] if stage > 0 else 0.0)
        _normalize_rel(tm, wk.stage_q, wk.stage_rel)
        _rk4_derivative(tm, ts, wk, wk.stage_q, wk.stage_rel, wk.stage_qd, gravity, wk.k_q,
                        wk.k_rel, wk.k_qd)
        w = weights[stage] * dt / 6.0
        for i in range(n_node):
            wk.sum_q[i] += w * wk.k_q[i]
            for m in range(7):
                wk.sum_rel[i, m] += w * wk.k_rel[i, m]
        for v in range(n_v):
            wk.sum_qd[v] += w * wk.k_qd[v]
    for i in range(n_node):
        ts.node_q[i] = wk.q_backup[i] + wk.sum_q[i]
        for m in range(7):
            ts.node_rel[i, m] = wk.rel_backup[i, m] + wk.sum_rel[i, m]
    for v in range(n_v):
        ts.qd[v] = wk.qd_backup[v] + wk.sum_qd[v]
    _normalize_rel(tm, ts.node_q, ts.node_rel)
