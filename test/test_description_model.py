"""URDF/xacro -> RobotModel: bodies, link frames, bases, joints, tree order, sources."""
import math
from pathlib import Path

from description_helpers import joint, link, model_link_poses, quat_matrix, robot, rot_x, rot_z
from jointsim_ros.description import load_model, parse_urdf
from jointsim_ros.errors import ConfigError
import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
ARM_XACRO = REPO / 'urdf' / 'jointsim_arm.urdf.xacro'
LIMIT = (-1.0, 1.0, 10.0, 2.0)


def three_link_chain():
    """Return a URDF: a -fixed-> b -fixed-> c -revolute-> d, with rotated origins."""
    return robot(
        link('a', 1.0), link('b', 1.0), link('c', 1.0), link('d', 2.0),
        joint('ab', 'fixed', 'a', 'b', xyz=(0, 0, 1), rpy=(0, 0, math.pi / 2)),
        joint('bc', 'fixed', 'b', 'c', xyz=(1, 0, 0), rpy=(math.pi / 2, 0, 0)),
        joint('cd', 'revolute', 'c', 'd', xyz=(0, 0, 0.5), axis=(0, 0, 1), limit=LIMIT))


def test_merged_link_frames_are_exact():
    model, _ = load_model(three_link_chain(), {'base': 'floating'})
    assert [b.links for b in model.bodies] == [('a', 'b', 'c'), ('d',)]
    assert model.merged_joints == ('ab', 'bc')
    frame_c = model.links['c']
    assert frame_c.body == 0
    # (0, 0, 1) + Rz(90) (1, 0, 0) = (0, 1, 1); Rz(90) Rx(90) is the quaternion (.5, .5, .5, .5)
    np.testing.assert_allclose(frame_c.pos, [0, 1, 1], atol=1e-15)
    np.testing.assert_allclose(frame_c.quat, [0.5, 0.5, 0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(model.links['b'].pos, [0, 0, 1], atol=1e-15)
    # The revolute joint frame in body 0 is c's frame composed with <origin xyz="0 0 0.5">:
    # (0, 1, 1) + Rz(90) Rx(90) (0, 0, 0.5) = (0, 1, 1) + (0.5, 0, 0).
    cd = model.joints[0]
    assert (cd.name, cd.parent_body, cd.child_body) == ('cd', 0, 1)
    np.testing.assert_allclose(cd.parent_pos, [0.5, 1, 1], atol=1e-15)
    expected_rotation = rot_z(math.pi / 2) @ rot_x(math.pi / 2)
    np.testing.assert_allclose(quat_matrix(cd.parent_quat), expected_rotation, atol=1e-15)
    np.testing.assert_allclose(cd.child_pos, 0.0)
    np.testing.assert_allclose(cd.child_quat, [1, 0, 0, 0])
    assert model.links['d'].body == 1


def test_fixed_base_puts_root_in_world_at_base_pose():
    base_pose = {'position': [1.0, 2.0, 3.0], 'rpy': [0.0, 0.0, math.pi / 2]}
    model, config = load_model(three_link_chain(), {'base_pose': base_pose})
    assert not model.floating_base
    assert config.base == 'fixed'
    assert len(model.bodies) == 1 and model.bodies[0].links == ('d',)
    assert {model.links[n].body for n in 'abc'} == {-1}
    np.testing.assert_allclose(model.links['a'].pos, [1, 2, 3])
    # c in the world: base_pose applied to (0, 1, 1): Rz(90) (0, 1, 1) + (1, 2, 3) = (0, 2, 4)
    np.testing.assert_allclose(model.links['c'].pos, [0, 2, 4], atol=1e-14)
    joint_cd = model.joints[0]
    assert joint_cd.parent_body == -1
    np.testing.assert_allclose(joint_cd.parent_pos, [0, 2.5, 4], atol=1e-14)
    np.testing.assert_allclose(model.base_pos, [1, 2, 3])


def test_floating_base_root_body_is_body_zero_without_joint():
    model, _ = load_model(three_link_chain(), {'base': 'floating',
                                               'base_pose': {'position': [0, 0, 2]}})
    assert model.floating_base
    assert model.bodies[0].name == 'a' and model.links['a'].body == 0
    assert all(j.child_body != 0 for j in model.joints)
    np.testing.assert_allclose(model.base_pos, [0, 0, 2])
    np.testing.assert_allclose(model.links['a'].pos, [0, 0, 0])  # body frame, not world


def test_world_link_with_fixed_joint_means_fixed_base():
    text = robot(link('world'), link('base', 1.0), link('arm', 1.0),
                 joint('world_joint', 'fixed', 'world', 'base', xyz=(0, 0, 0.5)),
                 joint('j1', 'revolute', 'base', 'arm', axis=(0, 0, 1), limit=LIMIT))
    model, _ = load_model(text)
    assert not model.floating_base
    assert model.root_link == 'world'
    assert model.links['base'].body == -1
    np.testing.assert_allclose(model.links['base'].pos, [0, 0, 0.5])
    assert model.merged_joints == ('world_joint',)
    assert [j.name for j in model.joints] == ['j1']
    with pytest.raises(ConfigError) as error:
        load_model(text, {'base': 'floating'})
    assert "'world_joint'" in str(error.value) and 'base: floating' in str(error.value)


def test_world_link_with_floating_joint_means_floating_base():
    text = robot(link('world'), link('torso', 5.0), link('leg', 1.0),
                 joint('free', 'floating', 'world', 'torso', xyz=(0, 0, 1.2)),
                 joint('hip', 'revolute', 'torso', 'leg', axis=(0, 1, 0), limit=LIMIT))
    model, config = load_model(text)  # the default base: fixed does not override the URDF
    assert config.base == 'fixed'
    assert model.floating_base
    assert model.bodies[0].name == 'torso'
    assert model.links['world'].body == -1
    assert [j.name for j in model.joints] == ['hip']
    np.testing.assert_allclose(model.base_pos, [0, 0, 1.2])
    with pytest.raises(ConfigError) as error:
        load_model(text, {'base': 'fixed'})
    assert "'free'" in str(error.value)


def test_floating_joint_between_links_is_kept():
    text = robot(link('a', 1.0), link('b', 1.0),
                 joint('free', 'floating', 'a', 'b', xyz=(1, 0, 0)))
    model, _ = load_model(text)
    (free,) = model.joints
    assert (free.type, free.parent_body, free.child_body) == ('floating', -1, 0)
    np.testing.assert_allclose(free.parent_pos, [1, 0, 0])


def test_keep_fixed_joints_gives_a_weld():
    model, _ = load_model(three_link_chain(), {'keep_fixed_joints': ['bc'], 'base': 'floating'})
    assert [b.links for b in model.bodies] == [('a', 'b'), ('c',), ('d',)]
    assert model.merged_joints == ('ab',)
    weld = model.joints[0]
    assert (weld.name, weld.type, weld.parent_body, weld.child_body) == ('bc', 'fixed', 0, 1)
    np.testing.assert_allclose(weld.parent_pos, [0, 1, 1], atol=1e-15)  # b's pose + origin
    assert model.links['c'].body == 1
    np.testing.assert_allclose(model.links['c'].pos, 0.0)
    assert model.tree_order == (0, 1)


def test_tree_order_puts_parents_first_when_urdf_lists_children_first():
    text = robot(link('base', 1.0), link('l1', 1.0), link('l2', 1.0), link('l3', 1.0),
                 joint('j3', 'revolute', 'l2', 'l3', axis=(1, 0, 0), limit=LIMIT),
                 joint('j2', 'revolute', 'l1', 'l2', axis=(1, 0, 0), limit=LIMIT),
                 joint('j1', 'revolute', 'base', 'l1', axis=(1, 0, 0), limit=LIMIT))
    model, _ = load_model(text)
    assert [j.name for j in model.joints] == ['j3', 'j2', 'j1']  # URDF order
    assert [model.joints[i].name for i in model.tree_order] == ['j1', 'j2', 'j3']
    seen = {-1}
    for index in model.tree_order:
        assert model.joints[index].parent_body in seen
        seen.add(model.joints[index].child_body)


def test_joint_fields_limits_dynamics_and_defaults():
    text = robot(
        link('base', 1.0), link('a', 1.0), link('b', 1.0), link('c', 1.0),
        joint('rev', 'revolute', 'base', 'a', axis=(0, 0, 2), limit=(-0.5, 1.5, 30.0, 2.5),
              extra='<dynamics damping="0.7" friction="0.2"/>'),
        joint('cont', 'continuous', 'a', 'b', axis=(0, 1, 0)),
        joint('slide', 'prismatic', 'b', 'c', limit=(0.0, 0.3, 100.0, 0.5)))
    model, _ = load_model(text)
    rev, cont, slide = model.joints
    np.testing.assert_allclose(rev.axis, [0, 0, 1])
    assert (rev.lower, rev.upper, rev.effort_limit, rev.velocity_limit) == (-0.5, 1.5, 30, 2.5)
    assert (rev.damping, rev.friction) == (0.7, 0.2)
    assert (cont.lower, cont.upper) == (-math.inf, math.inf)
    assert (cont.effort_limit, cont.velocity_limit, cont.damping) == (math.inf, math.inf, 0.0)
    np.testing.assert_allclose(slide.axis, [1, 0, 0])  # URDF default axis
    assert (slide.type, slide.lower, slide.upper) == ('prismatic', 0.0, 0.3)
    assert any("joint 'rev'" in w and 'normalised' in w for w in model.warnings)


def test_spherical_and_planar_joints_parse():
    text = robot(link('base', 1.0), link('ball', 1.0), link('puck', 1.0),
                 joint('shoulder', 'spherical', 'base', 'ball', xyz=(0, 0, 1)),
                 joint('table', 'planar', 'ball', 'puck', axis=(0, 0, 1)))
    model, _ = load_model(text)
    shoulder, table = model.joints
    assert shoulder.type == 'spherical' and table.type == 'planar'
    np.testing.assert_allclose(table.axis, [0, 0, 1])
    assert (table.lower, table.upper) == (-math.inf, math.inf)
    assert parse_urdf(text).robot.joint_map['shoulder'].type == 'spherical'


def test_mimic_is_kept_with_multiplier_and_offset_and_chains():
    mimic = '<mimic joint="{}" multiplier="-2" offset="0.1"/>'
    text = robot(link('base', 1.0), link('a', 1.0), link('b', 1.0), link('c', 1.0),
                 joint('lead', 'revolute', 'base', 'a', axis=(0, 0, 1), limit=LIMIT),
                 joint('follow', 'revolute', 'base', 'b', axis=(0, 0, 1), limit=LIMIT,
                       extra=mimic.format('lead')),
                 joint('follow2', 'continuous', 'base', 'c', axis=(0, 0, 1),
                       extra='<mimic joint="follow"/>'))
    model, _ = load_model(text)
    lead, follow, follow2 = model.joints
    assert lead.mimic is None
    assert (follow.mimic.leader, follow.mimic.multiplier, follow.mimic.offset) == ('lead', -2, 0.1)
    assert (follow2.mimic.leader, follow2.mimic.multiplier, follow2.mimic.offset) == (
        'follow', 1.0, 0.0)


def test_xacro_file_loads_as_the_default_arm():
    model, config = load_model(str(ARM_XACRO))
    assert model.name == 'jointsim_arm'
    assert model.warnings == ()
    assert not model.floating_base and model.root_link == 'world'
    assert [j.name for j in model.joints] == [f'joint_a{i}' for i in range(1, 8)]
    assert all(j.type == 'revolute' for j in model.joints)
    axes = [tuple(j.axis) for j in model.joints]
    assert axes == [(0, 0, 1), (0, 1, 0)] * 3 + [(0, 0, 1)]
    masses = [b.mass for b in model.bodies]
    assert masses == [4.0, 4.0, 3.0, 2.7, 1.7, 1.8, 1.0]
    assert all(abs(b.inertia[0, 1]) > 0 for b in model.bodies[1:])  # full tensors
    assert model.links['tool0'].body == 6
    np.testing.assert_allclose(model.links['tool0'].pos, [0, 0, 0.045])
    assert model.joints[0].effort_limit == 176.0
    assert model.joints[0].upper == pytest.approx(math.radians(170))
    poses = model_link_poses(model)
    np.testing.assert_allclose(poses['tool0'][1], [0, 0, 1.306], atol=1e-12)


def test_xacro_string_with_macro_and_arguments_loads():
    text = """<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="x">
      <xacro:arg name="length" default="0.5"/>
      <xacro:macro name="box_link" params="name">
        <link name="${name}"><inertial><mass value="1"/>
          <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
      </xacro:macro>
      <xacro:box_link name="a"/><xacro:box_link name="b"/>
      <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
        <origin xyz="0 0 $(arg length)"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    </robot>"""
    model, _ = load_model(text)
    np.testing.assert_allclose(model.joints[0].parent_pos, [0, 0, 0.5])
    model, _ = load_model(text, xacro_args={'length': '2.0'})
    np.testing.assert_allclose(model.joints[0].parent_pos, [0, 0, 2.0])


def test_urdf_file_and_string_load_the_same(tmp_path):
    path = tmp_path / 'chain.urdf'
    path.write_text(three_link_chain())
    from_file, _ = load_model(str(path))
    from_path, _ = load_model(path)
    from_string, _ = load_model(three_link_chain())
    for model in (from_path, from_string):
        assert [b.links for b in model.bodies] == [b.links for b in from_file.bodies]
        np.testing.assert_allclose(model.joints[0].parent_pos, from_file.joints[0].parent_pos)


def test_package_uris_and_unknown_extensions_do_not_break_parsing():
    text = robot(
        '<link name="base"><inertial><mass value="1"/>'
        '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
        '<visual><geometry><mesh filename="package://no_such_pkg/meshes/base.dae"/></geometry>'
        '</visual><contact><lateral_friction value="1"/></contact></link>',
        '<gazebo reference="base"><material>Gazebo/Grey</material></gazebo>',
        '<transmission name="t"><type>SimpleTransmission</type><joint name="x"/></transmission>',
        '<ros2_control name="hw" type="system"/>')
    model, _ = load_model(text, {'base': 'floating'})
    assert model.bodies[0].name == 'base'
    assert model.warnings == ()  # none of these can change the model
    assert parse_urdf(text).robot.links[0].visual.geometry.filename.startswith('package://')


def test_unknown_attribute_inside_joint_is_reported():
    text = robot(link('a', 1.0), link('b', 1.0),
                 joint('j', 'revolute', 'a', 'b', axis=(0, 0, 1), limit=LIMIT,
                       extra='<dynamics dampnig="3"/>'))
    model, _ = load_model(text)
    assert model.joints[0].damping == 0.0
    assert any('"dampnig"' in w and "'j'" in w for w in model.warnings)
