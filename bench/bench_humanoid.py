"""
The walking humanoid (issue 16): step time, the node's real-time factor and CPU, a plot.

The bundled humanoid (urdf/jointsim_humanoid.urdf.xacro, config/jointsim_humanoid.yaml: 23
joints on DC drives, floating base, feet on the ground, four force-torque sensors) walking with
jointsim_ros.control.walking's ZMP preview controller, dt = 1 ms, 20 solver iterations (the
config's).

1. Headless step time.  A walk of ``--walk-steps`` steps (default 10, 8.3 s simulated) driven
   as the node and the controller drive it: the controller reads the joints and sets the
   voltages every 5 physics steps (200 Hz).  Per-call mode: every ``sim.step(1)`` call is timed
   on its own (the controller's time is not counted); median, p90 and p99 over the walk.
   Amortised mode: the same walk with one ``sim.step(5)`` per controller period (what the node
   does at publish_rate 200 Hz), time of the step calls / steps.  Each run builds a fresh
   Simulator and steps it once untimed (numba cache load) before ``reset()``.  The process is
   pinned to one core.  Reported: the median of ``--runs`` run figures, smallest and largest run
   beside it; also the controller's time per call and whether the robot ended the walk upright.
2. The node over ``--seconds`` of wall time (default 60).  ``python -m jointsim_ros.ros.node``
   (physics_rate 1000 Hz, publish_rate 200 Hz, real_time_factor 1) and
   ``python -m jointsim_ros.tools.humanoid_controller`` with enough steps to walk through the
   whole window are started together as two processes, on a ROS domain of their own
   (test/node_harness.py: localhost discovery, UDPv4, the project's FastDDS profile), not
   pinned.  The window starts WARM_UP s after the controller logs its first status line.  A
   small rclpy subscriber in this process records every /clock message with its arrival time:
   real-time factor = simulated time advanced / wall time, over the whole window and over every
   10 s window starting each second (the minimum is reported); the node's own per-second
   ``diagnostics`` (real-time factor, step time) and its 10 s log lines are reported beside.
   CPU: utime + stime of each process (all threads) from /proc/<pid>/stat over the window, % of
   one core.  The pelvis pose from /tf (world -> pelvis) at both ends of the window: upright
   means z > 0.8 m; the distance is the x advance.
3. A plot of a headless walk of ``--walk-steps`` steps (``--plot``, default
   docs/humanoid_walk.png; matplotlib, Agg): the pelvis path (top view, with the centre of
   pressure from the ankle sensors and the planned footholds) and x(t), the ankle sensors'
   vertical forces turned to the world with the foot rotation (``R_foot @ f``), and the drive
   currents of the twelve leg joints.

Run: .venv/bin/python bench/bench_humanoid.py [--runs 3] [--seconds 60] [--walk-steps 10]
     [--plot PATH] [--no-node] [--quick] [--cpu N] [--out DIR]
Writes humanoid.csv and humanoid.md in bench/results/ and the PNG.
"""
import argparse
import math
import os
from pathlib import Path
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import (machine_facts, markdown_table, pin_to_one_core, process_cpu_seconds,
                      process_rss_mib, REPO_ROOT, RESULTS_DIR, save_markdown, spread, write_csv)
from jointsim_ros.control.walking import (ankle_readings, ANKLE_SENSORS, centre_of_pressure,
                                          GaitSettings, LEG_JOINTS, SOLE_HEIGHT,
                                          WalkingController)
from jointsim_ros.description import load_model
from jointsim_ros.rotations import quat_to_matrix
from jointsim_ros.sim.simulator import Simulator
import numpy as np

ROBOT = REPO_ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
CONFIG = REPO_ROOT / 'config' / 'jointsim_humanoid.yaml'
PLOT = REPO_ROOT / 'docs' / 'humanoid_walk.png'
#: Physics steps per controller period: the node's publish_rate 200 Hz at dt 1 ms.
PERIOD = 5
#: s of wall time after the controller's first status line before the node window starts.
WARM_UP = 3.0
#: s, length of the windows whose smallest real-time factor is reported.
WINDOW = 10.0
TARGET_RTF = 0.99
UPRIGHT = 0.8   # m, pelvis height above which the robot counts as standing
CLOCK_TICKS = os.sysconf('SC_CLK_TCK')
STATUS = re.compile(r't = ([0-9.]+) s, (\w+): real-time factor ([0-9.]+), step ([0-9.]+) us')


# -- 1. headless step time -----------------------------------------------------------------------
def walk(sim, controller, per_call, record=None):
    """
    Drive ``sim`` through the controller's whole plan; time the step calls.

    Args:
        sim: Simulator of the humanoid at its start state.
        controller: WalkingController (restarted here).
        per_call: time every ``step(1)`` on its own, else one ``step(PERIOD)`` per period.
        record: None, or callable(sim) called after every period (untimed runs only).

    Returns:
        (us of every step(1) call (steps,) or of every step(PERIOD) call per step,
         controller us per call (calls,), wall s of the whole loop,
         per call: whether each step(1) took a force-torque sample (steps,) bool).
    """
    names = list(controller.joint_names)
    controller.restart()
    steps = int(round(controller.duration() / sim.dt))
    clock = time.perf_counter_ns
    step_times = np.empty(steps if per_call else -(-steps // PERIOD))
    control_times = np.empty(-(-steps // PERIOD))
    sampled = np.zeros(steps, dtype=bool)
    sensors = list(sim.sensors.names)

    def samples():
        return sum(sim.sensors.sample(name)[2] for name in sensors)
    count = samples()
    started = clock()
    for call, k in enumerate(range(0, steps, PERIOD)):
        start = clock()
        volts = controller.voltages(k * sim.dt, sim.joint_positions(), sim.joint_velocities())
        sim.set_voltages(dict(zip(names, volts)))
        control_times[call] = clock() - start
        n = min(PERIOD, steps - k)
        if per_call:
            for i in range(n):
                start = clock()
                sim.step(1)
                step_times[k + i] = clock() - start
                # untimed: did this step take a sensor sample (Simulator._sample_sensors)?
                count, before = samples(), count
                sampled[k + i] = count > before
        else:
            start = clock()
            sim.step(n)
            step_times[call] = (clock() - start) / n
        if record is not None:
            record(sim)
        if sim.diverged:
            raise RuntimeError(f'the walk diverged at t = {sim.time:.3f} s: {sim.diverged}')
    return step_times / 1e3, control_times / 1e3, (clock() - started) / 1e9, sampled


def fresh_simulator():
    """Return a Simulator of the humanoid at its start state, its kernels loaded."""
    sim = Simulator.from_urdf(str(ROBOT), str(CONFIG))
    sim.step(1)
    sim.reset()
    return sim


def headless(runs, walk_steps):
    """Time ``runs`` walks in each mode, alternating; return (rows, per-run dicts)."""
    model, config = load_model(str(ROBOT), str(CONFIG))
    controller = WalkingController(model, config, GaitSettings(steps=walk_steps))
    steps = int(round(controller.duration() / config.dt))
    figures = {key: [] for key in ('median', 'p90', 'p99', 'mean', 'unsampled', 'sampled',
                                   'amortised', 'control', 'walk_rtf')}
    per_run = []
    for run in range(runs):
        for per_call in (True, False):
            sim = fresh_simulator()
            times, control, wall, sampled = walk(sim, controller, per_call)
            pelvis = sim.link_pose('pelvis')[0]
            if per_call:
                figures['median'].append(float(np.median(times)))
                figures['p90'].append(float(np.percentile(times, 90)))
                figures['p99'].append(float(np.percentile(times, 99)))
                figures['mean'].append(float(np.mean(times)))
                figures['unsampled'].append(float(np.median(times[~sampled])))
                figures['sampled'].append(float(np.median(times[sampled])))
                share = float(np.mean(sampled))
                figures['control'].append(float(np.median(control)))
            else:
                figures['amortised'].append(float(np.mean(times)))
                figures['walk_rtf'].append(steps * sim.dt / wall)
            per_run.append({'run': run, 'mode': 'step(1) per call' if per_call
                            else f'step({PERIOD}) amortised',
                            'steps': steps, 'step_us_median': float(np.median(times)),
                            'step_us_mean': float(np.mean(times)),
                            'controller_us_median': float(np.median(control)),
                            'walk_wall_s': wall, 'pelvis_x_m': float(pelvis[0]),
                            'pelvis_z_m': float(pelvis[2])})
            print(per_run[-1], flush=True)
    upright = all(r['pelvis_z_m'] > UPRIGHT for r in per_run)
    distance = statistics.median(r['pelvis_x_m'] for r in per_run)
    label = f'{runs} x {steps} steps'

    def row(figure, key, unit, note=''):
        median, low, high = spread(figures[key])
        return {'figure': figure, 'median': round(median, 2 if unit != '1' else 3),
                'min-max': f'{low:.2f}-{high:.2f}' if unit != '1' else f'{low:.3f}-{high:.3f}',
                'unit': unit, 'runs x steps': label, 'note': note}

    rows = [row('step(1) per call, median', 'median', 'us'),
            row('step(1) per call, p90', 'p90', 'us'),
            row('step(1) per call, p99', 'p99', 'us'),
            row('step(1) per call, mean', 'mean', 'us'),
            row('step(1) per call, median of the steps without a sensor sample', 'unsampled',
                'us'),
            row('step(1) per call, median of the steps that sample the 4 force-torque sensors',
                'sampled', 'us', f'500 Hz: {100 * share:.0f} % of the steps'),
            row(f'step({PERIOD}) amortised, per step', 'amortised', 'us',
                'one step(5) per controller period, as the node steps at 200 Hz'),
            row('controller, per call (200 Hz)', 'control', 'us',
                'WalkingController.voltages + set_voltages'),
            row('headless walk, simulated / wall time', 'walk_rtf', '1',
                f'step({PERIOD}) runs, controller included'),
            {'figure': 'walk ends upright, pelvis x advance', 'median': round(distance, 3),
             'min-max': '', 'unit': 'm', 'runs x steps': label,
             'note': f'pelvis z > {UPRIGHT} m at the end of every run: '
                     + ('yes' if upright else 'NO')}]
    return rows, per_run


# -- 2. the node ---------------------------------------------------------------------------------
def machine_busy_seconds():
    """Return (busy, total) CPU seconds of the whole machine so far, all cores (/proc/stat)."""
    with open('/proc/stat') as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]        # idle + iowait
    return (sum(fields[:8]) - idle) / CLOCK_TICKS, sum(fields[:8]) / CLOCK_TICKS


def own_cpu_seconds():
    """Return this process's utime + stime, s."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def node_steps(seconds):
    """Return the number of walking steps that keeps the robot walking through the window."""
    gait = GaitSettings()
    # the controller's clock starts at the first joint_states and its first status line comes
    # with it; the window starts WARM_UP s later (and a /tf read); 2 s to spare at the end
    walking = WARM_UP + seconds + 2.0 - gait.settle - gait.shift
    return max(1, math.ceil(walking / (gait.single_support + gait.double_support)))


def pelvis_pose(client, timeout=10.0):
    """Return the pelvis position (3,) from the next /tf message that carries it."""
    from tf2_msgs.msg import TFMessage
    found = []

    def on_tf(msg):
        for transform in msg.transforms:
            if transform.child_frame_id == 'pelvis':
                p = transform.transform.translation
                found.append(((transform.header.frame_id), np.array([p.x, p.y, p.z])))

    sub = client.node.create_subscription(TFMessage, '/tf', on_tf, 100)
    try:
        client.wait_for(lambda: found, timeout)
    finally:
        client.node.destroy_subscription(sub)
    if not found:
        raise RuntimeError('no world -> pelvis transform on /tf')
    frame, position = found[0]
    return frame, position


def window_rtfs(samples, window):
    """Return the real-time factor of every ``window`` s of (wall, sim) samples, one a second."""
    wall = np.array([s[0] for s in samples])
    sim = np.array([s[1] for s in samples])
    out = []
    start = wall[0]
    while start + window <= wall[-1] + 1e-9:
        i = int(np.searchsorted(wall, start))
        j = int(np.searchsorted(wall, wall[i] + window))
        j = min(j, len(wall) - 1)
        if wall[j] - wall[i] >= 0.9 * window:
            out.append((sim[j] - sim[i]) / (wall[j] - wall[i]))
        start += 1.0
    return out


def wait_for_text(path, text, process, timeout):
    """Wait until a process's log holds ``text``; fail with the log if it ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        content = Path(path).read_text(errors='replace')
        if text in content:
            return
        if process.poll() is not None:
            raise RuntimeError(f'{process.args} ended with status {process.returncode}:\n'
                               f'{content[-3000:]}')
        time.sleep(0.05)
    raise RuntimeError(f'no {text!r} in {path} after {timeout} s')


def node_run(seconds, log_dir, formulation=''):
    """
    Run the node and the walking controller; return one result row (dict).

    ``formulation``: the node's formulation parameter ('' keeps the config's).
    """
    sys.path.insert(0, str(REPO_ROOT / 'test'))
    from diagnostic_msgs.msg import DiagnosticArray
    from node_harness import domain, NodeProcess, ROS_ENVIRONMENT, RosClient
    from rosgraph_msgs.msg import Clock

    walk_steps = node_steps(seconds)
    gait = GaitSettings(steps=walk_steps)
    # what the controller process does at start-up, timed here: the plan of the whole walk
    model, config = load_model(str(ROBOT), str(CONFIG))
    start = time.perf_counter()
    WalkingController(model, config, gait)
    plan_build = time.perf_counter() - start
    walking_until = (gait.settle + gait.shift
                     + walk_steps * (gait.single_support + gait.double_support))
    parameters = {'robot_description_file': str(ROBOT), 'config_file': str(CONFIG),
                  'physics_rate': 1000.0, 'publish_rate': 200.0, 'real_time_factor': 1.0}
    if formulation:
        parameters['formulation'] = formulation
    controller_log_path = Path(log_dir) / 'controller.log'
    with domain() as domain_id, open(controller_log_path, 'w') as controller_log:
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), **ROS_ENVIRONMENT)
        # started together, as the demo does: the controller is ready by the node's first
        # joint_states, so the robot does not stand on 0 V meanwhile
        node = NodeProcess(domain_id, Path(log_dir) / 'node.log', parameters=parameters)
        controller = subprocess.Popen(
            [sys.executable, '-m', 'jointsim_ros.tools.humanoid_controller', '--robot',
             str(ROBOT), '--config', str(CONFIG), '--steps', str(walk_steps)],
            cwd=REPO_ROOT, env=env, stdout=controller_log, stderr=subprocess.STDOUT)
        client = None
        try:
            node.wait_ready()
            wait_for_text(controller_log_path, 't = ', controller, 60.0)
            client = RosClient(domain_id, name='jointsim_bench_humanoid')
            samples = []
            client.node.create_subscription(
                Clock, '/clock', lambda m: samples.append(
                    (time.monotonic(), m.clock.sec + m.clock.nanosec * 1e-9)), 100)
            diagnostics = client.subscribe(DiagnosticArray, 'diagnostics')
            client.spin_for(WARM_UP)
            frame, pelvis_start = pelvis_pose(client)
            first_sample, first_diag = len(samples), len(diagnostics)
            cpu = [process_cpu_seconds(node.process.pid), process_cpu_seconds(controller.pid),
                   own_cpu_seconds()]
            busy = machine_busy_seconds()
            wall_start = time.monotonic()
            client.spin_for(seconds)
            cpu_end = [process_cpu_seconds(node.process.pid), process_cpu_seconds(controller.pid),
                       own_cpu_seconds()]
            busy_end = machine_busy_seconds()
            wall = time.monotonic() - wall_start
            last_sample = len(samples)
            _, pelvis_end = pelvis_pose(client)
            rss = process_rss_mib(node.process.pid)
            alive = node.process.poll() is None and controller.poll() is None
        finally:
            if client is not None:
                client.close()
            if controller.poll() is None:
                controller.send_signal(subprocess.signal.SIGINT)
                try:
                    controller.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    controller.kill()
                    controller.wait()
            node.stop()
    node_log = node.output()
    window = samples[first_sample:last_sample]
    overall = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0])
    tens = window_rtfs(window, WINDOW)
    values = [{kv.key: kv.value for kv in msg.status[0].values}
              for msg in diagnostics[first_diag:]]
    diag_rtf = [float(v['real_time_factor']) for v in values]
    logged = [(float(t), state, float(rtf), float(us)) for t, state, rtf, us
              in STATUS.findall(node_log)
              if window[0][1] <= float(t) <= window[-1][1] + WINDOW]
    cpu_pct = [100.0 * (b - a) / wall for a, b in zip(cpu, cpu_end)]
    machine_pct = 100.0 * (busy_end[0] - busy[0]) / wall
    return {
        'walk_steps_planned': walk_steps,
        'plan_s': round(gait.duration(), 2),
        'plan_build_s': round(plan_build, 2),
        'walking_through_window': 'yes' if window[-1][1] < walking_until else 'NO',
        'wall_s': round(window[-1][0] - window[0][0], 2),
        'sim_start_s': round(window[0][1], 2),
        'sim_end_s': round(window[-1][1], 2),
        'rtf_overall': overall,
        'rtf_min_10s': float(min(tens)) if tens else float('nan'),
        'windows_10s': len(tens),
        'rtf_diag_median': statistics.median(diag_rtf),
        'rtf_diag_min': min(diag_rtf),
        'rtf_log_10s': ' '.join(f'{x[2]:.2f}' for x in logged) or 'none',
        'step_us_diag_median': statistics.median(float(v['step_time_mean [us]'])
                                                 for v in values),
        'step_us_diag_max': max(float(v['step_time_max [us]']) for v in values),
        'step_us_log_10s': ' '.join(f'{x[3]:.0f}' for x in logged) or 'none',
        'iterations_median': statistics.median(float(v['solver_iterations_mean'])
                                               for v in values),
        'budget_stops': sum(int(v['solver_time_budget_stops']) for v in values),
        'dropped_window_s': sum(float(v['dropped_sim_time [s]']) for v in values),
        'dropped_total_s': float(values[-1]['dropped_sim_time_total [s]']),
        'node_cpu_pct': cpu_pct[0],
        'controller_cpu_pct': cpu_pct[1],
        'bench_cpu_pct': cpu_pct[2],
        'machine_busy_pct': machine_pct,
        'others_cpu_pct': machine_pct - sum(cpu_pct),
        'node_rss_mib': rss,
        'tf_frame': frame,
        'pelvis_x_start_m': float(pelvis_start[0]),
        'pelvis_y_start_m': float(pelvis_start[1]),
        'pelvis_x_end_m': float(pelvis_end[0]),
        'pelvis_y_end_m': float(pelvis_end[1]),
        'pelvis_z_end_m': float(pelvis_end[2]),
        'upright_at_end': 'yes' if pelvis_end[2] > UPRIGHT else 'NO',
        'processes_alive_at_end': 'yes' if alive else 'NO',
    }


# -- 3. the plot ---------------------------------------------------------------------------------
def record_walk(walk_steps):
    """Walk headless once, recording every controller period; return (controller, dict)."""
    model, config = load_model(str(ROBOT), str(CONFIG))
    controller = WalkingController(model, config, GaitSettings(steps=walk_steps))
    sim = fresh_simulator()
    legs = [f'{side}_{joint}' for side in 'lr' for joint in LEG_JOINTS]
    data = {'time': [], 'pelvis': [], 'cop': [], 'force': [], 'current': []}

    def record(sim):
        data['time'].append(sim.time)
        data['pelvis'].append(sim.link_pose('pelvis')[0].copy())
        cop, normal = centre_of_pressure(ankle_readings(sim), SOLE_HEIGHT)
        # a foot touching down with a few newtons puts the centre anywhere: shown above 100 N
        data['cop'].append(cop[:2] if normal > 100.0 else np.full(2, np.nan))
        data['force'].append([(quat_to_matrix(sim.link_pose(f'{side}_foot')[1])
                               @ sim.sensors.wrench(sensor)[:3])[2]
                              for side, sensor in ANKLE_SENSORS.items()])
        data['current'].append([sim.drive_state(joint)['current'] for joint in legs])

    walk(sim, controller, per_call=False, record=record)
    out = {key: np.array(value) for key, value in data.items()}
    out['legs'] = legs
    feet = {body.name: body.mass for body in sim.model.bodies}
    out['weight_above_ankles'] = 9.81 * (sum(feet.values()) - feet['l_foot'] - feet['r_foot'])
    return controller, out


def plot(path, controller, data):
    """Write the walk's figure (matplotlib, Agg) to ``path``."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot
    from matplotlib.patches import Rectangle

    plan = controller.plan
    t = data['time']
    figure = pyplot.figure(figsize=(13, 12), dpi=90)
    grid = figure.add_gridspec(3, 2, height_ratios=[1.0, 0.9, 1.0])
    top = figure.add_subplot(grid[0, 0])
    for side, colour in (('l', 'tab:blue'), ('r', 'tab:red')):
        holds = [plan.feet[side][0]] + [h[1] for h in plan.footholds if h[0] == side]
        for k, centre in enumerate(holds):
            top.add_patch(Rectangle((centre[0] - 0.12, centre[1] - 0.055), 0.24, 0.11,
                                    fill=False, edgecolor=colour, linewidth=0.8,
                                    label=f'{side} footholds (plan)' if k == 0 else None))
    top.plot(plan.zmp_ref[:, 0], plan.zmp_ref[:, 1], color='0.6', linewidth=1.0,
             linestyle='--', label='ZMP reference')
    top.plot(data['cop'][:, 0], data['cop'][:, 1], color='tab:green', marker='.',
             markersize=1.5, linestyle='none', label='centre of pressure (ankle sensors)')
    top.plot(data['pelvis'][:, 0], data['pelvis'][:, 1], color='black', linewidth=1.5,
             label='pelvis')
    top.set_aspect('equal')
    top.set_ylim(-0.3, 0.3)
    top.set_xlabel('x (m)')
    top.set_ylabel('y (m)')
    top.set_title('top view')
    top.legend(fontsize=7, loc='lower center', ncol=3)
    along = figure.add_subplot(grid[0, 1])
    along.plot(t, data['pelvis'][:, 0], color='black', label='pelvis x')
    along.plot(plan.times, plan.pelvis[:, 0], color='0.6', linestyle='--',
               label='pelvis x (plan)')
    along.plot(t, data['pelvis'][:, 1], color='tab:purple', label='pelvis y')
    along.set_xlabel('t (s)')
    along.set_ylabel('m')
    height = along.twinx()
    height.plot(t, data['pelvis'][:, 2], color='tab:orange', linewidth=1.0)
    height.set_ylabel('pelvis z (m)', color='tab:orange')
    along.set_title('pelvis x(t), y(t) and z(t)')
    along.legend(fontsize=7, loc='upper left')
    forces = figure.add_subplot(grid[1, :])
    forces.plot(t, data['force'][:, 0], color='tab:blue', linewidth=0.8, label='l_ankle_ft')
    forces.plot(t, data['force'][:, 1], color='tab:red', linewidth=0.8, label='r_ankle_ft')
    forces.plot(t, data['force'].sum(axis=1), color='black', linewidth=0.6, alpha=0.6,
                label='sum')
    forces.axhline(data['weight_above_ankles'], color='0.5', linestyle=':',
                   label=f'weight above the ankles ({data["weight_above_ankles"]:.0f} N)')
    # the landing peaks would flatten the rest: clip the axis and say how high they go
    ceiling = 2.5 * data['weight_above_ankles']
    peak = float(np.max(data['force']))
    forces.set_ylim(-100.0, ceiling)
    forces.set_xlabel('t (s)')
    forces.set_ylabel('N')
    forces.set_title('ankle sensors: vertical force in the world (R_foot @ f), sampled at '
                     f'200 Hz; landing peaks up to {peak:.0f} N (one foot) clipped at '
                     f'{ceiling:.0f} N')
    forces.legend(fontsize=7, ncol=4, loc='upper right')
    for column, side in enumerate('lr'):
        axes = figure.add_subplot(grid[2, column])
        for k, joint in enumerate(data['legs']):
            if joint.startswith(side):
                axes.plot(t, data['current'][:, k], linewidth=0.7, label=joint)
        axes.set_xlabel('t (s)')
        axes.set_ylabel('A')
        axes.set_title(f'drive currents, {"left" if side == "l" else "right"} leg')
        axes.legend(fontsize=7, ncol=2)
    figure.suptitle(f'jointsim humanoid walking {controller.settings.steps} steps '
                    f'(dt 1 ms, 20 iterations, controller at 200 Hz, headless)')
    figure.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    pyplot.close(figure)


# -- main ----------------------------------------------------------------------------------------
def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=3, help='headless runs per mode (3)')
    parser.add_argument('--walk-steps', type=int, default=10,
                        help='steps of the headless walk and of the plot (10)')
    parser.add_argument('--seconds', type=float, default=60.0,
                        help='wall time of the node window, s (60)')
    parser.add_argument('--no-node', action='store_true', help='skip the node run')
    parser.add_argument('--logs', type=Path, default=None,
                        help='keep the node and controller logs in this folder')
    parser.add_argument('--plot', type=Path, default=PLOT, help=f'PNG to write ({PLOT})')
    parser.add_argument('--quick', action='store_true',
                        help='1 run, a 10 s node window: checks that the script works')
    parser.add_argument('--cpu', type=int, default=None,
                        help='core to pin the headless part to (default: the highest)')
    parser.add_argument('--out', type=Path, default=RESULTS_DIR,
                        help=f'folder for humanoid.csv and humanoid.md ({RESULTS_DIR})')
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.seconds = 1, min(args.seconds, 10.0)
    return args


def main(argv=None):
    """Measure, plot, write the tables."""
    args = parse_args(argv)
    command = ' '.join(['.venv/bin/python', 'bench/bench_humanoid.py']
                       + (sys.argv[1:] if argv is None else list(argv)))
    facts = machine_facts()
    allowed = os.sched_getaffinity(0)
    cpu = pin_to_one_core(args.cpu)
    rows, per_run = headless(args.runs, args.walk_steps)
    controller, data = record_walk(args.walk_steps)
    plot(args.plot, controller, data)
    print(f'wrote {args.plot}', flush=True)
    # the node and the controller must not inherit the pin
    os.sched_setaffinity(0, allowed)
    node = None
    if not args.no_node:
        if args.logs is not None:
            args.logs.mkdir(parents=True, exist_ok=True)
            node = node_run(args.seconds, args.logs)
        else:
            with tempfile.TemporaryDirectory(prefix='jointsim_bench_humanoid_') as log_dir:
                node = node_run(args.seconds, log_dir)
        print(node, flush=True)
    load = ' '.join(f'{v:.2f}' for v in os.getloadavg())
    csv_rows = [dict(part='headless', **r) for r in per_run]
    if node is not None:
        csv_rows.append({'part': 'node', **node})
    columns = []
    for r in csv_rows:
        columns += [c for c in r if c not in columns]
    write_csv(args.out, 'humanoid', [{c: r.get(c, '') for c in columns} for r in csv_rows])
    parts = [
        '# The walking humanoid (issue 16)', '',
        f'Command: `{command}`  ',
        f'Date (UTC): {facts["date_utc"]}; commit {facts["git_commit"]} (uncommitted changes '
        f'in jointsim_ros: {facts["jointsim_ros_uncommitted_changes"]}); {facts["cpu_model"]}, '
        f'{facts["cores"]} cores, shared; load average (1/5/15 min) before '
        f'{facts["load_average_1_5_15"]}, after {load}.', '',
        f'## Headless step time (pinned to core {cpu}; dt 1 ms, 20 iterations; a walk of '
        f'{args.walk_steps} steps, the controller every {PERIOD} steps)', '',
        markdown_table(rows)]
    if node is not None:
        verdict = ('PASS' if min(node['rtf_overall'], node['rtf_min_10s']) >= TARGET_RTF
                   and node['upright_at_end'] == 'yes' else 'MISS')
        advance = node['pelvis_x_end_m'] - node['pelvis_x_start_m']
        summary = [
            {'figure': 'real-time factor over the window', 'value': node['rtf_overall']},
            {'figure': f'smallest real-time factor of a {WINDOW:g} s window '
                       f'({node["windows_10s"]} windows)', 'value': node['rtf_min_10s']},
            {'figure': 'diagnostics real-time factor, median / min of 1 s',
             'value': f'{node["rtf_diag_median"]:.3f} / {node["rtf_diag_min"]:.3f}'},
            {'figure': 'node log real-time factor, every 10 s', 'value': node['rtf_log_10s']},
            {'figure': 'node step time (diagnostics), median of 1 s means / max, us',
             'value': f'{node["step_us_diag_median"]:.1f} / {node["step_us_diag_max"]:.0f}'},
            {'figure': 'node log step time every 10 s, us', 'value': node['step_us_log_10s']},
            {'figure': 'solver iterations (median) / budget stops / simulated time dropped '
                       'in the window (since the start), s',
             'value': f'{node["iterations_median"]:g} / {node["budget_stops"]} / '
                      f'{node["dropped_window_s"]:g} ({node["dropped_total_s"]:g})'},
            {'figure': 'node CPU, % of one core', 'value': node['node_cpu_pct']},
            {'figure': 'controller CPU, % of one core', 'value': node['controller_cpu_pct']},
            {'figure': 'this bench process (the /clock subscriber), % of one core',
             'value': node['bench_cpu_pct']},
            {'figure': f'whole machine busy ({os.cpu_count()} cores), % of one core; of which '
                       'other processes',
             'value': f'{node["machine_busy_pct"]:.0f}; {node["others_cpu_pct"]:.0f}'},
            {'figure': 'node RSS, MiB', 'value': node['node_rss_mib']},
            {'figure': 'window: wall s, simulated s from - to',
             'value': f'{node["wall_s"]:g}, {node["sim_start_s"]:g} - {node["sim_end_s"]:g}'},
            {'figure': 'walk: steps planned (plan length s; built in s); still walking at '
                       'the window end',
             'value': f'{node["walk_steps_planned"]} ({node["plan_s"]:g} s; '
                      f'{node["plan_build_s"]:g} s); {node["walking_through_window"]}'},
            {'figure': f'pelvis at the end ({node["tf_frame"]} -> pelvis), x / y / z m',
             'value': f'{node["pelvis_x_end_m"]:.3f} / {node["pelvis_y_end_m"]:.3f} / '
                      f'{node["pelvis_z_end_m"]:.3f}'},
            {'figure': 'over the window: pelvis x advance (m/s), y change, m',
             'value': f'{advance:.3f} ({advance / node["wall_s"]:.3f}), '
                      f'{node["pelvis_y_end_m"] - node["pelvis_y_start_m"]:+.3f}'},
            {'figure': f'upright at the end (pelvis z > {UPRIGHT} m); processes alive',
             'value': f'{node["upright_at_end"]}; {node["processes_alive_at_end"]}'},
            {'figure': f'target: real-time factor >= {TARGET_RTF} over the window and every '
                       f'{WINDOW:g} s, upright', 'value': verdict}]
        parts += ['', f'## The node, {args.seconds:g} s of walking (physics 1000 Hz, publish '
                  '200 Hz, real_time_factor 1; node and controller not pinned; '
                  f'{WARM_UP:g} s warm-up)', '', markdown_table(summary, ['figure', 'value'])]
    shown = Path(args.plot).resolve()
    if shown.is_relative_to(REPO_ROOT):
        shown = shown.relative_to(REPO_ROOT)
    parts += ['', f'Plot: `{shown}`.']
    save_markdown(args.out, 'humanoid', '\n'.join(parts))
    return 0


if __name__ == '__main__':
    sys.exit(main())
