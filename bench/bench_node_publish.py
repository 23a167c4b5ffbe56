"""
What one tick of jointsim_node costs the walking humanoid, topic by topic (stop 37, issue 33).

The node at 200 Hz publishes, per 5 ms tick: joint_states, dynamic_joint_states, /tf (24
moving transforms), /clock, contact_markers, and the samples of four force-torque sensors and
the pelvis IMU at 500 Hz (12.5 messages).  For each high-rate message kind, in the same run:
  - field by field: the message built in Python (``jointsim_ros.ros.messages``) and published
    through rclpy (its C conversion and serialization), as the node did before;
  - template: the serialized template refilled (``jointsim_ros.ros.cdr``) and published as
    bytes (rclpy's publish_raw), as the node does now.
Plus /tf's poses: link by link (``FrameTree`` before: ``Simulator.link_pose`` per link and
transforms3d per transform) against batched (``Simulator.link_poses``, ``moving_arrays``).
Each figure: the median over ``--runs`` runs of the mean over ``--calls`` calls, microseconds;
publishers without subscribers, on a domain of their own, the process pinned to one core.

Run: .venv/bin/python bench/bench_node_publish.py [--runs 5] [--calls 500]
Writes bench/results/node_publish.md.
"""
import argparse
import os
import statistics

from benchlib import mean_us, pin_to_one_core, REPO_ROOT, RESULTS_DIR, save_markdown

from control_msgs.msg import DynamicJointState  # noqa: I100
from geometry_msgs.msg import WrenchStamped
from jointsim_ros.ros import messages
from jointsim_ros.ros.cdr import MessageTemplate
from jointsim_ros.ros.frames import FrameTree, Transform
from jointsim_ros.rotations import quat_to_matrix, relative_quat
from jointsim_ros.sim.loading import load_robot
import numpy as np
import rclpy
from sensor_msgs.msg import Imu, JointState
from tf2_msgs.msg import TFMessage

ROBOT = REPO_ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro'
CONFIG = REPO_ROOT / 'config' / 'jointsim_humanoid.yaml'
#: Messages of each kind per 5 ms tick at the humanoid's rates.
PER_TICK = {'joint_states': 1, 'dynamic_joint_states': 1, '/tf': 1, 'wrench (x4 sensors)': 10,
            'imu': 2.5}


def link_by_link(tree):
    """Return the moving transforms as FrameTree made them before stop 37 (link by link)."""
    sim = tree.sim
    poses = {}

    def pose(link):
        if link not in poses:
            xyz, quat = sim.link_pose(link)
            poses[link] = (xyz, quat, quat_to_matrix(quat))
        return poses[link]
    out = [tree.anchor()]
    for parent, child in tree.moving:
        parent_xyz, parent_quat, parent_rot = pose(parent)
        child_xyz, child_quat, _ = pose(child)
        xyz = parent_rot.T @ (child_xyz - parent_xyz)
        out.append(Transform(tree.frame(parent), tree.frame(child),
                             tuple(float(v) for v in xyz), relative_quat(parent_quat, child_quat)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--calls', type=int, default=500)
    args = parser.parse_args()
    pin_to_one_core()
    loaded = load_robot('', str(ROBOT), str(CONFIG), 1000.0)
    sim = loaded.sim
    sim.step(300)
    tree = FrameTree(sim, loaded.urdf_robot)
    rclpy.init(domain_id=int(os.environ.get('JOINTSIM_BENCH_DOMAIN', '231')))
    node = rclpy.create_node('jointsim_bench_publish')
    names = sim.joint_names
    interfaces = messages.dynamic_interfaces(sim)
    frames = tree.moving_frames()
    imu = sim.model.imus[0]
    covariances = messages.imu_covariances(imu)
    kinds = {
        'joint_states': (JointState, lambda: messages.joint_state_values(sim),
                         lambda v, s: messages.joint_state_message(names, v, s)),
        'dynamic_joint_states': (
            DynamicJointState, lambda: messages.dynamic_joint_state_values(sim),
            lambda v, s: messages.dynamic_joint_state_message(names, interfaces, v, s)),
        '/tf': (TFMessage, lambda: np.concatenate(tree.moving_arrays(), axis=1).ravel(),
                lambda v, s: messages.tf_message_arrays(frames, v, s)),
        'wrench (x4 sensors)': (WrenchStamped, lambda: sim.sensors.wrench('l_ankle_ft'),
                                lambda v, s: messages.wrench_stamped(v, 'l_foot', s)),
        'imu': (Imu, lambda: sim.sensors.imu(imu.name),
                lambda v, s: messages.imu_message(v, imu.name, s, covariances)),
    }
    runs = {key: [] for key in ('poses before', 'poses now')}
    for kind in kinds:
        runs[kind, 'fields'] = []
        runs[kind, 'template'] = []
    for _ in range(args.runs):
        runs['poses before'].append(mean_us(lambda: link_by_link(tree), args.calls))
        runs['poses now'].append(mean_us(tree.moving_arrays, args.calls))
        for kind, (msg_type, values, build) in kinds.items():
            publisher = node.create_publisher(msg_type, 'bench_' + kind.split()[0].strip('/'),
                                              10)
            numbers = np.asarray(values(), dtype=float)
            template = MessageTemplate(build, len(numbers))
            runs[kind, 'fields'].append(mean_us(
                lambda: publisher.publish(build(numbers, sim.time)), args.calls))
            runs[kind, 'template'].append(mean_us(
                lambda: publisher.publish(template.fill(numbers, sim.time)), args.calls))
            node.destroy_publisher(publisher)
    node.destroy_node()
    rclpy.shutdown()
    med = {key: statistics.median(values) for key, values in runs.items()}
    lines = ["# jointsim_node's publishing per tick: the walking humanoid "
             '(bench/bench_node_publish.py)', '',
             f'Command: `.venv/bin/python bench/bench_node_publish.py --runs {args.runs} '
             f'--calls {args.calls}`; medians of {args.runs} runs, microseconds.', '',
             '| message | per 5 ms tick | field by field (us) | template (us) | ratio |',
             '|---|---|---|---|---|']
    before = now = 0.0
    for kind in kinds:
        a, b = med[kind, 'fields'], med[kind, 'template']
        before += PER_TICK[kind] * a
        now += PER_TICK[kind] * b
        lines.append(f'| {kind} | {PER_TICK[kind]:g} | {a:.1f} | {b:.1f} | {a / b:.1f} |')
    a, b = med['poses before'], med['poses now']
    before += a
    now += b
    lines.append(f"| /tf's 24 poses (link by link / batched) | 1 | {a:.1f} | {b:.1f} | "
                 f'{a / b:.1f} |')
    lines.append(f'| **per tick** | | **{before:.0f}** | **{now:.0f}** | '
                 f'**{before / now:.1f}** |')
    text = '\n'.join(lines) + '\n'
    save_markdown(RESULTS_DIR, 'node_publish', text)


if __name__ == '__main__':
    main()
