"""Servo modes of the drives (jointsim_ros/sim/servo.py) against their designed responses."""
import math

from jointsim_ros import CommandError, Simulator
import numpy as np
import pytest
from robots import inertial, joint, link, robot

R, L, KT, JM, N, B = 2.0, 1e-3, 0.05, 1e-5, 20.0, 1e-5


def disc(izz=0.04, mass=2.0):
    """Return a disc turning about the vertical axis (gravity does no work on it)."""
    return robot('disc', link('base'), link('disc', inertial(mass, izz / 2, izz / 2, izz)),
                 joint('j', 'continuous', 'base', 'disc', axis='0 0 1'))


def pendulum_arm(length=0.3, mass=1.0):
    """Return a bob on a rod turning about the horizontal y axis: gravity loads the drive."""
    bob = link('bob', inertial(mass, 1e-3, 1e-3, 1e-3, xyz=f'{length} 0 0'))
    return robot('arm', link('base'), bob,
                 joint('j', 'continuous', 'base', 'bob', axis='0 1 0'))


def driven(urdf, **overrides):
    """Return a Simulator of ``urdf`` with a geared DC drive on joint j."""
    params = {'resistance': R, 'inductance': L, 'torque_constant': KT, 'rotor_inertia': JM,
              'gear_ratio': N, 'viscous_friction': B, 'supply_voltage': 24.0}
    params.update(overrides)
    return Simulator.from_urdf(urdf, {'drives': {'j': params}})


def run(sim, seconds, probe):
    """Step one by one for ``seconds``; return (times, probe() after each step)."""
    times, values = [], []
    for _ in range(int(round(seconds / sim.dt))):
        sim.step(1)
        times.append(sim.time)
        values.append(probe())
    return np.array(times), np.array(values)


def crossing(times, values, level):
    """Return the first time ``values`` reaches ``level`` (linear between samples)."""
    k = int(np.argmax(values >= level))
    assert k > 0 and values[k] >= level
    return times[k - 1] + (level - values[k - 1]) / (values[k] - values[k - 1]) * (
        times[k] - times[k - 1])


def test_current_loop_step_is_first_order_with_its_bandwidth():
    # a locked rotor (a huge load): the effort command sets i* = effort / (N Kt), and the
    # current loop's design makes i(t) = i* (1 - exp(-w_c t)) at every sample
    w_c = 800.0
    sim = driven(disc(izz=1e9, mass=1e9), current_bandwidth=w_c)
    effort = 6.0
    sim.set_servo_targets(efforts={'j': effort})
    times, currents = run(sim, 0.01, lambda: sim.drive_state('j')['current'])
    target = effort / (N * KT)
    expected = target * (1.0 - np.exp(-w_c * times))
    assert np.max(np.abs(currents - expected)) < 1e-3 * target
    assert sim.drive_modes() == {'j': 'effort'}


def test_velocity_step_settles_with_the_designed_bandwidth():
    w_v = 50.0
    sim = driven(disc(), velocity_bandwidth=w_v)
    assert sim._servo.load_inertia[0] == pytest.approx(0.04)  # the disc's inertia, carried
    target = 1.0  # rad/s at the joint: far from the supply (no saturation)
    sim.set_servo_targets(velocities={'j': target})
    times, speeds = run(sim, 0.5, lambda: sim.joint_velocities()[0])
    t63 = crossing(times, speeds, target * (1.0 - math.exp(-1.0)))
    assert t63 == pytest.approx(1.0 / w_v, rel=0.05)
    assert speeds.max() < 1.02 * target  # first order: no overshoot to speak of
    assert speeds[-1] == pytest.approx(target, rel=1e-3)
    assert abs(sim.drive_state('j')['voltage']) < 24.0


def test_position_step_has_no_steady_state_error_under_gravity():
    length, mass = 0.3, 1.0
    sim = driven(pendulum_arm(length, mass))
    target = -0.5  # rad about +y: the bob rises, gravity pulls it back
    sim.set_servo_targets(positions={'j': target})
    sim.step(3000)
    assert sim.joint_positions()[0] == pytest.approx(target, abs=1e-5)
    assert abs(sim.joint_velocities()[0]) < 1e-4
    # the drive holds the gravity torque m g l cos(q) with its current
    held = mass * 9.81 * length * math.cos(target)
    assert abs(sim.drive_state('j')['output_effort']) == pytest.approx(held, rel=1e-3)


def test_saturation_at_the_supply_shows_in_the_current():
    limit = 5.0
    sim = driven(disc(), current_limit=limit)
    no_load = KT * 24.0 / (R * B + KT * KT) / N  # joint speed at the full supply, rad/s
    sim.set_servo_targets(velocities={'j': 3.0 * no_load})  # more than the motor can do
    times, states = run(sim, 3.0, lambda: sim.drive_state('j'))
    currents = np.array([s['current'] for s in states])
    voltages = np.array([s['voltage'] for s in states])
    # accelerating: the current loop holds the current limit until the back-EMF eats the supply
    assert currents.max() == pytest.approx(limit, rel=1e-2)
    assert np.abs(voltages).max() == pytest.approx(24.0)
    # then the voltage stays at the supply and the current falls to the no-load current
    assert voltages[-1] == pytest.approx(24.0)
    assert sim.joint_velocities()[0] == pytest.approx(no_load, rel=1e-3)
    assert currents[-1] == pytest.approx(B * no_load * N / KT, rel=1e-2)


def test_anti_windup_recovers_at_once_from_saturation():
    sim = driven(disc(), current_limit=5.0)
    no_load = KT * 24.0 / (R * B + KT * KT) / N
    sim.set_servo_targets(velocities={'j': 3.0 * no_load})
    sim.step(2000)  # long in saturation
    sim.set_servo_targets(velocities={'j': 0.5 * no_load})
    times, speeds = run(sim, 1.0, lambda: sim.joint_velocities()[0])
    # a wound-up integrator (2 s of error summed) would hold the full voltage long after the
    # target fell: here the speed turns down at once and settles within half a second
    assert speeds[20] < speeds[0] - 0.05 * no_load
    assert np.all(np.abs(speeds[times > 0.5 + times[0]] - 0.5 * no_load) < 1e-2 * no_load)


def test_voltage_command_returns_the_drive_to_voltage_mode_and_bad_targets_are_refused():
    sim = driven(disc())
    sim.set_servo_targets(velocities={'j': 1.0})
    sim.set_voltages({'j': 2.0})
    assert sim.drive_modes() == {'j': 'voltage'}
    sim.step(10)
    assert sim.drive_state('j')['voltage'] == 2.0
    with pytest.raises(CommandError, match="'k' has no drive"):
        sim.set_servo_targets(positions={'k': 1.0})
    with pytest.raises(CommandError, match='not finite'):
        sim.set_servo_targets(velocities={'j': float('nan')})
    assert sim.drive_modes() == {'j': 'voltage'}
    sim.set_servo_targets(positions={'j': 1.0})
    sim.reset()
    assert sim.drive_modes() == {'j': 'voltage'}
