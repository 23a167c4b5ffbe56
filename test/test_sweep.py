"""jointsim_sweep (issue 31, docs/sweep.md): parameters, determinism, errors, the scenarios."""
import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from browser import free_port
from jointsim_ros.control.scenarios import arm_payload
from jointsim_ros.tools.sweep import make_trials, parse_params, run_trial, sweep, SweepError
from node_harness import PACKAGE_ROOT
import pytest

TEST_DIR = os.path.dirname(os.path.abspath(__file__))


def cli_env(env=None):
    """Return ``env`` (default: this process's) with test/ on PYTHONPATH (sweep_scenarios)."""
    return dict(env or os.environ,
                PYTHONPATH=TEST_DIR + os.pathsep + os.environ.get('PYTHONPATH', ''))


def run_cli(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, '-m', 'jointsim_ros.tools.sweep', *args],
                          cwd=cwd or PACKAGE_ROOT, env=cli_env(env), capture_output=True,
                          text=True, timeout=300)


def rows_of(path):
    with open(path, newline='') as stream:
        return list(csv.DictReader(stream))


@pytest.mark.parametrize('args, message', [
    (['humanoid-pull'], "unknown scenario 'humanoid-pull'"),
    (['humanoid-push', '--param', 'strength=1:2'], "unknown parameter 'strength'"),
    (['humanoid-push', '--param', 'force=400:100'], 'has no values'),
    (['humanoid-push', '--param', 'force=abc'], "'abc' is not a number"),
    (['humanoid-push', '--param', 'force=,'], 'no values'),
    (['humanoid-push', '--trials', '0'], '--trials 0'),
    (['humanoid-push', '--trials', 'x'], "--trials: invalid int value: 'x'"),
    (['humanoid-push', '--workers', '2.5'], "--workers: invalid int value: '2.5'"),
    (['humanoid-push', '--seed', 's'], "--seed: invalid int value: 's'"),
    (['humanoid-push', '--speed', '2'], 'unrecognized arguments: --speed 2'),
])
def test_bad_input_is_one_line_exit_2_and_starts_nothing(tmp_path, args, message):
    result = run_cli(*args, '--out', str(tmp_path / 'out'))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('jointsim_sweep: ') and message in lines[0]
    assert not (tmp_path / 'out').exists()


def test_trials_are_a_grid_times_draws_and_depend_only_on_the_seed():
    sampled, grid = parse_params(['force=50:400', 'direction=0,90,180'], None)
    trials = make_trials(sampled, grid, 2, seed=7)
    assert len(trials) == 6
    assert [p['direction'] for _, _, p in trials] == [0.0, 0.0, 90.0, 90.0, 180.0, 180.0]
    assert all(50.0 <= p['force'] <= 400.0 for _, _, p in trials)
    assert make_trials(sampled, grid, 2, seed=7) == trials
    assert make_trials(sampled, grid, 2, seed=8) != trials
    with pytest.raises(SweepError, match='given twice'):
        parse_params(['force=1:2', 'force=3'], None)


def test_a_sweep_on_ray_writes_every_row_and_a_raising_trial_does_not_stop_it(tmp_path):
    result = run_cli('sweep_scenarios:falling_ball', '--trials', '2', '--workers', '2',
                     '--seed', '3', '--param', 'height=-1,0.5,2', '--out', str(tmp_path))
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r'6 trials in [\d.]+ s on 2 workers \([\d.]+ trials/s\)', last)
    assert '2 trials raised' in result.stdout
    rows = sorted(rows_of(tmp_path / 'results.csv'), key=lambda r: int(r['trial']))
    assert [r['trial'] for r in rows] == ['0', '1', '2', '3', '4', '5']
    # the summary of a scenario other than humanoid-push: its outcomes over the parameter
    assert (tmp_path / 'summary.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    # the progress bar: one update per trial, the last with nothing left
    bars = [b for b in result.stderr.replace('\n', '\r').split('\r') if '/6 trials' in b]
    assert [b.split()[1] for b in bars] == [f'{k}/6' for k in range(1, 7)]
    assert re.search(r'\] 6/6 trials, \d+ s, about 0 s left', bars[-1])
    for row in rows:
        height = float(row['height'])
        if height < 0:
            assert row['error'] == 'ValueError: height -1.0 is below the ground'
            assert row['fall_time'] == ''
        else:
            assert row['error'] == ''
            assert float(row['fall_time']) == pytest.approx((2 * height / 9.81) ** 0.5)
    # the same command, the same rows (but the wall times)
    again = tmp_path / 'again'
    run_cli('sweep_scenarios:falling_ball', '--trials', '2', '--workers', '1', '--seed', '3',
            '--param', 'height=-1,0.5,2', '--out', str(again))
    rows_again = sorted(rows_of(again / 'results.csv'), key=lambda r: int(r['trial']))
    strip = [{k: v for k, v in r.items() if k != 'wall_s'} for r in rows]
    assert [{k: v for k, v in r.items() if k != 'wall_s'} for r in rows_again] == strip


# Ctrl-C once 3 trials of 0.3 s are written: 200 of them, a minute's work, so the Ctrl-C comes
# long before the last (with 40, two fresh clones' full runs found all 40 written when the
# sweep took it, once alone and once beside other tests; run by itself it passed)
@pytest.mark.serial
def test_ctrl_c_keeps_the_finished_rows(tmp_path):
    process = subprocess.Popen(
        [sys.executable, '-m', 'jointsim_ros.tools.sweep', 'sweep_scenarios:slow_ball',
         '--trials', '200', '--workers', '1', '--param', 'pause=0.3', '--out', str(tmp_path)],
        cwd=PACKAGE_ROOT, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    results = tmp_path / 'results.csv'
    deadline = time.monotonic() + 120
    while not (results.exists() and len(rows_of(results)) >= 3):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    rows = rows_of(results)
    assert 3 <= len(rows) < 200
    assert f'stopped: {len(rows)} of 200 trials finished, kept in {results}' in out
    assert all(float(r['fall_time']) == pytest.approx((2 / 9.81) ** 0.5) for r in rows)
    last = out.strip().splitlines()[-1]
    assert re.fullmatch(rf'{len(rows)} trials in [\d.]+ s on 1 workers \([\d.]+ trials/s\)',
                        last)


def test_arm_payload_on_ray_equals_the_same_trials_run_one_by_one(tmp_path):
    rows, line = sweep('arm-payload', 1, 2, 5, tmp_path, ['mass=0,4', 'seconds=1.5'],
                       stream=open(os.devnull, 'w'))
    assert line.startswith('2 trials in ') and ' on 2 workers ' in line
    cache = {}
    for row in rows:
        outcomes, _, error = run_trial(arm_payload, {'mass': row['mass'], 'seconds': 1.5},
                                       row['seed'], cache)
        assert error == '' and row['error'] == ''
        for key in ('rms_error', 'max_error', 'max_current'):
            assert row[key] == outcomes[key]          # bitwise: the same trial, another worker
    # the heavier payload needs more current
    assert rows[1]['max_current'] > rows[0]['max_current']


def test_address_runs_the_sweep_on_a_running_cluster(tmp_path):
    # a cluster as docs/sweep.md starts one, its own processes ended by SIGTERM; token
    # authentication off on both sides (Ray turns it on where ~/.ray/auth_token exists)
    env = dict(os.environ, RAY_AUTH_MODE='disabled')
    port = free_port()
    # its own temp dir (short: Ray's socket paths): the default one's ray_current_cluster would
    # name it to every Ray started without an address on this machine
    temp_dir = tempfile.mkdtemp(prefix='ray', dir='/tmp')
    head = subprocess.Popen(
        [os.path.join(os.path.dirname(sys.executable), 'ray'), 'start', '--head',
         f'--port={port}', '--node-ip-address=127.0.0.1', '--num-cpus=2',
         f'--temp-dir={temp_dir}', '--include-dashboard=false', '--disable-usage-stats',
         '--block'], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for line in head.stdout:
            if 'Ray runtime started' in line:
                break
        else:
            pytest.fail(f'ray start ended with {head.wait()}')
        result = run_cli('arm-payload', '--trials', '1', '--workers', '2', '--seed', '5',
                         '--param', 'mass=0,4', '--param', 'seconds=1.5',
                         '--address', f'127.0.0.1:{port}', '--out', str(tmp_path), env=env)
    finally:
        head.terminate()
        head.wait(timeout=60)
        shutil.rmtree(temp_dir, ignore_errors=True)
    assert result.returncode == 0, result.stderr
    assert 'Connected to Ray cluster' in result.stderr      # Ray says which: not a new one
    assert re.match(r'2 trials in [\d.]+ s on 2 workers', result.stdout.splitlines()[-1])
    # the cluster's rows are the rows of the same trials run in this process
    cache = {}
    for row in rows_of(tmp_path / 'results.csv'):
        outcomes, _, error = run_trial(arm_payload, {'mass': float(row['mass']),
                                                     'seconds': 1.5}, int(row['seed']), cache)
        assert error == '' and row['error'] == ''
        assert float(row['rms_error']) == outcomes['rms_error']
    # no cluster there: one line naming the address and what to do, exit 2, nothing written
    result = run_cli('sweep_scenarios:falling_ball', '--address', f'127.0.0.1:{port}',
                     '--out', str(tmp_path / 'none'), env=env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith(
        f'jointsim_sweep: --address 127.0.0.1:{port}: no Ray cluster answered')
    assert 'ray start --head' in result.stderr and not (tmp_path / 'none').exists()


def test_a_trial_that_ends_its_worker_is_a_row_and_a_new_worker_goes_on(tmp_path):
    result = run_cli('sweep_scenarios:dying_ball', '--trials', '1', '--workers', '2',
                     '--param', 'height=1,-1,2,-2,3', '--out', str(tmp_path))
    assert result.returncode == 0, result.stderr
    rows = sorted(rows_of(tmp_path / 'results.csv'), key=lambda r: int(r['trial']))
    assert [r['height'] for r in rows] == ['1.0', '-1.0', '2.0', '-2.0', '3.0']
    for row in rows:
        if float(row['height']) < 0:
            assert row['error'].startswith('worker died: ') and row['fall_time'] == ''
        else:
            assert row['error'] == ''
            assert float(row['fall_time']) == pytest.approx((2 * float(row['height']) / 9.81)
                                                            ** 0.5)
    assert '2 trials raised' in result.stdout


def test_arm_payload_keeps_a_simulator_per_mass_and_a_kept_one_repeats_a_fresh_one():
    cache = {}
    first = run_trial(arm_payload, {'mass': 2.0, 'seconds': 1.2}, 1, cache)[0]
    sim = cache['arm', 2.0]
    run_trial(arm_payload, {'mass': 2.0, 'seconds': 1.2, 'amplitude': 0.8}, 2, cache)
    again = run_trial(arm_payload, {'mass': 2.0, 'seconds': 1.2}, 3, cache)[0]
    assert cache['arm', 2.0] is sim                   # kept: no load, no build
    assert again == first                             # reset: as if new, to the bit


@pytest.mark.slow
def test_humanoid_push_stands_a_small_push_and_falls_to_a_large_one(tmp_path):
    result = run_cli('humanoid-push', '--workers', '2', '--param', 'force=0,900',
                     '--param', 'direction=90', '--param', 'steps=0', '--param', 'time=1.5',
                     '--out', str(tmp_path))
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r'2 trials in [\d.]+ s on 2 workers \([\d.]+ trials/s\): 1 fell', last)
    rows = {float(r['force']): r for r in rows_of(tmp_path / 'results.csv')}
    assert rows[0.0]['fell'] == 'False' and rows[900.0]['fell'] == 'True'
    assert abs(float(rows[0.0]['lateral'])) < 0.01
    assert (tmp_path / 'summary.png').stat().st_size > 1000
