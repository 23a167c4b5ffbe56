"""
The method's scenarios in both formulations: the humanoid's walk, the valve, the node's rate.

Both formulations (``solver.formulation`` maximal and tree, everything else the scenarios' own
configs) in the same run, alternating run by run; medians over ``--runs``:

1. The walk: ``jointsim_headless --humanoid --steps N --formulation F`` in this process (the
   balancing controller on the robot's own sensors: encoders, the pelvis IMU, the ankle
   force-torque sensors), dt = 1 ms, its controller at 200 Hz.  Per run: the simulator's time
   per step (every ``Simulator.step`` call timed, its time over its steps; the controller not
   counted), the walk's simulated over wall time (the controller included), the result line's
   figures (walked, lateral offset, fell).
2. The valve: ``jointsim_headless --humanoid --valve --formulation F`` (bench_valve.scenario):
   time per step while turning, real-time factor over the turn, valve angle, squeeze and its
   RMS error, feet slip.
3. The node (``--node-seconds`` of wall time, default 30; 0 skips it): bench_humanoid.node_run
   with the node's ``formulation`` parameter, the walking controller in its own process, both
   at real time; the real-time factor from /clock over the window and its smallest 10 s window,
   the node's step time from its diagnostics, its CPU.  Not pinned: node and controller share
   the machine's two cores as ``make run`` does.

Run: .venv/bin/python bench/bench_formulations.py [--runs 3] [--walk-steps 10]
     [--node-seconds 30] [--quick]
Writes formulations.csv and formulations.md in bench/results/ (or --out).
"""
import argparse
import io
from pathlib import Path
import sys
import tempfile
import time

from bench_humanoid import node_run
import bench_valve
from benchlib import (machine_facts, markdown_table, REPO_ROOT, RESULTS_DIR, save_markdown,
                      spread, write_csv)
from jointsim_ros.tools import headless

FORMULATIONS = ('maximal', 'tree')
ROBOT = REPO_ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
CONFIG = REPO_ROOT / 'config' / 'jointsim_humanoid.yaml'


def timed_steps(run):
    """Call ``run()`` with every Simulator.step timed; return (its result, us per step)."""
    original = headless.Simulator.step
    spent = [0.0, 0]

    def step(self, n=1):
        start = time.perf_counter()
        try:
            return original(self, n)
        finally:
            spent[0] += time.perf_counter() - start
            spent[1] += n
    headless.Simulator.step = step
    try:
        result = run()
    finally:
        headless.Simulator.step = original
    return result, 1e6 * spent[0] / max(spent[1], 1)


def walk_run(formulation, steps):
    """One balancing walk; return its figures."""
    start = time.perf_counter()
    result, per_step = timed_steps(lambda: headless.walk(
        ROBOT, CONFIG, steps, out=io.StringIO(), formulation=formulation))
    wall = time.perf_counter() - start
    return {'step_us': per_step, 'rtf': result['sim'].time / wall,
            'walked_m': result['walked'], 'lateral_m': result['lateral'],
            'fell': 'no' if result['fell'] is None else f'yes at {result["fell"]:.2f} s'}


def valve_run(formulation):
    """One valve scenario; return its figures."""
    result = bench_valve.scenario(formulation=formulation)
    return {'step_us': result.get('step_us', float('nan')), 'rtf': result.get('rtf', float('nan')),
            'turned_deg': result['turned'], 'squeeze_n': result['squeeze'],
            'squeeze_rms_n': result['squeeze_rms'], 'slip_mm': 1e3 * result['slip'],
            'fell': 'no' if result['fell'] is None else f'yes at {result["fell"]:.2f} s'}


def median_row(scenario, formulation, runs, keys):
    """Return a table row: the medians (smallest-largest) of ``keys`` over the runs."""
    row = {'scenario': scenario, 'formulation': formulation, 'runs': len(runs)}
    for key, digits in keys:
        values = [r[key] for r in runs]
        median, low, high = spread(values)
        row[key] = (f'{median:.{digits}f} ({low:.{digits}f}-{high:.{digits}f})'
                    if len(values) > 1 else f'{median:.{digits}f}')
    row['fell'] = ', '.join(sorted({r['fell'] for r in runs}))
    return row


def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=3, help='runs per scenario and formulation')
    parser.add_argument('--walk-steps', type=int, default=10, help='steps of the walk (10)')
    parser.add_argument('--node-seconds', type=float, default=30.0,
                        help='wall time of each node window, s (30; 0 skips the node)')
    parser.add_argument('--quick', action='store_true',
                        help='1 run, 2 steps, a 10 s node window: checks that the script works')
    parser.add_argument('--out', type=Path, default=RESULTS_DIR,
                        help=f'folder for formulations.csv and .md ({RESULTS_DIR})')
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.walk_steps = 1, 2
        args.node_seconds = min(args.node_seconds, 10.0)
    return args


def main(argv=None):
    """Measure both formulations, write the tables."""
    args = parse_args(argv)
    command = ' '.join(['.venv/bin/python', 'bench/bench_formulations.py']
                       + (sys.argv[1:] if argv is None else list(argv)))
    facts = machine_facts()
    walks = {f: [] for f in FORMULATIONS}
    valves = {f: [] for f in FORMULATIONS}
    csv_rows = []
    for run in range(args.runs):
        for formulation in FORMULATIONS:
            walks[formulation].append(walk_run(formulation, args.walk_steps))
            csv_rows.append({'part': 'walk', 'run': run, 'formulation': formulation,
                             **walks[formulation][-1]})
            print(csv_rows[-1], flush=True)
        for formulation in FORMULATIONS:
            valves[formulation].append(valve_run(formulation))
            csv_rows.append({'part': 'valve', 'run': run, 'formulation': formulation,
                             **valves[formulation][-1]})
            print(csv_rows[-1], flush=True)
    rows = []
    for formulation in FORMULATIONS:
        rows.append(median_row(f'walk, {args.walk_steps} steps', formulation,
                               walks[formulation],
                               [('step_us', 1), ('rtf', 2), ('walked_m', 3), ('lateral_m', 3)]))
    for formulation in FORMULATIONS:
        rows.append(median_row('valve', formulation, valves[formulation],
                               [('step_us', 1), ('rtf', 2), ('turned_deg', 0), ('squeeze_n', 1),
                                ('squeeze_rms_n', 1), ('slip_mm', 2)]))
    nodes = []
    if args.node_seconds > 0:
        for formulation in FORMULATIONS:
            with tempfile.TemporaryDirectory(prefix='jointsim_bench_formulations_') as logs:
                node = node_run(args.node_seconds, logs, formulation)
            print(node, flush=True)
            csv_rows.append({'part': 'node', 'formulation': formulation, **node})
            nodes.append({'formulation': formulation,
                          'real-time factor (window)': round(node['rtf_overall'], 3),
                          'smallest 10 s window': round(node['rtf_min_10s'], 3),
                          'node step us (diagnostics median)':
                              round(node['step_us_diag_median'], 1),
                          'solver iterations (median)': node['iterations_median'],
                          'node CPU %': round(node['node_cpu_pct']),
                          'controller CPU %': round(node['controller_cpu_pct']),
                          'upright at the end': node['upright_at_end']})
    columns = []
    for r in csv_rows:
        columns += [c for c in r if c not in columns]
    write_csv(args.out, 'formulations', [{c: r.get(c, '') for c in columns} for r in csv_rows])
    shown = ['scenario', 'formulation', 'runs', 'step_us', 'rtf', 'walked_m', 'lateral_m',
             'turned_deg', 'squeeze_n', 'squeeze_rms_n', 'slip_mm', 'fell']
    parts = [
        '### The humanoid and the valve in both formulations', '',
        f'Command: `{command}`  ',
        f'Date (UTC): {facts["date_utc"]}; commit {facts["git_commit"]}; {facts["cpu_model"]}, '
        f'{facts["cores"]} cores, shared.  Medians over the runs (smallest-largest); step_us: '
        'the simulator per step (controller excluded), rtf: simulated over wall time with the '
        'controller.', '',
        markdown_table([{c: r.get(c, '') for c in shown} for r in rows], shown)]
    if nodes:
        parts += ['', f'The node walking, {args.node_seconds:g} s window per formulation '
                  '(physics 1000 Hz, publish 200 Hz, real_time_factor 1):', '',
                  markdown_table(nodes)]
    save_markdown(args.out, 'formulations', '\n'.join(parts))
    return 0


if __name__ == '__main__':
    sys.exit(main())
