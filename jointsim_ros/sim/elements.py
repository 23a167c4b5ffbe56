"""
Elements of a Simulator for mechanisms a URDF tree cannot express: the ``sim.elements`` component.

Linear actuators and distance sensors join a point of one link to a point of another with ball
ends; path points are points of links (docs/prescribed.md).  A linear actuator is a force
element (a force held along the line between its ends, re-aimed every step) until its length
is prescribed; a path point moves freely until a path is prescribed.  Prescribing lengths and
paths belongs to ``sim.prescribed`` (jointsim_ros/sim/prescribed.py); this component reads the
elements' geometry and holds the actuators' forces.
"""
import math

import numpy as np

from ..description.urdf import close_matches
from ..errors import CommandError
from ..rotations import quat_to_matrix

_LABELS = {'linear_actuators': 'linear actuator', 'path_points': 'path point'}


def check_element_names(names, known, what, key):
    """
    Check element names against those the config declares.

    Args:
        names: element names, or None for all of ``known``.
        known: the names the config declares under ``key``, in config order.
        what: the command, for the message.
        key: config section, 'linear_actuators' or 'path_points'.

    Returns:
        list of the names.

    Raises:
        CommandError: an unknown name, with the known ones and a suggestion.
    """
    names = list(known if names is None else names)
    for name in names:
        if name not in known:
            hint = close_matches(name, known)
            listed = ', '.join(known) or f'(none: declare {key} in the config)'
            raise CommandError(f'{what}: unknown {_LABELS[key]} {name!r}; the config declares '
                               f'{listed}' + (f' ({hint})' if hint else '')
                               + '.  Nothing was changed.')
    return names


class Elements:
    """
    The linear actuators, distance sensors and path points of one Simulator.

    Args:
        sim: the Simulator (its config, model, engine and link poses are read).

    Attributes:
        actuator_names: linear actuators (config ``linear_actuators``), in config order.
        path_point_names: path points (config ``path_points``), in config order.
    """

    def __init__(self, sim):
        self._sim = sim
        config = sim.config
        index = sim._engine.joint_index
        self.actuator_names = tuple(config.linear_actuators)
        self.path_point_names = tuple(config.path_points)
        self._actuator_index = {name: k for k, name in enumerate(self.actuator_names)}
        self._actuator_force = np.zeros(len(self.actuator_names))
        # the engine's element joints: a distance row per actuator, a ball joint per point
        self._actuator_joint = {name: index[f'actuator:{name}'] for name in self.actuator_names}
        self._path_joint = {name: index[f'path:{name}'] for name in self.path_point_names}

    @property
    def pushing(self):
        """Tell whether an actuator holds a force (then the sim re-aims it every step)."""
        return bool(self._actuator_force.size and self._actuator_force.any())

    def clear(self):
        """Hold no force in any actuator (the simulator's reset)."""
        self._actuator_force[:] = 0.0

    # -- geometry ---------------------------------------------------------------------------
    def distances(self):
        """Return distance sensor name -> (distance m, its rate m/s) between the two points."""
        return self._lengths_of(self._sim.config.distance_sensors)

    def actuator_lengths(self):
        """Return linear actuator name -> (length m, rate m/s) between its ball ends."""
        return self._lengths_of(self._sim.config.linear_actuators)

    def path_points(self):
        """Return path point name -> (position (3,) m, velocity (3,) m/s), world frame."""
        out = {}
        for name, item in self._sim.config.path_points.items():
            xyz, quat = self._sim.link_pose(item.link)
            point = xyz + quat_to_matrix(quat) @ np.asarray(item.point)
            out[name] = (point, self._point_velocity(item.link, point))
        return out

    def _ends(self, item):
        """Return the world positions (m) of an element's two ends."""
        ends = []
        for link, point in ((item.link_a, item.point_a), (item.link_b, item.point_b)):
            xyz, quat = self._sim.link_pose(link)
            ends.append(xyz + quat_to_matrix(quat) @ np.asarray(point))
        return ends

    def _point_velocity(self, link, point):
        """Return the world velocity (m/s) of a world point moving with a link."""
        origin, _ = self._sim.link_pose(link)
        linear, angular = self._sim.link_twist(link)
        return linear + np.cross(angular, point - origin)

    def _lengths_of(self, table):
        """Return element name -> (length m, rate m/s) between its two ends."""
        out = {}
        for name, item in table.items():
            pa, pb = self._ends(item)
            length = float(np.linalg.norm(pb - pa))
            axis = (pb - pa) / max(length, 1e-12)
            rate = axis @ (self._point_velocity(item.link_b, pb)
                           - self._point_velocity(item.link_a, pa))
            out[name] = (length, float(rate))
        return out

    # -- linear actuators -------------------------------------------------------------------
    def set_actuator_forces(self, forces):
        """
        Hold forces in linear actuators until changed (positive pushes the ends apart), N.

        The force acts along the line between the ends (ball ends: no moment), on each end's
        body at that end, re-aimed every step.  An actuator whose length was prescribed
        (``sim.prescribed.lengths``) becomes a force element again.

        Args:
            forces: dict actuator name -> N.

        Raises:
            CommandError: an unknown actuator or a non-finite force; nothing is changed.
        """
        values = dict(forces)
        check_element_names(values, self.actuator_names, 'set_actuator_forces',
                            'linear_actuators')
        for name, value in values.items():
            if not math.isfinite(float(value)):
                raise CommandError(f'set_actuator_forces: force of {name!r} is {value!r}; give '
                                   'a finite number of N.  Nothing was changed.')
        self._sim.prescribed.release_lengths(list(values))
        for name, value in values.items():
            self._hold_force(name, float(value))

    def actuator_forces(self):
        """
        Return linear actuator name -> force, N (positive pushes the ends apart).

        A force element reports its commanded force; a length element the force its
        prescribed length needed over the last step (its row impulse over dt).
        """
        out = {name: float(self._actuator_force[k]) for name, k in self._actuator_index.items()}
        out.update(self._sim.prescribed.length_forces())
        return out

    def _hold_force(self, name, force):
        """Hold a force (N) in one actuator; 0 when its length is prescribed."""
        self._actuator_force[self._actuator_index[name]] = force

    def wrenches(self):
        """
        Return the force elements' wrenches this step, re-aimed along their ends' line.

        Returns:
            (n_body, 6) world force (N, through the COM) and torque (N m) per body.
        """
        body_pos = self._sim._engine.state.body_pos
        wrench = np.zeros((len(body_pos), 6))
        table = self._sim.config.linear_actuators
        links = self._sim.model.links
        for name, k in self._actuator_index.items():
            force = self._actuator_force[k]
            if force == 0.0:
                continue
            pa, pb = self._ends(table[name])
            axis = (pb - pa) / max(np.linalg.norm(pb - pa), 1e-12)
            for link, point, sign in ((table[name].link_a, pa, -1.0),
                                      (table[name].link_b, pb, 1.0)):
                body = links[link].body
                if body < 0:
                    continue
                push = sign * force * axis
                wrench[body, :3] += push
                wrench[body, 3:] += np.cross(point - body_pos[body], push)
        return wrench
