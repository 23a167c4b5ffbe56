"""
Joint measurements (config ``joint_sensors``): encoder counts through the gear, noise, delay.

What joint_states, dynamic_joint_states, the servo loops and controllers read of a joint
(docs/sensors.md, "Joint measurements"); exact by default.  The scenarios that read the
motion run in both formulations.
"""
import math

from jointsim_ros import Simulator
from jointsim_ros.errors import ConfigError
import numpy as np
import pytest
from robots import inertial, joint, link, robot

GEAR = 10.0
DRIVE = {'resistance': 1.0, 'inductance': 1e-3, 'torque_constant': 0.05, 'rotor_inertia': 1e-5,
         'gear_ratio': GEAR, 'supply_voltage': 24.0}
#: The scenarios that read the motion run in both formulations.
both = pytest.mark.parametrize('formulation', ['maximal', 'tree'])


def arm():
    """Return a 1 kg bob 0.3 m out on a horizontal axis: gravity loads the joint."""
    bob = link('bob', inertial(1.0, 1e-3, 1e-3, 1e-3, xyz='0.3 0 0'))
    return robot('arm', link('base'), bob, joint('j', 'continuous', 'base', 'bob', axis='0 1 0'))


def swinging(sensors, drive=True, formulation='maximal'):
    """Return the arm released from 1 rad, with a drive (unpowered) and these joint sensors."""
    config = {'joint_sensors': {'j': sensors}, 'initial_positions': {'j': 1.0},
              'solver': {'formulation': formulation}}
    if drive:
        config['drives'] = {'j': DRIVE}
    return Simulator.from_urdf(arm(), config)


@both
def test_positions_are_whole_counts_of_the_motor_encoder_through_the_gear(formulation):
    counts = 1024
    quantum = 2.0 * math.pi / (counts * GEAR)
    sim = swinging({'counts_per_revolution': counts}, formulation=formulation)
    assert sim.joint_sensors.resolution[0] == pytest.approx(quantum)
    for _ in range(300):
        sim.step(1)
        measured, speed = sim.joint_sensors.read()
        exact = sim.joint_positions()[0]
        assert measured[0] / quantum == pytest.approx(round(measured[0] / quantum), abs=1e-9)
        assert abs(measured[0] - exact) <= 0.5 * quantum + 1e-12
        assert speed[0] == sim.joint_velocities()[0]
    # without a drive the counts are on the joint itself
    bare = swinging({'counts_per_revolution': counts}, drive=False, formulation=formulation)
    assert bare.joint_sensors.resolution[0] == pytest.approx(2.0 * math.pi / counts)


def test_noise_has_its_standard_deviation_and_one_draw_per_step():
    sim = swinging({'position_noise': 1e-3, 'velocity_noise': 0.02, 'current_noise': 0.05})
    errors = []
    for _ in range(20000):
        sim.step(1)
        measured = sim.joint_sensors.read()
        again = sim.joint_sensors.read()
        assert np.array_equal(measured[0], again[0])          # the same within a step
        errors.append((measured[0][0] - sim.joint_positions()[0],
                       measured[1][0] - sim.joint_velocities()[0],
                       sim.joint_sensors.current('j', 0.0)))
    errors = np.array(errors)
    assert np.allclose(errors.std(axis=0), [1e-3, 0.02, 0.05], rtol=0.05)
    assert np.allclose(errors.mean(axis=0), 0.0, atol=[3e-5, 6e-4, 1.5e-3])


@both
def test_a_delayed_reading_is_the_state_that_many_steps_before(formulation):
    sim = swinging({'delay': 7}, formulation=formulation)
    exact = []
    for _ in range(200):
        sim.step(1)
        exact.append((sim.joint_positions()[0], sim.joint_velocities()[0]))
        measured = sim.joint_sensors.read()
        past = exact[max(len(exact) - 8, 0)]
        if len(exact) > 7:
            assert (measured[0][0], measured[1][0]) == past
    # the steps are taken one at a time to keep them: a batch reads the same
    batch = swinging({'delay': 7}, formulation=formulation)
    batch.step(200)
    assert batch.joint_sensors.read()[0][0] == exact[-8][0]


@both
def test_the_servo_loop_closes_on_the_measured_position(formulation):
    # a position servo against gravity: with an exact encoder it holds the target exactly;
    # with 64 counts per motor turn it stops once the count reads the target, anywhere in
    # that count (2 pi / 640 rad wide)
    quantum = 2.0 * math.pi / (64 * GEAR)
    target = -round(0.5 / quantum) * quantum
    held = {}
    for counts in (0, 64):
        sim = Simulator.from_urdf(arm(), {
            'drives': {'j': DRIVE}, 'joint_sensors': {'j': {'counts_per_revolution': counts}},
            'solver': {'formulation': formulation}})
        sim.set_servo_targets(positions={'j': target})
        sim.step(3500)
        held[counts] = sim.joint_positions()[0] - target
        assert sim.joint_sensors.read()[0][0] == pytest.approx(target, abs=1e-12)
    assert abs(held[0]) < 1e-9
    assert 1e-4 < abs(held[64]) <= 0.5 * quantum


def test_every_joint_by_star_and_an_unknown_joint_is_refused():
    sim = Simulator.from_urdf(arm(), {'joint_sensors': {'*': {'position_noise': 0.1}}})
    assert sim.joint_sensors.position_noise[0] == 0.1 and sim.joint_sensors.active
    assert not Simulator.from_urdf(arm()).joint_sensors.active
    with pytest.raises(ConfigError, match="joint_sensors names joint 'k'.*'j'"):
        Simulator.from_urdf(arm(), {'joint_sensors': {'k': {'delay': 1}}})
    with pytest.raises(ConfigError, match=r'joint_sensors\.j\.delay'):
        Simulator.from_urdf(arm(), {'joint_sensors': {'j': {'delay': -1}}})
