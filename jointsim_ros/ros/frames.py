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
the world frame too: static geometry on /tf_static, free objects on /tf.

No rclpy here: transforms are plain tuples, turned into messages by ``ros_messages``.
"""
from collections import namedtuple
import math

from ..rotations import matrix_to_quat, quat_to_matrix, relative_quat, rpy_to_matrix

#: One transform: frame ids, translation (3,) m and rotation (4,) (w, x, y, z) of ``child`` in
#: ``parent``.
Transform = namedtuple('Transform', ['parent', 'child', 'xyz', 'quat'])


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
        root_frame = self.frame(self.root_link)
        self.anchor_moves = sim.model.links[self.root_link].body >= 0
        self.has_anchor = root_frame != world_frame
        if self.has_anchor and not self.anchor_moves:
            self.static.insert(0, self.anchor())

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

    def moving_transforms(self):
        """Return the moving transforms at the simulator's current state."""
        poses = {}

        def pose(link):
            if link not in poses:
                xyz, quat = self.sim.link_pose(link)
                poses[link] = (xyz, quat, quat_to_matrix(quat))
            return poses[link]

        out = [self.anchor()] if self.has_anchor and self.anchor_moves else []
        out += [self.world_transform(name) for name in self.scene_moving]
        for parent, child in self.moving:
            parent_xyz, parent_quat, parent_rot = pose(parent)
            child_xyz, child_quat, _ = pose(child)
            xyz = parent_rot.T @ (child_xyz - parent_xyz)
            out.append(Transform(self.frame(parent), self.frame(child),
                                 tuple(float(v) for v in xyz),
                                 relative_quat(parent_quat, child_quat)))
        return out
