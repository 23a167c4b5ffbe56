"""
Joint measurements of a Simulator: the ``sim.joint_sensors`` component.

What a controller reads of a joint is not its exact state: an encoder counts whole lines on
the motor side, through the gear; the reading carries noise; and it may come some samples
late (docs/sensors.md, "Joint measurements").  Config ``joint_sensors: {JOINT or '*':
{counts_per_revolution, position_noise, velocity_noise, current_noise, delay, seed}}``, all 0
(exact) by default.  ``joint_states``, ``dynamic_joint_states``, the drives' servo loops and
:meth:`read` all see the same measurement of a step: the noise is drawn once per step.

A delay of d samples is the state d physics steps before; the simulator then steps one step at
a time to keep them (as it does for the servo loops).
"""
import collections
import math

import numpy as np


class JointSensors:
    """
    The joint measurements of one Simulator (``sim.joint_sensors``).

    Args:
        sim: the Simulator (its config, model, joint names and state are read).

    Attributes:
        active: True when some joint's measurement is not exact.
        delayed: True when some joint's measurement is delayed (per-step stepping).
        resolution: (n,) position quantum of each joint (rad or m; 0: none), joint_names order.
    """

    def __init__(self, sim):
        self._sim = sim
        settings = sim.config.joint_sensors
        every = settings.get('*')
        names = sim.joint_names
        per_joint = [settings.get(name, every) for name in names]
        gear = {d.joint: abs(d.gear_ratio) for d in sim.model.drives}
        joints = {j.name: j for j in sim.model.joints}
        n = len(names)
        self.resolution = np.zeros(n)
        self.position_noise = np.zeros(n)
        self.velocity_noise = np.zeros(n)
        self.current_noise = np.zeros(n)
        self.delay = np.zeros(n, dtype=np.int64)
        seeds = []
        for i, (name, spec) in enumerate(zip(names, per_joint)):
            seeds.append(sum(ord(c) for c in name))
            if spec is None:
                continue
            if spec.counts_per_revolution > 0:
                counts = spec.counts_per_revolution * gear.get(name, 1.0)
                # a revolute joint's line is a turn over the counts; an undriven prismatic
                # joint's counts are per metre
                turn = 2.0 * math.pi if (joints[name].type != 'prismatic'
                                         or name in gear) else 1.0
                self.resolution[i] = turn / counts
            self.position_noise[i] = spec.position_noise
            self.velocity_noise[i] = spec.velocity_noise
            self.current_noise[i] = spec.current_noise
            self.delay[i] = spec.delay
            if spec.seed is not None:
                seeds[-1] = spec.seed
        self._seed = sum(seeds)
        self.active = bool(self.resolution.any() or self.position_noise.any()
                           or self.velocity_noise.any() or self.current_noise.any()
                           or self.delay.any())
        self.delayed = bool(self.delay.any())
        self.clear()

    def clear(self):
        """Forget the kept states and restart the noise (the simulator's reset)."""
        self._rng = np.random.default_rng(self._seed)
        depth = int(self.delay.max()) + 1 if len(self.delay) else 1
        self._kept = collections.deque(maxlen=depth)
        self._cached_at = None
        self._cached = None
        self._currents_at = None
        self._currents = None

    def record(self):
        """Keep this step's exact state (called after every step while delays are set)."""
        sim = self._sim
        self._kept.append((sim.joint_positions(), sim.joint_velocities()))

    def read(self):
        """
        Return the measured (positions, velocities), joint_names order, rad or m and rad/s or m/s.

        Exact when nothing is configured.  The same values within a step.
        """
        sim = self._sim
        if not self.active:
            return sim.joint_positions(), sim.joint_velocities()
        now = sim.time
        if self._cached_at == now:
            return self._cached[0].copy(), self._cached[1].copy()
        positions, velocities = sim.joint_positions(), sim.joint_velocities()
        if self.delayed and self._kept:
            kept = self._kept
            for i, d in enumerate(self.delay):
                if d:
                    old = kept[max(len(kept) - 1 - int(d), 0)]
                    positions[i], velocities[i] = old[0][i], old[1][i]
        n = len(positions)
        positions = positions + self.position_noise * self._rng.standard_normal(n)
        velocities = velocities + self.velocity_noise * self._rng.standard_normal(n)
        quantum = self.resolution > 0.0
        positions[quantum] = (np.round(positions[quantum] / self.resolution[quantum])
                              * self.resolution[quantum])
        self._cached_at = now
        self._cached = (positions, velocities)
        return positions.copy(), velocities.copy()

    def current(self, joint, exact):
        """Return what a drive's current sensor reads (A), from the exact current."""
        i = self._sim.joint_names.index(joint)
        if not self.current_noise[i]:
            return exact
        now = self._sim.time
        if self._currents_at != now:
            self._currents_at = now
            self._currents = self.current_noise * self._rng.standard_normal(len(self.delay))
        return exact + float(self._currents[i])
