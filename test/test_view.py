"""
The browser view (issue 33, docs/view.md): its logic without a browser, and its page in one.

Without a browser: TF edges composed into world poses against the matrices multiplied out, a
wrench's arrows against the vector rotated by hand, the plot buffers, the URDF's visual shapes
with a missing mesh drawn as its collision shape (announced once), the camera's projection,
a port in use, the range sensors' points (a scan, a cloud and a depth image as the node sends
them, and the humanoid's head camera) in the world.  In a real browser (headless Chromium
over DevTools, test/browser.py): jointsim_node runs the arm, jointsim_view draws it; the pixels
of the arm's colour lie in the projected box of the link /tf puts there, and move with it when
the joint moves; a click on Pause stops /clock.
"""
import math
import socket
import subprocess
import sys
import time

import browser
from jointsim_ros.rotations import quat_to_matrix, rpy_to_matrix
from jointsim_ros.view.drawing import (CAMERA_FOV, framing, free_port, link_visuals,
                                       most_moving, PlotBuffer, project, ViewScene,
                                       world_poses, wrench_arrows)
from node_harness import (domain, PACKAGE_ROOT, ROS_ENVIRONMENT, RosClient, running_node,
                          stamp_seconds, STATIC_TF, view_in_process)
import numpy as np
import pytest
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage


def quat(rpy):
    """Return the wxyz quaternion of roll, pitch, yaw."""
    from jointsim_ros.rotations import matrix_to_quat
    return matrix_to_quat(rpy_to_matrix(rpy))


def test_tf_edges_compose_into_world_poses_as_the_matrices_multiply():
    edges = {'base': ('world', (1.0, 0.0, 0.5), quat((0.0, 0.0, 0.5))),
             'r/arm': ('base', (0.0, 0.3, 0.0), quat((0.2, -0.4, 0.0))),
             'r/hand': ('r/arm', (0.4, 0.0, 0.1), quat((0.0, 0.3, 1.0))),
             'lost': ('elsewhere', (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))}
    poses = world_poses(edges, 'world', prefix='r/')
    assert set(poses) == {'base', 'arm', 'hand'}
    transform = np.eye(4)
    for child in ('base', 'r/arm', 'r/hand'):
        _, xyz, q = edges[child]
        step = np.eye(4)
        step[:3, :3], step[:3, 3] = quat_to_matrix(np.array(q)), xyz
        transform = transform @ step
    np.testing.assert_allclose(poses['hand'][0], transform[:3, 3], atol=1e-12)
    np.testing.assert_allclose(quat_to_matrix(poses['hand'][1]), transform[:3, :3], atol=1e-12)


def test_a_wrench_is_drawn_as_its_force_and_torque_turned_into_the_world():
    q = quat((0.0, 0.0, math.pi / 2))    # the sensor frame turned 90 deg about z
    force_arrow, torque_arrow = wrench_arrows((10.0, 0.0, 0.0), (0.0, 0.0, 2.0), (1, 2, 3), q,
                                              force_scale=0.01, torque_scale=0.1)
    np.testing.assert_allclose(force_arrow[0], (1, 2, 3))
    np.testing.assert_allclose(force_arrow[1], (1.0, 2.1, 3.0), atol=1e-12)   # x -> y, 0.1 m
    np.testing.assert_allclose(torque_arrow[1], (1.0, 2.0, 3.2), atol=1e-12)


def test_plot_buffers_keep_the_last_samples_and_start_again_after_a_reset():
    buffer = PlotBuffer(samples=3)
    for t in range(5):
        buffer.add(0.1 * t, {'a': t} if t != 3 else {'b': 7.0})
    t, a, b = buffer.arrays(['a', 'b'])
    np.testing.assert_allclose(t, [0.2, 0.3, 0.4])
    np.testing.assert_allclose(a[[0, 2]], [2.0, 4.0])
    assert math.isnan(a[1]) and b[1] == 7.0 and math.isnan(b[2])
    buffer.add(0.0, {'a': 1.0})            # the time went back: a reset
    assert buffer.arrays(['a'])[0].tolist() == [0.0]


def test_a_missing_mesh_is_drawn_as_its_collision_shape_and_announced_once():
    urdf = """<robot name="r">
      <material name="blue"><color rgba="0 0 1 1"/></material>
      <link name="a"><visual><geometry><box size="1 2 3"/></geometry>
        <material name="blue"/></visual></link>
      <link name="b"><visual><geometry><mesh filename="package://nowhere/b.stl"/></geometry>
        </visual><visual><geometry><mesh filename="package://nowhere/c.stl"/></geometry>
        </visual><collision><origin xyz="0 0 0.5"/><geometry><cylinder radius="0.1"
        length="1"/></geometry></collision></link>
      <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>
    </robot>"""
    said = []
    visuals = link_visuals(urdf, said.append)
    assert [(v.link, v.kind) for v in visuals] == [('a', 'box'), ('b', 'cylinder')]
    assert visuals[0].colour == (0, 0, 255) and visuals[0].size == (1.0, 2.0, 3.0)
    assert visuals[1].pos == (0.0, 0.0, 0.5) and visuals[1].size == (0.1, 1.0)
    assert len(said) == 1 and '2 mesh(es)' in said[0] and 'collision shapes' in said[0]


def test_the_camera_projects_what_it_looks_at_to_the_middle_and_up_to_the_top():
    centre = project([(0.0, 0.0, 0.6)], 1000, 700)[0]
    np.testing.assert_allclose(centre, (500.0, 350.0), atol=1e-9)
    above = project([(0.0, 0.0, 1.0)], 1000, 700)[0]
    assert above[1] < 350.0 and abs(above[0] - 500.0) < 1e-9


@pytest.mark.parametrize('points', [
    [(0.0, 0.0, 0.0), (0.3, 0.1, 1.2)],                                # one arm
    [(-0.2, -1.5, 0.0), (0.2, 1.5, 1.0), (0.0, 0.0, 0.5)],              # two robots apart
    [(5.0, 5.0, 0.0)] * 3,                                              # a point, off centre
])
def test_the_framing_camera_shows_every_point_and_fills_the_frame(points):
    width, height = 1600, 1000
    position, look_at = framing(points, CAMERA_FOV, width / height)
    pixels = project(points, width, height, position, look_at, CAMERA_FOV)
    assert np.all(pixels >= 0.0) and np.all(pixels[:, 0] <= width), pixels
    assert np.all(pixels[:, 1] <= height), pixels
    np.testing.assert_allclose(project([look_at], width, height, position, look_at,
                                       CAMERA_FOV)[0], (width / 2, height / 2), atol=1e-6)
    spread = np.ptp(np.asarray(points, float), axis=0).max()
    if spread > 1.0:   # a world that big takes at least a third of the frame's width or height
        extent = np.ptp(pixels, axis=0)
        assert extent[0] > width / 3 or extent[1] > height / 3, extent


def test_plots_pick_the_joints_that_move_most_and_read_simulated_seconds():
    buffer = PlotBuffer()
    for k in range(50):
        t = 0.1 * k
        buffer.add(t, {'a': 0.01 * math.sin(t), 'b': 0.5 * math.sin(t), 'c': 0.0,
                       'd': 0.2 * math.cos(t), 'e': -0.3 * t})
    assert most_moving(buffer, ['a', 'b', 'c', 'd', 'e'], 3) == ['e', 'b', 'd']
    assert most_moving(buffer, ['a', 'z'], 4) == ['a', 'z']  # a joint not seen spans 0
    scene = ViewScene(0, announce=lambda _: None)
    try:
        title = scene.add_plot('position (rad)', ['a', 'b'])
        handle = scene._plots[title][0]
        assert handle.scales == {'x': {'time': False}}  # seconds, not calendar time
        assert handle.axes[0]['label'] == 'simulated time, s'
        scene.update_plot(title, buffer, ['e', 'b'])
        assert scene.plot_names(title) == ('e', 'b')
        assert [s['label'] for s in handle.series] == ['t', 'e', 'b']
        np.testing.assert_allclose(handle.data[1][-1], -0.3 * 4.9)
    finally:
        scene.close()


def test_the_scene_markers_draw_every_object_on_its_frame_and_static_geometry_in_the_world():
    # the node's scene_markers (latched, again after each spawn and delete) and the view's
    # reading of them: the same sizes and poses, the robot and the ground left out
    from jointsim_ros import Simulator
    from jointsim_ros.ros.messages import scene_markers
    from jointsim_ros.view.node import marker_visuals
    sim = Simulator.from_urdf(str(PACKAGE_ROOT / 'urdf' / 'jointsim_arm.urdf.xacro'), {
        'scene': {
            'table': {'shape': 'box', 'size': [0.6, 0.4, 0.05],
                      'pose': {'position': [0.5, 0.0, 0.3]}},
            'ball': {'shape': 'sphere', 'radius': 0.04, 'mass': 0.1,
                     'pose': {'position': [0.5, 0.0, 0.5]}},
            'can': {'shape': 'cylinder', 'radius': 0.03, 'length': 0.1, 'mass': 0.2,
                    'pose': {'position': [0.4, 0.1, 0.5], 'rpy': [0.3, 0.0, 0.0]}}}})
    msg = scene_markers(sim.model, 'world', prefix='sim/')
    assert msg.markers[0].action == msg.markers[0].DELETEALL
    visuals = {v.link: v for v in marker_visuals(msg, prefix='sim/')}
    assert set(visuals) == {'world', 'ball', 'can'}   # no robot link, no ground plane
    table, ball, can = visuals['world'], visuals['ball'], visuals['can']
    assert table.kind == 'box'
    np.testing.assert_allclose(table.size, (0.6, 0.4, 0.05), atol=1e-12)
    np.testing.assert_allclose(table.pos, (0.5, 0.0, 0.3), atol=1e-12)
    assert ball.kind == 'sphere' and ball.size == pytest.approx((0.04,))
    assert can.kind == 'cylinder' and can.size == pytest.approx((0.03, 0.1))
    # on its own frame: the shape sits at the frame's origin (the object's centre), and the
    # frame on /tf carries the pose
    np.testing.assert_allclose(can.pos, (0.0, 0.0, 0.0), atol=1e-12)
    np.testing.assert_allclose(abs(np.dot(can.quat, (1.0, 0.0, 0.0, 0.0))), 1.0, atol=1e-12)
    position, quat = sim.link_pose('can')
    np.testing.assert_allclose(position, (0.4, 0.1, 0.5), atol=1e-12)
    scene = ViewScene(0, announce=lambda _: None)
    try:
        scene.set_scene(list(visuals.values()))
        assert set(scene.scene_frames()) == {'world', 'ball', 'can'}
        scene.set_scene([ball])                        # the can and the table deleted
        assert scene.scene_frames() == ('ball',)
    finally:
        scene.close()


def test_a_port_in_use_gives_another_free_one():
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        other = free_port(port)
    assert other != port and other > 0


def test_contacts_changing_in_number_keep_one_colour_and_points_follow():
    # a page rebuilds a point cloud's material, and compiles its shader again, whenever the
    # cloud's colours change: 100 ms or more in software WebGL, and a walk's contacts change in
    # number several times a second (a profile of the page found 30 % of its time in compiles)
    from jointsim_ros.view.drawing import CONTACT_COLOUR, ViewScene
    scene = ViewScene(free_port(0), announce=lambda line: None)
    try:
        for n in (4, 8, 3, 8):
            points = np.arange(3 * n, dtype=float).reshape(n, 3)
            arrows = [(p, p + [0.0, 0.0, 0.1]) for p in points]
            scene.set_contacts(points, arrows)
            cloud, lines = scene._contacts
            assert np.allclose(cloud.points, points)
            assert np.allclose(lines.points, np.array(arrows))
            assert cloud.colors.shape == lines.colors.shape == (3,)
            assert tuple(cloud.colors) == tuple(lines.colors) == CONTACT_COLOUR
        scene.set_contacts(np.zeros((0, 3)), [])
        assert not cloud.visible and not lines.visible
    finally:
        scene.close()


# -- range sensors' points ---------------------------------------------------------------------
#: The sensors on the arm's base (m, base_link frame) and the wall's near face ahead of them.
SENSOR = [0.3, 0.0, 1.0]
WALL_FACE = 1.95


def sensors_facing_a_wall():
    """Return the bundled arm with a scan, a three-row lidar and a depth camera facing a wall."""
    from jointsim_ros import Simulator
    lidar = {'link': 'base_link', 'pose': {'position': SENSOR, 'rpy': [0.0, 0.0, 0.3]},
             'range': {'min': 0.1, 'max': 10.0},
             'horizontal': {'samples': 61, 'min_angle': -0.3, 'max_angle': 0.3}}
    return Simulator.from_urdf(str(PACKAGE_ROOT / 'urdf' / 'jointsim_arm.urdf.xacro'), {
        'range_sensors': {
            'scan': lidar,
            'cloud': dict(lidar, vertical={'samples': 3, 'min_angle': -0.2, 'max_angle': 0.2}),
            'camera': {'link': 'base_link', 'kind': 'depth_camera',
                       'pose': {'position': SENSOR, 'rpy': [0.0, 0.1, -0.2]},
                       'range': {'min': 0.05, 'max': 8.0}, 'width': 40, 'height': 30,
                       'horizontal_fov': 0.8}},
        'scene': {'wall': {'shape': 'box', 'size': [0.1, 6.0, 3.0],
                           'pose': {'position': [WALL_FACE + 0.05, 0.0, 1.5]}}}})


def test_a_scan_a_cloud_and_a_depth_image_are_drawn_on_the_wall_they_see():
    # the messages the node sends (ros/messages.py), read back as the view's node reads them
    # and put in the world from the sensor frames' poses: every point on the wall's face
    from jointsim_ros.ros import messages
    from jointsim_ros.ros.frames import OPTICAL_QUAT
    from jointsim_ros.rotations import quat_multiply
    from jointsim_ros.view.drawing import to_world
    from jointsim_ros.view.node import range_message_points
    sim = sensors_facing_a_wall()
    sensors = sim.sensors
    drawn = {}
    for name in ('scan', 'cloud', 'camera'):
        sample, spec = sensors.range_sample(name), sensors.range_sensor(name)
        pose = (sample.position, sample.quat)
        if name == 'scan':
            points = range_message_points('scan', messages.laser_scan(
                spec, sample.ranges, name, sample.time))
        elif name == 'cloud':
            points = range_message_points('cloud', messages.point_cloud(
                sample.ranges, sensors.ray_directions(name), name, sample.time))
        else:
            info = messages.camera_info(spec, 'camera_optical', sample.time)
            points = range_message_points('depth', messages.depth_image(
                sample.ranges, 'camera_optical', sample.time), info.k)
            pose = (sample.position, quat_multiply(sample.quat, np.array(OPTICAL_QUAT)))
        drawn[name] = to_world(points, *pose)
    assert [len(drawn[name]) for name in ('scan', 'cloud', 'camera')] == [61, 3 * 61, 40 * 30]
    for name, points in drawn.items():
        # float32 in the messages: a few micrometres
        np.testing.assert_allclose(points[:, 0], WALL_FACE, atol=2e-5, err_msg=name)
    # the scan's hits at the lidar's height, spread as its columns turned by 0.3 rad
    np.testing.assert_allclose(drawn['scan'][:, 2], SENSOR[2], atol=1e-6)
    expected_y = (WALL_FACE - SENSOR[0]) * np.tan(np.linspace(0.0, 0.6, 61))
    np.testing.assert_allclose(drawn['scan'][:, 1], expected_y, atol=2e-5)


def test_the_headless_view_draws_the_range_sensors_from_where_they_sampled():
    from jointsim_ros.view.simulator_view import SimulatorView
    sim = sensors_facing_a_wall()
    sim.step(150)                               # a sample at 0.1 s
    view = SimulatorView(sim, free_port(0), announce=lambda line: None)
    try:
        view.update()
        points = view.scene.range_points()
        assert {name: len(p) for name, p in points.items()} == {
            'scan': 61, 'cloud': 3 * 61, 'camera': 40 * 30}
        for name, p in points.items():
            # sent to the page as 16-bit floats: 1 mm at 2 m
            np.testing.assert_allclose(p[:, 0], WALL_FACE, atol=2e-3, err_msg=name)
    finally:
        view.close()


def test_the_humanoids_head_camera_is_drawn_on_the_floor_ahead_of_it():
    # config/jointsim_humanoid.yaml's head camera looks ahead and down: what it sees in the
    # humanoid's start pose is the floor, from about 1.2 m ahead of the feet to its 10 m range
    from jointsim_ros import Simulator
    from jointsim_ros.view.simulator_view import SimulatorView
    sim = Simulator.from_urdf(str(PACKAGE_ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'),
                              str(PACKAGE_ROOT / 'config' / 'jointsim_humanoid.yaml'))
    spec = sim.sensors.range_sensor('head_camera')
    assert (spec.kind, spec.width, spec.height, spec.rate) == ('depth_camera', 160, 120, 15.0)
    view = SimulatorView(sim, free_port(0), announce=lambda line: None)
    try:
        view.update()
        floor = view.scene.range_points()['head_camera']
        # every other pixel of every other row (80 x 60, within the 5000 points drawn of a
        # sensor) that sees the floor within 10 m
        assert 3000 < len(floor) <= 80 * 60
        # on the floor: 5 mm of noise along the rays, 16-bit floats (4 mm at 8 m)
        assert np.all(np.abs(floor[:, 2]) < 0.03), floor[:, 2].min()
        assert floor[:, 0].min() > 1.0 and floor[:, 0].max() < 10.5
    finally:
        view.close()


# -- in a real browser ------------------------------------------------------------------------
#: The arm's links (urdf/jointsim_arm.urdf.xacro): orange cylinders of 0.06 m radius.
LINK_RADIUS = 0.06


def orange(image):
    """Return the mask of the arm's orange pixels (lit or shaded) in an RGB image."""
    r, g, b = (image[..., k].astype(int) for k in range(3))
    return (r > 120) & (r - b > 80) & (g < 0.8 * r) & (g > 0.15 * r)


def box_pixels(centre, half, width, height):
    """Return the projected pixel box (x0, y0, x1, y1) of a world box."""
    corners = np.array([[centre[0] + sx * half, centre[1] + sy * half, centre[2] + sz * half]
                        for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    pixels = project(corners, width, height)
    x0, y0 = np.floor(pixels.min(axis=0)).astype(int)
    x1, y1 = np.ceil(pixels.max(axis=0)).astype(int)
    return max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)


def fraction_inside(mask, box):
    x0, y0, x1, y1 = box
    return float(mask[y0:y1, x0:x1].mean()) if x1 > x0 and y1 > y0 else 0.0


@pytest.mark.slow
@pytest.mark.skipif(browser.available() is None,
                    reason="no chromium (make test installs Debian's package as root)")
def test_in_a_browser_the_arm_is_drawn_where_tf_puts_it_and_pause_stops_the_clock(tmp_path):
    with domain() as domain_id:
        with running_node(domain_id, tmp_path / 'node.log',
                          parameters={'real_time_factor': 1.0}):
            # the view at the test's own priority: this checks what it draws, not that it
            # yields to the simulator (bench/bench_view.py measures that)
            env = dict(__import__('os').environ, ROS_DOMAIN_ID=str(domain_id),
                       JOINTSIM_VIEW_NICE='0', **ROS_ENVIRONMENT)
            port = free_port(8090)
            # the default camera, where box_pixels projects (the framing camera: tested above)
            view = subprocess.Popen(
                [sys.executable, '-m', 'jointsim_ros.view.node', '--ros-args', '-p',
                 f'port:={port}', '-p', 'camera_frame:=false'], cwd=PACKAGE_ROOT, env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True)
            client = RosClient(domain_id)
            page = None
            try:
                assert view.stdout.readline().strip() == f'view: http://127.0.0.1:{port}'
                tf = client.subscribe(TFMessage, '/tf', 100)
                static = client.subscribe(TFMessage, '/tf_static', STATIC_TF)
                clock = client.subscribe(Clock, '/clock', 100)
                commands = client.publisher(JointState, 'joint_commands')

                def hold(**targets):
                    msg = JointState(name=[f'joint_a{k}' for k in range(1, 8)])
                    msg.position = [targets.get(n, 0.0) for n in msg.name]
                    commands.publish(msg)

                def link_position(link):
                    edges = {}
                    for m in list(static) + list(tf):
                        for t in m.transforms:
                            r, q = t.transform.translation, t.transform.rotation
                            edges[t.child_frame_id] = (t.header.frame_id, (r.x, r.y, r.z),
                                                       (q.w, q.x, q.y, q.z))
                    return world_poses(edges, 'world').get(link, (None,))[0]

                page = browser.Browser()
                page.load(f'http://127.0.0.1:{port}')
                # the page has drawn the robot (a loaded machine drawing with software WebGL
                # took more than the 4 s below for its first frame with the meshes)
                deadline = time.monotonic() + 60.0
                while orange(page.screenshot()).sum() < 200 and time.monotonic() < deadline:
                    client.spin_for(0.5)
                seen = []
                for targets in ({}, {'joint_a2': 1.2}):
                    # servo targets held for 3 s: the arm stands there, /tf says where
                    client.wait_for(lambda: False, timeout=3.0, every=(0.05, lambda: hold(
                        **targets)))
                    link = link_position('link_4')
                    assert link is not None
                    box = box_pixels(link, LINK_RADIUS, browser.WIDTH, browser.HEIGHT)
                    # the page draws at 30 Hz; a loaded machine's page some frames later
                    deadline = time.monotonic() + 20.0
                    while True:
                        time.sleep(1.0)
                        image = page.screenshot()
                        if (fraction_inside(orange(image), box) > 0.3
                                or time.monotonic() > deadline):
                            break
                    assert image.shape == (browser.HEIGHT, browser.WIDTH, 3)
                    seen.append((link, box, orange(image)))
                (before, box0, mask0), (after, box1, mask1) = seen
                assert np.linalg.norm(after - before) > 0.2      # the link moved
                assert fraction_inside(mask0, box0) > 0.3, box0   # drawn where /tf says
                assert fraction_inside(mask1, box1) > 0.3, box1
                assert fraction_inside(mask1, box0) < 0.5 * fraction_inside(mask0, box0)
                # the Pause button pauses the simulator: /clock stops
                assert client.wait_for(lambda: len(clock) > 10)
                assert page.click_button('Pause')
                client.spin_for(1.0)
                last = stamp_seconds(clock[-1].clock)
                client.spin_for(1.5)
                assert stamp_seconds(clock[-1].clock) == last
                assert page.click_button('Resume')
                assert client.wait_for(lambda: stamp_seconds(clock[-1].clock) > last + 0.2)
            finally:
                if page is not None:
                    page.close()
                client.close()
                view.terminate()
                view.wait(timeout=10)


def test_the_headless_view_says_the_port_it_took_when_its_own_is_in_use_and_serves_the_page():
    import urllib.request
    with socket.socket() as taken:
        taken.bind(('127.0.0.1', 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.Popen(
            [sys.executable, '-m', 'jointsim_ros.tools.headless', '--view', str(port),
             '--seconds', '0.5'], cwd=PACKAGE_ROOT, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        try:
            lines = []
            for line in run.stdout:
                lines.append(line.rstrip())
                if line.startswith('view: http'):
                    break
            said = '\n'.join(lines)
            assert f'view: port {port} is in use; using the free port' in said, said
            other = int(said.split('using the free port ')[1].split()[0])
            assert lines[-1] == f'view: http://127.0.0.1:{other}'
            with urllib.request.urlopen(lines[-1].split('view: ')[1], timeout=20) as page:
                assert page.status == 200 and b'<html' in page.read().lower()
            for line in run.stdout:          # the run ends, the page stays up
                if 'the page stays up until Ctrl-C' in line:
                    break
            run.send_signal(__import__('signal').SIGINT)
            assert run.wait(timeout=20) == 0
        finally:
            if run.poll() is None:
                run.kill()


@pytest.mark.slow
def test_a_slider_sends_a_servo_target_the_arm_follows(tmp_path):
    # the view node in this process (its own context), the simulator in another: moving a
    # slider (as the page does: its value set, its callbacks run) commands joint_commands
    with domain() as domain_id:
        with running_node(domain_id, tmp_path / 'node.log'), \
                view_in_process(domain_id, 8091) as (view, executor):
            client = RosClient(domain_id)
            try:
                states = client.subscribe(JointState, 'joint_states')
                deadline = time.monotonic() + 20.0
                while 'joint_a2' not in view._sliders and time.monotonic() < deadline:
                    executor.spin_once(timeout_sec=0.05)
                    client.spin_for(0.01)
                slider = view._sliders['joint_a2']
                slider.value = 0.8
                deadline = time.monotonic() + 10.0
                while time.monotonic() < deadline:
                    executor.spin_once(timeout_sec=0.01)
                    client.spin_for(0.02)
                    if states and abs(dict(zip(states[-1].name,
                                               states[-1].position))['joint_a2'] - 0.8) < 0.02:
                        break
                position = dict(zip(states[-1].name, states[-1].position))['joint_a2']
                assert abs(position - 0.8) < 0.02, position
            finally:
                client.close()
