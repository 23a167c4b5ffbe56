"""The comparison tool: both formulations on one robot, CSV and PNG written, values sensible."""
import csv

from jointsim_ros.tools import compare_formulations
import numpy as np
import pytest
from robots import double_pendulum


def test_tool_writes_csv_and_png_with_small_differences(tmp_path, capsys):
    robot = tmp_path / 'double_pendulum.urdf'
    robot.write_text(double_pendulum())
    commands = tmp_path / 'commands.yaml'
    commands.write_text('efforts: {shoulder: 2.0, elbow: -1.0}\n')
    config = tmp_path / 'sim.yaml'
    config.write_text('dt: 0.0005\ninitial_positions: {shoulder: 0.5}\n')
    out = tmp_path / 'out'
    rc = compare_formulations.main(['--robot', str(robot), '--config', str(config),
                                    '--seconds', '1.0', '--out', str(out),
                                    '--commands', str(commands), '--sample', '0.01'])
    assert rc == 0
    with open(out / compare_formulations.CSV_NAME) as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == ['time_s', 'shoulder_tree_minus_maximal', 'elbow_tree_minus_maximal',
                       'max_anchor_error_maximal_m', 'max_anchor_error_tree_m']
    table = np.array(rows[1:], dtype=float)
    assert len(table) == 101 and abs(table[-1, 0] - 1.0) < 1e-9
    assert np.all(table[0, 1:3] == 0.0)              # same start
    difference = np.abs(table[:, 1:3]).max()
    assert 1e-7 < difference < 5e-3                  # two first-order methods at 0.5 ms
    assert table[:, 4].max() < 1e-12                 # the tree's joints are exact
    assert 0.0 < table[:, 3].max() < 1e-6            # the maximal run's projection residue
    png = (out / compare_formulations.PNG_NAME).read_bytes()
    assert png[:8] == b'\x89PNG\r\n\x1a\n' and len(png) > 10000
    assert 'max |tree - maximal|' in capsys.readouterr().out


def test_tool_reports_a_bad_commands_file(tmp_path, capsys):
    robot = tmp_path / 'double_pendulum.urdf'
    robot.write_text(double_pendulum())
    commands = tmp_path / 'commands.yaml'
    commands.write_text('torques: {shoulder: 1.0}\n')
    rc = compare_formulations.main(['--robot', str(robot), '--commands', str(commands),
                                    '--out', str(tmp_path)])
    assert rc == 2
    assert "'efforts' and 'voltages'" in capsys.readouterr().err


def test_bundled_arm_with_its_drives_agrees_in_both_formulations():
    # geared drives at 0 V braking the sagging arm (efficiency 0.9 and 0.85: the load
    # back-drives the gears), the tool's own comparison over 1 s
    from jointsim_ros import resources
    robot = resources.share_file(*resources.DEFAULT_ROBOT)
    config = resources.share_file(*resources.DEFAULT_CONFIG)
    names, rows = compare_formulations.compare(str(robot), str(config), seconds=1.0, bent=0.5)
    assert len(names) == 7
    difference = np.abs(rows[:, 1:-2]).max()
    print('arm with drives, max |tree - maximal| over 1 s:', difference)
    assert difference < 1e-3   # measured 1.7e-4 rad over 2 s
    assert rows[:, -1].max() < 1e-12


def test_tool_compares_a_floating_robot_on_the_ground_side_by_side(tmp_path, capsys):
    # a 10 kg table on four compliant feet, dropped 2 cm: both formulations carry its weight,
    # the base paths agree, and the side-by-side lines and the base CSV are written
    from test_compliant_contacts import table  # noqa: I100 - the same table as there
    robot = tmp_path / 'table.urdf'
    robot.write_text(table((0.1, 0.05)))
    config = tmp_path / 'sim.yaml'
    config.write_text('base: floating\nbase_pose: {position: [0, 0, 0.24]}\n')
    out = tmp_path / 'out'
    rc = compare_formulations.main(['--robot', str(robot), '--config', str(config),
                                    '--seconds', '1.0', '--out', str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "base path: origin of 'top'" in printed and 'contact loads at t = 1.000 s' in printed
    result = compare_formulations.run_comparison(str(robot), str(config), seconds=1.0)
    assert result.weight == pytest.approx(10.0 * 9.81)
    np.testing.assert_allclose(result.loads[-1], result.weight, rtol=1e-3)   # both formulations
    np.testing.assert_allclose(result.base[-1, 1], result.base[-1, 0], atol=1e-5)
    assert result.rows[:, -1].max() < 1e-12   # (no joints: anchors 0 in both)
    with open(out / compare_formulations.BASE_CSV_NAME) as stream:
        rows = list(csv.reader(stream))
    assert rows[0][:4] == ['time_s', 'base_x_maximal_m', 'base_y_maximal_m', 'base_z_maximal_m']
    assert len(rows) == 102
