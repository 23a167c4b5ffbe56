"""Tree formulation: configuration keys, load-time refusals and the facade's behaviour."""
from jointsim_ros import CommandError, ConfigError, Simulator
from jointsim_ros.physics.engine import Engine, Mechanism
import numpy as np
import pytest
from robots import chain, double_pendulum, free_box, inertial, joint, link, robot

TREE = {'formulation': 'tree'}


def test_default_is_maximal_and_tree_is_selected_by_the_key():
    assert Simulator.from_urdf(chain(2)).config.solver.formulation == 'maximal'
    sim = Simulator.from_urdf(chain(2), {'solver': TREE})
    assert type(sim._engine).__name__ == 'TreeEngine'


def test_both_engines_are_mechanisms_and_the_tree_builds_no_maximal_solver_arrays():
    maximal = Simulator.from_urdf(chain(2))._engine
    tree = Simulator.from_urdf(chain(2), {'solver': TREE})._engine
    for engine in (maximal, tree):
        assert isinstance(engine, Mechanism)
        for name in ('step', 'joint_rates', 'place_children', 'close_loops', 'kernel'):
            assert callable(getattr(engine, name))
    assert not isinstance(tree, Engine)
    for name in ('blocks', 'work'):
        assert hasattr(maximal, name) and not hasattr(tree, name)
    # the spherical and planar joints' friction table is the model's, rows of each mechanics
    assert len(maximal.free.joint) == len(tree.free.joint) == 0
    # one contact pipeline: both hold its arrays, each with its own mechanics' row width
    assert tree.contacts is not None and len(tree.state.row_impulse) == 0
    # (the tree's: its largest group's coordinates and the path form's constant slot)
    assert maximal.cwork.row_J.shape[-1] == 6 and tree.cwork.row_J.shape[-1] == tree.n_dof + 1


@pytest.mark.parametrize('config, key', [
    ({'solver': {'formulation': 'trees'}}, 'solver.formulation'),
    ({'solver': {'integrator': 'rk5'}}, 'solver.integrator'),
    ({'solver': {'integrator': 'rk4'}}, 'solver.integrator'),   # rk4 needs the tree
])
def test_bad_solver_keys_are_one_line_config_errors(config, key):
    with pytest.raises(ConfigError) as error:
        Simulator.from_urdf(chain(2), config)
    message = str(error.value)
    assert key in message and '\n' not in message


def mimic_pair():
    """Return two pendulums side by side, the second mimicking the first."""
    lim = '<limit lower="-1" upper="1" effort="10" velocity="10"/>'
    return robot('mimic', link('base'),
                 link('a', inertial(1.0, 0.01, 0.01, 0.01, xyz='0 0 -0.2')),
                 link('b', inertial(1.0, 0.01, 0.01, 0.01, xyz='0 0 -0.2')),
                 joint('ja', 'revolute', 'base', 'a', extra=lim),
                 joint('jb', 'revolute', 'base', 'b', xyz='0.3 0 0',
                       extra=lim + '<mimic joint="ja"/>'))


@pytest.mark.parametrize('urdf, config, key', [
    (free_box(), {'base': 'floating', 'solver': {'integrator': 'rk4'}}, 'solver.integrator'),
    (chain(3), {'loop_joints': {'close': {'type': 'spherical', 'parent': 'base',
                                          'child': 'link2'}},
                'solver': {'integrator': 'rk4'}}, 'solver.integrator'),
    (chain(2), {'joints': {'joint0': {'friction': 0.1}}, 'solver': {'integrator': 'rk4'}},
     'joints.joint0.friction'),
    (chain(2), {'limits': {'enforce_velocity': True}, 'solver': {'integrator': 'rk4'}},
     'limits.enforce_velocity'),
    (chain(2), {'drives': {'joint0': {'resistance': 1.0, 'inductance': 0.0,
                                      'torque_constant': 0.1, 'rotor_inertia': 1e-5}},
                'solver': {'integrator': 'rk4'}}, 'solver.integrator'),
    (mimic_pair(), {'solver': {'integrator': 'rk4'}}, 'solver.integrator'),
])
def test_what_the_tree_does_not_simulate_is_refused_at_load(urdf, config, key):
    config = dict(config)
    config['solver'] = {**config.get('solver', {}), **TREE}
    with pytest.raises(ConfigError) as error:
        Simulator.from_urdf(urdf, config)
    message = str(error.value)
    assert key in message and 'maximal' in message and '\n' not in message, message
    Simulator.from_urdf(urdf, {**config, 'solver': {}})  # the maximal engine takes it


def test_floating_base_without_ground_is_accepted():
    sim = Simulator.from_urdf(free_box(), {'base': 'floating', 'ground': {'enabled': False},
                                           'solver': TREE})
    sim.step(100)
    # free fall of a single body: exact for constant gravity (Euler: z = -g t (t + dt) / 2)
    z = sim.link_pose('box')[0][2]
    assert z == pytest.approx(-9.81 * sim.time * (sim.time + sim.dt) / 2, rel=1e-9)


def test_prescribed_motion_is_refused_by_rk4_alone_with_a_command_error():
    sim = Simulator.from_urdf(chain(2), {'solver': {**TREE, 'integrator': 'rk4'}})
    with pytest.raises(CommandError, match='rk4 solves no rows'):
        sim.prescribed.joints([0.0, 1.0], [[0.0, 0.0], [0.1, 0.1]])
    assert sim.prescribed.efforts() == {}  # nothing was changed
    sim = Simulator.from_urdf(chain(2), {'solver': TREE})
    sim.prescribed.joints([0.0, 1.0], [[0.0, 0.0], [0.1, 0.1]])
    sim.step(1000)
    assert sim.joint_positions() == pytest.approx([0.1, 0.1], abs=1e-12)


def test_position_limits_are_enforced_but_by_rk4_which_says_so_once(caplog):
    with caplog.at_level('WARNING', logger='jointsim_ros'):
        Simulator.from_urdf(double_pendulum(), {'solver': TREE})
    assert not any('limits' in r.message for r in caplog.records)
    with caplog.at_level('WARNING', logger='jointsim_ros'):
        sim = Simulator.from_urdf(double_pendulum(), {'solver': {**TREE, 'integrator': 'rk4'}})
    assert sum('rk4 does not enforce joint position limits' in r.message
               for r in caplog.records) == 1
    assert sim.joint_names == ('shoulder', 'elbow')


def test_facade_reads_the_same_in_both_formulations():
    # joint state, link poses, twists and energy after placing the robot by hand
    out = []
    for formulation in ('maximal', 'tree'):
        sim = Simulator.from_urdf(chain(4), {'solver': {'formulation': formulation}})
        sim.set_joint_state({'joint0': 0.3, 'joint2': -0.4}, {'joint1': 1.5})
        out.append(np.concatenate((sim.joint_positions(), sim.joint_velocities(),
                                   *sim.link_pose('link3'), *sim.link_twist('link3'),
                                   sim.mechanical_energy())))
    assert np.allclose(out[0], out[1], atol=1e-12)


def test_reset_and_divergence_report():
    sim = Simulator.from_urdf(chain(2), {'solver': TREE})
    sim.set_joint_state({'joint0': 0.5})
    sim.step(10)
    sim.reset()
    assert sim.time == 0.0 and np.all(sim.joint_positions() == 0.0)
    report = sim.step(3)
    assert report.steps == 3 and report.position_error == 0.0


def test_divergence_keeps_the_last_finite_state_and_reset_recovers():
    from jointsim_ros import DivergenceError
    sim = Simulator.from_urdf(chain(2), {'solver': TREE, 'limits': {'enforce_effort': False}})
    sim.set_joint_efforts({'joint1': 1e9})
    with pytest.raises(DivergenceError, match="body 'link"):
        sim.step(1000)
    assert np.all(np.isfinite(sim.joint_positions()))
    assert np.all(np.abs(sim.joint_velocities()) <= 1e5)
    with pytest.raises(DivergenceError):
        sim.step(1)
    sim.reset()
    assert sim.step(10).steps == 10


def test_the_node_runner_drives_the_bundled_arm_in_tree_mode(tmp_path):
    # the node's set-up and stepping without DDS: the arm's config plus the tree formulation
    from pathlib import Path
    from jointsim_ros.sim.loading import load_robot
    from jointsim_ros.ros.runner import RunSettings, SimulationRunner
    arm = (Path(__file__).resolve().parents[1] / 'config' / 'jointsim_arm.yaml').read_text()
    config = tmp_path / 'arm_tree.yaml'
    config.write_text(arm.replace('solver:\n', 'solver:\n  formulation: tree\n'))
    loaded = load_robot(config_file=str(config))
    assert type(loaded.sim._engine).__name__ == 'TreeEngine'
    runner = SimulationRunner(loaded.sim, RunSettings(real_time_factor=0.0))
    runner.tick()
    runner.command('voltage', {'joint_a1': 12.0})
    for _ in range(20):
        runner.tick()
    assert loaded.sim.time > 0.1
    assert loaded.sim.joint_velocities()[0] > 0.1   # the driven base joint turns
    assert max(loaded.sim.joint_anchor_errors().values()) < 1e-12
    # the arm's wrist force-torque sensor, at its 100 Hz, reads the wrist's load
    _, reading, count = loaded.sim.sensors.sample('wrist_ft')
    assert count >= 10 and np.all(np.isfinite(reading)) and np.linalg.norm(reading[:3]) > 1.0


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_headless_formulation_option_runs_that_formulation(tmp_path, formulation):
    # --formulation replaces the config's key: the run is the same, bit for bit, as a
    # Simulator built with that key and stepped as often
    import io

    from jointsim_ros.tools import headless
    path = tmp_path / 'double.urdf'
    path.write_text(double_pendulum())
    out = io.StringIO()
    sim = headless.run(path, None, 0.3, out=out, formulation=formulation)
    assert f'{formulation} formulation' in out.getvalue()
    reference = Simulator.from_urdf(str(path), {'solver': {'formulation': formulation}})
    reference.set_joint_state({n: 0.5 * (-1) ** i for i, n in enumerate(reference.joint_names)})
    reference.step(300)
    assert sim.time == reference.time
    np.testing.assert_array_equal(sim.joint_positions(), reference.joint_positions())


def test_headless_formulation_option_refuses_other_values(capsys):
    from jointsim_ros.tools import headless
    with pytest.raises(SystemExit):
        headless.parse_args(['--formulation', 'trees'])
    assert "invalid choice: 'trees'" in capsys.readouterr().err
