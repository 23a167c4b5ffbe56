"""
jointsim_sweep (issue 31): trials per second on Ray against the same trials in a loop.

1. Throughput: the same trials of a scenario (default ``humanoid-push``, standing pushes of
   a few seconds each) run (a) one by one in a plain loop in this process, one Simulator kept
   between trials as a worker keeps it, and (b) by ``sweep`` on Ray with 1 .. the machine's
   cores workers.  Each: wall time from the start (Ray's start-up, the actors' load included)
   to the last row, trials per second, and the speed-up over the loop.  Medians of ``--runs``.
2. The humanoid-push map: the command below, its last line and its PNG copied to docs/.

Run: .venv/bin/python bench/bench_sweep.py [--runs 3] [--trials 12]
Writes bench/results/sweep.md and docs/sweep_push.png.
"""
import argparse
import io
import os
from pathlib import Path
import shutil
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jointsim_ros.control.scenarios import SCENARIOS  # noqa: E402, I100
from jointsim_ros.tools.sweep import make_trials, parse_params, run_trial, sweep  # noqa: E402
import numpy as np  # noqa: E402, I100

RESULTS = ROOT / 'bench' / 'results'
#: The throughput trials: pushes while standing (2 s of simulated time each plus the push).
THROUGHPUT = ['force=0:300', 'direction=0:360', 'steps=0', 'time=1.0']
#: The map's sweep.
MAP = ['force=100,200,300,400,500', 'direction=0,45,90,135,180,225,270,315', 'steps=6']


def loop(name, params, trials, seed):
    """Run the trials one by one in this process; return the wall time and steady rate."""
    scenario = SCENARIOS[name]
    sampled, grid = parse_params(params, scenario)
    start = time.perf_counter()
    cache = {}
    landed = []
    for _, trial_seed, p in make_trials(sampled, grid, trials, seed):
        run_trial(scenario, p, trial_seed, cache)
        landed.append(time.perf_counter())
    steady = (len(landed) - 1) / (landed[-1] - landed[0]) if len(landed) > 1 else 0.0
    return time.perf_counter() - start, steady


def on_ray(name, params, trials, seed, workers):
    """Run the sweep on Ray; return its wall time and its steady rate (trials/s), s."""
    out = tempfile.mkdtemp()
    landed = []
    start = time.perf_counter()
    sweep(name, trials, workers, seed, out, params, stream=io.StringIO(),
          on_row=lambda row: landed.append(time.perf_counter()))
    wall = time.perf_counter() - start
    shutil.rmtree(out, ignore_errors=True)
    # once running: rows from the first each worker lands to the last
    first = landed[min(workers, len(landed)) - 1]
    steady = (len(landed) - workers) / (landed[-1] - first) if landed[-1] > first else 0.0
    return wall, steady


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--trials', type=int, default=12)
    parser.add_argument('--scenario', default='humanoid-push')
    parser.add_argument('--no-map', action='store_true')
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    params = THROUGHPUT if args.scenario == 'humanoid-push' else []
    figures = {'loop': []}
    for run in range(args.runs):
        figures['loop'].append(loop(args.scenario, params, args.trials, run))
        for workers in range(1, cores + 1):
            figures.setdefault(workers, []).append(
                on_ray(args.scenario, params, args.trials, run, workers))
        shown = [f'{k}: {v[-1][0]:.1f} s, {v[-1][1]:.2f}/s' for k, v in figures.items()]
        print(f'run {run + 1}: ' + ', '.join(shown), flush=True)
    base = float(np.median([f[0] for f in figures['loop']]))
    base_rate = float(np.median([f[1] for f in figures['loop']]))
    lines = [f'Command: `.venv/bin/python bench/bench_sweep.py --runs {args.runs} --trials '
             f'{args.trials}` ({args.scenario}, `--param {" --param ".join(params)}`; '
             f'{cores} cores; medians of {args.runs} runs, wall time from the start to the last '
             'row, start-up included)', '',
             '| how | wall (s) | trials/s over the wall | speed-up | trials/s once running | '
             'speed-up once running | target (>= 0.8 x cores, once running) |',
             '|---|---|---|---|---|---|---|',
             f'| one by one in a loop (one Simulator) | {base:.1f} | {args.trials / base:.2f} | '
             f'1.00 | {base_rate:.2f} | 1.00 | |']
    for workers in range(1, cores + 1):
        wall = float(np.median([f[0] for f in figures[workers]]))
        rate = float(np.median([f[1] for f in figures[workers]]))
        target = (f'{0.8 * cores:.1f}: {"PASS" if rate / base_rate >= 0.8 * cores else "MISS"}'
                  if workers == cores else '')
        lines.append(f'| Ray, {workers} worker{"s" if workers > 1 else ""} | {wall:.1f} | '
                     f'{args.trials / wall:.2f} | {base / wall:.2f} | {rate:.2f} | '
                     f'{rate / base_rate:.2f} | {target} |')
    if not args.no_map:
        out = Path(tempfile.mkdtemp())
        text = io.StringIO()
        _, line = sweep('humanoid-push', 1, cores, 0, out, MAP, stream=text)
        shutil.copy(out / 'summary.png', ROOT / 'docs' / 'sweep_push.png')
        shutil.copy(out / 'results.csv', RESULTS / 'sweep_push.csv')
        lines += ['', 'The humanoid-push map: `jointsim_sweep humanoid-push --workers '
                  f'{cores} --param {" --param ".join(MAP)} --out DIR`', '', f'`{line}`', '',
                  'PNG: `docs/sweep_push.png`; rows: `bench/results/sweep_push.csv`']
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / 'sweep.md').write_text('\n'.join(lines) + '\n')
    print('\n'.join(lines))


if __name__ == '__main__':
    main()
