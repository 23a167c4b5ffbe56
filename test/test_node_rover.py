"""
The rover over real DDS: its LaserScan, the browser view's drawing of it, and the rover demo.

jointsim_node runs the rover (urdf/jointsim_rover.urdf.xacro, config/jointsim_rover.yaml) in a
process of its own; the tests listen.  The scan must say what the config declares, in the
lidar's frame on /tf_static, stamped with simulated time, and read the box ahead and the walls;
the view (its node in this process) draws its hits in the world on the arena's walls and boxes.
Then ``make run ARGS='--rover --no-view'`` runs the node and the rover controller, each a
process of its own, while the test listens on their domain: the rover travels and never touches
a box (no contact point off the ground, and its footprint, posed by /tf, never meets one worked
out apart in rover_arena.py).  Nothing asserts a timing.
"""
import math
import os
import re
import subprocess
import sys
import time

from node_harness import (domain, PACKAGE_ROOT, ROS_ENVIRONMENT, RosClient, running_node,
                          stamp_seconds, STATIC_TF, stop_process, view_in_process)
import numpy as np
import pytest
from rclpy.qos import qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from rover_arena import boundary_distance, clearance, CONFIG, ROVER, scene_boxes, yaw_of
from sensor_msgs.msg import LaserScan
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray
import yaml

NODE_PARAMETERS = {'robot_description_file': str(ROVER), 'config_file': str(CONFIG)}
LIDAR = yaml.safe_load(CONFIG.read_text())['range_sensors']['lidar']


@pytest.fixture(scope='module')
def arena_node(tmp_path_factory):
    """Yield (node, client, domain id) of the rover's node, the rover standing at its start."""
    folder = tmp_path_factory.mktemp('rover_node')
    with domain() as domain_id:
        with running_node(domain_id, folder / 'node.log', parameters=NODE_PARAMETERS) as node:
            client = RosClient(domain_id)
            try:
                yield node, client, domain_id
            finally:
                client.close()


def test_the_laser_scan_says_what_the_config_declares(arena_node):
    _, client, _ = arena_node
    clock = client.subscribe(Clock, '/clock', 10)
    scans = client.subscribe(LaserScan, 'lidar/scan', qos_profile_sensor_data)
    assert client.wait_for(lambda: len(scans) >= 3), 'no lidar/scan'
    scan = scans[-1]
    assert scan.header.frame_id == 'lidar'
    assert len(scan.ranges) == LIDAR['horizontal']['samples'] == 360
    assert scan.angle_min == pytest.approx(LIDAR['horizontal']['min_angle'])
    assert scan.angle_max == pytest.approx(LIDAR['horizontal']['max_angle'])
    assert scan.angle_increment == pytest.approx(2.0 * math.pi / 360)
    assert (scan.range_min, scan.range_max) == pytest.approx(
        (LIDAR['range']['min'], LIDAR['range']['max']))
    assert scan.scan_time == pytest.approx(1.0 / LIDAR['rate'])
    assert scan.time_increment == 0.0
    # stamped with simulated time on the lidar's 10 Hz, in step with /clock
    stamps = [stamp_seconds(s.header.stamp) for s in scans]
    assert all(abs(t * 10.0 - round(t * 10.0)) < 1e-6 for t in stamps), stamps
    assert all(later > earlier for earlier, later in zip(stamps, stamps[1:])), stamps
    assert client.wait_for(lambda: clock)
    assert abs(stamp_seconds(clock[-1].clock) - stamps[-1]) < 5.0
    # the rover at its start: the box ahead straight in front (0 deg), the walls 2.5 m to
    # either side and behind; 1 cm of noise
    boxes = yaml.safe_load(CONFIG.read_text())['scene']
    ahead = boxes['box_ahead']['pose']['position'][0] - 0.5 * boxes['box_ahead']['size'][0]
    for degrees, distance in ((0, ahead), (90, 2.5), (-90, 2.5), (-180, 2.5)):
        k = int(round((math.radians(degrees) - scan.angle_min) / scan.angle_increment))
        assert scan.ranges[k] == pytest.approx(distance, abs=0.05), degrees


def test_the_lidar_frame_is_on_the_mount_on_tf_static(arena_node):
    _, client, _ = arena_node
    static = client.subscribe(TFMessage, '/tf_static', STATIC_TF)
    assert client.wait_for(lambda: static)
    edges = {(t.header.frame_id, t.child_frame_id): t.transform.translation
             for m in static for t in m.transforms}
    mount, lidar = edges[('base_link', 'lidar_link')], edges[('lidar_link', 'lidar')]
    assert (mount.x, mount.y, mount.z) == pytest.approx((0.0, 0.0, 0.07))
    assert (lidar.x, lidar.y, lidar.z) == pytest.approx(tuple(LIDAR['pose']['position']))


def test_the_view_draws_the_scan_on_the_walls_and_boxes(arena_node):
    # the view's node in this process (its own context): it finds lidar/scan, reads it best
    # effort and draws every hit in the world, from the lidar's pose on /tf at the scan's stamp
    _, _, domain_id = arena_node
    with view_in_process(domain_id, 8093) as (view, executor):
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline and len(view.scene.range_points().get(
                'lidar', ())) < 300:
            executor.spin_once(timeout_sec=0.05)
        points = view.scene.range_points().get('lidar', np.zeros((0, 3)))
        assert len(points) == 360, view.scene.range_points()
        # at the lidar's height, on the side of a wall or a box: 1 cm of noise, and the view
        # sends its points as 16-bit floats (2 mm at 2.5 m)
        assert np.all(np.abs(points[:, 2] - 0.19) < 0.01), points[:, 2]
        boxes = scene_boxes()
        off = [boundary_distance(p, boxes) for p in points]
        assert max(off) < 0.05, max(off)
        # the arena's boxes as the scene_markers draw them, on their frames
        assert 'world' in view.scene.scene_frames()


#: Wall-clock seconds of `make run ARGS='--rover --no-view'` in the test over DDS.
DEMO_SECONDS = 25.0


@pytest.mark.slow
def test_make_run_rover_drives_among_the_boxes_without_touching_one(tmp_path):
    # make run ARGS='--rover --no-view': the node and the rover controller, each its own process,
    # talking over topics; the status line shows where the rover is, its heading and the nearest
    # thing its lidar sees.  This test listens on the same domain: the rover travels and never
    # touches a box (no contact point off the ground; its footprint, posed by /tf, never meets
    # one)
    boxes = scene_boxes()
    poses, off_ground = [], []

    def on_tf(msg):
        for t in msg.transforms:
            if t.child_frame_id == 'base_link':
                p, q = t.transform.translation, t.transform.rotation
                poses.append((stamp_seconds(t.header.stamp), (p.x, p.y, p.z),
                              (q.w, q.x, q.y, q.z)))

    def on_contacts(msg):
        # a wheel on the ground touches at z = 0; anything else is a box or a wall
        off_ground.extend((m.pose.position.x, m.pose.position.y, m.pose.position.z)
                          for m in msg.markers if m.action == Marker.ADD
                          and m.ns == 'contact_points' and m.pose.position.z > 0.01)
    with domain() as domain_id:
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id), **ROS_ENVIRONMENT)
        client = RosClient(domain_id)
        client.node.create_subscription(TFMessage, '/tf', on_tf, 100)
        client.node.create_subscription(MarkerArray, 'contact_markers', on_contacts, 10)
        with open(tmp_path / 'demo.log', 'w') as log:
            demo = subprocess.Popen(
                [sys.executable, '-m', 'jointsim_ros.tools.demo', '--rover', '--seconds',
                 str(DEMO_SECONDS), '--no-view'],
                cwd=PACKAGE_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
            try:
                client.wait_for(lambda: demo.poll() is not None, timeout=DEMO_SECONDS + 150.0)
            finally:
                stop_process(demo)
                client.close()
    out = (tmp_path / 'demo.log').read_text(errors='replace')
    assert demo.returncode == 0, out
    lines = [line for line in out.splitlines() if line.startswith('t = ')]
    where = [tuple(float(v) for v in re.search(r'x ([-+.\d]+) y ([-+.\d]+)', line).groups())
             for line in lines if 'lidar: nearest' in line]
    assert len(where) >= 3, out
    # it went somewhere: at least 0.5 m from its start at some status line (it wanders among
    # the boxes and may end near where it began: a CI run drove 2.8 m out and came back to
    # 0.33 m of its start)
    assert max(math.dist(where[0], w) for w in where) > 0.5, out
    assert 'left wheels front_left_wheel_joint, rear_left_wheel_joint' in out, out
    assert re.search(r'jointsim_rover_controller\]: t = .* free ahead; nearest \d\.\d\d m',
                     out), out
    assert 'jointsim demo: stopped' in out and 'Traceback' not in out, out
    assert poses and not off_ground, off_ground[:5]
    nearest = min(clearance(xyz, yaw_of(quat), boxes) for _, xyz, quat in poses)
    assert nearest[0] > 0.0, nearest
    path = sum(math.dist(a[1][:2], b[1][:2]) for a, b in zip(poses, poses[1:]))
    assert path > 3.0, path     # about 0.4 m/s, turns included, once the node has started
