"""
The valve scenario's controller: the humanoid stands, grasps a hand wheel and turns it.

No rclpy and no simulator here (like walking.py and balance.py): the controller sees what the
robot's sensors give, a :class:`balance.Measurements` per control period with the two wrist
force-torque sensors in ``wrists``, and returns armature voltages and grasp requests.  The
method (docs/valve.md, "The controller"):

1. **Balance**: balance.py's standing controller (the walk with no steps: estimator, DCM
   feedback, the pelvis placed under the centre of mass of the pose it commands, arms
   included) keeps the legs; the arms' joint targets are this module's.
2. **Arms**: each hand's grasp point follows a Cartesian reference (world frame, the valve's
   position given as the robot's perception would give it); inverse kinematics of the arm
   (shoulder pitch, shoulder roll, elbow; the wrist yaw held at 0) in the pelvis frame as the
   estimator sees it; a joint PD in volts with feed-forward torques for the arm's own weight
   and for the force the hand should push with (``J^T f``).
3. **Reach**: a minimum-jerk move in joint space from where the arm is to the IK solution 6 cm
   in front of its rim point, then a straight Cartesian path (IK at every period) onto the
   rim; an integral of the hand's position error (forward kinematics of the encoders) takes
   out what the model leaves (sag, the torso's lean).
4. **Grasp**: within ``grasp_distance`` of the rim the controller asks for the grasp (the
   caller switches it: ``sim.grasps`` or the node's ``grasp/NAME`` service) and waits for the
   answer.
5. **Turn** with wrist force feedback.  The rim reference angle advances on a trapezoidal
   speed profile; each hand's reference is its rim point at that angle plus an admittance
   offset integrated from its wrist sensor's force (the hand's weight taken out): radially,
   the hand's squeeze (the force it pushes towards the centre with) is held at ``squeeze``;
   tangentially each hand's share is held at the mean of the two (the arms never push against
   each other through the wheel); along the axis the force is held at 0.  The valve's torque
   is the sum of the tangential forces times the radius; beyond ``max_torque`` the reference
   backs off, and when the valve has not moved for ``stall_time`` the turn stops with a log
   line and the hands let go.
6. **Release**: the grasps are switched off and the hands go back to their start.
"""
from dataclasses import dataclass, field
import math
import time

import numpy as np

from .balance import BalancingWalkingController, sensor_measurements
from .walking import (ankle_readings, centre_of_pressure, cross_matrix, fallen, G,
                      GaitSettings, min_jerk, SOLE, SOLE_HEIGHT)
from ..errors import CommandError
from ..rotations import quat_to_matrix

ARM_JOINTS = ('shoulder_pitch', 'shoulder_roll', 'elbow', 'wrist_yaw')
#: Where the inverse kinematics of the reach starts (the right arm's; the left's mirrored): arm
#: poses forward with the elbows bent (rad: shoulder pitch, shoulder roll, elbow, wrist yaw);
#: the best of them is taken.
REACH_SEEDS = ((-0.4, 0.3, -1.6, 0.0), (-0.8, 0.6, -2.0, 0.0), (-1.2, 0.9, -1.8, 0.0),
               (-0.2, 0.2, -1.0, 0.0), (-1.5, 0.3, -1.2, 0.0), (-0.6, 1.1, -2.2, 0.0))


@dataclass
class ValveSettings:
    """
    The valve as the robot knows it and the task's parameters (docs/valve.md).

    Attributes:
        centre: (3,) the wheel's centre, world, m (at the start; the robot's perception).
        axis: (3,) its axis, world (positive turns are right-handed about it).
        radius: m, the rim's.
        grasp_point: (3,) the hand's grasp point in the hand frame, m (the config's grasps).
        start_angles: {'l', 'r'} -> rad, where each hand grasps the rim: the angle from the
            wheel's top (+z) about ``axis``.
        turn: rad, how far to turn the valve.
        squeeze: N, the force each hand pushes towards the wheel's centre with while turning.
        max_torque: N m, the most the arms turn the valve with.
        speed, acceleration: rad/s, rad/s^2, the turn's speed profile.
        settle: s standing before the reach; reach, approach: s of the two reach segments.
        approach_distance: m, where the reach's first segment ends in front of the rim.
        grasp_distance: m, the hand is asked to grasp once this close to its rim point.
        grasp_timeout: s, how long a hand may take to get there (it then asks anyway; 1 s
            later without both grasps the task is given up).
        grasp_retry: s between a refused grasp and the next request (a request without an
            answer for twice that is asked again).
        hold: s, holding still before and after the turn (the squeeze builds up over the
            first).
        retract: s, back to the start pose after letting go.
        stall_time: s without progress at the torque limit before giving up.
        back_off: rad/s per N m, how fast the turn's reference backs off beyond max_torque.
        radial_gain, tangential_gain, axial_gain: m/s per N, the admittances.
        reach_gain: 1/s, the integral of the hand's position error while reaching.
        offset_limit: m, the largest admittance offset.
        pose_filter: s, time constant of the low-pass on the estimated pelvis pose the arms
            are placed in.
        arm_kp: N m/rad, the joint PD's stiffness of the arms (and the waist and neck: the
            'other' group of GaitSettings.kp); 1000 (the walk's) rang the grasped arms at 20 Hz
            when the voltages came one period late.
        grasp_names: {'l', 'r'} -> the grasps' names (config ``grasps``).
        sensors: {'l', 'r'} -> the wrist force-torque sensors' names.
    """

    centre: tuple = (0.38, 0.0, 1.30)
    axis: tuple = (1.0, 0.0, 0.0)
    radius: float = 0.2
    grasp_point: tuple = (0.0, 0.0, -0.09)
    start_angles: dict = field(default_factory=lambda: {'l': math.pi, 'r': 0.0})
    turn: float = math.radians(185.0)
    squeeze: float = 20.0
    max_torque: float = 5.0
    speed: float = 0.6
    acceleration: float = 0.6
    settle: float = 1.0
    reach: float = 1.8
    approach: float = 0.6
    approach_distance: float = 0.06
    grasp_distance: float = 0.003
    grasp_timeout: float = 1.5
    grasp_retry: float = 0.25
    hold: float = 0.5
    retract: float = 2.0
    stall_time: float = 1.0
    back_off: float = 0.05
    radial_gain: float = 1.5e-3
    tangential_gain: float = 1.5e-3
    axial_gain: float = 1.5e-3
    reach_gain: float = 4.0
    offset_limit: float = 0.04
    pose_filter: float = 0.1
    arm_kp: float = 600.0
    grasp_names: dict = field(default_factory=lambda: {'l': 'l_grasp', 'r': 'r_grasp'})
    sensors: dict = field(default_factory=lambda: {'l': 'l_wrist_ft', 'r': 'r_wrist_ft'})


class ArmChain:
    """
    One arm of the bundled humanoid from its model: forward kinematics, Jacobian, IK, weight.

    The chain is pelvis -> waist_yaw -> torso -> shoulder pitch, shoulder roll, elbow, wrist
    yaw -> hand; everything here is in the pelvis frame.

    Args:
        model: the humanoid's RobotModel.
        side: 'l' or 'r'.
        point: (3,) the grasp point in the hand frame, m.
    """

    def __init__(self, model, side, point):
        joints = {j.name: j for j in model.joints}
        names = ['waist_yaw'] + [f'{side}_{j}' for j in ARM_JOINTS]
        self.names = names
        self.steps = []
        for name in names:
            j = joints[name]
            axis = np.asarray(j.axis, float)
            x = cross_matrix(axis)
            self.steps.append((quat_to_matrix(j.parent_quat), np.asarray(j.parent_pos, float),
                               quat_to_matrix(j.child_quat).T, np.asarray(j.child_pos, float),
                               axis, x, x @ x))
        bodies = model.bodies
        self.mass = np.array([bodies[joints[n].child_body].mass for n in names])
        self.com = [np.asarray(bodies[joints[n].child_body].com, float) for n in names]
        self.point = np.asarray(point, dtype=float)
        self.lower = np.array([joints[n].lower for n in names[1:]])
        self.upper = np.array([joints[n].upper for n in names[1:]])
        self.hand_mass = float(self.mass[-1])

    def forward(self, waist, q):
        """
        Return the chain at joint angles, pelvis frame.

        Returns:
            (point (3,), hand rotation (3, 3), origins (4, 3) and axes (4, 3) of the four arm
            joints, body COMs (5, 3): torso, shoulder link, upper arm, forearm, hand).
        """
        rot = np.eye(3)
        pos = np.zeros(3)
        origins, axes, coms = [], [], []
        for k, (r_pj, p_pos, r_cj_t, c_pos, axis, x, x2) in enumerate(self.steps):
            angle = waist if k == 0 else q[k - 1]
            frame = rot @ r_pj
            origin = pos + rot @ p_pos
            a = frame @ axis
            r_axis = _EYE + math.sin(angle) * x + (1.0 - math.cos(angle)) * x2
            rot = frame @ r_axis @ r_cj_t
            pos = origin - rot @ c_pos
            if k > 0:
                origins.append(origin)
                axes.append(a)
            coms.append(pos + rot @ self.com[k])
        return pos + rot @ self.point, rot, np.array(origins), np.array(axes), np.array(coms)

    @staticmethod
    def jacobian(point, origins, axes):
        """Return the grasp point's linear Jacobian (3, 4) over the four arm joints."""
        lever = point - origins
        return np.stack([axes[:, 1] * lever[:, 2] - axes[:, 2] * lever[:, 1],
                         axes[:, 2] * lever[:, 0] - axes[:, 0] * lever[:, 2],
                         axes[:, 0] * lever[:, 1] - axes[:, 1] * lever[:, 0]])

    def inverse(self, target, waist, q0, iterations=6):
        """
        Return arm angles (4,) that put the grasp point at ``target`` (pelvis frame, m).

        Damped Newton steps over shoulder pitch, roll and elbow from ``q0``, within the joint
        limits; the wrist yaw keeps its value.
        """
        q = np.array(q0, dtype=float)
        for _ in range(iterations):
            point, _, origins, axes, _ = self.forward(waist, q)
            error = target - point
            if error @ error < 1e-12:
                break
            jac = self.jacobian(point, origins, axes)[:, :3]
            step = jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(3), error)
            largest = np.abs(step).max()
            if largest > 0.2:
                step *= 0.2 / largest   # small steps: Newton's full ones jump branches
            q[:3] = np.clip(q[:3] + step, self.lower[:3], self.upper[:3])
        return q

    def reach(self, target, waist, side):
        """Return arm angles (4,) for ``target`` (pelvis frame, m): the best of REACH_SEEDS."""
        best = None
        for seed in REACH_SEEDS:
            seed = np.array(seed)
            if side == 'l':
                seed[1] = -seed[1]
            q = self.inverse(target, waist, seed, iterations=60)
            error = np.linalg.norm(self.forward(waist, q)[0] - target)
            if best is None or error < best[0]:
                best = (error, q)
        return best[1]

    def weight_torques(self, gravity, coms, origins, axes):
        """Return the joint torques (4,), N m, that hold the arm's links up against gravity."""
        # the links beyond joint i weigh M_i and have their centre at S_i / M_i:
        # tau_i = -a_i . ((S_i - M_i o_i) x g)
        first = self.mass[:, None] * coms
        beyond_mass = np.cumsum(self.mass[::-1])[::-1]
        beyond = np.cumsum(first[::-1], axis=0)[::-1]
        lever = beyond[1:] - beyond_mass[1:, None] * origins
        return -np.einsum('ij,ij->i', axes, _cross_rows(lever, gravity))


class ValveController:
    """
    Stand, reach the valve's rim with both hands, grasp, turn it and let go.

    Measurements in, volts and grasp requests out.

    Args:
        model: the humanoid's RobotModel (its own description, without the valve).
        config: its SimConfig (initial positions and base pose).
        valve: ValveSettings.
        balance: BalanceSettings for the standing controller.

    Attributes:
        joint_names: the order of the positions in and the volts out.
        requests: grasp requests for the caller to carry out, in order: ('grasp' or 'release',
            grasp name); the caller empties it and answers a grasp with :meth:`grasp_answer`.
        log: (t, line) of what the controller did (phases, grasps, a stall).
        status: the latest figures: 'phase', 'angle' (rad, the valve's turn as the hands'
            kinematics give it), 'squeeze' {'l', 'r'} N, 'tangential' {'l', 'r'} N,
            'torque' N m, 'axial' {'l', 'r'} N.
    """

    def __init__(self, model, config, valve=None, balance=None):
        self.valve = v = valve or ValveSettings()
        gait = GaitSettings.for_steps(0, settle=v.settle)
        gait.kp = dict(gait.kp, other=v.arm_kp)
        self.body = BalancingWalkingController(model, config, gait, balance)
        self.joint_names = self.body.joint_names
        index = {name: i for i, name in enumerate(self.joint_names)}
        self.arms = {side: ArmChain(model, side, v.grasp_point) for side in 'lr'}
        self.columns = {side: [index[f'{side}_{j}'] for j in ARM_JOINTS] for side in 'lr'}
        self.waist = index['waist_yaw']
        self.centre = np.asarray(v.centre, dtype=float)
        axis = np.asarray(v.axis, dtype=float)
        self.axis = axis / np.linalg.norm(axis)
        # the rim's in-plane directions: angle 0 at the top, turning about the axis
        up = np.array([0.0, 0.0, 1.0]) - self.axis[2] * self.axis
        self.up = up / np.linalg.norm(up)
        self.side_dir = np.cross(self.axis, self.up)
        self.restart()

    # -- bookkeeping --------------------------------------------------------------------------
    def restart(self):
        """Start over: the next call's measurements are the new start."""
        self.body.restart()
        self.requests = []
        self.log = []
        self.state = 'standing up'
        self.state_time = 0.0
        self.grasped = {'l': False, 'r': False}
        self.asked = {'l': None, 'r': None}
        self.pending = {'l': False, 'r': False}
        self.arm_q = None
        self.start_q = None
        self.start_points = None
        self.integral = {side: np.zeros(3) for side in 'lr'}
        self.reach_q = None
        self.joint_goal = {'l': None, 'r': None}
        self._pose_filtered = None
        self._back_q = None
        self.grasp_time = 0.0
        self.nominal = {}
        self._last_nominal = {}
        self._last_goal = {}
        self.offset = {side: np.zeros(3) for side in 'lr'}
        self.gaps = {}
        self.angle_cmd = 0.0
        self.speed_cmd = 0.0
        self.progress_time = 0.0
        self.progress_angle = 0.0
        self.last_t = None
        self.stopped = None
        self.status = {'phase': self.state, 'angle': 0.0, 'torque': 0.0,
                       'squeeze': {'l': 0.0, 'r': 0.0}, 'tangential': {'l': 0.0, 'r': 0.0},
                       'axial': {'l': 0.0, 'r': 0.0}}

    def duration(self):
        """Return the nominal task's length, s (a slow valve makes it longer)."""
        v = self.valve
        turn = v.turn / v.speed + v.speed / v.acceleration
        return (v.settle + v.reach + v.approach + 0.3 + 2 * v.hold + turn + v.retract + 0.5)

    def phase(self, t=None):
        """Return what the controller does now: 'reaching', 'turning', ..."""
        return self.state

    def _enter(self, state, t, note=None):
        self.state = state
        self.state_time = t
        self.log.append((t, note or state))

    def grasp_answer(self, name, ok, message=''):
        """Tell the controller how its grasp request went (``message``: why it was refused)."""
        for side, grasp in self.valve.grasp_names.items():
            if grasp == name:
                self.grasped[side] = bool(ok)
                self.pending[side] = False
                if not ok:
                    gap = self.gaps.get(side)
                    seen = ('' if gap is None else
                            f' (its hand {1000.0 * gap:.1f} mm from the rim as this controller '
                            'measures it)')
                    self.log.append((self.last_t or 0.0, f'grasp {name} refused{seen}: {message}'))

    def _in_pelvis(self, point):
        """Return a world point in the pelvis frame (the estimator's pose)."""
        rot, base = self._pose
        return rot.T @ (point - base)

    def rim_point(self, side, angle):
        """Return the world rim point (3,) of a hand at valve turn ``angle`` (rad)."""
        phi = self.valve.start_angles[side] + angle
        radial = math.cos(phi) * self.up + math.sin(phi) * self.side_dir
        return self.centre + self.valve.radius * radial

    # -- the hands ----------------------------------------------------------------------------
    def _hand_forces(self, side, m, rot, point_world, hand_rot_world):
        """Return the force (3,), world, N the hand pushes the rim with (its weight out)."""
        wrench = np.asarray(m.wrists[side], dtype=float)
        weight = self.arms[side].hand_mass * np.array([0.0, 0.0, -G])
        return weight - hand_rot_world @ wrench[:3]

    def _frames(self, point):
        """Return (outward radial, tangential (positive turn), axis) unit vectors at a point."""
        rel = point - self.centre
        radial = rel - self.axis * (self.axis @ rel)
        radial = radial / max(np.linalg.norm(radial), 1e-9)
        return radial, np.cross(self.axis, radial), self.axis

    def voltages(self, m):
        """
        Return the armature voltage of every joint, V: shape (n,), ``joint_names`` order.

        Args:
            m: balance.Measurements of this period, with ``wrists`` {'l', 'r'} -> (6,) the
                wrist sensors' readings (hand frame, what the hand passes to the forearm).
        """
        v = self.valve
        t = m.t
        dt = 0.0 if self.last_t is None else max(t - self.last_t, 0.0)
        self.last_t = t
        q = np.asarray(m.positions, dtype=float)
        est = self.body.estimator
        if est.t is None:
            rot = np.eye(3)
            base = self.body.base.copy()
        else:
            rot, base = est.rot, est.position
        if self._pose_filtered is None or dt <= 0.0:
            self._pose_filtered = (rot.copy(), base.copy())
        else:
            # the arms work in a low-passed pelvis pose: the estimate's period-to-period
            # jitter (the IMU's noise) would be joint-target jitter, and through the drives'
            # back-EMF feed-forward torque jitter that the grasp turns into force jitter
            alpha = min(1.0, dt / v.pose_filter)
            rot_f, base_f = self._pose_filtered
            rot_f = rot_f + alpha * (rot - rot_f)
            u, _, vt = np.linalg.svd(rot_f)
            self._pose_filtered = (u @ vt, base_f + alpha * (base - base_f))
        rot, base = self._pose_filtered
        gravity = rot.T @ np.array([0.0, 0.0, -G])
        self._pose = (rot, base)
        waist = q[self.waist]
        if self.start_q is None:
            self.start_q = {side: q[self.columns[side]].copy() for side in 'lr'}
            self.arm_q = {side: self.start_q[side].copy() for side in 'lr'}
            self.start_points = {side: base + rot @ self.arms[side].forward(
                waist, self.start_q[side])[0] for side in 'lr'}
        # measured hands: forward kinematics of the encoders, in the estimated pelvis pose
        meas = {}
        for side in 'lr':
            point, hand_rot, origins, axes, coms = self.arms[side].forward(
                waist, q[self.columns[side]])
            meas[side] = (base + rot @ point, rot @ hand_rot, origins, axes, coms, point)
        forces = {side: self._hand_forces(side, m, rot, meas[side][0], meas[side][1])
                  if m.wrists is not None else np.zeros(3) for side in 'lr'}
        self._update_status(meas, forces)
        references, push = self._references(t, dt, meas, forces)
        # arm targets and feed-forward torques
        targets, feed, speeds = {}, {}, {}
        for side in 'lr':
            arm = self.arms[side]
            if references[side] is None:
                self.arm_q[side] = self.joint_goal[side].copy()
            else:
                goal = rot.T @ (references[side] - base)
                self.arm_q[side] = arm.inverse(goal, waist, self.arm_q[side])
            self.arm_q[side][3] = 0.0
            targets[side] = self.arm_q[side]
            point, _, origins, axes, coms = arm.forward(waist, self.arm_q[side])
            speeds[side] = self._arm_speed(side, references[side], rot, point, origins, axes,
                                           dt)
            tau = arm.weight_torques(gravity, coms, origins, axes)
            tau += arm.jacobian(point, origins, axes).T @ (rot.T @ push[side])
            feed[side] = tau
        self.body.upper_body = {c: targets[side][k] for side in 'lr'
                                for k, c in enumerate(self.columns[side])}
        self.body.upper_body_speed = {c: speeds[side][k] for side in 'lr'
                                      for k, c in enumerate(self.columns[side])}
        volts = self.body.voltages(m)
        pd = self.body.pd
        for side in 'lr':
            cols = self.columns[side]
            volts[cols] += pd.volts_per_newton_metre[cols] * feed[side]
            volts[cols] = np.clip(volts[cols], -pd.supply[cols], pd.supply[cols])
        return volts

    def _arm_speed(self, side, reference, rot, point, origins, axes, dt):
        """
        Return the arm's joint speeds (4,) for the drives' back-EMF feed-forward, rad/s.

        The speed of the nominal path (the rim point or the reach, without the force loops'
        offsets), through the arm's Jacobian; in joint space the goal's rate.  Not the
        difference of consecutive targets: a grasped hand cannot follow a target's small
        step, and the feed-forward of its rate (the drive's back EMF over one period) is a
        torque 20 times the PD's for the same step, which rang the arms at 100 Hz.
        """
        if dt <= 0.0:
            return np.zeros(4)
        if reference is None:
            goal = self.joint_goal[side]
            last = self._last_goal.get(side)
            self._last_goal[side] = goal.copy()
            self._last_nominal.pop(side, None)
            return np.zeros(4) if last is None else (goal - last) / dt
        self._last_goal.pop(side, None)
        nominal = self.nominal.get(side, reference)
        last = self._last_nominal.get(side)
        self._last_nominal[side] = nominal.copy()
        if last is None:
            return np.zeros(4)
        velocity = rot.T @ (nominal - last) / dt
        jac = self.arms[side].jacobian(point, origins, axes)[:, :3]
        out = np.zeros(4)
        out[:3] = jac.T @ np.linalg.solve(jac @ jac.T + 1e-4 * np.eye(3), velocity)
        return out

    def _update_status(self, meas, forces):
        s = self.status
        s['phase'] = self.state
        angles = []
        for side in 'lr':
            radial, tangent, axis = self._frames(meas[side][0])
            f = forces[side]
            s['squeeze'][side] = float(-f @ radial)
            s['tangential'][side] = float(f @ tangent)
            s['axial'][side] = float(f @ axis)
            phi = math.atan2(radial @ self.side_dir, radial @ self.up)
            angles.append(_wrap(phi - self.valve.start_angles[side] - self.angle_cmd)
                          + self.angle_cmd)
        # the valve's turn as the hands on the rim give it; before both grasp, what it was
        s['angle'] = float(np.mean(angles)) if all(self.grasped.values()) else self.angle_cmd
        s['torque'] = self.valve.radius * (s['tangential']['l'] + s['tangential']['r'])

    # -- the task -----------------------------------------------------------------------------
    def _references(self, t, dt, meas, forces):
        """Advance the task; return each hand's reference point (world) and push (world N)."""
        v = self.valve
        since = t - self.state_time
        refs, push = {}, {'l': np.zeros(3), 'r': np.zeros(3)}
        state = self.state
        if state == 'standing up':
            refs = dict(self.start_points)
            if t >= v.settle:
                self._enter('reaching', t)
        elif state in ('reaching', 'approaching', 'grasping'):
            for side in 'lr':
                rim = self.rim_point(side, 0.0)
                radial, _, axis = self._frames(rim)
                front = rim - v.approach_distance * axis
                if state == 'reaching':
                    # in joint space, to the arm pose that puts the hand in front of the rim
                    if self.reach_q is None:
                        self.reach_q = {
                            hand: self.arms[hand].reach(
                                self._in_pelvis(self.rim_point(hand, 0.0)
                                                - v.approach_distance * self.axis),
                                0.0, hand) for hand in 'lr'}
                    s = float(min_jerk(min(since / v.reach, 1.0)))
                    self.joint_goal[side] = (self.start_q[side]
                                             + s * (self.reach_q[side] - self.start_q[side]))
                    refs[side] = None
                    continue
                else:
                    s = float(min_jerk(min(since / v.approach, 1.0))) \
                        if state == 'approaching' else 1.0
                    refs[side] = front + s * (rim - front)
                self.nominal[side] = refs[side]
                # take out the hand's steady error (sag, lean): integral of the error
                error = refs[side] - meas[side][0]
                self.integral[side] += dt * v.reach_gain * error
                refs[side] = refs[side] + self.integral[side]
            if state == 'reaching' and since >= v.reach:
                self._enter('approaching', t)
            elif state == 'approaching' and since >= v.approach:
                self._enter('grasping', t)
            elif state == 'grasping':
                for side in 'lr':
                    if self.pending[side] and t - self.asked[side] > 2.0 * v.grasp_retry:
                        # no answer (a request or its answer lost on the way): ask again
                        self.pending[side] = False
                        self.log.append((t, f'no answer to grasp {v.grasp_names[side]}; '
                                            'asking again'))
                    if self.grasped[side] or self.pending[side]:
                        continue
                    gap = np.linalg.norm(self.rim_point(side, 0.0) - meas[side][0])
                    self.gaps[side] = gap
                    ready = gap <= v.grasp_distance or since > v.grasp_timeout
                    last = self.asked[side]
                    if ready and (last is None or t - last >= v.grasp_retry):
                        # ask (again, after a refusal: the hand keeps closing in meanwhile)
                        self.asked[side] = t
                        self.pending[side] = True
                        self.requests.append(('grasp', v.grasp_names[side]))
                if all(self.grasped.values()):
                    self._enter('holding', t, 'grasped the rim with both hands')
                    self.grasp_time = t
                elif since > v.grasp_timeout + 1.0:
                    self.stopped = 'the hands could not grasp the rim'
                    self._enter('releasing', t, 'grasp failed: ' + self.stopped)
        if self.state in ('holding', 'turning', 'turned'):
            refs, push = self._turn(t, dt, meas, forces)
        elif self.state == 'releasing':
            for side in 'lr':
                if self.grasped[side]:
                    self.requests.append(('release', v.grasp_names[side]))
                    self.grasped[side] = False
            self._release_points = {side: meas[side][0].copy() for side in 'lr'}
            self._enter('retracting', t)
            refs = dict(self._release_points)
        if self.state == 'retracting':
            # straight back off the rim, then in joint space to the start pose
            since = t - self.state_time
            back = v.retract / 4.0
            for side in 'lr':
                if since < back:
                    s = float(min_jerk(since / back))
                    refs[side] = (self._release_points[side]
                                  - s * v.approach_distance * self.axis)
                    self.nominal[side] = refs[side]
                    self._back_q = None
                else:
                    if self._back_q is None:
                        self._back_q = {hand: self.arm_q[hand].copy() for hand in 'lr'}
                    s = float(min_jerk(min((since - back) / (v.retract - back), 1.0)))
                    self.joint_goal[side] = (self._back_q[side]
                                             + s * (self.start_q[side] - self._back_q[side]))
                    refs[side] = None
            if since >= v.retract:
                self._enter('done', t, 'back at the start pose')
        if self.state == 'done':
            for side in 'lr':
                self.joint_goal[side] = self.start_q[side].copy()
                refs[side] = None
        return refs, push

    def _turn(self, t, dt, meas, forces):
        """Turn: hold, turn on the speed profile with the force loops, hold."""
        v = self.valve
        s = self.status
        since = t - self.state_time
        if self.state == 'holding' and since >= v.hold:
            self._enter('turning', t)
            self.progress_time, self.progress_angle = t, s['angle']
        elif self.state == 'turning':
            left = v.turn - self.angle_cmd
            speed = min(v.speed, self.speed_cmd + v.acceleration * dt,
                        math.sqrt(max(2.0 * v.acceleration * max(left, 0.0), 0.0)))
            over = s['torque'] - v.max_torque
            if over > 0.0:
                # back off: rad/s per N m over the limit, never far behind the hands
                speed = min(speed, -v.back_off * over)
            self.speed_cmd = speed
            self.angle_cmd = min(max(self.angle_cmd + speed * dt, s['angle'] - BEHIND), v.turn)
            if s['angle'] > self.progress_angle + math.radians(2.0):
                self.progress_time, self.progress_angle = t, s['angle']
            if left <= 1e-4:
                self._enter('turned', t, f'turned the valve {math.degrees(s["angle"]):.0f} deg')
            elif t - self.progress_time > v.stall_time and over > -0.05 * v.max_torque:
                self.stopped = (f'the valve does not turn at {v.max_torque:.1f} N m, the most '
                                'the arms give (ValveSettings.max_torque)')
                self._enter('releasing', t,
                            f'turn stopped at {math.degrees(s["angle"]):.0f} deg: '
                            + self.stopped)
        elif self.state == 'turned' and since >= v.hold:
            self._enter('releasing', t)
        refs, push = {}, {}
        mean_tangential = 0.5 * (s['tangential']['l'] + s['tangential']['r'])
        # the squeeze builds up over the hold after the grasp (a step would ring the arms)
        squeeze = v.squeeze * min(1.0, (t - self.grasp_time) / max(v.hold, 1e-9))
        for side in 'lr':
            rim = self.rim_point(side, self.angle_cmd)
            radial, tangent, axis = self._frames(rim)
            if self.state != 'releasing':
                rate = (v.radial_gain * (s['squeeze'][side] - squeeze) * radial
                        - v.tangential_gain * (s['tangential'][side] - mean_tangential) * tangent
                        - v.axial_gain * s['axial'][side] * axis)
                offset = self.offset[side] + dt * rate
                norm = np.linalg.norm(offset)
                if norm > v.offset_limit:
                    offset *= v.offset_limit / norm
                self.offset[side] = offset
            refs[side] = rim + self.offset[side] + self.integral[side]
            self.nominal[side] = rim
            push[side] = -squeeze * radial
        return refs, push


_EYE = np.eye(3)
#: rad: how far the turn's reference may fall behind the valve as the hands give it.
BEHIND = math.radians(3.0)


def _cross_rows(rows, v):
    """Return each row (k, 3) crossed with the vector v (3,)."""
    return np.stack([rows[:, 1] * v[2] - rows[:, 2] * v[1], rows[:, 2] * v[0] - rows[:, 0] * v[2],
                     rows[:, 0] * v[1] - rows[:, 1] * v[0]], axis=1)


def _wrap(angle):
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


WRIST_SENSORS = (('l', 'l_wrist_ft'), ('r', 'r_wrist_ft'))


def valve_measurements(sim, imu='pelvis_imu', wrists=WRIST_SENSORS):
    """
    Return the Measurements the robot's sensors give now, the wrist sensors included.

    balance.sensor_measurements' encoders, IMU and ankle sensors, with ``wrists``: the wrist
    sensors' latest samples.
    """
    m = sensor_measurements(sim, imu)
    m.wrists = {side: sim.sensors.wrench(name) for side, name in wrists}
    return m


def run_valve(sim, controller, seconds, measure=valve_measurements, period=5, on_period=None,
              stop=None):
    """
    Drive a Simulator of the valve scenario with a ValveController.

    Every ``period`` physics steps the controller reads ``measure(sim)`` (its time replaced by
    the controller's: s since the start) and its volts are held until the next period; its
    grasp requests are carried out with ``sim.grasps`` and answered.  The simulator may have
    joints the controller does not command (the valve's).

    Args:
        on_period: None, or f(sim) called after each period's steps (records, checks).
        stop: None, or f(sim) -> bool: end the run early when it returns True.

    Returns:
        the Simulator.
    """
    names = list(controller.joint_names)
    missing = [n for n in names if n not in sim.joint_names]
    if missing:
        raise ValueError("run_valve: the simulator lacks the controller's joints "
                         + ', '.join(missing))
    columns = np.array([sim.joint_names.index(n) for n in names])
    start = sim.time
    steps = int(round(seconds / sim.dt))
    for k in range(0, steps, period):
        m = measure(sim)
        m.t = sim.time - start
        m.positions = np.asarray(m.positions)[columns]
        m.velocities = np.asarray(m.velocities)[columns]
        volts = controller.voltages(m)
        while controller.requests:
            action, name = controller.requests.pop(0)
            if action == 'grasp':
                try:
                    sim.grasps.grasp(name)
                    controller.grasp_answer(name, True)
                except CommandError as error:
                    controller.grasp_answer(name, False, str(error))
            else:
                sim.grasps.release(name)
        sim.set_voltages(dict(zip(names, volts)))
        sim.step(min(period, steps - k))
        if on_period is not None:
            on_period(sim)
        if sim.diverged or (stop is not None and stop(sim)):
            break
    return sim


class ScenarioRecorder:
    """
    The valve scenario's figures from the simulator's ground truth, once per control period.

    Call it after each period's steps (``run_valve``'s ``on_period``).  ``record`` receives
    lists: 'time' (s), 'wall' (s, perf_counter), 'state' (the controller's), 'angle' and
    'rate' (the valve joint's, rad,
    rad/s), 'squeeze' and 'tangential' ((2,) l, r: the grasp joints' forces, hand on rim,
    towards the centre and along the positive turn, N; NaN while released), 'wrist_tangential'
    ((2,) the same from the wrist sensors' exact readings with the hand's weight taken out, N),
    'wrist_squeeze', 'controller' (the controller's status: its 'squeeze', 'tangential',
    'torque' from its noisy sensor samples), 'pelvis' (3,), 'tilt' (rad), 'soles' ((2, 3) sole
    centres l, r), 'cop' (3,) from the ankle sensors.

    Args:
        sim: the scenario's Simulator (with the grasps and the valve joint).
        controller: the ValveController.
        record: None (a new dict) or a dict to fill.
    """

    def __init__(self, sim, controller, record=None):
        self.sim = sim
        self.controller = controller
        self.record = {} if record is None else record
        self.valve_column = sim.joint_names.index('valve')
        self.centre = controller.centre
        self.axis = controller.axis
        self.start_pelvis = sim.link_pose('pelvis')[0].copy()
        self.start_soles = self._soles()
        self.fell_at = None
        gravity = np.asarray(sim.config.gravity, dtype=float)
        self.hand_weight = {side: sim.model.bodies[sim.model.links[f'{side}_hand'].body].mass
                            * gravity for side in 'lr'}

    def _soles(self):
        out = []
        for side in 'lr':
            origin, quat = self.sim.link_pose(f'{side}_foot')
            out.append(origin + quat_to_matrix(quat) @ np.asarray(SOLE))
        return np.array(out)

    def _frames(self, point):
        rel = point - self.centre
        radial = rel - self.axis * (self.axis @ rel)
        radial /= max(np.linalg.norm(radial), 1e-12)
        return radial, np.cross(self.axis, radial)

    def __call__(self, sim):
        rec = self.record
        v = self.controller.valve
        squeeze, tangential, wrist_t, wrist_s = [], [], [], []
        for side in 'lr':
            origin, quat = sim.link_pose(f'{side}_hand')
            rot = quat_to_matrix(quat)
            point = origin + rot @ np.asarray(v.grasp_point)
            radial, tangent = self._frames(point)
            name = v.grasp_names[side]
            if sim.grasps.holding(name):
                on_rim = -sim.grasps.force(name)
                squeeze.append(-on_rim @ radial)
                tangential.append(on_rim @ tangent)
            else:
                squeeze.append(math.nan)
                tangential.append(math.nan)
            wrench = sim.sensors.measure(v.sensors[side])
            on_rim = self.hand_weight[side] - rot @ wrench[:3]
            wrist_t.append(on_rim @ tangent)
            wrist_s.append(-on_rim @ radial)
        where, quat = sim.link_pose('pelvis')
        tilt = math.acos(min(1.0, max(-1.0, 1.0 - 2.0 * (quat[1] ** 2 + quat[2] ** 2))))
        rec.setdefault('time', []).append(sim.time)
        rec.setdefault('wall', []).append(time.perf_counter())
        rec.setdefault('state', []).append(self.controller.state)
        rec.setdefault('angle', []).append(float(sim.joint_positions()[self.valve_column]))
        rec.setdefault('rate', []).append(float(sim.joint_velocities()[self.valve_column]))
        rec.setdefault('squeeze', []).append(np.array(squeeze))
        rec.setdefault('tangential', []).append(np.array(tangential))
        rec.setdefault('wrist_tangential', []).append(np.array(wrist_t))
        rec.setdefault('wrist_squeeze', []).append(np.array(wrist_s))
        status = self.controller.status
        rec.setdefault('controller', []).append(
            (status['squeeze']['l'], status['squeeze']['r'], status['tangential']['l'],
             status['tangential']['r'], status['torque']))
        rec.setdefault('pelvis', []).append(where.copy())
        rec.setdefault('tilt', []).append(tilt)
        rec.setdefault('soles', []).append(self._soles())
        rec.setdefault('cop', []).append(
            centre_of_pressure(ankle_readings(sim), SOLE_HEIGHT)[0])
        if self.fell_at is None and fallen(self.start_pelvis[2], where[2], quat[1], quat[2]):
            self.fell_at = sim.time

    def fell(self, sim=None):
        """Tell whether the robot has fallen (ends the run: ``run_valve``'s ``stop``)."""
        return self.fell_at is not None

    def status_line(self):
        """Return the latest figures: time, phase, valve angle, squeeze and hand forces."""
        rec = self.record
        s, tg = rec['squeeze'][-1], rec['tangential'][-1]
        forces = ('hands free' if np.isnan(s).all() else
                  f'squeeze {s[0]:5.1f} {s[1]:5.1f} N, tangential {tg[0]:5.1f} {tg[1]:5.1f} N')
        return (f't = {rec["time"][-1]:5.2f} s  {rec["state"][-1]:12s} valve '
                f'{math.degrees(rec["angle"][-1]):6.1f} deg, {forces}')

    def result(self):
        """
        Return the scenario's figures.

        Returns:
            dict: 'turned' (deg), 'squeeze' (N, mean of the two hands over the turn),
            'squeeze_rms' (N, its RMS error from the set value), 'slip' (m), 'tilt' (rad),
            'fell' (None or s).
        """
        rec = self.record
        turning = np.array([state == 'turning' for state in rec['state']])
        pair = np.nanmean(np.array(rec['squeeze'])[turning], axis=1) if turning.any() \
            else np.array([math.nan])
        soles = np.array(rec['soles'])
        slip = np.linalg.norm((soles - self.start_soles)[:, :, :2], axis=2).max()
        return {'turned': math.degrees(rec['angle'][-1]), 'squeeze': float(np.mean(pair)),
                'squeeze_rms': float(np.sqrt(np.mean((pair - self.controller.valve.squeeze)
                                                     ** 2))),
                'slip': float(slip), 'tilt': float(max(rec['tilt'])), 'fell': self.fell_at}
