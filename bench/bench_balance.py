"""
The balancing walk (issue 29) against the planned gait, on the robot's own noisy sensors.

1. Scenarios, closed loop (``jointsim_headless --humanoid --sensor-noise`` in-process): the
   10-step walk; 80 N for 0.1 s at the pelvis to the left and to the right and 120 N forward,
   each from t = 4 s of the walk; 300 N forward standing (from t = 2 s, 8 s in all); a 60 s
   walk (105 steps).  Each: distance walked, lateral offset, fell or not, and the estimator's
   base-velocity error (RMS over the run, against the truth the controller never reads).
2. Pushes survived: for walking (from t = 4 s) to the left, to the right and forward, and
   standing (from t = 2 s) to the left and forward, pushes of 0.1 s from 40 N to 480 N in
   steps of ``--step`` N: the smallest that fells the robot and the largest survived, open
   loop (the planned gait on joint states) and closed loop.
3. A plot of a pushed walk (80 N left at 3 s, 120 N forward at 6 s): the pelvis path true and
   estimated, the centre of pressure from the ankle sensors, the pushes (PNG).

Run: .venv/bin/python bench/bench_balance.py [--step 40] [--quick] [--png FILE]
Writes balance.md (and the PNG, default docs/humanoid_push.png) in bench/results/ and docs/.
"""
import argparse
import io
from pathlib import Path
import sys
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jointsim_ros.tools import headless  # noqa: E402, I100
import numpy as np  # noqa: E402, I100

URDF = ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
CONFIG = ROOT / 'config' / 'jointsim_humanoid.yaml'
RESULTS = ROOT / 'bench' / 'results'


def walk(steps=10, seconds=None, pushes=(), open_loop=False, on_period=None):
    """Run the humanoid with all sensor noise on; return headless.walk's result + figures."""
    record = {}
    start = time.perf_counter()
    result = headless.walk(URDF, CONFIG, steps, seconds, out=io.StringIO(), pushes=pushes,
                           sensor_noise=True, open_loop=open_loop, record=record)
    result['wall'] = time.perf_counter() - start
    if 'estimate' in record:
        error = np.array(record['velocity']) - np.array(record['estimate'])
        result['rms'] = float(np.sqrt(np.mean(np.sum(error[10:] ** 2, axis=1))))
    result['record'] = record
    return result


def scenarios(quick):
    rows = []
    cases = [('10-step walk', {}),
             ('80 N left at 4 s, walking', {'pushes': [(4.0, 0.0, 80.0)]}),
             ('80 N right at 4 s, walking', {'pushes': [(4.0, 0.0, -80.0)]}),
             ('120 N forward at 4 s, walking', {'pushes': [(4.0, 120.0, 0.0)]}),
             ('300 N forward at 2 s, standing', {'steps': 0, 'seconds': 8.0,
                                                 'pushes': [(2.0, 300.0, 0.0)]})]
    if not quick:
        cases.append(('60 s walk (105 steps)', {'steps': 105}))
    for name, kwargs in cases:
        r = walk(**kwargs)
        rows.append((name, f"{r['walked']:.3f}", f"{r['lateral']:+.3f}",
                     'no' if r['fell'] is None else f"at {r['fell']:.2f} s",
                     f"{r['rms']:.4f}", f"{r['wall']:.1f}"))
        print(' | '.join(rows[-1]), flush=True)
    return rows


PUSH_CASES = [('walking, to the left', 10, None, 4.0, (0.0, 1.0)),
              ('walking, to the right', 10, None, 4.0, (0.0, -1.0)),
              ('walking, forward', 10, None, 4.0, (1.0, 0.0)),
              ('standing, to the left', 0, 8.0, 2.0, (0.0, 1.0)),
              ('standing, forward', 0, 8.0, 2.0, (1.0, 0.0))]


def grid(steps, seconds, t0, direction, open_loop, step=40.0, high=480.0):
    """
    Return (smallest push that fells it, largest survived), N, over pushes of step, 2 step, ...

    A grid rather than a bisection: whether a push fells the robot depends on where in the
    gait it lands, so a larger push can be survived where a smaller one was not (the open loop
    falls at 120 N forward and survives 250 N at the same time of the walk).
    """
    first, largest = None, 0.0
    force = step
    while force <= high + 1e-9:
        r = walk(steps, seconds, [(t0, direction[0] * force, direction[1] * force)], open_loop)
        if r['fell'] is None:
            largest = force
        elif first is None:
            first = force
        force += step
    return first, largest


def sweep(step):
    rows = []
    for name, steps, seconds, t0, direction in PUSH_CASES:
        row = [name]
        for open_loop in (True, False):
            first, largest = grid(steps, seconds, t0, direction, open_loop, step)
            row += ['none up to 480' if first is None else f'{first:.0f}', f'{largest:.0f}']
        rows.append(tuple(row))
        print(' | '.join(rows[-1]), flush=True)
    return rows


def plot(path):
    """Draw the pushed walk: pelvis path true and estimated, CoP, the pushes."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    pushes = [(3.0, 0.0, 80.0), (6.0, 120.0, 0.0)]
    r = walk(pushes=pushes)
    rec = r['record']
    t = np.array(rec['time'])
    true = np.array(rec['pelvis'])
    est = np.array(rec['estimate_position'])
    cops = np.array(rec['cop'])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 8))
    top.plot(true[:, 0], true[:, 1], label='pelvis (truth)', lw=1.5)
    top.plot(est[:, 0], est[:, 1], '--', label='pelvis (estimated)', lw=1.2)
    if len(cops):
        top.plot(cops[:, 0], cops[:, 1], '.', ms=1.5, label='CoP (ankle sensors)')
    for when, fx, fy in pushes:
        k = int(np.searchsorted(t, when))
        top.annotate('', xy=(true[k, 0] + fx / 1000, true[k, 1] + fy / 1000),
                     xytext=(true[k, 0], true[k, 1]),
                     arrowprops={'arrowstyle': '->', 'color': 'red', 'lw': 2})
        top.text(true[k, 0], true[k, 1] + 0.03, f'{np.hypot(fx, fy):.0f} N, 0.1 s',
                 color='red', fontsize=8)
    top.set_xlabel('x (m)')
    top.set_ylabel('y (m)')
    top.set_aspect('equal', adjustable='datalim')
    top.legend(fontsize=8, loc='lower right')
    top.set_title(f"balancing walk, all sensors noisy: {r['walked']:.2f} m, lateral "
                  f"{r['lateral']:+.3f} m, estimator speed error {r['rms']:.3f} m/s RMS")
    bottom.plot(t, true[:, 1], label='pelvis y (truth)')
    bottom.plot(t, est[:, 1], '--', label='pelvis y (estimated)')
    velocity = np.array(rec['velocity'])
    estimate = np.array(rec['estimate'])
    bottom.plot(t, velocity[:, 0], label='pelvis x speed (truth)', alpha=0.7)
    bottom.plot(t, estimate[:, 0], ':', label='x speed (estimated)')
    for when, _, _ in pushes:
        bottom.axvspan(when, when + 0.1, color='red', alpha=0.3)
    bottom.set_xlabel('t (s)')
    bottom.set_ylabel('m, m/s')
    bottom.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print(f'wrote {path}')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--step', type=float, default=40.0, help='push grid step, N')
    parser.add_argument('--quick', action='store_true', help='no 60 s walk, no sweep')
    parser.add_argument('--png', type=Path, default=ROOT / 'docs' / 'humanoid_push.png')
    args = parser.parse_args(argv)
    lines = ['# The balancing walk (bench/bench_balance.py)', '',
             '| scenario | walked m | lateral m | fell | estimator speed error m/s RMS | '
             'wall s |', '|---|---|---|---|---|---|']
    lines += ['| ' + ' | '.join(row) + ' |' for row in scenarios(args.quick)]
    if not args.quick:
        lines += ['', '| 0.1 s push at the pelvis | open loop: smallest that fells N | '
                  'open loop: largest survived N | closed loop: smallest that fells N | '
                  'closed loop: largest survived N |', '|---|---|---|---|---|']
        lines += ['| ' + ' | '.join(row) + ' |' for row in sweep(args.step)]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / 'balance.md').write_text('\n'.join(lines) + '\n')
    plot(args.png)


if __name__ == '__main__':
    main()
