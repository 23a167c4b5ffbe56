"""
Force-torque sensors, IMUs and range sensors of a Simulator: the ``sim.sensors`` component.

A force-torque sensor reads the wrench its joint transmitted in the last step (the engine's
``joint_wrench``: in maximal coordinates ``physics/sensors.py`` sums the joint's row impulses,
in tree mode ``physics/tree.py``'s Newton-Euler pass takes it from the step's motion), at its
rate, in its frame and measure direction, with its noise and low-pass filter
(docs/sensors.md).  An IMU reads its frame's orientation in the world, its angular velocity
and its specific force (the acceleration of its point over the last step, less gravity) in its
own axes, with Gaussian noise, turn-on biases and bias walks as SDF's noise model has them
(docs/sensors.md, "IMU").  A lidar or depth camera casts its rays against the collision
shapes at its pose when a sample is due (``physics/rays.py``), with Gaussian noise and a
resolution (docs/sensors.md, "Range sensors").  The component owns the sensors' state (latest
sample, history, filter, noise generator) and the stepping that stops at their sample times;
the Simulator steps through it.
"""
import collections
import logging
import math

import numpy as np

from ..description.urdf import close_matches
from ..errors import CommandError
from ..physics import arrays, rays
from ..physics.compile import kernels
from ..physics.engine import _compiled_entry_point
from ..physics.sensors import imu_reading
from ..rotations import quat_multiply, quat_to_matrix

LOGGER = logging.getLogger('jointsim_ros')
#: Samples of each force-torque sensor kept for readers that poll (the node), count.
HISTORY = 1000
#: Samples of each range sensor kept for readers that poll, count (a scan is large).
RANGE_HISTORY = 8

#: A range sensor's sample, as :meth:`Sensors.range_sample` returns it.
RangeSample = collections.namedtuple('RangeSample', [
    'time',      # simulated time of the sample, s
    'count',     # samples so far (0: no sample yet; the reading is then of the current state)
    'ranges',    # (rows, columns) readings, m, read-only (Sensors.ranges)
    'position',  # (3,) the sensor frame's origin when the rays were cast, world, m
    'quat',      # (4,) the sensor frame's orientation then, world, wxyz
])


class Sensors:
    """
    The force-torque sensors, IMUs and range sensors of one Simulator (``sim.sensors``).

    Args:
        sim: the Simulator (its model, engine, time and dt are read, never written).
        specs: [(SensorModel, joint index)] from the model.
        imus: the model's ImuModel tuple.
        ranges: the model's RangeSensorModel tuple.

    Attributes:
        names: force-torque sensor names, in the model's order.
        imu_names: IMU names, in the model's order.
        range_names: lidar and depth camera names, in the model's order.
    """

    def __init__(self, sim, specs, imus=(), ranges=()):
        self._sim = sim
        self.names = tuple(spec.name for spec, _ in specs)
        self._states = {spec.name: _SensorState(spec, joint) for spec, joint in specs}
        self.imu_names = tuple(imu.name for imu in imus)
        self._imus = {imu.name: _ImuState(imu, sim.model) for imu in imus}
        self.range_names = tuple(spec.name for spec in ranges)
        self._ranges = {spec.name: _RangeState(spec) for spec in ranges}
        self._all = {**self._states, **self._imus, **self._ranges}
        #: the ray casts' scratch arrays (physics.arrays.RayWork) and the engine they fit
        self._ray_work = (None, None)
        #: the compiled ray kernels' entry points, by dispatcher
        self._entry = {}

    def __len__(self):
        return len(self._states)

    def __iter__(self):
        return iter(self.names)

    def wrench(self, sensor_name):
        """
        Return the latest sample of a force-torque sensor.

        Returns:
            np.ndarray(6): force xyz (N) and torque xyz (N m, about the sensor point), in the
            sensor's frame and measure direction (docs/sensors.md); zeros before the first
            sample.

        Raises:
            CommandError: unknown sensor name.
        """
        return self._state(sensor_name).value.copy()

    def sample(self, sensor_name):
        """
        Return (time s, wrench np.ndarray(6), sample count) of a sensor's latest sample.

        The count grows by one per sample, so a caller can tell a new sample from an old one.
        A range sensor's readings are its read-only array (:meth:`ranges`), not a copy.
        """
        state = self._any(sensor_name)
        if sensor_name in self._ranges:
            return state.time, self.ranges(sensor_name), state.count
        return state.time, state.value.copy(), state.count

    def frame(self, sensor_name):
        """Return the link (or sensor) name of the frame a sensor's reading is expressed in."""
        if sensor_name in self._imus or sensor_name in self._ranges:
            return sensor_name
        state = self._state(sensor_name)
        joint = self._sim.model.joints[state.joint]
        return {'child': joint.child_link, 'parent': joint.parent_link,
                'sensor': sensor_name}[state.spec.frame]

    def history(self, sensor_name, after=0):
        """
        Return a sensor's recent samples whose count is above ``after``, oldest first.

        At most the last ``HISTORY`` samples are kept (``RANGE_HISTORY`` of a range sensor);
        each is (time s, reading, count).  A count lower than ``after`` at the end means the
        simulator was reset since.
        """
        history = self._any(sensor_name).history
        if history and history[-1][2] < after:
            after = 0
        newer = []
        for sample in reversed(history):
            if sample[2] <= after:
                break
            newer.append(sample)
        return newer[::-1]

    def imu(self, imu_name):
        """
        Return the latest sample of an IMU, with its noise.

        Returns:
            np.ndarray(10): orientation of the sensor frame in the world (w, x, y, z), angular
            velocity (rad/s) and specific force (the acceleration less gravity, m/s^2: +9.81
            up at rest), both in the sensor frame; before the first sample, the exact value.

        Raises:
            CommandError: unknown IMU name.
        """
        state = self._imu(imu_name)
        return state.value.copy() if state.count else self.measure(imu_name)

    def measure(self, sensor_name):
        """
        Return a sensor's exact reading of the last step (no noise, no filter, no bias).

        Returns:
            np.ndarray(6) for a force-torque sensor: the wrench its joint transmitted, force
            (N) and torque (N m) about the sensor point, in the sensor's frame and measure
            direction.  np.ndarray(10) for an IMU: as :meth:`imu`, exact.  A range sensor's
            readings cast now, (rows, columns), m (no noise, no resolution; as :meth:`ranges`).
        """
        if sensor_name in self._imus:
            return self._imus[sensor_name].exact(self._sim)
        if sensor_name in self._ranges:
            return self._cast(self._ranges[sensor_name])[0]
        state = self._state(sensor_name)
        engine = self._sim._engine
        force, torque_com, com, quat = engine.joint_wrench(state.joint)
        if not (quat[0] or quat[1] or quat[2] or quat[3]):
            return np.zeros(6)  # no step taken yet
        point_in_body, mount_rot, parent_body, parent_rot = state.geometry(self._sim)
        rot = quat_to_matrix(quat)
        r = -(rot @ point_in_body)          # com - the sensor point
        if parent_rot is None:
            frame_rot = rot @ mount_rot
        elif parent_body < 0:
            frame_rot = parent_rot
        else:
            start = engine.step_start()[parent_body]
            frame_rot = quat_to_matrix(start[3:7]) @ parent_rot
        torque = torque_com + cross(r, force)
        out = np.empty(6)
        out[:3] = force @ frame_rot          # frame_rot.T @ force
        out[3:] = torque @ frame_rot
        if state.spec.measure_direction == 'child_to_parent':
            out *= -1.0
        return out

    # -- range sensors ---------------------------------------------------------------------
    def ranges(self, sensor_name):
        """
        Return the latest sample of a lidar or depth camera.

        Returns:
            np.ndarray (rows, columns), m, read-only (a new array each sample, so a reader may
            keep it): a lidar's ray lengths, (vertical, horizontal) samples, rows from the
            lowest elevation up and columns from min_angle to max_angle; a depth camera's depth
            along its axis, (height, width), the image's top row first and its left column
            first.  +inf where nothing is within the range max, -inf where a hit is nearer
            than the range min (REP 117).  Before the first sample: the exact reading of the
            current state (no noise).

        Raises:
            CommandError: unknown range sensor.
        """
        state = self._range(sensor_name)
        if state.count:
            return state.value
        value, _ = self._cast(state)
        value.flags.writeable = False
        return value

    def range_sample(self, sensor_name):
        """
        Return a range sensor's latest sample with its time, count and the pose it was cast at.

        Returns:
            RangeSample(time s, count, ranges, position (3,) m, quat (4,) wxyz): the count
            grows by one per sample (a reader publishes a sample once); position and quat are
            the sensor frame's world pose when the rays were cast.  Before the first sample:
            count 0 and the exact reading of the current state.
        """
        state = self._range(sensor_name)
        if state.count:
            return RangeSample(state.time, state.count, state.value, state.pose[:3].copy(),
                               state.pose[3:].copy())
        value, pose = self._cast(state)
        value.flags.writeable = False
        return RangeSample(self._sim.time, 0, value, pose[:3], pose[3:])

    def range_sensor(self, sensor_name):
        """
        Return a range sensor's model: what a publisher needs to describe its readings.

        Returns:
            description.model.RangeSensorModel: ``kind`` ('lidar' or 'depth_camera'),
            ``link``, ``pos`` and ``quat`` (its frame on the link), ``rate`` (Hz),
            ``range_min``, ``range_max``, ``resolution`` (m), ``noise_mean``, ``noise_stddev``
            (m); a lidar's ``horizontal`` and ``vertical`` (samples, min_angle, max_angle) with
            ``azimuths``, ``elevations``, ``angle_increment``, ``vertical_increment``; a depth
            camera's ``width``, ``height``, ``horizontal_fov``, ``vertical_fov``,
            ``focal_length`` and ``principal_point`` (pixels); ``shape`` of a reading.
        """
        return self._range(sensor_name).spec

    def ray_directions(self, sensor_name):
        """
        Return a range sensor's unit ray directions in its frame, (rows, columns, 3), read-only.

        ``ranges[..., None] * ray_directions`` are a lidar's points in its frame; a depth
        camera's points are ``depth / ray_directions[..., :1] * ray_directions``.
        """
        dirs = self._range(sensor_name).grid.dirs[..., :3]
        dirs.flags.writeable = False
        return dirs

    def cast_rays(self, origins, directions, max_range=np.inf, ignore_link=None, links=False):
        """
        Cast rays against the collision shapes at the current state (no sensor, no noise).

        Args:
            origins: (n, 3) or (3,) ray origins, world, m.
            directions: (n, 3) or (3,) directions, world (normalised here).
            max_range: the farthest hit reported, m (one number or (n,)).
            ignore_link: a link (or scene object) whose shapes are not seen, or None.
            links: also return the link, scene object or 'ground' each ray hit.

        Returns:
            np.ndarray (n,) distance to the first surface each ray enters, m, +inf for none
            within max_range; with ``links``, also a list of n names ('' for none).

        Raises:
            CommandError: directions of zero length, non-finite values, or an unknown link.
        """
        o = np.ascontiguousarray(origins, dtype=float).reshape(-1, 3)
        d = np.ascontiguousarray(directions, dtype=float).reshape(-1, 3)
        if len(d) == 1 and len(o) > 1:
            d = np.repeat(d, len(o), axis=0)
        if len(o) == 1 and len(d) > 1:
            o = np.repeat(o, len(d), axis=0)
        square = np.einsum('ij,ij->i', d, d)        # the kernel normalises the directions
        if len(o) != len(d) or not (np.isfinite(o).all() and np.isfinite(square).all()
                                    and (square > 0.0).all()):
            raise CommandError('cast_rays: origins and directions must be finite (n, 3) arrays '
                               'with directions of non-zero length.')
        lengths = np.broadcast_to(np.asarray(max_range, dtype=float), (len(o),)).copy()
        engine = self._sim._engine
        skip = -1
        if ignore_link is not None:
            skip = self._shape_link(ignore_link)
        out = np.empty(len(o))
        hit = np.empty(len(o), dtype=np.int64)
        state = engine.state
        self._call(rays.cast, (engine.shapes, engine.polytopes, state.body_pos, state.body_quat,
                               skip, o, d, lengths, self._work(engine), out, hit))
        if not links:
            return out
        names = [s.name for s in self._sim.model.shapes]
        return out, [names[k] if k >= 0 else '' for k in hit]

    def _shape_link(self, link_name):
        """Return the Shapes.link index of a link's shapes, -1 when it has none."""
        model = self._sim.model
        names = list(dict.fromkeys(s.name for s in model.shapes))
        if link_name in names:
            return names.index(link_name)
        known = set(model.links) | {'ground'}
        if link_name not in known:
            hint = close_matches(link_name, sorted(known))
            raise CommandError(f'unknown link {link_name!r}' + (f' ({hint})' if hint else '')
                               + '.')
        return -1

    def _work(self, engine):
        """Return the ray casts' scratch arrays for ``engine`` (made again for a new engine)."""
        made_for, work = self._ray_work
        if made_for is not engine:
            work = rays.ray_work(len(engine.state.body_pos), len(engine.shapes.kind))
            self._ray_work = (engine, work)
        return work

    def _call(self, dispatcher, args):
        """Call a sensor kernel (its compiled entry point after the first call)."""
        function = self._entry.get(dispatcher)
        if function is not None:
            return function(*args)
        if not kernels.cached(dispatcher, args):
            LOGGER.info("compiling the sensors' kernels (once, a few seconds; later runs load "
                        'them from the cache)')
        result = dispatcher(*args)
        self._entry[dispatcher] = _compiled_entry_point(dispatcher, args)
        return result

    def _cast(self, state):
        """Cast a range sensor's rays now; return (exact readings, (7,) sensor pose)."""
        sim = self._sim
        engine = sim._engine
        body, mount, skip = state.placement(sim, self._shape_link)
        work = self._work(engine)
        out = np.empty(state.grid.dirs.shape[:2])
        st = engine.state
        self._call(rays.scan, (engine.shapes, engine.polytopes, st.body_pos, st.body_quat, body,
                               mount, skip, state.grid, work, out))
        return out, work.sensor.copy()

    def _range(self, name):
        state = self._ranges.get(name)
        if state is None:
            hint = close_matches(name, self.range_names)
            raise CommandError(f'unknown range sensor {name!r}' + (f' ({hint})' if hint else '')
                               + '; range sensors: ' + (', '.join(self.range_names) or 'none')
                               + '.')
        return state

    def clear(self):
        """Forget every sample (the simulator's reset)."""
        for state in self._all.values():
            state.clear()

    def step(self, n):
        """Step the engine n times in as few calls as the sample times allow; return steps."""
        engine = self._sim._engine
        if not self._all:
            return engine.step(n)
        dt = self._sim.dt
        taken = 0
        while taken < n:
            chunk = n - taken
            now = self._sim.time
            for state in self._all.values():
                if state.spec.rate > 0.0:
                    due = math.ceil((state.next_time - now) / dt - 1e-6)
                    chunk = min(chunk, max(1, due))
            done = engine.step(chunk)
            taken += done
            if done < chunk or engine.info[arrays.INFO_STATUS] != arrays.STATUS_OK:
                break
            self._take_due(final=taken == n)
        return taken

    def _state(self, name):
        state = self._states.get(name)
        if state is None:
            hint = close_matches(name, self.names)
            also = ' (an IMU: read it with imu())' if name in self._imus else ''
            raise CommandError(f'unknown force-torque sensor {name!r}{also}'
                               + (f' ({hint})' if hint else '') + '; sensors: '
                               + (', '.join(self.names) or 'none') + '.')
        return state

    def _imu(self, name):
        state = self._imus.get(name)
        if state is None:
            hint = close_matches(name, self.imu_names)
            also = (' (a force-torque sensor: read it with wrench())' if name in self._states
                    else '')
            raise CommandError(f'unknown IMU {name!r}{also}' + (f' ({hint})' if hint else '')
                               + '; IMUs: ' + (', '.join(self.imu_names) or 'none') + '.')
        return state

    def _any(self, name):
        if name in self._imus:
            return self._imus[name]
        if name in self._ranges:
            return self._ranges[name]
        return self._state(name)

    def _take_due(self, final):
        """Take the samples that are due (rate 0: one at the end of every step call)."""
        now = self._sim.time
        for name, state in self._all.items():
            rate = state.spec.rate
            due = now >= state.next_time - 1e-9 if rate > 0.0 else final
            if not due:
                continue
            period = 1.0 / rate if rate > 0.0 else max(now - state.time, self._sim.dt)
            if name in self._ranges:
                state.take(*self._cast(state), now)
            else:
                state.take(self.measure(name), now, period)


def cross(a, b):
    """Return a x b of two 3-vectors (np.cross costs ten times more on vectors this short)."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))


def keep_sample(state, value, now, copy=True):
    """
    Make ``value`` a sensor state's latest sample at ``now`` and set its next sample time.

    ``copy``: keep a copy in the history (False for a read-only array no one writes).
    """
    state.value = value
    state.time = now
    state.count += 1
    state.history.append((now, value.copy() if copy else value, state.count))
    rate = state.spec.rate
    if rate > 0.0:
        # samples at k / rate; a late one (a step call ending after it) does not push the
        # rest later
        state.next_time = max(state.next_time + 1.0 / rate, now - 0.5 / rate)


class _SensorState:
    """A force-torque sensor's spec, joint index, latest sample, filter and noise generator."""

    def __init__(self, spec, joint):
        self.spec = spec
        self.joint = joint
        self._geometry = (None, None)
        self.clear()

    def geometry(self, sim):
        """
        Return where the sensor sits on its bodies, fixed for a model.

        (sensor point in the child body's frame about its centre of mass, sensor axes in the
        child body, the parent's body index, the parent link's axes in its body or None when
        the reading is not in the parent's frame); kept for the engine it was made for (a
        spawn makes a new one).
        """
        engine, made = self._geometry
        if engine is sim._engine:
            return made
        spec, model = self.spec, sim.model
        joint = model.joints[self.joint]
        child = model.links[joint.child_link]
        child_rot = quat_to_matrix(child.quat)
        point = np.asarray(child.pos, dtype=float) - sim._engine.body_com[child.body]
        mount_rot, parent_body, parent_rot = child_rot, -1, None
        if spec.frame == 'sensor':
            point = point + child_rot @ spec.pos
            mount_rot = child_rot @ quat_to_matrix(spec.quat)
        elif spec.frame == 'parent':
            parent = model.links[joint.parent_link]
            parent_body, parent_rot = parent.body, quat_to_matrix(parent.quat)
        made = (point, mount_rot, parent_body, parent_rot)
        self._geometry = (sim._engine, made)
        return made

    def clear(self):
        """Forget the samples (reset)."""
        self.value = np.zeros(6)
        self.time = 0.0
        self.count = 0
        # samples at k / rate, k = 1, 2, ... of simulated time
        self.next_time = 1.0 / self.spec.rate if self.spec.rate > 0.0 else 0.0
        self.history = collections.deque(maxlen=HISTORY)
        self.rng = np.random.default_rng(self.spec.seed)

    def take(self, raw, now, period):
        """Add the noise to an exact wrench, filter it and keep it as the latest sample."""
        spec = self.spec
        if spec.noise_force > 0.0 or spec.noise_torque > 0.0:
            raw[:3] += self.rng.normal(0.0, spec.noise_force, 3)
            raw[3:] += self.rng.normal(0.0, spec.noise_torque, 3)
        if spec.cutoff > 0.0 and self.count > 0:
            alpha = 1.0 - math.exp(-2.0 * math.pi * spec.cutoff * period)
            raw = self.value + alpha * (raw - self.value)
        keep_sample(self, raw, now)


class _ImuState:
    """An IMU's spec, where it sits on its body, latest sample, biases and noise generator."""

    def __init__(self, spec, model):
        self.spec = spec
        link = model.links[spec.link]
        self.body = link.body
        mount = quat_to_matrix(spec.quat)
        link_rot = quat_to_matrix(link.quat)
        #: sensor frame in the body frame (about the body's centre of mass), or in the world
        #: for a link welded to it
        self.rot_in_body = np.ascontiguousarray(link_rot @ mount, dtype=float)
        self.quat_in_body = np.ascontiguousarray(quat_multiply(
            np.asarray(link.quat, dtype=float), np.asarray(spec.quat, dtype=float)), dtype=float)
        com = model.bodies[link.body].com if link.body >= 0 else np.zeros(3)
        self.offset = np.ascontiguousarray(
            np.asarray(link.pos, dtype=float) + link_rot @ spec.pos - com, dtype=float)
        self.noiseless = not (np.any(spec.gyro) or np.any(spec.accel)
                              or spec.orientation_stddev > 0.0)
        self.clear()

    def clear(self):
        """Forget the samples and draw new biases (reset)."""
        spec = self.spec
        self.time = 0.0
        self.count = 0
        self.next_time = 1.0 / spec.rate if spec.rate > 0.0 else 0.0
        self.history = collections.deque(maxlen=HISTORY)
        self.rng = np.random.default_rng(spec.seed)
        self.value = np.zeros(10)
        # turn-on biases as gz-sensors draws them: N(bias_mean, bias_stddev), sign at random;
        # the bias walks start from their stationary spread
        self.turn_on = np.empty((2, 3))
        self.walk = np.empty((2, 3))
        for k, noise in enumerate((spec.gyro, spec.accel)):
            sign = np.where(self.rng.random(3) < 0.5, -1.0, 1.0)
            self.turn_on[k] = sign * (noise[2] + noise[3] * self.rng.standard_normal(3))
            self.walk[k] = noise[4] * self.rng.standard_normal(3)

    def exact(self, sim):
        """
        Return the exact reading (10,) from the last step's motion of the sensor's point.

        The acceleration is the change of the point's velocity over the last step (the
        engine keeps the state the step started from), so a step's reading is what the step
        did: semi-implicit Euler's own acceleration, not a difference of published poses.
        """
        engine = sim._engine
        out = np.empty(10)
        b = self.body
        if b < 0:  # welded to the world
            gravity = np.asarray(sim.config.gravity, dtype=float)
            out[:4] = self.quat_in_body
            out[4:7] = 0.0
            out[7:] = -gravity @ self.rot_in_body
            return out
        # physics/sensors.imu_reading: about 1 us where the same in numpy took 30 to 100 us,
        # at 1 kHz most of a small robot's step
        state = engine.state
        sim.sensors._call(imu_reading, (
            state.body_quat, state.body_lin_vel, state.body_ang_mom, engine.bodies.inv_inertia,
            engine.step_start(), b, self.offset, self.rot_in_body, self.quat_in_body,
            engine.gravity, sim.dt, sim.time > 0.0, out))
        return out

    def take(self, exact, now, period):
        """Add the noise to an exact reading and keep it as the latest sample."""
        spec, rng = self.spec, self.rng
        value = exact.copy()
        if self.noiseless:  # nothing to draw: the noise terms would all be zero
            keep_sample(self, value, now)
            return
        for k, (noise, tau) in enumerate(((spec.gyro, spec.gyro_correlation_time),
                                          (spec.accel, spec.accel_correlation_time))):
            walk = self.walk[k]
            if noise[4].any():
                phi = math.exp(-period / tau)
                walk[:] = phi * walk + noise[4] * math.sqrt(1.0 - phi * phi) * (
                    rng.standard_normal(3))
            part = value[4:7] if k == 0 else value[7:]
            part += noise[0] + noise[1] * rng.standard_normal(3) + self.turn_on[k] + walk
        if spec.orientation_stddev > 0.0:
            turn = spec.orientation_stddev * rng.standard_normal(3)
            angle = float(np.linalg.norm(turn))
            if angle > 0.0:
                half = 0.5 * angle
                error = np.concatenate([[math.cos(half)], math.sin(half) / angle * turn])
                q = quat_multiply(value[:4], error)
                value[:4] = q if q[0] >= 0.0 else -q
        keep_sample(self, value, now)


class _RangeState:
    """A range sensor's spec, rays, latest sample and noise generator."""

    def __init__(self, spec):
        self.spec = spec
        if spec.kind == 'lidar':
            self.grid = rays.lidar_grid(spec.azimuths, spec.elevations, spec.range_min,
                                        spec.range_max)
        else:
            f = spec.focal_length
            cx, cy = spec.principal_point
            self.grid = rays.camera_grid(spec.width, spec.height, f, f, cx, cy, spec.range_min,
                                         spec.range_max)
        self._placement = (None, None)
        self.clear()

    def placement(self, sim, shape_link):
        """
        Return (body, (7,) mount, own shapes' link index) of the sensor, fixed for an engine.

        The mount is the sensor frame in its body's frame (position from the centre of mass,
        m; orientation wxyz), in the world for a link welded to it.
        """
        engine, made = self._placement
        if engine is sim._engine:
            return made
        spec, model = self.spec, sim.model
        link = model.links[spec.link]
        link_rot = quat_to_matrix(link.quat)
        pos = np.asarray(link.pos, dtype=float) + link_rot @ np.asarray(spec.pos, dtype=float)
        if link.body >= 0:
            pos = pos - sim._engine.body_com[link.body]
        quat = quat_multiply(np.asarray(link.quat, dtype=float),
                             np.asarray(spec.quat, dtype=float))
        made = (int(link.body), np.concatenate([pos, quat]), shape_link(spec.link))
        self._placement = (sim._engine, made)
        return made

    def clear(self):
        """Forget the samples (reset)."""
        self.value = None
        self.pose = np.zeros(7)
        self.time = 0.0
        self.count = 0
        self.next_time = 1.0 / self.spec.rate if self.spec.rate > 0.0 else 0.0
        self.history = collections.deque(maxlen=RANGE_HISTORY)
        self.rng = np.random.default_rng(self.spec.seed)

    def take(self, value, pose, now):
        """
        Add the noise and the resolution to exact readings and keep them as the latest sample.

        Noise goes on the readings within range and is clamped to the range (as gz-sensors
        does); then each is rounded to the resolution, staying within the range.
        """
        spec = self.spec
        if spec.noise_stddev > 0.0 or spec.noise_mean != 0.0:
            finite = np.isfinite(value)
            noisy = value[finite] + spec.noise_mean + spec.noise_stddev * (
                self.rng.standard_normal(int(np.count_nonzero(finite))))
            value[finite] = np.clip(noisy, spec.range_min, spec.range_max)
        if spec.resolution > 0.0:
            finite = np.isfinite(value)
            value[finite] = np.clip(np.round(value[finite] / spec.resolution) * spec.resolution,
                                    spec.range_min, spec.range_max)
        value.flags.writeable = False
        self.pose = pose
        keep_sample(self, value, now, copy=False)
