"""
Measure what DC drives cost and how exactly they reach the analytic steady state (issue 3).

1. Overhead: the bundled 7-DOF arm (urdf/jointsim_arm.urdf.xacro) with the drives of
   config/jointsim_arm.yaml on all 7 joints, against the same arm without drives, both at
   dt = 1 ms with 20 iterations (tolerance 1e-9 N s, so all 20 run).  Runs alternate (default
   7 of 2000 steps each); the passive arm swings from the bent pose, the driven arm gets +-6 V
   square waves on alternate joints.  Per-call ``step(1)`` medians and amortised
   ``step(1000)`` figures, the median of the run figures.  Target: at most 30 % more.
2. Steady state: one link turning about a vertical axis (no gravity load) driven through
   N = 20 by R = 2 ohm, L = 1 mH, Kt = Ke = 0.05 N m/A, J_m = 1e-5 kg m^2, b_m = 1e-5 N m s/rad:
   no-load rotor speed against U Kt / (R b_m + Kt Ke), stall torque (link of 1e9 kg m^2)
   against N Kt U / R and the stall current against U / R, at dt = 1 ms and 10 ms (L/R is
   0.5 ms, so 10 ms is 20 time constants per step).  Target: within 0.5 %.

Run: .venv/bin/python bench/bench_drives.py [--runs 7] [--steps 2000] [--quick]
"""

from benchlib import (JOINTSIM_CONFIG, markdown_table, overhead_table, parse_args,
                      pin_to_one_core, REPO_ROOT, save_markdown, verdict, write_csv)
from jointsim_ros import Simulator
from robots_for_bench import ARM_XACRO
import yaml

TARGET_OVERHEAD = 0.30
TARGET_STEADY = 5e-3
R, L, KT, JM, N, B = 2.0, 1e-3, 0.05, 1e-5, 20.0, 1e-5
SPINNER = ('<robot name="spinner"><link name="base"/><link name="arm"><inertial>'
           '<origin xyz="0 0 0.1"/><mass value="{m}"/><inertia ixx="{izz}" ixy="0" ixz="0" '
           'iyy="{izz}" iyz="0" izz="{izz}"/></inertial></link><joint name="j" '
           'type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>'
           '</joint></robot>')


def arm_simulators():
    """Return (passive arm, driven arm) with the same solver settings."""
    drives = yaml.safe_load((REPO_ROOT / 'config' / 'jointsim_arm.yaml').read_text())['drives']
    passive = Simulator.from_urdf(str(ARM_XACRO), dict(JOINTSIM_CONFIG))
    driven = Simulator.from_urdf(str(ARM_XACRO), {**JOINTSIM_CONFIG, 'drives': drives})
    return passive, driven


def overhead(runs, steps):
    """Measure the step time with and without drives; return table rows."""
    passive, driven = arm_simulators()
    volts = {n: 6.0 * (-1) ** i for i, n in enumerate(driven.drive_names)}
    return overhead_table(passive, driven, runs, steps, ('no drives', '7 drives'),
                          TARGET_OVERHEAD, prepare=lambda sim: sim.set_voltages(volts))


def spinner(dt, locked):
    """Return the one-link test drive (huge link inertia when locked)."""
    urdf = SPINNER.format(m=1e9 if locked else 1.0, izz=1e9 if locked else 0.02)
    drive = {'resistance': R, 'inductance': L, 'torque_constant': KT, 'rotor_inertia': JM,
             'gear_ratio': N, 'viscous_friction': B}
    return Simulator.from_urdf(urdf, {'dt': dt, 'drives': {'j': drive}})


def steady_state():
    """Compare the steady states with the analytic motor at 1 ms and 10 ms; return rows."""
    rows = []
    volts = 12.0
    for dt in (0.001, 0.01):
        free = spinner(dt, locked=False)
        free.set_voltages({'j': volts})
        free.step(int(round(4.0 / dt)))
        locked = spinner(dt, locked=True)
        locked.set_voltages({'j': volts})
        locked.step(int(round(0.2 / dt)))
        cases = (
            ('no-load rotor speed, rad/s', free.drive_state('j')['rotor_speed'],
             volts * KT / (R * B + KT * KT)),
            ('stall torque at the joint, N m', locked.joint_efforts()[0], N * KT * volts / R),
            ('stall current, A', locked.drive_state('j')['current'], volts / R),
        )
        for name, simulated, exact in cases:
            error = abs(simulated / exact - 1.0)
            rows.append({'dt ms': dt * 1e3, 'quantity': name, 'simulated': f'{simulated:.6g}',
                         'analytic': f'{exact:.6g}', 'relative error': f'{error:.1e}',
                         'target': f'{TARGET_STEADY:.1e}',
                         'verdict': verdict(error, TARGET_STEADY)})
    return rows


def main(argv=None):
    """Run both parts, write bench/results/drives_*.csv, print the tables."""
    args = parse_args(__doc__, runs=7, steps=2000, argv=argv)
    cpu = pin_to_one_core(args.cpu)
    cost = overhead(args.runs, args.steps)
    exact = steady_state()
    write_csv(args.out, 'drives_overhead', cost)
    write_csv(args.out, 'drives_steady_state', exact)
    save_markdown(args.out, 'drives',
                  f'### Drives on all 7 joints of the arm, dt = 1 ms, 20 iterations (core {cpu})'
                  '\n\n' + markdown_table(cost) + '\n\n### Drive steady state against the '
                  'analytic motor\n\n' + markdown_table(exact))


if __name__ == '__main__':
    main()
