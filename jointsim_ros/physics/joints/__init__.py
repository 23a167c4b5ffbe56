"""Joint types: one module each (its math in the docstring), dispatched from one table here.

Every joint type exposes ``N_ROWS`` and ``constraint(frames, C, J)``, which fills the position
errors C and the Jacobian rows J (see ``rows``) from the joint's world frames.  Scalar joints
(revolute, continuous, prismatic) also have a coordinate and its Jacobian (``coordinate``), which
efforts, mimic rows and, later, friction, limits and drives act along.
"""
from collections import namedtuple

import numpy as np

from . import fixed, planar, prismatic, revolute, spherical
from ..math3d import cross, dot3, jit, quat_axis_angle_about, quat_mul, quat_to_mat

REVOLUTE, CONTINUOUS, PRISMATIC, FIXED, FLOATING, PLANAR, SPHERICAL = range(7)
#: URDF type name -> engine type code.
TYPE_CODES = {'revolute': REVOLUTE, 'continuous': CONTINUOUS, 'prismatic': PRISMATIC,
              'fixed': FIXED, 'floating': FLOATING, 'planar': PLANAR, 'spherical': SPHERICAL}
#: Type codes with one scalar coordinate.
SCALAR_CODES = (REVOLUTE, CONTINUOUS, PRISMATIC)
#: Engine type code -> number of bilateral constraint rows (the dispatch table's sizes).
N_ROWS = {REVOLUTE: revolute.N_ROWS, CONTINUOUS: revolute.N_ROWS, PRISMATIC: prismatic.N_ROWS,
          FIXED: fixed.N_ROWS, FLOATING: 0, PLANAR: planar.N_ROWS, SPHERICAL: spherical.N_ROWS}

#: World-frame quantities of one joint at one configuration of its two bodies.
JointFrames = namedtuple('JointFrames', [
    'xa', 'xb',              # (3,) COM of parent / child body, m
    'quat_a', 'quat_b',      # (4,) joint frame orientation seen from parent / child, wxyz
    'rot_a',                 # (3, 3) joint frame rotation seen from the parent
    'anchor_a', 'anchor_b',  # (3,) joint origin on parent / child, m
    'axis_a',                # (3,) joint axis fixed in the parent
    'perp1_a', 'perp2_a',    # (3,) unit normals of the axis fixed in the parent
    'perp1_b', 'perp2_b',    # (3,) unit normals of the axis fixed in the child
])


@jit
def joint_frames(xa, qa, xb, qb, ppos, pquat, cpos, cquat, axis, perp1, perp2):
    """World frames of a joint from its bodies' poses (COM position, orientation wxyz).

    Args:
        xa, qa: parent COM (3,) m and orientation (4,); zeros / identity for the world.
        xb, qb: child COM and orientation.
        ppos, pquat: joint frame in the parent body frame, origin relative to the parent COM.
        cpos, cquat: joint frame in the child body frame, origin relative to the child COM.
        axis, perp1, perp2: orthonormal triad in the joint frame.

    Returns:
        JointFrames.
    """
    ra = quat_to_mat(qa)
    rb = quat_to_mat(qb)
    q_pj = quat_mul(qa, pquat)
    q_cj = quat_mul(qb, cquat)
    r_pj = quat_to_mat(q_pj)
    r_cj = quat_to_mat(q_cj)
    return JointFrames(xa, xb, q_pj, q_cj, r_pj, xa + ra @ ppos, xb + rb @ cpos,
                       r_pj @ axis, r_pj @ perp1, r_pj @ perp2, r_cj @ perp1, r_cj @ perp2)


@jit
def constraint(jtype, f, C, J):
    """Dispatch to the joint type's ``constraint``; returns the number of rows filled."""
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
    return 0


@jit
def coordinate(jtype, f, axis, J, row):
    """Scalar joint coordinate and its Jacobian row (J[row], slots 0 and 1).

    Revolute/continuous: q = twist angle of q_pj^-1 q_cj about the axis, in (-pi, pi] (the
    caller unwraps), dq/dt = a1.(w_b - w_a).  Prismatic: q = (p_b - p_a).a1, with the slide
    row's Jacobian (``rows.slide_row``).  Other types: q = 0 and a zero row.

    Args:
        jtype: engine type code.
        f: JointFrames.
        axis: (3,) joint axis in the joint frame.
        J: (n, 4, 6) Jacobian storage; J[row, 0:2] is written.
        row: row index.

    Returns:
        q, rad or m.
    """
    J[row, 0:2, :] = 0.0
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        a = f.axis_a
        J[row, 0, 3:6] = -a
        J[row, 1, 3:6] = a
        qa = f.quat_a
        q_rel = np.array((qa[0], -qa[1], -qa[2], -qa[3]))
        return quat_axis_angle_about(quat_mul(q_rel, f.quat_b), axis)
    if jtype == PRISMATIC:
        a = f.axis_a
        J[row, 0, 0:3] = -a
        J[row, 0, 3:6] = -cross(f.anchor_b - f.xa, a)
        J[row, 1, 0:3] = a
        J[row, 1, 3:6] = cross(f.anchor_b - f.xb, a)
        return dot3(f.anchor_b - f.anchor_a, a)
    return 0.0
