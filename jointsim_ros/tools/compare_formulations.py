"""
Run one robot with the same commands in both formulations and report how far they differ.

    python -m jointsim_ros.tools.compare_formulations [--robot URDF] [--config YAML]
        [--seconds S] [--out DIR] [--commands YAML]
        [--integrator semi_implicit_euler|symplectic_euler|rk4]
        [--sample S] [--bent RAD] [--base fixed|floating] [--drop M]

The robot runs once with ``solver.formulation: maximal`` and once with ``tree`` (every other
key from the config), from the same initial state, under the same constant commands: a YAML
file with ``efforts: {joint: N m or N}`` and/or ``voltages: {joint: V}``.  Written to DIR:
``compare_formulations.csv`` (time s; per joint the angle difference tree - maximal, rad or
m; the largest joint anchor error of the maximal run, m; that of the tree run, m) and
``compare_formulations.png`` (the differences and the anchor errors over time).  Without
--robot it runs the bundled arm with its drives at 0 V, released from the bent pose.

Any robot: ``--base floating`` (or a config or URDF saying so) frees the root; when the config
gives no ``base_pose``, the robot starts with its lowest link frame --drop m (0.3) above the
ground, as in bench/bench_drop.py.  With a floating base or contacts with the world (the
ground, scene objects) the tool also prints both runs side by side: the base path (the root
link's origin at a few times and the final difference tree - maximal), the contact loads at the
end (total normal force of ``Simulator.contacts()`` and the number of points, with the weight
m g beside them), and writes ``compare_formulations_base.csv`` (time; the root link's x, y, z
and the total normal force, N, and contact points of each run).  It always prints the step
time of each run (the median over the sample intervals of the us per step, so the first
interval's compilation does not count).  A formulation that refuses the robot (a ConfigError
at load: docs/tree.md lists what tree mode refuses) ends the tool with that message (exit 2).
"""
import argparse
import csv
import dataclasses
import os
import sys
import time

import numpy as np
import yaml

from . import show_log
from .. import resources
from ..description.config import load_config
from ..errors import ConfigError, JointsimError
from ..sim.simulator import Simulator

CSV_NAME = 'compare_formulations.csv'
PNG_NAME = 'compare_formulations.png'
#: The base path and contact loads of both runs (floating base or world contacts only).
BASE_CSV_NAME = 'compare_formulations_base.csv'
#: Default height of the lowest link frame above the ground for a floating base without a
#: configured base_pose, m (bench/bench_drop.py's drop).
DROP = 0.3
#: Base positions printed at this many evenly spaced times.
PATH_SAMPLES = 5
FORMULATIONS = ('maximal', 'tree')


@dataclasses.dataclass
class Comparison:
    """
    What one run of both formulations gives (:func:`run_comparison`).

    Attributes:
        names: joint names (the CSV's joint columns).
        rows: (n, 3 + n_joint) time s, per-joint tree - maximal, largest anchor error of the
            maximal and of the tree run (m): the rows of compare_formulations.csv.
        base_link: the root link (its origin is the base path), or None for a fixed base.
        base: (n, 2, 3) the root link's origin in the maximal and the tree run, m.
        loads: (n, 2) total normal force of the contacts that carried load, N.
        points: (n, 2) number of those contacts.
        step_us: (2,) median us per step of each run.
        weight: the robot's weight m g (scene objects left out), N.
        contacts: whether the world has anything to touch (ground, scene objects).
    """

    names: tuple
    rows: np.ndarray
    base_link: object
    base: np.ndarray
    loads: np.ndarray
    points: np.ndarray
    step_us: np.ndarray
    weight: float
    contacts: bool


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
    parser.add_argument('--base', choices=('fixed', 'floating'), default=None,
                        help="the robot's base (default: the config's, or the URDF world "
                        'joint)')
    parser.add_argument('--drop', type=float, default=DROP,
                        help='floating base without a base_pose in the config: the lowest link '
                        f'frame starts this far above the ground, m ({DROP})')
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
    # force-torque sensors and IMUs only read the motion (and would split the steps at their
    # sample times, into the step time): both runs leave the config's sensors out
    return Simulator.from_urdf(robot, dataclasses.replace(config, solver=solver,
                                                          force_torque_sensors={},
                                                          imu_sensors={}))


def _based(robot, config, base, drop, integrator):
    """
    Return the config with ``base`` set, and a floating base placed above the ground.

    Args:
        robot: URDF/xacro path or text.
        config: SimConfig.
        base: 'fixed', 'floating' or None (the config's, or the URDF world joint's).
        drop: for a floating base the config does not place (no base_pose): the lowest link
            frame starts this far above the ground, m; None leaves base_pose as it is.
        integrator: the tree run's integrator (only passed through to the probe).
    """
    if base is not None:
        config = dataclasses.replace(config, base=base, given_keys=config.given_keys | {'base'})
    if drop is None or 'base_pose' in config.given_keys:
        return config
    probe = _simulator(robot, config, 'maximal', integrator)
    if not probe.model.floating_base:
        return config
    objects = {o.body for o in probe.model.objects}
    heights = [probe.link_pose(body.name)[0][2] for i, body in enumerate(probe.model.bodies)
               if i not in objects]
    root = probe.link_pose(probe.model.bodies[0].name)[0]
    position = (float(root[0]), float(root[1]), float(root[2] - min(heights) + drop))
    return dataclasses.replace(config, base_pose=dataclasses.replace(
        config.base_pose, position=position), given_keys=config.given_keys | {'base_pose'})


def _robot_weight(sim):
    """Return the robot's weight m g (scene objects left out), N."""
    objects = {o.body for o in sim.model.objects}
    mass = sum(b.mass for i, b in enumerate(sim.model.bodies) if i not in objects)
    return float(mass * np.linalg.norm(sim.config.gravity))


def _loads(sim):
    """Return (total normal force N, points) of the contacts that carried load last step."""
    contacts = sim.contacts()
    return sum(c.normal_force for c in contacts), len(contacts)


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
    result = run_comparison(robot, config, seconds, efforts, voltages, integrator, sample, bent,
                            drop=None)
    return result.names, result.rows


def run_comparison(robot, config=None, seconds=2.0, efforts=None, voltages=None,
                   integrator='semi_implicit_euler', sample=0.01, bent=None, base=None,
                   drop=DROP):
    """
    Run both formulations side by side; return the table and the base, contacts and timing.

    Args:
        robot, config, seconds, efforts, voltages, integrator, sample, bent: as for
            :func:`compare`.
        base: 'fixed', 'floating' or None (the config's, or the URDF world joint's).
        drop: a floating base the config does not place (no base_pose) starts with its lowest
            link frame this far above the ground, m; None: base_pose as configured.

    Returns:
        Comparison.

    Raises:
        JointsimError: a formulation refuses the robot (ConfigError at load), a bad command, or
            a run diverged.
    """
    config = _based(robot, load_config(config), base, drop, integrator)
    sims = [_simulator(robot, config, f, integrator) for f in FORMULATIONS]
    model = sims[0].model
    base_link = model.bodies[0].name if model.floating_base else None
    for sim in sims:
        if bent is not None:
            sim.set_joint_state({n: bent * (-1) ** k for k, n in enumerate(sim.joint_names)})
        if efforts:
            sim.set_joint_efforts(efforts)
        if voltages:
            sim.set_voltages(voltages)
    stride = max(1, int(round(sample / sims[0].dt)))
    rows, bases, loads, points, step_us = [], [], [], [], []
    for k in range(int(round(seconds / sims[0].dt / stride)) + 1):
        if k:
            took = []
            for sim in sims:
                start = time.perf_counter()
                sim.step(stride)
                took.append((time.perf_counter() - start) / stride * 1e6)
            step_us.append(took)
        anchors = [max(sim.joint_anchor_errors().values(), default=0.0) for sim in sims]
        rows.append(np.concatenate(([sims[0].time],
                                    sims[1].joint_positions() - sims[0].joint_positions(),
                                    anchors)))
        if base_link is not None:
            bases.append([sim.link_pose(base_link)[0] for sim in sims])
        found = [_loads(sim) for sim in sims]
        loads.append([f[0] for f in found])
        points.append([f[1] for f in found])
    return Comparison(
        names=sims[0].joint_names, rows=np.array(rows), base_link=base_link,
        base=np.array(bases).reshape(-1, 2, 3), loads=np.array(loads, dtype=float),
        points=np.array(points, dtype=int),
        step_us=(np.median(np.array(step_us), axis=0) if step_us
                 else np.full(2, np.nan)),
        weight=_robot_weight(sims[0]),
        contacts=any(shape.body < 0 for shape in model.shapes) or bool(model.objects))


def write_base_csv(result, out_dir):
    """Write the base path and contact loads of both runs into out_dir; return the path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, BASE_CSV_NAME)
    n = len(result.rows)
    base = result.base if len(result.base) else np.full((n, 2, 3), np.nan)
    with open(path, 'w', newline='', encoding='utf-8') as stream:
        writer = csv.writer(stream)
        writer.writerow(['time_s', *(f'base_{axis}_{f}_m' for f in FORMULATIONS
                                     for axis in 'xyz'),
                         *(f'normal_force_{f}_N' for f in FORMULATIONS),
                         *(f'contact_points_{f}' for f in FORMULATIONS)])
        for k in range(n):
            writer.writerow([result.rows[k, 0], *base[k].ravel().tolist(),
                             *result.loads[k].tolist(), *result.points[k].tolist()])
    return path


def side_by_side(result):
    """Return the lines printing the base path, the contact loads and the step times."""
    lines = []
    times = result.rows[:, 0]
    if result.base_link is not None:
        lines.append(f'  base path: origin of {result.base_link!r}, m        maximal'
                     '                      tree')
        picks = sorted({int(np.argmin(np.abs(times - t)))
                        for t in np.linspace(times[0], times[-1], PATH_SAMPLES)})
        for k in picks:
            cells = ['({:8.4f} {:8.4f} {:8.4f})'.format(*p) for p in result.base[k]]
            lines.append(f'    t = {times[k]:7.3f} s   {cells[0]}   {cells[1]}')
        gap = result.base[-1, 1] - result.base[-1, 0]
        lines.append('  final base position tree - maximal: ({:.3g}, {:.3g}, {:.3g}) m, '
                     '|d| = {:.3g} m'.format(*gap, np.linalg.norm(gap)))
    if result.base_link is not None or result.contacts:
        loads, points = result.loads[-1], result.points[-1]
        lines.append(f'  contact loads at t = {times[-1]:.3f} s: maximal {loads[0]:.4g} N '
                     f'({points[0]} points), tree {loads[1]:.4g} N ({points[1]} points); '
                     f'weight m g = {result.weight:.4g} N')
    lines.append(f'  step time: maximal {result.step_us[0]:.1f} us/step, tree '
                 f'{result.step_us[1]:.1f} us/step (medians over the sample intervals)')
    return lines


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
        result = run_comparison(str(robot), str(config) if config else None, args.seconds,
                                efforts, voltages, args.integrator, args.sample, bent,
                                args.base, args.drop)
        names, rows = result.names, result.rows
        paths = write_outputs(names, rows, args.out, f'{os.path.basename(str(robot))}: '
                              'tree - maximal')
        if result.base_link is not None or result.contacts:
            paths += (write_base_csv(result, args.out),)
    except (JointsimError, OSError) as error:
        print(f'compare_formulations: {error}', file=sys.stderr)
        return 2
    worst = np.max(np.abs(rows[:, 1:-2]), axis=0) if names else np.zeros(0)
    for name, value in zip(names, worst):
        print(f'  {name}: max |tree - maximal| = {value:.3g}')
    print(f'  largest anchor error: maximal {rows[:, -2].max():.3g} m, tree '
          f'{rows[:, -1].max():.3g} m')
    for line in side_by_side(result):
        print(line)
    print(f'wrote {", ".join(paths[:-1])} and {paths[-1]}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
