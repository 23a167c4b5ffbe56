"""
Turn a parsed URDF and a SimConfig into the immutable RobotModel (conventions in model.py).

The stages, in order:
1. check the kinematic tree (every joint names existing links, one parent per link, one root,
   no cycle);
2. decide the base (config ``base``, overridden by a URDF root link named ``world``);
3. group links joined by merged fixed joints into bodies and place every link in its body frame;
4. mass properties of each body, repairing unphysical link inertias and giving a massless
   body that carries bodies with mass a stand-in mass (docs/model.md);
5. one JointModel per kept joint, and the parent-before-child ``tree_order``;
6. check mimic references and the config's joint names against the model.

Joint repairs (URDF as ROS reads it, docs/model.md: no <limit>, lower > upper, a <mimic> of a
missing joint) are announced once per kind, listing the joints and their lines.
"""
import dataclasses
import logging
import math

import numpy as np

from .config import (config_imus, config_range_sensors, config_sensors, JointOverrides,
                     load_config)
from .drives import build_drive
from .geometry import (combine_inertias, inertia_matrix, inertia_problems, principal_moments,
                       repair_inertia, rotate_inertia, Transform)
from .model import (BodyModel, ImuModel, JOINT_TYPES, JointModel, LinkFrame, Mimic,
                    RangeSensorModel, RobotModel,
                    SCALAR_JOINT_TYPES, SensorModel)
from .shapes import add_shapes
from .urdf import close_matches, name_list, UrdfDescription
from ..errors import ConfigError, DescriptionError

LOGGER = logging.getLogger('jointsim_ros')

#: Name of the URDF link that stands for the world (REP 105 convention used by ROS tools).
WORLD_LINK = 'world'
#: Joint types whose <axis> is used (the axis of motion, or the plane normal for planar).
AXIS_JOINT_TYPES = ('revolute', 'continuous', 'prismatic', 'planar')
#: What each kind of joint repair assumes (URDF as ROS reads it, docs/model.md).
REPAIR_TEXTS = {
    'no limit': ('revolute or prismatic without <limit> (urdfdom and PyBullet refuse it); '
                 'assumed unlimited position, effort and velocity, as a continuous joint.  '
                 'Give <limit lower upper effort velocity>, or use type continuous.'),
    'lower above upper': ('<limit> with lower > upper; assumed no position limit, as Bullet '
                          'and PyBullet read it (urdfdom does not check).  If swapped limits '
                          'were meant, write them in order.'),
    'dangling mimic': ('<mimic> naming a joint that does not exist; assumed the joint moves on '
                       'its own, as in PyBullet, which does not read <mimic> (urdfdom does not '
                       'check the name).  Fix <mimic joint=...>.'),
}
#: Fraction of the mass a massless moving body carries that it is given (massless_stand_ins).
MASSLESS_STAND_IN = 0.01
#: An <axis> whose norm is further than this from 1 gets a warning before it is normalised.
AXIS_NORM_TOLERANCE = 1e-3


def build_model(description, config=None, mesh_cache=None):
    """
    Build the immutable RobotModel of a parsed robot description.

    Args:
        description: UrdfDescription from ``parse_urdf``, or a bare ``urdf_parser_py`` Robot.
        config: SimConfig, dict, YAML path or None (defaults); see ``load_config``.
        mesh_cache: optional dict of mesh hulls kept between builds (shapes.add_shapes).

    Returns:
        RobotModel.  Every warning it carries has also been logged to the 'jointsim_ros' logger.

    Raises:
        DescriptionError: the description is not a single tree of known joint types, a movable
            joint has a massless child, a value is out of range, or a mimic reference is bad.
        ConfigError: the config names joints the robot lacks, or contradicts the URDF base.
    """
    if not isinstance(description, UrdfDescription):
        description = UrdfDescription(robot=description,
                                      source=f"robot '{getattr(description, 'name', '?')}'",
                                      lines={})
    return _ModelBuilder(description, load_config(config), mesh_cache).build()


class _ModelBuilder:
    """The stages of build_model, sharing the description, the config and the warnings."""

    def __init__(self, description, config, mesh_cache=None):
        self.description = description
        self.config = config
        self.mesh_cache = mesh_cache
        self.robot = description.robot
        self.warnings = []
        self.repairs = {}

    # ---- helpers ----

    def where(self, kind, name):
        """Name an element and its place in the source for a message."""
        return self.description.where(kind, name)

    def warn(self, message):
        """Record a repair or a suspicious value."""
        self.warnings.append(message)

    def fail(self, message):
        """Raise a DescriptionError naming the source."""
        raise DescriptionError(message)

    def note_repair(self, kind, joint, detail=''):
        """Record a joint repaired in a way announced once per kind (see announce_repairs)."""
        self.repairs.setdefault(kind, []).append((joint, detail))

    def announce_repairs(self):
        """Add one warning per kind of joint repair: the joints, their lines, what was assumed."""
        source = self.description.source
        for kind, items in self.repairs.items():
            lines = [self.description.lines.get(('joint', j.name)) for j, _ in items]
            place = source + (f" line{'s' if len(items) > 1 else ''} "
                              + ', '.join(str(n) for n in lines[:4]) if all(lines) else '')
            names = ', '.join(f"'{j.name}'" + (f' ({d})' if d else '') for j, d in items[:4])
            names += f' and {len(items) - 4} more' if len(items) > 4 else ''
            joints = f"joint{'s' if len(items) > 1 else ''} {names}"
            self.warn(f'{place}: {joints}: ' + REPAIR_TEXTS[kind])

    # ---- the stages ----

    def build(self, shapes=True):
        """Run the stages and assemble the RobotModel (without shapes: a world adds them)."""
        self.check_tree()
        self.decide_base()
        self.sensor_specs = self.sensor_settings()
        # before the warnings are gathered: a Gazebo IMU tag the config check refuses is
        # announced and skipped
        self.imu_specs = self.imu_settings()
        self.range_specs = self.range_settings()
        self.check_kept_fixed_joints()
        self.group_links()
        bodies = self.make_bodies()
        joints = self.make_joints()
        joints = self.check_mimics(joints)
        self.announce_repairs()
        self.check_config_joints(joints)
        drives = self.make_drives(joints)
        warnings = tuple(self.description.warnings) + tuple(self.warnings)
        for message in warnings:
            LOGGER.warning(message)
        base = self.base_pose()
        model = RobotModel(
            name=self.robot.name or '',
            bodies=tuple(bodies),
            joints=tuple(joints),
            tree_order=self.tree_order(joints),
            links=self.link_frames(),
            root_link=self.root,
            floating_base=self.floating,
            merged_joints=tuple(j.name for j in self.robot.joints if j.name in self.merged),
            warnings=warnings,
            base_pos=base.pos,
            base_quat=base.quat,
            drives=drives,
            sensors=self.make_sensors(),
            imus=self.make_imus(),
            range_sensors=self.make_range_sensors(),
        )
        if not shapes:
            return model
        return add_shapes(model, self.description, self.config, self.mesh_cache)

    def check_tree(self):
        """Stage 1: every joint names existing links, each link has one parent, one root."""
        self.links = {}
        for link in self.robot.links:
            if link.name in self.links:
                self.fail(f"{self.where('link', link.name)} is defined twice.  Rename or remove "
                          'one of them.')
            self.links[link.name] = link
        names = set()
        for joint in self.robot.joints:
            if joint.name in names:
                self.fail(f"{self.where('joint', joint.name)} is defined twice.  Rename or "
                          'remove one of them.')
            names.add(joint.name)
            if joint.type not in JOINT_TYPES:
                hint = close_matches(joint.type, JOINT_TYPES)
                self.fail(f"{self.where('joint', joint.name)} has unknown type '{joint.type}'"
                          f"{'; ' + hint if hint else '.'}  Use one of: "
                          f"{', '.join(JOINT_TYPES)}.")
            for role, link in (('parent', joint.parent), ('child', joint.child)):
                if link not in self.links:
                    hint = close_matches(link, self.links)
                    self.fail(f"{self.where('joint', joint.name)} names {role} link '{link}', "
                              f"which is not defined{'; ' + hint if hint else '.'}  Define "
                              f'<link name="{link}"/> or fix the {role} name.')
            if joint.parent == joint.child:
                self.fail(f"{self.where('joint', joint.name)} joins link '{joint.child}' to "
                          'itself (a kinematic loop).  Give it a different parent or child.')
        self.parent_joint = {}
        self.child_joints = {name: [] for name in self.links}
        for joint in self.robot.joints:
            if joint.child in self.parent_joint:
                other = self.parent_joint[joint.child]
                self.fail(
                    f"link '{joint.child}' is the child of two joints, "
                    f"{self.where('joint', other.name)} and {self.where('joint', joint.name)}: "
                    'a closed kinematic loop.  A URDF must be a tree; remove one of the two '
                    'joints (loop closures are not supported).')
            self.parent_joint[joint.child] = joint
            self.child_joints[joint.parent].append(joint)
        roots = [name for name in self.links if name not in self.parent_joint]
        if not roots:
            self.fail_cycle(next(iter(self.links), None))
        if len(roots) > 1:
            self.fail(f'{self.description.source} has {len(roots)} root links (links that no '
                      f'joint has as child): {name_list(roots, 6)}.  A URDF must be one tree: '
                      'connect them with joints (or remove unused links).')
        self.root = roots[0]
        self.order = self.depth_first()
        if len(self.order) < len(self.links):
            reached = {link for link, _ in self.order}
            self.fail_cycle(next(name for name in self.links if name not in reached))

    def fail_cycle(self, start):
        """Raise the error for a cycle of joints through link ``start``."""
        if start is None:
            self.fail(f'{self.description.source} defines no links.  A URDF needs at least one '
                      '<link>.')
        cycle, link = [], start
        while link not in cycle:
            cycle.append(link)
            link = self.parent_joint[link].parent
        cycle = cycle[cycle.index(link):]
        joints = [self.parent_joint[name].name for name in cycle]
        self.fail(f'{self.description.source} has a kinematic loop: links '
                  f"{' -> '.join(repr(n) for n in reversed(cycle))} -> '{cycle[-1]}' through "
                  f'joints {name_list(joints, 6)}.  A URDF must be a tree; remove one joint of '
                  'the loop.')

    def depth_first(self):
        """Return [(link name, joint from its parent or None)] in depth-first pre-order."""
        order, stack, seen = [], [(self.root, None)], set()
        while stack:
            link, joint = stack.pop()
            if link in seen:
                continue
            seen.add(link)
            order.append((link, joint))
            for child in reversed(self.child_joints[link]):
                stack.append((child.child, child))
        return order

    def decide_base(self):
        """Stage 2: fixed or floating base; find the URDF world->base floating joint if any."""
        config = self.config
        self.base_joint = None
        self.floating = config.base == 'floating'
        if self.root != WORLD_LINK:
            return
        world_joints = self.child_joints[WORLD_LINK]
        floating = [j for j in world_joints if j.type == 'floating']
        explicit = 'base' in config.given_keys
        if floating:
            if len(floating) > 1:
                self.fail(f"link 'world' holds {len(floating)} floating joints "
                          f'({name_list(j.name for j in floating)}).  One robot, one floating '
                          'base: keep one, or make the others fixed.')
            if explicit and config.base == 'fixed':
                raise ConfigError(
                    f'{config.source} sets base: fixed, but {self.description.source} attaches '
                    f"link '{floating[0].child}' to 'world' by floating "
                    f"{self.where('joint', floating[0].name)}.  Remove the base key (the URDF "
                    'decides), or make the URDF world joint fixed.')
            self.floating = True
            self.base_joint = floating[0]
        else:
            if explicit and config.base == 'floating':
                raise ConfigError(
                    f'{config.source} sets base: floating, but {self.description.source} fixes '
                    f"the robot to link 'world' (joint {name_list(j.name for j in world_joints)})"
                    '.  Remove the world link and its joint from the URDF for a floating base, '
                    'or set base: fixed.')
            self.floating = False

    def sensor_settings(self):
        """Force-torque sensors of the URDF's <gazebo> tags and the config (config wins)."""
        from_urdf = getattr(self.description, 'sensors', {}) or {}
        specs = {}
        if from_urdf:
            specs.update(config_sensors(from_urdf, f'{self.description.source} <gazebo> tags'))
        specs.update(self.config.force_torque_sensors)
        joints = [j.name for j in self.robot.joints]
        for name, spec in specs.items():
            if spec.joint not in joints:
                hint = close_matches(spec.joint, joints)
                raise ConfigError(
                    f"force-torque sensor '{name}' sits on joint '{spec.joint}', which "
                    f"{self.description.source} does not define{'; ' + hint if hint else '.'}  "
                    'Name one of its joints.')
        return specs

    def imu_settings(self):
        """Return the IMUs of the URDF's <gazebo> tags and the config (config wins), checked."""
        specs = {}
        source = f'{self.description.source} <gazebo> tags'
        for label, item in (getattr(self.description, 'imus', {}) or {}).items():
            try:
                specs.update(config_imus({label: item}, source))
            except ConfigError as error:
                self.warn(f'{error}  The IMU is skipped.')
        specs.update(self.config.imu_sensors)
        links = [link.name for link in self.robot.links]
        for name, spec in specs.items():
            if spec.link not in links:
                hint = close_matches(spec.link, links) or f'its links: {name_list(links)}'
                raise ConfigError(
                    f"IMU '{name}' is fixed to link '{spec.link}', which "
                    f'{self.description.source} does not define; {hint}.  Name one of its '
                    'links.')
        joints = {j.name for j in self.robot.joints}
        for joint in self.config.joint_sensors:
            if joint != '*' and joint not in joints:
                hint = (close_matches(joint, sorted(joints))
                        or f'its joints: {name_list(sorted(joints))}')
                raise ConfigError(
                    f"joint_sensors names joint '{joint}', which {self.description.source} "
                    f"does not define; {hint}.  Name one of its joints, or '*' for every "
                    'joint.')
        return specs

    def make_imus(self):
        """Return the ImuModel of every IMU."""
        imus = []
        for name, spec in self.imu_specs.items():
            transform = Transform.from_xyz_rpy(spec.pose.position, spec.pose.rpy)
            noise = spec.noise
            imus.append(ImuModel(
                name=name, link=spec.link, pos=transform.pos, quat=transform.quat,
                rate=spec.rate, topic=spec.topic or f'{name}/imu',
                gyro=_axis_noise(noise.angular_velocity),
                gyro_correlation_time=noise.angular_velocity.dynamic_bias_correlation_time,
                accel=_axis_noise(noise.linear_acceleration),
                accel_correlation_time=(
                    noise.linear_acceleration.dynamic_bias_correlation_time),
                orientation_stddev=noise.orientation,
                seed=_or(noise.seed, sum(ord(c) for c in name))))
        return tuple(imus)

    def range_settings(self):
        """Return the lidars and depth cameras of the URDF's tags and the config (config wins)."""
        specs = {}
        source = f'{self.description.source} <gazebo> tags'
        for label, item in (getattr(self.description, 'range_sensors', {}) or {}).items():
            try:
                specs.update(config_range_sensors({label: item}, source))
            except ConfigError as error:
                self.warn(f'{error}  The sensor is skipped.')
        specs.update(self.config.range_sensors)
        links = [link.name for link in self.robot.links]
        for name, spec in specs.items():
            if spec.link not in links:
                hint = close_matches(spec.link, links) or f'its links: {name_list(links)}'
                raise ConfigError(
                    f"range sensor '{name}' is fixed to link '{spec.link}', which "
                    f'{self.description.source} does not define; {hint}.  Name one of its '
                    'links.')
        return specs

    def make_range_sensors(self):
        """Return the RangeSensorModel of every lidar and depth camera."""
        made = []
        for name, spec in self.range_specs.items():
            transform = Transform.from_xyz_rpy(spec.pose.position, spec.pose.rpy)
            h, v = spec.horizontal, spec.vertical
            made.append(RangeSensorModel(
                name=name, link=spec.link, kind=spec.kind, pos=transform.pos,
                quat=transform.quat, rate=spec.rate, range_min=spec.range.min,
                range_max=spec.range.max, resolution=spec.range.resolution,
                noise_mean=spec.noise.mean, noise_stddev=spec.noise.stddev,
                seed=_or(spec.noise.seed, sum(ord(c) for c in name)),
                horizontal=(h.samples, h.min_angle, h.max_angle),
                vertical=(v.samples, v.min_angle, v.max_angle), width=spec.width,
                height=spec.height, horizontal_fov=spec.horizontal_fov))
        return tuple(made)

    def make_sensors(self):
        """Return the SensorModel of every force-torque sensor."""
        sensors = []
        for name, spec in self.sensor_specs.items():
            transform = Transform.from_xyz_rpy(spec.pose.position, spec.pose.rpy)
            noise = spec.noise
            sensors.append(SensorModel(
                name=name, joint=spec.joint, frame=spec.frame,
                measure_direction=spec.measure_direction,
                pos=transform.pos, quat=transform.quat, rate=spec.rate,
                noise_force=noise.force, noise_torque=noise.torque,
                seed=_or(noise.seed, sum(ord(c) for c in name)), cutoff=spec.filter.cutoff))
        return tuple(sensors)

    def check_kept_fixed_joints(self):
        """Config keep_fixed_joints must name fixed joints of the URDF."""
        joints = {j.name: j for j in self.robot.joints}
        for name in self.config.keep_fixed_joints:
            if name not in joints:
                fixed = [j.name for j in self.robot.joints if j.type == 'fixed']
                hint = close_matches(name, fixed)
                raise ConfigError(
                    f"{self.config.source}: keep_fixed_joints names joint '{name}', which "
                    f"{self.description.source} does not define{'; ' + hint if hint else '.'}  "
                    f"Its fixed joints are: {name_list(fixed, 8) or 'none'}.")
            if joints[name].type != 'fixed':
                raise ConfigError(
                    f"{self.config.source}: keep_fixed_joints names joint '{name}', which is "
                    f'{joints[name].type}, not fixed.  List only fixed joints there.')

    def group_links(self):
        """Stage 3: merge links joined by fixed joints; pose of every link in its body frame."""
        # a fixed joint that carries a sensor is kept as a weld: merging would lose its wrench
        kept = set(self.config.keep_fixed_joints)
        kept |= {spec.joint for spec in self.sensor_specs.values()}
        self.merged = set()
        self.group = {}       # link -> root link of its body
        self.in_group = {}    # link -> Transform of the link frame in its body frame
        group_roots = []
        for link, joint in self.order:
            if joint is not None and joint.type == 'fixed' and joint.name not in kept:
                self.merged.add(joint.name)
                self.group[link] = self.group[joint.parent]
                self.in_group[link] = self.in_group[joint.parent] @ _origin(joint.origin)
            else:
                self.group[link] = link
                self.in_group[link] = Transform.identity()
                group_roots.append(link)
        if self.base_joint is not None:
            # the floating base is body 0 even when the world link holds other (fixed) parts
            group_roots.remove(self.base_joint.child)
            group_roots.insert(1, self.base_joint.child)
        if self.floating:
            world_group = WORLD_LINK if self.base_joint is not None else None
        else:
            world_group = self.root
        self.body_index = {}
        count = 0
        for root in group_roots:  # depth-first, so a floating root body is body 0
            if root == world_group:
                self.body_index[root] = -1
            else:
                self.body_index[root] = count
                count += 1
        self.world = Transform.from_xyz_rpy(self.config.base_pose.position,
                                            self.config.base_pose.rpy)

    def base_pose(self):
        """World pose of the base: see RobotModel.base_pos."""
        if self.base_joint is not None:
            return self.world @ _origin(self.base_joint.origin)
        return self.world

    def link_pose(self, link):
        """Return the pose of a link frame in its body frame (world frame for body -1)."""
        pose = self.in_group[link]
        if self.body_index[self.group[link]] == -1:
            return self.world @ pose
        return pose

    def link_frames(self):
        """Return the LinkFrame of every URDF link, in URDF order."""
        frames = {}
        for name in self.links:
            pose = self.link_pose(name)
            frames[name] = LinkFrame(name=name, body=self.body_index[self.group[name]],
                                     pos=pose.pos, quat=pose.quat)
        return frames

    def make_bodies(self):
        """Stage 4: BodyModel per group (world excluded), with composite mass properties."""
        members = {}
        for link, _ in self.order:
            members.setdefault(self.group[link], []).append(link)
        props = {}
        for root, index in self.body_index.items():
            if index >= 0:
                parts = [self.link_mass_properties(name) for name in members[root]]
                props[root] = combine_inertias(*zip(*parts))
        stand_ins = self.massless_stand_ins(props)
        bodies = []
        for root, index in self.body_index.items():
            if index < 0:
                continue
            links = members[root]
            mass, com, inertia = stand_ins.get(root, props[root])
            if mass <= 0.0:
                self.fail_massless(root, links)
            if inertia_problems(inertia):  # only numerically possible after link repairs
                inertia = repair_inertia(mass, inertia)
                self.warn(f"body of link '{root}': composite inertia repaired.")
            bodies.append(BodyModel(name=root, mass=mass, com=com, inertia=inertia,
                                    links=tuple(links)))
        return bodies

    def massless_stand_ins(self, props):
        """
        Mass properties for massless moving bodies that carry bodies with mass (one warning).

        A link without mass between two joints (human.urdf's "virtual" hip links making a ball
        joint of three revolutes, a force-torque sensor frame kept as a weld) is well posed in
        reduced coordinates, but the maximal formulation divides by every moving body's mass.
        Such a body gets MASSLESS_STAND_IN times the mass it carries, at its link origin, with
        an isotropic inertia of MASSLESS_STAND_IN times the mean principal moment of the
        heaviest body it carries.  A massless body that carries no mass stays an error.

        Args:
            props: body root link -> (mass kg, com (3,) m, inertia (3, 3) kg m^2).

        Returns:
            dict body root link -> stand-in (mass, com, inertia).
        """
        carried = {}  # massless body -> [mass carried, heaviest body's mass, its inertia]
        for root, (mass, _, inertia) in props.items():
            if mass <= 0.0:
                continue
            link = root
            while link in self.parent_joint and self.parent_joint[link] is not self.base_joint:
                link = self.group[self.parent_joint[link].parent]
                if link in props and props[link][0] <= 0.0:
                    item = carried.setdefault(link, [0.0, 0.0, None])
                    item[0] += mass
                    if mass > item[1]:
                        item[1:] = [mass, inertia]
        stand_ins = {}
        for root, (total, _, inertia) in carried.items():
            if self.parent_joint.get(root) in (None, self.base_joint):
                continue  # a massless floating base: fail_massless explains it
            moment = MASSLESS_STAND_IN * float(np.trace(inertia)) / 3.0
            stand_ins[root] = (MASSLESS_STAND_IN * total, np.zeros(3), moment * np.eye(3))
        if stand_ins:
            items = sorted(stand_ins.items(), key=lambda item: self.body_index[item[0]])
            lines = self.description.lines
            named = ', '.join(f"'{root}'" + (f" (line {lines[('link', root)]})"
                                             if ('link', root) in lines else '')
                              + f' {mass:.3g} kg' for root, (mass, _, _) in items[:4])
            more = f' and {len(items) - 4} more' if len(items) > 4 else ''
            self.warn(f'{self.description.source}: {len(items)} moving '
                      f"link{'s' if len(items) > 1 else ''} without mass that carry links "
                      f'with mass through their joints ({named}{more}); assumed '
                      f'{MASSLESS_STAND_IN:g} of the mass each carries, at its link origin, '
                      'with an isotropic inertia of the same fraction of the heaviest carried '
                      "body's mean principal moment (the maximal formulation needs mass on "
                      'every moving body; urdfdom does not check, PyBullet assumes 1 kg for a '
                      'link without <inertial>).  Give these links an <inertial>.')
        return stand_ins

    def link_mass_properties(self, name):
        """(mass kg, COM (3,) m, inertia (3, 3) kg m^2) of one link in its body frame."""
        inertial = self.links[name].inertial
        if inertial is None:
            return 0.0, np.zeros(3), np.zeros((3, 3))
        mass = inertial.mass
        if mass is None or not math.isfinite(mass) or mass < 0.0:
            self.fail(f"{self.where('link', name)} has mass {mass}: a mass must be a finite "
                      'number >= 0 kg.  Fix <mass value=...> in its <inertial>.')
        values = inertial.inertia
        inertia = np.zeros((3, 3)) if values is None else inertia_matrix(
            values.ixx, values.ixy, values.ixz, values.iyy, values.iyz, values.izz)
        if not np.all(np.isfinite(inertia)):
            self.fail(f"{self.where('link', name)} has a non-finite <inertia>.  Give finite "
                      'ixx..izz in kg m^2.')
        if mass == 0.0:
            return 0.0, np.zeros(3), np.zeros((3, 3))
        problems = inertia_problems(inertia)
        if problems:
            repaired = repair_inertia(mass, inertia)
            self.warn(
                f"{self.where('link', name)}: inertia {problems[0]} (principal moments "
                f'{_moments(inertia)} kg m^2, mass {mass:g} kg); repaired to principal moments '
                f'{_moments(repaired)} kg m^2 (see docs/model.md, inertia repairs).')
            inertia = repaired
        origin = _origin(inertial.origin)
        pose = self.in_group[name]
        rotation = pose.rot @ origin.rot
        return mass, pose.apply(origin.pos), rotate_inertia(inertia, rotation)

    def fail_massless(self, root, links):
        """Raise the error for a body without mass that must move."""
        others = [n for n in links if n != root]
        also = f' (nor do the links fixed to it: {name_list(others)})' if others else ''
        joint = self.parent_joint.get(root)
        if joint is None or joint is self.base_joint:
            self.fail(f"floating base: {self.where('link', root)} has no mass{also}.  A free "
                      'body needs mass > 0: give it an <inertial> with a <mass>, or use '
                      'base: fixed.')
        kind = 'kept fixed' if joint.type == 'fixed' else joint.type
        fix = ('remove it from keep_fixed_joints so it is merged' if joint.type == 'fixed'
               else 'make the joint fixed')
        self.fail(f"{kind} {self.where('joint', joint.name)} moves {self.where('link', root)}, "
                  f'which has no mass{also}.  A joint needs a child with mass > 0: give the '
                  f'link an <inertial> with <mass value=...>, or {fix}.')

    def make_joints(self):
        """Stage 5: one JointModel per joint that is neither merged nor the base joint."""
        joints = []
        for joint in self.robot.joints:
            if joint.name in self.merged or joint is self.base_joint:
                continue
            parent = self.link_pose(joint.parent) @ _origin(joint.origin)
            child = self.link_pose(joint.child)
            lower, upper, effort, velocity = self.limits(joint)
            damping, friction = self.dynamics(joint)
            override = self.config.joints.get(joint.name, JointOverrides())
            friction = _or(override.friction, friction)
            damping = _or(override.damping, damping)
            static = override.static_friction
            restitution = _or(override.restitution, self.config.limits.restitution)
            mimic = None
            if joint.mimic is not None and joint.type != 'fixed':  # a weld cannot follow
                mimic = Mimic(leader=joint.mimic.joint,
                              multiplier=_or(joint.mimic.multiplier, 1.0),
                              offset=_or(joint.mimic.offset, 0.0))
            joints.append(JointModel(
                name=joint.name, type=joint.type,
                parent_body=self.body_index[self.group[joint.parent]],
                child_body=self.body_index[self.group[joint.child]],
                parent_pos=parent.pos, parent_quat=parent.quat,
                child_pos=child.pos, child_quat=child.quat,
                axis=self.axis(joint),
                lower=lower, upper=upper, effort_limit=effort, velocity_limit=velocity,
                damping=damping, friction=friction, mimic=mimic,
                parent_link=joint.parent, child_link=joint.child,
                static_friction=static, restitution=restitution))
        return joints + self.loop_joints() + self.element_joints()

    def element_link(self, what, name, key, link):
        """Return the body index of an element end's link, or fail naming it."""
        if link not in self.links:
            hint = close_matches(link, self.links)
            raise ConfigError(f"{self.config.source}: {what} '{name}' names {key} '{link}', "
                              f"which the robot does not have{'; ' + hint if hint else '.'}  "
                              'Use one of its links.')
        return self.body_index[self.group[link]]

    def element_joints(self):
        """
        Joints of the elements (docs/prescribed.md), switched off until used.

        A linear actuator gets a one-row distance joint between its ends (acting while its
        length is prescribed); a path point gets a ball joint to the world whose anchor the
        facade moves along the path (acting while a path is prescribed); a grasp a ball joint
        between its link's point and its object, whose anchor on the object the facade sets
        at each grasp (acting while grasped, docs/valve.md).
        """
        joints = []
        identity = np.array([1.0, 0.0, 0.0, 0.0])
        for name, item in self.config.linear_actuators.items():
            ends = []
            for side in ('a', 'b'):
                link = getattr(item, f'link_{side}')
                body = self.element_link('linear actuator', name, f'link_{side}', link)
                point = getattr(item, f'point_{side}')
                ends.append((body, self.link_pose(link).apply(np.asarray(point, dtype=float))))
            if ends[0][0] == ends[1][0]:
                raise ConfigError(f"{self.config.source}: linear actuator '{name}' has both ends "
                                  'on one rigid body, where it can do nothing.  Put link_a and '
                                  'link_b on bodies that move relative to each other.')
            joints.append(JointModel(
                name=f'actuator:{name}', type='distance', parent_body=ends[0][0],
                child_body=ends[1][0], parent_pos=ends[0][1], parent_quat=identity,
                child_pos=ends[1][1], child_quat=identity, axis=np.array([1.0, 0.0, 0.0]),
                parent_link=item.link_a, child_link=item.link_b, loop=True,
                element='actuator'))
        for name, item in self.config.distance_sensors.items():
            for side in ('a', 'b'):  # no joint: only its links are checked here
                self.element_link('distance sensor', name, f'link_{side}',
                                  getattr(item, f'link_{side}'))
        for name, item in self.config.path_points.items():
            body = self.element_link('path point', name, 'link', item.link)
            if body < 0:
                raise ConfigError(f"{self.config.source}: path point '{name}' is on link "
                                  f"'{item.link}', which is fixed to the world and cannot "
                                  'follow a path.  Choose a moving link.')
            point = self.link_pose(item.link).apply(np.asarray(item.point, dtype=float))
            joints.append(JointModel(
                name=f'path:{name}', type='spherical', parent_body=-1, child_body=body,
                parent_pos=np.zeros(3), parent_quat=identity, child_pos=point,
                child_quat=identity, axis=np.array([1.0, 0.0, 0.0]), parent_link='world',
                child_link=item.link, loop=True, element='path'))
        for name, item in self.config.grasps.items():
            hand = self.element_link('grasp', name, 'link', item.link)
            held = self.element_link('grasp', name, 'object', item.object)
            if hand < 0 or hand == held:
                why = 'is fixed to the world' if hand < 0 else f"is one body with '{item.object}'"
                raise ConfigError(f"{self.config.source}: grasp '{name}': link '{item.link}' "
                                  f'{why}, so it cannot grasp.  Choose a moving link (a hand) '
                                  'and another body as the object.')
            if item.radius > 0.0 and np.linalg.norm(item.axis) < 1e-9:
                raise ConfigError(f"{self.config.source}: grasp '{name}' has a zero axis.  "
                                  "Give the rim circle's axis in the object's frame.")
            point = self.link_pose(item.link).apply(np.asarray(item.point, dtype=float))
            centre = self.link_pose(item.object).apply(np.asarray(item.centre, dtype=float))
            # the parent anchor (on the object) is state: the facade sets it at each grasp
            joints.append(JointModel(
                name=f'grasp:{name}', type='spherical', parent_body=held, child_body=hand,
                parent_pos=centre, parent_quat=identity, child_pos=point, child_quat=identity,
                axis=np.array([1.0, 0.0, 0.0]), parent_link=item.object, child_link=item.link,
                loop=True, element='grasp'))
        return joints

    def loop_joints(self):
        """Joints of config ``loop_joints``: between two links, closing kinematic loops."""
        joints = []
        taken = {j.name for j in self.robot.joints}
        for name, item in self.config.loop_joints.items():
            if name in taken:
                raise ConfigError(f"{self.config.source}: loop joint '{name}' has the name of a "
                                  'URDF joint.  Give it another name.')
            for key in ('parent', 'child'):
                if getattr(item, key) not in self.links:
                    hint = close_matches(getattr(item, key), self.links)
                    raise ConfigError(
                        f"{self.config.source}: loop joint '{name}' names {key} link "
                        f"'{getattr(item, key)}', which the robot does not have"
                        f"{'; ' + hint if hint else '.'}  Use one of its links.")
            parent_body = self.body_index[self.group[item.parent]]
            child_body = self.body_index[self.group[item.child]]
            if child_body < 0 or parent_body == child_body:
                why = 'are one body' if parent_body == child_body else 'is fixed to the world'
                raise ConfigError(
                    f"{self.config.source}: loop joint '{name}' joins '{item.parent}' and "
                    f"'{item.child}', which {why}.  Its child must be a moving link of "
                    'another body.')
            pose = self.link_pose(item.parent) @ Transform.from_xyz_rpy(item.origin.position,
                                                                        item.origin.rpy)
            given = item.child_origin  # None: closed where the links are at the start
            child = self.link_pose(item.child) @ Transform.from_xyz_rpy(
                given.position if given else (0.0, 0.0, 0.0),
                given.rpy if given else (0.0, 0.0, 0.0))
            axis = np.asarray(item.axis, dtype=float)
            if np.linalg.norm(axis) < 1e-9:
                raise ConfigError(f"{self.config.source}: loop joint '{name}' has a zero axis.")
            lower, upper = self.loop_limits(name, item)
            # the joints section's friction, damping and restitution, as a URDF joint's
            override = self.config.joints.get(name, JointOverrides())
            joints.append(JointModel(
                name=name, type=item.type, parent_body=parent_body, child_body=child_body,
                parent_pos=pose.pos, parent_quat=pose.quat, child_pos=child.pos,
                child_quat=child.quat, axis=axis / np.linalg.norm(axis),
                lower=lower, upper=upper, effort_limit=_or(item.effort, np.inf),
                velocity_limit=_or(item.velocity, np.inf), damping=_or(override.damping, 0.0),
                friction=_or(override.friction, 0.0), static_friction=override.static_friction,
                restitution=_or(override.restitution, self.config.limits.restitution),
                parent_link=item.parent, child_link=item.child, loop=True,
                close_at_start=given is None))
        return joints

    def loop_limits(self, name, item):
        """Return a loop joint's (lower, upper) position limits, -inf/inf where not given."""
        lower, upper = _or(item.lower, -np.inf), _or(item.upper, np.inf)
        given = item.lower is not None or item.upper is not None
        if given and item.type not in ('revolute', 'prismatic'):
            raise ConfigError(f"{self.config.source}: loop joint '{name}' is {item.type} and "
                              'has no position limits; remove lower and upper, or make it '
                              'revolute or prismatic.')
        if lower > upper:
            raise ConfigError(f"{self.config.source}: loop joint '{name}' has lower limit "
                              f'{lower:g} above its upper limit {upper:g}; give lower <= upper.')
        return lower, upper

    def axis(self, joint):
        """Return the unit axis in the joint frame; (1, 0, 0) when absent (URDF default)."""
        if joint.axis is None:
            return np.array([1.0, 0.0, 0.0])
        axis = np.asarray(joint.axis, dtype=float)
        norm = float(np.linalg.norm(axis))
        if joint.type not in AXIS_JOINT_TYPES:
            return axis / norm if norm > 0.0 and math.isfinite(norm) else np.array([1., 0., 0.])
        if norm == 0.0 or not math.isfinite(norm):
            self.fail(f"{joint.type} {self.where('joint', joint.name)} has axis "
                      f'{_vector_text(axis)}, which has no direction.  Give a non-zero '
                      '<axis xyz=...>.')
        if abs(norm - 1.0) > AXIS_NORM_TOLERANCE:
            self.warn(f"{self.where('joint', joint.name)}: axis {_vector_text(axis)} has length "
                      f'{norm:g}; normalised.')
        return axis / norm

    def limits(self, joint):
        """(lower, upper, effort, velocity) with inf for what the URDF leaves open."""
        limit = joint.limit
        lower, upper = -math.inf, math.inf
        effort = velocity = math.inf
        if limit is not None:
            effort = self.positive_limit(joint, 'effort', limit.effort)
            velocity = self.positive_limit(joint, 'velocity', limit.velocity)
        if joint.type not in ('revolute', 'prismatic'):
            return lower, upper, effort, velocity
        if limit is None:
            # urdfdom and PyBullet refuse the file; PyBullet's own default limits (lower 0,
            # upper -1) mean a free axis, and so does a missing <limit> here.
            self.note_repair('no limit', joint)
            return lower, upper, effort, velocity
        lower, upper = float(_or(limit.lower, 0.0)), float(_or(limit.upper, 0.0))
        if not (math.isfinite(lower) and math.isfinite(upper)):
            self.fail(f"{self.where('joint', joint.name)} has limits lower={lower:g}, "
                      f'upper={upper:g}.  Give finite numbers in <limit lower=... upper=...> '
                      '(leave <limit> out, or use type continuous, for no position limit).')
        if lower > upper:
            # Bullet reads lower > upper as a free axis (btGeneric6DofSpring2Constraint and
            # PyBullet's URDF importer, which only adds a limit when lower <= upper); urdfdom
            # does not check.  pybullet_data's cube_no_rotation.urdf relies on it.
            self.note_repair('lower above upper', joint, f'lower={lower:g} upper={upper:g}')
            return -math.inf, math.inf, effort, velocity
        if lower == upper:
            self.warn(f"{joint.type} {self.where('joint', joint.name)} has lower == upper == "
                      f'{lower:g} (the URDF default when lower/upper are left out): it cannot '
                      'move.  Give lower and upper, or use type continuous.')
        return lower, upper, effort, velocity

    def positive_limit(self, joint, key, value):
        """Check an effort or velocity limit: > 0, or 0 meaning unlimited (with a warning)."""
        value = float(_or(value, math.inf))
        if math.isnan(value) or value < 0.0:
            self.fail(f"{self.where('joint', joint.name)} has {key} limit {value:g}; it must be "
                      '>= 0.  Fix <limit ' + key + '=...>.')
        if value == 0.0:
            self.warn(f"{self.where('joint', joint.name)} has {key} limit 0; taken as unlimited "
                      '(0 often means "not given").')
            return math.inf
        return value

    def dynamics(self, joint):
        """(damping, friction) from <dynamics>, 0 when absent."""
        if joint.dynamics is None:
            return 0.0, 0.0
        values = []
        for key in ('damping', 'friction'):
            value = float(_or(getattr(joint.dynamics, key), 0.0))
            if not math.isfinite(value) or value < 0.0:
                self.fail(f"{self.where('joint', joint.name)} has {key} {value:g}; it must be a "
                          'finite number >= 0.  Fix <dynamics ' + key + '=...>.')
            values.append(value)
        return tuple(values)

    def tree_order(self, joints):
        """Stage 5b: indices of joints, each after the joint that moves its parent body."""
        index = {j.name: i for i, j in enumerate(joints)}
        return tuple(index[joint.name] for _, joint in self.order
                     if joint is not None and joint.name in index)

    def check_mimics(self, joints):
        """Stage 6: mimic leaders are scalar joints and mimic chains end; return the joints."""
        by_name = {j.name: j for j in joints}
        urdf_joints = {j.name: j for j in self.robot.joints}
        out = []
        for joint in joints:
            if joint.mimic is None:
                out.append(joint)
                continue
            leader = joint.mimic.leader
            where = self.where('joint', joint.name)
            if joint.type not in SCALAR_JOINT_TYPES:
                self.fail(f'{where} is {joint.type} and has a <mimic>; only revolute, '
                          'continuous and prismatic joints can mimic.  Remove the <mimic>.')
            if leader not in urdf_joints:
                # urdfdom does not check the name and PyBullet never reads <mimic>: the joint
                # moves on its own there, and so it does here.
                hint = close_matches(leader, by_name, n=1)
                self.note_repair('dangling mimic', joint, f"mimics '{leader}'"
                                 + (f', {hint}' if hint else ''))
                out.append(dataclasses.replace(joint, mimic=None))
                continue
            if leader not in by_name or by_name[leader].type not in SCALAR_JOINT_TYPES:
                self.fail(f"{where} mimics joint '{leader}', which is "
                          f'{urdf_joints[leader].type}; a leader must be revolute, continuous '
                          'or prismatic.  Fix <mimic joint=...>.')
            chain = [joint.name]
            while chain[-1] in by_name and by_name[chain[-1]].mimic is not None:
                chain.append(by_name[chain[-1]].mimic.leader)
                if chain[-1] in chain[:-1]:
                    self.fail(f"{where} is in a mimic cycle: {' -> '.join(chain)}.  One joint "
                              'of the chain must be a leader without <mimic>.')
            out.append(joint)
        return out

    def check_config_joints(self, joints):
        """Stage 6b: initial_positions/velocities name movable joints, within limits."""
        config = self.config
        by_name = {j.name: j for j in joints}
        scalar = [j.name for j in joints if j.type in SCALAR_JOINT_TYPES]
        all_joints = {j.name: j.type for j in self.robot.joints}
        units = {'initial_positions': 'rad or m', 'initial_velocities': 'rad/s or m/s'}
        for key, unit in units.items():
            for name, value in getattr(config, key).items():
                if name not in all_joints:
                    hint = close_matches(name, scalar)
                    raise ConfigError(
                        f"{config.source}: {key} names joint '{name}', which "
                        f'{self.description.source} does not define'
                        f"{'; ' + hint if hint else '.'}  Its movable joints are: "
                        f"{name_list(scalar, 8) or 'none'}.")
                joint = by_name.get(name)
                if joint is None or joint.type not in SCALAR_JOINT_TYPES:
                    raise ConfigError(
                        f"{config.source}: {key} names joint '{name}', which is "
                        f'{all_joints[name]}; {key} are for revolute, continuous and prismatic '
                        'joints only.')
                if joint.mimic is not None:
                    raise ConfigError(
                        f"{config.source}: {key} names joint '{name}', which mimics "
                        f"'{joint.mimic.leader}' and follows it.  Set '{joint.mimic.leader}' "
                        'instead.')
                if key == 'initial_positions' and not joint.lower <= value <= joint.upper:
                    raise ConfigError(
                        f'{config.source}: initial position {value:g} ({unit}) of joint '
                        f"'{name}' is outside its limits [{joint.lower:g}, {joint.upper:g}].  "
                        'Give a value within the limits.')

    def make_drives(self, joints):
        """Stage 7: the config's drives, on revolute, continuous or prismatic joints."""
        config = self.config
        by_name = {j.name: j for j in joints}
        scalar = [j.name for j in joints if j.type in SCALAR_JOINT_TYPES]
        for name in config.drives:
            joint = by_name.get(name)
            if joint is None or joint.type not in SCALAR_JOINT_TYPES:
                hint = close_matches(name, scalar)
                what = ('does not define it' if joint is None and name not in
                        {j.name for j in self.robot.joints} else 'it is not revolute, '
                        'continuous or prismatic')
                raise ConfigError(
                    f"{config.source}: drives names joint '{name}', but "
                    f'{self.description.source} {what}'
                    f"{'; ' + hint if hint else '.'}  Drivable joints: "
                    f"{name_list(scalar, 8) or 'none'}.")
            if joint.mimic is not None:
                raise ConfigError(
                    f"{config.source}: drives names joint '{name}', which mimics "
                    f"'{joint.mimic.leader}'; drive the leader instead.")
        for name in config.joints:
            joint = by_name.get(name)
            frictional = SCALAR_JOINT_TYPES + ('spherical', 'planar')
            if joint is None or joint.type not in frictional:
                hint = close_matches(name, scalar)
                raise ConfigError(
                    f"{config.source}: joints names joint '{name}', which "
                    f'{self.description.source} does not have as a revolute, continuous, '
                    f"prismatic, spherical or planar joint{'; ' + hint if hint else '.'}  "
                    'Its scalar joints: '
                    f"{name_list(scalar, 8) or 'none'}.")
        transmissions = getattr(self.description, 'transmissions', {})
        return tuple(build_drive(j, config.drives[j.name], config.source,
                                 transmissions.get(j.name))
                     for j in joints if j.name in config.drives)


def _origin(pose):
    """Transform of a urdf_parser_py Pose (``<origin>``), identity when absent."""
    if pose is None:
        return Transform.identity()
    return Transform.from_xyz_rpy(_or(pose.xyz, (0.0, 0.0, 0.0)), _or(pose.rpy, (0.0, 0.0, 0.0)))


def _or(value, default):
    """Return value, or default when it is None."""
    return default if value is None else value


def _moments(inertia):
    """Format the principal moments of an inertia tensor."""
    moments, _ = principal_moments(inertia)
    return '(' + ', '.join(f'{m:.3g}' for m in moments) + ')'


def _vector_text(vector):
    """Format a 3-vector as in URDF."""
    return '"' + ' '.join(f'{v:g}' for v in vector) + '"'


def _axis_noise(noise):
    """Return an ImuAxisNoise's per-axis values as rows (IMU_NOISE_ROWS order), (5, 3)."""
    return np.array([noise.mean, noise.stddev, noise.bias_mean, noise.bias_stddev,
                     noise.dynamic_bias_stddev], dtype=float)
