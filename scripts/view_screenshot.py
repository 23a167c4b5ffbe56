"""
Make docs/view_humanoid.png: the browser view on the walking humanoid (README, docs/view.md).

Runs what ``make run ARGS=--humanoid`` runs (jointsim_node at real time, the humanoid
controller, jointsim_view) on a ROS domain of its own, takes a screenshot of the page with headless
Chromium (over DevTools, test/browser.py) after ``--seconds`` of walking, the page's notices
closed.

    .venv/bin/python scripts/view_screenshot.py [--seconds 6] [--out docs/view_humanoid.png]
"""
import argparse
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'test'))

import browser  # noqa: E402, I100
from node_harness import domain, NodeProcess, ROS_ENVIRONMENT  # noqa: E402

ROBOT = ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
CONFIG = ROOT / 'config' / 'jointsim_humanoid.yaml'


def main():
    """Run the walk with its view, screenshot the page, write the PNG."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--seconds', type=float, default=6.0)
    parser.add_argument('--out', default=str(ROOT / 'docs' / 'view_humanoid.png'))
    args = parser.parse_args()
    with domain() as domain_id, tempfile.TemporaryDirectory() as logs:
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), **ROS_ENVIRONMENT)
        node = NodeProcess(domain_id, Path(logs) / 'node.log', parameters={
            'robot_description_file': str(ROBOT), 'config_file': str(CONFIG),
            'publish_rate': 200.0, 'catch_up_ticks': 1.0})
        children = []
        try:
            node.wait_ready()
            children.append(subprocess.Popen(
                [sys.executable, '-m', 'jointsim_ros.tools.humanoid_controller', '--robot',
                 str(ROBOT), '--config', str(CONFIG), '--steps', '20'], cwd=ROOT, env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
            view = subprocess.Popen(
                [sys.executable, '-m', 'jointsim_ros.view.node', '--ros-args', '-p',
                 'port:=8098', '-p', 'camera_position:=[1.2, -3.4, 1.5]', '-p',
                 'camera_look_at:=[0.9, 0.0, 0.6]'],
                cwd=ROOT, env=env,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            children.append(view)
            url = browser.view_url(view)
            page = browser.Browser(width=1200, height=750)
            try:
                page.load(url)
                time.sleep(args.seconds)
                # the page's notices (viser's "Software WebGL rendering detected" in a browser
                # without a GPU) are not part of the view: closed before the picture
                page.evaluate('document.querySelectorAll(".mantine-Notifications-root, '
                              '.mantine-Notification-root").forEach(e => e.remove())')
                time.sleep(0.5)
                from PIL import Image
                Image.fromarray(page.screenshot()).save(args.out)
            finally:
                page.close()
            print(f'wrote {args.out}')
        finally:
            for child in children:
                child.terminate()
                child.wait(timeout=10)
            node.stop()


if __name__ == '__main__':
    main()
