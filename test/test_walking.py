"""
The humanoid walking controller (jointsim_ros/control/walking.py) and the walk itself, headless.

The plan is checked against its own physics (the cart-table ZMP of the planned COM, the
whole-body COM of the planned pose, forward kinematics of the IK's angles); the walk on the
engine against what must hold whatever the gait: it advances and stays up, the feet land where
planned, and over a walk from rest to rest the ankle sensors carry on average exactly the
weight above them (impulse = change of momentum).  Pushes while standing show up as a shift
of the centre of pressure that the ankle sensors read, checked against the contact forces.
"""
import math
import os

from jointsim_ros.control.walking import (ankle_readings, centre_of_pressure, G, GaitSettings,
                                          Kinematics, leg_ik, LEG_JOINTS, LegGeometry,
                                          PreviewController, run_headless, sole_centre,
                                          SOLE_HEIGHT, WalkingController)
from jointsim_ros.description import load_model
from jointsim_ros.rotations import quat_to_matrix
from jointsim_ros.sim.simulator import Simulator
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, '..', 'urdf', 'jointsim_humanoid.urdf.xacro')
CONFIG = os.path.join(HERE, '..', 'config', 'jointsim_humanoid.yaml')
SOLE = np.array([0.03, 0.0, -0.07])
FOOT_HALF = np.array([0.12, 0.055])     # half the sole's length and width, m


@pytest.fixture(scope='module')
def model():
    return load_model(URDF, CONFIG)


def tilt(quat):
    """Angle between a body's z axis and the vertical, rad."""
    return math.acos(min(1.0, quat_to_matrix(quat)[2, 2]))


# -- kinematics ------------------------------------------------------------------------------
def test_forward_kinematics_matches_the_engines_link_poses(model):
    robot, config = model
    kin = Kinematics(robot)
    sim = Simulator.from_urdf(URDF, CONFIG)
    rng = np.random.default_rng(3)
    q = {name: rng.uniform(-0.4, 0.4) for name in sim.joint_names}
    sim.set_joint_state(q)
    base, quat = sim.link_pose('pelvis')
    pos, rot = kin.body_poses(base[None], quat_to_matrix(quat)[None],
                              {k: np.array([v]) for k, v in q.items()})
    for i, body in enumerate(robot.bodies):
        where, orientation = sim.link_pose(body.name)
        np.testing.assert_allclose(pos[i, 0], where, atol=1e-9, err_msg=body.name)
        np.testing.assert_allclose(rot[i, 0], quat_to_matrix(orientation), atol=1e-9)


def test_leg_ik_inverts_forward_kinematics(model):
    robot, _ = model
    kin = Kinematics(robot)
    rng = np.random.default_rng(7)
    k = 300
    q = {}
    for side in 'lr':
        ranges = {'hip_yaw': (-0.4, 0.4), 'hip_roll': (-0.3, 0.3), 'hip_pitch': (-1.0, 0.3),
                  'knee': (0.1, 1.5), 'ankle_pitch': (-0.6, 0.4), 'ankle_roll': (-0.3, 0.3)}
        for joint, (low, high) in ranges.items():
            q[f'{side}_{joint}'] = rng.uniform(low, high, k)
    base = np.tile([0.1, -0.2, 1.0], (k, 1))
    pos, rot = kin.body_poses(base, np.broadcast_to(np.eye(3), (k, 3, 3)), q)
    index = {body.name: i for i, body in enumerate(robot.bodies)}
    for side in 'lr':
        foot = index[f'{side}_foot']
        soles = pos[foot] + np.einsum('kij,j->ki', rot[foot], SOLE)
        angles = leg_ik(LegGeometry.from_model(robot, side, SOLE), base, soles, rot[foot])
        expected = np.column_stack([q[f'{side}_{joint}'] for joint in LEG_JOINTS])
        np.testing.assert_allclose(angles, expected, atol=1e-9)


# -- the plan --------------------------------------------------------------------------------
def test_preview_control_tracks_a_zmp_step_with_the_cart_table_model():
    """The planned ZMP is the cart-table ZMP of the planned COM, and it reaches the step."""
    dt, height = 0.005, 0.9
    preview = PreviewController(dt, height, 320)
    reference = np.zeros(800)
    reference[300:] = 0.1
    states, zmp = preview.track(reference, 0.0)
    # p = c - (z_c / g) c'', from the COM alone by finite differences
    c = states[:, 0]
    accel = (c[2:] - 2 * c[1:-1] + c[:-2]) / dt ** 2
    np.testing.assert_allclose(c[1:-1] - height / G * accel, zmp[1:-1], atol=2e-3)
    assert np.max(np.abs(zmp[:250])) < 0.02        # anticipates, without a start-up jerk
    assert np.max(np.abs(zmp[500:] - 0.1)) < 1e-3 and abs(c[-1] - 0.1) < 1e-3
    assert np.max(np.abs(zmp - reference)) < 0.07   # the step itself


@pytest.fixture(scope='module')
def controller(model):
    return WalkingController(*model, GaitSettings())


def test_plan_keeps_the_zmp_inside_the_support_feet(controller):
    plan = controller.plan
    assert len(plan.footholds) == 10
    assert plan.footholds[-2][1][0] - plan.feet['l'][0, 0] >= 1.0     # 10 steps, >= 1 m
    assert np.max(np.abs(plan.zmp - plan.zmp_ref)) < 5e-3
    for side in 'lr':
        single = plan.support == side
        offset = np.abs(plan.zmp[single] - plan.feet[side][single, :2])
        assert np.all(offset <= FOOT_HALF - 0.04)       # 4 cm inside the sole's edges


def test_planned_pose_puts_the_whole_body_com_on_the_planned_com(controller):
    plan = controller.plan
    n = len(plan.times)
    positions = {name: plan.positions[:, i] for i, name in enumerate(plan.joint_names)}
    com = plan.kin.com(plan.pelvis, np.broadcast_to(np.eye(3), (n, 3, 3)), positions)
    assert np.max(np.abs(com[:, :2] - plan.com[:, :2])) < 2e-3
    # and the feet follow their plan: forward kinematics of the planned angles
    pos, rot = plan.kin.body_poses(plan.pelvis, np.broadcast_to(np.eye(3), (n, 3, 3)),
                                   positions)
    index = {body.name: i for i, body in enumerate(plan.kin.model.bodies)}
    for side in 'lr':
        foot = index[f'{side}_foot']
        soles = pos[foot] + np.einsum('kij,j->ki', rot[foot], SOLE)
        np.testing.assert_allclose(soles, plan.feet[side], atol=1e-9)


# -- walking on the engine -------------------------------------------------------------------
@pytest.fixture(scope='module')
def walk(model, controller):
    """Walk the ten steps headless with the controller at 200 Hz; record every physics step."""
    sim = Simulator.from_urdf(URDF, CONFIG)
    names = list(sim.joint_names)
    steps = int(round((controller.duration() + 0.5) / sim.dt))
    pelvis, tilts, vertical = [], [], []
    soles = {side: [] for side in 'lr'}
    for k in range(steps):
        if k % 5 == 0:
            volts = controller.voltages(k * sim.dt, sim.joint_positions(),
                                        sim.joint_velocities())
            sim.set_voltages(dict(zip(names, volts)))
        sim.step(1)
        where, quat = sim.link_pose('pelvis')
        pelvis.append(where)
        tilts.append(tilt(quat))
        vertical.append(sum(
            (quat_to_matrix(sim.link_pose(f'{side}_foot')[1])
             @ sim.sensors.measure(f'{side}_ankle_ft')[:3])[2] for side in 'lr'))
        for side in 'lr':
            soles[side].append(sole_centre(sim, side))
    return {'sim': sim, 'pelvis': np.array(pelvis), 'tilts': np.array(tilts),
            'vertical': np.array(vertical),
            'soles': {side: np.array(v) for side, v in soles.items()},
            'times': (np.arange(steps) + 1) * sim.dt}


def test_walks_ten_steps_and_a_metre_without_falling(walk, controller):
    pelvis = walk['pelvis']
    assert not walk['sim'].diverged and np.all(np.isfinite(pelvis))
    assert pelvis[-1, 0] - pelvis[0, 0] >= 1.0
    assert np.min(pelvis[:, 2]) > pelvis[0, 2] - 0.02           # never drops
    assert np.degrees(np.max(walk['tilts'])) < 6.0              # never tips
    assert abs(pelvis[-1, 1]) < 0.05                            # walks straight


def test_each_foot_lands_where_it_was_planned(walk, controller):
    times = walk['times']
    for side, target, landed in controller.plan.footholds:
        k = np.searchsorted(times, landed + 0.05)
        sole = walk['soles'][side][k]
        assert np.linalg.norm(sole[:2] - target[:2]) < 0.03, (side, landed)
        assert sole[2] < 0.005                                  # down on the ground
        # and it has stepped: half a step earlier it was in the air
        assert walk['soles'][side][np.searchsorted(times, landed - 0.22)][2] > 0.02


def test_ankle_sensors_carry_the_weight_above_them_on_average_over_the_walk(walk, model):
    """From rest to rest the ground's mean push is the weight (impulse = change of momentum)."""
    robot, _ = model
    total = sum(body.mass for body in robot.bodies)
    feet = sum(body.mass for body in robot.bodies if body.name.endswith('_foot'))
    mean = np.mean(walk['vertical'])
    assert mean == pytest.approx((total - feet) * G, rel=0.01)
    # while the single-support phases are far from it: the test is not trivially met
    assert np.max(walk['vertical']) > 1.2 * (total - feet) * G


# -- standing on the drives ------------------------------------------------------------------
def test_stands_ten_seconds_on_its_drives_with_the_feet_still(model):
    """Voltages from the joint PD alone (no servo loops): slip under 1 mm, weight on the ankles."""
    robot, _ = model
    standing = WalkingController(*model, GaitSettings(steps=0, shift=0.0))
    sim = Simulator.from_urdf(URDF, CONFIG)
    start = {side: sole_centre(sim, side) for side in 'lr'}
    slips, sums, sinking = [], [], []

    def watch(sim, t):
        slips.append(max(np.linalg.norm((sole_centre(sim, side) - start[side])[:2])
                         for side in 'lr'))
        if t >= 8.0:
            # the compliant floor: how deep the sole corners sit (issue 28: at most 1 mm)
            sinking.append(max(c.depth for c in sim.contacts() if c.link_a.endswith('_foot')))
            # raw sensor readings (the foot's pull on the leg), turned to the world axes
            sums.append(sum((quat_to_matrix(sim.link_pose(f'{side}_foot')[1])
                             @ sim.sensors.measure(f'{side}_ankle_ft')[:3])[2]
                            for side in 'lr'))
    run_headless(sim, standing, 10.0, period=5, on_step=watch)
    assert not sim.diverged and sim.time == pytest.approx(10.0)
    assert max(slips) < 1e-3
    # 63.7 kg on eight sole corners: about 78 N each, 0.4 mm on the default 2e5 N/m soles
    assert 0.0 < max(sinking) < 1e-3
    above = (sum(b.mass for b in robot.bodies)
             - sum(b.mass for b in robot.bodies if b.name.endswith('_foot')))
    assert np.mean(sums) == pytest.approx(above * G, rel=0.01)


# -- pushes while standing -------------------------------------------------------------------
def contact_cop(sim):
    """Centre of pressure of the ground contacts' normal forces (world x, y), m."""
    contacts = [c for c in sim.contacts() if 'foot' in c.link_a + c.link_b]
    forces = np.array([c.normal_force for c in contacts])
    points = np.array([c.position[:2] for c in contacts])
    return forces @ points / forces.sum()


@pytest.mark.parametrize('direction', [(0.0, 1.0), (1.0, 0.0)], ids=['sideways', 'forward'])
def test_standing_it_survives_a_40_n_push_seen_as_a_cop_shift_that_returns(model, direction):
    force = 40.0 * np.array([*direction, 0.0])
    axis = 0 if direction[0] else 1
    standing = WalkingController(*model, GaitSettings(steps=0, shift=0.0))
    sim = Simulator.from_urdf(URDF, CONFIG)
    record, checks = {}, []

    def push(sim, t):
        sim.set_link_wrench('pelvis', force if 2.0 <= t < 2.1 - 1e-9 else np.zeros(3))
        if t > 1.0 and round(t / 0.005) % 20 == 0:
            # the sensors' CoP is where the contact forces act (an independent reading)
            checks.append((centre_of_pressure(ankle_readings(sim, exact=True),
                                              SOLE_HEIGHT)[0][:2],
                           contact_cop(sim)))
    run_headless(sim, standing, 5.0, period=5, record=record, on_step=push)
    times = np.array(record['time'])
    cop = np.array(record['cop'])[:, axis]
    pelvis = np.array(record['pelvis'])
    before = cop[(times > 1.5) & (times <= 2.0)].mean()
    during = cop[(times > 2.0) & (times <= 2.6)] - before
    after = cop[times > 4.0].mean()
    assert not sim.diverged
    assert np.min(pelvis[:, 2]) > pelvis[0, 2] - 0.01                        # stays up
    assert max(tilt(q) for q in record['pelvis_quat']) < math.radians(3.0)
    assert np.max(during) > 0.01                      # the ankles push back: the CoP moves
    assert abs(after - before) < 2e-3                 # and returns
    for sensors, contacts in checks:
        np.testing.assert_allclose(sensors, contacts, atol=3e-3)


def test_the_headless_tool_walks_the_humanoid(capsys):
    from jointsim_ros.tools import headless
    assert headless.main(['--humanoid', '--steps', '2']) == 0
    out = capsys.readouterr().out
    assert 'walking 2 steps of 0.125 m' in out and 'shifting weight' in out
    walked = float(out.split('walked ')[1].split(' m')[0])
    # two steps: the right foot one stride ahead, then the left beside it
    assert walked == pytest.approx(0.125, abs=0.03)
