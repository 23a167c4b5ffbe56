"""
Mesh files for collision shapes: finding them, reading their vertices, convex hulls.

- ``resolve_mesh_uri`` finds a URDF ``<mesh filename>`` (``package://``, ``model://``,
  ``file://``, absolute or relative path) on disk;
- ``load_mesh_vertices`` reads the distinct vertices of an STL (binary or ASCII), OBJ, COLLADA
  (.dae), PLY, glTF (.glb, .gltf) or OFF file through trimesh (pycollada for COLLADA), in
  metres, with the URDF ``scale`` applied;
- ``convex_hull`` / ``simplify_hull`` turn them into a convex polytope with polygonal faces,
  counter-clockwise seen from outside, through qhull (scipy.spatial.ConvexHull);
- ``inertia_box_half_extents`` sizes the fallback box of a link whose mesh cannot be used.

Problems with a file or with its shape raise ``MeshError`` with a one-line message.
"""
import io
import math
import os
from pathlib import Path
import re

import numpy as np
from scipy.spatial import ConvexHull, QhullError
import trimesh

#: File extensions ``load_mesh_vertices`` reads (trimesh's mesh loaders).
SUPPORTED_EXTENSIONS = ('.stl', '.obj', '.dae', '.ply', '.glb', '.gltf', '.off')
#: Vertices equal when rounded to this many decimals (m, before scaling) are one vertex.
DEDUPLICATE_DECIMALS = 9
#: The first tetrahedron of a hull is picked on the points snapped to a grid of 2**HULL_GRID_BITS
#: steps across the largest side of their bounding box (about 1e-6 of it).
HULL_GRID_BITS = 20
#: Hull faces within this fraction of the largest bounding-box side of one plane merge into one
#: polygon (qhull's centrum merge, option C), and a point that close outside a hull counts as
#: inside it (a few grid steps).
HULL_TOLERANCE = 4.0 / 2 ** HULL_GRID_BITS
#: Half extent of a fallback box along an axis whose squared extent comes out negative, m.
MIN_BOX_HALF_EXTENT = 1e-3

_URI_SCHEMES = ('package://', 'model://')
#: trimesh >= 4.6 has load_scene; older ones (a distribution's python3-trimesh) load(force=).
_LOAD_SCENE = getattr(trimesh, 'load_scene', None) or (
    lambda *args, **kwargs: trimesh.load(*args, force='scene', **kwargs))
_FORMAT_NAMES = {'.stl': 'STL', '.obj': 'OBJ', '.dae': 'COLLADA', '.ply': 'PLY', '.glb': 'glTF',
                 '.gltf': 'glTF', '.off': 'OFF'}


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
    Read the distinct vertices of a mesh file (through trimesh).

    Every geometry the file's scene places is taken, at the place its nodes put it.

    Args:
        path: an .stl (binary or ASCII), .obj, .dae (COLLADA), .ply, .glb, .gltf or .off file.
        scale: (3,) per-axis scale of the URDF ``<mesh scale>`` (or one number for all axes).

    Returns:
        (n, 3) float64 distinct vertices, m (COLLADA ``<unit>`` applied; its up axis ignored,
        as rviz2 and Gazebo ignore it).

    Raises:
        MeshError: the file is missing, unreadable, of an unsupported kind, malformed or empty.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        raise MeshError(f"'{path}' is not a mesh format this simulator reads (supported: "
                        f"{', '.join(SUPPORTED_EXTENSIONS)}).")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise MeshError(f"'{path}' cannot be read ({error.strerror or error}).") from None
    kind = _FORMAT_NAMES[suffix]
    if not data.strip():
        raise MeshError(f"'{path}' is empty: not an {kind} file with vertices.")
    _CHECKS.get(suffix, lambda *_: None)(path, data)
    try:
        # from the bytes, without a resolver: the textures and materials a mesh refers to do
        # not matter to its hull
        scene = _LOAD_SCENE(io.BytesIO(data), file_type=suffix[1:], process=False)
        vertices = _scene_vertices(scene, exact_float32=suffix == '.dae')
    except Exception as error:  # noqa: B902 (any loader failure is the file's: say which)
        raise MeshError(f"'{path}' is not a readable {kind} file ({_first_line(error)}).") \
            from None
    if len(vertices) == 0:
        raise MeshError(f"'{path}' contains no vertices.")
    if not np.all(np.isfinite(vertices)):
        raise MeshError(f"'{path}' has vertex coordinates that are not finite numbers.")
    if suffix == '.dae':
        vertices = vertices * _collada_meter(path, scene)
    return _distinct_rows(vertices) * np.broadcast_to(np.asarray(scale, dtype=np.float64), (3,))


# What trimesh's loaders pass over in silence, said here with the words a user can act on.

def _check_stl(path, data):
    """Refuse a binary STL shorter than its triangle count says (truncated)."""
    if data.lstrip()[:5].lower() == b'solid' and re.search(rb'\bfacet\b', data[:2000], re.I):
        return  # ASCII
    if len(data) < 84:
        raise MeshError(f"'{path}' is not an STL file (too short for a binary STL and no "
                        'ASCII facets).')
    count = int(np.frombuffer(data, '<u4', 1, 80)[0])
    needed = 84 + 50 * count
    if len(data) < needed:
        raise MeshError(f"'{path}' is truncated or not an STL file (its binary header says "
                        f'{count} triangles, {needed} bytes, but it has {len(data)} bytes).')


def _check_obj(path, data):
    """Refuse a ``v`` line without three numbers, naming the line."""
    for number, line in enumerate(data.decode('utf-8', 'replace').splitlines(), 1):
        fields = line.split()
        if fields and fields[0] == 'v':
            try:
                [float(v) for v in fields[1:4]]
            except ValueError:
                fields = []
            if len(fields) < 4:
                raise MeshError(f"'{path}' line {number}: a vertex needs three numbers, got "
                                f"'{line.strip()}'.")


def _check_dae(path, data):
    """Refuse a COLLADA ``<unit meter>`` that is not a number, and a file without a scene."""
    unit = re.search(rb'<unit\b[^>]*\bmeter\s*=\s*"([^"]*)"', data)
    if unit is not None:
        try:
            float(unit.group(1))
        except ValueError:
            raise MeshError(f"'{path}' unit meter '{unit.group(1).decode(errors='replace')}' "
                            'is not a number.') from None
    if b'instance_visual_scene' not in data:
        raise MeshError(f"'{path}' has no <scene> with an <instance_visual_scene>: nothing "
                        'places its geometry (rviz2 would draw nothing either).')


_CHECKS = {'.stl': _check_stl, '.obj': _check_obj, '.dae': _check_dae}


def _scene_vertices(scene, exact_float32=False):
    """
    Return the (n, 3) vertices of every geometry instance of a trimesh Scene, placed.

    ``exact_float32``: the geometry's numbers were read as float32 (pycollada reads COLLADA's
    so); take each as the shortest decimal that gives it, which is the file's own number when
    it has at most 7 significant digits, as exporters write them.
    """
    placed = []
    for node in scene.graph.nodes_geometry:
        transform, name = scene.graph[node]
        points = getattr(scene.geometry.get(name), 'vertices', None)
        if points is None or len(points) == 0:
            continue
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if exact_float32:
            points = points.astype(np.float32).astype(str).astype(np.float64)
        placed.append(points @ transform[:3, :3].T + transform[:3, 3])
    return np.concatenate(placed) if placed else np.zeros((0, 3))


def _collada_meter(path, scene):
    """Return the metres per unit of a COLLADA file (its ``<unit meter>``; 1 when none)."""
    units = scene.units or 'meters'
    try:
        return float(trimesh.units.unit_conversion(units, 'meters'))
    except Exception as error:  # noqa: B902 (a unit trimesh cannot read: say which)
        raise MeshError(f"'{path}' has a unit that is not a length ({units!r}: "
                        f'{_first_line(error)}).') from None


def _first_line(error):
    """Return the first line of an exception's message (its type when it has none)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


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

    qhull (scipy.spatial.ConvexHull) with its facets merged where their centrums lie within
    ``HULL_TOLERANCE`` (times the largest bounding-box side) of a neighbour's plane (option C);
    each merged facet becomes one polygon.  Duplicate, coplanar and collinear points are fine
    as long as the cloud has volume.

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
    tetrahedron = set(_initial_simplex(points, frame))
    normalised = (points - frame[0]) / np.maximum(np.ptp(points, axis=0), tol)
    spread = set(np.argmax(normalised @ _fibonacci_sphere(max_vertices - 4).T, axis=0)) \
        if max_vertices > 4 else set()
    # Grow the subset by the farthest point beyond each face until nothing is beyond (the exact
    # hull) or the subset, all hull vertices, would outnumber max_vertices.  A point already in
    # the subset is never "the farthest": a merged face's plane may pass its own corners by up
    # to the tolerance, and taking one of them as the farthest stopped the growth early with
    # points still outside (the hand-written version did, issue 32).
    chosen = tetrahedron | spread
    while True:
        vertices, faces, normals, offsets = _hull(points[sorted(chosen)], frame, planes=True)
        distances = points @ normals.T - offsets
        distances[sorted(chosen)] = -np.inf
        beyond = np.flatnonzero(distances.max(axis=0) > tol)
        if len(beyond) == 0:
            return vertices, faces
        farthest = set(np.argmax(distances[:, beyond], axis=0))
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


def _fibonacci_sphere(count):
    """Return (count, 3) unit vectors spread evenly over the sphere."""
    i = np.arange(count) + 0.5
    z = 1.0 - 2.0 * i / count
    r = np.sqrt(np.maximum(0.0, 1.0 - z * z))
    phi = i * math.pi * (3.0 - math.sqrt(5.0))
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _grid(points, frame):
    """Return the points snapped to 2**HULL_GRID_BITS steps across their bounding box (int64)."""
    centre, extent = frame
    return np.rint((points - centre) * (2 ** HULL_GRID_BITS / extent)).astype(np.int64)


def _initial_simplex(points, frame):
    """
    Return 4 indices of points spanning a tetrahedron thicker than the hull tolerance.

    The two farthest apart of the extremes along the axes, the point farthest from their line,
    the point farthest from the plane of the three, on the points snapped to a grid of
    2**HULL_GRID_BITS steps (so that near-ties fall the same way whatever the rounding).
    Raises MeshError when the points are within the tolerance of a line or of a plane.
    """
    count = len(points)
    grid = _grid(points, frame)
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
    Hull of distinct points through qhull, its merged facets as polygons.

    Returns (vertices, faces), and with planes=True also (f, 3) outward unit normals and (f,)
    offsets of the face planes.
    """
    _initial_simplex(points, frame)  # no volume: MeshError saying how
    tol = HULL_TOLERANCE * frame[1]
    try:
        hull = ConvexHull(points - frame[0], qhull_options=f'Qt C{tol:.6e}')
    except QhullError as error:
        raise MeshError(f'has no volume qhull can hull ({_first_line(error)}).') from None
    # Qt triangulates each merged facet: its triangles share the facet's hyperplane exactly
    groups = {}
    for k, equation in enumerate(hull.equations):
        groups.setdefault(equation.tobytes(), []).append(k)
    polygons, normals, offsets = [], [], []
    for members in groups.values():
        equation = hull.equations[members[0]]
        normal = equation[:3]
        triangles = [_outward(points, hull.simplices[k], normal) for k in members]
        polygons.extend(_facet_polygons(triangles))
        normals.append(normal)
        offsets.append(-equation[3] + normal @ frame[0])
        if len(polygons) != len(normals):     # a facet left as triangles: one plane each
            normals.extend([normal] * (len(polygons) - len(normals)))
            offsets.extend([offsets[-1]] * (len(polygons) - len(offsets)))
    used = np.unique(np.concatenate(polygons))
    remap = np.full(len(points), -1)
    remap[used] = np.arange(len(used))
    faces = [remap[p] for p in polygons]
    vertices = points[used]
    if not planes:
        return vertices, faces
    return vertices, faces, np.array(normals), np.array(offsets)


def _outward(points, triangle, normal):
    """Return a triangle's corners counter-clockwise seen along ``normal`` from outside."""
    a, b, c = (int(v) for v in triangle)
    if np.cross(points[b] - points[a], points[c] - points[a]) @ normal < 0.0:
        return a, c, b
    return a, b, c


def _facet_polygons(triangles):
    """Return the boundary loop of one facet's triangles, or the triangles if not one loop."""
    if len(triangles) == 1:
        return [np.array(triangles[0])]
    edges = {(t[k], t[(k + 1) % 3]) for t in triangles for k in range(3)}
    following = {}
    for u, v in edges:
        if (v, u) not in edges:
            if u in following:
                return [np.array(t) for t in triangles]
            following[u] = v
    loop = [next(iter(following))]
    while following[loop[-1]] != loop[0] and len(loop) <= len(following):
        loop.append(following[loop[-1]])
    if len(loop) != len(following):
        return [np.array(t) for t in triangles]
    return [np.array(loop)]
