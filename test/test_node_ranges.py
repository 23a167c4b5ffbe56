"""
Lidars and depth cameras over real DDS: the node in its own process, the test a subscriber.

The bundled arm with three range sensors on its base (a one-row lidar, a four-row lidar and a
small depth camera), all facing a wall 1.65 m ahead of them: the messages must say what the
config declares, in the sensor frames on /tf_static, stamped with simulated time, with the
wall's analytic distances in them.  Nothing asserts a timing.
"""
import math

from node_harness import domain, PACKAGE_ROOT, RosClient, running_node, stamp_seconds, STATIC_TF
import numpy as np
import pytest
from rclpy.qos import qos_profile_sensor_data
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image, LaserScan, PointCloud2
from tf2_msgs.msg import TFMessage
import yaml

SENSOR_X = 0.3      # m, the sensors ahead of the base link's origin
SENSOR_Z = 1.0      # m, and above it (every ray meets the wall, none the floor)
WALL_FACE = 1.95    # m, the wall's near face from the base link's origin (x)
DEPTH = WALL_FACE - SENSOR_X
LIDAR = {'link': 'base_link', 'pose': {'position': [SENSOR_X, 0.0, SENSOR_Z]}, 'rate': 20.0,
         'range': {'min': 0.1, 'max': 10.0},
         'horizontal': {'samples': 181, 'min_angle': -0.5, 'max_angle': 0.5}}
RANGE_SENSORS = {
    'front_scan': LIDAR,
    'front_cloud': dict(LIDAR, vertical={'samples': 4, 'min_angle': -0.1, 'max_angle': 0.2}),
    'front_camera': {'link': 'base_link', 'kind': 'depth_camera', 'rate': 10.0,
                     'pose': {'position': [SENSOR_X, 0.0, SENSOR_Z]},
                     'range': {'min': 0.05, 'max': 8.0}, 'width': 32, 'height': 24,
                     'horizontal_fov': 0.8},
}


@pytest.fixture(scope='module')
def ranges_node(tmp_path_factory):
    """Yield (node, client) of the arm node with its range sensors facing a wall."""
    folder = tmp_path_factory.mktemp('ranges_node')
    config = yaml.safe_load(open(PACKAGE_ROOT / 'config' / 'jointsim_arm.yaml'))
    config['range_sensors'] = RANGE_SENSORS
    config['scene'] = {'wall': {'shape': 'box', 'size': [0.1, 6.0, 3.0],
                                'pose': {'position': [WALL_FACE + 0.05, 0.0, 1.5]}}}
    path = folder / 'sim.yaml'
    path.write_text(yaml.safe_dump(config))
    with domain() as domain_id:
        with running_node(domain_id, folder / 'node.log',
                          parameters={'config_file': str(path)}) as node:
            client = RosClient(domain_id)
            try:
                yield node, client
            finally:
                client.close()


def _first(client, kind, topic):
    got = client.subscribe(kind, topic, qos_profile_sensor_data)
    assert client.wait_for(lambda: len(got) >= 2), f'no {topic}'
    return got


def test_a_one_row_lidar_publishes_a_laser_scan_of_the_wall(ranges_node):
    node, client = ranges_node
    clock = client.subscribe(Clock, '/clock', 10)
    scans = _first(client, LaserScan, 'front_scan/scan')
    scan = scans[-1]
    assert scan.header.frame_id == 'front_scan'
    assert len(scan.ranges) == 181
    assert scan.angle_min == pytest.approx(-0.5) and scan.angle_max == pytest.approx(0.5)
    assert scan.angle_increment == pytest.approx(1.0 / 180)
    assert scan.range_min == pytest.approx(0.1) and scan.range_max == pytest.approx(10.0)
    assert scan.scan_time == pytest.approx(0.05)
    angles = scan.angle_min + scan.angle_increment * np.arange(181)
    assert np.allclose(scan.ranges, DEPTH / np.cos(angles), atol=1e-5)   # float32
    # stamped with simulated time at the sensor's 20 Hz
    stamps = [stamp_seconds(s.header.stamp) for s in scans]
    assert all(round(t * 20.0, 6) == round(t * 20.0) for t in stamps)
    assert client.wait_for(lambda: clock)
    assert abs(stamp_seconds(clock[-1].clock) - stamps[-1]) < 5.0


def test_a_lidar_of_several_rows_publishes_an_organised_point_cloud(ranges_node):
    _, client = ranges_node
    cloud = _first(client, PointCloud2, 'front_cloud/points')[-1]
    assert cloud.header.frame_id == 'front_cloud'
    assert (cloud.height, cloud.width) == (4, 181)
    assert [(f.name, f.offset, f.datatype) for f in cloud.fields] == [
        ('x', 0, 7), ('y', 4, 7), ('z', 8, 7), ('intensity', 12, 7), ('ring', 16, 4)]
    assert cloud.point_step == 18 and cloud.row_step == 18 * 181 and not cloud.is_bigendian
    points = np.frombuffer(bytes(cloud.data), dtype=np.dtype({
        'names': ['x', 'y', 'z', 'ring'], 'formats': ['<f4', '<f4', '<f4', '<u2'],
        'offsets': [0, 4, 8, 16], 'itemsize': 18}))
    assert np.allclose(points['x'], DEPTH, atol=1e-5)     # every point on the wall's face
    assert list(np.unique(points['ring'])) == [0, 1, 2, 3]
    # the lowest ring first: its points lie below the sensor (z up)
    assert points['z'][0] < 0.0 < points['z'][-1]


def test_a_depth_camera_publishes_an_image_and_its_camera_info(ranges_node):
    _, client = ranges_node
    images = _first(client, Image, 'front_camera/depth/image_raw')
    infos = _first(client, CameraInfo, 'front_camera/depth/camera_info')
    image, info = images[-1], infos[-1]
    assert image.header.frame_id == info.header.frame_id == 'front_camera_optical'
    assert (image.height, image.width, image.encoding, image.step) == (24, 32, '32FC1', 128)
    depth = np.frombuffer(bytes(image.data), dtype='<f4').reshape(24, 32)
    assert np.allclose(depth, DEPTH, atol=1e-5)     # depth along the axis: flat on a wall
    f = info.k[0]
    assert f == pytest.approx(16.0 / math.tan(0.4))  # width / 2 / tan(fov / 2)
    assert (info.width, info.height) == (32, 24)
    assert list(info.p)[:3] == [f, 0.0, info.k[2]]


def test_the_sensor_frames_are_on_tf_static(ranges_node):
    _, client = ranges_node
    static = client.subscribe(TFMessage, '/tf_static', STATIC_TF)
    assert client.wait_for(lambda: static)
    edges = {(t.header.frame_id, t.child_frame_id): t for t in static[-1].transforms}
    for name in RANGE_SENSORS:
        offset = edges[('base_link', name)].transform.translation
        assert (offset.x, offset.y, offset.z) == pytest.approx((SENSOR_X, 0.0, SENSOR_Z))
    optical = edges[('front_camera', 'front_camera_optical')].transform.rotation
    assert (optical.w, optical.x, optical.y, optical.z) == pytest.approx((0.5, -0.5, 0.5, -0.5))
