"""
Walking for the bundled humanoid: a ZMP preview-control gait over joint PD on the DC drives.

No rclpy and no simulator here: the controller sees only joint positions and velocities (what
``joint_states`` carries) and returns armature voltages (what ``joint_voltage_commands``
takes), so the same object drives the headless engine in the tests and the node over DDS
(``jointsim_ros.tools.humanoid_controller``).  The method (docs/humanoid.md, "Walking"):

1. **Footsteps.** Both feet at the start; the weight shifts onto the left foot, then
   ``steps`` steps alternate right, left, ...; each lands ``stride`` ahead of the last one
   (the first, and the last, which closes the feet side by side, move one stride, the others
   two).  A step is ``double_support`` s with both feet down, in which the ZMP reference moves
   from the old to the new support foot, then ``single_support`` s on one foot with the ZMP
   reference at that sole's centre.
2. **Centre of mass.** The linear inverted pendulum (cart-table model, height ``com_height``)
   with Kajita's preview control (Kajita et al., ICRA 2003): the COM jerk is a state feedback
   plus a weighted sum of the ZMP reference over the next ``preview`` s, from the discrete
   Riccati equation of the pendulum with an integrator on the ZMP error.
3. **Swing foot.** A minimum-jerk path from the old to the new foothold in x and y, and a lift
   ``step_height`` * sin(pi s) in z; the soles stay level.
4. **Legs.** The pelvis, level and facing +x, is placed so that the whole robot's centre of
   mass (forward kinematics of the model, not a point mass at the pelvis) is at the planned
   COM; two passes correct the COM offset that the legs' motion makes.  Each leg's six joint
   angles follow from the hip and the ankle by the closed-form inverse kinematics of a leg
   whose three hip axes and two ankle axes meet (Kajita, "Introduction to Humanoid Robotics",
   2.5).  Arms, waist and head hold their initial angles.
5. **Drives.** Each joint follows its planned angle by a PD in joint torque turned into volts
   through the drive's datasheet: ``V = R tau / (Kt N eta) + Ke N qd*``, where
   ``tau = kp (q* - q) + kd (qd* - qd)``; the back-EMF term of the target speed is the
   feed-forward, and the motor's own back-EMF on the speed error adds the damping
   ``Kt Ke N^2 eta / R`` without any sampling delay.  Clipped to the supply.

The plan is made once, at construction, for the whole walk (a few thousand samples at
``plan_dt``); the controller interpolates it at the time it is given.
"""
from dataclasses import dataclass, field
import math

import numpy as np
from scipy import linalg

from ..rotations import quat_to_matrix

G = 9.81
#: The bundled humanoid's sole centre in its foot (ankle) frame, m: 0.03 m ahead of the ankle
#: axes, 0.07 m below them.
SOLE = (0.03, 0.0, -0.07)
LEG_JOINTS = ('hip_yaw', 'hip_roll', 'hip_pitch', 'knee', 'ankle_pitch', 'ankle_roll')


@dataclass
class GaitSettings:
    """
    The walk (docs/humanoid.md, "Walking").

    Attributes:
        steps: number of steps, the last one closing the feet side by side.
        stride: m, how far each foothold lands ahead of the previous one.
        step_height: m, swing-foot lift at mid-step.
        single_support, double_support: s, the phases of one step.
        settle: s, standing up: from the pose measured at the start into the plan's first
            pose (no motion for the bundled robot, which starts in it).
        shift: s, moving the ZMP from between the feet onto the first support foot.
        finish: s, standing after the last step (the ZMP back between the feet).
        plan_dt: s, the plan's sample time.
        preview: s, how far ahead the preview controller looks.
        zmp_weight, jerk_weight: the preview controller's cost weights (ZMP error, jerk).
        kp, kd: per joint group, N m/rad and N m s/rad ('hip', 'knee', 'ankle', 'other').
    """

    steps: int = 10
    stride: float = 0.125
    step_height: float = 0.04
    single_support: float = 0.45
    double_support: float = 0.1
    settle: float = 1.0
    shift: float = 0.8
    finish: float = 1.0
    plan_dt: float = 0.005
    preview: float = 1.6
    zmp_weight: float = 1.0
    jerk_weight: float = 1.0e-6
    kp: dict = field(default_factory=lambda: {
        'hip': 6000.0, 'knee': 6000.0, 'ankle': 2000.0, 'other': 1000.0})
    kd: dict = field(default_factory=lambda: {
        'hip': 0.0, 'knee': 0.0, 'ankle': 0.0, 'other': 0.0})

    @classmethod
    def for_steps(cls, steps, **values):
        """Return the settings of a walk of ``steps`` steps; 0 or fewer stand (no weight shift)."""
        settings = cls(steps=max(0, steps), **values)
        if steps <= 0:
            settings.shift = 0.0
        return settings

    def duration(self):
        """Return the whole plan's length, s."""
        return (self.settle + self.shift
                + self.steps * (self.single_support + self.double_support) + self.finish)


# -- the cart-table model and Kajita's preview controller ----------------------------------------
def solve_dare(a, b, q, r):
    """
    Solve the discrete algebraic Riccati equation ``P = A'PA - A'PB (R + B'PB)^-1 B'PA + Q``.

    ``scipy.linalg.solve_discrete_are`` (a generalized Schur decomposition of the symplectic
    pencil).

    Returns:
        P, (n, n).

    Raises:
        ArithmeticError: no convergence.
    """
    try:
        return linalg.solve_discrete_are(a, b, q, r)
    except np.linalg.LinAlgError as error:
        raise ArithmeticError('solve_dare: no convergence') from error


@dataclass
class PreviewController:
    """
    Kajita's ZMP preview controller for the cart-table model, one horizontal axis.

    State ``x = (c, c', c'')`` (m, m/s, m/s^2), input the jerk; ZMP ``p = c - (z_c / g) c''``.
    ``u_k = -gi sum(p_i - p_ref_i) - gx x_k - sum_j gd_j p_ref_{k+j}``.
    """

    dt: float
    com_height: float
    preview_steps: int
    zmp_weight: float = 1.0
    jerk_weight: float = 1.0e-6

    def __post_init__(self):
        t = self.dt
        self.a = np.array([[1.0, t, t * t / 2.0], [0.0, 1.0, t], [0.0, 0.0, 1.0]])
        self.b = np.array([[t ** 3 / 6.0], [t * t / 2.0], [t]])
        self.c = np.array([[1.0, 0.0, -self.com_height / G]])
        a1 = np.zeros((4, 4))
        a1[0, 0] = 1.0
        a1[0, 1:] = (self.c @ self.a)[0]
        a1[1:, 1:] = self.a
        b1 = np.vstack([self.c @ self.b, self.b])
        q = np.zeros((4, 4))
        q[0, 0] = self.zmp_weight
        r = np.array([[self.jerk_weight]])
        p = solve_dare(a1, b1, q, r)
        gain = np.linalg.solve(r + b1.T @ p @ b1, b1.T @ p @ a1)
        self.gi = gain[0, 0]
        self.gx = gain[0, 1:]
        # Katayama et al. (1985): Gd(1) = -Gi, Gd(l) = (R + B'PB)^-1 B' X(l-1),
        # X(1) = -Ac' P I, X(l) = Ac' X(l-1), Ac the closed loop
        closed = a1 - b1 @ gain
        x = -closed.T @ p @ np.array([[1.0], [0.0], [0.0], [0.0]])
        gd = np.empty(self.preview_steps)
        gd[0] = -self.gi
        for j in range(1, self.preview_steps):
            gd[j] = np.linalg.solve(r + b1.T @ p @ b1, b1.T @ x)[0, 0]
            x = closed.T @ x
        self.gd = gd

    def track(self, zmp_ref, start):
        """
        Return the COM states ``(n, 3)`` and ZMP ``(n,)`` that track ``zmp_ref`` (n,), m.

        The COM starts at rest at ``start`` (m). The reference is held at its last value
        beyond its end.  Computed relative to ``start`` (a rest state), which the pendulum
        keeps with no input: the gains need not cancel a constant offset.
        Before the first sample the reference is taken to have been at ``start`` for a whole
        preview, so that a change the preview sees at once does not start with a jerk.
        """
        lead = self.preview_steps
        relative = np.concatenate([np.zeros(lead), np.asarray(zmp_ref, dtype=float) - start])
        n = len(relative)
        padded = np.concatenate([relative, np.full(self.preview_steps, relative[-1])])
        x = np.zeros(3)
        states, zmp = np.empty((n, 3)), np.empty(n)
        error = 0.0
        for k in range(n):
            states[k] = x
            zmp[k] = self.c[0] @ x
            error += zmp[k] - relative[k]
            u = -self.gi * error - self.gx @ x - self.gd @ padded[k + 1:k + 1 + self.preview_steps]
            x = self.a @ x + self.b[:, 0] * u
        states[:, 0] += start
        return states[lead:], zmp[lead:] + start


# -- kinematics of the model -------------------------------------------------------------------
class Kinematics:
    """
    Forward kinematics and centre of mass of a model, batched over configurations.

    Args:
        model: a RobotModel (jointsim_ros.description) whose joints are revolute, continuous or
            fixed-in-body, with a floating root body 0.
    """

    def __init__(self, model):
        self.model = model
        self.joint_names = [j.name for j in model.joints]
        self.mass = sum(body.mass for body in model.bodies)
        parent_of = {j.child_body: j for j in model.joints}
        order, seen = [], {0}
        while len(order) < len(parent_of):
            for j in model.joints:
                if j.child_body not in seen and j.parent_body in seen:
                    order.append(j)
                    seen.add(j.child_body)
        self._order = order
        column = {name: i for i, name in enumerate(self.joint_names)}
        self._masses = np.array([body.mass for body in model.bodies])
        self._coms = np.array([np.asarray(body.com, dtype=float) for body in model.bodies])
        # each joint's constants, once: (angle column, parent and child body, R_pj, parent
        # origin, R_cj^T, child origin, [axis]x and its square for Rodrigues' formula)
        self._steps = []
        for j in order:
            x = cross_matrix(j.axis)
            self._steps.append((column[j.name], j.parent_body, j.child_body,
                                quat_to_matrix(j.parent_quat), np.asarray(j.parent_pos, float),
                                quat_to_matrix(j.child_quat).T, np.asarray(j.child_pos, float),
                                x, x @ x))

    def poses(self, q, base_pos=None, base_rot=None):
        """
        Return every body's position (n_body, k, 3) and rotation (n_body, k, 3, 3).

        Args:
            q: (k, n) joint angles, rad, in ``joint_names`` order.
            base_pos: (k, 3) the root body's origin, m; None: the root's own frame.
            base_rot: (k, 3, 3) the root body's rotation; None: the identity.
        """
        k = q.shape[0]
        pos = np.zeros((len(self.model.bodies), k, 3))
        rot = np.zeros((len(self.model.bodies), k, 3, 3))
        if base_pos is not None:
            pos[0] = base_pos
        rot[0] = np.eye(3) if base_rot is None else base_rot
        for i, parent, child, r_pj, p_pos, r_cj_t, c_pos, x, x2 in self._steps:
            s, c = np.sin(q[:, i])[:, None, None], np.cos(q[:, i])[:, None, None]
            r_axis = np.eye(3) + s * x + (1.0 - c) * x2
            rot[child] = rot[parent] @ r_pj @ r_axis @ r_cj_t
            pos[child] = (pos[parent] + rot[parent] @ p_pos) - rot[child] @ c_pos
        return pos, rot

    def body_poses(self, base_pos, base_rot, positions):
        """
        Return every body's position (m, 3) and rotation (3, 3), world frame.

        Args:
            base_pos: (k, 3) root body origin; base_rot (k, 3, 3).
            positions: dict joint name -> (k,) rad (joints not named: 0).

        Returns:
            (pos (n_body, k, 3), rot (n_body, k, 3, 3)).
        """
        q = np.zeros((base_pos.shape[0], len(self.joint_names)))
        for i, name in enumerate(self.joint_names):
            if name in positions:
                q[:, i] = positions[name]
        return self.poses(q, base_pos, base_rot)

    def com_of(self, pos, rot):
        """Return the whole-body centre of mass (k, 3) of :meth:`poses`' output."""
        world = pos + np.einsum('bkij,bj->bki', rot, self._coms)
        return np.einsum('b,bki->ki', self._masses, world) / self.mass

    def com(self, base_pos, base_rot, positions):
        """Return the centre of mass (k, 3), m, world frame."""
        return self.com_of(*self.body_poses(base_pos, base_rot, positions))


def cross_matrix(axis):
    """Return the matrix [a]x of the cross product a x v."""
    a = np.asarray(axis, dtype=float)
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def axis_rotations(axis, angles):
    """Return the rotations (k, 3, 3) about a unit ``axis`` by ``angles`` (k,) rad (Rodrigues)."""
    x = cross_matrix(axis)
    s, c = np.sin(angles)[:, None, None], np.cos(angles)[:, None, None]
    return np.eye(3) + s * x + (1.0 - c) * (x @ x)


@dataclass(frozen=True)
class LegGeometry:
    """
    One leg of the bundled humanoid, from the model (pelvis frame at zero angles).

    Attributes:
        hip: (3,) where the hip roll and pitch axes meet (the yaw axis passes through it),
            pelvis frame, m.
        thigh, shin: m, hip to knee and knee to ankle.
        sole: (3,) sole centre in the ankle frame (the foot frame), m.
    """

    hip: np.ndarray
    thigh: float
    shin: float
    sole: np.ndarray

    @classmethod
    def from_model(cls, model, side, sole):
        """Read the leg ``side`` ('l' or 'r') of the model; ``sole`` (3,) in the foot frame."""
        joints = {j.name: j for j in model.joints}
        # joint frames are parallel to their links at zero angles: chain the origins
        hip = origin_in_link(model, joints[f'{side}_hip_yaw']) + origin_in_link(
            model, joints[f'{side}_hip_roll'])
        thigh = np.linalg.norm(origin_in_link(model, joints[f'{side}_knee']))
        shin = np.linalg.norm(origin_in_link(model, joints[f'{side}_ankle_pitch']))
        return cls(hip=hip, thigh=float(thigh), shin=float(shin),
                   sole=np.asarray(sole, dtype=float))


def origin_in_link(model, joint):
    """Return a joint's origin in its parent link's frame, m (the URDF ``<origin xyz>``)."""
    parent = model.links[joint.parent_link]
    return quat_to_matrix(parent.quat).T @ (np.asarray(joint.parent_pos) - parent.pos)


def leg_ik(leg, pelvis_pos, foot_pos, foot_rot=None):
    """
    Closed-form inverse kinematics of one leg (Kajita, Introduction to Humanoid Robotics, 2.5).

    The pelvis is level and faces +x.

    Args:
        leg: LegGeometry.
        pelvis_pos: (k, 3) pelvis origin, world, m.
        foot_pos: (k, 3) sole centre, world, m.
        foot_rot: (k, 3, 3) foot rotations, world; None: level, facing +x.

    Returns:
        (k, 6) angles of LEG_JOINTS, rad.
    """
    k = pelvis_pos.shape[0]
    r_foot = np.broadcast_to(np.eye(3), (k, 3, 3)) if foot_rot is None else foot_rot
    hip = pelvis_pos + leg.hip
    ankle = foot_pos - np.einsum('kij,j->ki', r_foot, leg.sole)
    # the hip in the ankle (foot) frame
    r = np.einsum('kji,kj->ki', r_foot, hip - ankle)
    c = np.linalg.norm(r, axis=1)
    a, b = leg.thigh, leg.shin
    cos_knee = np.clip((c * c - a * a - b * b) / (2.0 * a * b), -1.0, 1.0)
    knee = np.arccos(cos_knee)                                  # >= 0: flexed
    alpha = np.arcsin(np.clip(a * np.sin(math.pi - knee) / c, -1.0, 1.0))
    ankle_roll = np.arctan2(r[:, 1], r[:, 2])
    ankle_pitch = -np.arctan2(r[:, 0], np.sign(r[:, 2]) * np.hypot(r[:, 1], r[:, 2])) - alpha
    # hip rotations: R_pelvis^T R_foot Rx(-roll) Ry(-(knee + pitch)) = Rz(yaw) Rx(roll) Ry(pitch)
    r_hip = (r_foot @ axis_rotations((1.0, 0.0, 0.0), -ankle_roll)
             @ axis_rotations((0.0, 1.0, 0.0), -(knee + ankle_pitch)))
    hip_yaw = np.arctan2(-r_hip[:, 0, 1], r_hip[:, 1, 1])
    cz, sz = np.cos(hip_yaw), np.sin(hip_yaw)
    hip_roll = np.arctan2(r_hip[:, 2, 1], -r_hip[:, 0, 1] * sz + r_hip[:, 1, 1] * cz)
    hip_pitch = np.arctan2(-r_hip[:, 2, 0], r_hip[:, 2, 2])
    return np.stack([hip_yaw, hip_roll, hip_pitch, knee, ankle_pitch, ankle_roll], axis=1)


def min_jerk(s):
    """Return the minimum-jerk blend 10 s^3 - 15 s^4 + 6 s^5 of s in [0, 1]."""
    s = np.clip(s, 0.0, 1.0)
    return s ** 3 * (10.0 - 15.0 * s + 6.0 * s * s)


# -- the plan ----------------------------------------------------------------------------------
class WalkingPlan:
    """
    The whole walk, planned at construction: footsteps, ZMP, COM, feet, pelvis and joints.

    Args:
        model: the humanoid's RobotModel (jointsim_ros.description).
        initial_positions: dict joint -> rad, the pose the robot starts in (the config's
            ``initial_positions``; joints not named are 0).
        base_position: (3,) pelvis origin at the start, world, m.
        settings: GaitSettings.
        sole: (3,) sole centre in the foot frame, m.

    Attributes:
        times: (k,) s from the controller's start, ``plan_dt`` apart.
        zmp_ref, zmp: (k, 2) the ZMP reference and the ZMP of the planned COM, world, m.
        com: (k, 3) planned centre of mass, m (x, y from the preview controller; z fixed).
        feet: {'l', 'r'} -> (k, 3) sole centres, m.
        pelvis: (k, 3) pelvis origin, m.
        support: (k,) 'l', 'r' or 'both'.
        footholds: [(side, (3,) sole centre, landing time s)], in order.
        joint_names: the model's joints; positions (k, n) rad, velocities (k, n) rad/s.
    """

    def __init__(self, model, initial_positions, base_position, settings=None,
                 sole=SOLE):
        self.settings = s = settings or GaitSettings()
        self.kin = Kinematics(model)
        self.joint_names = self.kin.joint_names
        sole = np.asarray(sole, dtype=float)
        self.legs = {side: LegGeometry.from_model(model, side, sole) for side in 'lr'}
        start = {name: np.array([float(initial_positions.get(name, 0.0))])
                 for name in self.joint_names}
        base = np.asarray(base_position, dtype=float)[None]
        level = np.eye(3)[None]
        pos, rot = self.kin.body_poses(base, level, start)
        index = {body.name: i for i, body in enumerate(model.bodies)}
        feet0 = {side: (pos[index[f'{side}_foot']] + rot[index[f'{side}_foot']] @ sole)[0]
                 for side in 'lr'}
        com0 = self.kin.com(base, level, start)[0]
        n = int(round(s.duration() / s.plan_dt)) + 1
        self.times = np.arange(n) * s.plan_dt
        self._footsteps(feet0, com0)
        preview = PreviewController(s.plan_dt, com0[2] - 0.5 * (feet0['l'][2] + feet0['r'][2]),
                                    int(round(s.preview / s.plan_dt)), s.zmp_weight,
                                    s.jerk_weight)
        states = [preview.track(self.zmp_ref[:, axis], com0[axis]) for axis in range(2)]
        self.com = np.column_stack([states[0][0][:, 0], states[1][0][:, 0],
                                    np.full(n, com0[2])])
        self.com_velocity = np.column_stack([states[0][0][:, 1], states[1][0][:, 1]])
        self.zmp = np.column_stack([states[0][1], states[1][1]])
        # the pelvis under the planned COM: two passes of the whole-body COM offset
        offset = np.tile(com0 - base[0], (n, 1))
        for _ in range(3):
            self.pelvis = self.com - offset
            self.pelvis[:, 2] = base[0, 2]
            angles = self._leg_angles()
            configuration = {name: np.full(n, start[name][0]) for name in self.joint_names}
            configuration.update(angles)
            com = self.kin.com(self.pelvis, np.broadcast_to(np.eye(3), (n, 3, 3)), configuration)
            offset = com - self.pelvis
        self.com_error = np.max(np.abs(com[:, :2] - self.com[:, :2]))
        self.positions = np.column_stack([configuration[name] for name in self.joint_names])
        self.velocities = np.gradient(self.positions, s.plan_dt, axis=0)

    def _footsteps(self, feet0, com0):
        s = self.settings
        n = len(self.times)
        t = self.times
        zmp = np.empty((n, 2))
        feet = {side: np.tile(feet0[side], (n, 1)) for side in 'lr'}
        support = np.full(n, 'both', dtype=object)
        zmp[:] = com0[:2]
        t0 = s.settle
        phase = (t >= t0) & (t < t0 + s.shift)
        zmp[phase] = com0[:2] + min_jerk((t[phase] - t0) / s.shift)[:, None] * (
            feet0['l'][:2] - com0[:2])
        t0 += s.shift
        where = {side: feet0[side].copy() for side in 'lr'}
        stance, swing = 'l', 'r'
        self.footholds = []
        for i in range(1, s.steps + 1):
            last = i == s.steps
            target = where[swing].copy()
            target[0] = feet0[swing][0] + s.stride * (i - 1 if last else i)
            ss = (t >= t0) & (t < t0 + s.single_support)
            phase = (t[ss] - t0) / s.single_support
            blend = min_jerk(phase)[:, None]
            feet[swing][ss] = where[swing] + blend * (target - where[swing])
            feet[swing][ss, 2] += s.step_height * np.sin(math.pi * phase)
            zmp[ss] = where[stance][:2]
            support[ss] = stance
            t0 += s.single_support
            after = t >= t0
            feet[swing][after] = target
            where[swing] = target
            self.footholds.append((swing, target.copy(), t0))
            goal = (0.5 * (where['l'][:2] + where['r'][:2]) if last else target[:2])
            ds = (t >= t0) & (t < t0 + s.double_support)
            zmp[ds] = where[stance][:2] + min_jerk(
                (t[ds] - t0) / s.double_support)[:, None] * (goal - where[stance][:2])
            t0 += s.double_support
            zmp[t >= t0] = goal
            stance, swing = swing, stance
        self.zmp_ref, self.feet, self.support = zmp, feet, support

    def _leg_angles(self):
        angles = {}
        for side in 'lr':
            legs = leg_ik(self.legs[side], self.pelvis, self.feet[side])
            for k, joint in enumerate(LEG_JOINTS):
                angles[f'{side}_{joint}'] = legs[:, k]
        return angles

    def sample(self, t):
        """Return the planned (positions, velocities) at time t, s (held beyond the ends)."""
        x = min(max(t / self.settings.plan_dt, 0.0), len(self.times) - 1.0)
        i = min(int(x), len(self.times) - 2)
        f = x - i
        return ((1.0 - f) * self.positions[i] + f * self.positions[i + 1],
                (1.0 - f) * self.velocities[i] + f * self.velocities[i + 1])


# -- the controller ----------------------------------------------------------------------------
def joint_group(name):
    """Return the gain group of a joint name: 'hip', 'knee', 'ankle' or 'other'."""
    for group in ('hip', 'knee', 'ankle'):
        if group in name:
            return group
    return 'other'


class JointPD:
    """
    Each joint's PD in torque, turned into armature volts through its drive's datasheet.

    ``V = R tau / (Kt N eta) + Ke N qd*`` with ``tau = kp (q* - q) + kd (qd* - qd)``, clipped to
    the supply (the module docstring, "Drives").

    Args:
        model: the RobotModel, with a drive on every one of ``joint_names``.
        joint_names: the order of the vectors :meth:`volts` takes and returns.
        settings: GaitSettings (kp, kd per joint group).
        who: the controller's name, for the message naming joints without a drive.
    """

    def __init__(self, model, joint_names, settings, who):
        drives = {d.joint: d for d in model.drives}
        missing = [name for name in joint_names if name not in drives]
        if missing:
            raise ValueError(f'{who}: joints without a drive: ' + ', '.join(missing))
        d = [drives[name] for name in joint_names]
        groups = [joint_group(name) for name in joint_names]
        self.volts_per_newton_metre = np.array(
            [x.resistance / (x.torque_constant * x.gear_ratio * x.efficiency) for x in d])
        self.back_emf = np.array([x.back_emf_constant * x.gear_ratio for x in d])
        self.supply = np.array([x.supply_voltage for x in d])
        self.kp = np.array([settings.kp[g] for g in groups])
        self.kd = np.array([settings.kd[g] for g in groups])

    def volts(self, target, speed, positions, velocities):
        """Return the armature voltages (n,), V, for targets and measured joint states."""
        torque = self.kp * (target - positions) + self.kd * (speed - velocities)
        volts = self.volts_per_newton_metre * torque + self.back_emf * speed
        return np.clip(volts, -self.supply, self.supply)


class WalkingController:
    """
    Joint PD on the drives along a WalkingPlan: joint positions and velocities in, volts out.

    Args:
        model: the humanoid's RobotModel, with a drive on every joint.
        config: its SimConfig (initial positions and base pose).
        settings: GaitSettings.
    """

    def __init__(self, model, config, settings=None):
        self.settings = settings or GaitSettings()
        self.plan = WalkingPlan(model, dict(config.initial_positions),
                                config.base_pose.position, self.settings)
        self.joint_names = self.plan.joint_names
        self.pd = JointPD(model, self.joint_names, self.settings, 'WalkingController')
        self._start = None

    def duration(self):
        """Return the plan's length, s."""
        return self.plan.times[-1]

    def restart(self):
        """Start over: the next call's positions are the new start pose."""
        self._start = None

    def phase(self, t):
        """Return what the plan does at time t: 'standing up', 'shifting weight', ..."""
        s = self.settings
        if t < s.settle:
            return 'standing up'
        if t < s.settle + s.shift:
            return 'shifting weight'
        step = (t - s.settle - s.shift) / (s.single_support + s.double_support)
        if step < s.steps:
            return f'step {int(step) + 1} of {s.steps}'
        return 'standing'

    def voltages(self, t, positions, velocities):
        """
        Return the armature voltage of every joint, V: shape (n,), ``joint_names`` order.

        The first call's positions are the start pose that standing up starts from.

        Args:
            t: s since the controller started.
            positions: (n,) measured, rad, in ``joint_names`` order.
            velocities: (n,) measured, rad/s, in ``joint_names`` order.
        """
        target, speed = self.plan.sample(t)
        if self._start is None:
            self._start = np.array(positions, dtype=float)
        if t < self.settings.settle:
            # stand up: from the measured start pose into the plan's
            blend = float(min_jerk(t / self.settings.settle))
            target = self._start + blend * (target - self._start)
            speed = blend * speed
        return self.pd.volts(target, speed, positions, velocities)


def centre_of_pressure(readings, sole_height):
    """
    Return the centre of pressure (3,) and total normal force from ankle force-torque sensors.

    Each reading is the ground's push on a foot about the sensor origin, in the world axes
    (:func:`ankle_readings`): for a sole plane ``sole_height`` below the sensor (m), the
    ground force ``f`` acts at ``p`` with ``tau = (p - s) x f``, so
    ``p_x = s_x - (tau_y + h f_x) / f_z`` and ``p_y = s_y + (tau_x - h f_y) / f_z``.
    Feet in the air (f_z <= 1 N) are left out.

    Args:
        readings: iterable of (sensor origin (3,), force (3,), torque (3,)), world, m, N, N m.
        sole_height: m.

    Returns:
        (cop (3,) world m, or NaNs when no foot carries load; total vertical force, N).
    """
    h = sole_height
    total, moment = 0.0, np.zeros(2)
    for origin, force, torque in readings:
        fz = force[2]
        if fz <= 1.0:
            continue
        x = origin[0] - (torque[1] + h * force[0]) / fz
        y = origin[1] + (torque[0] - h * force[1]) / fz
        total += fz
        moment += fz * np.array([x, y])
    if total <= 0.0:
        return np.full(3, np.nan), 0.0
    return np.array([moment[0] / total, moment[1] / total, np.nan]), total


ANKLE_SENSORS = {'l': 'l_ankle_ft', 'r': 'r_ankle_ft'}
SOLE_HEIGHT = -SOLE[2]  # m, the sole plane below the ankle axes (the sensors' origin)


def ankle_readings(sim, exact=False):
    """
    Return the ground's push on each foot from its ankle sensor, world axes: [(origin, f, tau)].

    A sensor reads what the foot passes to the leg: the ground's push less the foot's weight
    (and its inertia, neglected here: a foot on the ground hardly accelerates).  Adding the
    weight back, ``f = f_s - m g`` and ``tau = tau_s - r x m g`` about the sensor origin, with
    ``r`` the foot's centre of mass from it.  The latest samples (the sensors' rate, noise and
    filter), or with ``exact`` what the joints transmitted in the last step.
    """
    readings = []
    gravity = np.asarray(sim.config.gravity, dtype=float)
    for side, sensor in ANKLE_SENSORS.items():
        origin, quat = sim.link_pose(f'{side}_foot')
        rot = quat_to_matrix(quat)
        wrench = sim.sensors.measure(sensor) if exact else sim.sensors.wrench(sensor)
        body = sim.model.bodies[sim.model.links[f'{side}_foot'].body]
        weight = body.mass * gravity
        lever = rot @ np.asarray(body.com)          # the foot frame is its body frame
        readings.append((origin, rot @ wrench[:3] - weight,
                         rot @ wrench[3:] - np.cross(lever, weight)))
    return readings


def run_headless(sim, controller, seconds, period=5, record=None, on_step=None):
    """
    Drive a Simulator with a WalkingController, as the node and the controller do over DDS.

    Every ``period`` physics steps the controller reads the joint positions and velocities
    and sets the voltages, held until its next reading (the node's publish period: 5 steps =
    200 Hz at dt 1 ms).

    Args:
        sim: a Simulator of the humanoid (its joints in the controller's order).
        controller: WalkingController.
        seconds: simulated time, s.
        record: None, or a dict that receives per-period lists 'time' (s), 'pelvis' (3,) m,
            'pelvis_quat' (4,) wxyz, 'cop' (3,) m and 'normal' (N) from the ankle sensors
            (:func:`centre_of_pressure`), 'soles' {'l', 'r'}: (3,) m.
        on_step: None, or f(sim, t) called before each controller reading (pushes, checks).

    Returns:
        the Simulator.
    """
    def command(sim, t):
        return controller.voltages(t, sim.joint_positions(), sim.joint_velocities())

    def after(sim):
        if record is not None:
            cop, normal = centre_of_pressure(ankle_readings(sim), SOLE_HEIGHT)
            record.setdefault('time', []).append(sim.time)
            record.setdefault('pelvis', []).append(sim.link_pose('pelvis')[0].copy())
            record.setdefault('pelvis_quat', []).append(sim.link_pose('pelvis')[1].copy())
            record.setdefault('cop', []).append(cop)
            record.setdefault('normal', []).append(normal)
            record.setdefault('soles', []).append(
                {side: sole_centre(sim, side) for side in 'lr'})
    return run_periods(sim, controller.joint_names, seconds, period, command, on_step=on_step,
                       after=after, who='run_headless')


def run_periods(sim, joint_names, seconds, period, command, on_step=None, after=None,
                who='run_periods'):
    """
    Step a Simulator in control periods: each period ``command(sim, t)`` gives the volts.

    ``t`` is the time since the start, s; the volts (in ``joint_names`` order, which must be
    the simulator's) are held for ``period`` steps; ``on_step(sim, t)`` runs before each
    command, ``after(sim)`` after each period's steps.  Stops early on divergence.

    Returns:
        the Simulator.
    """
    names = list(joint_names)
    if list(sim.joint_names) != names:
        raise ValueError(f'{who}: the simulator and the controller order joints differently')
    steps = int(round(seconds / sim.dt))
    for k in range(0, steps, period):
        t = k * sim.dt
        if on_step is not None:
            on_step(sim, t)
        volts = command(sim, t)
        sim.set_voltages(dict(zip(names, volts)))
        sim.step(min(period, steps - k))
        if after is not None:
            after(sim)
        if sim.diverged:
            break
    return sim


def sole_centre(sim, side, sole=SOLE):
    """Return a foot's sole centre (3,), world, m."""
    origin, quat = sim.link_pose(f'{side}_foot')
    return origin + quat_to_matrix(quat) @ np.asarray(sole)


#: Fallen: the pelvis this far below its start, m, or tilted more than this, rad.
FALL_DROP, FALL_TILT = 0.15, math.radians(30.0)


def fallen(start_height, height, qx, qy):
    """
    Return True when the pelvis is FALL_DROP below its start or tilted more than FALL_TILT.

    The tilt of its z axis from its quaternion's x and y: cos(tilt) = 1 - 2 (qx^2 + qy^2).
    """
    return (height < start_height - FALL_DROP
            or 1.0 - 2.0 * (qx * qx + qy * qy) < math.cos(FALL_TILT))
