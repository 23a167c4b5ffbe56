"""
Run the core benchmarks and collect the results (`make bench`).

Each script runs in its own Python process (so the memory figures and numba's first-call cost
of one do not leak into another), pinned to one core, in this order: bench_step_time.py,
bench_chain_scaling.py, bench_accuracy.py, bench_pybullet.py, bench_drives.py,
bench_joint_rows.py, bench_contacts.py, bench_inverse_dynamics.py, bench_tree.py,
bench_published_urdfs.py, bench_worlds.py (several robots in one world) and bench_rays.py (lidars
and depth cameras).  Their CSV and markdown tables go to
bench/results/; this script adds machine.csv (CPU, versions, commit, date, load) and
report.md, every table in one file, and prints it.

Run: .venv/bin/python bench/run_all.py [--quick] [--cpu N] [--out DIR]
(`make bench ARGS='--quick'` passes the options through).
"""
import argparse
from pathlib import Path
import subprocess
import sys
import time

from benchlib import BENCH_DIR, machine_facts, markdown_table, RESULTS_DIR, write_csv

SCRIPTS = ('bench_step_time', 'bench_chain_scaling', 'bench_accuracy', 'bench_pybullet',
           'bench_drives', 'bench_joint_rows', 'bench_contacts', 'bench_inverse_dynamics',
           'bench_tree', 'bench_published_urdfs', 'bench_worlds', 'bench_rays')
TABLES = ('step_time', 'chain_scaling', 'accuracy', 'pybullet', 'drives', 'joint_rows',
          'contacts', 'published_urdfs', 'worlds', 'rays')


def main(argv=None):
    """Run the scripts one after the other; exit non-zero if any failed."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--quick', action='store_true',
                        help='short runs that only check that every script works')
    parser.add_argument('--cpu', type=int, default=None, help='core to pin every script to')
    parser.add_argument('--out', type=Path, default=RESULTS_DIR, help='results folder')
    args = parser.parse_args(argv)
    passed = ['--out', str(args.out)] + (['--quick'] if args.quick else [])
    if args.cpu is not None:
        passed += ['--cpu', str(args.cpu)]
    facts = machine_facts()
    failed = []
    started = time.monotonic()
    for script in SCRIPTS:
        print(f'== {script}.py', flush=True)
        status = subprocess.run([sys.executable, str(BENCH_DIR / f'{script}.py'), *passed])
        if status.returncode:
            failed.append(script)
    facts['bench_wall_time_s'] = f'{time.monotonic() - started:.0f}'
    options = sys.argv[1:] if argv is None else argv
    facts['command'] = ' '.join(['bench/run_all.py', *options])
    write_csv(args.out, 'machine', [{'fact': k, 'value': v} for k, v in facts.items()])
    parts = ['## Benchmark report\n', markdown_table([{'fact': k, 'value': v}
                                                     for k, v in facts.items()])]
    for table in TABLES:
        path = Path(args.out) / f'{table}.md'
        if path.exists():
            parts.append(path.read_text())
    report = '\n\n'.join(parts)
    (Path(args.out) / 'report.md').write_text(report + '\n')
    print('\n' + report)
    if failed:
        print(f'failed: {", ".join(failed)}', file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
