"""Containers passed by reference (physics/compile/containers.py): one read-only pointer."""
from collections import namedtuple

from jointsim_ros.physics.compile.containers import by_reference, ContainerRef, reference
from jointsim_ros.physics.math3d import entry, jit, jit_views
import numba
from numba.core.errors import TypingError
import numpy as np
import pytest

_Pair = by_reference(namedtuple('_Pair', ['a', 'b']))


@jit
def _weighted(pair, k):
    """Write a += k b and return the sum of a (stores into the arrays between field reads)."""
    total = 0.0
    for i in range(pair.a.shape[0]):
        pair.a[i] += k * pair.b[i]
        total += pair.a[i]
    return total


@entry
def _kernel(pair, k):
    return _weighted(pair, k) + _weighted(pair, k)


@jit_views
def _pair_of(a, b):
    return reference(_Pair(a, b))


@entry
def _kernel_of_arrays(a, b, k):
    return _weighted(_pair_of(a, b), k)


@entry
def _length(pair):
    return len(pair)


@entry
def _first(pair):
    return pair[0]


def _pair():
    return _Pair(np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0]))


def test_a_container_is_typed_by_reference_and_its_fields_as_the_arrays_are():
    pair = _pair()
    typ = numba.typeof(pair)
    assert isinstance(typ, ContainerRef)
    assert typ.fields == ('a', 'b')
    assert typ.types == (numba.typeof(pair.a), numba.typeof(pair.b))
    # a plain namedtuple of the same arrays stays numba's by-value tuple
    plain = namedtuple('_Plain', ['a', 'b'])(pair.a, pair.b)
    assert not isinstance(numba.typeof(plain), ContainerRef)


def test_a_kernel_reads_and_writes_through_a_container_it_received():
    pair = _pair()
    a0, b = pair.a.copy(), pair.b.copy()
    # two passes of a += 2 b, each returning sum(a) after its pass
    expected = (a0 + 2 * b).sum() + (a0 + 4 * b).sum()
    assert _kernel(pair, 2.0) == pytest.approx(expected, rel=1e-15)
    np.testing.assert_array_equal(pair.a, a0 + 4 * b)  # the caller's arrays were written
    np.testing.assert_array_equal(pair.b, b)


def test_a_container_a_kernel_builds_from_its_arrays_is_passed_by_reference_too():
    a, b = np.array([1.0, -1.0]), np.array([3.0, 4.0])
    assert _kernel_of_arrays(a, b, 0.5) == pytest.approx(2.5 + 1.0)
    np.testing.assert_array_equal(a, [2.5, 1.0])


def test_the_function_receives_one_read_only_noalias_pointer_for_the_whole_container():
    signature = (numba.typeof(_pair()), numba.float64)
    _weighted.compile(signature)  # compiles, or loads the cache entry a previous run wrote
    result = _weighted.overloads[signature]
    module = result.library._get_module_for_linking()
    function = next(f for f in module.functions if f.name == result.fndesc.mangled_name)
    arguments = list(function.arguments)
    # numba's return slot and exception slot, then the container and k: not 2 x 7 array fields
    assert len(arguments) == 4
    container = arguments[2]
    assert str(container.type) == 'ptr'
    attributes = {a.decode() if isinstance(a, bytes) else a for a in container.attributes}
    assert {'noalias', 'readonly', 'nonnull'} <= {a.split('(')[0] for a in attributes}
    assert any(a.startswith('dereferenceable(') for a in attributes)


@pytest.mark.parametrize('kernel', [_length, _first])
def test_a_container_only_offers_its_fields(kernel):
    with pytest.raises(TypingError):
        kernel(_pair())


@jit
def _pair_on_the_stack(a, b):
    return reference(_Pair(a, b))


@entry
def _kernel_of_a_dangling_pair(a, b):
    return _weighted(_pair_on_the_stack(a, b), 1.0)


def test_a_function_numba_does_not_inline_cannot_return_a_container_it_built():
    with pytest.raises(TypingError, match='_pair_on_the_stack returns a _Pair it built'):
        _kernel_of_a_dangling_pair(np.ones(2), np.ones(2))
