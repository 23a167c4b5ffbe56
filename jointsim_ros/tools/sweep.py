r"""
Run a scenario over many parameter values at once, on Ray (docs/sweep.md).

    jointsim_sweep SCENARIO --trials N --workers W --seed S --out DIR
        [--param NAME=LO:HI | --param NAME=V1,V2,...]... [--address ADDR]
    python -m jointsim_ros.tools.sweep humanoid-push --trials 40 --param force=50:400 \\
        --param direction=0,90,180,270

SCENARIO is a built-in name (``humanoid-push``, ``arm-payload``: jointsim_ros.control.scenarios)
or ``module:function``.  ``--param NAME=LO:HI`` draws NAME uniformly in [LO, HI] for each
trial; ``--param NAME=V1,V2,...`` is a grid: the trials are the grid's points, each run
``--trials`` times (with new draws of the sampled parameters).  Parameters not given take the
scenario's defaults.  Trial ``i``'s draws and seed come from ``--seed`` and ``i`` only, so the
same command gives the same rows.  The trials run on Ray: ``--workers`` actors (default: the
machine's cores) on the local machine, or on a running cluster with ``--address`` (``auto`` or
``HOST:PORT``); each actor keeps what its scenario loaded (a Simulator) between its trials.

Writes ``DIR/results.csv`` (one row per trial: ``trial``, ``seed``, the parameters, the
outcomes, ``wall_s``, ``error``; a row is written as its trial ends, so Ctrl-C keeps the
finished ones) and, for ``humanoid-push``, ``DIR/summary.png`` (fell or stood over the push's
force and direction).  A trial that raises is a row with its error; the sweep goes on.  The
last line is ``N trials in T s on W workers (R trials/s)`` and, for ``humanoid-push``,
``: K fell``.  Bad input (an unknown scenario or parameter, a range with no values, a value
that is not a number) is one error line and exit status 2, before anything starts.
"""
import argparse
import csv
import importlib
import inspect
import math
import os
from pathlib import Path
import socket
import sys
import time
import traceback

import numpy as np


class SweepError(Exception):
    """Bad input: the message names it; nothing was started."""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (``jointsim_sweep: ...``), exit status 2."""

    def error(self, message):
        self.exit(2, f'jointsim_sweep: {message} (jointsim_sweep --help lists the options)\n')


def parse_args(argv):
    """Command-line arguments."""
    parser = _Parser(description=__doc__.split('\n')[1])
    parser.add_argument('scenario', help='humanoid-push, arm-payload or module:function')
    parser.add_argument('--trials', type=int, default=1,
                        help='trials (per grid point when a grid is given); default 1')
    parser.add_argument('--workers', type=int, default=None,
                        help='Ray actors running trials (default: the cores of this machine)')
    parser.add_argument('--seed', type=int, default=0, help='seed of the draws (default 0)')
    parser.add_argument('--out', default='sweep', help='output folder (default ./sweep)')
    parser.add_argument('--param', action='append', default=[], metavar='NAME=LO:HI|V1,V2',
                        help='a sampled range or a grid of values (repeatable)')
    parser.add_argument('--address', default=None,
                        help="a running Ray cluster ('auto' or HOST:PORT); default: local")
    return parser.parse_args(argv)


def load_scenario(name):
    """Return the scenario function of a built-in name or ``module:function``."""
    from ..control.scenarios import SCENARIOS
    if name in SCENARIOS:
        return SCENARIOS[name]
    if ':' not in name:
        raise SweepError(f'unknown scenario {name!r}: give one of {", ".join(SCENARIOS)} or '
                         'module:function')
    module, _, attribute = name.partition(':')
    try:
        function = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise SweepError(f'scenario {name!r} cannot be loaded: {error}') from None
    if not callable(function):
        raise SweepError(f'scenario {name!r} is not a function')
    return function


def parse_params(items, scenario):
    """
    Return ({name: (lo, hi)} sampled, {name: [values]} grid) from ``--param`` items.

    Raises:
        SweepError: a malformed item, an unknown name (when the scenario lists its
            PARAMETERS), a range with no values, a value that is not a number.
    """
    known = getattr(scenario, 'PARAMETERS', None)
    sampled, grid = {}, {}
    for item in items:
        name, sep, text = item.partition('=')
        name = name.strip()
        if not sep or not name:
            raise SweepError(f'--param {item!r}: give NAME=LO:HI or NAME=V1,V2,...')
        if known is not None and name not in known:
            raise SweepError(f'--param {item!r}: unknown parameter {name!r}; the scenario has '
                             + ', '.join(known))
        if name in sampled or name in grid:
            raise SweepError(f'--param {item!r}: {name} is given twice')
        try:
            if ':' in text:
                lo, hi = (float(v) for v in text.split(':'))
                if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
                    raise SweepError(f'--param {item!r}: the range {text} has no values '
                                     '(give LO <= HI)')
                sampled[name] = (lo, hi)
            else:
                values = [float(v) for v in text.split(',') if v.strip()]
                if not values or not all(math.isfinite(v) for v in values):
                    raise SweepError(f'--param {item!r}: no values in {text!r}')
                grid[name] = values
        except ValueError:
            raise SweepError(f'--param {item!r}: {text!r} is not a number, LO:HI or a '
                             'list V1,V2,...') from None
    return sampled, grid


def make_trials(sampled, grid, trials, seed):
    """Return the trials: [(index, seed, {name: value})], the same for the same input."""
    points = [{}]
    for name, values in grid.items():
        points = [dict(point, **{name: v}) for point in points for v in values]
    out = []
    for point in points:
        for _ in range(trials):
            i = len(out)
            rng = np.random.default_rng([seed, i])
            params = dict(point)
            for name, (lo, hi) in sampled.items():
                params[name] = float(rng.uniform(lo, hi))
            out.append((i, int(rng.integers(2 ** 31)), params))
    return out


def run_trial(scenario, params, seed, cache):
    """Run one trial; return (outcomes dict, wall s, error text or '')."""
    start = time.perf_counter()
    try:
        if len(inspect.signature(scenario).parameters) >= 3:
            outcomes = scenario(params, seed, cache)
        else:
            outcomes = scenario(params, seed)
        error = ''
    except Exception as exc:            # a failing trial is a row, not the end of the sweep
        outcomes = {}
        error = f'{type(exc).__name__}: {exc}'.replace('\n', ' ')
        if os.environ.get('JOINTSIM_SWEEP_TRACEBACK'):
            traceback.print_exc()
    return dict(outcomes), time.perf_counter() - start, error


def _worker_class(ray):
    @ray.remote(num_cpus=1)
    class Worker:
        """A Ray actor: runs trials of one scenario, keeping its cache between them."""

        def __init__(self, name):
            self.scenario = load_scenario(name)
            self.cache = {}

        def run(self, seed, params):
            return run_trial(self.scenario, params, seed, self.cache)
    return Worker


class Progress:
    """A one-line progress bar with the time left, on stderr."""

    def __init__(self, total, out=sys.stderr):
        self.total, self.out = total, out
        self.start = time.monotonic()
        self.done = 0

    def tick(self):
        self.done += 1
        elapsed = time.monotonic() - self.start
        left = elapsed / self.done * (self.total - self.done)
        width = 30
        filled = int(width * self.done / self.total)
        self.out.write(f'\r[{"#" * filled}{"." * (width - filled)}] {self.done}/{self.total} '
                       f'trials, {elapsed:.0f} s, about {left:.0f} s left ')
        if self.done == self.total:
            self.out.write('\n')
        self.out.flush()


def sweep(scenario_name, trials, workers, seed, out, params=(), address=None,
          stream=sys.stdout, on_row=None):
    """
    Run a sweep; return its rows (list of dicts, trial order) and the summary line.

    ``on_row(row)`` (optional) is called with each row as its trial ends.

    Raises:
        SweepError: bad input (nothing started).
    """
    scenario = load_scenario(scenario_name)
    sampled, grid = parse_params(params, scenario)
    if trials < 1:
        raise SweepError(f'--trials {trials}: give at least 1')
    if workers is not None and workers < 1:
        raise SweepError(f'--workers {workers}: give at least 1')
    plan = make_trials(sampled, grid, trials, seed)
    import ray
    workers = workers or os.cpu_count() or 1
    workers = min(workers, len(plan))
    out = Path(out)
    if address:
        hint = (f'--address {address}: no Ray cluster answered (%s); start one with `ray start '
                '--head --port=6379` and give HEAD:6379 (auto on one of its machines); '
                'RAY_AUTH_MODE must be here what it is on the head (token where the head has '
                '~/.ray/auth_token)')
        host, _, port = address.rpartition(':')
        if host and port.isdigit():
            # Ray retries a silent address for minutes: a closed port is known at once
            try:
                socket.create_connection((host, int(port)), timeout=5.0).close()
            except OSError as error:
                raise SweepError(hint % error) from None
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError) as error:
            raise SweepError(hint % type(error).__name__) from None
    else:
        # 'local': a new Ray on this machine's cores, never a cluster someone left running
        ray.init(address='local', num_cpus=workers, include_dashboard=False,
                 log_to_driver=False)
    out.mkdir(parents=True, exist_ok=True)
    names = sorted(set(sampled) | set(grid))
    rows = {}
    started = time.monotonic()
    progress = Progress(len(plan))
    writer = None
    waiting = []
    try:
        worker_class = _worker_class(ray)
        actors = [worker_class.remote(scenario_name) for _ in range(workers)]
        queue = list(plan)
        pending = {}
        for actor in actors:
            if queue:
                i, s, p = queue.pop(0)
                pending[actor.run.remote(s, p)] = actor, i
        with open(out / 'results.csv', 'w', newline='') as stream_csv:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1)
                actor, index = pending.pop(ready[0])
                try:
                    outcomes, wall, error = ray.get(ready[0])
                except ray.exceptions.RayActorError as died:
                    # the trial took its worker down (a crash, os._exit, out of memory): it is
                    # a row with the error, and a new worker takes the dead one's place
                    outcomes, wall = {}, 0.0
                    error = ('worker died: ' + str(died).strip().splitlines()[0])[:300]
                    actor = worker_class.remote(scenario_name)
                if queue:
                    i, s, p = queue.pop(0)
                    pending[actor.run.remote(s, p)] = actor, i
                _, trial_seed, p = plan[index]
                row = {'trial': index, 'seed': trial_seed, **{n: p.get(n) for n in names},
                       **outcomes, 'wall_s': round(wall, 4), 'error': error}
                rows[index] = row
                if on_row is not None:
                    on_row(row)
                waiting.append(row)
                if writer is None and (not error or not pending):
                    # the header waits for a trial with outcomes (a raising one has none)
                    fields = list(row) if not error else list(dict.fromkeys(
                        k for r in waiting for k in r))
                    writer = csv.DictWriter(stream_csv, fields, extrasaction='ignore',
                                            restval='')
                    writer.writeheader()
                if writer is not None:
                    writer.writerows(waiting)
                    waiting.clear()
                    stream_csv.flush()
                progress.tick()
    except KeyboardInterrupt:
        print(f'\nstopped: {len(rows)} of {len(plan)} trials finished, kept in '
              f'{out / "results.csv"}', file=stream)
    finally:
        ray.shutdown()
    wall = time.monotonic() - started
    ordered = [rows[i] for i in sorted(rows)]
    line = (f'{len(ordered)} trials in {wall:.1f} s on {workers} workers '
            f'({len(ordered) / wall if wall > 0 else 0.0:.2f} trials/s)')
    if scenario_name == 'humanoid-push':
        line += f': {sum(1 for r in ordered if r.get("fell") is True)} fell'
        plot_pushes(ordered, out / 'summary.png')
    else:
        plot_outcomes(ordered, names, out / 'summary.png')
    failed = sum(1 for r in ordered if r['error'])
    if failed:
        print(f'{failed} trials raised (their errors are in the error column)', file=stream)
    print(line, file=stream)
    return ordered, line


def plot_pushes(rows, path):
    """Write the humanoid-push map: fell or stood over force and direction (PNG)."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from ..control.scenarios import humanoid_push
    defaults = humanoid_push.PARAMETERS
    done = [r for r in rows if not r['error']]
    if not done:
        return
    force = np.array([r.get('force') if r.get('force') is not None else defaults['force'][0]
                      for r in done], dtype=float)
    direction = np.array([r.get('direction') if r.get('direction') is not None
                          else defaults['direction'][0] for r in done], dtype=float)
    fell = np.array([bool(r['fell']) for r in done])
    fig = plt.figure(figsize=(6, 6))
    ax = fig.add_subplot(projection='polar')
    theta = np.radians(direction)
    ax.scatter(theta[~fell], force[~fell], c='tab:green', s=18, label='stood')
    ax.scatter(theta[fell], force[fell], c='tab:red', marker='x', s=24, label='fell')
    ax.set_title('humanoid-push: push direction (0 = forward, 90 = left) and force (N)',
                 fontsize=9)
    ax.legend(loc='lower left', fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


#: The most outcomes plot_outcomes draws (one panel each).
PLOTTED_OUTCOMES = 4


def plot_outcomes(rows, names, path):
    """
    Write a sweep's summary (PNG): each numeric outcome against the first swept parameter.

    One panel per outcome (at most PLOTTED_OUTCOMES, in the scenario's order); against the
    trial number when no parameter was swept.  Trials that raised are left out.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    done = [r for r in rows if not r['error']]
    skip = {'trial', 'seed', 'wall_s', 'error', *names}
    outcomes = [k for k in (done[0] if done else {}) if k not in skip
                and all(isinstance(r.get(k), (int, float)) for r in done)][:PLOTTED_OUTCOMES]
    if not outcomes:
        return
    x_name = names[0] if names else 'trial'
    x = np.array([r[x_name] for r in done], dtype=float)
    fig, axes = plt.subplots(len(outcomes), 1, figsize=(6, 2.2 * len(outcomes)), sharex=True,
                             squeeze=False)
    for ax, key in zip(axes[:, 0], outcomes):
        ax.plot(x, [float(r[key]) for r in done], 'o', ms=4)
        ax.set_ylabel(key, fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel(x_name, fontsize=8)
    fig.suptitle(f'{len(done)} trials', fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    """Entry point of ``jointsim_sweep``."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        sweep(args.scenario, args.trials, args.workers, args.seed, args.out, args.param,
              args.address)
    except SweepError as error:
        print(f'jointsim_sweep: {error}', file=sys.stderr)
        return 2
    except ImportError as error:
        print(f'jointsim_sweep: {error}; install the sweep extra: pip install .[sweep] '
              '(make test installs it)', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
