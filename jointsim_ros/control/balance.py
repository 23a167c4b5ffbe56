"""
Balance for the bundled humanoid's walk: a state estimator and DCM feedback, on measurements only.

No rclpy and no simulator here (like walking.py): the controller sees what the robot's sensors
give, a :class:`Measurements` per control period (joint encoders, the pelvis IMU, the two ankle
force-torque sensors), and returns armature voltages.  The method:

1. **Estimator** (:class:`StateEstimator`).  Base orientation: the IMU's quaternion (its own
   filter's output) propagated with the gyro and pulled 5 % of the way towards the quaternion
   each period (a complementary filter).  Joint rates: differences of the encoder positions
   over the period (the simulator's joint velocities disagree with the positions' derivative
   while walking; ``differentiate_positions``).  Base position and velocity: leg odometry, the
   feet whose ankle sensors read more than 80 N upwards (world) being fixed where they
   touched down: the pelvis follows from forward kinematics of the measured angles and the
   estimated orientation; its velocity ``-R (w x r + r')`` about the loaded foot's centre of
   pressure (the point it rolls about), weighted by the feet's vertical forces.  Fused with the
   IMU's specific force (turned to the world, plus gravity) in a linear Kalman filter per axis
   (state position and velocity, the acceleration as input).  The whole-body centre of mass
   and its velocity follow from the same kinematics, and with them the divergent component of
   motion (DCM) ``xi = c + c' / omega``, ``omega = sqrt(g / z_c)``.
2. **Gait on line** (:class:`BalancingWalkingController`).  walking.py's footholds, timing,
   swing-foot paths and ZMP reference, but generated as the walk goes so that a foothold can
   move: the centre of mass reference is Kajita's preview controller stepped once per
   ``plan_dt`` over the ZMP reference of the footholds as they are now (landed feet where the
   estimator saw them land).
3. **Step adjustment**: while a foot swings, its foothold moves by the DCM error (measured less
   reference) beyond a 3 cm deadband, times ``exp(omega T_left)`` (its growth until landing),
   low-passed (30 ms), clipped to the leg's reach and never across the stance foot; frozen for
   the last 80 ms.  Standing, a recovery step starts when the DCM comes within 2 cm of the box
   around the soles, with the less loaded foot (or the one on the DCM's side), towards the
   capture point (the DCM at landing with the ZMP held at the stance sole's nearest point); the
   COM reference then restarts from the measured state.
4. **COM feedback** (sagittal): the COM command is shifted back by 0.3 x the DCM error
   (forward), clipped to 3 cm, so that gravity tips a robot on its toes back.
5. **Legs**: the pelvis is placed (level, facing +x) under the COM command by the whole-body
   COM offset of the last target pose; the stance legs' inverse kinematics uses the stance
   feet's estimated poses (position and yaw: the pelvis yaw is held relative to the feet,
   which is what keeps the walk straight).
6. **Drives**: walking.py's joint PD through the drive datasheet, unchanged; the target speed
   (back-EMF feed-forward) is the difference of consecutive targets.
"""
from dataclasses import dataclass
import math

import numpy as np

from .walking import (ankle_readings, centre_of_pressure, G, GaitSettings, JointPD,
                      Kinematics, leg_ik, LEG_JOINTS, min_jerk, PreviewController, run_periods,
                      SOLE, SOLE_HEIGHT, WalkingPlan)
from ..rotations import quat_conjugate, quat_multiply, quat_to_matrix


@dataclass
class Measurements:
    """
    What the robot's sensors give the controller in one period.

    Attributes:
        t: s since the controller started.
        positions, velocities: (n,) joint encoders, rad and rad/s, the controller's order.
        imu: (10,) the pelvis IMU: orientation quaternion in the world (w, x, y, z), angular
            velocity (3, rad/s, IMU frame), specific force (3, m/s^2, IMU frame: acceleration
            less gravity, +9.81 up at rest).
        wrenches: {'l': (6,), 'r': (6,)} the ankle force-torque sensors as
            ``sim.sensors.wrench('l_ankle_ft')`` gives them: force and torque the foot passes
            to the leg, foot frame.
        wrists: None, or {'l': (6,), 'r': (6,)} the wrist sensors the same way (what the hand
            passes to the forearm, hand frame; the valve controller reads them).
    """

    t: float
    positions: np.ndarray
    velocities: np.ndarray
    imu: np.ndarray
    wrenches: dict
    wrists: dict = None


@dataclass
class BalanceSettings:
    """
    The estimator's and the feedback's parameters (docs/humanoid.md, "Balance").

    Attributes:
        contact_force: N, vertical force (world) at which an ankle sensor's foot counts as
            down; it counts as up again below half of it.
        orientation_gain: per period, how far the gyro-propagated orientation is pulled
            towards the IMU's quaternion (0..1).
        accel_noise: m/s^2, the Kalman filter's process noise (the accelerometer's noise and
            what the model leaves out: impacts, the rigid-foot assumption).
        position_noise, velocity_noise: m, m/s, the leg odometry's measurement noise.
        step_gain: the fraction of the DCM error at landing that the foothold moves by.
        step_forward, step_backward, step_outward, step_inward: m, the largest adjustment.
        min_width: m, the smallest sideways distance of the sole centres (the feet never
            cross).
        step_filter: s, time constant of the adjusted foothold's low-pass.
        step_deadband: m, foothold adjustments below it are left out.
        step_freeze: s before landing after which the foothold stays.
        recovery_threshold: m, a DCM error (standing) beyond which a recovery step starts.
        recovery_margin: m, a recovery step starts when the DCM comes this close to the edge
            of the box around the soles (or leaves it).
        recovery_load: no recovery step with a foot carrying more than this fraction of the
            vertical force (a sideways push rolls the robot onto the foot it would step with).
        recovery_single_support: s, the recovery step's swing.
        dcm_deadband: m, the part of the DCM error that step adjustment ignores.
        com_gain: (x, y), the COM command's shift per metre of DCM error (backwards).
        com_limit: m, the largest shift; com_filter: s, its low-pass.
        swing_in_measured_frame: the swing leg's inverse kinematics in the measured pelvis
            orientation (off: it made the walk fall).
        pivot_on_cop: the odometry's velocity about a loaded foot's centre of pressure (else
            its sole centre).
        differentiate_positions: joint rates from the encoder positions (else the measured
            velocities).
        sole_half: m, half the sole's length and width.
    """

    contact_force: float = 80.0
    orientation_gain: float = 0.05
    accel_noise: float = 1.0
    position_noise: float = 0.003
    velocity_noise: float = 0.03
    step_gain: float = 1.0
    dcm_deadband: float = 0.03
    step_forward: float = 0.2
    step_backward: float = 0.12
    step_outward: float = 0.2
    step_inward: float = 0.06
    min_width: float = 0.15
    step_filter: float = 0.03
    step_deadband: float = 0.005
    step_freeze: float = 0.08
    recovery_threshold: float = 1.0
    recovery_margin: float = 0.02
    recovery_load: float = 0.6
    com_gain: tuple = (0.3, 0.0)
    com_limit: float = 0.03
    com_filter: float = 0.02
    recovery_single_support: float = 0.35
    swing_in_measured_frame: bool = False
    pivot_on_cop: bool = True
    differentiate_positions: bool = True
    sole_half: tuple = (0.12, 0.055)


def _cross(a, b):
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def _rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _yaw(rot):
    return math.atan2(rot[1, 0], rot[0, 0])


# -- the state estimator -----------------------------------------------------------------------
class StateEstimator:
    """
    Base orientation, position and velocity, centre of mass and DCM from the measurements.

    Args:
        chain: walking.Kinematics of the model (its joint order is the controller's).
        feet: {'l', 'r'} -> body index of each foot.
        base_position: (3,) the pelvis origin at the start, world, m (the robot is told where
            it starts, as walking.py's plan is).
        settings: BalanceSettings.
        imu_position: (3,) the IMU's origin in the pelvis frame, m.
        imu_quat: (4,) its orientation in the pelvis frame (w, x, y, z).
        sole: (3,) the sole centre in the foot frame, m.

    Attributes (after :meth:`update`): rot (3, 3) pelvis in the world; omega (3,) world rad/s;
    position, velocity (3,) pelvis origin, world; com, com_velocity (3,); feet {'l', 'r'} ->
    (3,) sole centres, world (the latched ones while down); foot_yaw; contact {'l', 'r'} bool;
    force {'l', 'r'} vertical N; sole_rel {'l', 'r'} -> (3,) sole centres in the pelvis frame.
    """

    def __init__(self, chain, feet, base_position, settings, imu_position=(0.0, 0.0, 0.0),
                 imu_quat=(1.0, 0.0, 0.0, 0.0), sole=SOLE):
        self.chain = chain
        self.foot_bodies = feet
        self.base_position = np.asarray(base_position, dtype=float)
        self.s = settings
        self.imu_position = np.asarray(imu_position, dtype=float)
        self.imu_quat = np.asarray(imu_quat, dtype=float)
        self.imu_rot = quat_to_matrix(self.imu_quat)
        self.sole = np.asarray(sole, dtype=float)
        self.reset()

    def reset(self):
        """Forget everything: the next update starts at the base position."""
        self.t = None
        self.quat = None
        self.position = self.base_position.copy()
        self.velocity = np.zeros(3)
        self.cov = np.diag([1e-6, 1e-4])
        self.contact = {'l': False, 'r': False}
        self.feet = {}
        self.foot_yaw = {'l': 0.0, 'r': 0.0}
        self.touchdown = {'l': -1.0, 'r': -1.0}
        self.last_positions = None

    def _pivot(self, wrench):
        """Return the centre of pressure in the foot frame from its ankle sensor (sole plane)."""
        w = np.asarray(wrench, dtype=float)
        h = -self.sole[2]
        if w[2] <= 1.0:
            return self.sole
        x = -(w[4] + h * w[0]) / w[2]
        y = (w[3] - h * w[1]) / w[2]
        half = self.s.sole_half
        return np.array([np.clip(x, self.sole[0] - half[0], self.sole[0] + half[0]),
                         np.clip(y, self.sole[1] - half[1], self.sole[1] + half[1]),
                         self.sole[2]])

    def update(self, m, extra_pose=None):
        """
        Fold in one period's Measurements; return self.

        ``extra_pose`` (n,) rad: a pose whose centre of mass (root frame) the same kinematics
        pass computes, as ``extra_com`` (the controller's last target, to save a pass).
        """
        s = self.s
        imu = np.asarray(m.imu, dtype=float)
        q_meas = quat_multiply(imu[:4], quat_conjugate(self.imu_quat))
        q_meas = q_meas / np.linalg.norm(q_meas)
        gyro = self.imu_rot @ imu[4:7]                 # pelvis frame
        specific = self.imu_rot @ imu[7:10]
        dt = 0.0 if self.t is None else max(m.t - self.t, 0.0)
        self.t = m.t
        # orientation: gyro propagation, pulled towards the IMU's quaternion
        if self.quat is None:
            q = q_meas
        else:
            angle = np.linalg.norm(gyro) * dt
            if angle > 0.0:
                axis = gyro / np.linalg.norm(gyro)
                dq = np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])
                q = quat_multiply(self.quat, dq)
            else:
                q = self.quat
            if np.dot(q, q_meas) < 0.0:
                q_meas = -q_meas
            q = q + s.orientation_gain * (q_meas - q)
        self.quat = q / np.linalg.norm(q)
        rot = quat_to_matrix(self.quat)
        self.rot = rot
        self.omega = rot @ gyro
        # kinematics: pose and the pose a little along the joint speeds
        qv = np.asarray(m.positions, dtype=float)
        if s.differentiate_positions:
            rates = (np.zeros_like(qv) if self.last_positions is None or dt <= 0.0
                     else (qv - self.last_positions) / dt)
        else:
            rates = np.asarray(m.velocities, dtype=float)
        self.last_positions = qv.copy()
        self.joint_rates = rates
        h = 1e-3
        extra = [] if extra_pose is None else [np.asarray(extra_pose, dtype=float)]
        pos, rots = self.chain.poses(np.stack([qv, qv + h * rates] + extra))
        com_rel = self.chain.com_of(pos, rots)
        self.extra_com = com_rel[2] if extra else None
        sole_rel, sole_vel, foot_rot = {}, {}, {}
        pivot_rel = {}
        for side, b in self.foot_bodies.items():
            point = self._pivot(m.wrenches[side]) if s.pivot_on_cop else self.sole
            soles = pos[b] + rots[b] @ point
            pivot_rel[side] = soles[0]
            sole_vel[side] = (soles[1] - soles[0]) / h
            sole_rel[side] = pos[b, 0] + rots[b, 0] @ self.sole
            foot_rot[side] = rots[b, 0]
        self.sole_rel = sole_rel
        self.com_rel = com_rel[0]
        com_rel_vel = (com_rel[1] - com_rel[0]) / h
        # contacts from the ankle sensors' vertical force (world)
        self.force = {}
        for side in 'lr':
            w = np.asarray(m.wrenches[side], dtype=float)
            self.force[side] = float((rot @ foot_rot[side] @ w[:3])[2])
        # Kalman prediction with the accelerometer (the IMU point's, turned to the pelvis's)
        r = self.imu_position
        accel = rot @ (specific - _cross(gyro, _cross(gyro, r))) + np.array([0, 0, -G])
        if dt > 0.0:
            f = np.array([[1.0, dt], [0.0, 1.0]])
            b = np.array([0.5 * dt * dt, dt])
            self.position = self.position + dt * self.velocity + b[0] * accel
            self.velocity = self.velocity + dt * accel
            self.cov = f @ self.cov @ f.T + s.accel_noise ** 2 * np.outer(b, b)
        world_rel = {side: rot @ sole_rel[side] for side in 'lr'}
        for side in 'lr':
            was = self.contact[side]
            force = self.force[side]
            now = force > (0.5 * s.contact_force if was else s.contact_force)
            if now and not was:
                # touched down: the sole stays where it is now
                self.feet[side] = self.position + world_rel[side]
                self.foot_yaw[side] = _yaw(rot @ foot_rot[side])
                self.touchdown[side] = m.t
            self.contact[side] = now
        # leg odometry: each loaded foot says where the pelvis is and how it moves
        weights = {side: self.force[side] for side in 'lr' if self.contact[side]}
        if weights:
            total = sum(weights.values())
            p_kin = sum(w * (self.feet[side] - world_rel[side])
                        for side, w in weights.items()) / total
            v_kin = sum(w * -(rot @ (_cross(gyro, pivot_rel[side]) + sole_vel[side]))
                        for side, w in weights.items()) / total
            noise = np.diag([s.position_noise ** 2, s.velocity_noise ** 2])
            gain = self.cov @ np.linalg.inv(self.cov + noise)
            innovation = np.stack([p_kin - self.position, v_kin - self.velocity])   # (2, 3)
            update = gain @ innovation
            self.position = self.position + update[0]
            self.velocity = self.velocity + update[1]
            self.cov = (np.eye(2) - gain) @ self.cov
            # the loaded feet move with the estimate's correction of position (odometry frame)
        for side in 'lr':
            if side not in self.feet:
                self.feet[side] = self.position + world_rel[side]
            elif not self.contact[side]:
                self.feet[side] = self.position + world_rel[side]
                self.foot_yaw[side] = _yaw(rot @ foot_rot[side])
        self.com = self.position + rot @ self.com_rel
        self.com_velocity = self.velocity + rot @ (_cross(gyro, self.com_rel) + com_rel_vel)
        return self


# -- the gait, made as it goes -----------------------------------------------------------------
@dataclass
class Step:
    """One step: ``side`` swings from ``lift`` to ``land`` (s) onto ``target`` (3,), world."""

    side: str
    lift: float
    land: float
    target: np.ndarray
    nominal: np.ndarray
    last: bool = False
    recovery: bool = False
    start: np.ndarray = None
    swing: np.ndarray = None        # the commanded sole centre while swinging
    landed: bool = False


class BalancingWalkingController:
    """
    The walk of walking.py with a state estimator and DCM feedback: Measurements in, volts out.

    Args:
        model: the humanoid's RobotModel, with a drive on every joint.
        config: its SimConfig (initial positions and base pose).
        settings: GaitSettings.
        balance: BalanceSettings.
        imu_position, imu_quat: the IMU's mounting in the pelvis frame (m; w, x, y, z).
    """

    def __init__(self, model, config, settings=None, balance=None,
                 imu_position=(0.0, 0.0, 0.0), imu_quat=(1.0, 0.0, 0.0, 0.0)):
        self.settings = s = settings or GaitSettings()
        self.balance = balance or BalanceSettings()
        self.plan = WalkingPlan(model, dict(config.initial_positions),
                                config.base_pose.position, s)
        self.joint_names = self.plan.joint_names
        self.index = {name: i for i, name in enumerate(self.joint_names)}
        self.pd = JointPD(model, self.joint_names, s, 'BalancingWalkingController')
        self.chain = Kinematics(model)    # its joint order is the plan's, this controller's
        bodies = {b.name: i for i, b in enumerate(model.bodies)}
        self.base = np.asarray(config.base_pose.position, dtype=float)
        feet = {side: bodies[f'{side}_foot'] for side in 'lr'}
        self.estimator = StateEstimator(self.chain, feet, self.base, self.balance,
                                        imu_position, imu_quat)
        self.feet0 = {side: self.plan.feet[side][0].copy() for side in 'lr'}
        self.com0 = self.plan.com[0].copy()
        self.height = self.com0[2] - 0.5 * (self.feet0['l'][2] + self.feet0['r'][2])
        self.omega = math.sqrt(G / self.height)
        self.preview = PreviewController(s.plan_dt, self.height, int(round(s.preview / s.plan_dt)),
                                         s.zmp_weight, s.jerk_weight)
        self.leg_columns = {side: [self.index[f'{side}_{j}'] for j in LEG_JOINTS]
                            for side in 'lr'}
        self.restart()

    # -- bookkeeping --------------------------------------------------------------------------
    def duration(self):
        """Return the nominal walk's length, s (recovery steps may add to it)."""
        return self.plan.times[-1]

    def restart(self):
        """Start over: the next call's measurements are the new start."""
        s = self.settings
        self._start = None
        self.estimator.reset()
        self.steps = []
        for side, target, land in self.plan.footholds:
            self.steps.append(Step(side, land - s.single_support, land, target.copy(),
                                   target.copy()))
        if self.steps:
            self.steps[-1].last = True
        self.planted = {side: self.feet0[side].copy() for side in 'lr'}
        self.planted_yaw = {'l': 0.0, 'r': 0.0}
        self.ref = np.zeros((2, 3))          # COM reference (x, y) x (c, c', c'') less com0
        self.ref_error = np.zeros(2)
        self.ref_time = 0.0
        self.zmp_ref = self.com0[:2].copy()
        self.dcm_error = np.zeros(2)
        self.com_shift = np.zeros(2)
        self._period = 0.0
        self.rest = self.com0[:2].copy()     # ZMP while standing
        self.com_offset = self.plan.com[0] - self.plan.pelvis[0]
        self.last_target = None
        self.last_t = None
        self.log = []
        #: column -> rad: targets of joints outside the legs that another controller sets
        #: (the valve controller's arms); they count in the centre of mass the pelvis is
        #: placed by.
        self.upper_body = None
        #: column -> rad/s: their target speeds (the drives' back-EMF feed-forward), when the
        #: difference of consecutive targets is not the motion meant.
        self.upper_body_speed = None

    def phase(self, t):
        """Return what the controller does at time t: 'standing up', 'step 3 of 10', ..."""
        s = self.settings
        if t < s.settle:
            return 'standing up'
        for i, step in enumerate(self.steps):
            if step.lift <= t < step.land + s.double_support:
                kind = 'recovery step' if step.recovery else 'step'
                return f'{kind} {i + 1} of {len(self.steps)}'
        if self.steps and t < self.steps[0].lift:
            return 'shifting weight'
        return 'standing'

    # -- the ZMP reference --------------------------------------------------------------------
    def _segments(self, t):
        """Return the ZMP reference from t on as segments [(t0, t1, p0 (2,), p1 (2,))]."""
        s = self.settings
        segments = []
        where = {side: self.planted[side][:2].copy() for side in 'lr'}
        horizon = t + s.preview + s.shift + s.plan_dt
        future = [st for st in self.steps
                  if st.land + s.double_support > t and st.lift <= horizon]
        if future and not future[0].recovery and future[0] is self.steps[0]:
            first = future[0]
            stance = 'r' if first.side == 'l' else 'l'
            t0 = s.settle
            segments.append((-1.0, t0, self.com0[:2], self.com0[:2]))
            segments.append((t0, first.lift, self.com0[:2], where[stance]))
        else:
            segments.append((-1.0, future[0].lift if future else t + 1e3, self.rest,
                             self.rest))
        for step in future:
            stance = 'r' if step.side == 'l' else 'l'
            p_st = where[stance]
            segments.append((step.lift, step.land, p_st, p_st))
            where[step.side] = step.target[:2].copy()
            goal = 0.5 * (where['l'] + where['r']) if step.last else where[step.side]
            segments.append((step.land, step.land + s.double_support, p_st, goal))
            segments.append((step.land + s.double_support, math.inf, goal, goal))
        return segments

    @staticmethod
    def _evaluate(segments, times):
        out = np.empty((len(times), 2))
        starts = np.array([seg[0] for seg in segments])
        which = np.clip(np.searchsorted(starts, times, side='right') - 1, 0, len(segments) - 1)
        for i in np.unique(which):
            t0, t1, p0, p1 = segments[i]
            sel = which == i
            if math.isinf(t1) or t1 <= t0:
                out[sel] = p1
            else:
                out[sel] = p0 + min_jerk((times[sel] - t0) / (t1 - t0))[:, None] * (p1 - p0)
        return out

    def _advance_reference(self, t):
        s = self.settings
        pc = self.preview
        n = pc.preview_steps
        while self.ref_time < t - 1e-9:
            segments = self._segments(self.ref_time)
            times = self.ref_time + s.plan_dt * np.arange(n + 1)
            zmp = self._evaluate(segments, times) - self.com0[:2]
            for axis in range(2):
                x = self.ref[axis]
                self.ref_error[axis] += pc.c[0] @ x - zmp[0, axis]
                u = (-pc.gi * self.ref_error[axis] - pc.gx @ x - pc.gd @ zmp[1:, axis])
                self.ref[axis] = pc.a @ x + pc.b[:, 0] * u
            self.ref_time += s.plan_dt
            self.zmp_ref = zmp[0] + self.com0[:2]

    # -- feedback -----------------------------------------------------------------------------
    def _dcm(self, est):
        return est.com[:2] + est.com_velocity[:2] / self.omega

    def _ref_dcm(self):
        return self.com0[:2] + self.ref[:, 0] + self.ref[:, 1] / self.omega

    def _adjust_steps(self, t, est, dt):
        """Move the swinging foot's foothold by the DCM error at landing; start recoveries."""
        b, s = self.balance, self.settings
        error = self._dcm(est) - self._ref_dcm()
        self.dcm_error = error
        swinging = [st for st in self.steps if st.lift <= t < st.land]
        if swinging:
            step = swinging[0]
            left = step.land - t
            if left > b.step_freeze:
                stance = 'r' if step.side == 'l' else 'l'
                p_st = self.planted[stance]
                grow = math.exp(self.omega * left)
                if step.recovery:
                    # capture: the foot where the DCM will be, the ZMP held at the sole's
                    # point nearest to it meanwhile
                    xi = self._dcm(est)
                    half = np.asarray(b.sole_half)
                    zmp = p_st[:2] + np.clip(xi - p_st[:2], -half, half)
                    delta = zmp + (xi - zmp) * grow - step.nominal[:2]
                else:
                    beyond = np.sign(error) * np.maximum(np.abs(error) - b.dcm_deadband, 0.0)
                    delta = b.step_gain * grow * beyond
                    delta = np.where(np.abs(delta) < b.step_deadband, 0.0, delta)
                outward = 1.0 if step.side == 'l' else -1.0
                delta[0] = np.clip(delta[0], -b.step_backward, b.step_forward)
                lateral = np.clip(outward * delta[1], -b.step_inward, b.step_outward)
                goal = step.nominal[:2] + np.array([delta[0], outward * lateral])
                if outward * (goal[1] - p_st[1]) < b.min_width:
                    goal[1] = p_st[1] + outward * b.min_width
                alpha = min(1.0, dt / b.step_filter) if b.step_filter > 0 else 1.0
                step.target[:2] += alpha * (goal - step.target[:2])
            return
        # not swinging: a recovery step when the DCM runs away while standing
        busy = [st for st in self.steps if st.land + s.double_support > t]
        if busy or t < s.settle:
            return
        xi = self._dcm(est)
        soles = np.array([self.planted[side][:2] for side in 'lr'])
        half = np.asarray(b.sole_half) - b.recovery_margin
        outside = np.maximum(np.maximum(soles.min(axis=0) - half - xi,
                                        xi - soles.max(axis=0) - half), 0.0)
        if not np.any(outside > 0.0) and np.max(np.abs(error)) < b.recovery_threshold:
            return
        if abs(error[1]) > 0.5 * abs(error[0]):
            side = 'l' if error[1] > 0 else 'r'
        else:
            # step with the foot that is behind along the error, else the less loaded one
            side = 'l' if est.force['l'] < est.force['r'] else 'r'
        total = max(est.force['l'], 0.0) + max(est.force['r'], 0.0)
        if total > 0.0 and est.force[side] > b.recovery_load * total:
            return      # that foot carries the robot (it rolls onto it): no step with it
        duration = b.recovery_single_support
        nominal = self.planted[side].copy()
        step = Step(side, t, t + duration, nominal.copy(), nominal, last=True, recovery=True)
        self.steps.append(step)
        self._reset_reference(est)
        self.log.append((t, 'recovery', side, error.copy()))

    def _reset_reference(self, est):
        """Start the COM reference over from the measured state (after a push)."""
        self.ref[:, 0] = est.com[:2] - self.com0[:2]
        self.ref[:, 1] = est.com_velocity[:2]
        self.ref[:, 2] = 0.0
        self.ref_error[:] = 0.0

    # -- the legs -----------------------------------------------------------------------------
    def _update_events(self, t, est):
        for step in self.steps:
            if step.lift <= t and step.start is None:
                step.start = self.planted[step.side].copy()
                step.swing = step.start.copy()
            if step.land <= t and not step.landed:
                step.landed = True
                where = est.feet[step.side].copy() if est.contact[step.side] else step.target
                self.planted[step.side] = np.array([where[0], where[1], self.feet0[step.side][2]])
                self.planted_yaw[step.side] = (est.foot_yaw[step.side]
                                               if est.contact[step.side] else 0.0)
                step.target = self.planted[step.side].copy()
                if step.last:
                    self.rest = 0.5 * (self.planted['l'][:2] + self.planted['r'][:2])
                if step.recovery:
                    self._reset_reference(est)

    def _swing_foot(self, step, t):
        s = self.settings
        duration = step.land - step.lift
        phase = min(max((t - step.lift) / duration, 0.0), 1.0)
        previous = getattr(step, '_phase', 0.0)
        m0, m1 = float(min_jerk(previous)), float(min_jerk(phase))
        if m0 < 1.0:
            step.swing[:2] += (m1 - m0) / (1.0 - m0) * (step.target[:2] - step.swing[:2])
        step._phase = phase
        foot = step.swing.copy()
        foot[2] = self.feet0[step.side][2] + s.step_height * math.sin(math.pi * phase)
        return foot

    def _joint_targets(self, t, est):
        target = self.plan.positions[0].copy()
        com = self.com0[:2] + self.ref[:, 0]
        b = self.balance
        if any(b.com_gain):
            # DCM ahead of its reference (the feet tipping, the joints giving): the COM back
            # relative to the feet, so that gravity tips the robot back
            shift = np.clip(-np.asarray(b.com_gain) * self.dcm_error, -b.com_limit, b.com_limit)
            self.com_shift += min(1.0, self._period / b.com_filter) * (shift - self.com_shift)
            com = com + self.com_shift
        pelvis = np.array([com[0] - self.com_offset[0], com[1] - self.com_offset[1],
                           self.base[2]])
        swinging = {st.side: st for st in self.steps if st.lift <= t < st.land}
        for side in 'lr':
            if side in swinging:
                foot = self._swing_foot(swinging[side], t)
                if self.balance.swing_in_measured_frame:
                    # the foot relative to the pelvis as the pelvis really is turned
                    rot = est.rot
                    angles = leg_ik(self.plan.legs[side], np.zeros((1, 3)),
                                    (rot.T @ (foot - pelvis))[None], rot.T[None])[0]
                else:
                    angles = leg_ik(self.plan.legs[side], pelvis[None], foot[None])[0]
            else:
                foot = self.planted[side]
                angles = leg_ik(self.plan.legs[side], pelvis[None], foot[None],
                                _rot_z(self.planted_yaw[side])[None])[0]
            target[self.leg_columns[side]] = angles
        for column, angle in (self.upper_body or {}).items():
            target[column] = angle
        return target

    def voltages(self, m):
        """
        Return the armature voltage of every joint, V: shape (n,), ``joint_names`` order.

        Args:
            m: Measurements of this period.
        """
        s = self.settings
        t = m.t
        if self._start is None:
            self._start = np.array(m.positions, dtype=float)
        est = self.estimator.update(m, self.last_target)
        if est.extra_com is not None:
            # the whole-body COM offset of the last target pose (one period old)
            self.com_offset = est.extra_com
        dt = 0.0 if self.last_t is None else t - self.last_t
        self._period = dt
        if t >= s.settle:
            self._adjust_steps(t, est, dt)
        self._update_events(t, est)
        self._advance_reference(t)
        target = self._joint_targets(t, est)
        if t < s.settle:
            blend = float(min_jerk(t / s.settle))
            target = self._start + blend * (target - self._start)
        if self.last_target is None or dt <= 0.0:
            speed = np.zeros_like(target)
        else:
            speed = (target - self.last_target) / dt
        for column, rate in (self.upper_body_speed or {}).items():
            speed[column] = rate
        self.last_target, self.last_t = target, t
        return self.pd.volts(target, speed, m.positions, m.velocities)


ANKLE_SENSORS = (('l', 'l_ankle_ft'), ('r', 'r_ankle_ft'))


def sensor_measurements(sim, imu='pelvis_imu', ankles=ANKLE_SENSORS):
    """
    Return the Measurements the robot's own sensors give now (the ``measure`` of a real run).

    The joints as measured (``sim.joint_sensors``: encoder counts, noise and delay when
    configured), the IMU's latest sample and the ankle sensors' latest samples, with their
    noise: never the simulator's ground truth.
    """
    positions, velocities = sim.joint_sensors.read()
    return Measurements(sim.time, positions, velocities, sim.sensors.imu(imu),
                        {side: sim.sensors.wrench(name) for side, name in ankles})


def run_closed_loop(sim, controller, seconds, measure, period=5, record=None, on_step=None):
    """
    Drive a Simulator with a BalancingWalkingController from a measurement function.

    Every ``period`` physics steps ``measure(sim)`` gives the controller its Measurements (the
    time in them is replaced by the controller's: s since the start) and the voltages it
    returns are held until the next period.

    Args:
        sim: a Simulator of the humanoid (its joints in the controller's order).
        controller: BalancingWalkingController.
        seconds: simulated time, s.
        measure: f(sim) -> Measurements (the sensors: pluggable).
        record: None, or a dict that receives per-period lists 'time' (s), 'pelvis' (3,),
            'pelvis_quat' (4,), 'velocity' (3,) true pelvis velocity, 'estimate' (3,) the
            estimator's, 'estimate_position' (3,).
        on_step: None, or f(sim, t) called before each controller reading.

    Returns:
        the Simulator.
    """
    start = sim.time

    def command(sim, t):
        m = measure(sim)
        m.t = sim.time - start
        volts = controller.voltages(m)
        if record is not None:
            where, quat = sim.link_pose('pelvis')
            record.setdefault('time', []).append(sim.time)
            record.setdefault('pelvis', []).append(where.copy())
            record.setdefault('pelvis_quat', []).append(quat.copy())
            record.setdefault('velocity', []).append(sim.link_twist('pelvis')[0].copy())
            record.setdefault('estimate', []).append(controller.estimator.velocity.copy())
            record.setdefault('estimate_position', []).append(
                controller.estimator.position.copy())
            record.setdefault('cop', []).append(
                centre_of_pressure(ankle_readings(sim), SOLE_HEIGHT)[0])
        return volts
    return run_periods(sim, controller.joint_names, seconds, period, command, on_step=on_step,
                       who='run_closed_loop')
