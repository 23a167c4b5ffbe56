"""
Worlds: several robots, each with its own description, config and pose, in one simulation.

A world file (YAML) or mapping::

    dt: 0.001                        # the world's own settings: dt, gravity, solver, limits,
    ground: {enabled: true}          # ground, collision, scene (the keys of a robot's config)
    robots:
      left:
        description: jointsim_arm.urdf.xacro     # relative to the world file, absolute, or
        config: jointsim_arm.yaml                # package://PKG/path; config optional (a path
        pose: {position: [0, -0.6, 0], rpy: [0, 0, 1.5708]}   # or a mapping)
      right: {...}

Each robot is built alone from its description and config (its base pose placed by ``pose``),
then the robots are put into one model (:func:`build_world`): a robot's links, joints, drives
and sensors keep their own names behind the prefix ``NAME/`` (``RobotModel.robots`` says which
are whose), and the config's name-keyed sections are prefixed the same way.  The world's
settings are the world's: a robot config that sets one differently is named in a note, and the
world's value applies.  Plain Python, no rclpy.
"""
from dataclasses import dataclass, fields, replace
import os

import numpy as np
import yaml

from .builder import _ModelBuilder
from .config import _StrictLoader, config_data, config_from_dict, SimConfig, with_formulation
from .geometry import Transform
from .meshes import resolve_mesh_uri
from .model import RobotModel, RobotPart
from .shapes import _check_links, _filter, finish_shapes, link_shapes
from .urdf import close_matches, parse_urdf
from ..errors import ConfigError, DescriptionError
from ..rotations import rpy_to_matrix

#: Top-level keys of a world besides ``robots``: the world's own settings.
WORLD_KEYS = ('dt', 'gravity', 'solver', 'limits', 'ground', 'collision', 'scene')
#: Keys of one robot entry.
ROBOT_KEYS = ('description', 'config', 'pose')
#: Collision keys that belong to the world (how contacts are made and solved); the others
#: (enabled, self_collision, pairs, materials, meshes) are each robot's.
WORLD_COLLISION_KEYS = ('margin', 'contact_model', 'restitution_threshold', 'slop', 'erp',
                        'max_correction', 'match_distance')
#: Name-keyed config sections whose keys are joint, link, sensor or element names.
_KEYED = ('initial_positions', 'initial_velocities', 'drives', 'joints', 'contacts',
          'loop_joints', 'linear_actuators', 'distance_sensors', 'path_points', 'grasps',
          'force_torque_sensors', 'imu_sensors', 'range_sensors', 'joint_sensors', 'scene')
#: Fields of a section's items that name a link, joint or object of the same robot.
_NAME_FIELDS = ('parent', 'child', 'link_a', 'link_b', 'link', 'object', 'joint')


@dataclass(frozen=True)
class WorldRobot:
    """
    One robot of a world.

    Attributes:
        name: its name (namespace, TF prefix).
        description: the UrdfDescription it is built from.
        config: its own SimConfig (``base_pose`` placed by the world's pose).
        pose: (position (3,), rpy (3,)) of its base in the world.
        prefix: what its names carry in the world's model: ``name + '/'``, or '' for the
            robot a simulator was started with when robots are added to it at run time.
    """

    name: str
    description: object
    config: SimConfig
    pose: tuple
    prefix: str = None

    @property
    def own_prefix(self):
        """Return the prefix of its names in the world's model."""
        return self.name + '/' if self.prefix is None else self.prefix


@dataclass(frozen=True)
class World:
    """
    A world as read: its settings (a SimConfig of the world's own keys), robots and notes.

    Attributes:
        config: SimConfig of the world's keys (the rest default).
        robots: tuple of WorldRobot, in the file's order.
        source: where it came from, for messages.
        notes: sentences for the log (a robot setting the world overrides).
    """

    config: SimConfig
    robots: tuple
    source: str
    notes: tuple = ()


def load_world(source):
    """
    Read a world file or mapping: the world's settings and each robot's description and config.

    Args:
        source: path of a world YAML file, or a mapping (``{'robots': {...}, ...}``).

    Returns:
        World.

    Raises:
        ConfigError, DescriptionError: one line naming the key, robot or file, and the fix.
    """
    if isinstance(source, dict):
        data, where, base_dir = dict(source), 'world mapping', os.getcwd()
    else:
        path = os.path.expanduser(os.fspath(source))
        if not os.path.isfile(path):
            raise ConfigError(f"world file '{path}' does not exist.  Give the path of a world "
                              'YAML file (config/two_arms.world.yaml shows one).')
        where, base_dir = f"world file '{path}'", os.path.dirname(os.path.abspath(path))
        try:
            with open(path, encoding='utf-8') as stream:
                data = yaml.load(stream, Loader=_StrictLoader)
        except yaml.YAMLError as error:
            mark = getattr(error, 'problem_mark', None)
            line = f' at line {mark.line + 1}' if mark else ''
            problem = getattr(error, 'problem', None) or 'not valid YAML'
            raise ConfigError(f'{where}{line}: {problem}.  Fix the YAML there (a robot name '
                              'given twice: rename one of them).') from None
        data = {} if data is None else data
        if not isinstance(data, dict):
            raise ConfigError(f'{where} must be a mapping with a robots section.')
    unknown = [k for k in data if k != 'robots' and k not in WORLD_KEYS]
    if unknown:
        hint = close_matches(unknown[0], WORLD_KEYS + ('robots',))
        raise ConfigError(f"{where}: unknown key '{unknown[0]}'{'; ' + hint if hint else ''}.  "
                          f"A world has robots and the settings {', '.join(WORLD_KEYS)}.")
    robots = data.get('robots')
    if not isinstance(robots, dict) or not robots:
        raise ConfigError(f'{where}: robots must be a mapping robot name -> {{description, '
                          'config, pose}} with at least one robot.')
    settings = {k: v for k, v in data.items() if k != 'robots'}
    world_config = config_from_dict(settings, where)
    made, notes = [], []
    for name, entry in robots.items():
        made.append(_robot(where, base_dir, name, entry, world_config, notes))
    return World(world_config, tuple(made), where, tuple(notes))


def _robot(where, base_dir, name, entry, world_config, notes):
    """Read one robot entry: description, config and pose (see :func:`load_world`)."""
    what = f"{where}: robot '{name}'"
    if not isinstance(name, str) or not name or not name.replace('_', 'a').isalnum() \
            or name[0].isdigit():
        raise ConfigError(f'{where}: robot name {name!r} is not a ROS name; use letters, digits '
                          'and underscores, starting with a letter (it becomes a namespace).')
    if not isinstance(entry, dict):
        raise ConfigError(f'{what} must be a mapping with description, config and pose.')
    unknown = [k for k in entry if k not in ROBOT_KEYS]
    if unknown:
        hint = close_matches(unknown[0], ROBOT_KEYS)
        raise ConfigError(f"{what}: unknown key '{unknown[0]}'{'; ' + hint if hint else ''}.  "
                          f"A robot has {', '.join(ROBOT_KEYS)}.")
    text = entry.get('description')
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f'{what} has no description; give the path of its URDF or xacro '
                          'file (relative to the world file), or package://PKG/path.')
    if text.lstrip().startswith('<'):
        source = text
    else:
        source = _path(what, 'description', text, base_dir)
    try:
        description = parse_urdf(source)
    except DescriptionError as error:
        raise DescriptionError(f'{what}: {error}') from None
    config = entry.get('config')
    if isinstance(config, str):
        config = config_data(_path(what, 'config', config, base_dir))
        label = f"{what}'s config {entry['config']!r}"
    else:
        label = f"{what}'s config"
    if config is not None and not isinstance(config, dict):
        raise ConfigError(f'{what}: config must be a path or a mapping, got {config!r}.')
    own = config_from_dict(config or {}, label)
    pose = entry.get('pose') or {}
    pose_config = config_from_dict({'base_pose': pose}, f'{what}: pose').base_pose
    for key in _world_settings(own, world_config):
        notes.append(f"robot '{name}': its config sets {key} differently from the world; "
                     f"the world's {key} applies (set it in the world file).")
    placed = Transform(rpy_to_matrix(pose_config.rpy), np.asarray(pose_config.position, float))
    base = placed @ Transform(rpy_to_matrix(own.base_pose.rpy),
                              np.asarray(own.base_pose.position, float))
    rpy = _rpy(base.rot)
    own = replace(own, base_pose=replace(own.base_pose, position=tuple(base.pos),
                                         rpy=tuple(rpy)))
    return WorldRobot(name, description, own,
                      (tuple(pose_config.position), tuple(pose_config.rpy)))


def _world_settings(own, world_config):
    """Return the world's keys that a robot config sets to another value."""
    differ = []
    for key in ('dt', 'gravity', 'solver', 'ground'):
        if key in own.given_keys and getattr(own, key) != getattr(world_config, key):
            differ.append(key)
    for section, keys in (('limits', ('enforce_velocity', 'enforce_effort')),
                          ('collision', WORLD_COLLISION_KEYS)):
        if section in own.given_keys:
            differ.extend(f'{section}.{k}' for k in keys if getattr(getattr(own, section), k)
                          != getattr(getattr(world_config, section), k))
    return differ


def robot_entry(name, description, config=None, pose=None, world_config=None,
                base_dir=None, where='spawn_entity'):
    """
    Return the WorldRobot of a robot added at run time.

    Args:
        name: its name (namespace, TF prefix).
        description: URDF or xacro path, or the URDF XML text.
        config: its config: a path, a mapping or None (the defaults).
        pose: {'position': [...], 'rpy': [...]} of its base, or None.
        world_config: the running world's SimConfig (its settings win; differences are notes).
        base_dir: directory relative paths are read from (default: the working directory).
        where: what to name in messages.

    Returns:
        (WorldRobot, notes).
    """
    notes = []
    entry = {'description': description, 'config': config, 'pose': pose or {}}
    robot = _robot(where, base_dir or os.getcwd(), name, entry, world_config or SimConfig(),
                   notes)
    return robot, tuple(notes)


def single_robot_world(description, config):
    """
    Return the World of a simulator started with one robot, before robots are added to it.

    Its robot keeps its names (prefix ''), and its config is the world's.
    """
    name = getattr(description.robot, 'name', '') or 'robot'
    robot = WorldRobot(name, description, config, ((0.0,) * 3, (0.0,) * 3), prefix='')
    return World(config, (robot,), config.source)


def _path(what, key, text, base_dir):
    """Resolve a description or config path (relative, absolute, package://) or fail."""
    found = resolve_mesh_uri(text, base_dir=base_dir)
    if found is None or not os.path.isfile(found):
        raise ConfigError(f"{what}: its {key} '{text}' was not found (relative paths are read "
                          f"from '{base_dir}').  Fix the path.")
    return os.path.normpath(str(found))


def _rpy(rotation):
    """URDF roll, pitch, yaw of a rotation matrix (R = Rz(yaw) Ry(pitch) Rx(roll))."""
    from transforms3d.euler import mat2euler
    return mat2euler(rotation, 'sxyz')


def build_world(world, config=None, mesh_cache=None):
    """
    Build one model of every robot of ``world``; return (RobotModel, SimConfig).

    Args:
        world: World from :func:`load_world`.
        config: the merged SimConfig to build with (None: :func:`world_config`); a spawn
            rebuilds with the config it changed.
        mesh_cache: optional dict of mesh hulls kept between builds.

    Raises:
        ConfigError, DescriptionError: naming the robot.
    """
    config = world_config(world) if config is None else config
    mesh_cache = {} if mesh_cache is None else mesh_cache
    bodies, joints, order, links, drives, sensors, imus, merged = [], [], [], {}, [], [], [], []
    ranges = []
    shapes, never, warnings, parts = [], set(), [], []
    for robot in world.robots:
        prefix = robot.own_prefix
        own = replace(robot.config, scene={}, ground=replace(robot.config.ground, enabled=False))
        try:
            model = _ModelBuilder(robot.description, own, mesh_cache).build(shapes=False)
            _check_links(own, model)
            found = []
            if own.collision.enabled:
                found = link_shapes(model, robot.description, own, mesh_cache, warnings,
                                    world=True)
            pairs = _filter(robot.description, own, found, model.links)
        except (ConfigError, DescriptionError) as error:
            raise type(error)(f"robot '{robot.name}': {error}") from None
        offset, joint_offset = len(bodies), len(joints)
        moved = _mover(offset)
        bodies.extend(replace(b, name=prefix + b.name, links=tuple(prefix + x for x in b.links))
                      for b in model.bodies)
        joints.extend(_joint(j, prefix, moved) for j in model.joints)
        order.extend(i + joint_offset for i in model.tree_order)
        for name, frame in model.links.items():
            links[prefix + name] = replace(frame, name=prefix + name, body=moved(frame.body))
        drives.extend(replace(d, joint=prefix + d.joint) for d in model.drives)
        sensors.extend(replace(s, name=prefix + s.name, joint=prefix + s.joint)
                       for s in model.sensors)
        imus.extend(replace(m, name=prefix + m.name, link=prefix + m.link,
                            topic=m.topic or f'{m.name}/imu') for m in model.imus)
        ranges.extend(replace(r, name=prefix + r.name, link=prefix + r.link)
                      for r in model.range_sensors)
        merged.extend(prefix + name for name in model.merged_joints)
        shapes.extend(replace(s, name=prefix + s.name, body=moved(s.body)) for s in found)
        never |= {frozenset(prefix + x for x in pair) for pair in pairs}
        warnings.extend(f"robot '{robot.name}': {w}" for w in model.warnings)
        parts.append(RobotPart(
            name=robot.name, prefix=prefix, root_link=prefix + model.root_link,
            floating=model.floating_base, base_body=offset if model.floating_base else -1,
            base_pos=np.asarray(model.base_pos, float), base_quat=np.asarray(model.base_quat,
                                                                             float),
            links=tuple(prefix + x for x in model.links),
            joints=tuple(prefix + j.name for j in model.joints),
            source=robot.description.source))
    first = parts[0]
    model = RobotModel(
        name='world', bodies=tuple(bodies), joints=tuple(joints), tree_order=tuple(order),
        links=links, root_link=first.root_link, floating_base=first.floating and
        first.base_body == 0, merged_joints=tuple(merged), warnings=tuple(warnings),
        base_pos=first.base_pos, base_quat=first.base_quat, drives=tuple(drives),
        sensors=tuple(sensors), imus=tuple(imus), robots=tuple(parts),
        range_sensors=tuple(ranges))
    touching = len(parts) > 1 or any(r.config.collision.self_collision
                                     or r.config.collision.self_collision_pairs
                                     for r in world.robots)
    model = finish_shapes(model, shapes, lambda kept: frozenset(never), config, mesh_cache,
                          warnings, touching, any(p.floating for p in parts))
    return model, config


def _mover(offset):
    """Return body index -> index in the world (the world body -1 stays)."""
    def moved(body):
        return body + offset if body >= 0 else body
    return moved


def _joint(joint, prefix, moved):
    """Return a robot's JointModel as the world has it: prefixed names, moved bodies."""
    kind, colon, rest = joint.name.partition(':')
    name = f'{kind}:{prefix}{rest}' if colon and joint.element else prefix + joint.name
    mimic = joint.mimic
    if mimic is not None:
        mimic = replace(mimic, leader=prefix + mimic.leader)
    parent_link = joint.parent_link if joint.parent_link in ('', 'world') else \
        prefix + joint.parent_link
    return replace(joint, name=name, parent_body=moved(joint.parent_body),
                   child_body=moved(joint.child_body), mimic=mimic, parent_link=parent_link,
                   child_link=prefix + joint.child_link if joint.child_link else '')


def world_config(world):
    """
    Return the SimConfig a world's Simulator runs with.

    The world's settings, and every robot's name-keyed sections (initial positions, joint
    overrides, sensors, elements, grasps, its scene objects...) with their names and the names
    they refer to prefixed ``NAME/``; a robot's ``joint_sensors['*']`` becomes one entry per
    joint of that robot.
    """
    base = world.config
    sections = {key: dict(getattr(base, key)) if key == 'scene' else {} for key in _KEYED}
    kept = []
    for robot in world.robots:
        prefix = robot.own_prefix
        own = robot.config
        links = {link.name for link in robot.description.robot.links}
        names = links | {j.name for j in robot.description.robot.joints} | set(own.scene)
        for key in _KEYED:
            if key == 'scene' and not prefix:
                continue  # the first robot's config is the world's: its scene is there
            for item_name, item in getattr(own, key).items():
                if key == 'joint_sensors' and item_name == '*':
                    for joint in robot.description.robot.joints:
                        if joint.type in ('revolute', 'continuous', 'prismatic'):
                            sections[key].setdefault(prefix + joint.name, item)
                    continue
                new_name = prefix + item_name
                if new_name in sections[key]:
                    raise ConfigError(f"{world.source}: {key} '{new_name}' is defined twice.")
                sections[key][new_name] = _prefixed_item(item, prefix, names)
        kept.extend(prefix + name for name in own.keep_fixed_joints)
    return replace(base, keep_fixed_joints=tuple(kept),
                   source=world.source, **sections)


def _prefixed_item(item, prefix, names):
    """Return a section's item with the names it refers to prefixed."""
    if not hasattr(item, '__dataclass_fields__'):
        return item
    changes = {}
    for f in fields(item):
        value = getattr(item, f.name)
        if f.name in _NAME_FIELDS and isinstance(value, str) and value in names:
            changes[f.name] = prefix + value
    return replace(item, **changes) if changes else item


def load_world_model(source, formulation=''):
    """Return (World, RobotModel, SimConfig) of a world file or mapping (one call)."""
    world = load_world(source)
    if formulation:
        world = replace(world, config=with_formulation(world.config, formulation))
    model, config = build_world(world)
    return world, model, config


__all__ = ['build_world', 'load_world', 'load_world_model', 'robot_entry',
           'single_robot_world', 'World', 'WorldRobot', 'world_config']
