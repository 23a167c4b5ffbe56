"""
Measure the step time of the bundled 7-DOF arm (issue 2, targets 1 and 6).

Robot: urdf/jointsim_arm.urdf.xacro, fixed base, no contacts, dt = 1 ms, 20 velocity iterations
(tolerance at its default 1e-9 N s, so all 20 run), defaults otherwise.  Every run starts from the
bent pose (+0.5, -0.5, ... rad on joints a1..a7, at rest) and lets the arm swing under gravity.

Two ways of stepping, in alternating runs (default 7 runs of 2000 steps each):
- per call: ``sim.step(1)`` timed alone with time.perf_counter_ns, as a 1 kHz node calls it; the
  run's figure is the median of its 2000 step times (its 99th percentile is shown too);
- amortised: ``sim.step(1000)`` twice; the run's figure is the total time / 2000.
The table gives the median of the run figures and the smallest and largest run figure.  One
untimed step (numba compilation or cache load) comes first.

Memory (target 6, for the record): the resident set size after importing jointsim_ros, and after
loading the arm and running every timed step (current VmRSS and the peak of getrusage).  It is
larger when numba compiles the engine than when it loads its cache; the time of the first step
(in the memory table, in s) tells which happened.

Run: .venv/bin/python bench/bench_step_time.py [--runs 7] [--steps 2000] [--quick]
"""
import time

from benchlib import (JOINTSIM_CONFIG, markdown_table, parse_args, pin_to_one_core, rss_mib,
                      save_markdown, spread, verdict, write_csv)
import numpy as np
from robots_for_bench import ARM_XACRO, bent_pose

TARGET_STEP_US = 100.0  # issue 2: <= 100 us per step, real-time factor >= 10 at dt = 1 ms


def per_call_run(sim, pose, steps):
    """
    Time ``sim.step(1)`` call by call from the bent pose.

    Args:
        sim: Simulator.
        pose: dict joint -> rad, the start pose (at rest).
        steps: number of timed calls.

    Returns:
        (step times (steps,) us, mean velocity iterations per step).
    """
    sim.set_joint_state(pose)
    times = np.empty(steps)
    iterations = 0
    clock = time.perf_counter_ns
    for k in range(steps):
        start = clock()
        report = sim.step(1)
        times[k] = clock() - start
        iterations += report.iterations
    return times / 1e3, iterations / steps


def amortised_run(sim, pose, steps, block=1000):
    """
    Time ``sim.step(block)`` calls from the bent pose.

    Args:
        sim: Simulator.
        pose: dict joint -> rad, the start pose (at rest).
        steps: steps in all (a multiple of block; rounded up).
        block: steps per call.

    Returns:
        Mean time per step, us.
    """
    sim.set_joint_state(pose)
    calls = max(1, -(-steps // block))
    start = time.perf_counter_ns()
    for _ in range(calls):
        sim.step(block)
    return (time.perf_counter_ns() - start) / 1e3 / (calls * block)


def measure(runs, steps):
    """
    Run the step-time benchmark of the arm.

    Args:
        runs: repeated runs of each stepping mode.
        steps: steps per run.

    Returns:
        (timing rows, memory rows), lists of dicts.
    """
    rss_before_import = rss_mib()[0]
    from jointsim_ros import Simulator
    rss_after_import = rss_mib()[0]
    sim = Simulator.from_urdf(str(ARM_XACRO), JOINTSIM_CONFIG)
    pose = bent_pose(sim.joint_names)
    start = time.perf_counter()
    sim.step(1)  # numba compilation or cache load: never timed
    first_step = time.perf_counter() - start
    block = min(1000, steps)
    per_call, per_call_p99, amortised, iterations = [], [], [], []
    for _ in range(runs):
        times, mean_iterations = per_call_run(sim, pose, steps)
        per_call.append(np.median(times))
        per_call_p99.append(np.percentile(times, 99))
        iterations.append(mean_iterations)
        amortised.append(amortised_run(sim, pose, steps, block))
    rss_now, rss_peak = rss_mib()
    rows = []
    for mode, values, extra in (('per call: step(1)', per_call, per_call_p99),
                                (f'amortised: step({block})', amortised, None)):
        median, low, high = spread(values)
        rows.append({
            'robot': '7-DOF arm', 'mode': mode, 'runs x steps': f'{runs} x {steps}',
            'median_us': median, 'min_run_us': low, 'max_run_us': high,
            'p99_us': float(np.median(extra)) if extra is not None else float('nan'),
            'real_time_factor': sim.dt * 1e6 / median,
            'iterations_per_step': float(np.mean(iterations)),
            'target_us': TARGET_STEP_US, 'verdict': verdict(median, TARGET_STEP_US)})
    memory = [
        {'what': 'first step (numba compiles: tens of s; loads its cache: about 1 s)',
         'value': first_step, 'unit': 's'},
        {'what': 'RSS before `import jointsim_ros` (Python, numpy)',
         'value': rss_before_import, 'unit': 'MiB'},
        {'what': 'RSS after `import jointsim_ros` (numba, llvmlite; rclpy is not loaded)',
         'value': rss_after_import, 'unit': 'MiB'},
        {'what': 'RSS after loading the arm and all timed steps', 'value': rss_now, 'unit': 'MiB'},
        {'what': 'peak RSS (getrusage ru_maxrss)', 'value': rss_peak, 'unit': 'MiB'}]
    return rows, memory


def main(argv=None):
    """Run the benchmark, write bench/results/step_time.csv and memory.csv, print tables."""
    args = parse_args(__doc__, runs=7, steps=2000, argv=argv)
    cpu = pin_to_one_core(args.cpu)
    rows, memory = measure(args.runs, args.steps)
    write_csv(args.out, 'step_time', rows)
    write_csv(args.out, 'memory', memory)
    columns = ['robot', 'mode', 'runs x steps', 'median_us', 'min_run_us', 'max_run_us',
               'p99_us', 'real_time_factor', 'iterations_per_step', 'target_us', 'verdict']
    save_markdown(args.out, 'step_time',
                  f'### Step time, 7-DOF arm, dt = 1 ms, 20 iterations (core {cpu})\n\n'
                  + markdown_table(rows, columns) + '\n\n### Memory\n\n'
                  + markdown_table(memory))


if __name__ == '__main__':
    main()
