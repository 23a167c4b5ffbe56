"""flake8 over the package the ROS way (ament_flake8: its configuration and plugin set)."""

from pathlib import Path

from ament_flake8.main import main_with_errors
import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

# Not this package's code: the venv, colcon's output folders and the vendored tf2_msgs.
# Folders starting with '.' or '_' are skipped by ament_flake8 itself.
EXCLUDED = ['build', 'install', 'log', 'third_party']


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8(monkeypatch):
    monkeypatch.chdir(PACKAGE_ROOT)
    excludes = [str(PACKAGE_ROOT / name) for name in EXCLUDED]
    rc, errors = main_with_errors(argv=['.', '--exclude', *excludes])
    assert rc == 0, \
        'Found %d code style errors / warnings:\n' % len(errors) + \
        '\n'.join(errors)
