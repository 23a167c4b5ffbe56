"""
What the walking humanoid's sensors add to its step.

Four force-torque sensors and the pelvis IMU, each sampled at 500 Hz (docs/benchmarks.md,
"Sensors").
The humanoid lies on the ground after 3 s without commands (many contacts, a steady state);
then, alternating in the same run: ``sim.step(5)`` (the node's 5 ms tick: the steps split at
the sample times, 12.5 samples taken) against the engine's ``step(5)`` alone (the peer: no
sensor), and one exact reading of a force-torque sensor and of the IMU (``sensors.measure``).
Each figure: the median over ``--runs`` runs of the mean over ``--calls`` calls, microseconds,
the process pinned to one core.

Run: .venv/bin/python bench/bench_sensors.py [--runs 5] [--calls 300]
Writes bench/results/sensors.md.
"""
import argparse
import statistics

from benchlib import mean_us, pin_to_one_core, REPO_ROOT, RESULTS_DIR, save_markdown

from jointsim_ros.sim.simulator import Simulator  # noqa: I100

ROBOT = REPO_ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
CONFIG = REPO_ROOT / 'config' / 'jointsim_humanoid.yaml'


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--calls', type=int, default=300)
    args = parser.parse_args()
    pin_to_one_core()
    sim = Simulator.from_urdf(str(ROBOT), str(CONFIG))
    sim.step(3000)
    ft, imu = sim.sensors.names[0], sim.sensors.imu_names[0]
    rows = {'tick': [], 'engine': [], 'ft': [], 'imu': []}
    for _ in range(args.runs):
        rows['tick'].append(mean_us(lambda: sim.step(5), args.calls))
        rows['engine'].append(mean_us(lambda: sim._engine.step(5), args.calls))
        rows['ft'].append(mean_us(lambda: sim.sensors.measure(ft), 10 * args.calls))
        rows['imu'].append(mean_us(lambda: sim.sensors.measure(imu), 10 * args.calls))
    med = {k: statistics.median(v) for k, v in rows.items()}
    text = '\n'.join([
        "# The walking humanoid's sensors (bench/bench_sensors.py)", '',
        f'Command: `.venv/bin/python bench/bench_sensors.py --runs {args.runs} --calls '
        f'{args.calls}`; medians of {args.runs} runs, us, pinned to one core.', '',
        '| call | us |', '|---|---|',
        f'| `sim.step(5)`: 5 steps, 12.5 sensor samples | {med["tick"]:.0f} |',
        f'| the engine\'s `step(5)` alone (peer) | {med["engine"]:.0f} |',
        f'| the sensors\' share of a tick | {med["tick"] - med["engine"]:.0f} '
        f'({med["tick"] / med["engine"]:.2f} x the engine alone) |',
        f'| one force-torque reading (`measure({ft!r})`) | {med["ft"]:.1f} |',
        f'| one IMU reading (`measure({imu!r})`) | {med["imu"]:.1f} |'])
    save_markdown(RESULTS_DIR, 'sensors', text)


if __name__ == '__main__':
    main()
