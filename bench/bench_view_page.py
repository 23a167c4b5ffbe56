"""
Where the view's page spends its CPU in a GPU-less browser (issue 33).

The humanoid's view (``SimulatorView``: links, plots, buttons) is served alone, its links moved
at 30 Hz as the walk moves them, and its page opened in headless Chromium (software WebGL,
SwiftShader; the browser without CAP_SYS_NICE, niceness 0), nothing else running.  Per
set-up, over ``--seconds`` after ``--warm-up`` s (the page's start: its environment map and
shaders take seconds in software): the browser's CPU (% of a core; all its processes, and
its GPU process alone) and the page's frames per second.  Set-ups, each cutting more of what
is drawn:
  shadows        viser's default lights with their shadows (three cascades): the view before
                 f887c67;
  view           the view as it is (the default lights without shadows);
  no-env         and no environment map (image-based lighting);
  dpr-0.25       and a sixteenth of the pixels (viser's ``?fixedDpr=0.25``);
  one-box        and only one moving box, no grid, no panel;
  still-shadows  as 'shadows' with nothing moving (the page draws on demand);
  still          as 'view' with nothing moving.

Run: .venv/bin/python bench/bench_view_page.py [--runs 3] [--seconds 10] [--warm-up 15]
Writes bench/results/view_page.md.
"""
import argparse
import math
from pathlib import Path
import statistics
import sys
import time

from benchlib import (descendants, process_cpu_seconds, REPO_ROOT, RESULTS_DIR, save_markdown,
                      tree_cpu)

sys.path.insert(0, str(REPO_ROOT / 'test'))

import browser  # noqa: E402, I100
from jointsim_ros.sim.simulator import Simulator  # noqa: E402
from jointsim_ros.view.simulator_view import SimulatorView  # noqa: E402

ROBOT = REPO_ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
CONFIG = REPO_ROOT / 'config' / 'jointsim_humanoid.yaml'
SETUPS = ('shadows', 'view', 'no-env', 'dpr-0.25', 'one-box', 'still-shadows', 'still')
#: how much each set-up cuts: 0 shadows, 1 the view, 2 no-env, 3 dpr-0.25, 4 one-box
CUT = {'shadows': 0, 'view': 1, 'no-env': 2, 'dpr-0.25': 3, 'one-box': 4,
       'still-shadows': 0, 'still': 1}


def chromium_cpu(pid):
    """Return {'all': s, 'gpu': s}: CPU seconds of one browser's processes and its GPU one."""
    gpu = 0.0
    for child in descendants(pid):
        try:
            if '--type=gpu-process' in Path(f'/proc/{child}/cmdline').read_text():
                gpu += process_cpu_seconds(child)
        except OSError:     # ended since it was listed
            pass
    return {'all': tree_cpu(pid), 'gpu': gpu}


def one_run(setup, seconds, port, warm_up):
    """Serve the view, open its page, move it as ``setup`` says; return its figures."""
    sim = Simulator.from_urdf(str(ROBOT), str(CONFIG))
    view = SimulatorView(sim, port=port, announce=lambda line: None)
    scene, server = view.scene, view.scene.server
    view.update()
    cut = CUT[setup]
    if cut == 0:
        server.scene.configure_default_lights(True, cast_shadow=True)
    if cut >= 2:
        server.scene.configure_environment_map(hdri=None)
    names = list(scene._links)
    if cut >= 4:
        server.scene.add_grid('/ground', visible=False)
        for handle in scene._links.values():
            handle.remove()
        scene._links = {'box': server.scene.add_box('/box', dimensions=(0.2, 0.2, 0.2),
                                                    color=(200, 100, 50))}
        names = ['box']
        server.gui.reset()
    page = browser.Browser(like_a_user=True)
    try:
        page.load(scene.url + ('?fixedDpr=0.25' if cut >= 3 else ''))

        def move(duration):
            end, k = time.monotonic() + duration, 0
            while time.monotonic() < end:
                k += 1
                if not setup.startswith('still'):
                    scene.set_poses({n: ((0.01 * math.sin(0.2 * k + i), 0.0,
                                          0.5 + 0.05 * math.sin(0.1 * k)), (1.0, 0.0, 0.0, 0.0))
                                     for i, n in enumerate(names)})
                time.sleep(1.0 / 30.0)
        move(warm_up)
        page.evaluate('window.benchFrames = 0; (function count() { window.benchFrames++; '
                      'requestAnimationFrame(count); })(); 0')
        cpu0, wall0 = chromium_cpu(page.process.pid), time.monotonic()
        move(seconds)
        cpu1, wall = chromium_cpu(page.process.pid), time.monotonic() - wall0
        frames = page.evaluate('window.benchFrames')
    finally:
        page.close()
        view.close()
    return {'cpu': 100.0 * (cpu1['all'] - cpu0['all']) / wall,
            'gpu': 100.0 * (cpu1['gpu'] - cpu0['gpu']) / wall, 'fps': frames / wall}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--warm-up', type=float, default=15.0)
    args = parser.parse_args()
    rows = {setup: [] for setup in SETUPS}
    for _ in range(args.runs):
        for setup in SETUPS:
            rows[setup].append(one_run(setup, args.seconds, browser.free_port(), args.warm_up))
            print(setup, rows[setup][-1], flush=True)
    lines = ["# The view's page in a GPU-less browser (bench/bench_view_page.py)", '',
             f'Command: `.venv/bin/python bench/bench_view_page.py --runs {args.runs} '
             f'--seconds {args.seconds:g} --warm-up {args.warm_up:g}`; medians of {args.runs} '
             'runs; CPU in % of a core (2 cores).', '',
             '| set-up | browser CPU | its GPU process | page frames/s | CPU ms a frame |',
             '|---|---|---|---|---|']
    for setup, runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        per_frame = 10.0 * med['cpu'] / med['fps'] if med['fps'] > 0 else float('nan')
        lines.append(f'| {setup} | {med["cpu"]:.0f} | {med["gpu"]:.0f} | {med["fps"]:.1f} | '
                     f'{per_frame:.0f} |')
    save_markdown(RESULTS_DIR, 'view_page', '\n'.join(lines))


if __name__ == '__main__':
    main()
