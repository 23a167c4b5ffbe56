"""
The maximal formulation's mechanics of the shared contact rows: rows on the bodies' twists.

The contact pipeline (physics/contacts.py) defines a point's rows, their targets and their
projection once; a formulation supplies only how a row sees and moves its velocity vector x
(``ContactWork.row_seg``, ``row_len``, ``row_J``, ``row_U``).  In maximal coordinates x is
every body's twist (COM velocity, angular velocity; world), six entries per body, so a row of a
point p along a unit direction d has one segment of six on each of its two bodies:
    linear row:   J_A = [d, r_A x d],  J_B = -[d, r_B x d],  r = p - x_COM
    angular row:  J_A = [0, d],        J_B = -[0, d]
and the velocity response to a unit impulse is U = M^-1 J^T per body (m^-1 d and
I_world^-1 (r x d)), the effective mass k = J M^-1 J^T the sum over the two bodies.  The tree
formulation's mechanics are in physics/tree_rows.py.
"""
from .contacts import (contact_targets, find_contacts, has_angular_rows, leave_out,
                       warm_start_contacts)
from .math3d import cross, dot3, jit, mat_vec, read3, read_mat, vsub

#: Entries of one body's segment of the velocity vector: its twist.
TWIST = 6


@jit
def prepare_contact_rows(contacts, cwork, bodies, state, work, dt):
    """
    Rows of every point on its bodies' twists, their effective masses and the rigid softness.

    Args:
        contacts: arrays.Contacts of this step.
        cwork: arrays.ContactWork; fills row_seg, row_len, row_J, row_U, kinv, k_normal, soft.
        bodies: arrays.Bodies.
        state: arrays.State (COM positions).
        work: arrays.Work (world inverse inertias, velocities after this step's forces).
        dt: step, s.
    """
    vel = work.vel
    inv_inertia = work.inv_inertia_w
    inv_mass = bodies.inv_mass
    seg = cwork.row_seg
    length = cwork.row_len
    row_J = cwork.row_J
    row_U = cwork.row_U
    for i in range(contacts.count[0]):
        seg[i, 0] = -1
        seg[i, 1] = -1
        if leave_out(contacts, cwork, i, vel, state.body_pos, dt, False):
            continue
        ktot = cwork.k6
        for k in range(6):
            ktot[k] = 0.0
        # the angular rows (rolling, spinning) only where the material has them
        angular = has_angular_rows(contacts.material, i)
        pos = read3(contacts.pos, i)
        for side in range(2):
            b = contacts.body[i, side]
            if b < 0:
                continue
            sign = 1.0 if side == 0 else -1.0
            seg[i, side] = TWIST * b
            length[i, side] = TWIST
            r = vsub(pos, read3(state.body_pos, b))
            im = read_mat(inv_inertia, b)
            for k in range(3):
                d = (contacts.frame[i, k, 0], contacts.frame[i, k, 1], contacts.frame[i, k, 2])
                rx = cross(r, d)
                irx = mat_vec(im, rx)
                for c in range(3):
                    row_J[i, k, side, c] = sign * d[c]
                    row_J[i, k, side, 3 + c] = sign * rx[c]
                    row_U[i, k, side, c] = sign * (inv_mass[b] * d[c])
                    row_U[i, k, side, 3 + c] = sign * irx[c]
                ktot[k] += inv_mass[b] + dot3(rx, irx)
                if angular:
                    idir = mat_vec(im, d)
                    for c in range(3):
                        row_J[i, 3 + k, side, c] = 0.0
                        row_J[i, 3 + k, side, 3 + c] = sign * d[c]
                        row_U[i, 3 + k, side, c] = 0.0
                        row_U[i, 3 + k, side, 3 + c] = sign * idir[c]
                    ktot[3 + k] += dot3(d, idir)
        for k in range(6):
            cwork.kinv[i, k] = 1.0 / ktot[k] if ktot[k] > 0.0 else 0.0
        cwork.k_normal[i] = ktot[0]
        # the rigid row until contact_targets makes it soft
        cwork.soft[i, 0] = cwork.kinv[i, 0]
        cwork.soft[i, 1] = 0.0


@jit
def store_start_velocities(work, cwork):
    """Keep the bodies' twists at the start of the step (before forces) for the restitution."""
    for b in range(work.vel.shape[0]):
        for c in range(6):
            cwork.start_vel[b, c] = work.vel[b, c]


@jit
def find_body_contacts(shapes, polys, contacts, cwork, state, work, param, dt):
    """``contacts.find_contacts`` with the bodies' rotations and velocities; -1 on overflow."""
    return find_contacts(shapes, polys, contacts, cwork, state, work.rot, work.vel, param, dt)


@jit
def prepare_body_contacts(contacts, cwork, bodies, state, work, param, dt):
    """Set up the points' rows on the bodies' twists, then their shared targets (contacts.py)."""
    prepare_contact_rows(contacts, cwork, bodies, state, work, dt)
    contact_targets(contacts, cwork, cwork.vel_flat, cwork.start_flat, param, dt)


@jit
def warm_start_body_contacts(contacts, cwork, warm):
    """``contacts.warm_start_contacts`` on the bodies' twists."""
    warm_start_contacts(contacts, cwork, cwork.vel_flat, warm)
