"""
The engine's first call of a kernel: is it in numba's cache, and if not, compile it so that it is.

A cold compile takes about 50 s for ``maximal`` and 75 s for ``tree`` (whose kernel holds the
contact pipeline, limits, friction, loops and sensors since the tree formulation has them) and
about 85 s for both, in two worker processes (measured in a fresh clone, 2026-11-30, with the
contact stages on the maximal worker: 100 s with them on the tree's; 18, 26 and 28 s on
2026-11-27, before the tree's rows grew).  Compiled inside the
simulating process, the cache is only written when numba finishes, so a run stopped during the
compile (Ctrl-C on ``make run``, a launch that is shut down) leaves nothing and the next run
starts over.  ``ensure_compiled`` therefore says what is happening (one log line on the
``jointsim_ros`` logger) and compiles in a process of its own session (``python -m
jointsim_ros.tools.precompile``), which outlives a stopped parent and writes the cache; the caller
then loads the kernel from the cache.  Anything that process does not cover (or if it cannot run)
is compiled here, as numba would have anyway.

That process splits the work over its two workers as ``make venv`` does.  Compiling both
variants in one process instead takes about 37 s, 2 s of them system time.  (Before the
containers were passed by reference, physics/compile/containers.py, ``maximal`` alone took 52 s, 13
s of them system time: at some call depths numba's compile made CPython 3.11 map and unmap a
frame-stack chunk on every call at a chunk boundary, about 500 000 times, ``perf record -e
page-faults``: 95 % in ``_PyThreadState_BumpFramePointerSlow``.)
"""
import logging
import os
import subprocess
import sys
import time

LOGGER = logging.getLogger('jointsim_ros')

#: Set in the precompile processes: they compile in their own process.
WORKER_ENV = 'JOINTSIM_PRECOMPILE_WORKER'

#: Typical cold compile wall time of each precompile variant on this project's 2-core machines,
#: s (docs/benchmarks.md, "First run").
TYPICAL_SECONDS = {'maximal': 50, 'tree': 75}

#: Typical cold compile wall time of both variants in precompile's two workers, s.
TYPICAL_BOTH_SECONDS = 85


def cached(dispatcher, args):
    """
    Return True when ``dispatcher`` has a compiled or cached overload for these arguments.

    Reads numba's cache index without loading anything; False when numba's internals differ.
    """
    try:
        sig = tuple(dispatcher.typeof_pyval(a) for a in args)
        if sig in dispatcher.overloads:
            return True
        cache = dispatcher._cache
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: B902 - any numba layout this does not know: not cached
        return False


def in_cache(dispatcher):
    """
    Return True when numba's cache holds ``dispatcher`` compiled from today's engine sources.

    The kernels' argument types do not depend on the robot (jointsim_ros.tools.precompile), so any
    entry is the one a robot needs; unlike :func:`cached` this needs no arguments, so no
    engine (whose construction may itself call kernels).  False when numba's internals differ.
    """
    try:
        return bool(dispatcher.overloads) or bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: B902 - any numba layout this does not know: not cached
        return False


def ensure_compiled(dispatcher, args, variant, what='the physics kernels'):
    """
    Make sure the first call of ``dispatcher(*args)`` loads from the cache; returns seconds spent.

    ``variant`` names the precompile variant (jointsim_ros.tools.precompile) that compiles it.
    """
    if os.environ.get(WORKER_ENV) or cached(dispatcher, args):
        return 0.0
    LOGGER.info(
        f'compiling {what} ({variant}): once, about {TYPICAL_SECONDS.get(variant, 90)} s on a '
        f'2-core machine; later runs load them from the cache in about a second (`make venv` '
        f'or `jointsim_precompile` compiles them ahead)')
    start = time.monotonic()
    # the folder holding the jointsim_ros package (this file is jointsim_ros/physics/compile/)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), *(['..'] * 3)))
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (root, env.get('PYTHONPATH')) if p)
    try:
        # a session of its own: Ctrl-C or a launch shutdown stops the caller, not the compile
        process = subprocess.Popen(
            [sys.executable, '-m', 'jointsim_ros.tools.precompile', '--quiet', '--variant',
             variant],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, start_new_session=True)
        _, errors = process.communicate()
        if process.returncode != 0:
            LOGGER.warning(f'the separate compile process failed ({errors.strip()[-300:]}); '
                           f'compiling in this process instead')
    except OSError as error:
        LOGGER.warning(f'could not start a separate compile process ({error}); compiling in this '
                       f'process instead')
    return time.monotonic() - start
