"""The ROS packaging: package.xml contents, and a real `colcon build` into a temporary folder."""

import ast
import os
from pathlib import Path
import shutil
import subprocess
import sys

from catkin_pkg.package import parse_package
import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
PACKAGE_NAME = 'jointsim_ros'

REQUIRED_EXEC_DEPENDS = {
    'rclpy', 'builtin_interfaces', 'std_msgs', 'std_srvs', 'geometry_msgs', 'sensor_msgs',
    'trajectory_msgs', 'diagnostic_msgs', 'rosgraph_msgs', 'tf2_msgs', 'simulation_interfaces',
    'python3-numpy', 'python3-transforms3d', 'python3-yaml', 'urdfdom_py', 'xacro',
    'launch', 'launch_ros',
}
REQUIRED_TEST_DEPENDS = {'ament_flake8', 'ament_pep257', 'python3-pytest'}


def setup_py_metadata(*fields):
    """Return what `setup.py --<field>` prints for each field (e.g. 'name', 'version')."""
    result = subprocess.run(
        [sys.executable, 'setup.py'] + ['--' + field for field in fields],
        cwd=PACKAGE_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        check=True)
    return result.stdout.splitlines()[-len(fields):]


@pytest.mark.packaging
def test_package_xml_declares_what_the_package_needs():
    package = parse_package(str(PACKAGE_ROOT / 'package.xml'))
    package.validate()

    assert package.name == PACKAGE_NAME
    assert package.package_format == 3
    assert package.get_build_type() == 'ament_python'
    assert [str(lic) for lic in package.licenses] == ['Apache-2.0']

    exec_depends = {dep.name for dep in package.exec_depends}
    assert REQUIRED_EXEC_DEPENDS <= exec_depends, \
        'missing exec_depend: %s' % sorted(REQUIRED_EXEC_DEPENDS - exec_depends)
    test_depends = {dep.name for dep in package.test_depends}
    assert REQUIRED_TEST_DEPENDS <= test_depends, \
        'missing test_depend: %s' % sorted(REQUIRED_TEST_DEPENDS - test_depends)


#: rosdep key of each third-party module the package imports (ROS packages: their own name).
ROSDEP_KEYS = {'numpy': 'python3-numpy', 'numba': 'python3-numba', 'llvmlite': 'python3-numba',
               'transforms3d': 'python3-transforms3d', 'yaml': 'python3-yaml',
               'lxml': 'python3-lxml', 'matplotlib': 'python3-matplotlib',
               'urdf_parser_py': 'urdfdom_py', 'xacro': 'xacro', 'scipy': 'python3-scipy',
               'trimesh': 'python3-trimesh'}


#: Optional dependencies: imported only by the tool that needs them, installed with the
#: package's extra (no rosdep key): module -> extra.
OPTIONAL = {'ray': 'sweep', 'viser': 'view'}


@pytest.mark.packaging
def test_optional_dependencies_are_extras_and_imported_lazily():
    text = (PACKAGE_ROOT / 'setup.py').read_text()
    for module, extra in OPTIONAL.items():
        assert f"'{extra}': [" in text and f"'{module}" in text
        for path in (PACKAGE_ROOT / PACKAGE_NAME).rglob('*.py'):
            tree = ast.parse(path.read_text(), filename=str(path))
            top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
            names = {alias.name.split('.')[0] for node in top if isinstance(node, ast.Import)
                     for alias in node.names}
            names |= {node.module.split('.')[0] for node in top
                      if isinstance(node, ast.ImportFrom) and node.level == 0}
            assert module not in names, f'{path} imports {module} at module level'


@pytest.mark.packaging
def test_every_module_the_package_imports_is_an_exec_depend():
    package = parse_package(str(PACKAGE_ROOT / 'package.xml'))
    exec_depends = {dep.name for dep in package.exec_depends}
    imported = set()
    for path in (PACKAGE_ROOT / PACKAGE_NAME).rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split('.')[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add(node.module.split('.')[0])
    third_party = (imported - set(sys.stdlib_module_names) - {PACKAGE_NAME, '__future__'}
                   - set(OPTIONAL))
    keys = {ROSDEP_KEYS.get(module, module) for module in third_party}
    assert keys <= exec_depends, 'missing exec_depend: %s' % sorted(keys - exec_depends)
    # the launch files' packages
    for module in ('launch', 'launch_ros', 'rviz2'):
        assert module in exec_depends


@pytest.mark.packaging
def test_setup_py_agrees_with_package_xml():
    package = parse_package(str(PACKAGE_ROOT / 'package.xml'))
    assert setup_py_metadata('name', 'version') == [package.name, package.version]
    assert (PACKAGE_ROOT / 'resource' / PACKAGE_NAME).is_file()


def find_colcon():
    """Return the colcon beside this interpreter (the venv's), else the one on PATH."""
    beside_python = Path(sys.executable).parent / 'colcon'
    if beside_python.exists():
        return str(beside_python)
    return shutil.which('colcon')


@pytest.mark.packaging
def test_colcon_build_installs_the_package(tmp_path):
    colcon = find_colcon()
    if colcon is None:
        pytest.skip('colcon is not installed')

    artefact_dirs = ['build', 'install', 'log']
    existing_before = {name for name in artefact_dirs if (PACKAGE_ROOT / name).exists()}
    build_base = tmp_path / 'build'
    install_base = tmp_path / 'install'
    # The child gets this process's full environment: the ROS wheels' bootstrapper needs it.
    env = dict(os.environ, COLCON_HOME=str(tmp_path / 'colcon_home'))
    result = subprocess.run(
        [colcon, '--log-base', str(tmp_path / 'log'), 'build',
         '--base-paths', str(PACKAGE_ROOT),
         '--packages-select', PACKAGE_NAME,
         '--build-base', str(build_base), '--install-base', str(install_base),
         '--event-handlers', 'console_direct+'],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=600)
    assert result.returncode == 0, 'colcon build failed:\n' + result.stdout

    prefix = install_base / PACKAGE_NAME
    share = prefix / 'share' / PACKAGE_NAME
    assert (share / 'package.xml').is_file()
    assert (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' /
            PACKAGE_NAME).is_file()
    for script in ('jointsim_headless', 'jointsim_node', 'jointsim_example_controller'):
        assert os.access(prefix / 'lib' / PACKAGE_NAME / script, os.X_OK), script
    site_packages = prefix / 'lib' / ('python%d.%d' % sys.version_info[:2]) / 'site-packages'
    assert (site_packages / PACKAGE_NAME / '__init__.py').is_file()
    assert not (site_packages / 'test').exists()

    # Every data file in the source tree reaches share/<package>/ (the folders may be empty).
    for folder, pattern in [('urdf', '*'), ('config', '*.yaml'), ('config', '*.xml'),
                            ('config', '*.xacro'), ('launch', '*.launch.py'), ('rviz', '*.rviz')]:
        assert (share / folder).is_dir(), 'share/%s/%s missing' % (PACKAGE_NAME, folder)
        for source in (PACKAGE_ROOT / folder).glob(pattern):
            if source.is_file():
                assert (share / folder / source.name).is_file(), \
                    '%s was not installed' % source.relative_to(PACKAGE_ROOT)

    left_behind = {name for name in artefact_dirs
                   if (PACKAGE_ROOT / name).exists()} - existing_before
    assert not left_behind, 'colcon build wrote %s into the source tree' % sorted(left_behind)
