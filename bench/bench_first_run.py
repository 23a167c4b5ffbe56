"""
First run (issue 14): cold compile of the physics kernels, and how soon ``make run`` shows motion.

In a fresh ``git clone`` of this checkout's HEAD (with the project's venv, the clone first on
``PYTHONPATH``), each run:

1. clears numba's cache in the clone and times ``python -m jointsim_ros.tools.precompile`` (what
   ``make venv`` runs: every kernel, parallel workers): the cold compile, wall and CPU;
2. times the same command again: the warm check every later ``make venv`` pays;
3. starts the demo (``python -m jointsim_ros.tools.demo``, what ``make run`` runs after
   ``make venv``) and times the first printed line whose joint positions are not all zero:
   the time a newcomer waits to see the arm move.

Run: .venv/bin/python bench/bench_first_run.py [--runs N] [--quick] [--out DIR]
Writes first_run.csv and first_run.md (medians, with the smallest and largest run).
"""
import contextlib
import os
from pathlib import Path
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

from benchlib import markdown_table, parse_args, REPO_ROOT, write_csv
import numpy as np

MOVING = re.compile(r'^t =\s+([0-9.]+) s\s+q = \[([^\]]*)\]')


def run_timed(command, cwd, env, timeout=900):
    """Run a command; return (wall s, CPU s of children, stdout+stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f'{command} failed: {done.stderr[-2000:]}')
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def clear_cache(clone):
    """Delete numba's cache files of the clone's package."""
    for path in (clone / 'jointsim_ros').rglob('*.nb[ic]'):
        path.unlink()


def seconds_to_motion(clone, env, limit=60.0):
    """Start the demo; return wall seconds until it prints joint positions that moved."""
    start = time.monotonic()
    process = subprocess.Popen([sys.executable, '-m', 'jointsim_ros.tools.demo', '--seconds',
                                '4'], cwd=clone, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    found = None
    try:
        for line in process.stdout:
            match = MOVING.match(line.strip())
            if match and any(abs(float(v)) > 0.005 for v in match.group(2).split()):
                found = time.monotonic() - start
                break
            if time.monotonic() - start > limit:
                break
    finally:
        # Ctrl-C as a terminal sends it (the demo stops its node and controller), then kill
        # whatever of its process group is left
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    if found is None:
        raise RuntimeError('the demo printed no motion')
    return found


def main(argv=None):
    """Measure and write the tables."""
    args = parse_args(__doc__, runs=3, steps=0, argv=argv)
    runs = 1 if args.quick else args.runs
    rows = []
    with tempfile.TemporaryDirectory(prefix='jointsim_first_run_') as folder:
        clone = Path(folder) / 'jointsim_ros'
        subprocess.run(['git', 'clone', '--quiet', str(REPO_ROOT), str(clone)], check=True)
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join(p for p in (str(clone), env.get('PYTHONPATH'))
                                            if p)
        env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
        env.setdefault('FASTDDS_BUILTIN_TRANSPORTS', 'UDPv4')
        env['FASTDDS_DEFAULT_PROFILES_FILE'] = str(clone / 'config' / 'fastdds_profile.xml')
        env['ROS_DOMAIN_ID'] = str(90 + os.getpid() % 10)
        precompile = [sys.executable, '-m', 'jointsim_ros.tools.precompile']
        for run in range(runs):
            clear_cache(clone)
            cold_wall, cold_cpu, output = run_timed(precompile, clone, env)
            # each worker's line names its share of the jobs: 'maximal, contacts kernels ...'
            variants = {k.replace(', ', '+'): v for k, v in re.findall(
                r'^  ([\w, ]+) kernels compiled \((\d+) s\)', output, re.M)}
            warm_wall, _, _ = run_timed(precompile, clone, env)
            motion = seconds_to_motion(clone, env)
            rows.append({'run': run, 'cold_compile_wall_s': round(cold_wall, 1),
                         'cold_compile_cpu_s': round(cold_cpu, 1),
                         **{f'{k}_s': int(v) for k, v in variants.items()},
                         'warm_check_s': round(warm_wall, 2),
                         'make_run_to_motion_s': round(motion, 2)})
            print(rows[-1], flush=True)
    keys = [k for k in rows[0] if k != 'run']
    summary = [{'figure': k, 'median': float(np.median([r[k] for r in rows])),
                'min': min(r[k] for r in rows), 'max': max(r[k] for r in rows)}
               for k in keys]
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(args.out, 'first_run', rows)
    table = markdown_table(summary, ['figure', 'median', 'min', 'max'])
    (args.out / 'first_run.md').write_text(table + '\n')
    print(table)


if __name__ == '__main__':
    main()
