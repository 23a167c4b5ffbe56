"""
The package's layering, as data: which folder may import which (docs/architecture.md).

Every import in the package, at module level or inside a function, is resolved to the module
it names and checked against :data:`FLOORS`: a module may import its own floor and the floors
below it, never one above.  The same table names the third-party modules a floor may use
(rclpy only in the ROS layer, the view's node and the tools; numba only in the physics).
"""
import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / 'jointsim_ros'

#: Floors from the top down: (name, the modules or packages on it).  docs/architecture.md,
#: "Where things are", has one line per floor.
FLOORS = (
    ('tools', ('jointsim_ros.tools',)),
    ('view', ('jointsim_ros.view',)),
    ('ros', ('jointsim_ros.ros',)),
    ('control', ('jointsim_ros.control',)),
    ('sim', ('jointsim_ros.sim',)),
    ('description', ('jointsim_ros.description',)),
    ('physics', ('jointsim_ros.physics',)),
    ('compile', ('jointsim_ros.physics.compile',)),
    ('base', ('jointsim_ros.errors', 'jointsim_ros.rotations', 'jointsim_ros.resources')),
)

#: Third-party modules only some floors may import.
RESTRICTED = {'rclpy': {'ros', 'tools', 'view'}, 'numba': {'physics', 'compile', 'tools'},
              'llvmlite': {'compile'}}

#: The public face: ``jointsim_ros/__init__.py`` re-exports the Simulator and the errors.
PUBLIC = 'jointsim_ros'


def floor_of(module):
    """Return the index in FLOORS of a jointsim_ros module (the longest matching prefix)."""
    best, length = None, -1
    for index, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + '.')) and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def module_name(path):
    """Return the dotted module name of a source file of the package."""
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def imports_of(path):
    """Yield (line, imported module) for every import of a source file, relative ones resolved."""
    module = module_name(path)
    package = module if path.name == '__init__.py' else module.rpartition('.')[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')[:len(package.split('.')) - node.level + 1]
                target = '.'.join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            # `from package import module` imports the module, not the package's own names
            submodules = [f'{target}.{alias.name}' for alias in node.names]
            if target.startswith('jointsim_ros') and all(map(is_module, submodules)):
                for submodule in submodules:
                    yield node.lineno, submodule
            else:
                yield node.lineno, target


def is_module(name):
    """Return True when a dotted name is a module or package of the source tree."""
    path = PACKAGE_ROOT.parent / name.replace('.', '/')
    return path.with_suffix('.py').is_file() or (path / '__init__.py').is_file()


def violations(paths):
    """Return 'file:line: a imports b' for each import against the floors' order."""
    found = []
    names = [name for name, _ in FLOORS]
    for path in paths:
        module = module_name(path)
        if module == PUBLIC:
            continue
        own = floor_of(module)
        for line, target in imports_of(path):
            where = f'{path.relative_to(PACKAGE_ROOT.parent)}:{line}'
            top = target.split('.')[0]
            if top in RESTRICTED and names[own] not in RESTRICTED[top]:
                found.append(f'{where}: {names[own]} imports {target}')
            if top != 'jointsim_ros':
                continue
            other = floor_of(target)
            if target == PUBLIC or other is None or other < own:
                floor = 'the public face' if other is None else names[other]
                found.append(f'{where}: {names[own]} ({module}) imports {target} ({floor}), '
                             'above it')
    return found


def package_sources():
    return sorted(PACKAGE_ROOT.rglob('*.py'))


def test_every_module_is_on_a_floor():
    lost = [module_name(p) for p in package_sources()
            if module_name(p) != PUBLIC and floor_of(module_name(p)) is None]
    assert not lost, f'modules on no floor of FLOORS: {lost}'


def test_imports_only_point_down():
    assert violations(package_sources()) == []


def test_at_most_three_modules_beside_the_public_face():
    beside = sorted(p.name for p in PACKAGE_ROOT.glob('*.py') if p.name != '__init__.py')
    assert len(beside) <= 3, beside


def test_the_physics_never_reads_the_description():
    for path in (PACKAGE_ROOT / 'physics').rglob('*.py'):
        for line, target in imports_of(path):
            assert not target.startswith('jointsim_ros.description'), f'{path}:{line}'


@pytest.mark.parametrize('source, floor, target', [
    ('physics/engine.py', 'physics', 'jointsim_ros.description.convex'),
    ('physics/compile/flat.py', 'compile', 'jointsim_ros.physics.arrays'),
    ('sim/simulator.py', 'sim', 'jointsim_ros.control.walking'),
    ('description/model.py', 'description', 'rclpy'),
])
def test_an_upward_import_is_reported(tmp_path, source, floor, target):
    # a copy of the package with one import added against the direction
    copy = tmp_path / 'jointsim_ros'
    path = copy / source
    path.parent.mkdir(parents=True)
    path.write_text(f'import {target}\n')
    global PACKAGE_ROOT
    saved, PACKAGE_ROOT = PACKAGE_ROOT, copy
    try:
        found = violations([path])
    finally:
        PACKAGE_ROOT = saved
    assert len(found) == 1 and found[0].startswith(f'jointsim_ros/{source}:1: {floor} ')
