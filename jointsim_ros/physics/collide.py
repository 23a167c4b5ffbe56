"""
Narrow phase of shape pairs: contact points of spheres, capsules and convex polytopes.

``collide_shapes`` writes up to MAX_PAIR_POINTS points of two shapes, each with the world
position midway between the two surfaces, the unit normal n from shape B towards shape A
(moving A along +n separates them) and the depth (> 0 overlapping, < 0 a gap); points with a
gap of ``margin`` or more are left out.  Boxes, cylinders (their prisms, description/convex.py)
and convex hulls are polytopes; spheres and capsules are a core point or segment with a radius.

- Sphere and capsule pairs: closest points of the core segments (Ericson, Real-Time Collision
  Detection, 5.1.9); (nearly) parallel overlapping capsules give the two ends of their
  overlap.
- Sphere or capsule against a polytope: the exact distance from the core to the polytope when
  the core is outside it (closest points of the point/segment to the faces and edges), the
  face of least penetration when the core is inside.  A capsule over a face (the closest
  points' normal is the face's) gives the ends of its segment clipped to the face's side
  planes.
- Two polytopes: the separating-axis test over the face normals of both and the edge pairs
  that form a face of the Minkowski difference (Gregorius, "The Separating Axis Test between
  Convex Polyhedra", GDC 2013).  A face axis clips the incident face against the side planes
  of the reference face (Sutherland-Hodgman) and keeps at most 4 points (the deepest, the
  farthest from it, then the largest areas); an edge axis gives the midpoint of the closest
  points of the two edges.  As in Box2D, a face axis wins unless an edge axis separates more
  by FACE_PREFERENCE times the smaller polytope's size, and A's face over B's by the same
  margin, so a resting stack keeps its face contacts from step to step.

Vectors are 3-tuples and rotations 3-tuples of rows (columns = the shape's axes), as in
``math3d``.  The polytope work runs in one polytope's frame; results go to the world at the
end.
"""
import numpy as np

from .math3d import (cross, dot3, entry, jit, mat_t_vec, mat_vec, read3, vadd, vneg, vscale, vsub,
                     write3)

#: Shape kinds (contacts.py uses the same codes).
SPHERE, CAPSULE, BOX, CYLINDER, CONVEX = range(5)
MAX_PAIR_POINTS = 4
#: Edge axes must beat face axes, and B's faces A's, by this fraction of the smaller polytope's
#: half size (Box2D's 0.1 linear slop, relative).
FACE_PREFERENCE = 1e-3
#: Capsules whose axes make a sine below this are parallel (two points).
PARALLEL_SINE = 1e-3
#: Edge pairs whose directions make a sine below this give no edge axis (the face axes cover
#: them; Gregorius uses 0.005 in single precision).
EDGE_PARALLEL_SINE = 1e-6
#: A capsule lies on a face when its closest-point normal is within this cosine of the face's.
FACE_COSINE = 1.0 - 1e-6


def scratch_arrays(max_face_vertices=32):
    """
    Return the scratch ``collide_shapes`` needs: the two polygon buffers of face clipping.

    Args:
        max_face_vertices: the most vertices a face of any polytope has; clipping a face of n
            vertices against one of m gives at most n + m points.

    Returns:
        (2, 2 * max_face_vertices, 3) float64 array (at least (2, 16, 3)).
    """
    return np.zeros((2, max(16, 2 * max_face_vertices), 3))


# --- small helpers --------------------------------------------------------------------------


@jit
def mat_t_mat(a, b):
    """Return a^T b."""
    c0 = mat_t_vec(a, (b[0][0], b[1][0], b[2][0]))
    c1 = mat_t_vec(a, (b[0][1], b[1][1], b[2][1]))
    c2 = mat_t_vec(a, (b[0][2], b[1][2], b[2][2]))
    return ((c0[0], c1[0], c2[0]), (c0[1], c1[1], c2[1]), (c0[2], c1[2], c2[2]))


@jit
def transpose(m):
    """Return m^T."""
    return ((m[0][0], m[1][0], m[2][0]), (m[0][1], m[1][1], m[2][1]),
            (m[0][2], m[1][2], m[2][2]))


@jit
def clamp01(x):
    """Return x clamped to [0, 1]."""
    return min(max(x, 0.0), 1.0)


@jit
def any_perpendicular(v):
    """Return a unit vector perpendicular to v, or +z when v is zero."""
    if dot3(v, v) == 0.0:
        return (0.0, 0.0, 1.0)
    if abs(v[0]) < abs(v[1]):
        t = (0.0, v[2], -v[1]) if abs(v[0]) < abs(v[2]) else (v[1], -v[0], 0.0)
    else:
        t = (-v[2], 0.0, v[0]) if abs(v[1]) < abs(v[2]) else (v[1], -v[0], 0.0)
    return vscale(t, 1.0 / np.sqrt(dot3(t, t)))


@jit
def closest_on_segment(x, a, b):
    """Return the point of segment ab closest to x."""
    d = vsub(b, a)
    dd = dot3(d, d)
    if dd == 0.0:
        return a
    return vadd(a, vscale(d, clamp01(dot3(vsub(x, a), d) / dd)))


@jit
def closest_segments(p1, q1, p2, q2):
    """
    Return the closest points (c1, c2) of segments p1q1 and p2q2.

    Ericson, Real-Time Collision Detection, 5.1.9 (parallel segments: s = 0).
    """
    d1 = vsub(q1, p1)
    d2 = vsub(q2, p2)
    r = vsub(p1, p2)
    a = dot3(d1, d1)
    e = dot3(d2, d2)
    f = dot3(d2, r)
    if a == 0.0 and e == 0.0:
        return p1, p2
    if a == 0.0:
        s = 0.0
        t = clamp01(f / e)
    else:
        c = dot3(d1, r)
        if e == 0.0:
            t = 0.0
            s = clamp01(-c / a)
        else:
            b = dot3(d1, d2)
            denom = a * e - b * b
            s = clamp01((b * f - c * e) / denom) if denom > 1e-14 * a * e else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t = 0.0
                s = clamp01(-c / a)
            elif t > 1.0:
                t = 1.0
                s = clamp01((b - c) / a)
    return vadd(p1, vscale(d1, s)), vadd(p2, vscale(d2, t))


@jit
def put_point(out_pos, out_normal, out_depth, i, pos, normal, depth):
    """Store contact point i."""
    write3(out_pos, i, pos)
    write3(out_normal, i, normal)
    out_depth[i] = depth


@jit
def to_world(count, pos, rot, out_pos, out_normal, flip):
    """Take the first count points from the frame (pos, rot) to the world; flip negates n."""
    s = -1.0 if flip else 1.0
    for i in range(count):
        write3(out_pos, i, vadd(pos, mat_vec(rot, read3(out_pos, i))))
        write3(out_normal, i, vscale(mat_vec(rot, read3(out_normal, i)), s))


@jit
def core_segment(kind, pos, rot, size):
    """Return the ends of a sphere's (both its centre) or a capsule's core segment."""
    if kind == CAPSULE:
        axis = vscale((rot[0][2], rot[1][2], rot[2][2]), size[1])
        return vsub(pos, axis), vadd(pos, axis)
    return pos, pos


# --- spheres and capsules -------------------------------------------------------------------


@jit
def round_point(ca, ra, cb, rb, fallback, margin, out_pos, out_normal, out_depth, i):
    """
    Store the point of two balls (centres ca, cb, radii ra, rb) as point i if within margin.

    Args:
        fallback: unit normal for coincident centres.

    Returns:
        1 if stored, else 0.
    """
    d = vsub(ca, cb)
    dist = np.sqrt(dot3(d, d))
    depth = ra + rb - dist
    if depth <= -margin:
        return 0
    n = vscale(d, 1.0 / dist) if dist > 0.0 else fallback
    # midway between ca - ra n (on A) and cb + rb n (on B)
    pos = vscale(vadd(vsub(ca, vscale(n, ra)), vadd(cb, vscale(n, rb))), 0.5)
    put_point(out_pos, out_normal, out_depth, i, pos, n, depth)
    return 1


@jit
def round_round(a0, a1, ra, b0, b1, rb, margin, out_pos, out_normal, out_depth):
    """
    Points of two spheres or capsules given by core segments a0a1, b0b1 and radii ra, rb.

    Returns:
        Number of points (0 to 2), world frame, normal from B towards A.
    """
    da = vsub(a1, a0)
    db = vsub(b1, b0)
    laa = dot3(da, da)
    lbb = dot3(db, db)
    fallback = any_perpendicular(da if laa > 0.0 else db)
    if laa > 0.0 and lbb > 0.0:
        c = cross(da, db)
        if dot3(c, c) <= PARALLEL_SINE * PARALLEL_SINE * laa * lbb:
            # B's ends projected on A's axis; the overlap's ends each give a point
            u0 = dot3(vsub(b0, a0), da) / laa
            u1 = dot3(vsub(b1, a0), da) / laa
            lo = max(0.0, min(u0, u1))
            hi = min(1.0, max(u0, u1))
            if hi - lo > 1e-6:
                count = 0
                for u in (lo, hi):
                    ca = vadd(a0, vscale(da, u))
                    cb = closest_on_segment(ca, b0, b1)
                    count += round_point(ca, ra, cb, rb, fallback, margin, out_pos, out_normal,
                                         out_depth, count)
                return count
    ca, cb = closest_segments(a0, a1, b0, b1)
    return round_point(ca, ra, cb, rb, fallback, margin, out_pos, out_normal, out_depth, 0)


# --- spheres and capsules against polytopes -------------------------------------------------


@jit
def point_polytope(x, vs, fs, fe, verts, face_normal, face_offset, face_vert_start, face_verts):
    """
    Signed distance from x to a polytope, its closest surface point and the normal there.

    Outside: the exact distance, closest point and (x - q) / |x - q|.  Inside: the face of least
    penetration, x projected on it and its normal (the distance is then <= 0).

    Args:
        x: point in the polytope's frame.
        vs: the polytope's first vertex row; fs, fe: its face rows [fs, fe).

    Returns:
        (distance, closest point, unit normal), polytope frame.
    """
    best_s = -np.inf
    best_f = fs
    for f in range(fs, fe):
        s = dot3(read3(face_normal, f), x) - face_offset[f]
        if s > best_s:
            best_s = s
            best_f = f
    n_best = read3(face_normal, best_f)
    if best_s <= 0.0:
        return best_s, vsub(x, vscale(n_best, best_s)), n_best
    # outside: the closest point lies on a face x sees, inside it or on its boundary
    best_d2 = np.inf
    best_q = x
    for f in range(fs, fe):
        n = read3(face_normal, f)
        s = dot3(n, x) - face_offset[f]
        if s <= 0.0:
            continue
        y = vsub(x, vscale(n, s))
        inside = True
        k0 = face_vert_start[f]
        k1 = face_vert_start[f + 1]
        a = read3(verts, vs + face_verts[k1 - 1])
        for k in range(k0, k1):
            b = read3(verts, vs + face_verts[k])
            if dot3(cross(vsub(b, a), n), vsub(y, a)) > 0.0:
                inside = False
            q = closest_on_segment(x, a, b)
            d = vsub(x, q)
            d2 = dot3(d, d)
            if d2 < best_d2:
                best_d2 = d2
                best_q = q
            a = b
        if inside:
            return s, y, n
    dist = np.sqrt(best_d2)
    if dist <= 1e-12 * (1.0 + abs(best_s)):
        return best_s, vsub(x, vscale(n_best, best_s)), n_best
    return dist, best_q, vscale(vsub(x, best_q), 1.0 / dist)


@jit
def segment_face_points(e0, e1, r, f, vs, verts, face_normal, face_offset, face_vert_start,
                        face_verts, margin, out_pos, out_normal, out_depth):
    """
    Points of a capsule core e0e1 (radius r) on face f: its ends clipped to the side planes.

    Returns:
        Number of points stored (0 to 2, depth along the face normal), or -1 when no part of
        the segment lies over the face.
    """
    n = read3(face_normal, f)
    off = face_offset[f]
    d = vsub(e1, e0)
    t0 = 0.0
    t1 = 1.0
    k0 = face_vert_start[f]
    k1 = face_vert_start[f + 1]
    a = read3(verts, vs + face_verts[k1 - 1])
    for k in range(k0, k1):
        b = read3(verts, vs + face_verts[k])
        # side plane m . x <= m . a, m = (b - a) x n points out of the loop
        m = cross(vsub(b, a), n)
        den = dot3(m, d)
        num = dot3(m, vsub(a, e0))
        if den == 0.0:
            if num < 0.0:
                return -1
        elif den > 0.0:
            t1 = min(t1, num / den)
        else:
            t0 = max(t0, num / den)
        a = b
    if t0 > t1:
        return -1
    count = 0
    for t in (t0, t1):
        x = vadd(e0, vscale(d, t))
        s = dot3(n, x) - off
        if r - s > -margin:
            put_point(out_pos, out_normal, out_depth, count, vsub(x, vscale(n, 0.5 * (r + s))),
                      n, r - s)
            count += 1
        if t1 - t0 <= 1e-9:
            break
    return count


@jit
def round_polytope(e0, e1, r, vs, ve, fs, fe, es, ee, verts, face_normal, face_offset,
                   face_vert_start, face_verts, edges, margin, out_pos, out_normal, out_depth):
    """
    Points of a sphere or capsule (core e0e1 and radius r, polytope frame) and a polytope.

    Args:
        vs, ve; fs, fe; es, ee: the polytope's vertex, face and edge rows.

    Returns:
        Number of points (0 to 2), polytope frame, normal from the polytope towards the core.
    """
    d = vsub(e1, e0)
    if dot3(d, d) == 0.0:
        s, q, n = point_polytope(e0, vs, fs, fe, verts, face_normal, face_offset,
                                 face_vert_start, face_verts)
        if r - s <= -margin:
            return 0
        put_point(out_pos, out_normal, out_depth, 0, vsub(e0, vscale(n, 0.5 * (r + s))), n,
                  r - s)
        return 1
    # Cyrus-Beck: the part [t_in, t_out] of the segment inside the polytope
    t_in = 0.0
    t_out = 1.0
    best_s = -np.inf
    best_f = fs
    for f in range(fs, fe):
        n = read3(face_normal, f)
        s0 = dot3(n, e0) - face_offset[f]
        s1 = dot3(n, e1) - face_offset[f]
        if s0 > 0.0 or s1 > 0.0:
            if s0 > 0.0 and s1 > 0.0:
                t_out = -1.0
            elif s0 > 0.0:
                t_in = max(t_in, s0 / (s0 - s1))
            else:
                t_out = min(t_out, s0 / (s0 - s1))
        s = min(s0, s1)
        if s > best_s:
            best_s = s
            best_f = f
    if t_in <= t_out:
        # the core crosses the polytope: the face of least penetration
        count = segment_face_points(e0, e1, r, best_f, vs, verts, face_normal, face_offset,
                                    face_vert_start, face_verts, margin, out_pos, out_normal,
                                    out_depth)
        if count > 0:
            return count
        n = read3(face_normal, best_f)
        x = e0 if dot3(n, e0) <= dot3(n, e1) else e1
        put_point(out_pos, out_normal, out_depth, 0, vsub(x, vscale(n, 0.5 * (r + best_s))),
                  n, r - best_s)
        return 1
    # outside: the closest pair has an end of the segment or an edge of the polytope
    dist, q, n = point_polytope(e0, vs, fs, fe, verts, face_normal, face_offset,
                                face_vert_start, face_verts)
    c = e0
    dist1, q1, n1 = point_polytope(e1, vs, fs, fe, verts, face_normal, face_offset,
                                   face_vert_start, face_verts)
    if dist1 < dist:
        dist, q, n, c = dist1, q1, n1, e1
    d2_best = dist * dist
    edge_best = False
    for e in range(es, ee):
        ce, qe = closest_segments(e0, e1, read3(verts, vs + edges[e, 0]),
                                  read3(verts, vs + edges[e, 1]))
        w = vsub(ce, qe)
        d2 = dot3(w, w)
        if d2 < d2_best:
            d2_best = d2
            c = ce
            q = qe
            edge_best = True
    if edge_best and d2_best > 0.0:
        dist = np.sqrt(d2_best)
        n = vscale(vsub(c, q), 1.0 / dist)
    if r - dist <= -margin:
        return 0
    # lying over a face: both clipped ends
    best_cos = -2.0
    best_f = fs
    for f in range(fs, fe):
        cos = dot3(read3(face_normal, f), n)
        if cos > best_cos:
            best_cos = cos
            best_f = f
    if best_cos >= FACE_COSINE:
        count = segment_face_points(e0, e1, r, best_f, vs, verts, face_normal, face_offset,
                                    face_vert_start, face_verts, margin, out_pos, out_normal,
                                    out_depth)
        if count > 0:
            return count
    put_point(out_pos, out_normal, out_depth, 0, vsub(c, vscale(n, 0.5 * (r + dist))), n,
              r - dist)
    return 1


# --- polytope pairs -------------------------------------------------------------------------


@jit
def face_query(fs, fe, vs, ve, rot, pos, verts, face_normal, face_offset):
    """
    Largest separation along the face normals [fs, fe) of P from polytope Q (rows [vs, ve)).

    Args:
        rot, pos: Q's frame in P's (x_P = rot x_Q + pos).

    Returns:
        (separation, face row).
    """
    best = -np.inf
    best_f = fs
    for f in range(fs, fe):
        n = read3(face_normal, f)
        nq = mat_t_vec(rot, n)
        lo = np.inf
        for v in range(vs, ve):
            lo = min(lo, dot3(nq, read3(verts, v)))
        s = lo + dot3(n, pos) - face_offset[f]
        if s > best:
            best = s
            best_f = f
    return best, best_f


@jit
def edge_query(vs_a, ve_a, fs_a, es_a, ee_a, vs_b, fs_b, es_b, ee_b, rot, pos, verts,
               face_normal, edges):
    """
    Largest separation of B from A along the cross products of edge pairs, A's frame.

    Only pairs whose Gauss-map arcs cross (a face of the Minkowski difference) give an axis:
    arcs (a, b) of A's edge and (-c, -d) of B's cross when (Gregorius, GDC 2013)
    (c . b x a)(d . b x a) < 0, (a . d x c)(b . d x c) < 0 and (c . b x a)(b . d x c) > 0.

    Args:
        rot, pos: B's frame in A's.

    Returns:
        (separation, A's edge row, B's edge row, unit axis out of A), or -inf separation when
        no pair qualifies.
    """
    centre = (0.0, 0.0, 0.0)
    for v in range(vs_a, ve_a):
        centre = vadd(centre, read3(verts, v))
    centre = vscale(centre, 1.0 / max(ve_a - vs_a, 1))
    best = -np.inf
    best_ea = es_a
    best_eb = es_b
    best_axis = (0.0, 0.0, 1.0)
    for eb in range(es_b, ee_b):
        c = vneg(mat_vec(rot, read3(face_normal, fs_b + edges[eb, 2])))
        d = vneg(mat_vec(rot, read3(face_normal, fs_b + edges[eb, 3])))
        d_x_c = cross(d, c)
        qb0 = vadd(mat_vec(rot, read3(verts, vs_b + edges[eb, 0])), pos)
        qb1 = vadd(mat_vec(rot, read3(verts, vs_b + edges[eb, 1])), pos)
        dir_b = vsub(qb1, qb0)
        lbb = dot3(dir_b, dir_b)
        for ea in range(es_a, ee_a):
            a = read3(face_normal, fs_a + edges[ea, 2])
            b = read3(face_normal, fs_a + edges[ea, 3])
            b_x_a = cross(b, a)
            cba = dot3(c, b_x_a)
            dba = dot3(d, b_x_a)
            adc = dot3(a, d_x_c)
            bdc = dot3(b, d_x_c)
            if not (cba * dba < 0.0 and adc * bdc < 0.0 and cba * bdc > 0.0):
                continue
            pa0 = read3(verts, vs_a + edges[ea, 0])
            dir_a = vsub(read3(verts, vs_a + edges[ea, 1]), pa0)
            axis = cross(dir_a, dir_b)
            length2 = dot3(axis, axis)
            if length2 <= EDGE_PARALLEL_SINE * EDGE_PARALLEL_SINE * dot3(dir_a, dir_a) * lbb:
                continue
            axis = vscale(axis, 1.0 / np.sqrt(length2))
            if dot3(axis, vsub(pa0, centre)) < 0.0:
                axis = vneg(axis)
            s = dot3(axis, vsub(qb0, pa0))
            if s > best:
                best = s
                best_ea = ea
                best_eb = eb
                best_axis = axis
    return best, best_ea, best_eb, best_axis


@jit
def half_size(vs, ve, verts):
    """Return half the largest side of a polytope's bounding box."""
    lo = (np.inf, np.inf, np.inf)
    hi = (-np.inf, -np.inf, -np.inf)
    for v in range(vs, ve):
        x = read3(verts, v)
        lo = (min(lo[0], x[0]), min(lo[1], x[1]), min(lo[2], x[2]))
        hi = (max(hi[0], x[0]), max(hi[1], x[1]), max(hi[2], x[2]))
    return 0.5 * max(hi[0] - lo[0], max(hi[1] - lo[1], hi[2] - lo[2]))


@jit
def clip_polygon(src, m, dst, side, off):
    """
    Sutherland-Hodgman: the part of polygon src[:m] with side . x <= off, into dst.

    Returns:
        Number of vertices in dst (points past dst's rows are dropped).
    """
    if m == 0:
        return 0
    cap = dst.shape[0]
    count = 0
    a = read3(src, m - 1)
    da = dot3(side, a) - off
    for k in range(m):
        b = read3(src, k)
        db = dot3(side, b) - off
        if (da <= 0.0) != (db <= 0.0) and count < cap:
            write3(dst, count, vadd(a, vscale(vsub(b, a), da / (da - db))))
            count += 1
        if db <= 0.0 and count < cap:
            write3(dst, count, b)
            count += 1
        a = b
        da = db
    return count


@jit
def signed_area(p, q, x, n):
    """Return twice the area of triangle pqx about n (> 0 counter-clockwise)."""
    return dot3(cross(vsub(q, p), vsub(x, p)), n)


@jit
def reduce_points(pts, m, n, off, sign, out_pos, out_normal, out_depth):
    """
    Store at most 4 of the points pts[:m] (below the plane n . x = off) as contact points.

    With more than 4: the deepest, the farthest from it, the one making the largest triangle
    with those two, and the one adding the largest area outside that triangle.

    Args:
        sign: +1 or -1, the contact normal is sign n.

    Returns:
        Number of points stored.
    """
    normal = vscale(n, sign)
    if m <= MAX_PAIR_POINTS:
        for k in range(m):
            x = read3(pts, k)
            s = dot3(n, x) - off
            put_point(out_pos, out_normal, out_depth, k, vsub(x, vscale(n, 0.5 * s)), normal,
                      -s)
        return m
    i1 = 0
    lo = np.inf
    for k in range(m):
        s = dot3(n, read3(pts, k))
        if s < lo:
            lo = s
            i1 = k
    p1 = read3(pts, i1)
    i2 = i1
    far = -1.0
    for k in range(m):
        w = vsub(read3(pts, k), p1)
        if dot3(w, w) > far:
            far = dot3(w, w)
            i2 = k
    p2 = read3(pts, i2)
    i3 = i1
    area3 = 0.0
    for k in range(m):
        a = signed_area(p1, p2, read3(pts, k), n)
        if abs(a) > abs(area3):
            area3 = a
            i3 = k
    chosen = (i1, i2, i3, -1)
    if area3 != 0.0:
        # the triangle counter-clockwise about n; the fourth point adds the most area outside
        p3 = read3(pts, i3)
        if area3 < 0.0:
            p2, p3 = p3, p2
        best = 0.0
        for k in range(m):
            x = read3(pts, k)
            added = (max(0.0, -signed_area(p1, p2, x, n)) + max(0.0, -signed_area(p2, p3, x, n))
                     + max(0.0, -signed_area(p3, p1, x, n)))
            if added > best:
                best = added
                chosen = (i1, i2, i3, k)
    count = 0
    for i in chosen:
        if i < 0 or (count == 2 and area3 == 0.0):
            break
        x = read3(pts, i)
        s = dot3(n, x) - off
        put_point(out_pos, out_normal, out_depth, count, vsub(x, vscale(n, 0.5 * s)), normal, -s)
        count += 1
    return count


@jit
def face_contact(ref_f, vs_r, vs_i, ve_i, fs_i, fe_i, rot, pos, verts, face_normal,
                 face_offset, face_vert_start, face_verts, margin, sign, out_pos, out_normal,
                 out_depth, scratch):
    """
    Points of a face axis: the incident face clipped against reference face ref_f.

    The incident face is the face most anti-parallel to the reference normal among those
    through the incident polytope's deepest vertex (its support point along -n).

    Args:
        vs_r: the reference polytope's first vertex row.
        vs_i, ve_i; fs_i, fe_i: the incident polytope's vertex and face rows.
        rot, pos: the incident polytope's frame in the reference polytope's.
        sign: +1 when the reference polytope is B (the normal is its face normal), -1 when A.
        scratch: (2, k, 3) clip buffers.

    Returns:
        Number of points (0 to 4), reference frame.
    """
    n = read3(face_normal, ref_f)
    off = face_offset[ref_f]
    n_i = mat_t_vec(rot, n)
    deep = vs_i
    lo = np.inf
    for v in range(vs_i, ve_i):
        s = dot3(n_i, read3(verts, v))
        if s < lo:
            lo = s
            deep = v
    inc = fs_i
    best = np.inf
    for f in range(fs_i, fe_i):
        for k in range(face_vert_start[f], face_vert_start[f + 1]):
            if vs_i + face_verts[k] == deep:
                cos = dot3(read3(face_normal, f), n_i)
                if cos < best:
                    best = cos
                    inc = f
                break
    src = scratch[0]
    dst = scratch[1]
    m = 0
    for k in range(face_vert_start[inc], min(face_vert_start[inc + 1],
                                             face_vert_start[inc] + src.shape[0])):
        write3(src, m, vadd(mat_vec(rot, read3(verts, vs_i + face_verts[k])), pos))
        m += 1
    k0 = face_vert_start[ref_f]
    k1 = face_vert_start[ref_f + 1]
    a = read3(verts, vs_r + face_verts[k1 - 1])
    for k in range(k0, k1):
        b = read3(verts, vs_r + face_verts[k])
        side = cross(vsub(b, a), n)
        m = clip_polygon(src, m, dst, side, dot3(side, a))
        src, dst = dst, src
        a = b
    kept = 0
    for k in range(m):
        x = read3(src, k)
        if dot3(n, x) - off < margin:
            write3(src, kept, x)
            kept += 1
    if kept == 0:
        # nothing of the incident face over the reference face: its deepest vertex
        x = vadd(mat_vec(rot, read3(verts, deep)), pos)
        if dot3(n, x) - off >= margin:
            return 0
        write3(src, 0, x)
        kept = 1
    return reduce_points(src, kept, n, off, sign, out_pos, out_normal, out_depth)


@jit
def polytope_polytope(pos_a, rot_a, pa, pos_b, rot_b, pb, vert_start, verts, face_start,
                      face_normal, face_offset, face_vert_start, face_verts, edge_start, edges,
                      margin, out_pos, out_normal, out_depth, scratch):
    """
    Points of polytopes pa and pb by the separating-axis test.

    Returns:
        Number of points (0 to 4), world frame, normal from B towards A.
    """
    vs_a = vert_start[pa]
    ve_a = vert_start[pa + 1]
    vs_b = vert_start[pb]
    ve_b = vert_start[pb + 1]
    fs_a = face_start[pa]
    fe_a = face_start[pa + 1]
    fs_b = face_start[pb]
    fe_b = face_start[pb + 1]
    rot_ab = mat_t_mat(rot_a, rot_b)
    pos_ab = mat_t_vec(rot_a, vsub(pos_b, pos_a))
    rot_ba = transpose(rot_ab)
    pos_ba = mat_t_vec(rot_b, vsub(pos_a, pos_b))
    sep_a, face_a = face_query(fs_a, fe_a, vs_b, ve_b, rot_ab, pos_ab, verts, face_normal,
                               face_offset)
    if sep_a >= margin:
        return 0
    sep_b, face_b = face_query(fs_b, fe_b, vs_a, ve_a, rot_ba, pos_ba, verts, face_normal,
                               face_offset)
    if sep_b >= margin:
        return 0
    sep_e, edge_a, edge_b, axis = edge_query(
        vs_a, ve_a, fs_a, edge_start[pa], edge_start[pa + 1], vs_b, fs_b, edge_start[pb],
        edge_start[pb + 1], rot_ab, pos_ab, verts, face_normal, edges)
    if sep_e >= margin:
        return 0
    tol = FACE_PREFERENCE * min(half_size(vs_a, ve_a, verts), half_size(vs_b, ve_b, verts))
    if sep_e > max(sep_a, sep_b) + tol:
        # edge axis: one point midway between the closest points of the edges, A's frame
        ca, cb = closest_segments(
            read3(verts, vs_a + edges[edge_a, 0]), read3(verts, vs_a + edges[edge_a, 1]),
            vadd(mat_vec(rot_ab, read3(verts, vs_b + edges[edge_b, 0])), pos_ab),
            vadd(mat_vec(rot_ab, read3(verts, vs_b + edges[edge_b, 1])), pos_ab))
        put_point(out_pos, out_normal, out_depth, 0, vscale(vadd(ca, cb), 0.5), vneg(axis),
                  -sep_e)
        to_world(1, pos_a, rot_a, out_pos, out_normal, False)
        return 1
    if sep_b > sep_a + tol:
        count = face_contact(face_b, vs_b, vs_a, ve_a, fs_a, fe_a, rot_ba, pos_ba, verts,
                             face_normal, face_offset, face_vert_start, face_verts, margin,
                             1.0, out_pos, out_normal, out_depth, scratch)
        to_world(count, pos_b, rot_b, out_pos, out_normal, False)
        return count
    count = face_contact(face_a, vs_a, vs_b, ve_b, fs_b, fe_b, rot_ab, pos_ab, verts,
                         face_normal, face_offset, face_vert_start, face_verts, margin, -1.0,
                         out_pos, out_normal, out_depth, scratch)
    to_world(count, pos_a, rot_a, out_pos, out_normal, False)
    return count


# --- entry ----------------------------------------------------------------------------------


@entry
def collide_shapes(kind_a, pos_a, rot_a, size_a, poly_a, kind_b, pos_b, rot_b, size_b, poly_b,
                   polys, margin, out_pos, out_normal, out_depth, scratch):
    """
    Contact points of two shapes (no planes).

    Args:
        kind_a: SPHERE, CAPSULE, BOX, CYLINDER or CONVEX.
        pos_a: world position of shape A's origin (3-tuple), m.
        rot_a: world rotation of shape A (3-tuple of rows; columns = its axes).
        size_a: sphere (radius, 0, 0), capsule (radius, half length along z, 0), m; unused for
            polytopes.
        poly_a: row of A's polytope in polys (box, cylinder, convex), else unused.
        kind_b, pos_b, rot_b, size_b, poly_b: the same for shape B.
        polys: Polytopes (description/convex.py).
        margin: points with a gap below this are reported (speculative contacts), m.
        out_pos: (>= 4, 3) contact points midway between the surfaces, world, m.
        out_normal: (>= 4, 3) unit normals from B towards A, world.
        out_depth: (>= 4,) penetration depths (< 0: a gap), m.
        scratch: (2, k, 3) float64 clip buffers, k >= twice the most vertices of a face
            (``scratch_arrays``).

    Returns:
        Number of points written (0 to MAX_PAIR_POINTS).
    """
    round_a = kind_a == SPHERE or kind_a == CAPSULE
    round_b = kind_b == SPHERE or kind_b == CAPSULE
    if round_a and round_b:
        a0, a1 = core_segment(kind_a, pos_a, rot_a, size_a)
        b0, b1 = core_segment(kind_b, pos_b, rot_b, size_b)
        return round_round(a0, a1, size_a[0], b0, b1, size_b[0], margin, out_pos, out_normal,
                           out_depth)
    vert_start = polys.vert_start
    verts = polys.verts
    face_start = polys.face_start
    face_normal = polys.face_normal
    face_offset = polys.face_offset
    face_vert_start = polys.face_vert_start
    face_verts = polys.face_verts
    edge_start = polys.edge_start
    edges = polys.edges
    if round_a or round_b:
        # the round shape as A, in the polytope's frame
        if round_a:
            kind_r, pos_r, rot_r, size_r = kind_a, pos_a, rot_a, size_a
            pos_p, rot_p, p = pos_b, rot_b, poly_b
        else:
            kind_r, pos_r, rot_r, size_r = kind_b, pos_b, rot_b, size_b
            pos_p, rot_p, p = pos_a, rot_a, poly_a
        e0, e1 = core_segment(kind_r, pos_r, rot_r, size_r)
        count = round_polytope(
            mat_t_vec(rot_p, vsub(e0, pos_p)), mat_t_vec(rot_p, vsub(e1, pos_p)), size_r[0],
            vert_start[p], vert_start[p + 1], face_start[p], face_start[p + 1], edge_start[p],
            edge_start[p + 1], verts, face_normal, face_offset, face_vert_start, face_verts,
            edges, margin, out_pos, out_normal, out_depth)
        to_world(count, pos_p, rot_p, out_pos, out_normal, not round_a)
        return count
    return polytope_polytope(pos_a, rot_a, poly_a, pos_b, rot_b, poly_b, vert_start, verts,
                             face_start, face_normal, face_offset, face_vert_start, face_verts,
                             edge_start, edges, margin, out_pos, out_normal, out_depth, scratch)
