"""
Per-step time of the drop set at rest and of the humanoid's walk, one JSON line per commit.

Issue 28's "no slower than today": the same script is run in a work tree at each commit (its
own package first on PYTHONPATH), alternating, and the lines compared (docs/benchmarks.md,
issue 28).  The drop set is bench_compliant.py's (bench_drop.py's robots with Go2 for Go1, no
ANYmal C): each dropped, 2 s to settle, then the median of 3 runs of 1000 ``step(1)`` calls, us
per step.  The humanoid: the bundled 10-step walk headless (``run_headless``, 200 Hz voltages),
3 walks, the time in ``sim.step`` per simulated step, us.  Pinned to core 1.

Run from the root of the work tree to time (its jointsim_ros, urdf/ and config/ are used):
cd <work tree> && <repo>/.venv/bin/python <repo>/bench/bench_drop_walk_speed.py
"""
import contextlib
import io
import json
import logging
import os
import sys
import time

# the work tree this runs in (its root is the current folder) comes first, before this script's
# folder and the tree benchlib puts on the path, so that its own jointsim_ros is timed
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())

from bench_drop import DROP_SET, ROBOTS_DIR, start_height  # noqa: E402
from jointsim_ros import Simulator  # noqa: E402
from jointsim_ros.description import load_model  # noqa: E402
import numpy as np  # noqa: E402

try:
    from jointsim_ros.control.walking import GaitSettings, run_headless, WalkingController
except ImportError:  # a commit before the package layout of issue 27
    from jointsim_ros.walking import GaitSettings, run_headless, WalkingController


def drop_set():
    """Return {robot: us per step at rest}."""
    robots = {n: r for n, r in DROP_SET.items() if n not in ('Go1', 'ANYmal C')}
    robots['Go2'] = 'go2_description/urdf/go2.urdf'
    out = {}
    for name, relative in robots.items():
        path = str(ROBOTS_DIR / relative)
        with contextlib.redirect_stderr(io.StringIO()):
            probe = Simulator.from_urdf(path, {'base': 'floating'})
            sim = Simulator.from_urdf(path, {'base': 'floating', 'base_pose': {
                'position': [0.0, 0.0, start_height(probe)]}})
            sim.step(2000)
            runs = []
            for _ in range(3):
                start = time.perf_counter()
                for _ in range(1000):
                    sim.step(1)
                runs.append((time.perf_counter() - start) * 1e3)
        out[name] = round(float(np.median(runs)), 1)
    return out


def walk():
    """Return (us per simulated step in sim.step over the walk, the pelvis's final x)."""
    urdf, config = 'urdf/jointsim_humanoid.urdf.xacro', 'config/jointsim_humanoid.yaml'
    robot, settings = load_model(urdf, config)
    walks = []
    for _ in range(3):
        sim = Simulator.from_urdf(urdf, config)
        controller = WalkingController(robot, settings, GaitSettings())
        sim.step(1)
        spent = [0.0]
        step = sim.step

        def timed(n, step=step, spent=spent):
            start = time.perf_counter()
            report = step(n)
            spent[0] += time.perf_counter() - start
            return report
        sim.step = timed
        run_headless(sim, controller, controller.duration())
        walks.append(spent[0] / (controller.duration() / sim.dt) * 1e6)
    return round(float(np.median(walks)), 1), round(float(sim.link_pose('pelvis')[0][0]), 3)


def main():
    """Print one JSON line of the figures."""
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    logging.getLogger('jointsim_ros').setLevel(logging.ERROR)
    out = drop_set()
    out['humanoid walk us/step'], out['pelvis x'] = walk()
    print(json.dumps(out))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
