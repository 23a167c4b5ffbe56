"""
Measure how the step time grows with the number of links of a chain (issue 2, target 2).

Robot: test/robots.py's chain(N) (N uniform 0.1 m, 0.1 kg rods hanging from a fixed base, joined
by hinges about y), N = 2, 4, 8, 16, 32, 64, 128; dt = 1 ms, 20 velocity iterations, defaults
otherwise.  Each run starts from a zig-zag (+0.3, -0.3, ... rad on every joint, at rest) and
times ``sim.step(100)`` calls; the run's figure is the median over its calls, per step.  The
table gives the median over runs (default 7 runs of 1000 steps), the smallest and largest run,
the time per link, and the largest joint anchor error at the end of the last run.

Growth is judged by a least-squares fit t = a + b N over all N (a: fixed cost per step, b: cost
per link) and by the local exponent log(t(2N) / t(N)) / log 2 (1 = linear).  The results go to
bench/results/chain_scaling.csv and chain_fit.csv with an ASCII chart (matplotlib is not a
dependency of the project).

Run: .venv/bin/python bench/bench_chain_scaling.py [--runs 7] [--steps 1000] [--quick]
"""
import math
import time

from benchlib import (JOINTSIM_CONFIG, markdown_table, parse_args, pin_to_one_core,
                      save_markdown, spread, write_csv)
from jointsim_ros import Simulator
import numpy as np
from robots_for_bench import chain

SIZES = (2, 4, 8, 16, 32, 64, 128)
BLOCK = 100  # steps per timed call


def chain_run(sim, pose, steps):
    """
    Time one run of ``sim.step(BLOCK)`` calls from the zig-zag pose.

    Returns:
        Median time per step over the calls, us.
    """
    sim.set_joint_state(pose)
    calls = max(1, steps // BLOCK)
    times = np.empty(calls)
    for k in range(calls):
        start = time.perf_counter_ns()
        sim.step(BLOCK)
        times[k] = time.perf_counter_ns() - start
    return float(np.median(times)) / 1e3 / BLOCK


def measure(runs, steps, sizes=SIZES):
    """
    Time every chain length.

    Args:
        runs: runs per chain length.
        steps: steps per run.
        sizes: chain lengths.

    Returns:
        (rows, fit) with rows a list of dicts per N and fit a list of dicts.
    """
    sims = {}
    for n in sizes:
        sims[n] = Simulator.from_urdf(chain(n), JOINTSIM_CONFIG)
        sims[n].step(1)  # compilation or cache load, and first-call effects: never timed
    poses = {n: {name: 0.3 * (-1) ** k for k, name in enumerate(sims[n].joint_names)}
             for n in sizes}
    per_run = {n: [] for n in sizes}
    for _ in range(runs):  # interleave the sizes so that noise spreads over all of them
        for n in sizes:
            per_run[n].append(chain_run(sims[n], poses[n], steps))
    rows = []
    for n in sizes:
        median, low, high = spread(per_run[n])
        rows.append({'links': n, 'median_us': median, 'min_run_us': low, 'max_run_us': high,
                     'us_per_link': median / n,
                     'anchor_error_end_mm': 1e3 * max(sims[n].joint_anchor_errors().values())})
    n = np.array([r['links'] for r in rows], dtype=float)
    t = np.array([r['median_us'] for r in rows])
    per_link, fixed = np.polyfit(n, t, 1)
    predicted = fixed + per_link * n
    r_squared = 1 - np.sum((t - predicted) ** 2) / np.sum((t - t.mean()) ** 2)
    for k, row in enumerate(rows):
        row['fit_us'] = predicted[k]
        row['exponent_from_previous'] = (
            math.log(t[k] / t[k - 1]) / math.log(n[k] / n[k - 1]) if k else float('nan'))
    big = n >= 16
    exponent = np.polyfit(np.log(n[big]), np.log(t[big]), 1)[0] if big.sum() >= 2 else math.nan
    fit = [{'fit': 't = a + b N (least squares, all N)', 'a_us': fixed, 'b_us_per_link': per_link,
            'r_squared': r_squared},
           {'fit': 'log t = c + k log N (N >= 16)', 'a_us': float('nan'),
            'b_us_per_link': float('nan'), 'r_squared': float('nan'), 'exponent_k': exponent}]
    fit[0]['exponent_k'] = float('nan')
    return rows, fit


def ascii_chart(rows, width=50):
    """Return a bar chart of the time per step against N as text (log2 N rows, linear bars)."""
    top = max(r['median_us'] for r in rows)
    lines = ['time per step (us), one row per N; # = measured, | = linear fit']
    for r in rows:
        bar = int(round(width * r['median_us'] / top))
        fit = min(width, max(0, int(round(width * r['fit_us'] / top))))
        cells = ['#' if k < bar else ' ' for k in range(width + 1)]
        cells[fit] = '|'
        lines.append(f'N={r["links"]:>4} {"".join(cells)} {r["median_us"]:8.1f}')
    return '\n'.join(lines)


def main(argv=None):
    """Run the benchmark, write bench/results/chain_scaling.csv and chain_fit.csv."""
    args = parse_args(__doc__, runs=7, steps=1000, argv=argv)
    cpu = pin_to_one_core(args.cpu)
    rows, fit = measure(args.runs, max(args.steps, BLOCK))
    write_csv(args.out, 'chain_scaling', rows)
    write_csv(args.out, 'chain_fit', fit)
    runs_steps = f'{args.runs} runs x {max(args.steps, BLOCK)} steps'
    save_markdown(args.out, 'chain_scaling',
                  f'### Chain of N links, dt = 1 ms, 20 iterations, amortised over '
                  f'step({BLOCK}) ({runs_steps}, core {cpu})\n\n'
                  + markdown_table(rows) + '\n\n' + markdown_table(fit)
                  + '\n\n```\n' + ascii_chart(rows) + '\n```')


if __name__ == '__main__':
    main()
