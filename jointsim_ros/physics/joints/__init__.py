"""
Joint types: one module each (its math in the docstring), dispatched from one table here.

Every joint type exposes ``N_ROWS`` and ``constraint(frames, C, J)``, which fills the position
errors C and the Jacobian rows J (see ``rows``) from the joint's world frames (J=None: only
C).  Scalar joints
(revolute, continuous, prismatic) also have a coordinate and its Jacobian (``coordinate``), which
efforts, mimic rows and, later, friction, limits and drives act along.
"""
from collections import namedtuple

from . import distance, fixed, floating, planar, prismatic, revolute, spherical
from .rows import set_row
from ..math3d import entry, mat_vec, quat_mul, quat_to_mat, vadd, vsub

REVOLUTE, CONTINUOUS, PRISMATIC, FIXED, FLOATING, PLANAR, SPHERICAL, DISTANCE = range(8)
#: URDF type name (and 'distance', a length-controlled linear actuator) -> engine type code.
TYPE_CODES = {'revolute': REVOLUTE, 'continuous': CONTINUOUS, 'prismatic': PRISMATIC,
              'fixed': FIXED, 'floating': FLOATING, 'planar': PLANAR, 'spherical': SPHERICAL,
              'distance': DISTANCE}
#: Type codes with one scalar coordinate.
SCALAR_CODES = (REVOLUTE, CONTINUOUS, PRISMATIC)
#: Type codes with several free coordinates (no scalar position).
FREE_CODES = (FLOATING, PLANAR, SPHERICAL)
#: Engine type code -> the module that owns the type: its constraint rows (``N_ROWS``,
#: ``constraint``) and its placement outside the kernels (``columns``, ``relative_pose``,
#: ``relative_twist``, ``allowed``, ``anchor_gap``: joints/placement.py).
TYPES = {REVOLUTE: revolute, CONTINUOUS: revolute, PRISMATIC: prismatic, FIXED: fixed,
         FLOATING: floating, PLANAR: planar, SPHERICAL: spherical, DISTANCE: distance}
#: Engine type code -> number of bilateral constraint rows.
N_ROWS = {code: module.N_ROWS for code, module in TYPES.items()}

#: World-frame quantities of one joint at one configuration of its two bodies (value tuples).
JointFrames = namedtuple('JointFrames', [
    'xa', 'xb',              # COM of parent / child body, m
    'quat_a', 'quat_b',      # joint frame orientation seen from parent / child, wxyz
    'rot_a',                 # joint frame rotation seen from the parent
    'anchor_a', 'anchor_b',  # joint origin on parent / child, m
    'axis_a',                # joint axis fixed in the parent
    'perp1_a', 'perp2_a',    # unit normals of the axis fixed in the parent
    'perp1_b', 'perp2_b',    # unit normals of the axis fixed in the child
])


@entry
def joint_frames(xa, qa, xb, qb, ppos, pquat, cpos, cquat, axis, perp1, perp2):
    """
    World frames of a joint from its bodies' poses (COM position, orientation wxyz).

    Args:
        xa, qa: parent COM (m) and orientation; zeros / identity for the world.
        xb, qb: child COM and orientation.
        ppos, pquat: joint frame in the parent body frame, origin relative to the parent COM.
        cpos, cquat: joint frame in the child body frame, origin relative to the child COM.
        axis, perp1, perp2: orthonormal triad in the joint frame.

    Returns:
        JointFrames.
    """
    q_pj = quat_mul(qa, pquat)
    q_cj = quat_mul(qb, cquat)
    r_pj = quat_to_mat(q_pj)
    r_cj = quat_to_mat(q_cj)
    return JointFrames(xa, xb, q_pj, q_cj, r_pj,
                       vadd(xa, mat_vec(quat_to_mat(qa), ppos)),
                       vadd(xb, mat_vec(quat_to_mat(qb), cpos)),
                       mat_vec(r_pj, axis), mat_vec(r_pj, perp1), mat_vec(r_pj, perp2),
                       mat_vec(r_cj, perp1), mat_vec(r_cj, perp2))


@entry
def constraint(jtype, f, C, J, length):
    """
    Dispatch to the joint type's ``constraint``; returns the number of rows filled.

    ``length`` (m) is the target length of a distance element, unused by the other types.
    """
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        return revolute.constraint(f, C, J)
    if jtype == PRISMATIC:
        return prismatic.constraint(f, C, J)
    if jtype == FIXED:
        return fixed.constraint(f, C, J)
    if jtype == SPHERICAL:
        return spherical.constraint(f, C, J)
    if jtype == PLANAR:
        return planar.constraint(f, C, J)
    if jtype == DISTANCE:
        return distance.constraint(f, C, J, length)
    return 0


@entry
def coordinate(jtype, f, axis, J, row):
    """
    Scalar joint coordinate and its Jacobian row (J[row], slots 0 and 1).

    The joint type's module owns both (revolute.coordinate and coordinate_row: the twist
    angle, dq/dt = a1.(w_b - w_a); prismatic: the slide, its levers at the child anchor);
    other types: q = 0 and a zero row.

    Args:
        jtype: engine type code.
        f: JointFrames.
        axis: joint axis in the joint frame.
        J: (n, 4, 6) Jacobian storage; J[row, 0:2] is written (None: not computed).
        row: row index.

    Returns:
        q, rad or m (a revolute angle in (-pi, pi]: the caller unwraps).
    """
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        if J is not None:
            revolute.coordinate_row(f.axis_a, f.anchor_b, f.anchor_b, J, row)
        return revolute.coordinate(f, axis)
    if jtype == PRISMATIC:
        if J is not None:
            prismatic.coordinate_row(f.axis_a, vsub(f.anchor_b, f.xa), vsub(f.anchor_b, f.xb),
                                     J, row)
        return prismatic.coordinate(f, axis)
    if J is not None:
        zero = (0.0, 0.0, 0.0)
        set_row(J, row, zero, zero, zero, zero)
    return 0.0
