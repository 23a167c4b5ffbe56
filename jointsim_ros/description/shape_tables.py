"""
The collision shapes as the engine takes them: flat tables and packed convex polytopes.

The description builds these once, at load, so that the engine receives ready arrays and never
reads the description: each shape's pose relative to its body's centre of mass (the engine's
body frame), its kind code, size, bounding box and polytope index, the material table, the link
pair filter, and the boxes, cylinders and hulls as polytopes (convex.py) packed flat for the
narrow phase (``physics/collide.py``).
"""
import numpy as np

from . import convex
from ..physics import contacts
from ..physics.arrays import Shapes


#: The polytopes of the hulls made in this process, by their vertices and faces: a model rebuilt
#: (a spawn) does not make them again.
_POLYTOPES = {}


def _hull_polytope(vertices, faces):
    """Return convex.hull_polytope of a hull, made once per process."""
    vertices = np.ascontiguousarray(vertices, dtype=float)
    key = (vertices.shape, vertices.tobytes(), tuple(tuple(f) for f in faces))
    if key not in _POLYTOPES:
        _POLYTOPES[key] = convex.hull_polytope(vertices, faces)
    return _POLYTOPES[key]


def shape_tables(model):
    """
    Return the engine's shape table and packed polytopes of a model's collision shapes.

    Args:
        model: RobotModel with its ``shapes``, ``bodies`` (their ``com``) and
            ``collision_filter``.

    Returns:
        (physics.arrays.Shapes, physics.arrays.Polytopes): positions relative to the body's
        centre of mass, m (world frame for static shapes); axis-aligned boxes in the shape frame,
        m; a polytope index per shape (-1 for spheres, capsules and planes).
    """
    shapes = model.shapes
    body_com = np.array([b.com for b in model.bodies], dtype=float).reshape(-1, 3)
    n = len(shapes)
    polys = []
    poly = np.full(n, -1, dtype=np.int64)
    center = np.zeros((n, 3))
    half = np.zeros((n, 3))
    pos = np.zeros((n, 3))
    quat = np.zeros((n, 4))
    size = np.zeros((n, 3))
    for i, s in enumerate(shapes):
        pos[i] = np.asarray(s.pos, dtype=float) - (body_com[s.body] if s.body >= 0 else 0.0)
        quat[i] = s.quat
        size[i, :len(s.size)] = s.size
        r, h = size[i, 0], size[i, 1]
        if s.kind == 'box':
            polys.append(convex.box_polytope(size[i]))
            half[i] = size[i]
        elif s.kind == 'cylinder':
            polys.append(convex.cylinder_polytope(r, h))
            half[i] = (r, r, h)
        elif s.kind == 'convex':
            polys.append(_hull_polytope(s.vertices, s.faces))
            low, high = s.vertices.min(axis=0), s.vertices.max(axis=0)
            center[i], half[i] = 0.5 * (low + high), 0.5 * (high - low)
        elif s.kind == 'sphere':
            half[i] = (r, r, r)
        elif s.kind == 'capsule':
            half[i] = (r, r, h + r)
        if s.kind in ('box', 'cylinder', 'convex'):
            poly[i] = len(polys) - 1
    names = {name: i for i, name in enumerate(dict.fromkeys(s.name for s in shapes))}
    pair_filter = np.zeros((len(names), len(names)), dtype=np.bool_)
    for pair in model.collision_filter:
        a, b = (names.get(name, -1) for name in pair)
        if a >= 0 and b >= 0:
            pair_filter[a, b] = pair_filter[b, a] = True
    kinds = np.array([contacts.KIND_CODES[s.kind] for s in shapes], dtype=np.int64)
    table = Shapes(
        body=np.array([s.body for s in shapes], dtype=np.int64), kind=kinds, pos=pos,
        quat=quat, size=size, poly=poly, aabb_center=center, aabb_half=half,
        material=np.array([s.material for s in shapes], dtype=float).reshape(
            n, contacts.N_MATERIAL),
        planes=np.nonzero(kinds == contacts.PLANE)[0].astype(np.int64),
        link=np.array([names[s.name] for s in shapes], dtype=np.int64),
        pair_filter=pair_filter)
    return table, convex.pack_polytopes(polys)
