"""
Elements for mechanisms a URDF tree cannot express (docs/prescribed.md), part of the facade.

Linear actuators and distance sensors join a point of one link to a point of another with ball
ends; path points are points of links that can be driven along a 3D path.  A linear actuator
is either a force element (a force held along the line between its ends, re-aimed every step)
or, while a length is prescribed, a length element: the engine's one-row distance joint
between the ends, whose impulse is the force the motion needs.  A path point, while a path is
prescribed, is a ball joint between the world and the point whose world anchor moves along the
path; its impulse is the force that keeps the point on the path.

Both prescribed kinds are clamped cubic splines (``trajectory.CubicSpline``) and act through a
velocity target at the step's end (``State.joint_row_rate``) and a position target the position
projection lands on (``Joints.length``, ``Joints.ppos``), as prescribed joints do.
"""
import math

import numpy as np

from .description.urdf import close_matches
from .errors import CommandError
from .rotations import quat_to_matrix
from .trajectory import CubicSpline

#: A prescribed path or length must start this close to where the point or element is, m.
ELEMENT_START_TOLERANCE = 1e-3


class ElementsMixin:
    """Linear actuators, distance sensors and path points of :class:`Simulator`."""

    def _init_elements(self):
        """Index the elements (called once by the facade's constructor)."""
        index = self._engine.joint_index
        #: Linear actuators (config ``linear_actuators``).
        self.actuator_names = tuple(self.config.linear_actuators)
        #: Path points (config ``path_points``).
        self.path_point_names = tuple(self.config.path_points)
        self._actuator_index = {name: k for k, name in enumerate(self.actuator_names)}
        self._actuator_force = np.zeros(len(self.actuator_names))
        self._actuator_joint = {name: index[f'actuator:{name}'] for name in self.actuator_names}
        self._path_joint = {name: index[f'path:{name}'] for name in self.path_point_names}
        self._lengths = {}  # actuator -> (joint, spline, column, start time): length mode
        self._paths = {}    # path point -> (joint, spline, None, start time)

    def _reset_elements(self):
        """Force mode with no force, no path prescribed (the engine resets the joints)."""
        self._actuator_force[:] = 0.0
        self._lengths.clear()
        self._paths.clear()

    @property
    def _elements_move(self):
        """Tell whether anything here must be updated every step."""
        return bool(self._lengths or self._paths
                    or (self._actuator_force.size and self._actuator_force.any()))

    # -- geometry -------------------------------------------------------------------------------
    def _element_ends(self, name, table):
        """Return the world positions (m) of an element's two ends."""
        item = table[name]
        ends = []
        for side in ('a', 'b'):
            xyz, quat = self.link_pose(item[f'link_{side}'])
            ends.append(xyz + quat_to_matrix(quat) @ np.asarray(item.get(f'point_{side}',
                                                                         (0.0, 0.0, 0.0))))
        return ends

    def _point_velocity(self, link, point):
        """Return the world velocity (m/s) of a world point moving with a link."""
        origin, _ = self.link_pose(link)
        linear, angular = self.link_twist(link)
        return linear + np.cross(angular, point - origin)

    def _lengths_of(self, table):
        """Return element name -> (length m, rate m/s) between its two ends."""
        out = {}
        for name, item in table.items():
            pa, pb = self._element_ends(name, table)
            length = float(np.linalg.norm(pb - pa))
            axis = (pb - pa) / max(length, 1e-12)
            rate = axis @ (self._point_velocity(item['link_b'], pb)
                           - self._point_velocity(item['link_a'], pa))
            out[name] = (length, float(rate))
        return out

    def distances(self):
        """Return distance sensor name -> (distance m, its rate m/s) between the two points."""
        return self._lengths_of(self.config.distance_sensors)

    def actuator_lengths(self):
        """Return linear actuator name -> (length m, rate m/s) between its ball ends."""
        return self._lengths_of(self.config.linear_actuators)

    def path_points(self):
        """Return path point name -> (position (3,) m, velocity (3,) m/s), world frame."""
        out = {}
        for name, item in self.config.path_points.items():
            xyz, quat = self.link_pose(item['link'])
            point = xyz + quat_to_matrix(quat) @ np.asarray(item.get('point', (0.0, 0.0, 0.0)))
            out[name] = (point, self._point_velocity(item['link'], point))
        return out

    # -- checks ---------------------------------------------------------------------------------
    def _element_names(self, names, known, what, key):
        """Check element names against those the config declares under ``key``."""
        names = list(known if names is None else names)
        label = {'linear_actuators': 'linear actuator', 'path_points': 'path point'}[key]
        for name in names:
            if name not in known:
                hint = close_matches(name, known)
                listed = ', '.join(known) or f'(none: declare {key} in the config)'
                raise CommandError(f'{what}: unknown {label} {name!r}; the config declares '
                                   f'{listed}' + (f' ({hint})' if hint else '')
                                   + '.  Nothing was changed.')
        return names

    def _start_spline(self, times, values, columns, start_time, now, what, unit):
        """Build a spline and check that it starts where the elements are; (spline, offset)."""
        values = np.asarray(values, dtype=float)
        spline = CubicSpline(times, values)
        if np.size(spline.evaluate(0.0)) != columns:
            raise CommandError(f'{what}: the samples must have {columns} values each, got '
                               f'shape {np.shape(values)}.  Nothing was changed.')
        offset = self.time if start_time is None else float(start_time)
        gap = np.abs(np.atleast_1d(spline.evaluate(self.time - offset)) - np.ravel(now))
        if np.any(gap > ELEMENT_START_TOLERANCE):
            raise CommandError(
                f'{what}: the motion starts {float(np.max(gap)):.6g} {unit} away from where '
                f'the elements are ({np.ravel(now)}); it must start where they are (within '
                f'{ELEMENT_START_TOLERANCE} {unit}).  Nothing was changed.')
        return spline, offset

    # -- linear actuators -----------------------------------------------------------------------
    def set_actuator_forces(self, forces):
        """
        Hold forces in linear actuators until changed (positive pushes the ends apart), N.

        The force acts along the line between the ends (ball ends: no moment), on each end's
        body at that end, re-aimed every step.  An actuator whose length was prescribed
        becomes a force element again.

        Raises:
            CommandError: an unknown actuator or a non-finite force; nothing is changed.
        """
        values = dict(forces)
        self._element_names(values, self.actuator_names, 'set_actuator_forces',
                            'linear_actuators')
        for name, value in values.items():
            if not math.isfinite(float(value)):
                raise CommandError(f'set_actuator_forces: force of {name!r} is {value!r}; give '
                                   'a finite number of N.  Nothing was changed.')
        self.release_actuators(list(values))
        for name, value in values.items():
            self._actuator_force[self._actuator_index[name]] = float(value)

    def prescribe_actuator_lengths(self, times, lengths, actuators=None, start_time=None):
        """
        Drive linear actuators through lengths (a clamped cubic spline through the samples).

        Each becomes a length element: a distance row between its ends lands it on the
        length L*(t + dt) every step, and its impulse is the force the motion needs
        (:meth:`actuator_forces`).  Outside the samples the length holds its end value.

        Args:
            times: (n,) sample times, s, relative to ``start_time`` (default: now).
            lengths: (n, m) lengths, m, one column per actuator.
            actuators: m actuator names (default all, in config order).

        Raises:
            CommandError: unknown actuators, bad samples, or a motion that does not start at
                the actuators' current lengths; nothing is changed.
        """
        names = self._element_names(actuators, self.actuator_names,
                                    'prescribe_actuator_lengths', 'linear_actuators')
        current = self.actuator_lengths()
        spline, offset = self._start_spline(
            times, np.asarray(lengths, dtype=float).reshape(len(times), -1), len(names),
            start_time, [current[n][0] for n in names], 'prescribe_actuator_lengths', 'm')
        for column, name in enumerate(names):
            j = self._actuator_joint[name]
            self._actuator_force[self._actuator_index[name]] = 0.0
            self._lengths[name] = (j, spline, column, offset)
            self._engine.joints.active[j] = 1.0

    def release_actuators(self, actuators=None):
        """End the prescribed lengths of some actuators (default all): force elements again."""
        for name in list(self._lengths if actuators is None else actuators):
            if self._lengths.pop(name, None) is not None:
                self._engine.reset_element(self._actuator_joint[name])

    def actuator_forces(self):
        """
        Return linear actuator name -> force, N (positive pushes the ends apart).

        A force element reports its commanded force; a length element the force its
        prescribed length needed over the last step (its row impulse over dt).
        """
        out = {name: float(self._actuator_force[k]) for name, k in self._actuator_index.items()}
        for name in self._lengths:
            impulse = self._engine.element_impulse(self._actuator_joint[name])[0]
            out[name] = float(impulse) / self.dt
        return out

    def _actuator_wrenches(self):
        """Return the (n_body, 6) world wrenches of the force elements this step."""
        wrench = np.zeros_like(self._engine.state.body_wrench)
        table = self.config.linear_actuators
        for name, k in self._actuator_index.items():
            force = self._actuator_force[k]
            if force == 0.0:
                continue
            pa, pb = self._element_ends(name, table)
            axis = (pb - pa) / max(np.linalg.norm(pb - pa), 1e-12)
            for side, point, sign in (('a', pa, -1.0), ('b', pb, 1.0)):
                body = self.model.links[table[name][f'link_{side}']].body
                if body < 0:
                    continue
                push = sign * force * axis
                wrench[body, :3] += push
                wrench[body, 3:] += np.cross(point - self._engine.state.body_pos[body], push)
        return wrench

    # -- path points ----------------------------------------------------------------------------
    def prescribe_path(self, name, times, positions, start_time=None):
        """
        Drive a path point along a 3D path (a clamped cubic spline through the samples).

        The point follows the path exactly (its ball joint to the world lands it on
        p*(t + dt) every step) while the rest of the mechanism moves freely; the force that
        takes is :meth:`path_forces`.  Outside the samples the point holds its end position.

        Args:
            name: path point (config ``path_points``).
            times: (n,) sample times, s, relative to ``start_time`` (default: now).
            positions: (n, 3) world positions, m.

        Raises:
            CommandError: an unknown point, bad samples, or a path that does not start where
                the point is; nothing is changed.
        """
        self._element_names([name], self.path_point_names, 'prescribe_path', 'path_points')
        now = self.path_points()[name][0]
        spline, offset = self._start_spline(times, np.asarray(positions, dtype=float), 3,
                                            start_time, now, 'prescribe_path', 'm')
        j = self._path_joint[name]
        self._engine.reset_element(j)
        self._paths[name] = (j, spline, None, offset)
        self._engine.joints.active[j] = 1.0

    def release_path(self, names=None):
        """End the prescribed paths of some points (default all); they move freely again."""
        for name in list(self._paths if names is None else names):
            if self._paths.pop(name, None) is not None:
                self._engine.reset_element(self._path_joint[name])

    def path_forces(self):
        """
        Return path point name -> (3,) world force (N) the path put on the point last step.

        Zero for points not on a path.
        """
        out = {name: np.zeros(3) for name in self.path_point_names}
        for name in self._paths:
            out[name] = self._engine.element_impulse(self._path_joint[name]) / self.dt
        return out

    # -- stepping -------------------------------------------------------------------------------
    def _aim_elements(self, after):
        """Targets of the prescribed lengths and paths at the step's end (time ``after``, s)."""
        joints = self._engine.joints
        rate = self._engine.state.joint_row_rate
        for j, spline, column, offset in self._lengths.values():
            joints.length[j] = np.atleast_1d(spline.evaluate(after - offset))[column]
            rate[j, 0] = np.atleast_1d(spline.evaluate(after - offset, 1))[column]
        for j, spline, _, offset in self._paths.values():
            joints.ppos[j] = spline.evaluate(after - offset)
            rate[j, :3] = spline.evaluate(after - offset, 1)
