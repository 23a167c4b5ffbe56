"""
Read a robot description (URDF file, xacro file or URDF XML string) into urdf_parser_py objects.

What this module adds to ``urdf_parser_py`` (package urdfdom-py):

- One error type: every failure is a :class:`DescriptionError` that names the file, the element
  and, when the XML came from a file or string rather than xacro, its line, and says how to fix it.
- ``xacro``: files ending in ``.xacro`` (and XML declaring the xacro namespace) are expanded
  with the xacro Python API first; xacro errors name the file.
- Joint type ``spherical`` (used by published URDFs, e.g. pybullet's humanoid) is registered in
  ``urdf_parser_py.urdf.Joint.TYPES``; unknown joint types are reported with a suggestion.
- ``urdf_parser_py`` reports unknown elements and attributes by printing to stderr through its
  ``xml_reflection.on_error`` hook.  They are captured here: the few that can change the model
  (inside a ``<joint>`` or a link's ``<inertial>``, a misplaced ``<mass>``/``<inertia>``, a
  top-level tag that looks like a misspelt ``link`` or ``joint``, a repeated scalar element)
  become warnings; the rest (gazebo extensions, ``<contact>``, sensors...) are dropped.
- Elements the model does not use and that make ``urdf_parser_py`` fail on valid files are
  removed before parsing: ``<transmission>`` (its duck-typed parser raises on new-style
  transmissions without hardwareInterface), ``<gazebo>`` and visual/collision elements whose
  geometry is not box, cylinder, sphere or mesh (a warning names them, except ``<capsule>``).
- Collision geometry (box, sphere, cylinder, capsule, mesh, each with its ``<origin>``) is read
  straight from the XML into :class:`CollisionGeometry` records, so ``<capsule>`` (a common
  extension urdf_parser_py lacks) is kept.
- Trailing NUL bytes after the root element (pybullet_data's humanoid.urdf ends with one) are
  ignored.  Mesh URIs (``package://``, ``file://``) are kept as strings and never resolved here.
- URDF as ROS reads it (docs/model.md): what urdfdom (robot_state_publisher's parser) or
  PyBullet read and the XML or urdf_parser_py would refuse is repaired, each kind of repair
  announced once per file with its lines and what was assumed: an XML declaration with a
  version other than 1.0 or after a comment, a vector with extra neutral values, commas or a
  leftover ``$(optenv VAR default)``, a number with a stray period, a ``<limit>`` without
  effort or velocity, PyBullet's spherical joint limits, and a ``<texture>`` without filename
  (visual only, dropped silently).  Joint-level repairs (limits, mimics, massless links) are
  made in builder.py.
"""
import contextlib
from dataclasses import dataclass, field
import difflib
import io
import math
import os
import re
import threading
import xml.parsers.expat

from lxml import etree
from urdf_parser_py import urdf as urdf_types
from urdf_parser_py import xml_reflection
from urdf_parser_py.xml_reflection import core as reflection_core
import xacro

from .model import JOINT_TYPES
from .ros2_control import read_ros2_control
from ..errors import DescriptionError

XACRO_NAMESPACE = 'http://www.ros.org/wiki/xacro'
GEOMETRY_TAGS = ('box', 'cylinder', 'sphere', 'mesh')
#: Top-level elements removed before parsing (not used by the model; see the module docstring).
IGNORED_TOP_LEVEL = ('transmission', 'gazebo')

# urdf_parser_py only knows the joint types of urdfdom < 4; 'spherical' is in the wider URDF world.
for _joint_type in JOINT_TYPES:
    if _joint_type not in urdf_types.Joint.TYPES:
        urdf_types.Joint.TYPES.append(_joint_type)

# urdf_parser_py reports through module-level hooks, and xacro keeps module-level stacks: one
# parse at a time.
_PARSER_LOCK = threading.Lock()

# Paths of urdf_parser_py reports that can change the model (see the module docstring).
_MATTERS = re.compile(r'^(joint|link/inertial)(/|$)')
_UNKNOWN = re.compile(r'^Unknown (tag|attribute) "([^"]+)" in (\S+)$')
_PATH_ELEMENT = re.compile(r"(link|joint)\[@name='([^']*)'\]")

# XML declarations outside comments, and their version attribute (repaired before lxml parses).
_DECLARATION = re.compile(rb'<\?xml\s[^?]*\?>')
_COMMENT = re.compile(rb'<!--.*?-->', re.S)
_VERSION = re.compile(rb'(version\s*=\s*)(["\'])([^"\']*)\2')
#: Three-number attributes, and the value an extra number must have to be dropped without
#: changing the meaning: 0 adds nothing to a position or an angle, 1 scales nothing.
_VECTORS = {('origin', 'xyz'): 0.0, ('origin', 'rpy'): 0.0, ('axis', 'xyz'): 0.0,
            ('mesh', 'scale'): 1.0}
#: A decimal number followed by a stray period ("-1.57.", pybullet_data's biped2d_pybullet.urdf).
_TRAILING_PERIOD = re.compile(r'\s*([-+]?\d*\.\d+)\.\s*')
#: roslaunch/xacro substitution left in a .urdf by a build that did not run xacro.
_OPTENV = re.compile(r'\$\(optenv\s+(\S+)\s*([^)]*)\)')


@dataclass(frozen=True)
class CollisionGeometry:
    """
    One ``<collision>`` element of a link.

    Attributes:
        kind: 'box', 'sphere', 'cylinder', 'capsule' or 'mesh'.
        size: box (x, y, z) full lengths; sphere (r,); cylinder and capsule (r, length), m.
        filename: mesh URI as written ('' for primitives).
        scale: (3,) mesh scale.
        xyz, rpy: ``<origin>`` in the link frame, m and rad.
    """

    kind: str
    size: tuple = ()
    filename: str = ''
    scale: tuple = (1.0, 1.0, 1.0)
    xyz: tuple = (0.0, 0.0, 0.0)
    rpy: tuple = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class UrdfDescription:
    """
    A parsed robot description and where it came from.

    Attributes:
        robot: the ``urdf_parser_py.urdf.Robot``.
        source: display name of the source: the file path, or 'the URDF string'.
        lines: dict ('link' | 'joint', name) -> line number in the source (empty when the XML
            was produced by xacro, whose output lines do not match the file).
        warnings: what was ignored or looked suspicious while reading, one sentence each.
        transmissions: joint name -> mechanical reduction of single-joint transmissions.
        collisions: link name -> tuple of CollisionGeometry, in document order.
        base_dir: directory of the source file ('' for a string), for relative mesh paths.
        sensors: force-torque sensors of ``<gazebo reference="JOINT"><sensor
            type="force_torque">`` tags: name -> {joint, rate, frame, measure_direction, pose}
            in the config's ``force_torque_sensors`` form (docs/sensors.md).
        imus: IMUs of ``<gazebo reference="LINK"><sensor type="imu">`` tags: name -> {link,
            rate, pose, topic, noise} in the config's ``imu_sensors`` form (docs/sensors.md).
        range_sensors: lidars and depth cameras of ``<gazebo reference="LINK"><sensor
            type="gpu_lidar">`` (and ``lidar``, ``ray``, ``gpu_ray``, ``depth_camera``,
            ``depth``) tags: name -> settings in the config's ``range_sensors`` form.
        materials: link name -> contact material keys read from ``<gazebo reference="LINK">``
            tags (``kp``, ``kd``, ``mu1``/``mu2``, ``minDepth``, ``maxVel``) in the config's
            ``contacts`` form (stiffness, damping, friction, min_depth, max_push_velocity;
            docs/contacts.md).
        ros2_control: tuple of ``Ros2ControlSystem``, one per ``<ros2_control>`` tag
            (description/ros2_control.py).
        xml: the URDF XML text as read (xacro expanded, once), for ``robot_description``.
    """

    robot: object
    source: str
    lines: dict
    warnings: tuple = ()
    transmissions: dict = field(default_factory=dict)
    collisions: dict = field(default_factory=dict)
    base_dir: str = ''
    sensors: dict = field(default_factory=dict)
    materials: dict = field(default_factory=dict)
    ros2_control: tuple = ()
    xml: str = ''
    imus: dict = field(default_factory=dict)
    range_sensors: dict = field(default_factory=dict)

    def where(self, kind, name):
        """
        Describe an element for a message, e.g. "joint 'elbow' (line 42 of 'arm.urdf')".

        Args:
            kind: 'link' or 'joint'.
            name: the element's name attribute.

        Returns:
            str naming the element and its place in the source.
        """
        line = self.lines.get((kind, name))
        if line is not None:
            return f"{kind} '{name}' (line {line} of {self.source})"
        return f"{kind} '{name}' in {self.source}"


def close_matches(word, candidates, n=3):
    """Return a phrase listing the candidates closest to ``word`` ('' when none is close)."""
    matches = difflib.get_close_matches(str(word), [str(c) for c in candidates], n=n, cutoff=0.6)
    if not matches:
        return ''
    if len(matches) == 1:
        return f"did you mean '{matches[0]}'?"
    return 'did you mean one of ' + ', '.join(f"'{m}'" for m in matches) + '?'


def name_list(names, shown=3):
    """Return "'a', 'b', 'c' and 4 more" for a list of names."""
    names = list(names)
    text = ', '.join(f"'{n}'" for n in names[:shown])
    return text + (f' and {len(names) - shown} more' if len(names) > shown else '')


def parse_urdf(source, xacro_args=None):
    """
    Read a robot description into urdf_parser_py objects.

    Args:
        source: path (str or os.PathLike) of a ``.urdf`` file or a ``.xacro`` /
            ``.urdf.xacro`` file, or the URDF XML itself (a str starting with '<').
        xacro_args: optional dict of xacro arguments (``name:=value``) for xacro sources.

    Returns:
        UrdfDescription.

    Raises:
        DescriptionError: the file is missing, is not well-formed XML, fails in xacro, is not a
            ``<robot>``, has an unknown joint type, a duplicate name, or a value
            urdf_parser_py cannot read.
    """
    with _PARSER_LOCK:
        text, name, from_xacro, warnings = _read_source(source, xacro_args)
        xml_text = text.decode('utf-8', errors='replace')
        if not from_xacro:
            text, declaration_warnings = _repair_declarations(text, name)
            warnings += declaration_warnings
        root = _parse_xml(text, name)
        if not from_xacro and _uses_xacro(root):
            text, xacro_warnings = _expand_xacro_string(text, name, xacro_args)
            warnings += xacro_warnings
            root = _parse_xml(text, name)
            xml_text = text.decode('utf-8')
            from_xacro = True
        lines = _check_structure(root, name)
        warnings += _repair_values(root, name, from_xacro)
        transmissions = _transmission_ratios(root)
        collisions, collision_warnings = _collisions(root, name)
        warnings += collision_warnings
        sensors, sensor_warnings = _gazebo_sensors(root, name)
        warnings += sensor_warnings
        imus, imu_warnings = _gazebo_imus(root, name)
        warnings += imu_warnings
        range_sensors, range_warnings = _gazebo_ranges(root, name)
        warnings += range_warnings
        materials, material_warnings = _gazebo_materials(root, name, from_xacro)
        warnings += material_warnings
        ros2_control = read_ros2_control(root)
        warnings += _prune(root, name)
        robot, parser_warnings = _reflect(root, name, lines if not from_xacro else {})
    return UrdfDescription(robot=robot, source=name, lines={} if from_xacro else lines,
                           warnings=tuple(warnings + parser_warnings),
                           transmissions=transmissions, collisions=collisions,
                           base_dir=_base_dir(source), sensors=sensors, materials=materials,
                           ros2_control=ros2_control, xml=xml_text, imus=imus,
                           range_sensors=range_sensors)


def _base_dir(source):
    """Return the directory of a file source, '' for XML text."""
    if isinstance(source, (str, os.PathLike)) and not str(source).lstrip().startswith('<'):
        return os.path.dirname(os.path.abspath(os.fspath(source)))
    return ''


_SIZE_ATTRIBUTES = {'box': ('size',), 'sphere': ('radius',), 'cylinder': ('radius', 'length'),
                    'capsule': ('radius', 'length'), 'mesh': ()}


def _numbers(text):
    """Return the floats of a whitespace-separated attribute, or None if one is not a number."""
    try:
        values = tuple(float(v) for v in (text or '').split())
    except ValueError:
        return None
    return values if all(math.isfinite(v) for v in values) else None


def _collisions(root, name):
    """Read every link's collision geometry; return (link -> tuple, warnings)."""
    out = {}
    bad = []
    for link in root.iterfind('link'):
        shapes = []
        for element in link.iterfind('collision'):
            geometry = element.find('geometry')
            kinds = [] if geometry is None else list(geometry)
            if len(kinds) != 1 or kinds[0].tag not in _SIZE_ATTRIBUTES:
                continue  # reported by _prune
            shape = kinds[0]
            values = [_numbers(shape.get(a)) for a in _SIZE_ATTRIBUTES[shape.tag]]
            size = tuple(v for group in values if group is not None for v in group)
            origin = element.find('origin')
            xyz = _numbers(origin.get('xyz', '0 0 0')) if origin is not None else (0.0,) * 3
            rpy = _numbers(origin.get('rpy', '0 0 0')) if origin is not None else (0.0,) * 3
            scale = _numbers(shape.get('scale', '1 1 1')) if shape.tag == 'mesh' else (1.0,) * 3
            expected = {'box': 3, 'sphere': 1, 'cylinder': 2, 'capsule': 2, 'mesh': 0}
            if (any(v is None for v in values) or len(size) != expected[shape.tag]
                    or any(v <= 0 for v in size) or xyz is None or len(xyz) != 3
                    or rpy is None or len(rpy) != 3 or scale is None or len(scale) != 3
                    or (shape.tag == 'mesh' and not shape.get('filename'))):
                bad.append(f"{link.get('name')} (<{shape.tag}>, line {shape.sourceline})")
                continue
            shapes.append(CollisionGeometry(kind=shape.tag, size=size,
                                            filename=shape.get('filename') or '',
                                            scale=scale, xyz=xyz, rpy=rpy))
        if shapes:
            out[link.get('name')] = tuple(shapes)
    warnings = []
    if bad:
        warnings.append(f'{name}: ignored <collision> elements with missing, non-positive or '
                        f'unreadable sizes, origins or mesh filenames in: {", ".join(bad)}.  '
                        'Fix their attributes (box size="x y z", sphere radius, cylinder and '
                        'capsule radius and length, mesh filename).')
    return out, warnings


def _gazebo_sensors(root, name):
    """Read Gazebo force-torque sensor tags; return (sensor name -> settings, warnings)."""
    sensors = {}
    warnings = []
    for gazebo in root.iterfind('gazebo'):
        joint = gazebo.get('reference')
        for sensor in gazebo.iterfind('sensor'):
            if sensor.get('type') not in ('force_torque', 'force-torque'):
                continue
            label = sensor.get('name') or f'{joint}_ft'
            item = {'joint': joint}
            rate = _numbers(sensor.findtext('update_rate'))
            if rate is not None and len(rate) == 1 and rate[0] >= 0:
                item['rate'] = rate[0]
            settings = sensor.find('force_torque')
            for key in ('frame', 'measure_direction'):
                text = (settings.findtext(key) if settings is not None else None) or ''
                if text.strip():
                    item[key] = text.strip()
            pose = _numbers(sensor.findtext('pose'))
            if pose is not None and len(pose) == 6:
                item['pose'] = {'position': list(pose[:3]), 'rpy': list(pose[3:])}
            if not joint:
                warnings.append(f"{name}: force-torque sensor '{label}' (line "
                                f'{sensor.sourceline}) is in a <gazebo> tag without '
                                'reference="JOINT"; ignored.  Name the joint it sits on.')
                continue
            sensors[label] = item
    return sensors, warnings


#: SDF ``<noise>`` elements of an IMU axis -> the config's ImuAxisNoise key.
IMU_NOISE_TAGS = ('mean', 'stddev', 'bias_mean', 'bias_stddev', 'dynamic_bias_stddev',
                  'dynamic_bias_correlation_time')


def _gazebo_imus(root, name):
    """
    Read Gazebo IMU tags; return (IMU name -> settings in the ``imu_sensors`` form, warnings).

    ``<gazebo reference="LINK"><sensor name="NAME" type="imu">`` with ``<update_rate>``,
    ``<pose>`` (x y z roll pitch yaw in the link frame), ``<topic>`` and gz's
    ``<imu><angular_velocity|linear_acceleration><x|y|z><noise type="gaussian">`` elements
    (IMU_NOISE_TAGS).  A tag with a value that does not read as a number is announced with the
    file and line and skipped whole.
    """
    return _gazebo_link_sensors(root, name, lambda kind: 'imu' if kind == 'imu' else None,
                                lambda sensor, link, kind: _gazebo_imu(sensor, link),
                                'IMU', 'IMU', 'imu_sensors')


def _gazebo_link_sensors(root, name, kind_of, read, what, noun, section):
    """
    Read the sensors of ``<gazebo reference="LINK">`` tags; return (name -> settings, warnings).

    Args:
        root: the URDF's root element.
        name: the robot's name, for the messages.
        kind_of: a sensor's type attribute -> its kind, or None for a sensor read elsewhere.
        read: (sensor element, link, kind) -> its settings; ValueError for a value that does
            not read as a number (announced with the file and line, the sensor skipped).
        what: the sensor in the messages ("IMU" gives "IMU 'NAME' (line L)").
        noun: the sensor in the advice ("the IMU is skipped").
        section: the config section that declares one instead.
    """
    found = {}
    warnings = []
    for gazebo in root.iterfind('gazebo'):
        link = gazebo.get('reference')
        for sensor in gazebo.iterfind('sensor'):
            kind = kind_of(sensor.get('type'))
            if kind is None:
                continue
            label = sensor.get('name') or f'{link}_{kind}'
            where = f"{name}: {what} '{label}' (line {sensor.sourceline})"
            if not link:
                warnings.append(f'{where} is in a <gazebo> tag without reference="LINK"; '
                                'ignored.  Name the link it is fixed to.')
                continue
            try:
                found[label] = read(sensor, link, kind)
            except ValueError as error:
                warnings.append(f'{where}: {error}; the {noun} is skipped.  Fix the value (a '
                                f'number) or declare the {noun} in the config ({section}).')
    return found, warnings


def _gazebo_imu(sensor, link):
    """Return one IMU tag's settings; raise ValueError naming an unreadable element."""
    def number(element, what, count=1):
        values = _numbers(element.text)
        if values is None or len(values) != count:
            raise ValueError(f'<{what}> (line {element.sourceline}) reads '
                             f'{(element.text or "").strip()!r}, not {count} number'
                             + ('s' if count > 1 else ''))
        return values
    item = {'link': link}
    rate = sensor.find('update_rate')
    if rate is not None:
        item['rate'] = number(rate, 'update_rate')[0]   # its range: the config's check
    pose = sensor.find('pose')
    if pose is not None:
        values = number(pose, 'pose', 6)
        item['pose'] = {'position': list(values[:3]), 'rpy': list(values[3:])}
    topic = (sensor.findtext('topic') or '').strip()
    if topic:
        item['topic'] = topic
    noise = {}
    settings = sensor.find('imu')
    for quantity in ('angular_velocity', 'linear_acceleration'):
        element = settings.find(quantity) if settings is not None else None
        if element is None:
            continue
        axes = {}
        for k, axis in enumerate('xyz'):
            tag = element.find(f'{axis}/noise')
            if tag is None:
                continue
            for key in IMU_NOISE_TAGS:
                value = tag.find(key)
                if value is not None:
                    axes.setdefault(key, [0.0, 0.0, 0.0])[k] = number(value, key)[0]
        if 'dynamic_bias_correlation_time' in axes:
            times = [t for t in axes.pop('dynamic_bias_correlation_time') if t > 0.0]
            if times:
                axes['dynamic_bias_correlation_time'] = min(times)
        if axes:
            noise[quantity] = axes
    if noise:
        item['noise'] = noise
    return item


#: Gazebo sensor types read as range sensors -> their kind.
RANGE_SENSOR_TYPES = {'gpu_lidar': 'lidar', 'lidar': 'lidar', 'ray': 'lidar', 'gpu_ray': 'lidar',
                      'depth_camera': 'depth_camera', 'depth': 'depth_camera'}


def _gazebo_ranges(root, name):
    """
    Read Gazebo lidar and depth camera tags; return (name -> ``range_sensors`` form, warnings).

    ``<gazebo reference="LINK"><sensor name="NAME" type="...">`` (RANGE_SENSOR_TYPES) with
    ``<update_rate>`` and ``<pose>``; a lidar's ``<lidar>`` or ``<ray>`` with
    ``<scan><horizontal|vertical>`` (``<samples>``, ``<min_angle>``, ``<max_angle>``),
    ``<range>`` (``<min>``, ``<max>``, ``<resolution>``) and ``<noise>`` (``<mean>``,
    ``<stddev>``); a depth camera's ``<camera>`` with ``<horizontal_fov>``, ``<image>``
    (``<width>``, ``<height>``), ``<clip>`` (``<near>``, ``<far>``: its range) and ``<noise>``.
    A missing element takes the config's default.  A tag whose value does not read as a number
    is announced with the file and line, and the sensor skipped.
    """
    return _gazebo_link_sensors(root, name, RANGE_SENSOR_TYPES.get, _gazebo_range,
                                'range sensor', 'sensor', 'range_sensors')


def _gazebo_range(sensor, link, kind):
    """Return one lidar or depth camera tag's settings; raise ValueError naming a bad element."""
    def number(element, what, count=1):
        values = _numbers(element.text)
        if values is None or len(values) != count:
            raise ValueError(f'<{what}> (line {element.sourceline}) reads '
                             f'{(element.text or "").strip()!r}, not {count} number'
                             + ('s' if count > 1 else ''))
        return values

    def numbers_of(element, tags):
        """Return {key: value} of the child elements present (tags: key -> element path)."""
        out = {}
        if element is None:
            return out
        for key, path in tags.items():
            child = element.find(path)
            if child is not None:
                out[key] = number(child, path.rpartition('/')[2])[0]
        return out

    item = {'link': link, 'kind': kind}
    rate = sensor.find('update_rate')
    if rate is not None:
        item['rate'] = number(rate, 'update_rate')[0]   # its range: the config's check
    pose = sensor.find('pose')
    if pose is not None:
        values = number(pose, 'pose', 6)
        item['pose'] = {'position': list(values[:3]), 'rpy': list(values[3:])}
    if kind == 'lidar':
        body = sensor.find('lidar')
        if body is None:
            body = sensor.find('ray')
        noise_parent = body
        scan = body.find('scan') if body is not None else None
        for axis in ('horizontal', 'vertical'):
            values = numbers_of(scan.find(axis) if scan is not None else None,
                                {'samples': 'samples', 'min_angle': 'min_angle',
                                 'max_angle': 'max_angle'})
            if values:
                item[axis] = values
        limits = numbers_of(body.find('range') if body is not None else None,
                            {'min': 'min', 'max': 'max', 'resolution': 'resolution'})
    else:
        camera = sensor.find('camera')
        noise_parent = camera
        limits = {}
        if camera is not None:
            item.update(numbers_of(camera, {'horizontal_fov': 'horizontal_fov',
                                            'width': 'image/width', 'height': 'image/height'}))
            limits = numbers_of(camera.find('clip'), {'min': 'near', 'max': 'far'})
            limits.update(numbers_of(camera.find('depth_camera/clip'),
                                     {'min': 'near', 'max': 'far'}))
    if limits:
        item['range'] = limits
    noise = noise_parent.find('noise') if noise_parent is not None else None
    if noise is not None and (noise.findtext('type') or 'gaussian').strip() != 'none':
        values = numbers_of(noise, {'mean': 'mean', 'stddev': 'stddev'})
        if values:
            item['noise'] = values
    return item


#: Gazebo's contact tags under ``<gazebo reference="LINK">``: tag -> (config key, the check
#: a value passes, what it must be).
GAZEBO_MATERIAL_TAGS = {
    'kp': ('stiffness', lambda v: v > 0.0, 'a number > 0 (N/m)'),
    'kd': ('damping', lambda v: v >= 0.0, 'a number >= 0 (N s/m)'),
    'mu1': ('friction', lambda v: v >= 0.0, 'a number >= 0'),
    'mu2': ('friction', lambda v: v >= 0.0, 'a number >= 0'),
    'minDepth': ('min_depth', lambda v: v >= 0.0, 'a number >= 0 (m)'),
    'maxVel': ('max_push_velocity', lambda v: v > 0.0, 'a number > 0 (m/s)'),
}


def _gazebo_materials(root, name, from_xacro):
    """
    Read the contact tags of ``<gazebo reference="LINK">``; return (link -> keys, warnings).

    A value is the tag's ``value`` attribute or its text (both forms are published).  An
    unreadable one is announced (file and line) and left at the default.  ``mu1`` and ``mu2``
    give one friction coefficient (the engine's friction is isotropic): the smaller.
    """
    materials = {}
    bad = []
    anisotropic = []
    for gazebo in root.iterfind('gazebo'):
        link = gazebo.get('reference')
        if not link:
            continue
        found = {}
        for tag, (key, valid, expected) in GAZEBO_MATERIAL_TAGS.items():
            element = gazebo.find(tag)
            if element is None:
                continue
            text = element.get('value', element.text)
            value = _numbers(text)
            if value is None or len(value) != 1 or not valid(value[0]):
                where = ('xacro output' if from_xacro else 'line') + f' {element.sourceline}'
                bad.append(f'<{tag}> of {link} ({where}: {(text or "").strip()!r}, expected '
                           f'{expected})')
                continue
            found.setdefault(key, []).append(value[0])
        if not found:
            continue
        friction = found.get('friction', [])
        if len(set(friction)) > 1:
            anisotropic.append(f'{link} (mu1/mu2 {friction[0]:g}/{friction[1]:g})')
        materials.setdefault(link, {}).update({key: min(values) for key, values in found.items()})
    warnings = []
    if bad:
        warnings.append(f'{name}: unreadable Gazebo contact values left at the default: '
                        f'{"; ".join(bad)}.  Fix the value, or set the link\'s material in the '
                        "config's contacts section.")
    if anisotropic:
        warnings.append(f'{name}: Gazebo mu1 and mu2 differ for {", ".join(anisotropic)}; the '
                        'friction here is isotropic and takes the smaller (docs/contacts.md).')
    return materials, warnings


def _subject(name):
    """Return how a message names the description: "robot description 'a.urdf'" or similar."""
    return f'robot description {name}' if name.startswith("'") else name


def _read_source(source, xacro_args):
    """Return (xml bytes, display name, expanded by xacro, warnings) for a source."""
    if isinstance(source, bytes):
        source = source.decode('utf-8')
    if isinstance(source, str) and source.lstrip().startswith('<'):
        return source.encode('utf-8'), 'the URDF string', False, []
    try:
        path = os.fspath(source)
    except TypeError:
        raise DescriptionError(
            f'robot description must be a file path or URDF XML text, got {type(source).__name__}'
            f' {source!r}.') from None
    if not path.strip():
        raise DescriptionError('robot description is empty: give the path of a .urdf or .xacro '
                               'file, or the URDF XML text.')
    if not os.path.isfile(path):
        raise DescriptionError(
            f"robot description file '{path}' does not exist (the text does not start with '<',"
            ' so it was taken as a path).  Give the path of an existing .urdf or .xacro file, or '
            'the URDF XML itself.')
    if path.endswith('.xacro'):
        text, warnings = _expand_xacro_file(path, xacro_args)
        return text, f"'{path}'", True, warnings
    with open(path, 'rb') as stream:
        return stream.read(), f"'{path}'", False, []


def _xacro_failure(name, error, stderr):
    """Build the DescriptionError for a failed xacro run."""
    location = ''
    stack = [f for f in (xacro.filestack or []) if f]
    if stack and os.path.abspath(stack[-1]) != os.path.abspath(name.strip("'")):
        location = f' (in included file {stack[-1]})'
    if isinstance(error, xml.parsers.expat.ExpatError):
        reason = f'is not well-formed XML: {error}'
        fix = 'Fix the XML at that line (closed tags, quoted attributes).'
    else:
        reason = f'failed in xacro: {error or type(error).__name__}'
        fix = ('Check the macro, property or argument it names (and that the file declares '
               f'xmlns:xacro="{XACRO_NAMESPACE}").')
    detail = ' '.join(line.strip() for line in stderr.splitlines() if line.strip())
    detail = f' xacro said: {detail}' if detail and str(error) not in detail else ''
    return DescriptionError(f'{_subject(name)}{location} {reason}. {fix}{detail}')


def _expand_xacro_file(path, xacro_args):
    """Run xacro on a file; return (xml bytes, warnings)."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            doc = xacro.process_file(path, mappings=dict(xacro_args or {}))
    except Exception as error:  # xacro raises XacroException, ExpatError, NameError, ...
        raise _xacro_failure(f"'{path}'", error, stderr.getvalue()) from None
    return doc.toxml().encode('utf-8'), _xacro_warnings(stderr.getvalue(), f"'{path}'")


def _expand_xacro_string(text, name, xacro_args):
    """Run xacro on XML text that uses xacro elements; return (xml bytes, warnings)."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            xacro.init_stacks(None)
            doc = xacro.parse(text.decode('utf-8'))
            xacro.process_doc(doc, mappings=dict(xacro_args or {}))
    except Exception as error:  # xacro raises XacroException, ExpatError, NameError, ...
        raise _xacro_failure(name, error, stderr.getvalue()) from None
    return doc.toxml().encode('utf-8'), _xacro_warnings(stderr.getvalue(), name)


def _xacro_warnings(stderr, name):
    """Turn what xacro printed to stderr into warnings (one per line)."""
    return [f'xacro ({name}): {line.strip()}' for line in stderr.splitlines() if line.strip()]


def _parse_xml(data, name):
    """Parse XML bytes with lxml (line numbers kept, comments and PIs dropped)."""
    data = data.rstrip(b'\x00 \t\r\n')  # pybullet_data/humanoid.urdf ends with a NUL byte
    parser = etree.XMLParser(remove_comments=True, remove_pis=True)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as error:
        line = f' at line {error.lineno}' if error.lineno else ''
        raise DescriptionError(
            f'{_subject(name)} is not well-formed XML{line}: {error.msg}.  Fix the XML '
            'there (every tag closed, attribute values quoted, one root element).') from None


def _place(name, lines):
    """Return "'a.urdf' line 4" or "'a.urdf' lines 4, 9 and 2 more" ('a.urdf' alone: no lines)."""
    lines = sorted({n for n in lines if n})
    if not lines:
        return name
    shown = ', '.join(str(n) for n in lines[:4])
    more = f' and {len(lines) - 4} more' if len(lines) > 4 else ''
    return f"{name} line{'s' if len(lines) > 1 else ''} {shown}{more}"


def _repair_declarations(data, name):
    """
    Make the XML declaration one lxml accepts; return (xml bytes, warnings).

    TinyXML (PyBullet, urdfdom before 4.0) does not check the declaration: seven minitaur,
    quadruped and bike files of pybullet_data declare version "0.0", and two start with blank
    lines or a comment before it.  XML allows one declaration, first in the document.  A version
    other than 1.0 is read as 1.0; a declaration after other content is blanked out (its
    newlines kept, so every line number stays that of the file).
    """
    comments = [m.span() for m in _COMMENT.finditer(data)]
    start = 3 if data.startswith(b'\xef\xbb\xbf') else 0
    versions, late = [], []
    out, done = [], 0
    for match in _DECLARATION.finditer(data):
        if any(a <= match.start() < b for a, b in comments):
            continue
        text = match.group()
        line = data.count(b'\n', 0, match.start()) + 1
        if match.start() == start:
            version = _VERSION.search(text)
            if version is None or version.group(3) == b'1.0':
                continue
            versions.append((line, version.group(3).decode('utf-8', 'replace')))
            text = text[:version.start(3)] + b'1.0' + text[version.end(3):]
        else:
            late.append(line)
            text = re.sub(rb'[^\n]', b' ', text)
        out += [data[done:match.start()], text]
        done = match.end()
    warnings = []
    if versions:
        line, version = versions[0]
        warnings.append(f'{_place(name, [line])}: XML declaration version="{version}" is not an '
                        'XML version; assumed 1.0 (TinyXML, which PyBullet and urdfdom before '
                        '4.0 use, does not check it).  Write <?xml version="1.0"?>.')
    if late:
        warnings.append(f'{_place(name, late)}: XML declaration after blank lines or a comment, '
                        'where XML does not allow one; ignored and assumed XML 1.0 '
                        'UTF-8 (PyBullet reads such files).  Move the declaration to the first '
                        'line.')
    return b''.join(out) + data[done:], warnings


def _owner(element):
    """Describe the link or joint holding an element: "joint 'knee'" ('' at the top level)."""
    for ancestor in element.iterancestors():
        if ancestor.tag in ('link', 'joint'):
            return f"{ancestor.tag} '{ancestor.get('name')}'"
    return 'the robot'


def _repair_values(root, name, from_xacro):
    """
    Repair the values urdf_parser_py would refuse where PyBullet or urdfdom read them.

    - ``$(optenv VAR default)`` left in a vector attribute (pybullet_data's husky.urdf, from a
      xacro file that was never expanded): the default written there is used; the environment
      is not read, a ``.urdf`` is not a template.
    - Numbers separated by commas (pybullet_data's bike.urdf, ``xyz="0.07, 0, -0.69"``;
      PyBullet reads them, urdfdom refuses): the commas are read as separators.
    - A decimal number with a stray period after it in a ``<limit>``, ``<mass>``,
      ``<inertia>``, ``<dynamics>`` or ``<mimic>`` attribute ("-1.57."; PyBullet reads the
      number, urdfdom refuses): the number.
    - More than three numbers in an xyz, rpy or mesh scale (PyBullet reads the first three,
      urdfdom refuses): the extra ones are dropped when each is 0 (1 for a scale), which changes
      nothing whichever three were meant; any other extra value is an error.
    - A ``<limit>`` without effort or velocity (urdfdom refuses it, PyBullet reads 0): unlimited.
    - PyBullet's spherical ``<limit lower upper twist>`` (swing about x, swing about y, twist,
      rad): jointsim's ball joint has no limit; the values are announced and not used.

    Args:
        root: the <robot> element, changed in place.
        name: display name of the source.
        from_xacro: True when the XML is xacro output (its line numbers are not the file's).

    Returns:
        list of warnings, one per kind of repair.
    """
    found = {}

    def note(kind, element, example):
        found.setdefault(kind, ([], example))[0].append(
            None if from_xacro else element.sourceline)

    for element in root.iter('origin', 'axis', 'mesh'):
        for attribute in ('xyz', 'rpy', 'scale'):
            neutral = _VECTORS.get((element.tag, attribute))
            value = element.get(attribute)
            if neutral is None or value is None:
                continue
            substitution = _OPTENV.fullmatch(value.strip())
            if substitution and substitution.group(2).strip():
                note('optenv', element, f'<{element.tag} {attribute}="{value}"> in '
                     f'{_owner(element)} read as "{substitution.group(2).strip()}"')
                value = substitution.group(2).strip()
                element.set(attribute, value)
            if ',' in value and _numbers(value.replace(',', ' ')) is not None:
                note('commas', element, f'<{element.tag} {attribute}="{value}"> in '
                     f'{_owner(element)}')
                value = ' '.join(value.replace(',', ' ').split())
                element.set(attribute, value)
            numbers = _numbers(value)
            if numbers is None or len(numbers) <= 3:
                continue
            if any(v != neutral for v in numbers[3:]):
                where = '' if from_xacro else f' (line {element.sourceline})'
                raise DescriptionError(
                    f'{_subject(name)}: <{element.tag} {attribute}="{value}"> in '
                    f'{_owner(element)}{where} has {len(numbers)} numbers where 3 are '
                    f'expected, and the extra ones are not {neutral:g}, so which three were '
                    'meant is not known.  Give three numbers.')
            note('extra', element, f'<{element.tag} {attribute}="{value}"> in {_owner(element)}')
            element.set(attribute, ' '.join(value.split()[:3]))
    for element in root.iter('limit', 'mass', 'inertia', 'dynamics', 'mimic'):
        for attribute, value in element.attrib.items():
            number = _TRAILING_PERIOD.fullmatch(value)
            if number:
                note('period', element, f'<{element.tag} {attribute}="{value}"> in '
                     f'{_owner(element)}')
                element.set(attribute, number.group(1))
    for joint in root.iterfind('joint'):
        limit = joint.find('limit')
        if limit is None:
            continue
        if joint.get('type') == 'spherical':
            swing = {k: limit.attrib.pop(k) for k in ('lower', 'upper', 'twist')
                     if k in limit.attrib}
            if swing:
                values = ', '.join(f'{k}={v}' for k, v in swing.items())
                note('spherical', limit, f"joint '{joint.get('name')}' ({values})")
        missing = [k for k in ('effort', 'velocity') if limit.get(k) is None]
        for key in missing:
            limit.set(key, 'inf')
        if missing:
            note('limit', limit, f"joint '{joint.get('name')}' has no {' and no '.join(missing)}")
    texts = {
        'optenv': ('a $(optenv VAR default) substitution left in a vector ({example}){count}; '
                   'assumed the default written there (the environment is not read: a .urdf '
                   'is not expanded by xacro).  Expand the file with xacro or write the numbers.'),
        'commas': ('numbers of a vector separated by commas ({example}){count}; assumed '
                   'the commas are separators, as PyBullet reads them (urdfdom refuses '
                   'them).  Separate the numbers with spaces.'),
        'period': ('a number followed by a stray period ({example}){count}; assumed the '
                   'number before it, as PyBullet reads it (urdfdom refuses it).  Remove the '
                   'period.'),
        'extra': ('a vector with more than three numbers ({example}){count}; the extra ones '
                  'are 0 (1 for a scale), so assumed the first three, as PyBullet reads them '
                  '(urdfdom refuses them).  Give three numbers.'),
        'limit': ('<limit> without effort or velocity ({example}){count}; assumed unlimited '
                  '(urdfdom requires both; PyBullet reads 0, no limit).  Give effort and '
                  'velocity.'),
        'spherical': ("PyBullet's spherical joint limit ({example}: lower and upper swing about "
                      'x and y, twist, rad){count} is not enforced; assumed a free ball joint.'),
    }
    warnings = []
    for kind, (lines, example) in found.items():
        count = f' ({len(lines)} places)' if len(lines) > 1 else ''
        warnings.append(f'{_place(name, lines)}: '
                        + texts[kind].format(example=example, count=count))
    return warnings


def _uses_xacro(root):
    """Return True when the XML holds xacro elements (declaring the namespace alone is not use)."""
    return any(isinstance(e.tag, str) and e.tag.startswith('{' + XACRO_NAMESPACE)
               for e in root.iter())


def _check_structure(root, name):
    """Check the root element, names and joint types; return ('link'|'joint', name) -> line."""
    if root.tag != 'robot':
        raise DescriptionError(
            f'{_subject(name)} has root element <{root.tag}>, not <robot>.  Give a URDF '
            '(an SDF or MJCF file is not supported; a .xacro file must be named *.xacro).')
    if _uses_xacro(root):
        raise DescriptionError(
            f'{_subject(name)} still contains xacro elements after xacro expansion.  '
            'Check the xacro namespace declaration.')
    lines = {}
    for element in root:
        if element.tag not in ('link', 'joint'):
            continue
        kind = element.tag
        element_name = element.get('name')
        if not element_name:
            raise DescriptionError(
                f'{_subject(name)}: <{kind}> at line {element.sourceline} has no name '
                'attribute.  Give every link and joint a unique name.')
        if (kind, element_name) in lines:
            first = lines[(kind, element_name)]
            raise DescriptionError(
                f"{_subject(name)}: {kind} '{element_name}' is defined twice (lines "
                f'{first} and {element.sourceline}).  Rename or remove one of them.')
        lines[(kind, element_name)] = element.sourceline
        if kind == 'joint':
            joint_type = element.get('type')
            if joint_type not in JOINT_TYPES:
                hint = close_matches(joint_type, JOINT_TYPES)
                raise DescriptionError(
                    f"{_subject(name)}: joint '{element_name}' (line "
                    f'{element.sourceline}) has {_type_text(joint_type)}'
                    f"{'; ' + hint if hint else '.'}  Use one of: {', '.join(JOINT_TYPES)}.")
    return lines


def _type_text(joint_type):
    """Describe a joint type attribute value for a message."""
    return 'no type attribute' if joint_type is None else f"unknown type '{joint_type}'"


def _transmission_ratios(root):
    """
    Read joint -> mechanicalReduction from single-joint ``<transmission>`` elements.

    Both the ROS 1 layout (``<mechanicalReduction>`` under ``<actuator>``) and the old one (under
    ``<transmission>``) are read; a transmission naming several joints is skipped.
    """
    ratios = {}
    for transmission in root.iterfind('transmission'):
        joints = [j.get('name') for j in transmission.iter('joint') if j.get('name')]
        reduction = transmission.find('.//mechanicalReduction')
        if len(joints) != 1 or reduction is None:
            continue
        try:
            value = float((reduction.text or '').strip())
        except ValueError:
            continue
        if value != 0:
            ratios[joints[0]] = value
    return ratios


def _prune(root, name):
    """Remove elements the model does not use and urdf_parser_py may choke on; return warnings."""
    for element in list(root):
        if element.tag in IGNORED_TOP_LEVEL:
            root.remove(element)
    # urdfdom and PyBullet read a <texture> without filename as no texture; urdf_parser_py
    # raises.  Materials do not reach the model, so it is dropped without a warning.
    for texture in list(root.iter('texture')):
        if texture.get('filename') is None:
            texture.getparent().remove(texture)
    dropped = {}
    for link in root.iterfind('link'):
        for shape in list(link):
            if shape.tag not in ('visual', 'collision'):
                continue
            geometry = shape.find('geometry')
            kinds = [] if geometry is None else [c.tag for c in geometry]
            if len(kinds) != 1 or kinds[0] not in GEOMETRY_TAGS:
                link.remove(shape)
                if kinds == ['capsule']:
                    continue  # a collision capsule is read by _collisions; visuals do not matter
                found = ', '.join(f'<{k}>' for k in kinds) or 'no shape'
                dropped.setdefault((shape.tag, found), []).append(link.get('name'))
    warnings = []
    for (tag, found), links in dropped.items():
        warnings.append(f'{name}: ignored <{tag}> elements whose <geometry> has {found} '
                        f"(supported: {', '.join(GEOMETRY_TAGS)}) in {len(links)} "
                        f"link{'s' if len(links) > 1 else ''}: {name_list(links)}.")
    return warnings


def _reflect(root, name, lines):
    """Run urdf_parser_py on a checked tree, capturing its on_error reports."""
    reports = []
    saved = (reflection_core.on_error, xml_reflection.on_error)
    reflection_core.on_error = xml_reflection.on_error = reports.append
    try:
        path = reflection_core.Path(urdf_types.Robot.XML_REFL.tag,
                                    tree=etree.ElementTree(root))
        robot = urdf_types.Robot.from_xml(root, path)
    except Exception as error:  # urdf_parser_py raises ParseError, ValueError, AssertionError
        raise DescriptionError(_parse_error_text(error, name, lines)) from None
    finally:
        reflection_core.on_error, xml_reflection.on_error = saved
    return robot, _reports_that_matter(reports, name)


def _parse_error_text(error, name, lines):
    """Describe a urdf_parser_py failure: the element, its line and the fix."""
    path = str(getattr(error, 'path', '') or '')
    reason = str(getattr(error, 'e', error)).strip() or type(error).__name__
    where = ''
    found = _PATH_ELEMENT.findall(path)
    if found:
        kind, element_name = found[-1]
        line = lines.get((kind, element_name))
        where = f" in {kind} '{element_name}'" + (f' (line {line})' if line else '')
    element = f' at {path}' if path else ''
    return (f'{_subject(name)} cannot be read{where}: {reason}{element}.  Fix that '
            'element (URDF reference: http://wiki.ros.org/urdf/XML).')


def _reports_that_matter(reports, name):
    """Turn urdf_parser_py reports that can change the model into warnings, grouped by kind."""
    grouped = {}
    warnings = []
    for report in reports:
        match = _UNKNOWN.match(report)
        if not match:
            if report.startswith('Scalar element defined multiple times'):
                warnings.append(f'{name}: {report}; only the first is used.')
            continue
        what, item, path = match.groups()
        inside = re.sub(r'^/robot(\[[^\]]*\])?', '', path)
        element = re.sub(r"\[@name='[^']*'\]|\[\d+\]", '', inside).strip('/')
        owners = _PATH_ELEMENT.findall(inside)
        if element == '' and what == 'tag':
            hint = close_matches(item, ('link', 'joint'))
            if hint:
                warnings.append(f'{name}: unknown top-level element <{item}> ignored; {hint}')
        elif element == 'link' and what == 'tag' and item in ('mass', 'inertia'):
            warnings.append(f"{name}: <{item}> directly in link '{owners[-1][1]}' is ignored; "
                            'it belongs inside <inertial>.')
        elif _MATTERS.match(element):
            key = (what, item, element)
            grouped.setdefault(key, []).extend(o[1] for o in owners[-1:])
    for (what, item, element), owners in grouped.items():
        kind = element.split('/')[0]
        plural = 's' if len(owners) > 1 else ''
        warnings.append(f'{name}: unknown {what} "{item}" in <{element}> ignored ({len(owners)} '
                        f'{kind}{plural}: {name_list(owners)}).')
    return warnings
