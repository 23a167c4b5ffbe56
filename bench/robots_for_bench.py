"""
Robots the benchmarks simulate: URDF text generators and the bundled 7-DOF arm.

``chain`` and ``double_pendulum`` are copies of the generators in test/robots.py (kept here so
that bench/ does not import from test/).  ``peer_arm_urdf`` turns the bundled arm into the URDF
that jointsim and PyBullet are compared on (see bench_pybullet.py for why each change is made).
"""
from pathlib import Path
import xml.etree.ElementTree as ElementTree

import numpy as np
from transforms3d.axangles import axangle2mat
from transforms3d.euler import euler2mat, mat2euler
import xacro

ARM_XACRO = Path(__file__).resolve().parent.parent / 'urdf' / 'jointsim_arm.urdf.xacro'


def inertial(mass, ixx, iyy, izz, xyz='0 0 0'):
    """Return an <inertial> element with a diagonal inertia tensor."""
    return (f'<inertial><origin xyz="{xyz}" rpy="0 0 0"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>'
            f'</inertial>')


def link(name, body=''):
    """Return a <link> element."""
    return f'<link name="{name}">{body}</link>'


def joint(name, jtype, parent, child, xyz='0 0 0', axis='0 1 0', extra=''):
    """Return a <joint> element."""
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}" rpy="0 0 0"/>'
            f'<axis xyz="{axis}"/>{extra}</joint>')


def robot(name, *elements):
    """Return a <robot> document."""
    return f'<?xml version="1.0"?><robot name="{name}">{"".join(elements)}</robot>'


def point_mass(mass=1.0, xyz='0 0 -1', radius=0.01):
    """Return the inertial of a small solid sphere (a point-like bob) at xyz."""
    i = 0.4 * mass * radius ** 2
    return inertial(mass, i, i, i, xyz=xyz)


def double_pendulum(length=1.0, mass=1.0):
    """Return two point-like bobs on massless rods, both hinges about y (test/robots.py)."""
    lim = '<limit lower="-100" upper="100" effort="100" velocity="100"/>'
    return robot('double_pendulum', link('base'),
                 link('upper', point_mass(mass, f'0 0 {-length}')),
                 link('lower', point_mass(mass, f'0 0 {-length}')),
                 joint('shoulder', 'revolute', 'base', 'upper', extra=lim),
                 joint('elbow', 'continuous', 'upper', 'lower', xyz=f'0 0 {-length}'))


def chain(n, length=0.1, mass=0.1, axis='0 1 0'):
    """Return n uniform rods hanging from the base, hinged about axis (test/robots.py)."""
    i_rod = mass * length ** 2 / 12.0
    i_thin = 1e-6 * mass
    parts = [link('base')]
    parent = 'base'
    for k in range(n):
        name = f'link{k}'
        parts.append(link(name, inertial(mass, i_rod, i_rod, i_thin, xyz=f'0 0 {-length / 2}')))
        parts.append(joint(f'joint{k}', 'continuous', parent, name, axis=axis,
                           xyz='0 0 0' if k == 0 else f'0 0 {-length}'))
        parent = name
    return robot(f'chain{n}', *parts)


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
