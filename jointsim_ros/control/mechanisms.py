"""
The spatial mechanisms of issue 8's inverse-dynamics procedure, as URDF text plus config.

Bars are slender: a uniform bar of mass m and length L has central inertia m L^2 / 12 across
it, so the issue's bars give L_A = sqrt(12 * 67 / 25) = 5.671 m and
L_B = L_C = sqrt(12 * 23 / 17) = 4.029 m.  Every bar lies along its link's x axis, from the
link origin; its centre of mass is at its middle.

- :func:`three_bar`: the mechanism as issue 8 states it (bar A on a spherical joint at the
  origin, B and C on revolute joints, elements d-a, a-b, b-c with d = (0, 0, 3) m).  It has
  five degrees of freedom for three elements, and turning the whole of it about the O-d line
  changes no element's length, so its element lengths do not fix its configuration
  (docs/prescribed.md measures what follows).
- :func:`slewing_crane`: the same bars, d and path on a mechanism whose three elements do fix
  its three degrees of freedom: a turret turned about z by a slewing element, bar A luffed by
  d-a, and the jib (bar B with bar C fixed in line) raised by a-b.

Both solve to 1e-8 N s with up to 300 iterations: the stages start without warm-start impulses,
and a loose first solve would give stage 3 a kick the recorded forces do not contain.
"""
import numpy as np

MASS_A, INERTIA_A = 25.0, (0.008, 67.0, 67.0)
MASS_BC, INERTIA_BC = 17.0, (0.005, 23.0, 23.0)
LENGTH_A = float(np.sqrt(12.0 * INERTIA_A[1] / MASS_A))
LENGTH_BC = float(np.sqrt(12.0 * INERTIA_BC[1] / MASS_BC))
POINT_D = (0.0, 0.0, 3.0)
#: Viscous damping of the slewing crane's joints, N m s/rad.
CRANE_DAMPING = 1000.0
TOOL_START = np.array([8.0, 0.0, 0.0])
_LIMIT = '<limit lower="-3.1" upper="3.1" effort="1e7" velocity="100"/>'


def tool_path(t):
    """
    Return the issue's tool path at times t (s): (..., 3) world positions, m.

    x = 8 + sin u, y = 1 - cos u, z = 2 (1 - cos u), u = pi (1 - cos((t - 1) / 2)) between
    t = 1 s and 1 + 2 pi s (0 before, 2 pi after): a closed loop, at rest at both ends.
    """
    s = np.clip((np.asarray(t, dtype=float) - 1.0) / 2.0, 0.0, np.pi)
    u = np.pi * (1.0 - np.cos(s))
    return np.stack([8.0 + np.sin(u), 1.0 - np.cos(u), 2.0 * (1.0 - np.cos(u))], axis=-1)


def _bar(name, mass, length, inertia):
    return (f'<link name="{name}"><inertial><origin xyz="{length / 2.0:.9g} 0 0"/>'
            f'<mass value="{mass:g}"/><inertia ixx="{inertia[0]:g}" iyy="{inertia[1]:g}" '
            f'izz="{inertia[2]:g}" ixy="0" ixz="0" iyz="0"/></inertial></link>\n')


def _hinge(name, parent, child, x, pitch):
    """Return a revolute joint about y at x along the parent bar, its child pitched (rad)."""
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{x:.12g} 0 0" rpy="0 {pitch:.12g} 0"/>'
            f'<axis xyz="0 1 0"/>{_LIMIT}</joint>\n')


def _pitch(direction):
    """Rotation about y (rad) that turns +x into the x-z direction (cos, 0, -sin)."""
    return float(np.arctan2(-direction[2], direction[0]))


def _elbow(a, tool, l1, l2, below=True):
    """Pitch angles of two bars from a to tool in the x-z plane (elbow below or above)."""
    d = tool - a
    r = np.linalg.norm(d)
    spread = np.arccos((l1 ** 2 + r ** 2 - l2 ** 2) / (2.0 * l1 * r))
    first = _pitch(d) + (spread if below else -spread)
    b = a + l1 * np.array([np.cos(first), 0.0, -np.sin(first)])
    return first, _pitch(tool - b)


def three_bar(dt=0.001, iterations=300):
    """
    Return (URDF text, config dict) of issue 8's spatial three-bar mechanism.

    Bar A hangs from its spherical joint at 45 degrees below the horizon towards +x; B and C
    reach from A's tip to the path's start (8, 0, 0) m with their elbow below, hinges about y.
    Elements (ball ends): d-a from d = (0, 0, 3) to A's tip, a-b across B's hinge and b-c
    across C's hinge (0.5 m off the bars, at 0.7 of the first bar and 0.3 of the second).
    """
    pitch_a = np.pi / 4.0
    tip_a = LENGTH_A * np.array([np.cos(pitch_a), 0.0, -np.sin(pitch_a)])
    pitch_b, pitch_c = _elbow(tip_a, TOOL_START, LENGTH_BC, LENGTH_BC)
    urdf = ('<robot name="three_bar"><link name="world"/>\n'
            + _bar('bar_a', MASS_A, LENGTH_A, INERTIA_A)
            + _bar('bar_b', MASS_BC, LENGTH_BC, INERTIA_BC)
            + _bar('bar_c', MASS_BC, LENGTH_BC, INERTIA_BC)
            + f'<joint name="base" type="spherical"><parent link="world"/><child link="bar_a"/>'
            f'<origin xyz="0 0 0" rpy="0 {pitch_a:.12g} 0"/></joint>\n'
            + _hinge('hinge_b', 'bar_a', 'bar_b', LENGTH_A, pitch_b - pitch_a)
            + _hinge('hinge_c', 'bar_b', 'bar_c', LENGTH_BC, pitch_c - pitch_b) + '</robot>\n')
    config = {
        'dt': dt, 'solver': {'iterations': iterations, 'tolerance': 1e-8},
        'linear_actuators': {
            'd_a': {'link_a': 'world', 'point_a': list(POINT_D), 'link_b': 'bar_a',
                    'point_b': [LENGTH_A, 0.0, 0.0]},
            'a_b': {'link_a': 'bar_a', 'point_a': [0.7 * LENGTH_A, 0.0, 0.5],
                    'link_b': 'bar_b', 'point_b': [0.3 * LENGTH_BC, 0.0, 0.5]},
            'b_c': {'link_a': 'bar_b', 'point_a': [0.7 * LENGTH_BC, 0.0, 0.5],
                    'link_b': 'bar_c', 'point_b': [0.3 * LENGTH_BC, 0.0, 0.5]}},
        'path_points': {'tool': {'link': 'bar_c', 'point': [LENGTH_BC, 0.0, 0.0]}}}
    return urdf, config


def slewing_crane(dt=0.001, iterations=300):
    """
    Return (URDF text, config dict) of the well-posed variant: three elements, three DOF.

    A 50 kg turret (a 1 m disc-like box) turns about z at the origin; bar A is hinged to it at
    the origin about y and luffed by d-a from d = (0, 0, 3) m to a 1 m bracket at A's tip; the
    jib, bar B with bar C fixed in line (8.06 m, 34 kg), is hinged to A's tip about y and
    raised by a-b.  The slewing element pushes the turret's rim (1 m out along x) from
    (0, -2, 0).  A stands at 70 degrees so that the jib's tip starts at (8, 0, 0) m.  The three
    joints have CRANE_DAMPING of viscous damping (a slewing ring, pins with hydraulics): at
    rest the slewing element carries no load and the slew has no stiffness, so without damping
    an open-loop stage 3 lets any speed left at the end of the loop drift on.
    """
    jib = 2.0 * LENGTH_BC
    # |tool - a| = jib with a = L_A (cos e, 0, sin e): the elevation e of bar A
    cos_e = (TOOL_START @ TOOL_START + LENGTH_A ** 2 - jib ** 2) / (2.0 * 8.0 * LENGTH_A)
    pitch_a = -float(np.arccos(cos_e))
    tip_a = LENGTH_A * np.array([np.cos(pitch_a), 0.0, -np.sin(pitch_a)])
    pitch_b = _pitch(TOOL_START - tip_a)
    urdf = ('<robot name="slewing_crane"><link name="world"/>\n'
            '<link name="turret"><inertial><mass value="50"/><inertia ixx="4.2" iyy="4.2" '
            'izz="8.3" ixy="0" ixz="0" iyz="0"/></inertial></link>\n'
            + _bar('bar_a', MASS_A, LENGTH_A, INERTIA_A)
            + _bar('bar_b', MASS_BC, LENGTH_BC, INERTIA_BC)
            + _bar('bar_c', MASS_BC, LENGTH_BC, INERTIA_BC)
            + '<joint name="slew" type="continuous"><parent link="world"/><child link="turret"/>'
            '<axis xyz="0 0 1"/></joint>\n'
            + _hinge('luff', 'turret', 'bar_a', 0.0, pitch_a)
            + _hinge('jib', 'bar_a', 'bar_b', LENGTH_A, pitch_b - pitch_a)
            + f'<joint name="jib_extension" type="fixed"><parent link="bar_b"/>'
            f'<child link="bar_c"/><origin xyz="{LENGTH_BC:.12g} 0 0"/></joint>\n</robot>\n')
    config = {
        'dt': dt, 'solver': {'iterations': iterations, 'tolerance': 1e-8},
        'linear_actuators': {
            'slewing': {'link_a': 'world', 'point_a': [0.0, -2.0, 0.0], 'link_b': 'turret',
                        'point_b': [1.0, 0.0, 0.0]},
            'd_a': {'link_a': 'world', 'point_a': list(POINT_D), 'link_b': 'bar_a',
                    'point_b': [LENGTH_A, 0.0, -1.0]},
            'a_b': {'link_a': 'bar_a', 'point_a': [0.7 * LENGTH_A, 0.0, 0.5],
                    'link_b': 'bar_b', 'point_b': [0.3 * LENGTH_BC, 0.0, 0.5]}},
        'joints': {name: {'damping': CRANE_DAMPING} for name in ('slew', 'luff', 'jib')},
        'path_points': {'tool': {'link': 'bar_c', 'point': [LENGTH_BC, 0.0, 0.0]}}}
    return urdf, config
