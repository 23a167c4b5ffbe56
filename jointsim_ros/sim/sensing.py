"""
Force-torque sensors of a Simulator: the ``sim.sensors`` component.

A sensor reads the wrench its joint transmits (``physics/sensors.py`` sums the joint's row
impulses of the last step), at its rate, in its frame and measure direction, with its noise
and low-pass filter (docs/sensors.md).  The component owns the sensors' state (latest sample,
history, filter, noise generator) and the stepping that stops at their sample times; the
Simulator steps through it.
"""
import collections
import math

import numpy as np

from ..description.urdf import close_matches
from ..errors import CommandError
from ..physics import arrays
from ..rotations import quat_to_matrix

#: Samples of each force-torque sensor kept for readers that poll (the node), count.
HISTORY = 1000


class Sensors:
    """
    The force-torque sensors of one Simulator (``sim.sensors``).

    Args:
        sim: the Simulator (its model, engine, time and dt are read, never written).
        specs: [(SensorModel, joint index)] from the model.

    Attributes:
        names: sensor names, in the model's order.
    """

    def __init__(self, sim, specs):
        self._sim = sim
        self.names = tuple(spec.name for spec, _ in specs)
        self._states = {spec.name: _SensorState(spec, joint) for spec, joint in specs}

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
        """
        state = self._state(sensor_name)
        return state.time, state.value.copy(), state.count

    def frame(self, sensor_name):
        """Return the link (or sensor) name of the frame a sensor's wrench is expressed in."""
        state = self._state(sensor_name)
        joint = self._sim.model.joints[state.joint]
        return {'child': joint.child_link, 'parent': joint.parent_link,
                'sensor': sensor_name}[state.spec.frame]

    def history(self, sensor_name, after=0):
        """
        Return a sensor's recent samples whose count is above ``after``, oldest first.

        At most the last ``HISTORY`` samples are kept; each is (time s, wrench, count).  A count
        lower than ``after`` at the end means the simulator was reset since.
        """
        history = self._state(sensor_name).history
        if history and history[-1][2] < after:
            after = 0
        newer = []
        for sample in reversed(history):
            if sample[2] <= after:
                break
            newer.append(sample)
        return newer[::-1]

    def measure(self, sensor_name):
        """
        Return the wrench a sensor's joint transmitted in the last step (no noise, no filter).

        Returns:
            np.ndarray(6): force (N) and torque (N m) about the sensor point, in the sensor's
            frame and measure direction.
        """
        state = self._state(sensor_name)
        spec = state.spec
        model, engine = self._sim.model, self._sim._engine
        joint = model.joints[state.joint]
        force, torque_com, com, quat = engine.joint_wrench(state.joint)
        if not (quat[0] or quat[1] or quat[2] or quat[3]):
            return np.zeros(6)  # no step taken yet
        child = model.links[joint.child_link]
        rot = quat_to_matrix(quat)
        link_rot = rot @ quat_to_matrix(child.quat)
        link_origin = com + rot @ (np.asarray(child.pos) - engine.body_com[child.body])
        if spec.frame == 'sensor':
            point = link_origin + link_rot @ spec.pos
            frame_rot = link_rot @ quat_to_matrix(spec.quat)
        else:
            point = link_origin  # the joint origin
            frame_rot = link_rot
            if spec.frame == 'parent':
                parent = model.links[joint.parent_link]
                if parent.body < 0:
                    frame_rot = quat_to_matrix(parent.quat)
                else:
                    start = engine.work.backup[parent.body]
                    frame_rot = quat_to_matrix(start[3:7]) @ quat_to_matrix(parent.quat)
        r = com - point
        # r x force written out: np.cross costs more than the rest of this method
        torque = torque_com + np.array((r[1] * force[2] - r[2] * force[1],
                                        r[2] * force[0] - r[0] * force[2],
                                        r[0] * force[1] - r[1] * force[0]))
        out = np.empty(6)
        out[:3] = force @ frame_rot          # frame_rot.T @ force
        out[3:] = torque @ frame_rot
        if spec.measure_direction == 'child_to_parent':
            out *= -1.0
        return out

    def clear(self):
        """Forget every sample (the simulator's reset)."""
        for state in self._states.values():
            state.clear()

    def step(self, n):
        """Step the engine n times in as few calls as the sample times allow; return steps."""
        engine = self._sim._engine
        if not self._states:
            return engine.step(n)
        dt = self._sim.dt
        taken = 0
        while taken < n:
            chunk = n - taken
            now = self._sim.time
            for state in self._states.values():
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
            raise CommandError(f'unknown force-torque sensor {name!r}'
                               + (f' ({hint})' if hint else '') + '; sensors: '
                               + (', '.join(self.names) or 'none') + '.')
        return state

    def _take_due(self, final):
        """Take the samples that are due (rate 0: one at the end of every step call)."""
        now = self._sim.time
        for state in self._states.values():
            spec = state.spec
            if spec.rate > 0.0 and now < state.next_time - 1e-9:
                continue
            if spec.rate == 0.0 and not final:
                continue
            raw = self.measure(spec.name)
            if spec.noise_force > 0.0 or spec.noise_torque > 0.0:
                raw[:3] += state.rng.normal(0.0, spec.noise_force, 3)
                raw[3:] += state.rng.normal(0.0, spec.noise_torque, 3)
            if spec.cutoff > 0.0 and state.count > 0:
                period = (1.0 / spec.rate if spec.rate > 0.0
                          else max(now - state.time, self._sim.dt))
                alpha = 1.0 - math.exp(-2.0 * math.pi * spec.cutoff * period)
                raw = state.value + alpha * (raw - state.value)
            state.value = raw
            state.time = now
            state.count += 1
            state.history.append((now, raw.copy(), state.count))
            if spec.rate > 0.0:
                period = 1.0 / spec.rate
                state.next_time = max(state.next_time + period, now - 0.5 * period)


class _SensorState:
    """A force-torque sensor's spec, joint index, latest sample, filter and noise generator."""

    def __init__(self, spec, joint):
        self.spec = spec
        self.joint = joint
        self.clear()

    def clear(self):
        """Forget the samples (reset)."""
        self.value = np.zeros(6)
        self.time = 0.0
        self.count = 0
        # samples at k / rate, k = 1, 2, ... of simulated time
        self.next_time = 1.0 / self.spec.rate if self.spec.rate > 0.0 else 0.0
        self.history = collections.deque(maxlen=HISTORY)
        self.rng = np.random.default_rng(self.spec.seed)
