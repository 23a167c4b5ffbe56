"""Scenario tests of the engine core against analytic answers and independent references."""
import math

from jointsim_ros import Simulator
import numpy as np
import pytest
from robots import (chain, double_pendulum, free_box, inertial, joint, link, pendulum,
                    point_mass, robot)

G = 9.81


def quat_to_matrix(q):
    """Rotation matrix of (w, x, y, z), written here independently of the engine."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def rk4(f, state, h):
    """One classical Runge-Kutta step."""
    k1 = f(state)
    k2 = f(state + 0.5 * h * k1)
    k3 = f(state + 0.5 * h * k2)
    k4 = f(state + h * k3)
    return state + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)


def test_free_fall_matches_parabola():
    sim = Simulator.from_urdf(free_box(), {'base': 'floating',
                                           'base_pose': {'position': [0, 0, 10]}})
    sim.step(1000)
    t = sim.time
    z = sim.link_pose('box')[0][2]
    n = 1000
    # semi-implicit Euler falls exactly g dt^2 n(n+1)/2; the parabola differs by g dt t / 2
    assert z == pytest.approx(10 - G * sim.dt ** 2 * n * (n + 1) / 2, abs=1e-9)
    assert z == pytest.approx(10 - G * t * t / 2, abs=G * sim.dt * t)
    assert sim.link_twist('box')[0][2] == pytest.approx(-G * t, rel=1e-9)


def test_torque_free_asymmetric_body_keeps_momentum_and_flips():
    mass, size = 2.0, (0.1, 0.2, 0.3)
    sim = Simulator.from_urdf(free_box(mass, size), {'base': 'floating', 'gravity': [0, 0, 0]})
    a, b, c = size
    inertia = np.diag([mass * (b * b + c * c), mass * (a * a + c * c),
                       mass * (a * a + b * b)]) / 12  # y is the intermediate axis
    w0 = np.array([1e-3, 4.0, 1e-3])
    sim.set_base_state([0, 0, 0], [1, 0, 0, 0], angular_velocity=w0)
    momentum0 = inertia @ w0
    energy0 = 0.5 * w0 @ inertia @ w0
    signs = set()
    worst_energy = 0.0
    for _ in range(10000):
        sim.step(1)
        rot = quat_to_matrix(sim.link_pose('box')[1])
        w_world = sim.link_twist('box')[1]
        w_body = rot.T @ w_world
        momentum = rot @ inertia @ w_body
        assert np.allclose(momentum, momentum0, rtol=0, atol=1e-9 * np.linalg.norm(momentum0))
        worst_energy = max(worst_energy, abs(0.5 * w_body @ inertia @ w_body - energy0) / energy0)
        signs.add(np.sign(w_body[1]))
    assert signs == {1.0, -1.0}, 'spin about the intermediate axis must flip over'
    assert worst_energy < 0.01


def pendulum_period(amplitude, length=1.0):
    """Exact period of a simple pendulum: 4 sqrt(L/g) K(sin(amplitude/2)), K by the AGM."""
    k = math.sin(amplitude / 2)
    a, b = 1.0, math.sqrt(1 - k * k)
    for _ in range(30):
        a, b = (a + b) / 2, math.sqrt(a * b)
    return 4 * math.sqrt(length / G) * math.pi / (2 * a)


@pytest.mark.parametrize('amplitude', [0.2, 1.5])
def test_simple_pendulum_period(amplitude):
    sim = Simulator.from_urdf(pendulum(), None)
    sim.set_joint_state({'hinge': amplitude})
    crossings = []
    previous = sim.joint_positions()[0]
    while len(crossings) < 5:
        sim.step(1)
        q = sim.joint_positions()[0]
        if previous > 0 >= q:  # downward zero crossing, interpolated
            crossings.append(sim.time - sim.dt * q / (q - previous))
        previous = q
    periods = np.diff(crossings)
    assert np.allclose(periods, pendulum_period(amplitude), rtol=5e-4)


def double_pendulum_reference(theta, duration, h=1e-4):
    """
    Integrate the point-mass double pendulum (m = L = 1) by RK4 on Lagrange's equations.

    Returns the absolute angles sampled every 1 ms.
    """
    def f(s):
        t1, t2, w1, w2 = s
        d = t1 - t2
        den = 3 - math.cos(2 * d)
        a1 = (-G * 3 * math.sin(t1) - G * math.sin(t1 - 2 * t2)
              - 2 * math.sin(d) * (w2 * w2 + w1 * w1 * math.cos(d))) / den
        a2 = 2 * math.sin(d) * (2 * w1 * w1 + 2 * G * math.cos(t1) + w2 * w2 * math.cos(d)) / den
        return np.array([w1, w2, a1, a2])
    s = np.array([theta[0], theta[1], 0.0, 0.0])
    out = []
    for _ in range(int(round(duration / 1e-3))):
        for _ in range(int(round(1e-3 / h))):
            s = rk4(f, s, h)
        out.append(s[:2].copy())
    return np.array(out)


def test_double_pendulum_against_reduced_coordinates():
    sim = Simulator.from_urdf(double_pendulum(), {'dt': 0.001})
    sim.set_joint_state({'shoulder': 0.5, 'elbow': 0.0})  # absolute angles 0.5, 0.5
    reference = double_pendulum_reference((0.5, 0.5), 2.0)

    def energy():
        total = 0.0
        for name in ('upper', 'lower'):
            x, _ = sim.link_pose(name)
            v, _ = sim.link_twist(name)
            bob = x + quat_to_matrix(sim.link_pose(name)[1]) @ [0, 0, -1]
            bob_v = v + np.cross(sim.link_twist(name)[1], bob - x)
            total += 0.5 * bob_v @ bob_v + G * bob[2]
        return total

    e0 = energy()
    e_rest = -3 * G  # both bobs hanging
    worst_angle = worst_energy = worst_gap = 0.0
    for k in range(2000):
        sim.step(1)
        q = sim.joint_positions()
        worst_angle = max(worst_angle, np.max(np.abs([q[0], q[0] + q[1]] - reference[k])))
        worst_energy = max(worst_energy, abs(energy() - e0) / (e0 - e_rest))
        upper_x, upper_q = sim.link_pose('upper')
        elbow_on_upper = upper_x + quat_to_matrix(upper_q) @ [0, 0, -1]
        worst_gap = max(worst_gap, np.linalg.norm(elbow_on_upper - sim.link_pose('lower')[0]),
                        np.linalg.norm(upper_x))
    assert worst_angle <= 2e-3
    assert worst_energy <= 5e-3
    assert worst_gap <= 1e-4


def test_prismatic_slider_on_incline():
    angle = 0.3
    urdf = robot('slider', link('base'), link('carriage', inertial(2.0, 0.01, 0.02, 0.03)),
                 joint('slide', 'prismatic', 'base', 'carriage', rpy=f'0 {-angle} 0',
                       axis='1 0 0',
                       extra='<limit lower="-100" upper="100" effort="10" velocity="10"/>'))
    sim = Simulator.from_urdf(urdf, None)
    sim.step(1000)
    t = sim.time
    # the axis points up the slope: gravity pulls the carriage back along it
    accel = -G * math.sin(angle)
    assert sim.joint_positions()[0] == pytest.approx(accel * t * t / 2, abs=abs(accel) * 1e-3)
    assert sim.joint_velocities()[0] == pytest.approx(accel * t, rel=1e-6)
    assert max(sim.joint_anchor_errors().values()) < 1e-9
    # the carriage must not turn
    assert np.allclose(quat_to_matrix(sim.link_pose('carriage')[1]),
                       quat_to_matrix([math.cos(-angle / 2), 0, math.sin(-angle / 2), 0]),
                       atol=1e-9)


def split_pendulum():
    """Return a pendulum whose rod and bob are separate links joined by a fixed joint."""
    return robot('split', link('base'),
                 link('rod', inertial(0.5, 0.04, 0.04, 1e-4, xyz='0 0 -0.35')),
                 link('bob', inertial(1.0, 1e-3, 2e-3, 3e-3, xyz='0.01 0 0')),
                 joint('hinge', 'revolute', 'base', 'rod', axis='0 1 0',
                       extra='<limit lower="-3" upper="3" effort="10" velocity="10"/>'),
                 joint('weld', 'fixed', 'rod', 'bob', xyz='0 0 -0.7', rpy='0.1 0.2 0.3'))


def test_merged_and_welded_fixed_joints_move_alike():
    merged = Simulator.from_urdf(split_pendulum(), None)
    welded = Simulator.from_urdf(split_pendulum(), {'keep_fixed_joints': ['weld']})
    assert len(merged.model.bodies) == 1 and len(welded.model.bodies) == 2
    for sim in (merged, welded):
        sim.set_joint_state({'hinge': 1.0})
    for _ in range(1000):
        merged.step(1)
        welded.step(1)
        assert merged.joint_positions()[0] == pytest.approx(welded.joint_positions()[0],
                                                            abs=1e-6)
    for name in ('rod', 'bob'):
        assert np.allclose(merged.link_pose(name)[0], welded.link_pose(name)[0], atol=1e-6)


def test_merged_link_pose_is_exact():
    sim = Simulator.from_urdf(split_pendulum(), None)
    q = 0.7
    sim.set_joint_state({'hinge': q})
    x, quat = sim.link_pose('bob')
    turn = quat_to_matrix([math.cos(q / 2), 0, math.sin(q / 2), 0])
    assert np.allclose(x, turn @ [0, 0, -0.7], atol=1e-12)
    r, p, y = 0.1, 0.2, 0.3
    rx = quat_to_matrix([math.cos(r / 2), math.sin(r / 2), 0, 0])
    ry = quat_to_matrix([math.cos(p / 2), 0, math.sin(p / 2), 0])
    rz = quat_to_matrix([math.cos(y / 2), 0, 0, math.sin(y / 2)])
    assert np.allclose(quat_to_matrix(quat), turn @ rz @ ry @ rx, atol=1e-12)


def test_long_chain_holds_together():
    n = 64
    sim = Simulator.from_urdf(chain(n), None)
    sim.set_joint_state({'joint0': 1.2, 'joint10': -0.8, 'joint30': 0.5})
    for _ in range(20):
        sim.step(100)
        assert max(sim.joint_anchor_errors().values()) < 1e-3
    assert np.all(np.isfinite(sim.joint_positions()))
    # the chain hangs from the base: its tip stays within reach
    assert np.linalg.norm(sim.link_pose(f'link{n - 1}')[0]) <= n * 0.1 + 1e-3


def mean_iterations(warm_start, steps=400):
    config = {'solver': {'iterations': 500, 'tolerance': 1e-6, 'warm_start': warm_start}}
    sim = Simulator.from_urdf(chain(7, length=0.3, mass=1.0), config)
    sim.set_joint_state({f'joint{k}': 0.4 * (-1) ** k for k in range(7)})
    total = 0
    for _ in range(steps):
        total += sim.step(1).iterations
    return total / steps


def test_warm_starting_reduces_iterations():
    warm = mean_iterations(True)
    cold = mean_iterations(False)
    assert warm < 0.7 * cold


def test_wall_clock_budget_ends_the_solve():
    budget = {'iterations': 10 ** 7, 'tolerance': 0.0, 'time_budget': 2e-4}
    sim = Simulator.from_urdf(chain(16), {'solver': budget})
    sim.set_joint_state({'joint0': 1.0})
    report = sim.step(1)
    assert report.stop_reason == 'time_budget'
    assert 0 < report.iterations < 10 ** 7
    capped = Simulator.from_urdf(chain(16), {'solver': {'iterations': 7, 'tolerance': 0.0}})
    report = capped.step(1)
    assert report.stop_reason == 'iterations' and report.iterations == 7
    loose = Simulator.from_urdf(chain(16), {'solver': {'iterations': 500, 'tolerance': 1e-3}})
    report = loose.step(1)
    assert report.stop_reason == 'tolerance' and report.residual < 1e-3


def test_joint_effort_accelerates_link_as_torque_over_inertia():
    urdf = robot('arm', link('base'),
                 link('arm', inertial(3.0, 0.1, 0.2, 0.3, xyz='0.25 0 0')),
                 joint('j', 'continuous', 'base', 'arm', axis='0 0 1'))
    sim = Simulator.from_urdf(urdf, {'gravity': [0, 0, 0]})
    # axis z: the inertia about it is izz + m d^2
    i_axis = 0.3 + 3.0 * 0.25 ** 2
    sim.set_joint_efforts({'j': 2.0})
    n = 500
    sim.step(n)
    t, accel = sim.time, 2.0 / i_axis
    assert sim.joint_velocities()[0] == pytest.approx(accel * t, rel=1e-6)
    # semi-implicit Euler: exactly a dt^2 n (n + 1) / 2, within a dt t / 2 of the parabola
    assert sim.joint_positions()[0] == pytest.approx(accel * sim.dt ** 2 * n * (n + 1) / 2,
                                                     rel=1e-6)
    assert sim.joint_positions()[0] == pytest.approx(accel * t * t / 2, abs=accel * sim.dt * t)
    assert sim.joint_efforts()[0] == 2.0


def test_joint_effort_is_equal_and_opposite_on_a_free_robot():
    # both centres of mass on the joint axis: each body spins about its own axis, so
    # qdd = tau (1/I_left + 1/I_right) and the total angular momentum stays zero
    urdf = robot('twins', link('left', inertial(1.0, 0.02, 0.02, 0.01, xyz='0 0 -0.2')),
                 link('right', inertial(2.0, 0.03, 0.03, 0.04, xyz='0 0 0.2')),
                 joint('j', 'continuous', 'left', 'right', axis='0 0 1'))
    sim = Simulator.from_urdf(urdf, {'base': 'floating', 'gravity': [0, 0, 0]})
    sim.set_joint_efforts({'j': 0.5})
    sim.step(300)
    w_left = sim.link_twist('left')[1]
    w_right = sim.link_twist('right')[1]
    assert np.allclose(0.01 * w_left + 0.04 * w_right, 0, atol=1e-9)
    assert sim.joint_velocities()[0] == pytest.approx(0.5 * (1 / 0.01 + 1 / 0.04) * sim.time,
                                                      rel=1e-9)
    assert np.allclose(sim.link_pose('left')[0], 0, atol=1e-12)  # nothing translates
    assert np.allclose(sim.link_twist('left')[0], 0, atol=1e-12)


FORMULATIONS = ('maximal', 'tree')


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_mimic_joint_follows_leader(formulation):
    urdf = robot('gripper', link('palm', inertial(1.0, 0.01, 0.01, 0.01)),
                 link('a', point_mass(0.1, '0.05 0 0')), link('b', point_mass(0.1, '0.05 0 0')),
                 joint('leader', 'revolute', 'palm', 'a', axis='0 0 1',
                       extra='<limit lower="-2" upper="2" effort="1" velocity="1"/>'),
                 joint('follower', 'revolute', 'palm', 'b', axis='0 0 1', xyz='0 0.1 0',
                       extra='<limit lower="-4" upper="4" effort="1" velocity="1"/>'
                             '<mimic joint="leader" multiplier="-2" offset="0.1"/>'))
    sim = Simulator.from_urdf(urdf, {'gravity': [0, 0, 0],
                                     'solver': {'formulation': formulation}})
    assert sim.joint_positions()[1] == pytest.approx(0.1)
    sim.set_joint_efforts({'leader': 0.01})
    for _ in range(5):
        sim.step(100)
        lead, follow = sim.joint_positions()
        assert follow == pytest.approx(-2 * lead + 0.1, abs=1e-7)
    assert lead > 0.05
    # the follower's inertia loads the leader: 0.01 N m moves (I_a + 4 I_b) together
    i_bob = 0.1 * 0.05 ** 2 + 0.4 * 0.1 * 0.01 ** 2
    assert lead == pytest.approx(0.01 / (5 * i_bob) * sim.time ** 2 / 2, rel=3e-3)


@pytest.mark.parametrize('formulation', FORMULATIONS)
def test_mimic_pendulums_swing_as_one_reduced_pendulum(formulation):
    """
    A pendulum leading a second one through a mimic (r = -0.5, offset 0.1) is one DOF.

    Lagrange's equation of the coupled pair, q_f = r q_l + o: (I_l + r^2 I_f) qdd_l =
    -m_l g L_l sin q_l - r m_f g L_f sin(r q_l + o), integrated here by RK4; the simulator
    (first order at 1 ms) follows it to a few mrad over 1.5 s and keeps the coupling exact.
    """
    r, offset = -0.5, 0.1
    m_l, len_l, m_f, len_f = 1.0, 0.5, 0.6, 0.3
    lim = '<limit lower="-10" upper="10" effort="100" velocity="100"/>'
    urdf = robot('pair', link('base'), link('lead', point_mass(m_l, f'0 0 {-len_l}')),
                 link('follow', point_mass(m_f, f'0 0 {-len_f}')),
                 joint('leader', 'revolute', 'base', 'lead', extra=lim),
                 joint('follower', 'revolute', 'base', 'follow', xyz='0.4 0 0',
                       extra=lim + f'<mimic joint="leader" multiplier="{r}" '
                                   f'offset="{offset}"/>'))
    sim = Simulator.from_urdf(urdf, {'solver': {'formulation': formulation},
                                     'initial_positions': {'leader': 1.0}})
    i_l = m_l * len_l ** 2 + 0.4 * m_l * 0.01 ** 2
    i_f = m_f * len_f ** 2 + 0.4 * m_f * 0.01 ** 2

    def rates(x):
        q, qd = x
        torque = -m_l * G * len_l * math.sin(q) - r * m_f * G * len_f * math.sin(r * q + offset)
        return np.array([qd, torque / (i_l + r * r * i_f)])

    x = np.array([1.0, 0.0])
    h = sim.dt / 10
    worst = 0.0
    for _ in range(1500):
        sim.step(1)
        for _ in range(10):
            x = rk4(rates, x, h)
        lead, follow = sim.joint_positions()
        assert follow == pytest.approx(r * lead + offset, abs=1e-6)
        worst = max(worst, abs(lead - x[0]))
    assert worst < 5e-3, worst
    assert sim.joint_velocities()[1] == pytest.approx(r * sim.joint_velocities()[0], abs=1e-6)


def test_spherical_pendulum_swings_like_the_revolute_one():
    tilt = 0.5
    ball = robot('ball', link('base'), link('bob', point_mass(1.0, '0 0 -1')),
                 joint('ball', 'spherical', 'base', 'bob', rpy=f'0 {tilt} 0'))
    hinge = Simulator.from_urdf(pendulum(), None)
    hinge.set_joint_state({'hinge': tilt})
    sphere = Simulator.from_urdf(ball, None)
    assert sphere.joint_names == ()
    for _ in range(1500):
        hinge.step(1)
        sphere.step(1)
    xh = hinge.link_pose('bob')[0] + quat_to_matrix(hinge.link_pose('bob')[1]) @ [0, 0, -1]
    xs = sphere.link_pose('bob')[0] + quat_to_matrix(sphere.link_pose('bob')[1]) @ [0, 0, -1]
    assert np.allclose(xh, xs, atol=1e-6)
    assert sphere.joint_anchor_errors()['ball'] < 1e-9


def test_planar_joint_keeps_body_in_its_plane():
    body = inertial(1.0, 0.01, 0.02, 0.03)
    vertical = robot('v', link('base'), link('puck', body),
                     joint('plane', 'planar', 'base', 'puck', axis='0 1 0'))
    horizontal = robot('h', link('base'), link('puck', body),
                       joint('plane', 'planar', 'base', 'puck', axis='0 0 1'))
    falling = Simulator.from_urdf(vertical, None)
    resting = Simulator.from_urdf(horizontal, None)
    falling.step(500)
    resting.step(500)
    t = falling.time
    assert falling.link_pose('puck')[0][2] == pytest.approx(-G * t * t / 2, abs=G * 1e-3 * t)
    assert abs(falling.link_pose('puck')[0][1]) < 1e-12
    assert np.allclose(resting.link_pose('puck')[0], 0, atol=1e-9)
    assert np.allclose(resting.link_pose('puck')[1], [1, 0, 0, 0], atol=1e-9)
