"""
Published URDFs (issue 15): how many articulated files of two collections load and step.

The collections are the ones the tests and the PyBullet benchmark already install
(requirements-test.txt): pybullet_data (``pybullet_data.getDataPath()``) and
example-robot-data (``<venv>/share/example-robot-data/robots``, cmeel's prefix).  A file counts
when it ends in ``.urdf`` and has at least one ``<joint>`` directly under ``<robot>`` whose type
is not ``fixed`` (example-robot-data's two ``.xacro`` files are hector_quadrotor's, one body
without joints, so they would not count either).  There are 110 such files: 44 in
pybullet_data and 66 in example-robot-data.

For each file:

- jointsim: ``Simulator.from_urdf(path, {'base': 'fixed'})``, then ``step(500)`` (0.5 s at the
  default dt = 1 ms); it passes when joint positions and velocities are finite afterwards.  A
  refusal (any JointsimError) is recorded with its message; the repairs the description layer
  announced (``model.warnings`` that say what was assumed) are counted.
- PyBullet, in a DIRECT client of its own per file: ``loadURDF(path, useFixedBase=True)``,
  once with ``useMaximalCoordinates=True`` (each link a rigid body, the peer of jointsim's
  maximal formulation) and once in the default reduced (Featherstone) mode; a load passes when
  PyBullet returns a body id.  The reduced-mode body is also stepped 0.5 s
  (``setTimeStep(0.001)``, 500 ``stepSimulation()``) and its joint states checked for finite
  values.

Results: bench/results/published_urdfs.csv (one row per file) and published_urdfs.md (the
totals beside PyBullet's, then every file jointsim refuses or PyBullet does not load).

Load time (issue 32): each file's ``Simulator.from_urdf`` is timed ``--runs`` times with the
per-process hull caches emptied before each (so every load reads and hulls its meshes), and
PyBullet's maximal-coordinate ``loadURDF`` as many times; medians per file, totals over the files
both load.

Run: .venv/bin/python bench/bench_published_urdfs.py [--out DIR] [--quick] [--runs N] (--quick
walks every tenth file; --steps and --cpu are accepted for run_all.py and not used: each file is
stepped once).
"""
import glob
import logging
import math
import os
from pathlib import Path
import re
import sys
import time

from benchlib import markdown_table, parse_args, quiet_c_output, save_markdown, write_csv
from jointsim_ros import JointsimError, Simulator
from lxml import etree
import numpy as np

try:
    import pybullet
    import pybullet_data
except ImportError:  # test-only dependency: the PyBullet columns say so
    pybullet = pybullet_data = None

#: Simulated time each loaded file is stepped, s (500 steps of the default 1 ms).
DURATION = 0.5
#: Warnings that announce a repair of the URDF text (description/urdf.py) start like this.
REPAIR_MARK = 'assumed'


def collections():
    """Return [(label, folder)] of the installed collections."""
    found = []
    if pybullet_data is not None:
        found.append(('pybullet_data', pybullet_data.getDataPath()))
    prefix = Path(sys.prefix) / 'lib' / f'python{sys.version_info[0]}.{sys.version_info[1]}'
    robots = prefix / 'site-packages' / 'cmeel.prefix' / 'share' / 'example-robot-data' / 'robots'
    if robots.is_dir():
        found.append(('example-robot-data', str(robots)))
    return found


def is_articulated(path):
    """Return True when the URDF has a non-fixed joint directly under <robot>."""
    data = Path(path).read_bytes().rstrip(b'\x00 \t\r\n')
    parser = etree.XMLParser(recover=True, remove_comments=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        root = None
    if root is None:  # unreadable even leniently: look at the joint tags' text
        types = re.findall(rb'<joint[^>]*\btype\s*=\s*"([^"]*)"', data)
        return any(t != b'fixed' for t in types)
    return any(j.get('type') != 'fixed' for j in root.iterfind('joint'))


def articulated_urdfs():
    """Return [(label, absolute path)] of every articulated .urdf, sorted per collection."""
    files = []
    for label, folder in collections():
        for path in sorted(glob.glob(os.path.join(folder, '**', '*.urdf'), recursive=True)):
            if is_articulated(path):
                files.append((f'{label}/{os.path.relpath(path, folder)}', path))
    return files


def forget_hulls():
    """Empty the per-process hull caches (issue 32), so that a load reads and hulls its meshes."""
    from jointsim_ros.description import shape_tables, shapes
    for module, name in ((shapes, '_HULLS'), (shape_tables, '_POLYTOPES')):
        getattr(module, name, {}).clear()


def jointsim_run(path, label, runs=1):
    """
    Load with a fixed base and step DURATION; return a dict (messages name ``label``).

    ``load_s``: the median over ``runs`` loads of ``Simulator.from_urdf``, each reading and
    hulling its meshes afresh.
    """
    out = {'jointsim_loads': False, 'jointsim_finite': False, 'repairs': 0, 'warnings': 0,
           'refusal': '', 'load_s': float('nan')}
    loads = []
    try:
        for _ in range(max(1, runs)):
            forget_hulls()
            start = time.perf_counter()
            sim = Simulator.from_urdf(path, {'base': 'fixed'})
            loads.append(time.perf_counter() - start)
    except JointsimError as error:
        out['refusal'] = ' '.join(str(error).replace(path, label).split())
        return out
    out['load_s'] = float(np.median(loads))
    out['jointsim_loads'] = True
    out['warnings'] = len(sim.model.warnings)
    out['repairs'] = sum(REPAIR_MARK in w for w in sim.model.warnings)
    try:
        sim.step(int(round(DURATION / sim.dt)))
    except JointsimError as error:
        out['refusal'] = 'stepping: ' + ' '.join(str(error).replace(path, label).split())
        return out
    out['jointsim_finite'] = bool(np.all(np.isfinite(sim.joint_positions()))
                                  and np.all(np.isfinite(sim.joint_velocities())))
    return out


def pybullet_run(path, maximal, timing=None):
    """
    Load in a new DIRECT client; return (loads, steps finite or None when not stepped).

    ``timing``: a list the load's wall time (s) is appended to.
    """
    with quiet_c_output():
        client = pybullet.connect(pybullet.DIRECT)
        try:
            try:
                start = time.perf_counter()
                body = pybullet.loadURDF(path, useFixedBase=True,
                                         useMaximalCoordinates=maximal,
                                         physicsClientId=client)
                if timing is not None:
                    timing.append(time.perf_counter() - start)
            except pybullet.error:
                return False, None
            if maximal:
                return True, None
            pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
            pybullet.setTimeStep(0.001, physicsClientId=client)
            for _ in range(int(round(DURATION / 0.001))):
                pybullet.stepSimulation(physicsClientId=client)
            joints = range(pybullet.getNumJoints(body, physicsClientId=client))
            values = []
            for joint in joints:  # one at a time: PyBullet fails on some joints (tiago_pro)
                try:
                    state = pybullet.getJointStateMultiDof(body, joint, physicsClientId=client)
                except pybullet.error:
                    continue
                values += [v for part in state[:2] for v in part]
            return True, all(math.isfinite(v) for v in values)
        finally:
            pybullet.disconnect(physicsClientId=client)


def main(argv=None):
    """Walk both collections, write the CSV and markdown results."""
    args = parse_args(__doc__, runs=1, steps=int(round(DURATION / 0.001)), argv=argv)
    logging.getLogger('jointsim_ros').setLevel(logging.ERROR)  # warnings are counted instead
    rows = []
    started = time.monotonic()
    files = articulated_urdfs()
    for label, path in files[::10] if args.quick else files:  # --quick: every tenth file
        row = {'file': label}
        row.update(jointsim_run(path, label, args.runs))
        if pybullet is not None:
            timing = []
            for _ in range(max(1, args.runs)):
                row['pybullet_maximal_loads'] = pybullet_run(path, True, timing)[0]
            row['pybullet_load_s'] = float(np.median(timing)) if timing else float('nan')
            loads, finite = pybullet_run(path, maximal=False)
            row['pybullet_reduced_loads'] = loads
            row['pybullet_reduced_finite'] = bool(finite)
        rows.append(row)
        status = 'ok' if row['jointsim_finite'] else 'REFUSED: ' + row['refusal'][:150]
        print(f'{label}: {status}', flush=True)
    write_csv(args.out, 'published_urdfs', rows)
    save_markdown(args.out, 'published_urdfs', report(rows, time.monotonic() - started))


def report(rows, seconds):
    """Return the markdown summary of the rows."""
    per_collection = []
    for label in sorted({r['file'].split('/')[0] for r in rows}) + ['total']:
        part = [r for r in rows if label == 'total' or r['file'].startswith(label + '/')]
        item = {'collection': label, 'articulated files': len(part),
                'jointsim loads': sum(r['jointsim_loads'] for r in part),
                'jointsim steps 0.5 s finite': sum(r['jointsim_finite'] for r in part),
                'files with repairs announced': sum(r['repairs'] > 0 for r in part)}
        if pybullet is not None:
            item['PyBullet maximal loads'] = sum(r['pybullet_maximal_loads'] for r in part)
            item['PyBullet reduced loads'] = sum(r['pybullet_reduced_loads'] for r in part)
            item['PyBullet reduced steps finite'] = sum(r['pybullet_reduced_finite']
                                                        for r in part)
        per_collection.append(item)
    text = ['## Published URDFs (issue 15)\n',
            'Articulated `.urdf` files of pybullet_data and example-robot-data, fixed base, '
            f'stepped {DURATION:g} s (bench/bench_published_urdfs.py, {seconds:.0f} s).\n',
            markdown_table(per_collection)]
    both = [r for r in rows if r['jointsim_loads'] and r.get('pybullet_maximal_loads')]
    if both:
        ours = sum(r['load_s'] for r in both)
        peer = sum(r['pybullet_load_s'] for r in both)
        text.append(f'\nLoad time, the {len(both)} files both load (per file the median of the '
                    f'runs; jointsim reading and hulling every mesh afresh): jointsim '
                    f'{ours:.2f} s, PyBullet (maximal coordinates) {peer:.2f} s, ratio '
                    f'{ours / peer:.2f}.')
    if pybullet is None:
        text.append('\nPyBullet is not installed (requirements-test.txt): its columns are '
                    'missing.')
    odd = [r for r in rows if not r['jointsim_finite']
           or not r.get('pybullet_maximal_loads', True)
           or not r.get('pybullet_reduced_loads', True)]
    if odd:
        columns = ['file', 'jointsim_finite', 'pybullet_maximal_loads',
                   'pybullet_reduced_loads', 'refusal']
        text += ['\nFiles jointsim refuses or PyBullet does not load:\n',
                 markdown_table([{c: r.get(c, '') for c in columns} for r in odd])]
    return '\n'.join(text)


if __name__ == '__main__':
    main()
