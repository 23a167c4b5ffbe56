"""
The TF tree of a simulated robot: the URDF tree of links, posed from the simulation.

Like robot_state_publisher, every URDF joint gives one transform, parent link -> child link:
- fixed joints (merged into one body, or kept as welds) are static: the joint's ``<origin>``,
  exact, for /tf_static;
- every other joint (revolute, continuous, prismatic, spherical, planar, floating) moves: its
  transform is the child link's pose relative to the parent link's, both from
  ``Simulator.link_pose``, for /tf.
One more transform anchors the robot in the world frame: world frame -> root link, static for a
fixed base (the root link's pose, ``base_pose``), moving for a floating base (odometry-style,
the ground-truth pose).  It is left out when the two frames have the same name (a URDF whose
root link is ``world``, run without a frame prefix).  Scene objects (config ``scene``) hang from
the world frame too: static geometry on /tf_static, free objects on /tf.  A world of several
robots (``Simulator.from_world``) is one tree of every robot's URDF tree with its links named
``NAME/link`` (:func:`world_urdf_tree`), each robot's root link anchored in the world frame.

No rclpy here: transforms are plain tuples, turned into messages by ``ros_messages``.
"""
from collections import namedtuple
import math

import numpy as np

from ..rotations import matrix_to_quat, quats_multiply, quats_rotate, rpy_to_matrix

#: One transform: frame ids, translation (3,) m and rotation (4,) (w, x, y, z) of ``child`` in
#: ``parent``.
Transform = namedtuple('Transform', ['parent', 'child', 'xyz', 'quat'])
#: What FrameTree reads of a URDF joint and link (urdf_parser_py's have these fields too).
UrdfJoint = namedtuple('UrdfJoint', ['name', 'type', 'parent', 'child', 'origin'])
UrdfLink = namedtuple('UrdfLink', ['name'])
UrdfTree = namedtuple('UrdfTree', ['joints', 'links'])


def world_urdf_tree(world):
    """
    Return the URDF tree of every robot of a world, its links and joints named ``NAME/...``.

    Args:
        world: the World (``sim.world``): each robot's parsed description.

    Returns:
        UrdfTree (``joints``, ``links``), read by FrameTree as a urdf_parser_py Robot.
    """
    joints, links = [], []
    for robot in world.robots:
        prefix = robot.own_prefix
        urdf = robot.description.robot
        joints += [UrdfJoint(prefix + j.name, j.type, prefix + j.parent, prefix + j.child,
                             j.origin) for j in urdf.joints]
        links += [UrdfLink(prefix + link.name) for link in urdf.links]
    return UrdfTree(tuple(joints), tuple(links))


#: a depth camera's optical frame in its sensor frame (x forward, y left, z up): z forward,
#: x right, y down (REP 103), wxyz
OPTICAL_QUAT = (0.5, -0.5, 0.5, -0.5)


def optical_frame(sensor_name):
    """Return the optical frame of a depth camera (the frame its images are in)."""
    return f'{sensor_name}_optical'


class FrameTree:
    """
    Compute the robot's static and moving transforms.

    Args:
        sim: the Simulator.
        urdf_robot: the ``urdf_parser_py`` Robot of the same description (from
            ``jointsim_ros.description.parse_urdf``): the URDF parent and child of every joint,
            merged fixed joints included.
        frame_prefix: prepended to every link name to make its frame id.
        world_frame: frame id of the simulation world (not prefixed).
    """

    def __init__(self, sim, urdf_robot, frame_prefix='', world_frame='world'):
        self.sim = sim
        self.prefix = frame_prefix
        self.world_frame = world_frame
        self.root_link = sim.model.root_link
        self.static = []
        self.moving = []  # (parent link, child link)
        for joint in urdf_robot.joints:
            if joint.type == 'fixed':
                origin = joint.origin
                xyz = tuple(float(v) for v in (origin.xyz if origin and origin.xyz else (0, 0, 0)))
                rpy = origin.rpy if origin and origin.rpy else (0.0, 0.0, 0.0)
                self.static.append(Transform(self.frame(joint.parent), self.frame(joint.child),
                                             xyz, tuple(matrix_to_quat(rpy_to_matrix(rpy)))))
            else:
                self.moving.append((joint.parent, joint.child))
        # scene objects (config ``scene``) hang from the world frame: static or moving
        urdf_links = {link.name for link in urdf_robot.links}
        self.scene_moving = []
        for name, link in sim.model.links.items():
            if name in urdf_links:
                continue
            if link.body >= 0:
                self.scene_moving.append(name)
            else:
                self.static.append(self.world_transform(name))
        # force-torque sensors with a frame of their own: child link -> sensor, static
        for sensor in sim.model.sensors:
            if sensor.frame == 'sensor':
                child = next(j.child_link for j in sim.model.joints if j.name == sensor.joint)
                self.static.append(Transform(self.frame(child), self.frame(sensor.name),
                                             tuple(float(v) for v in sensor.pos),
                                             tuple(float(v) for v in sensor.quat)))
        # IMUs: link -> sensor, static
        for imu in sim.model.imus:
            self.static.append(Transform(self.frame(imu.link), self.frame(imu.name),
                                         tuple(float(v) for v in imu.pos),
                                         tuple(float(v) for v in imu.quat)))
        # lidars and depth cameras: link -> sensor, static; a depth camera's optical frame
        # (z forward, x right, y down, REP 103) hangs from its sensor frame
        for spec in getattr(sim.model, 'range_sensors', ()):
            self.static.append(Transform(self.frame(spec.link), self.frame(spec.name),
                                         tuple(float(v) for v in spec.pos),
                                         tuple(float(v) for v in spec.quat)))
            if spec.kind == 'depth_camera':
                self.static.append(Transform(self.frame(spec.name),
                                             self.frame(optical_frame(spec.name)),
                                             (0.0, 0.0, 0.0), OPTICAL_QUAT))
        # every robot's root link hangs from the world frame (a world has one per robot)
        roots = [part.root_link for part in sim.model.robots] or [self.root_link]
        self.anchor_moves = sim.model.links[self.root_link].body >= 0
        self.has_anchor = self.frame(self.root_link) != world_frame
        anchored = [root for root in roots if self.frame(root) != world_frame]
        self._moving_roots = [r for r in anchored if sim.model.links[r].body >= 0]
        self.static[:0] = [self.world_transform(r) for r in anchored
                           if sim.model.links[r].body < 0]
        self._moving_frames = None     # moving_frames' list, made on the first call
        self._pose_names = None        # moving_arrays' links to pose, and its rows

    def frame(self, link):
        """Return the TF frame id of a URDF link."""
        return self.prefix + link

    @property
    def links(self):
        """Every link frame id the tree holds (the world frame excluded)."""
        frames = {t.child for t in self.static} | {self.frame(c) for _, c in self.moving}
        frames |= {self.frame(name) for name in self.scene_moving}
        frames.add(self.frame(self.root_link))
        frames.discard(self.world_frame)
        return frames

    def anchor(self):
        """Return the transform world frame -> root link."""
        return self.world_transform(self.root_link)

    def world_transform(self, link):
        """Return the transform world frame -> a link or scene object at its current pose."""
        xyz, quat = self.sim.link_pose(link)
        return Transform(self.world_frame, self.frame(link),
                         tuple(float(v) for v in xyz), tuple(float(v) for v in quat))

    def anchor_offset(self):
        """
        Return how far the root link sits from the world origin when no anchor is published.

        Returns:
            (m, rad): distance and rotation angle of the root link's pose in the world.
        """
        xyz, quat = self.sim.link_pose(self.root_link)
        angle = 2.0 * math.acos(min(1.0, abs(float(quat[0]))))
        return float(math.sqrt(sum(float(v) ** 2 for v in xyz))), angle

    def moving_frames(self):
        """Return the (parent frame, child frame) of every moving transform, in their order."""
        if self._moving_frames is None:
            frames = [(self.world_frame, self.frame(name))
                      for name in self._moving_roots + list(self.scene_moving)]
            frames += [(self.frame(parent), self.frame(child)) for parent, child in self.moving]
            self._moving_frames = frames
        return self._moving_frames

    def moving_arrays(self):
        """
        Return the moving transforms at the simulator's current state as arrays.

        Returns:
            (xyz np.ndarray(n, 3) m, quat np.ndarray(n, 4) (w, x, y, z), w >= 0, unit): child
            in parent, in the order of :meth:`moving_frames`.
        """
        if self._pose_names is None:
            world = self._moving_roots + list(self.scene_moving)
            names = list(dict.fromkeys(world + [link for pair in self.moving for link in pair]))
            index = {name: k for k, name in enumerate(names)}
            self._pose_names = names
            self._world_rows = np.array([index[name] for name in world], dtype=int)
            self._parents = np.array([index[parent] for parent, _ in self.moving], dtype=int)
            self._children = np.array([index[child] for _, child in self.moving], dtype=int)
        xyz, quat = self.sim.link_poses(self._pose_names)
        parent_quat = quat[self._parents]
        rel_xyz = quats_rotate(parent_quat, xyz[self._children] - xyz[self._parents],
                               inverse=True)
        parent_quat[:, 1:] *= -1.0
        rel_quat = quats_multiply(parent_quat, quat[self._children])
        out_xyz = np.concatenate([xyz[self._world_rows], rel_xyz])
        out_quat = np.concatenate([quat[self._world_rows], rel_quat])
        out_quat /= np.linalg.norm(out_quat, axis=1)[:, None]
        out_quat[out_quat[:, 0] < 0.0] *= -1.0
        return out_xyz, out_quat

    def moving_transforms(self):
        """Return the moving transforms at the simulator's current state."""
        xyz, quat = self.moving_arrays()
        return [Transform(parent, child, tuple(float(v) for v in p), tuple(float(v) for v in q))
                for (parent, child), p, q in zip(self.moving_frames(), xyz, quat)]
