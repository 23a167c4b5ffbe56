"""Every description error is a DescriptionError whose message names the element and the fix."""
from description_helpers import joint, link, robot
from jointsim_ros.description import load_model
from jointsim_ros.errors import DescriptionError
import pytest

LIMIT = (-1.0, 1.0, 10.0, 2.0)


def error_of(source, config=None):
    """Return the message of the DescriptionError that loading raises."""
    with pytest.raises(DescriptionError) as error:
        load_model(source, config)
    return str(error.value)


def test_malformed_xml_names_file_and_line(tmp_path):
    path = tmp_path / 'broken.urdf'
    path.write_text('<robot name="r">\n  <link name="a">\n  </lnk>\n</robot>\n')
    message = error_of(str(path))
    assert 'broken.urdf' in message
    assert 'not well-formed XML at line 3' in message
    assert 'Fix the XML' in message


def test_malformed_xml_string_is_named_as_string():
    message = error_of('<robot name="r"><link name="a"></robot>')
    assert 'the URDF string' in message and 'line 1' in message


def test_missing_file_says_it_was_taken_as_a_path():
    message = error_of('/no/such/robot.urdf')
    assert "'/no/such/robot.urdf' does not exist" in message


def test_root_element_must_be_robot():
    message = error_of('<sdf version="1.6"><model name="m"/></sdf>')
    assert 'root element <sdf>, not <robot>' in message


def test_unknown_joint_type_suggests_the_close_one():
    text = robot(link('a', 1.0), link('b', 1.0), joint('elbow', 'revolte', 'a', 'b'))
    message = error_of(text)
    assert "joint 'elbow' (line 5" in message
    assert "unknown type 'revolte'" in message
    assert "did you mean 'revolute'?" in message


def test_missing_parent_and_child_links_are_named():
    text = robot(link('base', 1.0), link('arm', 1.0),
                 joint('j', 'revolute', 'bse', 'arm', axis=(0, 0, 1), limit=LIMIT))
    message = error_of(text)
    assert "joint 'j'" in message and "parent link 'bse'" in message
    assert "did you mean 'base'?" in message
    text = robot(link('base', 1.0),
                 joint('j', 'revolute', 'base', 'hand', axis=(0, 0, 1), limit=LIMIT))
    message = error_of(text)
    assert "child link 'hand', which is not defined" in message


def test_link_with_two_parents_is_a_loop():
    text = robot(link('a', 1.0), link('b', 1.0), link('c', 1.0),
                 joint('ab', 'revolute', 'a', 'b', axis=(0, 0, 1), limit=LIMIT),
                 joint('bc', 'revolute', 'b', 'c', axis=(0, 0, 1), limit=LIMIT),
                 joint('ac', 'revolute', 'a', 'c', axis=(0, 0, 1), limit=LIMIT))
    message = error_of(text)
    assert "link 'c' is the child of two joints" in message
    assert "'bc'" in message and "'ac'" in message and 'loop' in message


def test_cycle_detached_from_the_root_is_named():
    text = robot(link('root', 1.0), link('x', 1.0), link('y', 1.0),
                 joint('xy', 'revolute', 'x', 'y', axis=(0, 0, 1), limit=LIMIT),
                 joint('yx', 'revolute', 'y', 'x', axis=(0, 0, 1), limit=LIMIT))
    message = error_of(text)
    assert 'kinematic loop' in message and "'xy'" in message and "'yx'" in message


def test_multiple_roots_are_listed():
    text = robot(link('a', 1.0), link('b', 1.0), link('stray', 1.0),
                 joint('ab', 'revolute', 'a', 'b', axis=(0, 0, 1), limit=LIMIT))
    message = error_of(text)
    assert '2 root links' in message and "'a'" in message and "'stray'" in message


def test_massless_child_of_movable_joint_is_an_error():
    text = robot(link('base', 1.0), link('ghost'), link('ghost_tip', 0.0),
                 joint('spin', 'continuous', 'base', 'ghost', axis=(0, 0, 1)),
                 joint('tip', 'fixed', 'ghost', 'ghost_tip'))
    message = error_of(text)
    assert "continuous joint 'spin' (line 6" in message
    assert "link 'ghost'" in message and 'has no mass' in message
    assert "'ghost_tip'" in message  # the merged links are named too
    assert '<inertial>' in message


def test_massless_kept_weld_child_says_to_merge_it():
    text = robot(link('base', 1.0), link('flange'), joint('tool', 'fixed', 'base', 'flange'))
    message = error_of(text, {'keep_fixed_joints': ['tool']})
    assert "kept fixed joint 'tool'" in message and 'keep_fixed_joints' in message


def test_massless_floating_base_is_an_error():
    text = robot(link('base'), link('arm', 1.0),
                 joint('j', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT))
    message = error_of(text, {'base': 'floating'})
    assert "floating base: link 'base'" in message and 'base: fixed' in message


def test_negative_mass_is_an_error():
    message = error_of(robot(link('a', -1.0)), {'base': 'floating'})
    assert "link 'a'" in message and 'mass -1' in message


def test_non_finite_limit_is_an_error():
    text = robot(link('a', 1.0), link('b', 1.0),
                 joint('j', 'revolute', 'a', 'b', axis=(0, 0, 1),
                       limit=(float('nan'), 1.0, 1, 1)))
    message = error_of(text)
    assert "joint 'j'" in message and 'lower=nan' in message


def test_zero_axis_is_an_error():
    text = robot(link('a', 1.0), link('b', 1.0),
                 joint('j', 'prismatic', 'a', 'b', axis=(0, 0, 0), limit=LIMIT))
    message = error_of(text)
    assert "joint 'j'" in message and 'no direction' in message


def test_mimic_of_fixed_joint_or_cycle_is_an_error():
    def chain(mimic_a, mimic_b):
        return robot(link('base', 1.0), link('a', 1.0), link('b', 1.0), link('f'),
                     joint('ja', 'revolute', 'base', 'a', axis=(0, 0, 1), limit=LIMIT,
                           extra=f'<mimic joint="{mimic_a}"/>' if mimic_a else ''),
                     joint('jb', 'revolute', 'base', 'b', axis=(0, 0, 1), limit=LIMIT,
                           extra=f'<mimic joint="{mimic_b}"/>'),
                     joint('flange', 'fixed', 'b', 'f'))
    # a mimic of a missing joint is a repair (test_urdf_repairs.py)
    message = error_of(chain(None, 'flange'))
    assert "mimics joint 'flange', which is fixed" in message
    message = error_of(chain('jb', 'ja'))
    assert 'mimic cycle' in message


def test_duplicate_link_name_gives_both_lines():
    message = error_of(robot(link('a', 1.0), link('a', 2.0)))
    assert "link 'a' is defined twice (lines 3 and 4)" in message


def test_missing_required_attribute_names_the_joint():
    text = robot(link('a', 1.0), link('b', 1.0),
                 '<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
                 '<limit lower="0" upper="1" effort="1" velocity="1"/>'
                 '<mimic multiplier="2"/></joint>')
    message = error_of(text)
    assert "joint 'j' (line 5)" in message and 'joint' in message and 'mimic' in message


def test_xacro_error_names_the_file(tmp_path):
    path = tmp_path / 'bad.urdf.xacro'
    path.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r">\n'
                    '  <xacro:no_such_macro/>\n</robot>\n')
    message = error_of(str(path))
    assert 'bad.urdf.xacro' in message and 'failed in xacro' in message
    assert 'no_such_macro' in message


def test_errors_carry_no_traceback_chain():
    with pytest.raises(DescriptionError) as error:
        load_model('<robot name="r"><link name="a"></robot>')
    assert error.value.__cause__ is None and error.value.__suppress_context__
