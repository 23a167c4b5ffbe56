"""
Measure joint drift, trajectory error and energy drift over 2 s of free swinging (targets 3, 4).

Double pendulum (test/robots.py's double_pendulum(): two 1 kg point-like bobs on massless 1 m
rods, hinges about y), released at rest from absolute angles 0.5, 0.5 rad:
- angle error: max over the 2 s and both joints of |absolute angle - reference|; the reference
  is classical RK4 with h = 1e-5 s on Lagrange's equations of the point-mass double pendulum
  (copied from test/test_engine_scenarios.py), sampled every 0.5 ms;
- energy drift: max over time of |E(t) - E0| / (E0 - E_rest), E = sum of
  ``sim.mechanical_energy()``, E_rest the energy hanging at rest;
- anchor drift: max over time and joints of ``sim.joint_anchor_errors()``.
7-DOF arm (urdf/jointsim_arm.urdf.xacro with every joint made continuous: the passive swinging
of the engine core that the issue-2 target is about, as in bench_pybullet.py), released at rest
from +0.5, -0.5, ... rad: anchor drift as above, and energy error max |E(t) - E0| relative to
the largest kinetic energy reached.  For the record, the same arm with its URDF position limits
(restitution 0: it strikes them inelastically, so its energy is not conserved) at 1 ms.

Every figure is measured at dt = 0.5, 1 and 2 ms (targets apply at 1 ms) with 20 velocity
iterations, defaults otherwise; the observed order of convergence is log2 of the ratio of the
errors at successive dt.  Accuracy does not depend on the machine: one run each.

Run: .venv/bin/python bench/bench_accuracy.py [--quick]
"""
import math

from benchlib import markdown_table, parse_args, save_markdown, verdict, write_csv
from jointsim_ros import Simulator
import numpy as np
from robots_for_bench import arm_urdf_text, bent_pose, double_pendulum

G = 9.81
DURATION = 2.0        # s
SAMPLE = 5e-4         # s, spacing of the reference samples (the smallest dt)
DTS = (0.0005, 0.001, 0.002)
TARGET_ANCHOR_M = 1e-4     # 0.1 mm
TARGET_ANGLE_RAD = 2e-3
TARGET_ENERGY = 5e-3       # 0.5 % of E0 - E_rest


def double_pendulum_reference(theta, duration, h=1e-5, sample=SAMPLE):
    """
    Integrate the point-mass double pendulum (m = L = 1) by RK4 on Lagrange's equations.

    Args:
        theta: (2,) initial absolute angles from the downward vertical, rad (released at rest).
        duration: s.
        h: RK4 step, s.
        sample: spacing of the returned samples, s (a multiple of h).

    Returns:
        (n + 1, 2) absolute angles at t = 0, sample, 2 sample, ... duration.
    """
    sin, cos = math.sin, math.cos

    def f(t1, t2, w1, w2):
        d = t1 - t2
        den = 3 - cos(2 * d)
        a1 = (-G * 3 * sin(t1) - G * sin(t1 - 2 * t2)
              - 2 * sin(d) * (w2 * w2 + w1 * w1 * cos(d))) / den
        a2 = 2 * sin(d) * (2 * w1 * w1 + 2 * G * cos(t1) + w2 * w2 * cos(d)) / den
        return w1, w2, a1, a2

    s = (float(theta[0]), float(theta[1]), 0.0, 0.0)
    out = [s[:2]]
    per_sample = int(round(sample / h))
    for _ in range(int(round(duration / sample))):
        for _ in range(per_sample):
            k1 = f(*s)
            k2 = f(*(x + 0.5 * h * k for x, k in zip(s, k1)))
            k3 = f(*(x + 0.5 * h * k for x, k in zip(s, k2)))
            k4 = f(*(x + h * k for x, k in zip(s, k3)))
            s = tuple(x + h / 6.0 * (a + 2 * b + 2 * c + d)
                      for x, a, b, c, d in zip(s, k1, k2, k3, k4))
        out.append(s[:2])
    return np.array(out)


def double_pendulum_run(dt, reference, duration=DURATION):
    """
    Swing the double pendulum for the duration and compare it with the reference.

    Returns:
        dict of the figures.
    """
    config = {'dt': dt, 'solver': {'iterations': 20}}
    e_rest = sum(Simulator.from_urdf(double_pendulum(), config).mechanical_energy())
    sim = Simulator.from_urdf(double_pendulum(), config)
    sim.set_joint_state({'shoulder': 0.5, 'elbow': 0.0})  # absolute angles 0.5, 0.5
    e0 = sum(sim.mechanical_energy())
    stride = int(round(dt / SAMPLE))
    angle = energy = anchor = 0.0
    for k in range(1, int(round(duration / dt)) + 1):
        sim.step(1)
        q = sim.joint_positions()
        angle = max(angle, np.max(np.abs([q[0], q[0] + q[1]] - reference[k * stride])))
        energy = max(energy, abs(sum(sim.mechanical_energy()) - e0) / (e0 - e_rest))
        anchor = max(anchor, max(sim.joint_anchor_errors().values()))
    return {'angle_error_rad': angle, 'energy_drift_pct': 100 * energy,
            'anchor_drift_mm': 1e3 * anchor}


def arm_run(dt, duration=DURATION, limits=False):
    """
    Swing the arm from the bent pose for the duration.

    Args:
        dt: time step, s.
        duration: simulated time, s.
        limits: keep the URDF position limits (else every joint is continuous).

    Returns:
        dict of the figures.
    """
    urdf = arm_urdf_text()
    if not limits:
        urdf = urdf.replace('type="revolute"', 'type="continuous"')
    sim = Simulator.from_urdf(urdf, {'dt': dt, 'solver': {'iterations': 20}})
    sim.set_joint_state(bent_pose(sim.joint_names))
    e0 = sum(sim.mechanical_energy())
    energy_error = kinetic_max = anchor = 0.0
    for _ in range(int(round(duration / dt))):
        sim.step(1)
        kinetic, potential = sim.mechanical_energy()
        kinetic_max = max(kinetic_max, kinetic)
        energy_error = max(energy_error, abs(kinetic + potential - e0))
        anchor = max(anchor, max(sim.joint_anchor_errors().values()))
    return {'anchor_drift_mm': 1e3 * anchor, 'energy_error_J': energy_error,
            'max_kinetic_J': kinetic_max,
            'energy_error_pct_of_max_kinetic': 100 * energy_error / kinetic_max}


def order(errors):
    """Return log2 of successive error ratios (errors listed from the smallest dt up)."""
    return [math.log2(b / a) if a > 0 and b > 0 else float('nan')
            for a, b in zip(errors, errors[1:])]


def measure(duration=DURATION):
    """
    Run every accuracy measurement.

    Returns:
        (double pendulum rows, arm rows, convergence rows).
    """
    reference = double_pendulum_reference((0.5, 0.5), duration)
    pendulum, arm = [], []
    for dt in DTS:
        row = {'dt_ms': 1e3 * dt, **double_pendulum_run(dt, reference, duration)}
        at_target = dt == 0.001
        row['angle_verdict'] = (verdict(row['angle_error_rad'], TARGET_ANGLE_RAD)
                                if at_target else '-')
        row['energy_verdict'] = (verdict(row['energy_drift_pct'], 100 * TARGET_ENERGY)
                                 if at_target else '-')
        row['anchor_verdict'] = (verdict(row['anchor_drift_mm'], 1e3 * TARGET_ANCHOR_M)
                                 if at_target else '-')
        pendulum.append(row)
        row = {'dt_ms': 1e3 * dt, 'limits': 'none', **arm_run(dt, duration)}
        row['anchor_verdict'] = (verdict(row['anchor_drift_mm'], 1e3 * TARGET_ANCHOR_M)
                                 if at_target else '-')
        arm.append(row)
    arm.append({'dt_ms': 1.0, 'limits': 'URDF, restitution 0',
                **arm_run(0.001, duration, limits=True), 'anchor_verdict': 'no target'})
    convergence = []
    for system, rows, key in (('double pendulum', pendulum, 'angle_error_rad'),
                              ('double pendulum', pendulum, 'energy_drift_pct'),
                              ('double pendulum', pendulum, 'anchor_drift_mm'),
                              ('7-DOF arm', arm[:len(DTS)], 'energy_error_pct_of_max_kinetic'),
                              ('7-DOF arm', arm[:len(DTS)], 'anchor_drift_mm')):
        ratios = order([r[key] for r in rows])
        convergence.append({'system': system, 'figure': key,
                            'order 0.5 -> 1 ms': ratios[0], 'order 1 -> 2 ms': ratios[1]})
    return pendulum, arm, convergence


def main(argv=None):
    """Run the accuracy benchmark, write bench/results/accuracy_*.csv, print the tables."""
    args = parse_args(__doc__, runs=1, steps=2000, argv=argv)
    duration = 0.2 if args.quick else DURATION
    pendulum, arm, convergence = measure(duration)
    write_csv(args.out, 'accuracy_double_pendulum', pendulum)
    write_csv(args.out, 'accuracy_arm', arm)
    write_csv(args.out, 'accuracy_convergence', convergence)
    targets = (f'targets at dt = 1 ms: angle error <= {TARGET_ANGLE_RAD} rad, energy drift <= '
               f'{100 * TARGET_ENERGY} %, anchor drift <= {1e3 * TARGET_ANCHOR_M} mm')
    save_markdown(args.out, 'accuracy',
                  f'### Double pendulum, {duration} s from 0.5/0.5 rad, 20 iterations\n\n'
                  + markdown_table(pendulum) + f'\n\n({targets})\n\n'
                  f'### 7-DOF arm, {duration} s passive swing from the bent pose, 20 iterations'
                  '\n\n' + markdown_table(arm) + '\n\n### Observed order of convergence in dt '
                  '(log2 of the error ratio)\n\n' + markdown_table(convergence))


if __name__ == '__main__':
    main()
