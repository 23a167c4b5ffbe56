"""
The rover's arena as ground truth for tests: how far the rover is from the boxes and walls.

The rover's footprint (its wheels' outer edges: 0.23 m ahead and behind its centre, 0.21 m to
each side) and each box of config/jointsim_rover.yaml's scene are rectangles on the ground;
their distance is worked out here with plain geometry, apart from the simulator.
"""
import math
from pathlib import Path

import numpy as np
import yaml

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
ROVER = PACKAGE_ROOT / 'urdf' / 'jointsim_rover.urdf.xacro'
CONFIG = PACKAGE_ROOT / 'config' / 'jointsim_rover.yaml'
#: m, half the rover's footprint: wheel rims ahead and behind (0.15 + 0.08), wheel faces to
#: the side (0.19 + 0.02).
HALF_LENGTH, HALF_WIDTH = 0.23, 0.21


def rectangle(centre, yaw, half_x, half_y):
    """Return the corners (4, 2) of a rectangle turned by yaw about its centre, anticlockwise."""
    c, s = math.cos(yaw), math.sin(yaw)
    corners = np.array([(half_x, half_y), (-half_x, half_y), (-half_x, -half_y),
                        (half_x, -half_y)])
    return corners @ np.array([[c, s], [-s, c]]) + np.asarray(centre, float)[:2]


def scene_boxes(config=CONFIG):
    """Return {name: corners (4, 2)} of the scene's boxes (walls included), from the config."""
    scene = yaml.safe_load(Path(config).read_text())['scene']
    out = {}
    for name, item in scene.items():
        assert item['shape'] == 'box', name
        pose = item.get('pose', {})
        yaw = pose.get('rpy', [0.0, 0.0, 0.0])[2]
        out[name] = rectangle(pose['position'], yaw, 0.5 * item['size'][0],
                              0.5 * item['size'][1])
    return out


def _segment_distance(p, a, b):
    ab = b - a
    t = min(1.0, max(0.0, float(np.dot(p - a, ab) / np.dot(ab, ab))))
    return float(np.linalg.norm(p - (a + t * ab)))


def _overlap(first, second):
    """Return whether two convex polygons overlap (separating axes of both)."""
    for polygon in (first, second):
        for k in range(len(polygon)):
            edge = polygon[(k + 1) % len(polygon)] - polygon[k]
            axis = np.array([-edge[1], edge[0]])
            a, b = first @ axis, second @ axis
            if a.max() < b.min() or b.max() < a.min():
                return False
    return True


def polygon_distance(first, second):
    """Return the distance between two convex polygons (corners anticlockwise), 0 if they meet."""
    if _overlap(first, second):
        return 0.0
    return min(min(_segment_distance(p, q[k], q[(k + 1) % len(q)])
                   for p in one for k in range(len(q)))
               for one, q in ((first, second), (second, first)))


def boundary_distance(point, boxes):
    """Return the distance of a 2-D point (m) to the nearest side of any box, m."""
    p = np.asarray(point, float)[:2]
    return min(_segment_distance(p, q[k], q[(k + 1) % len(q)])
               for q in boxes.values() for k in range(len(q)))


def clearance(position, yaw, boxes):
    """
    Return the rover's distance to the nearest box and that box's name.

    Args:
        position: the base's (x, y, ...) in the world, m.
        yaw: its heading, rad.
        boxes: {name: corners}, scene_boxes().
    """
    rover = rectangle(position, yaw, HALF_LENGTH, HALF_WIDTH)
    return min((polygon_distance(rover, corners), name) for name, corners in boxes.items())


def yaw_of(quat):
    """Return the heading (rad) of a wxyz quaternion."""
    w, x, y, z = quat
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
