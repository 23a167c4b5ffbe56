"""
Print the median step time of the bundled arm and humanoid in both formulations (one checkout).

For before/after comparisons of a change to the step (as the islands'): run it alternately from
two checkouts sharing one venv, e.g.
    for i in 1 2 3; do (cd OLD && .venv/bin/python bench/bench_islands_ab.py);
                       (cd NEW && .venv/bin/python bench/bench_islands_ab.py); done
Each figure is the median of 5 blocks of 500 steps after 300 untimed ones, us per step.

Run: .venv/bin/python bench/bench_islands_ab.py
"""
from pathlib import Path
import statistics
import time

from jointsim_ros.sim.simulator import Simulator
import yaml

CASES = {
    'arm': ('urdf/jointsim_arm.urdf.xacro', 'config/jointsim_arm.yaml'),
    'humanoid': ('urdf/jointsim_humanoid.urdf.xacro', 'config/jointsim_humanoid.yaml'),
}


def median_step_us(urdf, config, formulation, blocks=5, steps=500):
    """Return the median over blocks of the mean step time, us."""
    config = yaml.safe_load(Path(config).read_text())
    config['solver'] = dict(config.get('solver') or {}, formulation=formulation)
    sim = Simulator.from_urdf(urdf, config)
    sim.step(300)
    runs = []
    for _ in range(blocks):
        start = time.perf_counter()
        sim.step(steps)
        runs.append((time.perf_counter() - start) / steps * 1e6)
    return statistics.median(runs)


def main():
    """Print one line per formulation and robot."""
    for formulation in ('maximal', 'tree'):
        for name, (urdf, config) in CASES.items():
            us = median_step_us(urdf, config, formulation)
            print(f'{formulation} {name} {us:.1f} us', flush=True)


if __name__ == '__main__':
    main()
