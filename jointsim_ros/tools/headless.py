"""
Run a robot headless for a few simulated seconds and print what a user wants to see.

    python -m jointsim_ros.tools.headless [--robot FILE] [--config FILE] [--seconds S]
    python -m jointsim_ros.tools.headless --humanoid [--steps N]

Without arguments it runs the bundled default robot (urdf/jointsim_arm.urdf.xacro) with
config/jointsim_arm.yaml (a geared DC drive on every joint, all at 0 V), released from a bent
pose so it sags against the braking of its short-circuited motors.  ``--robot`` without
``--config`` runs that robot with the default config (no drives): the arm's config names the
arm's joints.  ``--humanoid`` runs the bundled humanoid (urdf/jointsim_humanoid.urdf.xacro,
config/jointsim_humanoid.yaml) with its walking controller (jointsim_ros.control.walking) in the
same process: it stands up, shifts its weight, walks ``--steps`` steps and stands
(docs/humanoid.md).
"""
import argparse
import sys
import time

import numpy as np

from . import show_log
from .. import resources
from ..errors import JointsimError
from ..sim.simulator import Simulator


def parse_args(argv):
    """Command-line arguments."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--robot', help='URDF or xacro file (default: the bundled arm)')
    parser.add_argument('--config', help='simulator YAML config (default: config/jointsim_arm.yaml'
                        ' for the bundled arm, the defaults of config/default.yaml for --robot)')
    parser.add_argument('--seconds', type=float, default=None,
                        help='simulated time, s (3; --humanoid: the walk and 1 s more)')
    parser.add_argument('--humanoid', action='store_true',
                        help='the bundled humanoid walking on its drives (its own controller)')
    parser.add_argument('--steps', type=int, default=10,
                        help='--humanoid: number of steps (10; 0 stands)')
    return parser.parse_args(argv)


def walk(robot, config, steps, seconds=None, out=None):
    """Walk the humanoid with jointsim_ros.control.walking's controller; report once a second."""
    from ..description import load_model
    from ..control.walking import GaitSettings, run_headless, WalkingController
    out = out or sys.stdout
    model, sim_config = load_model(str(robot), str(config))
    settings = GaitSettings(steps=max(0, steps))
    if steps <= 0:
        settings.shift = 0.0
    controller = WalkingController(model, sim_config, settings)
    sim = Simulator.from_urdf(str(robot), str(config))
    seconds = controller.duration() + 1.0 if seconds is None else seconds
    print(f'humanoid {model.name!r} from {robot}: {len(sim.joint_names)} joints on DC drives, '
          f'walking {settings.steps} steps of {settings.stride:g} m '
          f'({controller.duration():.1f} s planned)', file=out)
    last = [-1.0]

    def report(sim, t):
        if t - last[0] >= 1.0 - 1e-9:
            last[0] = t
            where, _ = sim.link_pose('pelvis')
            print(f'  t = {t:5.2f} s  {controller.phase(t):13s} pelvis at x {where[0]:+.3f} '
                  f'y {where[1]:+.3f} z {where[2]:.3f} m', file=out)
    wall0 = time.perf_counter()
    run_headless(sim, controller, seconds, on_step=report)
    wall = time.perf_counter() - wall0
    where, _ = sim.link_pose('pelvis')
    print(f'  walked {where[0]:.3f} m in {sim.time:.2f} s simulated ({wall:.2f} s wall, '
          f'{sim.time / wall:.1f}x real time)', file=out)
    return sim


def run(robot, config, seconds, out=None):
    """Simulate and report on ``out`` (default stdout); return the Simulator."""
    out = out or sys.stdout
    t_load = time.perf_counter()
    sim = Simulator.from_urdf(str(robot), str(config) if config else None)
    load_s = time.perf_counter() - t_load
    model = sim.model
    print(f'robot {model.name!r} from {robot}', file=out)
    print(f'  {len(model.bodies)} bodies, {len(model.joints)} joints '
          f'({len(sim.joint_names)} movable: {", ".join(sim.joint_names)}), '
          f'{"floating" if model.floating_base else "fixed"} base, '
          f'{len(model.merged_joints)} fixed joints merged', file=out)
    for warning in model.warnings:
        print(f'  warning: {warning}', file=out)
    if not sim.config.initial_positions:
        # start bent so the passive arm visibly swings
        sim.set_joint_state({n: 0.5 * (-1) ** i for i, n in enumerate(sim.joint_names)})
    t0 = time.perf_counter()
    sim.step(1)  # compiles (or loads the compiled engine from cache)
    first_s = time.perf_counter() - t0
    n = max(1, int(round(seconds / sim.dt)))
    step_times = []
    report_every = max(1, int(round(1.0 / sim.dt)))
    wall0 = time.perf_counter()
    for k in range(1, n):
        t = time.perf_counter()
        report = sim.step(1)
        step_times.append(time.perf_counter() - t)
        if k % report_every == 0:
            q = np.array2string(sim.joint_positions(), precision=3, suppress_small=True)
            print(f'  t = {sim.time:5.2f} s  q = {q} rad  iterations {report.iterations} '
                  f'({report.stop_reason})', file=out)
    wall = time.perf_counter() - wall0
    median = float(np.median(step_times)) if step_times else float('nan')
    print(f'  dt {sim.dt * 1e3:g} ms, {n} steps; load {load_s:.2f} s, first step (compile or '
          f'cache load) {first_s:.2f} s', file=out)
    print(f'  median step {median * 1e6:.1f} us, real-time factor {sim.dt / median:.1f} '
          f'(wall {wall:.2f} s for {sim.time:.2f} s simulated, '
          f'{sim.time / wall if wall > 0 else float("inf"):.1f}x)', file=out)
    return sim


def main(argv=None):
    """Entry point of ``jointsim_headless`` and ``make run``."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    show_log()
    try:
        if args.humanoid:
            walk(args.robot or resources.share_file('urdf', 'jointsim_humanoid.urdf.xacro'),
                 args.config or resources.share_file('config', 'jointsim_humanoid.yaml'),
                 args.steps, args.seconds)
            return 0
        robot = args.robot or resources.share_file(*resources.DEFAULT_ROBOT)
        # the bundled arm's config (its drives) belongs to the bundled arm only; another robot
        # without --config runs with the defaults (config/default.yaml)
        config = args.config or (resources.share_file(*resources.DEFAULT_CONFIG)
                                 if args.robot is None else None)
        run(robot, config, 3.0 if args.seconds is None else args.seconds)
    except (JointsimError, FileNotFoundError) as error:
        print(f'jointsim_headless: {error}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
