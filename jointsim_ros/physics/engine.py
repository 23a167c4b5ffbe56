"""
The engine: arrays built once from a RobotModel, the mutable state, and the compiled step.

Nothing here knows about ROS; the Simulator facade is the only intended caller.
"""
import numpy as np

from . import joints as jt
from .arrays import (BLOCK_JOINT, BLOCK_MIMIC, Blocks, Bodies, Drives, INFO_SIZE, Joints, Mimics,
                     State, Work)
from .settings import SolverSettings
from .step import joint_rates, step as compiled_step


def quat_to_matrix(q):
    """Rotation matrix of a unit quaternion (w, x, y, z), numpy version for set-up code."""
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def quat_multiply(a, b):
    """Hamilton product a * b (w, x, y, z), numpy version for set-up code."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                     w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def quat_conjugate(q):
    """Inverse of a unit quaternion."""
    return np.array([q[0], -q[1], -q[2], -q[3]])


def quat_about_axis(axis, angle):
    """Return the unit quaternion of a rotation by angle (rad) about the unit axis."""
    return np.concatenate(([np.cos(0.5 * angle)], np.sin(0.5 * angle) * np.asarray(axis)))


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


class Engine:
    """
    Arrays, state and stepping of one robot in maximal coordinates.

    Args:
        model: description.model.RobotModel.
        dt: time step, s.
        gravity: (3,) world gravity, m/s^2.
        solver: SolverSettings.
    """

    def __init__(self, model, dt, gravity, solver=SolverSettings()):
        self.model = model
        self.dt = float(dt)
        self.gravity = np.asarray(gravity, dtype=float).reshape(3)
        self.solver = solver
        self.bodies = self._build_bodies(model)
        self.body_com = np.array([b.com for b in model.bodies], dtype=float).reshape(-1, 3)
        self.joint_index = {j.name: i for i, j in enumerate(model.joints)}
        self.joints = self._build_joints(model)
        self.mimics = self._build_mimics(model)
        self.blocks, n_row = self._build_blocks()
        self.drives = self._build_drives(model)
        n_drive = len(self.drives.joint)
        n_body = len(model.bodies)
        n_joint = len(model.joints)
        self.state = State(
            body_pos=np.zeros((n_body, 3)), body_quat=np.tile([1.0, 0, 0, 0], (n_body, 1)),
            body_lin_vel=np.zeros((n_body, 3)), body_ang_mom=np.zeros((n_body, 3)),
            joint_q=np.zeros(n_joint), joint_effort=np.zeros(n_joint),
            row_impulse=np.zeros(n_row), time=np.zeros(1), drive_voltage=np.zeros(n_drive),
            drive_current=np.zeros(n_drive), rotor_speed=np.zeros(n_drive),
            drive_impulse=np.zeros((n_drive, 3)))
        n_block = len(self.blocks.dim)
        self.work = Work(
            rot=np.zeros((n_body, 3, 3)), inertia_w=np.zeros((n_body, 3, 3)),
            inv_inertia_w=np.zeros((n_body, 3, 3)), vel=np.zeros((n_body, 6)),
            pred_pos=np.zeros((n_body, 3)), pred_quat=np.zeros((n_body, 4)),
            backup=np.zeros((n_body, 13)), row_J=np.zeros((n_row, 4, 6)),
            row_MJ=np.zeros((n_row, 4, 6)), row_bias=np.zeros(n_row), row_C=np.zeros(n_row),
            block_kinv=np.zeros((n_block, 6, 6)), clock=np.zeros(2, dtype=np.int64),
            mat6=np.zeros((6, 6)), gj=np.zeros((6, 12)), vec6a=np.zeros(6), vec6b=np.zeros(6),
            C_pred=np.zeros(6), J_pred=np.zeros((6, 4, 6)), jrow=np.zeros((1, 4, 6)),
            vec12=np.zeros(12), drive_J=np.zeros((n_drive, 2, 6)),
            drive_u=np.zeros((n_drive, 2, 6)), drive_k=np.zeros(n_drive),
            drive_kcw=np.zeros((n_drive, 6)), drive_soft=np.zeros((n_drive, 2)),
            drive_backup=np.zeros((n_drive, 2)), drive_ainv=np.zeros((n_drive, 2, 2, 2)),
            drive_kg=np.zeros(n_drive))
        self.info = np.zeros(INFO_SIZE)
        self._step_fn = None

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
        arrays = {k: np.zeros((n, 3)) for k in ('ppos', 'cpos', 'axis', 'perp1', 'perp2')}
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
        return Joints(type=types, body=body, pquat=pquat, cquat=cquat, block=block, **arrays)

    def _build_mimics(self, model):
        rows = [(self.joint_index[j.name], self.joint_index[j.mimic.leader], j.mimic.multiplier,
                 j.mimic.offset) for j in model.joints if j.mimic is not None]
        cols = list(zip(*rows)) if rows else [(), (), (), ()]
        return Mimics(follower=np.array(cols[0], dtype=np.int64),
                      leader=np.array(cols[1], dtype=np.int64),
                      multiplier=np.array(cols[2], dtype=float),
                      offset=np.array(cols[3], dtype=float))

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

    def _build_drives(self, model):
        drives = model.drives
        return Drives(
            joint=np.array([self.joint_index[d.joint] for d in drives], dtype=np.int64),
            inv_rotor_inertia=np.array([1.0 / d.rotor_inertia for d in drives], dtype=float),
            gear=np.array([d.gear_ratio for d in drives], dtype=float),
            resistance=np.array([d.resistance for d in drives], dtype=float),
            inductance=np.array([d.inductance for d in drives], dtype=float),
            kt=np.array([d.torque_constant for d in drives], dtype=float),
            ke=np.array([d.back_emf_constant for d in drives], dtype=float),
            viscous=np.array([d.viscous_friction for d in drives], dtype=float),
            efficiency=np.array([d.efficiency for d in drives], dtype=float),
            current_limit=np.array([d.current_limit for d in drives], dtype=float))

    # -- stepping -----------------------------------------------------------------------------
    def step(self, n=1):
        """Advance n steps; returns the number of steps taken (fewer on divergence)."""
        s = self.solver
        args = (self.bodies, self.joints, self.mimics, self.blocks, self.drives, self.state,
                self.work, self.dt, self.gravity, int(s.iterations), float(s.tolerance),
                float(s.time_budget), int(s.position_iterations), float(s.position_tolerance),
                bool(s.warm_start), self.info, int(n))
        if self._step_fn is None:
            taken = compiled_step(*args)
            self._step_fn = _compiled_entry_point(compiled_step, args)
            return taken
        return self._step_fn(*args)

    def joint_rates(self):
        """Scalar joint velocities (rad/s or m/s; 0 for other joint types), per joint index."""
        out = np.zeros(len(self.joints.type))
        joint_rates(self.bodies, self.joints, self.state, self.work, out)
        return out

    # -- kinematics -------------------------------------------------------------------------
    def body_pose(self, b):
        """(COM position, orientation wxyz) of body b; the world is at the origin."""
        if b < 0:
            return np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
        return self.state.body_pos[b].copy(), self.state.body_quat[b].copy()

    def body_angular_velocity(self, b):
        """World angular velocity w = I_world^-1 L of body b, rad/s."""
        if b < 0:
            return np.zeros(3)
        r = quat_to_matrix(self.state.body_quat[b])
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
        pos = self.joints.ppos[j] if side == 0 else self.joints.cpos[j]
        quat = self.joints.pquat[j] if side == 0 else self.joints.cquat[j]
        return x + quat_to_matrix(q) @ pos, quat_multiply(q, quat)

    def place_children(self, positions, velocities, keep_free_joints=True):
        """
        Forward kinematics: place every body from the root outwards (tree order).

        Scalar joints take positions[j] / velocities[j]; multi-DOF joints (spherical, planar,
        floating) keep their current relative pose (or the zero pose when keep_free_joints is
        False) with zero relative velocity.  Accumulated impulses are cleared.
        """
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
            if jtype in (jt.REVOLUTE, jt.CONTINUOUS):
                rel_q, rel_p = quat_about_axis(axis, positions[j]), np.zeros(3)
            elif jtype == jt.PRISMATIC:
                rel_q, rel_p = np.array([1.0, 0, 0, 0]), axis * positions[j]
            else:
                rel_q, rel_p = free.get(j, (np.array([1.0, 0, 0, 0]), np.zeros(3)))
            q_cj = quat_multiply(qa, rel_q)
            p_cj = pa + quat_to_matrix(qa) @ rel_p
            q_body = quat_multiply(q_cj, quat_conjugate(self.joints.cquat[j]))
            x_body = p_cj - quat_to_matrix(q_body) @ self.joints.cpos[j]
            # velocity: the parent's rigid motion plus the joint's own rate
            xa, _ = self.body_pose(a)
            va = self.state.body_lin_vel[a] if a >= 0 else np.zeros(3)
            wa = self.body_angular_velocity(a)
            w = wa.copy()
            v = va + np.cross(wa, x_body - xa)
            axis_w = quat_to_matrix(qa) @ axis
            if jtype in (jt.REVOLUTE, jt.CONTINUOUS):
                w = w + axis_w * velocities[j]
                v = v + np.cross(axis_w * velocities[j], x_body - p_cj)
            elif jtype == jt.PRISMATIC:
                v = v + axis_w * velocities[j]
            self.set_body_state(b, x_body, q_body, v, w)
            self.state.joint_q[j] = positions[j] if jtype in jt.SCALAR_CODES else 0.0
        self.state.row_impulse[:] = 0.0
        self.state.drive_impulse[:] = 0.0
        rates = self.joint_rates()
        for d, j in enumerate(self.drives.joint):
            self.state.rotor_speed[d] = self.drives.gear[d] * rates[j]
