"""
Rigid transforms and inertia algebra for the description layer (numpy only).

Conventions: URDF ``rpy`` is roll about x, then pitch about y, then yaw about z, all about the
fixed parent axes, so R = Rz(yaw) Ry(pitch) Rx(roll) (REP 103).  Quaternions are (w, x, y, z)
with w >= 0.  Inertia tensors are (3, 3) about the centre of mass, kg m^2.
"""
from dataclasses import dataclass

import numpy as np

from ..rotations import matrix_to_quat, rpy_to_matrix

#: Repaired principal moments are at least the inertia of a solid sphere of the link's mass with
#: this radius, m ...
INERTIA_FLOOR_RADIUS = 0.01
#: ... and at least this fraction of the largest principal moment.
INERTIA_FLOOR_RELATIVE = 1e-3
#: A principal moment at or below this fraction of the largest counts as zero (not positive).
POSITIVE_TOLERANCE = 1e-9
#: The triangle inequality may fail by this fraction of the largest moment (rounding in files).
TRIANGLE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Transform:
    """
    A rigid transform: maps coordinates in a child frame to its parent frame.

    Attributes:
        rot: (3, 3) rotation matrix, child axes in parent coordinates.
        pos: (3,) child origin in parent coordinates, m.
    """

    rot: np.ndarray
    pos: np.ndarray

    @staticmethod
    def identity():
        """Return the identity transform."""
        return Transform(np.eye(3), np.zeros(3))

    @staticmethod
    def from_xyz_rpy(xyz, rpy):
        """Return the transform of a URDF ``<origin xyz rpy>`` (m, rad)."""
        return Transform(rpy_to_matrix(rpy), np.asarray(xyz, dtype=float).reshape(3))

    def __matmul__(self, other):
        """Compose: (self @ other) maps other's child frame to self's parent frame."""
        return Transform(self.rot @ other.rot, self.rot @ other.pos + self.pos)

    def apply(self, point):
        """Map a point (3,) from the child frame to the parent frame."""
        return self.rot @ np.asarray(point, dtype=float) + self.pos

    @property
    def quat(self):
        """(4,) orientation as a quaternion (w, x, y, z)."""
        return matrix_to_quat(self.rot)


def inertia_matrix(ixx, ixy, ixz, iyy, iyz, izz):
    """Return the symmetric (3, 3) inertia tensor of URDF ``<inertia>`` attributes, kg m^2."""
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def rotate_inertia(inertia, rotation):
    """
    Express an inertia tensor in a rotated frame: I' = R I R^T.

    Args:
        inertia: (3, 3) inertia about the COM in frame B, kg m^2.
        rotation: (3, 3) rotation taking B coordinates to frame A coordinates.

    Returns:
        (3, 3) the same inertia in frame A coordinates.
    """
    return rotation @ inertia @ rotation.T


def parallel_axis(mass, offset):
    """
    Steiner term of the parallel-axis theorem: m (|d|^2 E - d d^T).

    Args:
        mass: kg.
        offset: (3,) displacement of the COM from the new reference point, m.

    Returns:
        (3, 3) inertia to add to the COM inertia to get the inertia about the reference point.
    """
    d = np.asarray(offset, dtype=float)
    return mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))


def combine_inertias(masses, coms, inertias):
    """
    Mass properties of rigidly joined parts, all expressed in one frame.

    Args:
        masses: (n,) kg, >= 0.
        coms: (n, 3) centres of mass, m.
        inertias: (n, 3, 3) inertia of each part about its own COM, kg m^2.

    Returns:
        (mass kg, com (3,) m, inertia (3, 3) about the composite COM, kg m^2).  With zero total
        mass the COM is the origin and the inertia zero.
    """
    masses = np.asarray(masses, dtype=float)
    total = float(masses.sum())
    if total <= 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    coms = np.asarray(coms, dtype=float).reshape(-1, 3)
    com = (masses[:, None] * coms).sum(axis=0) / total
    inertia = np.zeros((3, 3))
    for m, c, i in zip(masses, coms, inertias):
        if m > 0.0:
            inertia += np.asarray(i, dtype=float) + parallel_axis(m, c - com)
    return total, com, 0.5 * (inertia + inertia.T)


def principal_moments(inertia):
    """Principal moments (ascending) and axes (columns) of a symmetric inertia tensor."""
    return np.linalg.eigh(0.5 * (inertia + inertia.T))


def inertia_problems(inertia):
    """
    Say what is physically wrong with an inertia tensor, or nothing.

    A physical inertia has positive principal moments I1 <= I2 <= I3 that satisfy the triangle
    inequality I1 + I2 >= I3 (it follows from I3 = integral of (x^2 + y^2) dm and the like).

    Args:
        inertia: (3, 3) symmetric tensor about the COM, kg m^2.

    Returns:
        list of short problem descriptions (empty when the tensor is valid).
    """
    moments, _ = principal_moments(inertia)
    largest = max(float(moments[2]), 0.0)
    problems = []
    if not np.any(inertia):
        problems.append('is all zero')
    elif moments[0] <= POSITIVE_TOLERANCE * largest:
        problems.append('is not positive definite')
    elif moments[0] + moments[1] < moments[2] * (1.0 - TRIANGLE_TOLERANCE):
        problems.append('violates the triangle inequality I1 + I2 >= I3')
    return problems


def repair_inertia(mass, inertia):
    """
    Turn an unphysical inertia tensor into the nearest-looking physical one.

    The tensor is eigen-decomposed and its axes kept.  Principal moments below the floor
    ``max(2/5 m r^2 with r = INERTIA_FLOOR_RADIUS, INERTIA_FLOOR_RELATIVE * I3)`` are raised to
    it when the tensor is not positive definite or even its largest moment is below the floor
    (an all-zero tensor becomes that of a 1 cm solid sphere); then, if I1 + I2 < I3, the two
    smaller moments are each raised by (I3 - I1 - I2) / 2 so that I1 + I2 = I3.  Moments are only
    ever raised, never lowered.

    Args:
        mass: kg, > 0.
        inertia: (3, 3) symmetric tensor about the COM, kg m^2.

    Returns:
        (3, 3) repaired tensor, symmetric positive definite.
    """
    moments, axes = principal_moments(inertia)
    largest = max(float(moments[2]), 0.0)
    # the floor applies to a triangle violation too: icub.urdf's r_ankle_1 has moments of
    # 1e-20 kg m^2 (zero up to rounding) that fail the triangle test, not the positivity one
    floor = max(0.4 * mass * INERTIA_FLOOR_RADIUS ** 2, INERTIA_FLOOR_RELATIVE * largest)
    if moments[0] <= POSITIVE_TOLERANCE * largest or moments[2] < floor:
        moments = np.maximum(moments, floor)  # monotone: order and axes are kept
    excess = moments[2] - moments[0] - moments[1]
    if excess > 0.0:
        moments[0] += 0.5 * excess
        moments[1] += 0.5 * excess
    if not np.any(inertia):
        axes = np.eye(3)
    repaired = axes @ np.diag(moments) @ axes.T
    return 0.5 * (repaired + repaired.T)
