"""
``make run``: the simulator node and the example controller on the bundled arm, with a status.

    python -m jointsim_ros.tools.demo [--effort] [--robot FILE] [--config FILE] [--seconds S]
    python -m jointsim_ros.tools.demo --humanoid [--steps N] [--seconds S] [--sensor-noise]
        [--push T FX FY]...
    python -m jointsim_ros.tools.demo --humanoid --valve [--seconds S] [--push T FX FY]...
    python -m jointsim_ros.tools.demo --world PATH [--effort | --voltage] [--seconds S]
    python -m jointsim_ros.tools.demo --rover [--seconds S]
    python -m jointsim_ros.tools.demo --headless [headless options]

Every form takes ``--formulation maximal|tree`` (the node's ``formulation`` parameter: it
replaces the config's ``solver.formulation``, docs/tree.md).

Starts ``jointsim_node`` and ``jointsim_example_controller`` as two processes: by default the
arm with its DC drives (config/jointsim_arm.yaml) under voltage control; ``--effort``: the bare
arm (config/default.yaml) under effort control (loose: see example_controller).  It prints the
joint positions once a second from ``joint_states`` and ends both cleanly on Ctrl-C (or after
``--seconds`` of wall time).
``--humanoid``: the bundled humanoid (urdf/jointsim_humanoid.urdf.xacro) and its walking
controller (``jointsim_humanoid_controller``): it stands up, shifts its weight and walks
``--steps`` steps (10), then stands; the status line shows where the pelvis is.  Each
``--push T FX FY`` pushes the pelvis with FX, FY newtons for 0.1 s from simulated time T (sent
on the node's ``link_wrench`` topic, scheduled there in simulated time); ``--sensor-noise`` as
the headless tool's.  1 s of simulated time after the walk (or when it falls) the humanoid
run prints ``result: walked D m forward, lateral offset L m, fell: no``, as
``jointsim_headless --humanoid`` does; with ``--no-view`` that ends it, with the browser view
on it runs on (the humanoid standing) until Ctrl-C or ``--seconds``.
``--humanoid --valve``: the valve scenario (urdf/jointsim_humanoid_valve.urdf.xacro with
config/jointsim_humanoid_valve.yaml, docs/valve.md) and ``jointsim_humanoid_controller
--valve``: the humanoid reaches a hand wheel, grasps it (the node's grasp/NAME services), turns
it half a turn and lets go.  The controller prints what it does and its own figures (squeeze,
tangential forces, torque) once a second; the status line here shows the valve joint's angle
(``joint_states``) and the force each wrist sensor reads (``l_wrist_ft/wrench``,
``r_wrist_ft/wrench``; the hand's weight included).  It ends 1 s of simulated time after the
task (or when the robot falls) with ``result: valve turned A deg, fell: no``.
``--world PATH``: a world of several robots (config/two_arms.world.yaml): the node with
``world_file``, one example controller per robot in the robot's namespace (``-r
__ns:=/NAME``: it reads ``/NAME/joint_states`` and commands ``/NAME/joint_voltage_commands``),
the browser view showing every robot; the status line shows each robot's joints.
``--rover``: the bundled rover (urdf/jointsim_rover.urdf.xacro with config/jointsim_rover.yaml:
four wheels on 12 V DC drives, a 2-D lidar, an arena of walls and boxes) and
``jointsim_rover_controller``, which reads only the lidar's LaserScan and drives among the
boxes by the wheels' voltages, steering away from what it sees; the status line shows where
the rover is, its heading and the nearest thing the lidar sees, and the controller says what
it does; the browser view draws the scan.
``--headless`` runs ``jointsim_ros.tools.headless`` instead, without ROS.
"""
import argparse
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time

from jointsim_ros import resources
from transforms3d.euler import quat2euler

#: Longest wait for the node to be ready (the first run compiles the engine), s.
START_TIMEOUT = 120.0
#: The walk's node: a late tick takes at most 1.4 ticks of steps (7 at 200 Hz) and keeps a lag
#: below that instead of dropping it (docs/humanoid.md, "Walking"; humanoid.launch.py too).
WALK_CATCH_UP_TICKS = 1.4
#: The valve scenario's valve joint and the humanoid's wrist sensors (side, sensor name).
VALVE_JOINT = 'valve'
#: The valve scenario's real_time_factor unless --real-time-factor says otherwise.
VALVE_REAL_TIME_FACTOR = 0.5
WRIST_SENSORS = (('l', 'l_wrist_ft'), ('r', 'r_wrist_ft'))


def say(text, file=None):
    """
    Write ``text`` and its newline to stdout (or ``file``) in one write, then flush.

    The node and the controller write to the same pipe: with ``PYTHONUNBUFFERED`` set, print()
    writes the text and its newline apart and another process's log line can land between them
    (a CI run saw ``fell: no[INFO] ...``), breaking the result line other tools read.
    """
    file = file or sys.stdout
    file.write(f'{text}\n')
    file.flush()


def parse_args(argv):
    """Command-line arguments."""
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('--effort', action='store_true',
                        help='effort control of the bare arm (default config: default.yaml)')
    parser.add_argument('--voltage', action='store_true',
                        help='voltage control of the DC drives (the default)')
    parser.add_argument('--robot', help='URDF or xacro file (default: the bundled arm)')
    parser.add_argument('--config', help='simulator YAML (default: config/jointsim_arm.yaml, '
                        'or config/default.yaml with --effort)')
    parser.add_argument('--world', metavar='PATH',
                        help='a world file of several robots (config/two_arms.world.yaml): '
                             'one example controller per robot, in its namespace')
    parser.add_argument('--humanoid', action='store_true',
                        help='the bundled humanoid walking (its own controller)')
    parser.add_argument('--rover', action='store_true',
                        help='the bundled rover driving among boxes on its lidar (its own '
                             'controller)')
    parser.add_argument('--valve', action='store_true',
                        help='--humanoid: the valve scenario (it turns a hand wheel; '
                             'docs/valve.md)')
    parser.add_argument('--steps', type=int, default=10,
                        help='--humanoid: number of steps to walk (10)')
    parser.add_argument('--seconds', type=float, default=0.0,
                        help='stop after this many wall-clock seconds (0: run until Ctrl-C)')
    parser.add_argument('--push', nargs=3, type=float, action='append', default=[],
                        metavar=('T', 'FX', 'FY'),
                        help='--humanoid: push the pelvis with FX, FY N for 0.1 s from '
                             'simulated time T s (repeatable)')
    parser.add_argument('--sensor-noise', action='store_true',
                        help='--humanoid: encoder and ankle sensor noise (as jointsim_headless)')
    parser.add_argument('--formulation', choices=('maximal', 'tree'), default=None,
                        help="the node's formulation parameter: replaces the config's "
                             "solver.formulation (docs/tree.md); default: the config's")
    parser.add_argument('--no-view', action='store_true',
                        help='do not start the browser view (jointsim_view, docs/view.md)')
    parser.add_argument('--view-port', type=int, default=8080,
                        help='port of the browser view (default 8080; in use: a free one)')
    parser.add_argument('--real-time-factor', type=float, default=None,
                        help="--humanoid: the node's real_time_factor (default 1: real time; "
                             '--valve: 0.5, see docs/valve.md; less leaves a loaded machine '
                             "room for the controller's 200 Hz)")
    return parser.parse_args(argv)


def ros_environment():
    """Return this process's environment with the project's ROS settings filled in."""
    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env.setdefault('FASTDDS_BUILTIN_TRANSPORTS', 'UDPv4')
    try:
        env.setdefault('FASTDDS_DEFAULT_PROFILES_FILE',
                       str(resources.share_file('config', 'fastdds_profile.xml')))
    except FileNotFoundError:
        pass
    return env


def start(module, *args, log=None):
    """Start ``python -m module args`` with the full environment (the ROS wheels need it)."""
    # a session of its own: Ctrl-C reaches only this process, which stops the others once
    return subprocess.Popen([sys.executable, '-m', module, *args], env=ros_environment(),
                            stdout=log, stderr=subprocess.STDOUT if log else None,
                            start_new_session=True)


def stop(processes):
    """SIGINT every process still running, then SIGKILL what has not ended after 5 s."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + 5.0
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


#: Set by Ctrl-C, a terminate or a hang-up while the demo runs: watch() then returns.
STOP = threading.Event()


def watch(seconds, processes, base=None, pushes=(), until=None, valve=False, keep=False,
          robots=(), scan=None):
    """
    Print the joint positions once a second until Ctrl-C, a process ends, or time is up.

    With ``base`` (a link name) print where that link is (from /tf) instead of the joints.
    ``pushes`` [(T, FX, FY)] are sent at once on ``link_wrench`` for ``base`` (start and end
    of each, in simulated time).  With ``until`` (simulated s) it stops there, or when
    ``base`` has fallen, and prints the headless tool's result line.  With ``valve`` (the
    valve scenario) print the valve joint's angle and the wrist sensors' forces instead, and
    end with ``result: valve turned A deg, fell: no``.  With ``keep`` the result line does not
    end it: the robot goes on standing (its controller holds it) until Ctrl-C or time is up,
    for someone watching the view.  With ``robots`` (a world's robot names) print each robot's
    joints, from its ``NAME/joint_states``, on one line.  With ``scan`` (a LaserScan topic) and
    ``base``, print the base's heading and the nearest reading of the scan too.
    """
    os.environ.update({k: v for k, v in ros_environment().items() if k not in os.environ})
    import rclpy
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState
    # Ctrl-C sets STOP (run_node_and_controller's handler; rclpy's would shut the context
    # down): a KeyboardInterrupt raised inside rclpy's take_message came out as pybind11's
    # "Unable to convert call argument" RuntimeError with a traceback
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('jointsim_demo_status')
    latest = []
    latest_valve = [math.nan]

    def on_state(msg):
        latest.append(msg)
        if valve:
            latest_valve[0] = valve_angle(msg)
    latest_of = {}
    if robots:
        for name in robots:
            node.create_subscription(JointState, f'{name}/joint_states',
                                     lambda msg, name=name: latest_of.__setitem__(name, msg), 10)
            # the line's time and pace: the first robot's states
            if name == robots[0]:
                node.create_subscription(JointState, f'{name}/joint_states', on_state, 10)
    else:
        node.create_subscription(JointState, 'joint_states', on_state, 10)
    where = {}
    track = {'start': None, 'last_t': None, 'fell': None}
    if base:
        from tf2_msgs.msg import TFMessage

        # the pushes, the fall and the result line as jointsim_headless has them
        from jointsim_ros.tools.headless import fallen, PUSH_SECONDS, result_line

        def on_tf(msg):
            for transform in msg.transforms:
                if transform.child_frame_id == base:
                    where['xyz'] = p = transform.transform.translation
                    where['quat'] = q = transform.transform.rotation
                    t = transform.header.stamp.sec + transform.header.stamp.nanosec * 1e-9
                    if track['last_t'] is None or t < track['last_t'] - 1e-6:
                        track['start'], track['fell'] = (p.x, p.y, p.z), None  # a reset
                    track['last_t'] = t
                    if track['fell'] is None and fallen(track['start'][2], p.z, q.x, q.y):
                        track['fell'] = t
        node.create_subscription(TFMessage, '/tf', on_tf, 100)
        if pushes:
            from geometry_msgs.msg import WrenchStamped
            from jointsim_ros.ros.node import LINK_WRENCH_QOS, LINK_WRENCH_TOPIC
            pusher = node.create_publisher(WrenchStamped, LINK_WRENCH_TOPIC, LINK_WRENCH_QOS)
            for t, fx, fy in sorted(pushes):
                for at, force in ((t, (fx, fy)), (t + PUSH_SECONDS, (0.0, 0.0))):
                    msg = WrenchStamped()
                    msg.header.frame_id = base
                    msg.header.stamp.sec = int(at)
                    msg.header.stamp.nanosec = int(round((at - int(at)) * 1e9))
                    msg.wrench.force.x, msg.wrench.force.y = force
                    pusher.publish(msg)
    nearest = {}
    if scan:
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import LaserScan

        def on_scan(msg):
            ranges = [(r, k) for k, r in enumerate(msg.ranges) if math.isfinite(r)]
            if ranges:
                r, k = min(ranges)
                nearest['reading'] = (r, msg.angle_min + k * msg.angle_increment)
            else:
                nearest.pop('reading', None)
        node.create_subscription(LaserScan, scan, on_scan, qos_profile_sensor_data)
    wrists = {}
    if valve:
        from geometry_msgs.msg import WrenchStamped

        def on_wrist(side, msg):
            f = msg.wrench.force
            wrists[side] = math.sqrt(f.x * f.x + f.y * f.y + f.z * f.z)
        for side, sensor in WRIST_SENSORS:
            node.create_subscription(WrenchStamped, f'{sensor}/wrench',
                                     lambda msg, side=side: on_wrist(side, msg), 10)
    start_wall = time.monotonic()
    last_print, last_sim = start_wall, None
    try:
        while not STOP.is_set() and (not seconds or time.monotonic() - start_wall < seconds):
            rclpy.spin_once(node, timeout_sec=0.1)
            if any(p.poll() is not None for p in processes):
                return
            if until is not None and track['last_t'] is not None and track['start'] and (
                    track['last_t'] >= until or track['fell'] is not None):
                p = where['xyz']
                if valve:
                    say(valve_result(latest_valve[0], track['fell']))
                else:
                    say(result_line({'walked': p.x - track['start'][0],
                                     'lateral': p.y - track['start'][1],
                                     'fell': track['fell']}))
                if not keep:
                    return
                until = None
                say('jointsim demo: done; the simulation runs on (the view shows it) until '
                    'Ctrl-C')
            now = time.monotonic()
            # four lines a second during the first simulated second (the motion shows at once),
            # then one
            period = 0.25 if last_sim is None or last_sim < 1.0 else 1.0
            if latest and now - last_print >= period:
                msg = latest[-1]
                latest.clear()
                t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
                rate = ('' if last_sim is None
                        else f'  ({(t - last_sim) / (now - last_print):.2f}x real time)')
                if valve:
                    shown = (f'valve {valve_angle(msg):+7.1f} deg, wrist sensors '
                             + '/'.join(f'{wrists[side]:.1f}' if side in wrists else '-'
                                        for side, _ in WRIST_SENSORS) + ' N (l/r)')
                elif base:
                    p = where.get('xyz')
                    shown = (f'{base} at x {p.x:+.3f} y {p.y:+.3f} z {p.z:.3f} m' if p
                             else f'{base}: no /tf yet')
                    if scan and p:
                        q = where['quat']
                        heading = quat2euler((q.w, q.x, q.y, q.z), 'sxyz')[2]
                        shown += f', heading {math.degrees(heading):+4.0f} deg'
                        if 'reading' in nearest:
                            r, angle = nearest['reading']
                            shown += (f', lidar: nearest {r:.2f} m at '
                                      f'{math.degrees(angle):+4.0f} deg')
                elif robots:
                    shown = '  '.join(
                        f'{name} q = [' + ' '.join(f'{v:+.2f}' for v in latest_of[name].position)
                        + ']' for name in robots if name in latest_of) + ' rad'
                else:
                    shown = 'q = [' + ' '.join(f'{v:+.2f}' for v in msg.position) + '] rad'
                say(f't = {t:7.2f} s  {shown}{rate}')
                last_print, last_sim = now, t
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def valve_angle(msg):
    """Return the valve joint's angle, deg, in a joint_states message (NaN without it)."""
    names = list(msg.name)
    if VALVE_JOINT not in names:
        return math.nan
    return math.degrees(msg.position[names.index(VALVE_JOINT)])


def valve_result(turned, fell):
    """Return ``result: valve turned A deg, fell: no`` (the headless line's first figure)."""
    fell = 'no' if fell is None else f'yes at t = {fell:.2f} s'
    return f'result: valve turned {turned:.0f} deg, fell: {fell}'


def main(argv=None):
    """Entry point of ``make run``."""
    argv = sys.argv[1:] if argv is None else argv
    if '--headless' in argv:
        from jointsim_ros.tools import headless
        return headless.main([a for a in argv if a != '--headless'])
    args = parse_args(argv)
    if args.humanoid:
        return humanoid(args)
    if args.world:
        return world(args)
    if args.rover:
        return rover(args)
    robot = args.robot or str(resources.share_file(*resources.DEFAULT_ROBOT))
    if args.effort and args.voltage:
        say('jointsim demo: give --effort or --voltage, not both', file=sys.stderr)
        return 2
    config = args.config or str(resources.share_file(
        'config', 'default.yaml' if args.effort else 'jointsim_arm.yaml'))
    mode = 'effort' if args.effort else ('voltage' if args.voltage else 'auto')
    domain = os.environ.get('ROS_DOMAIN_ID', '0')
    what = {'auto': 'voltage control if it has drives, else effort', 'voltage': 'voltage control',
            'effort': 'effort control'}[mode]
    say(f'jointsim demo: {robot} with {config}, {what}; ROS_DOMAIN_ID={domain}\n'
        f'  watch it from another shell:  ROS_DOMAIN_ID={domain} '
        f'{Path(sys.executable)} -m jointsim_ros.tools.echo joint_states\n'
        f'  (on a ROS install: ROS_DOMAIN_ID={domain} ros2 topic echo /joint_states)\n'
        f'  Ctrl-C stops.')
    return run_node_and_controller(
        node_args(args, robot_description_file=robot, config_file=config),
        ['jointsim_ros.tools.example_controller', '--mode', mode], args.seconds,
        view=None if args.no_view else args.view_port)


def node_args(args, **parameters):
    """
    Return the node's ROS arguments: ``-p NAME:=VALUE`` of each parameter, then --formulation's.

    The ``formulation`` parameter only where ``--formulation`` was given.
    """
    if args.formulation:
        parameters['formulation'] = args.formulation
    out = []
    for name, value in parameters.items():
        out += ['-p', f'{name}:={value}']
    return out


def run_node_and_controller(node_args, controller, seconds, base=None, pushes=(), until=None,
                            valve=False, view=None, robots=(), scan=None):
    """
    Run the node (ROS arguments ``node_args``) and ``python -m controller...``; watch them.

    ``controller`` is one argument list, or a list of them (a world: one per robot).
    ``robots``: a world's robot names, ``scan``: a LaserScan topic, for the status line
    (``watch``).

    ``view``: the port of a browser view to start with them (jointsim_view), or None.  With a
    view, reaching ``until`` prints the result line and runs on until Ctrl-C (or ``seconds``):
    the node, the controller and the view keep going, so a view opened late still shows it.

    A terminate or hang-up (a closed terminal, a supervisor) stops both as Ctrl-C does,
    instead of leaving them running.  Returns the exit status: the node's when it ended
    first, else 0.
    """
    STOP.clear()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda *_: STOP.set())
    node = start('jointsim_ros.ros.node', '--ros-args', *node_args)
    processes = [node]
    status = 0
    try:
        for one in (controller if isinstance(controller[0], (list, tuple)) else [controller]):
            processes.append(start(*one))
        if view is not None:
            # the browser view prints `view: http://127.0.0.1:PORT` once it serves
            processes.append(start('jointsim_ros.view.node', '--ros-args', '-p',
                                   f'port:={view}'))
        watch(seconds, processes, base=base, pushes=pushes, until=until, valve=valve,
              keep=view is not None, robots=robots, scan=scan)
        if node.poll() is not None:
            status = node.returncode or 1
            say(f'jointsim demo: the node ended with status {node.returncode}',
                file=sys.stderr)
    finally:
        stop(processes)
    say('jointsim demo: stopped')
    return status


def world_robots(path):
    """
    Return the robot names of a world file, in its order.

    Raises:
        ValueError: the file has no robots mapping (the node says more).
    """
    import yaml
    with open(path, encoding='utf-8') as stream:
        data = yaml.safe_load(stream) or {}
    robots = data.get('robots') if isinstance(data, dict) else None
    if not isinstance(robots, dict) or not robots:
        raise ValueError(f'{path}: no robots mapping (docs/node.md, "Worlds")')
    return [str(name) for name in robots]


def world(args):
    """``make run ARGS='--world PATH'``: the world's node, a controller per robot, the view."""
    if args.effort and args.voltage:
        say('jointsim demo: give --effort or --voltage, not both', file=sys.stderr)
        return 2
    path = os.path.abspath(os.path.expanduser(args.world))
    try:
        robots = world_robots(path)
    except (OSError, ValueError) as error:
        say(f'jointsim demo: {error}', file=sys.stderr)
        return 2
    mode = 'effort' if args.effort else ('voltage' if args.voltage else 'auto')
    domain = os.environ.get('ROS_DOMAIN_ID', '0')
    say(f'jointsim demo: the world {path}: robots {", ".join(robots)}, one example '
        f'controller each in its namespace; ROS_DOMAIN_ID={domain}\n'
        f'  watch one from another shell:  ROS_DOMAIN_ID={domain} '
        f'{Path(sys.executable)} -m jointsim_ros.tools.echo {robots[0]}/joint_states\n'
        f'  Ctrl-C stops.')
    controllers = [['jointsim_ros.tools.example_controller', '--mode', mode, '--ros-args',
                    '-r', f'__ns:=/{name}'] for name in robots]
    return run_node_and_controller(
        node_args(args, world_file=path), controllers, args.seconds,
        view=None if args.no_view else args.view_port, robots=robots)


def rover(args):
    """``make run ARGS=--rover``: the rover's node, its lidar controller and the view."""
    robot = args.robot or str(resources.share_file('urdf', 'jointsim_rover.urdf.xacro'))
    config = args.config or str(resources.share_file('config', 'jointsim_rover.yaml'))
    domain = os.environ.get('ROS_DOMAIN_ID', '0')
    say(f'jointsim demo: the rover {robot} with {config}: it drives among the boxes of its '
        f'arena on its 12 V wheel drives, steering away from what its lidar sees '
        f'(jointsim_rover_controller); ROS_DOMAIN_ID={domain}\n'
        f'  watch the scan from another shell:  ROS_DOMAIN_ID={domain} '
        f'{Path(sys.executable)} -m jointsim_ros.tools.echo lidar/scan\n'
        f'  Ctrl-C stops.')
    return run_node_and_controller(
        node_args(args, robot_description_file=robot, config_file=config),
        ['jointsim_ros.tools.rover_controller'], args.seconds, base='base_link',
        view=None if args.no_view else args.view_port, scan='lidar/scan')


def humanoid(args):
    """``make run ARGS=--humanoid``: the humanoid node and its walking controller."""
    if args.valve:
        return valve_scenario(args)
    import tempfile

    import yaml

    from jointsim_ros.control.walking import GaitSettings
    from jointsim_ros.tools.headless import humanoid_config
    robot = args.robot or str(resources.share_file('urdf', 'jointsim_humanoid.urdf.xacro'))
    config = args.config or str(resources.share_file('config', 'jointsim_humanoid.yaml'))
    if args.sensor_noise:
        noisy = tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False)
        yaml.safe_dump(humanoid_config(config, True), noisy)
        noisy.close()
        config = noisy.name
    domain = os.environ.get('ROS_DOMAIN_ID', '0')
    say(f'jointsim demo: the humanoid {robot} with {config}, walking {args.steps} steps on '
        f'its DC drives; ROS_DOMAIN_ID={domain}\n'
        f'  watch it in rviz2 (fixed frame world, RobotModel on /robot_description) or\n'
        f'  {Path(sys.executable)} -m jointsim_ros.tools.echo joint_states\n'
        f'  Ctrl-C stops.')
    settings = GaitSettings.for_steps(args.steps)
    # 200 joint states a second: the controller's rate (docs/humanoid.md, "Walking")
    return run_node_and_controller(
        # a late tick takes at most 7 steps (the walk's controller stands periods of 3-8 ms,
        # docs/humanoid.md) and keeps the rest of a small lag instead of dropping it
        node_args(args, robot_description_file=robot, config_file=config, publish_rate=200.0,
                  real_time_factor=(1.0 if args.real_time_factor is None
                                    else args.real_time_factor),
                  catch_up_ticks=WALK_CATCH_UP_TICKS),
        ['jointsim_ros.tools.humanoid_controller', '--robot', robot, '--config', config,
         '--steps', str(args.steps)], args.seconds, base='pelvis', pushes=args.push,
        until=settings.duration() + 1.0, view=None if args.no_view else args.view_port)


def valve_scenario(args):
    """``make run ARGS='--humanoid --valve'``: the valve scenario's node and the controller."""
    from jointsim_ros.control.valve import ValveController
    from jointsim_ros.description import load_model
    from jointsim_ros.tools.humanoid_controller import CONFIG, ROBOT
    if args.sensor_noise:
        say('jointsim demo: --sensor-noise is for the walk; the valve scenario runs its '
            "config's sensors as they are", file=sys.stderr)
        return 2
    robot = args.robot or str(resources.share_file('urdf', 'jointsim_humanoid_valve.urdf.xacro'))
    config = args.config or str(resources.share_file('config', 'jointsim_humanoid_valve.yaml'))
    # the controller knows the humanoid's own body (its files), the valve's place by its settings
    controller = ValveController(*load_model(str(resources.share_file(*ROBOT)),
                                             str(resources.share_file(*CONFIG))))
    v = controller.valve
    # half real time by default: node (its sensors at 500 Hz), controller and this watcher
    # need more than two cores at real time, and a starved controller answers late
    rate = VALVE_REAL_TIME_FACTOR if args.real_time_factor is None else args.real_time_factor
    domain = os.environ.get('ROS_DOMAIN_ID', '0')
    say(f'jointsim demo: the valve scenario {robot} with {config}: the humanoid turns the '
        f'valve {math.degrees(v.turn):.0f} deg with a squeeze of {v.squeeze:g} N '
        f'(about {controller.duration():.0f} s simulated, at {rate:g} of real time); '
        f'ROS_DOMAIN_ID={domain}\n'
        f'  watch it in rviz2 (fixed frame world, RobotModel on /robot_description) or\n'
        f'  {Path(sys.executable)} -m jointsim_ros.tools.echo joint_states\n'
        f'  Ctrl-C stops.')
    return run_node_and_controller(
        node_args(args, robot_description_file=robot, config_file=config, publish_rate=200.0,
                  real_time_factor=rate, catch_up_ticks=1.0),
        ['jointsim_ros.tools.humanoid_controller', '--valve'], args.seconds, base='pelvis',
        pushes=args.push, until=controller.duration() + 3.0, valve=True)


if __name__ == '__main__':
    sys.exit(main())
