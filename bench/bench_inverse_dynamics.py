"""
Measure issue 8's three-stage inverse-dynamics procedure: wall time and reproduction error.

For the spatial three-bar as the issue states it and for the slewing crane (the same bars, d and
path with three elements for three degrees of freedom; jointsim_ros/control/mechanisms.py), the
three stages of docs/prescribed.md run over the issue's 10 s path at dt = 1, 2 and 5 ms.  Reported:
the wall time of the three stages (median of --runs at 1 ms; target: under a minute), the
largest tool deviation from the path in stage 2 and stage 3, and stage 3's largest deviation
while the path moves (t <= 1 + 2 pi s), each also as a percentage of the motion's amplitude
(4 m; target 0.1 %).  Both formulations (maximal and tree, solver.formulation) run each case;
the tree's stage-2 forces are compared with the maximal run's of the same case (largest
difference over each force's peak, after the maximal solve's 20 cold-start steps).

Run: .venv/bin/python bench/bench_inverse_dynamics.py [--runs 3] [--quick]
"""
import statistics
import time

from benchlib import markdown_table, parse_args, pin_to_one_core, save_markdown, verdict, \
    write_csv
from jointsim_ros import Simulator
from jointsim_ros.control.inverse_dynamics import run_three_stages
from jointsim_ros.control.mechanisms import slewing_crane, three_bar, tool_path
import numpy as np

MECHANISMS = {'three-bar (as stated)': (three_bar, ['d_a', 'a_b', 'b_c']),
              'slewing crane': (slewing_crane, ['slewing', 'd_a', 'a_b'])}
TARGET_SECONDS = 60.0
TARGET_PERCENT = 0.1
MOTION_END = 1.0 + 2.0 * np.pi


FORMULATIONS = ('maximal', 'tree')


def one_run(build, actuators, dt, duration, formulation):
    """Run the three stages once; return (wall s, result)."""
    urdf, config = build(dt=dt)
    config['solver']['formulation'] = formulation
    times = np.arange(0.0, 10.0 + 1e-9, 0.01)
    started = time.perf_counter()
    result = run_three_stages(lambda: Simulator.from_urdf(urdf, config), 'tool', times,
                              tool_path(times), duration, actuators=actuators)
    return time.perf_counter() - started, result


def measure(label, build, actuators, dt, duration, formulation, repeats, forces):
    """Return one table row; keep the run's forces in forces[formulation]."""
    walls, result = [], None
    for _ in range(repeats):
        wall, result = one_run(build, actuators, dt, duration, formulation)
        walls.append(wall)
    forces[formulation] = result.forces
    stage2 = np.linalg.norm(result.tool_stage2 - result.path, axis=1)
    moving = result.time <= MOTION_END
    amplitude = result.amplitude
    worst = float(result.deviation.max())
    against = ''
    if formulation != 'maximal':
        reference = forces['maximal'][20:]
        gap = np.max(np.abs(result.forces[20:] - reference), axis=0) / np.maximum(
            np.max(np.abs(reference), axis=0), 1e-12)
        against = ' / '.join(f'{100.0 * g:.3g}' for g in gap)
    return {
        'mechanism': label, 'formulation': formulation, 'dt ms': dt * 1e3, 'runs': repeats,
        'three stages s (median)': f'{statistics.median(walls):.1f}',
        'time verdict': verdict(statistics.median(walls), TARGET_SECONDS)
        if dt == 0.001 else '',
        'stage 2 max mm': f'{stage2.max() * 1e3:.3g}',
        'stage 3 max mm': f'{worst * 1e3:.3g}',
        'stage 3 max %': f'{100.0 * worst / amplitude:.3g}',
        'stage 3 while moving mm': f'{result.deviation[moving].max() * 1e3:.3g}',
        'while moving %': f'{100.0 * result.deviation[moving].max() / amplitude:.3g}',
        'verdict (10 s)': verdict(100.0 * worst / amplitude, TARGET_PERCENT),
        'forces vs maximal, % of peak': against}


def main(argv=None):
    """Run every mechanism at every dt; write bench/results/inverse_dynamics.*."""
    args = parse_args(__doc__, runs=3, steps=0, argv=argv)
    cpu = pin_to_one_core(args.cpu)
    duration = 1.5 if args.quick else 10.0
    rows = []
    for label, (build, actuators) in MECHANISMS.items():
        for dt in (0.001, 0.002, 0.005):
            forces = {}
            for formulation in FORMULATIONS:
                rows.append(measure(label, build, actuators, dt, duration, formulation,
                                    args.runs if dt == 0.001 else 1, forces))
                print(rows[-1], flush=True)
    write_csv(args.out, 'inverse_dynamics', rows)
    save_markdown(args.out, 'inverse_dynamics',
                  f'### Three-stage procedure over the issue 8 path ({duration:g} s, amplitude '
                  f'4 m; core {cpu})\n\n' + markdown_table(rows))


if __name__ == '__main__':
    main()
