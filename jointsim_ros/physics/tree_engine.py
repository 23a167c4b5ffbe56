"""
The tree engine: generalized-coordinate dynamics (tree.py) behind the engine protocol.

``solver.formulation: tree`` makes the Simulator hold a :class:`TreeEngine`.  Like the maximal
Engine it is a ``Mechanism`` (physics/engine.py): the same static arrays and State (so poses,
twists, joint states, energies and anchors read the same) and the same protocol (step,
joint_rates, place_children, state, the contact pipeline's arrays); it builds none of the
maximal solver's joint rows or scratch, steps the tree recursion with its contact, limit and
friction rows (tree_rows.py), and fills the body states from forward kinematics after every
step.  What the tree formulation does not simulate is refused at load time by
``description.formulation.check_formulation``.
"""
import numpy as np

from . import joints as jt
from . import tree
from .arrays import INFO_STATUS
from .compile import flat
from .engine import _compiled_entry_point, Mechanism
from ..errors import ConfigError
from ..rotations import quat_conjugate, quat_multiply, quat_to_matrix


class TreeEngine(Mechanism):
    """
    The engine protocol (physics/engine.Mechanism) stepped by the O(n) tree recursion.

    Args:
        as Engine (``collision``: the contact settings); solver.integrator
        'semi_implicit_euler', 'symplectic_euler' or 'rk4' (rk4: no contacts, no rows).
    """

    def __init__(self, model, dt, gravity, solver, limits=None, collision=None):
        super().__init__(model, dt, gravity, solver, limits)
        self.integrator = {'rk4': tree.RK4, 'symplectic_euler': tree.SYMPLECTIC_EULER}.get(
            solver.integrator, tree.SEMI_IMPLICIT_EULER)
        self.tree = self._build_tree(model)
        n_node = len(self.tree.parent)
        n_v = len(self.tree.v_node)
        n_body = len(model.bodies)
        n_drive = len(self.tree.drive_v)
        n_axis = len(self.axes.joint)
        self._width = int(np.diff(self.tree.group_v).max()) if n_v else 1
        st = self.state
        n_link = len(self.tree.link_joint)
        own, own_buffer, _, own_layout = flat.pack(tree.TreeCoordinates(
            node_q=np.zeros(n_node),
            node_rel=np.tile([0.0, 0, 0, 1, 0, 0, 0], (n_node, 1)), qd=np.zeros(n_v),
            p=np.zeros(n_v),
            drive_limited=np.zeros(n_drive), drive_gain=np.zeros(n_drive),
            link_impulse=np.zeros((n_link, 6))))
        self.tree_state = tree.TreeState(
            *own, joint_effort=st.joint_effort,
            drive_voltage=st.drive_voltage, drive_current=st.drive_current,
            rotor_speed=st.rotor_speed,
            body_wrench=st.body_wrench, body_pos=st.body_pos, body_quat=st.body_quat,
            body_lin_vel=st.body_lin_vel, body_ang_mom=st.body_ang_mom, joint_q=st.joint_q,
            time=st.time, drive_effort=st.drive_effort, axis_impulse=st.axis_impulse,
            axis_rate=st.axis_rate, joint_anchor=st.joint_anchor, joint_length=st.joint_length,
            joint_active=st.joint_active, joint_row_rate=st.joint_row_rate,
            axis_prescribed=st.axis_prescribed, axis_target_rate=st.axis_target_rate,
            axis_target_q=st.axis_target_q, free_impulse=st.free_impulse,
            drive_impulse=st.drive_impulse)
        z6 = np.zeros((n_node, 6))
        z66 = np.zeros((n_node, 6, 6))
        work = tree.TreeWork(
            body_x=np.zeros((n_body, 3)), body_q=np.tile([1.0, 0, 0, 0], (n_body, 1)),
            body_rot=np.zeros((n_body, 3, 3)), joint_origin=np.zeros((n_node, 3)),
            S=z66.copy(), vel=z6.copy(), cbias=z6.copy(), PA=z6.copy(), acc=z6.copy(),
            u=z6.copy(), IA=z66.copy(), U=z66.copy(), Dinv=z66.copy(), Ud=np.zeros((6, 6)),
            mat6=np.zeros((6, 6)), gj=np.zeros((6, 12)), vec6a=np.zeros(6), vec6b=np.zeros(6),
            force=np.zeros(n_v), extra=np.zeros(n_v), dqd=np.zeros(n_v), damp=np.zeros(n_v),
            rhs=np.zeros(n_v), Ibody=z66.copy(), hsub=z6.copy(),
            q_backup=np.zeros(n_node), rel_backup=np.tile([0.0, 0, 0, 1, 0, 0, 0], (n_node, 1)),
            qd_backup=np.zeros(n_v), p_backup=np.zeros(n_v), fallbacks=np.zeros(1),
            drive_backup=np.zeros((n_drive, 2)),
            stage_q=np.zeros(n_node), stage_rel=np.zeros((n_node, 7)), stage_qd=np.zeros(n_v),
            k_q=np.zeros(n_node), k_rel=np.zeros((n_node, 7)), k_qd=np.zeros(n_v),
            sum_q=np.zeros(n_node), sum_rel=np.zeros((n_node, 7)), sum_qd=np.zeros(n_v),
            body_vel=np.zeros((n_body, 6)), axis_U=np.zeros((n_axis, self._width + 1)),
            axis_Y=np.zeros((n_axis, self._width + 1)),
            w_aug=np.zeros(n_v + len(self.tree.group_v) - 1), S_push=z66.copy(),
            axis_k=np.zeros(n_axis), axis_rows=np.zeros((n_axis, 7, 5)), unit=np.zeros(n_v),
            resp=np.zeros(n_v), push_qd=np.zeros(n_v),
            axis_live=np.zeros(n_axis, dtype=np.int64), axis_live_n=np.zeros(1, np.int64),
            clock=np.zeros(2, dtype=np.int64), body_J=np.zeros((n_body, 6, self._width)),
            body_U=np.zeros((n_body, 6, self._width)), body_ready=np.zeros(n_body),
            body_start=np.zeros((n_body, 13)), rel_posed=np.full((n_node, 7), np.nan),
            free_U=np.zeros((len(self.tree.free_v), 3, self._width)),
            free_kinv=np.zeros((len(self.tree.free_v), 3, 3)),
            free_bound=np.zeros(len(self.tree.free_v)), six_u=z66.copy(), six_pa=z66.copy(),
            six_acc=z66.copy(), six_w=np.zeros((6, 6)), six_out=np.zeros((6, 6)),
            six_mark=np.zeros(n_node), six_rhs=np.zeros((self._width, 6)),
            six_res=np.zeros((self._width, 6)))
        self.tree_work = work
        rows = np.zeros((n_link, 6))
        self.links = tree.LinkWork(
            seg=np.full((n_link, 2), -1, dtype=np.int64),
            length=np.zeros((n_link, 2), dtype=np.int64), rows=np.zeros(n_link, dtype=np.int64),
            J=np.zeros((n_link, 6, 2, self._width + 1)),
            U=np.zeros((n_link, 6, 2, self._width + 1)),
            kinv=rows.copy(), target=rows.copy(), error=rows.copy(), push_target=rows.copy(),
            push=rows.copy(), body_rows=np.zeros((n_link, 6, 2, 6)),
            carry=np.array([0.0] * len(self.tree.mimic_v) + [
                1.0 if model.joints[j].element in ('actuator', 'path') else 0.0
                for j in self.tree.link_joint[len(self.tree.mimic_v):]]),
            carried=rows.copy(), axis_rows=np.zeros((n_link, 3, 2, 6)),
            axis_J=np.zeros((n_link, 3, 2, self._width)),
            axis_U=np.zeros((n_link, 3, 2, self._width)),
            axis_Uc=np.zeros((n_link, 3, 2, self._width)),
            axis_reaction=np.zeros((n_link, 3, 6)), axis_block=np.zeros((n_link, 3, 3)),
            axis_k=np.zeros(n_link), axis_kg=np.zeros(n_link),
            axis_on=np.zeros(n_link, dtype=np.int64), friction_bound=np.zeros(n_link),
            drive_soft=np.zeros((n_drive, 5)), drive_ainv=np.zeros((n_drive, 2, 2, 2)),
            jrow=np.zeros((1, 2, 6)))
        # the state's packed buffers: tree_bind's first arguments
        self._packed = (own_buffer, own_layout, self._state_buffer, self._state_layout)
        self._own_buffer = own_buffer
        #: every packing of the contact arrays (grown ones too: a snapshot may bring them back)
        self._contact_packs = []
        self._mechanism_pack = None
        self._bind_fn = None
        self._setup_contacts(model, solver, collision)
        # the model's, the work's and the mechanism's containers in one set of buffers: from
        # here on the engine's containers are views into them
        mechanism, buffers, layout = flat.pack_together(
            (self.tree, self.tree_work, self.joints, self.links, self.axes, self.drives,
             self.shapes, self.polytopes), declare_classes=True)
        (self.tree, self.tree_work, self.joints, self.links, self.axes, self.drives,
         self.shapes, self.polytopes) = mechanism
        self._mechanism_pack = buffers + (layout,)
        #: the kernels' views of the containers (tree.tree_bind; every class is declared now)
        self._views = flat.view_slots(tree.VIEW_SLOTS)
        self._contacts_changed()
        self._kernel_fn = None
        self.n_dof = n_v
        #: (n_body, 6) the joints' impulses on their children over the last step
        #: (tree.tree_joint_impulses), computed when a sensor first reads them after a step
        self._joint_impulses = np.zeros((n_body, 6))
        self._impulses_current = False
        self._impulses_fn = None
        #: joint index -> its link (tree_rows.py) for the loop joints with rows
        self._links_of_joints = {int(j): m for m, j in enumerate(self.tree.link_joint) if j >= 0}
        #: the scalar loop joints and their axes (their rates: State.axis_rate)
        self._loop_axes = np.asarray(self.tree.loop_axes)
        self._loop_joints = self.axes.joint[self._loop_axes]
        #: the scalar joints' indices and their coordinates (joint_rates)
        scalar = np.nonzero(self.tree.v_joint >= 0)[0]
        self._rate_index = (self.tree.v_joint[scalar], scalar)
        self._axis_of_link = {int(self.tree.axis_link[x]): int(x) for x in self._loop_axes}
        #: a spherical loop joint's link -> its friction (its State.free_impulse row)
        self._friction_of_link = {int(m): f for f, m in enumerate(self.tree.free_link)
                                  if m >= 0}

    def _build_solver_rows(self):
        """No joint rows of the maximal solver; the spherical and planar joints' friction."""
        self.free = self._build_free_friction(self.model)
        return 0, len(self.free.joint)

    def _row_width(self):
        # the largest group's coordinates and the path form's constant slot (tree_rows.py)
        return self._width + 1

    def _island_sizes(self):
        tm = self.tree
        return (len(tm.group_node) - 1,
                max(len(tm.link_joint), len(self.axes.joint), len(tm.free_v), len(tm.loop_axes)))

    def step_start(self):
        return self.tree_work.body_start  # written by the kernel at each step's start

    def bodies_set(self, rates=None, bodies=None, forget_contacts=True):
        """
        Derive the tree's coordinates from the bodies as set by hand; forget contacts.

        ``bodies``: only these free bodies (scene objects, the floating base) moved; the other
        nodes keep their coordinates to the bit.
        """
        self._keep_impulses()
        roots = [int(self.tree.body_node[b]) for b in (bodies or ())]
        if bodies is not None and all(self.tree.parent[i] < 0 for i in roots):
            self._derive(roots)
            self._store_rates()
            if forget_contacts:
                self.clear_contacts()
            return
        self.place_children(self.state.joint_q.copy(),
                            self.joint_rates() if rates is None else rates, True)

    def carry_from(self, old, old_to_new):
        """
        Take an old engine's coordinates, node by node where its body is here too.

        ``old_to_new``: (n_old_body,) the new index of each old body, -1 where gone.  Nodes
        of new bodies keep the coordinates their bodies' states give.
        """
        tm, ts = self.tree, self.tree_state
        old_tm, old_ts = old.tree, old.tree_state  # a rebuild keeps the formulation
        # the last step's joint impulses, body by body, and its start (a trial step undone
        # reads them again from there); a new body's last step was a standstill
        old._keep_impulses()
        kept = old_to_new >= 0
        self._joint_impulses[old_to_new[kept]] = old._joint_impulses[kept]
        self._impulses_current = True
        wk, old_wk = self.tree_work, old.tree_work
        wk.rel_backup[...] = ts.node_rel
        wk.qd_backup[...] = ts.qd
        for oi in range(len(old_tm.parent)):
            b = int(old_to_new[int(old_tm.body[oi])])
            if b < 0:
                continue
            i = int(tm.body_node[b])
            if tm.dof[i] != old_tm.dof[oi]:
                continue
            ts.node_q[i] = old_ts.node_q[oi]
            ts.node_rel[i] = old_ts.node_rel[oi]
            wk.rel_backup[i] = old_wk.rel_backup[oi]
            v, ov, d = int(tm.v0[i]), int(old_tm.v0[oi]), int(tm.dof[i])
            ts.qd[v:v + d] = old_ts.qd[ov:ov + d]
            wk.qd_backup[v:v + d] = old_wk.qd_backup[ov:ov + d]
        tree.tree_reset_momentum(tm, ts, self.tree_work)  # (kinematics, then p = H qd)
        tree.tree_fill_state(tm, ts, self.tree_work, ts.qd)

    def _step_memory(self):
        wk = self.tree_work  # (the start of the step: what joint_wrench reads it from)
        return self._own_buffer, wk.body_start, wk.rel_backup, wk.qd_backup

    def restore(self, snapshot):
        super().restore(snapshot)
        self._impulses_current = False

    def _keep_impulses(self):
        """
        Before the coordinates are set by hand: fix the last step's joint impulses.

        Once set, the step's start and end no longer give them.  Nothing is computed for an
        engine whose wrenches nobody has read (they read zero until the next step).
        """
        if self._impulses_current:
            return
        if self._impulses_fn is None:
            self._joint_impulses[...] = 0.0
            self._impulses_current = True
        else:
            self._compute_impulses()

    def _compute_impulses(self):
        """Run the Newton-Euler pass of the last step (tree.tree_joint_impulses)."""
        args = (self.tree, self.tree_state, self.tree_work, self.contacts, self.links,
                self.joints, self.axes, self.dt, self.gravity, self._joint_impulses)
        if self._impulses_fn is None:
            tree.tree_joint_impulses(*args)
            # later calls skip the dispatcher's type resolution
            self._impulses_fn = _compiled_entry_point(tree.tree_joint_impulses, args)
        else:
            self._impulses_fn(*args)
        self._impulses_current = True

    def _contact_velocities(self):
        n_body = len(self.state.body_pos)
        return np.zeros(0), np.zeros((n_body, 6)), np.zeros((n_body, 6))

    def _contacts_changed(self):
        # the contact arrays are new (grown: packed here) or restored (packed before)
        pack = next((p for p in self._contact_packs if p[0] is self.contacts), None)
        if pack is None:
            (contacts, cwork), buffers, layout = flat.pack_together(
                (self.contacts, self.cwork), declare_classes=True)
            pack = (contacts, cwork, buffers + (layout,))
            self._contact_packs.append(pack)
        self.contacts, self.cwork = pack[0], pack[1]
        if self._mechanism_pack is None:  # (during __init__: the prefix is made after it)
            return
        s = self.solver
        # other buffers: their views are kept again (tree.tree_bind) before the next step
        flat.clear_views(self._views)
        self._bind_args = self._packed + self._mechanism_pack + pack[2] + (self._views,)
        self._bound = False
        # the kernel's arguments but n
        self._call_prefix = (
            self._views, self.contact_param, self.dt, self.gravity, self.integrator,
            int(s.iterations), float(s.tolerance), float(s.time_budget),
            float(s.position_tolerance), bool(s.warm_start), self.info)

    def _build_tree(self, model):
        """
        Nodes in parents-first order, grouped by tree: the robot, then each free object.

        The floating base and every scene object's body are 6-DOF joints from the world; then
        model.tree_order.  A group is one root and everything it carries (its nodes and its
        coordinates contiguous: independent trees, physics/tree_rows.py).
        """
        node_of_body = {}
        rows = []  # (parent node, body, parent body, joint, kind, ppos, pquat, cpos, cquat, cols)
        ident = np.array([1.0, 0.0, 0.0, 0.0])
        J = self.joints
        carried = {int(J.body[j, 1]) for j in model.tree_order}
        free = [body for body, _, _ in model.free_bases()]
        bases = set(free)
        free += [o.body for o in model.objects if o.body not in carried and o.body not in free]
        for b in free:
            rows.append((-1, b, -1, -1, tree.KIND_FREE, np.zeros(3), ident, np.zeros(3), ident,
                         list(np.eye(6))))
            node_of_body[b] = len(rows) - 1
        for j in model.tree_order:
            jtype = int(J.type[j])
            a, b = (int(x) for x in J.body[j])
            kind = jt.TYPES[jtype].TREE_KIND
            rows.append((node_of_body[a] if a >= 0 else -1, b, a, j, kind, J.ppos[j],
                         J.pquat[j], J.cpos[j], J.cquat[j],
                         jt.TYPES[jtype].columns(J.axis[j], J.perp1[j], J.perp2[j])))
            node_of_body[b] = len(rows) - 1
        missing = [bm.name for i, bm in enumerate(model.bodies) if i not in node_of_body]
        if missing:
            raise ConfigError(f'{self.model.name}: bodies {missing} are not in the joint tree; '
                              'solver.formulation tree needs every body on a tree joint.')
        # group the nodes by tree (stable: parents stay before their children); the robot's
        # trees (floating base or the world's joints) are one group, each object one
        root = []
        for r in rows:
            root.append(root[r[0]] if r[0] >= 0 else len(root))
        object_roots = {node_of_body[o.body] for o in model.objects
                        if o.body in node_of_body and rows[node_of_body[o.body]][0] < 0}
        if model.robots:  # a world: each floating robot a group of its own
            object_roots |= {node_of_body[b] for b in bases}
        key = [root[i] if root[i] in object_roots else -1 for i in range(len(rows))]
        order = sorted(range(len(rows)), key=lambda i: (key[i], i))
        new_index = {old: new for new, old in enumerate(order)}
        rows = [(new_index[r[0]] if r[0] >= 0 else -1,) + tuple(r[1:])
                for r in (rows[i] for i in order)]
        key = [key[i] for i in order]
        group_node = [0] + [i for i in range(1, len(rows)) if key[i] != key[i - 1]] + [len(rows)]
        node_group = np.zeros(len(rows), dtype=np.int64)
        for g in range(len(group_node) - 1):
            node_group[group_node[g]:group_node[g + 1]] = g
        node_of_body = {r[1]: i for i, r in enumerate(rows)}
        n = len(rows)
        dof = np.array([len(r[9]) for r in rows], dtype=np.int64)
        v0 = np.concatenate(([0], np.cumsum(dof)[:-1])).astype(np.int64)
        col = np.zeros((n, 6, 6))
        v_joint, v_node = [], []
        for i, r in enumerate(rows):
            for k, c in enumerate(r[9]):
                col[i, k] = c
                v_joint.append(r[3] if r[4] != tree.KIND_FREE else -1)
                v_node.append(i)
        v_joint = np.array(v_joint, dtype=np.int64)
        group_v = np.append(v0[group_node[:-1]], len(v_joint)) if len(rows) else np.zeros(1)
        body_node = np.array([node_of_body[b] for b in range(len(model.bodies))],
                             dtype=np.int64)
        damping = np.array([model.joints[j].damping if j >= 0 else 0.0 for j in v_joint])
        v_of_joint = {int(j): v for v, j in enumerate(v_joint) if j >= 0}
        d = self.drives
        # a loop joint's drive (no coordinate of the tree): a rotor with its own rows
        drive_v = np.array([v_of_joint.get(int(j), -1) for j in d.joint], dtype=np.int64)
        rotor = 1.0 / d.inv_rotor_inertia if len(d.joint) else np.zeros(0)
        armature = np.zeros(len(v_joint))
        on_tree = drive_v >= 0
        armature[drive_v[on_tree]] = d.gear[on_tree] ** 2 * rotor[on_tree]
        ax = self.axes
        axis_v = np.array([v_of_joint.get(int(j), -1) for j in ax.joint], dtype=np.int64)
        # links (tree_rows.py): the mimic pairs, then every loop joint with rows
        mm = self.mimics
        mimic_v = np.array([(v_of_joint[int(f)], v_of_joint[int(ld)])
                            for f, ld in zip(mm.follower, mm.leader)],
                           dtype=np.int64).reshape(-1, 2)
        loops = [j for j, joint in enumerate(model.joints)
                 if joint.loop and jt.N_ROWS[int(J.type[j])] > 0]
        link_joint = np.array([-1] * len(mimic_v) + loops, dtype=np.int64)
        # a scalar loop joint's axis: rows between its bodies through its link; its damping
        # is a row too (the tree's own joints hold theirs implicitly in the step)
        link_of = {j: len(mimic_v) + n for n, j in enumerate(loops)}
        axis_link = np.array([link_of.get(int(j), -1) if axis_v[x] < 0 else -1
                              for x, j in enumerate(ax.joint)], dtype=np.int64)
        axis_always = ((ax.friction > 0) | (ax.static_friction > 0)
                       | np.isfinite(ax.velocity_limit)
                       | ((axis_link >= 0) & ((ax.damping > 0) | (ax.drive >= 0)))
                       ).astype(np.int64)
        node_of_joint = {int(r[3]): i for i, r in enumerate(rows) if r[3] >= 0}
        return tree.TreeModel(
            parent=np.array([r[0] for r in rows], dtype=np.int64),
            body=np.array([r[1] for r in rows], dtype=np.int64),
            parent_body=np.array([r[2] for r in rows], dtype=np.int64),
            joint=np.array([r[3] for r in rows], dtype=np.int64),
            kind=np.array([r[4] for r in rows], dtype=np.int64),
            ppos=np.array([r[5] for r in rows], dtype=float).reshape(n, 3),
            pquat=np.array([r[6] for r in rows], dtype=float).reshape(n, 4),
            cpos=np.array([r[7] for r in rows], dtype=float).reshape(n, 3),
            cquat=np.array([r[8] for r in rows], dtype=float).reshape(n, 4),
            dof=dof, v0=v0, col=col, mass=1.0 / self.bodies.inv_mass,
            inertia=self.bodies.inertia, v_joint=v_joint,
            v_node=np.array(v_node, dtype=np.int64), damping=damping, armature=armature,
            drive_v=drive_v, gear=d.gear.copy(), resistance=d.resistance.copy(),
            inductance=d.inductance.copy(), kt=d.kt.copy(), ke=d.ke.copy(),
            viscous=d.viscous.copy(), efficiency=d.efficiency.copy(),
            current_limit=d.current_limit.copy(), rotor_inertia=rotor, body_node=body_node,
            node_group=node_group, group_node=np.array(group_node, dtype=np.int64),
            group_v=np.asarray(group_v, dtype=np.int64), axis_v=axis_v,
            axis_always=axis_always, link_joint=link_joint, mimic_v=mimic_v,
            mimic_ratio=mm.multiplier.astype(float), mimic_offset=mm.offset.astype(float),
            # a spherical joint's angular rates, a planar joint's translations: its first
            # (a spherical loop joint's friction: rows between its bodies, free_link)
            free_v=np.array([v0[node_of_joint[int(j)]] if int(j) in node_of_joint else -1
                             for j in self.free.joint], dtype=np.int64),
            free_dim=self.free.dim.astype(np.int64),
            free_force=np.column_stack([self.free.friction, self.free.static_friction])
            .reshape(-1, 2), axis_link=axis_link,
            loop_axes=np.flatnonzero(axis_link >= 0).astype(np.int64),
            free_link=np.array([-1 if int(j) in node_of_joint else link_of[int(j)]
                                for j in self.free.joint], dtype=np.int64))

    # -- loops and elements (links: tree_rows.py) ---------------------------------------------
    def _link_of(self, j):
        return self._links_of_joints.get(int(j), -1)

    def clear_joint_rows(self, j):
        """Clear the accumulated impulses of loop or element joint j's rows."""
        m = self._link_of(j)
        if m >= 0:
            self.tree_state.link_impulse[m] = 0.0
            self.links.carried[m] = 0.0

    def _clear_loop_rows(self):
        self.tree_state.link_impulse[len(self.tree.mimic_v):] = 0.0
        self.links.carried[:] = 0.0

    def close_loops(self):
        """As Mechanism.close_loops; then the scalar loop joints' coordinates and rates."""
        super().close_loops()
        self._loop_state()

    def _loop_state(self):
        """Read the scalar loop joints' coordinates and rates from the bodies (if any)."""
        if len(self._loop_axes):
            tree.tree_loop_state(self.tree, self.tree_state, self.tree_work, self.joints,
                                 self.links)

    def element_impulse(self, j):
        """Return the accumulated impulses of element joint j's rows (N s)."""
        m = self._link_of(j)
        return self.tree_state.link_impulse[m, :jt.N_ROWS[int(self.joints.type[j])]].copy()

    # -- stepping -----------------------------------------------------------------------------
    kernel_variant = 'tree'

    step_kernel = staticmethod(tree.tree_step_packed)

    def kernel(self):
        """Return (numba dispatcher, arguments) of the tree step kernel."""
        return tree.tree_step_packed, self._call_args(1)

    def _bind_kernel(self):
        """Return :func:`tree.tree_bind` and its arguments: the packed buffers, the slots."""
        return tree.tree_bind, self._bind_args

    def joint_wrench(self, j):
        """
        Mean wrench joint j's parent applied to its child over the last step (world frame).

        A tree joint's: the recursive Newton-Euler pass over the step's velocity change
        (``tree.tree_joint_impulses``, docs/sensors.md), for every joint at once and kept until
        the next step; it reads the contact impulses and the applied link wrenches as the step
        left them: read it before changing them.  A loop joint's or a grasp's: its rows'
        impulses on the child.

        Returns:
            (force (3,) N, torque (3,) N m about the child's COM, the child's COM (3,) m and
            orientation (4,) at the start of that step, the poses the pass is taken at), as
            Engine.joint_wrench.
        """
        child = int(self.joints.body[j, 1])
        start = self.tree_work.body_start[child]
        m = self._link_of(j)
        if m >= 0:
            # a loop joint or a grasp: its rows' impulses on the child over the step, a
            # scalar loop joint's coordinate rows, effort and drive along its coordinate row,
            # a spherical one's friction
            rows = int(self.links.rows[m])
            impulse = self.tree_state.link_impulse[m, :rows]
            wrench = impulse @ self.links.body_rows[m, :rows, 1] / self.dt
            x = self._axis_of_link.get(m, -1)
            if x >= 0 and self.links.axis_on[m]:
                along = self.state.joint_effort[j] * self.dt + self.state.axis_impulse[x].sum()
                d = int(self.axes.drive[x])
                if d >= 0:  # the gear and its losses (drives.finish_drive)
                    along += self.state.drive_effort[d] * self.dt
                wrench = wrench + along * self.links.axis_rows[m, 0, 1] / self.dt
            f = self._friction_of_link.get(m, -1)
            if f >= 0 and self.links.axis_on[m]:
                # a spherical loop joint's friction: torques about world x, y, z on the child
                wrench = wrench + (self.state.free_impulse[f]
                                   @ self.links.axis_rows[m, :, 1]) / self.dt
            return wrench[:3], wrench[3:], start[0:3].copy(), start[3:7].copy()
        if not self._impulses_current:
            self._compute_impulses()
        impulse = self._joint_impulses[child]
        force = impulse[3:] / self.dt
        com = start[0:3].copy()
        # about the COM, not the origin (np.cross costs ten times more on 3-vectors)
        c0, c1, c2 = com
        f0, f1, f2 = force
        torque = impulse[:3] / self.dt - np.array((c1 * f2 - c2 * f1, c2 * f0 - c0 * f2,
                                                   c0 * f1 - c1 * f0))
        return force, torque, com, start[3:7].copy()

    def joint_rates(self):
        """Scalar joint velocities (rad/s or m/s; 0 for other joint types), per joint index."""
        out = np.zeros(len(self.joints.type))
        joints, coordinates = self._rate_index
        out[joints] = self.tree_state.qd[coordinates]
        # a loop joint's: J v of its bodies (tree_rows.loop_coordinates, after each step and
        # each placement)
        out[self._loop_joints] = self.state.axis_rate[self._loop_axes]
        return out

    def place_children(self, positions, velocities, keep_free_joints=True):
        """
        Set the generalized coordinates (as Engine.place_children places the bodies).

        Scalar joints take positions[j] / velocities[j]; multi-DOF joints keep their relative
        pose (or the zero pose) at rest relative to their parent; the floating base takes body
        0's state.
        """
        self._keep_impulses()
        self._place_bodies(positions, velocities, keep_free_joints)
        self.tree_state.link_impulse[...] = 0.0
        self._derive(range(len(self.tree.parent)), positions, velocities)
        self._store_rates()
        self.info[INFO_STATUS] = 0.0
        self.clear_contacts()

    def _derive(self, nodes, positions=None, velocities=None):
        """Set the coordinates of these nodes from the bodies' states (and joint values)."""
        tm, ts = self.tree, self.tree_state
        for i in nodes:
            j, b = int(tm.joint[i]), int(tm.body[i])
            v0, dof = int(tm.v0[i]), int(tm.dof[i])
            if tm.kind[i] != tree.KIND_FREE:
                ts.node_q[i] = positions[j]
                ts.qd[v0] = velocities[j]
                rel_q, rel_p = jt.TYPES[int(self.joints.type[j])].relative_pose(
                    self.joints.axis[j], positions[j])
                ts.node_rel[i, :3] = rel_p
                ts.node_rel[i, 3:] = rel_q
                continue
            ts.node_q[i] = 0.0
            if j >= 0:
                pa, qa = self.joint_frame_world(j, 0)
                pb, qb = self.joint_frame_world(j, 1)
            else:  # the floating base or an object: world origin -> the body's COM frame
                pa, qa = np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
                pb, qb = self.body_pose(b)
            rel_p = quat_to_matrix(qa).T @ (pb - pa)
            rel_q = quat_multiply(quat_conjugate(qa), qb)
            jtype = int(self.joints.type[j]) if j >= 0 else jt.FLOATING
            # keep only what the joint allows (the bodies may hold a gap the maximal
            # engine's projection would close, e.g. after the base was moved by hand)
            rel_q, rel_p = jt.TYPES[jtype].allowed(
                rel_q, rel_p, self.joints.axis[j] if j >= 0 else None)
            ts.node_rel[i, :3] = rel_p
            ts.node_rel[i, 3:] = rel_q
            pbody = int(tm.parent_body[i])
            xp, _ = self.body_pose(pbody)
            vp = self.state.body_lin_vel[pbody] if pbody >= 0 else np.zeros(3)
            wp = self.body_angular_velocity(pbody)
            xc, _ = self.body_pose(b)
            wc = self.body_angular_velocity(b)
            v_point = self.state.body_lin_vel[b] + np.cross(wc, pb - xc)
            rb = quat_to_matrix(qb)
            # angular in the child joint frame, linear in the parent's (physics/tree.py)
            twist = np.concatenate((rb.T @ (wc - wp), quat_to_matrix(qa).T
                                    @ (v_point - vp - np.cross(wp, pb - xp))))
            for k in range(dof):
                ts.qd[v0 + k] = tm.col[i, k] @ twist
        tree.tree_reset_momentum(tm, ts, self.tree_work)
        tree.tree_fill_state(tm, ts, self.tree_work, ts.qd)
        self._loop_state()
