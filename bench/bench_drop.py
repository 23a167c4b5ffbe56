"""
Published legged robots dropped onto the ground (issue 15): do they land, and what a step costs.

The drop set: legged robots and humanoids from the example-robot-data wheel (test-only
dependency), each loaded unmodified with a floating base, its feet DROP m above the ground,
default settings (dt = 1 ms, 20 solver iterations, the ground on).  Each robot falls, lands and
lies or stands passively for SETTLE s; then STEPS steps are timed one ``step()`` call each, and
the median per run is reported (median of the run medians, smallest and largest run beside it).
The same file in PyBullet 3.2.7, in the same process and run, in both of its modes: maximal
coordinates (``useMaximalCoordinates=True``) and reduced (Featherstone, joint motors off),
``loadURDF(..., flags=URDF_USE_INERTIA_FROM_FILE)`` on a static plane, fixedTimeStep 1 ms and 20
solver iterations, ``stepSimulation()`` timed the same way.  'lands' means: the whole run stayed
finite and the base ended above the ground.

Run: .venv/bin/python bench/bench_drop.py [--runs 5] [--steps 1000] [--quick]
Writes drop.csv and drop.md in bench/results/.
"""
import math
from pathlib import Path
import sys

from benchlib import (markdown_table, parse_args, pin_to_one_core, quiet_c_output, save_markdown,
                      spread, time_calls, write_csv)
from jointsim_ros import Simulator
from jointsim_ros.errors import JointsimError
import numpy as np

try:
    import pybullet
except ImportError:  # test-only dependency: the PyBullet columns are left empty
    pybullet = None

#: Height of the lowest link frame above the ground at the start, m.
DROP = 0.3
#: Simulated time to fall, land and come to rest before the timing, s.
SETTLE = 2.0
ROBOTS_DIR = (Path(sys.prefix) / 'lib' / f'python{sys.version_info[0]}.{sys.version_info[1]}'
              / 'site-packages' / 'cmeel.prefix' / 'share' / 'example-robot-data' / 'robots')
#: name -> path under the collection.
DROP_SET = {
    'G1 (29 dof)': 'g1_description/urdf/g1_29dof_rev_1_0.urdf',
    'Talos (full)': 'talos_data/robots/talos_full_v2.urdf',
    'ANYmal C': 'anymal_c_simple_description/urdf/anymal.urdf',
    'Go1': 'go1_description/urdf/go1.urdf',
    'Solo12': 'solo_description/robots/solo12.urdf',
    'A1': 'a1_description/urdf/a1.urdf',
    'Bolt': 'bolt_description/robots/bolt.urdf',
}


def start_height(sim):
    """Return the base height that puts the lowest link frame DROP m above the ground."""
    lowest = min(sim.link_pose(body.name)[0][2] for body in sim.model.bodies)
    base = sim.link_pose(sim.model.bodies[0].name)[0][2]
    return base - lowest + DROP


def time_jointsim(path, steps):
    """Drop, settle, time; return (us per step array or None, lands, note)."""
    try:
        sim = Simulator.from_urdf(str(path), {'base': 'floating'})
        height = start_height(sim)
        sim = Simulator.from_urdf(str(path), {'base': 'floating',
                                              'base_pose': {'position': [0, 0, height]}})
        sim.step(int(round(SETTLE / sim.dt)))
        times = time_calls(sim.step, steps)
    except JointsimError as error:
        return None, False, str(error).split('.')[0][:120]
    base = sim.link_pose(sim.model.bodies[0].name)[0]
    return times, bool(np.all(np.isfinite(base)) and base[2] > 0.0), ''


def time_pybullet(path, height, steps, maximal):
    """Drop the same file in PyBullet; return (us per step array or None, lands)."""
    with quiet_c_output():
        client = pybullet.connect(pybullet.DIRECT)
        try:
            pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
            pybullet.setPhysicsEngineParameter(fixedTimeStep=0.001, numSolverIterations=20,
                                               physicsClientId=client)
            plane = pybullet.createCollisionShape(pybullet.GEOM_PLANE, physicsClientId=client)
            pybullet.createMultiBody(0, plane, physicsClientId=client)
            try:
                body = pybullet.loadURDF(str(path), [0, 0, height],
                                         useMaximalCoordinates=maximal,
                                         flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                                         physicsClientId=client)
            except pybullet.error:
                return None, False
            joints = list(range(pybullet.getNumJoints(body, physicsClientId=client)))
            if joints and not maximal:
                pybullet.setJointMotorControlArray(body, joints, pybullet.VELOCITY_CONTROL,
                                                   forces=[0.0] * len(joints),
                                                   physicsClientId=client)
            for _ in range(int(round(SETTLE / 0.001))):
                pybullet.stepSimulation(physicsClientId=client)
            times = time_calls(lambda _: pybullet.stepSimulation(physicsClientId=client), steps)
            base = pybullet.getBasePositionAndOrientation(body, physicsClientId=client)[0]
            return times, all(math.isfinite(v) for v in base) and base[2] > 0.0
        finally:
            pybullet.disconnect(physicsClientId=client)


def main(argv=None):
    """Measure every robot of the drop set in the three engines; write the tables."""
    args = parse_args(__doc__, runs=5, steps=1000, argv=argv)
    pin_to_one_core(args.cpu)
    if not ROBOTS_DIR.is_dir():
        save_markdown(args.out, 'drop', 'example-robot-data is not installed: no drop set.')
        return
    rows = []
    for name, relative in DROP_SET.items():
        path = ROBOTS_DIR / relative
        runs = {'jointsim': [], 'pybullet maximal': [], 'pybullet reduced': []}
        lands = dict.fromkeys(runs, True)
        note = ''
        height = start_height(Simulator.from_urdf(str(path), {'base': 'floating'}))
        for _ in range(args.runs):
            times, landed, note = time_jointsim(path, args.steps)
            lands['jointsim'] &= landed
            if times is not None:
                runs['jointsim'].append(float(np.median(times)))
            if pybullet is not None:
                for mode, maximal in (('pybullet maximal', True), ('pybullet reduced', False)):
                    times, landed = time_pybullet(path, height, args.steps, maximal)
                    lands[mode] &= landed
                    if times is not None:
                        runs[mode].append(float(np.median(times)))
        row = {'robot': name, 'joints': len(Simulator.from_urdf(
            str(path), {'base': 'floating'}).joint_names)}
        for mode, values in runs.items():
            median, low, high = spread(values) if values else (float('nan'),) * 3
            row[f'{mode} us/step'] = round(median, 1)
            row[f'{mode} min-max'] = f'{low:.0f}-{high:.0f}' if values else ''
            row[f'{mode} lands'] = 'yes' if values and lands[mode] else 'no'
        j, m, r = (row[f'{mode} us/step'] for mode in runs)
        row['jointsim / maximal'] = round(j / m, 2) if m == m else float('nan')
        row['jointsim / reduced'] = round(j / r, 2) if r == r else float('nan')
        row['note'] = note
        rows.append(row)
        print(row, flush=True)
    write_csv(args.out, 'drop', rows)
    save_markdown(args.out, 'drop', markdown_table(rows))


if __name__ == '__main__':
    main()
