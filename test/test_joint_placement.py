"""
Each joint type's placement (physics/joints/<type>.py) against its own constraint rows.

A joint type owns its rows and its placement: the pose and twist a scalar coordinate gives,
the part of a pose a multi-DOF joint allows, its tree columns and its anchor gap.  Those are
checked against the type's constraint kernel: a pose the placement makes satisfies the
constraint (C = 0), a twist it makes is the derivative of its pose and lies in the rows'
null space (J v = 0), and the tree columns are the same twists.
"""
from jointsim_ros.physics import joints
from jointsim_ros.physics.joints import placement
from jointsim_ros.rotations import quat_conjugate, quat_multiply
import numpy as np
import pytest

PLACED = ['revolute', 'continuous', 'prismatic', 'fixed', 'planar', 'spherical']
SCALAR = ['revolute', 'continuous', 'prismatic']
IDENTITY = (1.0, 0.0, 0.0, 0.0)
ZERO = (0.0, 0.0, 0.0)


def triad(rng):
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    perp1 = np.cross(axis, rng.normal(size=3))
    perp1 /= np.linalg.norm(perp1)
    return axis, perp1, np.cross(axis, perp1)


def rows_at(code, axis, perp1, perp2, rel_quat, rel_pos):
    """Return (C, J) of a joint whose parent is the world frame and child sits at the pose."""
    f = joints.joint_frames(ZERO, IDENTITY, tuple(rel_pos), tuple(rel_quat), ZERO, IDENTITY,
                            ZERO, IDENTITY, tuple(axis), tuple(perp1), tuple(perp2))
    c, jac = np.zeros(8), np.zeros((8, 4, 6))
    n = joints.constraint(code, f, c, jac, 0.0)
    return c[:n], jac[:n, 2]  # the child's slot: [linear, angular] at its COM (= origin)


def test_every_type_code_has_one_module_with_rows_and_placement():
    assert set(joints.TYPES) == set(joints.TYPE_CODES.values())
    for code, module in joints.TYPES.items():
        for name in ('N_ROWS', 'TREE_KIND', 'columns', 'relative_pose', 'relative_twist',
                     'allowed', 'anchor_gap'):
            assert hasattr(module, name), (module.__name__, name)
        assert joints.N_ROWS[code] == module.N_ROWS


@pytest.mark.parametrize('name', PLACED)
def test_the_pose_a_joint_allows_satisfies_its_constraint_and_has_no_anchor_gap(name):
    code = joints.TYPE_CODES[name]
    module = joints.TYPES[code]
    rng = np.random.default_rng(7)
    for _ in range(20):
        axis, perp1, perp2 = triad(rng)
        if code in joints.SCALAR_CODES:
            quat, pos = module.relative_pose(axis, rng.uniform(-3, 3))
        else:
            raw = rng.normal(size=4)
            quat, pos = module.allowed(raw / np.linalg.norm(raw), rng.normal(size=3), axis)
            again = module.allowed(quat, pos, axis)
            np.testing.assert_allclose(np.concatenate(again), np.concatenate((quat, pos)))
        c, _ = rows_at(code, axis, perp1, perp2, quat, pos)
        assert np.abs(c).max(initial=0.0) < 1e-12
        # parent anchor at the origin, child anchor at pos
        assert np.linalg.norm(module.anchor_gap(np.asarray(pos), axis)) < 1e-12


@pytest.mark.parametrize('name', PLACED)
def test_an_anchor_gap_the_joint_forbids_is_reported(name):
    code = joints.TYPE_CODES[name]
    module = joints.TYPES[code]
    axis, perp1, _ = triad(np.random.default_rng(3))
    along, across = module.anchor_gap(0.1 * axis, axis), module.anchor_gap(0.1 * perp1, axis)
    # a gap along the axis is free only for a prismatic joint, one across it only for a planar
    assert np.linalg.norm(along) == pytest.approx(0.0 if name == 'prismatic' else 0.1)
    assert np.linalg.norm(across) == pytest.approx(0.0 if name == 'planar' else 0.1)


@pytest.mark.parametrize('name', SCALAR)
def test_a_coordinate_rate_is_the_poses_derivative_its_tree_column_and_free_of_the_rows(name):
    code = joints.TYPE_CODES[name]
    module = joints.TYPES[code]
    rng = np.random.default_rng(11)
    axis, perp1, perp2 = triad(rng)
    q, h = 0.8, 1e-6
    (q0, p0), (q1, p1) = module.relative_pose(axis, q - h), module.relative_pose(axis, q + h)
    quat, pos = module.relative_pose(axis, q)
    # world angular velocity of a unit rate: 2 vec(dQ/dq Q^-1)
    w_fd = 2.0 * quat_multiply((q1 - q0) / (2 * h), quat_conjugate(quat))[1:]
    v_fd = (p1 - p0) / (2 * h)
    w, v = module.relative_twist(axis, 1.0)
    np.testing.assert_allclose(w, w_fd, atol=1e-8)
    np.testing.assert_allclose(v, v_fd, atol=1e-8)
    (column,) = module.columns(axis, perp1, perp2)
    np.testing.assert_allclose(column, np.concatenate((w, v)))
    # the child's COM sits at the joint origin here, so its twist is (v, w) there
    _, jac = rows_at(code, axis, perp1, perp2, quat, pos)
    np.testing.assert_allclose(jac @ np.concatenate((v, w)), 0.0, atol=1e-12)


@pytest.mark.parametrize('name', ['spherical', 'planar', 'floating', 'fixed'])
def test_multi_dof_columns_span_the_rows_null_space(name):
    code = joints.TYPE_CODES[name]
    module = joints.TYPES[code]
    axis, perp1, perp2 = triad(np.random.default_rng(5))
    cols = np.array(module.columns(axis, perp1, perp2)).reshape(-1, 6)
    _, jac = rows_at(code, axis, perp1, perp2, IDENTITY, ZERO)
    # rows + columns = 6 and every column moves freely (J [v; w] = 0)
    assert len(jac) + len(cols) == 6
    for column in cols:
        np.testing.assert_allclose(jac @ np.concatenate((column[3:], column[:3])), 0.0,
                                   atol=1e-12)
    if len(cols):
        assert np.linalg.matrix_rank(cols) == len(cols)


def test_the_tree_kind_matches_the_columns():
    axis, perp1, perp2 = triad(np.random.default_rng(2))
    for code, module in joints.TYPES.items():
        cols = np.array(module.columns(axis, perp1, perp2)).reshape(-1, 6)
        if module.TREE_KIND == placement.TREE_ROTATION:
            assert code in joints.SCALAR_CODES and np.allclose(cols, [np.r_[axis, 0, 0, 0]])
        elif module.TREE_KIND == placement.TREE_SLIDE:
            assert code in joints.SCALAR_CODES and np.allclose(cols, [np.r_[0, 0, 0, axis]])
        else:
            assert code not in joints.SCALAR_CODES
