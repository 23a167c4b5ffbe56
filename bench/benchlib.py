"""
Helpers shared by the benchmark scripts: CPU pinning, statistics, machine facts, CSV, tables.

Timing method used by every script: the process is pinned to one core; the first step (numba
compilation or cache load) runs before any clock starts; a measurement is repeated in several
runs and the reported figure is the median of the run medians, with the smallest and largest run
median beside it, so that a run disturbed by another process shows as spread, not as the result.
"""
import argparse
import contextlib
import csv
import datetime
import os
from pathlib import Path
import platform
import resource
import subprocess
import sys
import time

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / 'results'

# Measure the jointsim_ros of this checkout, even where the venv's editable install points to
# another work tree (a clean clone of a commit, benchmarked with the project's venv).
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(1, str(REPO_ROOT))

#: Settings of every timed jointsim run (issue 2): 1 ms step, 20 velocity iterations.
JOINTSIM_CONFIG = {'dt': 0.001, 'solver': {'iterations': 20}}


def parse_args(description, runs, steps, argv=None, options=None):
    """
    Parse the options every benchmark script takes.

    Args:
        description: the script's docstring, shown by --help.
        runs: default number of repeated runs.
        steps: default steps per run.
        argv: argument list, or None for sys.argv.
        options: optional callable(parser) adding the script's own options.

    Returns:
        argparse.Namespace with runs, steps, quick, cpu, out (and the script's own options).
    """
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=runs, help=f'repeated runs (default {runs})')
    parser.add_argument('--steps', type=int, default=steps,
                        help=f'steps per run (default {steps})')
    parser.add_argument('--quick', action='store_true',
                        help='a few short runs to check that the script works (figures are noise)')
    parser.add_argument('--cpu', type=int, default=None,
                        help='core to pin to (default: the highest-numbered allowed core)')
    parser.add_argument('--out', type=Path, default=RESULTS_DIR,
                        help=f'folder for the CSV and markdown results (default {RESULTS_DIR})')
    if options is not None:
        options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.steps = min(args.runs, 2), min(args.steps, 200)
    return args


def pin_to_one_core(cpu=None):
    """
    Pin this process to one core so the timings measure single-core speed.

    Args:
        cpu: core number, or None for the highest-numbered core this process may use.

    Returns:
        The core number, or -1 where pinning is not available.
    """
    if not hasattr(os, 'sched_setaffinity'):
        return -1
    allowed = sorted(os.sched_getaffinity(0))
    cpu = allowed[-1] if cpu is None else cpu
    os.sched_setaffinity(0, {cpu})
    return cpu


def spread(run_values):
    """
    Summarise one figure measured in several runs.

    Args:
        run_values: the figure of each run.

    Returns:
        (median, min, max) over the runs.
    """
    values = np.asarray(run_values, dtype=float)
    return float(np.median(values)), float(values.min()), float(values.max())


def rss_mib():
    """
    Return the resident memory of this process now and at its peak, MiB.

    Returns:
        (current VmRSS from /proc/self/status, peak ru_maxrss of getrusage).
    """
    return process_rss_mib('self'), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def process_rss_mib(pid):
    """Return the VmRSS of a process (a pid, or 'self'), MiB; NaN when it cannot be read."""
    try:
        with open(f'/proc/{pid}/status') as status:
            for line in status:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float('nan')


def process_cpu_seconds(pid):
    """Return the utime + stime of a process (all its threads), s."""
    with open(f'/proc/{pid}/stat') as stat:
        fields = stat.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def descendants(pid):
    """Return a process's pid and those of its children, grandchildren... (a browser's)."""
    children = subprocess.run(['pgrep', '-P', str(pid)], capture_output=True,
                              text=True).stdout.split()
    return [pid] + [p for c in children for p in descendants(int(c))]


def tree_cpu(pid):
    """Return the CPU seconds of a process and all its descendants (those still running)."""
    total = 0.0
    for each in descendants(pid):
        try:
            total += process_cpu_seconds(each)
        except OSError:     # ended since it was listed
            pass
    return total


def _version(module):
    try:
        return __import__(module).__version__
    except Exception:
        return 'not installed'


def _pybullet_version():
    try:
        from importlib import metadata
        return metadata.version('pybullet')
    except Exception:
        return 'not installed'


def machine_facts():
    """
    Return what a reader needs to judge the figures: machine, versions, commit, date.

    Returns:
        dict of strings.
    """
    cpu_model = platform.processor() or 'unknown'
    try:
        with open('/proc/cpuinfo') as cpuinfo:
            for line in cpuinfo:
                if line.startswith('model name'):
                    cpu_model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass

    def git(*args):
        try:
            return subprocess.run(['git', *args], cwd=REPO_ROOT, capture_output=True,
                                  text=True, check=True).stdout.strip()
        except Exception:
            return 'unknown'

    dirty = git('status', '--porcelain', '--', 'jointsim_ros')
    return {
        'date_utc': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M'),
        'cpu_model': cpu_model,
        'cores': str(os.cpu_count()),
        'load_average_1_5_15': ' '.join(f'{v:.2f}' for v in os.getloadavg()),
        'kernel': platform.release(),
        'python': platform.python_version(),
        'numpy': _version('numpy'),
        'numba': _version('numba'),
        'llvmlite': _version('llvmlite'),
        'pybullet': _pybullet_version(),
        'git_commit': git('rev-parse', '--short', 'HEAD'),
        'jointsim_ros_path': str(REPO_ROOT / 'jointsim_ros'),
        'jointsim_ros_uncommitted_changes': 'yes' if dirty else 'no',
        'executable': sys.executable,
    }


def write_csv(out_dir, name, rows):
    """
    Write rows (dicts with the same keys) to out_dir/name.csv.

    Args:
        out_dir: folder, created if missing.
        name: file stem.
        rows: list of dicts; the first row's keys are the columns.

    Returns:
        Path of the file written.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f'{name}.csv'
    with open(path, 'w', newline='') as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(v) for k, v in row.items()})
    return path


def _cell(value, digits=4):
    if isinstance(value, (float, np.floating)):
        if value != value:
            return 'n/a'
        if value == 0 or 1e-3 <= abs(value) < 1e5:
            return f'{value:.{digits}g}'
        return f'{value:.{digits - 1}e}'
    return str(value)


def markdown_table(rows, columns=None):
    """
    Format rows (dicts) as a GitHub markdown table.

    Args:
        rows: list of dicts.
        columns: keys to show, in order (default: all keys of the first row).

    Returns:
        The table as text.
    """
    columns = columns or list(rows[0])
    lines = ['| ' + ' | '.join(columns) + ' |', '|' + '---|' * len(columns)]
    for row in rows:
        lines.append('| ' + ' | '.join(_cell(row.get(c, '')) for c in columns) + ' |')
    return '\n'.join(lines)


def verdict(value, target):
    """Return 'PASS' when value <= target, 'MISS' otherwise, 'n/a' when value is not a number."""
    if value != value:
        return 'n/a'
    return 'PASS' if value <= target else 'MISS'


def mean_us(call, calls):
    """Return the mean wall time of ``call()`` over ``calls`` calls (after one), microseconds."""
    call()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e6


def save_markdown(out_dir, name, text):
    """Write text to out_dir/name.md and print it."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f'{name}.md').write_text(text + '\n')
    print(text, flush=True)


def time_calls(step, steps):
    """Call ``step(1)`` ``steps`` times; return each call's wall time, us, (steps,)."""
    times = np.empty(steps)
    clock = time.perf_counter_ns
    for k in range(steps):
        start = clock()
        step(1)
        times[k] = clock() - start
    return times / 1e3


def pybullet_world(pybullet, iterations=20, dt=0.001, gravity=9.81):
    """
    Return a DIRECT PyBullet client with gravity, the step and iterations set and a plane at z 0.

    The world the PyBullet rows of the contact benchmarks stand on (bench_contacts.py,
    bench_compliant.py).
    """
    client = pybullet.connect(pybullet.DIRECT)
    pybullet.setGravity(0, 0, -gravity, physicsClientId=client)
    pybullet.setPhysicsEngineParameter(fixedTimeStep=dt, numSolverIterations=iterations,
                                       physicsClientId=client)
    plane = pybullet.createCollisionShape(pybullet.GEOM_PLANE, physicsClientId=client)
    pybullet.createMultiBody(0, plane, physicsClientId=client)
    return client


@contextlib.contextmanager
def quiet_c_output():
    """Send what C code (PyBullet) prints on stdout and stderr to /dev/null meanwhile."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def time_steps(sim, pose, steps, per_call):
    """
    Time one run of ``sim`` from a pose at rest.

    Args:
        sim: Simulator (already stepped once, so compilation is not timed).
        pose: dict joint -> start position, or None to start from ``sim.reset()``.
        steps: steps in the run.
        per_call: time ``step(1)`` call by call, else ``step(1000)`` blocks.

    Returns:
        us per step: every call's time (steps,) when per_call, else the amortised time per step
        in a (1,) array.
    """
    if pose is None:
        sim.reset()
    else:
        sim.set_joint_state(pose)
    if per_call:
        return time_calls(sim.step, steps)
    block = min(1000, steps)
    calls = max(1, -(-steps // block))
    start = time.perf_counter_ns()
    for _ in range(calls):
        sim.step(block)
    return np.array([(time.perf_counter_ns() - start) / 1e3 / (calls * block)])


def overhead_table(base, extra, runs, steps, labels, target, prepare=None):
    """
    Compare the step time of two simulators in alternating runs, per call and amortised.

    Args:
        base, extra: Simulators; both are stepped once first (compilation untimed).
        runs, steps: repeated runs and steps per run.
        labels: (name of base, name of extra) for the table columns.
        target: largest acceptable relative overhead of extra over base.
        prepare: optional callable(sim) run before each of extra's runs (commands).

    Returns:
        Table rows (dicts): medians, min/max of the run figures, overhead and verdict.
    """
    for sim in (base, extra):
        sim.step(1)
    rows = []
    for per_call in (True, False):
        figures = ([], [])
        for _ in range(runs):
            figures[0].append(np.median(time_steps(base, _bent(base), steps, per_call)))
            if prepare is not None:
                prepare(extra)
            figures[1].append(np.median(time_steps(extra, _bent(extra), steps, per_call)))
        first, second = spread(figures[0]), spread(figures[1])
        ratio = second[0] / first[0] - 1.0
        rows.append({'mode': 'step(1) per call' if per_call else 'step(1000) amortised',
                     'runs x steps': f'{runs} x {steps}', f'{labels[0]} us': round(first[0], 2),
                     f'{labels[0]} min/max': f'{first[1]:.2f}/{first[2]:.2f}',
                     f'{labels[1]} us': round(second[0], 2),
                     f'{labels[1]} min/max': f'{second[1]:.2f}/{second[2]:.2f}',
                     'overhead %': round(100 * ratio, 1), 'target %': 100 * target,
                     'verdict': verdict(ratio, target)})
    return rows


def _bent(sim):
    """Return the benchmarks' bent start pose of a simulator's joints."""
    from robots_for_bench import bent_pose  # noqa: I100 (bench/ sibling, imports xacro)
    return bent_pose(sim.joint_names)
