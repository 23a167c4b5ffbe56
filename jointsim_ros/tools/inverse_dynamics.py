"""
Inverse dynamics by prescribed motion: run the three-stage procedure from a YAML description.

    python -m jointsim_ros.tools.inverse_dynamics DESCRIPTION.yaml [--out DIR] [--dt S]
    python -m jointsim_ros.tools.inverse_dynamics --example crane|three_bar [--out DIR]

Both take ``--formulation maximal|tree`` (default: the config's ``solver.formulation``).

The description (paths relative to it) names the robot, its simulator config (declaring the
tool's path point and the linear actuators), the tool's path as a CSV (t, x, y, z in s and m)
and what to record and drive:

    robot: crane.urdf
    config: crane.yaml
    path_point: tool
    path_csv: path.csv
    actuators: [slewing, d_a, a_b]   # linear actuators: lengths recorded, then driven
    joints: []                       # scalar joints: angles recorded, then driven
    duration: 10.0                   # s (default: the last path sample)

It writes DIR/stage1.csv (tool position and the actuators' coordinates), stage2.csv (their
forces N and efforts N m or N), stage3.csv (tool position and its deviation from the path),
summary.yaml, and forces.png, path.png and deviation.png; progress goes to stderr.
"""
import argparse
import csv
from pathlib import Path
import sys
import time

import numpy as np
import yaml

from . import show_log
from ..control.inverse_dynamics import run_three_stages
from ..control.mechanisms import slewing_crane, three_bar, tool_path
from ..description.config import load_config, with_formulation
from ..errors import JointsimError
from ..sim.simulator import Simulator

EXAMPLES = {'crane': (slewing_crane, ['slewing', 'd_a', 'a_b']),
            'three_bar': (three_bar, ['d_a', 'a_b', 'b_c'])}


def parse_args(argv):
    """Command-line arguments."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('description', nargs='?', help='YAML description (see the module help)')
    parser.add_argument('--example', choices=sorted(EXAMPLES),
                        help="a bundled mechanism of issue 8 with the issue's path")
    parser.add_argument('--out', default='inverse_dynamics_out', help='output folder')
    parser.add_argument('--dt', type=float, help='time step, s (overrides the config)')
    parser.add_argument('--duration', type=float, help='simulated time per stage, s')
    parser.add_argument('--formulation', choices=('maximal', 'tree'), default=None,
                        help="replace the config's solver.formulation (docs/tree.md)")
    args = parser.parse_args(argv)
    if (args.description is None) == (args.example is None):
        parser.error('give a DESCRIPTION.yaml or --example NAME (one of them)')
    return args


class JobError(JointsimError):
    """The YAML description is malformed (the message names the key and the fix)."""


def load_description(path):
    """Return (robot source, config dict or path, point, times, path, actuators, joints, T)."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise JobError(f'{path}: cannot read the description ({error}).') from None
    if not isinstance(data, dict):
        raise JobError(f'{path}: a description is a mapping with robot, path_point, '
                       'path_csv and actuators or joints.')
    missing = [k for k in ('robot', 'path_point', 'path_csv') if k not in data]
    if missing:
        raise JobError(f'{path}: the description needs {", ".join(missing)}.')
    unknown = set(data) - {'robot', 'config', 'path_point', 'path_csv', 'actuators', 'joints',
                           'duration'}
    if unknown:
        raise JobError(f'{path}: unknown keys {sorted(unknown)}; the keys are robot, '
                       'config, path_point, path_csv, actuators, joints, duration.')
    base = path.parent
    table = base / data['path_csv']
    try:
        samples = np.loadtxt(table, delimiter=',', ndmin=2, comments='#')
    except (OSError, ValueError) as error:
        raise JobError(f'{table}: cannot read the path ({error}); it must be CSV rows '
                       't, x, y, z (s, m).') from None
    if samples.shape[1] != 4:
        raise JobError(f'{table}: path rows need 4 columns t, x, y, z; got '
                       f'{samples.shape[1]}.')
    config = data.get('config')
    config = str(base / config) if config else None
    duration = float(data.get('duration', samples[-1, 0]))
    return (str(base / data['robot']), config, data['path_point'], samples[:, 0],
            samples[:, 1:], list(data.get('actuators') or []), list(data.get('joints') or []),
            duration)


def write_csv(path, header, rows):
    """Write one CSV file with a header row."""
    with open(path, 'w', newline='') as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows(np.asarray(rows).tolist())


def plot(result, out):
    """Write forces.png, path.png and deviation.png (matplotlib, Agg)."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(8, 4.5))
    for k, name in enumerate(result.names):
        axes.plot(result.time[1:], result.forces[:, k], label=name)
    axes.set(xlabel='time, s', ylabel='force N / effort N m',
             title='stage 2: forces the recorded motion needs')
    axes.legend()
    axes.grid(True)
    figure.savefig(out / 'forces.png', dpi=100)
    pyplot.close(figure)

    figure = pyplot.figure(figsize=(7, 6))
    axes = figure.add_subplot(projection='3d')
    axes.plot(*result.path.T, 'k--', label='prescribed path')
    axes.plot(*result.tool_stage3.T, label='stage 3 (driven by the forces)')
    axes.set(xlabel='x, m', ylabel='y, m', zlabel='z, m', title='tool path')
    axes.legend()
    figure.savefig(out / 'path.png', dpi=100)
    pyplot.close(figure)

    figure, axes = pyplot.subplots(figsize=(8, 4.5))
    axes.semilogy(result.time, np.maximum(result.deviation, 1e-12) * 1e3, label='stage 3')
    axes.semilogy(result.time, np.maximum(
        np.linalg.norm(result.tool_stage2 - result.path, axis=1), 1e-12) * 1e3, label='stage 2')
    axes.set(xlabel='time, s', ylabel='deviation from the path, mm',
             title='tool deviation from the prescribed path')
    axes.legend()
    axes.grid(True, which='both')
    figure.savefig(out / 'deviation.png', dpi=100)
    pyplot.close(figure)


def write_results(result, out, formulation='maximal'):
    """Write the CSV files, summary.yaml and the plots; return the summary dict."""
    out.mkdir(parents=True, exist_ok=True)
    xyz = ['x_m', 'y_m', 'z_m']
    write_csv(out / 'stage1.csv', ['t_s'] + [f'tool_{c}' for c in xyz] + list(result.names),
              np.column_stack([result.time, result.tool_stage1, result.coordinates]))
    write_csv(out / 'stage2.csv', ['t_s'] + list(result.names),
              np.column_stack([result.time[1:], result.forces]))
    write_csv(out / 'stage3.csv', ['t_s'] + [f'tool_{c}' for c in xyz] + ['deviation_m'],
              np.column_stack([result.time, result.tool_stage3, result.deviation]))
    stage2 = np.linalg.norm(result.tool_stage2 - result.path, axis=1)
    summary = {'formulation': formulation, 'steps': int(len(result.time) - 1),
               'amplitude_m': result.amplitude,
               'stage2_max_deviation_m': float(stage2.max()),
               'stage3_max_deviation_m': float(result.deviation.max()),
               'stage3_max_deviation_percent': float(100.0 * result.deviation.max()
                                                     / result.amplitude),
               'largest_forces': {n: float(np.max(np.abs(result.forces[:, k])))
                                  for k, n in enumerate(result.names)}}
    (out / 'summary.yaml').write_text(yaml.safe_dump(summary, sort_keys=False))
    plot(result, out)
    return summary


def progress_printer(stream=None):
    """Return a progress callback that prints a line per tenth of each stage (stderr)."""
    def report(stage, step, steps, seconds):
        print(f'stage {stage}/3: {100 * step // steps:3d} % ({seconds:.2f} s simulated)',
              file=stream or sys.stderr, flush=True)
    return report


def run(args):
    """Run the procedure for parsed arguments; return the summary dict."""
    if args.example:
        build, actuators = EXAMPLES[args.example]
        urdf, config = build(dt=args.dt or 0.001)
        times = np.arange(0.0, 10.0 + 1e-9, 0.01)
        path, joints, point, duration = tool_path(times), [], 'tool', 10.0
    else:
        urdf, config, point, times, path, actuators, joints, duration = load_description(
            args.description)
        if args.dt:
            given = yaml.safe_load(Path(config).read_text()) if config else {}
            config = dict(given or {}, dt=args.dt)
    duration = args.duration or duration
    config = with_formulation(load_config(config), args.formulation)
    started = time.perf_counter()
    result = run_three_stages(lambda: Simulator.from_urdf(urdf, config), point, times, path,
                              duration, actuators=actuators, joints=joints,
                              progress=progress_printer())
    summary = write_results(result, Path(args.out), config.solver.formulation)
    summary['wall_time_s'] = time.perf_counter() - started
    return summary


def main(argv=None):
    """Entry point: run, print the summary, exit 2 on a user error."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    show_log()
    try:
        summary = run(args)
    except JointsimError as error:
        print(f'error: {error}', file=sys.stderr)
        return 2
    print(yaml.safe_dump(summary, sort_keys=False), end='')
    print(f'results in {args.out}/')
    return 0


if __name__ == '__main__':
    sys.exit(main())
