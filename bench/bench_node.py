"""
Measure jointsim_node's achieved real-time factor and CPU use (issue 4).

1. The bundled 7-DOF arm (urdf/jointsim_arm.urdf.xacro) with the drives of
   config/jointsim_arm.yaml, physics_rate 1000 Hz, publish_rate 100 Hz, real_time_factor 1.0,
   for ``--seconds`` (default 60) of wall time, driven by the example controller
   (``python -m jointsim_ros.tools.example_controller``: one voltage command per joint_states
   message, 100 Hz).  Target: achieved real-time factor >= 0.99 over the whole run.
2. The same arm as fast as possible (real_time_factor 0) for ``--fast-seconds`` (default 20).
3. The quadruped: ANYmal C (test/fixtures/urdf/anymal_c.urdf, 12 joints, floating base, its
   collision shapes on the ground), at real_time_factor 1.0 for ``--seconds``, with no
   controller (no joint-space controller for it ships yet): it starts in a standing pose and
   settles onto the ground, so the contact rows are working throughout.

``--rover`` runs one case instead: the bundled rover (urdf/jointsim_rover.urdf.xacro with
config/jointsim_rover.yaml: four wheel drives on the ground, its 360-ray lidar at 10 Hz, the
arena's walls and boxes) at real_time_factor 1.0 for ``--seconds``, driven among the boxes by
``jointsim_rover_controller`` (one voltage command per LaserScan); results in
node_rover.csv and node_rover.md.

Method: the node runs as a subprocess (test/node_harness.py: its own ROS domain, localhost
discovery, UDPv4, config/fastdds_profile.xml), NOT pinned to a core; the example controller is
a second process.  Measurement starts 3 s after the node is ready (warm-up).  Over the window:
- the real-time factor reported in ``diagnostics`` once a second (median and minimum);
- the overall factor: /clock advanced over the window / wall time of the window (one /clock
  message read at each end);
- the node's CPU: utime + stime from /proc/<pid>/stat over the window, as % of one core (all
  its threads), and its RSS (VmRSS) at the end; the controller's CPU likewise.

Run: .venv/bin/python bench/bench_node.py [--seconds 60] [--fast-seconds 20]
     .venv/bin/python bench/bench_node.py --rover [--seconds 60]
"""
import argparse
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import machine_facts, markdown_table, process_cpu_seconds, process_rss_mib
from benchlib import REPO_ROOT, RESULTS_DIR, save_markdown, write_csv

sys.path.insert(0, str(REPO_ROOT / 'test'))

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402,I100
from node_harness import domain, NodeProcess, ROS_ENVIRONMENT, RosClient  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402

TARGET_RTF = 0.99
WARM_UP = 3.0  # s after 'ready' before the window starts
ARM_XACRO = REPO_ROOT / 'urdf' / 'jointsim_arm.urdf.xacro'
ARM_CONFIG = REPO_ROOT / 'config' / 'jointsim_arm.yaml'
ROVER_XACRO = REPO_ROOT / 'urdf' / 'jointsim_rover.urdf.xacro'
ROVER_CONFIG = REPO_ROOT / 'config' / 'jointsim_rover.yaml'


def clock_now(client, timeout=5.0):
    """Return (simulated time from the next /clock message, wall time it arrived), s."""
    received = []
    sub = client.node.create_subscription(Clock, '/clock', received.append, 10)
    try:
        client.wait_for(lambda: received, timeout)
        wall = time.monotonic()
    finally:
        client.node.destroy_subscription(sub)
    if not received:
        raise RuntimeError('no /clock message')
    clock = received[0].clock
    return clock.sec + clock.nanosec * 1e-9, wall


QUADRUPED_CONFIG = '\n'.join([
    'base: floating', 'base_pose: {position: [0.0, 0.0, 0.56]}', 'initial_positions:',
    '  LF_HFE: 0.6', '  RF_HFE: 0.6', '  LH_HFE: -0.6', '  RH_HFE: -0.6',
    '  LF_KFE: -1.2', '  RF_KFE: -1.2', '  LH_KFE: 1.2', '  RH_KFE: 1.2', ''])


def measure(domain_id, seconds, real_time_factor, log_dir, robot=None, config=None,
            case=None, world=None, namespaces=('',), controller=None):
    """
    Run node (+ the example controller for the arm) for a window; return one result row.

    ``world``: a world file run instead of the robot (world_file), with an example controller
    in each of ``namespaces`` (its robots').  ``controller``: the module of the controller
    to run beside another ``robot`` (none by default).
    """
    robot_keys = ({'world_file': str(world)} if world is not None else
                  {'robot_description_file': str(robot or ARM_XACRO),
                   'config_file': str(config or ARM_CONFIG)})
    parameters = dict(robot_keys, physics_rate=1000.0, publish_rate=100.0,
                      real_time_factor=float(real_time_factor))
    node = NodeProcess(domain_id, Path(log_dir) / f'node_rtf{real_time_factor:g}.log',
                       parameters=parameters)
    controllers = []
    client = None
    try:
        node.wait_ready()
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), **ROS_ENVIRONMENT)
        if robot is None or controller is not None:
            for namespace in namespaces:
                controller_log = open(Path(log_dir) / f'controller_rtf{real_time_factor:g}'
                                      f'{namespace}.log', 'w')
                remap = ['--ros-args', '-r', f'__ns:=/{namespace}'] if namespace else []
                controllers.append(subprocess.Popen(
                    [sys.executable, '-m', controller or 'jointsim_ros.tools.example_controller']
                    + remap,
                    cwd=REPO_ROOT, env=env, stdout=controller_log, stderr=subprocess.STDOUT))
        client = RosClient(domain_id, name='jointsim_bench_client')
        diagnostics = client.subscribe(DiagnosticArray, 'diagnostics')
        client.spin_for(WARM_UP)
        sim_start, wall_start = clock_now(client)
        cpu_start = process_cpu_seconds(node.process.pid)
        controller_cpu_start = sum(process_cpu_seconds(c.pid) for c in controllers)
        first = len(diagnostics)
        client.spin_for(seconds)
        cpu_end = process_cpu_seconds(node.process.pid)
        controller_cpu_end = sum(process_cpu_seconds(c.pid) for c in controllers)
        wall_cpu = time.monotonic() - wall_start
        sim_end, wall_end = clock_now(client)
        rss = process_rss_mib(node.process.pid)
        values = [{kv.key: kv.value for kv in msg.status[0].values}
                  for msg in diagnostics[first:]]
    finally:
        if client is not None:
            client.close()
        for controller in controllers:
            controller.send_signal(subprocess.signal.SIGINT)
            try:
                controller.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                controller.kill()
                controller.wait()
        node.stop()
    rtfs = [float(v['real_time_factor']) for v in values]
    overall = (sim_end - sim_start) / (wall_end - wall_start)
    return {
        'case': case or ('arm 7 drives, rtf 1' if real_time_factor
                         else 'arm 7 drives, as fast as possible'),
        'target_rtf': real_time_factor,
        'wall_s': round(wall_end - wall_start, 2),
        'sim_s': round(sim_end - sim_start, 2),
        'rtf_overall': overall,
        'rtf_diag_median': statistics.median(rtfs),
        'rtf_diag_min': min(rtfs),
        'diag_reports': len(rtfs),
        'step_us_median': statistics.median(float(v['step_time_mean [us]']) for v in values),
        'iterations_median': statistics.median(float(v['solver_iterations_mean'])
                                               for v in values),
        'budget_stops': sum(int(v['solver_time_budget_stops']) for v in values),
        'dropped_total_s': float(values[-1]['dropped_sim_time_total [s]']),
        'node_cpu_pct': 100.0 * (cpu_end - cpu_start) / wall_cpu,
        'node_rss_mib': rss,
        'controller_cpu_pct': 100.0 * (controller_cpu_end - controller_cpu_start) / wall_cpu,
    }


def main(argv=None):
    """Run both cases, write bench/results/node.csv and node.md."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--seconds', type=float, default=60.0,
                        help='wall time of the real-time run, s (default 60)')
    parser.add_argument('--fast-seconds', type=float, default=20.0,
                        help='wall time of the as-fast-as-possible run, s (default 20)')
    parser.add_argument('--rover', action='store_true',
                        help='only the rover with its lidar and its controller, at real time '
                             '(node_rover.csv, node_rover.md)')
    parser.add_argument('--out', type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    command = ' '.join(['.venv/bin/python', 'bench/bench_node.py'] + sys.argv[1:])
    facts = machine_facts()
    if args.rover:
        return rover(args, command, facts)
    rows = []
    with tempfile.TemporaryDirectory() as log_dir, domain() as domain_id:
        rows.append(measure(domain_id, args.seconds, 1.0, log_dir))
        rows.append(measure(domain_id, args.fast_seconds, 0.0, log_dir))
        quadruped_config = Path(log_dir) / 'quadruped.yaml'
        quadruped_config.write_text(QUADRUPED_CONFIG)
        rows.append(measure(domain_id, args.seconds, 1.0, log_dir,
                            robot=REPO_ROOT / 'test' / 'fixtures' / 'urdf' / 'anymal_c.urdf',
                            config=quadruped_config,
                            case='ANYmal C quadruped on contacts, rtf 1'))
    load = ' '.join(f'{v:.2f}' for v in os.getloadavg())
    rows[0]['target'] = f'rtf >= {TARGET_RTF} for {args.seconds:g} s'
    rows[0]['verdict'] = ('PASS' if min(rows[0]['rtf_overall'], rows[0]['rtf_diag_min'])
                          >= TARGET_RTF else 'MISS')
    rows[1]['target'] = 'none (reported)'
    rows[1]['verdict'] = '-'
    rows[2]['target'] = f'rtf >= {TARGET_RTF} (reported)'
    rows[2]['verdict'] = ('PASS' if min(rows[2]['rtf_overall'], rows[2]['rtf_diag_min'])
                          >= TARGET_RTF else 'MISS')
    columns = list(rows[0])
    for row in rows:
        for column in columns:
            row.setdefault(column, '')
    write_csv(args.out, 'node', [{c: row[c] for c in columns} for row in rows])
    text = '\n'.join([
        '# jointsim_node: real-time factor and CPU (issue 4)', '',
        f'Command: `{command}`  ',
        f'Date (UTC): {facts["date_utc"]}; commit {facts["git_commit"]}; '
        f'{facts["cpu_model"]}, {facts["cores"]} cores; load average (1/5/15 min) before '
        f'{facts["load_average_1_5_15"]}, after {load}.', '',
        'Bundled arm with config/jointsim_arm.yaml drives, physics 1000 Hz, publish 100 Hz, '
        'example controller sending voltages at every joint_states; node not pinned to a '
        f'core; {WARM_UP:g} s warm-up after ready. rtf_overall = /clock advanced / wall time '
        'of the window; rtf_diag = the per-second factors of `diagnostics`; CPU = utime + '
        'stime over the window, % of one core. PASS needs both rtf_overall and rtf_diag_min '
        f'>= {TARGET_RTF}.', '',
        markdown_table(rows, columns)])
    save_markdown(args.out, 'node', text)
    return 0


def rover(args, command, facts):
    """Run the rover case; write bench/results/node_rover.csv and node_rover.md."""
    with tempfile.TemporaryDirectory() as log_dir, domain() as domain_id:
        row = measure(domain_id, args.seconds, 1.0, log_dir, robot=ROVER_XACRO,
                      config=ROVER_CONFIG, controller='jointsim_ros.tools.rover_controller',
                      case='rover, 4 drives, lidar 360 x 10 Hz, rover controller, rtf 1')
    load = ' '.join(f'{v:.2f}' for v in os.getloadavg())
    row['target'] = 'rtf 1.00 (issue 43)'
    row['verdict'] = ('PASS' if min(row['rtf_overall'], row['rtf_diag_min']) >= TARGET_RTF
                      else 'MISS')
    columns = list(row)
    write_csv(args.out, 'node_rover', [row])
    text = '\n'.join([
        '# jointsim_node: real-time factor and CPU with the rover and its lidar', '',
        f'Command: `{command}`  ',
        f'Date (UTC): {facts["date_utc"]}; commit {facts["git_commit"]}; '
        f'{facts["cpu_model"]}, {facts["cores"]} cores; load average (1/5/15 min) before '
        f'{facts["load_average_1_5_15"]}, after {load}.', '',
        'The bundled rover (urdf/jointsim_rover.urdf.xacro, config/jointsim_rover.yaml: four '
        '12 V wheel drives on the ground, a 360-ray lidar at 10 Hz publishing LaserScan, an '
        'arena of 4 walls and 5 boxes), physics 1000 Hz, publish 100 Hz, '
        'jointsim_rover_controller sending wheel voltages at every scan; node not pinned to a '
        f'core; {WARM_UP:g} s warm-up after ready. rtf_overall = /clock advanced / wall time '
        'of the window; rtf_diag = the per-second factors of `diagnostics`; CPU = utime + '
        'stime over the window, % of one core. PASS needs both rtf_overall and rtf_diag_min '
        f'>= {TARGET_RTF}.', '',
        markdown_table([row], columns)])
    save_markdown(args.out, 'node_rover', text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
