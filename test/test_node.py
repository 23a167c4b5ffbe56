"""
jointsim_node over real DDS: the node runs in its own process, the test talks to it with rclpy.

One node (the bundled arm, gravity off, a DC drive on joint_a1 only) serves every test of this
module; tests that change its state reset it first.  Waits are generous; nothing asserts a
timing.
"""
import math
import os
import subprocess
import sys

from diagnostic_msgs.msg import DiagnosticArray
from node_harness import (domain, finite, LATCHED, latest, PACKAGE_ROOT, ROS_ENVIRONMENT,
                          RosClient, running_node, stamp_seconds, STATIC_TF, WAIT)
import pytest
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
import yaml

JOINTS = [f'joint_a{i}' for i in range(1, 8)]
LINKS = ['world', 'base_link'] + [f'link_{i}' for i in range(1, 8)] + ['tool0']
# The drive of joint_a1 in config/jointsim_arm.yaml.
SHOULDER = {'resistance': 0.25, 'inductance': 2.0e-4, 'torque_constant': 0.07,
            'rotor_inertia': 3.0e-5, 'gear_ratio': 160.0, 'viscous_friction': 2.0e-5,
            'efficiency': 0.9, 'supply_voltage': 48.0, 'current_limit': 18.0}


@pytest.fixture(scope='module')
def arm(tmp_path_factory):
    """Yield (node process, client, domain) for the arm node shared by this module's tests."""
    folder = tmp_path_factory.mktemp('arm_node')
    config = folder / 'sim.yaml'
    config.write_text(yaml.safe_dump({'gravity': [0.0, 0.0, 0.0],
                                      'drives': {'joint_a1': SHOULDER}}))
    with domain() as domain_id:
        with running_node(domain_id, folder / 'node.log',
                          parameters={'config_file': str(config), 'command_timeout': 0.5}) as node:
            client = RosClient(domain_id)
            client.domain_id = domain_id
            try:
                yield node, client
            finally:
                client.close()


@pytest.fixture
def client(arm):
    """Return the client after resetting the node to its initial state, running."""
    _, client = arm
    assert client.call(Trigger, 'reset').success
    client.call(Trigger, 'resume')
    return client


def states(client):
    """Subscribe to joint_states; wait for a first message; return the list."""
    received = client.subscribe(JointState, 'joint_states')
    assert client.wait_for(lambda: received), 'no joint_states'
    return received


def index(name):
    """Return a joint's index in joint_states."""
    return JOINTS.index(name)


def keep_sending(publisher, msg):
    """Return a periodic publication for RosClient.wait_for(every=...)."""
    return 0.1, lambda: publisher.publish(msg)


def named(joint_values):
    """Return a JointState command with values in the effort field."""
    return JointState(name=list(joint_values), effort=[float(v) for v in joint_values.values()])


def test_joint_states_name_every_joint_and_advance_in_simulated_time(client):
    received = states(client)
    assert client.wait_for(lambda: len(received) >= 20)
    first, last = received[0], received[-1]
    assert list(last.name) == JOINTS
    assert len(last.position) == len(last.velocity) == len(last.effort) == 7
    assert finite(last.position) and finite(last.velocity) and finite(last.effort)
    assert stamp_seconds(last.header.stamp) > stamp_seconds(first.header.stamp)


def test_announcements_are_latched(arm):
    _, client = arm
    order = client.subscribe(String, 'joint_command_order', LATCHED)
    description = client.subscribe(String, 'robot_description', LATCHED)
    assert client.wait_for(lambda: order and description)
    announced = yaml.safe_load(order[0].data)
    assert announced == {'joint_effort_commands': JOINTS, 'joint_voltage_commands': ['joint_a1']}
    assert '<robot' in description[0].data and 'jointsim_arm' in description[0].data
    assert 'xacro:' not in description[0].data


def test_tf_holds_every_link_in_the_urdf_tree_and_tf_static_reaches_late_subscribers(arm):
    _, client = arm
    moving = client.subscribe(TFMessage, '/tf', 100)
    assert client.wait_for(lambda: moving)
    static = client.subscribe(TFMessage, '/tf_static', STATIC_TF)  # long after the node started
    assert client.wait_for(lambda: static)
    edges = {(t.header.frame_id, t.child_frame_id) for t in static[0].transforms}
    assert edges == {('world', 'base_link'), ('link_7', 'tool0')}
    flange = next(t for t in static[0].transforms if t.child_frame_id == 'tool0')
    assert flange.transform.translation.z == pytest.approx(0.045)
    message = moving[-1]
    assert {(t.header.frame_id, t.child_frame_id) for t in message.transforms} == {
        ('base_link', 'link_1'), ('link_1', 'link_2'), ('link_2', 'link_3'),
        ('link_3', 'link_4'), ('link_4', 'link_5'), ('link_5', 'link_6'), ('link_6', 'link_7')}
    assert len({t.header.stamp.nanosec for t in message.transforms}) == 1
    children = {t.child_frame_id for t in message.transforms} | {c for _, c in edges}
    assert children | {'world'} == set(LINKS)
    elbow = next(t for t in message.transforms if t.child_frame_id == 'link_4')
    assert elbow.transform.translation.z == pytest.approx(0.2155, abs=1e-6)


def test_clock_follows_simulated_time(client):
    clock = client.subscribe(Clock, '/clock')
    assert client.wait_for(lambda: len(clock) >= 10)
    times = [stamp_seconds(m.clock) for m in clock]
    assert times[-1] > times[0]
    assert all(b >= a for a, b in zip(times, times[1:]))


def test_diagnostics_report_real_time_factor_step_time_and_iterations(arm):
    _, client = arm
    diagnostics = client.subscribe(DiagnosticArray, 'diagnostics')
    assert client.wait_for(lambda: diagnostics)
    status = diagnostics[-1].status[0]
    values = {kv.key: kv.value for kv in status.values}
    for key in ('real_time_factor', 'step_time_mean [us]', 'solver_iterations_mean',
                'dropped_sim_time [s]', 'sim_time [s]'):
        assert math.isfinite(float(values[key])), key
    assert status.hardware_id == 'jointsim_arm'


def test_effort_array_turns_a_joint_the_way_it_pushes(client):
    received = states(client)
    command = client.publisher(Float64MultiArray, 'joint_effort_commands')
    efforts = [0.0] * 7
    efforts[index('joint_a7')] = 0.02  # N m on the flange link's axis: about 16 rad/s^2
    msg = Float64MultiArray(data=efforts)
    k = index('joint_a7')
    assert client.wait_for(lambda: latest(received).velocity[k] > 0.5,
                           every=keep_sending(command, msg))
    last = latest(received)
    assert last.effort[k] == pytest.approx(0.02)
    assert last.position[k] > 0.0


def test_named_effort_command_updates_only_the_named_joint(client):
    received = states(client)
    command = client.publisher(JointState, 'joint_efforts')
    msg = named({'joint_a7': -0.02})
    k = index('joint_a7')
    assert client.wait_for(lambda: latest(received).velocity[k] < -0.5,
                           every=keep_sending(command, msg))
    assert latest(received).effort[index('joint_a4')] == 0.0


def test_bad_commands_are_refused_whole_and_the_node_keeps_running(arm, client):
    node, _ = arm
    received = states(client)
    array = client.publisher(Float64MultiArray, 'joint_effort_commands')
    by_name = client.publisher(JointState, 'joint_efforts')
    array.publish(Float64MultiArray(data=[0.01] * 7))
    k = index('joint_a5')
    assert client.wait_for(lambda: latest(received).effort[k] == 0.01)
    bad = [Float64MultiArray(data=[0.5] * 6 + [math.nan]),
           Float64MultiArray(data=[0.5] * 6),
           named({'joint_a5': 0.5, 'joint_a9': 0.5}),
           named({'joint_a5': math.inf}),
           JointState(name=['joint_a5'], effort=[0.5, 0.5])]
    for msg in bad:
        (array if isinstance(msg, Float64MultiArray) else by_name).publish(msg)
    assert client.wait_for(lambda: "unknown joint 'joint_a9'" in node.output()
                           and 'not finite' in node.output() and '6 values given' in node.output()
                           and '2 values' in node.output())
    count = len(received)
    assert client.wait_for(lambda: len(received) > count + 5)
    assert node.process.poll() is None
    # no bad value went through (the watchdog may have zeroed the good one since; joint_a1
    # reports its drive's output)
    assert all(e in (0.01, 0.0) for e in latest(received).effort[1:])
    array.publish(Float64MultiArray(data=[0.0] * 7))


def test_watchdog_zeroes_efforts_when_commands_stop(arm, client):
    node, _ = arm
    received = states(client)
    command = client.publisher(JointState, 'joint_efforts')
    k = index('joint_a6')
    command.publish(named({'joint_a6': 0.03}))
    assert client.wait_for(lambda: latest(received).effort[k] == 0.03,
                           every=keep_sending(command, named({'joint_a6': 0.03})))
    assert client.wait_for(lambda: latest(received).effort[k] == 0.0)  # no command since
    assert 'no effort command for 0.5 s' in node.output()


def test_pause_step_and_reset(client):
    received = states(client)
    assert client.call(Trigger, 'pause').success
    client.spin_for(0.3)
    paused_at = stamp_seconds(latest(received).header.stamp)
    count = len(received)
    client.spin_for(0.3)
    assert len(received) == count  # nothing new while paused
    response = client.call(Trigger, 'step')
    assert response.success, response.message
    assert client.wait_for(lambda: len(received) > count)
    assert stamp_seconds(latest(received).header.stamp) == pytest.approx(paused_at + 0.01)

    assert not client.call(Trigger, 'resume').message.startswith('already')
    assert not client.call(Trigger, 'step').success  # refused while running
    assert client.wait_for(lambda: stamp_seconds(latest(received).header.stamp) > 0.2)
    assert client.call(Trigger, 'reset').success
    assert client.wait_for(lambda: stamp_seconds(latest(received).header.stamp) < 0.1)
    assert latest(received).position == pytest.approx([0.0] * 7, abs=1e-3)


def test_voltage_turns_the_driven_joint_to_its_no_load_speed(client):
    received = states(client)
    command = client.publisher(JointState, 'joint_voltages')
    volts = 12.0
    d = SHOULDER
    # Steady state with no load: Kt i = b w_m and i = (U - Ke w_m) / R, w_joint = w_m / N.
    no_load = (d['torque_constant'] * volts / (d['resistance'] * d['viscous_friction']
                                               + d['torque_constant'] ** 2) / d['gear_ratio'])
    k = index('joint_a1')
    assert client.wait_for(lambda: latest(received).velocity[k] > 0.98 * no_load,
                           every=keep_sending(command, named({'joint_a1': volts})))
    assert client.wait_for(lambda: latest(received).velocity[k] == pytest.approx(no_load,
                                                                                 rel=2e-3),
                           every=keep_sending(command, named({'joint_a1': volts})))

    array = client.publisher(Float64MultiArray, 'joint_voltage_commands')
    assert client.wait_for(lambda: latest(received).velocity[k] < -0.98 * no_load,
                           every=keep_sending(array, Float64MultiArray(data=[-volts])))


def test_voltage_beyond_the_supply_is_clipped_and_undriven_joints_refused(arm, client):
    node, _ = arm
    states(client)
    command = client.publisher(JointState, 'joint_voltages')
    command.publish(named({'joint_a1': 100.0}))
    command.publish(named({'joint_a2': 1.0}))
    assert client.wait_for(lambda: 'joint_a1 -> 48' in node.output()
                           and "joint 'joint_a2' takes no voltage command" in node.output(), WAIT)


def test_echo_tool_prints_joint_states_and_latched_topics(arm):
    _, client = arm
    env = dict(os.environ, ROS_DOMAIN_ID=str(client.domain_id), **ROS_ENVIRONMENT)
    for topic, expected in [('joint_states', 'joint_a7'), ('/tf_static', 'tool0')]:
        result = subprocess.run(
            [sys.executable, '-m', 'jointsim_ros.tools.echo', topic, '--count', '1'],
            cwd=PACKAGE_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, timeout=60)
        assert result.returncode == 0 and expected in result.stdout, result.stdout
