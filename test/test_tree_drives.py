"""Tree formulation: drives (rotor armature, implicit back-EMF) and joint damping, analytically."""
import math

from jointsim_ros import Simulator
import numpy as np
import pytest
from test_drives import drive, JM, KT, N, R, spinner

TREE = {'formulation': 'tree'}


def tree_driven(urdf=None, dt=0.001, **overrides):
    """Return a tree-mode Simulator of ``urdf`` (default the spinner) with the drive on j."""
    return Simulator.from_urdf(urdf or spinner(), {'dt': dt, 'solver': TREE,
                                                   'drives': {'j': drive(**overrides)}})


@pytest.mark.parametrize('dt', [0.001, 0.01])
def test_no_load_speed_includes_friction(dt):
    b = 1e-5
    sim = tree_driven(dt=dt, viscous_friction=b)
    sim.set_voltages({'j': 12.0})
    sim.step(int(round(3.0 / dt)))
    rotor = 12.0 * KT / (R * b + KT * KT)  # Kt i = b w and u = R i + Ke w
    state = sim.drive_state('j')
    assert state['rotor_speed'] == pytest.approx(rotor, rel=5e-3)
    assert sim.joint_velocities()[0] == pytest.approx(rotor / N, rel=5e-3)
    assert state['current'] == pytest.approx(b * rotor / KT, rel=5e-3)


@pytest.mark.parametrize('dt', [0.001, 0.01])
def test_stall_torque(dt):
    sim = tree_driven(spinner(izz=1e9, mass=1e9), dt=dt)
    sim.set_voltages({'j': 6.0})
    sim.step(int(round(0.1 / dt)))
    assert sim.joint_efforts()[0] == pytest.approx(N * KT * 6.0 / R, rel=1e-4)
    assert sim.drive_state('j')['current'] == pytest.approx(6.0 / R, rel=1e-4)
    assert sim.drive_state('j')['motor_torque'] == pytest.approx(KT * 6.0 / R, rel=1e-4)


def test_gear_efficiency_reduces_the_stall_torque():
    sim = tree_driven(spinner(izz=1e9, mass=1e9), efficiency=0.8)
    sim.set_voltages({'j': 6.0})
    sim.step(100)
    assert sim.joint_efforts()[0] == pytest.approx(0.8 * N * KT * 6.0 / R, rel=1e-4)


def test_current_limit_holds_the_torque():
    sim = tree_driven(spinner(izz=1e9, mass=1e9), current_limit=1.0)
    sim.set_voltages({'j': 6.0})  # 3 A unlimited
    sim.step(50)
    assert sim.drive_state('j')['current'] == pytest.approx(1.0, rel=1e-9)
    assert sim.joint_efforts()[0] == pytest.approx(N * KT * 1.0, rel=1e-4)


def test_mechanical_time_constant_of_motor_and_load():
    izz = 0.02
    sim = tree_driven(spinner(izz=izz), dt=1e-4, inductance=1e-7)
    inertia = JM + izz / N ** 2  # rotor side
    tau_m = R * inertia / (KT * KT)
    w_nl = 12.0 / KT
    sim.set_voltages({'j': 12.0})
    sim.step(int(round(tau_m / sim.dt)))
    assert sim.drive_state('j')['rotor_speed'] == pytest.approx(w_nl * (1 - math.exp(-1)),
                                                                rel=1e-2)


def test_back_driving_sees_the_reflected_rotor_inertia():
    izz = 0.02
    sim = tree_driven(spinner(izz=izz), resistance=1e9)
    sim.set_joint_efforts({'j': 0.5})
    sim.step(500)
    expected = 0.5 / (izz + N ** 2 * JM) * sim.time
    assert sim.joint_velocities()[0] == pytest.approx(expected, rel=1e-6)
    assert sim.drive_state('j')['rotor_speed'] == pytest.approx(N * expected, rel=1e-6)


def test_steady_state_matches_the_maximal_engine_under_gravity():
    # a horizontal-axis pendulum held by its drive: same current, effort and angle
    urdf = spinner(izz=0.02, axis='0 1 0').replace('xyz="0 0 0.1"', 'xyz="0.3 0 0"')
    out = {}
    for formulation in ('maximal', 'tree'):
        sim = Simulator.from_urdf(urdf, {'dt': 1e-3, 'solver': {'formulation': formulation},
                                         'drives': {'j': drive(viscous_friction=1e-5)}})
        sim.set_voltages({'j': 3.0})
        sim.step(8000)
        state = sim.drive_state('j')
        out[formulation] = np.array([sim.joint_positions()[0], state['current'],
                                     sim.joint_efforts()[0], sim.joint_velocities()[0]])
    print(out)
    assert np.allclose(out['tree'], out['maximal'], rtol=1e-4, atol=1e-7)
    assert abs(out['tree'][3]) < 1e-4
    # statics: the gear output balances gravity's moment m g l cos(theta)
    theta = out['tree'][0]
    assert out['tree'][2] == pytest.approx(-1.0 * 9.81 * 0.3 * math.cos(theta), rel=1e-3)


@pytest.mark.parametrize('dt', [1e-3, 1e-2])
def test_joint_damping_is_implicit_and_exact_at_steady_state(dt):
    # I w' = tau - b w: terminal speed tau / b; with h b on D the step is backward Euler, so
    # w_n = (tau/b) (1 - (1 + h b / I)^-n) exactly, stable for any h b / I
    izz, b, tau = 0.02, 0.5, 0.2
    urdf = spinner(izz=izz).replace('<axis xyz="0 0 1"/>',
                                    '<axis xyz="0 0 1"/><dynamics damping="0.5"/>')
    sim = Simulator.from_urdf(urdf, {'dt': dt, 'solver': TREE})
    sim.set_joint_efforts({'j': tau})
    steps = int(round(0.1 / dt))
    sim.step(steps)
    exact = tau / b * (1 - (1 + dt * b / izz) ** -steps)
    assert sim.joint_velocities()[0] == pytest.approx(exact, rel=1e-9)
    sim.step(int(round(2.0 / dt)))
    assert sim.joint_velocities()[0] == pytest.approx(tau / b, rel=1e-6)
    stiff = Simulator.from_urdf(urdf.replace('damping="0.5"', 'damping="1e6"'),
                                {'dt': dt, 'solver': TREE})
    stiff.set_joint_efforts({'j': tau})
    stiff.step(10)
    assert stiff.joint_velocities()[0] == pytest.approx(tau / 1e6, rel=1e-3)
