"""
The browser view's cost (issue 33): its CPU at 30 Hz updates and the node's real-time factor.

The humanoid walks through the node as ``make run ARGS=--humanoid`` runs it (jointsim_node at
real time, 200 Hz publishing, catch_up_ticks 1.4 (--catch-up), and
jointsim_humanoid_controller), in three
set-ups measured in the same run, each ``--runs`` times over ``--seconds``:
  a. node and controller alone (the peer: no view);
  b. with jointsim_view (30 Hz), no page open;
  c. with jointsim_view and its page open in a headless Chromium (software WebGL: the browser
     draws on these CPUs too, as it would not on a desktop with a GPU);
  d. (``page-user``) as c, the browser without CAP_SYS_NICE, as a desktop user's runs: run as
     root (as here), Chromium raises its browser and GPU processes to niceness -8, ahead of
     the simulation; without the capability it stays at 0;
  e. (``page-nice``) as d, the browser at niceness 19 (``nice -n 19 chromium``), as the view
     runs: what the drawing takes is what the simulation leaves.
Per set-up: the node's real-time factor over the window (simulated time on /clock over wall
time), the view process's CPU (% of one core), the browser's CPU, the machine's busy share.
Medians of the runs.

Run: .venv/bin/python bench/bench_view.py [--runs 3] [--seconds 20]
Writes bench/results/view.md.
"""
import argparse
import os
from pathlib import Path
import statistics
import subprocess
import sys
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'test'))
sys.path.insert(0, str(ROOT / 'bench'))

from benchlib import process_cpu_seconds, tree_cpu  # noqa: E402, I100
import browser  # noqa: E402
from node_harness import domain, NodeProcess, ROS_ENVIRONMENT, RosClient  # noqa: E402

RESULTS = ROOT / 'bench' / 'results'
ROBOT = ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
CONFIG = ROOT / 'config' / 'jointsim_humanoid.yaml'


def busy():
    """Return (busy, total) CPU seconds of the machine (/proc/stat)."""
    with open('/proc/stat') as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    ticks = os.sysconf('SC_CLK_TCK')
    return (sum(fields[:8]) - fields[3] - fields[4]) / ticks, sum(fields[:8]) / ticks


def one_run(mode, seconds, log_dir, catch_up=1.0):
    """Run one set-up ('alone', 'view', 'page', 'page-user', 'page-nice'); return figures."""
    from rosgraph_msgs.msg import Clock
    parameters = {'robot_description_file': str(ROBOT), 'config_file': str(CONFIG),
                  'publish_rate': 200.0, 'real_time_factor': 1.0, 'catch_up_ticks': catch_up,
                  'publish_contact_markers': True}
    with domain() as domain_id:
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), **ROS_ENVIRONMENT)
        node = NodeProcess(domain_id, Path(log_dir) / f'node_{mode}.log', parameters=parameters)
        children = [subprocess.Popen(
            [sys.executable, '-m', 'jointsim_ros.tools.humanoid_controller', '--robot',
             str(ROBOT), '--config', str(CONFIG), '--steps', '40'], cwd=ROOT, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)]
        view = page = client = None
        try:
            node.wait_ready()
            if mode != 'alone':
                view = subprocess.Popen(
                    [sys.executable, '-m', 'jointsim_ros.view.node', '--ros-args', '-p',
                     'port:=8097'], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True)
                children.append(view)
                url = browser.view_url(view)
                if mode.startswith('page'):
                    page = browser.Browser(niceness=19 if mode == 'page-nice' else 0,
                                           like_a_user=mode != 'page')
                    page.load(url)
            client = RosClient(domain_id, name='jointsim_bench_view')
            samples = []
            client.node.create_subscription(
                Clock, '/clock', lambda m: samples.append(
                    (time.monotonic(), m.clock.sec + 1e-9 * m.clock.nanosec)), 100)
            client.spin_for(5.0)   # warm up: the page connects, the robot stands up
            if page is not None:   # the page's frames: animation frame callbacks
                page.evaluate('window.benchFrames = 0; (function count() { '
                              'window.benchFrames++; requestAnimationFrame(count); })(); 0')
            start = len(samples)
            cpu0 = {'view': process_cpu_seconds(view.pid) if view else 0.0,
                    'page': tree_cpu(page.process.pid) if page else 0.0,
                    'node': process_cpu_seconds(node.process.pid),
                    'controller': process_cpu_seconds(children[0].pid)}
            busy0 = busy()
            client.spin_for(seconds)
            cpu1 = {'view': process_cpu_seconds(view.pid) if view else 0.0,
                    'page': tree_cpu(page.process.pid) if page else 0.0,
                    'node': process_cpu_seconds(node.process.pid),
                    'controller': process_cpu_seconds(children[0].pid)}
            busy1 = busy()
            frames = page.evaluate('window.benchFrames') if page is not None else 0
            window = samples[start:]
            wall = window[-1][0] - window[0][0]
            return {'rtf': (window[-1][1] - window[0][1]) / wall,
                    'view_cpu': 100.0 * (cpu1['view'] - cpu0['view']) / wall,
                    'page_cpu': 100.0 * (cpu1['page'] - cpu0['page']) / wall,
                    'node_cpu': 100.0 * (cpu1['node'] - cpu0['node']) / wall,
                    'controller_cpu': 100.0 * (cpu1['controller'] - cpu0['controller']) / wall,
                    'machine': (busy1[0] - busy0[0]) / (busy1[1] - busy0[1]),
                    'page_fps': frames / wall}
        finally:
            try:
                if page is not None:
                    page.close()
                if client is not None:
                    client.close()
            finally:   # the simulation's processes end whatever the browser's close did
                for child in children:
                    child.terminate()
                    child.wait(timeout=10)
                node.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--seconds', type=float, default=20.0)
    parser.add_argument('--catch-up', type=float, default=1.4,
                        help="the node's catch_up_ticks (make run's: 1.4)")
    parser.add_argument('--modes', default='alone,view,page,page-user,page-nice')
    args = parser.parse_args()
    import tempfile
    rows = {mode: [] for mode in args.modes.split(',')}
    with tempfile.TemporaryDirectory() as log_dir:
        for _ in range(args.runs):
            for mode in rows:
                rows[mode].append(one_run(mode, args.seconds, log_dir, args.catch_up))
                print(mode, rows[mode][-1], flush=True)
    labels = {'alone': 'node + controller (no view)', 'view': '+ jointsim_view, no page',
              'page': '+ jointsim_view + its page in headless Chromium',
              'page-user': '+ jointsim_view + its page, Chromium without CAP_SYS_NICE',
              'page-nice': '+ jointsim_view + its page, Chromium without CAP_SYS_NICE at '
                           'niceness 19'}
    lines = ["# The browser view's cost (bench/bench_view.py)", '',
             f'Command: `.venv/bin/python bench/bench_view.py --runs {args.runs} --seconds '
             f'{args.seconds:g} --catch-up {args.catch_up:g}`; medians of {args.runs} runs '
             '(each run in brackets); CPU in % of a core.', '',
             '| set-up | node real-time factor | node CPU | controller CPU | view CPU | browser '
             'CPU | page frames/s | machine busy (2 cores) |',
             '|---|---|---|---|---|---|---|---|']
    for mode, runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        each = ', '.join(f'{r["rtf"]:.3f}' for r in runs)
        lines.append(f'| {labels[mode]} | {med["rtf"]:.3f} ({each}) | {med["node_cpu"]:.0f} | '
                     f'{med["controller_cpu"]:.0f} | {med["view_cpu"]:.0f} | '
                     f'{med["page_cpu"]:.0f} | {med["page_fps"]:.0f} | '
                     f'{100 * med["machine"]:.0f} % |')
    text = '\n'.join(lines) + '\n'
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / 'view.md').write_text(text)
    sys.stdout.write(text)


if __name__ == '__main__':
    main()
