"""
Run one robot with the same commands in both formulations and report how far they differ.

    python -m jointsim_ros.tools.compare_formulations [--robot URDF] [--config YAML]
        [--seconds S] [--out DIR] [--commands YAML]
        [--integrator semi_implicit_euler|symplectic_euler|rk4]
        [--sample S] [--bent RAD]

The robot runs once with ``solver.formulation: maximal`` and once with ``tree`` (every other
key from the config), from the same initial state, under the same constant commands: a YAML
file with ``efforts: {joint: N m or N}`` and/or ``voltages: {joint: V}``.  Written to DIR:
``compare_formulations.csv`` (time s; per joint the angle difference tree - maximal, rad or
m; the largest joint anchor error of the maximal run, m; that of the tree run, m) and
``compare_formulations.png`` (the differences and the anchor errors over time).  Without
--robot it runs the bundled arm with its drives at 0 V, released from the bent pose.
"""
import argparse
import csv
import dataclasses
import os
import sys

import numpy as np
import yaml

from . import show_log
from .. import resources
from ..description.config import load_config
from ..errors import ConfigError, JointsimError
from ..sim.simulator import Simulator

CSV_NAME = 'compare_formulations.csv'
PNG_NAME = 'compare_formulations.png'


def parse_args(argv):
    """Return the command-line arguments."""
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('--robot', help='URDF or xacro file (default: the bundled arm)')
    parser.add_argument('--config', help='simulator YAML config (default: that of the arm with '
                        'the bundled robot, else the defaults)')
    parser.add_argument('--seconds', type=float, default=2.0, help='simulated time, s (2)')
    parser.add_argument('--out', default='.', help='directory for the CSV and PNG (.)')
    parser.add_argument('--commands', help='YAML with efforts: {joint: value} and/or '
                        'voltages: {joint: V}, held constant')
    parser.add_argument('--integrator', default='semi_implicit_euler',
                        choices=('semi_implicit_euler', 'symplectic_euler', 'rk4'),
                        help='of the tree run')
    parser.add_argument('--sample', type=float, default=0.01,
                        help='spacing of the CSV rows, s (0.01; rounded to whole steps)')
    parser.add_argument('--bent', type=float, default=None,
                        help='start from +-RAD on alternate joints (default: the initial '
                        'state of the config; 0.5 for the bundled arm)')
    return parser.parse_args(argv)


def load_commands(path):
    """Return (efforts, voltages) dicts from a commands YAML file (None: none)."""
    if path is None:
        return {}, {}
    with open(path, encoding='utf-8') as stream:
        data = yaml.safe_load(stream) or {}
    unknown = set(data) - {'efforts', 'voltages'}
    if not isinstance(data, dict) or unknown:
        raise ConfigError(f"commands file '{path}' may hold only 'efforts' and 'voltages' "
                          f'mappings (joint -> value); found {sorted(unknown)}.')
    return dict(data.get('efforts') or {}), dict(data.get('voltages') or {})


def _simulator(robot, config, formulation, integrator):
    solver = dataclasses.replace(config.solver, formulation=formulation,
                                 integrator=integrator if formulation == 'tree'
                                 else 'semi_implicit_euler')
    # force-torque sensors only read the motion, and the tree formulation has none: both runs
    # leave the config's sensors out
    return Simulator.from_urdf(robot, dataclasses.replace(config, solver=solver,
                                                          force_torque_sensors={}))


def compare(robot, config=None, seconds=2.0, efforts=None, voltages=None,
            integrator='semi_implicit_euler', sample=0.01, bent=None):
    """
    Run both formulations and return the comparison table.

    Args:
        robot: URDF/xacro path or text.
        config: YAML path, dict, SimConfig or None.
        seconds: simulated time, s.
        efforts, voltages: joint -> N m (N) / V, held from the start.
        integrator: the tree run's integrator.
        sample: row spacing, s.
        bent: start at +-bent rad on alternate joints, or None for the config's state.

    Returns:
        (joint names, rows): rows (n, 3 + n_joint) of time s, per-joint difference tree -
        maximal (rad or m), largest anchor error of the maximal run and of the tree run (m).
    """
    config = load_config(config)
    sims = [_simulator(robot, config, f, integrator) for f in ('maximal', 'tree')]
    for sim in sims:
        if bent is not None:
            sim.set_joint_state({n: bent * (-1) ** k for k, n in enumerate(sim.joint_names)})
        if efforts:
            sim.set_joint_efforts(efforts)
        if voltages:
            sim.set_voltages(voltages)
    stride = max(1, int(round(sample / sims[0].dt)))
    rows = []
    for k in range(int(round(seconds / sims[0].dt / stride)) + 1):
        if k:
            for sim in sims:
                sim.step(stride)
        anchors = [max(sim.joint_anchor_errors().values(), default=0.0) for sim in sims]
        rows.append(np.concatenate(([sims[0].time],
                                    sims[1].joint_positions() - sims[0].joint_positions(),
                                    anchors)))
    return sims[0].joint_names, np.array(rows)


def write_outputs(names, rows, out_dir, title=''):
    """Write the CSV and the PNG into out_dir; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, CSV_NAME)
    with open(csv_path, 'w', newline='', encoding='utf-8') as stream:
        writer = csv.writer(stream)
        writer.writerow(['time_s', *(f'{n}_tree_minus_maximal' for n in names),
                         'max_anchor_error_maximal_m', 'max_anchor_error_tree_m'])
        writer.writerows(rows.tolist())
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot
    figure, (top, bottom) = pyplot.subplots(2, 1, figsize=(8, 6), sharex=True)
    for k, name in enumerate(names):
        top.plot(rows[:, 0], rows[:, 1 + k], label=name)
    top.set_ylabel('tree - maximal (rad or m)')
    top.set_title(title or 'joint positions: tree - maximal formulation')
    if names:
        top.legend(fontsize='small', ncol=2)
    bottom.semilogy(rows[:, 0], np.maximum(rows[:, -2], 1e-18), label='maximal')
    bottom.semilogy(rows[:, 0], np.maximum(rows[:, -1], 1e-18), label='tree')
    bottom.set_ylabel('largest anchor error (m)')
    bottom.set_xlabel('time (s)')
    bottom.legend(fontsize='small')
    figure.tight_layout()
    png_path = os.path.join(out_dir, PNG_NAME)
    figure.savefig(png_path, dpi=100)
    pyplot.close(figure)
    return csv_path, png_path


def main(argv=None):
    """Entry point of ``jointsim_compare_formulations``."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    show_log()
    try:
        bundled = args.robot is None
        robot = args.robot or resources.share_file(*resources.DEFAULT_ROBOT)
        config = args.config or (resources.share_file(*resources.DEFAULT_CONFIG)
                                 if bundled else None)
        bent = args.bent if args.bent is not None else (0.5 if bundled else None)
        efforts, voltages = load_commands(args.commands)
        names, rows = compare(str(robot), str(config) if config else None, args.seconds,
                              efforts, voltages, args.integrator, args.sample, bent)
        paths = write_outputs(names, rows, args.out, f'{os.path.basename(str(robot))}: '
                              'tree - maximal')
    except (JointsimError, OSError) as error:
        print(f'compare_formulations: {error}', file=sys.stderr)
        return 2
    worst = np.max(np.abs(rows[:, 1:-2]), axis=0) if names else np.zeros(0)
    for name, value in zip(names, worst):
        print(f'  {name}: max |tree - maximal| = {value:.3g}')
    print(f'  largest anchor error: maximal {rows[:, -2].max():.3g} m, tree '
          f'{rows[:, -1].max():.3g} m')
    print(f'wrote {paths[0]} and {paths[1]}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
