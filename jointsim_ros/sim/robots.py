"""
One robot of a world, seen through the facade: ``sim.robots[NAME]`` (docs/worlds.md).

The simulator holds every robot of a world in one model whose names carry the robot's prefix
``NAME/``; a :class:`RobotView` offers the facade's robot methods on that robot's own joints,
drives, links and sensors, named as in its own description (without the prefix).
"""
from dataclasses import replace

import numpy as np

from ..errors import CommandError


class RobotView:
    """
    The robot methods of a Simulator, on one robot of its world.

    Joint-indexed arrays follow :attr:`joint_names`; dict arguments and results use the robot's
    own names.  Commands go to the simulator, so a robot's drives, servo loops, joint sensors
    and sensors are the simulator's own for its joints.
    """

    def __init__(self, sim, part):
        self._sim = sim
        #: The robot's name in the world (its namespace and TF prefix).
        self.name = part.name
        #: ``name + '/'``: what its names carry in the simulator's model.
        self.prefix = part.prefix
        self._part = part
        p = part.prefix
        # its own by membership, not by prefix: a simulation started with one robot keeps
        # that robot's names unprefixed when robots are added (docs/worlds.md)
        mine = set(part.joints)
        self._mine = mine
        own = [i for i, n in enumerate(sim.joint_names) if n in mine]
        self._joints = np.array(own, dtype=np.int64)
        #: Its movable joints (revolute, continuous, prismatic), URDF order, own names.
        self.joint_names = tuple(sim.joint_names[i][len(p):] for i in own)
        #: Its driven joints, in joint_names order.
        self.drive_names = tuple(n[len(p):] for n in sim.drive_names if n in mine)
        #: Its URDF links, own names.
        self.link_names = tuple(n[len(p):] for n in part.links)
        #: Its mimic joints (own names): they follow their leader and take no effort command.
        self.mimic_joints = tuple(j.name[len(p):] for j in sim.model.joints
                                  if j.mimic is not None and j.name in mine)
        #: Its joint measurements (``sim.joint_sensors`` on its joints).
        self.joint_sensors = _JointSensorsView(sim, self._joints, p)
        #: Its force-torque sensors, IMUs and range sensors (``sim.sensors`` on its own
        #: sensor names).
        links = set(part.links)
        sensors = {s.name for s in sim.model.sensors if s.joint in mine}
        sensors |= {m.name for m in sim.model.imus if m.link in links}
        sensors |= {r.name for r in sim.model.range_sensors if r.link in links}
        self.sensors = _SensorsView(sim, p, sensors)
        #: Its grasps (``sim.grasps`` on its own grasp names).
        grasps = {j.name.partition(':')[2] for j in sim.model.joints
                  if j.element == 'grasp' and j.child_link in links}
        self.grasps = _GraspsView(sim, p, grasps)
        #: Prescribed motion of its joints (``sim.prescribed.joints`` on its own names).
        self.prescribed = _PrescribedView(sim, p, [n for n in sim.joint_names if n in mine])

    @property
    def time(self):
        """Return the simulated time, s (the world's)."""
        return self._sim.time

    @property
    def floating(self):
        """Return True when the robot's base is free."""
        return self._part.floating

    @property
    def root_link(self):
        """Its URDF root link (own name)."""
        return self._part.root_link[len(self.prefix):]

    def _named(self, values):
        return {self.prefix + str(k): v for k, v in (values or {}).items()}

    def _own(self, values):
        n = len(self.prefix)
        return {k[n:]: v for k, v in values.items()}

    # -- state -----------------------------------------------------------------------------
    def joint_positions(self):
        """Joint positions in :attr:`joint_names` order, rad or m."""
        return self._sim.joint_positions()[self._joints]

    def joint_velocities(self):
        """Joint velocities in :attr:`joint_names` order, rad/s or m/s."""
        return self._sim.joint_velocities()[self._joints]

    def joint_efforts(self):
        """Actuator efforts in :attr:`joint_names` order, N m or N."""
        return self._sim.joint_efforts()[self._joints]

    def link_pose(self, link_name):
        """World pose (position (3,), quaternion wxyz (4,)) of one of its link frames."""
        return self._sim.link_pose(self.prefix + link_name)

    def link_twist(self, link_name):
        """World twist of one of its link frames (linear, angular)."""
        return self._sim.link_twist(self.prefix + link_name)

    def drive_state(self, joint):
        """Return the state of the drive on one of its joints (Simulator.drive_state)."""
        return self._sim.drive_state(self.prefix + joint)

    def drive_modes(self):
        """Return dict driven joint -> mode, for its drives."""
        return self._own({k: v for k, v in self._sim.drive_modes().items() if k in self._mine})

    # -- commands --------------------------------------------------------------------------
    def set_voltages(self, volts):
        """Hold armature voltages on its named drives (V); returns the clipped ones."""
        return self._own(self._sim.set_voltages(self._named(volts)))

    def set_joint_efforts(self, efforts):
        """Hold efforts on its named joints (N m or N); returns the clipped ones."""
        return self._own(self._sim.set_joint_efforts(self._named(efforts)))

    def set_servo_targets(self, positions=None, velocities=None, efforts=None):
        """Servo its named drives (Simulator.set_servo_targets); returns clipped positions."""
        return self._own(self._sim.set_servo_targets(
            self._named(positions), self._named(velocities), self._named(efforts)))

    def set_joint_state(self, positions, velocities=None):
        """Place its joints (Simulator.set_joint_state)."""
        self._sim.set_joint_state(self._named(positions), self._named(velocities))

    def set_base_state(self, position, quat_wxyz, linear_velocity=None, angular_velocity=None):
        """Place its floating base's root link and carry the robot along."""
        if not self._part.floating:
            raise CommandError(f'set_base_state: robot {self.name!r} has a fixed base; set '
                               '`base: floating` in its config to move it.')
        self._sim.set_base_state(position, quat_wxyz, linear_velocity, angular_velocity,
                                 robot=self.name)

    # -- sensors ---------------------------------------------------------------------------
    @property
    def sensor_names(self):
        """Its force-torque sensors (own names)."""
        return self.sensors.names

    @property
    def imu_names(self):
        """Its IMUs (own names)."""
        return self.sensors.imu_names

    def wrench(self, sensor_name):
        """Return the last wrench sample of one of its force-torque sensors (Sensors.wrench)."""
        return self._sim.sensors.wrench(self.prefix + sensor_name)

    def imu(self, imu_name):
        """Return the last reading of one of its IMUs (Sensors.imu)."""
        return self._sim.sensors.imu(self.prefix + imu_name)

    @property
    def range_names(self):
        """Its lidars and depth cameras (own names)."""
        return self.sensors.range_names

    def ranges(self, sensor_name):
        """Return the last sample of one of its range sensors (Sensors.ranges)."""
        return self._sim.sensors.ranges(self.prefix + sensor_name)


def _strip(prefix, names, own):
    """Return the names that are in ``own``, without ``prefix``."""
    return tuple(n[len(prefix):] for n in names if n in own)


class _JointSensorsView:
    """``sim.joint_sensors`` on one robot's joints (its own names, its joint_names order)."""

    def __init__(self, sim, joints, prefix):
        self._sim, self._joints, self._prefix = sim, joints, prefix

    def read(self):
        """Return its measured (positions, velocities) (JointSensors.read, sliced)."""
        positions, velocities = self._sim.joint_sensors.read()
        return positions[self._joints], velocities[self._joints]

    def current(self, joint, exact):
        """Return what the current sensor of its drive on ``joint`` reads, A."""
        return self._sim.joint_sensors.current(self._prefix + joint, exact)


class _SensorsView:
    """``sim.sensors`` on one robot's force-torque sensors and IMUs (own names)."""

    def __init__(self, sim, prefix, own):
        self._sim, self._prefix = sim, prefix
        self.names = _strip(prefix, sim.sensors.names, own)
        self.imu_names = _strip(prefix, sim.sensors.imu_names, own)
        #: Its ImuModels with their own names (``name``, ``link``; ``topic`` is relative).
        self.imus = tuple(replace(m, name=m.name[len(prefix):], link=m.link[len(prefix):])
                          for m in sim.model.imus if m.name in own)
        self.range_names = _strip(prefix, sim.sensors.range_names, own)

    def wrench(self, sensor_name):
        """Return the last wrench sample of a force-torque sensor (Sensors.wrench)."""
        return self._sim.sensors.wrench(self._prefix + sensor_name)

    def imu(self, imu_name):
        """Return the last reading of an IMU (Sensors.imu)."""
        return self._sim.sensors.imu(self._prefix + imu_name)

    def frame(self, sensor_name):
        """Return the link (or sensor) its reading is expressed in, own name."""
        return self._sim.sensors.frame(self._prefix + sensor_name)[len(self._prefix):]

    def history(self, sensor_name, after=0):
        """Return a sensor's samples whose count is above ``after`` (Sensors.history)."""
        return self._sim.sensors.history(self._prefix + sensor_name, after)

    def ranges(self, sensor_name):
        """Return the last sample of a range sensor (Sensors.ranges)."""
        return self._sim.sensors.ranges(self._prefix + sensor_name)

    def range_sample(self, sensor_name):
        """Return a range sensor's sample with its time, count and pose (Sensors.range_sample)."""
        return self._sim.sensors.range_sample(self._prefix + sensor_name)

    def range_sensor(self, sensor_name):
        """Return a range sensor's model with its own name and link (Sensors.range_sensor)."""
        spec = self._sim.sensors.range_sensor(self._prefix + sensor_name)
        n = len(self._prefix)
        return replace(spec, name=spec.name[n:], link=spec.link[n:])

    def ray_directions(self, sensor_name):
        """Return a range sensor's unit ray directions in its frame (Sensors.ray_directions)."""
        return self._sim.sensors.ray_directions(self._prefix + sensor_name)


class _GraspsView:
    """``sim.grasps`` on one robot's grasps (own names)."""

    def __init__(self, sim, prefix, own):
        self._sim, self._prefix = sim, prefix
        self.names = _strip(prefix, sim.grasps.names, own)

    def grasp(self, name):
        """Grasp (Grasps.grasp); return the gap to the rim, m."""
        return self._sim.grasps.grasp(self._prefix + name)

    def release(self, name):
        """Let go (Grasps.release)."""
        self._sim.grasps.release(self._prefix + name)

    def holding(self, name):
        """Return whether the grasp holds (Grasps.holding)."""
        return self._sim.grasps.holding(self._prefix + name)


class _PrescribedView:
    """``sim.prescribed`` joint motions on one robot's joints (own names)."""

    def __init__(self, sim, prefix, own):
        self._sim, self._prefix, self._own_joints = sim, prefix, own

    def _names(self, joints):
        if joints is None:
            return list(self._own_joints)
        return [self._prefix + n for n in joints]

    def joints(self, times, positions, joints=None, start_time=None):
        """Prescribe its joints' motion (Prescribed.joints; default all its joints)."""
        self._sim.prescribed.joints(times, positions, joints=self._names(joints),
                                    start_time=start_time)

    def release_joints(self, joints=None):
        """End the prescribed motion of its joints (default all of its own)."""
        self._sim.prescribed.release_joints(self._names(joints))


def robot_views(sim):
    """Return {name: RobotView} of a Simulator's robots ({} for one robot without a world)."""
    return {part.name: RobotView(sim, part) for part in sim.model.robots}
