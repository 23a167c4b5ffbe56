"""
Compile the physics kernels once, into numba's cache: ``jointsim_precompile``.

    python -m jointsim_ros.tools.precompile [--variant maximal|tree ...] [--jobs N] [--quiet]

The engine is a few large numba kernels.  Compiling them takes about 150 s of CPU, about 85 s
of wall time on a 2-core machine (the tree's kernel, with its contact pipeline, the longer share;
physics/compile/compiler.py says where the time goes); loading them from the cache (``__pycache__``
beside the engine sources, or numba's user-wide cache for a read-only install) takes about a
second.  ``make venv`` (so ``make run`` and ``make test``) runs this once; the engine runs it too,
in a process of its own, when its first step finds a kernel missing
(``physics/compile/kernels.py``), so that a run stopped during the compile still leaves the cache
written for the next one.

The kernels' argument types do not depend on the robot's size or shape, only on which kernels a
robot uses, so two small robots cover every robot:

- ``maximal``: maximal coordinates, a floating robot with collision shapes on the ground (a
  robot without collision shapes, the bundled arm say, calls the same kernels with its contact
  containers empty), and a lidar: the range sensors' ray kernels (``physics/rays.py``);
- ``tree``: ``solver.formulation: tree``.

With two or more cores the compile is shared by two worker processes (``--jobs``, default: the
number of cores): one compiles ``maximal`` (the step's stages first, then the step), then what
is left of the step's contact stages and the ray kernel (``stages``); the other ``tree``, whose
one kernel with its contact pipeline is the longer share (on this project's 2-core machine,
2026-11-30: 85 s of wall time this way, 100 s with the contact stages on the tree's worker as
before the tree's rows grew).  This process then compiles
whatever a worker did not leave in the cache (when one failed, it loads every kernel once more).
Runs of this command wait for each other (a lock file in the cache folder), so concurrent first
runs compile once.
"""
import argparse
import contextlib
import fcntl
import logging
import os
import subprocess
import sys
import tempfile
import time

from ..physics.compile.kernels import TYPICAL_BOTH_SECONDS, TYPICAL_SECONDS, WORKER_ENV

VARIANTS = tuple(TYPICAL_SECONDS)

#: Each worker's share of a compile with two or more workers, in order (see the module docstring).
SHARES = (('maximal', 'stages'), ('tree',))

#: The step's stages the ``stages`` job compiles besides the contact ones (physics/contacts.py).
#: The split dates from when ``stages`` ran on the tree's worker (it balanced the two workers:
#: precompile, 3 pairs of runs each, 2026-11-26); since the tree's kernel grew, both jobs run on
#: one worker (:data:`SHARES`) and the split only orders them.
SHARED_STAGES = ('prepare_free_friction', 'settle_flags', 'diverged_body',
                 'update_joint_coordinates', 'project_limits')

_CHAIN = """<robot name="precompile_{name}">
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.02" iyy="0.02" izz="0.02"
    ixy="0" ixz="0" iyz="0"/></inertial>{base_collision}</link>
  <link name="upper"><inertial><origin xyz="0 0 0.2"/><mass value="1"/><inertia ixx="0.01"
    iyy="0.01" izz="0.002" ixy="0" ixz="0" iyz="0"/></inertial>{upper_collision}</link>
  <link name="slider"><inertial><mass value="0.5"/><inertia ixx="0.001" iyy="0.001"
    izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="hand"><inertial><mass value="0.3"/><inertia ixx="0.001" iyy="0.001" izz="0.001"
    ixy="0" ixz="0" iyz="0"/></inertial>{hand_collision}</link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="5"/></joint>
  <joint name="slide" type="prismatic"><parent link="upper"/><child link="slider"/>
    <origin xyz="0 0 0.4"/><axis xyz="0 0 1"/>
    <limit lower="-0.1" upper="0.1" effort="100" velocity="1"/></joint>
  <joint name="wrist" type="continuous"><parent link="slider"/><child link="hand"/>
    <origin xyz="0 0 0.05"/><axis xyz="1 0 0"/></joint>
</robot>"""

_COLLISIONS = {
    'base_collision': '<collision><geometry><box size="0.3 0.3 0.2"/></geometry></collision>',
    'upper_collision': ('<collision><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.04" '
                        'length="0.4"/></geometry></collision>'),
    'hand_collision': '<collision><geometry><sphere radius="0.05"/></geometry></collision>',
}

_DRIVE = {'resistance': 1.0, 'inductance': 1e-4, 'torque_constant': 0.05,
          'rotor_inertia': 1e-5, 'gear_ratio': 50.0}


def model(variant):
    """Return (URDF text, config dict) of the small robot that compiles ``variant``."""
    ground = variant == 'maximal'  # collision shapes on the ground: every maximal kernel runs
    urdf = _CHAIN.format(name=variant, **{
        key: value if ground else '' for key, value in _COLLISIONS.items()})
    config = {
        'base': 'floating' if ground else 'fixed',
        'base_pose': {'position': [0.0, 0.0, 0.3]},
        'drives': {'shoulder': dict(_DRIVE), 'slide': dict(_DRIVE)},
        'solver': {'formulation': 'tree' if variant == 'tree' else 'maximal'},
        'force_torque_sensors': {'ft': {'joint': 'shoulder', 'rate': 0}},
        'imu_sensors': {'imu': {'link': 'hand', 'rate': 0}},   # sensors.imu_reading
    }
    if ground:
        config['range_sensors'] = {'scan': {'link': 'hand', 'horizontal': {'samples': 8}}}
    return urdf, config


def compile_variant(variant):
    """Build the variant's robot and run everything a simulation calls (compiles or loads)."""
    from ..sim.simulator import Simulator
    urdf, config = model(variant)
    sim = Simulator.from_urdf(urdf, config)
    sim.set_voltages({'shoulder': 3.0, 'slide': -1.0})
    sim.step(2)
    sim.joint_positions()
    sim.joint_velocities()
    sim.sensors.wrench('ft')
    sim.sensors.history('ft', 0)
    if variant != 'tree':
        # a driven prescribed joint: the drive needs call the model's inverse
        q = sim.joint_positions()[sim.joint_names.index('shoulder')]
        sim.prescribed.joints([0.0, 1.0], [[q], [q]], joints=['shoulder'])
        sim.step(1)
        sim.prescribed.drive_needs()
        sim.prescribed.release()
    sim.drive_state('shoulder')
    if variant == 'maximal':
        sim.contacts()
        sim.sensors.ranges('scan')                         # rays.scan
        sim.sensors.cast_rays([0.0, 0.0, 1.0], [1.0, 0.0, 0.0])   # rays.cast
    sim.reset()


def step_stages():
    """
    Return [(dispatcher, argument values)] of the step's stages, in the order the step calls them.

    The stages are the calls in the step kernel's source whose arguments are all the kernel's own
    parameters (most are), each with the values the engine passes for them, so a worker can
    compile a stage for exactly the types the step then looks up in the cache.
    """
    import ast
    import inspect
    import textwrap

    from numba.core.dispatcher import Dispatcher

    from ..description import load_model
    from ..physics.step import step
    from ..sim.simulator import _make_engine
    # the engine only lends its argument types: built, not placed at its initial state as a
    # Simulator places it (that calls the joint-rate kernel, which is no stage)
    engine = _make_engine(*load_model(*model('maximal')))
    values = dict(zip(inspect.signature(step.py_func).parameters, engine._step_args(1)))
    found = {}
    calls = [node for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(
        step.py_func)))) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    for node in sorted(calls, key=lambda node: node.lineno):  # in the order the step calls
        stage = step.py_func.__globals__.get(node.func.id)
        if isinstance(stage, Dispatcher) and not node.keywords and all(
                isinstance(arg, ast.Name) and arg.id in values for arg in node.args):
            found[stage.py_func.__name__] = (stage, [values[arg.id] for arg in node.args])
    return list(found.values())


def job_stages(job):
    """
    Return the step's stages worker job ``job`` compiles ahead, in the step's order.

    ``stages``: the contact stages (physics/contacts.py, physics/body_mechanics.py) and
    :data:`SHARED_STAGES`; ``maximal``:
    the others.
    """
    def second(stage):
        return (stage.py_func.__module__.endswith(('.contacts', '.body_mechanics'))
                or stage.py_func.__name__ in SHARED_STAGES)
    return [(stage, args) for stage, args in step_stages()
            if second(stage) == (job == 'stages')]


def compile_stages(job):
    """Compile the stages of :func:`job_stages`, each alone."""
    import numba
    for stage, args in job_stages(job):
        stage.compile(tuple(numba.typeof(arg) for arg in args))


def ray_cast_arguments():
    """
    Return the arguments a Simulator passes ``rays.cast`` (its ``sensors.cast_rays``).

    From the maximal variant's engine, built but not placed (placing calls a kernel), as
    :func:`step_stages` takes its engine.
    """
    import numpy as np

    from ..description import load_model
    from ..physics import rays
    from ..sim.simulator import _make_engine
    engine = _make_engine(*load_model(*model('maximal')))
    state = engine.state
    work = rays.ray_work(len(state.body_pos), len(engine.shapes.kind))
    return (engine.shapes, engine.polytopes, state.body_pos, state.body_quat, -1,
            np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0]]), np.ones(1), work, np.empty(1),
            np.empty(1, dtype=np.int64))


def compile_ray_cast():
    """Compile ``rays.cast`` for the types a simulation passes it."""
    import numba

    from ..physics import rays
    rays.cast.compile(tuple(numba.typeof(arg) for arg in ray_cast_arguments()))


def run_job(job):
    """Compile one worker job: a variant, or ``stages`` (a share of the step's stages)."""
    if job == 'stages':
        compile_stages(job)
        compile_ray_cast()
    elif job == 'maximal':
        compile_stages(job)  # first, while the other worker does its share of them
        compile_variant(job)
    else:
        compile_variant(job)


def variant_cached(variant):
    """
    Return True when the variant's step kernel is already in the cache (nothing compiled).

    Reads the cache index only: building the variant's robot would call (so compile) the
    kernels its construction uses, here, before the workers start.
    """
    from ..physics.compile import kernels
    if variant == 'tree':
        from ..physics.tree import tree_step_packed as kernel
    else:
        from ..physics.step import step_bound as kernel
    return kernels.in_cache(kernel)


def cache_lock_path():
    """Return the path of the lock file that serialises compiles (beside the engine cache)."""
    from .. import physics
    folder = os.path.join(os.path.dirname(physics.__file__), '__pycache__')
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        if os.access(folder, os.W_OK):
            return os.path.join(folder, 'jointsim_precompile.lock')
    return os.path.join(os.path.expanduser('~'), '.cache', 'jointsim_precompile.lock')


@contextlib.contextmanager
def compile_lock(say):
    """Hold the compile lock; say so while another process holds it."""
    path = cache_lock_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'a') as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            say('waiting for another compile of the physics kernels to finish')
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _worker_command(jobs):
    return [sys.executable, '-m', 'jointsim_ros.tools.precompile', '--worker', ','.join(jobs)]


def _environment():
    """Return a worker's environment: this package importable from where it was imported."""
    env = dict(os.environ)
    # the folder holding the jointsim_ros package (this file is jointsim_ros/tools/)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
    env['PYTHONPATH'] = os.pathsep.join(p for p in (root, env.get('PYTHONPATH')) if p)
    return env


def precompile(variants=VARIANTS, jobs=None, say=print):
    """
    Compile ``variants`` (in up to ``jobs`` worker processes, or here).

    Returns:
        Wall time, s.
    """
    variants = [v for v in VARIANTS if v in variants]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(SHARES)))
    start = time.monotonic()
    with compile_lock(say):
        todo = [v for v in variants if not variant_cached(v)]
        if not todo:
            say('  already in the cache')
        failed = False
        if jobs > 1 and todo:
            # each share runs in a worker of its own; stages only goes with maximal
            shares = [[job for job in share if job in todo or
                       (job == 'stages' and 'maximal' in todo)] for share in SHARES]
            running = {}
            for share in (share for share in shares if share):
                errors = tempfile.TemporaryFile('w+')
                running[', '.join(share)] = (subprocess.Popen(
                    _worker_command(share), env=_environment(), stdout=subprocess.DEVNULL,
                    stderr=errors), errors)
            while running:
                for name, (process, errors) in list(running.items()):
                    if process.poll() is None:
                        continue
                    del running[name]
                    errors.seek(0)
                    text = errors.read().strip()[-500:]
                    errors.close()
                    if process.returncode != 0:
                        failed = True
                        say(f'  {name}: worker failed ({text}); compiling it here')
                    else:
                        say(f'  {name} kernels compiled ({time.monotonic() - start:.0f} s)')
                time.sleep(0.2)
        # here: what no worker compiled; after a failure every variant (loads what is cached)
        for variant in variants:
            if failed or (variant in todo and (jobs == 1 or not variant_cached(variant))):
                compile_variant(variant)
    return time.monotonic() - start


def parse_args(argv):
    """Command-line arguments."""
    parser = argparse.ArgumentParser(description=__doc__.strip().split('\n')[0])
    parser.add_argument('--variant', action='append', choices=VARIANTS,
                        help='compile only this variant (repeatable; default: all)')
    parser.add_argument('--jobs', type=int, default=0,
                        help='worker processes (default: the number of cores)')
    parser.add_argument('--quiet', action='store_true', help='print nothing')
    parser.add_argument('--worker', help=argparse.SUPPRESS)  # comma-separated jobs, in order
    return parser.parse_args(argv)


def main(argv=None):
    """Entry point of ``jointsim_precompile`` and ``python -m jointsim_ros.tools.precompile``."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # the engine compiles in this process instead of starting another one
    # (physics/compile/kernels.py)
    os.environ[WORKER_ENV] = '1'
    # the small robots' own notes (tree-mode limits, say) are not news to the user
    logging.getLogger('jointsim_ros').setLevel(logging.ERROR)
    if args.worker:
        for job in args.worker.split(','):
            run_job(job)
        # numba has written the cache; skip the interpreter's and LLVM's teardown (about 1 s)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    variants = args.variant or VARIANTS
    say = (lambda text: None) if args.quiet else (lambda text: print(text, flush=True))
    jobs = args.jobs or os.cpu_count() or 1
    typical = sum(TYPICAL_SECONDS[v] for v in variants)
    if jobs > 1 and len(variants) > 1:
        typical = TYPICAL_BOTH_SECONDS
    say(f'compiling the physics kernels ({", ".join(variants)}) into numba\'s cache: once, about '
        f'{typical} s on a 2-core machine (seconds when already cached)')
    seconds = precompile(variants, jobs, say)
    say(f'physics kernels ready ({seconds:.0f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
