"""Suite-wide set-up: compile (or load) the engine once before any test starts a process."""
from jointsim_ros import Simulator
from robots import pendulum


def pytest_sessionstart(session):
    """
    Build numba's cache of the engine in this process first.

    Node tests start the simulator in subprocesses; without a cache each would compile the
    engine on its own (about 18 s each, concurrently), and could miss its start-up timeouts.
    """
    Simulator.from_urdf(pendulum(), None).step(1)
