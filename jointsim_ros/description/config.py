"""
Simulator configuration: one YAML schema, written as a table, loaded into frozen dataclasses.

The schema is the tuple ``SCHEMA``: one :class:`Key` per top-level key, with its converter (which
checks type and range), unit and meaning.  A section with sub-keys (``solver``, ``base_pose``) is
a Key whose converter validates against its own table and builds its dataclass.  Adding a section
later is one entry in ``SCHEMA`` plus one field in :class:`SimConfig`; ``config/default.yaml`` is
generated from the table by ``default_yaml()`` (a test keeps the two in step).

Sources: a dict (nested, or flat with dotted keys such as ``solver.iterations`` as ROS parameters
give them), a YAML file path (plain, or in the ``node_name: ros__parameters:`` layout), a
:class:`SimConfig`, or None for the defaults.
"""
from dataclasses import dataclass, field
import difflib
import math
import os
import re

import yaml

from .drives import check_drives
from ..errors import ConfigError
from ..physics.settings import SolverSettings


@dataclass(frozen=True)
class BasePose:
    """
    Pose of the URDF root link in the simulation world (config key ``base_pose``).

    Attributes:
        position: (x, y, z), m.
        rpy: (roll, pitch, yaw) about the fixed world axes x, y, z, rad (as URDF ``rpy``).
    """

    position: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class LimitSettings:
    """
    How joint limits act (config key ``limits``).

    Attributes:
        restitution: coefficient of restitution of every position limit, in [0, 1]; 0 stops a
            joint at its limit, 1 bounces it back at its approach speed.  Default 0.
        enforce_velocity: hold joints below their URDF velocity limits (else they are only
            reported, once per joint).  Default false.
        enforce_effort: clip commanded efforts, and the motor torque of drives, to the URDF
            effort limits.  Default true.
    """

    restitution: float = 0.0
    enforce_velocity: bool = False
    enforce_effort: bool = True


MATERIAL_DEFAULTS = {'friction': 1.0, 'restitution': 0.0, 'rolling_friction': 0.0,
                     'spinning_friction': 0.0}


@dataclass(frozen=True)
class GroundSettings:
    """
    The ground plane z = height (config key ``ground``).

    Attributes:
        enabled: 'auto' (on for a floating-base robot, off for a fixed base), true or false.
        height: height of the plane above the world origin, m.  Default 0.
        friction: Coulomb friction coefficient, 1.  Default 1.
        restitution: coefficient of restitution, in [0, 1].  Default 0.
        rolling_friction: rolling resistance torque per normal force, m.  Default 0.
        spinning_friction: spinning (torsional) friction torque per normal force, m.  Default 0.
    """

    enabled: object = 'auto'
    height: float = 0.0
    friction: float = 1.0
    restitution: float = 0.0
    rolling_friction: float = 0.0
    spinning_friction: float = 0.0


@dataclass(frozen=True)
class CollisionSettings:
    """
    Which shapes collide, and how contacts are found and resolved (config key ``collision``).

    Attributes:
        enabled: robot links collide at all (with the ground, the scene and, if enabled, each
            other).  Default true.
        self_collision: links of the robot collide with each other (never two links joined by a
            joint).  Default false.
        self_collision_pairs: link pairs that collide even when self_collision is false.
        disabled_pairs: link pairs that never collide.
        margin: contacts are found this far before touching (speculative contacts), m.
            Default 0.01.
        restitution_threshold: slower approaches come to rest instead of bouncing, m/s.
            Default 0.1.
        slop: penetration left alone (resting contacts sit this deep), m.  Default 1e-4.
        erp: fraction of the penetration beyond the slop removed per step (the push solve of
            the position stage, docs/contacts.md), 1.  Default 0.2.
        max_correction: largest push of one point per step, m.  Default 0.01.
        match_distance: a contact point keeps its identity (and warm start) when it moved less
            than this on its body since the last step, m.  Default 0.01.
        mesh_paths: directories searched for ``package://`` and relative mesh files.
        max_hull_vertices: meshes are simplified to convex hulls of at most this many vertices.
            Default 64.
        friction, restitution, rolling_friction, spinning_friction: default material of robot
            links and scene objects (1, 0, 0 m, 0 m); ``contacts`` overrides it per link.
    """

    enabled: bool = True
    self_collision: bool = False
    self_collision_pairs: tuple = ()
    disabled_pairs: tuple = ()
    margin: float = 0.01
    restitution_threshold: float = 0.1
    slop: float = 1e-4
    erp: float = 0.2
    max_correction: float = 0.01
    match_distance: float = 0.01
    mesh_paths: tuple = ()
    max_hull_vertices: int = 64
    friction: float = 1.0
    restitution: float = 0.0
    rolling_friction: float = 0.0
    spinning_friction: float = 0.0


@dataclass(frozen=True)
class SimConfig:
    """
    Everything the simulator is configured with besides the robot description.

    Attributes:
        dt: time step, s, > 0.  Default 0.001.
        gravity: (3,) gravitational acceleration in the world frame, m/s^2.  Default (0, 0, -9.81).
        base: 'fixed' (root link welded to the world at ``base_pose``) or 'floating' (root body
            free, starting at ``base_pose``).  A URDF root link named ``world`` decides instead:
            attached by a fixed joint means fixed, by a floating joint means floating.
        base_pose: BasePose, pose of the URDF root link in the world.
        initial_positions: dict joint name -> initial position, rad (revolute, continuous) or m
            (prismatic), within the joint's limits.  Joints not listed start at 0.
        initial_velocities: dict joint name -> initial velocity, rad/s or m/s.  Default 0.
        keep_fixed_joints: names of URDF fixed joints kept as weld joints instead of merging the
            links they join into one body.
        solver: SolverSettings (iterations, tolerance, time_budget, position_iterations,
            position_tolerance, warm_start).
        drives: joint name -> checked drive parameters (docs/drives.md).
        joints: joint name -> overrides of friction, static_friction, damping, restitution.
        limits: LimitSettings.
        ground: GroundSettings.
        contacts: link name -> material overrides {friction, restitution, rolling_friction,
            spinning_friction}.
        collision: CollisionSettings.
        scene: object name -> checked scene object (static geometry or a free body), see
            ``SCENE_KEYS``.
        loop_joints: joint name -> loop-closing joint (``LOOP_KEYS``), outside the URDF tree.
        linear_actuators: name -> point-to-point force element (``ELEMENT_KEYS``).
        distance_sensors: name -> pair of points whose distance is reported (``ELEMENT_KEYS``).
        path_points: name -> point of a link that can follow a prescribed 3D path
            (``PATH_POINT_KEYS``).
        force_torque_sensors: sensor name -> checked sensor settings (``SENSOR_KEYS``,
            docs/sensors.md); sensors declared in the URDF's ``<gazebo>`` tags are added when
            the model is built.
        source: where the configuration came from, for messages ('defaults', 'config dict',
            "config file 'path.yaml'").
        given_keys: top-level keys the source set explicitly (to tell a choice from a default).
    """

    dt: float = 0.001
    gravity: tuple = (0.0, 0.0, -9.81)
    base: str = 'fixed'
    base_pose: BasePose = BasePose()
    initial_positions: dict = field(default_factory=dict)
    initial_velocities: dict = field(default_factory=dict)
    keep_fixed_joints: tuple = ()
    solver: SolverSettings = SolverSettings()
    drives: dict = field(default_factory=dict)
    joints: dict = field(default_factory=dict)
    limits: LimitSettings = LimitSettings()
    ground: GroundSettings = GroundSettings()
    contacts: dict = field(default_factory=dict)
    collision: CollisionSettings = CollisionSettings()
    scene: dict = field(default_factory=dict)
    loop_joints: dict = field(default_factory=dict)
    linear_actuators: dict = field(default_factory=dict)
    distance_sensors: dict = field(default_factory=dict)
    path_points: dict = field(default_factory=dict)
    force_torque_sensors: dict = field(default_factory=dict)
    source: str = 'defaults'
    given_keys: frozenset = frozenset()


@dataclass(frozen=True)
class Key:
    """
    One configuration key of the schema.

    Attributes:
        name: the key.
        convert: callable (value, context) -> converted value; raises ConfigError.  ``context``
            is a ``_Context`` giving the source and the key path for messages.
        unit: unit or kind of value, for messages and the generated default YAML.
        doc: one-line meaning, for the generated default YAML.
    """

    name: str
    convert: object
    unit: str
    doc: str


@dataclass(frozen=True)
class _Context:
    """Where a value sits: the config source and the dotted key path."""

    source: str
    path: str

    def child(self, key):
        """Return the context of a sub-key."""
        return _Context(self.source, f'{self.path}.{key}' if self.path else str(key))

    def fail(self, expected, value):
        """Raise the ConfigError for a value that is not what the key expects."""
        raise ConfigError(
            f"{self.source}: key '{self.path}' must be {expected}, got {value!r} "
            f'({type(value).__name__}).')


# ---- converters: each checks one kind of value and says what it expected ----

def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(minimum=None, strict=False, unit=''):
    """Return a converter for a finite real number, optionally > or >= minimum."""
    bound = ''
    if minimum is not None:
        bound = f" {'>' if strict else '>='} {minimum:g}"
    expected = f"a number{bound}{' (' + unit + ')' if unit else ''}"

    def convert(value, context):
        if not _is_number(value) or not math.isfinite(value):
            context.fail(expected, value)
        if minimum is not None and (value < minimum or (strict and value == minimum)):
            context.fail(expected, value)
        return float(value)
    return convert


def _integer(minimum, unit='count'):
    """Return a converter for an integer >= minimum (integral floats such as 20.0 pass)."""
    expected = f'an integer >= {minimum} ({unit})'

    def convert(value, context):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            context.fail(expected, value)
        return value
    return convert


def _boolean(value, context):
    if not isinstance(value, bool):
        context.fail('true or false', value)
    return value


def _vector3(unit):
    """Return a converter for a list of three finite numbers."""
    expected = f'a list of 3 numbers ({unit})'

    def convert(value, context):
        if (not isinstance(value, (list, tuple)) or len(value) != 3
                or not all(_is_number(v) and math.isfinite(v) for v in value)):
            context.fail(expected, value)
        return tuple(float(v) for v in value)
    return convert


def _choice(*options):
    """Return a converter for one of a few strings."""
    expected = 'one of ' + ', '.join(f"'{o}'" for o in options)

    def convert(value, context):
        if value not in options:
            hint = difflib.get_close_matches(str(value), options, n=1, cutoff=0.6)
            context.fail(expected + (f" (did you mean '{hint[0]}'?)" if hint else ''), value)
        return value
    return convert


def _joint_numbers(unit):
    """Return a converter for a mapping joint name -> finite number."""
    def convert(value, context):
        if value is None:
            return {}
        if not isinstance(value, dict):
            context.fail(f'a mapping of joint name to number ({unit})', value)
        result = {}
        for joint, number in value.items():
            if not isinstance(joint, str):
                context.fail('a mapping with joint names (strings) as keys', joint)
            result[joint] = _number(unit=unit)(number, context.child(joint))
        return result
    return convert


def _joint_names(value, context):
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        context.fail('a list of joint names (strings)', value)
    return tuple(dict.fromkeys(value))


def _section(table, build):
    """Return a converter checking a mapping against a sub-table, giving ``build(**values)``."""
    def convert(value, context):
        if value is None:
            return build()
        if not isinstance(value, dict):
            context.fail('a mapping with keys ' + ', '.join(k.name for k in table), value)
        return build(**_convert_table(table, value, context))
    return convert


def _convert_table(table, data, context):
    """Validate a mapping against a table of Keys; return dict name -> converted value."""
    keys = {k.name: k for k in table}
    values = {}
    for name, value in data.items():
        if name not in keys:
            where = f' in {context.path}' if context.path else ''
            hint = difflib.get_close_matches(str(name), keys, n=1, cutoff=0.6)
            suggestion = f"; did you mean '{hint[0]}'?" if hint else '.'
            raise ConfigError(
                f"{context.source}: unknown key '{name}'{where}{suggestion}  Known keys"
                f"{where}: {', '.join(keys)}.")
        values[name] = keys[name].convert(value, context.child(name))
    return values


# ---- the schema ----

SOLVER_KEYS = (
    Key('iterations', _integer(1), 'count', 'cap on velocity iterations per step'),
    Key('tolerance', _number(0.0, unit='N s or N m s'), 'N s or N m s',
        'stop iterating when no accumulated impulse changes by more than this'),
    Key('time_budget', _number(0.0, unit='s'), 's',
        'wall-clock budget of one solve; 0 means no budget'),
    Key('position_iterations', _integer(0), 'count', 'cap on position-projection passes per step'),
    Key('position_tolerance', _number(0.0, unit='m or rad'), 'm or rad',
        'stop projecting when every joint position error is below this'),
    Key('warm_start', _boolean, 'true/false',
        "start each solve from the previous step's impulses"),
    Key('formulation', _choice('maximal', 'tree'), 'maximal | tree',
        'maximal coordinates (any robot) or exact tree joints in generalized coordinates'),
    Key('integrator', _choice('semi_implicit_euler', 'symplectic_euler', 'rk4'),
        'semi_implicit_euler | symplectic_euler | rk4',
        'time integrator; the last two only with formulation tree (docs/tree.md)'),
)

JOINT_KEYS = (
    Key('friction', _number(0.0, unit='N m or N'), 'N m or N',
        'Coulomb (sliding) friction; default the URDF <dynamics friction>'),
    Key('static_friction', _number(0.0, unit='N m or N'), 'N m or N',
        'breakaway friction at rest; default equal to friction'),
    Key('damping', _number(0.0, unit='N m s/rad or N s/m'), 'N m s/rad or N s/m',
        'viscous damping; default the URDF <dynamics damping>'),
    Key('restitution', _number(0.0, unit='1, at most 1'), '1',
        'restitution at the position limits; default limits.restitution'),
)

LIMIT_KEYS = (
    Key('restitution', _number(0.0, unit='1, at most 1'), '1',
        'restitution of every position limit (0 stops, 1 bounces)'),
    Key('enforce_velocity', _boolean, 'true/false',
        'hold joints below their URDF velocity limits (else only reported)'),
    Key('enforce_effort', _boolean, 'true/false',
        'clip efforts and drive torques to the URDF effort limits'),
)


def _named_sections(table, what):
    """Return a converter for a mapping name -> mapping of ``table``'s keys (``joints``...)."""
    keys = ', '.join(k.name for k in table)

    def convert(value, context):
        if value is None:
            return {}
        if not isinstance(value, dict):
            context.fail(f'a mapping {what} name -> {{{keys}}}', value)
        out = {}
        for name, params in value.items():
            where = context.child(name)
            if not isinstance(params, dict):
                where.fail('a mapping with keys ' + keys, params)
            out[str(name)] = _convert_table(table, params, where)
        return out
    return convert


def _joint_sections(value, context):
    """Validate ``joints``: joint name -> mapping of JOINT_KEYS."""
    out = _named_sections(JOINT_KEYS, 'joint')(value, context)
    for joint, params in out.items():
        if params.get('restitution', 0.0) > 1.0:
            context.child(joint).child('restitution').fail('a number in [0, 1]',
                                                           params['restitution'])
    return out


def _limits(value, context):
    settings = _section(LIMIT_KEYS, LimitSettings)(value, context)
    if settings.restitution > 1.0:
        context.child('restitution').fail('a number in [0, 1]', settings.restitution)
    return settings


def _auto_boolean(value, context):
    if value not in ('auto', True, False):
        context.fail("'auto', true or false", value)
    return value


def _fraction(unit='1'):
    """Return a converter for a number in [0, 1]."""
    def convert(value, context):
        number = _number(0.0, unit=unit)(value, context)
        if number > 1.0:
            context.fail('a number in [0, 1]', value)
        return number
    return convert


MATERIAL_KEYS = (
    Key('friction', _number(0.0, unit='1'), '1', 'Coulomb friction coefficient'),
    Key('restitution', _fraction(), '1', 'coefficient of restitution, 0 to 1'),
    Key('rolling_friction', _number(0.0, unit='m'), 'm',
        'rolling resistance: torque bound per unit normal force'),
    Key('spinning_friction', _number(0.0, unit='m'), 'm',
        'spinning (torsional) friction: torque bound per unit normal force'),
)

GROUND_KEYS = (
    Key('enabled', _auto_boolean, 'auto | true | false',
        'ground plane on (auto: on for a floating base, off for a fixed base)'),
    Key('height', _number(unit='m'), 'm', 'height of the ground plane z = height'),
) + MATERIAL_KEYS


def _pair_list(value, context):
    if value is None:
        return ()
    if (not isinstance(value, (list, tuple))
            or not all(isinstance(p, (list, tuple)) and len(p) == 2
                       and all(isinstance(n, str) for n in p) for p in value)):
        context.fail('a list of [link, link] pairs', value)
    return tuple(tuple(p) for p in value)


def _path_list(value, context):
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        context.fail('a list of directories (strings)', value)
    return tuple(value)


COLLISION_KEYS = (
    Key('enabled', _boolean, 'true/false', 'robot links collide at all'),
    Key('self_collision', _boolean, 'true/false',
        'links of the robot collide with each other (never links joined by a joint)'),
    Key('self_collision_pairs', _pair_list, '[link, link] pairs',
        'link pairs that collide even without self_collision'),
    Key('disabled_pairs', _pair_list, '[link, link] pairs', 'link pairs that never collide'),
    Key('margin', _number(0.0, unit='m'), 'm',
        'contacts are found this far before touching (speculative contacts)'),
    Key('restitution_threshold', _number(0.0, unit='m/s'), 'm/s',
        'slower approaches come to rest instead of bouncing'),
    Key('slop', _number(0.0, unit='m'), 'm', 'penetration left alone (resting depth)'),
    Key('erp', _fraction(), '1', 'fraction of the penetration removed per step'),
    Key('max_correction', _number(0.0, strict=True, unit='m'), 'm',
        'largest push of one contact point per step'),
    Key('match_distance', _number(0.0, unit='m'), 'm',
        'a point keeps its identity and warm start if it moved less than this on its body'),
    Key('mesh_paths', _path_list, 'directories',
        'where package:// and relative mesh files are also looked for'),
    Key('max_hull_vertices', _integer(4), 'count',
        'meshes are simplified to convex hulls of at most this many vertices'),
) + tuple(Key(k.name, k.convert, k.unit, 'links and scene objects by default: ' + k.doc)
          for k in MATERIAL_KEYS)


SENSOR_FRAMES = ('child', 'parent', 'sensor')
SENSOR_DIRECTIONS = ('child_to_parent', 'parent_to_child')
NOISE_KEYS = (
    Key('force', _number(0.0, unit='N'), 'N', 'standard deviation of the force noise'),
    Key('torque', _number(0.0, unit='N m'), 'N m', 'standard deviation of the torque noise'),
    Key('seed', _integer(0), 'count', 'seed of the noise generator (default: from the name)'),
)
FILTER_KEYS = (
    Key('cutoff', _number(0.0, unit='Hz'), 'Hz',
        'cut-off of a first-order low-pass on the samples; 0 = no filter'),
)


def _plain_section(table):
    """Return a converter for a sub-mapping of ``table``'s keys, as a dict."""
    def convert(value, context):
        if value is None:
            return {}
        if not isinstance(value, dict):
            context.fail('a mapping with keys ' + ', '.join(k.name for k in table), value)
        return _convert_table(table, value, context)
    return convert


SENSOR_KEYS = (
    Key('joint', lambda v, c: v if isinstance(v, str) and v else c.fail('a joint name', v),
        'joint name', 'the joint whose transmitted wrench the sensor measures'),
    Key('frame', _choice(*SENSOR_FRAMES), ' | '.join(SENSOR_FRAMES),
        'frame the wrench is expressed in (default child)'),
    Key('measure_direction', _choice(*SENSOR_DIRECTIONS), ' | '.join(SENSOR_DIRECTIONS),
        'child_to_parent: the wrench of the child on the parent (default); parent_to_child'),
    Key('pose', lambda v, c: _section(BASE_POSE_KEYS, BasePose)(v, c), 'section',
        'sensor frame in the child link frame (position m, rpy rad), for frame: sensor'),
    Key('rate', _number(0.0, unit='Hz'), 'Hz',
        'samples per second of simulated time; 0 = after every step call (default 100)'),
    Key('noise', _plain_section(NOISE_KEYS), 'section',
        'Gaussian noise: force (N) and torque (N m) standard deviations, seed'),
    Key('filter', _plain_section(FILTER_KEYS), 'section',
        'first-order low-pass: cutoff (Hz), 0 = none'),
)


def _sensors(value, context):
    """Validate ``force_torque_sensors``: sensor name -> mapping of SENSOR_KEYS (joint needed)."""
    out = _named_sections(SENSOR_KEYS, 'sensor')(value, context)
    for name, item in out.items():
        if 'joint' not in item:
            context.child(name).fail('a mapping with a joint (the joint the sensor sits on)',
                                     value[name])
    return out


def config_sensors(data, source):
    """
    Validate force-torque sensor settings from another source (the URDF's <gazebo> tags).

    Args:
        data: sensor name -> mapping of SENSOR_KEYS.
        source: where they come from, for messages.

    Returns:
        sensor name -> converted settings.
    """
    return _sensors(data, _Context(source, 'force_torque_sensors'))


LOOP_TYPES = ('revolute', 'continuous', 'prismatic', 'fixed', 'spherical')
LOOP_KEYS = (
    Key('type', _choice(*LOOP_TYPES), ' | '.join(LOOP_TYPES), 'joint type'),
    Key('parent', lambda v, c: v if isinstance(v, str) and v else c.fail('a link name', v),
        'link', 'parent link'),
    Key('child', lambda v, c: v if isinstance(v, str) and v else c.fail('a link name', v),
        'link', 'child link'),
    Key('origin', lambda v, c: _section(BASE_POSE_KEYS, BasePose)(v, c), 'section',
        'joint frame in the parent link frame (position m, rpy rad)'),
    Key('child_origin', lambda v, c: _section(BASE_POSE_KEYS, BasePose)(v, c), 'section',
        'joint frame in the child link frame (default: where it is at the initial state)'),
    Key('axis', _vector3('1'), '1', 'joint axis in the joint frame (default 1 0 0, as URDF)'),
)


def _loop_joints(value, context):
    """Validate ``loop_joints``: name -> mapping of LOOP_KEYS with type, parent and child."""
    out = _named_sections(LOOP_KEYS, 'loop joint')(value, context)
    for name, item in out.items():
        missing = [k for k in ('type', 'parent', 'child') if k not in item]
        if missing:
            context.child(name).fail('a mapping with ' + ', '.join(missing), value[name])
    return out


ELEMENT_KEYS = (
    Key('link_a', lambda v, c: v if isinstance(v, str) and v else c.fail('a link name', v),
        'link', 'link of the first end'),
    Key('point_a', _vector3('m'), 'm', 'first end in the frame of link_a (default its origin)'),
    Key('link_b', lambda v, c: v if isinstance(v, str) and v else c.fail('a link name', v),
        'link', 'link of the second end'),
    Key('point_b', _vector3('m'), 'm', 'second end in the frame of link_b (default its origin)'),
)


PATH_POINT_KEYS = (
    Key('link', lambda v, c: v if isinstance(v, str) and v else c.fail('a link name', v),
        'link', 'link that carries the point'),
    Key('point', _vector3('m'), 'm', 'the point in the frame of the link (default its origin)'),
)


def _path_points(value, context):
    """Validate ``path_points``: name -> mapping of PATH_POINT_KEYS with a link."""
    out = _named_sections(PATH_POINT_KEYS, 'path point')(value, context)
    for name, item in out.items():
        if 'link' not in item:
            context.child(name).fail('a mapping with link', value[name])
    return out


def _elements(value, context):
    """Validate point-to-point elements: name -> mapping of ELEMENT_KEYS with both links."""
    out = _named_sections(ELEMENT_KEYS, 'element')(value, context)
    for name, item in out.items():
        missing = [k for k in ('link_a', 'link_b') if k not in item]
        if missing:
            context.child(name).fail('a mapping with ' + ', '.join(missing), value[name])
    return out


SCENE_SHAPES = ('box', 'sphere', 'cylinder', 'capsule', 'mesh')
SCENE_KEYS = (
    Key('shape', _choice(*SCENE_SHAPES), ' | '.join(SCENE_SHAPES), 'shape of the object'),
    Key('size', _vector3('m'), 'm', 'box: full edge lengths x, y, z'),
    Key('radius', _number(0.0, strict=True, unit='m'), 'm', 'sphere, cylinder, capsule radius'),
    Key('length', _number(0.0, strict=True, unit='m'), 'm',
        'cylinder length, capsule length between the centres of its end spheres (along z)'),
    Key('filename', lambda v, c: v if isinstance(v, str) and v else c.fail('a file path', v),
        'path or package:// URI', 'mesh file (STL, OBJ, DAE), used as its convex hull'),
    Key('scale', _vector3('1'), '1', 'mesh scale per axis'),
    Key('mass', _number(0.0, unit='kg'), 'kg',
        'mass of a free object; 0 or absent makes it static geometry'),
    Key('pose', lambda v, c: _section(BASE_POSE_KEYS, BasePose)(v, c), 'section',
        'position (m) and rpy (rad) of the object in the world (initial pose if free)'),
    Key('linear_velocity', _vector3('m/s'), 'm/s', 'initial velocity of a free object'),
    Key('angular_velocity', _vector3('rad/s'), 'rad/s',
        'initial angular velocity of a free object, world frame'),
) + MATERIAL_KEYS


def _scene(value, context):
    """Validate ``scene``: object name -> mapping of SCENE_KEYS with its shape's sizes."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        context.fail('a mapping object name -> {shape, size or radius/length or filename, '
                     'pose, mass, ...}', value)
    needs = {'box': ('size',), 'sphere': ('radius',), 'cylinder': ('radius', 'length'),
             'capsule': ('radius', 'length'), 'mesh': ('filename',)}
    out = {}
    for name, params in value.items():
        where = context.child(name)
        if not isinstance(params, dict):
            where.fail('a mapping with keys ' + ', '.join(k.name for k in SCENE_KEYS), params)
        item = _convert_table(SCENE_KEYS, params, where)
        if 'shape' not in item:
            where.fail('a mapping with a shape (' + ', '.join(SCENE_SHAPES) + ')', params)
        missing = [k for k in needs[item['shape']] if k not in item]
        if missing:
            raise ConfigError(
                f"{context.source}: scene object '{name}' is a {item['shape']} without "
                f"{' and '.join(missing)}.  Give {', '.join(missing)} "
                '(see docs/contacts.md).')
        if item['shape'] == 'box' and min(item['size']) <= 0.0:
            where.child('size').fail('three positive lengths (m)', params['size'])
        out[str(name)] = item
    return out


BASE_POSE_KEYS = (
    Key('position', _vector3('m'), 'm', 'x, y, z of the URDF root link in the world'),
    Key('rpy', _vector3('rad'), 'rad', 'roll, pitch, yaw of the URDF root link in the world'),
)

SCHEMA = (
    Key('dt', _number(0.0, strict=True, unit='s'), 's', 'simulation time step'),
    Key('gravity', _vector3('m/s^2'), 'm/s^2', 'gravitational acceleration, world frame'),
    Key('base', _choice('fixed', 'floating'), 'fixed | floating',
        'root link welded to the world, or free (a URDF world link decides instead)'),
    Key('base_pose', _section(BASE_POSE_KEYS, BasePose), 'section',
        'pose of the URDF root link in the world (initial pose if floating)'),
    Key('initial_positions', _joint_numbers('rad or m'), 'rad or m',
        'joint name -> initial position; unlisted joints start at 0'),
    Key('initial_velocities', _joint_numbers('rad/s or m/s'), 'rad/s or m/s',
        'joint name -> initial velocity; unlisted joints start at rest'),
    Key('keep_fixed_joints', _joint_names, 'joint names',
        'fixed joints kept as welds instead of merging their links into one body'),
    Key('solver', _section(SOLVER_KEYS, SolverSettings), 'section',
        'sequential-impulse solver settings'),
    Key('drives', check_drives, 'section',
        'joint -> DC motor and gear (docs/drives.md lists the keys)'),
    Key('joints', _joint_sections, 'section',
        'joint -> friction, static_friction, damping, restitution overrides'),
    Key('limits', _limits, 'section', 'how position, velocity and effort limits act'),
    Key('ground', _section(GROUND_KEYS, GroundSettings), 'section',
        'the ground plane and its material'),
    Key('contacts', _named_sections(MATERIAL_KEYS, 'link'), 'section',
        'link -> friction, restitution, rolling_friction, spinning_friction overrides'),
    Key('collision', _section(COLLISION_KEYS, CollisionSettings), 'section',
        'which shapes collide; contact margins and position correction'),
    Key('scene', _scene, 'section',
        'object -> static geometry or free body (docs/contacts.md lists the keys)'),
    Key('loop_joints', _loop_joints, 'section',
        'joints that close kinematic loops: type, parent, child, origin, axis (docs/model.md)'),
    Key('linear_actuators', _elements, 'section',
        'point-to-point force elements with ball ends: link_a, point_a, link_b, point_b'),
    Key('distance_sensors', _elements, 'section',
        'distances between two points: link_a, point_a, link_b, point_b'),
    Key('path_points', _path_points, 'section',
        'points of links that prescribed.path can drive along a 3D path: link, point'),
    Key('force_torque_sensors', _sensors, 'section',
        'sensor -> joint, frame, measure_direction, pose, rate, noise, filter (docs/sensors.md)'),
)


# ---- loading ----

class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that reads 1e-3 as a float (YAML 1.1 wants 1.0e-3) and rejects duplicate keys."""

    def construct_mapping(self, node, deep=False):
        """Build a mapping, failing on a key given twice."""
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' appears twice in one mapping", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_StrictLoader.add_implicit_resolver(
    'tag:yaml.org,2002:float',
    re.compile(r'^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$'),
    list('-+0123456789'))


def load_config(source=None):
    """
    Load and validate a simulator configuration.

    Args:
        source: None (defaults), a SimConfig (returned as is), a dict, or the path (str or
            os.PathLike) of a YAML file.

    Returns:
        SimConfig.

    Raises:
        ConfigError: the file is missing or is not YAML, or a key is unknown or has a value of the
            wrong type or range (the message names the key, the value and what was expected).
    """
    if source is None:
        return SimConfig()
    if isinstance(source, SimConfig):
        return source
    if isinstance(source, dict):
        return config_from_dict(source)
    try:
        path = os.fspath(source)
    except TypeError:
        raise ConfigError(
            f'config must be a dict, a YAML file path or None, got {type(source).__name__} '
            f'{source!r}.') from None
    if not os.path.isfile(path):
        raise ConfigError(f"config file '{path}' does not exist.  Give the path of a YAML file "
                          '(see config/default.yaml), a dict, or nothing for the defaults.')
    with open(path, encoding='utf-8') as stream:
        try:
            data = yaml.load(stream, Loader=_StrictLoader)
        except yaml.YAMLError as error:
            mark = getattr(error, 'problem_mark', None)
            line = f' at line {mark.line + 1}, column {mark.column + 1}' if mark else ''
            problem = getattr(error, 'problem', None) or str(error)
            raise ConfigError(f"config file '{path}' is not valid YAML{line}: {problem}.  Fix "
                              'the YAML there (indentation, a colon after each key).') from None
    return config_from_dict({} if data is None else data, f"config file '{path}'")


def config_from_dict(data, source='config dict'):
    """
    Validate a configuration mapping against ``SCHEMA``.

    Args:
        data: mapping, nested or with dotted keys; a ROS parameter file layout
            (``node: ros__parameters: ...``) is unwrapped.
        source: name of the source for messages, e.g. "config file 'sim.yaml'".

    Returns:
        SimConfig.

    Raises:
        ConfigError: as for :func:`load_config`.
    """
    if not isinstance(data, dict):
        raise ConfigError(f'{source} must be a mapping of keys to values, got '
                          f'{type(data).__name__} {data!r}.')
    data = _nest_dotted(_unwrap_ros_parameters(data), source)
    values = _convert_table(SCHEMA, data, _Context(source, ''))
    return SimConfig(**values, source=source, given_keys=frozenset(values))


def _unwrap_ros_parameters(data):
    """Return the parameters of a ``node_name: {ros__parameters: {...}}`` layout, else data."""
    if len(data) == 1:
        (inner,) = data.values()
        if isinstance(inner, dict) and set(inner) == {'ros__parameters'}:
            return inner['ros__parameters'] or {}
    return data


def _nest_dotted(data, source):
    """Turn top-level keys 'section.key' (ROS parameter style) into nested mappings."""
    nested = {}
    for key, value in data.items():
        parts = key.split('.') if isinstance(key, str) else [key]
        target = nested
        for depth, part in enumerate(parts[:-1]):
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise ConfigError(f"{source}: key '{key}' conflicts with the value of "
                                  f"'{'.'.join(parts[:depth + 1])}'.  Give one or the other.")
        last = parts[-1]
        if isinstance(target.get(last), dict) and isinstance(value, dict):
            target[last] = {**target[last], **value}
        elif last in target:
            raise ConfigError(f"{source}: key '{key}' is given twice.  Keep one.")
        else:
            target[last] = value
    return nested


# ---- the default YAML, generated from the schema ----

def _yaml_value(value):
    """Format a default value as flow-style YAML."""
    if isinstance(value, tuple):
        value = list(value)
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix('\n...').strip()


def default_yaml():
    """
    Return the text of ``config/default.yaml``: every key at its default, with unit and meaning.

    Returns:
        str, YAML that loads to ``SimConfig()``.
    """
    defaults = SimConfig()
    sections = {'solver': (SOLVER_KEYS, defaults.solver),
                'base_pose': (BASE_POSE_KEYS, defaults.base_pose),
                'limits': (LIMIT_KEYS, defaults.limits),
                'ground': (GROUND_KEYS, defaults.ground),
                'collision': (COLLISION_KEYS, defaults.collision)}
    out = ['# jointsim_ros simulator configuration: every key at its default value.',
           '# Generated by jointsim_ros.description.config.default_yaml(); keep them in step.',
           '']
    for key in SCHEMA:
        if key.name in sections:
            table, section = sections[key.name]
            out.append(f'# {key.doc}')
            out.append(f'{key.name}:')
            for sub in table:
                value = _yaml_value(getattr(section, sub.name))
                out.append(f'  {sub.name}: {value}  # [{sub.unit}] {sub.doc}')
        else:
            value = _yaml_value(getattr(defaults, key.name))
            out.append(f'{key.name}: {value}  # [{key.unit}] {key.doc}')
    return '\n'.join(out) + '\n'
