"""
First run (issue 14): the kernels ``make venv`` compiles are the ones real robots call.

``jointsim_precompile`` compiles three small robots (jointsim_ros/tools/precompile.py).  numba keys
its cache on the argument types, so a robot whose step kernel sees other types (another array
layout, dtype, or a container of another shape) would compile again on its first step.  These
tests compare the types, so they hold whatever is in the cache.
"""
from pathlib import Path

from jointsim_ros import Simulator
from jointsim_ros.tools import precompile
import pytest

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / 'urdf' / 'jointsim_arm.urdf.xacro'
ARM_CONFIG = ROOT / 'config' / 'jointsim_arm.yaml'
FIXTURES = ROOT / 'test' / 'fixtures' / 'urdf'


def signature(sim):
    """Return the numba type signature of a simulator's step kernel call."""
    dispatcher, args = sim._engine.kernel()
    return tuple(dispatcher.typeof_pyval(a) for a in args)


def precompiled(variant):
    """Return the simulator of a precompile variant's robot."""
    urdf, config = precompile.model(variant)
    return Simulator.from_urdf(urdf, config)


@pytest.mark.parametrize('variant, source, config', [
    ('maximal', ARM, ARM_CONFIG),
    ('maximal', ARM, None),
    ('maximal', FIXTURES / 'panda.urdf', {'base': 'fixed'}),
    ('maximal', FIXTURES / 'anymal_c.urdf', {'base': 'floating'}),
    ('maximal', FIXTURES / 'solo12.urdf',
     {'base': 'floating', 'collision': {'self_collision': True}}),
    ('maximal', FIXTURES / 'g1_29dof.urdf', {'base': 'floating', 'drives': {
        'left_knee_joint': {'resistance': 1.0, 'inductance': 0.0, 'torque_constant': 0.1,
                            'rotor_inertia': 1e-5, 'gear_ratio': 20.0}}}),
    ('tree', ARM, {'solver': {'formulation': 'tree'}}),
])
def test_a_robot_calls_the_kernel_its_variant_compiled(variant, source, config):
    sim = Simulator.from_urdf(str(source), str(config) if isinstance(config, Path) else config)
    assert sim._engine.kernel_variant == variant
    assert signature(sim) == signature(precompiled(variant))


def test_the_variants_cover_every_kernel_and_say_how_long_they_take():
    assert set(precompile.VARIANTS) == {'maximal', 'tree'}
    for variant in precompile.VARIANTS:
        assert precompiled(variant)._engine.kernel_variant == variant


def test_a_run_stopped_during_its_first_compile_still_leaves_the_cache(tmp_path):
    # a copy of the package whose cache lacks the tree module's kernels (the other modules'
    # compiled functions are kept, as after an edit of tree.py: the compile takes about 30 s
    # instead of 100 s from nothing); a run starts the tree kernel's compile (the smallest
    # variant) and is killed as soon as it says so: the detached compile goes on, and
    # afterwards the variant is in the cache, so the next run compiles nothing
    import fcntl
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import time
    shutil.copytree(ROOT / 'jointsim_ros', tmp_path / 'jointsim_ros',
                    ignore=shutil.ignore_patterns('*.pyc', '*.lock'))  # (mtimes kept: copy2)
    for stale in (tmp_path / 'jointsim_ros' / 'physics' / '__pycache__').glob('tree.*.nb[ci]'):
        stale.unlink()
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    env.pop('JOINTSIM_PRECOMPILE_WORKER', None)
    script = ('import logging, sys; logging.basicConfig(stream=sys.stderr, level=logging.INFO)\n'
              'from jointsim_ros import Simulator\n'
              'from jointsim_ros.tools import precompile\n'
              'urdf, config = precompile.model("tree")\n'
              'Simulator.from_urdf(urdf, config).step(1)\n')
    run = subprocess.Popen([sys.executable, '-c', script], cwd=tmp_path, env=env,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    said = run.stderr.readline()
    while said and 'compiling the physics kernels (tree)' not in said:
        said = run.stderr.readline()
    assert 'compiling the physics kernels (tree)' in said
    time.sleep(1.0)
    os.killpg(run.pid, signal.SIGKILL)  # the run, not the compile (a session of its own)
    run.wait()
    assert run.returncode == -signal.SIGKILL
    # the detached compile holds the cache lock while it works (or has finished already)
    cache = tmp_path / 'jointsim_ros' / 'physics' / '__pycache__'
    cache.mkdir(exist_ok=True)
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline and not list(cache.glob('tree.*.nbc')):
        with open(cache / 'jointsim_precompile.lock', 'a') as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                break  # held: the compile runs
            fcntl.flock(lock, fcntl.LOCK_UN)
        time.sleep(0.05)
    # the next run waits for the detached compile (the cache lock), then finds everything
    done = subprocess.run([sys.executable, '-m', 'jointsim_ros.tools.precompile', '--variant',
                           'tree', '--jobs', '1'], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert 'already in the cache' in done.stdout
    assert list(cache.glob('tree.*.nbc'))


def test_the_workers_compile_the_steps_stages_for_the_types_the_step_passes():
    # each worker compiles its share of the step's stages ahead, typed from the values the
    # engine passes the step: a stage must get exactly the step's own parameters, or the
    # worker compiling the step would compile it again instead of loading it from the cache
    import inspect
    from jointsim_ros.physics.step import step
    second = precompile.job_stages('stages')
    first = precompile.job_stages('maximal')
    names = [s.py_func.__name__ for s, _ in second]
    assert set(names) == {'store_start_velocities', 'find_body_contacts',
                          'prepare_body_contacts', 'warm_start_body_contacts',
                          *precompile.SHARED_STAGES}
    assert names == ['store_start_velocities', 'find_body_contacts',  # step order
                     'prepare_free_friction', 'prepare_body_contacts',
                     'warm_start_body_contacts', 'settle_flags', 'diverged_body',
                     'update_joint_coordinates', 'project_limits']
    assert {'prepare_blocks', 'prepare_axes', 'solve_velocities',
            'integrate_velocities'} <= {s.py_func.__name__ for s, _ in first}
    assert not set(names) & {s.py_func.__name__ for s, _ in first}
    source = inspect.getsource(step.py_func)
    for stage, args in second + first:
        assert len(args) == len(inspect.signature(stage.py_func).parameters)
        assert f'{stage.py_func.__name__}(' in source
    # the list's engine is built but not placed (placing calls a kernel): same argument types
    import numba
    from jointsim_ros.description import load_model
    from jointsim_ros.sim.simulator import _make_engine
    built = _make_engine(*load_model(*precompile.model('maximal')))._step_args(1)
    placed = Simulator.from_urdf(*precompile.model('maximal'))._engine._step_args(1)
    assert [numba.typeof(v) for v in built] == [numba.typeof(v) for v in placed]


def test_an_index_that_no_longer_unpickles_is_a_cache_miss(tmp_path):
    # an engine cache written before a module moved names classes of the old module (the
    # layout of issue 27 moved physics/containers.py): reading it is a miss, not an error
    import pickle
    import sys
    import types

    import jointsim_ros.physics  # noqa: F401 - installs the tolerant index reader
    from numba.core.caching import IndexDataCacheFile

    cache_file = IndexDataCacheFile(str(tmp_path), 'step-100.py311', 'stamp')
    cache_file._save_index({'signature': 'data file'})
    assert cache_file._load_index() == {'signature': 'data file'}  # a readable one is read

    gone = types.ModuleType('jointsim_ros_moved_away')
    gone.Gone = type('Gone', (), {'__module__': gone.__name__})
    sys.modules[gone.__name__] = gone
    try:
        data = pickle.dumps(('stamp', {(gone.Gone,): 'data file'}), protocol=-1)
    finally:
        del sys.modules[gone.__name__]
    with open(cache_file._index_path, 'wb') as handle:
        pickle.dump(cache_file._version, handle, protocol=-1)
        handle.write(data)
    with pytest.raises(ModuleNotFoundError):
        pickle.loads(data)
    assert cache_file._load_index() == {}
