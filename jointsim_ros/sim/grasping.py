"""
Grasps switched at run time: the ``sim.grasps`` component (docs/valve.md, "Grasping").

A grasp (config ``grasps``) joins a point of a link (a hand) to an object (a valve's wheel) by a
ball joint while it is on.  Switching it on finds the point of the object's rim circle nearest
to the grasp point (or the object's one point, for a radius of 0); within ``max_distance`` the
joint's anchor on the object is set there and its rows act from the next step on (the small gap
left closes in that step's position projection); farther away the grasp is refused with the
distance.  Switching it off lets go at once.  While grasped, the joint's force (what the object
does to the hand) is reported.
"""
import math

import numpy as np

from ..description.urdf import close_matches
from ..errors import CommandError
from ..rotations import quat_to_matrix


class Grasps:
    """
    The grasps of one Simulator.

    Args:
        sim: the Simulator (its config, model, engine and link poses are read).

    Attributes:
        names: the grasps (config ``grasps``), in config order.
    """

    def __init__(self, sim):
        self._sim = sim
        self.names = tuple(sim.config.grasps)
        index = sim._engine.joint_index
        self._joint = {name: index[f'grasp:{name}'] for name in self.names}

    def _item(self, name, what):
        if name not in self._joint:
            hint = close_matches(name, self.names)
            known = ', '.join(self.names) or '(none: declare grasps in the config)'
            raise CommandError(f'{what}: unknown grasp {name!r}; the config declares {known}'
                               + (f' ({hint})' if hint else '') + '.  Nothing was changed.')
        return self._sim.config.grasps[name]

    # -- geometry ---------------------------------------------------------------------------
    def _grasp_point(self, item):
        """Return the world position (m) of a grasp's point on its link."""
        xyz, quat = self._sim.link_pose(item.link)
        return xyz + quat_to_matrix(quat) @ np.asarray(item.point, dtype=float)

    def _nearest(self, item, point):
        """Return the world position (m) of the object's rim point nearest to ``point``."""
        xyz, quat = self._sim.link_pose(item.object)
        rot = quat_to_matrix(quat)
        centre = xyz + rot @ np.asarray(item.centre, dtype=float)
        if item.radius <= 0.0:
            return centre
        axis = rot @ np.asarray(item.axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        radial = (point - centre) - axis * (axis @ (point - centre))
        length = float(np.linalg.norm(radial))
        if length < 1e-9:  # on the axis: every rim point is as near; take one
            radial = np.cross(axis, [1.0, 0.0, 0.0])
            if np.linalg.norm(radial) < 1e-6:
                radial = np.cross(axis, [0.0, 1.0, 0.0])
            length = float(np.linalg.norm(radial))
        return centre + item.radius * radial / length

    def distance(self, name):
        """Return how far (m) a grasp's point is from the nearest point of its object's rim."""
        item = self._item(name, 'distance')
        point = self._grasp_point(item)
        return float(np.linalg.norm(point - self._nearest(item, point)))

    # -- switching --------------------------------------------------------------------------
    def grasp(self, name):
        """
        Grasp: join the link's point to the nearest rim point by a ball joint.

        Args:
            name: the grasp (config ``grasps``).

        Returns:
            the distance, m, from the grasp point to the rim point it holds (closed within the
            next step).

        Raises:
            CommandError: an unknown grasp, or the point farther than ``max_distance`` from
                the rim (the message gives the distance); nothing is changed.
        """
        item = self._item(name, 'grasp')
        point = self._grasp_point(item)
        target = self._nearest(item, point)
        gap = float(np.linalg.norm(point - target))
        if not math.isfinite(gap) or gap > item.max_distance:
            raise CommandError(
                f'grasp {name!r} refused: the grasp point of {item.link} is {gap:.4f} m from '
                f'the rim of {item.object}; it grasps within {item.max_distance:.4f} m '
                '(grasps.NAME.max_distance).  Bring it closer first.  Nothing was changed.')
        engine = self._sim._engine
        j = self._joint[name]
        if not self.holding(name):
            xyz, quat = engine.body_pose(int(engine.joints.body[j, 0]))
            engine.state.joint_anchor[j] = quat_to_matrix(quat).T @ (target - xyz)
            self._clear_impulse(j)
            engine.state.joint_active[j] = 1.0
        return gap

    def release(self, name):
        """Let go (no-op when not grasped); raises CommandError for an unknown grasp."""
        self._item(name, 'release')
        j = self._joint[name]
        self._sim._engine.state.joint_active[j] = 0.0
        self._clear_impulse(j)

    def _clear_impulse(self, j):
        self._sim._engine.clear_joint_rows(j)

    def holding(self, name):
        """Tell whether a grasp is on."""
        self._item(name, 'holding')
        return bool(self._sim._engine.state.joint_active[self._joint[name]] != 0.0)

    def held(self):
        """Return grasp name -> on (bool), every grasp."""
        return {name: self.holding(name) for name in self.names}

    def force(self, name):
        """
        Return the force the object exerted on the link over the last step: (3,) N, world.

        Zero while released.  The grasp is a ball joint: it passes no torque.
        """
        self._item(name, 'force')
        if not self.holding(name):
            return np.zeros(3)
        return self._sim._engine.joint_wrench(self._joint[name])[0]
