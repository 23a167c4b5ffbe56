"""
The engine: arrays built once from a RobotModel, the mutable state, and the compiled step.

Nothing here knows about ROS; the Simulator facade is the only intended caller.
"""
import numpy as np

from . import collide
from . import contacts as ct
from . import islands
from . import joints as jt
from .arrays import (Axes, BLOCK_JOINT, BLOCK_MIMIC, Blocks, Bodies, Contacts, ContactWork,
                     Drives, FreeFriction, INFO_OVERFLOW, INFO_SIZE, INFO_STATUS, Joints,
                     Mimics, State, STATUS_CONTACT_OVERFLOW, Work)
from .compile import flat
from .compile import kernels
from .sensors import joint_impulse_on_child
from .step import joint_rates, step_bind, step_bound, VIEW_SLOTS
from ..rotations import quat_conjugate, quat_multiply, quat_to_matrix


def perpendicular_pair(axis):
    """Two unit vectors completing the unit axis to a right-handed orthonormal triad."""
    t = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.57735 else np.array([0.0, 1.0, 0.0])
    b = np.cross(axis, t)
    b /= np.linalg.norm(b)
    return b, np.cross(axis, b)


def _compiled_entry_point(dispatcher, args):
    """
    Return the compiled function behind a numba dispatcher for these argument types.

    Calling it skips the dispatcher's per-call type resolution (about 7 us of a 10 us call
    overhead with this many array arguments); falls back to the dispatcher if numba's internals
    differ.
    """
    try:
        sig = tuple(dispatcher.typeof_pyval(a) for a in args)
        return dispatcher.overloads[sig].entry_point
    except (AttributeError, KeyError, TypeError):
        return dispatcher


class Mechanism:
    """
    What both formulations share: the robot's static arrays, its State and its kinematics.

    The engine protocol the facade steps and reads (Engine: maximal coordinates; TreeEngine,
    physics/tree_engine.py: generalized coordinates):

    - ``step(n)``: advance n steps of ``dt``, return the steps taken (fewer on divergence,
      with ``info`` saying why);
    - ``joint_rates()``: scalar joint velocities per joint index, rad/s or m/s;
    - ``place_children(positions, velocities, keep_free_joints)``: put the bodies at joint
      positions and velocities (forward kinematics from the root);
    - ``state`` (arrays.State), ``info`` (INFO_* results of the last call), ``kernel()`` (its
      compiled step and the arguments it takes), ``contacts`` (None without a contact solver)
      and ``close_loops()`` (the reset's hook for loop joints and elements).

    The static arrays (``bodies``, ``joints``, ``mimics``, ``axes``, ``drives``) are built
    here, read-only after load; ``state`` is one packed buffer (physics/compile/flat.py).

    Args:
        model: description.model.RobotModel.
        dt: time step, s.
        gravity: (3,) world gravity, m/s^2.
        solver: description.config.SolverSettings (read by field name; physics never imports
            the description).
        limits: description.config.LimitSettings or None.
    """

    contacts = None

    def __init__(self, model, dt, gravity, solver, limits=None):
        self.model = model
        self.dt = float(dt)
        self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        self.solver = solver
        self.bodies = self._build_bodies(model)
        self.body_com = np.array([b.com for b in model.bodies], dtype=float).reshape(-1, 3)
        self.joint_index = {j.name: i for i, j in enumerate(model.joints)}
        self.joints = self._build_joints(model)
        self.mimics = self._build_mimics(model)
        n_row, n_free = self._build_solver_rows()
        self.axes, self.drives = self._build_axes(model, limits)
        n_drive = len(self.drives.joint)
        n_axis = len(self.axes.joint)
        n_body = len(model.bodies)
        n_joint = len(model.joints)
        self.state = State(
            body_pos=np.zeros((n_body, 3)), body_quat=np.tile([1.0, 0, 0, 0], (n_body, 1)),
            body_lin_vel=np.zeros((n_body, 3)), body_ang_mom=np.zeros((n_body, 3)),
            joint_q=np.zeros(n_joint), joint_effort=np.zeros(n_joint),
            row_impulse=np.zeros(n_row), time=np.zeros(1), drive_voltage=np.zeros(n_drive),
            drive_current=np.zeros(n_drive), rotor_speed=np.zeros(n_drive),
            drive_impulse=np.zeros((n_drive, 3)), axis_impulse=np.zeros((n_axis, 7)),
            axis_rate=np.zeros(n_axis), body_wrench=np.zeros((n_body, 6)),
            free_impulse=np.zeros((n_free, 3)), axis_prescribed=np.zeros(n_axis),
            axis_target_rate=np.zeros(n_axis), axis_target_q=np.zeros(n_axis),
            joint_row_rate=np.zeros((n_joint, 6)), joint_anchor=self.joints.ppos.copy(),
            joint_length=np.zeros(n_joint),
            # elements start switched off; a distance element's length is set at reset
            joint_active=np.array([0.0 if j.element else 1.0 for j in model.joints],
                                  dtype=float).reshape(n_joint),
            drive_effort=np.zeros(n_drive))
        # one buffer for the whole State: the tree engine's kernel call passes it as one array
        self.state, self._state_buffer, _, self._state_layout = flat.pack(self.state)
        self.info = np.zeros(INFO_SIZE)
        self._loops_closed = False  # close_loops finds the loop joints' child frames once

    def _build_solver_rows(self):
        """Build the formulation's own row layout before the State; return (n_row, n_free)."""
        return 0, 0

    @staticmethod
    def _build_free_friction(model):
        """Friction of spherical (3 rows) and planar (2 sliding rows) joints that have some."""
        rows = []
        for i, j in enumerate(model.joints):
            static = j.static_friction if j.static_friction is not None else j.friction
            if j.type in ('spherical', 'planar') and (j.friction > 0 or static > 0):
                rows.append((i, 3 if j.type == 'spherical' else 2, j.friction, static))
        cols = list(zip(*rows)) if rows else [(), (), (), ()]
        return FreeFriction(joint=np.array(cols[0], dtype=np.int64),
                            dim=np.array(cols[1], dtype=np.int64),
                            friction=np.array(cols[2], dtype=float),
                            static_friction=np.array(cols[3], dtype=float))

    # -- construction -------------------------------------------------------------------------
    @staticmethod
    def _build_bodies(model):
        inertia = np.array([b.inertia for b in model.bodies], dtype=float).reshape(-1, 3, 3)
        return Bodies(
            inv_mass=np.array([1.0 / b.mass for b in model.bodies], dtype=float),
            inertia=inertia,
            inv_inertia=np.linalg.inv(inertia) if len(inertia) else inertia.copy())

    def _build_joints(self, model):
        n = len(model.joints)
        arrays = {k: np.zeros((n, 3))
                  for k in ('ppos', 'cpos', 'axis', 'perp1', 'perp2', 'axis_body')}
        pquat = np.zeros((n, 4))
        cquat = np.zeros((n, 4))
        types = np.zeros(n, dtype=np.int64)
        body = np.zeros((n, 2), dtype=np.int64)
        block = np.full(n, -1, dtype=np.int64)
        for i, j in enumerate(model.joints):
            types[i] = jt.TYPE_CODES[j.type]
            body[i] = (j.parent_body, j.child_body)
            com_p = self.body_com[j.parent_body] if j.parent_body >= 0 else np.zeros(3)
            arrays['ppos'][i] = np.asarray(j.parent_pos, dtype=float) - com_p
            arrays['cpos'][i] = np.asarray(j.child_pos, dtype=float) - self.body_com[j.child_body]
            pquat[i] = j.parent_quat
            cquat[i] = j.child_quat
            axis = np.asarray(j.axis, dtype=float)
            axis = axis / np.linalg.norm(axis)
            arrays['axis'][i] = axis
            arrays['perp1'][i], arrays['perp2'][i] = perpendicular_pair(axis)
            arrays['axis_body'][i] = quat_to_matrix(pquat[i]) @ axis
        return Joints(type=types, body=body, pquat=pquat, cquat=cquat, block=block, **arrays)

    def _build_mimics(self, model):
        rows = [(self.joint_index[j.name], self.joint_index[j.mimic.leader], j.mimic.multiplier,
                 j.mimic.offset) for j in model.joints if j.mimic is not None]
        cols = list(zip(*rows)) if rows else [(), (), (), ()]
        return Mimics(follower=np.array(cols[0], dtype=np.int64),
                      leader=np.array(cols[1], dtype=np.int64),
                      multiplier=np.array(cols[2], dtype=float),
                      offset=np.array(cols[3], dtype=float))

    def _build_axes(self, model, limits=None):
        """
        Axes (scalar joints with drive, friction, damping, limit or speed rows) and drives.

        Args:
            model: RobotModel (joints carry friction, static friction, damping, limits and
                restitution; model.drives the DC drives).
            limits: description.config.LimitSettings or None (enforce_velocity, enforce_effort).

        Returns:
            (Axes, Drives).
        """
        enforce_velocity = bool(getattr(limits, 'enforce_velocity', False))
        enforce_effort = bool(getattr(limits, 'enforce_effort', True))
        drive_of = {d.joint: d for d in model.drives}
        rows = []
        for i, j in enumerate(model.joints):
            if jt.TYPE_CODES[j.type] not in jt.SCALAR_CODES:
                continue
            lower = j.lower if j.type != 'continuous' else -np.inf
            upper = j.upper if j.type != 'continuous' else np.inf
            static = j.static_friction if j.static_friction is not None else j.friction
            speed = j.velocity_limit if enforce_velocity else np.inf
            # every scalar joint is an axis (a motion may be prescribed on any); one without
            # rows is skipped each step (prepare_axes) until it has some
            rows.append((i, j, lower, upper, static, speed))
        axis_of = {j.name: x for x, (_, j, *_) in enumerate(rows)}
        drives = [drive_of[j.name] for _, j, *_ in rows if j.name in drive_of]
        drive_index = {d.joint: n for n, d in enumerate(drives)}

        def column(values, dtype=float):
            return np.array(list(values), dtype=dtype)

        def current_limit(d):
            joint = model.joints[self.joint_index[d.joint]]
            if not enforce_effort or not np.isfinite(joint.effort_limit):
                return d.current_limit
            # the effort limit bounds the motor torque the driver may ask for
            return min(d.current_limit,
                       joint.effort_limit / abs(d.gear_ratio * d.torque_constant))

        axes = Axes(
            joint=column((i for i, *_ in rows), np.int64),
            drive=column((drive_index.get(j.name, -1) for _, j, *_ in rows), np.int64),
            gear=column(drive_of[j.name].gear_ratio if j.name in drive_of else 0.0
                        for _, j, *_ in rows),
            rotor_inertia=column(drive_of[j.name].rotor_inertia if j.name in drive_of else 0.0
                                 for _, j, *_ in rows),
            friction=column(j.friction for _, j, *_ in rows),
            static_friction=column(r[4] for r in rows),
            damping=column(j.damping for _, j, *_ in rows),
            lower=column(r[2] for r in rows), upper=column(r[3] for r in rows),
            restitution=column(j.restitution for _, j, *_ in rows),
            velocity_limit=column(r[5] for r in rows),
            always_live=column((j.name in drive_of or j.friction > 0 or r[4] > 0
                                or j.damping > 0 or np.isfinite(r[5]) for r in rows
                                for j in (r[1],)), np.bool_),
            **self._subtrees([i for i, *_ in rows]))
        drive_arrays = Drives(
            joint=column((self.joint_index[d.joint] for d in drives), np.int64),
            axis=column((axis_of[d.joint] for d in drives), np.int64),
            inv_rotor_inertia=column(1.0 / d.rotor_inertia for d in drives),
            gear=column(d.gear_ratio for d in drives),
            resistance=column(d.resistance for d in drives),
            inductance=column(d.inductance for d in drives),
            kt=column(d.torque_constant for d in drives),
            ke=column(d.back_emf_constant for d in drives),
            viscous=column(d.viscous_friction for d in drives),
            efficiency=column(d.efficiency for d in drives),
            current_limit=column(current_limit(d) for d in drives))
        return axes, drive_arrays

    def _subtrees(self, joint_indices):
        """
        Bodies beyond each joint (its child and everything it carries), packed flat.

        A loop joint's is empty: turning its child alone would open the child's own tree
        joint, so ``axes.project_limits`` leaves a loop joint to its rows.
        """
        children = {}
        for i in range(len(self.joints.type)):
            if self.model.joints[i].loop:
                continue  # a loop-closing joint carries nothing of the tree
            children.setdefault(int(self.joints.body[i, 0]), []).append(
                int(self.joints.body[i, 1]))
        start, flat = [0], []
        for i in joint_indices:
            stack = [] if self.model.joints[i].loop else [int(self.joints.body[i, 1])]
            seen = set()
            while stack:
                b = stack.pop()
                if b in seen:
                    continue
                seen.add(b)
                flat.append(b)
                stack.extend(children.get(b, []))
            start.append(len(flat))
        return {'subtree_start': np.array(start, dtype=np.int64),
                'subtree_body': np.array(flat, dtype=np.int64)}

    # -- kinematics -------------------------------------------------------------------------
    def body_pose(self, b):
        """(COM position, orientation wxyz) of body b; the world is at the origin."""
        if b < 0:
            return np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
        return self.state.body_pos[b].copy(), self.state.body_quat[b].copy()

    def body_angular_velocity(self, b, rot=None):
        """World angular velocity w = I_world^-1 L of body b, rad/s (``rot``: its matrix)."""
        if b < 0:
            return np.zeros(3)
        r = quat_to_matrix(self.state.body_quat[b]) if rot is None else rot
        return r @ self.bodies.inv_inertia[b] @ r.T @ self.state.body_ang_mom[b]

    def set_body_state(self, b, pos, quat, lin_vel, ang_vel):
        """Place body b: COM position, orientation, COM velocity and angular velocity (world)."""
        quat = np.asarray(quat, dtype=float)
        quat = quat / np.linalg.norm(quat)
        self.state.body_pos[b] = pos
        self.state.body_quat[b] = quat
        self.state.body_lin_vel[b] = lin_vel
        r = quat_to_matrix(quat)
        self.state.body_ang_mom[b] = r @ self.bodies.inertia[b] @ r.T @ np.asarray(ang_vel)

    def joint_frame_world(self, j, side):
        """Return the world pose (origin, quat) of joint j's frame on parent (0) or child (1)."""
        b = int(self.joints.body[j, side])
        x, q = self.body_pose(b)
        pos = self.state.joint_anchor[j] if side == 0 else self.joints.cpos[j]
        quat = self.joints.pquat[j] if side == 0 else self.joints.cquat[j]
        return x + quat_to_matrix(q) @ pos, quat_multiply(q, quat)

    def place_children(self, positions, velocities, keep_free_joints=True):
        """
        Forward kinematics: place every body from the root outwards (tree order).

        Scalar joints take positions[j] / velocities[j]; multi-DOF joints (spherical, planar,
        floating) keep their current relative pose (or the zero pose when keep_free_joints is
        False) with zero relative velocity.  Accumulated impulses are cleared; rotor speeds and
        axis rates follow the joint rates.
        """
        self._place_bodies(positions, velocities, keep_free_joints)
        self._store_rates()

    def _place_bodies(self, positions, velocities, keep_free_joints):
        """Place the bodies and clear the accumulated impulses (``place_children``)."""
        free = {}  # relative poses of multi-DOF joints, read before anything moves
        for j in self.model.tree_order:
            if keep_free_joints and int(self.joints.type[j]) in jt.FREE_CODES:
                pa, qa = self.joint_frame_world(j, 0)
                pb, qb = self.joint_frame_world(j, 1)
                free[j] = (quat_multiply(quat_conjugate(qa), qb),
                           quat_to_matrix(qa).T @ (pb - pa))
        for j in self.model.tree_order:
            jtype = int(self.joints.type[j])
            a, b = (int(x) for x in self.joints.body[j])
            pa, qa = self.joint_frame_world(j, 0)
            # relative motion of the child joint frame in the parent joint frame
            axis = self.joints.axis[j]
            kind = jt.TYPES[jtype]
            if jtype in jt.SCALAR_CODES:
                rel_q, rel_p = kind.relative_pose(axis, positions[j])
                rel_w, rel_v = kind.relative_twist(axis, velocities[j])
            else:
                rel_q, rel_p = free.get(j, (np.array([1.0, 0, 0, 0]), np.zeros(3)))
                rel_w, rel_v = np.zeros(3), np.zeros(3)
            ra = quat_to_matrix(qa)
            q_cj = quat_multiply(qa, rel_q)
            p_cj = pa + ra @ rel_p
            q_body = quat_multiply(q_cj, quat_conjugate(self.joints.cquat[j]))
            x_body = p_cj - quat_to_matrix(q_body) @ self.joints.cpos[j]
            # velocity: the parent's rigid motion
            xa, _ = self.body_pose(a)
            va = self.state.body_lin_vel[a] if a >= 0 else np.zeros(3)
            wa = self.body_angular_velocity(a)
            # plus the joint's own twist, turned into the world, about the joint origin
            w_joint = ra @ rel_w
            w = wa + w_joint
            v = va + np.cross(wa, x_body - xa) + np.cross(w_joint, x_body - p_cj) + ra @ rel_v
            self.set_body_state(b, x_body, q_body, v, w)
            self.state.joint_q[j] = positions[j] if jtype in jt.SCALAR_CODES else 0.0
        self.state.row_impulse[:] = 0.0
        self.state.drive_impulse[:] = 0.0
        self.state.drive_effort[:] = 0.0
        self.state.axis_impulse[:] = 0.0
        self.state.free_impulse[:] = 0.0

    def _store_rates(self):
        """Set the rotor speeds and axis rates from the engine's joint rates."""
        rates = self.joint_rates()
        self.state.rotor_speed[:] = self.drives.gear * rates[self.drives.joint]
        self.state.axis_rate[:] = rates[self.axes.joint]

    def close_loops(self):
        """
        Switch the elements off; the first time, close the loops.

        Called at the configured initial state (``Simulator.reset``), where the loop is taken
        to be closed: each loop-closing joint without a child frame gets the one it has in
        this pose (the joint frame fixed in the parent, found in the child body).  That frame
        is static model, found once, at load: every reset returns to the same initial state.
        """
        closing = not self._loops_closed
        self._loops_closed = True
        for j, joint in enumerate(self.model.joints):
            if joint.element:
                self.reset_element(j)
            if not (closing and joint.close_at_start):
                continue
            anchor, frame = self.joint_frame_world(j, 0)
            x, q = self.body_pose(int(self.joints.body[j, 1]))
            self.joints.cquat[j] = quat_multiply(quat_conjugate(q), frame)
            self.joints.cpos[j] = quat_to_matrix(q).T @ (anchor - x)
        self._clear_loop_rows()

    def element_ends(self, j):
        """Return the world positions (m) of element joint j's two ends."""
        return self.joint_frame_world(j, 0)[0], self.joint_frame_world(j, 1)[0]

    def reset_element(self, j):
        """
        Switch element joint j off, at rest where it is.

        A distance element takes the length between its ends, a path joint's world anchor
        moves onto its point; either acts again once the facade switches it on.  A grasp
        keeps its anchor until the next grasp sets it.
        """
        self.state.joint_active[j] = 0.0
        self.state.joint_row_rate[j] = 0.0
        self.clear_joint_rows(j)
        if self.model.joints[j].element == 'grasp':
            return  # its anchor on the object is set at the next grasp
        pa, pb = self.element_ends(j)
        if self.joints.type[j] == jt.DISTANCE:
            self.state.joint_length[j] = np.linalg.norm(pb - pa)
        else:
            self.state.joint_anchor[j] = pb

    def clear_joint_rows(self, j):
        """Clear the accumulated impulses of loop or element joint j's rows."""
        raise NotImplementedError

    def _clear_loop_rows(self):
        """Clear the accumulated impulses of every loop and element joint's rows."""
        raise NotImplementedError

    # -- bodies set by hand (scene objects, the base), trial steps ----------------------------
    def bodies_set(self, rates=None, bodies=None, forget_contacts=True):
        """
        Take the bodies' states in State as set by hand (set_body_state); forget contacts.

        ``rates``: the scalar joints' rates (joint_rates()) where the engine's own are not
        current; None: the engine's.  ``bodies``: the bodies that moved, if known.
        ``forget_contacts``: False for a body new to the scene (the others' points stand).
        """
        if forget_contacts:
            self.clear_contacts()

    def carry_from(self, old, old_to_new):
        """Take what an old engine (of the same robot) holds beyond State (nothing here)."""

    def step_start(self):
        """Return (n_body, 13) the bodies at the last step's start: pos, quat, lin vel, L."""
        raise NotImplementedError

    def settle(self, b):
        """Make body b's last step start where it is now (no acceleration shows)."""
        st = self.state
        self.step_start()[b] = np.concatenate([st.body_pos[b], st.body_quat[b],
                                               st.body_lin_vel[b], st.body_ang_mom[b]])

    def snapshot(self):
        """Return what ``restore`` needs to undo the steps taken after it."""
        return (self._state_buffer.copy(), [a.copy() for a in self._step_memory()],
                self.info.copy(), self.contacts, self.cwork,
                {f: getattr(self.contacts, f).copy() for f in self.contacts._fields})

    def restore(self, snapshot):
        """Put the engine back where ``snapshot`` found it."""
        self._state_buffer[...] = snapshot[0]
        for array, saved in zip(self._step_memory(), snapshot[1]):
            array[...] = saved
        self.info[...] = snapshot[2]
        if self.contacts is not snapshot[3]:  # grown since: back to the old arrays
            self.contacts, self.cwork = snapshot[3], snapshot[4]
            self._contacts_changed()
        for field, value in snapshot[5].items():
            getattr(self.contacts, field)[...] = value

    def _step_memory(self):
        """Return the formulation's arrays a step writes beyond State, as a trial undoes them."""
        raise NotImplementedError

    def _contacts_changed(self):
        """Point the kernel's arguments at new contact arrays (grown or restored)."""
        raise NotImplementedError

    # -- contacts (one pipeline, physics/contacts.py; each formulation its mechanics) ---------
    def _setup_contacts(self, model, solver, collision):
        """Take the model's shape tables and allocate the contact arrays."""
        if model.collision_tables is None:
            raise ValueError('the model has no collision tables: build it with '
                             'jointsim_ros.description.build_model')
        # built by the description (description/shape_tables.py): the engine takes them ready
        self.shapes, self.polytopes = model.collision_tables
        self._touching = len(self.shapes.body) > 0   # else no contact arrays can overflow
        self.contact_param = self._contact_param(collision)
        self.contact_param[ct.P_DRIFT] = getattr(solver, 'contact_position_tolerance', 1e-7)
        self._allocate_contacts(self._contact_capacity(), self._pair_capacity())

    def _row_width(self):
        """Entries of a contact row's segment of the formulation's velocity vector."""
        raise NotImplementedError

    def _contact_velocities(self):
        """Return the formulation's (velocity vector, start twists (n_body, 6), push twists)."""
        raise NotImplementedError

    @staticmethod
    def _contact_param(collision):
        """Return the contact settings as the compiled step reads them (contacts.P_*)."""
        param = np.zeros(ct.N_PARAM)
        get = (lambda key, default: getattr(collision, key, default))
        param[ct.P_MARGIN] = get('margin', 0.01)
        param[ct.P_RESTITUTION_SPEED] = get('restitution_threshold', 0.1)
        param[ct.P_SLOP] = get('slop', 1e-4)
        param[ct.P_ERP] = get('erp', 0.2)
        param[ct.P_MAX_CORRECTION] = get('max_correction', 0.01)
        param[ct.P_MATCH_DISTANCE] = get('match_distance', 0.01)
        param[ct.P_COMPLIANT] = float(get('contact_model', 'compliant') == 'compliant')
        return param

    def _pair_capacity(self):
        n = int(np.count_nonzero(self.shapes.kind != ct.PLANE))
        return max(16, min(n * (n - 1) // 2, 8 * n + 64))

    def _contact_capacity(self):
        n = len(self.shapes.kind)
        return max(16, ct.MAX_PLANE_POINTS * n * max(1, len(self.shapes.planes)) + 64)

    def _allocate_contacts(self, n_max, n_pairs, keep=None):
        """Allocate the contact arrays for n_max points and n_pairs candidate pairs."""
        n_shape = len(self.shapes.kind)
        order = np.nonzero(self.shapes.kind != ct.PLANE)[0].astype(np.int64)
        if keep is not None:
            order = keep[1].order
        self.contacts = Contacts(
            count=np.zeros(2, dtype=np.int64), next_id=np.zeros(1, dtype=np.int64),
            shape=np.zeros((n_max, 2), dtype=np.int64), body=np.zeros((n_max, 2), np.int64),
            pos=np.zeros((n_max, 3)), local=np.zeros((n_max, 2, 3)),
            normal=np.zeros((n_max, 3)), depth=np.zeros(n_max), impulse=np.zeros((n_max, 6)),
            frame=np.zeros((n_max, 3, 3)), id=np.zeros(n_max, dtype=np.int64),
            material=np.zeros((n_max, ct.N_MATERIAL)), manifold=np.zeros((n_max, ct.N_MANIFOLD)),
            prev_shape=np.zeros((n_max, 2), dtype=np.int64),
            prev_body=np.zeros((n_max, 2), dtype=np.int64), prev_local=np.zeros((n_max, 3)),
            prev_local_b=np.zeros((n_max, 3)), prev_manifold=np.zeros((n_max, ct.N_MANIFOLD)),
            prev_impulse=np.zeros((n_max, 6)), prev_frame=np.zeros((n_max, 3, 3)),
            prev_id=np.zeros(n_max, dtype=np.int64))
        if keep is not None:  # carry the points over so warm starting goes on
            old = keep[0]
            m = int(old.count[0])
            for name in ('shape', 'body', 'pos', 'local', 'normal', 'depth', 'impulse', 'frame',
                         'id', 'material', 'manifold'):
                getattr(self.contacts, name)[:m] = getattr(old, name)[:m]
            self.contacts.count[:] = old.count
            self.contacts.next_id[:] = old.next_id
        width = self._row_width()
        vel_flat, start_vel, push_vel = self._contact_velocities()
        self.cwork = ContactWork(
            wpos=np.zeros((n_shape, 3)), wrot=np.zeros((n_shape, 3, 3)),
            box=np.zeros((n_shape, 6)), reach=np.zeros(n_shape), order=order,
            pairs=np.zeros((n_pairs, 2), dtype=np.int64),
            head=np.zeros(n_shape, dtype=np.int64), chain=np.zeros(n_max, dtype=np.int64),
            out_pos=np.zeros((ct.MAX_PAIR_POINTS, 3)),
            out_normal=np.zeros((ct.MAX_PAIR_POINTS, 3)), out_depth=np.zeros(ct.MAX_PAIR_POINTS),
            out_prev=np.zeros(ct.MAX_PAIR_POINTS, dtype=np.int64),
            plane_pos=np.zeros((ct.MAX_PLANE_POINTS, 3)),
            plane_depth=np.zeros(ct.MAX_PLANE_POINTS),
            scratch=collide.scratch_arrays(self._max_face_vertices()),
            row_seg=np.full((n_max, 2), -1, dtype=np.int64),
            row_len=np.zeros((n_max, 2), dtype=np.int64),
            row_J=np.zeros((n_max, ct.N_ROWS, 2, width)),
            row_U=np.zeros((n_max, ct.N_ROWS, 2, width)), k_normal=np.zeros(n_max),
            kinv=np.zeros((n_max, 6)), target=np.zeros(n_max), speed=np.zeros((n_max, 2)),
            soft=np.zeros((n_max, 2)),
            kept=np.zeros(n_max, dtype=np.bool_),
            k6=np.zeros(6), push=np.zeros((n_max, 6)), push_target=np.zeros(n_max),
            push_soft=np.zeros((n_max, 2)),
            push_vel=push_vel, push_bias=np.zeros(len(self.state.row_impulse)),
            push_impulse=np.zeros(len(self.state.row_impulse)),
            push_limit=np.zeros((len(self.axes.joint), 4)), vel_flat=vel_flat,
            start_vel=start_vel, start_flat=start_vel.reshape(-1),
            push_flat=push_vel.reshape(-1), **self._island_arrays(n_max))
        self._contacts_changed()

    def _island_arrays(self, n_max):
        """Return the ContactWork's island arrays (physics/islands.py) for n_max points."""
        n_unit, n_item = self._island_sizes()
        n_item = max(n_item, n_max, 1)
        n_unit = max(n_unit, 1)
        kinds = islands.N_KIND
        ints = np.int64
        return {'isl_parent': np.zeros(n_unit, dtype=ints),
                'isl_label': np.zeros(n_unit, dtype=ints), 'isl_count': np.zeros(1, dtype=ints),
                'isl_start': np.zeros((kinds, n_unit + 2), dtype=ints),
                'isl_cursor': np.zeros(n_unit + 1, dtype=ints),
                'isl_unit': np.zeros((kinds, n_item), dtype=ints),
                'isl_value': np.zeros((kinds, n_item), dtype=ints),
                'isl_items': np.zeros((kinds, n_item), dtype=ints),
                'isl_excess': np.zeros((kinds, n_item)), 'isl_flag': np.zeros((n_unit + 1, 4))}

    def _island_sizes(self):
        """Return (units, the most items of a kind but points) of the formulation's islands."""
        raise NotImplementedError

    def _max_face_vertices(self):
        starts = self.polytopes.face_vert_start
        return int(np.diff(starts).max()) if len(starts) > 1 else 4

    def clear_contacts(self):
        """Forget the contact points (after the state was set by hand: nothing to warm-start)."""
        self.contacts.count[:] = 0

    def _run_kernel(self, n, dispatcher, arguments):
        """
        Take n steps with the step kernel (``arguments(n)`` its arguments); return those taken.

        The first call makes sure the kernel comes from numba's cache and keeps its compiled
        entry point.  A step that found more contact pairs or points than the arrays hold was
        undone by the kernel: the arrays grow (points carried over) and the rest is retaken.
        """
        taken = 0
        while True:
            args = arguments(n - taken)
            if self._kernel_fn is None:
                kernels.ensure_compiled(dispatcher, args, self.kernel_variant)
                taken += dispatcher(*args)
                self._kernel_fn = _compiled_entry_point(dispatcher, args)
            else:
                taken += self._kernel_fn(*args)
            if self.info[INFO_STATUS] != STATUS_CONTACT_OVERFLOW:
                return taken
            self._allocate_contacts(2 * len(self.contacts.id), 2 * len(self.cwork.pairs),
                                    keep=(self.contacts, self.cwork))
            # the retake reports no overflow unless it overflows too (cleared here, not before
            # every call: the step(1) path is kept short)
            self.info[INFO_OVERFLOW] = 0.0

    # -- the bound kernels: each formulation's containers kept once by a bind kernel, read by a
    # per-call step kernel that takes their slots (physics/compile/flat.py, view_slots)
    #: The per-call step kernel (step.step_bound, tree.tree_step_packed; a staticmethod: a numba
    #: dispatcher binds as a method otherwise).
    step_kernel = None

    def _bind_kernel(self):
        """Return (the kernel that keeps the containers in ``self._views``, its arguments)."""
        raise NotImplementedError

    def _call_args(self, n):
        """Return :attr:`step_kernel`'s arguments (the containers bound first if need be)."""
        if not self._bound:
            self._bind()
        return self._call_prefix + (int(n),)

    def _bind(self):
        """Have the bind kernel keep the containers' views (again after new contact arrays)."""
        dispatcher, args = self._bind_kernel()
        if self._bind_fn is None:
            kernels.ensure_compiled(dispatcher, args, self.kernel_variant)
            dispatcher(*args)
            # later calls skip the dispatcher's type resolution
            self._bind_fn = _compiled_entry_point(dispatcher, args)
        else:
            self._bind_fn(*args)
        if not flat.views_bound(self._views):
            raise RuntimeError(f"the {self.kernel_variant} kernel could not keep its containers' "
                               "views (flat.view_slots sized a slot too small for numba's "
                               'arrays)')
        self._bound = True

    def step(self, n=1):
        """
        Advance n steps; returns the number of steps taken (fewer on divergence).

        What a formulation derives from the last step only when asked (the tree's joint
        impulses, TreeEngine.joint_wrench) is marked stale here, not in an override: a call
        through ``super()`` cost the tree arm 0.18 us of its 4.5 us ``step(1)``.
        """
        self._impulses_current = False
        if self._kernel_fn is not None and self._bound:
            taken = self._kernel_fn(*self._call_prefix, n)
            if not self._touching or self.info[INFO_STATUS] != STATUS_CONTACT_OVERFLOW:
                return taken    # nothing to touch, or the contact arrays held: no overflow
            # the arrays grow and the rest is retaken (_run_kernel meets the overflow again)
            return taken + self._run_kernel(int(n) - taken, self.step_kernel, self._call_args)
        return self._run_kernel(int(n), self.step_kernel, self._call_args)


class Engine(Mechanism):
    """
    Arrays, state and stepping of one robot in maximal coordinates (the Mechanism protocol).

    Args:
        as Mechanism, and ``collision``: description.config.CollisionSettings or None.
    """

    def __init__(self, model, dt, gravity, solver, limits=None, collision=None):
        super().__init__(model, dt, gravity, solver, limits)
        n_body = len(model.bodies)
        n_row = len(self.state.row_impulse)
        n_axis = len(self.axes.joint)
        n_drive = len(self.drives.joint)
        n_free = len(self.free.joint)
        n_block = len(self.blocks.dim)
        self.work = Work(
            rot=np.zeros((n_body, 3, 3)), inertia_w=np.zeros((n_body, 3, 3)),
            inv_inertia_w=np.zeros((n_body, 3, 3)), vel=np.zeros((n_body, 6)),
            pred_pos=np.zeros((n_body, 3)), pred_quat=np.zeros((n_body, 4)),
            backup=np.zeros((n_body, 13)), row_J=np.zeros((n_row, 4, 6)),
            row_MJ=np.zeros((n_row, 4, 6)), row_bias=np.zeros(n_row), row_C=np.zeros(n_row),
            block_kinv=np.zeros((n_block, 6, 6)), clock=np.zeros(2, dtype=np.int64),
            mat6=np.zeros((6, 6)), gj=np.zeros((6, 12)), vec6a=np.zeros(6), vec6b=np.zeros(6),
            C_pred=np.zeros(6), jrow=np.zeros((1, 4, 6)),
            vec12=np.zeros(12), axis_J=np.zeros((n_axis, 2, 6)),
            axis_u=np.zeros((n_axis, 2, 6)), axis_k=np.zeros(n_axis), axis_kg=np.zeros(n_axis),
            axis_kcw=np.zeros((n_axis, 6)), axis_rows=np.zeros((n_axis, 7, 5)),
            axis_live=np.zeros(n_axis, dtype=np.int64),
            axis_live_n=np.zeros(1, dtype=np.int64), drive_soft=np.zeros((n_drive, 5)),
            drive_backup=np.zeros((n_drive, 2)), drive_ainv=np.zeros((n_drive, 2, 2, 2)),
            free_J=np.zeros((n_free, 3, 2, 6)), free_u=np.zeros((n_free, 3, 2, 6)),
            free_kcw=np.zeros((n_free, 3, 6)), free_kinv=np.zeros((n_free, 3, 3)),
            free_bound=np.zeros(n_free), free_mj=np.zeros((3, 2, 6)), free_w=np.zeros((3, 6)),
            block_error=np.zeros(n_block))
        self._views = None     # the kernel's view slots (step.step_bind), made below
        self._bind_fn = None
        self._setup_contacts(model, solver, collision)
        self._kernel_fn = None
        # each container class's field types, as the kernels read them from the slots
        for container in self._step_args(1)[:len(VIEW_SLOTS)]:
            flat.bind_types(container)
        self._views = flat.view_slots(VIEW_SLOTS)
        #: step.step_bound's arguments but n
        self._call_prefix = (self._views,) + self._step_args(1)[len(VIEW_SLOTS):-1]

    # -- construction -------------------------------------------------------------------------
    def _row_width(self):
        return 6  # a body's twist (physics/body_mechanics.py)

    def _island_sizes(self):
        return (len(self.state.body_pos),
                max(len(self.blocks.dim), len(self.axes.joint), len(self.free.joint)))

    def step_start(self):
        return self.work.backup  # written by the step (save_backup)

    def _step_memory(self):
        return self.work.backup, self.work.drive_backup

    def _contacts_changed(self):
        self._args_prefix = None  # the step's arguments name the new arrays
        self._bound = False       # and the kernel keeps them again (step.step_bind)
        if self._views is not None:
            flat.clear_views(self._views)

    def _contact_velocities(self):
        n_body = len(self.state.body_pos)
        return self.work.vel.reshape(-1), np.zeros((n_body, 6)), np.zeros((n_body, 6))

    def _build_solver_rows(self):
        """Build the joint blocks and the multi-DOF friction rows; return (n_row, n_free)."""
        self.blocks, n_row = self._build_blocks()
        self.free = self._build_free_friction(self.model)
        return n_row, len(self.free.joint)

    def _build_blocks(self):
        kind, source, row0, dim, body = [], [], [], [], []
        n_row = 0
        for j in range(len(self.joints.type)):
            d = jt.N_ROWS[int(self.joints.type[j])]
            if d == 0:
                continue
            self.joints.block[j] = len(kind)
            kind.append(BLOCK_JOINT)
            source.append(j)
            row0.append(n_row)
            dim.append(d)
            body.append((self.joints.body[j, 0], self.joints.body[j, 1], -1, -1))
            n_row += d
        for m in range(len(self.mimics.follower)):
            f, ld = self.mimics.follower[m], self.mimics.leader[m]
            kind.append(BLOCK_MIMIC)
            source.append(m)
            row0.append(n_row)
            dim.append(1)
            body.append((self.joints.body[f, 0], self.joints.body[f, 1],
                         self.joints.body[ld, 0], self.joints.body[ld, 1]))
            n_row += 1
        blocks = Blocks(kind=np.array(kind, dtype=np.int64), source=np.array(source, np.int64),
                        row0=np.array(row0, dtype=np.int64), dim=np.array(dim, dtype=np.int64),
                        body=np.array(body, dtype=np.int64).reshape(-1, 4))
        return blocks, n_row

    # -- loops and elements -----------------------------------------------------------------
    def clear_joint_rows(self, j):
        """Clear the accumulated impulses of loop or element joint j's rows."""
        block = self.joints.block[j]
        if block >= 0:
            r0 = self.blocks.row0[block]
            self.state.row_impulse[r0:r0 + self.blocks.dim[block]] = 0.0

    def _clear_loop_rows(self):
        self.state.row_impulse[:] = 0.0

    def element_impulse(self, j):
        """Return the accumulated impulses of element joint j's rows (N s)."""
        block = self.joints.block[j]
        r0 = self.blocks.row0[block]
        return self.state.row_impulse[r0:r0 + self.blocks.dim[block]].copy()

    # -- stepping -----------------------------------------------------------------------------
    def _step_args(self, n):
        # the arrays and settings do not change after load (the contact arrays when they
        # grow: _allocate_contacts forgets the prefix), so the tuple is built once
        prefix = self._args_prefix
        if prefix is None:
            s = self.solver
            # a robot without collision shapes passes its empty contact containers: one kernel
            # for every maximal robot (the contact stages are skipped at run time)
            prefix = self._args_prefix = (
                self.bodies, self.joints, self.mimics, self.blocks, self.axes, self.drives,
                self.free, self.state, self.work, self.shapes, self.polytopes, self.contacts,
                self.cwork, self.contact_param, self.dt, self.gravity,
                int(s.iterations), float(s.tolerance), float(s.time_budget),
                int(s.position_iterations), float(s.position_tolerance),
                bool(s.warm_start), self.info)
        return prefix + (int(n),)

    def _bind_kernel(self):
        """Return :func:`step.step_bind` and its arguments: the step's containers, the slots."""
        return step_bind, self._step_args(1)[:len(VIEW_SLOTS)] + (self._views,)

    #: The precompile variant (jointsim_ros.tools.precompile) that compiles this step: one for
    #: every maximal robot, with or without collision shapes.
    kernel_variant = 'maximal'

    step_kernel = staticmethod(step_bound)

    def kernel(self):
        """
        Return (numba dispatcher, arguments) of the step kernel, for the compile check.

        The kernel that takes the containers, so their types: :func:`step.step_bind`, which
        keeps them for :func:`step.step_bound` (whose arguments type alike for every robot) to
        pass to :func:`step.step`.
        """
        return self._bind_kernel()

    def joint_wrench(self, j):
        """
        Mean wrench joint j's parent applied to its child over the last step (world frame).

        Returns:
            (force (3,) N, torque (3,) N m about the child's COM, the child's COM (3,) m and
            orientation (4,) at the start of that step, the poses the rows were built at).
        """
        if not hasattr(self, '_joint_axis'):
            self._joint_axis = {int(j): x for x, j in enumerate(self.axes.joint)}
            self._joint_free = {int(j): f for f, j in enumerate(self.free.joint)}
            self._wrench_fn = None
        out = np.zeros(6)
        args = (j, self._joint_axis.get(j, -1), self._joint_free.get(j, -1), self.joints,
                self.blocks, self.mimics, self.axes, self.state, self.work, self.dt, out)
        if self._wrench_fn is None:
            joint_impulse_on_child(*args)
            # later calls skip the dispatcher's type resolution (most of the call's cost)
            self._wrench_fn = _compiled_entry_point(joint_impulse_on_child, args)
        else:
            self._wrench_fn(*args)
        child = int(self.joints.body[j, 1])
        start = self.work.backup[child]
        return out[:3] / self.dt, out[3:] / self.dt, start[0:3].copy(), start[3:7].copy()

    def joint_rates(self):
        """Scalar joint velocities (rad/s or m/s; 0 for other joint types), per joint index."""
        out = np.zeros(len(self.joints.type))
        joint_rates(self.bodies, self.joints, self.state, self.work, out)
        return out

    def place_children(self, positions, velocities, keep_free_joints=True):
        """Place the bodies (Mechanism.place_children) and forget the contact points."""
        super().place_children(positions, velocities, keep_free_joints)
        self.clear_contacts()
