"""
The collision meshes of the published corpus and their hulls, kept as a reference (issue 32).

``corpus_meshes()`` lists every mesh a ``<collision>`` of a .urdf file of pybullet_data or
example-robot-data names (resolved as the description layer resolves it), with its scale.
``hull_summary`` reduces a hull to what the comparison needs: the point cloud's bounding box,
the hull's volume and its face planes.  Run as a script it writes those of the current code to
test/fixtures/hull_reference.npz: the file in the repository was written by the hand-written
reader and quickhull of commit 5cf5c61 (before trimesh and qhull), and
test_meshes.py::test_the_corpus_hulls_are_the_ones_of_before compares the new ones with it.

    .venv/bin/python test/hull_reference.py      # writes test/fixtures/hull_reference.npz
"""
import glob
import os
from pathlib import Path
import re
import sys

from lxml import etree
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / 'test' / 'fixtures' / 'hull_reference.npz'
ROBOTS = (Path(sys.prefix) / 'lib' / f'python{sys.version_info[0]}.{sys.version_info[1]}'
          / 'site-packages' / 'cmeel.prefix' / 'share' / 'example-robot-data' / 'robots')
#: The hull size the simulator uses by default (config collision.max_hull_vertices).
MAX_VERTICES = 64


def collections():
    """Return [(label, folder)] of the installed collections."""
    out = []
    try:
        import pybullet_data
        out.append(('pybullet_data', pybullet_data.getDataPath()))
    except ImportError:
        pass
    if ROBOTS.is_dir():
        out.append(('example-robot-data', str(ROBOTS)))
    return out


def corpus_meshes():
    """Return {key: (path, scale)} of every collision mesh the corpus's URDFs name."""
    sys.path.insert(0, str(ROOT))
    from jointsim_ros.description.meshes import resolve_mesh_uri
    found = {}
    for label, folder in collections():
        for urdf in sorted(glob.glob(os.path.join(folder, '**', '*.urdf'), recursive=True)):
            data = Path(urdf).read_bytes().rstrip(b'\x00 \t\r\n')
            try:
                root = etree.fromstring(data, etree.XMLParser(recover=True))
            except etree.XMLSyntaxError:
                continue
            if root is None:
                continue
            for mesh in root.iterfind('.//collision/geometry/mesh'):
                uri = mesh.get('filename', '')
                scale = tuple(float(v) for v in (mesh.get('scale') or '1 1 1').split())
                scale = scale * 3 if len(scale) == 1 else scale
                path = resolve_mesh_uri(uri, base_dir=os.path.dirname(urdf))
                if path is None or len(scale) != 3:
                    continue
                relative = os.path.relpath(path, folder)
                key = f'{label}/{relative}|' + ','.join(f'{v:g}' for v in scale)
                found[key] = (str(path), scale)
    return dict(sorted(found.items()))


def hull_volume(vertices, faces):
    """Return the volume of a closed polytope with counter-clockwise polygon faces."""
    centre = vertices.mean(axis=0)
    volume = 0.0
    for face in faces:
        corners = vertices[np.asarray(face)] - centre
        for k in range(1, len(corners) - 1):
            volume += np.dot(corners[0], np.cross(corners[k], corners[k + 1])) / 6.0
    return volume


def hull_planes(vertices, faces):
    """Return (f, 4) unit outward normals and offsets of the faces (Newell normals)."""
    rows = []
    for face in faces:
        corners = vertices[np.asarray(face)]
        centred = corners - corners.mean(axis=0)
        normal = np.cross(centred, np.roll(centred, -1, axis=0)).sum(axis=0)
        normal /= np.linalg.norm(normal)
        rows.append([*normal, normal @ corners.mean(axis=0)])
    return np.array(rows).reshape(-1, 4)


def hull_summary(path, scale, keep=False):
    """
    Return (bbox (6,), volume, planes (f, 4), vertex count) of a mesh's simulator hull.

    ``keep``: also return the mesh's points and the hull's vertices.
    """
    from jointsim_ros.description.meshes import load_mesh_vertices, simplify_hull
    points = load_mesh_vertices(path, scale)
    vertices, faces = simplify_hull(points, MAX_VERTICES)
    box = np.concatenate([points.min(axis=0), points.max(axis=0)])
    out = (box, hull_volume(vertices, faces), hull_planes(vertices, faces), len(vertices))
    return out + (points, vertices) if keep else out


def summaries(items):
    """
    Return {key: (box, volume, vertices, full hull volume or None) or the MeshError's text}.

    ``items``: [(key, (path, scale, volume of before or None, tolerance m^3))]; what a worker of
    the corpus test computes.  The full hull (all the mesh's points) is made only where the
    volume differs from before by more than the tolerance.
    """
    from scipy.spatial import ConvexHull
    from jointsim_ros.description.meshes import MeshError
    out = {}
    for key, (path, scale, before, tolerance) in items:
        try:
            box, volume, _, _, points, vertices = hull_summary(path, scale, keep=True)
        except MeshError as error:
            out[key] = str(error)
            continue
        full = (ConvexHull(points).volume
                if before is None or abs(volume - before) > tolerance else None)
        out[key] = (box, volume, vertices, full)
    return out


def corpus_summaries(meshes, reference, same, workers=2):
    """
    Return ``summaries`` of every mesh, computed on ``workers`` processes.

    ``reference``: load_reference()'s hulls; ``same``: the volume tolerance, of the box's cube.
    """
    from concurrent.futures import ProcessPoolExecutor
    items = []
    for key, (path, scale) in meshes.items():
        before = reference.get(key)
        if before is None:
            items.append((key, (path, scale, None, 0.0)))
            continue
        extent = float(np.max(before[0][3:] - before[0][:3]))
        items.append((key, (path, scale, before[1], same * extent ** 3)))
    chunks = [items[k::workers] for k in range(workers)]
    out = {}
    with ProcessPoolExecutor(workers) as pool:
        for part in pool.map(summaries, chunks):
            out.update(part)
    return out


def main():
    """Write the current code's hulls of the corpus to REFERENCE (or the path given)."""
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REFERENCE
    keys, boxes, volumes, counts, starts, planes, errors = [], [], [], [], [0], [], []
    meshes = corpus_meshes()
    for k, (key, (path, scale)) in enumerate(meshes.items()):
        try:
            box, volume, face_planes, count = hull_summary(path, scale)
        except Exception as error:  # noqa: B902 (recorded: the new code must fail alike)
            errors.append(f'{key}\t{error}')
            continue
        keys.append(key)
        boxes.append(box)
        volumes.append(volume)
        counts.append(count)
        planes.append(face_planes)
        starts.append(starts[-1] + len(face_planes))
        if k % 100 == 0:
            print(f'{k}/{len(meshes)} {key}', flush=True)
    np.savez_compressed(target, keys=np.array(keys), boxes=np.array(boxes),
                        volumes=np.array(volumes), counts=np.array(counts),
                        starts=np.array(starts), planes=np.concatenate(planes).astype(np.float32),
                        errors=np.array(errors))
    print(f'{len(meshes)} meshes, {len(errors)} refused; wrote {target}')
    for line in errors:
        print(' ', re.sub(r'\s+', ' ', line)[:200])


def load_reference(path=REFERENCE):
    """Return ({key: (box, volume, planes, count)}, {key: error message}) of a reference file."""
    with np.load(path) as data:      # each access decompresses: read every array once
        keys, boxes, volumes, counts, starts, planes, lines = (
            data[name] for name in ('keys', 'boxes', 'volumes', 'counts', 'starts', 'planes',
                                    'errors'))
    planes = planes.astype(float)
    hulls = {str(key): (boxes[k], float(volumes[k]), planes[starts[k]:starts[k + 1]],
                        int(counts[k]))
             for k, key in enumerate(keys)}
    errors = dict(str(line).split('\t', 1) for line in lines)
    return hulls, errors


if __name__ == '__main__':
    main()
