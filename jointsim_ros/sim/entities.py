"""
The world's entities: the robot's links and the scene objects, as a simulator interface sees them.

The ROS 2 simulator standard (``simulation_interfaces``: the node's ``~/get_entities``,
``~/spawn_entity``... services, docs/entities.md) works on named entities.  Here they are every
URDF link of the robot and every scene object (config ``scene``, and those spawned at run
time).  This component (``Simulator.entities``) lists them, reads their ground-truth state,
sets it, and spawns and deletes scene objects while the simulation runs.

Spawning adds a scene object to the config (a ``urdf`` object, or a shape given by the scene
keys) and rebuilds the model and the engine; every body that was there keeps its state exactly
(positions, orientations, velocities, momenta, applied wrenches), the joints, drives and
elements keep theirs, and the contact points carry over so warm starting goes on.  A spawn
that would put the object into another body (deeper than OVERLAP_TOLERANCE) is refused and
changes nothing.  No rclpy here.
"""
from collections import namedtuple
import dataclasses
import os
import re

import numpy as np
import transforms3d
import yaml

from ..description import build_model, config_from_dict, parse_urdf
from ..description import meshes
from ..description.urdf import close_matches
from ..description.world import build_world
from ..errors import CommandError, ConfigError, DescriptionError
from ..physics.arrays import State
from ..rotations import quat_conjugate, quat_multiply, quat_to_matrix

#: An entity name: a TF frame id and a ROS name part (letters, digits, underscores).
ENTITY_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
#: Deepest a spawned object may start inside another body, m.
OVERLAP_TOLERANCE = 1e-3
#: Spawnable formats: URDF (or xacro) and a shape given by the config's scene keys (YAML).
SPAWN_FORMATS = ('urdf', 'xacro', 'yaml')
URDF_SUFFIXES = ('.urdf', '.xacro', '.xml')
YAML_SUFFIXES = ('.yaml', '.yml')
_BODY_FIELDS = ('body_pos', 'body_quat', 'body_lin_vel', 'body_ang_mom', 'body_wrench')
_CONTACT_FIELDS = ('shape', 'body', 'pos', 'local', 'normal', 'depth', 'impulse', 'frame', 'id',
                   'material', 'manifold')

#: Ground truth of an entity's frame, world axes: position (m), orientation (wxyz), the
#: velocity of its origin (m/s) and its angular velocity (rad/s), and their change over the
#: last step (m/s^2, rad/s^2; zero before the first step and after a state was set).
EntityState = namedtuple('EntityState', ['position', 'quat', 'linear_velocity',
                                         'angular_velocity', 'linear_acceleration',
                                         'angular_acceleration'])


class EntityError(CommandError):
    """
    An entity request that cannot be done; nothing was changed.

    Attributes:
        kind: what went wrong, for a front end's result code: 'not_found' (no such entity or
            file), 'name_taken', 'name_invalid', 'no_resource', 'format' (not URDF or YAML),
            'parse' (the resource does not make an object), 'invalid_pose' (a bad pose or
            inside another body), 'unsupported' (this simulator cannot), 'failed' (refused:
            the message says why).
    """

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class Entities:
    """
    The robot's links and the scene objects (``Simulator.entities``).

    Attributes:
        spawned: names of the objects spawned at run time, in spawn order.
    """

    def __init__(self, sim):
        self._sim = sim
        self.spawned = []
        #: The robots spawned at run time (delete_spawned removes them too).
        self.spawned_robots = []
        self._mesh_cache = {}

    # -- what there is ------------------------------------------------------------------------
    @property
    def spawn_refusal(self):
        """Why this simulator cannot spawn (a sentence), or None when it can."""
        sim = self._sim
        if sim.description is None and sim.world is None:
            return ('this Simulator was built from a model without its description; build it '
                    'with Simulator.from_urdf (or load_robot) to spawn objects')
        return None

    def names(self):
        """Every entity: the robots' links (URDF order), the scene objects, then the robots."""
        scene = set(self._sim.config.scene)
        links = [name for name in self._sim.model.links if name not in scene]
        return links + list(self._sim.config.scene) + self.robot_names()

    def kind(self, name):
        """Return 'link' (of a robot), 'object' (config scene), 'spawned' or 'robot'."""
        if name in self.robot_names():
            return 'robot'
        self._check(name, 'entity')
        if name in self.spawned:
            return 'spawned'
        return 'object' if name in self._sim.config.scene else 'link'

    def _check(self, name, what):
        if name not in self._sim.model.links:
            hint = close_matches(name, self.names())
            raise EntityError('not_found', f'{what}: no entity named {name!r}'
                              + (f' ({hint})' if hint else '')
                              + "; get_entities lists them (the robot's links and the scene "
                                'objects).')

    def state(self, name):
        """
        Return the EntityState of an entity's frame (a link's or an object's).

        Raises:
            EntityError: unknown entity ('not_found').
        """
        name = self._robot_root(name)
        self._check(name, 'get_entity_state')
        sim = self._sim
        position, quat = sim.link_pose(name)
        linear, angular = sim.link_twist(name)
        acc_linear, acc_angular = np.zeros(3), np.zeros(3)
        link = sim.model.links[name]
        engine = sim._engine
        if link.body >= 0 and sim.time > 0.0:
            start = engine.step_start()[link.body]
            if np.any(start[3:7]):
                rot0 = quat_to_matrix(start[3:7])
                w0 = rot0 @ engine.bodies.inv_inertia[link.body] @ rot0.T @ start[10:13]
                offset = np.asarray(link.pos, float) - engine.body_com[link.body]
                v0 = start[7:10] + np.cross(w0, rot0 @ offset)
                acc_linear = (linear - v0) / sim.dt
                acc_angular = (angular - w0) / sim.dt
        return EntityState(position, quat, linear, angular, acc_linear, acc_angular)

    # -- setting state ------------------------------------------------------------------------
    def set_state(self, name, position, quat, linear_velocity=None, angular_velocity=None):
        """
        Place an entity's frame and give it a velocity (world axes), at once.

        A scene object moves alone; the robot's base link (a floating base) carries the robot
        along, its joints as they are.  Other links are held by their joints, and static
        geometry does not move: both are refused.

        Args:
            position: (3,) m; quat: (4,) wxyz (normalised here); linear_velocity: (3,) m/s of
                the frame's origin; angular_velocity: (3,) rad/s (both default 0).

        Raises:
            EntityError: unknown entity, a link that is not the base, static geometry
                ('failed'), or a non-finite value or zero quaternion ('invalid_pose').
        """
        name = self._robot_root(name)
        self._check(name, 'set_entity_state')
        pos, quat, lin, ang = _pose_values(position, quat, linear_velocity, angular_velocity,
                                           'set_entity_state')
        sim = self._sim
        link = sim.model.links[name]
        if link.body < 0:
            what = ('a static scene object' if name in sim.config.scene
                    else 'fixed to the world')
            raise EntityError('failed', f'set_entity_state: {name!r} is {what}: it does not '
                                        'move.  Delete it and spawn it again where you want it.')
        if name not in sim.config.scene:
            root, robot, floating = sim.model.root_link, None, sim.model.floating_base
            for part in sim.model.robots:
                if name in part.links:
                    root, robot, floating = part.root_link, part.name, part.floating
            if not (floating and link.body == sim.model.links[root].body):
                joint = next((j for j in sim.model.joints
                              if j.child_body == link.body), None)
                held = (f'held by the joint {joint.name!r} ({joint.type})' if joint is not None
                        else 'part of the robot')
                base = (f'set the state of the base link {root!r} or move the joints'
                        if sim.model.floating_base else
                        f'the robot {sim.model.name!r} has a fixed base: move its joints')
                raise EntityError(
                    'failed', f'set_entity_state: the link {name!r} is {held}; {base} '
                              '(set_joint_state, joint commands).  Nothing was changed.')
            # the base: its root link frame, from this link's pose on the same body
            root_pos, root_quat = _compose_root(sim, name, pos, quat, root)
            offset = root_pos - pos
            sim.set_base_state(root_pos, root_quat, lin + np.cross(ang, offset), ang,
                               robot=robot)
        else:
            engine = sim._engine
            com = quat_to_matrix(quat) @ engine.body_com[link.body]
            engine.set_body_state(link.body, pos + com, quat, lin + np.cross(ang, com), ang)
            engine.bodies_set(bodies=[link.body])
        self._settle(link.body)

    def _settle(self, body):
        """After a state was set: the last step's start is now, so no acceleration shows."""
        self._sim._engine.settle(body)

    # -- spawning and deleting ----------------------------------------------------------------
    def spawn(self, name, source, position=(0.0, 0.0, 0.0), quat=(1.0, 0.0, 0.0, 0.0),
              linear_velocity=None, angular_velocity=None, allow_renaming=False):
        """
        Add a scene object while the simulation runs.

        Args:
            name: its name (a TF frame); '' takes the URDF's robot name (or, for a shape, its
                kind) and needs ``allow_renaming`` when that is taken.
            source: the URDF or xacro text (starts with '<'); a path or URI (``package://``,
                ``file://``) of a .urdf/.xacro file or of a .yaml file of scene keys; or a
                mapping of the config's scene keys (a shape: ``{shape: box, size: [...],
                mass: ...}``, docs/config.md).  A URDF object is one rigid body.
            position, quat: where its frame goes, m and wxyz (world).
            linear_velocity, angular_velocity: its initial twist (m/s, rad/s; default 0).
            allow_renaming: a taken name gets a suffix (_1, _2...) instead of a refusal.

        Returns:
            the name it was given.

        Raises:
            EntityError: nothing was changed; ``kind`` says why (name_taken, name_invalid,
            no_resource, not_found, format, parse, invalid_pose, unsupported).
        """
        refusal = self.spawn_refusal
        if refusal is not None:
            raise EntityError('unsupported', f'spawn_entity: {refusal}.')
        pos, quat, lin, ang = _pose_values(position, quat, linear_velocity, angular_velocity,
                                           'spawn_entity')
        item, resource_name = self._item(source)
        name = self._free_name(name or '', resource_name, item.get('shape', 'robot'),
                               allow_renaming)
        rpy = transforms3d.euler.quat2euler(quat, 'sxyz')
        if 'robot' in item:
            return self._spawn_robot(name, item, pos, rpy)
        item.update(pose={'position': [float(v) for v in pos], 'rpy': [float(v) for v in rpy]},
                    linear_velocity=[float(v) for v in lin],
                    angular_velocity=[float(v) for v in ang])
        try:
            settings = config_from_dict({'scene': {name: item}},
                                        source='spawn_entity').scene[name]
        except ConfigError as error:
            raise EntityError('parse', f'spawn_entity {name!r}: {error}') from None
        sim = self._sim
        config = dataclasses.replace(sim.config, scene={**sim.config.scene, name: settings})
        self._rebuild(config, new=(name, pos, quat, lin, ang))
        self.spawned.append(name)
        return name

    def _spawn_robot(self, name, item, pos, rpy):
        """Add a robot (a URDF with moving joints) named ``name`` at the pose; return the name."""
        sim = self._sim
        try:
            sim.add_robot(name, item['robot'], item['config'], position=pos, rpy=rpy)
        except (ConfigError, DescriptionError, CommandError) as error:
            raise EntityError('parse', f'spawn_entity {name!r}: {error}') from None
        sim.entities.spawned_robots = self.spawned_robots + [name]
        return name

    def _robot_root(self, name):
        """Return a robot's root link for its name (an entity's name otherwise unchanged)."""
        for part in self._sim.model.robots:
            if part.name == name and part.prefix:
                return part.root_link
        return name

    def robot_names(self):
        """Return the robots added to the world or given by its file (not a lone robot)."""
        world = self._sim.world
        return [r.name for r in world.robots if r.own_prefix] if world is not None else []

    def delete(self, name):
        """
        Remove a scene object (spawned or from the config).

        Raises:
            EntityError: unknown entity ('not_found'), a link of the robot or an object a
                grasp holds on to ('failed').
        """
        sim = self._sim
        if name in self.robot_names():
            spawned = [r for r in self.spawned_robots if r != name]
            sim.remove_robot(name)
            sim.entities.spawned_robots = spawned
            return
        self._check(name, 'delete_entity')
        if name not in sim.config.scene:
            raise EntityError('failed', f'delete_entity: {name!r} is a link of the robot '
                                        f'{sim.model.name!r}; only scene objects can be deleted.')
        users = [g for g, item in sim.config.grasps.items() if name in (item.object, item.link)]
        if users:
            raise EntityError('failed', f'delete_entity: the grasp {users[0]!r} (config grasps) '
                                        f'holds on to {name!r}; it cannot be deleted.')
        refusal = self.spawn_refusal
        if refusal is not None:
            raise EntityError('unsupported', f'delete_entity: {refusal}.')
        scene = {k: v for k, v in sim.config.scene.items() if k != name}
        self._rebuild(dataclasses.replace(sim.config, scene=scene))
        if name in self.spawned:
            self.spawned.remove(name)

    def delete_spawned(self):
        """
        Remove every object and robot spawned at run time; return their names.

        The config's scene and the world file's robots stay.
        """
        robots = list(self.spawned_robots)
        if robots:
            sim = self._sim
            for name in robots:
                sim.entities.delete(name)
            return robots + sim.entities.delete_spawned()
        gone = list(self.spawned)
        if gone:
            sim = self._sim
            scene = {k: v for k, v in sim.config.scene.items() if k not in gone}
            self._rebuild(dataclasses.replace(sim.config, scene=scene))
            self.spawned = []
        return gone

    def _item(self, source):
        """Return (scene item dict, default name) of a spawn source."""
        if isinstance(source, dict):
            return self._shape_item(dict(source), 'a shape mapping')
        text = str(source or '').strip()
        if not text:
            raise EntityError('no_resource', 'spawn_entity: neither a uri nor a resource_string '
                                             'was given; give one (a URDF, or the YAML of a '
                                             'shape).')
        if text.startswith('<'):
            return self._urdf_item({'shape': 'urdf', 'urdf': text}, text, 'the URDF text')
        looks_like_path = ('\n' not in text and ':' not in text.replace('://', '')
                           and (text.startswith(('package://', 'model://', 'file://'))
                                or os.path.splitext(text)[1] != ''))
        if looks_like_path:
            path = meshes.resolve_mesh_uri(text, base_dir=os.getcwd(),
                                           search_paths=self._sim.config.collision.mesh_paths)
            if path is None:
                raise EntityError('not_found', f"spawn_entity: '{text}' was not found (looked "
                                               'in AMENT_PREFIX_PATH, ROS_PACKAGE_PATH, the '
                                               'working directory and collision.mesh_paths).')
            suffix = os.path.splitext(str(path))[1].lower()
            if suffix in URDF_SUFFIXES:
                return self._urdf_item({'shape': 'urdf', 'filename': str(path)}, str(path),
                                       f"'{text}'")
            if suffix in YAML_SUFFIXES:
                try:
                    with open(path, encoding='utf-8') as stream:
                        data = yaml.safe_load(stream)
                except (OSError, yaml.YAMLError) as error:
                    raise EntityError('parse', f"spawn_entity: '{text}' is not readable YAML: "
                                               f'{_first_line(error)}') from None
                return self._shape_item(data, f"'{text}'")
            raise EntityError('format', f"spawn_entity: '{text}' is neither URDF (.urdf, "
                                        '.xacro) nor YAML (.yaml: a shape in the scene keys); '
                                        f'this simulator spawns {", ".join(SPAWN_FORMATS)}.')
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            data = None
        if not isinstance(data, dict):
            raise EntityError('format', 'spawn_entity: the resource_string is neither URDF '
                                        '(starts with <) nor a YAML mapping of scene keys '
                                        '({shape: box, size: [...], mass: ...}).')
        return self._shape_item(data, 'the resource_string')

    @staticmethod
    def _urdf_item(item, source, what):
        try:
            description = parse_urdf(source)
        except DescriptionError as error:
            raise EntityError('parse', f'spawn_entity: {what} does not parse: {error}') from None
        if any(j.type != 'fixed' for j in description.robot.joints):
            # moving joints: a robot of its own (docs/worlds.md)
            return {'robot': source, 'config': None}, description.robot.name or ''
        return item, description.robot.name or ''

    @staticmethod
    def _shape_item(data, what):
        if isinstance(data, dict) and 'description' in data and 'shape' not in data:
            unknown = [k for k in data if k not in ('description', 'config')]
            if unknown:
                raise EntityError('parse', f'spawn_entity: {what} names a robot (description) '
                                           f'and has the unknown key {unknown[0]!r}; a robot '
                                           'takes description and config.')
            return {'robot': data['description'], 'config': data.get('config')}, ''
        if not isinstance(data, dict) or 'shape' not in data:
            raise EntityError('parse', f'spawn_entity: {what} is not a mapping with a shape '
                                       '(box, sphere, cylinder, capsule, mesh or urdf) and its '
                                       'scene keys (docs/config.md, scene).')
        data.pop('pose', None)  # the request's pose places it
        data.pop('linear_velocity', None)
        data.pop('angular_velocity', None)
        return data, ''

    def _free_name(self, name, resource_name, generated, allow_renaming):
        """
        Return the name to give, or raise name_invalid / name_taken.

        The request's name, else the resource's (a URDF's robot name), else with
        ``allow_renaming`` one made from ``generated`` (the shape's kind).
        """
        chosen = name or resource_name
        if not chosen:
            if not allow_renaming:
                raise EntityError('name_invalid', 'spawn_entity: no name was given and the '
                                                  'resource names none; give a name (or set '
                                                  'allow_renaming for one made up).')
            chosen = generated
        if not ENTITY_NAME.match(chosen):
            raise EntityError('name_invalid', f'spawn_entity: {chosen!r} is not a valid entity '
                                              'name: use letters, digits and underscores, not '
                                              'starting with a digit (it becomes a TF frame).')
        taken = set(self._sim.model.links) | set(self._sim.config.scene) | set(
            self.robot_names())
        if chosen in taken:
            if not allow_renaming:
                what = ('a robot' if chosen in self.robot_names() else 'a scene object'
                        if chosen in self._sim.config.scene else 'a robot link')
                raise EntityError('name_taken', f'spawn_entity: the name {chosen!r} is taken '
                                                f'({what}); give another name or set '
                                                'allow_renaming.')
            k = 1
            while f'{chosen}_{k}' in taken:
                k += 1
            chosen = f'{chosen}_{k}'
        return chosen

    # -- the rebuild --------------------------------------------------------------------------
    def _rebuild(self, config, new=None):
        """
        Rebuild model and engine for ``config``; every body keeps its state.

        ``new``: (name, position, quat, linear, angular) of a spawned object, placed there and
        checked for overlap (refused: the old engine is put back).
        """
        from .simulator import _make_engine
        sim = self._sim
        old = (sim.model, sim.config, sim._engine, sim.link_names)
        try:
            if sim.world is not None:
                model, config = build_world(sim.world, config, mesh_cache=self._mesh_cache)
            else:
                model = build_model(sim.description, config, mesh_cache=self._mesh_cache)
        except (ConfigError, DescriptionError) as error:
            raise EntityError('parse', f'spawn_entity: {error}') from None
        engine = _make_engine(model, config)
        _carry_state(old[2], old[0], engine, model)
        sim.model, sim.config, sim._engine = model, config, engine
        sim.link_names = tuple(model.links)
        if new is None:
            return
        name, pos, quat, lin, ang = new
        link = model.links[name]
        if link.body >= 0:
            com = quat_to_matrix(quat) @ engine.body_com[link.body]
            engine.set_body_state(link.body, pos + com, quat, lin + np.cross(ang, com), ang)
            engine.bodies_set(bodies=[link.body], forget_contacts=False)
            self._settle(link.body)
        overlap = _overlap(sim, name)
        if overlap is not None:
            sim.model, sim.config, sim._engine, sim.link_names = old
            other, depth, where = overlap
            raise EntityError(
                'invalid_pose', f'spawn_entity: {name!r} would start {depth * 1e3:.1f} mm inside '
                                f'{other!r} (at {_vector_text(where)} m; more than '
                                f'{OVERLAP_TOLERANCE * 1e3:g} mm is refused).  Spawn it '
                                'elsewhere.  Nothing was changed.')


def _carry_state(old_engine, old_model, engine, model):
    """Copy the old engine's state into the new one (:func:`carry_state`)."""
    carry_state(old_engine, old_model, engine, model)


#: State fields by what their first index counts (the rest: bodies, _BODY_FIELDS, or copied).
_JOINT_FIELDS = ('joint_q', 'joint_effort', 'joint_row_rate', 'joint_anchor', 'joint_length',
                 'joint_active')
_DRIVE_FIELDS = ('drive_voltage', 'drive_current', 'rotor_speed', 'drive_impulse',
                 'drive_effort')
_AXIS_FIELDS = ('axis_impulse', 'axis_rate', 'axis_prescribed', 'axis_target_rate',
                'axis_target_q')


def _index_map(old_keys, new_keys):
    """Return (n_old,) the new index of each old key, -1 where gone."""
    new_index = {key: i for i, key in enumerate(new_keys)}
    return np.array([new_index.get(key, -1) for key in old_keys], dtype=np.int64)


def _copy_mapped(src, dst, old_to_new):
    kept = old_to_new >= 0
    dst[old_to_new[kept]] = src[kept]


def _row_blocks(engine, names):
    """Return {(kind, joint name): (first row, rows)} of an engine's constraint blocks."""
    blocks = getattr(engine, 'blocks', None)
    if blocks is None:
        return {}
    out = {}
    for k in range(len(blocks.dim)):
        j = int(blocks.source[k])
        if int(blocks.kind[k]) != 0:  # a mimic block: named by its follower
            j = int(engine.mimics.follower[j])
        out[(int(blocks.kind[k]), names[j])] = (int(blocks.row0[k]), int(blocks.dim[k]))
    return out


def _carry_rows(old_engine, engine, old_joints, new_joints):
    """Carry the joint rows' and multi-DOF friction's impulses, block by block, joint by joint."""
    new_blocks = _row_blocks(engine, new_joints)
    src, dst = old_engine.state.row_impulse, engine.state.row_impulse
    for key, (r0, d) in _row_blocks(old_engine, old_joints).items():
        if key in new_blocks and new_blocks[key][1] == d:
            n0 = new_blocks[key][0]
            dst[n0:n0 + d] = src[r0:r0 + d]
    free_map = _index_map([old_joints[j] for j in old_engine.free.joint],
                          [new_joints[j] for j in engine.free.joint])
    _copy_mapped(old_engine.state.free_impulse, engine.state.free_impulse, free_map)


def carry_state(old_engine, old_model, engine, model):
    """
    Copy the old engine's state into the new one, matched by name.

    Bodies and joints by their names, drives and axes by their joint's (a rebuild for a
    spawned object or an added or removed robot).

    Where the joints stayed as they were (a scene object spawned or deleted), every field is
    carried as it is; otherwise the constraint rows' impulses go block by block (maximal
    mode) and the multi-DOF friction's joint by joint, so the robots kept step on as before.
    """
    old_to_new = _index_map([b.name for b in old_model.bodies], [b.name for b in model.bodies])
    kept = old_to_new >= 0
    old_joints = [j.name for j in old_model.joints]
    new_joints = [j.name for j in model.joints]
    same_joints = old_joints == new_joints
    joint_map = _index_map(old_joints, new_joints)
    drive_map = _index_map([d.joint for d in old_model.drives], [d.joint for d in model.drives])
    axis_map = _index_map([old_joints[j] for j in old_engine.axes.joint],
                          [new_joints[j] for j in engine.axes.joint])
    for field in State._fields:
        src, dst = getattr(old_engine.state, field), getattr(engine.state, field)
        if field in _BODY_FIELDS:
            dst[old_to_new[kept]] = src[kept]
        elif same_joints or field == 'time':
            dst[...] = src
        elif field in _JOINT_FIELDS:
            _copy_mapped(src, dst, joint_map)
        elif field in _DRIVE_FIELDS:
            _copy_mapped(src, dst, drive_map)
        elif field in _AXIS_FIELDS:
            _copy_mapped(src, dst, axis_map)
    if not same_joints:
        _carry_rows(old_engine, engine, old_joints, new_joints)
    engine.step_start()[old_to_new[kept]] = old_engine.step_start()[kept]
    if hasattr(engine, 'work'):  # the maximal engine's rotors and loops
        _copy_mapped(old_engine.work.drive_backup, engine.work.drive_backup, drive_map)
        engine._loops_closed = old_engine._loops_closed
    _copy_mapped(old_engine.joints.cpos, engine.joints.cpos, joint_map)
    _copy_mapped(old_engine.joints.cquat, engine.joints.cquat, joint_map)
    engine.info[...] = old_engine.info
    # a formulation with coordinates of its own takes them too (the tree's, node by node)
    engine.carry_from(old_engine, old_to_new)
    # the contact points, shapes and bodies renumbered, so warm starting goes on
    new_shape = {}
    for i, shape in enumerate(model.shapes):
        new_shape.setdefault(shape.name, []).append(i)
    shape_map = np.full(len(old_model.shapes), -1, dtype=np.int64)
    seen = {}
    for i, shape in enumerate(old_model.shapes):
        k = seen.get(shape.name, 0)
        seen[shape.name] = k + 1
        if k < len(new_shape.get(shape.name, ())):
            shape_map[i] = new_shape[shape.name][k]
    old, count = old_engine.contacts, int(old_engine.contacts.count[0])
    keep = [i for i in range(count)
            if shape_map[old.shape[i, 0]] >= 0 and shape_map[old.shape[i, 1]] >= 0]
    if len(keep) > len(engine.contacts.id):
        engine._allocate_contacts(2 * len(keep), len(engine.cwork.pairs))
    c = engine.contacts
    for field in _CONTACT_FIELDS:
        getattr(c, field)[:len(keep)] = getattr(old, field)[keep]
    c.shape[:len(keep)] = shape_map[c.shape[:len(keep)]]
    bodies = c.body[:len(keep)]
    c.body[:len(keep)] = np.where(bodies >= 0, old_to_new[np.maximum(bodies, 0)], -1)
    c.count[:] = len(keep)
    c.next_id[:] = old.next_id


def _overlap(sim, name):
    """
    Take one trial step and undo it; return where ``name`` overlaps another body.

    Returns:
        (other entity, depth m, point) of the deepest contact of ``name``'s shapes deeper than
        OVERLAP_TOLERANCE, or None.
    """
    engine = sim._engine
    mine = {i for i, shape in enumerate(sim.model.shapes) if shape.name == name}
    names = [shape.name for shape in sim.model.shapes]
    saved = engine.snapshot()
    engine.step(1)
    c = engine.contacts
    worst = None
    for i in range(int(c.count[0])):
        a, b = int(c.shape[i, 0]), int(c.shape[i, 1])
        if (a in mine) == (b in mine):
            continue
        depth = float(c.depth[i])
        if depth > OVERLAP_TOLERANCE and (worst is None or depth > worst[1]):
            worst = (names[b] if a in mine else names[a], depth, c.pos[i].copy())
    engine.restore(saved)
    return worst


def _pose_values(position, quat, linear_velocity, angular_velocity, what):
    """Return finite (pos, unit quat, lin, ang) arrays or raise invalid_pose."""
    values = [np.asarray(v if v is not None else np.zeros(3), dtype=float).ravel()
              for v in (position, quat, linear_velocity, angular_velocity)]
    if any(v.size != n or not np.all(np.isfinite(v)) for v, n in zip(values, (3, 4, 3, 3))):
        raise EntityError('invalid_pose', f'{what}: the position, orientation and twist must be '
                                          'finite (3, 4, 3 and 3 numbers).  Nothing was '
                                          'changed.')
    pos, quat, lin, ang = values
    norm = float(np.linalg.norm(quat))
    if norm < 1e-6:
        raise EntityError('invalid_pose', f'{what}: the orientation quaternion is zero; give a '
                                          'unit quaternion (w = 1 for none).  Nothing was '
                                          'changed.')
    return pos, quat / norm, lin, ang


def _compose_root(sim, name, pos, quat, root_link=None):
    """Return the root link's pose that puts link ``name`` (on the root's body) at pos, quat."""
    root = sim.model.links[root_link or sim.model.root_link]
    link = sim.model.links[name]
    # body frame from the link's pose: body = link * inv(link in body)
    body_quat = quat_multiply(quat, quat_conjugate(np.asarray(link.quat, float)))
    body_pos = pos - quat_to_matrix(body_quat) @ np.asarray(link.pos, float)
    root_quat = quat_multiply(body_quat, np.asarray(root.quat, float))
    root_pos = body_pos + quat_to_matrix(body_quat) @ np.asarray(root.pos, float)
    return root_pos, root_quat


def _vector_text(v):
    return '(' + ', '.join(f'{x:.3f}' for x in v) + ')'


def _first_line(error):
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
