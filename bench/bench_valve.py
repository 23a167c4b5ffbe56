"""
The valve scenario (issue 30): speed during the turn, the task's figures, and a plot.

1. Speed: the scenario (``jointsim_headless --humanoid --valve`` in-process) ``--runs`` times at
   dt = 1 ms with its 200 Hz controller; per run the real-time factor over the turn (simulated
   seconds of the 'turning' phase over their wall seconds, the controller included), the
   controller's time per period and the simulator's time per step in that phase.  In the same
   run, the peer: the humanoid standing on the same balance controller without the valve, arms
   still (``jointsim_headless --humanoid --steps 0``), its real-time factor over the same
   length.  Medians over the runs.
2. The task: valve turned, squeeze (mean, RMS error) while turning, feet slip, pelvis tilt;
   the wrist sensors' tangential forces times the radius against the valve's friction,
   damping and inertial torque (mean relative error over 0.25 s windows of the turn); the
   same with twice the friction (the controller stops).
3. A plot (PNG): valve angle; squeeze per hand (grasp joints and wrist sensors) against its
   set value; tangential forces per hand from the wrist sensors and their torque against
   friction + damping + inertia; the centre of pressure from the ankle sensors.

Run: .venv/bin/python bench/bench_valve.py [--runs 3] [--png docs/valve_turn.png]
Writes bench/results/valve.md.
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

URDF = ROOT / 'urdf' / 'jointsim_humanoid_valve.urdf.xacro'
CONFIG = ROOT / 'config' / 'jointsim_humanoid_valve.yaml'
HUMANOID_URDF = ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
HUMANOID_CONFIG = ROOT / 'config' / 'jointsim_humanoid.yaml'
RESULTS = ROOT / 'bench' / 'results'


class Timed:
    """Wrap a callable; keep the wall time of each call."""

    def __init__(self, fn):
        self.fn = fn
        self.times = []

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return self.fn(*args, **kwargs)
        finally:
            self.times.append(time.perf_counter() - start)


def scenario(friction=None, seconds=None, formulation=None):
    """
    Run the scenario; return headless.valve's result with the phase timings.

    ``formulation``: None (the config's), 'maximal' or 'tree'.
    """
    from jointsim_ros.control import valve as valve_module
    timers = {}
    original = valve_module.ValveController.voltages
    step_original = headless.Simulator.step

    def voltages(self, m):
        start = time.perf_counter()
        out = original(self, m)
        timers.setdefault('controller', []).append((self.state, time.perf_counter() - start))
        return out

    def step(self, n=1):
        start = time.perf_counter()
        out = step_original(self, n)
        timers.setdefault('step', []).append((n, time.perf_counter() - start))
        return out
    valve_module.ValveController.voltages = voltages
    headless.Simulator.step = step
    try:
        result = headless.valve(URDF, CONFIG, seconds, out=io.StringIO(), friction=friction,
                                formulation=formulation)
    finally:
        valve_module.ValveController.voltages = original
        headless.Simulator.step = step_original
    rec = result['record']
    states = np.array(rec['state'])
    turning = np.flatnonzero(states == 'turning')
    if len(turning) > 1:
        t, w = np.array(rec['time']), np.array(rec['wall'])
        result['rtf'] = (t[turning[-1]] - t[turning[0]]) / (w[turning[-1]] - w[turning[0]])
        ctl = [d for s, d in timers['controller'] if s == 'turning']
        result['controller_ms'] = 1e3 * float(np.median(ctl))
        steps = timers['step'][-len(states):]
        per_step = [d / n for (n, d), s in zip(steps, states) if s == 'turning']
        result['step_us'] = 1e6 * float(np.median(per_step))
    result['torque_error'] = torque_error(result)
    return result


def torque_error(result):
    """Return the mean and largest relative error of R sum(t) against the valve's torque."""
    rec, sim = result['record'], result['sim']
    joint = sim.model.joints[sim._engine.joint_index['valve']]
    body = sim.model.bodies[sim.model.links['valve_wheel'].body]
    inertia = float(np.asarray(body.inertia)[0, 0])
    radius = result['controller'].valve.radius
    time_, rate = np.array(rec['time']), np.array(rec['rate'])
    torque = radius * np.array(rec['wrist_tangential']).sum(axis=1)
    turning = np.array([s == 'turning' for s in rec['state']]) & (rate > 0.05)
    index = np.flatnonzero(turning)
    if not len(index):
        return None
    window = int(round(0.25 / (time_[1] - time_[0])))
    errors = []
    for start in range(index[0], index[-1] - window, window):
        part = slice(start, start + window)
        if not turning[part].all():
            continue
        alpha = (rate[start + window - 1] - rate[start]) / (time_[start + window - 1]
                                                            - time_[start])
        expected = joint.friction + joint.damping * rate[part].mean() + inertia * alpha
        errors.append(abs(torque[part].mean() / expected - 1.0))
    if not errors:
        return None
    return float(np.mean(errors)), float(np.max(errors)), len(errors)


def standing(seconds):
    """Return the peer's real-time factor: the humanoid standing on the same balance control."""
    start = time.perf_counter()
    result = headless.walk(HUMANOID_URDF, HUMANOID_CONFIG, 0, seconds, out=io.StringIO())
    return result['sim'].time / (time.perf_counter() - start)


def plot(result, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    rec, sim = result['record'], result['sim']
    ctl = result['controller']
    t = np.array(rec['time'])
    fig, axes = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    axes[0].plot(t, np.degrees(rec['angle']), 'k')
    axes[0].set_ylabel('valve angle (deg)')
    states = np.array(rec['state'])
    for name, colour in (('turning', '#dde8f5'), ('holding', '#eeeeee'), ('turned', '#eeeeee')):
        mask = states == name
        if mask.any():
            for ax in axes:
                ax.axvspan(t[mask][0], t[mask][-1], color=colour, zorder=0)
    squeeze, wrist_s = np.array(rec['squeeze']), np.array(rec['wrist_squeeze'])
    held = ~np.isnan(squeeze[:, 0])
    for k, (side, colour) in enumerate((('left', 'tab:blue'), ('right', 'tab:orange'))):
        axes[1].plot(t[held], squeeze[held, k], color=colour, label=f'{side} (grasp joint)')
        axes[1].plot(t[held], wrist_s[held, k], color=colour, ls=':', lw=1,
                     label=f'{side} (wrist sensor)')
    axes[1].axhline(ctl.valve.squeeze, color='k', ls='--', lw=1, label='set value')
    axes[1].set_ylabel('squeeze (N)')
    axes[1].legend(fontsize=7, ncol=3)
    wrist_t = np.array(rec['wrist_tangential'])
    joint = sim.model.joints[sim._engine.joint_index['valve']]
    body = sim.model.bodies[sim.model.links['valve_wheel'].body]
    inertia = float(np.asarray(body.inertia)[0, 0])
    rate = np.array(rec['rate'])
    alpha = np.gradient(rate, t)
    kernel = np.ones(25) / 25
    need = (joint.friction * np.sign(rate) + joint.damping * rate
            + inertia * np.convolve(alpha, kernel, mode='same'))
    for k, (side, colour) in enumerate((('left', 'tab:blue'), ('right', 'tab:orange'))):
        axes[2].plot(t[held], wrist_t[held, k], color=colour, lw=1,
                     label=f'{side} hand, tangential (wrist sensor), N')
    torque = ctl.valve.radius * wrist_t.sum(axis=1)
    axes[2].plot(t[held], torque[held], 'k', label='radius x sum, N m')
    moving = held & (np.abs(rate) > 0.02)     # at rest the friction takes what it is given
    axes[2].plot(t[moving], need[moving], 'r--', lw=1,
                 label='valve friction + damping + inertia, N m')
    axes[2].set_ylabel('tangential (N), torque (N m)')
    axes[2].legend(fontsize=7)
    cop = np.array(rec['cop'])
    axes[3].plot(t, 1e3 * (cop[:, 0] - np.nanmean(cop[:20, 0])), label='CoP x')
    axes[3].plot(t, 1e3 * (cop[:, 1] - np.nanmean(cop[:20, 1])), label='CoP y')
    axes[3].set_ylabel('CoP from the start (mm)')
    axes[3].set_xlabel('simulated time (s)')
    axes[3].legend(fontsize=7)
    fig.suptitle('jointsim_headless --humanoid --valve: the humanoid turns the valve')
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--png', default=str(ROOT / 'docs' / 'valve_turn.png'))
    args = parser.parse_args(argv)
    runs, peers = [], []
    for k in range(args.runs):
        result = scenario()
        runs.append(result)
        turn = [t for t, s in zip(result['record']['time'], result['record']['state'])
                if s == 'turning']
        peers.append(standing(max(turn) - min(turn) + 1.0))
        print(f'run {k + 1}: turn {result["rtf"]:.2f}x real time, controller '
              f'{result["controller_ms"]:.2f} ms/period, step {result["step_us"]:.0f} us; '
              f'standing humanoid {peers[-1]:.2f}x', flush=True)
    stiff = scenario(friction=6.0, seconds=8.0)
    median = runs[len(runs) // 2] if len(runs) % 2 else runs[0]
    rtf = float(np.median([r['rtf'] for r in runs]))
    peer = float(np.median(peers))
    err = median['torque_error']
    lines = [
        f'Command: `.venv/bin/python bench/bench_valve.py --runs {args.runs}` '
        f'(median of {args.runs} runs; dt 1 ms, controller at 200 Hz)', '',
        '| figure | value |', '|---|---|',
        f'| real-time factor during the turn (simulator + controller) | {rtf:.2f} |',
        f'| peer: the humanoid standing on the same balance controller, same length | '
        f'{peer:.2f} |',
        f'| ratio turn / standing | {rtf / peer:.2f} |',
        f'| controller per period while turning | '
        f'{np.median([r["controller_ms"] for r in runs]):.2f} ms |',
        f'| simulator per step while turning | '
        f'{np.median([r["step_us"] for r in runs]):.0f} us |',
        f'| valve turned | {median["turned"]:.1f} deg |',
        f'| squeeze while turning (set 20 N) | {median["squeeze"]:.1f} N, RMS error '
        f'{median["squeeze_rms"]:.2f} N ({100 * median["squeeze_rms"] / 20:.1f} %) |',
        f'| feet slip | {1e3 * median["slip"]:.3f} mm |',
        f'| pelvis tilt, largest | {np.degrees(median["tilt"]):.2f} deg |',
        f'| wrist tangential x radius vs friction + damping + inertia (0.25 s windows) | '
        f'mean {100 * err[0]:.2f} %, largest {100 * err[1]:.2f} % over {err[2]} windows |',
        f'| twice the friction (6 N m) | turned {stiff["turned"]:.1f} deg, fell: '
        f'{"no" if stiff["fell"] is None else "yes"}, feet slip {1e3 * stiff["slip"]:.3f} mm; '
        f'log: "{next(line for _, line in stiff["controller"].log if "stopped" in line)}" |',
    ]
    plot(median, args.png)
    lines += ['', f'Plot: `{Path(args.png).relative_to(ROOT)}`']
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / 'valve.md').write_text('\n'.join(lines) + '\n')
    print('\n'.join(lines))


if __name__ == '__main__':
    main()
