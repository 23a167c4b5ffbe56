"""Mass properties of bodies: parallel-axis composition, rotated tensors, inertia repairs."""
import logging
import math

from description_helpers import joint, link, robot, rot_x, rot_z, rpy_matrix
from jointsim_ros.description import load_model
from jointsim_ros.description.geometry import (INERTIA_FLOOR_RADIUS, inertia_problems,
                                               matrix_to_quat, repair_inertia, rpy_to_matrix)
import numpy as np
import pytest


def test_two_links_merged_by_fixed_joint_compose_by_parallel_axis_theorem():
    # Hand computation. Link a: 2 kg, COM at its origin, I = diag(0.1, 0.2, 0.3).
    # Link b, fixed at (1, 0, 0): 1 kg, COM (0, 0.5, 0) in b, so (1, 0.5, 0) in a;
    # I = diag(0.01, 0.02, 0.03). Composite COM c = (1, 0.5, 0) / 3 = (1/3, 1/6, 0).
    # d_a = -(1/3, 1/6, 0), |d_a|^2 = 5/36; d_b = (2/3, 1/3, 0), |d_b|^2 = 5/9.
    # Steiner a: 2 (5/36 - 1/9, 5/36 - 1/36, 5/36; xy: -1/18) = (1/18, 2/9, 5/18; xy -1/9)
    # Steiner b: 1 (5/9 - 4/9, 5/9 - 1/9, 5/9; xy: -2/9) = (1/9, 4/9, 5/9; xy -2/9)
    text = robot(
        link('a', 2.0, inertia=(0.1, 0, 0, 0.2, 0, 0.3)),
        link('b', 1.0, com=(0, 0.5, 0), inertia=(0.01, 0, 0, 0.02, 0, 0.03)),
        link('c', 1.0),
        joint('weld', 'fixed', 'a', 'b', xyz=(1, 0, 0)),
        joint('hinge', 'revolute', 'a', 'c', axis=(0, 0, 1), limit=(-1, 1, 10, 1)))
    model, _ = load_model(text, {'base': 'floating'})
    body = model.bodies[0]
    assert body.links == ('a', 'b')
    assert body.mass == pytest.approx(3.0)
    np.testing.assert_allclose(body.com, [1 / 3, 1 / 6, 0], atol=1e-12)
    expected = np.array([
        [0.11 + 1 / 18 + 1 / 9, -1 / 9 - 2 / 9, 0.0],
        [-1 / 9 - 2 / 9, 0.22 + 2 / 9 + 4 / 9, 0.0],
        [0.0, 0.0, 0.33 + 5 / 18 + 5 / 9],
    ])
    np.testing.assert_allclose(body.inertia, expected, atol=1e-12)


@pytest.mark.parametrize('rpy, expected_diagonal', [
    ((0, 0, math.pi / 2), (2.0, 1.0, 3.0)),   # yaw 90 deg swaps x and y
    ((math.pi / 2, 0, 0), (1.0, 3.0, 2.0)),   # roll 90 deg swaps y and z
    ((0, math.pi / 2, 0), (3.0, 2.0, 1.0)),   # pitch 90 deg swaps x and z
])
def test_inertial_origin_rpy_rotates_the_tensor(rpy, expected_diagonal):
    text = robot(link('a', 1.0, rpy=rpy, inertia=(1.0, 0, 0, 2.0, 0, 3.0)))
    model, _ = load_model(text, {'base': 'floating'})
    np.testing.assert_allclose(model.bodies[0].inertia, np.diag(expected_diagonal), atol=1e-12)


def test_general_rpy_rotation_matches_r_i_rt():
    rpy = (0.3, -0.2, 0.5)
    tensor = np.array([[0.4, 0.01, -0.02], [0.01, 0.5, 0.03], [-0.02, 0.03, 0.6]])
    text = robot(link('a', 1.5, com=(0.1, 0.2, 0.3), rpy=rpy,
                      inertia=(0.4, 0.01, -0.02, 0.5, 0.03, 0.6)))
    model, _ = load_model(text, {'base': 'floating'})
    rotation = rpy_matrix(rpy)  # independent Rz Ry Rx from the test helpers
    np.testing.assert_allclose(model.bodies[0].inertia, rotation @ tensor @ rotation.T,
                               atol=1e-12)
    np.testing.assert_allclose(model.bodies[0].com, [0.1, 0.2, 0.3])
    assert not np.allclose(model.bodies[0].inertia, tensor)  # the rotation did something


def test_merged_link_inertia_is_rotated_by_the_joint_and_its_own_origin():
    # b hangs from a by a fixed joint yawed 90 deg at (0, 0, 1); b's inertial has roll 90 deg.
    # In a's frame b's tensor diag(1, 2, 3) becomes Rz(90) Rx(90) diag Rx^T Rz^T.
    text = robot(
        link('a', 1.0, inertia=(1e-6, 0, 0, 1e-6, 0, 1e-6)),
        link('b', 1.0, com=(1, 0, 0), rpy=(math.pi / 2, 0, 0), inertia=(1.0, 0, 0, 2.0, 0, 3.0)),
        joint('weld', 'fixed', 'a', 'b', xyz=(0, 0, 1), rpy=(0, 0, math.pi / 2)))
    model, _ = load_model(text, {'base': 'floating'})
    body = model.bodies[0]
    rotation = rot_z(math.pi / 2) @ rot_x(math.pi / 2)
    b_tensor = rotation @ np.diag([1.0, 2.0, 3.0]) @ rotation.T
    b_com = np.array([0.0, 1.0, 1.0])  # (0, 0, 1) + Rz(90) (1, 0, 0)
    np.testing.assert_allclose(body.com, b_com / 2, atol=1e-12)
    d = b_com / 2
    steiner = 2 * 1.0 * (d @ d * np.eye(3) - np.outer(d, d))  # both parts are d away
    expected = b_tensor + 1e-6 * np.eye(3) + steiner
    np.testing.assert_allclose(body.inertia, expected, atol=1e-12)


def test_rpy_to_matrix_and_quaternion_agree_with_independent_rotations():
    rpy = (0.7, -1.1, 2.5)
    np.testing.assert_allclose(rpy_to_matrix(rpy), rpy_matrix(rpy), atol=1e-14)
    quat = matrix_to_quat(rot_z(math.pi / 2) @ rot_x(math.pi / 2))
    np.testing.assert_allclose(quat, [0.5, 0.5, 0.5, 0.5], atol=1e-14)
    quat = matrix_to_quat(rot_x(math.pi))  # trace -1 branch
    np.testing.assert_allclose(quat, [0.0, 1.0, 0.0, 0.0], atol=1e-14)


def test_all_zero_inertia_becomes_a_one_centimetre_sphere_with_a_warning(caplog):
    text = robot(link('base', 2.0),
                 link('arm', 3.0, inertia=(0, 0, 0, 0, 0, 0)),
                 joint('shoulder', 'revolute', 'base', 'arm', axis=(0, 0, 1),
                       limit=(-1, 1, 10, 1)))
    with caplog.at_level(logging.WARNING, logger='jointsim_ros'):
        model, _ = load_model(text)
    sphere = 0.4 * 3.0 * INERTIA_FLOOR_RADIUS ** 2
    np.testing.assert_allclose(model.bodies[0].inertia, sphere * np.eye(3), rtol=1e-12)
    assert len(model.warnings) == 1
    assert "link 'arm'" in model.warnings[0]
    assert 'all zero' in model.warnings[0]
    assert 'line 4' in model.warnings[0]  # the <link name="arm"> line of the string
    assert any("link 'arm'" in r.getMessage() for r in caplog.records)


def test_triangle_inequality_violation_raises_the_two_smaller_moments():
    # Principal moments (0.1, 0.2, 0.5): 0.1 + 0.2 < 0.5, excess 0.2 -> (0.2, 0.3, 0.5).
    text = robot(link('base', 1.0), link('plate', 1.0, inertia=(0.1, 0, 0, 0.2, 0, 0.5)),
                 joint('j', 'continuous', 'base', 'plate', axis=(0, 0, 1)))
    model, _ = load_model(text)
    np.testing.assert_allclose(model.bodies[0].inertia, np.diag([0.2, 0.3, 0.5]), atol=1e-12)
    assert "link 'plate'" in model.warnings[0]
    assert 'triangle inequality' in model.warnings[0]


def test_indefinite_inertia_is_floored_and_axes_kept():
    # Principal moments (-0.01, 0.2, 0.3) about axes rotated by yaw 0.4. The floor is
    # max(0.4 * 2 * 1e-4, 1e-3 * 0.3) = 3e-4, giving (3e-4, 0.2, 0.3); then 3e-4 + 0.2 < 0.3,
    # so the excess 0.0997 is split between the two smaller moments.
    rotation = rot_z(0.4)
    tensor = rotation @ np.diag([-0.01, 0.2, 0.3]) @ rotation.T
    repaired = repair_inertia(2.0, tensor)
    moments = np.linalg.eigvalsh(repaired)
    excess = 0.3 - 0.2 - 3e-4
    np.testing.assert_allclose(moments, [3e-4 + excess / 2, 0.2 + excess / 2, 0.3], atol=1e-12)
    # Axes are kept: the repaired tensor is diagonal in the same rotated frame.
    local = rotation.T @ repaired @ rotation
    np.testing.assert_allclose(local - np.diag(np.diag(local)), 0.0, atol=1e-12)
    assert inertia_problems(repaired) == []
    assert inertia_problems(tensor) == ['is not positive definite']


def test_valid_inertia_is_left_alone_and_massless_leaf_merges_silently():
    thin_rod = (1e-5, 0, 0, 0.1, 0, 0.1)  # legitimate: I1 << I2 = I3
    text = robot(link('base', 1.0), link('rod', 1.0, inertia=thin_rod), link('tip'),
                 joint('j', 'revolute', 'base', 'rod', axis=(0, 1, 0), limit=(-1, 1, 1, 1)),
                 joint('tip_joint', 'fixed', 'rod', 'tip', xyz=(1, 0, 0)))
    model, _ = load_model(text)
    assert model.warnings == ()
    np.testing.assert_allclose(model.bodies[0].inertia, np.diag([1e-5, 0.1, 0.1]))
    assert model.bodies[0].links == ('rod', 'tip')
