"""
Structure-of-arrays containers of the engine: static model, constraint layout, mutable state.

Names follow thing_quantity; shapes, frames and units are given per field.  All are namedtuples
of numpy arrays so one call can hand them to the compiled step, which receives each as one
pointer (``by_reference``, physics/compile/containers.py).  The static model (Bodies,
Joints, Mimics, Drives, Axes, FreeFriction, Blocks) is written while the engine loads and only
read after; what changes per step or on a command lives in State.
"""
from collections import namedtuple

from .compile.containers import by_reference

#: Static body data.
Bodies = by_reference(namedtuple('Bodies', [
    'inv_mass',     # (n_body,) 1/kg
    'inertia',      # (n_body, 3, 3) about the COM, body frame, kg m^2
    'inv_inertia',  # (n_body, 3, 3) body frame, 1/(kg m^2)
]))

#: Static joint data (every joint the engine keeps, merged fixed joints excluded).
Joints = by_reference(namedtuple('Joints', [
    'type',        # (n_joint,) int64 engine type code (joints.TYPE_CODES)
    'body',        # (n_joint, 2) int64 parent, child body index (-1 = world)
    'ppos',        # (n_joint, 3) joint origin in the parent body frame relative to its COM, m,
                   # at load (the steps read State.joint_anchor, which starts as this)
    'pquat',       # (n_joint, 4) joint frame orientation in the parent body frame, wxyz
    'cpos',        # (n_joint, 3) joint origin in the child body frame relative to its COM, m
    'cquat',       # (n_joint, 4) joint frame orientation in the child body frame, wxyz
    'axis',        # (n_joint, 3) unit axis in the joint frame
    'perp1',       # (n_joint, 3) unit normal of the axis in the joint frame
    'perp2',       # (n_joint, 3) axis x perp1
    'axis_body',   # (n_joint, 3) the axis in the parent body frame (pquat applied)
    'block',       # (n_joint,) int64 index of the joint's bilateral block, -1 if none
]))

#: Mimic couplings q_follower = multiplier * q_leader + offset (joint indices).
Mimics = by_reference(namedtuple('Mimics', [
    'follower',    # (n_mimic,) int64 joint index
    'leader',      # (n_mimic,) int64 joint index
    'multiplier',  # (n_mimic,) 1
    'offset',      # (n_mimic,) rad or m
]))

#: DC motor drives (physics/drives.py), one per driven scalar joint.
Drives = by_reference(namedtuple('Drives', [
    'joint',              # (n_drive,) int64 joint index
    'axis',               # (n_drive,) int64 axis index (physics/axes.py)
    'inv_rotor_inertia',  # (n_drive,) 1/J_m, 1/(kg m^2)
    'gear',               # (n_drive,) N, rotor speed / joint speed
    'resistance',         # (n_drive,) ohm
    'inductance',         # (n_drive,) H
    'kt',                 # (n_drive,) N m/A
    'ke',                 # (n_drive,) V s/rad
    'viscous',            # (n_drive,) motor viscous friction, N m s/rad
    'efficiency',         # (n_drive,) gear efficiency, 1
    'current_limit',      # (n_drive,) A (inf = none)
]))

#: Axes (physics/axes.py): scalar joints with drive, friction, damping or limit rows.
Axes = by_reference(namedtuple('Axes', [
    'joint',            # (n_axis,) int64 joint index
    'drive',            # (n_axis,) int64 drive index, -1 if none
    'gear',             # (n_axis,) N of the drive, 0 if none
    'rotor_inertia',    # (n_axis,) J_m of the drive, kg m^2, 0 if none
    'friction',         # (n_axis,) dynamic Coulomb friction, N m or N
    'static_friction',  # (n_axis,) breakaway friction, N m or N
    'damping',          # (n_axis,) viscous damping, N m s/rad or N s/m
    'lower',            # (n_axis,) lower limit, rad or m (-inf if none)
    'upper',            # (n_axis,) upper limit, rad or m (inf if none)
    'restitution',      # (n_axis,) limit restitution coefficient, 1
    'velocity_limit',   # (n_axis,) enforced speed limit, rad/s or m/s (inf if not enforced)
    'always_live',      # (n_axis,) bool: drive, friction, damping or speed rows every step
    'subtree_start',    # (n_axis + 1,) int64 offsets into subtree_body
    'subtree_body',     # (n,) int64 bodies carried by each axis' child, axis after axis
]))

#: Coulomb friction of multi-DOF joints (physics/free_friction.py).
FreeFriction = by_reference(namedtuple('FreeFriction', [
    'joint',            # (n_free,) int64 joint index (spherical or planar)
    'dim',              # (n_free,) int64 rows: 3 (spherical rotation) or 2 (planar sliding)
    'friction',         # (n_free,) sliding friction, N m (spherical) or N (planar)
    'static_friction',  # (n_free,) breakaway friction, N m or N
]))

#: Constraint blocks: a block is d <= 6 rows solved together with its d x d effective mass.
Blocks = by_reference(namedtuple('Blocks', [
    'kind',    # (n_block,) int64 BLOCK_JOINT or BLOCK_MIMIC
    'source',  # (n_block,) int64 joint index or mimic index
    'row0',    # (n_block,) int64 first row
    'dim',     # (n_block,) int64 number of rows
    'body',    # (n_block, 4) int64 body of each Jacobian slot, -1 = world or unused
]))
BLOCK_JOINT = 0
BLOCK_MIMIC = 1

#: Mutable simulation state.
State = by_reference(namedtuple('State', [
    'body_pos',      # (n_body, 3) COM position, world, m
    'body_quat',     # (n_body, 4) body frame orientation, world, wxyz
    'body_lin_vel',  # (n_body, 3) COM velocity, world, m/s
    'body_ang_mom',  # (n_body, 3) angular momentum about the COM, world, N m s
    'joint_q',       # (n_joint,) unwrapped scalar joint coordinate, rad or m (0 for others)
    'joint_effort',  # (n_joint,) commanded effort on scalar joints, N m or N
    'row_impulse',   # (n_row,) accumulated impulse of each constraint row, N s or N m s
    'time',          # (1,) simulated time, s
    'drive_voltage',  # (n_drive,) applied armature voltage (after supply clipping), V
    'drive_current',  # (n_drive,) armature current, A
    'rotor_speed',    # (n_drive,) rotor speed relative to the stator, rad/s
    'drive_impulse',  # (n_drive, 3) accumulated gear and motor (rotor, N m s) and gear-friction
                      # (joint, N m s or N s) impulses of the maximal solver's rows
    'axis_impulse',   # (n_axis, 7) friction, damping, lower, upper, speed, prescribed rows
    'axis_rate',      # (n_axis,) joint speed at the end of the last sweep, rad/s or m/s
    'body_wrench',    # (n_body, 6) external force (N, through the COM) and torque (N m), world
    'free_impulse',   # (n_free, 3) accumulated friction impulses of multi-DOF joints
    'axis_prescribed',   # (n_axis,) 1.0 where the joint follows a prescribed motion
    'axis_target_rate',  # (n_axis,) its velocity target this step, rad/s or m/s
    'axis_target_q',     # (n_axis,) its position at the end of this step, rad or m
    'joint_row_rate',    # (n_joint, 6) rate at which each joint row's reference moves, dC*/dt:
                         # a moving path anchor (m/s) or a changing element length (m/s)
    # the joints' references, set by the facade between steps (elements, docs/prescribed.md)
    'joint_anchor',  # (n_joint, 3) joint origin in the parent body frame relative to its COM,
                     # m: Joints.ppos, except a path point's (parent: the world), which moves
                     # along its path, world, m
    'joint_length',  # (n_joint,) target length of a distance element, m (0 for other types)
    'joint_active',  # (n_joint,) 1.0 while the joint's rows act; 0.0 for a switched-off element
    'drive_effort',  # (n_drive,) output effort of each drive at its joint over the last step,
                     # N m or N (physics/drives.py; written by both formulations)
]))

#: Columns of a drive's motor row this step (Work.drive_soft[d]): the motor row's impulse at
#: rest F = dt tau0 and its damping D = dt c, the free rotor's damping dt b_m, the current limit's
#: impulse dt Kt i_max, and the gear efficiency.
MOTOR_F, MOTOR_D, ROTOR_D, LIMIT_IMPULSE, EFFICIENCY = range(5)

#: Scratch arrays reused every step (no allocation in the loop).
Work = by_reference(namedtuple('Work', [
    'rot',          # (n_body, 3, 3) body rotation
    'inertia_w',    # (n_body, 3, 3) world inertia, kg m^2
    'inv_inertia_w',  # (n_body, 3, 3) world inverse inertia
    'vel',          # (n_body, 6) linear and angular velocity, world
    'pred_pos',     # (n_body, 3) predicted COM after the step at the current velocity
    'pred_quat',    # (n_body, 4) predicted orientation
    'backup',       # (n_body, 13) state before the step, restored on divergence
    'row_J',        # (n_row, 4, 6) Jacobian per slot [linear, angular]
    'row_MJ',       # (n_row, 4, 6) M^-1 J^T per slot
    'row_bias',     # (n_row,) velocity bias, m/s or rad/s
    'row_C',        # (n_row,) position error at the start of the step, m or rad
    'block_kinv',   # (n_block, 6, 6) inverse effective mass
    'clock',        # (2,) int64 clock_gettime scratch
    'mat6',         # (6, 6) effective-mass scratch
    'gj',           # (6, 12) Gauss-Jordan scratch
    'vec6a',        # (6,) scratch
    'vec6b',        # (6,) scratch
    'C_pred',       # (6,) predicted position error scratch
    'jrow',         # (1, 4, 6) one Jacobian row scratch
    'vec12',        # (12,) scratch
    'axis_J',       # (n_axis, 2, 6) joint coordinate Jacobian of each axis
    'axis_u',       # (n_axis, 2, 6) body response to a unit coordinate impulse
    'axis_k',       # (n_axis,) constrained inverse mass of the coordinate
    'axis_kg',      # (n_axis,) the same with the drive's rotor geared in
    'axis_kcw',     # (n_axis, 6) K_c^-1 w, the joint block's reaction per coordinate impulse
    'axis_rows',    # (n_axis, 7, 5) this step's coordinate rows (axes.FRICTION..PRESCRIBED),
                    # each a generic 1-D row: axes.ROW_TARGET velocity, ROW_LO and ROW_HI
                    # impulse bounds, ROW_SOFTNESS, ROW_ON (1.0 where the row acts)
    'axis_live',    # (n_axis,) int64 the axes with rows this step, first axis_live_n[0] used
    'axis_live_n',  # (1,) int64 number of live axes
    'drive_soft',   # (n_drive, 5) this step's motor row, columns MOTOR_F .. EFFICIENCY
    'drive_backup',  # (n_drive, 2) rotor speed and current before the step
    'drive_ainv',   # (n_drive, 2, 2, 2) inverse gear/motor matrix: free, current-limited mode
    'free_J',       # (n_free, 3, 2, 6) friction rows' Jacobians
    'free_u',       # (n_free, 3, 2, 6) body response to a unit friction impulse per row
    'free_kcw',     # (n_free, 3, 6) the joint block's reaction per unit friction impulse
    'free_kinv',    # (n_free, 3, 3) inverse constrained effective mass of the friction rows
    'free_bound',   # (n_free,) friction impulse bound this step, N s or N m s
    'free_mj',      # (3, 2, 6) scratch: M^-1 J^T of one joint's friction rows
    'free_w',       # (3, 6) scratch: J_c M^-1 J_f^T of one joint's friction rows
    'block_error',  # (n_block,) each block's position error at the last projection, m or rad
]))

#: Collision shapes (physics/contacts.py); static shapes (body -1) are in the world frame.
Shapes = by_reference(namedtuple('Shapes', [
    'body',         # (n_shape,) int64 body index, -1 = static
    'kind',         # (n_shape,) int64 contacts.SPHERE ... contacts.PLANE
    'pos',          # (n_shape, 3) shape origin relative to the body COM, body frame, m
    'quat',         # (n_shape, 4) shape orientation in the body frame, wxyz
    'size',         # (n_shape, 3) sphere (r, 0, 0); capsule, cylinder (r, half length, 0), m
    'poly',         # (n_shape,) int64 polytope index (box, cylinder, convex), -1 if none
    'aabb_center',  # (n_shape, 3) centre of the shape's local bounding box, shape frame, m
    'aabb_half',    # (n_shape, 3) half extents of that box, m
    'material',     # (n_shape, 8) contacts.M_*: friction 1, restitution 1, rolling m,
                    # spinning m, stiffness N/m, damping N s/m, min_depth m, max push m/s
    'planes',       # (n_plane,) int64 shape indices of the planes
    'link',         # (n_shape,) int64 index of the shape's link (or object) for the filter
    'pair_filter',  # (n_link, n_link) bool: shapes of the two links never collide
]))

#: Convex polytopes (boxes, cylinder prisms, mesh hulls) packed flat; built by
#: description/convex.py.  Vertex and face indices inside a polytope's rows are local to it.
Polytopes = by_reference(namedtuple('Polytopes', [
    'vert_start',       # (n_poly + 1,) int64 first vertex row of each polytope
    'verts',            # (n_vert, 3) vertices in the shape frame, m
    'face_start',       # (n_poly + 1,) int64 first face row of each polytope
    'face_normal',      # (n_face, 3) unit outward normals, shape frame
    'face_offset',      # (n_face,) n . x of the face's points, m
    'face_vert_start',  # (n_face + 1,) int64 first entry of each face in face_verts
    'face_verts',       # (n_face_vert,) int64 local vertex indices, counter-clockwise from outside
    'edge_start',       # (n_poly + 1,) int64 first edge row of each polytope
    'edges',            # (n_edge, 4) int64 local vertices v0, v1 and faces f0, f1 of each edge
]))

#: Contact points: this step's (first count[0]) and the last step's (prev_*, count[1]).
Contacts = by_reference(namedtuple('Contacts', [
    'count',         # (2,) int64 points now, points in the last step
    'next_id',       # (1,) int64 next fresh point identity
    'shape',         # (n_max, 2) int64 shape A, shape B
    'body',          # (n_max, 2) int64 body of A, of B (-1 = static)
    'pos',           # (n_max, 3) contact point (midway between the surfaces), world, m
    'local',         # (n_max, 2, 3) surface point on A and on B, body frame from the COM, m
    'normal',        # (n_max, 3) unit normal from B towards A, world
    'depth',         # (n_max,) penetration when found (< 0: a gap), m
    'impulse',       # (n_max, 6) normal, tangents, rolling, spinning accumulated impulses
    'frame',         # (n_max, 3, 3) rows n, t1, t2, world
    'id',            # (n_max,) int64 identity kept while the point persists
    'material',      # (n_max, 8) the two shapes' materials combined (contacts.M_*)
    'manifold',      # (n_max, 10) B's position (m) and orientation (wxyz) in A's frame when the
                     # pair's narrow phase found the point; its normal in A's frame (contacts.py)
    'prev_shape',    # (n_max, 2) int64
    'prev_body',     # (n_max, 2) int64
    'prev_local',    # (n_max, 3) surface point on A, m
    'prev_local_b',  # (n_max, 3) surface point on B, m
    'prev_manifold',  # (n_max, 10)
    'prev_impulse',  # (n_max, 6)
    'prev_frame',    # (n_max, 3, 3)
    'prev_id',       # (n_max,) int64
]))

#: Contact scratch arrays.
ContactWork = by_reference(namedtuple('ContactWork', [
    'wpos',         # (n_shape, 3) shape origin, world, m
    'wrot',         # (n_shape, 3, 3) shape rotation, world
    'box',          # (n_shape, 6) world bounding box: low xyz, high xyz, m
    'reach',        # (n_shape,) farthest any point of the shape moves in this step, m
    'order',        # (n_sap,) int64 non-plane shapes sorted by low x (kept between steps)
    'pairs',        # (n_pair_max, 2) int64 candidate pairs of this step
    'head',         # (n_shape,) int64 first last-step point of each shape A
    'chain',        # (n_max,) int64 next last-step point of the same shape A
    'out_pos',      # (4, 3) points of one shape pair
    'out_normal',   # (4, 3)
    'out_depth',    # (4,)
    'out_prev',     # (4,) int64 the last step's point each kept point is (contacts.kept_points)
    'plane_pos',    # (8, 3) points of one shape against a plane
    'plane_depth',  # (8,)
    'scratch',      # narrow-phase scratch (collide.py)
    # each point's rows (contacts.N_ROWS: along n, t1, t2; about n, t1, t2) as the formulation's
    # mechanics sees them (physics/body_mechanics.py, physics/tree_rows.py): two segments of
    # the velocity vector x per point, each row's Jacobian and response M^-1 J^T on each
    'row_seg',      # (n_max, 2) int64 first entry of x of each segment, -1 = none
    'row_len',      # (n_max, 2) int64 entries of each segment
    'row_J',        # (n_max, 6, 2, width) the row's Jacobian on each segment
    'row_U',        # (n_max, 6, 2, width) velocity response to a unit impulse on each segment
    'k_normal',     # (n_max,) the normal row's inverse effective mass J M^-1 J^T, 1/kg
    'kinv',         # (n_max, 6) inverse effective masses: along n, t1, t2; about n, t1, t2
    'target',       # (n_max,) normal velocity target, m/s
    'speed',        # (n_max, 2) normal row's velocity now and at the step's start, m/s
    'soft',         # (n_max, 2) normal row: effective mass with softness, kg; gamma, 1/kg
    'kept',         # (n_max,) bool: the point's pair kept its points (contacts.kept_manifold)
    'k6',           # (6,) scratch
    'push',         # (n_max, 6) accumulated pseudo-impulses of the push solve (as 'impulse')
    'push_target',  # (n_max,) normal pseudo-velocity target of the push solve, m/s
    'push_soft',    # (n_max, 2) the push's normal rows: rigid effective mass, kg; 0
    # the push solve's joint and limit rows (here, not in Work: only a robot with collision
    # shapes uses them, and every Work array costs each call that takes Work)
    'push_vel',     # (n_body, 6) pseudo-velocity of the penetration push (split impulse), world
    'push_bias',    # (n_row,) joint rows' drift C / dt in the push solve, m/s or rad/s
    'push_impulse',  # (n_row,) accumulated pseudo-impulse of each joint row in the push solve
    'push_limit',   # (n_axis, 4) the push's limit rows: lower, upper target rate; their impulses
    # the maximal formulation's velocity vectors, flat views (the bodies' twists, 6 a body)
    'vel_flat',     # (6 n_body,) Work.vel
    'start_vel',    # (n_body, 6) the bodies' twists at the start of the step, before forces
    'start_flat',   # (6 n_body,) start_vel
    'push_flat',    # (6 n_body,) push_vel
    # the step's islands (physics/islands.py): units are the formulation's (maximal: bodies;
    # tree: its trees), items its solver rows of each kind (islands.ROWS ... LOOP_FREE)
    'isl_parent',   # (n_unit,) int64 union-find parent of each unit
    'isl_label',    # (n_unit,) int64 island of each unit
    'isl_count',    # (1,) int64 islands this step
    'isl_start',    # (N_KIND, n_unit + 2) int64 first item of each island, per kind
    'isl_cursor',   # (n_unit + 1,) int64 counting-sort scratch
    'isl_unit',     # (N_KIND, n_item) int64 the unit each item moves (-1: none)
    'isl_value',    # (N_KIND, n_item) int64 the solver's index of each item
    'isl_items',    # (N_KIND, n_item) int64 the items sorted by island
    'isl_excess',   # (N_KIND, n_item) each item's error to push out, by the solver's index
                    # (a point's penetration beyond the slop, a link's or a limit's error)
    'isl_flag',     # (n_unit + 1, 4) per island: push, moving, loaded, last position error
]))

#: One range sensor's rays (physics/rays.py): a grid of rows and columns cast from one origin,
#: built once per sensor by ``rays.lidar_grid`` or ``rays.camera_grid``.
RayGrid = by_reference(namedtuple('RayGrid', [
    'dirs',      # (n_row, n_col, 4) unit ray direction in the sensor frame, then the longest
                 # length of the ray that can read within range, m (range max, or far / cos)
    'row_key',   # (n_row,) ascending: each row's angle, rad: a lidar's elevation, minus a
                 # camera's pitch (image rows run downwards)
    'col_key',   # (n_col,) ascending: a lidar column's azimuth, minus a camera column's, rad
    'param',     # (rays.N_GRID,) rays.G_*: kind, range min and max (m), longest ray (m)
]))

#: Scratch arrays of the ray casts (physics/rays.py), one set per engine.
RayWork = by_reference(namedtuple('RayWork', [
    'rot',         # (n_body, 3, 3) body rotations
    'vel',         # (n_body, 6) zeros: the shapes are placed without motion
    'wpos',        # (n_shape, 3) shape origin, world, m
    'wrot',        # (n_shape, 3, 3) shape rotation, world
    'box',         # (n_shape, 6) world bounding box: low xyz, high xyz, m
    'reach',       # (n_shape,) zeros (contacts.update_shapes writes it)
    'center',      # (n_shape, 3) centre of the shape's bounding sphere, sensor frame, m
    'radius',      # (n_shape,) radius of that sphere, m
    'near',        # (n_shape,) distance from the sensor to that sphere, m
    'order',       # (n_shape,) int64 the shapes a cast looks at, nearest first (scan) or as the
                   # hierarchy's leaves hold them (cast)
    'node_box',    # (2 n_shape, 6) bounding box of each hierarchy node, world, m
    'node_child',  # (2 n_shape,) int64 first child (the second follows it), -1 for a leaf
    'node_first',  # (2 n_shape,) int64 first entry of a leaf in order
    'node_count',  # (2 n_shape,) int64 entries of a leaf
    'stack',       # (2 n_shape + 64,) int64 nodes to build or visit
    'stack_t',     # (2 n_shape + 64,) where the ray enters each node on the stack, m
    'sensor',      # (7,) the last scan's sensor frame: position (m), orientation (wxyz), world
]))

#: Results of the last step (float64 array, indices below).
(INFO_ITERATIONS, INFO_RESIDUAL, INFO_STOP, INFO_POS_ERROR, INFO_STATUS, INFO_BODY,
 INFO_CONTACTS, INFO_OVERFLOW, INFO_PENETRATION) = range(9)
INFO_SIZE = 9
STOP_TOLERANCE, STOP_ITERATIONS, STOP_TIME_BUDGET = 0, 1, 2
STATUS_OK, STATUS_DIVERGED, STATUS_CONTACT_OVERFLOW = 0, 1, 2
