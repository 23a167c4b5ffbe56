"""
The immutable robot model: what the description layer produces and the engine consumes.

Conventions (REP 103, SI units):
- Every rigid body has a *body frame* equal to the frame of its root link (the first link of a
  chain merged by fixed joints).  ``com`` and ``inertia`` are expressed in that frame.
- Body index -1 is the world (static).  With a fixed base the root link and everything welded to it
  by merged fixed joints belong to the world.
- A joint frame is fixed in the parent body (``parent_pos``, ``parent_quat``: URDF
  ``<origin>`` composed with the parent link's pose in its body) and coincides with the child link
  frame at zero joint position; ``child_pos``/``child_quat`` place that same frame in the child
  body.  ``axis`` is a unit vector in the joint frame.
- Quaternions are (w, x, y, z).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

JOINT_TYPES = ('revolute', 'continuous', 'prismatic', 'fixed', 'floating', 'planar', 'spherical')
#: Joint types with one scalar coordinate, reported in ``Simulator.joint_names``.
SCALAR_JOINT_TYPES = ('revolute', 'continuous', 'prismatic')


@dataclass(frozen=True)
class Mimic:
    """URDF ``<mimic>``: follower position = multiplier * leader position + offset."""

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class BodyModel:
    """
    One rigid body (one link, or links merged by fixed joints).

    Attributes:
        name: name of the root link of the body.
        mass: kg, > 0.
        com: (3,) centre of mass in the body frame, m.
        inertia: (3, 3) symmetric positive-definite inertia about the COM in the body frame,
            kg m^2.
        links: names of the URDF links this body carries (root link first).
    """

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    links: tuple


@dataclass(frozen=True)
class LinkFrame:
    """
    Where a URDF link frame sits: pose of the link frame in its body frame.

    Attributes:
        name: link name.
        body: body index, -1 for the world.
        pos: (3,) link origin in the body frame, m (world frame if body == -1).
        quat: (4,) wxyz, link orientation in the body frame.
    """

    name: str
    body: int
    pos: np.ndarray
    quat: np.ndarray


@dataclass(frozen=True)
class JointModel:
    """
    One URDF joint between two bodies (fixed joints only when kept as welds).

    Attributes:
        name: joint name.
        type: one of JOINT_TYPES.
        parent_body, child_body: body indices (-1 = world; child_body is never -1).
        parent_pos, parent_quat: (3,), (4,) joint frame in the parent body frame (m, wxyz).
        child_pos, child_quat: (3,), (4,) joint frame in the child body frame (m, wxyz).
        axis: (3,) unit axis in the joint frame (revolute, continuous, prismatic; plane normal
            for planar).
        lower, upper: position limits, rad or m (-inf/+inf when absent or continuous).
        effort_limit: N m or N (inf when absent).
        velocity_limit: rad/s or m/s (inf when absent).
        damping: viscous damping, N m s/rad or N s/m.
        friction: Coulomb friction, N m or N.
        mimic: Mimic or None.
        static_friction: breakaway Coulomb friction, N m or N (None: equal to ``friction``).
        restitution: coefficient of restitution at the position limits, in [0, 1].
        parent_link, child_link: URDF link names.
        loop: a loop-closing joint from the config (``loop_joints``), outside the tree.
        close_at_start: its child frame is where the joint sits in the child at the initial
            configuration (set by the engine at reset), not given.
        element: '' for a joint; 'actuator' for the distance row of a linear actuator (acts
            while a length is prescribed), 'path' for the ball joint between the world and a
            path point (acts while a path is prescribed), 'grasp' for the ball joint between a
            hand and the object it grasps (acts while grasped); all are also ``loop``.
    """

    name: str
    type: str  # noqa: A003 (the URDF attribute name)
    parent_body: int
    child_body: int
    parent_pos: np.ndarray
    parent_quat: np.ndarray
    child_pos: np.ndarray
    child_quat: np.ndarray
    axis: np.ndarray
    lower: float = -np.inf
    upper: float = np.inf
    effort_limit: float = np.inf
    velocity_limit: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    mimic: Optional[Mimic] = None
    parent_link: str = ''
    child_link: str = ''
    static_friction: Optional[float] = None
    restitution: float = 0.0
    loop: bool = False
    close_at_start: bool = False
    element: str = ''


@dataclass(frozen=True)
class DriveModel:
    """
    A DC motor with a gear driving one scalar joint (config section ``drives``).

    Attributes:
        joint: name of the driven joint (revolute, continuous or prismatic).
        resistance: armature resistance R, ohm.
        inductance: armature inductance L, H.
        torque_constant: Kt, N m/A.
        back_emf_constant: Ke, V s/rad.
        rotor_inertia: J_m about the rotor axis, kg m^2.
        gear_ratio: N = rotor speed / joint speed (rad/rad; rad/m for prismatic joints).
        viscous_friction: motor viscous friction b_m, N m s/rad (rotor side).
        efficiency: gear efficiency in (0, 1].
        supply_voltage: commands are clipped to +-this, V (inf = unlimited).
        current_limit: the driver's current limit, A (inf = none).
    """

    joint: str
    resistance: float
    inductance: float
    torque_constant: float
    back_emf_constant: float
    rotor_inertia: float
    gear_ratio: float = 1.0
    viscous_friction: float = 0.0
    efficiency: float = 1.0
    supply_voltage: float = np.inf
    current_limit: float = np.inf
    servo: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ShapeModel:
    """
    One collision shape (docs/contacts.md).

    Attributes:
        name: the URDF link it belongs to, the scene object's name, or 'ground'.
        body: body index, -1 for static geometry (the world).
        kind: 'sphere', 'capsule', 'box', 'cylinder', 'convex' or 'plane'.
        size: (3,) sphere (radius, 0, 0); capsule and cylinder (radius, half length, 0) along
            the shape's z; box half extents; unused for convex and plane, m.
        pos: (3,) shape origin in the body frame (world frame for body -1), m.
        quat: (4,) wxyz, shape orientation in the body frame (a plane's normal is its z axis).
        vertices: (n, 3) convex hull vertices in the shape frame, m (convex only).
        faces: tuple of vertex-index tuples, counter-clockwise seen from outside (convex only).
        material: (friction 1, restitution 1, rolling_friction m, spinning_friction m,
            stiffness N/m, damping N s/m, min_depth m, max_push_velocity m/s): the engine's
            material columns (physics.contacts.M_*, config.MATERIAL_NAMES).
    """

    name: str
    body: int
    kind: str
    size: tuple
    pos: np.ndarray
    quat: np.ndarray
    material: tuple
    vertices: Optional[np.ndarray] = None
    faces: tuple = ()


@dataclass(frozen=True)
class SensorModel:
    """
    A six-axis force-torque sensor on a joint (docs/sensors.md).

    Attributes:
        name: sensor name.
        joint: the joint whose transmitted wrench it measures (kept, never merged).
        frame: 'child', 'parent' or 'sensor': the frame the wrench is expressed in.
        measure_direction: 'child_to_parent' (the wrench the child exerts on the parent) or
            'parent_to_child'.
        pos, quat: (3,), (4,) sensor frame in the child link frame, m and wxyz (frame 'sensor').
        rate: samples per simulated second, Hz; 0 = one after every step call.
        noise_force, noise_torque: Gaussian noise standard deviations, N and N m.
        seed: noise generator seed.
        cutoff: first-order low-pass cut-off, Hz; 0 = none.
    """

    name: str
    joint: str
    frame: str = 'child'
    measure_direction: str = 'child_to_parent'
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    rate: float = 100.0
    noise_force: float = 0.0
    noise_torque: float = 0.0
    seed: int = 0
    cutoff: float = 0.0


#: Rows of ImuModel.gyro and .accel: white noise mean and standard deviation, turn-on bias
#: mean and standard deviation, bias-walk standard deviation (each per axis x, y, z).
IMU_NOISE_ROWS = ('mean', 'stddev', 'bias_mean', 'bias_stddev', 'dynamic_bias_stddev')


@dataclass(frozen=True)
class ImuModel:
    """
    An inertial measurement unit fixed to a link (docs/sensors.md, "IMU").

    Attributes:
        name: sensor name (also its TF frame).
        link: the link it is fixed to.
        pos, quat: (3,), (4,) sensor frame in the link frame, m and wxyz.
        rate: samples per simulated second, Hz; 0 = one after every step call.
        topic: sensor_msgs/Imu topic.
        gyro, accel: (5, 3) noise of the angular velocity (rad/s) and the specific force
            (m/s^2), rows IMU_NOISE_ROWS.
        gyro_correlation_time, accel_correlation_time: s, of the bias walks.
        orientation_stddev: rad, orientation error about each sensor axis.
        seed: noise generator seed.
    """

    name: str
    link: str
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    rate: float = 100.0
    topic: str = ''
    gyro: np.ndarray = field(default_factory=lambda: np.zeros((5, 3)))
    gyro_correlation_time: float = 3600.0
    accel: np.ndarray = field(default_factory=lambda: np.zeros((5, 3)))
    accel_correlation_time: float = 3600.0
    orientation_stddev: float = 0.0
    seed: int = 0


@dataclass(frozen=True)
class RangeSensorModel:
    """
    A lidar or depth camera fixed to a link (docs/sensors.md, "Range sensors").

    The sensor looks along the x axis of its frame.  A lidar's ray (r, c) leaves at azimuth
    ``azimuths[c]`` about the frame's z axis and elevation ``elevations[r]``; a depth camera's
    pixel (u, v) (u right, v down) looks along (1, -(u - cx) / f, -(v - cy) / f) with ``f`` =
    :attr:`focal_length` and (cx, cy) = :attr:`principal_point`.

    Attributes:
        name: sensor name (also its TF frame).
        link: the link it is fixed to.
        kind: 'lidar' or 'depth_camera'.
        pos, quat: (3,), (4,) sensor frame in the link frame, m and wxyz.
        rate: samples per simulated second, Hz; 0 = one after every step call.
        range_min, range_max: readings nearer read -inf, nothing up to range_max reads +inf, m
            (a lidar's ray length; a depth camera's depth along x, its clip planes).
        resolution: readings are whole multiples of this, m; 0 = exact.
        noise_mean, noise_stddev: Gaussian noise of the readings within range, m.
        seed: noise generator seed.
        horizontal, vertical: a lidar's (samples, min_angle rad, max_angle rad) of its columns
            (azimuths) and rows (elevations), both ends included.
        width, height, horizontal_fov: a depth camera's image, pixels, and field of view, rad.
    """

    name: str
    link: str
    kind: str = 'lidar'
    pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    rate: float = 10.0
    range_min: float = 0.1
    range_max: float = 30.0
    resolution: float = 0.0
    noise_mean: float = 0.0
    noise_stddev: float = 0.0
    seed: int = 0
    horizontal: tuple = (361, -np.pi, np.pi)
    vertical: tuple = (1, 0.0, 0.0)
    width: int = 320
    height: int = 240
    horizontal_fov: float = 1.047

    @property
    def shape(self):
        """Return (rows, columns) of a reading: (vertical, horizontal) or (height, width)."""
        if self.kind == 'lidar':
            return int(self.vertical[0]), int(self.horizontal[0])
        return int(self.height), int(self.width)

    @property
    def azimuths(self):
        """Return a lidar's column angles, (horizontal samples,) rad, first to last."""
        return np.linspace(self.horizontal[1], self.horizontal[2], int(self.horizontal[0]))

    @property
    def elevations(self):
        """Return a lidar's row angles, (vertical samples,) rad, lowest first."""
        return np.linspace(self.vertical[1], self.vertical[2], int(self.vertical[0]))

    @property
    def angle_increment(self):
        """Return a lidar's step between columns, rad (0 for one column)."""
        samples, low, high = self.horizontal
        return (high - low) / (samples - 1) if samples > 1 else 0.0

    @property
    def vertical_increment(self):
        """Return a lidar's step between rows, rad (0 for one row)."""
        samples, low, high = self.vertical
        return (high - low) / (samples - 1) if samples > 1 else 0.0

    @property
    def focal_length(self):
        """Return a depth camera's focal length, pixels (fx = fy: square pixels)."""
        return self.width / (2.0 * np.tan(0.5 * self.horizontal_fov))

    @property
    def principal_point(self):
        """Return a depth camera's (cx, cy), pixels: the image centre, pixel centres whole."""
        return 0.5 * (self.width - 1), 0.5 * (self.height - 1)

    @property
    def vertical_fov(self):
        """Return a depth camera's vertical field of view, rad."""
        return 2.0 * np.arctan(0.5 * self.height / self.focal_length)


@dataclass(frozen=True)
class SceneObject:
    """
    A free body of the scene (config ``scene`` with a mass): its body and initial state.

    Attributes:
        name: object name (also its link and TF frame name).
        body: body index.
        pos, quat: (3,), (4,) initial pose of its frame, m and wxyz (a shape's frame is its
            centre of mass; a urdf object's is its root link's, its body's ``com`` from there).
        linear_velocity, angular_velocity: (3,) initial velocities of its frame's origin, world
            frame, m/s and rad/s.
    """

    name: str
    body: int
    pos: np.ndarray
    quat: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray


@dataclass(frozen=True)
class RobotPart:
    """
    One robot of a world (``RobotModel.robots``): which of the model's names are its own.

    Attributes:
        name: the robot's name in the world (its namespace and TF prefix).
        prefix: ``name + '/'``: the model's names of its links, joints, drives and sensors
            are its own names with this prefix.
        root_link: its URDF root link (prefixed).
        floating: its base is free.
        base_body: body index of its base when floating, else -1.
        base_pos, base_quat: (3,), (4,) world pose of its base (as ``RobotModel.base_pos``).
        links, joints: its link and joint names in the model (prefixed), URDF order.
        source: where its description came from, for messages.
    """

    name: str
    prefix: str
    root_link: str
    floating: bool
    base_body: int
    base_pos: np.ndarray
    base_quat: np.ndarray
    links: tuple
    joints: tuple
    source: str = ''


@dataclass(frozen=True)
class RobotModel:
    """
    A robot as bodies and joints.

    Attributes:
        name: robot name from URDF.
        bodies: tuple of BodyModel.
        joints: tuple of JointModel, every non-merged joint, in URDF order.  Joints are also in an
            order where a joint's parent body is the world or the child of an earlier joint
            (``tree_order`` gives that order as indices into ``joints``).
        tree_order: tuple of indices into ``joints``, parents before children.
        links: dict link name -> LinkFrame for every URDF link (including merged ones).
        root_link: name of the URDF root link (the base).
        floating_base: True when the root body is free (then it is body 0 and no joint holds it).
        merged_joints: names of fixed joints merged away.
        warnings: human-readable repairs made while loading (also logged).
        base_pos, base_quat: (3,), (4,) world pose of the base, m and wxyz.  Floating base: the
            initial pose of body 0's frame (config ``base_pose``, composed with the ``<origin>``
            of the URDF world->base floating joint when there is one).  Fixed base: the pose of
            the URDF root link, already applied to world-body LinkFrames and to the parent
            frames of joints whose parent is the world.
        drives: tuple of DriveModel, in joint order (URDF order of the driven joints).
        shapes: tuple of ShapeModel: the robot's collision shapes, the ground and the scene.
        objects: tuple of SceneObject, the free bodies of the scene (bodies after the robot's).
        sensors: tuple of SensorModel.
        imus: tuple of ImuModel.
        range_sensors: tuple of RangeSensorModel.
        collision_filter: frozenset of link-name pairs (frozensets) whose shapes never collide;
            shapes on one body never collide either.
        collision_tables: (physics.arrays.Shapes, physics.arrays.Polytopes), the shapes as the
            engine takes them (shape_tables.py); None before the shapes are added.
        robots: tuple of RobotPart, the robots of a world (description/world.py), in the
            order of their bodies; empty for one robot built from one description.  In a world
            ``floating_base``, ``base_pos`` and ``base_quat`` are the first robot's.
    """

    name: str
    bodies: tuple
    joints: tuple
    tree_order: tuple
    links: dict
    root_link: str
    floating_base: bool
    merged_joints: tuple = ()
    warnings: tuple = field(default_factory=tuple)
    base_pos: np.ndarray = field(default_factory=lambda: np.zeros(3))
    base_quat: np.ndarray = field(default_factory=lambda: np.array([1.0, 0.0, 0.0, 0.0]))
    drives: tuple = ()
    shapes: tuple = ()
    objects: tuple = ()
    collision_filter: frozenset = frozenset()
    sensors: tuple = ()
    collision_tables: Optional[tuple] = None
    imus: tuple = ()
    robots: tuple = ()
    range_sensors: tuple = ()

    def free_bases(self):
        """Return ((body, base_pos, base_quat), ...) of every floating robot base."""
        if self.robots:
            return tuple((r.base_body, r.base_pos, r.base_quat) for r in self.robots
                         if r.floating)
        return ((0, self.base_pos, self.base_quat),) if self.floating_base else ()
