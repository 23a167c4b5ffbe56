"""
Convex polytopes of collision shapes, packed flat for the compiled narrow phase (numpy only).

A polytope carries what the separating-axis test of ``physics/collide.py`` reads: vertices;
faces as vertex loops, counter-clockwise seen from outside, with unit outward normals and plane
offsets; and every edge once with its two faces (an arc of the Gauss map).  Boxes, cylinders
(prisms whose vertices lie on the rims) and convex hulls are built here at load time, and
``pack_polytopes`` concatenates them into the flat int64/float64 arrays numba takes.
"""
import dataclasses

import numpy as np

from ..physics.arrays import Polytopes

#: A face whose loop spans less than this area (relative to the squared polytope size) is
#: degenerate.
DEGENERATE_AREA = 1e-12


@dataclasses.dataclass(frozen=True, eq=False)
class Polytope:
    """
    One convex polytope in its shape frame.

    Attributes:
        verts: (nv, 3) vertices, m.
        face_normal: (nf, 3) unit outward normals.
        face_offset: (nf,) n . x for the points x of each face, m.
        face_verts: list of int64 arrays, each face's vertex indices, counter-clockwise seen
            from outside.
        edges: (ne, 4) int64 rows v0, v1, f0, f1, each edge once: f0 is the face whose loop
            runs v0 -> v1, f1 the face whose loop runs v1 -> v0 (so v1 - v0 is along
            n_f0 x n_f1).
    """

    verts: np.ndarray
    face_normal: np.ndarray
    face_offset: np.ndarray
    face_verts: list
    edges: np.ndarray


def box_polytope(half_extents):
    """
    Return the polytope of a box centred on its frame's origin.

    Args:
        half_extents: (3,) half sizes along x, y, z, m, all > 0.

    Returns:
        Polytope with 8 vertices, 6 faces and 12 edges.

    Raises:
        ValueError: a half extent is not positive.
    """
    h = np.asarray(half_extents, dtype=np.float64).reshape(3)
    if not np.all(h > 0.0):
        raise ValueError(f'box half extents {h.tolist()} must all be positive.')
    # vertex i has the sign (+ if bit k of i is set) on axis k
    signs = np.array([[1.0 if i >> k & 1 else -1.0 for k in range(3)] for i in range(8)])
    faces = [[0, 4, 6, 2], [1, 3, 7, 5],   # -x, +x
             [0, 1, 5, 4], [2, 6, 7, 3],   # -y, +y
             [0, 2, 3, 1], [4, 5, 7, 6]]   # -z, +z
    return hull_polytope(signs * h, faces)


def cylinder_polytope(radius, half_length, sides=16):
    """
    Return the prism that stands in for a cylinder along the frame's z axis.

    The prism's vertices lie on the cylinder's two rims (an inscribed prism: its flat sides are
    radius * (1 - cos(pi / sides)) inside the curved surface, 1.9 % of the radius for 16 sides).

    Args:
        radius: m, > 0.
        half_length: half the length along z, m, > 0.
        sides: number of side faces, >= 3.

    Returns:
        Polytope with 2 sides vertices, sides + 2 faces and 3 sides edges.

    Raises:
        ValueError: a size is not positive, or fewer than 3 sides.
    """
    if not (radius > 0.0 and half_length > 0.0):
        raise ValueError(f'cylinder radius {radius} and half length {half_length} must be '
                         'positive.')
    if sides < 3:
        raise ValueError(f'a cylinder prism needs at least 3 sides, not {sides}.')
    angle = 2.0 * np.pi * np.arange(sides) / sides
    ring = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    verts = np.concatenate([np.column_stack([ring, np.full(sides, -half_length)]),
                            np.column_stack([ring, np.full(sides, half_length)])])
    faces = [list(range(sides)), list(range(sides, 2 * sides))]
    faces += [[k, (k + 1) % sides, sides + (k + 1) % sides, sides + k] for k in range(sides)]
    return hull_polytope(verts, faces)


def hull_polytope(vertices, faces):
    """
    Return the polytope of a closed convex polyhedron given by its vertices and faces.

    Face normals come from Newell's method (exact for planar loops, a best fit otherwise), the
    offset is the mean of n . x over the loop.  A loop that runs clockwise seen from outside
    (its normal points towards the vertex centroid) is reversed.  Vertices no face uses are
    dropped.

    Args:
        vertices: (m, 3) points, m.
        faces: sequence of vertex-index sequences, counter-clockwise seen from outside, each
            with at least 3 vertices.

    Returns:
        Polytope.

    Raises:
        ValueError: a face has fewer than 3 vertices, an index is out of range, a face has no
            area, or the faces do not close the surface (an edge not shared by exactly two
            faces running it in opposite directions).
    """
    points = np.asarray(vertices, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3:
        raise ValueError(f'polytope vertices have shape {points.shape}, not (m, 3).')
    loops = [np.asarray(face, dtype=np.int64).reshape(-1) for face in faces]
    if not loops:
        raise ValueError('a polytope needs faces.')
    for loop in loops:
        if len(loop) < 3:
            raise ValueError(f'face {loop.tolist()} has fewer than 3 vertices.')
        if loop.min() < 0 or loop.max() >= len(points):
            raise ValueError(f'face {loop.tolist()} indexes past the {len(points)} vertices.')
    used = np.unique(np.concatenate(loops))
    remap = np.full(len(points), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    points = points[used]
    loops = [remap[loop] for loop in loops]
    centroid = points.mean(axis=0)
    size = float(np.ptp(points, axis=0).max())
    normals = np.zeros((len(loops), 3))
    offsets = np.zeros(len(loops))
    for f, loop in enumerate(loops):
        corners = points[loop] - centroid
        # Newell: twice the loop's vector area
        area = np.cross(corners, np.roll(corners, -1, axis=0)).sum(axis=0)
        norm = float(np.linalg.norm(area))
        if norm <= DEGENERATE_AREA * size * size:
            raise ValueError(f'face {used[loop].tolist()} has no area.')
        normal = area / norm
        if normal @ corners.mean(axis=0) < 0.0:
            loop = loops[f] = loop[::-1].copy()
            normal = -normal
        normals[f] = normal
        offsets[f] = float(np.mean(points[loop] @ normal))
    return Polytope(verts=points, face_normal=normals, face_offset=offsets, face_verts=loops,
                    edges=_edges(loops, used))


def _edges(loops, names):
    """Return the (ne, 4) edge table of closed face loops (``names`` label errors)."""
    directed = {}
    for f, loop in enumerate(loops):
        for v0, v1 in zip(loop, np.roll(loop, -1)):
            key = (int(v0), int(v1))
            if key in directed:
                raise ValueError(f'edge {names[v0]}-{names[v1]} runs the same way in two '
                                 'faces; the faces are not a closed convex surface.')
            directed[key] = f
    rows = []
    for (v0, v1), f0 in directed.items():
        f1 = directed.get((v1, v0))
        if f1 is None:
            raise ValueError(f'edge {names[v0]}-{names[v1]} belongs to one face only; the '
                             'faces are not a closed convex surface.')
        if v0 < v1:
            rows.append((v0, v1, f0, f1))
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


def pack_polytopes(polytopes):
    """
    Concatenate polytopes into flat arrays for the compiled narrow phase.

    Args:
        polytopes: sequence of Polytope (may be empty).

    Returns:
        Polytopes of int64 and float64 arrays; with no polytopes every start array is [0] and
        every other array has zero rows.
    """
    polytopes = list(polytopes)
    n_vert = [len(p.verts) for p in polytopes]
    n_face = [len(p.face_verts) for p in polytopes]
    n_edge = [len(p.edges) for p in polytopes]
    loops = [loop for p in polytopes for loop in p.face_verts]
    return Polytopes(
        vert_start=_starts(n_vert),
        verts=_stack([p.verts for p in polytopes], (0, 3), np.float64),
        face_start=_starts(n_face),
        face_normal=_stack([p.face_normal for p in polytopes], (0, 3), np.float64),
        face_offset=_stack([p.face_offset for p in polytopes], (0,), np.float64),
        face_vert_start=_starts([len(loop) for loop in loops]),
        face_verts=_stack(loops, (0,), np.int64),
        edge_start=_starts(n_edge),
        edges=_stack([p.edges for p in polytopes], (0, 4), np.int64))


def _starts(counts):
    """Return [0, c0, c0 + c1, ...] as int64."""
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)


def _stack(parts, empty_shape, dtype):
    """Concatenate arrays along the first axis into a contiguous array of dtype."""
    if not parts:
        return np.zeros(empty_shape, dtype=dtype)
    return np.ascontiguousarray(np.concatenate(parts), dtype=dtype)
