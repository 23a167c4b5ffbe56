"""The <ros2_control> tag: what is read from it, what is reported, the shipped example files."""
from pathlib import Path

from jointsim_ros import Simulator
from jointsim_ros.description import parse_urdf
from jointsim_ros.description.ros2_control import check, summary
from jointsim_ros.errors import CommandError
from jointsim_ros.ros.messages import servo_values
import pytest
from robots import inertial, joint, link, robot
from sensor_msgs.msg import JointState
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / 'config' / 'jointsim_arm_ros2_control.urdf.xacro'
CONTROLLERS = ROOT / 'config' / 'jointsim_arm_controllers.yaml'
ARM_CONFIG = ROOT / 'config' / 'jointsim_arm.yaml'


def tagged(tag):
    """Return a two-joint robot (a, b) with a <ros2_control> tag."""
    body = inertial(1.0, 0.01, 0.01, 0.01)
    return robot('r', link('base'), link('l1', body), link('l2', body),
                 joint('a', 'continuous', 'base', 'l1', axis='0 0 1'),
                 joint('b', 'continuous', 'l1', 'l2', axis='0 0 1'), tag)


TAG = """<ros2_control name="hw" type="system">
  <hardware><plugin>mock_components/GenericSystem</plugin><param name="x">1</param></hardware>
  <joint name="a"><command_interface name="position"><param name="min">-1</param>
    </command_interface><command_interface name="effort"/>
    <state_interface name="position"/><state_interface name="current"/></joint>
  <joint name="b"><command_interface name="velocity"/><command_interface name="acceleration"/>
    <state_interface name="position"/></joint>
  <joint name="ghost"><command_interface name="effort"/></joint>
  <sensor name="ft"><state_interface name="force.x"/></sensor>
</ros2_control>"""


def test_the_tag_is_read_with_its_joints_interfaces_and_parameters():
    system, = parse_urdf(tagged(TAG)).ros2_control
    assert (system.name, system.kind, system.plugin) == ('hw', 'system',
                                                         'mock_components/GenericSystem')
    assert system.parameters == {'x': '1'} and not system.topic_based
    assert [j.name for j in system.joints] == ['a', 'b', 'ghost']
    assert system.joints[0].command_interfaces == ('position', 'effort')
    assert system.joints[0].state_interfaces == ('position', 'current')
    assert system.others == (('sensor', 'ft'),)
    assert system.command_layout() == {'position': ('a',), 'velocity': ('b',),
                                       'effort': ('a', 'ghost')}


def test_what_the_node_cannot_give_is_named_one_sentence_each():
    system, = parse_urdf(tagged(TAG)).ros2_control
    # a has a drive, b has none
    problems = check((system,), ['a', 'b'], ['a'])
    text = '\n'.join(problems)
    assert len(problems) == 4, text
    assert "joint 'b' asks for a 'velocity' command interface but has no drive" in text
    assert "joint 'b' asks for a 'acceleration' command interface" in text
    assert "joint 'ghost' is not a movable joint" in text
    assert "<sensor name='ft'>" in text
    # a's position command and its 'current' state are served (a is driven)
    assert "joint 'a'" not in text
    # without a drive on a, its current is not there and its position loop neither
    assert len(check((system,), ['a', 'b'], [])) == 6


def test_the_shipped_example_is_served_entirely_for_each_command_interface():
    sim = Simulator.from_urdf(str(EXAMPLE), str(ARM_CONFIG))
    controllers = yaml.safe_load(CONTROLLERS.read_text())
    for interface in ('position', 'velocity', 'effort'):
        system, = parse_urdf(str(EXAMPLE), {'command_interface': interface}).ros2_control
        assert system.topic_based
        assert system.topic('joint_commands_topic') == '/robot_joint_commands'
        assert [j.name for j in system.joints] == list(sim.joint_names)
        assert all(j.command_interfaces == (interface,) for j in system.joints)
        assert check((system,), sim.joint_names, sim.drive_names) == []
        assert '/robot_joint_states' in summary(system)
        # the forward controller of that interface commands exactly the tag's joints
        forward = controllers[f'forward_{interface}_controller']['ros__parameters']
        assert forward == {'joints': list(sim.joint_names), 'interface_name': interface}
    manager = controllers['controller_manager']['ros__parameters']
    assert manager['forward_position_controller']['type'] == (
        'forward_command_controller/ForwardCommandController')
    trajectory = controllers['joint_trajectory_controller']['ros__parameters']
    assert trajectory['joints'] == list(sim.joint_names)
    assert trajectory['command_interfaces'] == ['position']


def test_mixed_interfaces_are_decoded_with_the_tags_layout():
    layout = {'position': ('a',), 'velocity': (), 'effort': ('b', 'c')}
    msg = JointState(name=['a', 'b', 'c'], position=[0.5], effort=[1.0, -2.0])
    assert servo_values(msg, layout) == ({'a': 0.5}, {}, {'b': 1.0, 'c': -2.0})
    # a full field is read per name whatever the layout
    full = JointState(name=['a', 'b', 'c'], velocity=[1.0, 2.0, 3.0])
    assert servo_values(full, layout)[1] == {'a': 1.0, 'b': 2.0, 'c': 3.0}
    with pytest.raises(CommandError, match='3 names but 1 values in the position field'):
        servo_values(msg)
    with pytest.raises(CommandError, match='3 names but 2 values in the effort field'):
        servo_values(msg, {'position': ('a',), 'effort': ('b', 'x')})
    with pytest.raises(CommandError, match="effort nan for joint 'c'"):
        servo_values(JointState(name=['a', 'b', 'c'], effort=[1.0, float('nan')]), layout)
