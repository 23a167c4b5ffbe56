"""Published robot descriptions (unmodified, test/fixtures/urdf) simulate without coming apart."""
import pathlib

from jointsim_ros import Simulator
import numpy as np
import pytest

FIXTURES = pathlib.Path(__file__).parent / 'fixtures' / 'urdf'
ARMS = ['kuka_iiwa', 'panda', 'ur5']
LEGGED = ['solo12', 'anymal_c', 'talos_reduced', 'g1_29dof', 'humanoid']


def simulate(sim, seconds=1.0):
    """Step passively; return the largest joint separation seen, m."""
    worst = 0.0
    for _ in range(int(round(seconds / sim.dt / 100))):
        sim.step(100)
        worst = max(worst, max(sim.joint_anchor_errors().values()))
        assert np.all(np.isfinite(sim.joint_positions()))
        assert np.all(np.isfinite(sim.joint_velocities()))
    return worst


#: (robot, formulation): every robot in maximal mode, the one with mimic joints (the panda's
#: fingers; talos_reduced's gripper joints are fixed) in tree mode too.
FIXED_RUNS = [(n, 'maximal') for n in ARMS + LEGGED] + [('panda', 'tree')]


@pytest.mark.parametrize('name,formulation', FIXED_RUNS)
def test_fixed_base_swings_without_separating(name, formulation):
    sim = Simulator.from_urdf(str(FIXTURES / f'{name}.urdf'),
                              {'base': 'fixed', 'solver': {'formulation': formulation}})
    # a bent pose inside the limits; mimic followers are placed from their leaders
    limits = {j.name: (j.lower, j.upper) for j in sim.model.joints}
    sim.set_joint_state({n: float(np.clip(0.4 * (-1) ** i, limits[n][0] + 0.05,
                                          limits[n][1] - 0.05))
                         for i, n in enumerate(sim.joint_names)})
    potential0 = sim.mechanical_energy()[1]
    assert simulate(sim) < 1e-3
    # released from a bent pose the robot swings: gravity did work
    assert sim.mechanical_energy()[1] < potential0


@pytest.mark.parametrize('name', LEGGED)
def test_spinning_floating_base_keeps_momentum_and_joints(name):
    sim = Simulator.from_urdf(str(FIXTURES / f'{name}.urdf'),
                              {'base': 'floating', 'gravity': [0, 0, 0],
                               'ground': {'enabled': False}})
    sim.set_base_state([0, 0, 1], [1, 0, 0, 0], linear_velocity=[0.1, 0, 0],
                       angular_velocity=[0.5, 1.0, 2.0])
    momentum0 = total_momentum(sim)
    energy0 = sim.mechanical_energy()[0]
    assert simulate(sim) < 1e-3
    # no external force: linear momentum is exact; joint friction, damping and limit stops
    # only take kinetic energy away (within the integrator's error)
    assert np.allclose(total_momentum(sim), momentum0, atol=1e-9 * np.linalg.norm(momentum0))
    assert sim.mechanical_energy()[0] <= energy0 * 1.02


def total_momentum(sim):
    """Return the robot's total linear momentum from its link twists and masses."""
    total = np.zeros(3)
    for body in sim.model.bodies:
        root = body.links[0]
        x, q = sim.link_pose(root)
        v, w = sim.link_twist(root)
        w_, x_, y_, z_ = q
        rot = np.array([[1 - 2 * (y_ * y_ + z_ * z_), 2 * (x_ * y_ - w_ * z_),
                         2 * (x_ * z_ + w_ * y_)],
                        [2 * (x_ * y_ + w_ * z_), 1 - 2 * (x_ * x_ + z_ * z_),
                         2 * (y_ * z_ - w_ * x_)],
                        [2 * (x_ * z_ - w_ * y_), 2 * (y_ * z_ + w_ * x_),
                         1 - 2 * (x_ * x_ + y_ * y_)]])
        total += body.mass * (v + np.cross(w, rot @ body.com))
    return total
