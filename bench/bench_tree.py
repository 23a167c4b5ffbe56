"""
Tree formulation (issue 9): step time against chain length, and the 7-DOF arm beside maximal.

1. Chain scaling: test/robots.py's chain(N), N = 2 ... 256, dt = 1 ms, from the zig-zag pose
   of bench_chain_scaling.py, timed the same way (median of ``step(100)`` calls per run, median
   over runs), in the tree formulation (semi-implicit Euler, the default: one recursion per
   step; symplectic Euler: its fixed-point iteration count varies with the motion, and long
   chains fall back to the velocity form, see fallback_fraction; RK4: four recursions per step)
   and, for comparison, in the maximal one (20 iterations).  Fit t = a + b N and the local
   exponent log(t(2N)/t(N))/log 2.
2. 7-DOF arm (urdf/jointsim_arm.urdf.xacro, every joint continuous as in bench_accuracy.py,
   bent pose, passive swing, dt = 1 ms): step time of both formulations (amortised over
   step(100)), and their joint error over 0.5 s and 2 s against a tree RK4 run at
   dt = 0.05 ms (its own distance from dt = 0.1 ms in the last row: the swing is chaotic, so
   after about a second every error is amplified), energy error and anchor drift.
3. The core's exact reference (bench_accuracy.py): the double pendulum's absolute angles over
   2 s against RK4 on Lagrange's equations (h = 1e-5 s), at dt = 0.5, 1, 2 ms: maximal, tree
   semi-implicit Euler, tree symplectic Euler and tree RK4 side by side (the RK4 column's
   floor, 5e-5 rad, is the bobs' own inertia, which the point-mass reference leaves out).

Results: bench/results/tree.md, tree_*.csv and tree_chain_scaling.png (the curve).

Run: .venv/bin/python bench/bench_tree.py [--runs 7] [--steps 1000] [--quick]
"""
import math
import time

from bench_accuracy import double_pendulum_reference, SAMPLE
from bench_chain_scaling import chain_run
from benchlib import (JOINTSIM_CONFIG, markdown_table, parse_args, pin_to_one_core,
                      save_markdown, spread, write_csv)
from jointsim_ros import Simulator
import numpy as np
from robots_for_bench import arm_urdf_text, bent_pose, chain, double_pendulum

SIZES = (2, 4, 8, 16, 32, 64, 128, 256)
BLOCK = 100
DURATION = 2.0
TREE = {'dt': 0.001, 'solver': {'formulation': 'tree'}}
TREE_SYMPLECTIC = {'dt': 0.001, 'solver': {'formulation': 'tree',
                                           'integrator': 'symplectic_euler'}}
TREE_RK4 = {'dt': 0.001, 'solver': {'formulation': 'tree', 'integrator': 'rk4'}}


def scaling(runs, steps, sizes=SIZES):
    """Return chain-scaling rows (per formulation and N) and the linear fits."""
    rows, fits = [], []
    for name, config in (('tree', TREE), ('tree_symplectic', TREE_SYMPLECTIC),
                         ('tree_rk4', TREE_RK4), ('maximal', JOINTSIM_CONFIG)):
        sims = {n: Simulator.from_urdf(chain(n), config) for n in sizes}
        for sim in sims.values():
            sim.step(1)
        poses = {n: {j: 0.3 * (-1) ** k for k, j in enumerate(sims[n].joint_names)}
                 for n in sizes}
        per_run = {n: [] for n in sizes}
        iterations = {n: [] for n in sizes}
        for _ in range(runs):
            for n in sizes:
                per_run[n].append(chain_run(sims[n], poses[n], steps))
                iterations[n].append(sims[n].last_step.iterations)
        fallbacks = {n: (sims[n]._engine.tree_work.fallbacks[0] / (runs * steps + 1)
                         if name == 'tree_symplectic' else float('nan')) for n in sizes}
        t = np.array([spread(per_run[n])[0] for n in sizes])
        n_arr = np.array(sizes, dtype=float)
        b, a = np.polyfit(n_arr, t, 1)
        pred = a + b * n_arr
        r2 = 1 - np.sum((t - pred) ** 2) / np.sum((t - t.mean()) ** 2)
        for k, n in enumerate(sizes):
            median, low, high = spread(per_run[n])
            rows.append({'formulation': name, 'links': n, 'median_us': median,
                         'min_run_us': low, 'max_run_us': high, 'us_per_link': median / n,
                         'exponent_from_previous': (math.log(t[k] / t[k - 1]) / math.log(2)
                                                    if k else float('nan')),
                         'iterations_last_step': float(np.median(iterations[n])),
                         'fallback_fraction': fallbacks[n],
                         'anchor_error_end_m': max(sims[n].joint_anchor_errors().values())})
        fits.append({'formulation': name, 'fit': 't = a + b N', 'a_us': a,
                     'b_us_per_link': b, 'r_squared': r2})
    return rows, fits


def _arm(config):
    urdf = arm_urdf_text().replace('type="revolute"', 'type="continuous"')
    sim = Simulator.from_urdf(urdf, config)
    sim.set_joint_state(bent_pose(sim.joint_names))
    return sim


def arm_trajectory(config, duration=DURATION, sample=0.01):
    """Return arm joint positions every sample s, the energy error (J) and anchor drift (m)."""
    sim = _arm(config)
    e0 = sum(sim.mechanical_energy())
    stride = int(round(sample / sim.dt))
    out = [sim.joint_positions()]
    energy = anchor = 0.0
    for _ in range(int(round(duration / sample))):
        sim.step(stride)
        out.append(sim.joint_positions())
        energy = max(energy, abs(sum(sim.mechanical_energy()) - e0))
        anchor = max(anchor, max(sim.joint_anchor_errors().values()))
    return np.array(out), energy, anchor


def arm_rows(runs, steps, duration=DURATION):
    """Step time and accuracy of the arm in both formulations."""
    reference, _, _ = arm_trajectory({'dt': 5e-5, 'solver': {'formulation': 'tree',
                                                             'integrator': 'rk4'}}, duration)
    check, _, _ = arm_trajectory({'dt': 1e-4, 'solver': {'formulation': 'tree',
                                                         'integrator': 'rk4'}}, duration)
    rows = []
    for name, config in (('maximal (20 iterations)', JOINTSIM_CONFIG),
                         ('tree, semi-implicit Euler', TREE),
                         ('tree, symplectic Euler', TREE_SYMPLECTIC), ('tree, RK4', TREE_RK4)):
        sim = _arm(config)
        sim.step(1)
        times = []
        for _ in range(runs):
            times.append(chain_run(sim, bent_pose(sim.joint_names), steps))
        median, low, high = spread(times)
        traj, energy, anchor = arm_trajectory(config, duration)
        rows.append({'arm, dt = 1 ms': name, 'step_us': median, 'min_run_us': low,
                     'max_run_us': high,
                     'joint_error_0.5s_rad': float(np.max(np.abs(traj - reference)[:51])),
                     'joint_error_2s_rad': float(np.max(np.abs(traj - reference))),
                     'energy_error_J': energy, 'anchor_drift_m': anchor})
    rows.append({'arm, dt = 1 ms': 'reference: tree RK4 0.05 ms vs 0.1 ms',
                 'step_us': float('nan'), 'min_run_us': float('nan'),
                 'max_run_us': float('nan'),
                 'joint_error_0.5s_rad': float(np.max(np.abs(check - reference)[:51])),
                 'joint_error_2s_rad': float(np.max(np.abs(check - reference))),
                 'energy_error_J': float('nan'), 'anchor_drift_m': float('nan')})
    return rows


def pendulum_rows(duration=DURATION):
    """Double pendulum angle error against the core's exact reference, three integrators."""
    reference = double_pendulum_reference((0.5, 0.5), duration)
    rows = []
    for dt in (0.0005, 0.001, 0.002):
        row = {'dt_ms': 1e3 * dt}
        for name, solver in (('maximal', {'iterations': 20}),
                             ('tree_euler', {'formulation': 'tree'}),
                             ('tree_symplectic', {'formulation': 'tree',
                                                  'integrator': 'symplectic_euler'}),
                             ('tree_rk4', {'formulation': 'tree', 'integrator': 'rk4'})):
            sim = Simulator.from_urdf(double_pendulum(), {'dt': dt, 'solver': solver})
            sim.set_joint_state({'shoulder': 0.5, 'elbow': 0.0})
            stride = int(round(dt / SAMPLE))
            angle = 0.0
            for k in range(1, int(round(duration / dt)) + 1):
                sim.step(1)
                q = sim.joint_positions()
                angle = max(angle, np.max(np.abs([q[0], q[0] + q[1]] - reference[k * stride])))
            row[f'{name}_angle_error_rad'] = angle
        rows.append(row)
    return rows


def plot_scaling(rows, out_dir):
    """Write tree_chain_scaling.png: time per step against N for every formulation."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot
    figure, axes = pyplot.subplots(figsize=(7, 4.5))
    for name in dict.fromkeys(r['formulation'] for r in rows):
        mine = [r for r in rows if r['formulation'] == name]
        axes.plot([r['links'] for r in mine], [r['median_us'] for r in mine], 'o-', label=name)
    axes.set_xlabel('links N')
    axes.set_ylabel('time per step (us), median of runs')
    axes.set_title('chain of N links, dt = 1 ms: cost per step against N')
    axes.legend()
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(out_dir / 'tree_chain_scaling.png', dpi=100)
    pyplot.close(figure)


def main(argv=None):
    """Run the benchmark; write bench/results/tree_*.csv and tree.md."""
    args = parse_args(__doc__, runs=7, steps=1000, argv=argv)
    cpu = pin_to_one_core(args.cpu)
    duration = 0.2 if args.quick else DURATION
    steps = max(args.steps, BLOCK)
    started = time.monotonic()
    scale, fits = scaling(args.runs, steps)
    arm = arm_rows(args.runs, steps, duration)
    pendulum = pendulum_rows(duration)
    write_csv(args.out, 'tree_chain_scaling', scale)
    plot_scaling(scale, args.out)
    write_csv(args.out, 'tree_chain_fit', fits)
    write_csv(args.out, 'tree_arm', arm)
    write_csv(args.out, 'tree_double_pendulum', pendulum)
    save_markdown(args.out, 'tree',
                  f'### Tree vs maximal: chain of N links, dt = 1 ms, amortised over '
                  f'step({BLOCK}) ({args.runs} runs x {steps} steps, core {cpu})\n\n'
                  + markdown_table(scale) + '\n\n' + markdown_table(fits)
                  + f'\n\n### 7-DOF arm (continuous joints), passive swing {duration} s from '
                  'the bent pose\n\n' + markdown_table(arm)
                  + f'\n\n### Double pendulum, {duration} s, absolute-angle error against '
                  'RK4 on Lagrange (h = 1e-5 s)\n\n' + markdown_table(pendulum)
                  + f'\n\n(wall time {time.monotonic() - started:.0f} s)')


if __name__ == '__main__':
    main()
