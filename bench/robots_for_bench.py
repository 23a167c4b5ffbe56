"""
Robots the benchmarks simulate: URDF text generators and the bundled 7-DOF arm.

``chain`` and ``double_pendulum`` are the generators of test/robots.py (one source for the
robots that tests and benchmarks simulate).  ``peer_arm_urdf`` turns the bundled arm into the
URDF that jointsim and PyBullet are compared on (bench_pybullet.py says why each change is made).
"""
from pathlib import Path
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np
from transforms3d.axangles import axangle2mat
from transforms3d.euler import euler2mat, mat2euler
import xacro

ARM_XACRO = Path(__file__).resolve().parent.parent / 'urdf' / 'jointsim_arm.urdf.xacro'
sys.path.insert(0, str(ARM_XACRO.parent.parent / 'test'))
from robots import chain, double_pendulum  # noqa: E402,F401,I100  (test/robots.py)


def bent_pose(joint_names, amplitude=0.5):
    """Return the benchmarks' bent start pose: +-amplitude rad on alternate joints."""
    return {name: amplitude * (-1) ** k for k, name in enumerate(joint_names)}


def arm_urdf_text():
    """Return the bundled 7-DOF arm expanded from its xacro, as URDF XML text."""
    return xacro.process_file(str(ARM_XACRO)).toprettyxml(indent='  ')


def _floats(text, default='0 0 0'):
    return np.array([float(v) for v in (text or default).split()])


def peer_arm_urdf(amplitude=0.5):
    """
    Return the arm as compared with PyBullet, at rest in the bent pose, and its data.

    Changes from the bundled arm, all of which leave the motion of a passive, contact-free arm
    as jointsim simulates it unchanged except the last: the massless `world` and `tool0` links
    and their fixed joints are removed (PyBullet gives a link without <inertial> 1 kg and a unit
    inertia); visual and collision elements are removed (no contacts); revolute joints become
    continuous (jointsim does not enforce limits yet, PyBullet would); the start pose is baked
    into the joint origins, so that zero joint positions are the bent pose (PyBullet's joint
    API does not reach maximal-coordinate bodies); products of inertia are dropped, so that
    PyBullet keeps the link frame's axes as principal axes and link frames can be recovered
    from its body poses (the largest product was 3 % of a diagonal term).

    Args:
        amplitude: rad; the start pose is bent_pose() of the movable joints.

    Returns:
        (URDF XML text, info) with info a dict: 'links' [name] in URDF order from the root,
        'joints' [(name, parent, child, origin_xyz (3,), origin_rot (3, 3))],
        'mass' {link: kg}, 'com' {link: (3,) m in the link frame},
        'inertia' {link: (3,) kg m^2 diagonal}.
    """
    root = ElementTree.fromstring(arm_urdf_text())
    for element in list(root):
        if element.tag == 'joint' and element.get('type') == 'fixed':
            root.remove(element)
        elif element.tag == 'link' and element.find('inertial') is None:
            root.remove(element)
        elif element.tag == 'material':
            root.remove(element)
    info = {'links': [], 'joints': [], 'mass': {}, 'com': {}, 'inertia': {}}
    for element in root.findall('link'):
        for tag in ('visual', 'collision'):
            for child in element.findall(tag):
                element.remove(child)
        name = element.get('name')
        inertia = element.find('inertial/inertia')
        for key in ('ixy', 'ixz', 'iyz'):
            inertia.set(key, '0')
        origin = element.find('inertial/origin')
        if np.any(_floats(origin.get('rpy'))):
            raise ValueError(f'{name}: a rotated inertial frame is not supported here')
        info['mass'][name] = float(element.find('inertial/mass').get('value'))
        info['com'][name] = _floats(origin.get('xyz'))
        info['inertia'][name] = np.array([float(inertia.get(k)) for k in ('ixx', 'iyy', 'izz')])
    children = set()
    pose = bent_pose([j.get('name') for j in root.findall('joint')], amplitude)
    for element in root.findall('joint'):
        name = element.get('name')
        element.set('type', 'continuous')
        for limit in element.findall('limit'):
            element.remove(limit)
        origin = element.find('origin')
        axis = _floats(element.find('axis').get('xyz'))
        rot = euler2mat(*_floats(origin.get('rpy')), 'sxyz') @ axangle2mat(axis, pose.get(name, 0))
        origin.set('rpy', ' '.join(f'{a:.17g}' for a in mat2euler(rot, 'sxyz')))
        parent, child = element.find('parent').get('link'), element.find('child').get('link')
        info['joints'].append((name, parent, child, _floats(origin.get('xyz')), rot))
        children.add(child)
    order = [n for n in info['mass'] if n not in children]
    while len(order) < len(info['mass']):
        order += [c for _, p, c, _, _ in info['joints'] if p in order and c not in order]
    info['links'] = order
    return ElementTree.tostring(root, encoding='unicode'), info


def link_frames_at_zero(info):
    """
    Return each link frame of the peer arm at zero joint positions (forward kinematics).

    Returns:
        dict link -> (origin (3,) m, rotation (3, 3)), world frame, root link at the origin.
    """
    frames = {info['links'][0]: (np.zeros(3), np.eye(3))}
    by_child = {child: (parent, xyz, rot) for _, parent, child, xyz, rot in info['joints']}
    for child in info['links'][1:]:
        parent, xyz, rot = by_child[child]
        p, r = frames[parent]
        frames[child] = (p + r @ xyz, r @ rot)
    return frames
