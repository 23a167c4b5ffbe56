"""
First run (issue 14): the kernels ``make venv`` compiles are the ones real robots call.

``jointsim_precompile`` compiles three small robots (jointsim_ros/precompile.py).  numba keys its
cache on the argument types, so a robot whose step kernel sees other types (another array
layout, dtype, or a container of another shape) would compile again on its first step.  These
tests compare the types, so they hold whatever is in the cache.
"""
from pathlib import Path

from jointsim_ros import precompile, Simulator
import pytest

ROOT = Path(__file__).resolve().parents[1]
ARM = ROOT / 'urdf' / 'jointsim_arm.urdf.xacro'
ARM_CONFIG = ROOT / 'config' / 'jointsim_arm.yaml'
FIXTURES = ROOT / 'test' / 'fixtures' / 'urdf'


def signature(sim):
    """Return the numba type signature of a simulator's step kernel call."""
    dispatcher, args = sim._engine.kernel()
    return tuple(dispatcher.typeof_pyval(a) for a in args)


def precompiled(variant):
    """Return the simulator of a precompile variant's robot."""
    urdf, config = precompile.model(variant)
    return Simulator.from_urdf(urdf, config)


@pytest.mark.parametrize('variant, source, config', [
    ('maximal', ARM, ARM_CONFIG),
    ('maximal', ARM, None),
    ('maximal', FIXTURES / 'panda.urdf', {'base': 'fixed'}),
    ('contacts', FIXTURES / 'anymal_c.urdf', {'base': 'floating'}),
    ('contacts', FIXTURES / 'solo12.urdf',
     {'base': 'floating', 'collision': {'self_collision': True}}),
    ('contacts', FIXTURES / 'g1_29dof.urdf', {'base': 'floating', 'drives': {
        'left_knee_joint': {'resistance': 1.0, 'inductance': 0.0, 'torque_constant': 0.1,
                            'rotor_inertia': 1e-5, 'gear_ratio': 20.0}}}),
    ('tree', ARM, {'solver': {'formulation': 'tree'}}),
])
def test_a_robot_calls_the_kernel_its_variant_compiled(variant, source, config):
    sim = Simulator.from_urdf(str(source), str(config) if isinstance(config, Path) else config)
    assert sim._engine.kernel_variant == variant
    assert signature(sim) == signature(precompiled(variant))


def test_the_variants_cover_every_kernel_and_say_how_long_they_take():
    assert set(precompile.VARIANTS) == {'maximal', 'contacts', 'tree'}
    for variant in precompile.VARIANTS:
        assert precompiled(variant)._engine.kernel_variant == variant
