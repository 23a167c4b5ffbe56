"""
Compliant contacts (issue 28) side by side with PyBullet and MuJoCo, in the same run.

1. Loads: a 10 kg table on four sphere feet (x = +-0.3, y = +-0.2 m, COM centred; and COM
   at (0.1, 0.05) m), placed flat and dropped 3 cm tilted, after 2 s: each foot's normal force,
   jointsim compliant (the default) and rigid, PyBullet 3.2.7 (maximal, 20 iterations) and
   MuJoCo (its defaults, timestep 1 ms).  The compliant solution is m g / 4 (1 + cx x / X^2 +
   cy y / Y^2) (test/test_compliant_contacts.py derives it).
2. Wheels: PyBullet's Husky (pybullet_data ``husky/husky.urdf``) on the ground, 1 s to settle,
   then 6 N m on each wheel for 2 s: each wheel's rim speed and the base speed, jointsim
   (compliant, and rigid) and PyBullet (its velocity motors off, torque control).
3. The pile: 64 free boxes (4 x 4 x 4, 0.1 m, 1 kg), 20 iterations, dt 1 ms: the stacks 1 cm
   apart, and touching (exactly 0.1 m apart); 1 s to settle, then STEPS steps timed in one call
   per engine (jointsim ``step(STEPS)``, MuJoCo ``mj_step`` in a loop, PyBullet
   ``stepSimulation()`` in a loop); the top box's height after settling.
4. The drop set (bench_drop.py's robots) at rest after 2 s: jointsim against MuJoCo's own URDF
   import (its collision meshes as convex hulls; a free joint on the root; the ground plane;
   timestep 1 ms, 20 iterations), per step, and jointsim's solver iterations and contact points.
5. The bundled humanoid's 10-step walk (headless, the bundled gait): the largest vertical ankle
   force of each foot over the walk (the 500 Hz sensor samples), compliant against rigid.

Timings: medians over ``--runs`` runs, one core pinned, the engines alternating.

Run: .venv/bin/python bench/bench_compliant.py [--runs 3] [--steps 1000] [--quick]
Writes compliant_*.csv and compliant.md in bench/results/.
"""
import os
import re
import time

from bench_drop import DROP_SET, ROBOTS_DIR, start_height
from benchlib import (markdown_table, parse_args, pin_to_one_core, pybullet_world, quiet_c_output,
                      save_markdown, write_csv)
from jointsim_ros import Simulator
import numpy as np

try:
    import pybullet
    import pybullet_data
except ImportError:  # test-only dependencies: their columns stay empty
    pybullet = pybullet_data = None
try:
    import mujoco
except ImportError:
    mujoco = None

G = 9.81
EMPTY = '<robot name="empty"><link name="base"/></robot>'
FEET = [(0.3, 0.2), (0.3, -0.2), (-0.3, 0.2), (-0.3, -0.2)]
LEG, FOOT = 0.2, 0.02


# -- 1. the table ------------------------------------------------------------------------------
def table_urdf(com):
    """Return the 10 kg table's URDF (one link, four sphere feet)."""
    feet = ''.join(f'<collision><origin xyz="{x} {y} {-LEG}"/><geometry><sphere '
                   f'radius="{FOOT}"/></geometry></collision>' for x, y in FEET)
    return (f'<robot name="table"><link name="top"><inertial><origin xyz="{com[0]} {com[1]} 0"/>'
            '<mass value="10"/><inertia ixx="0.2" iyy="0.35" izz="0.5" ixy="0" ixz="0" iyz="0"/>'
            f'</inertial>{feet}</link></robot>')


def nearest_foot(xy):
    """Return the index in FEET nearest to a point (x, y) in the table's frame."""
    return min(range(4), key=lambda i: (FEET[i][0] - xy[0]) ** 2 + (FEET[i][1] - xy[1]) ** 2)


def table_jointsim(com, lift, rpy, model):
    """Return the four loads (FEET order), N."""
    sim = Simulator.from_urdf(table_urdf(com), {
        'base': 'floating', 'collision': {'contact_model': model},
        'base_pose': {'position': [0.0, 0.0, LEG + FOOT + lift], 'rpy': list(rpy)}})
    sim.step(2000)
    loads = [0.0] * 4
    for c in sim.contacts():
        loads[nearest_foot(c.position[:2] - sim.link_pose('top')[0][:2])] += c.normal_force
    return loads


def table_pybullet(com, lift, rpy):
    """Return the four loads in PyBullet (maximal coordinates, 20 iterations), N."""
    client = pybullet_world(pybullet)
    try:
        # the feet around the centre of mass (PyBullet's base frame is at the COM)
        shape = pybullet.createCollisionShapeArray(
            [pybullet.GEOM_SPHERE] * 4, radii=[FOOT] * 4,
            collisionFramePositions=[(x - com[0], y - com[1], -LEG) for x, y in FEET],
            physicsClientId=client)
        quat = pybullet.getQuaternionFromEuler(rpy)
        start = (com[0], com[1], LEG + FOOT + lift)
        body = pybullet.createMultiBody(10.0, shape, basePosition=start, baseOrientation=quat,
                                        physicsClientId=client)
        pybullet.changeDynamics(body, -1, localInertiaDiagonal=(0.2, 0.35, 0.5),
                                physicsClientId=client)
        for _ in range(2000):
            pybullet.stepSimulation(physicsClientId=client)
        loads = [0.0] * 4
        pos, _ = pybullet.getBasePositionAndOrientation(body, physicsClientId=client)
        for point in pybullet.getContactPoints(bodyA=body, physicsClientId=client):
            xy = np.array(point[5][:2]) - np.array(pos[:2]) + np.array(com)
            loads[nearest_foot(xy)] += point[9]
        for point in pybullet.getContactPoints(bodyB=body, physicsClientId=client):
            xy = np.array(point[6][:2]) - np.array(pos[:2]) + np.array(com)
            loads[nearest_foot(xy)] += point[9]
        return loads
    finally:
        pybullet.disconnect(client)


def table_mujoco(com, lift, rpy):
    """Return the four loads in MuJoCo (its defaults, timestep 1 ms), N."""
    feet = ''.join(f'<geom type="sphere" size="{FOOT}" pos="{x - com[0]} {y - com[1]} {-LEG}" '
                   'mass="0"/>' for x, y in FEET)
    euler = ' '.join(str(a) for a in rpy)
    xml = (f'<mujoco><compiler angle="radian" eulerseq="XYZ"/><option timestep="0.001" '
           f'iterations="20"/><worldbody><geom type="plane" size="5 5 0.1"/>'
           f'<body pos="{com[0]} {com[1]} {LEG + FOOT + lift}" euler="{euler}"><freejoint/>'
           f'<inertial pos="0 0 0" mass="10" diaginertia="0.2 0.35 0.5"/>{feet}</body>'
           '</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    for _ in range(2000):
        mujoco.mj_step(model, data)
    loads = [0.0] * 4
    force = np.zeros(6)
    for i in range(data.ncon):
        mujoco.mj_contactForce(model, data, i, force)
        xy = data.contact[i].pos[:2] - data.xpos[1][:2] + np.array(com)
        loads[nearest_foot(xy)] += force[0]
    return loads


def tables(quick):
    """Rows of the table loads, each engine and case."""
    rows = []
    cases = [('centred, placed', (0.0, 0.0), 0.0, (0.0, 0.0, 0.0)),
             ('centred, dropped 3 cm tilted', (0.0, 0.0), 0.03, (0.03, -0.02, 0.0)),
             ('COM at (0.1, 0.05), placed', (0.1, 0.05), 0.0, (0.0, 0.0, 0.0))]
    for name, com, lift, rpy in cases[:1 if quick else 3]:
        big_x, big_y = FEET[0]
        expected = [10 * G / 4 * (1 + com[0] * x / big_x ** 2 + com[1] * y / big_y ** 2)
                    for x, y in FEET]
        engines = [('compliant solution', expected),
                   ('jointsim compliant', table_jointsim(com, lift, rpy, 'compliant')),
                   ('jointsim rigid', table_jointsim(com, lift, rpy, 'rigid'))]
        if pybullet is not None:
            engines.append(('PyBullet', table_pybullet(com, lift, rpy)))
        if mujoco is not None:
            engines.append(('MuJoCo', table_mujoco(com, lift, rpy)))
        for engine, loads in engines:
            error = max(abs(a - b) for a, b in zip(loads, expected)) / (10 * G)
            rows.append({'case': name, 'engine': engine,
                         **{f'foot ({x:+.1f}, {y:+.1f}) N': round(f, 2)
                            for (x, y), f in zip(FEET, loads)},
                         'largest error, % of m g': round(100 * error, 2)})
    return rows


# -- 2. the Husky ------------------------------------------------------------------------------
HUSKY_WHEELS = ('front_left_wheel', 'front_right_wheel', 'rear_left_wheel', 'rear_right_wheel')
HUSKY_RADIUS = 0.17775
TORQUE = 6.0


def husky_jointsim(model):
    """Return (rim speeds (4,), base speed), m/s, after 2 s of 6 N m on each wheel."""
    path = os.path.join(pybullet_data.getDataPath(), 'husky', 'husky.urdf')
    with quiet_c_output():
        sim = Simulator.from_urdf(path, {'base': 'floating', 'collision': {
            'contact_model': model}, 'base_pose': {'position': [0.0, 0.0, 0.16]}})
    sim.step(1000)
    sim.set_joint_efforts(dict.fromkeys(HUSKY_WHEELS, TORQUE))
    sim.step(2000)
    v = sim.joint_velocities()
    rims = [v[sim.joint_names.index(w)] * HUSKY_RADIUS for w in HUSKY_WHEELS]
    return rims, float(sim.link_twist('base_link')[0][0])


def husky_pybullet():
    """Return the same in PyBullet (maximal coordinates off: its Featherstone mode)."""
    client = pybullet_world(pybullet)
    try:
        pybullet.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
        with quiet_c_output():
            robot = pybullet.loadURDF('husky/husky.urdf', [0, 0, 0.16],
                                      physicsClientId=client)
        joints = {pybullet.getJointInfo(robot, j, physicsClientId=client)[1].decode(): j
                  for j in range(pybullet.getNumJoints(robot, physicsClientId=client))}
        wheels = [joints[w] for w in HUSKY_WHEELS]
        pybullet.setJointMotorControlArray(robot, wheels, pybullet.VELOCITY_CONTROL,
                                           forces=[0.0] * 4, physicsClientId=client)
        for _ in range(1000):
            pybullet.stepSimulation(physicsClientId=client)
        for _ in range(2000):
            pybullet.setJointMotorControlArray(robot, wheels, pybullet.TORQUE_CONTROL,
                                               forces=[TORQUE] * 4, physicsClientId=client)
            pybullet.stepSimulation(physicsClientId=client)
        rims = [pybullet.getJointState(robot, w, physicsClientId=client)[1] * HUSKY_RADIUS
                for w in wheels]
        base = pybullet.getBaseVelocity(robot, physicsClientId=client)[0][0]
        return rims, float(base)
    finally:
        pybullet.disconnect(client)


def huskies():
    """Rows of the Husky's wheel speeds."""
    if pybullet_data is None:
        return []
    rows = []
    engines = [('jointsim compliant', husky_jointsim('compliant')),
               ('jointsim rigid', husky_jointsim('rigid')), ('PyBullet', husky_pybullet())]
    for engine, (rims, base) in engines:
        rows.append({'engine': engine, **{f'{w} rim m/s': round(r, 3)
                                          for w, r in zip(HUSKY_WHEELS, rims)},
                     'base m/s': round(base, 3),
                     'largest rim/base difference %': round(
                         100 * max(abs(r - base) for r in rims) / abs(base), 1)})
    return rows


# -- 3. the pile -------------------------------------------------------------------------------
SIDE = 0.1


def pile_positions(gap):
    """Return the 64 boxes' centres: 4 x 4 stacks of 4, ``gap`` m between the stacks."""
    pitch = SIDE + gap
    return [((i - 1.5) * pitch, (j - 1.5) * pitch, SIDE / 2 + k * SIDE)
            for i in range(4) for j in range(4) for k in range(4)]


def pile_jointsim(gap, steps):
    """Return the function timing one run (us per step) and the settled simulator's facts."""
    scene = {f'box{n}': {'shape': 'box', 'size': [SIDE] * 3, 'mass': 1.0,
                         'pose': {'position': list(p)}} for n, p in enumerate(pile_positions(gap))}
    sim = Simulator.from_urdf(EMPTY, {'scene': scene})
    sim.step(1000)
    top = max(sim.link_pose(name)[0][2] for name in scene)

    def run():
        start = time.perf_counter()
        report = sim.step(steps)
        return (time.perf_counter() - start) / steps * 1e6, report.iterations
    return run, top, len(sim.contacts(touching=False)), len(sim.contacts())


def pile_mujoco(gap, steps):
    """Return the timing function and facts of the same pile in MuJoCo."""
    half = SIDE / 2
    bodies = ''.join(f'<body pos="{x} {y} {z}"><freejoint/><geom type="box" size="{half} {half} '
                     f'{half}" mass="1"/></body>' for x, y, z in pile_positions(gap))
    xml = (f'<mujoco><option timestep="0.001" iterations="20"/><worldbody><geom type="plane" '
           f'size="5 5 0.1"/>{bodies}</worldbody></mujoco>')
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    for _ in range(1000):
        mujoco.mj_step(model, data)
    top = float(data.xpos[1:, 2].max())

    def run():
        start = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, data)
        return (time.perf_counter() - start) / steps * 1e6, int(data.solver_niter[0])
    return run, top, int(data.ncon), int(data.ncon)


def pile_pybullet(gap, steps):
    """Return the timing function and facts of the same pile in PyBullet (maximal bodies)."""
    client = pybullet_world(pybullet)
    box = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=[SIDE / 2] * 3,
                                        physicsClientId=client)
    ids = [pybullet.createMultiBody(1.0, box, basePosition=p, physicsClientId=client)
           for p in pile_positions(gap)]
    for _ in range(1000):
        pybullet.stepSimulation(physicsClientId=client)
    top = max(pybullet.getBasePositionAndOrientation(i, physicsClientId=client)[0][2]
              for i in ids)
    count = len(pybullet.getContactPoints(physicsClientId=client))

    def run():
        start = time.perf_counter()
        for _ in range(steps):
            pybullet.stepSimulation(physicsClientId=client)
        return (time.perf_counter() - start) / steps * 1e6, 20
    return run, top, count, count


def piles(runs, steps):
    """Rows of the pile's step time and height, each engine, both spacings."""
    rows = []
    for gap, label in ((0.01, 'stacks 1 cm apart'), (0.0, 'stacks touching')):
        engines = [('jointsim', pile_jointsim(gap, steps))]
        if mujoco is not None:
            engines.append(('MuJoCo', pile_mujoco(gap, steps)))
        if pybullet is not None:
            engines.append(('PyBullet', pile_pybullet(gap, steps)))
        times = {name: [] for name, _ in engines}
        iterations = {}
        for _ in range(runs):  # the engines alternate run by run
            for name, (run, *_) in engines:
                us, its = run()
                times[name].append(us)
                iterations[name] = its
        peer = float(np.median(times['MuJoCo'])) if 'MuJoCo' in times else float('nan')
        for name, (_, top, points, touching) in engines:
            median = float(np.median(times[name]))
            rows.append({'pile': label, 'engine': name, 'us/step': round(median, 1),
                         'min-max': f'{min(times[name]):.0f}-{max(times[name]):.0f}',
                         '/ MuJoCo': round(median / peer, 2),
                         'top box height m (0.35 rigid)': round(top, 5),
                         'contact points (carrying load)': f'{points} ({touching})',
                         'iterations (last step)': iterations[name]})
    return rows


# -- 4. the drop set against MuJoCo ---------------------------------------------------------------
def urdf_for_mujoco(path):
    """Return the URDF text with mesh URIs made absolute and MuJoCo's compiler options."""
    text = open(path).read()
    folder = os.path.dirname(os.path.abspath(path))

    def absolute(match):
        uri = match.group(1)
        if uri.startswith('package://'):
            rest = uri[len('package://'):].lstrip('/')
            for base in (ROBOTS_DIR.parent.parent, ROBOTS_DIR):  # share/ or robots/
                if (base / rest).exists():
                    return f'filename="{base / rest}"'
            return f'filename="{ROBOTS_DIR / rest}"'
        return f'filename="{uri if uri.startswith("/") else os.path.join(folder, uri)}"'
    text = re.sub(r'filename="([^"]+)"', absolute, text)
    block = ('<mujoco><compiler discardvisual="true" strippath="false" balanceinertia="true" '
             'fusestatic="false"/></mujoco>')
    return re.sub(r'(<robot[^>]*>)', r'\1' + block, text, count=1)


def drop_mujoco(path, steps, settle=2.0, damping=0.0):
    """
    Return a timing function of the robot at rest in MuJoCo after settle s, or (None, why).

    damping: N m s/rad (N s/m), given to every joint but the free one's; 0 keeps the URDF's.
    """
    try:
        spec = mujoco.MjSpec.from_string(urdf_for_mujoco(path))
        root = spec.worldbody.first_body()
        root.add_freejoint()
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[10, 10, 0.1])
        spec.option.timestep = 0.001
        spec.option.iterations = 20
        model = spec.compile()
        if damping > 0.0:
            model.dof_damping[6:] = damping
    except Exception as error:  # noqa: B902 - any import failure is reported, not raised
        return None, f'MuJoCo import failed: {str(error).splitlines()[0][:80]}'
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    low = min(data.xpos[1:, 2])
    data.qpos[2] += 0.3 - low
    for _ in range(int(round(settle / model.opt.timestep))):
        mujoco.mj_step(model, data)

    def run():
        start = time.perf_counter()
        for _ in range(steps):
            mujoco.mj_step(model, data)
        return (time.perf_counter() - start) / steps * 1e6
    return run, f'{data.ncon} contacts'


#: The drop set's jointsim config: a floating base, everything else the defaults.
DROP_CONFIG = {'base': 'floating'}


def drop_start(path, extra=None):
    """
    Return the robot loaded with its lowest link frame DROP m above the ground, not stepped.

    Args:
        path: URDF path.
        extra: config keys laid over DROP_CONFIG (a top-level key replaces), e.g. a formulation.

    Raises:
        JointsimError (ConfigError, DescriptionError): the robot or the config is refused.
    """
    config = {**DROP_CONFIG, **(extra or {})}
    with quiet_c_output():
        probe = Simulator.from_urdf(str(path), config)
        return Simulator.from_urdf(str(path), {**config, 'base_pose': {
            'position': [0.0, 0.0, start_height(probe)]}})


def drop_jointsim(path, steps, extra=None, settle=2.0):
    """Return a timing function of the robot at rest after settle s, and its solver's facts."""
    sim = drop_start(path, extra)
    sim.step(int(round(settle / sim.dt)))
    facts = {}

    def run():
        converged = 0
        start = time.perf_counter()
        for _ in range(steps):
            report = sim.step(1)
            converged += report.stop_reason == 'tolerance'
        elapsed = time.perf_counter() - start
        facts['iterations'] = report.iterations
        facts['converged'] = converged / steps   # the share of the run's steps that converged
        return elapsed / steps * 1e6
    return run, facts, sim


#: The issue's drop set: bench_drop.py's, with Go2 for Go1 (MuJoCo refuses Go1's and ANYmal C's
#: inertias: 'inertia must have positive eigenvalues').
MUJOCO_DROP_SET = {name: relative for name, relative in DROP_SET.items()
                   if name not in ('Go1', 'ANYmal C')}
MUJOCO_DROP_SET['Go2'] = 'go2_description/urdf/go2.urdf'


def drops(runs, steps, quick):
    """Rows of the drop set at rest, jointsim against MuJoCo."""
    rows = []
    items = list(MUJOCO_DROP_SET.items())[:2 if quick else None]
    for name, relative in items:
        path = ROBOTS_DIR / relative
        run_j, facts, sim = drop_jointsim(path, steps)
        run_m, note = drop_mujoco(path, steps) if mujoco is not None else (None, 'no MuJoCo')
        ours, theirs = [], []
        for _ in range(runs):
            ours.append(run_j())
            if run_m is not None:
                theirs.append(run_m())
        median = float(np.median(ours))
        peer = float(np.median(theirs)) if theirs else float('nan')
        rows.append({'robot': name, 'jointsim us/step': round(median, 1),
                     'MuJoCo us/step': round(peer, 1) if theirs else '',
                     'jointsim / MuJoCo': round(median / peer, 2) if theirs else '',
                     'jointsim iterations at rest': facts['iterations'],
                     'jointsim contact points': len(sim.contacts()),
                     'MuJoCo': note})
    return rows


# -- 5. the humanoid's landings -------------------------------------------------------------------
def landing_peaks(model):
    """Return the largest vertical ankle force of each foot over the 10-step walk, N."""
    from jointsim_ros.control.walking import GaitSettings, run_headless, WalkingController
    from jointsim_ros.description import load_model
    from jointsim_ros.rotations import quat_to_matrix
    share = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    urdf = os.path.join(share, 'urdf', 'jointsim_humanoid.urdf.xacro')
    config = os.path.join(share, 'config', 'jointsim_humanoid.yaml')
    robot, settings = load_model(urdf, config)
    sim = Simulator.from_urdf(urdf, config)
    if model == 'rigid':
        import dataclasses
        settings = dataclasses.replace(settings, collision=dataclasses.replace(
            settings.collision, contact_model='rigid'))
        sim = Simulator.from_urdf(urdf, settings)
    controller = WalkingController(robot, settings, GaitSettings())
    peaks = {'l': 0.0, 'r': 0.0}
    seen = {'l': 0, 'r': 0}

    def watch(sim, t):
        for side in 'lr':
            turn = quat_to_matrix(sim.link_pose(f'{side}_foot')[1])
            for _, wrench, count in sim.sensors.history(f'{side}_ankle_ft', seen[side]):
                peaks[side] = max(peaks[side], abs((turn @ wrench[:3])[2]))
                seen[side] = count
    run_headless(sim, controller, controller.duration(), on_step=watch)
    weight = sum(b.mass for b in robot.bodies) * G
    return peaks, weight, sim.link_pose('pelvis')[0]


def landings():
    """Rows of the ankle force peaks, compliant against rigid."""
    rows = []
    for model in ('rigid', 'compliant'):
        peaks, weight, pelvis = landing_peaks(model)
        rows.append({'contacts': model, 'left ankle peak N': round(peaks['l']),
                     'right ankle peak N': round(peaks['r']),
                     'largest / body weight': round(max(peaks.values()) / weight, 2),
                     'pelvis x at the end m': round(float(pelvis[0]), 3)})
    return rows


def main(argv=None):
    """Run every part, print and save the tables."""
    args = parse_args(__doc__, 3, 1000, argv)
    pin_to_one_core(args.cpu)
    parts = [('table loads', 'compliant_table', tables(args.quick)),
             ('Husky wheel speeds', 'compliant_husky', huskies()),
             ('pile of 64 boxes', 'compliant_pile', piles(args.runs, args.steps)),
             ('drop set at rest against MuJoCo', 'compliant_drop',
              drops(args.runs, args.steps, args.quick)),
             ('humanoid ankle force peaks over the walk', 'compliant_landing', landings())]
    text = []
    for title, name, rows in parts:
        write_csv(args.out, name, rows)
        table = markdown_table(rows)
        text.append(f'### {title}\n\n{table}\n')
    save_markdown(args.out, 'compliant', '\n'.join(text))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
