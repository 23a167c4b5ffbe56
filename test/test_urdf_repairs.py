"""
URDF as ROS reads it (docs/model.md): each repair on a small hand-written file.

Each test checks that the repair is announced once, naming the file, the line and what was
assumed, and that the model is what the warning says was assumed.
"""
import math

from description_helpers import joint, link, robot
from jointsim_ros.description import load_model
from jointsim_ros.description.builder import MASSLESS_STAND_IN
from jointsim_ros.errors import DescriptionError
import numpy as np
import pytest

LIMIT = (-1.0, 1.0, 10.0, 2.0)


def arm(joint_xml, *more):
    """Return a two-link robot with the given joint between 'base' and 'arm'."""
    return robot(link('base', 1.0), link('arm', 1.0), joint_xml, *more)


def load(tmp_path, text, name='robot.urdf', config=None):
    """Write the URDF to a file, load it; return (model, its repair warnings, path)."""
    path = tmp_path / name
    path.write_text(text)
    model, _ = load_model(str(path), config or {'base': 'fixed'})
    return model, [w for w in model.warnings if 'assumed' in w], str(path)


def only(warnings, *words):
    """Return the one warning holding every word (and check there is exactly one)."""
    found = [w for w in warnings if all(word in w for word in words)]
    assert len(found) == 1, warnings
    return found[0]


def test_xml_declaration_version_0_0_is_read_as_1_0(tmp_path):
    text = arm(joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT))
    text = text.replace('<?xml version="1.0"?>', '<?xml version="0.0" ?>')
    model, warnings, path = load(tmp_path, text)
    message = only(warnings, 'version="0.0"')
    assert f"'{path}' line 1:" in message and 'assumed 1.0' in message
    assert [j.name for j in model.joints] == ['j']


def test_xml_declaration_after_a_comment_is_ignored(tmp_path):
    text = arm(joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT))
    text = '<!-- made by hand -->\n\n' + text
    model, warnings, path = load(tmp_path, text)
    message = only(warnings, 'XML declaration after')
    assert f"'{path}' line 3:" in message and 'assumed XML 1.0' in message
    # the declaration is blanked, not removed: later lines keep their numbers
    assert model.joints[0].name == 'j'
    text = text.replace('type="revolute"', 'type="revolut"')
    with pytest.raises(DescriptionError, match='line 7'):
        load(tmp_path, text)


def test_lower_above_upper_means_no_position_limit_as_in_pybullet(tmp_path):
    model, warnings, path = load(tmp_path, arm(
        joint('slide', 'prismatic', 'base', 'arm', axis=(1, 0, 0), limit=(1.0, -1.0, 5.0, 1.0))))
    message = only(warnings, 'lower > upper')
    assert f"'{path}' line 5" in message and "'slide' (lower=1 upper=-1)" in message
    assert 'assumed no position limit' in message
    slide = model.joints[0]
    assert (slide.lower, slide.upper) == (-math.inf, math.inf)
    assert slide.effort_limit == 5.0


def test_revolute_without_limit_is_unlimited(tmp_path):
    model, warnings, path = load(tmp_path, arm(
        joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1))))
    message = only(warnings, 'without <limit>')
    assert f"'{path}' line 5: joint 'j'" in message and 'assumed unlimited' in message
    j = model.joints[0]
    assert (j.lower, j.upper, j.effort_limit, j.velocity_limit) == (
        -math.inf, math.inf, math.inf, math.inf)


def test_pybullet_spherical_limit_is_announced_and_not_used(tmp_path):
    model, warnings, path = load(tmp_path, arm(
        joint('neck', 'spherical', 'base', 'arm',
              extra='<limit effort="100" lower="0.2" upper=".8" twist=".3"/>')))
    message = only(warnings, "PyBullet's spherical joint limit")
    assert f"'{path}' line 5" in message and 'lower=0.2, upper=.8, twist=.3' in message
    assert 'assumed a free ball joint' in message
    missing = only(warnings, 'without effort or velocity')
    assert "joint 'neck' has no velocity" in missing and 'assumed unlimited' in missing
    neck = model.joints[0]
    assert neck.type == 'spherical' and neck.velocity_limit == math.inf
    assert neck.effort_limit == 100.0


def test_vector_with_extra_neutral_values_keeps_the_first_three(tmp_path):
    text = arm(joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT))
    text = text.replace('<origin xyz="0.0 0.0 0.0" rpy="0.0 0.0 0.0"/><axis',
                        '<origin rpy="0 1.5 0 0"/><axis')
    text = text.replace('<link name="arm">', '<link name="arm"><collision><geometry>'
                        '<mesh filename="m.stl" scale="2 2 2 1"/></geometry></collision>')
    model, warnings, path = load(tmp_path, text)
    message = only(warnings, 'more than three numbers')
    assert f"'{path}' lines 4, 5" in message and '(2 places)' in message
    assert 'assumed the first three' in message
    rotation = model.joints[0].parent_quat
    assert np.allclose(rotation, [math.cos(0.75), 0.0, math.sin(0.75), 0.0])


def test_vector_with_extra_values_that_change_it_is_an_error(tmp_path):
    text = arm(joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT))
    text = text.replace('<origin xyz="0.0 0.0 0.0" rpy="0.0 0.0 0.0"/><axis',
                        '<origin rpy="0 1.5 0 2"/><axis')
    with pytest.raises(DescriptionError) as error:
        load(tmp_path, text)
    message = str(error.value)
    assert 'robot.urdf' in message and "joint 'j' (line 5)" in message
    assert 'has 4 numbers where 3 are expected' in message and 'Give three numbers' in message


def test_optenv_left_in_a_vector_takes_its_default(tmp_path, monkeypatch):
    monkeypatch.setenv('IMU_XYZ', '9 9 9')  # not read: a .urdf is not a template
    text = arm(joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT))
    text = text.replace('<origin xyz="0.0 0.0 0.0" rpy="0.0 0.0 0.0"/><axis',
                        '<origin xyz="$(optenv IMU_XYZ 0.19 0 0.149)"/><axis')
    model, warnings, path = load(tmp_path, text)
    message = only(warnings, '$(optenv')
    assert f"'{path}' line 5" in message and 'read as "0.19 0 0.149"' in message
    assert 'assumed the default' in message
    assert np.allclose(model.joints[0].parent_pos, [0.19, 0.0, 0.149])


def test_commas_and_a_stray_period_are_read_as_pybullet_reads_them(tmp_path):
    text = arm(joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT))
    text = text.replace('<origin xyz="0.0 0.0 0.0" rpy="0.0 0.0 0.0"/><axis',
                        '<origin xyz="0.07, 0, -0.69"/><axis')
    text = text.replace('lower="-1.0"', 'lower="-1.57."')
    model, warnings, path = load(tmp_path, text)
    assert 'assumed the commas are separators' in only(warnings, 'separated by commas')
    assert 'assumed the number before it' in only(warnings, 'stray period', f"'{path}' line 5")
    assert np.allclose(model.joints[0].parent_pos, [0.07, 0.0, -0.69])
    assert model.joints[0].lower == -1.57


def test_mimic_of_a_missing_joint_moves_on_its_own(tmp_path):
    text = robot(link('base', 1.0), link('a', 1.0), link('b', 1.0),
                 joint('left_index_q1', 'revolute', 'base', 'a', axis=(0, 0, 1), limit=LIMIT),
                 joint('left_index_q2', 'revolute', 'base', 'b', axis=(0, 0, 1), limit=LIMIT,
                       extra='<mimic joint="index_q1" multiplier="2"/>'))
    model, warnings, path = load(tmp_path, text)
    message = only(warnings, '<mimic> naming a joint that does not exist')
    assert (f"'{path}' line 7: joint 'left_index_q2' (mimics 'index_q1', did you mean "
            "'left_index_q1'?)") in message
    assert 'assumed the joint moves on its own' in message
    assert all(j.mimic is None for j in model.joints)


def test_massless_link_between_joints_gets_a_small_stand_in_mass(tmp_path):
    # a ball joint made of two revolutes through a link without <inertial> (human.urdf's hips)
    text = robot(link('base', 1.0), link('virtual'), link('leg', 2.0),
                 joint('hip_z', 'revolute', 'base', 'virtual', axis=(0, 0, 1), limit=LIMIT),
                 joint('hip_x', 'revolute', 'virtual', 'leg', axis=(1, 0, 0), limit=LIMIT))
    model, warnings, path = load(tmp_path, text)
    message = only(warnings, 'without mass that carry links with mass')
    assert path in message and "'virtual' (line 4) 0.02 kg" in message
    assert f'assumed {MASSLESS_STAND_IN:g} of the mass each carries' in message
    virtual = next(b for b in model.bodies if b.name == 'virtual')
    assert virtual.mass == pytest.approx(MASSLESS_STAND_IN * 2.0)
    assert np.allclose(virtual.inertia, MASSLESS_STAND_IN * 1e-3 * np.eye(3))


def test_massless_link_that_carries_nothing_stays_an_error(tmp_path):
    text = robot(link('base', 1.0), link('finger'),
                 joint('j', 'revolute', 'base', 'finger', axis=(0, 0, 1), limit=LIMIT))
    (tmp_path / 'hand.urdf').write_text(text)
    with pytest.raises(DescriptionError) as error:
        load_model(str(tmp_path / 'hand.urdf'), {'base': 'fixed'})
    message = str(error.value)
    assert 'hand.urdf' in message and "link 'finger'" in message and 'no mass' in message
    assert 'give the link an <inertial>' in message


def test_texture_without_filename_is_dropped_quietly(tmp_path):
    text = arm(joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT),
               '<material name="metal"><texture/></material>')
    model, warnings, _ = load(tmp_path, text)
    assert warnings == [] and model.joints[0].name == 'j'


def test_each_repair_is_announced_once_for_many_places(tmp_path):
    text = robot(link('base', 1.0), *[link(f'l{i}', 1.0) for i in range(6)],
                 *[joint(f'j{i}', 'prismatic', 'base', f'l{i}', axis=(1, 0, 0),
                         limit=(1.0, -1.0, 1.0, 1.0)) for i in range(6)])
    model, warnings, _ = load(tmp_path, text)
    message = only(warnings, 'lower > upper')
    assert 'and 2 more' in message
    assert all(j.lower == -math.inf for j in model.joints)
