"""
The facade: robot model + configuration + commands -> step().

The node and the command-line tools drive the engine only through :class:`Simulator`.
Units are SI; the world frame is REP 103 (x forward, y left, z up); quaternions are (w, x, y, z).
"""
from collections import namedtuple
from dataclasses import replace
import logging
import math

import numpy as np

from .elements import Elements
from .encoders import JointSensors
from .entities import Entities
from .grasping import Grasps
from .prescribed import Prescribed
from .robots import robot_views
from .sensing import Sensors
from .servo import carried_inertia, EFFORT, MODE_NAMES, POSITION, ServoLoops, VELOCITY
from ..description import build_model, load_config, parse_urdf
from ..description.formulation import check_formulation
from ..description.model import SCALAR_JOINT_TYPES
from ..description.urdf import close_matches
from ..description.world import load_world_model
from ..errors import CommandError, DivergenceError
from ..physics import arrays
from ..physics import joints as jt
from ..physics.engine import Engine
from ..rotations import quat_multiply, quat_to_matrix, quats_multiply, quats_rotate

#: What one call of :meth:`Simulator.step` reports.
StepReport = namedtuple('StepReport', [
    'steps',           # steps taken (fewer than asked only on divergence)
    'iterations',      # velocity iterations of the last step
    'residual',        # largest impulse change in the last iteration, N s or N m s
    'stop_reason',     # 'tolerance', 'iterations' or 'time_budget'
    'position_error',  # largest joint position error the last projection pass found, m or rad
])
#: One contact point, as :meth:`Simulator.contacts` reports it (world frame, SI units).
Contact = namedtuple('Contact', [
    'id',              # identity, kept while the point persists from step to step
    'link_a',          # link (or scene object) of shape A
    'link_b',          # link, scene object or 'ground' of shape B
    'position',        # (3,) point midway between the two surfaces, m
    'normal',          # (3,) unit normal from B towards A
    'depth',           # penetration, m (< 0: a gap within collision.margin)
    'normal_force',    # N, >= 0: the force B pushes A with, along the normal
    'friction_force',  # (3,) N, tangential force of B on A
])
LOGGER = logging.getLogger('jointsim_ros')
#: Joint speeds are compared with the URDF velocity limits at most this often, simulated s.
VELOCITY_CHECK_PERIOD = 0.01
_STOP_NAMES = {arrays.STOP_TOLERANCE: 'tolerance', arrays.STOP_ITERATIONS: 'iterations',
               arrays.STOP_TIME_BUDGET: 'time_budget'}
_ITERATIONS, _RESIDUAL, _STOP, _POS_ERROR, _STATUS = (
    arrays.INFO_ITERATIONS, arrays.INFO_RESIDUAL, arrays.INFO_STOP, arrays.INFO_POS_ERROR,
    arrays.INFO_STATUS)
_new_tuple = tuple.__new__


class Simulator:
    """
    One robot, simulated in maximal coordinates with sequential impulses.

    Build it with :meth:`from_urdf`.  Joint-indexed arrays follow :attr:`joint_names`.
    Stepping, state and commands are here; the parts are components taking the simulator:
    :attr:`sensors` (force-torque sensors), :attr:`elements` (linear actuators, distance
    sensors, path points), :attr:`grasps` (grasps switched at run time) and
    :attr:`prescribed` (prescribed joint motions, actuator lengths and paths).
    """

    def __init__(self, model, config, description=None, world=None):
        self.model = model
        self.config = config
        #: The parsed robot description the model was built from (None when not given: then
        #: the model cannot be rebuilt, so nothing can be spawned).
        self.description = description
        #: The World it was built from (jointsim_ros.description.world), or None for one robot.
        self.world = world
        self._engine = _make_engine(model, config)
        #: link_poses' look-ups per list of names (and the model they were made for)
        self._pose_plans = {}
        self.joint_names = tuple(j.name for j in model.joints if j.type in SCALAR_JOINT_TYPES)
        self.link_names = tuple(model.links)
        index = self._engine.joint_index
        self._scalar = np.array([index[n] for n in self.joint_names], dtype=np.int64)
        self._joint_position = {n: i for i, n in enumerate(self.joint_names)}
        drive_of = {d.joint: i for i, d in enumerate(model.drives)}
        #: Driven joints, in joint_names order.
        self.drive_names = tuple(n for n in self.joint_names if n in drive_of)
        self._drive_index = {n: drive_of[n] for n in self.drive_names}
        self._supply = np.array([d.supply_voltage for d in model.drives], dtype=float)
        self._velocity_limits = np.array([model.joints[i].velocity_limit for i in self._scalar],
                                         dtype=float)
        # compare joint speeds with the URDF limits when any is finite and none is enforced
        self._speed_check = (bool(np.isfinite(self._velocity_limits).any())
                             and not config.limits.enforce_velocity)
        # the joints with a finite limit: their positions in joint_names and engine indices
        self._speed_checked = np.nonzero(np.isfinite(self._velocity_limits))[0]
        self._speed_joints = np.asarray(self._scalar)[self._speed_checked]
        self._speed_bound = self._velocity_limits[self._speed_checked] * (1 + 1e-6)
        #: Joints seen beyond their URDF velocity limit (each reported once in the log).
        self.velocity_limit_exceeded = set()
        self._next_speed_check = 0.0
        self._diverged = None
        self.last_step = StepReport(0, 0, 0.0, 'tolerance', 0.0)
        self._last_info = None
        #: Force-torque sensors, IMUs, lidars and depth cameras (config ``force_torque_sensors``,
        #: ``imu_sensors``, ``range_sensors`` and URDF <gazebo> tags): names, samples, history,
        #: the exact readings, rays cast against the collision shapes
        #: (jointsim_ros.sim.sensing.Sensors).
        self.sensors = Sensors(self, [(s, index[s.joint]) for s in model.sensors],
                               model.imus, model.range_sensors)
        #: Linear actuators, distance sensors and path points (config ``linear_actuators``,
        #: ``distance_sensors``, ``path_points``; jointsim_ros.sim.elements.Elements).
        self.elements = Elements(self)
        #: Grasps switched at run time (config ``grasps``; jointsim_ros.sim.grasping.Grasps,
        #: docs/valve.md).
        self.grasps = Grasps(self)
        #: Prescribed joint motions, actuator lengths and paths
        #: (jointsim_ros.sim.prescribed.Prescribed, docs/prescribed.md).
        self.prescribed = Prescribed(self)
        #: Joint measurements (config ``joint_sensors``): encoder resolution, noise and delay
        #: as joint_states, the servo loops and controllers see them
        #: (jointsim_ros.sim.encoders.JointSensors).
        self.joint_sensors = JointSensors(self)
        #: The world's entities as the ROS simulator interface sees them: the robot's links
        #: and the scene objects; spawn, delete, get and set their state
        #: (jointsim_ros.sim.entities.Entities, docs/entities.md).
        self.entities = Entities(self)
        #: The robots of a world by name (jointsim_ros.sim.robots.RobotView: the robot methods
        #: on one robot's own joints, drives, links and sensors); {} for one robot.
        self.robots = robot_views(self)
        self._servo = None
        self.reset()
        # the drives' servo loops, tuned for what each joint carries at the initial pose
        joint_index = self._engine.joint_index
        self._drive_joint = np.array([self._joint_position[d.joint] for d in model.drives],
                                     dtype=np.int64)
        self._servo = ServoLoops(
            model.drives, self.dt,
            [carried_inertia(self._engine, model, joint_index[d.joint]) for d in model.drives],
            [model.joints[joint_index[d.joint]].velocity_limit for d in model.drives])

    @classmethod
    def from_urdf(cls, source, config=None):
        """
        Load a robot and its configuration.

        Args:
            source: path of a .urdf or .xacro file, or URDF XML text.
            config: dict, YAML file path, or None for the defaults (see docs/config.md).

        Returns:
            Simulator at the configured initial state.

        Raises:
            DescriptionError, ConfigError: with a message naming the problem and the fix.
        """
        config = load_config(config)
        description = parse_urdf(source)
        return cls(build_model(description, config), config, description)

    @classmethod
    def from_world(cls, source, formulation=''):
        """
        Load a world: several robots, each with its description, config and pose (docs/worlds.md).

        Args:
            source: path of a world YAML file, or a mapping such as
                ``{'robots': {'left': {'description': PATH, 'config': PATH or dict,
                'pose': {'position': [0, -0.6, 0], 'rpy': [0, 0, 0]}}}, 'dt': 0.001}``.
            formulation: '' (the world's ``solver.formulation``), 'maximal' or 'tree'.

        Returns:
            Simulator; ``sim.robots[NAME]`` gives each robot's methods.

        Raises:
            DescriptionError, ConfigError: one line naming the robot, key or file.
        """
        world, model, config = load_world_model(source, formulation)
        for note in world.notes:
            LOGGER.warning(note)
        return cls(model, config, world=world)

    # -- time ---------------------------------------------------------------------------------
    @property
    def dt(self):
        """Time step, s."""
        return self._engine.dt

    @property
    def time(self):
        """Return the simulated time since the start or the last reset, s."""
        return float(self._engine.state.time[0])

    @property
    def diverged(self):
        """None while the simulation is healthy, else the reason it stopped stepping."""
        return self._diverged

    def step(self, n=1):
        """
        Advance n steps of :attr:`dt`.

        Returns:
            StepReport of the last step.

        Raises:
            DivergenceError: the state became non-finite or ran away; the last finite state is
                kept and further steps are refused until :meth:`reset`.
        """
        if self._diverged:
            raise DivergenceError(self._diverged)
        per_step = (self.prescribed.active or self.elements.pushing or self._servo.active
                    or self.joint_sensors.delayed)
        taken = self._step_one_by_one(int(n)) if per_step else self.sensors.step(int(n))
        info = self._engine.info.tolist()     # Python floats: cheaper than numpy scalars
        if info != self._last_info or taken != self.last_step[0]:
            # a new report only when it differs (the tree's always reads the same; keyword
            # construction of a namedtuple took 0.7 us of a 5 us step)
            self._last_info = info
            self.last_step = _new_tuple(StepReport, (
                taken, int(info[_ITERATIONS]), info[_RESIDUAL], _STOP_NAMES[int(info[_STOP])],
                info[_POS_ERROR]))
        if info[_STATUS] == arrays.STATUS_DIVERGED:
            index = int(info[arrays.INFO_BODY])
            if index < len(self.model.bodies):
                what = f'body {self.model.bodies[index].name!r}'
            else:
                drive = self.model.drives[index - len(self.model.bodies)]
                what = f'the rotor of the drive on {drive.joint!r}'
            self._diverged = (
                f'simulation diverged at t = {self.time:.6f} s: {what} reached a '
                f'non-finite or runaway state (speed above 1e4 m/s or 1e5 rad/s, rotor above '
                f'1e7 rad/s); stepping stopped and the last finite state is kept.  Reduce dt, '
                + ('add joint damping or use solver.integrator: symplectic_euler (an undamped '
                   'semi-implicit tree run is not energy-bounded), '
                   if self.config.solver.formulation == 'tree' else
                   'raise solver.iterations, ')
                + 'or check the inertias, drives and commands of that link, then reset.')
            raise DivergenceError(self._diverged)
        if self._speed_check:
            now = self._engine.state.time[0]
            if now >= self._next_speed_check:
                self._next_speed_check = float(now) + VELOCITY_CHECK_PERIOD
                self._check_velocity_limits()
        return self.last_step

    # -- joint state --------------------------------------------------------------------------
    def joint_positions(self):
        """Joint positions in :attr:`joint_names` order, rad or m (revolute angles unwrapped)."""
        return self._engine.state.joint_q[self._scalar].copy()

    def joint_velocities(self):
        """Joint velocities in :attr:`joint_names` order, rad/s or m/s."""
        return self._engine.joint_rates()[self._scalar]

    def joint_efforts(self):
        """
        Return the actuator efforts on the joints in :attr:`joint_names` order, N m or N.

        A driven joint reports its drive's output effort; other joints their commanded effort.
        A joint on a prescribed motion adds the effort the motion needed in the last step.
        """
        efforts = self._engine.state.joint_effort[self._scalar].copy()
        for name, d in self._drive_index.items():
            efforts[self._joint_position[name]] = self._output_effort(d)
        for name, effort in self.prescribed.efforts().items():
            efforts[self._joint_position[name]] += effort
        return efforts

    def _step_one_by_one(self, n):
        """
        Step one at a time, for what changes every step.

        Prescribed joints, lengths and paths aim at their curves at the step's end, and the
        linear actuators' forces follow the line between their ends.
        """
        state = self._engine.state
        taken = 0
        for _ in range(n):
            self.prescribed.aim(self.time + self.dt)
            if self._servo.active:
                self._servo_sample()
            held = state.body_wrench.copy()
            state.body_wrench[:] += self.elements.wrenches()
            before = self.prescribed.before_step()
            try:
                done = self.sensors.step(1)
            finally:
                state.body_wrench[:] = held
            if done and before is not None:
                self.prescribed.after_step(before)
            if done and self.joint_sensors.delayed:
                self.joint_sensors.record()
            taken += done
            if done < 1:
                break
        return taken

    def _output_effort(self, d):
        return float(self._engine.state.drive_effort[d])

    # -- drives -------------------------------------------------------------------------------
    def set_voltages(self, volts):
        """
        Hold these armature voltages on the named drives until changed (V).

        Values beyond a drive's supply voltage are clipped to it.

        Args:
            volts: dict driven joint name -> V.

        Returns:
            dict joint name -> applied V, for the values that were clipped (empty if none).

        Raises:
            CommandError: unknown or undriven joint, or a value that is not finite (nothing is
                changed).
        """
        values = self._finite_values(volts, 'set_voltages')
        drives = [self._driven(name, 'set_voltages: joint {!r} has no drive') for name in volts]
        clipped = {}
        self._servo.reset(drives)
        for name, d, value in zip(volts, drives, values):
            applied = float(np.clip(value, -self._supply[d], self._supply[d]))
            if applied != value:
                clipped[name] = applied
            self._engine.state.drive_voltage[d] = applied
        return clipped

    def _driven(self, name, problem):
        """Return a joint's drive index, or raise CommandError: ``problem`` names the joint."""
        if name not in self._drive_index:
            hint = close_matches(name, self.drive_names)
            driven = ', '.join(self.drive_names) or '(none: add a drives config section)'
            raise CommandError(problem.format(name) + f'; the driven joints are {driven}'
                               + (f' ({hint})' if hint else '') + '.  Nothing was changed.')
        return self._drive_index[name]

    def set_servo_targets(self, positions=None, velocities=None, efforts=None):
        """
        Servo the named drives: their own cascaded loops compute the voltage every step.

        The mode of each joint follows from the fields it appears in (docs/drives.md): in
        ``positions`` -> position mode (a velocity given too is the feed-forward); only in
        ``velocities`` -> velocity mode; only in ``efforts`` -> effort (current) mode.  Held
        until changed; :meth:`set_voltages` returns a drive to voltage mode.

        Args:
            positions: dict driven joint -> rad or m (clipped into the URDF limits).
            velocities: dict driven joint -> rad/s or m/s.
            efforts: dict driven joint -> N m or N at the joint (motor current = effort / (N Kt)).

        Returns:
            dict joint name -> applied position, for the positions that were clipped.

        Raises:
            CommandError: unknown or undriven joint, or a value that is not finite (nothing is
                changed).
        """
        fields = {'positions': positions or {}, 'velocities': velocities or {},
                  'efforts': efforts or {}}
        for what, values in fields.items():
            self._finite_values(values, f'set_servo_targets {what}')
            for name in values:
                self._driven(name, 'servo command: joint {!r} has no drive, so it has no '
                                   'position, velocity or current loop')
        clipped = {}
        index = self._engine.joint_index
        for name in set(fields['positions']) | set(fields['velocities']) | set(fields['efforts']):
            d = self._drive_index[name]
            if name in fields['positions']:
                joint = self.model.joints[index[name]]
                wanted = float(fields['positions'][name])
                position = float(np.clip(wanted, joint.lower, joint.upper))
                if position != wanted:
                    clipped[name] = position
                self._servo.command(d, POSITION, position=position,
                                    velocity=float(fields['velocities'].get(name, 0.0)))
            elif name in fields['velocities']:
                self._servo.command(d, VELOCITY, velocity=float(fields['velocities'][name]))
            else:
                self._servo.command(d, EFFORT, effort=float(fields['efforts'][name]))
        return clipped

    def drive_modes(self):
        """Return dict driven joint -> 'voltage', 'effort', 'velocity' or 'position'."""
        return {name: MODE_NAMES[int(self._servo.mode[d])]
                for name, d in self._drive_index.items()}

    def servo_current_command(self, joint):
        """Return the current (A) the servo loops of a joint's drive asked for last step."""
        return float(self._servo.current_command[self._drive_index[joint]])

    def _servo_sample(self):
        """One sample of the servo loops: the servoed drives' voltages for the next step."""
        state = self._engine.state
        positions, velocities = self.joint_sensors.read()   # what the drive measures
        self._servo.voltages(positions[self._drive_joint], velocities[self._drive_joint],
                             state.drive_current, state.rotor_speed, state.drive_voltage)

    def drive_state(self, joint):
        """
        Return the state of the drive on a joint.

        Returns:
            dict with ``voltage`` (applied, after supply clipping, V), ``current`` (A),
            ``motor_torque`` (Kt i, N m), ``rotor_speed`` (rad/s, relative to the stator) and
            ``output_effort`` (the effort the drive puts on the joint, N m or N).
        """
        if joint not in self._drive_index:
            raise CommandError(f'drive_state: joint {joint!r} has no drive; the driven joints '
                               f'are {", ".join(self.drive_names) or "(none)"}.')
        d = self._drive_index[joint]
        st = self._engine.state
        current = float(st.drive_current[d])
        return {'voltage': float(st.drive_voltage[d]), 'current': current,
                'motor_torque': float(self._engine.drives.kt[d]) * current,
                'rotor_speed': float(st.rotor_speed[d]), 'output_effort': self._output_effort(d)}

    def _joint_indices(self, names, what):
        indices = []
        for name in names:
            if name not in self._joint_position:
                hint = close_matches(name, self.joint_names)
                raise CommandError(
                    f'{what}: unknown joint {name!r}; the movable joints are '
                    f'{", ".join(self.joint_names) or "(none)"}'
                    + (f' ({hint})' if hint else '') + '.  Nothing was changed.')
            indices.append(self._scalar[self._joint_position[name]])
        return indices

    @staticmethod
    def _finite_values(values, what):
        out = []
        for name, value in values.items():
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise CommandError(f'{what}: value {value!r} for joint {name!r} is not a '
                                   f'number.  Nothing was changed.') from None
            if not math.isfinite(value):
                raise CommandError(f'{what}: value {value} for joint {name!r} is not finite.  '
                                   f'Nothing was changed.')
            out.append(value)
        return out

    def set_joint_state(self, positions, velocities=None):
        """
        Place the robot at joint positions (and velocities), with consistent body states.

        Joints not named keep their position; named joints take the given velocity (0 when
        ``velocities`` is None or does not name them); mimic joints follow their leader.  The
        floating base (if any) keeps its pose and velocity.  Warm-start impulses are cleared.

        Args:
            positions: dict joint name -> rad or m.
            velocities: dict joint name -> rad/s or m/s, or None.

        Raises:
            CommandError: unknown joint or non-finite value (nothing is changed).
        """
        velocities = velocities or {}
        p_idx = self._joint_indices(positions, 'set_joint_state')
        v_idx = self._joint_indices(velocities, 'set_joint_state')
        p_val = self._finite_values(positions, 'set_joint_state')
        v_val = self._finite_values(velocities, 'set_joint_state')
        q = self._engine.state.joint_q.copy()
        qd = self._engine.joint_rates()
        q[p_idx] = p_val
        qd[p_idx] = 0.0
        qd[v_idx] = v_val
        self._place(q, qd)

    def _place(self, q, qd, keep_free_joints=True):
        m = self._engine.mimics
        for _ in range(len(m.follower)):  # mimic chains settle in at most n passes
            q[m.follower] = m.multiplier * q[m.leader] + m.offset
            qd[m.follower] = m.multiplier * qd[m.leader]
        self._engine.place_children(q, qd, keep_free_joints)
        self._diverged = None

    def set_joint_efforts(self, efforts):
        """
        Hold these efforts on the named joints until changed (N m or N).

        With ``limits.enforce_effort`` (the default) values beyond a joint's URDF effort limit
        are clipped to it.

        Returns:
            dict joint name -> applied effort, for the values that were clipped (empty if none).

        Raises:
            CommandError: unknown joint or non-finite value (nothing is changed).
        """
        idx = self._joint_indices(efforts, 'set_joint_efforts')
        val = self._finite_values(efforts, 'set_joint_efforts')
        clipped = {}
        if self.config.limits.enforce_effort:
            for k, (name, i) in enumerate(zip(efforts, idx)):
                bound = self.model.joints[i].effort_limit
                applied = min(max(val[k], -bound), bound)
                if applied != val[k]:
                    clipped[name] = val[k] = applied
        self._engine.state.joint_effort[idx] = val
        return clipped

    def _check_velocity_limits(self):
        """Log, once per joint, a joint moving faster than its URDF velocity limit."""
        speeds = np.abs(self._engine.joint_rates()[self._speed_joints])
        beyond = speeds > self._speed_bound
        if not beyond.any():   # the usual case, every 10 ms: kept cheap
            return
        for c in np.nonzero(beyond)[0]:
            k = self._speed_checked[c]
            name = self.joint_names[k]
            if name not in self.velocity_limit_exceeded:
                self.velocity_limit_exceeded.add(name)
                LOGGER.warning(
                    'joint %r moves at %.3g, beyond its URDF velocity limit %.3g (rad/s or '
                    'm/s) at t = %.3f s; reported once.  Set limits.enforce_velocity: true to '
                    'hold joints below their limits.', name, speeds[c], self._velocity_limits[k],
                    self.time)

    # -- poses --------------------------------------------------------------------------------
    def _link(self, link_name, what):
        link = self.model.links.get(link_name)
        if link is None:
            hint = close_matches(link_name, self.link_names)
            raise CommandError(f'{what}: unknown link {link_name!r}'
                               + (f' ({hint})' if hint else '') + '.')
        return link

    def link_pose(self, link_name):
        """
        World pose of any URDF link frame (merged links included).

        Returns:
            (xyz np.ndarray(3) m, quat_wxyz np.ndarray(4)).
        """
        link = self._link(link_name, 'link_pose')
        if link.body < 0:
            return np.array(link.pos, dtype=float), np.array(link.quat, dtype=float)
        x, q = self._engine.body_pose(link.body)
        offset = np.asarray(link.pos, dtype=float) - self._engine.body_com[link.body]
        return x + quat_to_matrix(q) @ offset, quat_multiply(q, link.quat)

    def link_poses(self, link_names):
        """
        World poses of several URDF link frames at once, as :meth:`link_pose` gives each.

        One batched composition for the node's /tf and the view, which pose every link 200
        times a second (the links' bodies and offsets are looked up once per list of names).

        Returns:
            (xyz np.ndarray(n, 3) m, quat_wxyz np.ndarray(n, 4)), in the order of the names.
        """
        key = tuple(link_names)
        plan = self._pose_plans.get(key)
        if plan is None or plan[0] is not self.model:
            links = [self._link(name, 'link_poses') for name in key]
            n = len(links)
            bodies = np.array([link.body for link in links], dtype=int).reshape(n)
            pos = np.array([link.pos for link in links], dtype=float).reshape(n, 3)
            rot = np.array([link.quat for link in links], dtype=float).reshape(n, 4)
            moving = np.nonzero(bodies >= 0)[0]
            b = bodies[moving]
            plan = (self.model, moving, b, pos[moving] - self._engine.body_com[b],
                    rot[moving], pos, rot)
            self._pose_plans[key] = plan
        _, moving, b, offset, rot, xyz, quat = plan
        xyz, quat = xyz.copy(), quat.copy()
        if len(moving):
            state = self._engine.state
            body_quat = state.body_quat[b]
            xyz[moving] = state.body_pos[b] + quats_rotate(body_quat, offset)
            quat[moving] = quats_multiply(body_quat, rot)
        return xyz, quat

    def link_twist(self, link_name):
        """
        World velocity of a link frame's origin and the link's angular velocity.

        Returns:
            (linear np.ndarray(3) m/s, angular np.ndarray(3) rad/s), world frame.
        """
        link = self._link(link_name, 'link_twist')
        if link.body < 0:
            return np.zeros(3), np.zeros(3)
        x, _ = self._engine.body_pose(link.body)
        w = self._engine.body_angular_velocity(link.body)
        origin, _ = self.link_pose(link_name)
        return self._engine.state.body_lin_vel[link.body] + np.cross(w, origin - x), w

    def set_link_wrench(self, link_name, force, torque=(0.0, 0.0, 0.0)):
        """
        Hold an external wrench on a link until changed (zeros remove it; reset clears all).

        Args:
            link_name: any URDF link (a merged link pushes its whole body).
            force: (3,) N, world frame, acting through the body's centre of mass.
            torque: (3,) N m, world frame.

        Raises:
            CommandError: unknown link, a link fixed to the world, or non-finite values.
        """
        body, wrench = self.checked_wrench(link_name, force, torque)
        self._engine.state.body_wrench[body] = wrench

    def checked_wrench(self, link_name, force, torque, what='set_link_wrench'):
        """
        Return (body index, (6,) wrench) of a wrench :meth:`set_link_wrench` would hold.

        Raises:
            CommandError: unknown link, a link fixed to the world, or non-finite values (the
                message starts with ``what``).
        """
        link = self._link(link_name, what)
        values = [np.asarray(v, dtype=float).ravel() for v in (force, torque)]
        if any(v.size != 3 or not np.all(np.isfinite(v)) for v in values):
            raise CommandError(f'{what}: force and torque must be finite vectors of 3 '
                               '(N and N m).  Nothing was changed.')
        if link.body < 0:
            raise CommandError(f'{what}: link {link_name!r} is fixed to the world; '
                               'a wrench on it does nothing.  Nothing was changed.')
        return link.body, np.concatenate(values)

    def contacts(self, touching=True):
        """
        Return the contact points of the last step.

        Args:
            touching: only points that carried force (the default); False adds the speculative
                points found within ``collision.margin`` that did not push.

        Returns:
            list of :data:`Contact`; forces are the last step's impulses divided by dt.
        """
        c = self._engine.contacts
        if c is None:
            return []  # a formulation without contacts (tree)
        names = [s.name for s in self.model.shapes]
        out = []
        for i in range(int(c.count[0])):
            normal_force = c.impulse[i, 0] / self.dt
            if touching and normal_force <= 0.0:
                continue
            friction = (c.impulse[i, 1] * c.frame[i, 1] + c.impulse[i, 2] * c.frame[i, 2])
            out.append(Contact(
                id=int(c.id[i]), link_a=names[c.shape[i, 0]], link_b=names[c.shape[i, 1]],
                position=c.pos[i].copy(), normal=c.normal[i].copy(), depth=float(c.depth[i]),
                normal_force=float(normal_force), friction_force=friction / self.dt))
        return out

    def joint_anchor_errors(self):
        """
        How far each kept joint's child anchor is from where the joint allows it, m.

        The distance between the anchors on parent and child (revolute, continuous, spherical,
        fixed), from the parent's axis line (prismatic) or from the parent's plane (planar).

        Returns:
            dict joint name -> m for every joint the engine keeps (merged fixed joints are
            exact by construction and absent; floating joints have no anchor).
        """
        engine = self._engine
        errors = {}
        for i, j in enumerate(self.model.joints):
            if j.type == 'floating' or j.element:
                continue  # no anchor, or an element (docs/prescribed.md)
            pa, qa = engine.joint_frame_world(i, 0)
            gap = engine.joint_frame_world(i, 1)[0] - pa
            kind = jt.TYPES[int(engine.joints.type[i])]
            errors[j.name] = float(np.linalg.norm(
                kind.anchor_gap(gap, quat_to_matrix(qa) @ engine.joints.axis[i])))
        return errors

    def mechanical_energy(self):
        """
        Kinetic and gravitational potential energy of the robot, J (potential zero at z = 0).

        Returns:
            (kinetic, potential).
        """
        engine = self._engine
        st = engine.state
        mass = 1.0 / engine.bodies.inv_mass
        kinetic = 0.5 * np.sum(mass * np.sum(st.body_lin_vel ** 2, axis=1))
        for b in range(len(mass)):
            kinetic += 0.5 * engine.body_angular_velocity(b) @ st.body_ang_mom[b]
        kinetic += 0.5 * np.sum(st.rotor_speed ** 2 / engine.drives.inv_rotor_inertia)
        potential = -np.sum(mass * (st.body_pos @ engine.gravity))
        return float(kinetic), float(potential)

    # -- robots added and removed at run time ---------------------------------------------------
    def add_robot(self, name, description, config=None, position=(0.0, 0.0, 0.0),
                  rpy=(0.0, 0.0, 0.0)):
        """
        Add a robot to the running simulation (docs/worlds.md, "Robots added at run time").

        The robots already there keep their state (bodies, joints, drives, commands held);
        their warm starts, sensor histories, servo targets and prescribed motions start again.
        The new robot starts at rest in its config's initial state, its base at the pose.

        Args:
            name: the robot's name: its namespace and TF prefix; not a robot's, link's or scene
                object's name already.
            description: URDF or xacro path, or the URDF XML text.
            config: its config (path, mapping or None for the defaults).
            position, rpy: its base's pose in the world, m and rad.

        Returns:
            the RobotView of the new robot (``sim.robots[name]``).

        Raises:
            ConfigError, DescriptionError: the robot cannot be built (nothing was changed).
            CommandError: the name is taken, or the simulator was built without its
                description.
        """
        from ..description.world import robot_entry, single_robot_world
        world = self.world
        if world is None:
            if self.description is None:
                raise CommandError('add_robot: this Simulator was built from a model without '
                                   'its description; build it with Simulator.from_urdf.')
            world = single_robot_world(self.description, self.config)
        taken = ({r.name for r in world.robots} | set(self.model.links)
                 | set(self.config.scene))
        if name in taken:
            raise CommandError(f'add_robot: the name {name!r} is taken (a robot, link or scene '
                               'object); give another name.  Nothing was changed.')
        robot, notes = robot_entry(name, description, config,
                                   {'position': list(position), 'rpy': list(rpy)},
                                   world.config, where=f"robot '{name}'")
        for note in notes:
            LOGGER.warning(note)
        world = replace(world, robots=world.robots + (robot,))
        self._rebuild_world(world)
        return self.robots[name]

    def remove_robot(self, name):
        """
        Remove a robot added to the world (its bodies, joints, drives and sensors go).

        Raises:
            CommandError: no such robot, or the simulator's first robot of a single-robot
                start (the node's own robot stays).  Nothing was changed.
        """
        world = self.world
        robots = {r.name: r for r in world.robots} if world is not None else {}
        if name not in robots:
            raise CommandError(f'remove_robot: no robot named {name!r}; the robots are '
                               f'{", ".join(r for r in robots) or "(none added)"}.')
        if not robots[name].own_prefix:
            raise CommandError(f'remove_robot: {name!r} is the robot this simulator started '
                               'with; it stays.')
        self._rebuild_world(replace(world, robots=tuple(r for r in world.robots
                                                        if r.name != name)))

    def _rebuild_world(self, world):
        """Rebuild everything for ``world``; what stays keeps its state."""
        from ..description.world import build_world, world_config
        from .entities import carry_state
        config = world_config(world)
        # the objects spawned at run time stay (the world's own scene is in world_config)
        robot_scene = set(config.scene)
        spawned = {k: v for k, v in self.config.scene.items()
                   if k in self.entities.spawned and k not in robot_scene}
        config = replace(config, scene={**config.scene, **spawned},
                         dt=self.config.dt, solver=self.config.solver)
        model, config = build_world(world, config)
        old_engine, old_model, old_spawned = self._engine, self.model, list(self.entities.spawned)
        old_robots = list(self.entities.spawned_robots)
        self.__init__(model, config, self.description, world)
        carry_state(old_engine, old_model, self._engine, model)
        self.entities.spawned = [n for n in old_spawned if n in config.scene]
        names = {r.name for r in world.robots}
        self.entities.spawned_robots = [n for n in old_robots if n in names]

    def set_base_state(self, position, quat_wxyz, linear_velocity=None, angular_velocity=None,
                       robot=None):
        """
        Place the floating base's root link (world frame) and carry the robot along.

        Args:
            position: (3,) root link origin, m.
            quat_wxyz: (4,) root link orientation.
            linear_velocity: (3,) velocity of the root link origin, m/s (default 0).
            angular_velocity: (3,) rad/s (default 0).
            robot: in a world, the robot whose base it is (None: the first robot's).

        Raises:
            CommandError: the robot has a fixed base, or a value is not finite.
        """
        body = 0
        if robot is not None:
            part = next((p for p in self.model.robots if p.name == robot), None)
            if part is None or not part.floating:
                raise CommandError(f'set_base_state: {robot!r} is not a robot with a floating '
                                   'base.  Nothing was changed.')
            body = part.base_body
        elif not self.model.floating_base:
            raise CommandError('set_base_state: the robot has a fixed base; set `base: '
                               'floating` in the config to move it.')
        values = [np.asarray(v if v is not None else np.zeros(3), dtype=float).ravel()
                  for v in (position, quat_wxyz, linear_velocity, angular_velocity)]
        shapes = [3, 4, 3, 3]
        if any(v.size != n or not np.all(np.isfinite(v)) for v, n in zip(values, shapes)):
            raise CommandError('set_base_state: position, quat_wxyz, linear_velocity and '
                               'angular_velocity must be finite vectors of 3, 4, 3 and 3.')
        pos, quat, lin, ang = values
        if np.linalg.norm(quat) < 1e-9:
            raise CommandError('set_base_state: quat_wxyz has zero length.')
        quat = quat / np.linalg.norm(quat)
        q = self._engine.state.joint_q.copy()
        qd = self._engine.joint_rates()
        com = quat_to_matrix(quat) @ self._engine.body_com[body]
        self._engine.set_body_state(body, pos + com, quat, lin + np.cross(ang, com), ang)
        self._place(q, qd)

    def reset(self, keep_time=False):
        """
        Return to the configured initial state (time 0, base pose, initial joint state).

        Args:
            keep_time: leave the simulated time where it is (the state alone is reset).
        """
        engine = self._engine
        if not keep_time:
            engine.state.time[0] = 0.0
        engine.state.joint_effort[:] = 0.0
        engine.state.drive_voltage[:] = 0.0
        engine.state.body_wrench[:] = 0.0
        self._next_speed_check = 0.0
        engine.state.drive_current[:] = 0.0
        for body, pos, quat in self.model.free_bases():
            quat = np.asarray(quat, dtype=float)
            com = quat_to_matrix(quat) @ engine.body_com[body]
            engine.set_body_state(body, np.asarray(pos, dtype=float) + com, quat,
                                  np.zeros(3), np.zeros(3))
        self.sensors.clear()
        if self._servo is not None:
            self._servo.reset()
        self.prescribed.release()
        self.elements.clear()
        for item in self.model.objects:
            # the object's frame at its pose; its body's COM where that puts it (a urdf
            # object's inertial origin need not be its frame's)
            com = quat_to_matrix(item.quat) @ engine.body_com[item.body]
            engine.set_body_state(item.body, item.pos + com, item.quat,
                                  item.linear_velocity + np.cross(item.angular_velocity, com),
                                  item.angular_velocity)
        q = np.zeros(len(self.model.joints))
        qd = np.zeros(len(self.model.joints))
        index = engine.joint_index
        for name, value in self.config.initial_positions.items():
            q[index[name]] = value
        for name, value in self.config.initial_velocities.items():
            qd[index[name]] = value
        self._place(q, qd, keep_free_joints=False)
        engine.close_loops()
        self.joint_sensors.clear()

    def reset_time(self):
        """Set the simulated time to 0 and keep the state (the sensors start again)."""
        self._engine.state.time[0] = 0.0
        self._next_speed_check = 0.0
        self.sensors.clear()
        self.joint_sensors.clear()


def _make_engine(model, config):
    """Return the engine of the configured formulation (docs/tree.md for the tree one)."""
    for warning in check_formulation(model, config):
        LOGGER.warning(warning)
    args = (model, config.dt, config.gravity, config.solver, config.limits, config.collision)
    if config.solver.formulation != 'tree':
        return Engine(*args)
    from ..physics.tree_engine import TreeEngine
    return TreeEngine(*args)
