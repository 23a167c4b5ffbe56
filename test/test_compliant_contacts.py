"""
Compliant contacts (issue 28): each point a spring-damper, loads shared as real supports share.

docs/contacts.md, "Compliant contacts".

Each expected value is worked out here independently of the engine: the statics of a rigid top
on equal springs, the spring's compression m g / k, the restitution of a damped spring-damper
contact from its damping ratio (the linear ODE solved in closed form), a car's acceleration
from its torques and inertias.
"""
import math
import os

from jointsim_ros import Simulator
from jointsim_ros.description import parse_urdf
from jointsim_ros.description.config import GROUND_STIFFNESS, MATERIAL_NAMES
from jointsim_ros.errors import ConfigError
from jointsim_ros.physics import contacts as ct
import numpy as np
import pytest

G = 9.81
EMPTY = '<robot name="empty"><link name="base"/></robot>'
ROVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'urdf',
                     'jointsim_rover.urdf.xacro')
LINK_STIFFNESS = 2e5  # N/m, collision.stiffness's default
#: The compliant scenarios run in both formulations: one contact pipeline, two mechanics.
both = pytest.mark.parametrize('formulation', ['maximal', 'tree'])


def series(*stiffnesses):
    """Return the stiffness of springs in series: 1 / k = sum 1 / k_i."""
    return 1.0 / sum(1.0 / k for k in stiffnesses)


# -- a table on four feet: the statics of a rigid top on equal springs ---------------------------
FEET = [(x, y) for x in (0.3, -0.3) for y in (0.2, -0.2)]
LEG = 0.2    # m, the feet's centres below the top's frame
FOOT = 0.02  # m, the feet's radius


def table(com=(0.0, 0.0)):
    """Return a 10 kg table's URDF: one link, four sphere feet at x = +-0.3, y = +-0.2 m."""
    feet = ''.join(f'<collision><origin xyz="{x} {y} {-LEG}"/><geometry><sphere '
                   f'radius="{FOOT}"/></geometry></collision>' for x, y in FEET)
    return (f'<robot name="table"><link name="top"><inertial><origin xyz="{com[0]} {com[1]} 0"/>'
            '<mass value="10"/><inertia ixx="0.2" iyy="0.35" izz="0.5" ixy="0" ixz="0" iyz="0"/>'
            f'</inertial>{feet}</link></robot>')


def spring_loads(mass, com):
    """
    Return the loads of a rigid top on four equal springs at the FEET (small deflections).

    The deflection is a plane, w = a + b x + c y, so F_i = k (a + b x_i + c y_i); force and
    moment balance about the centre give, with the feet symmetric (sum x_i = sum y_i =
    sum x_i y_i = 0), F_i = m g / 4 (1 + cx x_i / X^2 + cy y_i / Y^2).
    """
    big_x, big_y = FEET[0]
    return {(x, y): mass * G / 4 * (1 + com[0] * x / big_x ** 2 + com[1] * y / big_y ** 2)
            for x, y in FEET}


def foot_loads(sim):
    """Return the normal load on each foot, keyed by the nearest of FEET."""
    loads = {}
    for c in sim.contacts():
        foot = min(FEET, key=lambda f: (f[0] - c.position[0]) ** 2 + (f[1] - c.position[1]) ** 2)
        loads[foot] = loads.get(foot, 0.0) + c.normal_force
    return loads


@pytest.mark.parametrize('com', [(0.0, 0.0), (0.1, 0.05)], ids=['centred', 'off-centre'])
@pytest.mark.parametrize('height, rpy', [
    (LEG + FOOT, (0.0, 0.0, 0.0)),      # placed flat on the ground
    (LEG + FOOT + 0.03, (0.03, -0.02, 0.0)),  # dropped 3 cm, tilted
    (LEG + FOOT + 0.1, (0.0, 0.0, 0.3)),      # dropped 10 cm, turned
], ids=['placed', 'dropped-tilted', 'dropped-10cm'])
@both
def test_a_table_carries_the_loads_of_a_compliant_support_whatever_its_drop(com, height, rpy,
                                                                            formulation):
    sim = Simulator.from_urdf(table(com), {'solver': {'formulation': formulation},
                                           'base': 'floating', 'base_pose': {
                                               'position': [0.0, 0.0, height],
                                               'rpy': list(rpy)}})
    sim.step(2000)
    # the feet are where they were put, turned by the yaw
    yaw = rpy[2]
    turn = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
    expected = spring_loads(10.0, com)
    got = {}
    for c in sim.contacts():
        local = turn.T @ (c.position[:2] - sim.link_pose('top')[0][:2])
        foot = min(FEET, key=lambda f: (f[0] - local[0]) ** 2 + (f[1] - local[1]) ** 2)
        got[foot] = got.get(foot, 0.0) + c.normal_force
    assert sorted(got) == sorted(FEET)
    for foot in FEET:
        assert got[foot] == pytest.approx(expected[foot], abs=0.02 * 10.0 * G), (foot, got)


@both
def test_a_box_stands_equally_on_its_four_corners_at_the_spring_compression(formulation):
    k = series(LINK_STIFFNESS, GROUND_STIFFNESS)
    mass = 2.0
    sim = Simulator.from_urdf(EMPTY, {'solver': {'formulation': formulation}, 'scene': {'box': {
        'shape': 'box', 'size': [0.3, 0.2, 0.1], 'mass': mass,
        'pose': {'position': [0.0, 0.0, 0.06], 'rpy': [0.02, 0.01, 0.4]}}}})
    sim.step(2000)
    loads = [c.normal_force for c in sim.contacts()]
    assert len(loads) == 4
    for load in loads:
        assert load == pytest.approx(mass * G / 4, rel=0.01)
    # each corner's spring carries m g / 4: the box sits m g / (4 k) deep
    assert sim.link_pose('box')[0][2] == pytest.approx(0.05 - mass * G / (4 * k), abs=2e-6)


@both
def test_the_materials_meet_as_springs_in_series_and_min_depth_shifts_the_rest(formulation):
    k_link, k_ground, depth0 = 5e4, 1e5, 0.002
    mass = 1.0
    sim = Simulator.from_urdf(EMPTY, {
        'solver': {'formulation': formulation}, 'ground': {'stiffness': k_ground},
        'scene': {'ball': {'shape': 'sphere', 'radius': 0.05, 'mass': mass,
                           'stiffness': k_link, 'min_depth': depth0,
                           'pose': {'position': [0.0, 0.0, 0.05]}}}})
    sim.step(3000)
    sunk = 0.05 - sim.link_pose('ball')[0][2]
    assert sunk == pytest.approx(depth0 + mass * G / series(k_link, k_ground), rel=1e-4)


def contact_restitution(mass, k, c, v_in):
    """
    Return the restitution of a ball meeting a spring-damper floor at v_in, with gravity.

    m x'' = m g - k x - c x' from x = 0, x' = v_in (x the penetration, down positive): x(t) =
    x_s + e^(-z w t) (A cos w_d t + B sin w_d t), x_s = m g / k.  The floor lets go when its
    force k x + c x' reaches zero (it cannot pull); the ball leaves at -x' then.
    """
    w = math.sqrt(k / mass)
    zeta = c / (2 * math.sqrt(k * mass))
    wd = w * math.sqrt(1 - zeta ** 2)
    xs = mass * G / k
    a = -xs
    b = (v_in + zeta * w * a) / wd

    def state(t):
        decay = math.exp(-zeta * w * t)
        cos, sin = math.cos(wd * t), math.sin(wd * t)
        x = xs + decay * (a * cos + b * sin)
        v = decay * ((-zeta * w * a + wd * b) * cos + (-zeta * w * b - wd * a) * sin)
        return x, v

    t, step = 0.0, 1e-6
    while k * state(t + step)[0] + c * state(t + step)[1] > 0.0:
        t += step
        assert t < 10 * math.pi / wd, 'the ball never leaves the floor'
    lo, hi = t, t + step
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if k * state(mid)[0] + c * state(mid)[1] > 0.0 else (lo, mid)
    return -state(lo)[1] / v_in


@pytest.mark.parametrize('zeta', [0.1, 0.2])
@both
def test_a_damped_bounce_has_the_restitution_of_its_damping_ratio(zeta, formulation):
    # a soft floor (k 1000 N/m: w dt = 0.003 at dt 0.1 ms, so implicit Euler's own damping is
    # small) with the push-out speed caps of the ball and the ground out of the way (the
    # smaller holds a point's load to at most max_push_velocity (c + dt k), docs/contacts.md)
    mass, k_ball, v_in, radius = 1.0, 1000.0, 1.5, 0.05
    k = series(k_ball, GROUND_STIFFNESS)
    c = 2 * zeta * math.sqrt(k * mass)
    drop = v_in ** 2 / (2 * G)
    ball = {'shape': 'sphere', 'radius': radius, 'mass': mass, 'stiffness': k_ball, 'damping': c,
            'max_push_velocity': 1000.0, 'pose': {'position': [0.0, 0.0, radius + drop]}}
    sim = Simulator.from_urdf(EMPTY, {'dt': 1e-4, 'ground': {'max_push_velocity': 1000.0},
                                      'scene': {'ball': ball},
                                      'solver': {'formulation': formulation}})
    fastest_down, fastest_up, touched = 0.0, 0.0, False
    while sim.time < 1.0:
        sim.step(1)
        vz = sim.link_twist('ball')[0][2]
        if sim.contacts():
            touched = True
            fastest_down = max(fastest_down, -vz)
        elif touched:
            fastest_up = max(fastest_up, vz)  # the first step in the air after the bounce
            break
    expected = contact_restitution(mass, k, c, v_in)
    assert 0.2 < expected < 0.95
    assert fastest_down == pytest.approx(v_in, rel=0.01)
    assert fastest_up / fastest_down == pytest.approx(expected, rel=0.01), (fastest_up, expected)


# -- wheels that roll --------------------------------------------------------------------------
def wheel_speeds(sim, radius, wheels):
    """Return the rim speed of each wheel about its axle (rad/s times radius), m/s."""
    v = sim.joint_velocities()
    return np.array([v[sim.joint_names.index(w)] * radius for w in wheels])


def test_a_four_wheeled_robot_drives_straight_with_its_wheels_rolling_together():
    sim = Simulator.from_urdf(ROVER, {'base': 'floating',
                                      'base_pose': {'position': [0.0, 0.0, 0.0805]}})
    wheels = list(sim.joint_names)
    sim.step(1000)
    # the axle loads of a body on its wheels: the centre of mass 2.4 cm ahead of the middle
    loads = {}
    for c in sim.contacts():
        loads[c.link_a] = loads.get(c.link_a, 0.0) + c.normal_force
    mass = sum(b.mass for b in sim.model.bodies)
    front = mass * G * (0.15 + 0.024) / 0.3 / 2
    for name, load in loads.items():
        assert load == pytest.approx(front if 'front' in name else mass * G / 2 - front,
                                     rel=0.01), name
    torque = 0.5
    sim.set_joint_efforts({w: torque for w in wheels})
    sim.step(1500)
    base = sim.link_twist('base_link')[0]
    rims = wheel_speeds(sim, 0.08, wheels)
    assert np.all(np.abs(rims - base[0]) <= 0.03 * base[0]), (rims, base)
    assert abs(base[1]) < 1e-3 * base[0]
    # rolling without slip: (m + 4 I / r^2) a = 4 tau / r, I = m_w r^2 / 2
    accel = 4 * torque / 0.08 / (mass + 4 * 0.5 / 2)
    assert base[0] == pytest.approx(accel * 1.5, rel=0.01)


def test_the_husky_drives_straight_on_equal_wheel_torques():
    pybullet_data = pytest.importorskip('pybullet_data')
    path = os.path.join(pybullet_data.getDataPath(), 'husky', 'husky.urdf')
    sim = Simulator.from_urdf(path, {'base': 'floating', 'base_pose': {'position': [0, 0, 0.16]}})
    wheels = [n for n in sim.joint_names if n.endswith('_wheel')]
    assert len(wheels) == 4
    # its Gazebo tags give the wheels kp 1e7 N/m and kd 1 N s/m
    wheel = next(s for s in sim.model.shapes if s.name == 'front_left_wheel_link')
    material = dict(zip(MATERIAL_NAMES, wheel.material))
    assert (material['stiffness'], material['damping']) == (1e7, 1.0)
    sim.step(1000)
    sim.set_joint_efforts(dict.fromkeys(wheels, 6.0))
    sim.step(2000)
    base = sim.link_twist('base_link')[0]
    rims = wheel_speeds(sim, 0.17775, wheels)
    assert base[0] > 3.0
    assert np.all(np.abs(rims - base[0]) <= 0.03 * base[0]), (rims, base)
    assert abs(sim.link_pose('base_link')[0][1]) < 0.01 * sim.link_pose('base_link')[0][0]


# -- materials from the config and the URDF's Gazebo tags ---------------------------------------
def test_material_columns_follow_the_config_keys():
    assert MATERIAL_NAMES[ct.M_STIFFNESS] == 'stiffness'
    assert MATERIAL_NAMES[ct.M_DAMPING] == 'damping'
    assert MATERIAL_NAMES[ct.M_MIN_DEPTH] == 'min_depth'
    assert MATERIAL_NAMES[ct.M_MAX_PUSH] == 'max_push_velocity'
    assert MATERIAL_NAMES[ct.M_FRICTION] == 'friction' and len(MATERIAL_NAMES) == ct.N_MATERIAL


GAZEBO = """<robot name="tagged">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <link name="foot"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="j" type="fixed"><parent link="base"/><child link="foot"/>
    <origin xyz="0.3 0 0"/></joint>
  <gazebo reference="base">
    <kp>1e6</kp><kd value="50"/><mu1 value="0.8"/><mu2>0.6</mu2><minDepth>0.001</minDepth>
    <maxVel>0.5</maxVel>
  </gazebo>
  <gazebo reference="foot"><kp>soft</kp><kd>-1</kd><mu1>0.9</mu1></gazebo>
</robot>"""


def test_gazebo_contact_tags_set_the_links_materials_and_bad_ones_are_announced():
    description = parse_urdf(GAZEBO)
    assert description.materials['base'] == {
        'stiffness': 1e6, 'damping': 50.0, 'friction': 0.6, 'min_depth': 0.001,
        'max_push_velocity': 0.5}
    assert description.materials['foot'] == {'friction': 0.9}
    said = ' '.join(description.warnings)
    assert '<kp> of foot (line 14' in said and "'soft'" in said and '<kd> of foot' in said
    assert 'mu1 and mu2 differ for base' in said
    sim = Simulator.from_urdf(GAZEBO, {'base': 'floating', 'contacts': {'base': {'damping': 70}}})
    by_link = {s.name: dict(zip(MATERIAL_NAMES, s.material)) for s in sim.model.shapes}
    # the config's contacts win over the tags, the tags over collision's defaults
    assert by_link['base']['damping'] == 70.0 and by_link['base']['stiffness'] == 1e6
    assert by_link['foot']['stiffness'] == LINK_STIFFNESS and by_link['foot']['friction'] == 0.9


@pytest.mark.parametrize('section, value', [
    ({'collision': {'stiffness': -1.0}}, 'collision.stiffness'),
    ({'ground': {'damping': float('nan')}}, 'ground.damping'),
    ({'contacts': {'base': {'stiffness': float('inf')}}}, 'contacts.base.stiffness'),
    ({'scene': {'b': {'shape': 'sphere', 'radius': 0.1, 'mass': 1.0, 'damping': -2}}},
     'scene.b.damping'),
])
def test_a_negative_or_non_finite_stiffness_or_damping_is_refused(section, value):
    with pytest.raises(ConfigError) as refused:
        Simulator.from_urdf(EMPTY, section)
    assert value in str(refused.value)


def test_the_rigid_model_stays_available():
    sim = Simulator.from_urdf(table(), {'base': 'floating', 'collision': {
        'contact_model': 'rigid'}, 'base_pose': {'position': [0.0, 0.0, LEG + FOOT]}})
    sim.step(1000)
    # rigid: no compression beyond the slop (1e-4 m) whatever the load
    assert sim.link_pose('top')[0][2] == pytest.approx(LEG + FOOT, abs=1.1e-4)
    assert sum(foot_loads(sim).values()) == pytest.approx(10.0 * G, rel=1e-6)


# -- a resting pair keeps its narrow phase's points ----------------------------------------------
def test_a_box_resting_on_a_box_sits_at_the_compression_of_two_materials_in_series():
    # box on box: both the links' material, springs in series (k / 2); the kept points must
    # give the same depths the narrow phase gives
    mass = 2.0
    sim = Simulator.from_urdf(EMPTY, {'scene': {
        'slab': {'shape': 'box', 'size': [0.4, 0.4, 0.1], 'pose': {'position': [0, 0, 0.05]}},
        'top': {'shape': 'box', 'size': [0.2, 0.2, 0.1], 'mass': mass,
                'pose': {'position': [0.0, 0.0, 0.15]}}}})
    sim.step(2000)
    k = series(LINK_STIFFNESS, LINK_STIFFNESS)
    on_base = [c for c in sim.contacts() if {c.link_a, c.link_b} == {'top', 'slab'}]
    assert len(on_base) == 4
    assert sum(c.normal_force for c in on_base) == pytest.approx(mass * G, rel=1e-6)
    assert sim.link_pose('top')[0][2] == pytest.approx(0.15 - mass * G / (4 * k), abs=2e-6)
    before = sorted(c.id for c in on_base)
    sim.step(500)
    assert sorted(c.id for c in sim.contacts() if c.link_a in ('top', 'slab')) == before


@pytest.mark.parametrize('v0', [0.05, 1.0])
def test_a_box_sliding_on_a_box_stops_after_v0_squared_over_2_mu_g(v0):
    # 0.05 m/s moves 0.05 mm a step, less than the distance a pair keeps its points over
    # (contacts.KEEP_DISTANCE): they are carried along and found anew every 0.1 mm
    mu = 0.3
    sim = Simulator.from_urdf(EMPTY, {'scene': {
        'slab': {'shape': 'box', 'size': [1.0, 0.4, 0.1], 'pose': {'position': [0, 0, 0.05]}},
        'top': {'shape': 'box', 'size': [0.2, 0.2, 0.1], 'mass': 1.0, 'friction': mu,
                'linear_velocity': [v0, 0.0, 0.0],
                # already sunk to its rest in the two springs: no settling while it slides
                'pose': {'position': [0.0, 0.0, 0.15 - G / (2 * LINK_STIFFNESS)]}}}})
    assert ct.KEEP_DISTANCE > v0 * sim.dt or v0 > 0.1
    while sim.link_twist('top')[0][0] > 1e-3 and sim.time < 2.0:
        sim.step(1)
    # semi-implicit Euler moves each step with the velocity after its friction: v0 dt / 2 short
    # of the continuous v0^2 / (2 mu g) (a quarter of the 0.05 m/s slide)
    travelled = v0 ** 2 / (2 * mu * G) - v0 * sim.dt / 2
    assert sim.link_pose('top')[0][0] == pytest.approx(travelled, rel=0.02)
    # the points are under the box's corners, where it now is
    x = sim.link_pose('top')[0][0]
    corners = sorted(round(c.position[0] - x, 3) for c in sim.contacts() if 'slab' in
                     (c.link_a, c.link_b))
    assert corners == [-0.1, -0.1, 0.1, 0.1]


def test_a_robot_at_rest_on_compliant_contacts_converges_in_one_sweep():
    # Solo12 dropped 0.3 m comes to rest on its splayed legs (eight contact points, friction
    # near its cone on one).  Projecting the nanometre joint errors every step pushed the
    # touching links against their springs and cost up to 20 iterations in 9 steps of every 23
    # (docs/engine.md); with solver.contact_position_tolerance the solver's warm start is the
    # answer, and the joints still hold within that tolerance.
    from test_landing import dropped, robots_folder
    sim = dropped(robots_folder() / 'solo_description/robots/solo12.urdf', drop=0.3)
    sim.step(5000)  # it rocks on its legs for a few seconds
    sweeps = [sim.step(1).iterations for _ in range(500)]
    assert np.mean(np.array(sweeps) == 1) >= 0.95
    tolerance = sim.config.solver.contact_position_tolerance
    assert tolerance == 1e-7
    assert max(sim.joint_anchor_errors().values()) < 2 * tolerance
    loaded = [c for c in sim.contacts() if c.normal_force > 0.0]
    assert len(loaded) >= 4
    weight = sum(body.mass for body in sim.model.bodies) * 9.81
    assert sum(c.normal_force for c in loaded) == pytest.approx(weight, rel=1e-3)
