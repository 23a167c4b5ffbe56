"""
The TF tree (jointsim_ros.ros.frames) is the URDF tree, posed from the simulation.

Chained transforms must give the simulator's world pose of every link, for fixed and floating
bases, merged and kept fixed joints.
"""
from pathlib import Path

from jointsim_ros import Simulator
from jointsim_ros.description import parse_urdf
from jointsim_ros.ros.frames import FrameTree
from jointsim_ros.rotations import quat_to_matrix, relative_quat
import numpy as np
import pytest
from robots import inertial, joint, link, point_mass, robot

ARM = 'urdf/jointsim_arm.urdf.xacro'


def world_poses(tree):
    """Chain every transform of the tree from the world frame; return frame -> (xyz, R)."""
    edges = {t.child: t for t in tree.static + tree.moving_transforms()}
    poses = {tree.world_frame: (np.zeros(3), np.eye(3))}

    def pose(frame):
        if frame not in poses:
            t = edges[frame]
            parent_xyz, parent_rot = pose(t.parent)
            poses[frame] = (parent_xyz + parent_rot @ np.array(t.xyz),
                            parent_rot @ quat_to_matrix(t.quat))
        return poses[frame]

    for frame in edges:
        pose(frame)
    return poses


def assert_tree_matches_the_simulation(sim, tree):
    poses = world_poses(tree)
    for name in sim.model.links:
        if tree.frame(name) == tree.world_frame:
            continue
        xyz, quat = sim.link_pose(name)
        got_xyz, got_rot = poses[tree.frame(name)]
        assert got_xyz == pytest.approx(xyz, abs=1e-9), name
        assert got_rot == pytest.approx(quat_to_matrix(quat), abs=1e-9), name


def package_path(relative):
    """Return the absolute path of a file of the package."""
    return str(Path(__file__).resolve().parents[1] / relative)


def test_arm_tree_is_the_urdf_tree_with_fixed_joints_static():
    sim = Simulator.from_urdf(package_path(ARM), None)
    tree = FrameTree(sim, parse_urdf(package_path(ARM)).robot)
    assert {(t.parent, t.child) for t in tree.static} == {('world', 'base_link'),
                                                          ('link_7', 'tool0')}
    assert len(tree.moving) == 7 and not tree.has_anchor
    assert tree.links == set(sim.model.links) - {'world'}
    sim.set_joint_state({f'joint_a{i}': 0.3 * i * (-1) ** i for i in range(1, 8)})
    sim.step(20)
    assert_tree_matches_the_simulation(sim, tree)


def test_floating_base_is_anchored_in_the_world_and_moves():
    urdf = robot('walker', link('pelvis', inertial(5.0, 0.1, 0.1, 0.1)),
                 link('imu'),
                 link('leg', point_mass(1.0, '0 0 -0.3')),
                 joint('imu_joint', 'fixed', 'pelvis', 'imu', xyz='0.1 0 0.05', rpy='0 0 1.5'),
                 joint('hip', 'revolute', 'pelvis', 'leg', xyz='0 0.1 -0.1', axis='0 1 0',
                       extra='<limit lower="-2" upper="2" effort="10" velocity="10"/>'))
    config = {'base': 'floating', 'gravity': [0, 0, 0],
              'base_pose': {'position': [1, 2, 3], 'rpy': [0.1, 0.2, 0.3]}}
    sim = Simulator.from_urdf(urdf, config)
    tree = FrameTree(sim, parse_urdf(urdf).robot, frame_prefix='r1/', world_frame='odom')
    assert tree.has_anchor and tree.anchor_moves
    assert [(t.parent, t.child) for t in tree.static] == [('r1/pelvis', 'r1/imu')]
    sim.set_base_state([1, 2, 3], [1, 0, 0, 0], [0.5, 0, 0], [0, 0, 2.0])
    sim.set_joint_efforts({'hip': 1.0})
    sim.step(200)
    moving = tree.moving_transforms()
    assert moving[0].parent == 'odom' and moving[0].child == 'r1/pelvis'
    assert_tree_matches_the_simulation(sim, tree)


def test_world_root_with_a_floating_joint_and_a_kept_weld():
    urdf = robot('flyer', link('world'), link('body', inertial(2.0, 0.1, 0.2, 0.3)),
                 link('tool', inertial(0.5, 0.01, 0.01, 0.01)),
                 joint('free', 'floating', 'world', 'body', xyz='0 0 1'),
                 joint('weld', 'fixed', 'body', 'tool', xyz='0.2 0 0', rpy='0 0.5 0'))
    sim = Simulator.from_urdf(urdf, {'gravity': [0, 0, -1], 'keep_fixed_joints': ['weld']})
    tree = FrameTree(sim, parse_urdf(urdf).robot)
    assert not tree.has_anchor  # the root link is the world frame
    assert [(t.parent, t.child) for t in tree.static] == [('body', 'tool')]
    assert tree.static[0].xyz == (0.2, 0.0, 0.0)
    sim.step(100)
    assert [(t.parent, t.child) for t in tree.moving_transforms()] == [('world', 'body')]
    poses = world_poses(tree)
    assert poses['body'][0] == pytest.approx(sim.link_pose('body')[0], abs=1e-12)
    prefixed = FrameTree(sim, parse_urdf(urdf).robot, frame_prefix='a/')
    assert prefixed.has_anchor and not prefixed.anchor_moves
    assert prefixed.static[0][:2] == ('world', 'a/world')


def test_relative_quat_is_conj_parent_times_child():
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = (q / np.linalg.norm(q) for q in rng.normal(size=(2, 4)))
        rel = relative_quat(a, b)
        assert quat_to_matrix(rel) == pytest.approx(quat_to_matrix(a).T @ quat_to_matrix(b))
        assert rel[0] >= 0.0


def test_scene_objects_hang_from_the_world_frame():
    source = robot('r', link('base'))
    scene = {'crate': {'shape': 'box', 'size': [0.2, 0.2, 0.2], 'mass': 1.0,
                       'pose': {'position': [1.0, 0.0, 0.5]}},
             'table': {'shape': 'box', 'size': [1.0, 1.0, 0.1],
                       'pose': {'position': [3.0, 0.0, 0.05]}}}
    sim = Simulator.from_urdf(source, {'scene': scene})
    tree = FrameTree(sim, parse_urdf(source).robot)
    assert {'crate', 'table'} <= tree.links
    assert [t.child for t in tree.static if t.child == 'table'] == ['table']
    sim.step(300)  # the crate falls onto the ground
    assert_tree_matches_the_simulation(sim, tree)
    assert world_poses(tree)['crate'][0][2] == pytest.approx(0.1, abs=1e-3)
