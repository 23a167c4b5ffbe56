"""
Compare jointsim with PyBullet's maximal-coordinate mode on the same 7-DOF arm (target 5).

Both engines step the same URDF in the same process, runs interleaved (default 7 runs of 2000
steps): robots_for_bench.peer_arm_urdf(), the bundled arm with the bent start pose (+0.5, -0.5,
... rad) baked into its joint origins, massless frames, geometry, limits and products of inertia
removed (its docstring says why).  dt = 1 ms, 20 solver iterations, gravity -9.81 z, no contacts.

- jointsim: ``sim.step(1)`` timed per call, and ``sim.step(1000)`` amortised;
- PyBullet maximal coordinates, the peer: DIRECT mode,
  ``loadURDF(..., useFixedBase=True, useMaximalCoordinates=True,
  flags=URDF_USE_INERTIA_FROM_FILE)`` (without the flag PyBullet replaces the URDF inertia by
  one computed from collision shapes), ``setPhysicsEngineParameter(fixedTimeStep=0.001,
  numSolverIterations=20)``, ``stepSimulation()`` timed per call.  In this mode each link is a
  btRigidBody and each joint a btGeneric6DofSpring2Constraint; PyBullet creates no joint motors
  for it and its joint and link API does not reach these bodies in DIRECT mode (getNumJoints is
  0; bullet3 issue #2995), so the state is read by saving the world with ``saveBullet`` after
  every step and loading it into a second client with ``loadBullet`` (untimed, separate runs);
- PyBullet's default reduced-coordinate (Featherstone) mode, for scale only: not a
  maximal-coordinate peer.  Joint motors disabled with ``setJointMotorControlArray(...,
  VELOCITY_CONTROL, forces=[0] * n)`` and link damping set to 0.

Drift is the max over 2 s and joints of the distance between the joint's anchor on the parent
(parent link frame composed with the joint origin) and the child link frame origin; link frames
come from body (centre of mass) poses and the URDF inertial origins.  Energy error is
max |E(t) - E0| over 2 s relative to the largest kinetic energy.  Agreement: distance between
the link_7 frame origins of jointsim and the PyBullet mode after 0.1 s (same start, so a large
value means the engines do not simulate the same robot).

Needs pybullet (requirements-test.txt; `make bench` installs it); without it the script
writes a table saying so and exits 0.

Run: .venv/bin/python bench/bench_pybullet.py [--runs 7] [--steps 2000] [--quick]
"""
import os
import tempfile
import time

from benchlib import (JOINTSIM_CONFIG, machine_facts, markdown_table, parse_args,
                      pin_to_one_core, save_markdown, spread, time_steps, write_csv)
from jointsim_ros import Simulator
import numpy as np
from robots_for_bench import link_frames_at_zero, peer_arm_urdf
from transforms3d.quaternions import qinverse, qmult, quat2mat

try:
    import pybullet
except ImportError:  # optional bench dependency: the comparison is skipped
    pybullet = None

G = 9.81
AGREEMENT_TIME = 0.1  # s
ACCURACY_TIME = 2.0   # s


def pybullet_world(urdf_path, maximal):
    """
    Load the peer arm into a new PyBullet DIRECT client.

    Args:
        urdf_path: the peer URDF file.
        maximal: True for maximal coordinates, False for PyBullet's default Featherstone mode.

    Returns:
        (client id, body id, number of joints the API sees).
    """
    client = pybullet.connect(pybullet.DIRECT)
    pybullet.setGravity(0, 0, -G, physicsClientId=client)
    pybullet.setPhysicsEngineParameter(fixedTimeStep=0.001, numSolverIterations=20,
                                       physicsClientId=client)
    body = pybullet.loadURDF(urdf_path, useFixedBase=True, useMaximalCoordinates=maximal,
                             flags=pybullet.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
    n = pybullet.getNumJoints(body, physicsClientId=client)
    if n:
        pybullet.setJointMotorControlArray(body, list(range(n)), pybullet.VELOCITY_CONTROL,
                                           forces=[0.0] * n, physicsClientId=client)
        for link in range(-1, n):
            pybullet.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0,
                                    physicsClientId=client)
    return client, body, n


def time_pybullet_run(urdf_path, maximal, steps):
    """
    Time ``stepSimulation()`` call by call in a fresh world from the bent pose.

    Returns:
        Step times (steps,), us.
    """
    client, _, _ = pybullet_world(urdf_path, maximal)
    step = pybullet.stepSimulation
    clock = time.perf_counter_ns
    times = np.empty(steps)
    for k in range(steps):
        start = clock()
        step(physicsClientId=client)
        times[k] = clock() - start
    pybullet.disconnect(client)
    return times / 1e3


class MaximalStateReader:
    """
    Read the link frames and velocities of PyBullet's maximal-coordinate bodies.

    The world is saved with ``saveBullet`` and loaded into a second DIRECT client with
    ``loadBullet`` (each snapshot under a new file name: PyBullet caches files by name).  A
    .bullet file keeps poses but loadBullet does not restore velocities, so they are recovered
    from two successive poses: Bullet integrates x1 = x0 + v1 dt and q1 = exp(w1 dt / 2) q0 with
    the velocities v1, w1 of the end of the step, so the differences give them back exactly.
    """

    def __init__(self, client, info, folder, dt):
        self.client = client
        self.info = info
        self.folder = folder
        self.dt = dt
        self.count = 0
        self.reader = pybullet.connect(pybullet.DIRECT)
        self.order = list(info['links'])
        frames = link_frames_at_zero(info)
        # the bodies come back in creation order, root first; check it against the kinematics
        self.previous = self.read_bodies()
        for name, com in zip(self.order, self.previous[0]):
            p, r = frames[name]
            if np.linalg.norm(com - (p + r @ info['com'][name])) > 1e-6:
                raise RuntimeError(f'PyBullet body order differs from the URDF ({name})')

    def read_bodies(self):
        """
        Return centre-of-mass positions and orientations of all bodies.

        Returns:
            (com (n, 3) m, quat (n, 4) wxyz), world frame.
        """
        self.count += 1
        path = os.path.join(self.folder, f'snapshot{self.count}.bullet')
        pybullet.saveBullet(path, physicsClientId=self.client)
        pybullet.resetSimulation(physicsClientId=self.reader)
        ids = pybullet.loadBullet(path, physicsClientId=self.reader)
        os.remove(path)
        com, quat = [], []
        for body in ids:
            x, q = pybullet.getBasePositionAndOrientation(body, physicsClientId=self.reader)
            com.append(x)
            quat.append((q[3], q[0], q[1], q[2]))
        return np.array(com), np.array(quat)

    def link_frames(self):
        """
        Read the state after a step.

        Returns:
            (dict link -> (origin (3,), rotation (3, 3)),
             (com (n, 3), rot (n, 3, 3), (lin (n, 3) m/s, ang (n, 3) rad/s))), world frame.
        """
        com, quat = self.read_bodies()
        com0, quat0 = self.previous
        self.previous = com, quat
        lin = (com - com0) / self.dt
        ang = np.array([rotation_vector(qmult(q1, qinverse(q0))) / self.dt
                        for q0, q1 in zip(quat0, quat)])
        rot = np.array([quat2mat(q) for q in quat])
        frames = {name: (com[k] - rot[k] @ self.info['com'][name], rot[k])
                  for k, name in enumerate(self.order)}
        return frames, (com, rot, (lin, ang))

    def close(self):
        """Disconnect the reading client."""
        pybullet.disconnect(self.reader)


def rotation_vector(quat):
    """Return the rotation vector (axis times angle, rad) of a unit quaternion wxyz."""
    quat = quat if quat[0] >= 0 else -quat
    sin_half = np.linalg.norm(quat[1:])
    if sin_half < 1e-15:
        return 2.0 * quat[1:]
    return 2.0 * np.arctan2(sin_half, quat[0]) * quat[1:] / sin_half


def anchor_errors(frames, info):
    """Return the largest joint anchor error, m, from link frames (see the module docstring)."""
    worst = 0.0
    for _, parent, child, xyz, _ in info['joints']:
        p, r = frames[parent]
        worst = max(worst, float(np.linalg.norm(p + r @ xyz - frames[child][0])))
    return worst


def energy(info, order, com, rot, velocity):
    """Return (kinetic, potential) energy of the bodies, J (diagonal inertia in link axes)."""
    lin, ang = velocity
    kinetic = potential = 0.0
    for k, name in enumerate(order):
        mass = info['mass'][name]
        if name == order[0]:
            continue  # the fixed base
        w_body = rot[k].T @ ang[k]
        kinetic += 0.5 * mass * lin[k] @ lin[k] + 0.5 * w_body @ (info['inertia'][name] * w_body)
        potential += mass * G * com[k][2]
    return kinetic, potential


def pybullet_maximal_accuracy(urdf_path, info, folder, steps):
    """
    Swing the arm in PyBullet maximal coordinates, reading its state after every step.

    Returns:
        dict with anchor_drift_mm, energy_error_pct_of_max_kinetic, link_7 origin at
        AGREEMENT_TIME (3,).
    """
    client, _, _ = pybullet_world(urdf_path, True)
    reader = MaximalStateReader(client, info, folder, 0.001)
    com, quat = reader.previous
    rest = (np.zeros_like(com), np.zeros_like(com))
    e0 = sum(energy(info, reader.order, com, [quat2mat(q) for q in quat], rest))
    drift = error = kinetic_max = 0.0
    tip = None
    for k in range(1, steps + 1):
        pybullet.stepSimulation(physicsClientId=client)
        frames, bodies = reader.link_frames()
        drift = max(drift, anchor_errors(frames, info))
        kinetic, potential = energy(info, reader.order, *bodies)
        kinetic_max = max(kinetic_max, kinetic)
        error = max(error, abs(kinetic + potential - e0))
        if k == int(round(AGREEMENT_TIME / 0.001)):
            tip = frames['link_7'][0]
    reader.close()
    pybullet.disconnect(client)
    return {'anchor_drift_mm': 1e3 * drift,
            'energy_error_pct_of_max_kinetic': 100 * error / kinetic_max, 'tip': tip}


def pybullet_featherstone_tip(urdf_path):
    """Return the link_7 frame origin after AGREEMENT_TIME in PyBullet's Featherstone mode."""
    client, body, n = pybullet_world(urdf_path, False)
    for _ in range(int(round(AGREEMENT_TIME / 0.001))):
        pybullet.stepSimulation(physicsClientId=client)
    names = [pybullet.getJointInfo(body, j, physicsClientId=client)[12].decode()
             for j in range(n)]
    state = pybullet.getLinkState(body, names.index('link_7'), computeForwardKinematics=True,
                                  physicsClientId=client)
    pybullet.disconnect(client)
    return np.array(state[4])


def jointsim_accuracy(sim, steps):
    """
    Swing the arm in jointsim for the given steps from the bent pose.

    Returns:
        dict like pybullet_maximal_accuracy's.
    """
    sim.reset()
    e0 = sum(sim.mechanical_energy())
    drift = error = kinetic_max = 0.0
    tip = None
    for k in range(1, steps + 1):
        sim.step(1)
        drift = max(drift, max(sim.joint_anchor_errors().values()))
        kinetic, potential = sim.mechanical_energy()
        kinetic_max = max(kinetic_max, kinetic)
        error = max(error, abs(kinetic + potential - e0))
        if k == int(round(AGREEMENT_TIME / sim.dt)):
            tip = sim.link_pose('link_7')[0]
    return {'anchor_drift_mm': 1e3 * drift,
            'energy_error_pct_of_max_kinetic': 100 * error / kinetic_max, 'tip': tip}


def measure(runs, steps, folder):
    """
    Run the comparison.

    Returns:
        list of row dicts, one per engine and mode, then the ratios.
    """
    urdf_text, info = peer_arm_urdf()
    urdf_path = os.path.join(folder, 'jointsim_arm_peer.urdf')
    with open(urdf_path, 'w') as handle:
        handle.write(urdf_text)
    sim = Simulator.from_urdf(urdf_text, JOINTSIM_CONFIG)
    sim.step(1)  # numba compilation or cache load: never timed
    timings = {'js_call': [], 'js_amortised': [], 'pb_maximal': [], 'pb_featherstone': []}
    p99 = {key: [] for key in timings}
    for _ in range(runs):
        for key, run in (('js_call', lambda: time_steps(sim, None, steps, True)),
                         ('pb_maximal', lambda: time_pybullet_run(urdf_path, True, steps)),
                         ('pb_featherstone', lambda: time_pybullet_run(urdf_path, False, steps)),
                         ('js_amortised', lambda: time_steps(sim, None, steps, False))):
            times = run()
            timings[key].append(np.median(times))
            p99[key].append(np.percentile(times, 99))
    accuracy_steps = int(round(ACCURACY_TIME / 0.001))
    js = jointsim_accuracy(sim, accuracy_steps)
    pb = pybullet_maximal_accuracy(urdf_path, info, folder, accuracy_steps)
    pb_feather_tip = pybullet_featherstone_tip(urdf_path)
    version = machine_facts()['pybullet']
    nan = float('nan')
    rows = []
    for key, engine, mode, figures, tip in (
            ('js_call', 'jointsim', 'step(1) per call', js, js['tip']),
            ('js_amortised', 'jointsim', f'step({min(1000, steps)}) amortised', js, js['tip']),
            ('pb_maximal', f'PyBullet {version} maximal coordinates (peer)',
             'stepSimulation() per call', pb, pb['tip']),
            ('pb_featherstone', f'PyBullet {version} Featherstone (reduced coordinates, '
             'for scale)', 'stepSimulation() per call', None, pb_feather_tip)):
        median, low, high = spread(timings[key])
        rows.append({
            'engine': engine, 'mode': mode, 'runs x steps': f'{runs} x {steps}',
            'median_us': median, 'min_run_us': low, 'max_run_us': high,
            'p99_us': float(np.median(p99[key])) if key != 'js_amortised' else nan,
            'anchor_drift_2s_mm': figures['anchor_drift_mm'] if figures else 0.0,
            'energy_error_2s_pct_of_max_kinetic':
                figures['energy_error_pct_of_max_kinetic'] if figures else nan,
            'link_7_vs_jointsim_at_0.1s_mm': 1e3 * float(np.linalg.norm(tip - js['tip']))})
    peer = rows[2]['median_us']
    ratios = [{'ratio': 'jointsim step(1) per call / PyBullet maximal',
               'value': rows[0]['median_us'] / peer},
              {'ratio': 'jointsim amortised / PyBullet maximal',
               'value': rows[1]['median_us'] / peer},
              {'ratio': 'jointsim step(1) per call / PyBullet Featherstone',
               'value': rows[0]['median_us'] / rows[3]['median_us']}]
    return rows, ratios


def main(argv=None):
    """Run the comparison, write bench/results/pybullet.csv and pybullet_ratio.csv."""
    args = parse_args(__doc__, runs=7, steps=2000, argv=argv)
    if pybullet is None:
        rows = [{'engine': 'PyBullet', 'status': 'skipped: pybullet is not installed '
                 '(.venv/bin/pip install -r requirements-test.txt)'}]
        write_csv(args.out, 'pybullet', rows)
        save_markdown(args.out, 'pybullet', '### Peer: PyBullet\n\n' + markdown_table(rows))
        return
    cpu = pin_to_one_core(args.cpu)
    with tempfile.TemporaryDirectory(prefix='jointsim_bench_') as folder:
        rows, ratios = measure(args.runs, args.steps, folder)
    write_csv(args.out, 'pybullet', rows)
    write_csv(args.out, 'pybullet_ratio', ratios)
    save_markdown(args.out, 'pybullet',
                  f'### Peer: PyBullet, same 7-DOF arm, same process, dt = 1 ms, 20 iterations '
                  f'(core {cpu})\n\n' + markdown_table(rows) + '\n\n' + markdown_table(ratios)
                  + '\n\nFeatherstone: joints are exact by construction (drift 0); its energy '
                  'is not measured.  Drift and energy are from one 2 s run per engine.')


if __name__ == '__main__':
    main()
