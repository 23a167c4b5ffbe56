"""
The browser view fed from a Simulator, no ROS: ``jointsim_headless --view`` (docs/view.md).

The same drawing as ``jointsim_view`` (drawing.py): links at ``Simulator.link_poses``, contacts
from ``Simulator.contacts()``, each force-torque sensor's exact reading as arrows at its frame,
each IMU's frame, each lidar's and depth camera's latest sample as points, from the pose it was
taken at, plots of joint positions and drive currents and voltages; the buttons set
flags the stepping loop reads (pause, resume, step, reset).
"""
from .drawing import PlotBuffer, ray_points, to_world, ViewScene, wrench_arrows
from ..rotations import quat_multiply, quat_to_matrix


class SimulatorView:
    """
    A ViewScene showing a Simulator.

    Args:
        sim: the Simulator (built with its description, ``Simulator.from_urdf``, or from a
            world, ``Simulator.from_world``).
        port: the page's port (in use: another, announced).
        announce: callable for one-line messages (the URL first).
    """

    def __init__(self, sim, port=8080, announce=print):
        self.sim = sim
        self.scene = ViewScene(port, announce=announce)
        announce(f'view: {self.scene.url}')
        if sim.world is not None:
            # a world: every robot from its own description, its links named NAME/link
            for robot in sim.world.robots:
                self.scene.set_robot(robot.description.xml, robot.name + '/')
        else:
            self.scene.set_robot(sim.description.xml)
        self.paused = False
        self.requests = []
        self.scene.add_controls([('Pause', lambda: setattr(self, 'paused', True)),
                                 ('Resume', lambda: setattr(self, 'paused', False)),
                                 ('Step', lambda: self.requests.append('step')),
                                 ('Reset', lambda: self.requests.append('reset'))])
        self.joints = list(sim.drive_names or sim.joint_names)[:4]
        self.plots = {kind: PlotBuffer() for kind in ('position', 'current', 'voltage')}
        self._range_counts = {}          # range sensor -> the count of its sample drawn
        for kind, unit in (('position', 'rad or m'), ('current', 'A'), ('voltage', 'V')):
            self.scene.add_plot(f'{kind} ({unit})', self.joints)

    def update(self):
        """Draw the Simulator's state now."""
        sim = self.sim
        links = tuple(sim.model.links)
        xyz, quat = sim.link_poses(links)
        self.scene.set_poses(dict(zip(links, zip(xyz, quat))))
        contacts = sim.contacts()
        self.scene.set_contacts([c.position for c in contacts],
                                [(c.position, c.position + 0.002 * c.normal_force * c.normal)
                                 for c in contacts])
        imus = {imu.name for imu in sim.model.imus}
        for name in sim.sensors.names:
            if name in imus:
                continue
            pos, quat = self._sensor_frame(name)
            values = sim.sensors.wrench(name)
            self.scene.set_wrench(name, wrench_arrows(values[:3], values[3:6], pos, quat))
        for imu in sim.model.imus:
            link_pos, link_quat = sim.link_pose(imu.link)
            self.scene.add_frame_axes(imu.name, link_pos + quat_to_matrix(link_quat) @ imu.pos,
                                      quat_multiply(link_quat, imu.quat))
        for name in sim.sensors.range_names:
            sample = sim.sensors.range_sample(name)
            if sample.count == self._range_counts.get(name):
                continue                       # drawn already
            self._range_counts[name] = sample.count
            depth = sim.sensors.range_sensor(name).kind == 'depth_camera'
            points = ray_points(sample.ranges, sim.sensors.ray_directions(name), depth)
            self.scene.set_range_points(name, to_world(points, sample.position, sample.quat),
                                        depth)
        t = sim.time
        positions = dict(zip(sim.joint_names, sim.joint_positions()))
        self.plots['position'].add(t, positions)
        current, voltage = {}, {}
        for joint in sim.drive_names:
            state = sim.drive_state(joint)
            current[joint], voltage[joint] = state['current'], state['voltage']
        self.plots['current'].add(t, current)
        self.plots['voltage'].add(t, voltage)
        for kind, unit in (('position', 'rad or m'), ('current', 'A'), ('voltage', 'V')):
            self.scene.update_plot(f'{kind} ({unit})', self.plots[kind])

    def _sensor_frame(self, name):
        """Return the world pose of a force-torque sensor's frame (its link's, or its child's)."""
        link = self.sim.sensors.frame(name)
        if link not in self.sim.model.links:   # a frame of its own: drawn at its child link
            spec = next(s for s in self.sim.model.sensors if s.name == name)
            link = next(j.child_link for j in self.sim.model.joints if j.name == spec.joint)
        return self.sim.link_pose(link)

    def close(self):
        """Stop serving."""
        self.scene.close()
