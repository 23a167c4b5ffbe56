"""The bundled humanoid (urdf/jointsim_humanoid.urdf.xacro, config/jointsim_humanoid.yaml)."""
import logging
import os
import warnings

from jointsim_ros.rotations import quat_to_matrix
from jointsim_ros.sim.simulator import Simulator
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, '..', 'urdf', 'jointsim_humanoid.urdf.xacro')
CONFIG = os.path.join(HERE, '..', 'config', 'jointsim_humanoid.yaml')
G = 9.81
SOLE = np.array([0.03, 0.0, -0.07])       # centre of the sole in the foot frame, m
SENSORS = ('l_ankle_ft', 'r_ankle_ft', 'l_wrist_ft', 'r_wrist_ft')


def load(caplog):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with caplog.at_level(logging.WARNING):
            sim = Simulator.from_urdf(URDF, CONFIG)
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    return sim, [str(w.message) for w in caught] + logged


def total_mass(sim):
    return sum(body.mass for body in sim.model.bodies)


def link_mass(sim, link):
    return sim.model.bodies[sim.model.links[link].body].mass


def sole(sim, side):
    position, quat = sim.link_pose(f'{side}_foot')
    return position + quat_to_matrix(quat) @ SOLE


@pytest.fixture(scope='module')
def standing():
    """Stand 2.5 s on the drives' position loops at the initial pose; record what is checked."""
    sim = Simulator.from_urdf(URDF, CONFIG)
    names = sim.joint_names
    sim.set_servo_targets(positions=dict(zip(names, sim.joint_positions())))
    start = {'pelvis': sim.link_pose('pelvis')[0].copy(),
             'soles': {side: sole(sim, side) for side in 'lr'}}
    heights, slips, ankle_sums, wrists = [], [], [], []
    for step in range(2500):
        sim.step(1)
        heights.append(sim.link_pose('pelvis')[0][2])
        slips.append(max(np.linalg.norm((sole(sim, side) - start['soles'][side])[:2])
                         for side in 'lr'))
        if step >= 2000:
            # sensor frame: the foot's axes (frame child), the wrench the foot exerts on the
            # ankle link (child_to_parent); turned to the world axes with the foot's rotation
            ankle_sums.append(sum(
                (quat_to_matrix(sim.link_pose(f'{side}_foot')[1])
                 @ sim.sensors.measure(f'{side}_ankle_ft')[:3])[2] for side in 'lr'))
            wrists.append([quat_to_matrix(sim.link_pose(f'{side}_hand')[1])
                           @ sim.sensors.measure(f'{side}_wrist_ft')[:3] for side in 'lr'])
    return {'sim': sim, 'start': start, 'heights': np.array(heights),
            'slips': np.array(slips), 'ankle_sums': np.array(ankle_sums),
            'wrists': np.array(wrists)}


def test_loads_without_warnings_with_its_joints_mass_drives_and_sensors(caplog):
    sim, problems = load(caplog)
    assert problems == []
    assert 20 <= len(sim.joint_names) <= 30
    assert len(sim.joint_names) == 23
    assert total_mass(sim) == pytest.approx(63.7, abs=1e-9)
    assert set(sim.drive_names) == set(sim.joint_names)
    assert set(sim.sensors.names) == set(SENSORS)
    assert sim.drive_modes() == dict.fromkeys(sim.joint_names, 'voltage')


def test_starts_with_the_soles_just_above_the_ground_and_is_adult_size():
    sim = Simulator.from_urdf(URDF, CONFIG)
    for side in 'lr':
        assert 0.0 < sole(sim, side)[2] < 2e-3
    head_top = sim.link_pose('head')[0][2] + 0.2
    assert 1.6 < head_top - sole(sim, 'l')[2] < 1.7    # in the bent pose


def test_drive_current_limits_match_the_urdf_efforts():
    sim = Simulator.from_urdf(URDF, CONFIG)
    limits = {j.name: j.effort_limit for j in sim.model.joints}
    for drive in sim.model.drives:
        peak = (drive.current_limit * drive.torque_constant * drive.gear_ratio
                * drive.efficiency)
        assert peak == pytest.approx(limits[drive.joint], rel=0.02), drive.joint


def test_stands_on_its_servo_loops(standing):
    heights, slips = standing['heights'], standing['slips']
    assert np.all(np.isfinite(heights)) and not standing['sim'].diverged
    assert np.max(np.abs(heights - standing['start']['pelvis'][2])) < 0.02
    assert np.max(slips) < 1e-3
    feet = {c.link_a for c in standing['sim'].contacts()} | {
        c.link_b for c in standing['sim'].contacts()}
    assert {'l_foot', 'r_foot'} <= feet


def test_ankle_sensors_carry_the_weight_above_the_ankles(standing):
    sim = standing['sim']
    above = total_mass(sim) - link_mass(sim, 'l_foot') - link_mass(sim, 'r_foot')
    assert np.mean(standing['ankle_sums']) == pytest.approx(above * G, rel=0.01)


def test_wrist_sensors_carry_the_hands_weight(standing):
    sim = standing['sim']
    # the hand pulls the forearm down by its weight (world axes, as above), on average over
    # the servo loops' jitter
    for k, side in enumerate('lr'):
        mean = standing['wrists'][:, k].mean(axis=0)
        assert mean[2] == pytest.approx(-link_mass(sim, f'{side}_hand') * G, rel=0.01)
        assert np.linalg.norm(mean[:2]) < 0.01 * link_mass(sim, f'{side}_hand') * G
