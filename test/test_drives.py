"""DC drives against the analytic motor: speeds, torques, time constants, energy, saturation."""
import math

from jointsim_ros import CommandError, ConfigError, resources, Simulator
from jointsim_ros.physics.drives import (current_after_step, gear_gain, motor_row,
                                         output_effort, voltage_for_effort)
import numpy as np
import pytest
from robots import inertial, joint, link, robot

R, L, KT, JM, N = 2.0, 1e-3, 0.05, 1e-5, 20.0


def spinner(izz=0.02, mass=1.0, extra='', jtype='continuous', axis='0 0 1'):
    """Return one link turning about the vertical axis: gravity does no work on it."""
    limits = '<limit lower="-1" upper="1" effort="100" velocity="100"/>' if \
        jtype == 'prismatic' else ''
    return robot('spinner', link('base'),
                 link('arm', inertial(mass, max(0.01, izz), max(0.01, izz), izz,
                                      xyz='0 0 0.1')),
                 joint('j', jtype, 'base', 'arm', axis=axis, extra=limits + extra))


def drive(**overrides):
    """Return the drive parameters used by most tests, with overrides."""
    params = {'resistance': R, 'inductance': L, 'torque_constant': KT, 'rotor_inertia': JM,
              'gear_ratio': N}
    params.update(overrides)
    return {k: v for k, v in params.items() if v is not None}


def driven(urdf=None, dt=0.001, formulation='maximal', **overrides):
    """Return a Simulator of ``urdf`` (default the spinner) with the drive on joint j."""
    return Simulator.from_urdf(urdf or spinner(), {
        'dt': dt, 'solver': {'formulation': formulation}, 'drives': {'j': drive(**overrides)}})


# the analytic drive checks hold in both formulations (tree mode: docs/tree.md)
FORMULATIONS = pytest.mark.parametrize('formulation', ['maximal', 'tree'])


@FORMULATIONS
@pytest.mark.parametrize('dt', [0.001, 0.01])
def test_no_load_speed_includes_friction(dt, formulation):
    b = 1e-5
    sim = driven(dt=dt, formulation=formulation, viscous_friction=b)
    sim.set_voltages({'j': 12.0})
    sim.step(int(round(3.0 / dt)))
    rotor = 12.0 * KT / (R * b + KT * KT)  # Kt i = b w and u = R i + Ke w
    state = sim.drive_state('j')
    assert state['rotor_speed'] == pytest.approx(rotor, rel=5e-3)
    assert sim.joint_velocities()[0] == pytest.approx(rotor / N, rel=5e-3)
    assert state['current'] == pytest.approx(b * rotor / KT, rel=5e-3)


@FORMULATIONS
@pytest.mark.parametrize('dt', [0.001, 0.01])
def test_stall_torque(dt, formulation):
    # a link of huge inertia cannot move: the drive delivers its stall torque N Kt U / R
    sim = driven(spinner(izz=1e9, mass=1e9), dt=dt, formulation=formulation)
    sim.set_voltages({'j': 6.0})
    sim.step(int(round(0.1 / dt)))
    assert sim.joint_efforts()[0] == pytest.approx(N * KT * 6.0 / R, rel=1e-4)
    assert sim.drive_state('j')['current'] == pytest.approx(6.0 / R, rel=1e-4)
    assert sim.drive_state('j')['motor_torque'] == pytest.approx(KT * 6.0 / R, rel=1e-4)


@FORMULATIONS
def test_gear_efficiency_reduces_the_stall_torque(formulation):
    sim = driven(spinner(izz=1e9, mass=1e9), formulation=formulation, efficiency=0.8)
    sim.set_voltages({'j': 6.0})
    sim.step(100)
    assert sim.joint_efforts()[0] == pytest.approx(0.8 * N * KT * 6.0 / R, rel=1e-4)


@FORMULATIONS
def test_drive_effort_state_at_stall_and_running_against_a_viscous_load(formulation):
    """State.drive_effort, written by both engines, is the analytic output effort."""
    eta, b = 0.8, 1e-5
    stalled = driven(spinner(izz=1e9, mass=1e9), formulation=formulation, efficiency=eta,
                     viscous_friction=b)
    stalled.set_voltages({'j': 6.0})
    stalled.step(100)
    effort = stalled._engine.state.drive_effort[0]
    assert effort == pytest.approx(eta * N * KT * 6.0 / R, rel=1e-6)
    assert stalled.joint_efforts()[0] == effort
    # running at constant speed against joint damping c: eta N (Kt i - b w) = c qd with
    # u = R i + Ke N qd, so qd = eta N Kt u / R / (c + eta N^2 (Kt Ke / R + b))
    c = 0.1
    urdf = spinner().replace('<axis xyz="0 0 1"/>',
                             f'<axis xyz="0 0 1"/><dynamics damping="{c}"/>')
    running = driven(urdf, formulation=formulation, efficiency=eta, viscous_friction=b)
    running.set_voltages({'j': 6.0})
    running.step(2000)
    speed = eta * N * KT * 6.0 / R / (c + eta * N * N * (KT * KT / R + b))
    assert running.joint_velocities()[0] == pytest.approx(speed, rel=1e-6)
    assert running._engine.state.drive_effort[0] == pytest.approx(c * speed, rel=1e-6)


def test_force_torque_sensor_on_a_stalled_drive_reads_its_output_effort():
    # the sensor adds the drive's coordinate impulse, State.drive_effort dt, to the joint's
    sim = Simulator.from_urdf(spinner(izz=1e9, mass=1e9), {
        'drives': {'j': drive(efficiency=0.8)},
        'force_torque_sensors': {'ft': {'joint': 'j', 'rate': 0,
                                        'measure_direction': 'parent_to_child'}}})
    sim.set_voltages({'j': 6.0})
    sim.step(100)
    assert sim.sensors.wrench('ft')[5] == pytest.approx(0.8 * N * KT * 6.0 / R, rel=1e-6)


@pytest.mark.parametrize('effort, rate, accel', [
    (1.5, 2.0, 30.0), (1.5, -2.0, 30.0), (-0.7, 3.0, -50.0), (0.0, 1.0, 0.0)])
def test_voltage_for_effort_inverts_the_forward_model(effort, rate, accel):
    """The inverse's voltage, applied for one step, gives the effort back through the model."""
    dt, i0, eta, b, n = 1e-3, 0.4, 0.85, 2e-5, N
    params = (R, L, KT, KT, b)
    voltage, current, motor_torque = voltage_for_effort(effort, rate, accel, i0, dt, n, eta,
                                                        *params, JM)
    assert motor_torque == pytest.approx(KT * current, rel=1e-12)
    w_new = n * rate
    i_new = current_after_step(voltage, i0, w_new, dt, R, L, KT, math.inf, 0.0)
    assert i_new == pytest.approx(current, rel=1e-9, abs=1e-12)
    rotor_torque = KT * i_new - b * w_new - JM * n * accel  # what the gear transmits
    gain = gear_gain(n, eta, rotor_torque * w_new)
    out = output_effort(gain, i_new, w_new, n * accel, KT, b, JM)
    assert out == pytest.approx(effort, rel=1e-6, abs=1e-12)
    # the motor row is the same model: Kt i+ - b w+ = tau0 - c w+
    tau0, slope = motor_row(voltage, i0, dt, *params)
    assert tau0 - slope * w_new == pytest.approx(KT * i_new - b * w_new, rel=1e-9)


@FORMULATIONS
def test_voltage_for_effort_gives_back_the_voltage_each_engine_applied(formulation):
    """A pendulum under a varying voltage: every step's output effort inverts to its voltage."""
    sim = driven(pendulum_with_drive(), formulation=formulation, viscous_friction=1e-5)
    drives = sim._engine.drives
    worst = 0.0
    for k in range(300):
        u = 5.0 * math.sin(2 * math.pi * k * sim.dt * 3)
        sim.set_voltages({'j': u})
        rate, current = sim.joint_velocities()[0], sim.drive_state('j')['current']
        sim.step(1)
        new_rate = sim.joint_velocities()[0]
        voltage, _, _ = voltage_for_effort(
            sim._engine.state.drive_effort[0], new_rate, (new_rate - rate) / sim.dt, current,
            sim.dt, N, 1.0, R, L, KT, KT, 1e-5, 1.0 / drives.inv_rotor_inertia[0])
        worst = max(worst, abs(voltage - u))
    assert worst < 1e-6 * 5.0


def test_current_step_response_small_dt():
    tau = L / R
    dt = tau / 100
    sim = driven(spinner(izz=1e9, mass=1e9), dt=dt)
    sim.set_voltages({'j': 6.0})
    for k in range(1, 301):
        sim.step(1)
        if k % 50 == 0:
            exact = 6.0 / R * (1 - math.exp(-k * dt / tau))
            assert sim.drive_state('j')['current'] == pytest.approx(exact, rel=1e-2)


def test_current_step_response_large_dt_has_no_oscillation():
    tau = L / R
    dt = 20 * tau  # dt much longer than L/R
    sim = driven(spinner(izz=1e9, mass=1e9), dt=dt)
    sim.set_voltages({'j': 6.0})
    currents = []
    for _ in range(20):
        sim.step(1)
        currents.append(sim.drive_state('j')['current'])
    # monotone (no overshoot, no ringing) up to the creep of the huge link under the stall torque
    assert np.all(np.diff(currents) >= -1e-9)
    assert max(currents) <= 6.0 / R * (1 + 1e-9)
    assert currents[-1] == pytest.approx(6.0 / R, rel=1e-9)


@FORMULATIONS
def test_mechanical_time_constant_of_motor_and_load(formulation):
    izz = 0.02
    i_axis = izz  # the COM lies on the axis
    sim = driven(spinner(izz=izz), dt=1e-4, formulation=formulation, inductance=1e-7)
    inertia = JM + i_axis / N ** 2  # rotor side
    tau_m = R * inertia / (KT * KT)
    w_nl = 12.0 / KT
    sim.set_voltages({'j': 12.0})
    sim.step(int(round(tau_m / sim.dt)))
    assert sim.drive_state('j')['rotor_speed'] == pytest.approx(w_nl * (1 - math.exp(-1)),
                                                                rel=1e-2)
    sim.step(int(round(4 * tau_m / sim.dt)))
    assert sim.drive_state('j')['rotor_speed'] == pytest.approx(
        w_nl * (1 - math.exp(-5)), rel=1e-2)


@FORMULATIONS
def test_back_driving_sees_the_reflected_rotor_inertia(formulation):
    izz = 0.02
    # an open-circuit-like motor (huge resistance) so the back-EMF barely brakes
    sim = driven(spinner(izz=izz), formulation=formulation, resistance=1e9)
    sim.set_joint_efforts({'j': 0.5})
    sim.step(500)
    expected = 0.5 / (izz + N ** 2 * JM) * sim.time
    assert sim.joint_velocities()[0] == pytest.approx(expected, rel=1e-6)
    assert sim.drive_state('j')['rotor_speed'] == pytest.approx(N * expected, rel=1e-6)


def pendulum_with_drive():
    """Return a 1 kg pendulum on a horizontal axis (gravity loads the drive)."""
    return robot('arm', link('base'), link('arm', inertial(1.0, 0.01, 0.01, 0.01,
                                                           xyz='0.3 0 0')),
                 joint('j', 'continuous', 'base', 'arm', axis='0 1 0'))


def test_energy_balance():
    b = 2e-5
    sim = driven(pendulum_with_drive(), viscous_friction=b)
    e0 = sum(sim.mechanical_energy())
    supplied = copper = friction = 0.0
    for k in range(3000):
        u = 10.0 * math.sin(2 * math.pi * k * sim.dt)
        sim.set_voltages({'j': u})
        sim.step(1)
        s = sim.drive_state('j')
        supplied += u * s['current'] * sim.dt
        copper += R * s['current'] ** 2 * sim.dt
        friction += b * s['rotor_speed'] ** 2 * sim.dt
    stored = sum(sim.mechanical_energy()) - e0 + 0.5 * L * sim.drive_state('j')['current'] ** 2
    assert supplied > 1.0
    assert supplied == pytest.approx(copper + friction + stored, rel=1e-2)


def test_supply_saturation_clips_and_reports():
    sim = driven(supply_voltage=12.0)
    assert sim.set_voltages({'j': 30.0}) == {'j': 12.0}
    assert sim.drive_state('j')['voltage'] == 12.0
    assert sim.set_voltages({'j': -5.0}) == {}
    sim.set_voltages({'j': -40.0})
    sim.step(3000)
    assert sim.drive_state('j')['rotor_speed'] == pytest.approx(-12.0 / KT, rel=5e-3)


def test_current_limit_caps_current_and_torque():
    sim = driven(spinner(izz=1e9, mass=1e9), current_limit=1.0)
    sim.set_voltages({'j': 12.0})  # 6 A unlimited
    for _ in range(50):
        sim.step(2)
        assert abs(sim.drive_state('j')['current']) <= 1.0 + 1e-9
    assert sim.drive_state('j')['current'] == pytest.approx(1.0)
    assert sim.joint_efforts()[0] == pytest.approx(N * KT * 1.0, rel=1e-6)


def test_voltage_pd_controller_holds_a_two_link_arm_against_gravity():
    arm = robot('arm2', link('base'),
                link('upper', inertial(1.5, 0.01, 0.02, 0.02, xyz='0.2 0 0')),
                link('lower', inertial(0.8, 0.005, 0.01, 0.01, xyz='0.15 0 0')),
                joint('shoulder', 'revolute', 'base', 'upper', axis='0 1 0',
                      extra='<limit lower="-3" upper="3" effort="50" velocity="5"/>'),
                joint('elbow', 'revolute', 'upper', 'lower', xyz='0.4 0 0', axis='0 1 0',
                      extra='<limit lower="-3" upper="3" effort="50" velocity="5"/>'))
    motor = {'resistance': 1.0, 'inductance': 5e-4, 'torque_constant': 0.05,
             'rotor_inertia': 2e-5, 'gear_ratio': 100.0, 'supply_voltage': 24.0,
             'viscous_friction': 1e-5}
    sim = Simulator.from_urdf(arm, {'drives': {'shoulder': motor, 'elbow': motor}})
    target = np.array([-0.3, 0.5])  # both links raised above horizontal
    kp, kd = 60.0, 4.0  # V/rad, V s/rad
    for _ in range(4000):
        q, qd = sim.joint_positions(), sim.joint_velocities()
        u = kp * (target - q) - kd * qd
        sim.set_voltages(dict(zip(sim.joint_names, u)))
        sim.step(1)
    q = sim.joint_positions()
    # steady state: N Kt (kp e) / R balances gravity, so e = tau_g R / (N Kt kp) (friction aside)
    g = 9.81
    a = target[0]
    tau_elbow = 0.8 * g * 0.15 * math.cos(a + target[1])
    tau_shoulder = (1.5 * g * 0.2 * math.cos(a)
                    + 0.8 * g * (0.4 * math.cos(a) + 0.15 * math.cos(a + target[1])))
    gain = 100.0 * 0.05 * kp / 1.0
    expected = np.array([tau_shoulder, tau_elbow]) / gain
    # y-axis joints: a positive angle lowers the link (z = -x sin q), so gravity pushes +q
    assert q - target == pytest.approx(expected, rel=0.05)
    assert np.all(np.abs(sim.joint_velocities()) < 1e-4)


@pytest.mark.parametrize('dt', [0.001, 0.01])
def test_high_gear_ratio_on_a_light_link_is_stable(dt):
    light = robot('light', link('base'), link('tip', inertial(0.1, 1e-5, 1e-5, 1e-5,
                                                              xyz='0.1 0 0')),
                  joint('j', 'continuous', 'base', 'tip', axis='0 0 1'))
    sim = driven(light, dt=dt, gear_ratio=300.0, rotor_inertia=1e-6)
    sim.set_voltages({'j': 12.0})
    sim.step(int(round(2.0 / dt)))
    assert sim.joint_velocities()[0] == pytest.approx(12.0 / KT / 300.0, rel=5e-3)
    assert max(sim.joint_anchor_errors().values()) < 1e-6


def test_datasheet_values_give_the_datasheet_motor():
    datasheet = {'nominal_voltage': 24.0, 'stall_torque': 0.6, 'no_load_speed': 500.0,
                 'electrical_time_constant': 5e-4, 'rotor_inertia': 1e-5, 'gear_ratio': 10.0}
    free = Simulator.from_urdf(spinner(), {'drives': {'j': datasheet}})
    free.set_voltages({'j': 100.0})  # clipped to the nominal voltage
    free.step(3000)
    assert free.drive_state('j')['voltage'] == 24.0
    assert free.drive_state('j')['rotor_speed'] == pytest.approx(500.0, rel=5e-3)
    locked = Simulator.from_urdf(spinner(izz=1e9, mass=1e9), {'drives': {'j': datasheet}})
    locked.set_voltages({'j': 24.0})
    locked.step(100)
    assert locked.joint_efforts()[0] == pytest.approx(10.0 * 0.6, rel=1e-4)


def test_prismatic_joint_driven_through_a_lead():
    lead = 0.002  # m per rotor radian
    sim = driven(spinner(jtype='prismatic', axis='1 0 0'), gear_ratio=None, lead=lead)
    sim.set_voltages({'j': 6.0})
    sim.step(100)
    assert sim.joint_velocities()[0] == pytest.approx(sim.drive_state('j')['rotor_speed']
                                                      * lead, rel=1e-9)
    assert sim.joint_velocities()[0] > 0


def test_urdf_transmission_gives_the_gear_ratio():
    transmission = ('<transmission name="t"><type>transmission_interface/SimpleTransmission'
                    '</type><joint name="j"><hardwareInterface>EffortJointInterface'
                    '</hardwareInterface></joint><actuator name="m"><mechanicalReduction>50'
                    '</mechanicalReduction></actuator></transmission>')
    urdf = spinner().replace('</robot>', transmission + '</robot>')
    params = drive()
    del params['gear_ratio']
    sim = Simulator.from_urdf(urdf, {'drives': {'j': params}})
    assert sim.model.drives[0].gear_ratio == 50.0
    explicit = Simulator.from_urdf(urdf, {'drives': {'j': drive(gear_ratio=7.0)}})
    assert explicit.model.drives[0].gear_ratio == 7.0


@pytest.mark.parametrize('params, message', [
    ({'resistance': 1.0, 'stall_torque': 1.0, 'rotor_inertia': 1e-5}, 'mixes'),
    ({'resistance': 1.0, 'torque_constant': 0.1}, 'lacks inductance, rotor_inertia'),
    ({**drive(), 'lead': 0.01}, 'lead .* is for prismatic'),
    ({**drive(), 'efficiency': 1.5}, 'efficiency'),
    ({**drive(), 'resistence': 1.0}, "did you mean 'resistance'"),
])
def test_bad_drive_config_is_a_clear_error(params, message):
    with pytest.raises(ConfigError, match=message):
        Simulator.from_urdf(spinner(), {'drives': {'j': params}})


def test_drive_on_a_missing_joint_is_a_clear_error():
    with pytest.raises(ConfigError, match="drives names joint 'jj'.*does not define.*'j'"):
        Simulator.from_urdf(spinner(), {'drives': {'jj': drive()}})
    with pytest.raises(ConfigError, match="joint 'base_to_arm'.*not revolute"):
        Simulator.from_urdf(spinner().replace('"continuous"', '"fixed"').replace(
            'name="j"', 'name="base_to_arm"'), {'keep_fixed_joints': ['base_to_arm'],
                                                'drives': {'base_to_arm': drive()}})


def test_bad_voltage_commands_change_nothing():
    sim = driven()
    sim.set_voltages({'j': 3.0})
    with pytest.raises(CommandError, match="joint 'arm' has no drive"):
        sim.set_voltages({'arm': 1.0})
    with pytest.raises(CommandError, match='not finite'):
        sim.set_voltages({'j': math.nan})
    assert sim.drive_state('j')['voltage'] == 3.0
    sim.reset()
    assert sim.drive_state('j')['voltage'] == 0.0


def test_bundled_arm_config_drives_every_joint_up_to_its_effort_limit():
    sim = Simulator.from_urdf(str(resources.share_file(*resources.DEFAULT_ROBOT)),
                              str(resources.share_file(*resources.DEFAULT_CONFIG)))
    assert sim.drive_names == sim.joint_names and len(sim.drive_names) == 7
    limits = {j.name: j.effort_limit for j in sim.model.joints}
    for d in sim.model.drives:
        peak = d.efficiency * d.gear_ratio * d.torque_constant * d.current_limit
        assert peak == pytest.approx(limits[d.joint], rel=0.05)
