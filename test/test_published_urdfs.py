"""
Every articulated URDF of pybullet_data and example-robot-data loads and steps (issue 15).

The collections come with the test-only requirements (requirements-test.txt: pybullet ships
pybullet_data, example-robot-data installs under the venv's cmeel prefix).  A file counts when it
ends in ``.urdf`` and has a non-fixed joint directly under ``<robot>``: 110 files, as in
bench/bench_published_urdfs.py, which also runs PyBullet on them.  Each must load with a fixed
base and step 0.5 s with finite joint positions and velocities, except the KNOWN_REFUSALS below,
whose one error must name the file and the fix.
"""
import glob
import logging
import os
from pathlib import Path
import re
import sys

from jointsim_ros import DescriptionError, Simulator
from lxml import etree
import numpy as np
import pytest

try:
    import pybullet_data
except ImportError:  # test-only dependency
    pybullet_data = None

ROBOTS = (Path(sys.prefix) / 'lib' / f'python{sys.version_info[0]}.{sys.version_info[1]}'
          / 'site-packages' / 'cmeel.prefix' / 'share' / 'example-robot-data' / 'robots')

#: Files jointsim refuses, and why: a revolute joint moves a subtree without any mass, whose
#: motion is undetermined (any speed costs nothing).  PyBullet loads romeo.urdf by integrating the
#: zero-mass fingers anyway and does not load romeo_laas_small.urdf at all (missing meshes).
KNOWN_REFUSALS = {
    'example-robot-data/romeo_description/urdf/romeo.urdf': "joint 'LHand'",
    'example-robot-data/romeo_description/urdf/romeo_laas_small.urdf': "joint 'l_gripper_joint'",
}


def is_articulated(path):
    """Return True when the URDF has a non-fixed joint directly under <robot>."""
    data = Path(path).read_bytes().rstrip(b'\x00 \t\r\n')
    try:
        root = etree.fromstring(data, etree.XMLParser(recover=True, remove_comments=True))
    except etree.XMLSyntaxError:
        root = None
    if root is None:
        return any(t != b'fixed' for t in re.findall(rb'<joint[^>]*\btype\s*=\s*"([^"]*)"', data))
    return any(j.get('type') != 'fixed' for j in root.iterfind('joint'))


def published_urdfs():
    """Return pytest params (label, path) of every articulated .urdf of both collections."""
    folders = []
    if pybullet_data is not None:
        folders.append(('pybullet_data', pybullet_data.getDataPath()))
    if ROBOTS.is_dir():
        folders.append(('example-robot-data', str(ROBOTS)))
    params = []
    for label, folder in folders:
        for path in sorted(glob.glob(os.path.join(folder, '**', '*.urdf'), recursive=True)):
            if is_articulated(path):
                name = f'{label}/{os.path.relpath(path, folder)}'
                params.append(pytest.param(name, path, id=name))
    return params


PUBLISHED = published_urdfs()


@pytest.fixture(autouse=True)
def quiet_warnings():
    """Keep the repairs' and inertia warnings out of the log: they are checked elsewhere."""
    logger = logging.getLogger('jointsim_ros')
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


@pytest.mark.skipif(pybullet_data is None or not ROBOTS.is_dir(),
                    reason='pybullet_data or example-robot-data not installed '
                    '(requirements-test.txt)')
def test_both_collections_hold_the_110_articulated_files():
    assert len(PUBLISHED) == 110
    assert len(KNOWN_REFUSALS) <= 2
    assert set(KNOWN_REFUSALS) <= {p.values[0] for p in PUBLISHED}


@pytest.mark.skipif(not PUBLISHED, reason='pybullet_data and example-robot-data not installed '
                    '(requirements-test.txt)')
@pytest.mark.parametrize('name, path', PUBLISHED or [pytest.param('none', '', id='none')])
def test_loads_and_steps_half_a_second_with_a_fixed_base(name, path):
    if name in KNOWN_REFUSALS:
        with pytest.raises(DescriptionError) as error:
            Simulator.from_urdf(path, {'base': 'fixed'})
        message = str(error.value)
        assert path in message and KNOWN_REFUSALS[name] in message
        assert 'which has no mass' in message and 'give the link an <inertial>' in message
        return
    sim = Simulator.from_urdf(path, {'base': 'fixed'})
    sim.step(int(round(0.5 / sim.dt)))
    assert np.all(np.isfinite(sim.joint_positions()))
    assert np.all(np.isfinite(sim.joint_velocities()))
