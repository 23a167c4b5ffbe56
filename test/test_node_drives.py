"""
Drive states, servo modes and a ros2_control-style client, over real DDS.

One node on two discs (joint j on a geared DC drive, joint k bare), in the namespace /robot,
with publish_tf and publish_robot_description off, serves this module.  The URDF carries a
``<ros2_control>`` tag for ros-controls' topic-based hardware interface (j: position command
interface, k: effort).  The client in the last tests behaves as that interface's ``write()`` and
``read()`` do (joint_state_topic_hardware_interface.cpp): one sensor_msgs/JointState per cycle
naming every joint of the tag, each field holding values only for the joints with that command
interface, on /robot_joint_commands; states read from /robot_joint_states with the sensor-data
QoS.
"""
import subprocess
import sys

from control_msgs.msg import DynamicJointState
from diagnostic_msgs.msg import DiagnosticArray
from node_harness import domain, latest, PACKAGE_ROOT, RosClient, running_node, stamp_seconds
import pytest
from rclpy.qos import qos_profile_sensor_data
from robots import inertial, joint, link, robot
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
import yaml

NS = '/robot'
DRIVE = {'resistance': 2.0, 'inductance': 1e-3, 'torque_constant': 0.05,
         'rotor_inertia': 1e-5, 'gear_ratio': 20.0, 'viscous_friction': 1e-5,
         'supply_voltage': 24.0, 'current_limit': 10.0}
IZZ = 0.04


ROS2_CONTROL = """<ros2_control name="discs" type="system">
  <hardware>
    <plugin>joint_state_topic_hardware_interface/JointStateTopicSystem</plugin>
    <param name="trigger_joint_command_threshold">-1</param>
  </hardware>
  <joint name="j"><command_interface name="position"/><state_interface name="position"/>
    <state_interface name="velocity"/><state_interface name="current"/></joint>
  <joint name="k"><command_interface name="effort"/><state_interface name="position"/>
    <state_interface name="velocity"/><state_interface name="temperature"/></joint>
</ros2_control>"""


def two_discs():
    """Return two discs on vertical axes: j (driven) and k (bare), with a ros2_control tag."""
    def disc(name):
        return link(name, inertial(2.0, IZZ / 2, IZZ / 2, IZZ))
    return robot('discs', link('base'), disc('disc_j'), disc('disc_k'),
                 joint('j', 'continuous', 'base', 'disc_j', axis='0 0 1'),
                 joint('k', 'continuous', 'base', 'disc_k', xyz='1 0 0', axis='0 0 1'),
                 ROS2_CONTROL)


@pytest.fixture(scope='module')
def discs(tmp_path_factory):
    """Yield (node process, client) for the node of this module."""
    folder = tmp_path_factory.mktemp('discs_node')
    urdf = folder / 'discs.urdf'
    urdf.write_text(two_discs())
    config = folder / 'sim.yaml'
    config.write_text(yaml.safe_dump({'drives': {'j': DRIVE}}))
    with domain() as domain_id:
        with running_node(domain_id, folder / 'node.log', namespace=NS, parameters={
                'robot_description_file': str(urdf), 'config_file': str(config),
                'command_timeout': 0.0, 'publish_tf': False,
                'publish_robot_description': False}) as node:
            client = RosClient(domain_id)
            try:
                yield node, client
            finally:
                client.close()


@pytest.fixture
def client(discs):
    """Return the client after a reset of the node (initial state, every drive at 0 V)."""
    _, client = discs
    assert client.call(Trigger, f'{NS}/reset').success
    return client


def states(client):
    """Subscribe to joint_states; wait for a first message; return the list."""
    received = client.subscribe(JointState, f'{NS}/joint_states')
    assert client.wait_for(lambda: received), 'no joint_states'
    return received


def command(client, **fields):
    """Return a callable that publishes one JointState on joint_commands with these fields."""
    publisher = client.publisher(JointState, f'{NS}/joint_commands')
    names = list(next(iter(fields.values())))
    msg = JointState(name=names)
    for field, values in fields.items():
        setattr(msg, field, [float(values[n]) for n in names])
    return lambda: publisher.publish(msg)


def test_drive_states_reach_the_analytic_no_load_speed_and_current(client):
    dynamic = client.subscribe(DynamicJointState, f'{NS}/dynamic_joint_states')
    volts = client.publisher(JointState, f'{NS}/joint_voltages')
    d = DRIVE
    # steady state without load: Kt i = b w_m and U = R i + Ke w_m
    rotor = d['torque_constant'] * 12.0 / (d['resistance'] * d['viscous_friction']
                                           + d['torque_constant'] ** 2)
    current = d['viscous_friction'] * rotor / d['torque_constant']

    def values():
        msg = latest(dynamic)
        if msg is None:
            return None
        return {name: dict(zip(v.interface_names, v.values))
                for name, v in zip(msg.joint_names, msg.interface_values)}

    def settled():
        # the no-load current is small: it settles (mechanical time constant 87 ms) to 1 %
        # after the speed has to 0.1 %
        v = values()
        return (v is not None and abs(v['j']['rotor_speed'] - rotor) < 1e-3 * rotor
                and abs(v['j']['current'] - current) < 1e-2 * current)
    assert client.wait_for(settled, timeout=30.0,
                           every=(0.1, lambda: volts.publish(JointState(name=['j'],
                                                                        effort=[12.0]))))
    v = values()
    assert list(latest(dynamic).joint_names) == ['j', 'k']
    assert set(v['k']) == {'position', 'velocity', 'effort'}
    assert v['j']['voltage'] == pytest.approx(12.0)
    assert v['j']['rotor_speed'] == pytest.approx(rotor, rel=1e-2)
    assert v['j']['velocity'] == pytest.approx(rotor / d['gear_ratio'], rel=1e-2)
    assert v['j']['current'] == pytest.approx(current, rel=1e-2)
    assert v['j']['motor_torque'] == pytest.approx(d['torque_constant'] * current, rel=1e-2)
    assert stamp_seconds(latest(dynamic).header.stamp) > 0.5  # simulated time


@pytest.mark.parametrize('mode', ['position', 'velocity'])
def test_servo_mode_reaches_its_target(client, mode):
    received = states(client)
    target = {'position': 1.5, 'velocity': 2.0}[mode]
    send = command(client, **{mode: {'j': target}})

    def reached():
        value = getattr(latest(received), mode)[0]
        return abs(value - target) < 1e-3 * target
    assert client.wait_for(reached, timeout=30.0, every=(0.2, send))


def test_effort_mode_sets_the_motor_current(client):
    dynamic = client.subscribe(DynamicJointState, f'{NS}/dynamic_joint_states')
    effort = 2.0  # N m at the joint: i* = effort / (N Kt) = 2 A
    send = command(client, effort={'j': effort})

    def current():
        msg = latest(dynamic)
        return None if msg is None else dict(zip(msg.interface_values[0].interface_names,
                                                 msg.interface_values[0].values))['current']
    target = effort / (DRIVE['gear_ratio'] * DRIVE['torque_constant'])
    assert client.wait_for(lambda: current() is not None
                           and abs(current() - target) < 1e-2 * target, every=(0.2, send))


def test_topic_based_client_runs_position_and_effort_controllers(discs, client):
    # a position controller on j (a ramp, as forward_command_controller or
    # joint_trajectory_controller send it) and a PD effort controller on k, through the
    # topic-based interface's two default topics, which the node serves because of the tag
    node, _ = discs
    received = client.subscribe(JointState, '/robot_joint_states', qos=qos_profile_sensor_data)
    assert client.wait_for(lambda: received), 'no /robot_joint_states'
    commands = client.publisher(JointState, '/robot_joint_commands', qos=1)
    goal_j, goal_k = 1.0, -0.8
    start = None

    def write():
        nonlocal start
        msg = latest(received)
        t = stamp_seconds(msg.header.stamp)
        start = t if start is None else start
        ramp = goal_j * min(1.0, (t - start) / 1.0)
        q, qd = msg.position[1], msg.velocity[1]
        # PD on the bare disc (I = 0.04 kg m^2): 7 rad/s, damping ratio 0.7, slow enough for a
        # loop closed over 100 Hz joint states with a few ms of latency
        effort = 2.0 * (goal_k - q) - 0.4 * qd
        # every joint named, each field only for the joints with that command interface
        commands.publish(JointState(name=['j', 'k'], position=[ramp], effort=[effort]))

    def arrived():
        msg = latest(received)
        return (abs(msg.position[0] - goal_j) < 2e-3 and abs(msg.position[1] - goal_k) < 2e-3
                and abs(msg.velocity[1]) < 1e-2)
    assert client.wait_for(arrived, timeout=40.0, every=(0.01, write))
    assert client.node.count_publishers('/robot_joint_states') == 1
    out = node.output()
    assert "<ros2_control name='discs'>" in out and '/robot_joint_commands' in out
    # what the tag asks that the node cannot give is said once at start-up, nothing else
    assert "joint 'k' asks for a 'temperature' state interface" in out
    assert "'current' state" not in out  # a drive state: served on dynamic_joint_states


def test_plain_joint_commands_fill_every_field_per_name(discs, client):
    # joint_commands has no tag behind it: a field must hold one value per name
    node, _ = discs
    received = states(client)
    publisher = client.publisher(JointState, f'{NS}/joint_commands')
    publisher.publish(JointState(name=['j', 'k'], position=[0.5]))
    client.spin_for(1.0)
    assert '2 names but 1 values in the position field' in node.output()
    assert abs(latest(received).position[0]) < 1e-6  # the refused message moved nothing


def test_commands_the_node_cannot_follow_are_refused_with_a_reason(discs, client):
    node, _ = discs
    received = states(client)
    command(client, position={'k': 1.0})()  # k has no drive
    command(client, velocity={'nope': 1.0})()
    client.spin_for(1.0)
    out = node.output()
    assert "joint 'k' has no drive" in out
    assert "unknown joint 'nope'" in out
    assert abs(latest(received).position[1]) < 1e-6  # nothing moved


def test_diagnostics_are_absolute_and_tf_and_description_can_be_left_to_others(discs):
    _, client = discs
    diagnostics = client.subscribe(DiagnosticArray, '/diagnostics')
    assert client.wait_for(lambda: diagnostics, timeout=10.0)
    assert diagnostics[0].status[0].name == f'{NS[1:]}/jointsim_node: simulation'
    client.spin_for(0.5)
    assert client.node.count_publishers('/tf') == 0
    assert client.node.count_publishers(f'{NS}/robot_description') == 0
    assert client.node.count_publishers(f'{NS}/joint_states') == 1


def test_help_prints_the_parameters_and_exits_0():
    done = subprocess.run([sys.executable, '-m', 'jointsim_ros.ros.node', '--help'],
                          cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    for name in ('robot_description_file', 'physics_rate', 'publish_tf',
                 'publish_robot_description'):
        assert name in done.stdout
    assert 'ready' not in done.stdout + done.stderr  # it did not start simulating
