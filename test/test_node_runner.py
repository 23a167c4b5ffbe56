"""
The node's plain-Python parts without DDS: pacing, commands, watchdog, services, set-up.

``SimulationRunner`` runs on a fake wall clock here, so pacing is checked step by step.
"""
import math
from pathlib import Path

from jointsim_ros import CommandError, ConfigError, DescriptionError, Simulator
from jointsim_ros.ros.node import PARAMETERS, parameters_yaml
from jointsim_ros.ros.runner import RunSettings, SimulationRunner
from jointsim_ros.sim.loading import load_robot
from jointsim_ros.tools import example_controller
import numpy as np
import pytest
from robots import double_pendulum, inertial, joint, link, pendulum, robot
import xacro
import yaml

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


class FakeClock:
    """A wall clock that moves only when told."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def make_runner(urdf=None, config=None, **settings):
    """Return (runner, clock, reports) for a pendulum at 1 kHz, 100 Hz ticks by default."""
    sim = Simulator.from_urdf(urdf or pendulum(), config)
    clock = FakeClock()
    reports = []
    runner = SimulationRunner(sim, RunSettings(**settings),
                              report=lambda *event: reports.append(event), clock=clock)
    runner.tick()  # the first tick anchors the wall clock
    return runner, clock, reports


def test_each_tick_takes_every_step_due_in_one_call():
    runner, clock, _ = make_runner()
    assert runner.sim.time == 0.0
    clock.now += 0.01
    assert runner.tick() == 10
    clock.now += 0.0155
    assert runner.tick() == 15  # 25.5 steps due in all: whole steps only
    clock.now += 0.0005
    assert runner.tick() == 1
    assert runner.sim.time == pytest.approx(0.026)


def test_real_time_factor_scales_simulated_time():
    runner, clock, _ = make_runner(real_time_factor=2.5)
    for _ in range(10):
        clock.now += 0.01
        runner.tick()
    assert runner.sim.time == pytest.approx(0.25)


def test_a_late_tick_catches_up_a_bounded_amount_and_reports_the_dropped_lag():
    runner, clock, reports = make_runner()
    clock.now += 1.0  # the process was stalled for a second
    assert runner.tick() == runner.settings.max_steps_per_tick == 40
    assert runner.dropped_total == pytest.approx(0.96)
    assert reports[-1][:2] == ('lag', 'warn') and '960.0 ms' in reports[-1][2]
    clock.now += 0.01
    assert runner.tick() == 10  # back on the wall clock from the new anchor
    stats = runner.take_stats()
    assert stats.dropped == pytest.approx(0.96) and stats.steps == 50


def test_as_fast_as_possible_takes_one_publish_period_per_tick():
    runner, clock, _ = make_runner(real_time_factor=0.0, publish_rate=50.0)
    assert runner.settings.tick_period == 0.0
    assert [runner.tick() for _ in range(3)] == [20, 20, 20]
    assert runner.sim.time == pytest.approx(0.06)


def test_pause_holds_time_and_resume_does_not_catch_up():
    runner, clock, _ = make_runner()
    runner.pause()
    clock.now += 0.5
    assert runner.tick() == 0
    assert runner.step_paused(7) == (True, 'stepped 7 steps to t = 0.007000 s')
    runner.resume()
    assert runner.step_paused(1)[0] is False
    clock.now += 0.01
    assert runner.tick() == 10
    assert runner.sim.time == pytest.approx(0.017)


def test_commands_array_and_named_forms_and_refusals():
    runner, _, _ = make_runner(double_pendulum())
    runner.command_array('effort', [1.0, -2.0])
    assert list(runner.sim.joint_efforts()) == [1.0, -2.0]
    runner.command('effort', {'elbow': 0.5})  # partial update
    assert list(runner.sim.joint_efforts()) == [1.0, 0.5]
    with pytest.raises(CommandError, match='1 values given, 2 expected.*shoulder, elbow'):
        runner.command_array('effort', [3.0])
    with pytest.raises(CommandError, match='not finite'):
        runner.command_array('effort', [3.0, float('nan')])
    with pytest.raises(CommandError, match="unknown joint 'wrist'"):
        runner.command('effort', {'shoulder': 3.0, 'wrist': 1.0})
    with pytest.raises(CommandError, match="'shoulder' takes no voltage command.*none"):
        runner.command('voltage', {'shoulder': 3.0})
    assert list(runner.sim.joint_efforts()) == [1.0, 0.5]


def test_mimic_followers_take_no_effort_command():
    lim = '<limit lower="-3" upper="3" effort="10" velocity="10"/>'
    urdf = robot('gripper', link('palm'), link('left', inertial(0.1, 1e-4, 1e-4, 1e-4)),
                 link('right', inertial(0.1, 1e-4, 1e-4, 1e-4)),
                 joint('left_joint', 'revolute', 'palm', 'left', extra=lim),
                 joint('right_joint', 'revolute', 'palm', 'right',
                       extra=lim + '<mimic joint="left_joint" multiplier="-1"/>'))
    runner, _, _ = make_runner(urdf)
    assert runner.channels['effort'].joints == ('left_joint',)
    with pytest.raises(CommandError, match="'right_joint' takes no effort command"):
        runner.command('effort', {'right_joint': 1.0})


def test_watchdog_zeroes_a_kind_of_command_that_stopped_coming():
    runner, clock, reports = make_runner(double_pendulum(), command_timeout=0.3)
    runner.command('effort', {'shoulder': 2.0})
    clock.now += 0.2
    runner.tick()
    assert list(runner.sim.joint_efforts()) == [2.0, 0.0]
    clock.now += 0.2
    runner.tick()
    assert list(runner.sim.joint_efforts()) == [0.0, 0.0]
    assert [r[0] for r in reports if r[0] != 'lag'] == ['watchdog_effort']
    clock.now += 1.0
    runner.tick()
    assert [r[0] for r in reports if r[0] != 'lag'] == ['watchdog_effort']  # once


def test_voltages_are_held_clipped_zeroed_by_the_watchdog_and_by_reset():
    drive = {'resistance': 1.0, 'inductance': 0.0, 'torque_constant': 0.1,
             'rotor_inertia': 1e-5, 'gear_ratio': 10.0, 'supply_voltage': 24.0}
    runner, clock, _ = make_runner(config={'drives': {'hinge': drive}}, command_timeout=0.3)
    assert runner.channels['voltage'].joints == ('hinge',)
    assert runner.command('voltage', {'hinge': 30.0}) == {'hinge': 24.0}
    assert runner.sim.drive_state('hinge')['voltage'] == 24.0
    runner.reset()
    assert runner.sim.drive_state('hinge')['voltage'] == 0.0
    runner.command_array('voltage', [5.0])
    clock.now += 0.31
    runner.tick()
    assert runner.sim.drive_state('hinge')['voltage'] == 0.0


def test_reset_returns_to_time_zero_with_commands_zeroed_and_keeps_paused():
    runner, clock, _ = make_runner(double_pendulum())
    runner.command('effort', {'elbow': 1.0})
    clock.now += 0.05
    runner.tick()
    runner.pause()
    version = runner.state_version
    runner.reset()
    assert runner.paused and runner.state_version != version
    assert runner.sim.time == 0.0 and list(runner.sim.joint_efforts()) == [0.0, 0.0]


def test_divergence_stops_stepping_until_reset():
    whip = robot('whip', link('base'), link('tip', inertial(1e-3, 1e-9, 1e-9, 1e-9)),
                 joint('spin', 'continuous', 'base', 'tip', axis='0 0 1'))
    runner, clock, reports = make_runner(whip)
    runner.command('effort', {'spin': 1e3})
    clock.now += 0.01
    runner.tick()
    assert reports[-1][:2] == ('divergence', 'error') and "body 'tip'" in reports[-1][2]
    stopped = runner.sim.time
    clock.now += 0.01
    assert runner.tick() == 0 and runner.sim.time == stopped
    assert runner.take_stats().diverged
    runner.reset()
    clock.now += 0.01
    assert runner.tick() == 10


def test_statistics_report_the_achieved_real_time_factor():
    runner, clock, _ = make_runner()
    runner.take_stats()
    for _ in range(50):
        clock.now += 0.01
        runner.tick()
    stats = runner.take_stats()
    assert stats.real_time_factor == pytest.approx(1.0)
    assert stats.steps == 500 and stats.iterations_max >= 1 and stats.step_time_mean > 0.0


def test_trajectories_are_a_runner_command_like_efforts_and_voltages():
    runner, clock, _ = make_runner()
    # samples from t = 0.5 s: the runner prepends where the joint is now
    runner.command_trajectory(['hinge'], [0.5, 1.0], [[0.3], [0.3]])
    for _ in range(120):
        clock.now += 0.01
        runner.tick()
    assert runner.sim.time > 1.0
    assert runner.sim.joint_positions()[0] == pytest.approx(0.3, abs=1e-6)
    with pytest.raises(CommandError):
        runner.command_trajectory(['elbow'], [0.0, 1.0], [[0.0], [1.0]])
    runner.command_trajectory(['hinge'], None, None)  # released: it swings down again
    for _ in range(20):
        clock.now += 0.01
        runner.tick()
    assert abs(runner.sim.joint_positions()[0] - 0.3) > 1e-3


def test_load_robot_takes_dt_from_physics_rate_and_budgets_the_solver(tmp_path):
    config = tmp_path / 'sim.yaml'
    config.write_text('dt: 0.002\nsolver:\n  iterations: 30\n')
    loaded = load_robot(robot_description=pendulum(), config_file=str(config),
                        physics_rate=500.0)
    assert loaded.sim.dt == pytest.approx(0.002)
    assert loaded.sim.config.solver.time_budget == pytest.approx(0.001)
    assert loaded.sim.config.solver.iterations == 30
    loaded = load_robot(robot_description=pendulum(), config_file=str(config),
                        physics_rate=250.0)
    assert loaded.sim.dt == pytest.approx(0.004)
    assert any('replaced by 1 / physics_rate' in note for note in loaded.notes)
    assert loaded.urdf_xml == pendulum()


def test_load_robot_defaults_to_the_bundled_arm_and_expands_xacro():
    loaded = load_robot()
    assert loaded.sim.model.name == 'jointsim_arm'
    assert len(loaded.sim.drive_names) == 7  # config/jointsim_arm.yaml
    assert '<robot' in loaded.urdf_xml and 'xacro:' not in loaded.urdf_xml
    assert [j.name for j in loaded.urdf_robot.joints][-1] == 'tool0_joint'
    assert np.isclose(loaded.sim.dt, 1e-3)


def test_load_robot_runs_xacro_once(monkeypatch):
    # every xacro expansion (a .xacro file, or URDF text using xacro) goes through process_doc
    runs = []
    process_doc = xacro.process_doc

    def counting(*args, **kwargs):
        runs.append(1)
        return process_doc(*args, **kwargs)

    monkeypatch.setattr(xacro, 'process_doc', counting)
    loaded = load_robot()
    assert len(runs) == 1, 'the description, robot_description and ros2_control share one run'
    assert 'xacro:' not in loaded.urdf_xml
    runs.clear()
    uses_xacro = pendulum().replace(
        '<robot ', '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" ', 1).replace(
        'upper="10"', 'upper="${reach}"').replace(
        '<link ', '<xacro:property name="reach" value="10"/><link ', 1)
    loaded = load_robot(robot_description=uses_xacro)
    assert len(runs) == 1
    assert 'xacro:property' not in loaded.urdf_xml and 'upper="10"' in loaded.urdf_xml


def test_load_robot_errors_are_user_errors(tmp_path):
    with pytest.raises(DescriptionError, match='give one of them'):
        load_robot(robot_description=pendulum(), robot_description_file='arm.urdf')
    with pytest.raises(ConfigError, match='does not exist'):
        load_robot(robot_description=pendulum(), config_file=str(tmp_path / 'none.yaml'))


def test_parameter_file_lists_every_parameter_at_its_default():
    text = (PACKAGE_ROOT / 'config' / 'jointsim_node.yaml').read_text()
    assert text == parameters_yaml(), 'regenerate config/jointsim_node.yaml (see parameters_yaml)'
    values = yaml.safe_load(text)['jointsim_node']['ros__parameters']
    assert values == {p.name: p.default for p in PARAMETERS}


def test_example_controller_blends_from_the_start_pose_and_clips_its_command():
    start = np.array([0.1, -0.2])
    q_target, qd_target = example_controller.target(
        0.0, home=[0.5, 0.5], amplitude=0.4, period=4.0, phase=[0.0, np.pi / 2])
    assert q_target == pytest.approx([0.5, 0.9]) and qd_target[0] > 0.0
    q, qd = example_controller.blend(0.0, start, q_target, qd_target)
    assert q == pytest.approx(start) and qd == pytest.approx([0.0, 0.0])
    q, qd = example_controller.blend(example_controller.BLEND_TIME, start, q_target, qd_target)
    assert q == pytest.approx(q_target) and qd == pytest.approx(qd_target)
    gains = example_controller.gains_for('voltage', 9)  # more joints than the arm: wrist gains
    assert len(gains['kp']) == 9 and gains['kp'][8] == gains['kp'][6]
    u = example_controller.pd(np.zeros(9), np.zeros(9), np.full(9, 10.0), np.zeros(9), gains)
    assert np.all(u == gains['limit'])


def test_a_scheduled_wrench_starts_at_its_simulated_time_whatever_the_ticks():
    # a 2 kg box floating with no gravity: 4 N along x from t = 0.0123 s to t = 0.0523 s gives
    # it 4 N x 0.04 s = 0.16 N s, 0.08 m/s, although the 10 ms ticks straddle both times
    box = robot('box', link('box', inertial(2.0, 0.01, 0.01, 0.01)))
    runner, clock, _ = make_runner(box, {'base': 'floating', 'gravity': [0, 0, 0],
                                         'ground': {'enabled': False}})
    runner.schedule_wrench('box', (4.0, 0.0, 0.0), (0.0, 0.0, 0.0), at=0.0123)
    runner.schedule_wrench('box', (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), at=0.0523)
    for _ in range(10):
        clock.now += 0.01
        runner.tick()
    assert runner.sim.time == pytest.approx(0.1)
    assert runner.sim.link_twist('box')[0][0] == pytest.approx(0.08, rel=1e-9)
    with pytest.raises(CommandError, match="unknown link 'bx'"):
        runner.schedule_wrench('bx', (1.0, 0, 0), (0, 0, 0), at=1.0)
    with pytest.raises(CommandError, match='finite'):
        runner.schedule_wrench('box', (math.nan, 0, 0), (0, 0, 0), at=1.0)


def test_with_one_catch_up_tick_a_late_tick_keeps_the_controllers_period():
    # catch_up_ticks 1: a tick a second late takes one tick's steps (10) and drops the rest
    runner, clock, reports = make_runner(catch_up_ticks=1.0)
    clock.now += 1.0
    assert runner.tick() == runner.settings.steps_per_publish == 10
    assert runner.dropped_total == pytest.approx(0.99)
    assert reports[-1][:2] == ('lag', 'warn')
