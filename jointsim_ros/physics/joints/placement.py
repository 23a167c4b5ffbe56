"""
What the joint types share outside the kernels (plain numpy): the pieces of their placement.

Each joint type module (revolute.py, ...) owns, next to its constraint rows, how it is placed and
seen outside the kernels, with the same signatures:

- ``columns(axis, perp1, perp2)``: its motion subspace, the unit twists (angular; linear) of
  its velocity coordinates in the joint frame (the tree formulation's columns);
- ``relative_pose(axis, q)`` and ``relative_twist(axis, rate)``: the child joint frame's pose
  (quaternion wxyz, position m) and twist (angular, linear) in the parent joint frame at
  coordinate q and rate (scalar joints; the others keep their relative pose);
- ``allowed(rel_quat, rel_pos, axis)``: the part of a relative pose the joint allows (what
  placing a multi-DOF joint keeps of its bodies' pose);
- ``anchor_gap(gap, axis)``: the part of the anchor gap (child anchor - parent anchor, world, m)
  the joint forbids, with its axis in the world (the facade's anchor errors);
- ``TREE_KIND``: how the tree formulation integrates it (``TREE_ROTATION``, ``TREE_SLIDE`` or
  ``TREE_FREE``).
"""
import numpy as np

#: How the tree formulation integrates a joint (``TREE_KIND`` of each type module): a rotation
#: about its axis, a slide along it (both from the scalar coordinate), or a relative pose (r, Q).
TREE_ROTATION, TREE_SLIDE, TREE_FREE = 0, 1, 2
ZERO = np.zeros(3)
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def angular(direction):
    """Return the 6-vector (direction; 0): a unit rotation about ``direction``."""
    return np.concatenate((direction, ZERO))


def linear(direction):
    """Return the 6-vector (0; direction): a unit translation along ``direction``."""
    return np.concatenate((ZERO, direction))


def at_rest(axis, q):
    """Return the identity pose (no scalar coordinate)."""
    return IDENTITY.copy(), ZERO.copy()


def no_twist(axis, rate):
    """Return a zero twist (no scalar coordinate)."""
    return ZERO.copy(), ZERO.copy()


def keep_all(rel_quat, rel_pos, axis):
    """Return the relative pose unchanged (a joint that allows any)."""
    return rel_quat, rel_pos


def whole_gap(gap, axis):
    """Return the whole anchor gap (a joint whose anchors coincide)."""
    return gap


def no_columns(axis, perp1, perp2):
    """Return no columns (a joint that lets nothing move, or is never a tree joint)."""
    return []


def no_gap(gap, axis):
    """Return no anchor gap (a joint that does not hold its anchors together)."""
    return np.zeros(3)
