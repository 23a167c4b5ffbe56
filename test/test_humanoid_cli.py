"""
``jointsim_headless --humanoid``: pushes, sensor noise, and the result line other tools read.

The line is ``result: walked D m forward, lateral offset L m, fell: no`` (or ``fell: yes at
t = T s``), always last (issue 29).
"""
import io
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys

from jointsim_ros.tools import demo, headless
import pytest

RESULT = re.compile(r'^result: walked (-?\d+\.\d+) m forward, lateral offset (-?\d+\.\d+) m, '
                    r'fell: (no|yes at t = (\d+\.\d+) s)$')


def run(capsys, *args):
    assert headless.main(['--humanoid', *args]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    match = RESULT.match(lines[-1])
    assert match, lines[-1]
    return match, lines


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_standing_unpushed_it_stays_put_and_says_so(capsys, formulation):
    match, lines = run(capsys, '--steps', '0', '--seconds', '2', '--formulation', formulation)
    assert abs(float(match.group(1))) < 0.01 and abs(float(match.group(2))) < 0.01
    assert match.group(3) == 'no'
    assert f'{formulation} formulation' in lines[0]


@pytest.mark.parametrize('formulation', ['maximal', 'tree'])
def test_a_hard_sideways_push_fells_it_and_the_line_says_when(capsys, formulation):
    # 1500 N for 0.1 s: 150 N s into 63.7 kg, 2.4 m/s sideways at the pelvis
    match, lines = run(capsys, '--steps', '0', '--seconds', '4', '--push', '1.0', '0', '1500',
                       '--sensor-noise', '--formulation', formulation)
    assert match.group(3).startswith('yes')
    assert 1.0 < float(match.group(4)) < 4.0
    assert float(match.group(2)) > 0.1                       # it went the push's way
    assert 'sensor noise on' in lines[0]


def test_sensor_noise_puts_encoders_on_every_joint_and_noise_on_the_ankles(tmp_path):
    config = headless.humanoid_config(
        headless.resources.share_file('config', 'jointsim_humanoid.yaml'), True)
    assert config['joint_sensors']['*']['counts_per_revolution'] == 16384
    ankles = {k: v for k, v in config['force_torque_sensors'].items() if 'ankle' in k}
    assert len(ankles) == 2 and all(v['noise']['force'] == 1.0 for v in ankles.values())
    assert config['imu_sensors']['pelvis_imu']['noise']['angular_velocity']['stddev'] > 0
    plain = headless.humanoid_config(
        headless.resources.share_file('config', 'jointsim_humanoid.yaml'), False)
    assert 'joint_sensors' not in plain
    assert pytest.approx(0.1) == headless.PUSH_SECONDS


VALVE_RESULT = re.compile(r'^result: valve turned (-?\d+) deg, squeeze (\d+\.\d) N \(RMS error '
                          r'(\d+\.\d) N\), feet slip (\d+\.\d\d) mm, fell: (no|yes.*)$')


@pytest.mark.slow
def test_the_valve_command_with_twice_the_friction_says_it_stopped_and_ends_on_its_line(capsys):
    # the command itself (test_valve.py runs the scenario's function): 6 N m, twice the
    # xacro's, is more than the arms give (5 N m), so the turn stops with a log line
    assert headless.main(['--humanoid', '--valve', '--valve-friction', '6',
                          '--seconds', '8']) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    match = VALVE_RESULT.match(lines[-1])
    assert match, lines[-1]
    assert abs(int(match.group(1))) < 10 and match.group(5) == 'no'
    assert float(match.group(4)) < 1.0
    assert any('turn stopped at' in line and 'does not turn at 5.0 N m' in line
               for line in lines)


def test_the_demo_writes_each_line_whole_so_a_child_log_cannot_split_it():
    # make run's demo shares its stdout pipe with the node and the controller: under
    # PYTHONUNBUFFERED, print() writes a line and its newline apart, and a CI run read
    # 'fell: no[INFO] ...'.  One write(2) per line (a pipe keeps writes under PIPE_BUF whole)
    # keeps the result line whole
    line = 'result: walked 0.000 m forward, lateral offset 0.000 m, fell: no'
    if shutil.which('strace'):
        code = f'from jointsim_ros.tools import demo\ndemo.say({line!r})\n'
        traced = subprocess.run(
            ['strace', '-f', '-s', '256', '-e', 'trace=write', '-o', '/dev/stderr',
             sys.executable, '-c', code], cwd=Path(__file__).resolve().parents[1],
            env=dict(os.environ, PYTHONUNBUFFERED='1'), capture_output=True, text=True,
            timeout=60)
        if traced.returncode == 0:  # (a container may forbid ptrace)
            writes = [w for w in traced.stderr.splitlines() if 'write(1,' in w]
            assert len(writes) == 1 and writes[0].count('fell: no\\n') == 1, traced.stderr

    # without strace too: the write calls the helper makes on its file
    class Writes(io.StringIO):
        calls = []

        def write(self, text):
            self.calls.append(text)
            return super().write(text)
    out = Writes()
    demo.say(line, file=out)
    assert out.calls == [line + '\n']
