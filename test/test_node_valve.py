"""
The valve scenario through the node over DDS (issue 30, docs/valve.md).

jointsim_node runs urdf/jointsim_humanoid_valve.urdf.xacro with its config; the test talks to
it as a separate process: the grasp services, and the whole task with
jointsim_humanoid_controller --valve as a third process, the test only listening (joint
states, the four force-torque sensors, TF).
"""
import re

from node_harness import domain, PACKAGE_ROOT, RosClient, running_node, stamp_seconds
import numpy as np
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool

URDF = PACKAGE_ROOT / 'urdf' / 'jointsim_humanoid_valve.urdf.xacro'
CONFIG = PACKAGE_ROOT / 'config' / 'jointsim_humanoid_valve.yaml'
#: The node as make run ARGS='--humanoid --valve' and humanoid.launch.py valve:=true run it.
NODE_PARAMETERS = {'robot_description_file': str(URDF), 'config_file': str(CONFIG),
                   'publish_rate': 200.0, 'catch_up_ticks': 1.0}
SENSORS = ('l_ankle_ft', 'r_ankle_ft', 'l_wrist_ft', 'r_wrist_ft')
#: The hand's mass, kg (urdf/jointsim_humanoid.urdf.xacro), and gravity, m/s^2.
HAND_MASS, G = 0.5, 9.81
#: The valve's wheel (urdf/jointsim_humanoid_valve.urdf.xacro): centre (world, m), axis.
WHEEL_CENTRE, WHEEL_AXIS = np.array([0.38, 0.0, 1.30]), np.array([1.0, 0.0, 0.0])
#: The hands' grasp point in the hand frame, m (config grasps).
GRASP_POINT = np.array([0.0, 0.0, -0.09])
#: The controller's set squeeze, N (ValveSettings.squeeze).
SQUEEZE = 20.0


def test_a_grasp_far_from_the_rim_is_refused_with_the_distance_and_release_answers(
        tmp_path):
    with domain() as domain_id:
        with running_node(domain_id, tmp_path / 'node.log',
                          parameters=dict(NODE_PARAMETERS, real_time_factor=1.0)) as node:
            client = RosClient(domain_id)
            try:
                states = client.subscribe(JointState, 'joint_states', 10)
                assert client.wait_for(lambda: states), node.output()
                # standing at the start the hands hang 0.4-0.5 m from the rim
                refused = client.call(SetBool, 'grasp/l_grasp', SetBool.Request(data=True))
                assert refused.success is False
                assert re.search(r'0\.\d+ m from the rim', refused.message), refused.message
                distance = float(re.search(r'(0\.\d+) m from the rim', refused.message)[1])
                assert 0.1 < distance < 1.0
                # the node goes on stepping and publishing
                count = len(states)
                last = stamp_seconds(states[-1].header.stamp)
                assert client.wait_for(
                    lambda: len(states) > count + 20
                    and stamp_seconds(states[-1].header.stamp) > last + 0.05), node.output()
                released = client.call(SetBool, 'grasp/r_grasp', SetBool.Request(data=False))
                assert released.success is True
                assert released.message == 'r_grasp: released'
            finally:
                client.close()
            assert node.process.poll() is None, node.output()
    log = node.output()
    assert 'Traceback' not in log
    # one warning line for the refusal, with the distance
    warnings = [line for line in log.splitlines() if "grasp 'l_grasp' refused" in line]
    assert len(warnings) == 1 and 'WARN' in warnings[0], log
    assert f'{distance:.4f} m' in warnings[0]
