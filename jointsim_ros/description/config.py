"""
Simulator configuration: one YAML schema, written as typed dataclasses, loaded into them.

Every key is one dataclass field made with :func:`jointsim_ros.description.schema.setting`:
default, unit, one-line meaning and check sit together, once.  :class:`SimConfig` holds the
top-level keys; a section with sub-keys (``solver``, ``base_pose``, ``limits``, ``ground``,
``collision``) is a field whose check builds its own dataclass; a section of named items
(``drives``, ``joints``, ``scene``, ``force_torque_sensors``...) is a field whose check
validates each item against the item's dataclass (:class:`JointOverrides`,
:class:`SceneObjectSettings`, :class:`~jointsim_ros.description.drives.DriveParameters`...).
``SCHEMA`` and the ``*_KEYS`` tables are read from those dataclasses by
:func:`~jointsim_ros.description.schema.keys_of`;
``config/default.yaml`` (``default_yaml()``) and the key table of docs/config.md
(``config_table()``) are generated from them, and tests keep both files in step.

Sources: a dict (nested, or flat with dotted keys such as ``solver.iterations`` as ROS parameters
give them), a YAML file path (plain, or in the ``node_name: ros__parameters:`` layout), a
:class:`SimConfig`, or None for the defaults.
"""
from dataclasses import asdict, dataclass, is_dataclass, replace
import math
import os
import re

import yaml

from .drives import check_drives
from .schema import (auto_boolean, boolean, choice, Context, convert_table, fraction, integer,
                     joint_names, joint_numbers, keys_of, name, named_sections,
                     number, pair_list, path_list, section, setting, vector3)
from .schema import axes3
from ..errors import ConfigError


@dataclass(frozen=True)
class SolverSettings:
    """
    Sequential-impulse solver settings (config key ``solver``).

    Attributes:
        iterations: cap on velocity iterations per step (count).  Default 20.
        tolerance: stop when the largest change of any accumulated impulse in one iteration is
            below this (N s for forces, N m s for torques).  Default 1e-9.
        time_budget: wall-clock budget of one solve, s; 0 means no budget.  Default 0.
        position_iterations: cap on position-projection passes per step (count).  Default 4.
        position_tolerance: stop projecting when every joint position error is below this
            (m for anchors, rad for orientations).  Default 1e-9.
        contact_position_tolerance: at rest on compliant contacts that carry load (no body
            moving more than this in a step), a step projects only when the last step left a
            joint error of at least this (m or rad); smaller errors are left to the velocity
            stage, which aims at zero error itself.  Default 1e-7.
        warm_start: start each solve from the previous step's accumulated impulses.  Default True.
        formulation: 'maximal' (bodies and constraint rows, the sequential-impulse solver) or
            'tree' (generalized coordinates, the O(n) articulated-body step: docs/tree.md).
            Default 'maximal'.
        integrator: 'semi_implicit_euler' (both formulations), 'symplectic_euler' or 'rk4'
            (tree formulation only).  Default 'semi_implicit_euler'.
    """

    iterations: int = setting(20, 'count', 'cap on velocity iterations per step', integer(1))
    tolerance: float = setting(
        1e-9, 'N s or N m s',
        'stop iterating when no accumulated impulse changes by more than this',
        number(0.0))
    time_budget: float = setting(0.0, 's', 'wall-clock budget of one solve; 0 means no budget',
                                 number(0.0))
    position_iterations: int = setting(4, 'count', 'cap on position-projection passes per step',
                                       integer(0))
    position_tolerance: float = setting(
        1e-9, 'm or rad', 'stop projecting when every joint position error is below this',
        number(0.0))
    contact_position_tolerance: float = setting(
        1e-7, 'm or rad',
        'at rest on loaded compliant contacts: joint errors below this are not projected',
        number(0.0),
        note='the projection moves bodies without regard to the contacts, so at rest on '
             'compliant contacts it pushes the touching bodies against their springs each '
             'step and the next solve spends its iterations undoing that (issue 28: Solo12 '
             'lying on its legs took 20 iterations every other step); errors below this are '
             'left to the velocity stage, whose rows aim at zero error (docs/engine.md)')
    warm_start: bool = setting(True, 'true/false',
                               "start each solve from the previous step's impulses", boolean)
    formulation: str = setting(
        'maximal', 'maximal | tree',
        'maximal coordinates (any robot) or exact tree joints in generalized coordinates',
        choice('maximal', 'tree'),
        note='maximal: bodies and constraint rows, any robot; tree: generalized coordinates '
             'with exact joints for tree-shaped robots (the O(n) articulated-body step with '
             'contacts, limits, joint friction, mimic joints, loops, grasps, linear actuators '
             "and path points as impulses, a loop joint's friction, damping, limits, efforts "
             'and drive as rows between its bodies, force-torque sensors read by Newton-Euler, '
             '`docs/tree.md`). The iteration, '
             'tolerance, time-budget and warm-start keys govern both; '
             'the position-iteration key applies to `maximal` only')
    integrator: str = setting(
        'semi_implicit_euler', 'semi_implicit_euler | symplectic_euler | rk4',
        'time integrator; the last two only with formulation tree (docs/tree.md)',
        choice('semi_implicit_euler', 'symplectic_euler', 'rk4'),
        note='`symplectic_euler` (the variational step in generalized impulses: bounded energy '
             'error) and `rk4` (reference runs, four recursions per step, damping explicit, no '
             'drives) need `formulation: tree` (`docs/tree.md`)')


@dataclass(frozen=True)
class BasePose:
    """
    Pose of the URDF root link in the simulation world (config key ``base_pose``).

    Attributes:
        position: (x, y, z), m.
        rpy: (roll, pitch, yaw) about the fixed world axes x, y, z, rad (as URDF ``rpy``).
    """

    position: tuple = setting((0.0, 0.0, 0.0), 'm', 'x, y, z of the URDF root link in the world',
                              vector3())
    rpy: tuple = setting((0.0, 0.0, 0.0), 'rad',
                         'roll, pitch, yaw of the URDF root link in the world', vector3())


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

    restitution: float = setting(0.0, '1', 'restitution of every position limit (0 stops, 1 '
                                 'bounces)', fraction('1, at most 1'))
    enforce_velocity: bool = setting(
        False, 'true/false', 'hold joints below their URDF velocity limits (else only reported)',
        boolean)
    enforce_effort: bool = setting(True, 'true/false',
                                   'clip efforts and drive torques to the URDF effort limits',
                                   boolean)


@dataclass(frozen=True)
class MaterialSettings:
    """
    A contact material (config ``contacts: {LINK: {...}}``).

    Its keys are also part of ``ground``, ``collision`` and every ``scene`` object.

    Attributes:
        friction: Coulomb friction coefficient, 1.  Default 1.
        restitution: coefficient of restitution, in [0, 1].  Default 0.
        rolling_friction: rolling resistance torque per normal force, m.  Default 0.
        spinning_friction: spinning (torsional) friction torque per normal force, m.  Default 0.
        stiffness: normal stiffness of the surface at each contact point, N/m (Gazebo ``kp``);
            two surfaces meet as springs in series.  Default 2e5 (the ground's 1e8).
        damping: normal damping of the surface at each contact point, N s/m (Gazebo ``kd``);
            two surfaces' dampers add up.  Default 2000 (the ground's 0).
        min_depth: penetration at which the spring starts to push, m (Gazebo ``minDepth``).
            Default 0.
        max_push_velocity: largest speed at which the spring pushes a penetrating point out,
            m/s (Gazebo ``maxVel``).  Default 3.
    """

    friction: float = setting(1.0, '1', 'Coulomb friction coefficient', number(0.0))
    restitution: float = setting(0.0, '1', 'coefficient of restitution, 0 to 1', fraction())
    rolling_friction: float = setting(0.0, 'm',
                                      'rolling resistance: torque bound per unit normal force',
                                      number(0.0))
    spinning_friction: float = setting(
        0.0, 'm', 'spinning (torsional) friction: torque bound per unit normal force',
        number(0.0))
    stiffness: float = setting(
        2e5, 'N/m', 'normal stiffness per contact point (compliant contacts)',
        number(0.0, strict=True),
        note='Gazebo `kp`; two surfaces meet as springs in series, 1/k = 1/k_a + 1/k_b. '
             "With the ground's default 1e8 N/m a link at the default 2e5 N/m sinks 1 mm under "
             '200 N per point (docs/contacts.md, "Compliant contacts")')
    damping: float = setting(
        2000.0, 'N s/m', 'normal damping per contact point (compliant contacts)', number(0.0),
        note="Gazebo `kd`; two surfaces' dampers add up")
    min_depth: float = setting(
        0.0, 'm', 'penetration before the contact spring starts to push', number(0.0),
        note='Gazebo `minDepth`; two surfaces meet with the larger')
    max_push_velocity: float = setting(
        3.0, 'm/s', 'largest speed at which the spring pushes a penetrating point out',
        number(0.0, strict=True),
        note="Gazebo `maxVel`; two surfaces meet with the smaller. It caps the spring's "
             'push-out speed beta |C| / dt, so it also caps the load one point can hold at '
             'rest: max_push_velocity (damping + dt stiffness)')


MATERIAL_KEYS = keys_of(MaterialSettings)
MATERIAL_DEFAULTS = {k.name: k.default for k in MATERIAL_KEYS}
#: The material keys in the order of the engine's material columns (physics.contacts.M_*).
MATERIAL_NAMES = tuple(k.name for k in MATERIAL_KEYS)


def _material(key, doc_prefix='', inherit=False, default=None):
    """
    Return a new field for the material key ``key`` (ground, collision, contacts, scene).

    With ``inherit`` the default is None: the key of ``collision`` applies where not given.
    ``default`` replaces the material's own default (the ground's stiffness and damping).
    """
    meta = MaterialSettings.__dataclass_fields__[key].metadata
    if inherit:
        return setting(None, meta['unit'], f"{meta['doc']} (default collision.{key})",
                       meta['check'], note=meta['note'])
    value = MATERIAL_DEFAULTS[key] if default is None else default
    return setting(value, meta['unit'], doc_prefix + meta['doc'], meta['check'],
                   note=meta['note'])


#: The ground's own defaults: a floor far stiffer than a robot's soles, so that a link's
#: stiffness and damping are what a contact with the ground has.
GROUND_STIFFNESS = 1e8
GROUND_DAMPING = 0.0


@dataclass(frozen=True)
class GroundSettings:
    """
    The ground plane z = height (config key ``ground``).

    Attributes:
        enabled: 'auto' (on for a floating-base robot, off for a fixed base), true or false.
        height: height of the plane above the world origin, m.  Default 0.
        friction, restitution, rolling_friction, spinning_friction, stiffness, damping,
            min_depth, max_push_velocity: its material (:class:`MaterialSettings`); its
            stiffness defaults to 1e8 N/m and its damping to 0, so that a contact with the
            ground has about the link's.
    """

    enabled: object = setting(
        'auto', 'auto | true | false',
        'ground plane on (auto: on for a floating base, off for a fixed base)', auto_boolean)
    height: float = setting(0.0, 'm', 'height of the ground plane z = height', number())
    friction: float = _material('friction')
    restitution: float = _material('restitution')
    rolling_friction: float = _material('rolling_friction')
    spinning_friction: float = _material('spinning_friction')
    stiffness: float = _material('stiffness', default=GROUND_STIFFNESS)
    damping: float = _material('damping', default=GROUND_DAMPING)
    min_depth: float = _material('min_depth')
    max_push_velocity: float = _material('max_push_velocity')


_BY_DEFAULT = 'links and scene objects by default: '


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
        margin: contacts are found this far before touching, plus the distance the two shapes
            can move in the step (speculative contacts), m.  Default 0.005.
        contact_model: 'compliant' (each point a spring-damper of the materials' stiffness and
            damping, solved implicitly: loads shared as a compliant support shares them) or
            'rigid' (no penetration beyond the slop, removed by a split-impulse push; the loads
            of a body on more than three points are then not determined).  Default
            'compliant'.
        restitution_threshold: slower approaches come to rest instead of bouncing, m/s.
            Default 0.1.
        slop: rigid model: penetration left alone (resting contacts sit this deep), m.
            Default 1e-4.
        erp: rigid model: fraction of the penetration beyond the slop removed per step (the
            push solve of the position stage, docs/contacts.md), 1.  Default 0.2.
        max_correction: rigid model: largest push of one point per step, m.  Default 0.01.
        match_distance: a contact point keeps its identity (and warm start) when it moved less
            than this on its body since the last step, m.  Default 0.01.
        mesh_paths: directories searched for ``package://`` and relative mesh files.
        max_hull_vertices: meshes are simplified to convex hulls of at most this many vertices.
            Default 64.
        friction, restitution, rolling_friction, spinning_friction, stiffness, damping,
            min_depth, max_push_velocity: default material of robot links and scene objects
            (1, 0, 0 m, 0 m, 2e5 N/m, 2000 N s/m, 0 m, 3 m/s); ``contacts`` overrides it per
            link, and so do a link's Gazebo tags (``<gazebo reference="LINK">``: ``kp``,
            ``kd``, ``mu1``/``mu2``, ``minDepth``, ``maxVel``).
    """

    enabled: bool = setting(True, 'true/false', 'robot links collide at all', boolean)
    self_collision: bool = setting(
        False, 'true/false',
        'links of the robot collide with each other (never links joined by a joint)', boolean)
    self_collision_pairs: tuple = setting(
        (), '[link, link] pairs', 'link pairs that collide even without self_collision',
        pair_list)
    disabled_pairs: tuple = setting((), '[link, link] pairs', 'link pairs that never collide',
                                    pair_list)
    margin: float = setting(
        0.005, 'm', "contacts are found this far before touching, plus the step's motion",
        number(0.0),
        note='speculative contacts: a pair is looked at within this distance plus how far the '
             'two shapes can move in the step (their reach, docs/contacts.md), so a fast body '
             'meets what it will hit within the step; 1 cm before issue 28, when the motion '
             'was not added')
    contact_model: str = setting(
        'compliant', 'compliant | rigid',
        'contacts as spring-dampers of the materials (compliant) or rigid', choice(
            'compliant', 'rigid'),
        note="compliant: every point a spring-damper of the two materials' `stiffness` and "
             '`damping`, solved implicitly in the impulse solver, so a body on more than three '
             'points carries the loads a compliant support gives; rigid: the model before '
             'issue 28 (no penetration beyond `slop`, removed by the split-impulse push; '
             'loads on more than three points not determined). docs/contacts.md')
    restitution_threshold: float = setting(
        0.1, 'm/s', 'slower approaches come to rest instead of bouncing', number(0.0))
    slop: float = setting(1e-4, 'm', 'rigid contacts: penetration left alone (resting depth)',
                          number(0.0))
    erp: float = setting(0.2, '1', 'rigid contacts: fraction of the penetration removed per step',
                         fraction())
    max_correction: float = setting(0.01, 'm',
                                    'rigid contacts: largest push of one contact point per step',
                                    number(0.0, strict=True))
    match_distance: float = setting(
        0.01, 'm',
        'a point keeps its identity and warm start if it moved less than this on its body',
        number(0.0))
    mesh_paths: tuple = setting((), 'directories',
                                'where package:// and relative mesh files are also looked for',
                                path_list)
    max_hull_vertices: int = setting(
        64, 'count', 'meshes are simplified to convex hulls of at most this many vertices',
        integer(4))
    friction: float = _material('friction', _BY_DEFAULT)
    restitution: float = _material('restitution', _BY_DEFAULT)
    rolling_friction: float = _material('rolling_friction', _BY_DEFAULT)
    spinning_friction: float = _material('spinning_friction', _BY_DEFAULT)
    stiffness: float = _material('stiffness', _BY_DEFAULT)
    damping: float = _material('damping', _BY_DEFAULT)
    min_depth: float = _material('min_depth', _BY_DEFAULT)
    max_push_velocity: float = _material('max_push_velocity', _BY_DEFAULT)


# ---- items of the named sections (name -> mapping of these keys) ----

@dataclass(frozen=True)
class JointOverrides:
    """Per-joint overrides of the URDF (config ``joints: {JOINT: {...}}``); absent: not given."""

    friction: float = setting(None, 'N m or N',
                              'Coulomb (sliding) friction; default the URDF <dynamics friction>',
                              number(0.0))
    static_friction: float = setting(None, 'N m or N',
                                     'breakaway friction at rest; default equal to friction',
                                     number(0.0))
    damping: float = setting(None, 'N m s/rad or N s/m',
                             'viscous damping; default the URDF <dynamics damping>',
                             number(0.0))
    restitution: float = setting(None, '1',
                                 'restitution at the position limits; default limits.restitution',
                                 fraction('1, at most 1'))


@dataclass(frozen=True)
class SensorNoise:
    """Gaussian noise of a force-torque sensor (``force_torque_sensors.NAME.noise``)."""

    force: float = setting(0.0, 'N', 'standard deviation of the force noise',
                           number(0.0))
    torque: float = setting(0.0, 'N m', 'standard deviation of the torque noise',
                            number(0.0))
    seed: int = setting(None, 'count', 'seed of the noise generator (default: from the name)',
                        integer(0))


@dataclass(frozen=True)
class SensorFilter:
    """Low-pass filter of a force-torque sensor (``force_torque_sensors.NAME.filter``)."""

    cutoff: float = setting(0.0, 'Hz',
                            'cut-off of a first-order low-pass on the samples; 0 = no filter',
                            number(0.0))


SENSOR_FRAMES = ('child', 'parent', 'sensor')
SENSOR_DIRECTIONS = ('child_to_parent', 'parent_to_child')


@dataclass(frozen=True)
class ForceTorqueSensorSettings:
    """One six-axis sensor (config ``force_torque_sensors: {NAME: {...}}``, docs/sensors.md)."""

    joint: str = setting(None, 'joint name',
                         'the joint whose transmitted wrench the sensor measures',
                         name('a joint name'))
    frame: str = setting('child', ' | '.join(SENSOR_FRAMES),
                         'frame the wrench is expressed in (default child)',
                         choice(*SENSOR_FRAMES))
    measure_direction: str = setting(
        'child_to_parent', ' | '.join(SENSOR_DIRECTIONS),
        'child_to_parent: the wrench of the child on the parent (default); parent_to_child',
        choice(*SENSOR_DIRECTIONS))
    pose: BasePose = setting(
        BasePose(), 'section',
        'sensor frame in the child link frame (position m, rpy rad), for frame: sensor',
        section(BasePose))
    rate: float = setting(
        100.0, 'Hz',
        'samples per second of simulated time; 0 = after every step call (default 100)',
        number(0.0))
    noise: SensorNoise = setting(
        SensorNoise(), 'section',
        'Gaussian noise: force (N) and torque (N m) standard deviations, seed',
        section(SensorNoise))
    filter: SensorFilter = setting(  # noqa: A003 (the config key)
        SensorFilter(), 'section', 'first-order low-pass: cutoff (Hz), 0 = none',
        section(SensorFilter))


@dataclass(frozen=True)
class ImuAxisNoise:
    """
    Noise of one IMU quantity on each axis (docs/sensors.md, "IMU").

    ``imu_sensors.NAME.noise.angular_velocity`` and ``.linear_acceleration``.  Each value is
    one number for the three axes or a list x, y, z, in rad/s for the angular velocity and
    m/s^2 for the acceleration.  The names are SDF's ``<noise>`` elements (gz-sensors'
    Gaussian model).
    """

    mean: tuple = setting((0.0, 0.0, 0.0), 'rad/s or m/s^2',
                          'white noise: mean added to every sample', axes3())
    stddev: tuple = setting((0.0, 0.0, 0.0), 'rad/s or m/s^2',
                            'white noise: standard deviation of every sample', axes3(0.0))
    bias_mean: tuple = setting(
        (0.0, 0.0, 0.0), 'rad/s or m/s^2',
        'turn-on bias: mean size, drawn once per run with a random sign (as gz-sensors)',
        axes3(0.0))
    bias_stddev: tuple = setting((0.0, 0.0, 0.0), 'rad/s or m/s^2',
                                 'turn-on bias: standard deviation of the draw', axes3(0.0))
    dynamic_bias_stddev: tuple = setting(
        (0.0, 0.0, 0.0), 'rad/s or m/s^2',
        'bias walk: standard deviation of a first-order Gauss-Markov bias', axes3(0.0))
    dynamic_bias_correlation_time: float = setting(
        3600.0, 's', 'bias walk: correlation time of the Gauss-Markov bias',
        number(0.0, strict=True))


@dataclass(frozen=True)
class ImuNoise:
    """Noise of an IMU (``imu_sensors.NAME.noise``)."""

    angular_velocity: ImuAxisNoise = setting(
        ImuAxisNoise(), 'section', 'gyro noise: mean, stddev, bias_mean, bias_stddev, '
        'dynamic_bias_stddev (rad/s), dynamic_bias_correlation_time (s)', section(ImuAxisNoise))
    linear_acceleration: ImuAxisNoise = setting(
        ImuAxisNoise(), 'section', 'accelerometer noise: mean, stddev, bias_mean, bias_stddev, '
        'dynamic_bias_stddev (m/s^2), dynamic_bias_correlation_time (s)', section(ImuAxisNoise))
    orientation: float = setting(
        0.0, 'rad', 'standard deviation of the orientation error about each sensor axis',
        number(0.0))
    seed: int = setting(None, 'count', 'seed of the noise generator (default: from the name)',
                        integer(0))


@dataclass(frozen=True)
class ImuSensorSettings:
    """One IMU (config ``imu_sensors: {NAME: {...}}``, docs/sensors.md, "IMU")."""

    link: str = setting(None, 'link name', 'the link the IMU is fixed to', name('a link name'))
    pose: BasePose = setting(BasePose(), 'section',
                             'sensor frame in the link frame (position m, rpy rad)',
                             section(BasePose))
    rate: float = setting(
        100.0, 'Hz', 'samples per second of simulated time; 0 = after every step call',
        number(0.0))
    topic: str = setting('', 'topic name', 'sensor_msgs/Imu topic; empty: NAME/imu',
                         name('a topic name'))
    noise: ImuNoise = setting(
        ImuNoise(), 'section',
        'angular_velocity, linear_acceleration (per-axis Gaussian noise and biases), '
        'orientation (rad), seed', section(ImuNoise))


@dataclass(frozen=True)
class JointSensorSettings:
    """
    How a joint's state is measured (config ``joint_sensors: {JOINT: {...}}``).

    The key ``'*'`` sets every joint not named.  Off by default: every value 0 reads the
    exact state.
    """

    counts_per_revolution: int = setting(
        0, 'count', "encoder resolution on the motor side, through the drive's gear (a joint "
        'without a drive: on the joint); 0 = exact', integer(0))
    position_noise: float = setting(0.0, 'rad or m',
                                    'standard deviation of Gaussian noise on the position',
                                    number(0.0))
    velocity_noise: float = setting(0.0, 'rad/s or m/s',
                                    'standard deviation of Gaussian noise on the velocity',
                                    number(0.0))
    current_noise: float = setting(
        0.0, 'A', "standard deviation of Gaussian noise on the drive's measured current "
        '(dynamic_joint_states)', number(0.0))
    delay: int = setting(0, 'samples',
                         'a reading is the state this many physics steps before', integer(0))
    seed: int = setting(None, 'count', 'seed of the noise generator (default: from the name)',
                        integer(0))


RANGE_KINDS = ('lidar', 'depth_camera')
#: The keys of one range-sensor kind only (the other kind refuses them).
LIDAR_KEYS = ('horizontal', 'vertical')
CAMERA_KEYS = ('width', 'height', 'horizontal_fov')


def _check_range_limits(limits, where):
    """Refuse a range whose min is not below its max."""
    if limits.min >= limits.max:
        where.child('min').fail(f'a number >= 0 (m) below range.max ({limits.max:g} m)',
                                limits.min)


def _check_scan(scan, where, elevation=False):
    """Refuse a scan whose first angle is above its last (or an elevation beyond +-pi/2)."""
    if elevation:
        for key in ('min_angle', 'max_angle'):
            value = getattr(scan, key)
            if abs(value) > math.pi / 2:
                where.child(key).fail('an elevation in [-1.5708, 1.5708] (rad)', value)
    if scan.min_angle > scan.max_angle:
        where.child('min_angle').fail(f'a number (rad) not above max_angle ({scan.max_angle:g} '
                                      'rad)', scan.min_angle)


@dataclass(frozen=True)
class RangeLimits:
    """What a range sensor reads (``range_sensors.NAME.range``; SDF's ``<range>``)."""

    min: float = setting(  # noqa: A003 (the config key)
        0.1, 'm', 'nearest reading: a nearer hit reads -inf (a depth camera: its near clip '
        'plane, a depth along its axis)', number(0.0))
    max: float = setting(  # noqa: A003 (the config key)
        30.0, 'm', 'farthest reading: nothing up to it reads +inf (a depth camera: its far '
        'clip plane)', number(0.0, strict=True))
    resolution: float = setting(0.0, 'm', 'readings are rounded to whole multiples of this; '
                                          '0 = exact', number(0.0))


@dataclass(frozen=True)
class RangeNoise:
    """Gaussian noise of a range sensor (``range_sensors.NAME.noise``); off by default."""

    mean: float = setting(0.0, 'm', 'mean added to every reading within range', number())
    stddev: float = setting(0.0, 'm', 'standard deviation of every reading within range',
                            number(0.0))
    seed: int = setting(None, 'count', 'seed of the noise generator (default: from the name)',
                        integer(0))


@dataclass(frozen=True)
class HorizontalScan:
    """A lidar's columns (``range_sensors.NAME.horizontal``; SDF's ``<scan><horizontal>``)."""

    samples: int = setting(361, 'count', 'rays from min_angle to max_angle, both included',
                           integer(1))
    min_angle: float = setting(-math.pi, 'rad', 'azimuth of the first ray, about the sensor z '
                                                'axis from its x axis', number())
    max_angle: float = setting(math.pi, 'rad', 'azimuth of the last ray', number())


@dataclass(frozen=True)
class VerticalScan:
    """A lidar's rows (``range_sensors.NAME.vertical``; SDF's ``<scan><vertical>``)."""

    samples: int = setting(1, 'count', 'rows from min_angle to max_angle, both included',
                           integer(1))
    min_angle: float = setting(0.0, 'rad', 'elevation of the lowest row (positive up), within '
                                           '+-pi/2', number())
    max_angle: float = setting(0.0, 'rad', 'elevation of the highest row', number())


@dataclass(frozen=True)
class RangeSensorSettings:
    """
    One lidar or depth camera (config ``range_sensors: {NAME: {...}}``, docs/sensors.md).

    As in SDF the sensor looks along the x axis of its frame, ``pose`` on its link; a lidar's
    horizontal angles turn about its z axis and its vertical angles are elevations; a depth
    camera's image holds depths along x (REP 118).
    """

    link: str = setting(
        None, 'link name', 'the link the sensor is fixed to (its own shapes are not seen)',
        name('a link name'))
    pose: BasePose = setting(BasePose(), 'section',
                             'sensor frame in the link frame (position m, rpy rad)',
                             section(BasePose))
    kind: str = setting('lidar', ' | '.join(RANGE_KINDS),
                        'lidar (rows of rays at elevations) or depth_camera (a pinhole image)',
                        choice(*RANGE_KINDS))
    rate: float = setting(10.0, 'Hz', 'samples per second of simulated time; 0 = after every '
                                      'step call', number(0.0))
    range: RangeLimits = setting(  # noqa: A003 (the config key)
        RangeLimits(), 'section', 'min, max, resolution (m)',
        section(RangeLimits, check=_check_range_limits))
    noise: RangeNoise = setting(RangeNoise(), 'section', 'Gaussian noise: mean, stddev (m), seed',
                                section(RangeNoise))
    horizontal: HorizontalScan = setting(
        HorizontalScan(), 'section', 'lidar: samples, min_angle, max_angle (rad) of its columns',
        section(HorizontalScan, check=_check_scan))
    vertical: VerticalScan = setting(
        VerticalScan(), 'section', 'lidar: samples, min_angle, max_angle (rad) of its rows',
        section(VerticalScan, check=lambda scan, where: _check_scan(scan, where, True)))
    width: int = setting(320, 'pixels', 'depth camera: image width', integer(1))
    height: int = setting(240, 'pixels', 'depth camera: image height', integer(1))
    horizontal_fov: float = setting(
        1.047, 'rad', 'depth camera: horizontal field of view, below pi (square pixels: the '
        'vertical one follows from the image size)', number(0.0, strict=True))


LOOP_TYPES = ('revolute', 'continuous', 'prismatic', 'fixed', 'spherical')


@dataclass(frozen=True)
class LoopJointSettings:
    """A joint closing a kinematic loop (config ``loop_joints: {NAME: {...}}``)."""

    type: str = setting(  # noqa: A003 (the config key)
        None, ' | '.join(LOOP_TYPES), 'joint type', choice(*LOOP_TYPES))
    parent: str = setting(None, 'link', 'parent link', name('a link name'))
    child: str = setting(None, 'link', 'child link', name('a link name'))
    origin: BasePose = setting(BasePose(), 'section',
                               'joint frame in the parent link frame (position m, rpy rad)',
                               section(BasePose))
    child_origin: BasePose = setting(
        None, 'section',
        'joint frame in the child link frame (default: where it is at the initial state)',
        section(BasePose))
    axis: tuple = setting((1.0, 0.0, 0.0), '1',
                          'joint axis in the joint frame (default 1 0 0, as URDF)', vector3())
    lower: float = setting(None, 'rad or m',
                           'lower position limit, revolute or prismatic (default none)',
                           number())
    upper: float = setting(None, 'rad or m',
                           'upper position limit, revolute or prismatic (default none)',
                           number())
    velocity: float = setting(None, 'rad/s or m/s',
                              'velocity limit, held with limits.enforce_velocity (default none)',
                              number(0.0, strict=True))
    effort: float = setting(None, 'N m or N',
                            'effort limit: commanded efforts are clipped to it (default none)',
                            number(0.0))


@dataclass(frozen=True)
class ElementSettings:
    """A point-to-point element (config ``linear_actuators`` or ``distance_sensors``)."""

    link_a: str = setting(None, 'link', 'link of the first end', name('a link name'))
    point_a: tuple = setting((0.0, 0.0, 0.0), 'm',
                             'first end in the frame of link_a (default its origin)',
                             vector3())
    link_b: str = setting(None, 'link', 'link of the second end', name('a link name'))
    point_b: tuple = setting((0.0, 0.0, 0.0), 'm',
                             'second end in the frame of link_b (default its origin)',
                             vector3())


@dataclass(frozen=True)
class PathPointSettings:
    """A point of a link that can follow a prescribed path (config ``path_points``)."""

    link: str = setting(None, 'link', 'link that carries the point', name('a link name'))
    point: tuple = setting((0.0, 0.0, 0.0), 'm',
                           'the point in the frame of the link (default its origin)',
                           vector3())


@dataclass(frozen=True)
class GraspSettings:
    """A grasp a link can switch on and off at run time (config ``grasps``, docs/valve.md)."""

    link: str = setting(None, 'link', 'the gripping link (a hand)', name('a link name'))
    point: tuple = setting((0.0, 0.0, 0.0), 'm',
                           'the grasp point in the frame of link (default its origin)',
                           vector3())
    object: str = setting(None, 'link', 'the link grasped (a valve wheel, a handle)',  # noqa: A003
                          name('a link name'))
    centre: tuple = setting((0.0, 0.0, 0.0), 'm',
                            "the rim circle's centre (or the grasped point when radius is 0) in "
                            'the frame of object', vector3())
    axis: tuple = setting((1.0, 0.0, 0.0), '1', "the rim circle's axis in the frame of object",
                          vector3())
    radius: float = setting(0.0, 'm',
                            'rim radius: the grasp holds the rim point nearest to the grasp '
                            'point; 0: the point centre', number(0.0))
    max_distance: float = setting(0.005, 'm',
                                  'a grasp asked for farther from the rim (or point) is refused',
                                  number(0.0, strict=True))


SCENE_SHAPES = ('box', 'sphere', 'cylinder', 'capsule', 'mesh', 'urdf')
#: shape -> the keys it needs.
SCENE_SHAPE_KEYS = {'box': ('size',), 'sphere': ('radius',), 'cylinder': ('radius', 'length'),
                    'capsule': ('radius', 'length'), 'mesh': ('filename',), 'urdf': ()}


@dataclass(frozen=True)
class SceneObjectSettings:
    """Static geometry or a free body of the scene (config ``scene: {NAME: {...}}``)."""

    shape: str = setting(None, ' | '.join(SCENE_SHAPES), 'shape of the object',
                         choice(*SCENE_SHAPES))
    size: tuple = setting(None, 'm', 'box: full edge lengths x, y, z', vector3())
    radius: float = setting(None, 'm', 'sphere, cylinder, capsule radius',
                            number(0.0, strict=True))
    length: float = setting(
        None, 'm',
        'cylinder length, capsule length between the centres of its end spheres (along z)',
        number(0.0, strict=True))
    filename: str = setting(None, 'path or package:// URI',
                            'mesh: the mesh file (STL, OBJ, DAE), used as its convex hull; urdf: '
                            'the URDF or xacro file of the object', name('a file path'))
    urdf: str = setting(None, 'URDF XML text',
                        'urdf: the object as URDF text instead of a file: one rigid body (links '
                        'joined by fixed joints), its mass and inertia from the <inertial>s (no '
                        'mass: static geometry), its shapes from the <collision>s; its root '
                        "link's frame is the object's frame (docs/contacts.md)",
                        name('URDF XML text'))
    scale: tuple = setting((1.0, 1.0, 1.0), '1', 'mesh scale per axis', vector3())
    mass: float = setting(0.0, 'kg', 'mass of a free object; 0 or absent makes it static geometry',
                          number(0.0))
    pose: BasePose = setting(
        BasePose(), 'section',
        'position (m) and rpy (rad) of the object in the world (initial pose if free)',
        section(BasePose))
    linear_velocity: tuple = setting((0.0, 0.0, 0.0), 'm/s', 'initial velocity of a free object',
                                     vector3())
    angular_velocity: tuple = setting((0.0, 0.0, 0.0), 'rad/s',
                                      'initial angular velocity of a free object, world frame',
                                      vector3())
    friction: float = _material('friction', inherit=True)
    restitution: float = _material('restitution', inherit=True)
    rolling_friction: float = _material('rolling_friction', inherit=True)
    spinning_friction: float = _material('spinning_friction', inherit=True)
    stiffness: float = _material('stiffness', inherit=True)
    damping: float = _material('damping', inherit=True)
    min_depth: float = _material('min_depth', inherit=True)
    max_push_velocity: float = _material('max_push_velocity', inherit=True)


@dataclass(frozen=True)
class MaterialOverrides:
    """Contact material of one link (config ``contacts: {LINK: {...}}``); absent: collision's."""

    friction: float = _material('friction', inherit=True)
    restitution: float = _material('restitution', inherit=True)
    rolling_friction: float = _material('rolling_friction', inherit=True)
    spinning_friction: float = _material('spinning_friction', inherit=True)
    stiffness: float = _material('stiffness', inherit=True)
    damping: float = _material('damping', inherit=True)
    min_depth: float = _material('min_depth', inherit=True)
    max_push_velocity: float = _material('max_push_velocity', inherit=True)

    def resolve(self, default):
        """Return the material (MATERIAL_NAMES order), ``default``'s where not given."""
        return tuple(default[i] if getattr(self, name) is None else getattr(self, name)
                     for i, name in enumerate(MATERIAL_NAMES))


# ---- checks across keys ----

def _scene_item_check(item_name, item, params, where):
    """Check that a scene object has a shape and its sizes, and that a box's are positive."""
    if 'shape' not in item:
        where.fail('a mapping with a shape (' + ', '.join(SCENE_SHAPES) + ')', params)
    if item['shape'] == 'urdf':
        given = [k for k in ('filename', 'urdf') if k in item]
        if len(given) != 1:
            raise ConfigError(
                f"{where.source}: scene object '{item_name}' is a urdf object with "
                f"{' and '.join(given) or 'neither filename nor urdf'}.  Give one: filename "
                '(a URDF or xacro file) or urdf (the URDF text).')
        if 'mass' in item:
            raise ConfigError(
                f"{where.source}: scene object '{item_name}' is a urdf object with a mass; its "
                "mass comes from its links' <inertial>.  Remove mass.")
    missing = [k for k in SCENE_SHAPE_KEYS[item['shape']] if k not in item]
    if missing:
        raise ConfigError(
            f"{where.source}: scene object '{item_name}' is a {item['shape']} without "
            f"{' and '.join(missing)}.  Give {', '.join(missing)} (see docs/contacts.md).")
    if item['shape'] == 'box' and min(item['size']) <= 0.0:
        where.child('size').fail('three positive lengths (m)', params['size'])


def _require_sensor_joint(item_name, item, params, where):
    """Check that a sensor names its joint."""
    if 'joint' not in item:
        where.fail('a mapping with a joint (the joint the sensor sits on)', params)


_sensors = named_sections(ForceTorqueSensorSettings, 'sensor', item_check=_require_sensor_joint)


def _require_imu_link(item_name, item, params, where):
    """Check that an IMU names its link."""
    if 'link' not in item:
        where.fail('a mapping with a link (the link the IMU is fixed to)', params)


_imus = named_sections(ImuSensorSettings, 'IMU', item_check=_require_imu_link)


def _range_item_check(item_name, item, params, where):
    """Check that a range sensor names its link and only keys of its kind, fov below pi."""
    if 'link' not in item:
        where.fail('a mapping with a link (the link the sensor is fixed to)', params)
    kind = item.get('kind', 'lidar')
    other = CAMERA_KEYS if kind == 'lidar' else LIDAR_KEYS
    for key in other:
        if key in item:
            takes = ', '.join(LIDAR_KEYS if kind == 'lidar' else CAMERA_KEYS)
            raise ConfigError(f"{where.source}: key '{where.path}.{key}' is not a {kind}'s; a "
                              f'{kind} takes {takes} (docs/sensors.md).')
    fov = item.get('horizontal_fov')
    if fov is not None and fov >= math.pi:
        where.child('horizontal_fov').fail('a number > 0 and below pi, 3.14159 (rad)', fov)


_ranges = named_sections(RangeSensorSettings, 'sensor', item_check=_range_item_check)


@dataclass(frozen=True)
class SimConfig:
    """
    Everything the simulator is configured with besides the robot description.

    Each field but the last two is one top-level config key; its unit, meaning and check are
    in its metadata (``SCHEMA`` lists them).

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
        solver: SolverSettings.
        drives: joint name -> given keys of DriveParameters (docs/drives.md).
        joints: joint name -> given keys of JointOverrides.
        limits: LimitSettings.
        ground: GroundSettings.
        contacts: link name -> given keys of MaterialSettings.
        collision: CollisionSettings.
        scene: object name -> given keys of SceneObjectSettings.
        loop_joints: joint name -> given keys of LoopJointSettings, outside the URDF tree.
        linear_actuators: name -> given keys of ElementSettings (a point-to-point force).
        distance_sensors: name -> given keys of ElementSettings (a reported distance).
        path_points: name -> given keys of PathPointSettings.
        grasps: name -> given keys of GraspSettings (switched on and off at run time).
        force_torque_sensors: sensor name -> given keys of ForceTorqueSensorSettings
            (docs/sensors.md); sensors declared in the URDF's ``<gazebo>`` tags are added when
            the model is built.
        source: where the configuration came from, for messages ('defaults', 'config dict',
            "config file 'path.yaml'").
        given_keys: top-level keys the source set explicitly (to tell a choice from a default).
    """

    dt: float = setting(0.001, 's', 'simulation time step', number(0.0, strict=True))
    gravity: tuple = setting((0.0, 0.0, -9.81), 'm/s^2',
                             'gravitational acceleration, world frame', vector3())
    base: str = setting(
        'fixed', 'fixed | floating',
        'root link welded to the world, or free (a URDF world link decides instead)',
        choice('fixed', 'floating'))
    base_pose: BasePose = setting(
        BasePose(), 'section', 'pose of the URDF root link in the world (initial pose if '
        'floating)', section(BasePose))
    initial_positions: dict = setting({}, 'rad or m',
                                      'joint name -> initial position; unlisted joints start at 0',
                                      joint_numbers(),
                                      note='must lie within the joint limits')
    initial_velocities: dict = setting(
        {}, 'rad/s or m/s', 'joint name -> initial velocity; unlisted joints start at rest',
        joint_numbers())
    keep_fixed_joints: tuple = setting(
        (), 'joint names',
        'fixed joints kept as welds instead of merging their links into one body', joint_names)
    solver: SolverSettings = setting(SolverSettings(), 'section',
                                     'sequential-impulse solver settings', section(SolverSettings))
    drives: dict = setting({}, 'section',
                           'joint -> DC motor and gear (docs/drives.md lists the keys)',
                           check_drives)
    joints: dict = setting({}, 'section',
                           'joint -> friction, static_friction, damping, restitution overrides',
                           named_sections(JointOverrides, 'joint'),
                           note='`docs/joints.md`')
    limits: LimitSettings = setting(LimitSettings(), 'section',
                                    'how position, velocity and effort limits act',
                                    section(LimitSettings))
    ground: GroundSettings = setting(GroundSettings(), 'section',
                                     'the ground plane and its material', section(GroundSettings),
                                     note='`docs/contacts.md`')
    contacts: dict = setting(
        {}, 'section',
        'link -> friction, restitution, rolling_friction, spinning_friction overrides',
        named_sections(MaterialOverrides, 'link'), note='`docs/contacts.md`')
    collision: CollisionSettings = setting(
        CollisionSettings(), 'section',
        'which shapes collide; contact margins and position correction',
        section(CollisionSettings), note='`docs/contacts.md`')
    scene: dict = setting(
        {}, 'section', 'object -> static geometry or free body (docs/contacts.md lists the keys)',
        named_sections(SceneObjectSettings, 'object', item_check=_scene_item_check,
                       mapping_text='a mapping object name -> {shape, size or radius/length or '
                                    'filename, pose, mass, ...}'))
    loop_joints: dict = setting(
        {}, 'section',
        'joints that close kinematic loops: type, parent, child, origin, axis (docs/model.md)',
        named_sections(LoopJointSettings, 'loop joint', required=('type', 'parent', 'child')),
        note='`docs/prescribed.md`')
    linear_actuators: dict = setting(
        {}, 'section',
        'point-to-point force elements with ball ends: link_a, point_a, link_b, point_b',
        named_sections(ElementSettings, 'element', required=('link_a', 'link_b')),
        note='an actuator holds a force (N) or follows a prescribed length (m): '
             '`docs/prescribed.md`')
    distance_sensors: dict = setting(
        {}, 'section', 'distances between two points: link_a, point_a, link_b, point_b',
        named_sections(ElementSettings, 'element', required=('link_a', 'link_b')),
        note='`docs/prescribed.md`')
    path_points: dict = setting(
        {}, 'section',
        'points of links that prescribed.path can drive along a 3D path: link, point',
        named_sections(PathPointSettings, 'path point', required=('link',)),
        note='`docs/prescribed.md`')
    grasps: dict = setting(
        {}, 'section',
        'grasps switched at run time: link, point, object, centre, axis, radius, max_distance',
        named_sections(GraspSettings, 'grasp', required=('link', 'object')),
        note='a ball joint between the grasp point and the rim point nearest to it, acting '
             'while grasped: `docs/valve.md`')
    force_torque_sensors: dict = setting(
        {}, 'section',
        'sensor -> joint, frame, measure_direction, pose, rate, noise, filter (docs/sensors.md)',
        _sensors, note='URDF `<gazebo>` sensor tags are read too')
    imu_sensors: dict = setting(
        {}, 'section', 'IMU -> link, pose, rate, topic, noise (docs/sensors.md, "IMU")',
        _imus, note='URDF `<gazebo reference="LINK"><sensor type="imu">` tags are read too; '
                    'an entry of the same name here wins')
    range_sensors: dict = setting(
        {}, 'section', 'sensor -> link, pose, kind, rate, range, noise, horizontal, vertical, '
        'width, height, horizontal_fov (docs/sensors.md, "Range sensors")', _ranges,
        note='lidars and depth cameras, cast against the collision shapes; URDF `<gazebo '
             'reference="LINK"><sensor type="gpu_lidar">` (lidar, ray, gpu_ray, depth_camera, '
             'depth) tags are read too; an entry of the same name here wins')
    joint_sensors: dict = setting(
        {}, 'section',
        "joint (or '*': every joint) -> counts_per_revolution, position_noise, velocity_noise, "
        'current_noise, delay, seed (docs/sensors.md, "Joint measurements")',
        named_sections(JointSensorSettings, 'joint'))
    source: str = 'defaults'
    given_keys: frozenset = frozenset()


# ---- the schema, read from the dataclasses ----

SCHEMA = keys_of(SimConfig)
SOLVER_KEYS = keys_of(SolverSettings)
BASE_POSE_KEYS = keys_of(BasePose)
LIMIT_KEYS = keys_of(LimitSettings)
GROUND_KEYS = keys_of(GroundSettings)
COLLISION_KEYS = keys_of(CollisionSettings)
JOINT_KEYS = keys_of(JointOverrides)
SENSOR_KEYS = keys_of(ForceTorqueSensorSettings)
NOISE_KEYS = keys_of(SensorNoise)
FILTER_KEYS = keys_of(SensorFilter)
IMU_KEYS = keys_of(ImuSensorSettings)
RANGE_KEYS = keys_of(RangeSensorSettings)
JOINT_SENSOR_KEYS = keys_of(JointSensorSettings)
LOOP_KEYS = keys_of(LoopJointSettings)
ELEMENT_KEYS = keys_of(ElementSettings)
PATH_POINT_KEYS = keys_of(PathPointSettings)
GRASP_KEYS = keys_of(GraspSettings)
SCENE_KEYS = keys_of(SceneObjectSettings)
#: config key -> dataclass of one item, for the sections of named items.
NAMED_SECTIONS = {key.name: key.convert.section for key in SCHEMA
                  if getattr(key.convert, 'named', None)}


def config_sensors(data, source):
    """
    Validate force-torque sensor settings from another source (the URDF's <gazebo> tags).

    Args:
        data: sensor name -> mapping of SENSOR_KEYS.
        source: where they come from, for messages.

    Returns:
        sensor name -> converted settings.
    """
    return _sensors(data, Context(source, 'force_torque_sensors'))


def config_imus(data, source):
    """Validate IMU settings from another source (the URDF's <gazebo> tags); see config_sensors."""
    return _imus(data, Context(source, 'imu_sensors'))


def config_range_sensors(data, source):
    """Validate range sensors from another source (the URDF's <gazebo> tags); as config_sensors."""
    return _ranges(data, Context(source, 'range_sensors'))


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
    return config_from_dict(_read_extended(path, ()), f"config file '{path}'")


def with_formulation(config, formulation):
    """
    Return a SimConfig with ``solver.formulation`` replaced (a command line's --formulation).

    Args:
        config: SimConfig.
        formulation: '' or None (the config's own), 'maximal' or 'tree'.

    Raises:
        ConfigError: any other value (the message names the choices).
    """
    if not formulation:
        return config
    checked = config_from_dict({'solver': {'formulation': formulation}},
                               f'formulation {formulation!r}').solver.formulation
    return replace(config, solver=replace(config.solver, formulation=checked),
                   source=f'{config.source} with solver.formulation: {checked}')


def config_data(path):
    """
    Return a config file's keys as a nested dict, the files it ``extends`` merged in.

    For a caller that changes a few keys before validating (``config_from_dict``).

    Raises:
        ConfigError: the file (or one it extends) is missing or not YAML.
    """
    if not os.path.isfile(path):
        raise ConfigError(f"config file '{path}' does not exist.  Give the path of a YAML file.")
    data = _read_extended(os.fspath(path), ())
    if not isinstance(data, dict):
        return data
    return _nest_dotted(_unwrap_ros_parameters(data), f"config file '{path}'")


def _read_yaml(path):
    """Return the mapping of one YAML config file ({} when empty)."""
    with open(path, encoding='utf-8') as stream:
        try:
            data = yaml.load(stream, Loader=_StrictLoader)
        except yaml.YAMLError as error:
            mark = getattr(error, 'problem_mark', None)
            line = f' at line {mark.line + 1}, column {mark.column + 1}' if mark else ''
            problem = getattr(error, 'problem', None) or str(error)
            raise ConfigError(f"config file '{path}' is not valid YAML{line}: {problem}.  Fix "
                              'the YAML there (indentation, a colon after each key).') from None
    return {} if data is None else data


def _read_extended(path, chain):
    """
    Return a config file's mapping with the file it ``extends`` under it.

    ``extends: FILE`` (a path relative to the extending file's directory) names a config whose
    keys this file's keys override: mappings merge key by key, any other value replaces.
    """
    data = _read_yaml(path)
    if not isinstance(data, dict) or 'extends' not in data:
        return data
    data = dict(data)
    base = data.pop('extends')
    if not isinstance(base, str) or not base:
        raise ConfigError(f"config file '{path}': extends is {base!r}; give the path of the "
                          'config file this one builds on, relative to this one.')
    base_path = os.path.join(os.path.dirname(os.path.abspath(path)), base)
    if not os.path.isfile(base_path):
        raise ConfigError(f"config file '{path}' extends '{base}', which does not exist (looked "
                          f"for '{base_path}').  Give a path relative to '{path}'.")
    if os.path.realpath(base_path) in chain:
        raise ConfigError(f"config file '{path}' extends '{base}', which extends it in turn.  "
                          'Break the cycle.')
    under = _read_extended(base_path, chain + (os.path.realpath(path),))
    if not isinstance(under, dict):
        return data  # config_from_dict names the malformed file's problem
    return _merged(_nest_dotted(_unwrap_ros_parameters(under), f"config file '{base_path}'"),
                   _nest_dotted(_unwrap_ros_parameters(data), f"config file '{path}'"))


def _merged(under, over):
    """Return mapping ``over`` laid on ``under``: mappings merge key by key, others replace."""
    out = dict(under)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


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
    values = convert_table(SCHEMA, data, Context(source, ''))
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


def _sections():
    """Return the top-level keys whose value is one section dataclass (``solver``...)."""
    return {key.name for key in SCHEMA
            if getattr(key.convert, 'section', None) and not getattr(key.convert, 'named', None)}


def default_yaml():
    """
    Return the text of ``config/default.yaml``: every key at its default, with unit and meaning.

    Returns:
        str, YAML that loads to ``SimConfig()``.
    """
    sections = _sections()
    out = ['# jointsim_ros simulator configuration: every key at its default value.',
           '# Generated by jointsim_ros.description.config.default_yaml(); keep them in step.',
           '']
    for key in SCHEMA:
        if key.name in sections:
            out.append(f'# {key.doc}')
            out.append(f'{key.name}:')
            for sub in keys_of(key.convert.section):
                out.append(f'  {sub.name}: {_yaml_value(sub.default)}  # [{sub.unit}] {sub.doc}')
        else:
            out.append(f'{key.name}: {_yaml_value(key.default)}  # [{key.unit}] {key.doc}')
    return '\n'.join(out) + '\n'


#: The lines that enclose the generated table in docs/config.md.
TABLE_BEGIN = '<!-- BEGIN table generated by jointsim_ros.description.config.config_table() -->'
TABLE_END = '<!-- END generated table -->'


def _table_row(path, key):
    """Return one markdown row: key, check, default, meaning."""
    expected = getattr(key.convert, 'expected', key.unit)
    if getattr(key.convert, 'named', None):
        expected = f'{key.convert.named} name -> mapping (table below)'
    elif expected == 'section':
        expected = 'a mapping (keys below)' if key.default is not None else 'a mapping'
    value = key.default
    if is_dataclass(value):
        value = asdict(value)
    default = '(not given)' if value is None else f'`{_yaml_value(value)}`'
    meaning = key.doc + (f'; {key.note}' if key.note else '')
    return f'| `{path}` | {expected} | {default} | {meaning} |'.replace('\n', ' ')


def config_table():
    """
    Return the key table of docs/config.md, generated from the schema (between its markers).

    One row per key, sections expanded to ``section.key``; then one table per section of named
    items (``drives.JOINT``, ``scene.OBJECT``...) with the keys of one item.

    Returns:
        str, markdown.
    """
    sections = _sections()
    head = ['| key | must be | default | meaning |', '|---|---|---|---|']
    out = [TABLE_BEGIN] + head
    named = []
    for key in SCHEMA:
        if key.name in sections:
            out += [_table_row(f'{key.name}.{sub.name}', sub)
                    for sub in keys_of(key.convert.section)]
        else:
            out.append(_table_row(key.name, key))
            if getattr(key.convert, 'named', None):
                named.append(key)
    for key in named:
        item = key.convert.named.upper().replace(' ', '_')
        out += ['', f'`{key.name}.{item}`: {key.doc}.  A key left out takes the default shown '
                '(or the one its meaning names).', ''] + head
        for sub in keys_of(key.convert.section):
            out.append(_table_row(f'{key.name}.{item}.{sub.name}', sub))
            if getattr(sub.convert, 'section', BasePose) is not BasePose:  # noise, filter
                out += [_table_row(f'{key.name}.{item}.{sub.name}.{leaf.name}', leaf)
                        for leaf in keys_of(sub.convert.section)]
    out.append(TABLE_END)
    return '\n'.join(out) + '\n'
