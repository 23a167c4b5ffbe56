"""
Suite-wide set-up: compile (or load) the engine once, and mark the tests that must run alone.

`make test` (scripts/run_tests.sh) runs the suite in two parts: the tests marked ``serial``
alone, one at a time, and all the others spread over the cores by pytest-xdist.  A test is
``serial`` when it or one of its fixtures starts the node, a demo or a view over DDS: those
run at a real-time factor and wait on discovery, so a second process loading the other core
starves them (the node then falls behind its clock, and a walk through it falls).  The mark
is found from the test's source and its fixtures' (the harness's names below), so a new node
test is serial without anyone remembering to say so; ``pytest.mark.serial`` marks others.
"""
import inspect

from jointsim_ros import Simulator
import pytest
from robots import pendulum

#: What starts a node, a demo or a view over DDS (test/node_harness.py, jointsim_ros.tools).
STARTS_PROCESSES_OVER_DDS = ('running_node(', 'domain(', 'RosClient(', 'view_in_process(',
                             'jointsim_ros.tools.demo')


def pytest_sessionstart(session):
    """
    Build numba's cache of the engine in this process first.

    Node tests start the simulator in subprocesses; without a cache each would compile the
    engine on its own (about 18 s each, concurrently), and could miss its start-up timeouts.
    """
    Simulator.from_urdf(pendulum(), None).step(1)


def _source(function):
    """Return a function's source, or '' when it has none to read."""
    try:
        return inspect.getsource(function)
    except (OSError, TypeError):
        return ''


def _runs_over_dds(item):
    """Return whether a test or a fixture it uses starts a process over DDS."""
    functions = [getattr(item, 'function', None)]
    for defs in getattr(item, '_fixtureinfo').name2fixturedefs.values():
        functions.extend(d.func for d in defs)
    return any(token in _source(f) for f in functions if f is not None
               for token in STARTS_PROCESSES_OVER_DDS)


def pytest_collection_modifyitems(config, items):
    """Mark ``serial`` every test that starts a node, a demo or a view over DDS."""
    for item in items:
        if _runs_over_dds(item):
            item.add_marker(pytest.mark.serial)
