"""
Locate the package's shared files (urdf/, config/, launch/, rviz/).

Works from a source checkout (the files beside the package) and from a colcon or pip install
(``share/jointsim_ros`` under a prefix on ``AMENT_PREFIX_PATH`` or the interpreter's prefix).
"""
import os
from pathlib import Path
import sys

PACKAGE = 'jointsim_ros'
DEFAULT_ROBOT = ('urdf', 'jointsim_arm.urdf.xacro')
DEFAULT_CONFIG = ('config', 'jointsim_arm.yaml')


def share_directories():
    """Candidate share directories, most specific first."""
    candidates = [Path(__file__).resolve().parent.parent]
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if prefix:
            candidates.append(Path(prefix) / 'share' / PACKAGE)
    candidates.append(Path(sys.prefix) / 'share' / PACKAGE)
    return candidates


def share_file(*parts):
    """
    Return the path of a shared file, e.g. ('urdf', 'jointsim_arm.urdf.xacro').

    Raises:
        FileNotFoundError: naming every place looked at.
    """
    looked = []
    for base in share_directories():
        path = base.joinpath(*parts)
        if path.is_file():
            return path
        looked.append(str(path))
    raise FileNotFoundError(f'{"/".join(parts)} not found; looked at: {", ".join(looked)}')
