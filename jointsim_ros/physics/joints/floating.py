"""
Floating joints: six free coordinates and no constraint rows.

A floating base's joint to the world, or a URDF ``floating`` joint between links.
"""
import numpy as np

from .placement import at_rest, keep_all, no_gap, no_twist, TREE_FREE

N_ROWS = 0
TREE_KIND = TREE_FREE


def columns(axis, perp1, perp2):
    """Return three rotations and three translations, along the joint frame's axes."""
    return list(np.eye(6))


relative_pose = at_rest
relative_twist = no_twist
allowed = keep_all
anchor_gap = no_gap
