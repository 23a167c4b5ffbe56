"""Docstring style over the package the ROS way (ament_pep257, 'ament' convention)."""

import logging
from pathlib import Path

from ament_pep257.main import main
import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

# Not this package's code: colcon's output folders and the vendored tf2_msgs. Folders starting
# with '.' or '_' (the venv, caches) are never entered.
EXCLUDED = ['build', 'install', 'log', 'third_party']

# The project writes Google-style sections ('Args:', 'Returns:'; see STYLE.md). pydocstyle reads
# any docstring holding a section name NumPy also uses ('Returns', 'Raises', 'Yields', ...) as a
# NumPy docstring, and the 'ament' convention then demands NumPy layout: a bare section name
# (D406), a dashed underline (D407) and a blank line after the last section (D413). Those three
# are switched off; every other rule of the 'ament' convention stays.
GOOGLE_SECTION_CODES = ['D406', 'D407', 'D413']


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257(monkeypatch, caplog):
    # ament_pep257 logs one INFO line per file; only the errors are worth showing on failure.
    caplog.set_level(logging.WARNING, logger='pydocstyle.utils')
    monkeypatch.chdir(PACKAGE_ROOT)
    excludes = [str(PACKAGE_ROOT / name) for name in EXCLUDED]
    rc = main(argv=['.', '--add-ignore', *GOOGLE_SECTION_CODES, '--exclude', *excludes])
    assert rc == 0, 'Found code style errors / warnings'
