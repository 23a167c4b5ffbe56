"""
The drop set settling in tree mode: the solve at rest with 20 sweeps a step and with more.

Not a timing: what the sequential impulses reach on the robots of bench_tree_contacts.py that
do not converge at rest with the defaults (docs/benchmarks.md, "Reduced coordinates with
contacts, limits and joint friction").  Each robot is dropped as there (floating base, lowest
link frame 0.3 m above the ground, defaults but the iteration cap) and left to settle; at each
sample time the last step's StepReport (iterations, residual, stop reason), the number of
contact points that carried load, and the largest joint speed.  Both caps in the same run:
the default 20 and --cap (2000): a solve that does not reach its tolerance with a hundred times
the sweeps is not short of sweeps.

Run: .venv/bin/python bench/bench_rest_sweeps.py [--robots A1,Go2,G1] [--cap 2000]
     [--seconds 4]
Writes rest_sweeps.csv and rest_sweeps.md in bench/results/ (or --out).
"""
import logging

from bench_compliant import drop_start
from bench_drop import ROBOTS_DIR
from bench_tree_contacts import chosen_robots, robots_option
from benchlib import markdown_table, parse_args, quiet_c_output, save_markdown, write_csv
import numpy as np

#: The robots measured by default (those whose solve does not converge at rest in tree mode).
DEFAULT_ROBOTS = 'A1,Go2,G1'


def options(parser):
    """Add the script's options."""
    robots_option(parser)
    parser.add_argument('--cap', type=int, default=2000,
                        help='the larger iteration cap, beside the default 20 (default 2000)')
    parser.add_argument('--seconds', type=float, default=4.0,
                        help='simulated time after the drop, s (default 4); samples every s '
                             'from 2 s')


def settle(path, cap, seconds):
    """Return the rows of one robot under one iteration cap, a row per sampled second."""
    sim = drop_start(path, {'solver': {'formulation': 'tree', 'iterations': cap}})
    steps_per_s = int(round(1.0 / sim.dt))
    rows = []
    for k in range(1, int(seconds * steps_per_s) + 1):
        report = sim.step(1)
        if k % steps_per_s == 0 and k >= 2 * steps_per_s:
            rows.append({'iteration cap': cap, 't s': round(k * sim.dt, 3),
                         'iterations': report.iterations,
                         'residual N s': float(f'{report.residual:.3g}'),
                         'stop': report.stop_reason,
                         'loaded points': len(sim.contacts()),
                         'largest joint speed rad/s': float(
                             f'{np.abs(sim.joint_velocities()).max():.3g}')})
    return rows


def main(argv=None):
    """Run the robots under both caps; print and save the table."""
    args = parse_args(__doc__, 1, 0, argv, options)
    logging.getLogger('jointsim_ros').setLevel(logging.ERROR)
    rows = []
    seconds = 2.0 if args.quick else args.seconds
    for name, relative in chosen_robots(args.robots or DEFAULT_ROBOTS, False):
        for cap in (20, args.cap):
            with quiet_c_output():
                found = settle(ROBOTS_DIR / relative, cap, seconds)
            for row in found:
                row = {'robot': name, **row}
                rows.append(row)
                print(' '.join(f'{key}={value}' for key, value in row.items()), flush=True)
    write_csv(args.out, 'rest_sweeps', rows)
    save_markdown(args.out, 'rest_sweeps', markdown_table(rows))


if __name__ == '__main__':
    main()
