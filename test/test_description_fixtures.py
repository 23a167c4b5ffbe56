"""Published robot descriptions (test/fixtures/urdf, see SOURCES.md) load into sane models."""
import hashlib
from pathlib import Path
import re

from description_helpers import model_link_poses, urdf_link_poses, urdf_masses
from jointsim_ros.description import load_model, SCALAR_JOINT_TYPES
import numpy as np
import pytest

FIXTURES = Path(__file__).resolve().parent / 'fixtures' / 'urdf'

# file -> (scalar joints, other joint types kept, can float): counted by hand from the files.
EXPECTED = {
    'kuka_iiwa.urdf': (7, {}, False),          # root link is massless: fixed base only
    'panda.urdf': (9, {}, True),
    'ur5.urdf': (6, {}, False),                # root link 'world': fixed base
    'solo12.urdf': (12, {}, True),
    'anymal_c.urdf': (12, {}, True),
    'talos_reduced.urdf': (32, {}, True),
    'g1_29dof.urdf': (29, {}, True),
    'humanoid.urdf': (4, {'spherical': 8}, True),
}
CASES = [(name, 'fixed') for name in EXPECTED] + [
    (name, 'floating') for name, (_, _, floats) in EXPECTED.items() if floats]


def test_every_fixture_is_listed_and_unmodified():
    files = sorted(p.name for p in FIXTURES.glob('*.urdf'))
    assert files == sorted(EXPECTED)
    sources = (FIXTURES / 'SOURCES.md').read_text()
    recorded = dict(re.findall(r'^([0-9a-f]{64})  (\S+\.urdf)$', sources, re.MULTILINE))
    for name in files:
        digest = hashlib.sha256((FIXTURES / name).read_bytes()).hexdigest()
        assert recorded.get(digest) == name, f'{name} differs from the published file'


@pytest.mark.parametrize('name, base', CASES)
def test_fixture_loads_into_a_sane_model(name, base):
    path = FIXTURES / name
    model, _ = load_model(str(path), {'base': base})
    scalar, others, _ = EXPECTED[name]
    assert model.floating_base == (base == 'floating')
    assert sum(j.type in SCALAR_JOINT_TYPES for j in model.joints) == scalar
    kinds = {}
    for j in model.joints:
        if j.type not in SCALAR_JOINT_TYPES:
            kinds[j.type] = kinds.get(j.type, 0) + 1
    assert kinds == others

    for body in model.bodies:
        assert body.mass > 0.0, body.name
        assert np.allclose(body.inertia, body.inertia.T), body.name
        moments = np.linalg.eigvalsh(body.inertia)
        assert moments[0] > 0.0, body.name
        assert moments[0] + moments[1] >= moments[2] * (1 - 1e-9), body.name
        assert np.all(np.isfinite(body.com))

    # Masses add up to the file's: everything when floating, all but the world body when fixed.
    masses = urdf_masses(path)
    in_world = [n for n, frame in model.links.items() if frame.body == -1]
    expected_mass = sum(masses.values()) - sum(masses[n] for n in in_world)
    assert sum(b.mass for b in model.bodies) == pytest.approx(expected_mass, rel=1e-12)

    # Every link has a frame, bodies and joints are consistent, tree_order is parents-first.
    assert set(model.links) == set(masses)
    assert sorted(model.tree_order) == list(range(len(model.joints)))
    seen = {-1, 0} if model.floating_base else {-1}
    for index in model.tree_order:
        j = model.joints[index]
        assert j.parent_body in seen and j.child_body not in seen
        seen.add(j.child_body)
        assert np.linalg.norm(j.axis) == pytest.approx(1.0)
        assert j.lower <= j.upper
    assert seen == set(range(-1, len(model.bodies)))
    for frame in model.links.values():
        assert np.linalg.norm(frame.quat) == pytest.approx(1.0)


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_link_poses_match_an_independent_forward_kinematics(name):
    # Every link's world pose rebuilt from bodies, joints and LinkFrames equals the pose composed
    # straight from the URDF origins: merging and frame bookkeeping lose nothing.
    path = FIXTURES / name
    model, _ = load_model(str(path))
    reference = urdf_link_poses(path)
    poses = model_link_poses(model)
    for link_name, (rotation, position) in reference.items():
        np.testing.assert_allclose(poses[link_name][0], rotation, atol=1e-12, err_msg=link_name)
        np.testing.assert_allclose(poses[link_name][1], position, atol=1e-12, err_msg=link_name)


def test_known_repairs_and_mimics_of_fixtures():
    model, _ = load_model(str(FIXTURES / 'anymal_c.urdf'), {'base': 'floating'})
    hatch = [w for w in model.warnings if "link 'hatch'" in w]
    assert len(hatch) == 1 and 'not positive definite' in hatch[0]
    model, _ = load_model(str(FIXTURES / 'panda.urdf'))
    finger = {j.name: j for j in model.joints}['panda_finger_joint2']
    assert (finger.mimic.leader, finger.mimic.multiplier, finger.mimic.offset) == (
        'panda_finger_joint1', 1.0, 0.0)
    model, _ = load_model(str(FIXTURES / 'talos_reduced.urdf'))
    assert 'gripper_left_inner_double_joint' in model.merged_joints  # fixed, mimic ignored
