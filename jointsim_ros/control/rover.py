"""
The rover's reactive controller: drive ahead, steer away from what the lidar sees.

No rclpy and no simulator in the steering itself (:class:`ReactiveSteering`): it sees one
2-D scan (ranges and their angles in the lidar's frame, as a LaserScan gives them) and returns
the armature voltages of the left and right wheels (skid steering: a side's wheels all get its
voltage).  The method, a vector-field-histogram kind of choice among headings:

1. **Points**: each finite reading becomes a point in the rover's frame (x ahead, y left;
   the lidar ``sensor_x`` ahead of the rover's centre); a reading nearer than the lidar's
   minimum (``-inf``, REP 117) is a point at that minimum; nothing in range is no point.
2. **Free path** along a heading: the rover's footprint swept straight along it, widened by
   ``margin`` on each side; the free path is how far its front goes before the first point in
   that corridor (``horizon`` at most).
3. **Heading**: among headings from -90 to +90 degrees, the one with the longest free path,
   less ``straight_weight`` per radian away from straight ahead and ``steady_weight`` per
   radian away from the last choice (so it does not dither between two equal gaps); a heading
   counts only if the footprint, widened by ``turn_margin``, turns ``steer_check`` towards it
   without meeting a point (:func:`turn_room`: a corner swings out as the rover turns).
4. **Speed**: the free path straight ahead sets the forward voltage, full ``cruise_voltage``
   beyond ``slow_distance``, down to ``creep_voltage`` at ``stop_distance``; the chosen
   heading adds a difference (:func:`turn_difference`: none near straight ahead, then at
   least ``turn_threshold``, up to ``turn_voltage`` at 45 degrees) to the right side and takes
   it from the left to turn left (and the other way round).
5. **Blocked**: with less than ``stop_distance`` free ahead of its own footprint (widened by
   ``straight_margin``) the rover turns on the spot, ``spin_voltage`` forward on one side and
   back on the other, towards the side of the chosen heading, and keeps turning that way until
   ``resume_distance`` is free ahead in the corridor (a hysteresis: it does not swing back and
   forth in a corner).  It turns on the spot only where ``turn_check`` of the turn is free;
   when neither way is, it backs away (``reverse_voltage``) until one is, creeps on when the
   way back is not free either, and stands when nothing is.

:func:`drive` runs it in closed loop on a Simulator without ROS (the tests, tuning);
``jointsim_ros/tools/rover_controller.py`` runs it on the node's topics.
"""
from dataclasses import dataclass
import math

import numpy as np

#: The headings the steering chooses among, rad (5 degree steps, ahead is 0, left positive).
HEADINGS = np.radians(np.arange(-90.0, 90.1, 5.0))


@dataclass(frozen=True)
class RoverSettings:
    """
    The rover's size as the controller sees it and the steering's parameters.

    The defaults suit the bundled rover (urdf/jointsim_rover.urdf.xacro with
    config/jointsim_rover.yaml: wheels out to 0.23 m ahead and behind and 0.21 m to the side,
    12 V drives of 1.34 m/s without load).

    Attributes:
        half_length: m, the rover's front from its centre.
        half_width: m, its sides from its centre line.
        sensor_x: m, the lidar ahead of the rover's centre (its scan's origin).
        margin: m, kept free on each side of the rover's path.
        stop_distance: m, free path ahead below which it turns on the spot.
        resume_distance: m, free path ahead at which turning on the spot ends.
        slow_distance: m, free path ahead below which it slows down.
        horizon: m, the longest free path that counts when choosing a heading.
        straight_weight: m/rad, what a heading away from straight ahead costs.
        steady_weight: m/rad, what a heading away from the last one costs.
        cruise_voltage: V, both sides' voltage straight ahead in the open.
        creep_voltage: V, both sides' voltage with ``stop_distance`` free ahead.
        turn_voltage: V, added to one side and taken from the other at a 45 degree heading.
        turn_threshold: V, the least difference that turns it (:func:`turn_difference`).
        dead_band: rad, headings nearer straight ahead than this do not turn it.
        spin_voltage: V, each side's (opposite) voltage turning on the spot.
        reverse_voltage: V, both sides' voltage backing away (negative).
        straight_margin: m, kept free around the footprint going straight ahead or back.
        turn_margin: m, kept free around it turning: a skid-steered rover slides a few
            centimetres out of a sharp turn in a tenth of a second.
        turn_check: rad, how far turning on the spot must be free (:func:`turn_room`) for it
            to turn on the spot that way.
        steer_check: rad, how far it must be free for it to steer that way while driving.
        supply_voltage: V, the largest voltage commanded.
    """

    half_length: float = 0.24
    half_width: float = 0.22
    sensor_x: float = 0.0
    margin: float = 0.15
    stop_distance: float = 0.30
    resume_distance: float = 0.70
    slow_distance: float = 1.20
    horizon: float = 2.5
    straight_weight: float = 0.3
    steady_weight: float = 0.2
    cruise_voltage: float = 6.0
    creep_voltage: float = 2.0
    turn_voltage: float = 8.0
    turn_threshold: float = 5.0
    dead_band: float = math.radians(7.5)
    spin_voltage: float = 8.0
    reverse_voltage: float = 3.0
    straight_margin: float = 0.04
    turn_margin: float = 0.07
    turn_check: float = math.radians(30.0)
    steer_check: float = math.radians(15.0)
    supply_voltage: float = 12.0


@dataclass(frozen=True)
class Steering:
    """
    One decision of the steering.

    Attributes:
        left, right: V, the armature voltage of the left and the right wheels.
        mode: 'cruise', 'turn', 'spin' (on the spot), 'reverse' or 'stand' (boxed in).
        heading: rad, the heading chosen (left positive).
        free_ahead: m, the free path straight ahead (``horizon`` when nothing is in it).
        nearest: m, the nearest point seen from the lidar (inf without any).
        nearest_angle: rad, its angle in the lidar's frame (NaN without any).
    """

    left: float
    right: float
    mode: str
    heading: float
    free_ahead: float
    nearest: float
    nearest_angle: float

    def describe(self):
        """Return what the rover is doing, in words (one line)."""
        side = 'left' if self.heading > 0 else 'right'
        if self.mode == 'spin':
            what = f'turning on the spot to the {side}'
        elif self.mode == 'reverse':
            what = 'backing away'
        elif self.mode == 'stand':
            what = 'boxed in: standing'
        elif self.mode == 'turn':
            what = f'steering {abs(math.degrees(self.heading)):.0f} deg {side}'
        else:
            what = 'driving straight'
        return f'{what}, {self.free_ahead:.2f} m free ahead'


def scan_points(ranges, angles, range_min, sensor_x=0.0):
    """
    Return the points of a 2-D scan in the rover's frame, (n, 2) m.

    Args:
        ranges: (m,) m, +inf for nothing in range, -inf nearer than ``range_min``, NaN none.
        angles: (m,) rad, each reading's angle in the lidar's frame (anticlockwise from ahead).
        range_min: m, where a ``-inf`` reading is put.
        sensor_x: m, the lidar ahead of the rover's centre.
    """
    r = np.asarray(ranges, dtype=float).copy()
    a = np.asarray(angles, dtype=float)
    r[np.isneginf(r)] = range_min
    seen = np.isfinite(r)
    r, a = r[seen], a[seen]
    return np.stack([sensor_x + r * np.cos(a), r * np.sin(a)], axis=1)


def free_paths(points, headings, half_length, half_width, horizon, beside=True):
    """
    Return how far the rover's front goes along each heading before meeting a point, m.

    The rover turned to each heading (about its centre) and swept straight ahead: a point is
    in the way when it lies ahead of the centre and within ``half_width`` of the path's centre
    line; the free path is its distance along the heading less ``half_length`` (negative
    when the point is beside the rover), ``horizon`` when nothing is in the way.

    Args:
        points: (n, 2) m, rover frame.
        headings: (k,) rad.
        beside: False: the points beside the rover (not yet ahead of its front) are not in
            the way (going straight the rover passes them).

    Returns:
        (k,) m.
    """
    cos, sin = np.cos(headings)[:, None], np.sin(headings)[:, None]
    along = cos * points[:, 0] + sin * points[:, 1]
    across = np.abs(cos * points[:, 1] - sin * points[:, 0])
    in_way = (along > (0.0 if beside else half_length)) & (across < half_width)
    nearest = np.where(in_way, along, np.inf).min(axis=1, initial=np.inf)
    return np.minimum(nearest - half_length, horizon)


def turn_room(points, half_length, half_width, direction, angles):
    """
    Return how far the rover can turn on the spot before its footprint meets a point, rad.

    The footprint (a rectangle of half sizes ``half_length`` by ``half_width`` about the
    rover's centre) turned by each of ``angles`` in ``direction`` (+1 anticlockwise, -1
    clockwise) is tested against every point: a point p meets the footprint turned by phi when
    R(-phi) p is inside it.

    Args:
        points: (n, 2) m, rover frame.
        direction: +1 or -1.
        angles: (k,) rad, increasing, above 0.

    Returns:
        The largest of ``angles`` up to which every angle is free (0 when the first is not).
    """
    c = np.cos(angles)[:, None]
    s = direction * np.sin(angles)[:, None]
    x = c * points[:, 0] + s * points[:, 1]
    y = c * points[:, 1] - s * points[:, 0]
    blocked = ((np.abs(x) < half_length) & (np.abs(y) < half_width)).any(axis=1)
    if not blocked.any():
        return float(angles[-1])
    first = int(np.argmax(blocked))
    return float(angles[first - 1]) if first else 0.0


class ReactiveSteering:
    """
    Steer the rover away from what its lidar sees (the method: this module's docstring).

    Args:
        settings: RoverSettings.
    """

    def __init__(self, settings=None):
        self.settings = settings or RoverSettings()
        self.reset()

    def reset(self):
        """Forget the last heading and any turn on the spot (the simulation was reset)."""
        self.heading = 0.0
        self.mode = 'drive'      # 'drive' (ahead, steering), 'spin' or 'reverse'
        self.spin = 1.0          # +1 turning left on the spot, -1 right

    def command(self, ranges, angles, range_min=0.0):
        """
        Return the Steering for one scan.

        Args:
            ranges: (m,) m, the scan's readings (LaserScan ``ranges``).
            angles: (m,) rad, their angles in the lidar's frame.
            range_min: m, the lidar's minimum range (where ``-inf`` readings are put).
        """
        s = self.settings
        points = scan_points(ranges, angles, range_min, s.sensor_x)
        if len(points):
            from_lidar = np.hypot(points[:, 0] - s.sensor_x, points[:, 1])
            k = int(np.argmin(from_lidar))
            nearest = float(from_lidar[k])
            nearest_angle = float(math.atan2(points[k, 1], points[k, 0] - s.sensor_x))
        else:
            nearest, nearest_angle = math.inf, math.nan
        free = free_paths(points, HEADINGS, s.half_length, s.half_width + s.margin, s.horizon)
        free_ahead = float(free[len(HEADINGS) // 2])
        # what the rover itself would hit going straight ahead or back (its footprint and
        # straight_margin), or turning (and sliding out of the turn: turn_margin); the
        # corridors' margin is for choosing the way
        ahead, behind = free_paths(points, np.array([0.0, math.pi]),
                                   s.half_length + s.straight_margin,
                                   s.half_width + s.straight_margin, s.horizon, beside=False)
        check = np.radians(np.arange(2.5, math.degrees(s.turn_check) + 1e-9, 2.5))
        room = {d: turn_room(points, s.half_length + s.turn_margin,
                             s.half_width + s.turn_margin, d, check) for d in (1.0, -1.0)}
        can_turn = {d: room[d] >= s.turn_check - 1e-9 for d in room}
        # a heading counts only if turning towards it a tick's worth (steer_check) sweeps no
        # corner into anything
        allowed = ((HEADINGS == 0.0) | ((HEADINGS > 0.0) & (room[1.0] >= s.steer_check))
                   | ((HEADINGS < 0.0) & (room[-1.0] >= s.steer_check)))
        score = np.where(allowed, free - s.straight_weight * np.abs(HEADINGS)
                         - s.steady_weight * np.abs(HEADINGS - self.heading), -np.inf)
        self.heading = float(HEADINGS[int(np.argmax(score))])

        mode = self.mode
        if mode == 'drive' and ahead < s.stop_distance:
            mode = 'spin'
            # towards the chosen heading; straight ahead: the side with more room
            self.spin = (math.copysign(1.0, self.heading) if self.heading
                         else (1.0 if free[-1] >= free[0] else -1.0))
        elif mode == 'spin' and free_ahead >= s.resume_distance:
            mode = 'drive'
        elif mode == 'reverse' and (can_turn[1.0] or can_turn[-1.0]
                                    or behind < s.stop_distance):
            mode = 'spin'
        if mode == 'spin' and not can_turn[self.spin]:
            if can_turn[-self.spin]:
                self.spin = -self.spin
            elif behind >= s.stop_distance:
                mode = 'reverse'     # back out until it can turn
            else:
                # boxed in: creep straight on, or stand when even that is not free
                mode = 'drive' if ahead > s.straight_margin else 'stand'
        if mode == 'reverse' and can_turn[self.spin]:
            mode = 'spin'
        self.mode = mode

        heading = self.heading
        if mode == 'spin':
            left, right = -s.spin_voltage * self.spin, s.spin_voltage * self.spin
            heading = math.copysign(math.pi / 2, self.spin)
        elif mode == 'reverse':
            left = right = -s.reverse_voltage
            heading = math.pi
        elif mode == 'stand':
            left = right = 0.0
            self.mode = 'spin'       # try again at the next scan
        else:
            speed = min(1.0, max(0.0, (free_ahead - s.stop_distance)
                                 / (s.slow_distance - s.stop_distance)))
            forward = s.creep_voltage + (s.cruise_voltage - s.creep_voltage) * speed
            difference = turn_difference(self.heading, s)
            left, right = forward - difference, forward + difference
            mode = 'turn' if difference else 'cruise'
        clip = s.supply_voltage
        return Steering(min(clip, max(-clip, left)), min(clip, max(-clip, right)), mode,
                        heading, free_ahead, nearest, nearest_angle)


def turn_difference(heading, settings):
    """
    Return the voltage added to the right wheels and taken from the left ones for a heading, V.

    None within ``dead_band`` of straight ahead; beyond it, at least ``turn_threshold`` (a skid
    steered rover does not turn below what makes its wheels slip sideways), growing to
    ``turn_voltage`` at 45 degrees and beyond.
    """
    s = settings
    size = abs(heading)
    if size <= s.dead_band:
        return 0.0
    share = min(1.0, (size - s.dead_band) / (math.pi / 4 - s.dead_band))
    return math.copysign(s.turn_threshold + (s.turn_voltage - s.turn_threshold) * share, heading)


def wheel_sides(joints):
    """
    Return the left and the right wheels' joints among driven joint names.

    A joint whose name holds 'left' is on the left, 'right' on the right (the bundled rover's
    ``front_left_wheel_joint``...).

    Raises:
        ValueError: a side has no joint.
    """
    left = [j for j in joints if 'left' in j.rsplit('/', 1)[-1]]
    right = [j for j in joints if 'right' in j.rsplit('/', 1)[-1]]
    if not left or not right:
        raise ValueError(f'no left and right wheels among the driven joints {list(joints)} '
                         "(a wheel's joint name says 'left' or 'right')")
    return left, right


def drive(sim, seconds, steering=None, lidar='lidar', on_sample=None):
    """
    Run the steering in closed loop on a Simulator for ``seconds`` of simulated time.

    At every lidar sample the steering reads the scan and the wheels get its voltages, held
    until the next sample (as the node holds a command).

    Args:
        sim: a Simulator with the rover (drives on wheels named 'left' and 'right', a one-row
            lidar ``lidar``).
        seconds: s of simulated time.
        steering: a ReactiveSteering (default: one with the default settings).
        lidar: the lidar's name.
        on_sample: optional callable(sim, Steering) after each decision.

    Returns:
        The last Steering.
    """
    steering = steering or ReactiveSteering()
    spec = sim.sensors.range_sensor(lidar)
    angles = spec.azimuths
    left, right = wheel_sides(sim.drive_names)
    period = max(1, int(round(1.0 / (spec.rate * sim.dt))))
    end = sim.time + seconds
    decision = None
    while sim.time < end - 0.5 * sim.dt:
        sim.step(min(period, max(1, int(round((end - sim.time) / sim.dt)))))
        sample = sim.sensors.range_sample(lidar)
        decision = steering.command(sample.ranges[0], angles, spec.range_min)
        sim.set_voltages({**dict.fromkeys(left, decision.left),
                          **dict.fromkeys(right, decision.right)})
        if on_sample is not None:
            on_sample(sim, decision)
    return decision
