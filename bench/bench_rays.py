"""
Measure what range sensors cost: rays per second against the number of shapes, and sensors.

1. N static boxes (N = 1, 16, 64, 256; 0.2-1 m, turned at random, 2-10 m around the sensor,
   seed 1) on the ground; a 16 x 1800 lidar (VLP-16-like: rows -15 to +15 degrees, a full turn
   of columns, 30 m) at 1 m height in their middle.  Its 28 800 rays are cast three ways, each
   timed per call: a sample of the lidar (``sim.sensors.measure``: the sensor's grid with its
   broad phase, ``physics/rays.py`` ``scan``), the same rays as any rays
   (``sim.sensors.cast_rays``: the bounding volume hierarchy, ``cast``), and PyBullet's
   ``rayTestBatch`` on the same scene (boxes and plane, ``numThreads=1``; the rays sent in
   batches of 16 383, PyBullet's largest; Python lists in and out are part of its call, as they
   are of ours).  Rays per second per core; the share of rays that read the same as the
   sensor's grid within 1 mm (both nothing, or hits within 1 mm of each other).
2. The 64-box pile of ``bench_contacts.py`` (free 0.2 m boxes in stacks of two on a grid,
   settled for 1.5 s) with the same lidar beside it (1 m from its edge, 0.4 m high) sampled at
   10 Hz: the share of one core its samples take (time per sample x 10 per second); target
   under 5 %.  The same rays in PyBullet (the boxes at the settled poses), for scale.  A
   320 x 240 depth camera (60 degrees wide, looking at the pile from the same place, 10
   degrees down) at 30 Hz, measured the same way.

Each figure is the median over ``--runs`` runs of the median of ``--steps`` calls in a run
(PyBullet: a fifth as many calls); the process is pinned to one core.

Run: .venv/bin/python bench/bench_rays.py [--runs 7] [--steps 50] [--quick]
"""
import math
import time

from bench_contacts import pile_scene
from benchlib import (JOINTSIM_CONFIG, markdown_table, parse_args, pin_to_one_core,
                      quiet_c_output, save_markdown, spread, verdict, write_csv)
from jointsim_ros import Simulator
from jointsim_ros.rotations import quat_to_matrix
import numpy as np

TARGET_LIDAR_PERCENT = 5.0
LIDAR = {'horizontal': {'samples': 1800, 'min_angle': -math.pi,
                        'max_angle': math.pi * (1.0 - 2.0 / 1800)},
         'vertical': {'samples': 16, 'min_angle': -math.radians(15),
                      'max_angle': math.radians(15)},
         'range': {'min': 0.05, 'max': 30.0}}
CAMERA = {'kind': 'depth_camera', 'width': 320, 'height': 240, 'horizontal_fov': math.pi / 3,
          'range': {'min': 0.05, 'max': 30.0}}
#: PyBullet's largest batch of rays: it refuses more than 16 384 and answers 16 383 of those.
PYBULLET_BATCH = 16383
EMPTY = '<robot name="sensor"><link name="base"/></robot>'


def random_boxes(n, seed=1):
    """Return the config scene of n static boxes 2-10 m around the origin."""
    rng = np.random.default_rng(seed)
    scene = {}
    for k in range(n):
        r, a = rng.uniform(2.0, 10.0), rng.uniform(-np.pi, np.pi)
        scene[f'box{k}'] = {'shape': 'box', 'size': rng.uniform(0.2, 1.0, 3).tolist(),
                            'pose': {'position': [r * math.cos(a), r * math.sin(a),
                                                  rng.uniform(0.2, 2.0)],
                                     'rpy': rng.uniform(-np.pi, np.pi, 3).tolist()}}
    return scene


def boxes_of(sim):
    """Return [(centre, quaternion wxyz, half extents)] of the boxes a simulator holds."""
    out = []
    for shape in sim.model.shapes:
        if shape.kind != 'box':
            continue
        pos, quat = sim.link_pose(shape.name)   # a scene box's frame is its shape's
        out.append((pos, quat, np.asarray(shape.size, dtype=float)))
    return out


def rays_of(sim, name):
    """Return the world (origins, directions) of a sensor's rays, (n, 3) each."""
    sample = sim.sensors.range_sample(name)
    dirs = sim.sensors.ray_directions(name).reshape(-1, 3) @ quat_to_matrix(sample.quat).T
    return np.tile(sample.position, (len(dirs), 1)), np.ascontiguousarray(dirs)


def pybullet_scene(pybullet, boxes):
    """Return a DIRECT client holding a plane and the boxes (static), collision detection run."""
    client = pybullet.connect(pybullet.DIRECT)
    plane = pybullet.createCollisionShape(pybullet.GEOM_PLANE, physicsClientId=client)
    pybullet.createMultiBody(0, plane, physicsClientId=client)
    for pos, quat, half in boxes:
        shape = pybullet.createCollisionShape(pybullet.GEOM_BOX, halfExtents=half.tolist(),
                                              physicsClientId=client)
        pybullet.createMultiBody(0, shape, basePosition=pos.tolist(),
                                 baseOrientation=[quat[1], quat[2], quat[3], quat[0]],
                                 physicsClientId=client)
    pybullet.performCollisionDetection(physicsClientId=client)
    return client


def pybullet_cast(pybullet, client, origins, dirs, length):
    """Cast the rays with rayTestBatch on one thread; return distances (inf for none)."""
    ends = origins + length * dirs
    start_list, end_list = origins.tolist(), ends.tolist()
    out = []
    for k in range(0, len(start_list), PYBULLET_BATCH):
        out += pybullet.rayTestBatch(start_list[k:k + PYBULLET_BATCH],
                                     end_list[k:k + PYBULLET_BATCH], numThreads=1,
                                     physicsClientId=client)
    return np.array([hit[2] * length if hit[0] >= 0 else np.inf for hit in out])


def per_call(call, calls):
    """Return the median wall time of ``call()`` over ``calls`` calls, s."""
    times = np.empty(calls)
    for k in range(calls):
        start = time.perf_counter()
        call()
        times[k] = time.perf_counter() - start
    return float(np.median(times))


def agreement(ours, theirs, within=1e-3):
    """
    Compare two casts of the same rays.

    Returns:
        (share of rays both miss or both hit within ``within`` m of each other, the largest
        difference where both hit, m).
    """
    ours = np.where(np.isfinite(ours), ours, np.inf)
    both = np.isfinite(ours) & np.isfinite(theirs)
    difference = np.where(both, np.abs(np.where(both, ours, 0.0) - np.where(both, theirs, 0.0)),
                          0.0)
    same = (np.isinf(ours) & np.isinf(theirs)) | (both & (difference <= within))
    return float(np.mean(same)), float(difference.max())


def scaling_table(runs, calls, counts):
    """Rays per second of the three ways against the number of boxes; return the table rows."""
    import pybullet
    rows = []
    for n in counts:
        sim = Simulator.from_urdf(EMPTY, {
            **JOINTSIM_CONFIG, 'scene': random_boxes(n), 'ground': {'enabled': True},
            'range_sensors': {'lidar': {**LIDAR, 'link': 'base',
                                        'pose': {'position': [0.0, 0.0, 1.0]}}}})
        origins, dirs = rays_of(sim, 'lidar')
        count = len(dirs)
        with quiet_c_output():
            client = pybullet_scene(pybullet, boxes_of(sim))
        grid = sim.sensors.measure('lidar').reshape(-1)    # compile or load outside the clock
        any_rays = sim.sensors.cast_rays(origins, dirs, 30.0)
        theirs = pybullet_cast(pybullet, client, origins, dirs, 30.0)
        figures = {'sensor grid': [], 'any rays': [], 'PyBullet rayTestBatch': []}
        for _ in range(runs):
            figures['sensor grid'].append(per_call(lambda: sim.sensors.measure('lidar'), calls))
            figures['any rays'].append(per_call(
                lambda: sim.sensors.cast_rays(origins, dirs, 30.0), calls))
            figures['PyBullet rayTestBatch'].append(per_call(
                lambda: pybullet_cast(pybullet, client, origins, dirs, 30.0),
                max(2, calls // 5)))
        pybullet.disconnect(client)
        hits = int(np.isfinite(grid).sum())
        for way, values in figures.items():
            median, low, high = spread(values)
            same, worst = agreement(grid, theirs if way.startswith('PyBullet') else any_rays)
            rows.append({'boxes': n, 'way': way, 'ms per 28 800 rays': median * 1e3,
                         'run min-max ms': f'{low * 1e3:.3g}-{high * 1e3:.3g}',
                         'M rays/s': count / median / 1e6,
                         'rays hitting': hits,
                         'same as the grid within 1 mm': f'{100 * same:.2f} %',
                         'largest difference m': worst if way == 'any rays' else ''})
    return rows


def pile_table(runs, calls, quick):
    """Time the 16 x 1800 lidar (10 Hz) and a 320 x 240 depth camera (30 Hz) by the pile."""
    import pybullet
    scene = pile_scene(64)
    place = {'position': [-1.0, 0.75, 0.4]}
    sim = Simulator.from_urdf(EMPTY, {
        **JOINTSIM_CONFIG, 'scene': scene, 'range_sensors': {
            'lidar': {**LIDAR, 'link': 'base', 'rate': 10.0, 'pose': place},
            'camera': {**CAMERA, 'link': 'base', 'rate': 30.0,
                       'pose': {**place, 'rpy': [0.0, math.radians(10), 0.0]}}}})
    sim.step(300 if quick else 1500)                    # settle, as bench_contacts does
    origins, dirs = rays_of(sim, 'lidar')
    with quiet_c_output():
        client = pybullet_scene(pybullet, boxes_of(sim))
    lidar = sim.sensors.measure('lidar').reshape(-1)
    theirs = pybullet_cast(pybullet, client, origins, dirs, 30.0)
    sim.sensors.measure('camera')
    figures = {'lidar': [], 'camera': [], 'pybullet': []}
    for _ in range(runs):
        figures['lidar'].append(per_call(lambda: sim.sensors.measure('lidar'), calls))
        figures['camera'].append(per_call(lambda: sim.sensors.measure('camera'), calls))
        figures['pybullet'].append(per_call(
            lambda: pybullet_cast(pybullet, client, origins, dirs, 30.0), max(2, calls // 5)))
    pybullet.disconnect(client)
    same, worst = agreement(lidar, theirs)
    rows = []
    for what, key, rate, rays in (
            ('16 x 1800 lidar, 10 Hz', 'lidar', 10.0, len(dirs)),
            ('320 x 240 depth camera, 30 Hz', 'camera', 30.0, 320 * 240),
            ('the lidar in PyBullet rayTestBatch, 10 Hz', 'pybullet', 10.0, len(dirs))):
        median, low, high = spread(figures[key])
        percent = 100.0 * median * rate
        target = key == 'lidar'
        rows.append({'sensor': what, 'ms per sample': median * 1e3,
                     'run min-max ms': f'{low * 1e3:.3g}-{high * 1e3:.3g}',
                     'M rays/s': rays / median / 1e6, '% of one core': percent,
                     'target %': TARGET_LIDAR_PERCENT if target else '',
                     'verdict': verdict(percent, TARGET_LIDAR_PERCENT) if target else ''})
    note = (f"{int(np.isfinite(lidar).sum())} of the lidar's {len(lidar)} rays hit; PyBullet "
            f'reads {100 * same:.2f} % of them the same within 1 mm (largest difference '
            f'{worst:.2g} m).')
    return rows, note


def main(argv=None):
    """Run both parts, write bench/results/rays_*.csv and rays.md, print the tables."""
    args = parse_args(__doc__, runs=7, steps=50, argv=argv)
    cpu = pin_to_one_core(args.cpu)
    calls = max(3, args.steps)
    counts = (1, 16) if args.quick else (1, 16, 64, 256)
    scaling = scaling_table(args.runs, calls, counts)
    pile, note = pile_table(args.runs, calls, args.quick)
    write_csv(args.out, 'rays_scaling', scaling)
    write_csv(args.out, 'rays_sensors', pile)
    save_markdown(args.out, 'rays',
                  f'### 28 800 rays (a 16 x 1800 lidar) among N boxes, one core (core {cpu})\n\n'
                  + markdown_table(scaling)
                  + '\n\n### Sensors by the 64-box pile\n\n' + markdown_table(pile)
                  + '\n\n' + note)


if __name__ == '__main__':
    main()
