"""
Lidars and depth cameras against geometry: rays cast at the collision world read its distances.

A lidar in a room reads, ray by ray, the distances a separate analytic caster (numpy, below)
finds to the walls, the ground, a box, a sphere, a cylinder, a capsule and a mesh hull; a depth
camera facing a wall reads the wall's depth at every pixel; a lidar on a spinning link sees a
wall segment at the samples its angle puts it in view.  Noise, resolution, range limits, the
sensor's own link, the tree formulation, a world of two robots, URDF tags and bad input.
"""
import math

from jointsim_ros import Simulator
from jointsim_ros.description import load_config, load_model
from jointsim_ros.errors import CommandError, ConfigError
from jointsim_ros.rotations import quat_to_matrix, rpy_to_matrix
import numpy as np
import pytest
from robots import box_inertial, collision_box, inertial, joint, link, robot

#: Lidar height above the ground (the spinning mast's joint), m.
HEIGHT = 1.0
#: The room's inside: x, y ranges, m; its walls are 6 m high.
ROOM = ((-4.0, 6.0), (-3.0, 5.0))
WALL_TOP = 6.0
#: The pedestal under the mast (a shape of the base link): half extents, m, centred at z 0.25.
PEDESTAL = (0.2, 0.2, 0.25)
AZIMUTHS = 721   # half-degree columns from -pi to pi
ROWS = (5, -1.3, 0.3)

TOLERANCE = 1e-9   # m


def column(degrees):
    """Return the azimuth of the room lidar's column nearest ``degrees`` (the column's own)."""
    azimuths = np.linspace(-np.pi, np.pi, AZIMUTHS)
    return float(azimuths[int(round((degrees + 180.0) * 2))])


def at(degrees, distance, z):
    """Return a point at an azimuth (one of the room lidar's columns) and distance, m."""
    a = column(degrees)
    return [distance * math.cos(a), distance * math.sin(a), z]


#: Objects of the room: (config entry, what the reference caster takes).
BALL = {'shape': 'sphere', 'radius': 0.5, 'pose': {'position': at(60, 3.0, 1.0)}}
CAN = {'shape': 'cylinder', 'radius': 0.4, 'length': 2.0, 'pose': {'position': at(150, 3.5, 1.0)}}
PILL = {'shape': 'capsule', 'radius': 0.3, 'length': 1.0,
        'pose': {'position': at(-30, 3.0, 0.8), 'rpy': [math.pi / 2, 0.0, 0.0]}}
CRATE = {'shape': 'box', 'size': [0.6, 0.8, 0.9],
         'pose': {'position': at(-160, 2.5, 0.45), 'rpy': [0.0, 0.0, 0.5]}}
OCTAHEDRON = 0.6   # m from the centre to a vertex
HULL_POSE = {'position': at(-100, 2.5, 1.1), 'rpy': [0.2, 0.0, 0.3]}


def sensor_robot():
    """Return a fixed pedestal with a mast that spins about z at 1 m, a bracket on the mast."""
    mast = (inertial(1.0, 0.01, 0.01, 0.01) + collision_box((0.05, 0.05, 0.05), xyz='0.3 0 0'))
    return robot('sensor', link('base', collision_box((0.4, 0.4, 0.5), xyz='0 0 0.25')),
                 link('mast', mast),
                 joint('spin', 'continuous', 'base', 'mast', xyz=f'0 0 {HEIGHT}', axis='0 0 1'))


def walls():
    """Return the room's four walls, 0.2 m thick boxes around ROOM's inside."""
    (x0, x1), (y0, y1) = ROOM
    xc, yc, z = 0.5 * (x0 + x1), 0.5 * (y0 + y1), 0.5 * WALL_TOP
    long_x, long_y = x1 - x0 + 0.4, y1 - y0 + 0.4

    def wall(position, size):
        return {'shape': 'box', 'size': size, 'pose': {'position': position}}
    return {'east': wall([x1 + 0.1, yc, z], [0.2, long_y, WALL_TOP]),
            'west': wall([x0 - 0.1, yc, z], [0.2, long_y, WALL_TOP]),
            'north': wall([xc, y1 + 0.1, z], [long_x, 0.2, WALL_TOP]),
            'south': wall([xc, y0 - 0.1, z], [long_x, 0.2, WALL_TOP])}


def write_octahedron(path):
    """Write an OBJ octahedron of OCTAHEDRON (centre to vertex) and return its path."""
    a = OCTAHEDRON
    vertices = [(a, 0, 0), (-a, 0, 0), (0, a, 0), (0, -a, 0), (0, 0, a), (0, 0, -a)]
    faces = [(1, 3, 5), (3, 2, 5), (2, 4, 5), (4, 1, 5),
             (3, 1, 6), (2, 3, 6), (4, 2, 6), (1, 4, 6)]
    path.write_text(''.join(f'v {x} {y} {z}\n' for x, y, z in vertices)
                    + ''.join(f'f {i} {j} {k}\n' for i, j, k in faces))
    return str(path)


def room_config(mesh, formulation='maximal', **lidar):
    """Return the room's config: its objects, the ground, and a lidar on the mast."""
    scene = dict(walls(), ball=BALL, can=CAN, pill=PILL, crate=CRATE,
                 hull={'shape': 'mesh', 'filename': mesh, 'pose': HULL_POSE})
    samples, low, high = ROWS
    settings = {'link': 'mast', 'rate': 10.0,
                'horizontal': {'samples': AZIMUTHS, 'min_angle': -math.pi, 'max_angle': math.pi},
                'vertical': {'samples': samples, 'min_angle': low, 'max_angle': high},
                'range': {'min': 0.1, 'max': 30.0}}
    settings.update(lidar)
    return {'scene': scene, 'ground': {'enabled': True}, 'solver': {'formulation': formulation},
            'range_sensors': {'lidar': settings}}


@pytest.fixture(scope='module')
def mesh(tmp_path_factory):
    """Return the path of the octahedron OBJ."""
    return write_octahedron(tmp_path_factory.mktemp('meshes') / 'octahedron.obj')


@pytest.fixture(scope='module')
def room(mesh):
    """Return the room simulator (maximal formulation), the mast at rest."""
    return Simulator.from_urdf(sensor_robot(), room_config(mesh))


# --- the analytic caster: each object's first entry along rays o + t d, numpy ----------------

def hit_box(o, d, center, rot, half):
    """Return the entry t of rays into a box (centre, rotation, half extents); inf for none."""
    ol = (o - center) @ rot
    dl = d @ rot
    with np.errstate(divide='ignore', invalid='ignore'):
        t1 = (-np.asarray(half) - ol) / dl
        t2 = (np.asarray(half) - ol) / dl
    enter = np.minimum(t1, t2).max(axis=1)
    leave = np.maximum(t1, t2).min(axis=1)
    return np.where((enter <= leave) & (enter >= 0.0), enter, np.inf)


def hit_ball(o, d, center, radius):
    """Return the entry t of rays into a ball."""
    oc = o - center
    b = np.einsum('ij,ij->i', oc, d)
    c = np.einsum('ij,ij->i', oc, oc) - radius ** 2
    disc = b * b - c
    t = -b - np.sqrt(np.maximum(disc, 0.0))
    return np.where((disc >= 0.0) & (t >= 0.0), t, np.inf)


def hit_tube(o, d, center, axis, radius, half, caps):
    """
    Return the entry t of rays into a cylinder ('flat' caps) or a capsule ('round' caps).

    The side: the roots of |x_perp|^2 = r^2 with the axial coordinate within +-half; the caps:
    discs at +-half (cylinder) or balls there (capsule).
    """
    oc = o - center
    oa, da = oc @ axis, d @ axis
    op, dp = oc - oa[:, None] * axis, d - da[:, None] * axis
    a = np.einsum('ij,ij->i', dp, dp)
    b = np.einsum('ij,ij->i', op, dp)
    c = np.einsum('ij,ij->i', op, op) - radius ** 2
    disc = b * b - a * c
    with np.errstate(divide='ignore', invalid='ignore'):
        side = (-b - np.sqrt(np.maximum(disc, 0.0))) / a
    ok = (disc >= 0.0) & (a > 0.0) & (side >= 0.0) & (np.abs(oa + side * da) <= half)
    best = np.where(ok, side, np.inf)
    for end in (-half, half):
        if caps == 'round':
            best = np.minimum(best, hit_ball(o, d, center + end * axis, radius))
            continue
        with np.errstate(divide='ignore', invalid='ignore'):
            t = (end - oa) / da
            point = op + t[:, None] * dp
            inside = np.einsum('ij,ij->i', point, point) <= radius ** 2
        # a disc is entered from outside the slab: the ray moves towards the body's middle
        ok = (t >= 0.0) & inside & (np.sign(da) == -np.sign(end))
        best = np.minimum(best, np.where(ok, t, np.inf))
    return best


def hit_octahedron(o, d, center, rot, size):
    """Return the entry t of rays into |x| + |y| + |z| <= size (Cyrus-Beck on its 8 planes)."""
    ol = (o - center) @ rot
    dl = d @ rot
    enter = np.full(len(o), -np.inf)
    leave = np.full(len(o), np.inf)
    for signs in np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3):
        above = ol @ signs - size
        toward = dl @ signs
        with np.errstate(divide='ignore', invalid='ignore'):
            t = -above / toward
        enter = np.where(toward < 0.0, np.maximum(enter, t), enter)
        leave = np.where(toward > 0.0, np.minimum(leave, t), leave)
        leave = np.where((toward == 0.0) & (above > 0.0), -np.inf, leave)
    return np.where((enter <= leave) & (enter >= 0.0), enter, np.inf)


def reference(o, d):
    """Return the analytic distance along each ray to the room's nearest surface, m."""
    with np.errstate(divide='ignore', invalid='ignore'):
        to_x, to_y = (np.where(d[:, k] > 0, (high - o[:, k]) / d[:, k],
                               np.where(d[:, k] < 0, (low - o[:, k]) / d[:, k], np.inf))
                      for k, (low, high) in enumerate(ROOM))
        ground = np.where(d[:, 2] < 0, o[:, 2] / -d[:, 2], np.inf)
    room = np.minimum(to_x, to_y)
    room = np.where(o[:, 2] + room * d[:, 2] <= WALL_TOP, room, np.inf)
    best = np.minimum(room, ground)
    best = np.minimum(best, hit_box(o, d, np.array([0, 0, 0.25]), np.eye(3), PEDESTAL))
    best = np.minimum(best, hit_ball(o, d, np.array(BALL['pose']['position']), 0.5))
    z = np.array([0.0, 0.0, 1.0])
    best = np.minimum(best, hit_tube(o, d, np.array(CAN['pose']['position']), z, 0.4, 1.0,
                                     'flat'))
    pill_axis = rpy_to_matrix(PILL['pose']['rpy']) @ z
    best = np.minimum(best, hit_tube(o, d, np.array(PILL['pose']['position']), pill_axis, 0.3,
                                     0.5, 'round'))
    best = np.minimum(best, hit_box(o, d, np.array(CRATE['pose']['position']),
                                    rpy_to_matrix(CRATE['pose']['rpy']), (0.3, 0.4, 0.45)))
    return np.minimum(best, hit_octahedron(o, d, np.array(HULL_POSE['position']),
                                           rpy_to_matrix(HULL_POSE['rpy']), OCTAHEDRON))


def world_rays(sim, name):
    """Return (origins, directions) of a range sensor's rays in the world, (n, 3) each."""
    sample = sim.sensors.range_sample(name)
    dirs = sim.sensors.ray_directions(name).reshape(-1, 3) @ quat_to_matrix(sample.quat).T
    return np.tile(sample.position, (len(dirs), 1)), dirs


# --- the tests -------------------------------------------------------------------------------

def test_a_lidar_in_a_room_reads_the_analytic_distance_of_every_ray(room):
    readings = room.sensors.ranges('lidar')
    assert readings.shape == (ROWS[0], AZIMUTHS)
    origins, dirs = world_rays(room, 'lidar')
    assert np.allclose(origins[0], [0.0, 0.0, HEIGHT])
    expected = reference(origins, dirs).reshape(readings.shape)
    expected = np.where(expected <= 30.0, expected, np.inf)
    assert np.array_equal(np.isinf(readings), np.isinf(expected))
    assert np.nanmax(np.abs(np.where(np.isfinite(expected), readings - expected, 0.0))) < TOLERANCE
    # every object is in the picture: the horizontal row through their centres
    middle = readings[3]   # elevation -0.1: below the centres at 1 m height, through them all
    row = np.linspace(-np.pi, np.pi, AZIMUTHS)
    seen = {name: middle[np.argmin(np.abs(row - column(deg)))]
            for name, deg in (('ball', 60), ('can', 150), ('pill', -30), ('crate', -160),
                              ('hull', -100))}
    assert all(v < 3.5 for v in seen.values()), seen
    # straight at the ball's centre at the lidar's height: |c| - r, exact
    ball = room.sensors.cast_rays([0.0, 0.0, HEIGHT], np.array(BALL['pose']['position'])
                                  - [0.0, 0.0, HEIGHT])
    assert abs(ball[0] - 2.5) < TOLERANCE


def test_the_rays_meet_the_pedestal_and_the_ground_and_leave_over_the_walls(room):
    readings = room.sensors.ranges('lidar')
    # the lowest row (-1.3 rad) hits the pedestal's top (z 0.5) all round
    assert np.allclose(readings[0], (HEIGHT - 0.5) / math.sin(1.3), rtol=0, atol=TOLERANCE)
    # the row at -0.9 rad lands on the ground beyond the pedestal, where nothing stands
    free = readings[1][np.abs(np.linspace(-np.pi, np.pi, AZIMUTHS) - 0.0) < 0.2]
    assert np.allclose(free, HEIGHT / math.sin(0.9), rtol=0, atol=TOLERANCE)


def test_the_two_kernels_agree_any_rays_against_one_sensors_grid(room):
    origins, dirs = world_rays(room, 'lidar')
    distances, names = room.sensors.cast_rays(origins, dirs, 30.0, ignore_link='mast',
                                              links=True)
    readings = room.sensors.ranges('lidar').reshape(-1)
    assert np.array_equal(np.isinf(distances), np.isinf(readings))
    finite = np.isfinite(readings)
    assert np.max(np.abs(distances[finite] - readings[finite])) < TOLERANCE
    assert {'ball', 'can', 'pill', 'crate', 'hull', 'ground', 'base', 'east'} <= set(names)
    assert 'mast' not in names


@pytest.mark.parametrize('yaw', (math.radians(60), math.radians(-130)))
def test_a_depth_cameras_pixels_agree_with_any_rays_cast_along_them(mesh, yaw):
    config = room_config(mesh)
    config['range_sensors'] = {'camera': {
        'link': 'base', 'kind': 'depth_camera', 'width': 160, 'height': 120,
        'horizontal_fov': 1.5, 'pose': {'position': [0.0, 0.0, 2.0], 'rpy': [0.0, 0.4, yaw]}}}
    sim = Simulator.from_urdf(sensor_robot(), config)
    depth = sim.sensors.ranges('camera')
    origins, dirs = world_rays(sim, 'camera')
    along = sim.sensors.ray_directions('camera')[..., 0]        # depth per metre of ray
    lengths = sim.sensors.cast_rays(origins, dirs, (30.0 / along).reshape(-1),
                                    ignore_link='base').reshape(depth.shape)
    assert np.array_equal(np.isinf(depth), np.isinf(lengths))
    finite = np.isfinite(depth)
    assert np.max(np.abs(depth[finite] - lengths[finite] * along[finite])) < TOLERANCE
    assert finite.mean() > 0.5 and len(np.unique(np.round(depth[finite], 3))) > 100


@pytest.mark.parametrize('first', (-math.pi, 0.0, -3.0 * math.pi, 1.0))
def test_a_lidars_columns_may_start_anywhere_and_turn_more_than_once(mesh, first):
    # the ball's azimuth seen in every turn the columns make, whatever angle they start from
    turns = 2.5
    samples = int(turns * 720) + 1
    horizontal = {'samples': samples, 'min_angle': first,
                  'max_angle': first + turns * 2.0 * math.pi}
    sim = Simulator.from_urdf(sensor_robot(), room_config(
        mesh, horizontal=horizontal, vertical={'samples': 1}))
    readings = sim.sensors.ranges('lidar')[0]
    origins, dirs = world_rays(sim, 'lidar')
    expected = reference(origins, dirs)
    assert np.max(np.abs(readings - expected)) < TOLERANCE
    azimuths = sim.sensors.range_sensor('lidar').azimuths
    ball = math.radians(60)
    toward = np.abs((azimuths - ball + math.pi) % (2.0 * math.pi) - math.pi) < math.radians(0.25)
    assert toward.sum() >= 2 and np.all(np.abs(readings[toward] - 2.5) < 0.01)


def test_the_sensors_own_link_is_not_seen_but_the_world_has_it(room):
    straight = np.argmin(np.abs(np.linspace(-np.pi, np.pi, AZIMUTHS)))
    ahead = room.sensors.ranges('lidar')[3, straight]
    to_wall = (ROOM[0][1]) / math.cos(0.1)   # past the bracket 0.3 m ahead, to the east wall
    assert abs(ahead - to_wall) < TOLERANCE
    # the bracket is in the collision world: a ray that does not leave it out meets it
    distance, names = room.sensors.cast_rays([0.0, 0.0, HEIGHT], [1.0, 0.0, 0.0], links=True)
    assert names == ['mast'] and abs(distance[0] - 0.275) < TOLERANCE


def test_the_tree_formulation_reads_the_same(room, mesh):
    tree = Simulator.from_urdf(sensor_robot(), room_config(mesh, 'tree'))
    assert tree._engine.kernel_variant == 'tree'
    a, b = room.sensors.ranges('lidar'), tree.sensors.ranges('lidar')
    assert np.array_equal(np.isinf(a), np.isinf(b))
    assert np.max(np.abs(np.where(np.isfinite(a), a - b, 0.0))) < 1e-12


@pytest.mark.parametrize('formulation', ('maximal', 'tree'))
def test_a_lidar_on_a_spinning_link_sees_a_wall_pass_at_the_right_samples(formulation):
    rate, omega = 50.0, 2.0 * math.pi * 1.3          # Hz, rad/s: 0.163 rad between samples
    segment = {'shape': 'box', 'size': [0.2, 1.0, 2.0], 'pose': {'position': [2.1, 1.0, 1.0]}}
    sector = (math.atan2(0.5, 2.0), math.atan2(1.5, 2.0))   # the face x = 2, y in [0.5, 1.5]
    config = {'scene': {'segment': segment}, 'initial_velocities': {'spin': omega},
              'solver': {'formulation': formulation},
              'range_sensors': {'beam': {'link': 'mast', 'rate': rate,
                                         'horizontal': {'samples': 1, 'min_angle': 0.0,
                                                        'max_angle': 0.0}}}}
    sim = Simulator.from_urdf(sensor_robot(), config)
    steps = int(round(1.0 / (rate * sim.dt)))
    seen, expected = [], []
    for k in range(1, 51):
        sim.step(steps)
        sample = sim.sensors.range_sample('beam')
        assert sample.count == k and abs(sample.time - k / rate) < 1e-9
        angle = sim.joint_positions()[0]
        assert abs(angle - omega * k / rate) < 1e-6         # it spins freely
        turned = angle % (2.0 * math.pi)
        assert min(abs(turned - edge) for edge in sector) > 1e-3   # no sample on an edge
        inside = sector[0] < turned < sector[1]
        expected.append(inside)
        seen.append(bool(np.isfinite(sample.ranges[0, 0])))
        if inside:
            assert abs(sample.ranges[0, 0] - 2.0 / math.cos(turned)) < TOLERANCE
    assert seen == expected and 5 <= sum(seen) < 45


@pytest.mark.parametrize('yaw', (0.0, 0.4))
def test_a_depth_camera_facing_a_wall_reads_its_depth_at_every_pixel(yaw):
    wall_at = 2.5
    rot = rpy_to_matrix([0.0, 0.0, yaw])
    centre = np.array([0.0, 0.0, 2.0]) + rot @ [wall_at + 0.1, 0.0, 0.0]   # above the mast
    config = {'scene': {'wall': {'shape': 'box', 'size': [0.2, 20.0, 20.0],
                                 'pose': {'position': centre.tolist(), 'rpy': [0.0, 0.0, yaw]}}},
              'range_sensors': {'camera': {
                  'link': 'base', 'kind': 'depth_camera', 'width': 64, 'height': 48,
                  'horizontal_fov': 1.2, 'pose': {'position': [0.0, 0.0, 2.0],
                                                  'rpy': [0.0, 0.0, yaw]}}}}
    sim = Simulator.from_urdf(sensor_robot(), config)
    depth = sim.sensors.ranges('camera')
    assert depth.shape == (48, 64)
    assert np.max(np.abs(depth - wall_at)) < TOLERANCE   # depth along the axis, not ray length
    spec = sim.sensors.range_sensor('camera')
    assert spec.kind == 'depth_camera' and spec.shape == (48, 64)
    assert abs(spec.focal_length - 32.0 / math.tan(0.6)) < 1e-12
    assert spec.principal_point == (31.5, 23.5)
    assert abs(spec.vertical_fov - 2.0 * math.atan(24.0 * math.tan(0.6) / 32.0)) < 1e-12
    # the top-left pixel looks up and to the left: +y and +z in the camera frame
    corner = sim.sensors.ray_directions('camera')[0, 0]
    assert corner[0] > 0 and corner[1] > 0 and corner[2] > 0
    f = spec.focal_length
    assert np.allclose(corner, np.array([f, 31.5, 23.5]) / np.linalg.norm([f, 31.5, 23.5]))


def test_out_of_range_reads_plus_inf_and_too_near_minus_inf(mesh):
    sim = Simulator.from_urdf(sensor_robot(),
                              room_config(mesh, range={'min': 0.6, 'max': 3.0}))
    readings = sim.sensors.ranges('lidar')
    origins, dirs = world_rays(sim, 'lidar')
    exact = reference(origins, dirs).reshape(readings.shape)
    assert np.all(readings[0] == -np.inf)             # the pedestal top, 0.52 m away
    assert np.array_equal(readings == np.inf, exact > 3.0)
    ok = (exact >= 0.6) & (exact <= 3.0)
    assert np.max(np.abs(readings[ok] - exact[ok])) < TOLERANCE
    assert ok.sum() > 100 and (readings == np.inf).sum() > 100
    wall = {'shape': 'box', 'size': [0.2, 20, 20], 'pose': {'position': [2.6, 0, 2]}}
    eye = {'link': 'base', 'kind': 'depth_camera', 'width': 4, 'height': 3,
           'pose': {'position': [0, 0, 2]}}
    camera = Simulator.from_urdf(sensor_robot(), {'scene': {'wall': wall}, 'range_sensors': {
        'far': dict(eye, range={'min': 0.1, 'max': 2.0}),
        'near': dict(eye, range={'min': 3.0, 'max': 9.0})}})
    assert np.all(camera.sensors.ranges('far') == np.inf)
    assert np.all(camera.sensors.ranges('near') == -np.inf)


def test_noise_has_its_standard_deviation_and_mean_and_readings_their_resolution(mesh):
    fan = {'samples': 1000, 'min_angle': -0.3, 'max_angle': 0.3}
    config = room_config(mesh, rate=100.0, horizontal=fan, vertical={'samples': 1},
                         noise={'mean': 0.01, 'stddev': 0.02})
    config['range_sensors']['coarse'] = dict(config['range_sensors']['lidar'], noise={},
                                             range={'min': 0.1, 'max': 30.0, 'resolution': 0.05})
    sim = Simulator.from_urdf(sensor_robot(), config)
    exact = sim.sensors.measure('lidar')
    assert np.all(np.isfinite(exact)) and exact.shape == (1, 1000)
    sim.step(int(round(1.0 / sim.dt)))
    samples = sim.sensors.history('lidar')
    assert len(samples) == 8 and samples[-1][2] == 100       # the last few are kept
    errors = []
    sim.reset()
    for _ in range(100):
        sim.step(10)
        errors.append(sim.sensors.ranges('lidar') - exact)
    errors = np.concatenate(errors).reshape(-1)
    assert errors.size == 100_000
    assert abs(errors.std() / 0.02 - 1.0) < 0.05
    assert abs(errors.mean() - 0.01) < 4 * 0.02 / math.sqrt(errors.size)
    coarse = sim.sensors.ranges('coarse')
    assert np.allclose(coarse / 0.05, np.round(coarse / 0.05), rtol=0, atol=1e-9)
    assert np.max(np.abs(coarse - exact)) <= 0.025 + 1e-12


def test_samples_come_at_the_rate_and_hold_between(room):
    room.reset()
    before = room.sensors.range_sample('lidar')
    assert before.count == 0                          # the exact reading of the state now
    room.step(99)
    assert room.sensors.range_sample('lidar').count == 0
    room.step(1)
    first = room.sensors.range_sample('lidar')
    assert first.count == 1 and abs(first.time - 0.1) < 1e-12
    room.step(50)
    held = room.sensors.range_sample('lidar')
    assert held.count == 1 and held.ranges is first.ranges      # held, not cast again
    assert not held.ranges.flags.writeable
    time, values, count = room.sensors.sample('lidar')
    assert count == 1 and values is first.ranges
    assert room.sensors.frame('lidar') == 'lidar'
    assert np.array_equal(first.ranges, before.ranges)         # nothing moved, noise off
    with pytest.raises(CommandError, match="unknown range sensor 'lidr'.*did you mean 'lidar'"):
        room.sensors.ranges('lidr')


def test_each_robot_of_a_world_reads_its_own_range_sensors_and_sees_the_others():
    body = collision_box((0.4, 0.4, 0.4), xyz='0 0 0.2') + box_inertial(5.0, (0.4, 0.4, 0.4))
    description = robot('cart', link('base', body))
    config = {'range_sensors': {'front': {
        'link': 'base', 'pose': {'position': [0.0, 0.0, 0.2]},
        'horizontal': {'samples': 3, 'min_angle': -0.1, 'max_angle': 0.1}}}}
    sim = Simulator.from_world({'robots': {
        'a': {'description': description, 'config': config},
        'b': {'description': description, 'config': config,
              'pose': {'position': [3.0, 0.0, 0.0], 'rpy': [0.0, 0.0, math.pi]}}}})
    assert sim.sensors.range_names == ('a/front', 'b/front')
    for name in ('a', 'b'):
        view = sim.robots[name]
        assert view.range_names == ('front',) and view.sensors.range_names == ('front',)
        spec = view.sensors.range_sensor('front')
        assert spec.name == 'front' and spec.link == 'base'
        ahead = view.ranges('front')[0, 1]
        assert abs(ahead - 2.8) < TOLERANCE            # the other cart's near face
        assert np.array_equal(view.sensors.ranges('front'), view.ranges('front'))


def test_a_spawned_object_is_seen_and_a_deleted_one_no_more():
    config = {'range_sensors': {'front': {
        'link': 'mast', 'rate': 100.0,
        'horizontal': {'samples': 3, 'min_angle': -0.05, 'max_angle': 0.05}}}}
    sim = Simulator.from_urdf(sensor_robot(), config)
    assert np.all(sim.sensors.ranges('front') == np.inf)
    sim.entities.spawn('crate', {'shape': 'box', 'size': [0.4, 0.4, 0.4]},
                       position=(2.2, 0.0, HEIGHT))
    sim.step(10)
    assert abs(sim.sensors.ranges('front')[0, 1] - 2.0) < TOLERANCE
    distance, names = sim.sensors.cast_rays([0, 0, HEIGHT], [1, 0, 0], ignore_link='mast',
                                            links=True)
    assert names == ['crate'] and abs(distance[0] - 2.0) < TOLERANCE
    sim.entities.delete('crate')
    sim.step(10)
    assert np.all(sim.sensors.ranges('front') == np.inf)


def test_urdf_gazebo_tags_declare_lidars_and_depth_cameras_and_the_config_wins(caplog):
    tags = """
    <gazebo reference="mast"><sensor name="scan" type="gpu_lidar"><update_rate>20</update_rate>
      <pose>0.1 0 0.05 0 0 0.2</pose><lidar><scan>
        <horizontal><samples>90</samples><resolution>1</resolution><min_angle>-0.5</min_angle>
          <max_angle>0.5</max_angle></horizontal>
        <vertical><samples>4</samples><min_angle>-0.2</min_angle><max_angle>0.1</max_angle>
          </vertical></scan>
        <range><min>0.2</min><max>12</max><resolution>0.01</resolution></range>
        <noise><type>gaussian</type><mean>0.001</mean><stddev>0.01</stddev></noise></lidar>
    </sensor>
    <sensor name="classic" type="ray"><ray><scan><horizontal><samples>5</samples>
      <min_angle>-1</min_angle><max_angle>1</max_angle></horizontal></scan>
      <range><min>0.3</min><max>5</max></range></ray></sensor>
    <sensor name="eye" type="depth_camera"><update_rate>30</update_rate><camera>
      <horizontal_fov>1.2</horizontal_fov><image><width>64</width><height>48</height></image>
      <clip><near>0.05</near><far>8</far></clip></camera></sensor>
    <sensor name="broken" type="lidar"><lidar><range><max>far</max></range></lidar></sensor>
    </gazebo>"""
    urdf = sensor_robot().replace('</robot>', tags + '</robot>')
    model, _ = load_model(urdf, {'range_sensors': {'classic': {'link': 'base', 'rate': 5.0}}})
    sensors = {s.name: s for s in model.range_sensors}
    assert set(sensors) == {'scan', 'classic', 'eye'}
    scan = sensors['scan']
    assert scan.kind == 'lidar' and scan.link == 'mast' and scan.rate == 20.0
    assert scan.horizontal == (90, -0.5, 0.5) and scan.vertical == (4, -0.2, 0.1)
    assert (scan.range_min, scan.range_max, scan.resolution) == (0.2, 12.0, 0.01)
    assert (scan.noise_mean, scan.noise_stddev) == (0.001, 0.01)
    assert np.allclose(scan.pos, [0.1, 0.0, 0.05])
    assert np.allclose(scan.quat, [math.cos(0.1), 0.0, 0.0, math.sin(0.1)])
    assert abs(scan.angle_increment - 1.0 / 89) < 1e-15
    eye = sensors['eye']
    assert eye.kind == 'depth_camera' and (eye.width, eye.height) == (64, 48)
    assert (eye.horizontal_fov, eye.range_min, eye.range_max, eye.rate) == (1.2, 0.05, 8.0, 30.0)
    # the config's entry of the same name replaces the tag's
    assert sensors['classic'].link == 'base' and sensors['classic'].rate == 5.0
    assert sensors['classic'].horizontal == (361, -math.pi, math.pi)
    assert any("'broken'" in r.message and "'far'" in r.message for r in caplog.records)


BAD = [
    ({'link': 'mats'}, "range sensor 'lidar' is fixed to link 'mats'", "did you mean 'mast'"),
    ({'range': {'min': -1.0}}, "key 'range_sensors.lidar.range.min' must be", '(m)'),
    ({'range': {'min': 5.0, 'max': 2.0}}, "'range_sensors.lidar.range.min' must be",
     'below range.max (2 m)'),
    ({'range': {'max': 0.0}}, "'range_sensors.lidar.range.max' must be", '(m)'),
    ({'horizontal': {'samples': -5}}, "'range_sensors.lidar.horizontal.samples' must be",
     'an integer >= 1 (count)'),
    ({'vertical': {'samples': 0}}, "'range_sensors.lidar.vertical.samples' must be", '(count)'),
    ({'horizontal': {'min_angle': 1.0, 'max_angle': -1.0}},
     "'range_sensors.lidar.horizontal.min_angle' must be", 'not above max_angle (-1 rad)'),
    ({'vertical': {'min_angle': -2.0}}, "'range_sensors.lidar.vertical.min_angle' must be",
     '(rad)'),
    ({'kind': 'depth_camera', 'horizontal_fov': 3.5},
     "'range_sensors.lidar.horizontal_fov' must be", 'below pi, 3.14159 (rad)'),
    ({'kind': 'depth_camera', 'horizontal_fov': math.pi}, 'horizontal_fov', '(rad)'),
    ({'kind': 'depth_camera', 'width': 0}, "'range_sensors.lidar.width' must be", '(pixels)'),
    ({'rate': -1.0}, "'range_sensors.lidar.rate' must be", '(Hz)'),
    ({'noise': {'stddev': -0.1}}, "'range_sensors.lidar.noise.stddev' must be", '(m)'),
    ({'kind': 'radar'}, "'range_sensors.lidar.kind' must be one of 'lidar', 'depth_camera'", ''),
    ({'width': 10}, "'range_sensors.lidar.width' is not a lidar's", 'horizontal, vertical'),
    ({'kind': 'depth_camera', 'horizontal': {'samples': 3}}, "is not a depth_camera's",
     'width, height, horizontal_fov'),
    ({'link': None}, "'range_sensors.lidar.link' must be a link name", ''),
]


@pytest.mark.parametrize('change, says, unit', BAD)
def test_bad_input_is_one_line_naming_the_key_and_its_unit(change, says, unit):
    settings = {'link': 'mast', **change}
    with pytest.raises(ConfigError) as caught:
        Simulator.from_urdf(sensor_robot(), {'range_sensors': {'lidar': settings}})
    text = str(caught.value)
    assert says in text and unit in text and '\n' not in text, text


def test_the_config_section_and_its_defaults():
    config = load_config({'range_sensors': {'front': {'link': 'mast'}}})
    front = config.range_sensors['front']
    assert front.kind == 'lidar' and front.rate == 10.0
    assert (front.range.min, front.range.max, front.range.resolution) == (0.1, 30.0, 0.0)
    assert (front.horizontal.samples, front.vertical.samples) == (361, 1)
    assert front.vertical.min_angle == front.vertical.max_angle == 0.0
    assert (front.noise.mean, front.noise.stddev) == (0.0, 0.0)
    # as ROS parameters give them: dotted keys
    flat = load_config({'range_sensors.front.link': 'mast', 'range_sensors.front.rate': 5})
    assert flat.range_sensors['front'].rate == 5.0


def test_jointsim_precompile_compiles_the_ray_kernels_a_simulation_calls(room):
    # numba keys its cache on the argument types: the precompiled robot's lidar and the
    # precompile job's rays.cast arguments must type as every simulation's calls do
    import numba
    from jointsim_ros.physics import rays
    from jointsim_ros.tools import precompile

    def calls_of(sim):
        calls = {}
        original = sim.sensors._call

        def record(dispatcher, args):
            calls[dispatcher] = tuple(numba.typeof(a) for a in args)
            return original(dispatcher, args)
        sim.sensors._call = record
        sim.sensors.measure(sim.sensors.range_names[0])
        sim.sensors.cast_rays([0.0, 0.0, 1.0], [1.0, 0.0, 0.0])
        del sim.sensors._call
        return calls

    ours = calls_of(room)
    assert calls_of(Simulator.from_urdf(*precompile.model('maximal'))) == ours
    assert ours[rays.cast] == tuple(numba.typeof(a) for a in precompile.ray_cast_arguments())
