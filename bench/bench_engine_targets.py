"""
The engine's speed targets (issue 17), each against its peer measured in the same run.

1. The 7-DOF arm without contacts (robots_for_bench.peer_arm_urdf(), dt = 1 ms, 20 iterations),
   per ``step(1)`` call and amortised over ``step(1000)``, against PyBullet's maximal mode
   (``stepSimulation()`` per call; bench_pybullet.py's set-up).  Target: at most 1.5x, both.
2. The same arm in ``solver.formulation: tree`` (semi-implicit Euler, the default), per
   ``step(1)`` call, against MuJoCo's ``mj_step`` on the same URDF (no geometry, so no
   collisions; timestep 1 ms; its default Euler integrator), each run from the start pose.
   Target: at most 2x.
3. ANYmal C standing on four feet under a joint PD (bench_contacts.py's set-up), per
   ``step(1)`` call, against PyBullet's reduced (Featherstone) mode under the same PD.
   Target: at most 1x.
4. The 29-joint G1 humanoid of example-robot-data dropped and lying on the ground
   (bench_drop.py's set-up), per ``step(1)`` call, against PyBullet's reduced mode.
   Target: at most 1x.

The engines alternate run by run (default 5 runs of 1000 steps); each figure is the median of
the run medians, the smallest and largest run beside it, pinned to one core.  Needs pybullet
and mujoco (requirements-test.txt); a missing peer leaves its row empty.

Run: .venv/bin/python bench/bench_engine_targets.py [--runs 5] [--steps 1000] [--quick]
Writes engine_targets.csv and engine_targets.md in bench/results/.
"""
import copy
import os
import tempfile
import time

from bench_contacts import quadruped, time_jointsim_quadruped, time_pybullet_quadruped
from bench_drop import DROP_SET, ROBOTS_DIR, start_height, time_jointsim, time_pybullet
from bench_pybullet import time_pybullet_run
from benchlib import (JOINTSIM_CONFIG, machine_facts, markdown_table, parse_args,
                      pin_to_one_core, save_markdown, spread, time_steps, verdict, write_csv)
from jointsim_ros import Simulator
import numpy as np
from robots_for_bench import peer_arm_urdf

try:
    import mujoco
except ImportError:  # test-only dependency: the MuJoCo row is left empty
    mujoco = None
try:
    import pybullet
except ImportError:
    pybullet = None

G1 = 'G1 (29 dof)'


def time_mujoco(model, data, steps):
    """Time ``mj_step`` call by call from the model's start state; return us (steps,)."""
    mujoco.mj_resetData(model, data)
    step = mujoco.mj_step
    clock = time.perf_counter_ns
    times = np.empty(steps)
    for k in range(steps):
        start = clock()
        step(model, data)
        times[k] = clock() - start
    return times / 1e3


def measure(runs, steps, folder):
    """Return {figure: [run medians]} for every engine and target."""
    urdf_text, _ = peer_arm_urdf()
    urdf_path = os.path.join(folder, 'jointsim_arm_peer.urdf')
    with open(urdf_path, 'w') as handle:
        handle.write(urdf_text)
    arm = Simulator.from_urdf(urdf_text, JOINTSIM_CONFIG)
    tree_config = copy.deepcopy(JOINTSIM_CONFIG)
    tree_config.setdefault('solver', {})['formulation'] = 'tree'
    tree = Simulator.from_urdf(urdf_text, tree_config)
    quad = quadruped()
    g1_path = ROBOTS_DIR / DROP_SET[G1]
    for sim in (arm, tree, quad):
        sim.step(1)  # compile or load from the cache: never timed
    if mujoco is not None:
        mj_model = mujoco.MjModel.from_xml_string(urdf_text)
        mj_model.opt.timestep = 0.001
        mj_data = mujoco.MjData(mj_model)
    g1_height = start_height(Simulator.from_urdf(str(g1_path), {'base': 'floating'}))
    jobs = {
        'arm_call': lambda: time_steps(arm, None, steps, True),
        'arm_amortised': lambda: time_steps(arm, None, steps, False),
        'arm_tree_call': lambda: time_steps(tree, None, steps, True),
        'quadruped': lambda: time_jointsim_quadruped(quad, steps)[0],
        'g1': lambda: time_jointsim(g1_path, steps)[0],
    }
    if pybullet is not None:
        jobs['pybullet_maximal_arm'] = lambda: time_pybullet_run(urdf_path, True, steps)
        jobs['pybullet_reduced_quadruped'] = lambda: time_pybullet_quadruped(steps, False)[0]
        jobs['pybullet_reduced_g1'] = lambda: time_pybullet(g1_path, g1_height, steps,
                                                            False)[0]
    if mujoco is not None:
        jobs['mujoco_arm'] = lambda: time_mujoco(mj_model, mj_data, steps)
    medians = {key: [] for key in jobs}
    for _ in range(runs):
        for key, job in jobs.items():
            times = job()
            medians[key].append(float(np.median(times)))
    return medians


def tables(medians, runs, steps):
    """Return (figure rows, target rows)."""
    figures = []
    for key, values in medians.items():
        median, low, high = spread(values)
        figures.append({'figure': key, 'runs x steps': f'{runs} x {steps}',
                        'median_us': median, 'min_run_us': low, 'max_run_us': high})
    value = {row['figure']: row['median_us'] for row in figures}
    nan = float('nan')

    def ratio(ours, peer):
        return value[ours] / value[peer] if peer in value else nan
    targets = [
        ('7-DOF arm, no contacts, step(1) per call / PyBullet maximal', 'arm_call',
         'pybullet_maximal_arm', 1.5),
        ('7-DOF arm, no contacts, amortised / PyBullet maximal', 'arm_amortised',
         'pybullet_maximal_arm', 1.5),
        ('7-DOF arm, tree, step(1) per call / MuJoCo mj_step', 'arm_tree_call', 'mujoco_arm',
         2.0),
        ('ANYmal C standing / PyBullet reduced', 'quadruped', 'pybullet_reduced_quadruped',
         1.0),
        ('G1 (29 joints) on the ground / PyBullet reduced', 'g1', 'pybullet_reduced_g1', 1.0),
    ]
    rows = []
    for label, ours, peer, target in targets:
        r = ratio(ours, peer)
        rows.append({'target': label, 'jointsim_us': value[ours],
                     'peer_us': value.get(peer, nan), 'ratio': r, 'at_most': target,
                     'verdict': verdict(r, target) if r == r else 'no peer installed'})
    return figures, rows


def main(argv=None):
    """Measure, print and save the tables."""
    args = parse_args(__doc__, runs=5, steps=1000, argv=argv)
    core = pin_to_one_core(args.cpu)
    with tempfile.TemporaryDirectory() as folder:
        medians = measure(args.runs, args.steps, folder)
    figures, targets = tables(medians, args.runs, args.steps)
    facts = machine_facts()
    text = (f'### Issue 17: engine speed targets (`bench/bench_engine_targets.py`)\n\n'
            f'{facts["date_utc"]} UTC, commit {facts["git_commit"]} (uncommitted changes in '
            f'jointsim_ros: {facts["jointsim_ros_uncommitted_changes"]}), '
            f'{facts["cpu_model"]}, pinned to core {core}, load {facts["load_average_1_5_15"]}; '
            f'pybullet {facts["pybullet"]}, mujoco '
            f'{mujoco.__version__ if mujoco is not None else "-"}.\n\n'
            + markdown_table(figures) + '\n\n' + markdown_table(targets) + '\n')
    print(text)
    write_csv(args.out, 'engine_targets', figures)
    write_csv(args.out, 'engine_targets_ratios', targets)
    save_markdown(args.out, 'engine_targets', text)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
