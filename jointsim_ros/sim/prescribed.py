"""
Prescribed motion of a Simulator: the ``sim.prescribed`` component (docs/prescribed.md).

Three kinds of motion are prescribed, each a clamped cubic spline through samples
(``trajectory.CubicSpline``) that the engine lands on exactly, step after step:

- joints: an unbounded velocity row on each joint's axis aims at q*(t + dt)
  (``State.axis_target_q``, ``State.axis_target_rate``); its impulse is the effort the motion
  needs;
- linear actuator lengths: the actuator becomes a length element, the engine's one-row distance
  joint between its ends, aimed at L*(t + dt); its impulse is the force the length needs;
- paths of path points: a ball joint between the world and the point, whose world anchor moves
  along p*(t + dt); its impulse is the force that keeps the point on the path.

The component owns the splines and the drive-needs bookkeeping, aims the engine at the targets
before each step (the Simulator steps one by one while anything is prescribed) and reads the
efforts and forces back from the row impulses.
"""
import numpy as np

from .elements import check_element_names
from .trajectory import CubicSpline
from ..errors import CommandError
from ..physics.axes import PRESCRIBED
from ..physics.drives import voltage_for_effort

#: A prescribed joint motion must start this close to the joint's position, rad or m.
JOINT_START_TOLERANCE = 1e-3
#: A prescribed path or length must start this close to where the point or element is, m.
ELEMENT_START_TOLERANCE = 1e-3


class Prescribed:
    """
    The prescribed joint motions, actuator lengths and paths of one Simulator.

    Args:
        sim: the Simulator (its model, engine, elements and joint readings are used).
    """

    def __init__(self, sim):
        self._sim = sim
        self._joints = {}       # joint -> (axis, spline, column, start time)
        self._drive_needs = {}  # driven prescribed joint -> what its drive needed last step
        self._lengths = {}      # actuator -> (element joint, spline, column, start time)
        self._paths = {}        # path point -> (element joint, spline, start time)

    @property
    def active(self):
        """Tell whether any joint, length or path is prescribed (then the sim steps singly)."""
        return bool(self._joints or self._lengths or self._paths)

    # -- joints -----------------------------------------------------------------------------
    def joints(self, times, positions, joints=None, start_time=None):
        """
        Drive joints along a motion: samples interpolated by a clamped cubic spline.

        Each joint follows its curve exactly (an unbounded row lands it on q*(t + dt) every
        step); the effort the motion needs is read from that row's impulse and reported by
        ``sim.joint_efforts()`` and :meth:`efforts` (docs/prescribed.md).  Outside the samples
        a joint holds the end position at rest.

        Args:
            times: (n,) sample times, s, strictly increasing, relative to ``start_time``.
            positions: (n, m) joint positions, rad or m, one column per joint.
            joints: m joint names (default all of ``sim.joint_names``).
            start_time: simulated time of times = 0, s (default: now).

        Raises:
            CommandError: the rk4 integrator, unknown joints, a shape mismatch, bad times or
                values, or a motion that does not start where the joints are; nothing is
                changed.
        """
        sim = self._sim
        if sim.config.solver.integrator == 'rk4':
            raise CommandError('prescribed.joints: solver.integrator rk4 solves no rows, so it '
                               'cannot prescribe motion; use semi_implicit_euler or '
                               'symplectic_euler.  Nothing was changed.')
        names = list(sim.joint_names if joints is None else joints)
        idx = sim._joint_indices(names, 'prescribed.joints')
        values = np.asarray(positions, dtype=float)
        values = values.reshape(len(values), -1) if values.ndim else values
        if values.ndim != 2 or values.shape[1] != len(names):
            raise CommandError(f'prescribed.joints: positions must have one column per joint '
                               f'({len(names)}), got shape {np.shape(positions)}.')
        spline = CubicSpline(times, values)
        offset = sim.time if start_time is None else float(start_time)
        engine = sim._engine
        now = np.atleast_1d(spline.evaluate(sim.time - offset))
        gap = np.abs(now - engine.state.joint_q[idx])
        if np.any(gap > JOINT_START_TOLERANCE):
            worst = int(np.argmax(gap))
            raise CommandError(
                f'prescribed.joints: joint {names[worst]!r} is at '
                f'{engine.state.joint_q[idx[worst]]:.6g} but its motion starts at '
                f'{now[worst]:.6g} (rad or m); a prescribed motion must start where the joint '
                'is.  Call set_joint_state with the first sample first.  Nothing was changed.')
        axis_of = {int(j): x for x, j in enumerate(engine.axes.joint)}
        for column, (name, j) in enumerate(zip(names, idx)):
            axis = axis_of[int(j)]
            self._joints[name] = (axis, spline, column, offset)
            engine.state.axis_prescribed[axis] = 1.0

    def release_joints(self, joints=None):
        """End the prescribed motion of some joints (default all); they move freely again."""
        state = self._sim._engine.state
        for name in list(self._joints if joints is None else joints):
            self._drive_needs.pop(name, None)
            entry = self._joints.pop(name, None)
            if entry is not None:
                state.axis_prescribed[entry[0]] = 0.0
                state.axis_impulse[entry[0], PRESCRIBED] = 0.0

    def efforts(self):
        """Return joint name -> the effort its prescribed motion needed in the last step."""
        impulses = self._sim._engine.state.axis_impulse
        dt = self._sim.dt
        return {name: float(impulses[entry[0], PRESCRIBED]) / dt
                for name, entry in self._joints.items()}

    def drive_needs(self):
        """
        Return what the drive of each driven prescribed joint needed over the last step.

        The motion's effort at the joint (``sim.joint_efforts()``, the drive's output plus the
        prescribed row) is taken back through the drive model of docs/drives.md
        (``physics.drives.voltage_for_effort``): the gear's Coulomb losses ((1 - eta) of the
        transmitted torque, against the motion), the rotor (J_m N qdd + b_m N qd), the motor
        (i = tau_m / Kt) and the armature with the engine's backward Euler step
        (u = R i + L (i - i_prev) / dt + Ke N qd).

        Returns:
            dict joint -> {'current' A, 'voltage' V, 'motor_torque' N m,
            'beyond_supply' bool (|u| above the supply voltage),
            'beyond_current_limit' bool (|i| above the current limit)}.
        """
        return {name: dict(needs) for name, needs in self._drive_needs.items()}

    # -- linear actuator lengths ------------------------------------------------------------
    def lengths(self, times, lengths, actuators=None, start_time=None):
        """
        Drive linear actuators through lengths: a clamped cubic spline through the samples.

        Each becomes a length element: a distance row between its ends lands it on the
        length L*(t + dt) every step, and its impulse is the force the motion needs
        (:meth:`length_forces`, ``sim.elements.actuator_forces()``).  Outside the samples the
        length holds its end value.  ``sim.elements.set_actuator_forces`` or
        :meth:`release_lengths` make an actuator a force element again.

        Args:
            times: (n,) sample times, s, relative to ``start_time``.
            lengths: (n, m) lengths, m, one column per actuator.
            actuators: m actuator names (default all, in config order).
            start_time: simulated time of times = 0, s (default: now).

        Raises:
            CommandError: unknown actuators, bad samples, or a motion that does not start at
                the actuators' current lengths; nothing is changed.
        """
        elements = self._sim.elements
        names = check_element_names(actuators, elements.actuator_names, 'prescribed.lengths',
                                    'linear_actuators')
        current = elements.actuator_lengths()
        spline, offset = self._start_spline(
            times, np.asarray(lengths, dtype=float).reshape(len(times), -1), len(names),
            start_time, [current[n][0] for n in names], 'prescribed.lengths')
        for column, name in enumerate(names):
            j = elements._actuator_joint[name]
            elements._hold_force(name, 0.0)
            self._lengths[name] = (j, spline, column, offset)
            self._sim._engine.state.joint_active[j] = 1.0

    def release_lengths(self, actuators=None):
        """End the prescribed lengths of some actuators (default all): force elements again."""
        self._release_elements(self._lengths, actuators)

    def length_forces(self):
        """
        Return actuator name -> force (N, positive pushes the ends apart) of prescribed lengths.

        The force each length needed over the last step: its distance row's impulse over dt.
        Only actuators whose length is prescribed are named.
        """
        engine, dt = self._sim._engine, self._sim.dt
        return {name: float(engine.element_impulse(entry[0])[0]) / dt
                for name, entry in self._lengths.items()}

    # -- paths ------------------------------------------------------------------------------
    def path(self, point, times, positions, start_time=None):
        """
        Drive a path point along a 3D path: a clamped cubic spline through the samples.

        The point follows the path exactly (its ball joint to the world lands it on
        p*(t + dt) every step) while the rest of the mechanism moves freely; the force that
        takes is :meth:`path_forces`.  Outside the samples the point holds its end position.

        Args:
            point: path point name (config ``path_points``).
            times: (n,) sample times, s, relative to ``start_time``.
            positions: (n, 3) world positions, m.
            start_time: simulated time of times = 0, s (default: now).

        Raises:
            CommandError: an unknown point, bad samples, or a path that does not start where
                the point is; nothing is changed.
        """
        elements = self._sim.elements
        check_element_names([point], elements.path_point_names, 'prescribed.path',
                            'path_points')
        now = elements.path_points()[point][0]
        spline, offset = self._start_spline(times, np.asarray(positions, dtype=float), 3,
                                            start_time, now, 'prescribed.path')
        j = elements._path_joint[point]
        engine = self._sim._engine
        engine.reset_element(j)
        self._paths[point] = (j, spline, offset)
        engine.state.joint_active[j] = 1.0

    def release_paths(self, points=None):
        """End the prescribed paths of some points (default all); they move freely again."""
        self._release_elements(self._paths, points)

    def _release_elements(self, table, names):
        """Forget ``names`` (default all) of a table of element joints, resetting each joint."""
        for name in list(table if names is None else names):
            entry = table.pop(name, None)
            if entry is not None:
                self._sim._engine.reset_element(entry[0])

    def path_forces(self):
        """
        Return path point name -> (3,) world force (N) the path put on the point last step.

        Every path point is named; zero for points not on a path.
        """
        engine, dt = self._sim._engine, self._sim.dt
        out = {name: np.zeros(3) for name in self._sim.elements.path_point_names}
        for name, entry in self._paths.items():
            out[name] = engine.element_impulse(entry[0]) / dt
        return out

    # -- all kinds --------------------------------------------------------------------------
    def release(self):
        """End every prescribed joint motion, length and path (the simulator's reset)."""
        self.release_joints()
        self.release_lengths()
        self.release_paths()

    def aim(self, after):
        """
        Aim the engine at the prescribed targets at the step's end (time ``after``, s).

        Joints get a position and a velocity target on their axis; lengths and paths a rate
        at which their row's reference moves (``State.joint_row_rate``) and the reference the
        position projection lands on (``State.joint_length``, ``State.joint_anchor``).  The
        rate is the curve's secant over the step, (x*(after) - x*(after - dt)) / dt: with
        semi-implicit Euler (x += dt v) the step then lands on the curve by its velocity
        alone, so the row's impulse is the whole effort of the motion and the same efforts
        applied as forces repeat it (the position projection only removes the rows'
        nonlinearity and the solver's tolerance).  Only the engine's State is written: its
        static model is read-only after load.
        """
        engine = self._sim._engine
        state = engine.state
        before = after - self._sim.dt
        inv_dt = 1.0 / self._sim.dt

        def aim_at(spline, offset):
            end = np.atleast_1d(spline.evaluate(after - offset))
            return end, (end - np.atleast_1d(spline.evaluate(before - offset))) * inv_dt

        for axis, spline, column, offset in self._joints.values():
            end, rate = aim_at(spline, offset)
            state.axis_target_q[axis] = end[column]
            state.axis_target_rate[axis] = rate[column]
        rates = state.joint_row_rate
        for j, spline, column, offset in self._lengths.values():
            end, rate = aim_at(spline, offset)
            state.joint_length[j] = end[column]
            rates[j, 0] = rate[column]
        for j, spline, offset in self._paths.values():
            end, rate = aim_at(spline, offset)
            state.joint_anchor[j] = end
            rates[j, :3] = rate

    def before_step(self):
        """
        Return what the drive needs of the coming step start from, or None if none are due.

        Pass it to :meth:`after_step` once the step is taken.
        """
        sim = self._sim
        if not (self._joints and sim._drive_index):
            return None
        return sim.joint_velocities(), sim._engine.state.drive_current.copy()

    def after_step(self, before):
        """Take each driven prescribed joint's effort of the last step back to volts."""
        rates_before, currents_before = before
        sim = self._sim
        drives = sim._engine.drives
        dt = sim.dt
        efforts = sim.joint_efforts()
        rates = sim.joint_velocities()
        for name in self._joints:
            d = sim._drive_index.get(name)
            if d is None:
                continue
            k = sim._joint_position[name]
            # the first step starts from the drive's actual current
            before_current = self._drive_needs.get(name, {}).get('current', currents_before[d])
            voltage, current, motor_torque = voltage_for_effort(
                efforts[k], rates[k], (rates[k] - rates_before[k]) / dt, before_current, dt,
                drives.gear[d], drives.efficiency[d], drives.resistance[d],
                drives.inductance[d], drives.kt[d], drives.ke[d], drives.viscous[d],
                1.0 / drives.inv_rotor_inertia[d])
            self._drive_needs[name] = {
                'current': float(current), 'voltage': float(voltage),
                'motor_torque': float(motor_torque),
                'beyond_supply': bool(abs(voltage) > sim._supply[d]),
                'beyond_current_limit': bool(abs(current) > drives.current_limit[d])}

    def _start_spline(self, times, values, columns, start_time, now, what):
        """Build a spline and check that it starts where the elements are; (spline, offset)."""
        values = np.asarray(values, dtype=float)
        spline = CubicSpline(times, values)
        if np.size(spline.evaluate(0.0)) != columns:
            raise CommandError(f'{what}: the samples must have {columns} values each, got '
                               f'shape {np.shape(values)}.  Nothing was changed.')
        time = self._sim.time
        offset = time if start_time is None else float(start_time)
        gap = np.abs(np.atleast_1d(spline.evaluate(time - offset)) - np.ravel(now))
        if np.any(gap > ELEMENT_START_TOLERANCE):
            raise CommandError(
                f'{what}: the motion starts {float(np.max(gap)):.6g} m away from where '
                f'the elements are ({np.ravel(now)}); it must start where they are (within '
                f'{ELEMENT_START_TOLERANCE} m).  Nothing was changed.')
        return spline, offset
