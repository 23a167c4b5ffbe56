"""
Servo modes of the drives: the cascaded loops of a drive amplifier, in front of the motor model.

A drive in voltage mode takes the armature voltage it is given.  A servoed drive computes that
voltage itself every physics step, as a real amplifier does (docs/drives.md, "Servo modes"):

    position mode:  v* = v_ff + Kp_p (q* - q)                    (joint side, rad/s or m/s)
    velocity mode:  i* = Kp_v (N v*/2 - w_m) + Ki_v sum(e_v dt),  e_v = N v* - w_m
                    (rotor side, A; the proportional part sees half the reference)
    effort mode:    i* = effort / (N Kt)
    current loop:   u  = Kp_i e_i + Ki_i sum(e_i dt) + Ke w_m,  e_i = i* - i   (V)

so the motor model (resistance, inductance, back-EMF, rotor inertia, gear, current limit) stays
in the loop.  Saturation: v* at the joint's URDF velocity limit, i* at the current limit (else the
stall current U/R), u at the supply voltage; anti-windup by conditional integration (an
integrator does not grow while its output is saturated in the direction of its error).

Gains (each may be given in the drive's config instead):
    current:  discrete pole-zero cancellation of the electrical pole on the simulator's own
              implicit current update i+ = (L/dt i + u - Ke w) / (R + L/dt)
              (``physics.drives.armature_current``):
              Kp_i = beta L/dt, Ki_i = beta R/dt, beta = 1 - exp(-w_c dt),
              so a locked rotor's current follows a step as i*(1 - exp(-w_c t)) at every sample;
    velocity: Kp_v = 2 J w_v / Kt, Ki_v = J w_v^2 / Kt, J = J_m + J_load / N^2 the inertia the
              rotor sees: the loop's poles are both at -w_v and the half-weighted reference
              puts a zero on one of them, so with an ideal current loop the speed follows a
              step first-order with bandwidth w_v, v*(1 - exp(-w_v t)), while a load torque is
              rejected by the double pole (no steady-state error);
    position: Kp_p = w_p (the velocity integrator removes steady-state error; keep w_p well
              below w_v).
J_load defaults to the joint-space inertia of everything the joint carries at the initial pose
(the composite rigid-body inertia about the joint axis, or the carried mass for a prismatic
joint); a drive's ``load_inertia`` overrides it, as a drive's inertia-ratio setting does.
"""
import math

import numpy as np

from ..rotations import quat_to_matrix

NONE, EFFORT, VELOCITY, POSITION = 0, 1, 2, 3
MODE_NAMES = {NONE: 'voltage', EFFORT: 'effort', VELOCITY: 'velocity', POSITION: 'position'}

#: Default loop bandwidths, rad/s: current, velocity, position (drive keys *_bandwidth).
DEFAULT_BANDWIDTHS = {'current_bandwidth': 2000.0, 'velocity_bandwidth': 100.0,
                      'position_bandwidth': 10.0}


class ServoLoops:
    """
    The cascaded loops of every drive (arrays indexed like the model's drives).

    Args:
        drives: the model's DriveModel list.
        dt: physics time step, s.
        load_inertia: (n,) joint-side inertia each drive moves, kg m^2 (kg on prismatic joints).
        velocity_limit: (n,) URDF velocity limit of each drive's joint (inf: none).
    """

    def __init__(self, drives, dt, load_inertia, velocity_limit):
        n = len(drives)
        self.dt = dt
        self.mode = np.zeros(n, dtype=np.int64)
        self._active = False      # any mode set: kept with the modes, read every step
        self.target_position = np.zeros(n)
        self.target_velocity = np.zeros(n)
        self.target_effort = np.zeros(n)
        self.velocity_integral = np.zeros(n)
        self.current_integral = np.zeros(n)
        self.current_command = np.zeros(n)
        self.velocity_limit = np.asarray(velocity_limit, dtype=float)
        self.gear = np.array([d.gear_ratio for d in drives], dtype=float)
        self.kt = np.array([d.torque_constant for d in drives], dtype=float)
        self.ke = np.array([d.back_emf_constant for d in drives], dtype=float)
        self.supply = np.array([d.supply_voltage for d in drives], dtype=float)
        limit = np.array([d.current_limit for d in drives], dtype=float)
        stall = np.array([d.supply_voltage / d.resistance for d in drives], dtype=float)
        self.current_max = np.where(np.isfinite(limit), limit, stall)
        self.gains = np.zeros((n, 5))  # Kp_i, Ki_i, Kp_v, Ki_v, Kp_p
        self.load_inertia = np.asarray(load_inertia, dtype=float).copy()
        for d, drive in enumerate(drives):
            servo = dict(DEFAULT_BANDWIDTHS, **drive.servo)
            if 'load_inertia' in servo:
                self.load_inertia[d] = servo['load_inertia']
            beta = 1.0 - math.exp(-servo['current_bandwidth'] * dt)
            inertia = drive.rotor_inertia + self.load_inertia[d] / drive.gear_ratio ** 2
            w_v = servo['velocity_bandwidth']
            self.gains[d] = (
                servo.get('current_kp', beta * drive.inductance / dt),
                servo.get('current_ki', beta * drive.resistance / dt),
                servo.get('velocity_kp', 2.0 * inertia * w_v / drive.torque_constant),
                servo.get('velocity_ki', inertia * w_v * w_v / drive.torque_constant),
                servo.get('position_kp', servo['position_bandwidth']))

    @property
    def active(self):
        """Return True when any drive is servoed."""
        return self._active

    def reset(self, drives=None):
        """Back to voltage mode, integrators cleared (all drives, or those indices)."""
        which = slice(None) if drives is None else list(drives)
        self.mode[which] = NONE
        self._active = bool(self.mode.any())
        self.velocity_integral[which] = 0.0
        self.current_integral[which] = 0.0
        self.current_command[which] = 0.0

    def command(self, d, mode, position=0.0, velocity=0.0, effort=0.0):
        """Set drive d's mode and target; a change of mode clears its integrators."""
        loops = (VELOCITY, POSITION)
        if self.mode[d] != mode and not (self.mode[d] in loops and mode in loops):
            self.velocity_integral[d] = 0.0
            self.current_integral[d] = 0.0
        self.mode[d] = mode
        self._active = bool(self.mode.any())
        self.target_position[d] = position
        self.target_velocity[d] = velocity
        self.target_effort[d] = effort

    def voltages(self, q, qd, current, rotor_speed, out):
        """
        One sample of every servoed drive's loops: write its armature voltage into ``out``.

        Args:
            q: (n,) position of each drive's joint, rad or m.
            qd: (n,) velocity of each drive's joint, rad/s or m/s.
            current: (n,) armature currents, A.
            rotor_speed: (n,) rotor speeds, rad/s.
            out: (n,) the drives' voltages (V); voltage-mode entries are left alone.
        """
        dt = self.dt
        for d in np.flatnonzero(self.mode):
            kp_i, ki_i, kp_v, ki_v, kp_p = self.gains[d]
            n = self.gear[d]
            mode = self.mode[d]
            if mode == EFFORT:
                i_ref = self.target_effort[d] / (n * self.kt[d])
                i_ref = min(max(i_ref, -self.current_max[d]), self.current_max[d])
            else:
                v_ref = self.target_velocity[d]
                if mode == POSITION:
                    v_ref += kp_p * (self.target_position[d] - q[d])
                limit = self.velocity_limit[d]
                v_ref = min(max(v_ref, -limit), limit)
                error = n * v_ref - rotor_speed[d]
                # the sum of the earlier samples' errors: the step's own error acts through the
                # proportional part first (a forward sum would add a lead of dt / 2)
                integral = self.velocity_integral[d] + error * dt
                wanted = (kp_v * (0.5 * n * v_ref - rotor_speed[d])
                          + ki_v * self.velocity_integral[d])
                i_ref = min(max(wanted, -self.current_max[d]), self.current_max[d])
                if i_ref == wanted or wanted * error < 0.0:  # anti-windup
                    self.velocity_integral[d] = integral
            self.current_command[d] = i_ref
            error = i_ref - current[d]
            integral = self.current_integral[d] + error * dt
            wanted = kp_i * error + ki_i * integral + self.ke[d] * rotor_speed[d]
            u = min(max(wanted, -self.supply[d]), self.supply[d])
            if u == wanted or (wanted - u) * error < 0.0:  # anti-windup
                self.current_integral[d] = integral
            out[d] = u


def carried_inertia(sim_engine, model, joint_index):
    """
    Joint-space inertia of everything joint ``joint_index`` carries, at the engine's state.

    The diagonal entry of the joint-space mass matrix: for a revolute joint the inertia of the
    subtree's bodies about the joint axis (kg m^2), for a prismatic joint their mass (kg).
    """
    joint = model.joints[joint_index]
    children = {}
    for j in model.joints:
        if not j.loop and j.parent_body >= 0:
            children.setdefault(j.parent_body, []).append(j.child_body)
    subtree, todo = [], [joint.child_body]
    while todo:
        b = todo.pop()
        if b < 0 or b in subtree:
            continue
        subtree.append(b)
        todo += children.get(b, [])
    engine = sim_engine
    anchor, frame = engine.joint_frame_world(joint_index, 0)
    axis = quat_to_matrix(frame) @ np.asarray(joint.axis, dtype=float)
    axis = axis / np.linalg.norm(axis)
    total = 0.0
    for b in subtree:
        mass = model.bodies[b].mass
        if joint.type == 'prismatic':
            total += mass
            continue
        x, quat = engine.body_pose(b)
        r = quat_to_matrix(quat)
        inertia = r @ engine.bodies.inertia[b] @ r.T
        arm = x - anchor
        inertia = inertia + mass * (arm @ arm * np.eye(3) - np.outer(arm, arm))
        total += axis @ inertia @ axis
    return float(total)
