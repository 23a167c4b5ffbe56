"""
Run a robot headless for a few simulated seconds and print what a user wants to see.

    python -m jointsim_ros.tools.headless [--robot FILE] [--config FILE] [--seconds S]
    python -m jointsim_ros.tools.headless --humanoid [--steps N] [--sensor-noise]
        [--push T FX FY]... [--open-loop]
    python -m jointsim_ros.tools.headless --humanoid --valve [--valve-friction NM]
    python -m jointsim_ros.tools.headless --world PATH [--seconds S]

Every form takes ``--formulation maximal|tree``: it replaces the config's
``solver.formulation`` (docs/tree.md); the result lines are the same in both.

Without arguments it runs the bundled default robot (urdf/jointsim_arm.urdf.xacro) with
config/jointsim_arm.yaml (a geared DC drive on every joint, all at 0 V), released from a bent
pose so it sags against the braking of its short-circuited motors.  ``--robot`` without
``--config`` runs that robot with the default config (no drives): the arm's config names the
arm's joints.  ``--humanoid`` runs the bundled humanoid (urdf/jointsim_humanoid.urdf.xacro,
config/jointsim_humanoid.yaml) with its walking controller (jointsim_ros.control.walking) in the
same process: it stands up, shifts its weight, walks ``--steps`` steps and stands
(docs/humanoid.md); ``--steps 0`` stands.  Each ``--push T FX FY`` pushes the pelvis with FX,
FY newtons (world x, y) for 0.1 s from simulated time T.  ``--sensor-noise`` adds encoder counts
and noise on every joint and noise on the ankle force-torque sensors (the pelvis IMU's noise
is in the humanoid's config, always on).  The last line printed is
``result: walked D m forward, lateral offset L m, fell: no`` (or ``fell: yes at t = T s``).

    python -m jointsim_ros.tools.headless --humanoid --valve [--valve-friction NM]

runs the valve scenario (urdf/jointsim_humanoid_valve.urdf.xacro,
config/jointsim_humanoid_valve.yaml, docs/valve.md): the humanoid reaches a hand wheel, grasps
it, turns it half a turn with wrist force feedback and lets go.  Its last line is
``result: valve turned A deg, squeeze S N (RMS error E N), feet slip P mm, fell: no``.
"""
import argparse
import math
import signal
import sys
import threading
import time

import numpy as np
import yaml

from . import show_log
from .. import resources
from ..control.walking import fallen  # noqa: F401 (the fall test, also demo's)
from ..description.config import load_config, with_formulation
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
    parser.add_argument('--push', nargs=3, type=float, action='append', default=[],
                        metavar=('T', 'FX', 'FY'),
                        help='--humanoid: push the pelvis with FX, FY N for 0.1 s from '
                             'simulated time T s (repeatable)')
    parser.add_argument('--sensor-noise', action='store_true',
                        help='--humanoid: encoder counts and noise on the joints, noise on '
                             'the ankle sensors (the IMU is noisy always)')
    parser.add_argument('--open-loop', action='store_true',
                        help='--humanoid: the planned gait played open loop (no feedback)')
    parser.add_argument('--view', nargs='?', type=int, const=8080, default=None, metavar='PORT',
                        help='show the run in the browser (docs/view.md; port 8080 unless '
                             'given): paced at real time, and served until Ctrl-C after the '
                             'last step')
    parser.add_argument('--valve', action='store_true',
                        help='--humanoid: the valve scenario (it turns a valve; docs/valve.md)')
    parser.add_argument('--valve-friction', type=float, default=None, metavar='NM',
                        help="--valve: the valve's Coulomb friction, N m (3 in the xacro)")
    parser.add_argument('--world', default=None, metavar='PATH',
                        help='a world file: several robots with their configs and poses '
                             '(docs/worlds.md); replaces --robot and --config')
    parser.add_argument('--formulation', choices=('maximal', 'tree'), default=None,
                        help="replace the config's solver.formulation: maximal (bodies and "
                             'constraint rows) or tree (generalized coordinates, exact joints; '
                             "docs/tree.md); default: the config's")
    return parser.parse_args(argv)


#: What ``--sensor-noise`` adds to the humanoid's config: every joint's motor encoder with
#: 2^14 lines behind its gear, 1e-4 rad of position noise, 0.01 rad/s of velocity noise and
#: 0.05 A of current noise; 1 N and 0.05 N m on the ankle sensors.
SENSOR_NOISE = {
    'joint_sensors': {'*': {'counts_per_revolution': 16384, 'position_noise': 1e-4,
                            'velocity_noise': 0.01, 'current_noise': 0.05}},
    'ankle_noise': {'force': 1.0, 'torque': 0.05},
}
#: Each push lasts this long, s.
PUSH_SECONDS = 0.1


def humanoid_config(config, sensor_noise, formulation=None):
    """
    Return the humanoid's config as a dict, with SENSOR_NOISE added when asked.

    ``formulation``: None (the config's), or the ``solver.formulation`` to run.
    """
    with open(config) as stream:
        data = yaml.safe_load(stream)
    if formulation:
        data.setdefault('solver', {})['formulation'] = formulation
    if sensor_noise:
        data['joint_sensors'] = SENSOR_NOISE['joint_sensors']
        for name, sensor in data.get('force_torque_sensors', {}).items():
            if 'ankle' in name:
                sensor['noise'] = dict(SENSOR_NOISE['ankle_noise'])
    return data


def walk(robot, config, steps, seconds=None, out=None, pushes=(), sensor_noise=False,
         open_loop=False, record=None, formulation=None):
    """
    Walk (or stand) the humanoid with a pushing schedule; report once a second.

    The controller is the balancing walk on the robot's own sensors
    (jointsim_ros.control.balance: encoders, pelvis IMU, ankle sensors), or with ``open_loop``
    the planned gait on joint states (jointsim_ros.control.walking).

    Returns:
        dict: ``walked`` (m, pelvis x travelled), ``lateral`` (m, pelvis y offset), ``fell``
        (None or the simulated time of the fall, s), ``sim``, ``controller``.
    """
    from ..description import load_model
    from ..control.balance import (BalancingWalkingController, run_closed_loop,
                                   sensor_measurements)
    from ..control.walking import GaitSettings, run_headless, WalkingController
    out = out or sys.stdout
    data = humanoid_config(config, sensor_noise, formulation)
    model, sim_config = load_model(str(robot), data)
    settings = GaitSettings.for_steps(steps)
    if open_loop:
        controller = WalkingController(model, sim_config, settings)
    else:
        controller = BalancingWalkingController(model, sim_config, settings)
    sim = Simulator(model, sim_config)
    seconds = controller.duration() + 1.0 if seconds is None else seconds
    print(f'humanoid {model.name!r} from {robot}: {len(sim.joint_names)} joints on DC drives, '
          f'walking {settings.steps} steps of {settings.stride:g} m '
          f'({controller.duration():.1f} s planned), '
          f'{"open loop" if open_loop else "closed loop"}'
          f'{", sensor noise on" if sensor_noise else ""}, '
          f'{sim_config.solver.formulation} formulation', file=out)
    start, _ = sim.link_pose('pelvis')
    last = [-1.0]
    fell = [None]
    pushes = sorted((float(t), float(fx), float(fy)) for t, fx, fy in pushes)

    def on_step(sim, t):
        force = np.zeros(3)
        for when, fx, fy in pushes:
            if when <= t + 1e-9 < when + PUSH_SECONDS:
                force += (fx, fy, 0.0)
        sim.set_link_wrench('pelvis', force)
        if record is not None:
            record.setdefault('push', []).append(force.copy())
        where, quat = sim.link_pose('pelvis')
        if fell[0] is None and fallen(start[2], where[2], quat[1], quat[2]):
            fell[0] = t
            raise _Fallen()
        if t - last[0] >= 1.0 - 1e-9:
            last[0] = t
            print(f'  t = {t:5.2f} s  {controller.phase(t):13s} pelvis at x {where[0]:+.3f} '
                  f'y {where[1]:+.3f} z {where[2]:.3f} m'
                  + (f'  push {force[0]:+.0f} {force[1]:+.0f} N' if force.any() else ''),
                  file=out)
    wall0 = time.perf_counter()
    try:
        if open_loop:
            run_headless(sim, controller, seconds, on_step=on_step, record=record)
        else:
            run_closed_loop(sim, controller, seconds, sensor_measurements, on_step=on_step,
                            record=record)
    except _Fallen:
        pass
    wall = time.perf_counter() - wall0
    where, _ = sim.link_pose('pelvis')
    print(f'  {sim.time:.2f} s simulated in {wall:.2f} s wall '
          f'({sim.time / wall:.1f}x real time)', file=out)
    result = {'walked': float(where[0] - start[0]), 'lateral': float(where[1] - start[1]),
              'fell': fell[0], 'sim': sim, 'controller': controller}
    print(result_line(result), file=out)
    return result


def valve(robot=None, config=None, seconds=None, out=None, friction=None, record=None,
          settings=None, formulation=None):
    """
    Run the valve scenario (docs/valve.md): the humanoid turns the valve; report once a second.

    The controller (jointsim_ros.control.valve) reads the robot's own description (the bundled
    humanoid's files) and its sensors; the figures are the simulator's ground truth.

    Args:
        robot, config: the scenario's files (default: the bundled valve scenario).
        friction: None, or the valve's Coulomb friction, N m (config joints.valve.friction).
        formulation: None (the config's), or the ``solver.formulation`` to run.
        record: None, or a dict that receives per-period lists (see
            :func:`jointsim_ros.control.valve.ScenarioRecorder`).
        settings: ValveSettings for the controller.

    Returns:
        dict: ``turned`` (deg), ``squeeze`` (N, mean over the turn), ``squeeze_rms`` (N, RMS
        error from the set value over the turn), ``slip`` (m, the feet's largest horizontal
        displacement), ``tilt`` (rad, the pelvis' largest), ``fell`` (None or s), ``sim``,
        ``controller``, ``record``.
    """
    from ..control.valve import ScenarioRecorder, run_valve, ValveController
    from ..description import load_model
    from ..description.config import config_data
    out = out or sys.stdout
    robot = robot or resources.share_file('urdf', 'jointsim_humanoid_valve.urdf.xacro')
    config = config or resources.share_file('config', 'jointsim_humanoid_valve.yaml')
    data = config_data(str(config))
    if friction is not None:
        data.setdefault('joints', {}).setdefault('valve', {})['friction'] = float(friction)
    if formulation:
        data.setdefault('solver', {})['formulation'] = formulation
    sim = Simulator(*load_model(str(robot), data))
    own = load_model(resources.share_file('urdf', 'jointsim_humanoid.urdf.xacro'),
                     resources.share_file('config', 'jointsim_humanoid.yaml'))
    controller = ValveController(*own, valve=settings)
    seconds = controller.duration() if seconds is None else seconds
    valve_joint = next(j for j in sim.model.joints if j.name == 'valve')
    print(f'valve scenario from {robot}: the humanoid turns a valve of radius '
          f'{controller.valve.radius:g} m ({valve_joint.friction:g} N m friction, '
          f'{valve_joint.damping:g} N m s/rad damping) by '
          f'{math.degrees(controller.valve.turn):.0f} deg with a squeeze of '
          f'{controller.valve.squeeze:g} N; {sim.config.solver.formulation} formulation',
          file=out)
    recorder = ScenarioRecorder(sim, controller, record)
    last = [-1.0]
    logged = [0]

    def on_period(sim):
        recorder(sim)
        for t, line in controller.log[logged[0]:]:
            print(f'  t = {t:5.2f} s  {line}', file=out)
        logged[0] = len(controller.log)
        if sim.time - last[0] >= 1.0 - 1e-9:
            last[0] = sim.time
            print('  ' + recorder.status_line(), file=out)
    wall0 = time.perf_counter()
    run_valve(sim, controller, seconds, on_period=on_period, stop=recorder.fell)
    wall = time.perf_counter() - wall0
    print(f'  {sim.time:.2f} s simulated in {wall:.2f} s wall '
          f'({sim.time / wall:.1f}x real time)', file=out)
    result = recorder.result()
    result.update(sim=sim, controller=controller, record=recorder.record)
    print(valve_result_line(result), file=out)
    return result


def valve_result_line(result):
    """
    Return the last line of a valve run.

    ``result: valve turned A deg, squeeze S N (RMS error E N), feet slip P mm, fell: no``.
    """
    fell = 'no' if result['fell'] is None else f'yes at t = {result["fell"]:.2f} s'
    return (f'result: valve turned {result["turned"]:.0f} deg, squeeze {result["squeeze"]:.1f} N '
            f'(RMS error {result["squeeze_rms"]:.1f} N), feet slip {1e3 * result["slip"]:.2f} mm, '
            f'fell: {fell}')


class _Fallen(Exception):
    """Raised from the step hook to end a run when the robot has fallen."""


def result_line(result):
    """Return the last line: ``result: walked D m forward, lateral offset L m, fell: no``."""
    fell = 'no' if result['fell'] is None else f'yes at t = {result["fell"]:.2f} s'
    return (f'result: walked {result["walked"]:.3f} m forward, lateral offset '
            f'{result["lateral"]:.3f} m, fell: {fell}')


def run(robot, config, seconds, out=None, view=None, formulation=None, world=None):
    """
    Simulate and report on ``out`` (default stdout); return the Simulator.

    ``formulation``: None (the config's), or the ``solver.formulation`` to run.
    ``world``: a world file (docs/worlds.md) to run instead of ``robot`` and ``config``.

    ``view``: a port to show the run in the browser on (SimulatorView): the steps are then
    paced at real time and drawn at VIEW_RATE, and the page is served until Ctrl-C.
    """
    out = out or sys.stdout
    t_load = time.perf_counter()
    if world is not None:
        sim = Simulator.from_world(str(world), formulation or '')
    else:
        sim_config = with_formulation(load_config(str(config) if config else None),
                                      formulation)
        sim = Simulator.from_urdf(str(robot), sim_config)
    load_s = time.perf_counter() - t_load
    model = sim.model
    if world is not None:
        print(f'world from {world}: {len(sim.robots)} robots, '
              f'{sim.config.solver.formulation} formulation', file=out)
        for name, part in zip(sim.robots, model.robots):
            one = sim.robots[name]
            print(f'  robot {name!r} from {part.source}: {len(one.joint_names)} movable joints '
                  f'({len(one.drive_names)} driven), {"floating" if part.floating else "fixed"} '
                  'base', file=out)
    else:
        print(f'robot {model.name!r} from {robot}', file=out)
        print(f'  {len(model.bodies)} bodies, {len(model.joints)} joints '
              f'({len(sim.joint_names)} movable: {", ".join(sim.joint_names)}), '
              f'{"floating" if model.floating_base else "fixed"} base, '
              f'{len(model.merged_joints)} fixed joints merged, '
              f'{sim.config.solver.formulation} formulation', file=out)
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
    shown = None
    if view is not None:
        from ..view.simulator_view import SimulatorView

        def announce(text):
            print(text, file=out, flush=True)
        shown = SimulatorView(sim, view, announce=announce)
    pacing = {}
    wall0 = time.perf_counter()
    for k in range(1, n):
        if shown is not None and _pace(shown, sim, wall0, pacing) is None:
            continue
        t = time.perf_counter()
        report = sim.step(1)
        step_times.append(time.perf_counter() - t)
        if k % report_every == 0:
            q = np.array2string(sim.joint_positions(), precision=3, suppress_small=True)
            print(f'  t = {sim.time:5.2f} s  q = {q} rad  iterations {report.iterations} '
                  f'({report.stop_reason})', file=out)
    wall = time.perf_counter() - wall0
    if shown is not None:
        _serve(shown, out)
    median = float(np.median(step_times)) if step_times else float('nan')
    print(f'  dt {sim.dt * 1e3:g} ms, {n} steps; load {load_s:.2f} s, first step (compile or '
          f'cache load) {first_s:.2f} s', file=out)
    print(f'  median step {median * 1e6:.1f} us, real-time factor {sim.dt / median:.1f} '
          f'(wall {wall:.2f} s for {sim.time:.2f} s simulated, '
          f'{sim.time / wall if wall > 0 else float("inf"):.1f}x)', file=out)
    return sim


#: Drawings per wall-clock second of ``--view``.
VIEW_RATE = 30.0


def _pace(shown, sim, wall0, state):
    """
    Hold a viewed run at real time, draw it at VIEW_RATE, obey its buttons.

    ``state``: the run's pacing (last drawing, paused time); None is returned while paused.
    """
    now = time.perf_counter()
    if now - state.get('drawn', 0.0) >= 1.0 / VIEW_RATE:
        shown.update()
        state['drawn'] = now
    while shown.requests:
        request = shown.requests.pop(0)
        if request == 'reset':
            sim.reset()
        else:
            sim.step(1)
    if shown.paused:
        time.sleep(1.0 / VIEW_RATE)
        state['offset'] = state.get('offset', 0.0) + (time.perf_counter() - now)
        return None
    ahead = sim.time - (time.perf_counter() - wall0 - state.get('offset', 0.0))
    if ahead > 0.0:
        time.sleep(ahead)
    return now


def _serve(shown, out):
    """Keep drawing the last state until Ctrl-C."""
    # Ctrl-C sets a flag rather than raising KeyboardInterrupt wherever the main thread is: in
    # the view server's code, a lock or future left behind by the exception could hang its
    # stop (a loaded CI machine's run did not end within 20 s of SIGINT). The flag is set up
    # before the line that invites Ctrl-C (a SIGINT right after the line escaped once in CI)
    stop = threading.Event()
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set()) if main_thread else None
    try:
        print('  view: the run is over; the page stays up until Ctrl-C', file=out, flush=True)
        while not stop.wait(1.0 / VIEW_RATE):
            shown.update()
    except KeyboardInterrupt:
        pass
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, previous)
        shown.close()


def main(argv=None):
    """Entry point of ``jointsim_headless`` and ``make run``."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    show_log()
    if args.view is not None and args.humanoid:
        print('jointsim_headless: --view shows the plain run (the bundled arm or --robot); '
              "the humanoid's view is make run ARGS=--humanoid's", file=sys.stderr)
        return 2
    try:
        if args.humanoid and args.valve:
            valve(args.robot, args.config, args.seconds, friction=args.valve_friction,
                  formulation=args.formulation)
            return 0
        if args.humanoid:
            walk(args.robot or resources.share_file('urdf', 'jointsim_humanoid.urdf.xacro'),
                 args.config or resources.share_file('config', 'jointsim_humanoid.yaml'),
                 args.steps, args.seconds, pushes=args.push, sensor_noise=args.sensor_noise,
                 open_loop=args.open_loop, formulation=args.formulation)
            return 0
        if args.world:
            run(None, None, 3.0 if args.seconds is None else args.seconds, view=args.view,
                formulation=args.formulation, world=args.world)
            return 0
        robot = args.robot or resources.share_file(*resources.DEFAULT_ROBOT)
        # the bundled arm's config (its drives) belongs to the bundled arm only; another robot
        # without --config runs with the defaults (config/default.yaml)
        config = args.config or (resources.share_file(*resources.DEFAULT_CONFIG)
                                 if args.robot is None else None)
        run(robot, config, 3.0 if args.seconds is None else args.seconds, view=args.view,
            formulation=args.formulation)
    except (JointsimError, FileNotFoundError) as error:
        print(f'jointsim_headless: {error}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
