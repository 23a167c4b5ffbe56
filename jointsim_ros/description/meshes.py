"""
Mesh files for collision shapes: finding them, reading their vertices, convex hulls (numpy only).

- ``resolve_mesh_uri`` finds a URDF ``<mesh filename>`` (``package://``, ``model://``,
  ``file://``, absolute or relative path) on disk;
- ``load_mesh_vertices`` reads the distinct vertices of an STL (binary or ASCII), OBJ or
  COLLADA (.dae) file, in metres, with the URDF ``scale`` applied;
- ``convex_hull`` / ``simplify_hull`` turn them into a convex polytope with polygonal faces,
  counter-clockwise seen from outside;
- ``inertia_box_half_extents`` sizes the fallback box of a link whose mesh cannot be used.

Problems with a file or with its shape raise ``MeshError`` with a one-line message.
"""
import math
import os
from pathlib import Path
import re
import xml.etree.ElementTree as ET

import numpy as np

from ..rotations import axis_angle_matrix

#: File extensions ``load_mesh_vertices`` reads.
SUPPORTED_EXTENSIONS = ('.stl', '.obj', '.dae')
#: Vertices equal when rounded to this many decimals (m, before scaling) are one vertex.
DEDUPLICATE_DECIMALS = 9
#: Hull points are snapped to a grid of 2**HULL_GRID_BITS steps across the largest side of their
#: bounding box (about 1e-6 of it); there the hull's orientation tests are exact (int64).
HULL_GRID_BITS = 20
#: Hull faces within this fraction of the largest bounding-box side of one plane merge into one
#: polygon, and a point that close outside a hull counts as inside it (a few grid steps).
HULL_TOLERANCE = 4.0 / 2 ** HULL_GRID_BITS
#: Half extent of a fallback box along an axis whose squared extent comes out negative, m.
MIN_BOX_HALF_EXTENT = 1e-3

_URI_SCHEMES = ('package://', 'model://')


class MeshError(ValueError):
    """A mesh file cannot be read or its points do not enclose a volume; the message says why."""


# --- finding files -------------------------------------------------------------------------


def resolve_mesh_uri(uri, base_dir=None, search_paths=()):
    """
    Find the file a URDF ``<mesh filename>`` refers to.

    ``package://PKG/rest`` and ``model://PKG/rest`` (Gazebo) are looked up as
    ``<prefix>/share/PKG/rest`` for each prefix of ``AMENT_PREFIX_PATH``, then as
    ``<entry>/PKG/rest`` (or ``<entry>/rest`` when the entry is the package itself) for each
    entry of ``ROS_PACKAGE_PATH``, then as ``<dir>/PKG/rest`` and ``<dir>/rest`` for each of
    ``search_paths``, and last in the ancestor of ``base_dir`` named PKG (a URDF inside its own
    package source).  ``file://`` URIs and absolute paths are used as they are; relative paths
    are resolved against ``base_dir`` and then each of ``search_paths``.

    Args:
        uri: the filename attribute.
        base_dir: directory of the URDF, or None when it did not come from a file.
        search_paths: extra directories to look in (config ``collision.mesh_paths``).

    Returns:
        Path of the existing file, or None when it is not found.
    """
    uri = str(uri).strip()
    dirs = [Path(os.path.expanduser(str(d))) for d in search_paths if str(d)]
    if uri.startswith('file://'):
        uri = uri[len('file://'):]
        if uri.startswith('localhost/'):
            uri = uri[len('localhost'):]
    for scheme in _URI_SCHEMES:
        if uri.startswith(scheme):
            package, _, rest = uri[len(scheme):].partition('/')
            return _first_file(_package_candidates(package, rest, base_dir, dirs))
    if not uri:
        return None
    path = Path(os.path.expanduser(uri))
    if path.is_absolute():
        return _first_file([path])
    bases = ([Path(base_dir)] if base_dir else []) + dirs
    return _first_file(base / path for base in bases)


def _package_candidates(package, rest, base_dir, dirs):
    """Yield the places a ``package://package/rest`` file may be, in search order."""
    if not package:
        return
    for prefix in _env_paths('AMENT_PREFIX_PATH'):
        yield prefix / 'share' / package / rest
    for entry in _env_paths('ROS_PACKAGE_PATH'):
        yield entry / package / rest
        if entry.name == package:
            yield entry / rest
    for directory in dirs:
        yield directory / package / rest
        yield directory / rest
    if base_dir:
        for ancestor in [Path(base_dir), *Path(base_dir).parents]:
            if ancestor.name == package:
                yield ancestor / rest
                break


def _env_paths(name):
    """Return the non-empty entries of a path-list environment variable."""
    return [Path(p) for p in os.environ.get(name, '').split(os.pathsep) if p]


def _first_file(candidates):
    """Return the first candidate that is an existing file, or None."""
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


# --- reading files -------------------------------------------------------------------------


def load_mesh_vertices(path, scale=(1.0, 1.0, 1.0)):
    """
    Read the distinct vertices of a mesh file.

    Args:
        path: an .stl (binary or ASCII), .obj or .dae (COLLADA) file.
        scale: (3,) per-axis scale of the URDF ``<mesh scale>`` (or one number for all axes).

    Returns:
        (n, 3) float64 distinct vertices, m (COLLADA units applied; the up axis is ignored,
        as rviz2 and Gazebo ignore it).

    Raises:
        MeshError: the file is missing, unreadable, of an unsupported kind, malformed or empty.
    """
    path = Path(path)
    readers = {'.stl': _read_stl, '.obj': _read_obj, '.dae': _read_dae}
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise MeshError(f"'{path}' is not a mesh format this simulator reads (supported: "
                        f"{', '.join(SUPPORTED_EXTENSIONS)}).")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise MeshError(f"'{path}' cannot be read ({error.strerror or error}).") from None
    vertices = np.asarray(reader(path, data), dtype=np.float64).reshape(-1, 3)
    if len(vertices) == 0:
        raise MeshError(f"'{path}' contains no vertices.")
    if not np.all(np.isfinite(vertices)):
        raise MeshError(f"'{path}' has vertex coordinates that are not finite numbers.")
    return _distinct_rows(vertices) * np.broadcast_to(np.asarray(scale, dtype=np.float64), (3,))


_ASCII_STL_VERTEX = re.compile(rb'\bvertex\s+(\S+)\s+(\S+)\s+(\S+)', re.IGNORECASE)
_BINARY_STL_TRIANGLE = np.dtype([('normal', '<f4', (3,)), ('vertices', '<f4', (3, 3)),
                                 ('attribute', '<u2')])


def _read_stl(path, data):
    """Vertices of an STL file; ASCII when it starts with 'solid' and holds ASCII facets."""
    if data.lstrip()[:5].lower() == b'solid':
        vertices = _ascii_stl_vertices(data)
        if vertices is not None:
            return vertices
    if len(data) < 84:
        raise MeshError(f"'{path}' is not an STL file (too short for a binary STL and no "
                        'ASCII facets).')
    count = int(np.frombuffer(data, '<u4', 1, 80)[0])
    needed = 84 + count * _BINARY_STL_TRIANGLE.itemsize
    if len(data) < needed:
        raise MeshError(f"'{path}' is truncated or not an STL file (its binary header says "
                        f'{count} triangles, {needed} bytes, but it has {len(data)} bytes).')
    triangles = np.frombuffer(data, _BINARY_STL_TRIANGLE, count, 84)
    return triangles['vertices'].reshape(-1, 3)


def _ascii_stl_vertices(data):
    """Return the vertices of ASCII STL text, or None when it is not ASCII facets."""
    try:
        data.decode('ascii')
    except UnicodeDecodeError:
        return None
    if not re.search(rb'\bfacet\b', data, re.IGNORECASE):
        return None
    try:
        vertices = [[float(v) for v in match] for match in _ASCII_STL_VERTEX.findall(data)]
    except ValueError:
        return None
    return vertices or None


def _read_obj(path, data):
    """Vertices of a Wavefront OBJ file: its ``v`` lines (w and vertex colours ignored)."""
    vertices = []
    for number, line in enumerate(data.decode('utf-8', 'replace').splitlines(), 1):
        fields = line.split()
        if not fields or fields[0] != 'v':
            continue
        try:
            vertex = [float(v) for v in fields[1:4]]
        except ValueError:
            vertex = []
        if len(vertex) != 3:
            raise MeshError(f"'{path}' line {number}: a vertex needs three numbers, got "
                            f"'{line.strip()}'.")
        vertices.append(vertex)
    return vertices


def _read_dae(path, data):
    """Vertices of a COLLADA file: POSITION sources placed by the scene's node transforms."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as error:
        raise MeshError(f"'{path}' is not valid COLLADA XML ({error}).") from None
    for element in root.iter():
        if isinstance(element.tag, str) and '}' in element.tag:
            element.tag = element.tag.rsplit('}', 1)[1]
    geometries = {}
    for geometry in root.iter('geometry'):
        try:
            geometries[geometry.get('id', '')] = _dae_positions(geometry)
        except ValueError as error:
            raise MeshError(f"'{path}' geometry '{geometry.get('id', '')}': {error}.") from None
    try:
        instances = list(_dae_instances(root))
    except ValueError as error:
        raise MeshError(f"'{path}' has a bad node transform ({error}).") from None
    placed = [geometries[gid] @ transform[:3, :3].T + transform[:3, 3]
              for gid, transform in instances if gid in geometries]
    instanced = {gid for gid, _ in instances}
    placed += [points for gid, points in geometries.items() if gid not in instanced]
    vertices = np.concatenate(placed) if placed else np.zeros((0, 3))
    # <asset><unit meter> scales; <up_axis> is ignored, as rviz2 (Assimp with
    # AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION), Gazebo classic and gz-common read COLLADA:
    # a Y_UP file's vertices are taken as they are, so the hull matches what rviz shows
    meter = 1.0
    unit = root.find('asset/unit')
    if unit is not None:
        meter = _dae_float(path, unit.get('meter', '1'), 'unit meter')
    return vertices * meter


def _dae_float(path, text, what):
    """Return a number of a COLLADA attribute, or raise MeshError naming it."""
    try:
        return float(text)
    except ValueError:
        raise MeshError(f"'{path}' {what} '{text}' is not a number.") from None


def _dae_positions(geometry):
    """Return the (n, 3) POSITION points of one ``<geometry>`` (ValueError when malformed)."""
    points = []
    for mesh in list(geometry.iter('mesh')) + list(geometry.iter('convex_mesh')):
        sources = {s.get('id', ''): s for s in mesh.findall('source')}
        for vertices in mesh.findall('vertices'):
            for item in vertices.findall('input'):
                if item.get('semantic') != 'POSITION':
                    continue
                source = sources.get(item.get('source', '').lstrip('#'))
                if source is None or source.find('float_array') is None:
                    raise ValueError(f"position source '{item.get('source')}' is missing")
                values = np.array((source.findtext('float_array') or '').split(), dtype=float)
                accessor = source.find('technique_common/accessor')
                stride = int(accessor.get('stride', 3)) if accessor is not None else 3
                if stride < 3 or len(values) % stride:
                    raise ValueError(f'{len(values)} position values do not fit stride {stride}')
                points.append(values.reshape(-1, stride)[:, :3])
    return np.concatenate(points) if points else np.zeros((0, 3))


def _dae_instances(root):
    """Yield (geometry id, (4, 4) transform) of each ``<instance_geometry>`` in the scene."""
    scenes = {s.get('id', ''): s for s in root.iter('visual_scene')}
    chosen = root.find('scene/instance_visual_scene')
    scene = scenes.get(chosen.get('url', '').lstrip('#')) if chosen is not None else None
    if scene is None:
        scene = next(iter(scenes.values()), None)
    if scene is None:
        return
    library = {n.get('id'): n for n in root.iter('node') if n.get('id')}
    stack = [(node, np.eye(4), 0) for node in reversed(scene.findall('node'))]
    while stack:
        node, parent, depth = stack.pop()
        transform = parent @ _dae_node_transform(node)
        for child in node:
            if child.tag == 'instance_geometry':
                yield child.get('url', '').lstrip('#'), transform
            elif child.tag == 'node':
                stack.append((child, transform, depth + 1))
            elif child.tag == 'instance_node' and depth < 32:
                target = library.get(child.get('url', '').lstrip('#'))
                if target is not None:
                    stack.append((target, transform, depth + 1))


def _dae_node_transform(node):
    """Return the (4, 4) local transform of a node: its transform elements in document order."""
    result = np.eye(4)
    for element in node:
        values = np.array((element.text or '').split(), dtype=float) \
            if element.tag in ('matrix', 'translate', 'rotate', 'scale') else None
        local = np.eye(4)
        if element.tag == 'matrix' and values.size == 16:
            local = values.reshape(4, 4)
        elif element.tag == 'translate' and values.size == 3:
            local[:3, 3] = values
        elif element.tag == 'scale' and values.size == 3:
            local[:3, :3] = np.diag(values)
        elif element.tag == 'rotate' and values.size == 4:
            local[:3, :3] = axis_angle_matrix(values[:3], math.radians(values[3]))
        result = result @ local
    return result


# --- fallback box --------------------------------------------------------------------------


def inertia_box_half_extents(mass, inertia):
    """
    Return the solid box with a link's mass and principal moments of inertia.

    A uniform box of half extents (a, b, c) has Ixx = m (b^2 + c^2) / 3 and so on about its
    axes, so a^2 = 3 (Iyy + Izz - Ixx) / (2 m).  Squared extents below
    ``MIN_BOX_HALF_EXTENT``^2 (an inertia that breaks the triangle inequality) are raised to it.

    Args:
        mass: kg, > 0.
        inertia: (3, 3) inertia tensor about the centre of mass, kg m^2.

    Returns:
        (half_extents (3,) m, rotation (3, 3)) where the rotation's columns are the box axes
        (principal axes) in the inertia's frame, a proper rotation (det +1).

    Raises:
        MeshError: the mass is not positive.
    """
    mass = float(mass)
    if not mass > 0.0:
        raise MeshError(f'a box of inertia needs a positive mass, not {mass} kg.')
    tensor = np.asarray(inertia, dtype=float).reshape(3, 3)
    moments, axes = np.linalg.eigh(0.5 * (tensor + tensor.T))
    squared = 1.5 / mass * (moments.sum() - 2.0 * moments)
    half = np.sqrt(np.maximum(squared, MIN_BOX_HALF_EXTENT ** 2))
    if np.linalg.det(axes) < 0.0:
        axes[:, 2] = -axes[:, 2]
    return half, axes


# --- convex hulls --------------------------------------------------------------------------


def convex_hull(points):
    """
    Convex hull of a point cloud, with coplanar triangles merged into polygons.

    Quickhull with exact integer orientation tests on the points snapped to a grid of
    2**HULL_GRID_BITS steps, then adjacent faces within ``HULL_TOLERANCE`` (times the largest
    bounding-box side) of one plane merged, and vertices on straight polygon edges dropped.
    Duplicate, coplanar and collinear points are fine as long as the cloud has volume.

    Args:
        points: (n, 3) points, n >= 4.

    Returns:
        (vertices (m, 3), faces): the hull's vertices (a subset of the points) and its faces,
        a list of int index arrays into vertices, counter-clockwise seen from outside (the
        right-hand normal points out).

    Raises:
        MeshError: fewer than 4 distinct points, or all of them collinear or coplanar.
    """
    points = _distinct_points(points)
    return _hull(points, _frame(points))[:2]


def simplify_hull(points, max_vertices=64):
    """
    Convex hull with at most ``max_vertices`` vertices.

    A hull with few enough vertices comes out as ``convex_hull`` makes it; a larger one as the
    hull of a well-spread subset of its vertices: the extreme points along ``max_vertices - 4``
    Fibonacci-sphere directions (in the box-normalised frame of the points) and 4 extreme points
    spanning a tetrahedron.  The full hull of a large mesh is never built.

    Args:
        points: (n, 3) points.
        max_vertices: at most this many hull vertices, >= 4.

    Returns:
        (vertices (m, 3), faces) as ``convex_hull``, m <= max_vertices.

    Raises:
        MeshError: the points have no volume (see ``convex_hull``), or max_vertices < 4.
    """
    if max_vertices < 4:
        raise MeshError(f'max_vertices is {max_vertices}; a convex hull needs at least 4.')
    points = _distinct_points(points)
    frame = _frame(points)
    tol = HULL_TOLERANCE * frame[1]
    tetrahedron = set(_initial_simplex(_grid(points, frame), len(points)))
    normalised = (points - frame[0]) / np.maximum(np.ptp(points, axis=0), tol)
    spread = set(np.argmax(normalised @ _fibonacci_sphere(max_vertices - 4).T, axis=0)) \
        if max_vertices > 4 else set()
    # Grow the subset by the farthest point beyond each face until nothing is beyond (the exact
    # hull) or the subset, all hull vertices, would outnumber max_vertices.
    chosen = tetrahedron | spread
    while True:
        vertices, faces, normals, offsets = _hull(points[sorted(chosen)], frame, planes=True)
        distances = points @ normals.T - offsets
        beyond = np.flatnonzero(distances.max(axis=0) > tol)
        farthest = set(np.argmax(distances[:, beyond], axis=0)) - chosen
        if len(beyond) == 0 or not farthest:
            return vertices, faces
        if len(chosen) + len(farthest) > max_vertices:
            return _hull(points[sorted(tetrahedron | spread)], frame)[:2]
        chosen |= farthest


def _distinct_points(points):
    """Return the distinct rows of an (n, 3) array of finite numbers (else MeshError)."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3:
        raise MeshError(f'points have shape {points.shape}; a convex hull needs (n, 3).')
    if not np.all(np.isfinite(points)):
        raise MeshError('has points that are not finite numbers.')
    return _distinct_rows(points)


def _distinct_rows(points):
    """Return the rows of (n, 3) points that differ after rounding (first of each, sorted)."""
    first = np.unique(np.round(points, DEDUPLICATE_DECIMALS), axis=0, return_index=True)[1]
    return points[np.sort(first)]


def _frame(points):
    """Return (centre (3,), largest side) of the points' bounding box (MeshError if < 4)."""
    if len(points) < 4:
        raise MeshError(f'has no volume: it has only {len(points)} distinct points.')
    low, high = points.min(axis=0), points.max(axis=0)
    return 0.5 * (low + high), float((high - low).max())


def _grid(points, frame):
    """
    Snap points to the hull grid: int64 coordinates of magnitude <= 2**(HULL_GRID_BITS - 1).

    Then a plane normal (cross product of differences) is below 2**(2 HULL_GRID_BITS + 1) and a
    point's signed distance times its length below 2**62.6: exact in int64 for 20 bits.
    """
    centre, extent = frame
    return np.rint((points - centre) * (2 ** HULL_GRID_BITS / extent)).astype(np.int64)


def _fibonacci_sphere(count):
    """Return (count, 3) unit vectors spread evenly over the sphere."""
    i = np.arange(count) + 0.5
    z = 1.0 - 2.0 * i / count
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = i * math.pi * (3.0 - math.sqrt(5.0))
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _initial_simplex(grid, count):
    """
    Return 4 indices of grid points spanning a tetrahedron thicker than the hull tolerance.

    Raises MeshError when the points are within the tolerance of a line or of a plane.
    """
    tol = HULL_TOLERANCE * 2 ** HULL_GRID_BITS
    extremes = np.concatenate([np.argmin(grid, axis=0), np.argmax(grid, axis=0)])
    spans = grid[extremes][:, None, :] - grid[extremes][None, :, :]
    i, j = np.unravel_index(np.argmax((spans.astype(float) ** 2).sum(axis=2)), spans.shape[:2])
    a, b = int(extremes[i]), int(extremes[j])
    relative = grid - grid[a]
    crosses = np.cross(grid[b] - grid[a], relative)
    c = int(np.argmax((crosses.astype(float) ** 2).sum(axis=1)))
    if np.linalg.norm(crosses[c].astype(float)) <= tol * np.linalg.norm(grid[b] - grid[a]):
        raise MeshError(f'has no volume: its {count} distinct points are all collinear.')
    heights = relative @ crosses[c]
    d = int(np.argmax(np.abs(heights)))
    if abs(float(heights[d])) <= tol * np.linalg.norm(crosses[c].astype(float)):
        raise MeshError(f'has no volume: its {count} distinct points are all coplanar.')
    return [a, b, c, d]


def _hull(points, frame, planes=False):
    """
    Hull of distinct points in a grid frame: quickhull, then polygon faces.

    Returns (vertices, faces), and with planes=True also (f, 3) outward unit normals and (f,)
    offsets of the face planes.
    """
    grid = _grid(points, frame)
    keep = np.sort(np.unique(grid, axis=0, return_index=True)[1])
    count = len(points)
    if len(keep) < 4:
        raise MeshError(f'has no volume: its {count} distinct points are all within '
                        f'{len(keep)} cells of the hull grid.')
    grid, points = grid[keep], points[keep]
    triangles = _quickhull(grid, _initial_simplex(grid, count))
    snapped = frame[0] + grid * (frame[1] / 2 ** HULL_GRID_BITS)
    polygons = _merge_coplanar(snapped, triangles, HULL_TOLERANCE * frame[1])
    used = np.unique(np.concatenate(polygons))
    remap = np.full(len(points), -1)
    remap[used] = np.arange(len(used))
    faces = [remap[p] for p in polygons]
    vertices = points[used]
    if not planes:
        return vertices, faces
    normals = np.array([_newell_normal(vertices[f]) for f in faces])
    offsets = np.array([n @ vertices[f].mean(axis=0) for n, f in zip(normals, faces)])
    return vertices, faces, normals, offsets


def _quickhull(grid, simplex):
    """
    Return the hull triangles of int64 grid points, (k, 3) counter-clockwise seen from outside.

    Every orientation test is exact: a point is beyond a face only if strictly above its plane,
    so no triangle is degenerate; coplanar triangles are left to ``_merge_coplanar``.
    """
    faces = {}    # id -> [triangle, normal (3,) int64, offset, unit normal (3,), outside points]
    edges = {}    # directed edge (a, b) -> id of the face that has it
    next_id = 0

    def add_face(triangle):
        nonlocal next_id
        a, b, c = grid[list(triangle)]
        normal = np.cross(b - a, c - a)
        unit = normal / np.linalg.norm(normal.astype(float))
        faces[next_id] = [triangle, normal, normal @ a, unit, np.zeros(0, dtype=int)]
        for k in range(3):
            edges[(triangle[k], triangle[(k + 1) % 3])] = next_id
        next_id += 1
        return next_id - 1

    def assign(candidates, face_ids):
        """Give each candidate point to the face it is farthest beyond, if it is beyond one."""
        if len(candidates) == 0:
            return
        normals = np.array([faces[f][1] for f in face_ids])
        offsets = np.array([faces[f][2] for f in face_ids])
        exact = grid[candidates] @ normals.T - offsets
        scaled = np.where(exact > 0, exact / np.linalg.norm(normals.astype(float), axis=1),
                          -1.0)
        best = np.argmax(scaled, axis=1)
        beyond = scaled[np.arange(len(candidates)), best] > 0.0
        for k, f in enumerate(face_ids):
            faces[f][4] = candidates[beyond & (best == k)]

    a, b, c, d = simplex
    for triangle, other in (((a, b, c), d), ((a, c, d), b), ((a, d, b), c), ((b, d, c), a)):
        u, v, w = grid[list(triangle)]
        if np.cross(v - u, w - u) @ (grid[other] - u) > 0:
            triangle = (triangle[0], triangle[2], triangle[1])
        add_face(triangle)
    assign(np.setdiff1d(np.arange(len(grid)), simplex), list(faces))
    pending = [f for f in faces if len(faces[f][4])]
    while pending:
        start = pending.pop()
        if start not in faces or len(faces[start][4]) == 0:
            continue
        outside = faces[start][4]
        eye = int(outside[np.argmax(grid[outside] @ faces[start][1])])
        apex = grid[eye]
        # The faces the point is beyond (a disc around the start face); its rim is the horizon.
        visible, frontier = {start}, [start]
        while frontier:
            triangle = faces[frontier.pop()][0]
            for k in range(3):
                neighbour = edges[(triangle[(k + 1) % 3], triangle[k])]
                if neighbour not in visible and faces[neighbour][1] @ apex > faces[neighbour][2]:
                    visible.add(neighbour)
                    frontier.append(neighbour)
        horizon = [(t[k], t[(k + 1) % 3]) for t in (faces[f][0] for f in visible)
                   for k in range(3) if edges[(t[(k + 1) % 3], t[k])] not in visible]
        orphans = np.concatenate([faces[f][4] for f in visible])
        for f in visible:
            triangle = faces.pop(f)[0]
            for k in range(3):
                if edges.get((triangle[k], triangle[(k + 1) % 3])) == f:
                    del edges[(triangle[k], triangle[(k + 1) % 3])]
        new = [add_face((u, v, eye)) for u, v in horizon]
        assign(orphans[orphans != eye], new)
        pending.extend(f for f in new if len(faces[f][4]))
    return np.array([faces[f][0] for f in sorted(faces)], dtype=int)


def _merge_coplanar(points, triangles, tol):
    """Merge adjacent triangles lying in one plane (within tol) into polygons (index arrays)."""
    edges = {}
    for t, triangle in enumerate(triangles):
        for k in range(3):
            edges[(triangle[k], triangle[(k + 1) % 3])] = t
    corners = points[triangles]
    crosses = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    areas = np.linalg.norm(crosses, axis=1)
    region = np.full(len(triangles), -1)
    polygons = []
    for seed in np.argsort(-areas, kind='stable'):
        if region[seed] >= 0:
            continue
        normal = crosses[seed] / areas[seed]
        offset = normal @ corners[seed].mean(axis=0)
        members, frontier = [seed], [seed]
        region[seed] = seed
        while frontier:
            triangle = triangles[frontier.pop()]
            for k in range(3):
                t = edges[(triangle[(k + 1) % 3], triangle[k])]
                if region[t] < 0 and np.all(np.abs(corners[t] @ normal - offset) <= tol):
                    region[t] = seed
                    members.append(t)
                    frontier.append(t)
        polygons.extend(_region_polygons(triangles, members, edges, region, seed))
    return _drop_collinear(points, polygons, tol)


def _region_polygons(triangles, members, edges, region, seed):
    """Return the boundary loop of a region of triangles, or its triangles if not one loop."""
    if len(members) == 1 or len(members) == len(triangles):   # one triangle, or a flat hull
        return [np.array(triangles[m]) for m in members]
    following = {}
    for t in members:
        triangle = triangles[t]
        for k in range(3):
            u, v = triangle[k], triangle[(k + 1) % 3]
            if region[edges[(v, u)]] != seed:
                if u in following:
                    return [np.array(triangles[m]) for m in members]
                following[u] = v
    loop = [next(iter(following))]
    while following[loop[-1]] != loop[0] and len(loop) <= len(following):
        loop.append(following[loop[-1]])
    if len(loop) != len(following):
        return [np.array(triangles[m]) for m in members]
    return [np.array(loop)]


def _drop_collinear(points, polygons, tol):
    """Remove vertices lying on a straight edge between exactly two polygons (within tol)."""
    seen, straight = {}, {}
    for polygon in polygons:
        for k, v in enumerate(polygon):
            before, after = points[polygon[k - 1]], points[polygon[(k + 1) % len(polygon)]]
            edge = after - before
            offset = points[v] - before
            along = offset @ edge / (edge @ edge)
            flat = 0.0 < along < 1.0 and np.linalg.norm(offset - along * edge) <= tol
            seen[v] = seen.get(v, 0) + 1
            straight[v] = straight.get(v, 0) + int(flat)
    drop = {v for v in seen if seen[v] == 2 and straight[v] == 2}
    kept = [p[[v not in drop for v in p]] for p in polygons]
    return kept if all(len(p) >= 3 for p in kept) else polygons


def _newell_normal(corners):
    """Return the outward unit normal of a counter-clockwise polygon (Newell's method)."""
    corners = corners - corners.mean(axis=0)
    normal = np.cross(corners, np.roll(corners, -1, axis=0)).sum(axis=0)
    return normal / np.linalg.norm(normal)
