"""URDF builders and an independent forward-kinematics reference for the description tests."""
import math
import xml.etree.ElementTree as ElementTree

import numpy as np


def rot_x(angle):
    """Return the rotation matrix about x by angle (rad)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(angle):
    """Return the rotation matrix about y by angle (rad)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(angle):
    """Return the rotation matrix about z by angle (rad)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_matrix(rpy):
    """Return the URDF rotation of roll, pitch, yaw: Rz(yaw) Ry(pitch) Rx(roll)."""
    return rot_z(rpy[2]) @ rot_y(rpy[1]) @ rot_x(rpy[0])


def quat_matrix(quat):
    """Return the rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = quat
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def vec(values):
    """Format numbers as a URDF vector attribute."""
    return ' '.join(repr(float(v)) for v in values)


def link(name, mass=None, com=(0, 0, 0), rpy=(0, 0, 0), inertia=(1e-3, 0, 0, 1e-3, 0, 1e-3)):
    """
    Return a <link> element; mass None gives a link without <inertial>.

    Args:
        name: link name.
        mass: kg, or None for no <inertial>.
        com: inertial origin xyz, m.
        rpy: inertial origin rpy, rad.
        inertia: ixx, ixy, ixz, iyy, iyz, izz, kg m^2.
    """
    if mass is None:
        return f'<link name="{name}"/>'
    keys = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
    tensor = ' '.join(f'{k}="{v!r}"' for k, v in zip(keys, inertia))
    return (f'<link name="{name}"><inertial><origin xyz="{vec(com)}" rpy="{vec(rpy)}"/>'
            f'<mass value="{mass!r}"/><inertia {tensor}/></inertial></link>')


def joint(name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=None, limit=None,
          extra=''):
    """
    Return a <joint> element.

    Args:
        name: joint name.
        kind: URDF joint type.
        parent: parent link name.
        child: child link name.
        xyz: origin position, m.
        rpy: origin rpy, rad.
        axis: axis vector, or None to leave <axis> out.
        limit: (lower, upper, effort, velocity), or None to leave <limit> out.
        extra: more XML placed inside the joint.
    """
    axis_xml = '' if axis is None else f'<axis xyz="{vec(axis)}"/>'
    limit_xml = ''
    if limit is not None:
        lower, upper, effort, velocity = limit
        limit_xml = (f'<limit lower="{lower!r}" upper="{upper!r}" effort="{effort!r}" '
                     f'velocity="{velocity!r}"/>')
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{vec(xyz)}" rpy="{vec(rpy)}"/>'
            f'{axis_xml}{limit_xml}{extra}</joint>')


def robot(*elements, name='test_robot'):
    """Return URDF XML text holding the elements, one per line."""
    body = '\n'.join(elements)
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def urdf_link_poses(path):
    """
    Compute every link's pose relative to the root link straight from the URDF XML.

    An independent reference: ElementTree and the rotation helpers above, nothing from
    jointsim_ros. All joints at zero position.

    Args:
        path: URDF file path.

    Returns:
        dict link name -> (rotation (3, 3), position (3,)) in the root link frame.
    """
    with open(path, 'rb') as stream:
        root = ElementTree.fromstring(stream.read().rstrip(b'\x00 \r\n\t'))
    links = [e.get('name') for e in root.findall('link')]
    joints = root.findall('joint')
    parent_of = {j.find('child').get('link'): j for j in joints}
    poses = {}

    def pose(name):
        if name not in poses:
            j = parent_of.get(name)
            if j is None:
                poses[name] = (np.eye(3), np.zeros(3))
            else:
                rot, pos = pose(j.find('parent').get('link'))
                origin = j.find('origin')
                xyz = [0.0, 0.0, 0.0]
                rpy = [0.0, 0.0, 0.0]
                if origin is not None:
                    xyz = [float(v) for v in origin.get('xyz', '0 0 0').split()]
                    rpy = [float(v) for v in origin.get('rpy', '0 0 0').split()]
                poses[name] = (rot @ rpy_matrix(rpy), rot @ np.array(xyz) + pos)
        return poses[name]

    for name in links:
        pose(name)
    return poses


def urdf_masses(path):
    """Return dict link name -> <mass value> (0 when absent) straight from the URDF XML."""
    with open(path, 'rb') as stream:
        root = ElementTree.fromstring(stream.read().rstrip(b'\x00 \r\n\t'))
    masses = {}
    for element in root.findall('link'):
        mass = element.find('inertial/mass')
        masses[element.get('name')] = 0.0 if mass is None else float(mass.get('value'))
    return masses


def model_link_poses(model):
    """
    Compute every link's world pose from a RobotModel at zero joint positions.

    Body poses follow ``tree_order``: child body = parent body * joint parent frame *
    inverse(joint child frame) (the joint frames coincide at zero position).

    Args:
        model: RobotModel.

    Returns:
        dict link name -> (rotation (3, 3), position (3,)) in the world frame.
    """
    bodies = {-1: (np.eye(3), np.zeros(3))}
    if model.floating_base:
        bodies[0] = (quat_matrix(model.base_quat), np.asarray(model.base_pos))
    for index in model.tree_order:
        j = model.joints[index]
        parent_rot, parent_pos = bodies[j.parent_body]
        frame_rot = parent_rot @ quat_matrix(j.parent_quat)
        frame_pos = parent_rot @ j.parent_pos + parent_pos
        child_rot = quat_matrix(j.child_quat)
        body_rot = frame_rot @ child_rot.T
        bodies[j.child_body] = (body_rot, frame_pos - body_rot @ j.child_pos)
    poses = {}
    for name, frame in model.links.items():
        body_rot, body_pos = bodies[frame.body]
        poses[name] = (body_rot @ quat_matrix(frame.quat), body_rot @ frame.pos + body_pos)
    return poses
