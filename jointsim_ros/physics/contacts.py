"""
Contacts: shapes in the world, broad phase, contact points, and their rows in the solver.

Stages of a step (``step.py`` calls them in this order):
1. ``update_shapes``: world pose and bounding box of every shape from its body's pose, and its
   reach: how far any of its points can move in this step, dt (|v|_1 + |w| r) with r the
   farthest its box reaches from the body's centre of mass.  Contacts are looked for within
   ``margin`` plus the two shapes' reaches (a speculative distance that grows with the
   motion, as Box2D v3's and PhysX's do), so a fast body meets what it will hit within the
   step while resting neighbours a hair apart are left alone.
2. ``find_pairs``: sweep and prune along x over the boxes (insertion sort of the last step's
   order, so nearly linear in the number of shapes when the scene changes slowly), then y and z
   overlap and the link-pair filter (adjacent links, self-collision settings).
3. ``find_contacts``: points of each pair (``collide.py`` for shape pairs, the plane functions
   here for the ground and other planes; a shape pair whose relative pose moved less than
   ``KEEP_DISTANCE`` and ``KEEP_ANGLE`` since its points were found keeps those points, their
   surface points carried with the two bodies and their depths measured anew, instead of
   running the narrow phase again: Bullet's and PhysX's persistent manifolds), each with
   normal n (from shape B towards shape A), depth (> 0 overlapping, < 0 a gap within the
   margin) and the surface points on both bodies.  A point takes the identity and accumulated
   impulses of the last step's point of the same shape pair within ``match_distance`` on body
   A (Bullet's persistent manifold rule), so the solver warm-starts; tangent impulses are
   carried as a world vector onto the new tangents.
4. ``prepare_contacts``: per point the normal and tangent rows of a 3-D Coulomb contact plus
   the rolling and spinning rows, J = [d, r_a x d] on A and [-d, -r_b x d] on B (linear rows)
   or [0, d] and [0, -d] (angular rows), and their effective masses k = J M^-1 J^T.
5. ``solve_contacts`` (each sweep): spinning, rolling and tangent rows, then the normal row,
   accumulated impulse >= 0:
   - compliant (``collision.contact_model: compliant``, the default): a spring k and damper c
     in the normal direction (the materials', N/m and N s/m per point), solved implicitly as a
     soft constraint (Catto, 'Soft constraints', GDC 2011; Box2D v3's soft step; ODE's
     ERP/CFM): with C = min_depth - depth (the spring's extension, < 0 when compressed),
     v_n + (beta / dt) C + gamma lambda = 0, beta = dt k / (c + dt k), gamma = 1 / (dt (c +
     dt k)), so the impulse is lambda = dt (k (depth - min_depth) - c v_n) at the end of the
     step (implicit Euler of the spring-damper).  Its effective mass 1 / (k_eff + gamma) makes
     the rows of a body on many points a regularised, positive definite system: the
     iterations converge to the one set of loads a compliant support carries, whatever the
     order of the rows and the warm start.  The push-out speed (beta / dt) |C| is capped at the
     material's ``max_push_velocity``.  A point still apart (a gap within the margin) joins the
     spring only when it reaches the surface within the step at its present velocity, with the
     damping scaled by the fraction of the step it spends in contact; otherwise it keeps the
     rigid speculative row (it may close the gap, not cross it);
   - rigid (``contact_model: rigid``): target v_n+ >= -gap / dt for a gap (speculative: it may
     close, never cross), >= 0 when touching;
   - either model, a point that approaches faster than the restitution threshold and reaches
     the surface within the step bounces rigidly: v_n+ >= -e v_0 (e the material's restitution,
     v_0 the approach speed at the start of the step, before this step's forces: an elastic
     bounce then keeps the energy symplectic Euler conserves);
   - tangents, impulse (l1, l2) scaled back onto the disc |l| <= mu l_n (a cone, not a box);
   - rolling, angular rows about t1 and t2, |l| <= mu_r l_n (mu_r in m: torque per force);
   - spinning, angular row about n, |l| <= mu_s l_n (mu_s in m).
6. ``prepare_push`` (after the positions are integrated; rigid model only, a compliant
   contact's penetration is its spring's state): penetration beyond ``slop`` is removed
   by a split impulse (``step.push_out_penetration``): pseudo-velocities solved with the same
   contact rows (``solve_contacts``) and the joints' rows, then integrated into the positions
   only, a fraction ``erp`` per step, at most ``max_correction`` per step; the real velocities
   are untouched, so no energy is added, and the push moves the whole articulation, not the
   touching body alone.
"""
import numpy as np

from . import collide
from .islands import POINTS as ISLAND_POINTS
from .math3d import (cross, dot3, jit, mat_mul, mat_t_vec, mat_vec, quat_conj, quat_mul,
                     quat_to_mat, read3, read4, read_mat, vadd, vscale, vsub, write3)

SPHERE, CAPSULE, BOX, CYLINDER, CONVEX = (collide.SPHERE, collide.CAPSULE, collide.BOX,
                                          collide.CYLINDER, collide.CONVEX)
PLANE = 5
KIND_CODES = {'sphere': SPHERE, 'capsule': CAPSULE, 'box': BOX, 'cylinder': CYLINDER,
              'convex': CONVEX, 'plane': PLANE}
#: Points one shape can make with a plane (cylinder: 4 on each rim) and with a shape.
MAX_PLANE_POINTS = 8
MAX_PAIR_POINTS = collide.MAX_PAIR_POINTS
#: A polytope's vertex whose distance to a plane, found without its world position, exceeds
#: the margin by more than this (m) is passed over; the two ways of finding it differ by
#: rounding only (about 1e-16 times the coordinates), so the kept points are the same.
PLANE_SCREEN = 1e-6
#: contact_param entries (description.config.CollisionSettings; engine.Engine._contact_param).
(P_MARGIN, P_RESTITUTION_SPEED, P_SLOP, P_ERP, P_MAX_CORRECTION, P_MATCH_DISTANCE,
 P_COMPLIANT, P_DRIFT) = range(8)
N_PARAM = 8
#: Material columns (shapes and points): friction 1, restitution 1, rolling m, spinning m,
#: stiffness N/m, damping N s/m, min_depth m, max_push_velocity m/s.
(M_FRICTION, M_RESTITUTION, M_ROLLING, M_SPINNING, M_STIFFNESS, M_DAMPING, M_MIN_DEPTH,
 M_MAX_PUSH) = range(8)
N_MATERIAL = 8
#: Impulse columns: normal, tangent 1, tangent 2, rolling about t1, rolling about t2, spinning.
I_NORMAL, I_T1, I_T2, I_R1, I_R2, I_SPIN = range(6)
#: Effective-mass columns: linear rows along n, t1, t2, then angular rows about n, t1, t2.
K_SPIN, K_R1, K_R2 = 3, 4, 5
#: A shape pair keeps the points its narrow phase found while the relative pose of its bodies
#: stays within these of the pose they were found at, m and rad.
KEEP_DISTANCE = 1e-4
KEEP_ANGLE = 1e-3
#: Columns of Contacts.manifold: B's position in A's body frame (3) and B's orientation
#: relative to A's (4, wxyz) when the pair's points were found; the normal in A's frame (3).
N_MANIFOLD = 10


@jit
def perpendicular(n):
    """Two unit vectors completing the unit normal n to a right-handed triad."""
    if abs(n[0]) < 0.57735:
        t = (0.0, n[2], -n[1])
    else:
        t = (-n[2], 0.0, n[0])
    s = 1.0 / np.sqrt(dot3(t, t))
    t = vscale(t, s)
    return t, cross(n, t)


@jit
def update_shapes(shape_body, shape_pos, shape_quat, aabb_center, aabb_half, kind, body_pos,
                  rot, vel, dt, margin, wpos, wrot, box, reach):
    """
    World pose, bounding box and reach of every shape (plain arrays; see ``find_contacts``).

    The box is the shape's local box turned into the world, |R| h, grown by half the margin and
    by the shape's reach, the distance any of its points moves in this step (module docstring):
    two boxes overlap when their shapes may come within the margin plus both reaches.
    """
    for s in range(shape_body.shape[0]):
        b = shape_body[s]
        q = read4(shape_quat, s)
        p = read3(shape_pos, s)
        c = read3(aabb_center, s)
        if b >= 0:
            rb = read_mat(rot, b)
            r = mat_mul(rb, quat_to_mat(q))
            x = vadd(read3(body_pos, b), mat_vec(rb, p))
            # |w| times the farthest the shape's box reaches from the centre of mass
            lever = np.sqrt(dot3(p, p)) + np.sqrt(dot3(c, c)) + np.sqrt(
                aabb_half[s, 0] ** 2 + aabb_half[s, 1] ** 2 + aabb_half[s, 2] ** 2)
            w = np.sqrt(vel[b, 3] ** 2 + vel[b, 4] ** 2 + vel[b, 5] ** 2)
            reach[s] = dt * (abs(vel[b, 0]) + abs(vel[b, 1]) + abs(vel[b, 2]) + w * lever)
            grow = 0.5 * margin + reach[s]
        else:
            r = quat_to_mat(q)
            x = p
            reach[s] = 0.0
            grow = 0.5 * margin
        write3(wpos, s, x)
        for i in range(3):
            for j in range(3):
                wrot[s, i, j] = r[i][j]
        if kind[s] == PLANE:
            continue
        center = vadd(x, mat_vec(r, c))
        for i in range(3):
            h = (abs(r[i][0]) * aabb_half[s, 0] + abs(r[i][1]) * aabb_half[s, 1]
                 + abs(r[i][2]) * aabb_half[s, 2]) + grow
            box[s, i] = center[i] - h
            box[s, 3 + i] = center[i] + h


@jit
def find_pairs(order, box, shape_body, shape_link, pair_filter, pairs):
    """
    Sweep and prune: candidate shape pairs whose boxes overlap; returns their number.

    ``order`` holds the non-plane shapes sorted by the low x of their box in the last step and
    is re-sorted by insertion (O(n) when little moved).  A pair is kept when the boxes overlap
    in y and z too, the shapes are on different bodies, not both static, and their link pair
    is not filtered.  Returns -1 when ``pairs`` is too small (the caller grows it).
    """
    n = order.shape[0]
    for i in range(1, n):
        s = order[i]
        key = box[s, 0]
        k = i - 1
        while k >= 0 and box[order[k], 0] > key:
            order[k + 1] = order[k]
            k -= 1
        order[k + 1] = s
    count = 0
    capacity = pairs.shape[0]
    for i in range(n):
        a = order[i]
        hi = box[a, 3]
        ba = shape_body[a]
        for k in range(i + 1, n):
            b = order[k]
            if box[b, 0] > hi:
                break
            bb = shape_body[b]
            if ba == bb or (ba < 0 and bb < 0):
                continue
            if (box[b, 1] > box[a, 4] or box[a, 1] > box[b, 4]
                    or box[b, 2] > box[a, 5] or box[a, 2] > box[b, 5]):
                continue
            if pair_filter[shape_link[a], shape_link[b]]:
                continue
            if count >= capacity:
                return -1
            # the dynamic shape first, so the normal points towards a moving body
            if ba < 0:
                pairs[count, 0] = b
                pairs[count, 1] = a
            else:
                pairs[count, 0] = a
                pairs[count, 1] = b
            count += 1
    return count


@jit
def plane_points(kind, x, r, size, poly, vert_start, verts, p0, n, margin, out_pos, out_depth):
    """
    Points of one shape against the plane through p0 with unit normal n (pointing out of it).

    Writes the shape's surface points within the margin of the plane into out_pos (world) and
    their depths (> 0 below the plane) into out_depth; returns the count.  Sphere: its lowest
    point; capsule: the lowest points of both end spheres; cylinder: four points 90 degrees
    apart on each rim, starting from the rim's lowest point (a cylinder lying down gets its
    line contact as two points, standing up four points of its disc); polytopes (box, convex
    hulls): their vertices, at most ``MAX_PLANE_POINTS``, keeping the deepest.
    """
    count = 0
    if kind == SPHERE or kind == CAPSULE:
        ends = 1 if kind == SPHERE else 2
        for e in range(ends):
            c = x
            if kind == CAPSULE:
                h = size[1] if e == 0 else -size[1]
                c = (x[0] + r[0][2] * h, x[1] + r[1][2] * h, x[2] + r[2][2] * h)
            dist = dot3(vsub(c, p0), n) - size[0]
            if dist < margin:
                write3(out_pos, count, vsub(c, vscale(n, size[0])))
                out_depth[count] = -dist
                count += 1
    elif kind == CYLINDER:
        axis = (r[0][2], r[1][2], r[2][2])
        along = dot3(n, axis)
        down = vsub(vscale(axis, along), n)  # -(n minus its axial part): towards the plane
        length = np.sqrt(dot3(down, down))
        if length < 1e-9:
            u = (r[0][0], r[1][0], r[2][0])
        else:
            u = vscale(down, 1.0 / length)
        w = cross(axis, u)
        for e in range(2):
            h = size[1] if e == 0 else -size[1]
            c = vadd(x, vscale(axis, h))
            for k in range(4):
                cu = 1.0 if k == 0 else (-1.0 if k == 2 else 0.0)
                cw = 1.0 if k == 1 else (-1.0 if k == 3 else 0.0)
                p = vadd(c, vadd(vscale(u, size[0] * cu), vscale(w, size[0] * cw)))
                dist = dot3(vsub(p, p0), n)
                if dist < margin:
                    count = keep_deepest(out_pos, out_depth, count, p, -dist)
    else:
        # the plane's normal in the shape frame: a vertex's distance as one dot product, to
        # pass over the vertices out of reach (PLANE_SCREEN) before their world positions
        rn = mat_t_vec(r, n)
        reach = margin + PLANE_SCREEN - dot3(vsub(x, p0), n)
        for v in range(vert_start[poly], vert_start[poly + 1]):
            local = read3(verts, v)
            if dot3(rn, local) > reach:
                continue
            p = vadd(x, mat_vec(r, local))
            dist = dot3(vsub(p, p0), n)
            if dist < margin:
                count = keep_deepest(out_pos, out_depth, count, p, -dist)
    return count


@jit
def keep_deepest(out_pos, out_depth, count, p, depth):
    """Add a point, or replace the shallowest one when ``MAX_PLANE_POINTS`` are held."""
    if count < MAX_PLANE_POINTS:
        write3(out_pos, count, p)
        out_depth[count] = depth
        return count + 1
    low = 0
    for i in range(1, count):
        if out_depth[i] < out_depth[low]:
            low = i
    if depth > out_depth[low]:
        write3(out_pos, low, p)
        out_depth[low] = depth
    return count


@jit
def find_contacts(shapes, polys, contacts, cwork, state, rot, vel, param, dt):
    """
    Contact points of this step, matched to the last step's; returns -1 on overflow.

    Overflow (more candidate pairs or points than the arrays hold) keeps what fits and is
    reported so the engine can grow the arrays for the next step.  ``rot`` (n_body, 3, 3) and
    ``vel`` (n_body, 6: COM velocity, angular velocity, world) are the bodies' rotations and
    velocities after this step's forces, from either formulation.
    """
    margin = param[P_MARGIN]
    match = param[P_MATCH_DISTANCE]
    shape_body = shapes.body
    kind = shapes.kind
    size = shapes.size
    poly = shapes.poly
    wpos = cwork.wpos
    wrot = cwork.wrot
    update_shapes(shape_body, shapes.pos, shapes.quat, shapes.aabb_center, shapes.aabb_half,
                  kind, state.body_pos, rot, vel, dt, margin, wpos, wrot, cwork.box,
                  cwork.reach)
    overflow = 0
    n_pairs = find_pairs(cwork.order, cwork.box, shape_body, shapes.link, shapes.pair_filter,
                         cwork.pairs)
    if n_pairs < 0:
        overflow = 1
        n_pairs = cwork.pairs.shape[0]
    # the last step's points, chained per shape A for matching
    n_prev = contacts.count[0]
    for i in range(n_prev):
        contacts.prev_shape[i, 0] = contacts.shape[i, 0]
        contacts.prev_shape[i, 1] = contacts.shape[i, 1]
        contacts.prev_body[i, 0] = contacts.body[i, 0]
        contacts.prev_body[i, 1] = contacts.body[i, 1]
        for c in range(3):
            contacts.prev_local[i, c] = contacts.local[i, 0, c]
            contacts.prev_local_b[i, c] = contacts.local[i, 1, c]
            for k in range(3):
                contacts.prev_frame[i, k, c] = contacts.frame[i, k, c]
        for c in range(6):
            contacts.prev_impulse[i, c] = contacts.impulse[i, c]
        for c in range(N_MANIFOLD):
            contacts.prev_manifold[i, c] = contacts.manifold[i, c]
        contacts.prev_id[i] = contacts.id[i]
    head = cwork.head
    chain = cwork.chain
    for s in range(head.shape[0]):
        head[s] = -1
    for i in range(n_prev - 1, -1, -1):
        a = contacts.prev_shape[i, 0]
        chain[i] = head[a]
        head[a] = i
    count = 0
    capacity = contacts.id.shape[0]
    out_pos = cwork.out_pos
    out_normal = cwork.out_normal
    out_depth = cwork.out_depth
    # shapes against planes
    for pl in range(shapes.planes.shape[0]):
        p = shapes.planes[pl]
        p0 = read3(wpos, p)
        n = (wrot[p, 0, 2], wrot[p, 1, 2], wrot[p, 2, 2])
        for s in range(kind.shape[0]):
            if kind[s] == PLANE or shape_body[s] < 0:
                continue
            # the box test first: most shapes are far from the plane (the box is grown by half
            # the margin and the reach, so this keeps every shape within the whole of them)
            low = (n[0] * (cwork.box[s, 3] if n[0] < 0 else cwork.box[s, 0])
                   + n[1] * (cwork.box[s, 4] if n[1] < 0 else cwork.box[s, 1])
                   + n[2] * (cwork.box[s, 5] if n[2] < 0 else cwork.box[s, 2]))
            within = margin + cwork.reach[s] + cwork.reach[p]
            if low - dot3(n, p0) > within:
                continue
            m = plane_points(kind[s], read3(wpos, s), read_mat(wrot, s), read3(size, s),
                             poly[s], polys.vert_start, polys.verts, p0, n, within,
                             cwork.plane_pos, cwork.plane_depth)
            for i in range(m):
                if count >= capacity:
                    overflow = 1
                    break
                d = cwork.plane_depth[i]
                q = read3(cwork.plane_pos, i)
                # q is on the shape; the plane's point is q + d n; the contact sits midway
                add_contact(contacts, shapes, state.body_pos, rot, s, p,
                            vadd(q, vscale(n, 0.5 * d)), n, d, count, head, chain, match)
                cwork.kept[count] = False
                count += 1
    # shape pairs
    for k in range(n_pairs):
        a = cwork.pairs[k, 0]
        b = cwork.pairs[k, 1]
        within = margin + cwork.reach[a] + cwork.reach[b]
        t_rel, q_rel = relative_pose(state, rot, shape_body[a], shape_body[b])
        first = kept_manifold(contacts, head, chain, a, b, t_rel, q_rel)
        if first >= 0:
            m = kept_points(contacts, state, rot, chain, first, b, within, out_pos,
                            out_normal, out_depth, cwork.out_prev)
        else:
            m = collide.collide_shapes(
                kind[a], read3(wpos, a), read_mat(wrot, a), read3(size, a), poly[a],
                kind[b], read3(wpos, b), read_mat(wrot, b), read3(size, b), poly[b],
                polys, within, out_pos, out_normal, out_depth, cwork.scratch)
        for i in range(m):
            if count >= capacity:
                overflow = 1
                break
            add_contact(contacts, shapes, state.body_pos, rot, a, b, read3(out_pos, i),
                        read3(out_normal, i), out_depth[i], count, head, chain, match,
                        cwork.out_prev[i] if first >= 0 else -1)
            cwork.kept[count] = first >= 0
            if first >= 0:  # the pose the points were found at, and their normal, go on
                for c in range(N_MANIFOLD):
                    contacts.manifold[count, c] = contacts.prev_manifold[first, c]
            else:
                store_manifold(contacts, rot, shape_body[a], count, t_rel, q_rel,
                               read3(out_normal, i))
            count += 1
    contacts.count[0] = count
    contacts.count[1] = n_prev
    return -1 if overflow else count


@jit
def relative_pose(state, rot, a, b):
    """Return body b's position in body a's frame and its orientation relative to a's."""
    xb = read3(state.body_pos, b) if b >= 0 else (0.0, 0.0, 0.0)
    qb = read4(state.body_quat, b) if b >= 0 else (1.0, 0.0, 0.0, 0.0)
    if a < 0:
        return xb, qb
    t = mat_t_vec(read_mat(rot, a), vsub(xb, read3(state.body_pos, a)))
    return t, quat_mul(quat_conj(read4(state.body_quat, a)), qb)


@jit
def kept_manifold(contacts, head, chain, a, b, t_rel, q_rel):
    """
    Return the first of the last step's points of the pair (a, b) if the pair keeps them, else -1.

    It keeps them while its relative pose is within KEEP_DISTANCE and KEEP_ANGLE of the pose
    their narrow phase ran at (stored with every point in ``manifold``).
    """
    k = head[a]
    while k >= 0:
        if contacts.prev_shape[k, 1] == b:
            break
        k = chain[k]
    if k < 0:
        return -1
    d0 = t_rel[0] - contacts.prev_manifold[k, 0]
    d1 = t_rel[1] - contacts.prev_manifold[k, 1]
    d2 = t_rel[2] - contacts.prev_manifold[k, 2]
    if d0 * d0 + d1 * d1 + d2 * d2 > KEEP_DISTANCE * KEEP_DISTANCE:
        return -1
    kept = contacts.prev_manifold
    cos_half = abs(q_rel[0] * kept[k, 3] + q_rel[1] * kept[k, 4] + q_rel[2] * kept[k, 5]
                   + q_rel[3] * kept[k, 6])
    if cos_half < np.cos(0.5 * KEEP_ANGLE):
        return -1
    return k


@jit
def kept_points(contacts, state, rot, chain, first, b, within, out_pos, out_normal, out_depth,
                out_prev):
    """
    Carry the pair's last points with their bodies into out_*; return their count.

    ``out_prev`` gets each one's index among the last step's points (its identity).

    Each point's surface points on A and B (body frames) go to the world with the bodies' poses
    now, its normal turns with A, and its depth is measured anew, (p_B - p_A) . n; a point now
    farther apart than ``within`` is left out.
    """
    m = 0
    k = first
    while k >= 0 and m < out_depth.shape[0]:
        if contacts.prev_shape[k, 1] == b:
            la = read3(contacts.prev_local, k)
            lb = read3(contacts.prev_local_b, k)
            na = (contacts.prev_manifold[k, 7], contacts.prev_manifold[k, 8],
                  contacts.prev_manifold[k, 9])
            ba = contacts.prev_body[k, 0]
            bb = contacts.prev_body[k, 1]
            pa = la
            if ba >= 0:
                pa = vadd(read3(state.body_pos, ba), mat_vec(read_mat(rot, ba), la))
            pb = lb
            if bb >= 0:
                pb = vadd(read3(state.body_pos, bb), mat_vec(read_mat(rot, bb), lb))
            n = mat_vec(read_mat(rot, ba), na) if ba >= 0 else na
            depth = dot3(vsub(pb, pa), n)
            if depth > -within:
                write3(out_pos, m, vscale(vadd(pa, pb), 0.5))
                write3(out_normal, m, n)
                out_depth[m] = depth
                out_prev[m] = k
                m += 1
        k = chain[k]
    return m


@jit
def store_manifold(contacts, rot, a, i, t_rel, q_rel, n):
    """Store with point i the pose its pair's narrow phase ran at and its normal in A's frame."""
    na = mat_t_vec(read_mat(rot, a), n) if a >= 0 else n
    for c in range(3):
        contacts.manifold[i, c] = t_rel[c]
        contacts.manifold[i, 7 + c] = na[c]
    for c in range(4):
        contacts.manifold[i, 3 + c] = q_rel[c]


@jit
def add_contact(contacts, shapes, body_pos, rot, sa, sb, pos, n, depth, i, head, chain, match,
                known=-1):
    """
    Store point i (midpoint, normal n from B to A, depth); match it to the last step.

    ``known``: the last step's point it is (a kept manifold's, ``kept_points``), or -1 to look
    for the nearest within ``match`` on A.
    """
    a = shapes.body[sa]
    b = shapes.body[sb]
    contacts.shape[i, 0] = sa
    contacts.shape[i, 1] = sb
    contacts.body[i, 0] = a
    contacts.body[i, 1] = b
    write3(contacts.pos, i, pos)
    write3(contacts.normal, i, n)
    contacts.depth[i] = depth
    t1, t2 = perpendicular(n)
    for c in range(3):
        contacts.frame[i, 0, c] = n[c]
        contacts.frame[i, 1, c] = t1[c]
        contacts.frame[i, 2, c] = t2[c]
    # surface points: A's below B's surface by the depth along n
    pa = vsub(pos, vscale(n, 0.5 * depth))
    pb = vadd(pos, vscale(n, 0.5 * depth))
    for side in range(2):
        body = a if side == 0 else b
        p = pa if side == 0 else pb
        if body >= 0:
            local = mat_t_vec(read_mat(rot, body), vsub(p, read3(body_pos, body)))
        else:
            local = p
        for c in range(3):
            contacts.local[i, side, c] = local[c]
    combine_materials(shapes.material, sa, sb, contacts.material, i)
    for c in range(6):
        contacts.impulse[i, c] = 0.0
    best = known
    if best < 0:
        best_d2 = match * match
        la = (contacts.local[i, 0, 0], contacts.local[i, 0, 1], contacts.local[i, 0, 2])
        k = head[sa]
        while k >= 0:
            if contacts.prev_shape[k, 1] == sb:
                d = vsub(la, read3(contacts.prev_local, k))
                d2 = dot3(d, d)
                if d2 < best_d2:
                    best_d2 = d2
                    best = k
            k = chain[k]
    if best < 0:
        contacts.id[i] = contacts.next_id[0]
        contacts.next_id[0] += 1
        return
    contacts.id[i] = contacts.prev_id[best]
    contacts.impulse[i, I_NORMAL] = contacts.prev_impulse[best, I_NORMAL]
    contacts.impulse[i, I_SPIN] = contacts.prev_impulse[best, I_SPIN]
    # tangent and rolling impulses as world vectors, onto the new tangents
    for col in (I_T1, I_R1):
        v = (0.0, 0.0, 0.0)
        for k2 in range(2):
            old = (contacts.prev_frame[best, 1 + k2, 0], contacts.prev_frame[best, 1 + k2, 1],
                   contacts.prev_frame[best, 1 + k2, 2])
            v = vadd(v, vscale(old, contacts.prev_impulse[best, col + k2]))
        contacts.impulse[i, col] = dot3(v, t1)
        contacts.impulse[i, col + 1] = dot3(v, t2)
    # a point matched twice would double its impulse: forget the match
    head_k = head[sa]
    if head_k == best:
        head[sa] = chain[best]
    else:
        k = head_k
        while k >= 0:
            if chain[k] == best:
                chain[k] = chain[best]
                break
            k = chain[k]


@jit
def combine_materials(shape_material, sa, sb, out, i):
    """
    Write the material of a point between shapes sa and sb into row i of out (M_* columns).

    As Gazebo combines ODE surfaces: friction the smaller; stiffness as two springs in series,
    1 / k = 1 / k_a + 1 / k_b; damping as two dampers side by side, c_a + c_b.  Restitution,
    rolling and spinning friction and the min_depth the larger; the push-out speed cap the
    smaller.
    """
    fa = shape_material[sa]
    fb = shape_material[sb]
    out[i, M_FRICTION] = min(fa[M_FRICTION], fb[M_FRICTION])
    for c in (M_RESTITUTION, M_ROLLING, M_SPINNING, M_MIN_DEPTH):
        out[i, c] = max(fa[c], fb[c])
    ka = fa[M_STIFFNESS]
    kb = fb[M_STIFFNESS]
    out[i, M_STIFFNESS] = ka * kb / (ka + kb) if ka + kb > 0.0 else 0.0
    out[i, M_DAMPING] = fa[M_DAMPING] + fb[M_DAMPING]
    out[i, M_MAX_PUSH] = min(fa[M_MAX_PUSH], fb[M_MAX_PUSH])


#: A point's rows (ContactWork.row_*, kinv columns): linear along n, t1, t2, then angular about
#: n (spinning), t1 and t2 (rolling); the impulse column (Contacts.impulse) of each row.
N_ROWS = 6
ROW_IMPULSE = (I_NORMAL, I_T1, I_T2, I_SPIN, I_R1, I_R2)


@jit
def row_dot(x, seg, length, row_J, i, k):
    """
    Velocity along row k of point i: J x over the point's two segments of the velocity vector.

    The formulation's velocity vector x (the bodies' twists in maximal coordinates, the
    generalized velocities in the tree) and the point's segments (``ContactWork.row_seg``,
    ``row_len``, ``row_J``) are its mechanics; this function is the same for both.
    """
    v = 0.0
    for s in range(2):
        start = seg[i, s]
        if start < 0:
            continue
        acc = 0.0
        for m in range(length[i, s]):
            acc += row_J[i, k, s, m] * x[start + m]
        v += acc
    return v


@jit
def row_apply(x, seg, length, row_U, i, k, impulse):
    """Apply an impulse along row k of point i: x += M^-1 J^T impulse (the row's response)."""
    for s in range(2):
        start = seg[i, s]
        if start < 0:
            continue
        for m in range(length[i, s]):
            x[start + m] += row_U[i, k, s, m] * impulse


@jit
def has_angular_rows(material, i):
    """Return True where the material of point i has rolling or spinning friction."""
    return material[i, M_ROLLING] > 0.0 or material[i, M_SPINNING] > 0.0


@jit
def leave_out(contacts, cwork, i, vel, body_pos, dt, every_gap):
    """
    Return True (and clear point i's impulses) when point i stays out of this step's solve.

    A point still apart, of a pair that kept its points (at rest against each other,
    ``kept_manifold``; with ``every_gap``, of any pair), that its bodies' present motion
    (``vel``: the bodies' COM velocity and angular velocity, world) does not bring to the
    surface within the step: its speculative row could only act if other rows drove the
    bodies together, and the next step looks at it again (a resting pile's stacks touching
    side by side make hundreds).  The maximal formulation leaves out only kept pairs' points
    (its rows cost little); the tree's rows cost O(n) each, so it leaves out every such gap.
    A point in the solve gets the rigid row's softness (effective mass ``kinv[i, 0]``, gamma
    0) from its mechanics.
    """
    depth = contacts.depth[i]
    if (cwork.kept[i] or every_gap) and depth < 0.0 and dt * approach_speed(
            vel, body_pos, contacts.body[i, 0], contacts.body[i, 1], read3(contacts.pos, i),
            read3(contacts.normal, i)) < -depth:
        cwork.soft[i, 0] = 0.0
        cwork.soft[i, 1] = 0.0
        for c in range(6):
            contacts.impulse[i, c] = 0.0
        return True
    return False


@jit
def contact_targets(contacts, cwork, x, x_start, param, dt):
    """
    Softness and normal velocity target of every point in the solve (the rows' definitions).

    Run after the formulation's mechanics filled each point's rows (``row_seg`` .. ``row_U``,
    ``kinv``, ``k_normal``, and ``soft`` = (kinv[i, 0], 0): a rigid row).  ``x`` is the
    velocity vector now (gravity and efforts in), ``x_start`` the one at the start of the step
    (before this step's forces), both in the formulation's coordinates: the normal rows'
    speeds (``row_dot``) go to ``cwork.speed`` and ``targets_from_speeds`` sets the targets.
    """
    seg = cwork.row_seg
    length = cwork.row_len
    row_J = cwork.row_J
    for i in range(contacts.count[0]):
        if cwork.soft[i, 0] <= 0.0:
            continue  # out of this step's solve (leave_out)
        cwork.speed[i, 0] = row_dot(x, seg, length, row_J, i, 0)
        cwork.speed[i, 1] = row_dot(x_start, seg, length, row_J, i, 0)
    targets_from_speeds(contacts, cwork, param, dt)


@jit
def targets_from_speeds(contacts, cwork, param, dt):
    """
    Softness and normal velocity target of every point in the solve, from its normal speeds.

    ``cwork.speed[i]``: point i's normal row velocity J x now (gravity and efforts in) and at
    the start of the step, as the formulation's mechanics found them (``contact_targets``, or
    the tree's rows on their paths, physics/tree_rows.py).
    """
    threshold = param[P_RESTITUTION_SPEED]
    compliant = param[P_COMPLIANT] > 0.0
    for i in range(contacts.count[0]):
        if cwork.soft[i, 0] <= 0.0:
            continue  # out of this step's solve (leave_out)
        depth = contacts.depth[i]
        # approach speed now (gravity and efforts already in the velocities)
        vn = cwork.speed[i, 0]
        target = 0.0
        if depth < 0.0:
            target = depth / dt  # a gap: it may close within the step, not more
        e = contacts.material[i, M_RESTITUTION]
        if e > 0.0 and vn < -threshold and vn * dt < depth:
            # bounce on the approach speed at the start of the step (Box2D v3): with e = 1 the
            # quantity symplectic Euler conserves in free flight, v^2 / 2 + g x - g dt v / 2,
            # is then the same after the bounce as before, so the apex heights repeat; the
            # speed after this step's forces, -e v, would gain g |v| dt per bounce
            target = max(target, -e * cwork.speed[i, 1])
        elif compliant and (depth >= 0.0 or vn * dt < depth):
            target = soften(contacts.material, cwork.soft, i, cwork.k_normal[i], depth, vn, dt)
        cwork.target[i] = target


@jit
def approach_speed(vel, body_pos, a, b, pos, n):
    """Return how fast the points of A and B at pos approach each other along n (B to A), m/s."""
    v = 0.0
    for side in range(2):
        body = a if side == 0 else b
        if body < 0:
            continue
        r = vsub(pos, read3(body_pos, body))
        w = (vel[body, 3], vel[body, 4], vel[body, 5])
        point = vadd((vel[body, 0], vel[body, 1], vel[body, 2]), cross(w, r))
        v += -dot3(point, n) if side == 0 else dot3(point, n)
    return v


@jit
def soften(material, soft, i, k_row, depth, vn, dt):
    """
    Make point i's normal row a spring-damper (soft constraint); return its velocity target.

    ``soft[i]`` gets the row's effective mass 1 / (k_row + gamma) and gamma (module docstring,
    step 5).  A point still apart (depth < 0) that reaches the surface within the step at its
    normal velocity vn < 0 spends the fraction p / (-vn dt) of the step in contact (p its
    penetration at the end of the step): its damping is scaled by that fraction, so the damper
    does not act before the surfaces meet.
    """
    stiffness = material[i, M_STIFFNESS]
    damping = material[i, M_DAMPING]
    if depth < 0.0:
        damping *= min((-vn * dt + depth) / (-vn * dt), 1.0)
    denominator = damping + dt * stiffness
    if denominator <= 0.0:
        return 0.0
    gamma = 1.0 / (dt * denominator)
    beta = dt * stiffness / denominator
    soft[i, 0] = 1.0 / (k_row + gamma)
    soft[i, 1] = gamma
    # the spring's extension C = min_depth - depth; the push-out speed capped
    return min(beta * (depth - material[i, M_MIN_DEPTH]) / dt, material[i, M_MAX_PUSH])


@jit
def warm_start_contacts(contacts, cwork, x, warm):
    """Apply the matched impulses of the last step (or clear them without warm start)."""
    for i in range(contacts.count[0]):
        if not warm:
            for c in range(6):
                contacts.impulse[i, c] = 0.0
            continue
        if cwork.soft[i, 0] <= 0.0:
            continue  # out of this step's solve, its impulses cleared (leave_out)
        rows = N_ROWS if has_angular_rows(contacts.material, i) else 3
        for k in range(rows):
            row_apply(x, cwork.row_seg, cwork.row_len, cwork.row_U, i, k,
                      contacts.impulse[i, ROW_IMPULSE[k]])


@jit
def solve_contacts(x, items, lo, hi, material, impulse, seg, length, row_J, row_U, kinv, target,
                   soft):
    """
    One sweep over points items[lo:hi] (an island's); returns the largest change (N s or N m s).

    ``x`` is the formulation's velocity vector and the rows (``seg``, ``length``, ``row_J``,
    ``row_U``: ContactWork.row_*) its mechanics (``row_dot``, ``row_apply``); the rows'
    definitions and their projection are the same for both formulations.  ``soft`` (n, 2):
    the normal row's effective mass and softness gamma of each point (``soften``; gamma 0 and
    the rigid effective mass for a rigid row).  Plain arrays in (numba pays reference counts
    for container access inside loops).
    """
    largest = 0.0
    for n in range(lo, hi):
        i = items[n]
        if soft[i, 0] <= 0.0:
            continue  # out of this step's solve (leave_out)
        ln = impulse[i, I_NORMAL]
        # spinning: angular row about n, |l| <= mu_s l_n
        mu_s = material[i, M_SPINNING]
        if mu_s > 0.0:
            w = row_dot(x, seg, length, row_J, i, 3)
            old = impulse[i, I_SPIN]
            bound = mu_s * ln
            new = min(max(old - kinv[i, K_SPIN] * w, -bound), bound)
            impulse[i, I_SPIN] = new
            row_apply(x, seg, length, row_U, i, 3, new - old)
            largest = max(largest, abs(new - old))
        # rolling: angular rows about t1, t2 on the disc |l| <= mu_r l_n
        mu_r = material[i, M_ROLLING]
        if mu_r > 0.0:
            o1 = impulse[i, I_R1]
            o2 = impulse[i, I_R2]
            n1 = o1 - kinv[i, K_R1] * row_dot(x, seg, length, row_J, i, 4)
            n2 = o2 - kinv[i, K_R2] * row_dot(x, seg, length, row_J, i, 5)
            n1, n2 = onto_disc(n1, n2, mu_r * ln)
            impulse[i, I_R1] = n1
            impulse[i, I_R2] = n2
            row_apply(x, seg, length, row_U, i, 4, n1 - o1)
            row_apply(x, seg, length, row_U, i, 5, n2 - o2)
            largest = max(largest, abs(n1 - o1), abs(n2 - o2))
        # Coulomb friction: tangent rows on the disc |l| <= mu l_n
        mu = material[i, M_FRICTION]
        if mu > 0.0:
            o1 = impulse[i, I_T1]
            o2 = impulse[i, I_T2]
            v1 = row_dot(x, seg, length, row_J, i, 1)
            v2 = row_dot(x, seg, length, row_J, i, 2)
            n1, n2 = onto_disc(o1 - kinv[i, 1] * v1, o2 - kinv[i, 2] * v2, mu * ln)
            impulse[i, I_T1] = n1
            impulse[i, I_T2] = n2
            row_apply(x, seg, length, row_U, i, 1, n1 - o1)
            row_apply(x, seg, length, row_U, i, 2, n2 - o2)
            largest = max(largest, abs(n1 - o1), abs(n2 - o2))
        # normal: v_n+ + gamma lambda >= target with an accumulated impulse lambda >= 0
        vn = row_dot(x, seg, length, row_J, i, 0)
        new = max(ln - soft[i, 0] * (vn - target[i] + soft[i, 1] * ln), 0.0)
        impulse[i, I_NORMAL] = new
        row_apply(x, seg, length, row_U, i, 0, new - ln)
        largest = max(largest, abs(new - ln))
    return largest


@jit
def onto_disc(x, y, radius):
    """Scale (x, y) back onto the disc of the given radius if it lies outside."""
    r2 = x * x + y * y
    if r2 > radius * radius:
        if radius <= 0.0:
            return 0.0, 0.0
        s = radius / np.sqrt(r2)
        return x * s, y * s
    return x, y


@jit
def prepare_push(contacts, cwork, state, param, dt):
    """
    Targets of the penetration push (split impulse); returns the largest penetration beyond slop.

    Separation s = (p_a - p_b) . n of the surface points at the poses after this step's motion
    (s = -depth when the point was found).  A point deeper than the slop asks for the normal
    pseudo-velocity v_n >= min(erp (-s - slop), max_correction) / dt, one within the slop
    v_n >= 0 (a push elsewhere must not drive it in) and a gap v_n >= -s / dt (the push may close
    it, not cross it).  The pseudo-impulses start from zero every step.  Compliant contacts
    (``P_COMPLIANT``) are never pushed: their penetration is their spring's compression.
    """
    if param[P_COMPLIANT] > 0.0:
        return 0.0
    slop = param[P_SLOP]
    erp = param[P_ERP]
    cap = param[P_MAX_CORRECTION]
    largest = 0.0
    for i in range(contacts.count[0]):
        n = read3(contacts.normal, i)
        pa = (0.0, 0.0, 0.0)
        pb = (0.0, 0.0, 0.0)
        for side in range(2):
            b = contacts.body[i, side]
            local = (contacts.local[i, side, 0], contacts.local[i, side, 1],
                     contacts.local[i, side, 2])
            if b >= 0:
                p = vadd(read3(state.body_pos, b),
                         mat_vec(quat_to_mat(read4(state.body_quat, b)), local))
            else:
                p = local
            if side == 0:
                pa = p
            else:
                pb = p
        s = dot3(vsub(pa, pb), n)
        largest = max(largest, -(s + slop))
        cwork.isl_excess[ISLAND_POINTS, i] = -(s + slop)
        if s > 0.0:
            cwork.push_target[i] = -s / dt
        else:
            cwork.push_target[i] = min(max(erp * (-s - slop), 0.0), cap) / dt
        for c in range(6):
            cwork.push[i, c] = 0.0
        # a point out of this step's solve stays out of the push too (its lever arms are old)
        cwork.push_soft[i, 0] = cwork.kinv[i, 0] if cwork.soft[i, 0] > 0.0 else 0.0
        cwork.push_soft[i, 1] = 0.0
    return max(largest, 0.0)
