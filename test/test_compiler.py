"""The engine's numba decorators (physics/compile/compiler.py): what each function becomes."""
from jointsim_ros.physics.compile.compiler import EngineLibrary, entry, jit, jit_inline
from numba import types


@jit
def _scaled(x, k):
    return k * x


@jit_inline
def _offset(x):
    return x + 0.25


@entry
def _kernel(x):
    return _offset(_scaled(_scaled(x, 2.0), 3.0))


def _library(dispatcher, *argtypes):
    dispatcher.compile(argtypes)  # compiles, or loads the cache entry a previous run wrote
    return dispatcher.overloads[argtypes]


def test_a_function_only_kernels_call_has_no_machine_code_of_its_own_yet_its_callers_run_it():
    # the kernel links the helpers' code (bitcode) and runs it: 2 * 3 * x + 0.25
    assert _kernel(1.5) == 9.25
    assert _kernel(-2.0) == -11.75
    for helper, argtypes in ((_scaled, (types.float64, types.float64)),
                             (_offset, (types.float64,))):
        result = _library(helper, *argtypes)
        name = result.fndesc.mangled_name
        # the helper's function is in the bitcode its callers link ...
        assert any(f.name == name for f in result.library._get_module_for_linking().functions)
        # ... but the JIT holds no machine code for it: numba would have emitted and cached it
        assert result.library.get_pointer_to_function(name) == 0
    kernel = _library(_kernel, types.float64)
    assert kernel.library.get_pointer_to_function(kernel.fndesc.mangled_name) != 0
    if isinstance(kernel.library, EngineLibrary):  # compiled here rather than loaded
        assert not kernel.library.link_only


def test_flags_values_are_numbas_own_for_defaults_and_set_options():
    # numba's TargetConfig.values (one property per option) is replaced by a faster one
    # (physics/compile/compiler.py); numba compares compiles by it, so it must give the same dict
    from numba.core.compiler import Flags
    from numba.core.targetconfig import TargetConfig

    def reference(flags):
        return {name: getattr(flags, name) for name in flags.options}

    assert Flags.values is not TargetConfig.values  # the engine's, once compiler.py is imported
    plain = Flags()
    assert plain.values() == reference(plain)
    changed = Flags(plain)
    changed.nrt = True
    changed.inline = 'always'
    changed.no_cpython_wrapper = True
    assert changed.values() == reference(changed)
    assert changed.values()['inline'].is_always_inline and plain.values()['inline'].is_never_inline
    assert changed != plain and Flags(changed) == changed
    assert hash(Flags(changed)) == hash(changed)
