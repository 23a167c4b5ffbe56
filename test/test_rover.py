"""
The rover among boxes, without ROS: its config, its lidar's view of the arena, the steering.

The steering's parts against geometry worked out by hand (the free path along a heading, how far
the rover can turn before a corner meets a point), its decisions on made-up scans, and the
closed loop on the Simulator: the rover drives among the arena's boxes for 90 s of simulated
time and never touches one (contacts, and the rover's footprint against the boxes' worked out
apart from the simulator in rover_arena.py).
"""
import math

from jointsim_ros import Simulator
from jointsim_ros.control.rover import (drive, free_paths, ReactiveSteering, RoverSettings,
                                        turn_room, wheel_sides)
import numpy as np
import pytest
from rover_arena import clearance, CONFIG, ROVER, scene_boxes, yaw_of
import yaml


@pytest.fixture(scope='module')
def arena():
    """Return the rover in its arena, settled on its wheels (a fresh Simulator)."""
    sim = Simulator.from_urdf(str(ROVER), str(CONFIG))
    sim.step(200)
    return sim


def test_the_rover_has_four_driven_wheels_and_a_lidar_and_its_mount_changes_nothing(arena):
    sim = arena
    assert sim.drive_names == ('front_left_wheel_joint', 'front_right_wheel_joint',
                               'rear_left_wheel_joint', 'rear_right_wheel_joint')
    assert wheel_sides(sim.drive_names) == (
        ['front_left_wheel_joint', 'rear_left_wheel_joint'],
        ['front_right_wheel_joint', 'rear_right_wheel_joint'])
    # the lidar's mount is a visual only: the chassis keeps its mass and shapes
    assert [(b.name, b.mass) for b in sim.model.bodies] == [
        ('base_link', 8.0), ('front_left_wheel', 0.5), ('front_right_wheel', 0.5),
        ('rear_left_wheel', 0.5), ('rear_right_wheel', 0.5)]
    assert not [s for s in sim.model.shapes if s.name == 'lidar_link']
    spec = sim.sensors.range_sensor('lidar')
    config = yaml.safe_load(CONFIG.read_text())['range_sensors']['lidar']
    assert spec.kind == 'lidar' and spec.link == 'lidar_link' and spec.rate == 10.0
    assert spec.horizontal == (360, -math.pi, config['horizontal']['max_angle'])
    assert spec.angle_increment == pytest.approx(2.0 * math.pi / 360, abs=1e-12)
    assert (spec.range_min, spec.range_max, spec.noise_stddev) == (0.12, 10.0, 0.01)


def test_the_lidar_reads_the_box_ahead_and_the_walls_around(arena):
    sim = arena
    sample = sim.sensors.range_sample('lidar')
    ranges = sample.ranges[0]
    # 0.19 m above the ground over the axles' midpoint, straight ahead of the start
    assert sample.position == pytest.approx([0.0, 0.0, 0.19], abs=2e-3)
    boxes = yaml.safe_load(CONFIG.read_text())['scene']
    ahead = boxes['box_ahead']['pose']['position'][0] - 0.5 * boxes['box_ahead']['size'][0]
    # columns every degree from -180: 0 deg is column 180, +90 column 270, -90 column 90
    expected = {180: ahead, 270: 2.5, 90: 2.5, 0: 2.5}
    for column, distance in expected.items():
        # the noise is 1 cm: within five of it
        assert ranges[column] == pytest.approx(distance, abs=0.05), column
    assert np.isfinite(ranges).all()      # the walls all round, within 10 m


# -- the steering's parts against hand-worked geometry -------------------------------------------
def test_the_free_path_is_the_distance_to_the_first_point_in_the_swept_corridor():
    points = np.array([[2.0, 0.1], [1.0, 0.5], [-1.0, 0.0]])
    # straight ahead, half width 0.3: (2, 0.1) is in the way, (1, 0.5) beside it
    free = free_paths(points, np.array([0.0]), 0.25, 0.3, 5.0)
    assert free[0] == pytest.approx(2.0 - 0.25)
    # turned to aim at (1, 0.5): it is 1.118 m along, and (2, 0.1) 1.82 m off the line
    heading = math.atan2(0.5, 1.0)
    assert free_paths(points, np.array([heading]), 0.25, 0.3, 5.0)[0] == pytest.approx(
        math.hypot(1.0, 0.5) - 0.25)
    # backwards: the point behind; nothing in the way: the horizon
    assert free_paths(points, np.array([math.pi]), 0.25, 0.3, 5.0)[0] == pytest.approx(0.75)
    assert free_paths(points[:0], np.array([0.0]), 0.25, 0.3, 5.0)[0] == 5.0
    # a point beside the rover (not ahead of its front) blocks the corridor unless asked not to
    beside = np.array([[0.1, 0.28]])
    assert free_paths(beside, np.array([0.0]), 0.25, 0.3, 5.0)[0] == pytest.approx(-0.15)
    assert free_paths(beside, np.array([0.0]), 0.25, 0.3, 5.0, beside=False)[0] == 5.0


def test_turning_on_the_spot_stops_where_a_corner_would_meet_a_point():
    # a point 0.25 m to the left of the centre of a 0.6 x 0.4 footprint: turned by phi, it is at
    # (0.25 sin phi, 0.25 cos phi) in the rover's frame, inside once 0.25 cos phi < 0.2, at
    # phi = acos(0.8) = 36.87 deg, either way
    angles = np.radians(np.arange(2.5, 60.1, 2.5))
    point = np.array([[0.0, 0.25]])
    for direction in (1.0, -1.0):
        assert math.degrees(turn_room(point, 0.3, 0.2, direction, angles)) == pytest.approx(35.0)
    # far away: the whole turn is free; already inside: none of it
    assert turn_room(np.array([[0.0, 0.37]]), 0.3, 0.2, 1.0, angles) == pytest.approx(angles[-1])
    assert turn_room(np.array([[0.1, 0.1]]), 0.3, 0.2, 1.0, angles) == 0.0


def scan(segments, columns=360):
    """
    Return (ranges, angles) of a one-turn scan from the rover's centre of 2-D wall segments.

    Each ray's reading is its distance to the nearest segment it crosses (+inf for none),
    worked out exactly: the ray p = t (cos a, sin a) meets the segment a0 + s (a1 - a0) where
    both t >= 0 and 0 <= s <= 1.
    """
    angles = np.linspace(-math.pi, math.pi, columns, endpoint=False)
    ranges = np.full(columns, np.inf)
    for (x0, y0), (x1, y1) in segments:
        for k, a in enumerate(angles):
            d = np.array([math.cos(a), math.sin(a)])
            e = np.array([x1 - x0, y1 - y0])
            det = d[0] * -e[1] + e[0] * d[1]
            if abs(det) < 1e-12:
                continue
            t, s = np.linalg.solve(np.array([[d[0], -e[0]], [d[1], -e[1]]]), [x0, y0])
            if t >= 0.0 and 0.0 <= s <= 1.0:
                ranges[k] = min(ranges[k], t)
    return ranges, angles


def wall_ahead(distance):
    """Return a wall square to the rover, ``distance`` m ahead, 4 m wide (a segment)."""
    return [((distance, -2.0), (distance, 2.0))]


def test_in_the_open_it_drives_straight_at_its_cruise_voltage():
    settings = RoverSettings()
    decision = ReactiveSteering(settings).command(*scan([]))
    assert decision.mode == 'cruise' and decision.heading == 0.0
    assert decision.left == decision.right == settings.cruise_voltage
    assert decision.free_ahead == settings.horizon and math.isinf(decision.nearest)


def test_it_slows_down_before_a_wall_and_turns_on_the_spot_when_it_is_close():
    settings = RoverSettings()
    steering = ReactiveSteering(settings)
    far = steering.command(*scan(wall_ahead(0.8)))
    # 0.8 m ahead: 0.56 m free for its front, between stop and slow: slower than cruising,
    # and turning towards where the wall ends (past 73 deg, 2.5 m are free)
    assert far.free_ahead == pytest.approx(0.8 - settings.half_length, abs=1e-9)
    assert settings.creep_voltage < 0.5 * (far.left + far.right) < settings.cruise_voltage
    assert far.mode == 'turn' and abs(far.heading) > math.radians(73.0)
    near = steering.command(*scan(wall_ahead(0.5)))
    # 0.5 m: less than stop_distance for the front and its margin: on the spot, the same way
    assert near.mode == 'spin' and math.copysign(1.0, near.heading) == math.copysign(
        1.0, far.heading)
    assert near.left == -near.right and abs(near.left) == settings.spin_voltage
    # it turns the same way until the way ahead is free beyond resume_distance...
    again = steering.command(*scan(wall_ahead(0.85)))
    assert again.mode == 'spin' and again.left == near.left
    # ... then drives on
    assert steering.command(*scan([])).mode == 'cruise'


def test_it_steers_away_from_a_box_ahead_on_its_left():
    box = [((1.2, -0.05), (1.2, 0.6)), ((1.2, 0.6), (1.6, 0.6)), ((1.2, -0.05), (1.6, -0.05))]
    decision = ReactiveSteering().command(*scan(box))
    assert decision.mode == 'turn' and decision.heading < 0.0
    assert decision.left > decision.right          # to the right: the left wheels faster
    assert decision.nearest == pytest.approx(1.2, abs=0.01)


def test_with_a_box_beside_it_it_does_not_turn_its_corners_into_it():
    # a box 5 cm off its right side, level with its rear wheels, and a wall ahead: turning
    # either way on the spot would sweep a corner into the box, so it backs away first
    box = [((-0.45, -0.26), (0.0, -0.26))]
    decision = ReactiveSteering().command(*scan(box + wall_ahead(0.5)))
    assert decision.mode == 'reverse' and decision.left == decision.right < 0.0


def test_a_side_without_wheels_is_refused():
    with pytest.raises(ValueError, match="'left' or 'right'"):
        wheel_sides(['front_wheel_joint', 'rear_left_wheel_joint'])


# -- the closed loop ----------------------------------------------------------------------------
def test_the_rover_drives_among_the_boxes_and_never_touches_one():
    sim = Simulator.from_urdf(str(ROVER), str(CONFIG))
    boxes = scene_boxes()
    scene = set(boxes)
    track = {'path': 0.0, 'last': None, 'nearest': (math.inf, ''), 'touched': set(),
             'modes': set()}

    def record(sim, decision):
        position, quat = sim.link_pose('base_link')
        if track['last'] is not None:
            track['path'] += math.dist(position[:2], track['last'])
        track['last'] = position[:2]
        track['nearest'] = min(track['nearest'], clearance(position, yaw_of(quat), boxes))
        track['touched'] |= {name for c in sim.contacts() for name in (c.link_a, c.link_b)
                             if name in scene}
        track['modes'].add(decision.mode)

    drive(sim, 90.0, on_sample=record)
    assert sim.time == pytest.approx(90.0)
    assert not track['touched'], track
    assert track['nearest'][0] > 0.01, track
    # about 0.4 m/s on average, turning included; it steered and turned on the spot
    assert track['path'] > 25.0, track
    assert {'cruise', 'turn', 'spin'} <= track['modes'], track
