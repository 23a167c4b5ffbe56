"""Narrow phase of shape pairs (physics/collide.py) and polytope tables (description/convex.py)."""
import itertools

from jointsim_ros.description import convex
from jointsim_ros.physics import collide
import numpy as np
import pytest

SPHERE, CAPSULE, BOX, CYLINDER, CONVEX = (collide.SPHERE, collide.CAPSULE, collide.BOX,
                                          collide.CYLINDER, collide.CONVEX)
I3 = np.eye(3)
MARGIN = 0.01
S2 = np.sqrt(2.0)


def brute_hull(points, tol=1e-9):
    """Return (points, CCW faces) of the convex hull by trying every plane through 3 points."""
    pts = np.asarray(points, dtype=float)
    planes = []
    for i, j, k in itertools.combinations(range(len(pts)), 3):
        normal = np.cross(pts[j] - pts[i], pts[k] - pts[i])
        length = np.linalg.norm(normal)
        if length < 1e-12:
            continue
        normal = normal / length
        height = pts @ normal - normal @ pts[i]
        if height.min() >= -tol:
            normal = -normal
        elif height.max() > tol:
            continue
        offset = normal @ pts[i]
        if any(np.allclose(normal, m) and abs(offset - o) < 1e-9 for m, o in planes):
            continue
        planes.append((normal, offset))
    faces = []
    for normal, offset in planes:
        on = np.flatnonzero(np.abs(pts @ normal - offset) <= tol)
        centre = pts[on].mean(axis=0)
        u = pts[on[0]] - centre
        u /= np.linalg.norm(u)
        v = np.cross(normal, u)
        faces.append(on[np.argsort(np.arctan2((pts[on] - centre) @ v, (pts[on] - centre) @ u))])
    return pts, faces


def random_rotation(rng):
    """Return a uniformly random rotation matrix."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def axis_rotation(axis, angle):
    """Return the rotation by angle about axis 0, 1 or 2."""
    c, s = np.cos(angle), np.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    m = np.eye(3)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


def as_tuple(a):
    """Return an array as nested tuples of floats (the compiled functions' vectors)."""
    a = np.asarray(a, dtype=float)
    if a.ndim == 1:
        return tuple(float(x) for x in a)
    return tuple(as_tuple(row) for row in a)


class Scene:
    """Packed polytopes and a caller of collide_shapes."""

    def __init__(self, *polytopes):
        self.polytopes = list(polytopes)
        self.packed = convex.pack_polytopes(self.polytopes)

    def collide(self, a, b, margin=MARGIN):
        """
        Return (points, normals, depths) of shapes a and b.

        Each shape is (kind, pos, rot, size, poly).
        """
        out_pos = np.zeros((4, 3))
        out_normal = np.zeros((4, 3))
        out_depth = np.zeros(4)
        count = collide.collide_shapes(
            a[0], as_tuple(a[1]), as_tuple(a[2]), as_tuple(a[3]), a[4],
            b[0], as_tuple(b[1]), as_tuple(b[2]), as_tuple(b[3]), b[4],
            self.packed, margin, out_pos, out_normal, out_depth, collide.scratch_arrays())
        assert 0 <= count <= collide.MAX_PAIR_POINTS
        return out_pos[:count].copy(), out_normal[:count].copy(), out_depth[:count].copy()

    def world(self, poly, pos, rot):
        """Return the world vertices of a polytope."""
        return self.polytopes[poly].verts @ np.asarray(rot).T + pos


def sphere(pos, radius):
    """Return a sphere shape."""
    return (SPHERE, np.asarray(pos, float), I3, (radius, 0.0, 0.0), -1)


def capsule(pos, rot, radius, half_length):
    """Return a capsule shape."""
    return (CAPSULE, np.asarray(pos, float), rot, (radius, half_length, 0.0), -1)


def polytope(kind, poly, pos, rot=I3):
    """Return a box, cylinder or convex shape."""
    return (kind, np.asarray(pos, float), rot, (0.0, 0.0, 0.0), poly)


def check_swap(scene, a, b):
    """Check that swapping the shapes negates the normals and keeps points and depths."""
    pos, normal, depth = scene.collide(a, b)
    pos2, normal2, depth2 = scene.collide(b, a)
    assert len(depth) == len(depth2)
    order, order2 = np.lexsort(np.round(pos, 9).T), np.lexsort(np.round(pos2, 9).T)
    np.testing.assert_allclose(pos[order], pos2[order2], atol=1e-12)
    np.testing.assert_allclose(normal[order], -normal2[order2], atol=1e-12)
    np.testing.assert_allclose(depth[order], depth2[order2], atol=1e-12)


# --- convex.py ------------------------------------------------------------------------------


def check_polytope(p):
    """Check the invariants the narrow phase relies on."""
    nv, nf, ne = len(p.verts), len(p.face_verts), len(p.edges)
    assert nv - ne + nf == 2
    np.testing.assert_allclose(np.linalg.norm(p.face_normal, axis=1), 1.0, atol=1e-12)
    centre = p.verts.mean(axis=0)
    for f, loop in enumerate(p.face_verts):
        np.testing.assert_allclose(p.verts[loop] @ p.face_normal[f], p.face_offset[f], atol=1e-12)
        assert p.face_normal[f] @ centre < p.face_offset[f]
        # counter-clockwise seen from outside
        area = np.cross(p.verts[loop] - centre, np.roll(p.verts[loop], -1, axis=0) - centre)
        assert area.sum(axis=0) @ p.face_normal[f] > 0.0
    assert (p.verts @ p.face_normal.T - p.face_offset <= 1e-12).all()
    seen = set()
    for v0, v1, f0, f1 in p.edges:
        assert (min(v0, v1), max(v0, v1)) not in seen
        seen.add((min(v0, v1), max(v0, v1)))
        loop0, loop1 = list(p.face_verts[f0]), list(p.face_verts[f1])
        assert loop0[(loop0.index(v0) + 1) % len(loop0)] == v1
        assert loop1[(loop1.index(v1) + 1) % len(loop1)] == v0
        edge = p.verts[v1] - p.verts[v0]
        assert edge @ np.cross(p.face_normal[f0], p.face_normal[f1]) > 0.0


def test_box_polytope():
    p = convex.box_polytope([0.1, 0.2, 0.3])
    check_polytope(p)
    assert p.verts.shape == (8, 3) and len(p.face_verts) == 6 and p.edges.shape == (12, 4)
    np.testing.assert_allclose(np.abs(p.verts), np.tile([0.1, 0.2, 0.3], (8, 1)))
    np.testing.assert_allclose(sorted(p.face_offset), [0.1, 0.1, 0.2, 0.2, 0.3, 0.3])
    with pytest.raises(ValueError):
        convex.box_polytope([0.1, 0.0, 0.3])


def test_cylinder_polytope():
    p = convex.cylinder_polytope(0.2, 0.5, sides=12)
    check_polytope(p)
    assert p.verts.shape == (24, 3) and len(p.face_verts) == 14 and p.edges.shape == (36, 4)
    np.testing.assert_allclose(np.hypot(p.verts[:, 0], p.verts[:, 1]), 0.2)
    np.testing.assert_allclose(np.abs(p.verts[:, 2]), 0.5)
    with pytest.raises(ValueError):
        convex.cylinder_polytope(0.2, 0.5, sides=2)


def test_hull_polytope_fixes_loops_and_drops_unused_vertices():
    pts, faces = brute_hull(np.random.default_rng(3).normal(size=(12, 3)))
    check_polytope(convex.hull_polytope(pts, faces))
    flipped = [f[::-1] if i % 2 else f for i, f in enumerate(faces)]
    padded = np.vstack([pts, [[0.0, 0.0, 0.0]]])
    p = convex.hull_polytope(padded, flipped)
    check_polytope(p)
    assert len(p.verts) == len(np.unique(np.concatenate(faces)))
    with pytest.raises(ValueError):
        convex.hull_polytope(pts, faces[1:])  # not closed


def test_pack_polytopes():
    box = convex.box_polytope([1.0, 1.0, 1.0])
    cyl = convex.cylinder_polytope(1.0, 1.0, sides=5)
    packed = convex.pack_polytopes([box, cyl])
    np.testing.assert_array_equal(packed.vert_start, [0, 8, 18])
    np.testing.assert_array_equal(packed.face_start, [0, 6, 13])
    np.testing.assert_array_equal(packed.edge_start, [0, 12, 27])
    assert packed.face_vert_start[-1] == len(packed.face_verts) == 24 + 10 + 20
    f = packed.face_start[1] + 2
    loop = packed.face_verts[packed.face_vert_start[f]:packed.face_vert_start[f + 1]]
    np.testing.assert_array_equal(loop, cyl.face_verts[2])
    np.testing.assert_array_equal(packed.edges[12:], cyl.edges)
    for name in packed._fields:
        a = getattr(packed, name)
        assert a.dtype in (np.int64, np.float64) and a.flags.c_contiguous
    empty = convex.pack_polytopes([])
    for name in ('vert_start', 'face_start', 'face_vert_start', 'edge_start'):
        np.testing.assert_array_equal(getattr(empty, name), [0])
    assert empty.verts.shape == (0, 3) and empty.edges.shape == (0, 4)
    assert empty.face_verts.shape == (0,) and empty.face_verts.dtype == np.int64


# --- spheres and capsules -------------------------------------------------------------------


def test_sphere_sphere():
    scene = Scene()
    direction = np.array([1.0, -2.0, 2.0]) / 3.0
    a = sphere(direction * 0.25, 0.2)
    pos, normal, depth = scene.collide(a, sphere([0.0, 0.0, 0.0], 0.1))
    np.testing.assert_allclose(depth, [0.05])
    np.testing.assert_allclose(normal, [direction])
    # midway between the surface points 0.05 and 0.1 along the direction
    np.testing.assert_allclose(pos, [0.075 * direction])
    # a gap within the margin, then beyond it
    _, _, depth = scene.collide(sphere(direction * 0.305, 0.2), sphere([0, 0, 0], 0.1))
    np.testing.assert_allclose(depth, [-0.005])
    assert len(scene.collide(sphere(direction * 0.311, 0.2), sphere([0, 0, 0], 0.1))[2]) == 0
    check_swap(scene, a, sphere([0.0, 0.0, 0.0], 0.1))


def test_sphere_capsule_and_crossing_capsules():
    scene = Scene()
    along_x = axis_rotation(1, np.pi / 2)  # the capsule's z axis along world x
    cap = capsule([0.0, 0.0, 0.0], along_x, 0.1, 0.5)
    pos, normal, depth = scene.collide(sphere([0.3, 0.0, 0.25], 0.2), cap)
    np.testing.assert_allclose(depth, [0.05])
    np.testing.assert_allclose(normal, [[0.0, 0.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(pos, [[0.3, 0.0, 0.075]], atol=1e-15)
    # past the end cap
    _, normal, depth = scene.collide(sphere([0.5 + 0.18 * 0.6, 0.0, 0.18 * 0.8], 0.1), cap)
    np.testing.assert_allclose(depth, [0.02])
    np.testing.assert_allclose(normal, [[0.6, 0.0, 0.8]])
    # capsules crossing at right angles: one point
    along_y = axis_rotation(0, np.pi / 2)
    top = capsule([0.1, 0.0, 0.19], along_y, 0.1, 0.5)
    pos, normal, depth = scene.collide(top, cap)
    np.testing.assert_allclose(depth, [0.01])
    np.testing.assert_allclose(normal, [[0.0, 0.0, 1.0]], atol=1e-15)
    np.testing.assert_allclose(pos, [[0.1, 0.0, 0.095]], atol=1e-15)
    check_swap(scene, top, cap)


def test_parallel_capsules_give_the_ends_of_their_overlap():
    scene = Scene()
    along_x = axis_rotation(1, np.pi / 2)
    lower = capsule([0.0, 0.0, 0.0], along_x, 0.1, 0.5)
    upper = capsule([0.3, 0.0, 0.195], along_x, 0.1, 0.4)
    pos, normal, depth = scene.collide(upper, lower)
    assert len(depth) == 2
    np.testing.assert_allclose(depth, [0.005, 0.005])
    np.testing.assert_allclose(normal, [[0, 0, 1], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(sorted(pos[:, 0]), [-0.1, 0.5])
    np.testing.assert_allclose(pos[:, 2], 0.0975)
    check_swap(scene, upper, lower)
    # slightly tilted: still two points, each at its own depth
    tilted = capsule([0.3, 0.0, 0.195], along_x @ axis_rotation(0, 1e-4), 0.1, 0.4)
    _, _, depth = scene.collide(tilted, lower)
    assert len(depth) == 2 and abs(depth.max() - 0.005) < 1e-4
    # side by side (horizontal offset) and coaxial end to end
    _, normal, depth = scene.collide(capsule([0.0, 0.19, 0.0], along_x, 0.1, 0.5), lower)
    np.testing.assert_allclose(normal, [[0, 1, 0], [0, 1, 0]], atol=1e-15)
    _, normal, depth = scene.collide(capsule([1.19, 0.0, 0.0], along_x, 0.1, 0.5), lower)
    np.testing.assert_allclose(normal, [[1, 0, 0]], atol=1e-15)
    np.testing.assert_allclose(depth, [0.01])


# --- spheres and capsules against polytopes -------------------------------------------------


def box_distance(local, half):
    """Return the signed distance of a point (box frame) to a box."""
    q = np.abs(local) - half
    outside = np.linalg.norm(np.maximum(q, 0.0))
    return outside if outside > 0.0 else q.max()


@pytest.mark.parametrize('local', [
    (0.02, -0.05, 0.33),    # face region, overlapping
    (0.12, 0.22, 0.1),      # edge region, overlapping
    (0.13, -0.22, 0.32),    # corner region, overlapping
    (-0.155, 0.05, -0.1),   # face region, a gap within the margin
    (0.14, 0.23, -0.33),    # corner region, a gap within the margin
    (0.0, -0.27, 0.0),      # a gap beyond the margin
])
def test_sphere_box_regions(local):
    half = np.array([0.1, 0.2, 0.3])
    rot = random_rotation(np.random.default_rng(7))
    centre_pos = np.array([1.0, -2.0, 0.5])
    scene = Scene(convex.box_polytope(half))
    box = polytope(BOX, 0, centre_pos, rot)
    radius = 0.05
    local = np.asarray(local, float)
    centre = centre_pos + rot @ local
    pos, normal, depth = scene.collide(sphere(centre, radius), box)
    expected = radius - box_distance(local, half)
    if expected <= -MARGIN:
        assert len(depth) == 0
        return
    np.testing.assert_allclose(depth, [expected], atol=1e-12)
    # the normal points from the box's closest point to the centre
    closest = np.clip(local, -half, half)
    direction = rot @ (local - closest)
    np.testing.assert_allclose(normal[0], direction / np.linalg.norm(direction), atol=1e-12)
    np.testing.assert_allclose(pos[0], centre - normal[0] * (radius + box_distance(local, half))
                               / 2, atol=1e-12)
    check_swap(scene, sphere(centre, radius), box)


def test_sphere_deep_inside_a_box_uses_the_nearest_face():
    half = np.array([0.1, 0.2, 0.3])
    rot = axis_rotation(2, 0.3)
    scene = Scene(convex.box_polytope(half))
    local = np.array([0.02, 0.15, -0.1])
    pos, normal, depth = scene.collide(sphere(rot @ local, 0.01), polytope(BOX, 0, [0, 0, 0], rot))
    np.testing.assert_allclose(depth, [0.01 + 0.05])
    np.testing.assert_allclose(normal, [rot[:, 1]], atol=1e-15)
    np.testing.assert_allclose(pos, [rot @ (local - [0, 0.5 * (0.01 - 0.05), 0])], atol=1e-15)


def test_capsule_lying_on_a_box_gives_two_points():
    scene = Scene(convex.box_polytope([1.0, 1.0, 0.5]))
    box = polytope(BOX, 0, [0.0, 0.0, 0.0])
    along_x = axis_rotation(1, np.pi / 2)
    lying = capsule([0.8, 0.3, 0.597], along_x, 0.1, 0.4)
    pos, normal, depth = scene.collide(lying, box)
    np.testing.assert_allclose(depth, [0.003, 0.003])
    np.testing.assert_allclose(normal, [[0, 0, 1], [0, 0, 1]], atol=1e-15)
    # the end past the box's edge is clipped to it
    np.testing.assert_allclose(sorted(pos[:, 0]), [0.4, 1.0])
    np.testing.assert_allclose(pos[:, 1:], [[0.3, 0.4985], [0.3, 0.4985]])
    check_swap(scene, lying, box)
    # tilted by 0.01 rad: the high end is 8 mm up, still within the margin
    _, _, depth = scene.collide(capsule([0.0, 0.0, 0.597], along_x @ axis_rotation(0, 0.01),
                                        0.1, 0.4), box)
    assert len(depth) == 2
    # pressed into the box (the core inside): the top face, two points
    _, normal, depth = scene.collide(capsule([0.0, 0.0, 0.45], along_x, 0.1, 0.4), box)
    np.testing.assert_allclose(depth, [0.15, 0.15])
    np.testing.assert_allclose(normal, [[0, 0, 1], [0, 0, 1]], atol=1e-15)


def segment_certificate(scene, poly, pos, rot, e0, e1, radius, points, normal, depth):
    """
    Check a sphere's or capsule's deepest point against a polytope it does not reach into.

    The core point c = p + n (r - depth / 2) lies on the segment, the polytope point
    q = c - n (r - depth) lies in the polytope (so the distance is at most r - depth), and the
    plane through q with normal n separates the segment from the polytope (so it is at least
    that).
    """
    k = int(np.argmax(depth))
    n = normal[k]
    gap = radius - depth[k]
    c = points[k] + n * (radius - depth[k] / 2)
    q = c - n * gap
    seg = e1 - e0
    t = np.clip((c - e0) @ seg / max(seg @ seg, 1e-300), 0.0, 1.0)
    np.testing.assert_allclose(c, e0 + t * seg, atol=1e-9)
    p = scene.polytopes[poly]
    local = np.asarray(rot).T @ (q - pos)
    assert (p.face_normal @ local - p.face_offset).max() <= 1e-9
    support = (scene.world(poly, pos, rot) @ n).max()
    assert min(e0 @ n, e1 @ n) - support >= gap - 1e-9


def test_spheres_and_capsules_against_random_polytopes_are_exact():
    rng = np.random.default_rng(11)
    polys = [convex.hull_polytope(*brute_hull(rng.normal(size=(10, 3)) * [0.3, 0.2, 0.25]))
             for _ in range(4)]
    polys += [convex.box_polytope([0.3, 0.2, 0.1]), convex.cylinder_polytope(0.2, 0.3)]
    scene = Scene(*polys)
    kinds = [CONVEX] * 4 + [BOX, CYLINDER]
    outside = crossing = 0
    for trial in range(300):
        k = int(rng.integers(len(polys)))
        rot, rot_c = random_rotation(rng), random_rotation(rng)
        pos = rng.normal(size=3)
        radius = rng.uniform(0.02, 0.2)
        half = 0.0 if trial % 3 == 0 else rng.uniform(0.0, 0.4)
        direction = rng.normal(size=3)
        centre = pos + direction / np.linalg.norm(direction) * rng.uniform(0.0, 0.7)
        shape = capsule(centre, rot_c, radius, half)
        e0, e1 = centre - rot_c[:, 2] * half, centre + rot_c[:, 2] * half
        target = polytope(kinds[k], k, pos, rot)
        # with a wide margin every pair has points; the narrow margin keeps those within it
        points, normal, depth = scene.collide(shape, target, margin=10.0)
        assert len(depth) > 0
        _, _, kept = scene.collide(shape, target)
        np.testing.assert_allclose(sorted(kept), sorted(depth[depth > -MARGIN]), atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(normal, axis=1), 1.0, atol=1e-12)
        if depth.max() < radius:
            segment_certificate(scene, k, pos, rot, e0, e1, radius, points, normal, depth)
            outside += 1
        else:
            # the core reaches in: the face of least penetration
            local = (np.stack([e0, e1]) - pos) @ rot
            heights = (polys[k].face_normal @ local.T).min(axis=1) - polys[k].face_offset
            f = int(np.argmax(heights))
            np.testing.assert_allclose(normal, np.tile(rot @ polys[k].face_normal[f],
                                                       (len(depth), 1)), atol=1e-12)
            assert depth.max() <= radius - heights[f] + 1e-12
            crossing += 1
    assert outside > 150 and crossing > 20


# --- polytope pairs -------------------------------------------------------------------------


def test_box_resting_flat_on_a_box():
    scene = Scene(convex.box_polytope([0.3, 0.2, 0.1]), convex.box_polytope([1.0, 1.0, 0.5]))
    top = polytope(BOX, 0, [0.1, -0.2, 0.596])
    ground = polytope(BOX, 1, [0.0, 0.0, 0.0])
    pos, normal, depth = scene.collide(top, ground)
    assert len(depth) == 4
    np.testing.assert_allclose(depth, 0.004, atol=1e-12)
    np.testing.assert_allclose(normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-15)
    np.testing.assert_allclose(pos[:, 2], 0.498, atol=1e-12)
    corners = {(round(x, 9), round(y, 9)) for x, y in pos[:, :2]}
    assert corners == {(round(0.1 + sx * 0.3, 9), round(-0.2 + sy * 0.2, 9))
                       for sx in (-1, 1) for sy in (-1, 1)}
    check_swap(scene, top, ground)
    # a gap within the margin is a speculative contact; beyond it nothing
    _, _, depth = scene.collide(polytope(BOX, 0, [0.1, -0.2, 0.605]), ground)
    np.testing.assert_allclose(depth, -0.005, atol=1e-12)
    assert len(scene.collide(polytope(BOX, 0, [0.1, -0.2, 0.611]), ground)[2]) == 0
    assert len(scene.collide(polytope(BOX, 0, [1.35, 0.0, 0.5]), ground)[2]) == 0


def test_box_turned_45_degrees_on_a_box():
    scene = Scene(convex.box_polytope([0.5, 0.5, 0.5]))
    rot = axis_rotation(2, np.pi / 4)
    top = polytope(BOX, 0, [0.0, 0.0, 0.99], rot)
    pos, normal, depth = scene.collide(top, polytope(BOX, 0, [0.0, 0.0, 0.0]))
    assert len(depth) == 4
    np.testing.assert_allclose(depth, 0.01, atol=1e-12)
    np.testing.assert_allclose(normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-15)
    # inside both footprints (the octagon where they overlap)
    assert (np.abs(pos[:, :2]) <= 0.5 + 1e-12).all()
    assert (np.abs(pos[:, :2] @ rot[:2, :2]) <= 0.5 + 1e-12).all()
    # the four points span the largest quadrilateral in the regular octagon (area 2 - sqrt 2,
    # alternate corners; the octagon's is 4 (sqrt 2 - 1))
    xy = pos[:, :2]
    hull = xy[np.argsort(np.arctan2(xy[:, 1], xy[:, 0]))]
    area = 0.5 * abs(np.sum(hull[:, 0] * np.roll(hull[:, 1], -1)
                            - np.roll(hull[:, 0], -1) * hull[:, 1]))
    np.testing.assert_allclose(area, 2.0 - S2)


def test_crossing_edges_give_one_point():
    scene = Scene(convex.box_polytope([0.5, 0.5, 0.5]))
    z_top = S2 - 0.02
    upper = polytope(BOX, 0, [0.0, 0.0, z_top], axis_rotation(0, np.pi / 4))
    lower = polytope(BOX, 0, [0.0, 0.0, 0.0], axis_rotation(1, np.pi / 4))
    pos, normal, depth = scene.collide(upper, lower)
    np.testing.assert_allclose(depth, [0.02], atol=1e-12)
    np.testing.assert_allclose(normal, [[0.0, 0.0, 1.0]], atol=1e-12)
    np.testing.assert_allclose(pos, [[0.0, 0.0, z_top / 2]], atol=1e-12)
    check_swap(scene, upper, lower)


def test_box_on_a_cylinder_prism_and_a_prism_on_a_box():
    radius, half_length = 0.2, 0.3
    scene = Scene(convex.box_polytope([1.0, 1.0, 0.5]),
                  convex.cylinder_polytope(radius, half_length))
    ground = polytope(BOX, 0, [0.0, 0.0, 0.0])
    # standing: the cap, a 16-gon, reduced to 4 points on the rim
    standing = polytope(CYLINDER, 1, [0.1, 0.2, 0.5 + half_length - 0.003])
    pos, normal, depth = scene.collide(standing, ground)
    assert len(depth) == 4
    np.testing.assert_allclose(depth, 0.003, atol=1e-12)
    np.testing.assert_allclose(normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-15)
    np.testing.assert_allclose(np.hypot(pos[:, 0] - 0.1, pos[:, 1] - 0.2), radius)
    # lying on a flat side (side 0, normal at pi/16, turned to -z): its 4 corners
    rot = axis_rotation(1, np.pi / 2) @ axis_rotation(2, -np.pi / 16)
    apothem = radius * np.cos(np.pi / 16)
    lying = polytope(CYLINDER, 1, [0.0, 0.0, 0.5 + apothem - 0.002], rot)
    pos, normal, depth = scene.collide(lying, ground)
    assert len(depth) == 4
    np.testing.assert_allclose(depth, 0.002, atol=1e-12)
    np.testing.assert_allclose(normal, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-12)
    np.testing.assert_allclose(sorted(np.abs(pos[:, 0])), [half_length] * 4, atol=1e-12)
    np.testing.assert_allclose(np.abs(pos[:, 1]), radius * np.sin(np.pi / 16), atol=1e-12)
    check_swap(scene, lying, ground)
    # a sphere on the cap and a capsule across the prism
    _, normal, depth = scene.collide(sphere([0.0, 0.05, half_length + 0.09], 0.1),
                                     polytope(CYLINDER, 1, [0.0, 0.0, 0.0]))
    np.testing.assert_allclose(depth, [0.01], atol=1e-12)
    np.testing.assert_allclose(normal, [[0.0, 0.0, 1.0]], atol=1e-15)


def test_convex_hull_resting_on_a_box():
    rng = np.random.default_rng(5)
    pts, faces = brute_hull(rng.normal(size=(12, 3)) * 0.2)
    hull = convex.hull_polytope(pts, faces)
    scene = Scene(hull, convex.box_polytope([1.0, 1.0, 0.5]))
    ground = polytope(BOX, 1, [0.0, 0.0, 0.0])
    # turn the largest face down and sink it 4 mm
    f = int(np.argmax([len(loop) for loop in hull.face_verts]))
    n = hull.face_normal[f]
    axis = np.cross(n, [0.0, 0.0, -1.0])
    angle = np.arctan2(np.linalg.norm(axis), n @ [0.0, 0.0, -1.0])
    k = axis / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    rot = I3 + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx
    low = (hull.verts @ rot.T)[:, 2].min()
    shape = polytope(CONVEX, 0, [0.1, 0.0, 0.5 - low - 0.004], rot)
    pos, normal, depth = scene.collide(shape, ground)
    assert len(depth) == min(4, len(hull.face_verts[f]))
    np.testing.assert_allclose(depth, 0.004, atol=1e-12)
    np.testing.assert_allclose(normal, np.tile([0.0, 0.0, 1.0], (len(depth), 1)), atol=1e-12)
    corners = scene.world(0, shape[1], rot)[hull.face_verts[f]]
    for p in pos:
        assert np.min(np.linalg.norm(corners[:, :2] - p[:2], axis=1)) < 1e-9
    check_swap(scene, shape, ground)


def sat_axes(rng, pa, rot_a, pb, rot_b, samples=2000):
    """Return candidate unit axes: face normals, edge cross products and random directions."""
    ea = (pa.verts[pa.edges[:, 1]] - pa.verts[pa.edges[:, 0]]) @ rot_a.T
    eb = (pb.verts[pb.edges[:, 1]] - pb.verts[pb.edges[:, 0]]) @ rot_b.T
    crossed = np.cross(ea[:, None, :], eb[None, :, :]).reshape(-1, 3)
    length = np.linalg.norm(crossed, axis=1)
    random = rng.normal(size=(samples, 3))
    axes = np.concatenate([pa.face_normal @ rot_a.T, pb.face_normal @ rot_b.T,
                           crossed[length > 1e-9] / length[length > 1e-9, None],
                           random / np.linalg.norm(random, axis=1)[:, None]])
    return np.concatenate([axes, -axes])


def test_polytope_pairs_agree_with_brute_force_sat():
    rng = np.random.default_rng(1)
    clouds = [rng.normal(size=(int(rng.integers(5, 13)), 3)) * rng.uniform(0.3, 1.0, size=3)
              for _ in range(10)]
    polys = [convex.hull_polytope(*brute_hull(cloud)) for cloud in clouds]
    polys += [convex.box_polytope([0.5, 0.3, 0.2]), convex.cylinder_polytope(0.4, 0.3)]
    kinds = [CONVEX] * 10 + [BOX, CYLINDER]
    scene = Scene(*polys)
    exact = preferred = 0
    for _ in range(300):
        ia, ib = (int(i) for i in rng.integers(0, len(polys), 2))
        rot_a, rot_b = random_rotation(rng), random_rotation(rng)
        pos_a = rng.normal(size=3) * 0.1
        direction = rng.normal(size=3)
        pos_b = pos_a + direction / np.linalg.norm(direction) * rng.uniform(0.2, 1.5)
        wa, wb = scene.world(ia, pos_a, rot_a), scene.world(ib, pos_b, rot_b)
        axes = sat_axes(rng, polys[ia], rot_a, polys[ib], rot_b)
        # overlap along u: how far A must move along +u to clear B
        sat_depth = ((wb @ axes.T).max(axis=0) - (wa @ axes.T).min(axis=0)).min()
        points, normal, depth = scene.collide(polytope(kinds[ia], ia, pos_a, rot_a),
                                              polytope(kinds[ib], ib, pos_b, rot_b))
        if sat_depth <= -MARGIN:
            assert len(depth) == 0
        if sat_depth <= 0.0:
            continue
        assert len(depth) > 0
        n = normal[0]
        np.testing.assert_allclose(normal, np.tile(n, (len(depth), 1)), atol=1e-12)
        assert abs(np.linalg.norm(n) - 1.0) < 1e-12
        along_n = (wb @ n).max() - (wa @ n).min()
        assert depth.max() <= along_n + 1e-9
        if abs(along_n - sat_depth) <= 1e-6:
            exact += 1
            assert abs(depth.max() - along_n) <= 1e-6
        else:
            # a face axis kept over a slightly shallower one
            preferred += 1
            half = 0.5 * min(np.ptp(polys[i].verts, axis=0).max() for i in (ia, ib))
            assert along_n <= sat_depth + collide.FACE_PREFERENCE * half + 1e-9
    assert exact > 150 and preferred < exact / 10
