"""
Contact scenarios against analytic answers (docs/contacts.md).

Free bodies are scene objects from the config; the robot is an empty URDF unless a test needs
one.  Gravity 9.81 m/s^2, dt 1 ms, the default 20 iterations.  The scenarios run in both
formulations (``formulation``): one contact pipeline, each formulation its own mechanics.
"""
import math
from pathlib import Path

from jointsim_ros import Simulator
from jointsim_ros.errors import ConfigError
import numpy as np
import pytest

G = 9.81
FIXTURES = Path(__file__).resolve().parent / 'fixtures' / 'urdf'
EMPTY = '<robot name="empty"><link name="base"/></robot>'


FORMULATIONS = ('maximal', 'tree')
both = pytest.mark.parametrize('formulation', FORMULATIONS)


def scene(objects, formulation='maximal', **extra):
    """Return a Simulator with an empty robot and the given scene objects (each a free body)."""
    return Simulator.from_urdf(EMPTY, {'scene': objects, 'solver': {'formulation': formulation},
                                       **extra})


def box(size=(0.2, 0.2, 0.2), mass=1.0, position=(0.0, 0.0, 0.1), **more):
    """Return a scene entry for a free box."""
    return {'shape': 'box', 'size': list(size), 'mass': mass,
            'pose': {'position': list(position)}, **more}


@both
def test_box_comes_to_rest_on_the_ground_and_stays(formulation):
    sim = scene({'box': box(position=(0.0, 0.0, 0.15))}, formulation=formulation)
    sim.step(1000)
    start, _ = sim.link_pose('box')
    assert abs(start[2] - 0.1) <= 1e-3  # penetration at most 1 mm
    sim.step(10000)
    end, quat = sim.link_pose('box')
    assert np.linalg.norm(end - start) < 1e-6
    assert np.linalg.norm(sim.link_twist('box')[0]) < 1e-6
    assert abs(abs(quat[0]) - 1.0) < 1e-9
    touching = sim.contacts()
    assert len(touching) == 4 and {c.link_b for c in touching} == {'ground'}
    assert sum(c.normal_force for c in touching) == pytest.approx(G, rel=1e-6)


@both
def test_contact_points_keep_their_identity(formulation):
    sim = scene({'box': box(position=(0.0, 0.0, 0.1))}, formulation=formulation)
    sim.step(10)
    first = sorted(c.id for c in sim.contacts())
    sim.step(500)
    assert sorted(c.id for c in sim.contacts()) == first


@pytest.mark.parametrize('mu,v0', [(0.5, 2.0), (0.2, 1.0)])
@both
def test_sliding_block_stops_after_v0_squared_over_2_mu_g(mu, v0, formulation):
    block = box(size=(0.2, 0.2, 0.1), position=(0.0, 0.0, 0.05), friction=mu,
                linear_velocity=[v0, 0.0, 0.0])
    sim = scene({'block': block}, formulation=formulation)
    # stuck once it is slower than 1 mm/s: on the compliant floor the block, tipped forward by
    # the friction while it slid (its front springs pressed deeper), then rocks back to level
    # over some 0.1 s at ~1e-4 m/s, which is no sliding
    while np.linalg.norm(sim.link_twist('block')[0]) > 1e-3 and sim.time < 5.0:
        sim.step(1)
    travelled = sim.link_pose('block')[0][0]
    assert travelled == pytest.approx(v0 ** 2 / (2 * mu * G), rel=0.02)
    assert sim.time == pytest.approx(v0 / (mu * G), abs=0.01)
    sim.step(300)
    assert sim.link_pose('block')[0][0] == pytest.approx(travelled, abs=1e-5)


@pytest.mark.parametrize('ratio', [0.95, 1.05])
@both
def test_incline_sticks_below_tan_theta_equal_mu_and_slides_above(ratio, formulation):
    mu = 0.4
    theta = math.atan(ratio * mu)
    # a plane tilted by theta: the ground, with gravity turned by theta about y
    gravity = [G * math.sin(theta), 0.0, -G * math.cos(theta)]
    sim = scene({'block': box(size=(0.2, 0.2, 0.05), position=(0.0, 0.0, 0.025), friction=mu)},
                gravity=gravity, formulation=formulation)
    sim.step(200)
    x0 = sim.link_pose('block')[0][0]
    v0 = sim.link_twist('block')[0][0]
    sim.step(1000)
    x1 = sim.link_pose('block')[0][0]
    if ratio < 1.0:
        assert abs(x1 - x0) < 1e-6
    else:
        accel = G * (math.sin(theta) - mu * math.cos(theta))
        assert x1 - x0 == pytest.approx(v0 * 1.0 + 0.5 * accel, rel=0.02)


@pytest.mark.parametrize('e', [0.5, 0.8])
@both
def test_ball_rebounds_to_e_squared_h(e, formulation):
    h = 1.0
    r = 0.05
    sim = scene({'ball': {'shape': 'sphere', 'radius': r, 'mass': 0.5, 'restitution': e,
                          'pose': {'position': [0.0, 0.0, h + r]}}}, formulation=formulation)
    bounced = False
    apex = 0.0
    while sim.time < 2.5:
        sim.step(1)
        z = sim.link_pose('ball')[0][2] - r
        vz = sim.link_twist('ball')[0][2]
        if vz > 0:
            bounced = True
        if bounced:
            apex = max(apex, z)
            if vz < 0:
                break
    assert apex == pytest.approx(e * e * h, rel=0.01)


@both
def test_rolling_ball_decelerates_under_rolling_friction(formulation):
    r, m, mu_r, v0 = 0.1, 1.0, 0.002, 1.0
    ball = {'shape': 'sphere', 'radius': r, 'mass': m, 'rolling_friction': mu_r,
            'pose': {'position': [0.0, 0.0, r]}, 'linear_velocity': [v0, 0.0, 0.0],
            'angular_velocity': [0.0, v0 / r, 0.0]}
    sim = scene({'ball': ball}, formulation=formulation)
    # rolling without slipping: (m + I / r^2) a = -mu_r m g / r, I = 2/5 m r^2
    accel = mu_r * G / (r * 1.4)
    sim.step(1000)
    v = sim.link_twist('ball')[0][0]
    assert v == pytest.approx(v0 - accel * 1.0, rel=1e-3)
    while sim.link_twist('ball')[0][0] > 1e-9 and sim.time < 20.0:
        sim.step(10)
    assert sim.link_pose('ball')[0][0] == pytest.approx(v0 ** 2 / (2 * accel), rel=0.02)
    w = sim.link_twist('ball')[1]
    assert np.linalg.norm(w) < 1e-6


@both
def test_ball_without_rolling_friction_keeps_rolling(formulation):
    r, m, v0 = 0.1, 1.0, 1.0
    ball = {'shape': 'sphere', 'radius': r, 'mass': m, 'pose': {'position': [0.0, 0.0, r]},
            'linear_velocity': [v0, 0.0, 0.0], 'angular_velocity': [0.0, v0 / r, 0.0]}
    sim = scene({'ball': ball}, formulation=formulation)
    sim.step(2000)
    # on the compliant floor the ball sits d = m g / k deep and the contact point is midway
    # between the surfaces, r_c = r - d / 2 below the centre (k: the link's and the ground's
    # default stiffness in series).  Friction makes that point roll: angular momentum about it
    # is kept, m v0 r_c + I v0 / r = v (m r_c + I / r_c), I = 2/5 m r^2; then no more friction
    k = 1.0 / (1.0 / 2e5 + 1.0 / 1e8)
    r_c = r - 0.5 * m * G / k
    inertia = 0.4 * m * r * r
    rolling = v0 * (m * r_c + inertia / r) / (m * r_c + inertia / r_c)
    assert sim.link_twist('ball')[0][0] == pytest.approx(rolling, rel=1e-6)
    assert sim.link_twist('ball')[1][1] * r_c == pytest.approx(rolling, rel=1e-6)


@both
def test_spinning_top_stops_under_spinning_friction(formulation):
    r, m, mu_s, w0 = 0.05, 0.3, 0.01, 20.0
    top = {'shape': 'sphere', 'radius': r, 'mass': m, 'spinning_friction': mu_s,
           'pose': {'position': [0.0, 0.0, r]}, 'angular_velocity': [0.0, 0.0, w0]}
    sim = scene({'top': top}, formulation=formulation)
    inertia = 0.4 * m * r * r
    decel = mu_s * m * G / inertia
    sim.step(100)
    assert sim.link_twist('top')[1][2] == pytest.approx(w0 - decel * 0.1, rel=1e-3)
    stop = w0 / decel
    sim.step(int(stop / sim.dt) + 200)
    assert abs(sim.link_twist('top')[1][2]) < 1e-9
    assert np.linalg.norm(sim.link_pose('top')[0][:2]) < 1e-9


@both
def test_capsule_lying_down_and_cylinder_standing_rest_on_two_and_four_points(formulation):
    objects = {
        'capsule': {'shape': 'capsule', 'radius': 0.05, 'length': 0.3, 'mass': 1.0,
                    'pose': {'position': [0.0, 0.0, 0.06], 'rpy': [0.0, math.pi / 2, 0.0]}},
        'can': {'shape': 'cylinder', 'radius': 0.05, 'length': 0.2, 'mass': 1.0,
                'pose': {'position': [1.0, 0.0, 0.101]}},
        'log': {'shape': 'cylinder', 'radius': 0.05, 'length': 0.4, 'mass': 1.0,
                'pose': {'position': [2.0, 0.0, 0.051], 'rpy': [math.pi / 2, 0.0, 0.0]}}}
    sim = scene(objects, formulation=formulation)
    sim.step(1000)
    count = {}
    for c in sim.contacts():
        count[c.link_a] = count.get(c.link_a, 0) + 1
    assert count == {'capsule': 2, 'can': 4, 'log': 2}
    assert sim.link_pose('capsule')[0][2] == pytest.approx(0.05, abs=1e-3)
    assert sim.link_pose('can')[0][2] == pytest.approx(0.1, abs=1e-3)
    assert sim.link_pose('log')[0][2] == pytest.approx(0.05, abs=1e-3)


def test_static_geometry_and_ground_settings():
    sim = scene({'table': {'shape': 'box', 'size': [1.0, 1.0, 0.5],
                           'pose': {'position': [0.0, 0.0, 0.25]}},
                 'ball': {'shape': 'sphere', 'radius': 0.1, 'mass': 1.0,
                          'pose': {'position': [0.0, 0.0, 0.7]}}},
                ground={'height': -1.0})
    sim.step(1000)
    assert sim.link_pose('ball')[0][2] == pytest.approx(0.6, abs=1e-3)
    assert [c.link_b for c in sim.contacts()] == ['table']


def test_scene_and_contact_errors_name_the_key():
    with pytest.raises(ConfigError, match="scene object 'b' is a box without size"):
        scene({'b': {'shape': 'box', 'mass': 1.0}})
    with pytest.raises(ConfigError, match="contacts names link 'bse'.*did you mean 'base'"):
        Simulator.from_urdf(EMPTY, {'contacts': {'bse': {'friction': 0.5}}})
    with pytest.raises(ConfigError, match="ground.friction' must be a number >= 0"):
        scene({}, ground={'friction': -1})
    with pytest.raises(ConfigError, match="'base' has the name of a robot link"):
        scene({'base': box()})


def hold_pose(sim, targets, seconds, kp, kd, record=()):
    """
    Run a joint PD controller written here, tau = kp (q* - q) - kd qdot, for some seconds.

    Returns:
        dict link -> (positions at 0.5 s, positions at the end) of the recorded links.
    """
    names = sim.joint_names
    q_star = np.array([targets.get(n, 0.0) for n in names])
    marks = {}
    steps = int(round(seconds / sim.dt))
    for k in range(steps):
        q = sim.joint_positions()
        qd = sim.joint_velocities()
        sim.set_joint_efforts(dict(zip(names, kp * (q_star - q) - kd * qd)))
        sim.step(1)
        if k + 1 == int(round(0.5 / sim.dt)):
            marks = {link: sim.link_pose(link)[0] for link in record}
    return {link: (marks[link], sim.link_pose(link)[0]) for link in record}


def weight(sim):
    """Return the weight of all the bodies, N."""
    return sum(b.mass for b in sim.model.bodies) * G


def place_on_ground(source, config, feet, clearance):
    """Return a Simulator whose lowest foot frame starts ``clearance`` above z = 0."""
    probe = Simulator.from_urdf(source, {**config, 'base_pose': {'position': [0.0, 0.0, 1.0]}})
    low = min(probe.link_pose(f)[0][2] for f in feet)
    start = {'position': [0.0, 0.0, 1.0 - low + clearance]}
    return Simulator.from_urdf(source, {**config, 'base_pose': start})


def quadruped_on_the_ground():
    """Return ANYmal C placed with its feet 1 mm above the ground, its stance and its feet."""
    stand = {}
    for leg in ('LF', 'RF', 'LH', 'RH'):
        front = leg[1] == 'F'
        stand[f'{leg}_HFE'] = 0.6 if front else -0.6
        stand[f'{leg}_KFE'] = -1.2 if front else 1.2
    feet = [f'{leg}_FOOT' for leg in ('LF', 'RF', 'LH', 'RH')]
    # the foot frame is 0.0225 m below its sphere's centre (radius 0.03): start 1 mm above
    config = {'base': 'floating', 'initial_positions': stand}
    sim = place_on_ground(str(FIXTURES / 'anymal_c.urdf'), config, feet,
                          clearance=0.03 - 0.0225 + 0.001)
    return sim, stand, feet


def test_published_quadruped_stands_on_its_feet_without_sliding():
    """Stand ANYmal C (its own collision shapes: sphere feet) under a PD controller, 10 s."""
    sim, stand, feet = quadruped_on_the_ground()
    moved = hold_pose(sim, stand, 10.0, kp=300.0, kd=8.0, record=feet + ['base'])
    for foot in feet:
        start, end = moved[foot]
        assert np.linalg.norm((end - start)[:2]) <= 1e-3, foot
    touching = sim.contacts()
    assert sorted(c.link_a for c in touching) == sorted(feet)
    assert sum(c.normal_force for c in touching) == pytest.approx(weight(sim), rel=1e-3)
    assert moved['base'][1][2] > 0.4  # standing, not collapsed


def test_biped_balances_in_double_support_on_four_corners_per_foot():
    from robots import biped
    bend = {'l_hip': -0.3, 'r_hip': -0.3, 'l_knee': 0.6, 'r_knee': 0.6, 'l_ankle': -0.3,
            'r_ankle': -0.3}
    feet = ['l_foot', 'r_foot']
    sim = place_on_ground(biped(), {'base': 'floating', 'initial_positions': bend}, feet,
                          clearance=0.04 + 0.0005)
    moved = hold_pose(sim, bend, 5.0, kp=800.0, kd=20.0, record=feet + ['torso'])
    for foot in feet:
        start, end = moved[foot]
        assert np.linalg.norm(end - start) <= 1e-3, foot
        assert sum(1 for c in sim.contacts() if c.link_a == foot) == 4
    _, quat = sim.link_pose('torso')
    assert abs(quat[0]) > math.cos(0.5 * 0.05)  # upright within 0.05 rad
    assert sum(c.normal_force for c in sim.contacts()) == pytest.approx(weight(sim), rel=1e-3)


@both
def test_stack_of_boxes_stands_still(formulation):
    objects = {f'box{k}': box(size=(0.3, 0.3, 0.2), position=(0.0, 0.0, 0.1 + 0.201 * k))
               for k in range(4)}
    sim = scene(objects, formulation=formulation)
    sim.step(1000)
    start = {name: sim.link_pose(name)[0] for name in objects}
    sim.step(5000)
    for k, name in enumerate(objects):
        end = sim.link_pose(name)[0]
        assert end[2] == pytest.approx(0.1 + 0.2 * k, abs=1e-3 * (k + 1)), name
        assert np.linalg.norm(end - start[name]) < 1e-5, name
    pairs = {frozenset((c.link_a, c.link_b)) for c in sim.contacts()}
    assert pairs == {frozenset(p) for p in (('box0', 'ground'), ('box0', 'box1'),
                                            ('box1', 'box2'), ('box2', 'box3'))}
    assert len(sim.contacts()) == 16
    bottom = sum(c.normal_force for c in sim.contacts() if c.link_b == 'ground')
    assert bottom == pytest.approx(4 * G, rel=1e-3)


@both
def test_incline_made_of_a_static_box_holds_and_releases_a_block(formulation):
    mu = 0.5
    for ratio, slides in ((0.9, False), (1.1, True)):
        theta = math.atan(ratio * mu)
        normal = np.array([-math.sin(theta), 0.0, math.cos(theta)])
        # the ramp's top face passes through the origin; the block sits on it
        ramp = {'shape': 'box', 'size': [4.0, 1.0, 0.2], 'friction': mu,
                'pose': {'position': list(-0.1 * normal), 'rpy': [0.0, -theta, 0.0]}}
        block = {'shape': 'box', 'size': [0.2, 0.2, 0.1], 'mass': 1.0, 'friction': mu,
                 'pose': {'position': list(0.0505 * normal), 'rpy': [0.0, -theta, 0.0]}}
        sim = scene({'ramp': ramp, 'block': block}, ground={'enabled': False},
                    formulation=formulation)
        sim.step(300)
        x0 = sim.link_pose('block')[0]
        sim.step(500)
        moved = np.linalg.norm(sim.link_pose('block')[0] - x0)
        assert (moved > 0.01) == slides and (slides or moved < 1e-6), (ratio, moved)


def write_obj_box(path, half):
    """Write an OBJ file of a box with the given half extents (its 8 corners, 12 triangles)."""
    corners = [(x, y, z) for x in (-half[0], half[0]) for y in (-half[1], half[1])
               for z in (-half[2], half[2])]
    faces = ((1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6))
    lines = [f'v {x} {y} {z}' for x, y, z in corners]
    lines += [f'f {a} {b} {c}\nf {a} {c} {d}' for a, b, c, d in faces]
    path.write_text('\n'.join(lines) + '\n')


def test_mesh_link_found_through_the_ament_prefix_collides_as_its_hull(tmp_path, monkeypatch):
    share = tmp_path / 'install' / 'share' / 'crate_pkg' / 'meshes'
    share.mkdir(parents=True)
    write_obj_box(share / 'crate.obj', (0.1, 0.15, 0.05))
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'install'))
    from robots import box_inertial, link, robot
    urdf = robot('crate', link('crate', box_inertial(2.0, (0.2, 0.3, 0.1))
                               + '<collision><geometry><mesh filename="package://crate_pkg/'
                               'meshes/crate.obj" scale="1 1 2"/></geometry></collision>'))
    sim = Simulator.from_urdf(urdf, {'base': 'floating',
                                     'base_pose': {'position': [0.0, 0.0, 0.3]}})
    assert [s.kind for s in sim.model.shapes] == ['convex', 'plane']
    sim.step(1500)
    # scaled 2x along z: 0.2 m tall, so it rests with its origin 0.1 m up, on four corners
    assert sim.link_pose('crate')[0][2] == pytest.approx(0.1, abs=1e-3)
    assert len(sim.contacts()) == 4


def test_missing_mesh_warns_once_and_falls_back_to_the_inertia_box(caplog):
    from robots import box_inertial, link, robot
    urdf = robot('crate', link('crate', box_inertial(2.0, (0.2, 0.3, 0.1))
                               + '<collision><geometry><mesh filename="package://nowhere/'
                               'crate.stl"/></geometry></collision>'))
    sim = Simulator.from_urdf(urdf, {'base': 'floating',
                                     'base_pose': {'position': [0.0, 0.0, 0.3]}})
    messages = [m for m in sim.model.warnings if 'nowhere/crate.stl' in m]
    assert len(messages) == 1 and 'inertia' in messages[0]
    shape = sim.model.shapes[0]
    assert shape.kind == 'box'
    assert sorted(shape.size) == pytest.approx([0.05, 0.1, 0.15])
    sim.step(1500)
    assert sim.link_pose('crate')[0][2] == pytest.approx(0.05, abs=1e-3)


def test_a_bolted_arm_with_nothing_to_touch_carries_no_shapes():
    arm = str(Path(__file__).resolve().parents[1] / 'urdf' / 'jointsim_arm.urdf.xacro')
    assert Simulator.from_urdf(arm).model.shapes == ()
    touching = Simulator.from_urdf(arm, {'ground': {'enabled': True, 'height': 0.2}})
    assert {s.kind for s in touching.model.shapes} >= {'plane'}
    assert len(touching.model.shapes) > 1


def folding_arm(collide_upper=True):
    """Return a two-link arm on a fixed post whose second link can swing through the first."""
    from robots import box_inertial, collision_box, joint, link, robot
    lim = '<limit lower="-4" upper="4" effort="100" velocity="100"/>'
    return robot(
        'folding', link('post'),
        link('upper', box_inertial(1.0, (0.6, 0.1, 0.1), xyz='0.3 0 0')
             + (collision_box((0.6, 0.1, 0.1), xyz='0.3 0 0') if collide_upper else '')),
        link('lower', box_inertial(1.0, (0.6, 0.1, 0.1), xyz='0.3 0 0')
             + collision_box((0.6, 0.1, 0.1), xyz='0.3 0 0')),
        link('tip', box_inertial(0.5, (0.1, 0.1, 0.1))
             + collision_box((0.1, 0.1, 0.1))),
        joint('shoulder', 'revolute', 'post', 'upper', axis='0 0 1', extra=lim),
        joint('elbow', 'revolute', 'upper', 'lower', xyz='0.6 0 0', axis='0 1 0', extra=lim),
        joint('wrist', 'fixed', 'lower', 'tip', xyz='0.65 0 0'))


@pytest.mark.parametrize('settings,blocked', [
    ({}, False),
    ({'self_collision': True}, True),
    ({'self_collision': True, 'disabled_pairs': [['upper', 'tip']]}, False),
    ({'self_collision_pairs': [['tip', 'upper']]}, True),
])
@both
def test_self_collision_is_off_by_default_and_filtered_by_pairs(settings, blocked, formulation):
    """
    Fold the elbow so the tip (merged into the lower link) swings down onto the upper link.

    The lower link joins the upper one at the elbow (adjacent: never collides); only the tip,
    0.65 m out, can reach the upper link when the elbow folds past 180 degrees.
    """
    sim = Simulator.from_urdf(folding_arm(), {'gravity': [0, 0, 0], 'collision': settings,
                                              'solver': {'formulation': formulation},
                                              'initial_positions': {'elbow': -2.8}})
    sim.set_joint_state({'elbow': -2.8}, {'elbow': -2.0})
    sim.step(1000)
    folded = sim.joint_positions()[sim.joint_names.index('elbow')]
    # the tip's box meets the upper link's box at about -pi + asin((0.1) / 0.65) ~ -2.99 rad
    assert (folded > -3.05) == blocked, folded
    if blocked:
        # (the points found: at rest without gravity the pair may touch without force)
        assert {frozenset((c.link_a, c.link_b)) for c in sim.contacts(touching=False)} == {
            frozenset(('tip', 'upper'))}


@both
def test_penetration_is_removed_without_adding_velocity(formulation):
    # the rigid model's split-impulse push moves positions only
    sim = scene({'box': box(position=(0.0, 0.0, 0.1 - 0.02))}, gravity=[0, 0, 0],
                collision={'contact_model': 'rigid'}, formulation=formulation)
    sim.step(50)
    assert sim.link_pose('box')[0][2] == pytest.approx(0.1, abs=2e-4)
    assert np.linalg.norm(sim.link_twist('box')[0]) < 1e-12  # pushed out by positions only
    sim.step(500)
    assert sim.link_pose('box')[0][2] == pytest.approx(0.1, abs=2e-4)


@both
def test_elastic_ball_never_gains_energy_and_sliding_friction_opposes_motion(formulation):
    ball = {'shape': 'sphere', 'radius': 0.05, 'mass': 0.5, 'restitution': 1.0,
            'pose': {'position': [0.0, 0.0, 0.55]}}
    sim = scene({'ball': ball}, formulation=formulation)
    apex = []
    z_prev, rising = 0.55, False
    while sim.time < 3.0:
        sim.step(1)
        z = sim.link_pose('ball')[0][2]
        if rising and z <= z_prev:
            apex.append(z_prev)
        rising = z > z_prev
        z_prev = z
    # the bounce takes the approach speed at the start of its step, so the energy symplectic
    # Euler conserves in flight is kept across it: every apex is the first one
    assert len(apex) >= 4
    assert max(apex) - min(apex) < 1e-9, apex
    assert apex[0] == pytest.approx(0.55, abs=2 * math.sqrt(2 * G * 0.5) * sim.dt)
    block = scene({'block': box(size=(0.2, 0.2, 0.1), position=(0.0, 0.0, 0.05),
                                friction=0.5, linear_velocity=[1.0, 0.0, 0.0])},
                  formulation=formulation)
    block.step(20)
    friction = sum(c.friction_force for c in block.contacts())
    normal = sum(c.normal_force for c in block.contacts())
    # mu times the load the springs carry now (they still settle: m g within 1 %)
    assert normal == pytest.approx(G, rel=0.01)
    assert friction == pytest.approx([-0.5 * normal, 0.0, 0.0], abs=1e-6)


@pytest.mark.parametrize('pairs,blocked', [([], False), ([['arm', 'door']], True)])
@both
def test_articulated_object_in_the_urdf_is_pushed_when_its_pair_collides(
        pairs, blocked, formulation):
    """A door on its own hinge under the URDF's world link, swept by a one-link arm."""
    from robots import box_inertial, collision_box, joint, link, robot
    lim = '<limit lower="-3" upper="3" effort="100" velocity="100"/>'
    urdf = robot(
        'arm_and_door', link('world'),
        link('arm', box_inertial(1.0, (0.6, 0.1, 0.1), xyz='0.3 0 0')
             + collision_box((0.6, 0.1, 0.1), xyz='0.3 0 0')),
        link('door', box_inertial(5.0, (0.05, 0.8, 1.0), xyz='0 0.4 0')
             + collision_box((0.05, 0.8, 1.0), xyz='0 0.4 0')),
        joint('shoulder', 'revolute', 'world', 'arm', xyz='0 0 0.5', axis='0 0 1', extra=lim),
        joint('hinge', 'revolute', 'world', 'door', xyz='0.5 -0.2 0.5', axis='0 0 1',
              extra=lim))
    sim = Simulator.from_urdf(urdf, {'gravity': [0, 0, 0],
                                     'collision': {'self_collision_pairs': pairs},
                                     'solver': {'formulation': formulation}})
    sim.set_joint_state({'shoulder': -0.8}, {'shoulder': 2.0})
    sim.step(1000)
    shoulder, hinge = sim.joint_positions()
    if blocked:
        assert shoulder < -0.3 and abs(hinge) > 1e-3
    else:
        assert shoulder == pytest.approx(1.2, abs=1e-6) and hinge == 0.0


@both
def test_contact_arrays_grow_when_a_step_finds_more_than_they_hold(formulation):
    objects = {f'box{k}': box(position=(0.25 * (k % 3), 0.25 * (k // 3), 0.1)) for k in range(9)}
    reference = scene(objects, formulation=formulation)
    sim = scene(objects, formulation=formulation)
    sim._engine._allocate_contacts(4, 2)  # far too small: 36 points, 12 touching pairs
    reference.step(300)
    sim.step(300)
    assert len(sim._engine.contacts.id) >= 36
    assert len(sim.contacts()) == len(reference.contacts()) == 36
    for name in objects:
        assert sim.link_pose(name)[0] == pytest.approx(reference.link_pose(name)[0], abs=1e-6)


@both
def test_contact_arrays_grow_when_bodies_first_touch_between_single_steps(formulation):
    # the boxes fall 0.2 m first: the arrays overflow in a later step(1) call, not the first
    objects = {f'box{k}': box(position=(0.25 * (k % 3), 0.25 * (k // 3), 0.3)) for k in range(9)}
    reference = scene(objects, formulation=formulation)
    sim = scene(objects, formulation=formulation)
    sim._engine._allocate_contacts(4, 2)
    reference.step(400)
    for _ in range(400):
        sim.step(1)
    assert sim.time == pytest.approx(reference.time)
    assert len(sim._engine.contacts.id) >= 36
    assert len(sim.contacts()) == len(reference.contacts()) == 36
    for name in objects:
        assert sim.link_pose(name)[0] == pytest.approx(reference.link_pose(name)[0], abs=1e-6)
