"""
Spawning while the simulation runs (issue 31): how long the world stops, against PyBullet.

A spawn adds a scene object and rebuilds model and engine (docs/entities.md); the running
simulation waits meanwhile.  Target: at most 0.2 s.

1. Python API: ``Simulator.entities.spawn`` of a 2 kg crate (URDF text) into the bundled arm,
   the humanoid, the humanoid with its valve and a published mesh robot (pybullet_data's KUKA
   iiwa, seven STL links), each robot having stepped; then ``delete``.  Medians of ``--runs``
   spawns at distinct places.  Peer in the same run: PyBullet's ``loadURDF`` of the same crate
   into a DIRECT world holding the same mesh robot.
2. Through the node: jointsim_node runs the humanoid at real time; a client calls
   ``~/spawn_entity`` ``--runs`` times (crates on the ground around the robot) while it
   listens to ``joint_states``.  Per spawn: the service's own time (the node's log line), the
   round trip, and the longest gap between two ``joint_states`` around the call against the
   median gap (the stop the running simulation makes).

Run: .venv/bin/python bench/bench_spawn.py [--runs 7]
Writes bench/results/spawn.md.
"""
import argparse
from pathlib import Path
import re
import statistics
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'test'))

from jointsim_ros.sim.loading import load_robot  # noqa: E402, I100
from test_node_entities import CRATE  # noqa: E402 (the crate the DDS test spawns)

RESULTS = ROOT / 'bench' / 'results'
ROBOTS = [('arm', ROOT / 'urdf' / 'jointsim_arm.urdf.xacro',
           ROOT / 'config' / 'jointsim_arm.yaml'),
          ('humanoid', ROOT / 'urdf' / 'jointsim_humanoid.urdf.xacro',
           ROOT / 'config' / 'jointsim_humanoid.yaml'),
          ('humanoid + valve', ROOT / 'urdf' / 'jointsim_humanoid_valve.urdf.xacro',
           ROOT / 'config' / 'jointsim_humanoid_valve.yaml')]


def kuka():
    """Return the path of pybullet_data's KUKA iiwa (STL meshes), or None."""
    try:
        import pybullet_data
    except ImportError:
        return None
    path = Path(pybullet_data.getDataPath()) / 'kuka_iiwa' / 'model.urdf'
    return path if path.exists() else None


def place(k):
    """Return a free spot on the ground for the k-th crate (a ring 1.5 m around the origin)."""
    import math
    angle = 2.0 * math.pi * k / 12.0
    return (1.5 * math.cos(angle), 1.5 * math.sin(angle), 0.0)


def api(runs):
    """Median spawn and delete times (s) through the Python API, per robot."""
    rows = []
    robots = list(ROBOTS)
    if kuka() is not None:
        robots.append(('KUKA iiwa (STL meshes)', kuka(), None))
    for label, urdf, config in robots:
        sim = load_robot(robot_description_file=str(urdf),
                         config_file=str(config) if config else '').sim
        sim.step(100)
        spawn, delete = [], []
        for k in range(runs):
            start = time.perf_counter()
            name = sim.entities.spawn(f'crate_{k}', CRATE, place(k))
            spawn.append(time.perf_counter() - start)
            counts = (len(sim.model.bodies), len(sim.model.shapes))
            sim.step(10)
            start = time.perf_counter()
            sim.entities.delete(name)
            delete.append(time.perf_counter() - start)
        rows.append((label, *counts, statistics.median(spawn), max(spawn),
                     statistics.median(delete)))
    return rows


def pybullet_peer(runs):
    """Median loadURDF time (s) of the crate into a PyBullet world with the KUKA, or None."""
    try:
        import pybullet
        import pybullet_data
    except ImportError:
        return None
    client = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
        pybullet.loadURDF('plane.urdf', physicsClientId=client)
        pybullet.loadURDF('kuka_iiwa/model.urdf', physicsClientId=client)
        with tempfile.NamedTemporaryFile('w', suffix='.urdf', delete=False) as stream:
            stream.write(CRATE)
        times = []
        for k in range(runs):
            start = time.perf_counter()
            body = pybullet.loadURDF(stream.name, place(k), physicsClientId=client)
            times.append(time.perf_counter() - start)
            pybullet.stepSimulation(physicsClientId=client)
            pybullet.removeBody(body, physicsClientId=client)
        return statistics.median(times)
    finally:
        pybullet.disconnect(client)


def node(runs, log_dir):
    """Spawn crates into the humanoid's running node; return per-spawn rows."""
    from geometry_msgs.msg import Point
    from node_harness import domain, NodeProcess, RosClient
    from sensor_msgs.msg import JointState
    from simulation_interfaces.srv import SpawnEntity
    parameters = {'robot_description_file': str(ROBOTS[1][1]),
                  'config_file': str(ROBOTS[1][2]), 'physics_rate': 1000.0,
                  'publish_rate': 100.0, 'real_time_factor': 1.0}
    rows = []
    with domain() as domain_id:
        process = NodeProcess(domain_id, Path(log_dir) / 'node.log', parameters=parameters)
        client = None
        try:
            process.wait_ready()
            client = RosClient(domain_id, name='jointsim_bench_spawn')
            arrivals = []
            client.node.create_subscription(JointState, 'joint_states',
                                            lambda m: arrivals.append(time.monotonic()), 100)
            service = client.node.create_client(SpawnEntity, '/jointsim_node/spawn_entity')
            assert client.wait_for(service.service_is_ready)
            client.spin_for(2.0)
            for k in range(runs):
                request = SpawnEntity.Request(name=f'crate_{k}', resource_string=CRATE)
                x, y, z = place(k)
                request.initial_pose.pose.position = Point(x=x, y=y, z=z)
                first = len(arrivals)
                sent = time.monotonic()
                future = service.call_async(request)
                assert client.wait_for(future.done)
                answered = time.monotonic()
                assert future.result().result.result == 1, future.result().result.error_message
                client.spin_for(1.0)
                window = arrivals[max(first - 1, 0):]
                gaps = [b - a for a, b in zip(window, window[1:])]
                rows.append((answered - sent, max(gaps), statistics.median(gaps)))
            log = process.output()
        finally:
            if client is not None:
                client.close()
            process.stop()
    inside = [float(m) * 1e-3 for m in re.findall(r"spawned 'crate_\d+' .* in (\d+) ms", log)]
    return rows, inside


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--runs', type=int, default=7)
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    lines = ['# Spawning while running (bench/bench_spawn.py)', '',
             f'Command: `.venv/bin/python bench/bench_spawn.py --runs {args.runs}`', '',
             '| robot | bodies (with the crate) | shapes | spawn median ms | spawn max ms | '
             'delete median ms |', '|---|---|---|---|---|---|']
    for label, bodies, shapes, spawn, worst, delete in api(args.runs):
        lines.append(f'| {label} | {bodies} | {shapes} | {spawn * 1e3:.1f} | {worst * 1e3:.1f} '
                     f'| {delete * 1e3:.1f} |')
    peer = pybullet_peer(args.runs)
    if peer is not None:
        lines += ['', f'PyBullet loadURDF of the same crate into a world with the KUKA iiwa: '
                      f'median {peer * 1e3:.2f} ms.']
    with tempfile.TemporaryDirectory() as log_dir:
        rows, inside = node(args.runs, log_dir)
    lines += ['', 'Through the node (humanoid at real time, ~/spawn_entity):', '',
              '| | median ms | max ms |', '|---|---|---|',
              f'| the service callback (node log) | {statistics.median(inside) * 1e3:.0f} | '
              f'{max(inside) * 1e3:.0f} |',
              f'| round trip (client) | {statistics.median(r[0] for r in rows) * 1e3:.0f} | '
              f'{max(r[0] for r in rows) * 1e3:.0f} |',
              f'| longest joint_states gap around the call | '
              f'{statistics.median(r[1] for r in rows) * 1e3:.0f} | '
              f'{max(r[1] for r in rows) * 1e3:.0f} |',
              f'| median joint_states gap (100 Hz) | '
              f'{statistics.median(r[2] for r in rows) * 1e3:.0f} | - |']
    text = '\n'.join(lines) + '\n'
    (RESULTS / 'spawn.md').write_text(text)
    sys.stdout.write(text)


if __name__ == '__main__':
    main()
