"""URDF text for the scenario tests: small robots whose motion has a known answer."""


def inertial(mass, ixx, iyy, izz, xyz='0 0 0', rpy='0 0 0', ixy=0.0, ixz=0.0, iyz=0.0):
    """Return an <inertial> element."""
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" '
            f'izz="{izz}"/></inertial>')


def link(name, body=''):
    """Return a <link> element."""
    return f'<link name="{name}">{body}</link>'


def joint(name, jtype, parent, child, xyz='0 0 0', rpy='0 0 0', axis='0 1 0', extra=''):
    """Return a <joint> element."""
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/>'
            f'<axis xyz="{axis}"/>{extra}</joint>')


def robot(name, *elements):
    """Return a <robot> document."""
    return f'<?xml version="1.0"?><robot name="{name}">{"".join(elements)}</robot>'


def point_mass(mass=1.0, xyz='0 0 -1', radius=0.01):
    """Inertial of a small solid sphere (a point-like bob) at xyz."""
    i = 0.4 * mass * radius ** 2
    return inertial(mass, i, i, i, xyz=xyz)


def pendulum(length=1.0, mass=1.0):
    """Return a bob on a massless rod hanging from a revolute joint about y at the origin."""
    return robot('pendulum', link('base'), link('bob', point_mass(mass, f'0 0 {-length}')),
                 joint('hinge', 'revolute', 'base', 'bob',
                       extra='<limit lower="-10" upper="10" effort="100" velocity="100"/>'))


def double_pendulum(length=1.0, mass=1.0):
    """Two point-like bobs on massless rods, both hinges about y."""
    lim = '<limit lower="-100" upper="100" effort="100" velocity="100"/>'
    return robot('double_pendulum', link('base'),
                 link('upper', point_mass(mass, f'0 0 {-length}')),
                 link('lower', point_mass(mass, f'0 0 {-length}')),
                 joint('shoulder', 'revolute', 'base', 'upper', extra=lim),
                 joint('elbow', 'continuous', 'upper', 'lower', xyz=f'0 0 {-length}'))


def chain(n, length=0.1, mass=0.1, axis='0 1 0'):
    """Return n uniform rods hanging from the base, joined by revolute joints about axis."""
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


def free_box(mass=2.0, size=(0.1, 0.2, 0.3)):
    """One asymmetric box (a single link: floating base when so configured)."""
    a, b, c = size
    return robot('box', link('box', inertial(mass, mass * (b * b + c * c) / 12,
                                             mass * (a * a + c * c) / 12,
                                             mass * (a * a + b * b) / 12)))


def box_inertial(mass, size, xyz='0 0 0'):
    """Inertial of a solid box of full edge lengths size."""
    a, b, c = size
    return inertial(mass, mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12,
                    mass * (a * a + b * b) / 12, xyz=xyz)


def collision_box(size, xyz='0 0 0'):
    """Return a <collision> box."""
    return (f'<collision><origin xyz="{xyz}"/><geometry><box size="{size[0]} {size[1]} '
            f'{size[2]}"/></geometry></collision>')


def biped(leg=0.4, foot=(0.2, 0.1, 0.04)):
    """
    Return a biped: a torso, and per side hip, knee and ankle pitch joints and a box foot.

    Only the feet have collision shapes (four corners each on flat ground).  The legs sit at
    y = +-0.12 m below a 10 kg torso; joint axes are y.
    """
    lim = '<limit lower="-2.5" upper="2.5" effort="300" velocity="20"/>'
    parts = [link('torso', box_inertial(10.0, (0.2, 0.3, 0.4)))]
    for side, y in (('l', 0.12), ('r', -0.12)):
        parts += [
            link(f'{side}_thigh', box_inertial(2.0, (0.06, 0.06, leg), xyz=f'0 0 {-leg / 2}')),
            link(f'{side}_shin', box_inertial(1.5, (0.05, 0.05, leg), xyz=f'0 0 {-leg / 2}')),
            link(f'{side}_foot', box_inertial(0.5, foot, xyz=f'0.03 0 {-foot[2] / 2}')
                 + collision_box(foot, xyz=f'0.03 0 {-foot[2] / 2}')),
            joint(f'{side}_hip', 'revolute', 'torso', f'{side}_thigh', xyz=f'0 {y} -0.2',
                  extra=lim),
            joint(f'{side}_knee', 'revolute', f'{side}_thigh', f'{side}_shin',
                  xyz=f'0 0 {-leg}', extra=lim),
            joint(f'{side}_ankle', 'revolute', f'{side}_shin', f'{side}_foot',
                  xyz=f'0 0 {-leg}', extra=lim)]
    return robot('biped', *parts)


def parallelogram():
    """Crank and rocker hanging 0.5 m from pivots 0.4 m apart, a coupler across their ends."""
    lim = '<limit lower="-6" upper="6" effort="100" velocity="100"/>'
    return robot(
        'parallelogram', link('ground'),
        link('crank', box_inertial(1.0, (0.04, 0.04, 0.5), xyz='0 0 -0.25')),
        link('rocker', box_inertial(0.6, (0.04, 0.04, 0.5), xyz='0 0 -0.25')),
        link('coupler', box_inertial(2.0, (0.4, 0.04, 0.04), xyz='0.2 0 0')),
        joint('crank_pivot', 'revolute', 'ground', 'crank', axis='0 1 0', extra=lim),
        joint('rocker_pivot', 'revolute', 'ground', 'rocker', xyz='0.4 0 0', axis='0 1 0',
              extra=lim),
        joint('crank_pin', 'revolute', 'crank', 'coupler', xyz='0 0 -0.5', axis='0 1 0',
              extra=lim))
