"""
The balancing walk (jointsim_ros/control/balance.py): its kinematics, estimator and a walk.

The sensors are the engine's truth here (no noise: bench/prototype_balance.py adds it), turned
into what the robot's IMU, encoders and ankle sensors give; the truth is read again only to
score the estimator.
"""
import io
import math
import os

from jointsim_ros.control.balance import (BalancingWalkingController, Measurements,
                                          run_closed_loop)
from jointsim_ros.control.walking import GaitSettings, Kinematics
from jointsim_ros.description import load_model
from jointsim_ros.rotations import quat_to_matrix
from jointsim_ros.sim.simulator import Simulator
from jointsim_ros.tools import headless
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, '..', 'urdf', 'jointsim_humanoid.urdf.xacro')
CONFIG = os.path.join(HERE, '..', 'config', 'jointsim_humanoid.yaml')


@pytest.fixture(scope='module')
def model():
    return load_model(URDF, CONFIG)


def exact_sensors():
    """Return measure(sim) -> Measurements from the engine's state, without noise."""
    last = {}

    def measure(sim):
        _, quat = sim.link_pose('pelvis')
        linear, angular = sim.link_twist('pelvis')
        rot = quat_to_matrix(quat)
        accel = np.zeros(3)
        if 'v' in last and sim.time > last['t']:
            accel = (linear - last['v']) / (sim.time - last['t'])
        last.update(t=sim.time, v=linear.copy())
        imu = np.concatenate([quat, rot.T @ angular, rot.T @ (accel + [0.0, 0.0, 9.81])])
        return Measurements(sim.time, sim.joint_positions(), sim.joint_velocities(), imu,
                            {side: sim.sensors.wrench(f'{side}_ankle_ft') for side in 'lr'})
    return measure


def test_kinematics_in_the_roots_frame_turn_with_the_root(model):
    # the estimator's batched poses (root frame) and the plan's (a placed root) agree: moving
    # and turning the root moves every body rigidly with it
    robot, _ = model
    kin = Kinematics(robot)
    rng = np.random.default_rng(5)
    q = rng.uniform(-0.5, 0.5, (3, len(kin.joint_names)))
    pos, rot = kin.poses(q)
    base = rng.uniform(-1.0, 1.0, (3, 3))
    turn = np.array([quat_to_matrix(v / np.linalg.norm(v)) for v in rng.normal(size=(3, 4))])
    expected_pos, expected_rot = kin.body_poses(
        base, turn, {name: q[:, i] for i, name in enumerate(kin.joint_names)})
    np.testing.assert_allclose(base + np.einsum('kij,bkj->bki', turn, pos), expected_pos,
                               atol=1e-12)
    np.testing.assert_allclose(np.einsum('kij,bkjl->bkil', turn, rot), expected_rot, atol=1e-12)


def test_walks_ten_steps_on_measurements_with_the_estimator_on_the_truth(model):
    controller = BalancingWalkingController(*model, GaitSettings())
    sim = Simulator.from_urdf(URDF, CONFIG)
    record = {}
    run_closed_loop(sim, controller, controller.duration() + 0.5, exact_sensors(),
                    record=record)
    pelvis = np.array(record['pelvis'])
    tilts = [math.degrees(math.acos(min(1.0, quat_to_matrix(q)[2, 2])))
             for q in record['pelvis_quat']]
    assert not sim.diverged
    assert pelvis[-1, 0] - pelvis[0, 0] >= 1.0
    assert np.min(pelvis[:, 2]) > pelvis[0, 2] - 0.03 and max(tilts) < 10.0
    assert abs(pelvis[-1, 1] - pelvis[0, 1]) < 0.05
    error = np.array(record['velocity']) - np.array(record['estimate'])
    assert np.sqrt(np.mean(np.sum(error[10:] ** 2, axis=1))) < 0.05


def walk(steps=10, pushes=(), seconds=None, open_loop=False, formulation=None):
    """
    Run jointsim_headless --humanoid --sensor-noise in-process; return its result dict.

    ``formulation``: None (the config's), or --formulation's value.
    """
    record = {}
    result = headless.walk(URDF, CONFIG, steps, seconds, out=io.StringIO(), pushes=pushes,
                           sensor_noise=True, open_loop=open_loop, record=record,
                           formulation=formulation)
    result['record'] = record
    return result


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_on_its_noisy_sensors_it_walks_ten_steps_and_estimates_the_base_speed(formulation):
    # every sensor noisy (the IMU's MEMS noise, 2^14-line motor encoders with noise, noisy
    # ankle sensors); the test reads the truth, the controller never does
    result = walk(formulation=formulation)
    assert result['fell'] is None and result['walked'] >= 1.0
    assert abs(result['lateral']) < 0.05
    record = result['record']
    error = np.array(record['velocity']) - np.array(record['estimate'])
    assert np.sqrt(np.mean(np.sum(error[10:] ** 2, axis=1))) < 0.05        # m/s RMS


#: The forward push (N, walking, at 4 s) that the planned gait alone does not survive.
OPEN_LOOP_FALLS = {'maximal': 120.0, 'tree': 160.0}


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
@pytest.mark.parametrize('push,open_loop_falls', [
    ((4.0, 0.0, 80.0), False), ((4.0, 0.0, -80.0), False), ((4.0, 120.0, 0.0), True)],
    ids=['80 N left', '80 N right', '120 N forward'])
def test_walking_it_survives_the_pushes_at_the_pelvis(push, open_loop_falls, formulation):
    closed = walk(pushes=[push], formulation=formulation)
    assert closed['fell'] is None and closed['walked'] >= 1.0, closed
    if open_loop_falls:  # the planned gait alone does not survive it: the push is no pat
        # (the tree's open loop, its joints exact, rides out 140 N forward and falls at 160 N;
        # the maximal one falls at 120 N; the closed loop survives 160 N in both)
        stronger = (push[0], OPEN_LOOP_FALLS[formulation], push[2])
        assert walk(pushes=[stronger], open_loop=True, formulation=formulation)['fell'] \
            is not None


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_standing_it_survives_300_n_forward(formulation):
    result = walk(steps=0, seconds=8.0, pushes=[(2.0, 300.0, 0.0)], formulation=formulation)
    assert result['fell'] is None
    push = np.array(result['record']['push'])
    assert push[:, 0].max() == 300.0 and np.count_nonzero(push[:, 0]) == 20   # 0.1 s at 200 Hz


@pytest.mark.slow
def test_sixty_seconds_of_walking_drift_less_than_ten_centimetres_sideways():
    # 105 steps of 0.55 s: about 60 s of walking
    result = walk(steps=105)
    assert result['fell'] is None
    assert result['sim'].time >= 60.0
    assert abs(result['lateral']) < 0.1
    assert result['walked'] > 12.0
