"""
Each joint type's Jacobian against the finite-difference derivative of its own constraint.

For random poses of the two bodies and random twists (v_a, w_a, v_b, w_b), the rows' rate
J [v_a, w_a, v_b, w_b] must equal dC/dt, taken by central differences of the joint type's
``constraint`` along the motion x(e) = x + v e, q(e) = exp(w e) q (w in the world frame).
Rows that are exact for every configuration (coincident points, a point on a plane, an axis
kept normal to another, a distance) are checked anywhere; the orientation-lock rows
(C = R 2 vec(q_err)) are exact only on the constraint, and are checked there and near it.
The scalar coordinate's row (``joints.coordinate``) is checked the same way.
"""
from jointsim_ros.physics import joints
from jointsim_ros.rotations import (quat_about_axis, quat_conjugate, quat_multiply,
                                    quat_to_matrix)
import numpy as np
import pytest

TYPES = ['revolute', 'continuous', 'prismatic', 'fixed', 'planar', 'spherical', 'distance']
#: Types whose rows include orientation locks (exact only where the constraint holds).
LOCKED = {'prismatic', 'fixed'}
STEP = 1e-6


def random_quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def turn(quat, w, e):
    """Return exp(w e) quat: quat turned by the world rotation vector w e."""
    angle = np.linalg.norm(w) * e
    if angle == 0.0:
        return quat
    return quat_multiply(quat_about_axis(w / np.linalg.norm(w), angle), quat)


class Joint:
    """One joint between bodies a and b: its fixed geometry, and C, J at any poses."""

    def __init__(self, jtype, rng):
        self.code = joints.TYPE_CODES[jtype]
        self.n_rows = joints.N_ROWS[self.code]
        self.ppos, self.cpos = rng.normal(scale=0.3, size=3), rng.normal(scale=0.3, size=3)
        self.pquat, self.cquat = random_quat(rng), random_quat(rng)
        axis = rng.normal(size=3)
        self.axis = axis / np.linalg.norm(axis)
        perp1 = np.cross(self.axis, rng.normal(size=3))
        self.perp1 = perp1 / np.linalg.norm(perp1)
        self.perp2 = np.cross(self.axis, self.perp1)
        self.length = 0.7

    def frames(self, xa, qa, xb, qb):
        t = tuple
        return joints.joint_frames(t(xa), t(qa), t(xb), t(qb), t(self.ppos), t(self.pquat),
                                   t(self.cpos), t(self.cquat), t(self.axis), t(self.perp1),
                                   t(self.perp2))

    def rows(self, xa, qa, xb, qb):
        """Return (C (n,), J (n, 12)) at these poses."""
        c = np.zeros(8)
        jac = np.zeros((8, 4, 6))
        n = joints.constraint(self.code, self.frames(xa, qa, xb, qb), c, jac, self.length)
        assert n == self.n_rows
        return c[:n].copy(), jac[:n, :2].reshape(n, 12).copy()

    def coordinate(self, xa, qa, xb, qb):
        """Return (q, its Jacobian row (12,)) at these poses."""
        jac = np.zeros((1, 4, 6))
        q = joints.coordinate(self.code, self.frames(xa, qa, xb, qb), tuple(self.axis), jac, 0)
        return q, jac[0, :2].reshape(12).copy()


def satisfied_child(joint, xa, qa, rng):
    """Return a child pose (xb, qb) on the joint's constraint (free coordinates random)."""
    # joint frame seen from the parent, then a motion the joint allows, then the child
    q_pj = quat_multiply(qa, joint.pquat)
    anchor = xa + quat_to_matrix(qa) @ joint.ppos
    axis_world = quat_to_matrix(q_pj) @ joint.axis
    q_cj = q_pj
    if joint.code in (joints.REVOLUTE, joints.CONTINUOUS, joints.PLANAR):
        q_cj = quat_multiply(quat_about_axis(axis_world, rng.uniform(-3, 3)), q_pj)
    if joint.code == joints.SPHERICAL:
        q_cj = random_quat(rng)
    if joint.code == joints.PRISMATIC:
        anchor = anchor + rng.uniform(-0.5, 0.5) * axis_world
    if joint.code == joints.PLANAR:
        slide = np.cross(axis_world, rng.normal(size=3))
        anchor = anchor + slide
    qb = quat_multiply(q_cj, quat_conjugate(joint.cquat))
    xb = anchor - quat_to_matrix(qb) @ joint.cpos
    return xb, qb


def rates(joint, xa, qa, xb, qb, twist, what):
    """Return (J twist, central difference of C along the twist) for 'rows' or 'coordinate'."""
    va, wa, vb, wb = twist[:3], twist[3:6], twist[6:9], twist[9:]
    f = joint.rows if what == 'rows' else joint.coordinate

    def value(e):
        return np.asarray(f(xa + va * e, turn(qa, wa, e), xb + vb * e, turn(qb, wb, e))[0])
    jac = np.asarray(f(xa, qa, xb, qb)[1])
    return jac @ twist, (value(STEP) - value(-STEP)) / (2.0 * STEP)


@pytest.mark.parametrize('jtype', TYPES)
def test_jacobian_is_the_derivative_of_the_constraint(jtype):
    rng = np.random.default_rng(abs(hash(jtype)) % 2 ** 32)
    joint = Joint(jtype, rng)
    for trial in range(20):
        xa, qa = rng.normal(size=3), random_quat(rng)
        if jtype in LOCKED:
            # on the constraint, then 1e-4 off it: the lock rows' error is second order
            xb, qb = satisfied_child(joint, xa, qa, rng)
            if trial % 2:
                xb, qb = xb + rng.normal(scale=1e-4, size=3), turn(qb, rng.normal(size=3), 1e-4)
            tolerance = 1e-6 if trial % 2 == 0 else 2e-3
        else:
            xb, qb = rng.normal(size=3), random_quat(rng)
            tolerance = 1e-6
        twist = rng.normal(size=12)
        analytic, numeric = rates(joint, xa, qa, xb, qb, twist, 'rows')
        scale = max(1.0, np.max(np.abs(numeric)))
        np.testing.assert_allclose(analytic, numeric, atol=tolerance * scale,
                                   err_msg=f'{jtype}, trial {trial}')


@pytest.mark.parametrize('jtype', ['revolute', 'continuous', 'prismatic'])
def test_coordinate_row_is_the_derivative_of_the_coordinate(jtype):
    rng = np.random.default_rng(7 + len(jtype))
    joint = Joint(jtype, rng)
    for trial in range(20):
        xa, qa = rng.normal(size=3), random_quat(rng)
        xb, qb = satisfied_child(joint, xa, qa, rng)
        twist = rng.normal(size=12)
        if jtype != 'prismatic':
            # keep the motion along the joint (the twist angle's rate is a1.(w_b - w_a) there)
            axis = joint.frames(xa, qa, xb, qb).axis_a
            twist[9:] = twist[3:6] + rng.normal() * np.asarray(axis)
        analytic, numeric = rates(joint, xa, qa, xb, qb, twist, 'coordinate')
        assert analytic == pytest.approx(numeric, abs=1e-6), (jtype, trial)


def test_every_joint_type_with_rows_is_covered():
    with_rows = {name for name, code in joints.TYPE_CODES.items() if joints.N_ROWS[code] > 0}
    assert with_rows == set(TYPES)


@pytest.mark.parametrize('jtype', TYPES)
def test_the_error_only_path_gives_the_same_error(jtype):
    # the position projection asks for C alone (J=None, a specialization of its own)
    rng = np.random.default_rng(11)
    joint = Joint(jtype, rng)
    xa, qa, xb, qb = rng.normal(size=3), random_quat(rng), rng.normal(size=3), random_quat(rng)
    f = joint.frames(xa, qa, xb, qb)
    with_jacobian, alone = np.zeros(8), np.zeros(8)
    n = joints.constraint(joint.code, f, with_jacobian, np.zeros((8, 4, 6)), joint.length)
    assert joints.constraint(joint.code, f, alone, None, joint.length) == n
    np.testing.assert_array_equal(alone, with_jacobian)
