"""
Measure what joint friction and limit rows cost, and the door's stopping time (issue 5).

1. Overhead: the bundled 7-DOF arm with 2 N m of Coulomb friction and its URDF position limits
   on every joint, against the same arm with neither (every joint made continuous, friction 0),
   both at dt = 1 ms with 20 iterations (tolerance 1e-9 N s, so all 20 run).  Runs alternate
   (default 7 of 2000 steps each) from the bent pose; with limits the arm swings into them.
   Per-call ``step(1)`` medians and amortised ``step(1000)`` figures, the median of the run
   figures.  Target: at most 30 % more.
2. The door: 8 kg m^2 about a vertical hinge with 20 N m of dry friction, released at 1.3 rad/s,
   must stop at t = I w0 / 20 = 0.52 s; the simulated stopping time against it at dt = 1 ms
   and 10 ms.  Target: within 1 %.

Run: .venv/bin/python bench/bench_joint_rows.py [--runs 7] [--steps 2000] [--quick]
"""

from benchlib import (JOINTSIM_CONFIG, markdown_table, overhead_table, parse_args,
                      pin_to_one_core, save_markdown, verdict, write_csv)
from jointsim_ros import Simulator
from robots_for_bench import arm_urdf_text

TARGET_OVERHEAD = 0.30
TARGET_STOP = 0.01
DOOR = ('<robot name="door"><link name="frame"/><link name="leaf"><inertial>'
        '<origin xyz="0.8 0 0"/><mass value="10"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" '
        'iyz="0" izz="1.6"/></inertial></link><joint name="hinge" type="continuous">'
        '<parent link="frame"/><child link="leaf"/><axis xyz="0 0 1"/>'
        '<dynamics friction="20"/></joint></robot>')


def arm_simulators():
    """Return (arm without friction or limits, arm with both) with the same solver settings."""
    urdf = arm_urdf_text()
    bare = Simulator.from_urdf(urdf.replace('type="revolute"', 'type="continuous"'),
                               dict(JOINTSIM_CONFIG))
    rows = Simulator.from_urdf(urdf, {**JOINTSIM_CONFIG, 'joints': {
        n: {'friction': 2.0} for n in bare.joint_names}})
    return bare, rows


def overhead(runs, steps):
    """Measure the step time with and without friction and limit rows; return table rows."""
    bare, rows = arm_simulators()
    return overhead_table(bare, rows, runs, steps, ('no rows', 'friction + limits'),
                          TARGET_OVERHEAD)


def door_stops():
    """Return the door's stopping time against I w0 / F at 1 ms and 10 ms."""
    exact = 8.0 * 1.3 / 20.0
    table = []
    for dt in (0.001, 0.01):
        sim = Simulator.from_urdf(DOOR, {'dt': dt})
        sim.set_joint_state({'hinge': 0.0}, {'hinge': 1.3})
        while sim.joint_velocities()[0] > 1e-6 and sim.time < 2 * exact:
            sim.step(1)
        error = abs(sim.time / exact - 1.0)
        table.append({'dt ms': dt * 1e3, 'stop time s': f'{sim.time:.4f}',
                      'analytic s': f'{exact:.4f}', 'relative error': f'{error:.1e}',
                      'angle rad': f'{sim.joint_positions()[0]:.4f}',
                      'analytic angle rad': f'{8.0 * 1.3 ** 2 / 40.0:.4f}',
                      'target': f'{TARGET_STOP:.0e}', 'verdict': verdict(error, TARGET_STOP)})
    return table


def main(argv=None):
    """Run both parts, write bench/results/joint_rows_*.csv, print the tables."""
    args = parse_args(__doc__, runs=7, steps=2000, argv=argv)
    cpu = pin_to_one_core(args.cpu)
    cost = overhead(args.runs, args.steps)
    door = door_stops()
    write_csv(args.out, 'joint_rows_overhead', cost)
    write_csv(args.out, 'joint_rows_door', door)
    save_markdown(args.out, 'joint_rows',
                  '### Friction and limit rows on all 7 joints of the arm, dt = 1 ms, '
                  f'20 iterations (core {cpu})\n\n' + markdown_table(cost)
                  + '\n\n### The door: stopping time under 20 N m of dry friction\n\n'
                  + markdown_table(door))


if __name__ == '__main__':
    main()
