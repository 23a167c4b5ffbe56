"""
The 7-DOF arm's step time, per call and amortised, both formulations, against another checkout.

Is the arm slower than it was?  The arm of bench_engine_targets.py (robots_for_bench.
peer_arm_urdf(): no contacts, dt = 1 ms, 20 iterations, the defaults) is timed in this checkout
and, with ``--against DIR``, in the checkout at DIR (its jointsim_ros first on the path, the
same venv), each in its own process, the two alternating ``--runs`` times.  A process times
each formulation 80 times (from the start pose every 10th time): 100 ``step(1)`` calls (per
call) and one ``step(100)`` call (amortised), and keeps the smallest of the 80 (a shared
host's noise only adds time, and short windows are the likelier to find the host quiet)
beside the median.  Pinned to one core (``--cpu``, default the last).

Run: .venv/bin/python bench/bench_arm_calls.py [--runs 3] [--against ../old-checkout]
Writes arm_calls.csv and arm_calls.md in bench/results/ (or --out).
"""
import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

from benchlib import (markdown_table, parse_args, pin_to_one_core, REPO_ROOT, save_markdown,
                      write_csv)
import numpy as np

#: Repetitions per process, steps in each, and repetitions between returns to the start pose.
REPEATS = 80
STEPS = 100
RESET_EVERY = 10


def measure():
    """Time the arm in both formulations in this process; return their figures."""
    # the checkout to time first on the path (benchlib put this script's checkout before it)
    sys.path.insert(0, os.environ['ARM_CALLS_CHECKOUT'])
    import jointsim_ros
    from jointsim_ros import Simulator
    from robots_for_bench import peer_arm_urdf
    text, _ = peer_arm_urdf()
    with tempfile.NamedTemporaryFile('w', suffix='.urdf', delete=False) as handle:
        handle.write(text)
    figures = {}
    for formulation in ('maximal', 'tree'):
        sim = Simulator.from_urdf(handle.name, {'dt': 0.001,
                                                'solver': {'formulation': formulation}})
        sim.step(10)   # compilation and caches
        call, amortised = [], []
        for repeat in range(REPEATS):
            if repeat % RESET_EVERY == 0:
                sim.reset()   # (the undamped arm would diverge after about 18 s)
            start = time.perf_counter()
            for _ in range(STEPS):
                sim.step(1)
            call.append((time.perf_counter() - start) / STEPS * 1e6)
            start = time.perf_counter()
            sim.step(STEPS)
            amortised.append((time.perf_counter() - start) / STEPS * 1e6)
        figures[formulation] = {'call': min(call), 'call median': float(np.median(call)),
                                'amortised': min(amortised),
                                'amortised median': float(np.median(amortised))}
    os.unlink(handle.name)
    figures['module'] = jointsim_ros.__file__
    return figures


def run_in(checkout):
    """Return measure() of the checkout at that folder, in a process of its own."""
    env = dict(os.environ, ARM_CALLS_CHECKOUT=str(checkout))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), '--one'], env=env,
                         capture_output=True, text=True, check=True)
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    module = figures.pop('module')
    if not module.startswith(str(checkout)):
        raise SystemExit(f'{checkout}: timed {module} instead')
    return figures


def options(parser):
    """Add --against and --one."""
    parser.add_argument('--against', type=Path, default=None,
                        help='another checkout of the project to time alternately with this one')
    parser.add_argument('--one', action='store_true', help='(internal) one process: print JSON')


def main(argv=None):
    """Time the checkouts alternately; print and save the table."""
    args = parse_args(__doc__, 3, STEPS, argv, options=options)
    if args.one:
        print(json.dumps(measure()))
        return 0
    pin_to_one_core(args.cpu)    # the processes started inherit the core
    checkouts = [('this', REPO_ROOT)] + ([('against', args.against.resolve())]
                                         if args.against else [])
    rows = []
    for run in range(args.runs):
        for label, folder in checkouts:
            for formulation, f in run_in(folder).items():
                row = {'checkout': f'{label} ({folder.name})', 'run': run,
                       'formulation': formulation}
                row.update({k: round(v, 2) for k, v in f.items()})
                print(row, flush=True)
                rows.append(row)
    write_csv(args.out, 'arm_calls', rows)
    save_markdown(args.out, 'arm_calls', '### The arm per call and amortised, by checkout\n\n'
                  f'Smallest of {REPEATS} (median beside it), us a step; runs alternate.\n\n'
                  + markdown_table(rows))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
