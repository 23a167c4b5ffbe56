"""
Read a URDF's ``<ros2_control>`` tags and say what the node can give them.

ros2_control describes its hardware in the robot description (ros2_control's
``hardware_interface`` documentation, "ros2_control tag")::

    <ros2_control name="arm" type="system">
      <hardware>
        <plugin>joint_state_topic_hardware_interface/JointStateTopicSystem</plugin>
        <param name="joint_commands_topic">/robot_joint_commands</param>
        <param name="joint_states_topic">/robot_joint_states</param>
      </hardware>
      <joint name="shoulder">
        <command_interface name="position"/>
        <state_interface name="position"/>
        <state_interface name="velocity"/>
      </joint>
    </ros2_control>

The node does not load ros2_control (it is a simulator, not a controller manager).  It plays the
robot behind ros-controls' topic-based hardware interface: that interface publishes
``sensor_msgs/JointState`` commands holding only the fields of its command interfaces and reads
``sensor_msgs/JointState`` states (docs/ros2_control.md).  From the tags it takes the joints, the
interfaces each asks for and, for a topic-based plugin, the two topic names; :func:`check` lists,
one sentence each, what a tag asks for that the node cannot give (a position or velocity
command on a joint without a drive, an unknown joint, an interface the node has not got).
"""
from dataclasses import dataclass

#: Plugins that talk to the robot over topics (ros-controls' and PickNik's names).
TOPIC_BASED_PLUGINS = ('joint_state_topic_hardware_interface/JointStateTopicSystem',
                       'topic_based_ros2_control/TopicBasedSystem')
#: Their topic parameters' defaults (the plugins' sources; ros-controls' README says
#: /robot_joint_command, its code uses /robot_joint_commands).
TOPIC_DEFAULTS = {'joint_commands_topic': '/robot_joint_commands',
                  'joint_states_topic': '/robot_joint_states'}
#: Command interfaces the node serves: effort on every joint (on a driven joint, the motor
#: current that gives it), position and velocity through a drive's servo loops.
COMMAND_INTERFACES = ('position', 'velocity', 'effort')
#: State interfaces on joint_states and dynamic_joint_states (every joint, as
#: joint_state_broadcaster names them) and those a drive adds on dynamic_joint_states
#: (ros_messages.dynamic_joint_state publishes exactly these; units in docs/ros2_control.md).
JOINT_STATE_INTERFACES = ('position', 'velocity', 'effort')
DRIVE_STATE_INTERFACES = ('voltage', 'current', 'motor_torque', 'rotor_speed', 'output_effort')


@dataclass(frozen=True)
class Ros2ControlJoint:
    """
    One ``<joint>`` of a ``<ros2_control>`` tag.

    Attributes:
        name: the URDF joint.
        command_interfaces: tuple of interface names (``position``, ``velocity``, ...).
        state_interfaces: tuple of interface names.
    """

    name: str
    command_interfaces: tuple
    state_interfaces: tuple


@dataclass(frozen=True)
class Ros2ControlSystem:
    """
    One ``<ros2_control>`` tag.

    Attributes:
        name: its name attribute.
        kind: its type attribute: ``system``, ``actuator`` or ``sensor``.
        plugin: the hardware plugin ('' when none is given).
        parameters: dict of the hardware's ``<param>`` values.
        joints: tuple of Ros2ControlJoint.
        others: tuple of (tag, name) of ``<sensor>`` and ``<gpio>`` components.
    """

    name: str
    kind: str
    plugin: str
    parameters: dict
    joints: tuple
    others: tuple

    @property
    def topic_based(self):
        """Say whether the plugin talks to the robot over JointState topics."""
        return self.plugin in TOPIC_BASED_PLUGINS

    def command_layout(self):
        """Return dict field -> the joints with that command interface, in the tag's order."""
        return {field: tuple(j.name for j in self.joints if field in j.command_interfaces)
                for field in COMMAND_INTERFACES}

    def topic(self, key):
        """Return a topic-based plugin's joint_commands_topic or joint_states_topic."""
        return self.parameters.get(key) or TOPIC_DEFAULTS[key]


def read_ros2_control(root):
    """
    Read every ``<ros2_control>`` element under an lxml ``<robot>`` root.

    Args:
        root: the parsed robot element (xacro already expanded).

    Returns:
        tuple of Ros2ControlSystem, in document order.
    """
    systems = []
    for tag in root.iterfind('ros2_control'):
        hardware = tag.find('hardware')
        plugin = '' if hardware is None else (hardware.findtext('plugin') or '').strip()
        parameters = {} if hardware is None else {
            p.get('name'): (p.text or '').strip() for p in hardware.iterfind('param')}
        joints = tuple(Ros2ControlJoint(
            name=j.get('name', ''),
            command_interfaces=tuple(c.get('name', '') for c in j.iterfind('command_interface')),
            state_interfaces=tuple(s.get('name', '') for s in j.iterfind('state_interface')))
            for j in tag.iterfind('joint'))
        others = tuple((o.tag, o.get('name', '')) for o in tag if o.tag in ('sensor', 'gpio'))
        systems.append(Ros2ControlSystem(name=tag.get('name', ''), kind=tag.get('type', ''),
                                         plugin=plugin, parameters=parameters, joints=joints,
                                         others=others))
    return tuple(systems)


def check(systems, joint_names, drive_names):
    """
    Say what the ``<ros2_control>`` tags ask for that the node cannot give.

    Args:
        systems: tuple of Ros2ControlSystem.
        joint_names: the simulator's movable joints.
        drive_names: the joints with a DC drive (config ``drives``).

    Returns:
        list of sentences, one per thing the node cannot give (empty: everything is served).
    """
    problems = []
    joints, driven = set(joint_names), set(drive_names)
    for system in systems:
        where = f"<ros2_control name='{system.name}'>"
        for joint in system.joints:
            if joint.name not in joints:
                problems.append(f"{where}: joint '{joint.name}' is not a movable joint of the "
                                f'robot; the node has no state or command for it.')
                continue
            for interface in joint.command_interfaces:
                if interface not in COMMAND_INTERFACES:
                    problems.append(
                        f"{where}: joint '{joint.name}' asks for a '{interface}' command "
                        f'interface; the node takes position, velocity and effort only.')
                elif interface != 'effort' and joint.name not in driven:
                    problems.append(
                        f"{where}: joint '{joint.name}' asks for a '{interface}' command "
                        f'interface but has no drive, so no position or velocity loop; give it '
                        f'a drive in the config (drives section, docs/drives.md) or an effort '
                        f'interface.')
            offered = JOINT_STATE_INTERFACES + (
                DRIVE_STATE_INTERFACES if joint.name in driven else ())
            for interface in joint.state_interfaces:
                if interface not in offered:
                    problems.append(
                        f"{where}: joint '{joint.name}' asks for a '{interface}' state "
                        f'interface; the node publishes {", ".join(offered)} for it.')
        for tag, name in system.others:
            problems.append(
                f"{where}: <{tag} name='{name}'> is not served over the joint topics (force-"
                f'torque sensors publish WrenchStamped on <sensor>/wrench, docs/sensors.md).')
    return problems


def summary(system):
    """Return one sentence for the start-up log: the tag's joints and command interfaces."""
    modes = {}
    for joint in system.joints:
        modes.setdefault('/'.join(joint.command_interfaces) or 'no command', []).append(joint.name)
    parts = '; '.join(f'{mode}: {", ".join(names)}' for mode, names in modes.items())
    plugin = system.plugin or 'no plugin'
    text = f"<ros2_control name='{system.name}'> ({plugin}) commands {parts or 'no joint'}"
    if system.topic_based:
        text += (f"; served on {system.topic('joint_commands_topic')} (commands) and "
                 f"{system.topic('joint_states_topic')} (states)")
    return text
