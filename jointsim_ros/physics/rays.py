"""
Rays cast against the collision world: what lidars and depth cameras read (docs/sensors.md).

A ray from o along the unit direction d meets a shape where it enters it: the smallest t >= 0
with o + t d on the shape's surface, for an origin outside the shape.  A ray that starts inside
a shape leaves it unseen (a solid seen from inside is transparent, as a renderer's back-face
culling makes it), so a sensor inside its own housing sees out, and a plane is seen from the
side its normal points to.  The shapes are the contact pipeline's (``arrays.Shapes`` and
``Polytopes``), placed at the bodies' current poses by ``contacts.update_shapes``, in the
shape's own frame:

- sphere: the nearer root of |o + t d|^2 = r^2, as c / q with q = -b + sqrt(b^2 - c) (no
  cancellation; Press et al., Numerical Recipes, 5.6);
- box: the slabs |x_i| <= h_i (Kay and Kajiya), entry = the largest of the near crossings;
- cylinder: the exact one (the contacts use an inscribed prism), the slab |z| <= h with the
  infinite cylinder x^2 + y^2 <= r^2 (its roots as for the sphere);
- capsule: the first entry into its cylinder and its two end spheres (an origin outside the
  union is outside each part, and the union is entered where the first part is);
- convex hulls: Cyrus-Beck clipping of the ray by the face planes n . x <= c (Cyrus and Beck,
  1978), after the slab test of the hull's bounding box;
- planes: t = h / (-n . d) from a height h above the plane.

Two ways in:

- :func:`scan`, one sensor's rays: a grid of rows and columns cast from one origin (a lidar's
  elevations by azimuths, a depth camera's pixel rows by columns).  The broad phase works shape
  by shape, as a rasteriser does.  Seen from the sensor a shape's bounding sphere covers an
  interval of row angles and one of column angles: for a lidar the sphere's elevation cone
  (the angle to its centre less asin(R / |c|)) and its azimuth wedge (the disc it projects
  onto the xy plane); for a camera the images of the corners of the shape's bounding box, a
  pinhole mapping lines to lines (or, for a box reaching behind the camera, the sphere's
  projections onto the xy and xz planes, since a pixel column is a plane through the z axis and
  a pixel row one through the y axis).  Binary search
  in the sorted angles gives the block of rays to test, and each ray keeps its nearest hit so
  far (a depth buffer); the shapes go nearest first, so a shape behind what a ray already hit
  costs that ray one comparison.  The cost is placing the shapes plus each shape's footprint in
  rays, not rays times shapes.
- :func:`cast`, any rays (origins, directions, lengths): a bounding volume hierarchy over the
  shapes' world boxes, built each call by median splits along the widest axis, walked by each
  ray nearest child first and pruned by its nearest hit so far.

Vectors are 3-tuples and rotations 3-tuples of rows, as in ``math3d``.
"""
import numpy as np

from . import contacts
from .arrays import RayGrid, RayWork
from .collide import mat_t_mat
from .math3d import (dot3, entry, jit, jit_inline, mat_t_vec, mat_vec, quat_mul, quat_to_mat,
                     read3, read4, read_mat, vadd, vscale, vsub)

SPHERE, CAPSULE, BOX, CYLINDER, CONVEX, PLANE = (contacts.SPHERE, contacts.CAPSULE, contacts.BOX,
                                                 contacts.CYLINDER, contacts.CONVEX,
                                                 contacts.PLANE)
#: Grid kinds: a lidar's rows are elevations and its columns azimuths (both angles step
#: evenly); a depth camera's are a pinhole's pixel rows and columns.
LIDAR, CAMERA = 0, 1
#: RayGrid.param entries: the kind, the range limits of a reading (m: ray length for a lidar,
#: depth along x for a camera) and the longest ray any reading in range needs (m).
G_KIND, G_RANGE_MIN, G_RANGE_MAX, G_MAX_RAY = range(4)
N_GRID = 4
#: Shapes in one leaf of the hierarchy at most.
LEAF_SIZE = 2
#: A bounding sphere's radius is grown by this fraction (and 1e-12 m) before its footprint is
#: taken, so that rounding never drops a ray grazing a sphere.
GROW = 1e-9
TWO_PI = 2.0 * np.pi


# --- grids (numpy, once per sensor) ---------------------------------------------------------

def lidar_grid(azimuths, elevations, range_min, range_max):
    """
    Return the RayGrid of a lidar.

    Args:
        azimuths: (n_col,) ascending horizontal angles about the sensor's z axis from its x
            axis, rad.
        elevations: (n_row,) ascending vertical angles above the sensor's xy plane, rad.
        range_min, range_max: the readings' limits (ray lengths), m.

    Returns:
        arrays.RayGrid; ray (r, c) points along (cos e_r cos a_c, cos e_r sin a_c, sin e_r).
    """
    azimuths = np.asarray(azimuths, dtype=float).reshape(-1)
    elevations = np.asarray(elevations, dtype=float).reshape(-1)
    dirs = np.empty((len(elevations), len(azimuths), 4))
    cos_e = np.cos(elevations)[:, None]
    dirs[..., 0] = cos_e * np.cos(azimuths)[None, :]
    dirs[..., 1] = cos_e * np.sin(azimuths)[None, :]
    dirs[..., 2] = np.sin(elevations)[:, None]
    dirs[..., 3] = range_max
    param = np.array([LIDAR, range_min, range_max, range_max], dtype=float)
    return RayGrid(dirs=dirs, row_key=elevations.copy(), col_key=azimuths.copy(), param=param)


def camera_grid(width, height, fx, fy, cx, cy, near, far):
    """
    Return the RayGrid of a pinhole depth camera looking along the sensor's x axis.

    Pixel (u, v), u to the right and v down from the top-left pixel's centre, looks along
    (1, -(u - cx) / fx, -(v - cy) / fy) in the sensor frame (x forward, y left, z up): the optical
    frame of REP 103 turned so that its z axis is the sensor's x.

    Args:
        width, height: pixels.
        fx, fy: focal lengths, pixels.
        cx, cy: principal point, pixels (pixel centres at whole numbers).
        near, far: the depth limits along x, m.

    Returns:
        arrays.RayGrid of (height, width) rays; each ray's length limit is far over its cosine.
    """
    a = -(np.arange(width, dtype=float) - cx) / fx       # y / x of each column
    b = -(np.arange(height, dtype=float) - cy) / fy      # z / x of each row
    norm = np.sqrt(1.0 + a[None, :] ** 2 + b[:, None] ** 2)
    dirs = np.empty((height, width, 4))
    dirs[..., 0] = 1.0 / norm
    dirs[..., 1] = a[None, :] / norm
    dirs[..., 2] = b[:, None] / norm
    dirs[..., 3] = far * norm
    param = np.array([CAMERA, near, far, float(dirs[..., 3].max())], dtype=float)
    # keys ascend with the index: minus the azimuth of a column, minus the pitch of a row
    return RayGrid(dirs=dirs, row_key=-np.arctan(b), col_key=-np.arctan(a), param=param)


def ray_work(n_body, n_shape):
    """Return the scratch arrays (arrays.RayWork) of casts in a world of these sizes."""
    n_node = 2 * max(n_shape, 1)
    return RayWork(
        rot=np.zeros((n_body, 3, 3)), vel=np.zeros((n_body, 6)), wpos=np.zeros((n_shape, 3)),
        wrot=np.zeros((n_shape, 3, 3)), box=np.zeros((n_shape, 6)), reach=np.zeros(n_shape),
        center=np.zeros((n_shape, 3)), radius=np.zeros(n_shape), near=np.zeros(n_shape),
        order=np.zeros(n_shape, dtype=np.int64), node_box=np.zeros((n_node, 6)),
        node_child=np.zeros(n_node, dtype=np.int64), node_first=np.zeros(n_node, dtype=np.int64),
        node_count=np.zeros(n_node, dtype=np.int64),
        stack=np.zeros(n_node + 64, dtype=np.int64), stack_t=np.zeros(n_node + 64),
        sensor=np.zeros(7))


# --- one ray against one shape, in the shape's frame ------------------------------------------


@jit_inline
def slab(o, d, h):
    """Return (near, far) t of the line o + t d within |x| <= h on one axis; (inf, -inf): none."""
    if d == 0.0:
        if o > h or o < -h:
            return np.inf, -np.inf
        return -np.inf, np.inf
    inv = 1.0 / d
    t1 = (-h - o) * inv
    t2 = (h - o) * inv
    if t1 < t2:
        return t1, t2
    return t2, t1


@jit_inline
def entered(t_in, t_out):
    """Return t_in when the ray enters there from outside (0 <= t_in <= t_out), else inf."""
    if t_in > t_out or t_in < 0.0:
        return np.inf  # missed, behind, or the origin is inside
    return t_in


@jit_inline
def ray_box(o, d, h):
    """Entry t of the ray o + t d into the box |x_i| <= h_i (shape frame), inf for none."""
    x0, x1 = slab(o[0], d[0], h[0])
    y0, y1 = slab(o[1], d[1], h[1])
    z0, z1 = slab(o[2], d[2], h[2])
    return entered(max(x0, max(y0, z0)), min(x1, min(y1, z1)))


@jit_inline
def ray_sphere(o, d, r):
    """Entry t of the ray into the ball |x| <= r about the origin (|d| = 1), inf for none."""
    b = dot3(o, d)
    c = dot3(o, o) - r * r
    if c < 0.0 or b >= 0.0:
        return np.inf  # inside, or moving away from it
    disc = b * b - c
    if disc < 0.0:
        return np.inf
    return c / (np.sqrt(disc) - b)


@jit_inline
def quadratic_interval(a, b, c):
    """Return (near, far) roots of a t^2 + 2 b t + c = 0 (a > 0), (inf, -inf) when none."""
    disc = b * b - a * c
    if disc < 0.0:
        return np.inf, -np.inf
    s = np.sqrt(disc)
    q = -(b + s) if b >= 0.0 else s - b
    if q == 0.0:
        return 0.0, 0.0
    t1 = q / a
    t2 = c / q
    if t1 < t2:
        return t1, t2
    return t2, t1


@jit_inline
def ray_cylinder(o, d, r, h):
    """Entry t of the ray into the cylinder x^2 + y^2 <= r^2, |z| <= h (shape frame)."""
    z0, z1 = slab(o[2], d[2], h)
    a = d[0] * d[0] + d[1] * d[1]
    c = o[0] * o[0] + o[1] * o[1] - r * r
    if a == 0.0:
        if c > 0.0:
            return np.inf
        return entered(z0, z1)
    r0, r1 = quadratic_interval(a, o[0] * d[0] + o[1] * d[1], c)
    return entered(max(z0, r0), min(z1, r1))


@jit_inline
def ray_capsule(o, d, r, h):
    """Entry t of the ray into the capsule about the z segment [-h, h] with radius r."""
    z = min(max(o[2], -h), h)
    if o[0] * o[0] + o[1] * o[1] + (o[2] - z) * (o[2] - z) < r * r:
        return np.inf  # inside
    t = ray_cylinder(o, d, r, h)
    t = min(t, ray_sphere((o[0], o[1], o[2] - h), d, r))
    return min(t, ray_sphere((o[0], o[1], o[2] + h), d, r))


@jit
def ray_polytope(o, d, p, polys, center, half, t_max):
    """
    Entry t of the ray into convex polytope p (Cyrus-Beck), inf for none or beyond t_max.

    Args:
        o: the ray's origin in the polytope's frame, m.
        d: its unit direction there.
        p: the polytope's row in polys (arrays.Polytopes).
        polys: the packed polytopes.
        center: the centre of the polytope's bounding box (tested first), its frame, m.
        half: the half extents of that box, m.
        t_max: hits beyond this are not wanted, m.
    """
    t = ray_box(vsub(o, center), d, half)
    if t > t_max:
        return np.inf
    face_normal = polys.face_normal
    face_offset = polys.face_offset
    t_in = -np.inf
    t_out = np.inf
    for f in range(polys.face_start[p], polys.face_start[p + 1]):
        n = read3(face_normal, f)
        above = dot3(n, o) - face_offset[f]   # > 0: outside this face's plane
        toward = dot3(n, d)
        if toward == 0.0:
            if above > 0.0:
                return np.inf
            continue
        t = -above / toward
        if toward < 0.0:
            t_in = max(t_in, t)
        else:
            t_out = min(t_out, t)
        if t_in > t_out or t_in > t_max:
            return np.inf
    return entered(t_in, t_out)


@jit_inline
def ray_shape(s, kind, o, d, shapes, polys, t_max):
    """Entry t of the ray o + t d (shape s's frame) into shape s; inf for none."""
    size = shapes.size
    if kind == BOX:
        return ray_box(o, d, (size[s, 0], size[s, 1], size[s, 2]))
    if kind == SPHERE:
        return ray_sphere(o, d, size[s, 0])
    if kind == CYLINDER:
        return ray_cylinder(o, d, size[s, 0], size[s, 1])
    if kind == CAPSULE:
        return ray_capsule(o, d, size[s, 0], size[s, 1])
    if kind == CONVEX:
        return ray_polytope(o, d, shapes.poly[s], polys, read3(shapes.aabb_center, s),
                            read3(shapes.aabb_half, s), t_max)
    return np.inf


# --- shared stages --------------------------------------------------------------------------


@jit
def place_shapes(shapes, body_pos, body_quat, work):
    """World pose and box of every shape at the bodies' current poses (work.wpos, wrot, box)."""
    rot = work.rot
    for b in range(body_quat.shape[0]):
        m = quat_to_mat(read4(body_quat, b))
        for i in range(3):
            for j in range(3):
                rot[b, i, j] = m[i][j]
    contacts.update_shapes(shapes.body, shapes.pos, shapes.quat, shapes.aabb_center,
                           shapes.aabb_half, shapes.kind, body_pos, rot, work.vel, 0.0, 0.0,
                           work.wpos, work.wrot, work.box, work.reach)


@jit
def sort_by_key(order, key, n):
    """Sort order[:n] by key[order[i]] ascending, in place (heap sort: no allocation)."""
    for start in range(n // 2 - 1, -1, -1):
        sift_down(order, key, start, n)
    for end in range(n - 1, 0, -1):
        order[0], order[end] = order[end], order[0]
        sift_down(order, key, 0, end)


@jit_inline
def sift_down(order, key, root, n):
    """Restore the max-heap below ``root`` in order[:n]."""
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and key[order[child + 1]] > key[order[child]]:
            child += 1
        if key[order[root]] >= key[order[child]]:
            return
        order[root], order[child] = order[child], order[root]
        root = child


# --- one sensor's grid ----------------------------------------------------------------------


@jit_inline
def first_at_least(keys, x):
    """Index of the first key >= x in ascending keys (len(keys) when none)."""
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@jit_inline
def last_at_most(keys, x):
    """Index of the last key <= x in ascending keys (-1 when none)."""
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


@jit_inline
def wedge(a, b, radius):
    """
    Angles (centre, half width) under which a disc of ``radius`` at (a, b) is seen from 0.

    Half width inf when the origin is inside the disc (every angle).
    """
    rho = np.sqrt(a * a + b * b)
    if rho <= radius:
        return 0.0, np.inf
    return np.arctan2(b, a), np.arcsin(radius / rho)


@jit_inline
def cast_block(r0, r1, c0, c1, s, kind, o, rot, near, dirs, out, shapes, polys):
    """Test rays [r0, r1] x [c0, c1] of a grid against shape s (its frame: o, rot)."""
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            t_max = min(out[r, c], dirs[r, c, 3])
            if near > t_max:
                continue
            d = mat_t_vec(rot, (dirs[r, c, 0], dirs[r, c, 1], dirs[r, c, 2]))
            t = ray_shape(s, kind, o, d, shapes, polys, t_max)
            if t <= t_max:
                out[r, c] = t


@jit
def footprint_rows(grid, center, radius):
    """Return the rows [r0, r1] whose rays may meet a bounding sphere (sensor frame)."""
    keys = grid.row_key
    n = keys.shape[0]
    if grid.param[G_KIND] == LIDAR:
        dist = np.sqrt(dot3(center, center))
        if dist <= radius:
            return 0, n - 1
        mid = np.arcsin(min(1.0, max(-1.0, center[2] / dist)))
        half = np.arcsin(radius / dist)
    else:
        mid, half = wedge(center[0], center[2], radius)   # the xz plane: the pitch
        if half == np.inf:
            return 0, n - 1
        mid = -mid
    return first_at_least(keys, mid - half), last_at_most(keys, mid + half)


@jit
def camera_block(center, rot, half, grid):
    """
    Return the block (r0, r1, c0, c1) of a camera's pixels a box may cover, r0 = -1 for none.

    A pinhole maps lines to lines, so the pixels of a box in front of the camera lie within the
    bounds of its eight corners' images (x > 0).  Returns (-2, ...) when a corner is not in
    front: the bounding sphere's footprint is taken instead.

    Args:
        center: the box's centre, sensor frame, m.
        rot: its axes in the sensor frame.
        half: its half extents, m.
        grid: the camera's arrays.RayGrid.
    """
    a_lo = np.inf
    a_hi = -np.inf
    b_lo = np.inf
    b_hi = -np.inf
    for i in range(8):
        corner = (half[0] if i & 1 else -half[0], half[1] if i & 2 else -half[1],
                  half[2] if i & 4 else -half[2])
        p = vadd(center, mat_vec(rot, corner))
        if p[0] <= 1e-9:
            return -2, 0, 0, 0
        a = p[1] / p[0]
        b = p[2] / p[0]
        a_lo = min(a_lo, a)
        a_hi = max(a_hi, a)
        b_lo = min(b_lo, b)
        b_hi = max(b_hi, b)
    # keys: minus the column's azimuth atan(y / x), minus the row's pitch atan(z / x)
    r0 = first_at_least(grid.row_key, -np.arctan(b_hi) - GROW)
    r1 = last_at_most(grid.row_key, -np.arctan(b_lo) + GROW)
    c0 = first_at_least(grid.col_key, -np.arctan(a_hi) - GROW)
    c1 = last_at_most(grid.col_key, -np.arctan(a_lo) + GROW)
    if r0 > r1 or c0 > c1:
        return -1, 0, 0, 0
    return r0, r1, c0, c1


@jit
def cover_shape(s, kind, o, rot, center, radius, near, grid, out, shapes, polys):
    """Test every ray of a grid whose row and column angles may see shape s."""
    if grid.param[G_KIND] == CAMERA:
        r0, r1, c0, c1 = camera_block(center, rot, read3(shapes.aabb_half, s), grid)
        if r0 == -1:
            return
        if r0 >= 0:
            cast_block(r0, r1, c0, c1, s, kind, o, rot, near, grid.dirs, out, shapes, polys)
            return
    r0, r1 = footprint_rows(grid, center, radius)
    if r0 > r1:
        return
    keys = grid.col_key
    n = keys.shape[0]
    dirs = grid.dirs
    mid, half = wedge(center[0], center[1], radius)   # the xy plane: the azimuth
    if half == np.inf:
        cast_block(r0, r1, 0, n - 1, s, kind, o, rot, near, dirs, out, shapes, polys)
        return
    if grid.param[G_KIND] != LIDAR:
        # a camera sees less than a half turn: its columns' azimuths never wrap
        cast_block(r0, r1, first_at_least(keys, -mid - half), last_at_most(keys, -mid + half),
                   s, kind, o, rot, near, dirs, out, shapes, polys)
        return
    # a lidar's azimuths may span any angle: the wedge and its turns by 2 pi
    lo = mid - half
    hi = mid + half
    k0 = int(np.ceil((keys[0] - hi) / TWO_PI))
    k1 = int(np.floor((keys[n - 1] - lo) / TWO_PI))
    for k in range(k0, k1 + 1):
        shift = k * TWO_PI
        cast_block(r0, r1, first_at_least(keys, lo + shift), last_at_most(keys, hi + shift),
                   s, kind, o, rot, near, dirs, out, shapes, polys)


@entry
def scan(shapes, polys, body_pos, body_quat, sensor_body, mount, skip_link, grid, work, out):
    """
    Cast one sensor's rays and write its readings.

    Args:
        shapes, polys: the collision world (arrays.Shapes, arrays.Polytopes).
        body_pos, body_quat: (n_body, 3), (n_body, 4) the bodies' poses (State), world.
        sensor_body: the body the sensor is fixed to, -1 for the world.
        mount: (7,) the sensor frame in that body's frame: position from its centre of mass
            (m) and orientation (wxyz); in the world for body -1.
        skip_link: shapes of this link (Shapes.link) are not seen, -1 for none.
        grid: arrays.RayGrid of the sensor.
        work: arrays.RayWork (work.sensor receives the sensor frame's world pose).
        out: (n_row, n_col) float64 readings, m: a lidar's ray length, a camera's depth along
            the sensor's x axis; +inf for nothing up to the range max, -inf for a hit nearer
            than the range min (REP 117).

    Returns:
        Number of readings within range.
    """
    # 1. the sensor frame in the world
    p_mount = (mount[0], mount[1], mount[2])
    q_mount = (mount[3], mount[4], mount[5], mount[6])
    if sensor_body >= 0:
        q_body = read4(body_quat, sensor_body)
        origin = vadd(read3(body_pos, sensor_body), mat_vec(quat_to_mat(q_body), p_mount))
        q_sensor = quat_mul(q_body, q_mount)
    else:
        origin = p_mount
        q_sensor = q_mount
    frame = quat_to_mat(q_sensor)
    for i in range(3):
        work.sensor[i] = origin[i]
    for i in range(4):
        work.sensor[3 + i] = q_sensor[i]
    # 2. the shapes in the world
    place_shapes(shapes, body_pos, body_quat, work)
    dirs = grid.dirs
    n_row = dirs.shape[0]
    n_col = dirs.shape[1]
    for r in range(n_row):
        for c in range(n_col):
            out[r, c] = np.inf
    # 3. planes, every ray
    wpos = work.wpos
    wrot = work.wrot
    for k in range(shapes.planes.shape[0]):
        p = shapes.planes[k]
        if shapes.link[p] == skip_link:
            continue
        n_world = (wrot[p, 0, 2], wrot[p, 1, 2], wrot[p, 2, 2])
        height = dot3(n_world, vsub(origin, read3(wpos, p)))
        if height < 0.0:
            continue  # below it: inside its half space
        n = mat_t_vec(frame, n_world)
        for r in range(n_row):
            for c in range(n_col):
                toward = n[0] * dirs[r, c, 0] + n[1] * dirs[r, c, 1] + n[2] * dirs[r, c, 2]
                if toward < 0.0:
                    t = height / -toward
                    if t < out[r, c] and t <= dirs[r, c, 3]:
                        out[r, c] = t
    # 4. the other shapes' bounding spheres, in the sensor frame, nearest first
    kind = shapes.kind
    max_ray = grid.param[G_MAX_RAY]
    count = 0
    for s in range(kind.shape[0]):
        if kind[s] == PLANE or shapes.link[s] == skip_link:
            continue
        rot = read_mat(wrot, s)
        c_world = vadd(read3(wpos, s), mat_vec(rot, read3(shapes.aabb_center, s)))
        c = mat_t_vec(frame, vsub(c_world, origin))
        h = read3(shapes.aabb_half, s)
        radius = np.sqrt(dot3(h, h)) * (1.0 + GROW) + 1e-12
        near = np.sqrt(dot3(c, c)) - radius
        if near > max_ray:
            continue
        for i in range(3):
            work.center[s, i] = c[i]
        work.radius[s] = radius
        work.near[s] = near
        work.order[count] = s
        count += 1
    sort_by_key(work.order, work.near, count)
    # 5. each shape's footprint of rays, in the shape's frame
    for k in range(count):
        s = work.order[k]
        world_rot = read_mat(wrot, s)
        rot = mat_t_mat(frame, world_rot)       # the shape's axes in the sensor frame
        o = mat_t_vec(world_rot, vsub(origin, read3(wpos, s)))
        cover_shape(s, kind[s], o, rot, read3(work.center, s), work.radius[s], work.near[s],
                    grid, out, shapes, polys)
    # 6. readings: depth along x for a camera, the range limits
    camera = grid.param[G_KIND] == CAMERA
    low = grid.param[G_RANGE_MIN]
    high = grid.param[G_RANGE_MAX]
    hits = 0
    for r in range(n_row):
        for c in range(n_col):
            t = out[r, c]
            if t == np.inf:
                continue
            value = t * dirs[r, c, 0] if camera else t
            if value < low:
                out[r, c] = -np.inf
            elif value > high:
                out[r, c] = np.inf
            else:
                out[r, c] = value
                hits += 1
    return hits


# --- any rays: a bounding volume hierarchy --------------------------------------------------


@jit
def build_hierarchy(work, count):
    """
    Build the hierarchy over the boxes of work.order[:count]; return its number of nodes.

    Top down: a node's shapes are split at the median of their box centres along the axis
    where the centres spread most (quickselect), until LEAF_SIZE shapes or one centre remain.
    """
    box = work.box
    order = work.order
    node_box = work.node_box
    child = work.node_child
    first = work.node_first
    number = work.node_count
    pending = work.stack
    first[0] = 0
    number[0] = count
    nodes = 1
    top = 0
    pending[0] = 0
    top = 1
    while top > 0:
        top -= 1
        i = pending[top]
        a = first[i]
        m = number[i]
        lo = (np.inf, np.inf, np.inf)
        hi = (-np.inf, -np.inf, -np.inf)
        c_lo = (np.inf, np.inf, np.inf)
        c_hi = (-np.inf, -np.inf, -np.inf)
        for k in range(a, a + m):
            s = order[k]
            lo = (min(lo[0], box[s, 0]), min(lo[1], box[s, 1]), min(lo[2], box[s, 2]))
            hi = (max(hi[0], box[s, 3]), max(hi[1], box[s, 4]), max(hi[2], box[s, 5]))
            mid = (box[s, 0] + box[s, 3], box[s, 1] + box[s, 4], box[s, 2] + box[s, 5])
            c_lo = (min(c_lo[0], mid[0]), min(c_lo[1], mid[1]), min(c_lo[2], mid[2]))
            c_hi = (max(c_hi[0], mid[0]), max(c_hi[1], mid[1]), max(c_hi[2], mid[2]))
        for j in range(3):
            node_box[i, j] = lo[j]
            node_box[i, 3 + j] = hi[j]
        spread = (c_hi[0] - c_lo[0], c_hi[1] - c_lo[1], c_hi[2] - c_lo[2])
        axis = 0
        if spread[1] > spread[axis]:
            axis = 1
        if spread[2] > spread[axis]:
            axis = 2
        if m <= LEAF_SIZE or spread[axis] <= 0.0:
            child[i] = -1
            continue
        half = m // 2
        select(order, box, axis, a, a + m - 1, a + half)
        child[i] = nodes
        first[nodes] = a
        number[nodes] = half
        first[nodes + 1] = a + half
        number[nodes + 1] = m - half
        pending[top] = nodes
        pending[top + 1] = nodes + 1
        top += 2
        nodes += 2
    return nodes


@jit
def select(order, box, axis, lo, hi, nth):
    """Quickselect: order[lo..hi] with order[nth] at its place by box centre along axis."""
    while hi > lo:
        pivot = box[order[(lo + hi) // 2], axis] + box[order[(lo + hi) // 2], 3 + axis]
        i = lo
        j = hi
        while i <= j:
            while box[order[i], axis] + box[order[i], 3 + axis] < pivot:
                i += 1
            while box[order[j], axis] + box[order[j], 3 + axis] > pivot:
                j -= 1
            if i <= j:
                order[i], order[j] = order[j], order[i]
                i += 1
                j -= 1
        if nth <= j:
            hi = j
        elif nth >= i:
            lo = i
        else:
            return


@jit_inline
def box_entry(node_box, i, o, inv, t_max):
    """Return the t at which the ray (o, 1/d) enters node i's box, inf when not within t_max."""
    t0 = (node_box[i, 0] - o[0]) * inv[0]
    t1 = (node_box[i, 3] - o[0]) * inv[0]
    near = min(t0, t1)
    far = max(t0, t1)
    t0 = (node_box[i, 1] - o[1]) * inv[1]
    t1 = (node_box[i, 4] - o[1]) * inv[1]
    near = max(near, min(t0, t1))
    far = min(far, max(t0, t1))
    t0 = (node_box[i, 2] - o[2]) * inv[2]
    t1 = (node_box[i, 5] - o[2]) * inv[2]
    near = max(near, min(t0, t1))
    far = min(far, max(t0, t1))
    if near > far or far < 0.0 or near > t_max:
        return np.inf
    return near


@jit_inline
def inverse(x):
    """Return 1 / x, with a huge finite value for 0 (so 0 * it is 0, never nan)."""
    if x == 0.0:
        return 1e300
    return 1.0 / x


@entry
def cast(shapes, polys, body_pos, body_quat, skip_link, origins, directions, lengths, work,
         out, out_shape):
    """
    Cast any rays against the collision world.

    Args:
        shapes, polys, body_pos, body_quat, skip_link, work: as for :func:`scan`.
        origins: (n, 3) ray origins, world, m.
        directions: (n, 3) ray directions (of any non-zero length), world.
        lengths: (n,) the longest hit each ray reports, m (inf: any).
        out: (n,) distance to the nearest hit, m; inf for none within its length.
        out_shape: (n,) int64 the shape hit (Shapes row), -1 for none.

    Returns:
        Number of rays that hit.
    """
    place_shapes(shapes, body_pos, body_quat, work)
    kind = shapes.kind
    count = 0
    for s in range(kind.shape[0]):
        if kind[s] != PLANE and shapes.link[s] != skip_link:
            work.order[count] = s
            count += 1
    nodes = 0
    if count > 0:
        nodes = build_hierarchy(work, count)
    wpos = work.wpos
    wrot = work.wrot
    node_box = work.node_box
    child = work.node_child
    stack = work.stack
    stack_t = work.stack_t
    hits = 0
    for i in range(origins.shape[0]):
        o = read3(origins, i)
        d = read3(directions, i)
        d = vscale(d, 1.0 / np.sqrt(dot3(d, d)))
        best = lengths[i]
        hit = -1
        for k in range(shapes.planes.shape[0]):
            p = shapes.planes[k]
            if shapes.link[p] == skip_link:
                continue
            n = (wrot[p, 0, 2], wrot[p, 1, 2], wrot[p, 2, 2])
            height = dot3(n, vsub(o, read3(wpos, p)))
            toward = dot3(n, d)
            if height >= 0.0 and toward < 0.0 and height / -toward <= best:
                best = height / -toward
                hit = p
        if nodes > 0:
            inv = (inverse(d[0]), inverse(d[1]), inverse(d[2]))
            top = 0
            t_root = box_entry(node_box, 0, o, inv, best)
            if t_root < np.inf:
                stack[0] = 0
                stack_t[0] = t_root
                top = 1
            while top > 0:
                top -= 1
                if stack_t[top] > best:
                    continue   # beyond the hit found since it was pushed
                node = stack[top]
                left = child[node]
                if left < 0:
                    a = work.node_first[node]
                    for j in range(a, a + work.node_count[node]):
                        s = work.order[j]
                        rot = read_mat(wrot, s)
                        x = vsub(o, read3(wpos, s))
                        t = ray_shape(s, kind[s], mat_t_vec(rot, x), mat_t_vec(rot, d), shapes,
                                      polys, best)
                        if t <= best:
                            best = t
                            hit = s
                    continue
                t_left = box_entry(node_box, left, o, inv, best)
                t_right = box_entry(node_box, left + 1, o, inv, best)
                # the nearer child on top, so it is walked first
                near_child, t_near, far_child, t_far = left, t_left, left + 1, t_right
                if t_right < t_left:
                    near_child, t_near, far_child, t_far = left + 1, t_right, left, t_left
                if t_far < np.inf:
                    stack[top] = far_child
                    stack_t[top] = t_far
                    top += 1
                if t_near < np.inf:
                    stack[top] = near_child
                    stack_t[top] = t_near
                    top += 1
        if hit >= 0:
            out[i] = best
            hits += 1
        else:
            out[i] = np.inf
        out_shape[i] = hit
    return hits
