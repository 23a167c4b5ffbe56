"""
Measure worlds of N copies of the bundled arm (1, 2, 4, 8): time per step and per robot.

Each world puts N arms (urdf/jointsim_arm.urdf.xacro with config/jointsim_arm.yaml, a geared
DC drive on every joint at 0 V) in a row 2 m apart on the ground, released from the bent pose
(joints at +-0.5 rad) so they sag against their shorted motors.  Per N and formulation: the
median over --runs of the mean step time, per step and per robot, and the same N arms run as N
separate Simulators (each on the ground) stepped in turn (the world's cost against running
them apart).  The peer,
in the same run: PyBullet with N copies of the same URDF in one world (its default
Featherstone multibodies, 20 solver iterations, motors off, no damping: bench_pybullet.py's
setting).

With ``--node S``: also the node's real-time factor and CPU running the two-arm demo's world
(config/two_arms.world.yaml) for S wall seconds at real_time_factor 1, an example controller
in each robot's namespace (bench_node.py's method: diagnostics and /clock over the window).

Run: .venv/bin/python bench/bench_worlds.py [--runs 5] [--steps 2000] [--quick] [--node 30]
"""
import statistics
import tempfile
import time

from benchlib import markdown_table, parse_args, pin_to_one_core, quiet_c_output, \
    save_markdown, write_csv
from jointsim_ros import resources
from jointsim_ros.description import parse_urdf
from jointsim_ros.sim.simulator import Simulator
import numpy as np
import yaml

try:
    import pybullet
except ImportError:  # pragma: no cover (a test dependency)
    pybullet = None

COUNTS = (1, 2, 4, 8)
FORMULATIONS = ('maximal', 'tree')
SPACING = 2.0  # m between arms
ARM = str(resources.share_file(*resources.DEFAULT_ROBOT))
ARM_CONFIG = str(resources.share_file(*resources.DEFAULT_CONFIG))


def world(n, formulation):
    """Return the world mapping of n arms in a row along y."""
    settings = yaml.safe_load(open(ARM_CONFIG))
    return {'solver': dict(settings['solver'], formulation=formulation),
            'ground': {'enabled': True},
            'robots': {f'arm{k}': {'description': ARM, 'config': ARM_CONFIG,
                                   'pose': {'position': [0.0, SPACING * k, 0.0]}}
                       for k in range(n)}}


def bend(target):
    """Set the bent start pose on a Simulator or a world robot."""
    target.set_joint_state({name: 0.5 * (-1) ** i for i, name in enumerate(target.joint_names)})


def mean_step_us(step, steps):
    """Return the mean wall time of ``steps`` calls of step(1), us."""
    start = time.perf_counter()
    for _ in range(steps):
        step(1)
    return (time.perf_counter() - start) / steps * 1e6


def run_world(n, formulation, steps):
    """Return the mean step time of a world of n arms, us."""
    sim = Simulator.from_world(world(n, formulation))
    for view in sim.robots.values():
        bend(view)
    sim.step(1)
    return mean_step_us(sim.step, steps)


def run_apart(n, formulation, steps):
    """Return the mean time of one step of n separate arm Simulators, us."""
    config = yaml.safe_load(open(ARM_CONFIG))
    config['solver']['formulation'] = formulation
    config['ground'] = {'enabled': True}   # as in the world
    sims = []
    for k in range(n):
        one = dict(config, base_pose={'position': [0.0, SPACING * k, 0.0]})
        sims.append(Simulator.from_urdf(ARM, one))
        bend(sims[-1])
        sims[-1].step(1)

    def step(count):
        for sim in sims:
            sim.step(count)
    return mean_step_us(step, steps)


def run_pybullet(n, steps, urdf_path):
    """Return PyBullet's mean stepSimulation time with n arms in one world, us."""
    with quiet_c_output():
        client = pybullet.connect(pybullet.DIRECT)
    pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
    pybullet.setPhysicsEngineParameter(fixedTimeStep=0.001, numSolverIterations=20,
                                       physicsClientId=client)
    plane = pybullet.createCollisionShape(pybullet.GEOM_PLANE, physicsClientId=client)
    pybullet.createMultiBody(0, plane, physicsClientId=client)
    for k in range(n):
        body = pybullet.loadURDF(urdf_path, basePosition=[0.0, SPACING * k, 0.0],
                                 useFixedBase=True, flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                                 physicsClientId=client)
        joints = pybullet.getNumJoints(body, physicsClientId=client)
        moving = [j for j in range(joints)
                  if pybullet.getJointInfo(body, j, physicsClientId=client)[2] != 4]
        pybullet.setJointMotorControlArray(body, list(range(joints)), pybullet.VELOCITY_CONTROL,
                                           forces=[0.0] * joints, physicsClientId=client)
        for i, j in enumerate(moving):
            pybullet.resetJointState(body, j, 0.5 * (-1) ** i, physicsClientId=client)
        for link in range(-1, joints):
            pybullet.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0,
                                    physicsClientId=client)

    def step(_):
        pybullet.stepSimulation(physicsClientId=client)
    try:
        return mean_step_us(step, steps)
    finally:
        pybullet.disconnect(client)


def main(argv=None):
    """Measure every N in both formulations; write bench/results/worlds.*."""
    args = parse_args(__doc__, runs=5, steps=2000, argv=argv, options=lambda parser: (
        parser.add_argument('--node', type=float, default=0.0, metavar='S',
                            help='also run the two-arm world node for S wall seconds')))
    cpu = pin_to_one_core(args.cpu)
    urdf_file = None
    if pybullet is not None:
        urdf_file = tempfile.NamedTemporaryFile('w', suffix='.urdf', delete=False)
        urdf_file.write(parse_urdf(ARM).xml)
        urdf_file.close()
    rows = []
    for n in COUNTS:
        peer = (statistics.median(run_pybullet(n, args.steps, urdf_file.name)
                                  for _ in range(args.runs)) if urdf_file else float('nan'))
        for formulation in FORMULATIONS:
            together = statistics.median(run_world(n, formulation, args.steps)
                                         for _ in range(args.runs))
            apart = statistics.median(run_apart(n, formulation, args.steps)
                                      for _ in range(args.runs))
            rows.append({
                'arms': n, 'formulation': formulation, 'runs': args.runs, 'steps': args.steps,
                'world us/step': f'{together:.1f}', 'us/step per arm': f'{together / n:.1f}',
                'apart us/step (N Simulators)': f'{apart:.1f}',
                'world / apart': f'{together / apart:.2f}',
                'PyBullet us/step': f'{peer:.1f}',
                'world / PyBullet': f'{together / peer:.2f}' if np.isfinite(peer) else ''})
            print(rows[-1], flush=True)
    write_csv(args.out, 'worlds', rows)
    text = f'### N bundled arms in one world (core {cpu})\n\n' + markdown_table(rows)
    if args.node > 0.0:
        node_row = measure_node(args.node)
        print(node_row, flush=True)
        text += ('\n\n### The two-arm world node, an example controller per arm\n\n'
                 + markdown_table([node_row]))
    save_markdown(args.out, 'worlds', text)


def measure_node(seconds):
    """Return bench_node.py's row for the two-arm world node at real_time_factor 1."""
    import os
    import bench_node
    from node_harness import domain
    world = os.path.join(os.path.dirname(ARM_CONFIG), 'two_arms.world.yaml')
    with tempfile.TemporaryDirectory() as log_dir, domain() as domain_id:
        return bench_node.measure(domain_id, seconds, 1.0, log_dir, world=world,
                                  namespaces=('left', 'right'),
                                  case='two-arm world, a controller per arm, rtf 1')


if __name__ == '__main__':
    main()
