"""The facade refuses bad commands without changing state, and stops cleanly on divergence."""
import math

from jointsim_ros import CommandError, DivergenceError, Simulator
from jointsim_ros.sim.elements import Elements
from jointsim_ros.sim.prescribed import Prescribed
from jointsim_ros.sim.sensing import Sensors
from jointsim_ros.tools import headless
import numpy as np
import pytest
from robots import double_pendulum, inertial, joint, link, pendulum, robot


def test_unknown_joint_is_refused_and_named_with_a_suggestion():
    sim = Simulator.from_urdf(double_pendulum(), None)
    sim.set_joint_state({'shoulder': 0.3})
    before = sim.joint_positions()
    with pytest.raises(CommandError, match=r"unknown joint 'sholder'.*did you mean.*shoulder") \
            as error:
        sim.set_joint_state({'elbow': 1.0, 'sholder': 0.1})
    assert str(error.value).count('did you mean') == 1
    with pytest.raises(CommandError, match="unknown joint 'wrist'"):
        sim.set_joint_efforts({'wrist': 1.0})
    assert np.array_equal(sim.joint_positions(), before)


@pytest.mark.parametrize('bad', [math.nan, math.inf, -math.inf, 'fast', None])
def test_non_finite_command_is_refused_whole(bad):
    sim = Simulator.from_urdf(double_pendulum(), None)
    sim.set_joint_efforts({'shoulder': 1.0})
    with pytest.raises(CommandError, match="joint 'elbow'"):
        sim.set_joint_efforts({'shoulder': 2.0, 'elbow': bad})
    assert list(sim.joint_efforts()) == [1.0, 0.0]
    with pytest.raises(CommandError):
        sim.set_joint_state({'elbow': bad})


def test_unknown_link_and_fixed_base_moves_are_refused():
    sim = Simulator.from_urdf(pendulum(), None)
    with pytest.raises(CommandError, match="unknown link 'bbo'.*bob"):
        sim.link_pose('bbo')
    with pytest.raises(CommandError, match='fixed base'):
        sim.set_base_state([0, 0, 1], [1, 0, 0, 0])


def test_divergence_stops_stepping_and_keeps_the_last_finite_state():
    tiny = robot('whip', link('base'), link('tip', inertial(1e-3, 1e-9, 1e-9, 1e-9)),
                 joint('spin', 'continuous', 'base', 'tip', axis='0 0 1'))
    sim = Simulator.from_urdf(tiny, None)
    sim.set_joint_efforts({'spin': 1e3})  # 1e12 rad/s^2: past 1e5 rad/s within the first step
    with pytest.raises(DivergenceError, match="body 'tip'.*reset"):
        sim.step(10)
    assert sim.diverged
    assert np.all(np.isfinite(sim.joint_positions()))
    assert np.all(np.isfinite(sim.joint_velocities()))
    assert np.all(np.isfinite(sim.link_pose('tip')[0]))
    time_at_stop = sim.time
    with pytest.raises(DivergenceError):
        sim.step(1)
    assert sim.time == time_at_stop
    sim.reset()
    assert sim.diverged is None and sim.time == 0.0
    sim.step(5)  # zero effort after reset: steps again
    assert sim.time == pytest.approx(5 * sim.dt)


def test_reset_returns_to_the_configured_initial_state():
    config = {'initial_positions': {'shoulder': 0.4}, 'initial_velocities': {'elbow': -1.0}}
    sim = Simulator.from_urdf(double_pendulum(), config)
    start = sim.joint_positions(), sim.joint_velocities()
    assert start[0] == pytest.approx([0.4, 0.0]) and start[1] == pytest.approx([0.0, -1.0])
    sim.set_joint_efforts({'elbow': 3.0})
    sim.step(300)
    sim.reset()
    assert sim.time == 0.0 and list(sim.joint_efforts()) == [0.0, 0.0]
    assert sim.joint_positions() == pytest.approx(start[0], abs=1e-12)
    assert sim.joint_velocities() == pytest.approx(start[1], abs=1e-12)


def test_headless_tool_runs_the_default_robot(capsys):
    assert headless.main(['--seconds', '1.2']) == 0
    out = capsys.readouterr().out
    assert "robot 'jointsim_arm'" in out and '7 movable' in out
    assert 't =  1.00 s' in out and 'real-time factor' in out


def test_headless_tool_uses_the_arms_config_only_for_the_arm(capsys):
    # another robot without --config runs on the defaults: the arm's drives name joints
    # (joint_a1...) that panda lacks, and would be refused
    from pathlib import Path
    panda = Path(__file__).parent / 'fixtures' / 'urdf' / 'panda.urdf'
    assert headless.main(['--robot', str(panda), '--seconds', '0.1']) == 0
    out = capsys.readouterr().out
    assert "robot 'panda'" in out and '9 movable' in out


def test_headless_tool_reports_a_bad_robot_without_traceback(tmp_path, capsys):
    broken = tmp_path / 'broken.urdf'
    broken.write_text('<robot name="x"><link name="a"></robot>')
    assert headless.main(['--robot', str(broken)]) == 2
    err = capsys.readouterr().err
    assert 'broken.urdf' in err and 'Traceback' not in err


def test_floating_base_starts_at_the_world_joint_origin_and_base_pose():
    urdf = robot('lifted', link('world'), link('base', inertial(2.0, 0.1, 0.1, 0.1)),
                 joint('float', 'floating', 'world', 'base', xyz='0 0 2', rpy='0 0 0.5'))
    sim = Simulator.from_urdf(urdf, {'base_pose': {'position': [1, 0, 0]}})
    assert sim.model.floating_base
    for _ in range(2):
        x, q = sim.link_pose('base')
        assert x == pytest.approx([1, 0, 2], abs=1e-12)
        assert q == pytest.approx([math.cos(0.25), 0, 0, math.sin(0.25)], abs=1e-12)
        sim.step(100)
        assert sim.link_pose('base')[0][2] < 2
        sim.reset()


def test_the_facade_is_composed_of_parts():
    # issue 17: stepping, state and commands on the simulator; the rest are components taking it
    sim = Simulator.from_urdf(double_pendulum(), None)
    parts = {'sensors': Sensors, 'elements': Elements, 'prescribed': Prescribed}
    for name, part in parts.items():
        assert isinstance(getattr(sim, name), part)
    moved = ['prescribe_joints', 'release_joints', 'prescribed_efforts', 'prescribed_drive_needs',
             'prescribe_actuator_lengths', 'release_actuators', 'prescribe_path', 'release_path',
             'path_forces', 'set_actuator_forces', 'actuator_forces', 'actuator_lengths',
             'distances', 'path_points', 'actuator_names', 'path_point_names',
             'wrench', 'sensor_sample', 'sensor_frame', 'sensor_history', 'measure_wrench']
    assert [name for name in moved if hasattr(sim, name)] == []
