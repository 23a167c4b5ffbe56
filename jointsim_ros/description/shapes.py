"""
Collision shapes of the model: the robot's ``<collision>`` elements, the ground and the scene.

A built RobotModel goes in, the same model with ``shapes``, ``objects`` (free scene bodies,
appended after the robot's bodies, each with a link frame of its own name),
``collision_filter`` and the engine's ``collision_tables`` (shape_tables.py) comes out
(docs/contacts.md):
- link shapes sit in their body frame (merged links included); meshes are resolved
  (``package://``, ``model://``, ``file://``, relative to the URDF, ``collision.mesh_paths``) and
  used as convex hulls of at most ``collision.max_hull_vertices`` vertices; a mesh that cannot
  be found or read is a warning, and the link gets the box of its own inertia instead (the solid
  box with the link's mass and principal moments);
- materials: ``collision`` defaults, overridden per link by the URDF's Gazebo tags (``kp``, ``kd``,
  ``mu1``/``mu2``, ``minDepth``, ``maxVel``: urdf.py) and then by the config's ``contacts``;
- the body-pair filter: links joined by a joint never collide; other robot pairs only with
  ``self_collision`` or when listed in ``self_collision_pairs``; ``disabled_pairs`` never.
"""
import dataclasses
import logging
import os

import numpy as np

from . import meshes
from .config import config_from_dict, MATERIAL_NAMES, MaterialOverrides
from .geometry import Transform
from .model import BodyModel, LinkFrame, SceneObject, ShapeModel
from .shape_tables import shape_tables
from .urdf import close_matches
from ..errors import ConfigError
from ..rotations import quat_to_matrix, rpy_to_matrix

LOGGER = logging.getLogger('jointsim_ros')
#: The hulls made in this process, by file (path, modification time, size), scale and
#: max_hull_vertices: a model rebuilt (a spawn, a sweep's next load) does not read and hull its
#: meshes again.  A few kB per mesh.
_HULLS = {}
MATERIAL = MATERIAL_NAMES  # the engine's material columns, in order
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def add_shapes(model, description, config, mesh_cache=None):
    """
    Return the model with its collision shapes, scene objects and collision filter.

    Args:
        model: RobotModel without shapes.
        description: the UrdfDescription it was built from (collisions, base_dir, robot).
        config: SimConfig (ground, contacts, collision, scene).
        mesh_cache: optional dict kept between builds (the hulls of meshes already read, so a
            rebuild for a spawned object does not read and hull them again).

    Returns:
        RobotModel; its new warnings are also logged.

    Raises:
        ConfigError: ``contacts`` or a collision pair names a link the robot lacks, or a scene
            object's name is already a link, or a scene object cannot be made.
    """
    settings = config.collision
    warnings = []
    _check_links(config, model)
    mesh_cache = {} if mesh_cache is None else mesh_cache
    shapes = []
    if settings.enabled:
        shapes = link_shapes(model, description, config, mesh_cache, warnings,
                             world=_world_collides(config) or bool(model.range_sensors))
    touching = bool(settings.self_collision or settings.self_collision_pairs)
    return finish_shapes(model, shapes, lambda kept: _filter(description, config, kept,
                                                             model.links),
                         config, mesh_cache, warnings, touching, model.floating_base,
                         description)


def finish_shapes(model, shapes, filter_of, config, mesh_cache, warnings, touching, floating,
                  description=None):
    """
    Return the model with the scene's objects and shapes, the ground, the filter and tables.

    Args:
        model: RobotModel without shapes (a robot's, or a world's robots together).
        shapes: list of the robots' link ShapeModels (appended to in place).
        filter_of: function of the kept shapes -> the robots' never-colliding link pairs.
        config: SimConfig (ground, collision defaults, scene).
        mesh_cache: dict of the hulls already made.
        warnings: list of repairs so far (the scene's are appended).
        touching: the robots' links may touch one another (self-collision, or several robots).
        floating: some robot base is free (a ``ground.enabled: auto`` ground is laid).
        description: the UrdfDescription whose directory relative scene meshes are found
            from (None: the working directory and the search paths).
    """
    settings = config.collision
    default = tuple(getattr(settings, k) for k in MATERIAL)
    bodies = list(model.bodies)
    links = dict(model.links)
    objects = []
    for name, item in config.scene.items():
        if name in links:
            raise ConfigError(f"{config.source}: scene object '{name}' has the name of a robot "
                              'link.  Give it another name (it becomes a TF frame).')
        material = tuple(d if getattr(item, k) is None else getattr(item, k)
                         for k, d in zip(MATERIAL, default))
        position = np.asarray(item.pose.position, dtype=float)
        world = Transform(rpy_to_matrix(item.pose.rpy), position)
        if item.shape == 'urdf':
            mass, com, inertia, parts = urdf_object(item, name, config, mesh_cache)
        else:
            kind, size, inner, vertices, faces = _scene_shape(item, name, description, settings,
                                                              mesh_cache)
            mass, com = item.mass, np.zeros(3)
            inertia = _solid_inertia(kind, size, mass, vertices) if mass > 0.0 else None
            parts = [(kind, size, inner, vertices, faces)]
        if mass > 0.0:
            body = len(bodies)
            bodies.append(BodyModel(name=name, mass=mass, com=com, inertia=inertia,
                                    links=(name,)))
            links[name] = LinkFrame(name=name, body=body, pos=np.zeros(3), quat=IDENTITY)
            objects.append(SceneObject(
                name=name, body=body, pos=position, quat=world.quat,
                linear_velocity=np.asarray(item.linear_velocity, float),
                angular_velocity=np.asarray(item.angular_velocity, float)))
            place = Transform.identity()
        else:
            body = -1
            links[name] = LinkFrame(name=name, body=-1, pos=position, quat=world.quat)
            place = world
        for kind, size, inner, vertices, faces in parts:
            shape_pose = place @ inner
            shapes.append(ShapeModel(name=name, body=body, kind=kind, size=size,
                                     pos=shape_pose.pos, quat=shape_pose.quat, material=material,
                                     vertices=vertices, faces=faces))
    ground = config.ground
    enabled = ground.enabled
    if enabled == 'auto':
        enabled = floating or bool(objects)
    if not (enabled or config.scene or touching or model.range_sensors):
        # nothing for the links to touch and no ray to see them: no contact work at all
        shapes = []
    if enabled:
        shapes.append(ShapeModel(
            name='ground', body=-1, kind='plane', size=(0.0, 0.0, 0.0),
            pos=np.array([0.0, 0.0, ground.height]), quat=IDENTITY,
            material=tuple(getattr(ground, k) for k in MATERIAL)))
    result = dataclasses.replace(
        model, bodies=tuple(bodies), links=links, shapes=tuple(shapes), objects=tuple(objects),
        collision_filter=filter_of(shapes),
        warnings=tuple(model.warnings) + tuple(warnings))
    result = dataclasses.replace(result, collision_tables=shape_tables(result))
    for message in warnings:
        LOGGER.warning(message)
    return result


def link_shapes(model, description, config, mesh_cache, warnings, world=False):
    """
    Return the ShapeModels of the robot's ``<collision>`` elements, in their body frames.

    Args:
        model: RobotModel (its link frames).
        description: the UrdfDescription (its collisions).
        config: SimConfig (collision, contacts).
        mesh_cache: dict of the hulls already made.
        warnings: list the repairs are appended to (a mesh that cannot be used).
        world: give the links fixed to the world their shapes too (world frame).
    """
    settings = config.collision
    default = tuple(getattr(settings, k) for k in MATERIAL)
    shapes = []
    for link_name, geometries in getattr(description, 'collisions', {}).items():
        frame = model.links.get(link_name)
        if frame is None or frame.body < 0 and not world:
            continue
        # the collision defaults, then the URDF's Gazebo tags, then the config's contacts
        tags = getattr(description, 'materials', {}).get(link_name, {})
        material = tuple(tags.get(key, value) for key, value in zip(MATERIAL, default))
        override = config.contacts.get(link_name, MaterialOverrides())
        material = override.resolve(material)
        link_pose = Transform(quat_to_matrix(frame.quat), np.asarray(frame.pos, float))
        for geometry in geometries:
            origin = Transform.from_xyz_rpy(geometry.xyz, geometry.rpy)
            made = _link_shape(geometry, link_name, description, settings, mesh_cache, warnings)
            if made is None:
                made = _inertia_box(description, link_name, warnings)
                if made is None:
                    continue
                pose = link_pose @ made[2]
            else:
                pose = link_pose @ origin @ made[2]
            kind, size, _, vertices, faces = made
            shapes.append(ShapeModel(name=link_name, body=frame.body, kind=kind, size=size,
                                     pos=pose.pos, quat=pose.quat, material=material,
                                     vertices=vertices, faces=faces))
    return shapes


def urdf_object(item, name, config, mesh_cache):
    """
    Return (mass, com, inertia, parts) of a ``urdf`` scene object, in its root link's frame.

    The URDF must be one rigid body: links joined by fixed joints (merged as the robot's
    are).  ``parts`` are (kind, size, pose, vertices, faces) of its ``<collision>`` shapes; a
    URDF without any mass gives mass 0 (static geometry) and inertia None.

    Raises:
        ConfigError: the URDF cannot be read, has a joint that moves, or has no collision shape.
    """
    from .builder import build_model
    from .urdf import parse_urdf
    from ..errors import DescriptionError
    what = f"scene object '{name}'"
    source = item.urdf
    if source is None:
        source = meshes.resolve_mesh_uri(item.filename, search_paths=config.collision.mesh_paths)
        if source is None:
            raise ConfigError(f"{what}: its URDF file '{item.filename}' was not found (looked "
                              'in AMENT_PREFIX_PATH, ROS_PACKAGE_PATH and collision.mesh_paths).  '
                              'Fix its filename.')
    try:
        description = parse_urdf(source)
    except DescriptionError as error:
        raise ConfigError(f'{what}: its URDF does not parse: {error}') from None
    moving = [j for j in description.robot.joints if j.type != 'fixed']
    if moving:
        raise ConfigError(
            f"{what}: its URDF has the {moving[0].type} joint '{moving[0].name}'; a scene object "
            'is one rigid body (links joined by fixed joints).  Fix the joint, or load a robot '
            'as the robot.')
    links = description.robot.links
    massive = any(link.inertial is not None and (link.inertial.mass or 0.0) > 0.0
                  for link in links)
    own = config_from_dict(
        {'base': 'floating' if massive else 'fixed', 'ground': {'enabled': False},
         'collision': {'mesh_paths': list(config.collision.mesh_paths),
                       'max_hull_vertices': config.collision.max_hull_vertices}},
        source='a urdf scene object')
    try:
        model = build_model(description, own)
    except (DescriptionError, ConfigError) as error:
        raise ConfigError(f'{what}: {error}') from None
    warnings = []
    shapes = link_shapes(model, description, own, mesh_cache, warnings, world=True)
    for message in warnings:
        LOGGER.warning(f'{what}: {message}')
    if not shapes:
        raise ConfigError(f'{what}: its URDF has no <collision> shape, so nothing could touch '
                          'it.  Give a link a <collision>.')
    parts = [(s.kind, s.size, Transform(quat_to_matrix(s.quat), np.asarray(s.pos, float)),
              s.vertices, s.faces) for s in shapes]
    if not massive:
        return 0.0, np.zeros(3), None, parts
    body = model.bodies[0]
    return body.mass, np.asarray(body.com, float), np.asarray(body.inertia, float), parts


def _world_collides(config):
    """
    Return whether the shapes on the world body (a fixed base) are kept.

    They never move: they matter to scene objects only (and to rays, add_shapes).
    """
    return bool(config.scene)


def _check_links(config, model):
    """Fail on contacts or pairs naming links the robot lacks."""
    names = list(model.links)
    where = [('contacts', link) for link in config.contacts]
    for key in ('self_collision_pairs', 'disabled_pairs'):
        where += [(f'collision.{key}', link) for pair in getattr(config.collision, key)
                  for link in pair]
    for key, link in where:
        if link not in model.links:
            hint = close_matches(link, names)
            raise ConfigError(f"{config.source}: {key} names link '{link}', which the robot "
                              f"does not have{'; ' + hint if hint else '.'}  Use the name of "
                              'one of its URDF links.')


def _filter(description, config, shapes, robot_links):
    """Link pairs (frozensets of two names) whose shapes never collide."""
    settings = config.collision
    links = sorted({s.name for s in shapes if s.name in robot_links})
    never = set()
    if not settings.self_collision:
        never = {frozenset((a, b)) for i, a in enumerate(links) for b in links[i + 1:]}
        never -= {frozenset(p) for p in settings.self_collision_pairs}
    robot = getattr(description, 'robot', None)
    for joint in getattr(robot, 'joints', None) or ():
        never.add(frozenset((joint.parent, joint.child)))  # adjacent links, merged ones too
    never |= {frozenset(p) for p in settings.disabled_pairs}
    return frozenset(p for p in never if len(p) == 2)


def _link_shape(geometry, link, description, settings, cache, warnings):
    """
    Return (kind, size, pose in the origin frame, vertices, faces) of one <collision> shape.

    None when its mesh cannot be used (a warning says why; the caller falls back to the link's
    inertia box).
    """
    if geometry.kind != 'mesh':
        return _primitive(geometry.kind, geometry.size)
    try:
        return _mesh_shape(geometry.filename, geometry.scale, description, settings, cache)
    except meshes.MeshError as error:
        warnings.append(f"link '{link}': collision mesh {error}  The link collides as the box "
                        'of its inertia instead (docs/contacts.md).')
        return None


def _scene_shape(item, name, description, settings, cache):
    """Return (kind, size, pose, vertices, faces) of a scene object; mesh failures are errors."""
    kind = item.shape
    if kind == 'mesh':
        try:
            return _mesh_shape(item.filename, item.scale,
                               description, settings, cache)
        except meshes.MeshError as error:
            raise ConfigError(f"scene object '{name}': mesh {error}  Fix its filename (or add "
                              'the directory to collision.mesh_paths).') from None
    sizes = {'box': item.size, 'sphere': (item.radius,), 'cylinder': (item.radius, item.length),
             'capsule': (item.radius, item.length)}
    return _primitive(kind, sizes[kind])


def _primitive(kind, size):
    """Shape tuple of a URDF-sized primitive (box full lengths; cylinder/capsule length)."""
    if kind == 'box':
        half = tuple(0.5 * float(v) for v in size)
        return 'box', half, Transform.identity(), None, ()
    if kind == 'sphere':
        return 'sphere', (float(size[0]), 0.0, 0.0), Transform.identity(), None, ()
    return kind, (float(size[0]), 0.5 * float(size[1]), 0.0), Transform.identity(), None, ()


def _mesh_shape(uri, scale, description, settings, cache):
    """Convex hull of a mesh file; raises meshes.MeshError naming the problem."""
    key = (uri, tuple(scale))
    if key not in cache:
        path = meshes.resolve_mesh_uri(uri, base_dir=getattr(description, 'base_dir', '') or None,
                                       search_paths=settings.mesh_paths)
        if path is None:
            raise meshes.MeshError(
                f"'{uri}' was not found (looked in AMENT_PREFIX_PATH, ROS_PACKAGE_PATH, beside "
                'the URDF and in collision.mesh_paths).')
        stat = os.stat(path)
        hull_key = (str(path), stat.st_mtime_ns, stat.st_size, tuple(float(v) for v in scale),
                    settings.max_hull_vertices)
        if hull_key not in _HULLS:
            points = meshes.load_mesh_vertices(path, scale)
            vertices, faces = meshes.simplify_hull(points, settings.max_hull_vertices)
            faces = tuple(tuple(int(i) for i in f) for f in faces)
            _HULLS[hull_key] = ('convex', (0.0, 0.0, 0.0), Transform.identity(),
                                np.asarray(vertices, dtype=float), faces)
        cache[key] = _HULLS[hull_key]
    return cache[key]


def _inertia_box(description, link, warnings):
    """Return the solid box with the link's mass and principal moments, in the link frame."""
    robot = getattr(description, 'robot', None)
    urdf_link = getattr(robot, 'link_map', {}).get(link) if robot is not None else None
    inertial = getattr(urdf_link, 'inertial', None)
    if inertial is None or not inertial.mass or inertial.inertia is None:
        warnings.append(f"link '{link}' has no inertia to size a fallback box: it does not "
                        'collide.')
        return None
    i = inertial.inertia
    tensor = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]])
    half, axes = meshes.inertia_box_half_extents(inertial.mass, tensor)
    origin = inertial.origin
    xyz = origin.xyz if origin is not None and origin.xyz is not None else (0.0, 0.0, 0.0)
    rpy = origin.rpy if origin is not None and origin.rpy is not None else (0.0, 0.0, 0.0)
    pose = Transform.from_xyz_rpy(xyz, rpy) @ Transform(np.asarray(axes), np.zeros(3))
    return 'box', tuple(float(h) for h in half), pose, None, ()


def _solid_inertia(kind, size, mass, vertices):
    """Inertia about the centre (kg m^2) of a uniform solid shape in its own frame."""
    if kind == 'sphere':
        return np.eye(3) * 0.4 * mass * size[0] ** 2
    if kind == 'box':
        x, y, z = (2.0 * h for h in size)
        return np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) * mass / 12.0
    r, h = size[0], size[1]
    if kind == 'cylinder':
        side = mass * (3.0 * r * r + 4.0 * h * h) / 12.0
        return np.diag([side, side, 0.5 * mass * r * r])
    if kind == 'capsule':
        # cylinder of length 2h plus two hemispheres, by volume (Ericson's capsule inertia)
        v_cyl = np.pi * r * r * 2.0 * h
        v_sph = 4.0 / 3.0 * np.pi * r ** 3
        m_cyl = mass * v_cyl / (v_cyl + v_sph)
        m_sph = mass - m_cyl
        axial = 0.5 * m_cyl * r * r + 0.4 * m_sph * r * r
        side = (m_cyl * (3.0 * r * r + 4.0 * h * h) / 12.0
                + m_sph * (0.4 * r * r + h * h + 0.75 * h * r))
        return np.diag([side, side, axial])
    # a convex mesh: the solid box of its bounding extents (docs/contacts.md)
    extent = np.ptp(np.asarray(vertices), axis=0)
    x, y, z = extent
    return np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) * mass / 12.0
