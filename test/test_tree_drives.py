"""Tree formulation: drives (rotor armature, implicit back-EMF) and joint damping, analytically."""
import math

from jointsim_ros import Simulator
import numpy as np
import pytest
from test_drives import drive, driven, KT, N, spinner

TREE = {'formulation': 'tree'}


def tree_driven(urdf=None, dt=0.001, **overrides):
    """
    Return a tree-mode Simulator of ``urdf`` (default the spinner) with the drive on j.

    No-load speed, stall torque, gear efficiency, the mechanical time constant and
    back-driving through the reflected rotor inertia are checked in both formulations by
    test_drives.py; this file holds the tree-only checks.
    """
    return driven(urdf, dt=dt, formulation='tree', **overrides)


def test_current_limit_holds_the_torque():
    sim = tree_driven(spinner(izz=1e9, mass=1e9), current_limit=1.0)
    sim.set_voltages({'j': 6.0})  # 3 A unlimited
    sim.step(50)
    assert sim.drive_state('j')['current'] == pytest.approx(1.0, rel=1e-9)
    assert sim.joint_efforts()[0] == pytest.approx(N * KT * 1.0, rel=1e-4)


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
