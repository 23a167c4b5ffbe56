"""
What the browser view draws, from whatever feeds it: no rclpy here (docs/view.md).

The ROS node (``view/node.py``) feeds it from topics, ``jointsim_headless --view`` from a
Simulator.  The pure part turns data into drawing: the robot's visual shapes from its URDF
(:func:`link_visuals`), link poses in the world from TF edges (:func:`world_poses`), an arrow
from a wrench (:func:`wrench_arrows`), a range sensor's points (:func:`scan_points`,
:func:`cloud_points`, :func:`depth_points`, :func:`ray_points`, put in the world by
:func:`to_world`), the plot
buffers (:class:`PlotBuffer`).  ``ViewScene`` puts them in a viser server's scene and panel.
"""
from collections import deque
import contextlib
from dataclasses import dataclass, replace
import io
import logging
import math
import socket
import threading

import numpy as np

from ..description import meshes
from ..description.urdf import parse_urdf
from ..rotations import matrix_to_quat, quat_multiply, quat_to_matrix, rpy_to_matrix

LOGGER = logging.getLogger('jointsim_ros')
#: Length of a force arrow per newton, m/N, and of a torque arrow per newton metre, m/(N m).
FORCE_SCALE = 0.002
TORQUE_SCALE = 0.02
#: Colours (RGB 0-255): links without a URDF colour, force arrows, torque arrows, contacts.
LINK_COLOUR = (232, 120, 32)
FORCE_COLOUR = (220, 30, 30)
TORQUE_COLOUR = (30, 90, 220)
CONTACT_COLOUR = (250, 220, 0)
#: Colours of a lidar's hits and of a depth camera's points.
SCAN_COLOUR = (255, 40, 160)
DEPTH_COLOUR = (40, 200, 255)
#: The most points drawn of one range sensor: a larger sample is thinned evenly (a browser
#: without a GPU draws every point of every frame).
MOST_RANGE_POINTS = 5000
#: Size of a drawn point of a lidar and of a depth camera, m.
SCAN_POINT_SIZE = 0.03
DEPTH_POINT_SIZE = 0.02
#: Samples a plot keeps (at the plots' rate, 10 Hz: 30 s).
PLOT_SAMPLES = 300
#: s: the longest wait for the view server to stop (ViewScene.close).
CLOSE_TIMEOUT = 5.0
#: A link that moved less than this (m, and in quaternion components) is not sent again.
SAME_POSE = 1e-4
#: Where the page's camera starts: position and the point looked at (world, m), vertical field
#: of view (rad); z is up.
CAMERA_POSITION = (2.2, -2.2, 1.6)
CAMERA_LOOK_AT = (0.0, 0.0, 0.6)
CAMERA_FOV = math.radians(50.0)


#: The framing camera looks along this direction (from the camera to the scene; z up) and
#: keeps this margin around the scene's bounding sphere (1: the sphere touches the frame).
FRAMING_DIRECTION = (-1.0, 1.0, -0.55)
FRAMING_MARGIN = 1.15
#: The smallest scene radius framed, m (a single point or a tiny robot).
FRAMING_MIN_RADIUS = 0.3


def framing(points, fov=CAMERA_FOV, aspect=1.6, direction=FRAMING_DIRECTION):
    """
    Return (position, look_at) of a camera that shows every point (world, m; z up).

    The camera looks along ``direction`` at the centre of the points' bounding box, from the
    distance at which their bounding sphere fits the vertical field of view ``fov`` (rad) and
    the horizontal one of a canvas ``aspect`` times as wide, with FRAMING_MARGIN to spare.
    """
    points = np.asarray(points, float).reshape(-1, 3)
    low, high = points.min(axis=0), points.max(axis=0)
    centre = 0.5 * (low + high)
    radius = max(0.5 * float(np.linalg.norm(high - low)), FRAMING_MIN_RADIUS)
    half = min(0.5 * fov, math.atan(aspect * math.tan(0.5 * fov)))
    distance = FRAMING_MARGIN * radius / math.sin(half)
    d = np.asarray(direction, float)
    d /= np.linalg.norm(d)
    return centre - distance * d, centre


def project(points, width, height, position=CAMERA_POSITION, look_at=CAMERA_LOOK_AT,
            fov=CAMERA_FOV):
    """
    Return the pixel coordinates (n, 2) of world points on the page's canvas (z up).

    A pinhole camera at ``position`` looking at ``look_at`` with vertical field of view
    ``fov``, as three.js's PerspectiveCamera draws: x to the right, y down, from the top left.
    """
    position = np.asarray(position, float)
    forward = np.asarray(look_at, float) - position
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    d = np.asarray(points, float).reshape(-1, 3) - position
    depth = d @ forward
    half = math.tan(0.5 * fov)
    x = (d @ right) / (depth * half * width / height)
    y = (d @ up) / (depth * half)
    return np.stack([(x + 1.0) * 0.5 * width, (1.0 - y) * 0.5 * height], axis=1)


@dataclass(frozen=True)
class Visual:
    """
    One visual shape of a link, in the link's frame.

    Attributes:
        link: the link.
        kind: 'box', 'sphere', 'cylinder' or 'mesh'.
        size: box (x, y, z) full lengths; sphere (r,); cylinder (r, length), m.
        pos, quat: (3,), (4,) wxyz pose in the link frame.
        colour: (r, g, b) 0-255.
        vertices, faces: the mesh (scaled), for 'mesh'.
    """

    link: str
    kind: str
    size: tuple
    pos: tuple
    quat: tuple
    colour: tuple
    vertices: object = None
    faces: object = None


def link_visuals(urdf_text, announce=LOGGER.warning):
    """
    Return the Visuals of a URDF's links (its ``<visual>``s, else its ``<collision>``s).

    A mesh that cannot be found or read is drawn as its link's collision shapes, or as a small
    box, and announced once (``announce``) for the whole robot.
    """
    description = parse_urdf(urdf_text)
    robot = description.robot
    base_dir = getattr(description, 'base_dir', None)
    out, missing = [], []
    colours = {m.name: m.color.rgba[:3] for m in (robot.materials or [])
               if m.color is not None and m.name}
    for link in robot.links:
        made = _shapes(link, link.visuals or [], base_dir, colours, missing)
        if not made and link.collisions:
            made = _shapes(link, link.collisions, base_dir, colours, [])
        if not made and (link.visuals or link.collisions):
            made = [Visual(link.name, 'box', (0.05, 0.05, 0.05), (0.0, 0.0, 0.0),
                           (1.0, 0.0, 0.0, 0.0), LINK_COLOUR)]
        out += made
    if missing:
        announce(f'view: {len(missing)} mesh(es) of the robot were not found or not readable '
                 f"({', '.join(sorted(set(missing))[:3])}...): those links are drawn with their "
                 'collision shapes or as boxes.')
    return out


def _shapes(link, elements, base_dir, colours, missing):
    """Return the Visuals of a link's visual or collision elements."""
    made = []
    for element in elements:
        geometry = element.geometry
        origin = element.origin
        xyz = tuple(origin.xyz) if origin is not None and origin.xyz else (0.0, 0.0, 0.0)
        rpy = origin.rpy if origin is not None and origin.rpy else (0.0, 0.0, 0.0)
        quat = tuple(matrix_to_quat(rpy_to_matrix(rpy)))
        colour = LINK_COLOUR
        material = getattr(element, 'material', None)
        if material is not None:
            rgba = (material.color.rgba if material.color is not None
                    else colours.get(material.name))
            if rgba is not None:
                colour = tuple(int(round(255 * min(max(c, 0.0), 1.0))) for c in rgba[:3])
        kind = type(geometry).__name__.lower()
        if kind == 'box':
            made.append(Visual(link.name, 'box', tuple(geometry.size), xyz, quat, colour))
        elif kind == 'sphere':
            made.append(Visual(link.name, 'sphere', (geometry.radius,), xyz, quat, colour))
        elif kind == 'cylinder':
            made.append(Visual(link.name, 'cylinder', (geometry.radius, geometry.length), xyz,
                               quat, colour))
        elif kind == 'mesh':
            path = meshes.resolve_mesh_uri(geometry.filename, base_dir=base_dir)
            try:
                if path is None:
                    raise meshes.MeshError('not found')
                import trimesh
                mesh = trimesh.load_mesh(str(path), process=False)
                scale = np.asarray(geometry.scale if geometry.scale else (1, 1, 1), float)
                made.append(Visual(link.name, 'mesh', (), xyz, quat, colour,
                                   np.asarray(mesh.vertices, float) * scale,
                                   np.asarray(mesh.faces, np.int64)))
            except Exception:  # noqa: B902 (a mesh that cannot be drawn is announced, once)
                missing.append(str(geometry.filename))
    return made


def world_poses(edges, world_frame, prefix=''):
    """
    Compose TF edges into each frame's pose in the world frame.

    Args:
        edges: dict child frame -> (parent frame, xyz (3,), quat wxyz (4,)).
        world_frame: the root frame.
        prefix: frame prefix to strip from the names returned.

    Returns:
        dict frame name (prefix stripped) -> (xyz np.ndarray(3), quat np.ndarray(4)); frames
        not connected to the world are left out.
    """
    poses = {world_frame: (np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))}

    def resolve(frame, depth=0):
        if frame in poses:
            return poses[frame]
        if frame not in edges or depth > 256:
            return None
        parent, xyz, quat = edges[frame]
        base = resolve(parent, depth + 1)
        if base is None:
            return None
        pos = base[0] + quat_to_matrix(base[1]) @ np.asarray(xyz, float)
        poses[frame] = (pos, quat_multiply(base[1], np.asarray(quat, float)))
        return poses[frame]

    for frame in list(edges):
        resolve(frame)
    poses.pop(world_frame)
    return strip_prefix(poses, prefix)


def strip_prefix(poses, prefix):
    """Return ``poses`` (frame -> pose) with ``prefix`` taken off the frame names that have it."""
    if not prefix:
        return dict(poses)
    cut = len(prefix)
    return {(name[cut:] if name.startswith(prefix) else name): pose
            for name, pose in poses.items()}


def wrench_arrows(force, torque, pos, quat, force_scale=FORCE_SCALE,
                  torque_scale=TORQUE_SCALE):
    """
    Return the arrows of a wrench measured in a frame at (pos, quat): world segments.

    Returns:
        ((start (3,), end (3,)) of the force, (start, end) of the torque), world m: each from
        the frame's origin along the vector, force_scale m per N and torque_scale m per N m.
    """
    rot = quat_to_matrix(np.asarray(quat, float))
    origin = np.asarray(pos, float)
    return ((origin, origin + force_scale * (rot @ np.asarray(force, float))),
            (origin, origin + torque_scale * (rot @ np.asarray(torque, float))))


def scan_points(ranges, angle_min, angle_increment):
    """
    Return the hits of a 2-D scan (a LaserScan) in its frame, (n, 3) m.

    Reading k is at ``angle_min + k angle_increment`` about the frame's z axis from its x axis;
    readings that are not finite (nothing in range, too near: REP 117) are left out.
    """
    r = np.asarray(ranges, dtype=float).reshape(-1)
    a = angle_min + angle_increment * np.arange(len(r))
    hit = np.isfinite(r)
    r, a = r[hit], a[hit]
    return np.stack([r * np.cos(a), r * np.sin(a), np.zeros_like(r)], axis=1)


def cloud_points(data, fields, point_step, count, big_endian=False):
    """
    Return the finite points of a PointCloud2's x, y and z FLOAT32 fields, (n, 3) m.

    Args:
        data: the message's data (bytes).
        fields: {name: offset} of at least x, y and z (bytes into a point).
        point_step: bytes per point.
        count: points (width x height).
        big_endian: the message's is_bigendian.
    """
    order = '>' if big_endian else '<'
    kind = np.dtype({'names': ['x', 'y', 'z'], 'formats': [order + 'f4'] * 3,
                     'offsets': [fields['x'], fields['y'], fields['z']],
                     'itemsize': point_step})
    points = np.frombuffer(bytes(data), dtype=kind, count=count)
    xyz = np.stack([points['x'], points['y'], points['z']], axis=1).astype(float)
    return xyz[np.isfinite(xyz).all(axis=1)]


def depth_points(depth, k, most=MOST_RANGE_POINTS):
    """
    Return a depth image's points in its optical frame (z ahead, x right, y down), (n, 3) m.

    Pixel (u, v) at depth d (along the optical axis, REP 118) is at
    ``((u - cx) d / fx, (v - cy) d / fy, d)`` with the camera matrix ``k`` (CameraInfo's
    row-major 3 x 3).  Every s-th pixel of every s-th row is taken, s the least that keeps at
    most ``most`` pixels; depths that are not finite are left out.
    """
    depth = np.asarray(depth, dtype=float)
    height, width = depth.shape
    step = max(1, math.ceil(math.sqrt(height * width / most)))
    v, u = np.mgrid[0:height:step, 0:width:step]
    d = depth[::step, ::step]
    fx, cx, fy, cy = k[0], k[2], k[4], k[5]
    xyz = np.stack([(u - cx) * d / fx, (v - cy) * d / fy, d], axis=-1).reshape(-1, 3)
    return xyz[np.isfinite(xyz).all(axis=1)]


def ray_points(ranges, directions, depth=False, most=MOST_RANGE_POINTS):
    """
    Return a range sensor's reading as points in its frame, (n, 3) m (``jointsim_headless``).

    Args:
        ranges: (rows, columns) a lidar's ray lengths or (``depth``) a depth camera's depths
            along its x axis, m (``Simulator.sensors.ranges``).
        directions: (rows, columns, 3) unit ray directions in the sensor frame
            (``sensors.ray_directions``).
        depth: the readings are depths.
        most: at most about this many rays are taken (every s-th of every s-th row).
    """
    ranges = np.asarray(ranges, dtype=float)
    rows, columns = ranges.shape
    step = max(1, math.ceil(math.sqrt(rows * columns / most)))
    r, d = ranges[::step, ::step], np.asarray(directions)[::step, ::step]
    if depth:
        r = r / d[..., 0]
    hit = np.isfinite(r)
    return r[hit][:, None] * d[hit]


def thin(points, most=MOST_RANGE_POINTS):
    """Return at most ``most`` of the points (n, 3), every k-th."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    return points[::max(1, math.ceil(len(points) / most))]


def to_world(points, pos, quat):
    """Return points (n, 3) given in a frame at (pos, quat wxyz) in the world, (n, 3)."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    return points @ quat_to_matrix(np.asarray(quat, float)).T + np.asarray(pos, float)


class PlotBuffer:
    """The last PLOT_SAMPLES (time, value) samples of named series."""

    def __init__(self, samples=PLOT_SAMPLES):
        self.samples = samples
        self.time = deque(maxlen=samples)
        self.series = {}

    def add(self, seconds, values):
        """Append a sample of every series (dict name -> value; a missing one repeats NaN)."""
        if self.time and seconds < self.time[-1]:
            self.clear()  # time went back: a reset
        self.time.append(float(seconds))
        for name in set(self.series) | set(values):
            column = self.series.setdefault(
                name, deque([math.nan] * (len(self.time) - 1), maxlen=self.samples))
            column.append(float(values.get(name, math.nan)))

    def clear(self):
        """Forget every sample."""
        self.time.clear()
        self.series.clear()

    def arrays(self, names):
        """Return (time array, value arrays of the named series) for a plot."""
        t = np.array(self.time, dtype=float)
        return (t,) + tuple(np.array(self.series.get(n, [math.nan] * len(t)), dtype=float)
                            for n in names)


def free_port(port, host='127.0.0.1'):
    """Return ``port`` if nobody listens on it, else a free port the system gives."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # as a server binds: a port only waiting out its last connections is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
            return port
        except OSError:
            pass
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class ViewScene:
    """
    A viser server showing robots: links, contacts, wrench arrows, plots and controls.

    Args:
        port: the port asked for (a port in use: another, announced by ``announce``).
        host: where to listen (127.0.0.1: this machine only).
        announce: callable for the one-line messages (the URL, a port taken, missing meshes).
    """

    def __init__(self, port=8080, host='127.0.0.1', announce=print):
        import viser
        self.announce = announce
        chosen = free_port(port, host)
        if chosen != port:
            announce(f'view: port {port} is in use; using the free port {chosen} instead')
        with contextlib.redirect_stdout(io.StringIO()):   # viser's banner: the URL line says it
            self.server = viser.ViserServer(host=host, port=chosen, verbose=False)
        self.port = chosen
        self.url = f'http://{host}:{chosen}'
        self._links = {}            # every robot's link frame -> handle
        self._robots = {}           # robot prefix -> its {link frame -> handle}
        self._scene_frames = {}
        self._sent = {}
        self._wrench_handles = {}
        self._contacts = None
        self._ranges = {}           # range sensor -> its points' handle
        self._plots = {}
        self.server.scene.set_up_direction('+z')
        # no shadows: viser's are three cascaded shadow maps, drawn again every frame; in a
        # browser without a GPU a frame took about twice as long with them (docs/benchmarks.md,
        # "Issue 33", bench_view_page.py)
        self.server.scene.configure_default_lights(True, cast_shadow=False)
        self.set_camera(CAMERA_POSITION, CAMERA_LOOK_AT, CAMERA_FOV)
        self.server.scene.add_grid('/ground', width=4.0, height=4.0, cell_size=0.25)

    def set_robot(self, urdf_text, prefix=''):
        """
        Draw a robot's links (at the origin until their poses come), replacing its last.

        ``prefix``: what its links' frames carry (a world's robot ``NAME/``: its frames are
        ``NAME/link``); robots of other prefixes stay.
        """
        visuals = [replace(v, link=prefix + v.link)
                   for v in link_visuals(urdf_text, self.announce)]
        frames = self._robots.setdefault(prefix, {})
        self._draw_visuals('/robot', frames, visuals)
        self._links = {link: handle for robot in self._robots.values()
                       for link, handle in robot.items()}

    def robot_frames(self):
        """Return the link frames of every robot drawn."""
        return tuple(self._links)

    def set_scene(self, visuals):
        """
        Draw the scene's shapes (Visuals whose ``link`` is a TF frame), replacing the last.

        Spawned and deleted objects come as a new list (the simulator's scene_markers).
        """
        self._draw_visuals('/scene', self._scene_frames, visuals)

    def scene_frames(self):
        """Return the frames the scene's shapes hang on."""
        return tuple(self._scene_frames)

    def _draw_visuals(self, root, frames, visuals):
        """Replace the frames (dict frame -> handle) under ``root`` by those of ``visuals``."""
        for handle in frames.values():
            handle.remove()
        for frame in list(frames):
            self._sent.pop(frame, None)
        frames.clear()
        for k, visual in enumerate(visuals):
            # a world's frame 'NAME/link' is one scene node, not a child of a node NAME
            path = f'{root}/{visual.link.replace("/", ":")}'
            frame = frames.get(visual.link)
            if frame is None:
                frame = self.server.scene.add_frame(path, show_axes=False)
                frames[visual.link] = frame
            name = f'{path}/visual_{k}'
            pose = {'position': visual.pos, 'wxyz': visual.quat}
            scene = self.server.scene
            if visual.kind == 'box':
                scene.add_box(name, dimensions=visual.size, color=visual.colour, **pose)
            elif visual.kind == 'sphere':
                scene.add_icosphere(name, radius=visual.size[0], color=visual.colour, **pose)
            elif visual.kind == 'cylinder':
                scene.add_cylinder(name, radius=visual.size[0], height=visual.size[1],
                                   color=visual.colour, **pose)
            else:
                scene.add_mesh_simple(name, vertices=visual.vertices, faces=visual.faces,
                                      color=visual.colour, **pose)

    def set_poses(self, poses):
        """Place the links (dict link -> (xyz, quat wxyz) in the world)."""
        with self.server.atomic():
            for link, (pos, quat) in poses.items():
                frame = self._links.get(link, self._scene_frames.get(link))
                if frame is None:
                    continue
                pose = tuple(float(v) for v in pos) + tuple(float(v) for v in quat)
                last = self._sent.get(link)
                # what moved less than SAME_POSE (m, and quaternion units) is not sent again
                if last is not None and max(abs(a - b) for a, b in zip(pose, last)) < SAME_POSE:
                    continue
                self._sent[link] = pose
                frame.position, frame.wxyz = pose[:3], pose[3:]

    def set_contacts(self, points, arrows):
        """Draw contact points (n, 3) and normal-force arrows [(start, end)], world."""
        points = np.asarray(points, float).reshape(-1, 3)
        segments = np.array([[s, e] for s, e in arrows], float).reshape(-1, 2, 3)
        if len(points) == 0 or len(segments) == 0:
            # none: hidden (kept, so the scene is not rebuilt 30 times a second)
            if self._contacts is not None:
                for handle in self._contacts:
                    handle.visible = False
            return
        if self._contacts is None:
            self._contacts = [
                self.server.scene.add_point_cloud('/contacts/points', points=points,
                                                  colors=CONTACT_COLOUR, point_size=0.02),
                self.server.scene.add_line_segments('/contacts/forces', points=segments,
                                                    colors=CONTACT_COLOUR, thickness=3.0,
                                                    thickness_units='screen')]
            return
        cloud, lines = self._contacts
        # one colour for all (never resent): a page rebuilds a point cloud's material, and
        # compiles its shader again, whenever its colours change (100 ms or more in software
        # WebGL), and a walk's contacts change in number several times a second
        cloud.points = points
        lines.points = segments
        cloud.visible = lines.visible = True

    def set_range_points(self, name, points, depth=False):
        """
        Draw a range sensor's latest points (n, 3), world, replacing its last ones.

        A lidar's in SCAN_COLOUR, a depth camera's (``depth``) in DEPTH_COLOUR and smaller.
        At most MOST_RANGE_POINTS are drawn (thinned evenly); none hide them.
        """
        points = thin(points)
        handle = self._ranges.get(name)
        if handle is None:
            if not len(points):
                return
            # one colour, never resent: the page compiles a cloud's shader again when its
            # colours change (set_contacts)
            self._ranges[name] = self.server.scene.add_point_cloud(
                f'/ranges/{name.replace("/", ":")}', points=points,
                colors=DEPTH_COLOUR if depth else SCAN_COLOUR,
                point_size=DEPTH_POINT_SIZE if depth else SCAN_POINT_SIZE)
            return
        if not len(points):
            handle.visible = False
            return
        handle.points = points
        handle.visible = True

    def range_points(self):
        """Return {range sensor: its points drawn (n, 3), world} (hidden ones: none)."""
        return {name: np.asarray(handle.points, dtype=float) if handle.visible
                else np.zeros((0, 3)) for name, handle in self._ranges.items()}

    def set_wrench(self, name, arrows):
        """Draw a sensor's force and torque arrows ((start, end) pairs, world)."""
        segments = np.array([list(arrows[0]), list(arrows[1])], float)
        colours = np.array([[FORCE_COLOUR] * 2, [TORQUE_COLOUR] * 2], np.uint8)
        handle = self._wrench_handles.get(name)
        if handle is None:
            self._wrench_handles[name] = self.server.scene.add_line_segments(
                f'/wrenches/{name}', points=segments, colors=colours, thickness=4.0,
                thickness_units='screen')
        else:
            handle.points = segments

    def add_frame_axes(self, name, pos, quat):
        """Draw (or move) a sensor's frame axes (an IMU)."""
        handle = self._wrench_handles.get('axes:' + name)
        if handle is None:
            self._wrench_handles['axes:' + name] = self.server.scene.add_frame(
                f'/frames/{name}', axes_length=0.1, axes_radius=0.005,
                position=tuple(pos), wxyz=tuple(quat))
        else:
            handle.position, handle.wxyz = tuple(pos), tuple(quat)

    def add_plot(self, title, names):
        """Add a time plot of the named series over simulated seconds; return its key."""
        from viser import uplot
        t = np.zeros(1)
        data = (t,) + tuple(np.zeros(1) for _ in names)
        # the x axis is simulated seconds, not uPlot's default calendar time
        handle = self.server.gui.add_uplot(
            data=data, series=_plot_series(names), title=title, aspect=2.0,
            scales={'x': uplot.Scale(time=False)},
            axes=(uplot.Axis(label='simulated time, s'), uplot.Axis()))
        self._plots[title] = (handle, tuple(names))
        return title

    def plot_names(self, title):
        """Return the series a plot shows."""
        return self._plots[title][1]

    def update_plot(self, title, buffer, names=None):
        """Show a PlotBuffer's latest samples in a plot (``names``: show these series now)."""
        handle, shown = self._plots[title]
        if names is not None and tuple(names) != shown:
            shown = tuple(names)
            self._plots[title] = (handle, shown)
            handle.series = _plot_series(shown)
        data = buffer.arrays(shown)
        if len(data[0]):
            handle.data = data

    def add_controls(self, callbacks):
        """Add a button per (label, callable) of ``callbacks``."""
        for label, callback in callbacks:
            button = self.server.gui.add_button(label)
            button.on_click(lambda _, call=callback: call())

    def add_slider(self, label, low, high, value, callback):
        """Add a slider calling ``callback(value)`` when moved."""
        slider = self.server.gui.add_slider(label, min=float(low), max=float(high),
                                            step=(float(high) - float(low)) / 200.0,
                                            initial_value=float(value))
        slider.on_update(lambda _: callback(slider.value))
        return slider

    def set_camera(self, position, look_at, fov=None, now=False):
        """
        Set where the page's camera starts (world m; fov vertical, rad).

        ``now``: move the camera of every page already open there too.
        """
        position = tuple(float(v) for v in position)
        look_at = tuple(float(v) for v in look_at)
        camera = self.server.initial_camera
        camera.up = (0.0, 0.0, 1.0)
        camera.position, camera.look_at = position, look_at
        if fov is not None:
            camera.fov = float(fov)
        for client in (self.server.get_clients().values() if now else ()):
            camera = client.camera
            camera.up_direction = (0.0, 0.0, 1.0)
            camera.position, camera.look_at = position, look_at
            if fov is not None:
                camera.fov = float(fov)

    def close(self, timeout=CLOSE_TIMEOUT):
        """Stop the server, waiting at most ``timeout`` s (its threads end with the process)."""
        def stop():
            with contextlib.redirect_stdout(io.StringIO()):
                self.server.stop()
        stopping = threading.Thread(target=stop, name='jointsim_view_stop', daemon=True)
        stopping.start()
        stopping.join(timeout)


def _plot_series(names):
    """Return the uPlot series of a time plot of the named values."""
    from viser import uplot
    return (uplot.Series(label='t'),) + tuple(
        uplot.Series(label=n, stroke=_stroke(k)) for k, n in enumerate(names))


def most_moving(buffer, names, count):
    """Return up to ``count`` of ``names``, those whose values span most in a PlotBuffer."""
    data = buffer.arrays(names)[1:]
    spans = [float(np.nanmax(v) - np.nanmin(v)) if np.any(np.isfinite(v)) else 0.0
             for v in data]
    order = sorted(range(len(names)), key=lambda k: (-spans[k], k))
    return [names[k] for k in order[:count]]


def _stroke(k):
    """Return a distinct line colour for series k."""
    palette = ('#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6',
               '#bfef45')
    return palette[k % len(palette)]
