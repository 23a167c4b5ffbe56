"""
Measure what contacts cost (issue 6): a standing quadruped, and piles of loose boxes.

1. ANYmal C (test/fixtures/urdf/anymal_c.urdf, 12 joints, its own collision shapes: sphere feet
   on the ground), standing under a joint PD controller (kp 300 N m/rad, kd 8 N m s/rad,
   computed in Python between steps and not timed), dt = 1 ms, 20 iterations.  Each run
   (default 7 of 2000 steps) starts standing (after 0.5 s of settling) and times every
   ``step(1)`` call; the figure is the median of the run medians.  Target: <= 200 us.  The same
   robot in PyBullet 3.2.7 (the ground a static plane, 20 iterations, dt = 1 ms, visuals
   stripped) is timed in the same runs, call by call of ``stepSimulation``: in its
   maximal-coordinate mode (``useMaximalCoordinates=True``, which exposes no joints, so the
   robot stands passively) and in its default Featherstone mode under the same PD.
2. N loose 0.2 m boxes (N = 25, 50, 100, 200) in stacks of two on a grid (each upper box
   turned against the lower one), timed after 1.5 s while they rest on the ground and on each
   other: us per step (``step(100)`` blocks), contact points and solver iterations (the stacks
   keep all 20 iterations busy at the 1e-9 N s tolerance); the growth with N is the slope of
   a line fit and the per-box cost.

Run: .venv/bin/python bench/bench_contacts.py [--runs 7] [--steps 2000] [--quick]
"""
import os
import tempfile
import time
from xml.etree import ElementTree

from benchlib import (JOINTSIM_CONFIG, markdown_table, parse_args, pin_to_one_core, pybullet_world,
                      REPO_ROOT, save_markdown, spread, verdict, write_csv)
from jointsim_ros import Simulator
import numpy as np

TARGET_QUADRUPED_US = 200.0
ANYMAL = REPO_ROOT / 'test' / 'fixtures' / 'urdf' / 'anymal_c.urdf'
KP, KD = 300.0, 8.0
G = 9.81


def standing_pose():
    """Joint angles of a standing ANYmal C (knees bent inwards)."""
    pose = {}
    for leg in ('LF', 'RF', 'LH', 'RH'):
        front = leg[1] == 'F'
        pose[f'{leg}_HAA'] = 0.0
        pose[f'{leg}_HFE'] = 0.6 if front else -0.6
        pose[f'{leg}_KFE'] = -1.2 if front else 1.2
    return pose


def quadruped():
    """Return the ANYmal C simulator with its feet 1 mm above the ground."""
    config = {**JOINTSIM_CONFIG, 'base': 'floating', 'initial_positions': standing_pose()}
    feet = [f'{leg}_FOOT' for leg in ('LF', 'RF', 'LH', 'RH')]
    probe = Simulator.from_urdf(str(ANYMAL), {**config, 'base_pose': {'position': [0, 0, 1]}})
    low = min(probe.link_pose(f)[0][2] for f in feet)
    height = 1.0 - low + 0.03 - 0.0225 + 0.001
    return Simulator.from_urdf(str(ANYMAL), {**config,
                                             'base_pose': {'position': [0, 0, height]}})


def time_jointsim_quadruped(sim, steps):
    """Settle for 0.5 s, then time each step(1) call under the PD controller; return us."""
    names = sim.joint_names
    pose = standing_pose()
    target = np.array([pose[n] for n in names])
    sim.reset()
    times = np.empty(steps)
    clock = time.perf_counter_ns
    settle = int(0.5 / sim.dt)
    for k in range(settle + steps):
        q = sim.joint_positions()
        qd = sim.joint_velocities()
        sim.set_joint_efforts(dict(zip(names, KP * (target - q) - KD * qd)))
        start = clock()
        sim.step(1)
        if k >= settle:
            times[k - settle] = clock() - start
    return times / 1e3, sim


def without_visuals(path):
    """Write a copy of a URDF without <visual> elements (PyBullet fails on missing meshes)."""
    tree = ElementTree.parse(path)
    for link in tree.getroot().iter('link'):
        for visual in link.findall('visual'):
            link.remove(visual)
    handle, name = tempfile.mkstemp(suffix='.urdf')
    os.close(handle)
    tree.write(name)
    return name


def time_pybullet_quadruped(steps, maximal):
    """
    Time the same robot in PyBullet; return (us per step, base height, contact points).

    In maximal coordinates PyBullet exposes no joints (getNumJoints is 0), so there the robot
    stands passively on its (stiff) joints; in its Featherstone mode it runs the same PD.
    """
    import pybullet
    urdf = without_visuals(ANYMAL)
    client = pybullet_world(pybullet)
    body = pybullet.loadURDF(urdf, [0, 0, 0.55], useMaximalCoordinates=maximal,
                             flags=pybullet.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
    pose = standing_pose()
    joints = []
    for j in range(pybullet.getNumJoints(body, physicsClientId=client)):
        info = pybullet.getJointInfo(body, j, physicsClientId=client)
        name = info[1].decode()
        if name in pose:
            joints.append((j, pose[name]))
            pybullet.resetJointState(body, j, pose[name], physicsClientId=client)
    index = [j for j, _ in joints]
    target = np.array([p for _, p in joints])
    if index:
        pybullet.setJointMotorControlArray(body, index, pybullet.VELOCITY_CONTROL,
                                           forces=[0.0] * len(index), physicsClientId=client)
    times = np.empty(steps)
    clock = time.perf_counter_ns
    settle = 500
    for k in range(settle + steps):
        if index:
            states = pybullet.getJointStates(body, index, physicsClientId=client)
            q = np.array([s[0] for s in states])
            qd = np.array([s[1] for s in states])
            pybullet.setJointMotorControlArray(body, index, pybullet.TORQUE_CONTROL,
                                               forces=list(KP * (target - q) - KD * qd),
                                               physicsClientId=client)
        start = clock()
        pybullet.stepSimulation(physicsClientId=client)
        if k >= settle:
            times[k - settle] = clock() - start
    base_z = pybullet.getBasePositionAndOrientation(body, physicsClientId=client)[0][2]
    points = len(pybullet.getContactPoints(physicsClientId=client))
    pybullet.disconnect(client)
    os.remove(urdf)
    return times / 1e3, base_z, points


def quadruped_table(runs, steps):
    """Alternate jointsim and PyBullet runs; return the table rows."""
    sim = quadruped()
    sim.step(1)  # compile or load the engine outside the clock
    figures = {'jointsim': [], 'PyBullet maximal': [], 'PyBullet Featherstone': []}
    facts = {}
    for _ in range(runs):
        times, sim = time_jointsim_quadruped(sim, steps)
        figures['jointsim'].append(np.median(times))
        facts['jointsim'] = (sim.link_pose('base')[0][2], len(sim.contacts()), 'PD, Python')
        for maximal in (True, False):
            name = 'PyBullet maximal' if maximal else 'PyBullet Featherstone'
            try:
                times, height, points = time_pybullet_quadruped(steps, maximal)
            except ImportError:
                times, height, points = [float('nan')], float('nan'), 0
            figures[name].append(np.median(times))
            facts[name] = (height, points, 'none (no joint API)' if maximal else 'PD, Python')
    ours = spread(figures['jointsim'])[0]
    rows = []
    for name, values in figures.items():
        median, low, high = spread(values)
        height, points, control = facts[name]
        rows.append({'engine': name, 'runs x steps': f'{runs} x {steps}', 'us/step': median,
                     'run min-max': f'{low:.1f}-{high:.1f}', 'control': control,
                     'contact points': points, 'base height m': f'{height:.3f}',
                     'jointsim / this': ours / median,
                     'target us': TARGET_QUADRUPED_US if name == 'jointsim' else '',
                     'verdict': verdict(median, TARGET_QUADRUPED_US) if name == 'jointsim'
                     else ''})
    return rows


def box_pile(n):
    """Return n free 0.2 m boxes in stacks of two on a grid 0.3 m apart, turned a little."""
    return Simulator.from_urdf('<robot name="empty"><link name="base"/></robot>',
                               {**JOINTSIM_CONFIG, 'scene': pile_scene(n)})


def pile_scene(n):
    """Return the config scene of :func:`box_pile`'s n boxes."""
    columns = (n + 1) // 2
    side = int(np.ceil(np.sqrt(columns)))
    objects = {}
    for k in range(n):
        column, level = divmod(k, 2)
        i, j = divmod(column, side)
        objects[f'box{k}'] = {
            'shape': 'box', 'size': [0.2, 0.2, 0.2], 'mass': 1.0,
            'pose': {'position': [0.3 * i, 0.3 * j, 0.101 + 0.201 * level],
                     'rpy': [0.0, 0.0, 0.1 * k]}}
    return objects


def boxes_table(runs, steps, counts):
    """Time piles of N boxes at rest; return the table rows with a line fit of the cost."""
    rows = []
    for n in counts:
        sim = box_pile(n)
        sim.step(1500)
        figures = []
        for _ in range(runs):
            start = time.perf_counter()
            for _ in range(max(1, steps // 100)):
                sim.step(100)
            figures.append((time.perf_counter() - start) * 1e6 / (100 * max(1, steps // 100)))
        median, low, high = spread(figures)
        rows.append({'boxes': n, 'us/step': median, 'run min-max': f'{low:.1f}-{high:.1f}',
                     'us/step per box': median / n,
                     'contact points': len(sim.contacts()),
                     'iterations': sim.last_step.iterations})
    slope, intercept = np.polyfit([r['boxes'] for r in rows], [r['us/step'] for r in rows], 1)
    for row in rows:
        row['fit us'] = intercept + slope * row['boxes']
    return rows, slope, intercept


def main(argv=None):
    """Run both parts, write bench/results/contacts_*.csv, print the tables."""
    args = parse_args(__doc__, runs=7, steps=2000, argv=argv)
    cpu = pin_to_one_core(args.cpu)
    standing = quadruped_table(args.runs, args.steps)
    counts = (25, 50) if args.quick else (25, 50, 100, 200)
    boxes, slope, intercept = boxes_table(max(1, args.runs // 2), args.steps // 2, counts)
    write_csv(args.out, 'contacts_quadruped', standing)
    write_csv(args.out, 'contacts_boxes', boxes)
    save_markdown(args.out, 'contacts',
                  '### A 12-joint quadruped standing on four feet, dt = 1 ms, 20 iterations '
                  f'(core {cpu})\n\n' + markdown_table(standing)
                  + '\n\n### Loose boxes at rest on the ground and on each other\n\n'
                  + markdown_table(boxes)
                  + f'\n\nLine fit: {intercept:.1f} us + {slope:.2f} us per box.')


if __name__ == '__main__':
    main()
