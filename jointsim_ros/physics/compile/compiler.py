"""
The engine's numba decorators: no reference counting, no wrappers nobody calls, LLVM inlining.

Without numba's runtime (NRT, ``_nrt=False``) arrays carry no reference counts: the engine never
allocates in a kernel (its scratch arrays live in ``Work``), and the caller keeps every array
alive for the call.  With it, every copy of one of the engine's namedtuple containers (``Work``
holds about 40 arrays) incremented and decremented the count of each array in it, atomically;
the step kernel makes such copies at about a hundred places, so 60 % of its LLVM IR (8 700 NRT
calls) was that bookkeeping, LLVM spent most of the compile time removing it again, and the
atomic operations that stayed took the arm's step from 23 to 42 us.  A kernel that allocates
no longer compiles ("NRT required but not enabled"), which is the point.

Four decorators, by who calls the function:

- ``entry``: called from Python (the engine's kernels, and helpers the tests call).  numba
  builds a CPython wrapper that unboxes every argument; no C-callable (cfunc) wrapper.
- ``jit``: called only from other kernels.  No wrappers at all: for a function taking the
  containers, the wrappers unboxed each of their arrays and were a fifth of the cold compile.
- ``jit_inline``: the step's stages and the helpers they call with the containers.  Compiled as
  a function of its own and marked ``alwaysinline`` for LLVM (numba's ``forceinline``), so the
  caller's code is what it was with numba's own inlining, but each stage is typed, lowered and
  optimised alone, once, instead of numba copying its IR into the caller and then typing,
  converting to SSA and optimising one function of 14 000 statements (LLVM's SROA alone took 4 s
  on it).  The step compiles in about half the time, and runs faster (docs/benchmarks.md).
  ``jit_inline_entry`` is the same for a scalar helper Python calls too (the drive model).
- ``jit_views``: numba's own ``inline='always'``, for the few functions that return views of a
  packed buffer (physics/compile/flat.py) or take containers built from them: without NRT a
  function of its own cannot return an array it did not receive.

The engine's namedtuple containers reach a function as one pointer each
(physics/compile/containers.py) instead of every field of every array as an argument of its own,
which was half the IR numba generated; ``EngineLibrary`` marks those pointers read-only and
``noalias`` for LLVM.

Where the cold compile's time goes now (CPU, 2-core machine, each ``precompile --worker`` share
run in one process after the other, a busy hour of 2026-11-26): ``stages, tree`` 19 s (the
tree's entry 2.1 s), then ``maximal`` 16 s (the step itself 4.9 s: LLVM optimising and emitting
the inlined whole), about 220 functions in all.  In a quiet hour the same takes about a fifth
less.  About 45 % of it is LLVM (module passes, machine code, function passes, in that order;
IR text printed and parsed again about 2 s), the rest numba's typing and lowering, mostly in
numba's own Python.  numba still optimises a helper's code again in every library that links it
(once per caller).  numba's comparison of compile flags at every typing of a call was 4-5 % of
the CPU time: ``_flag_values`` below makes it cheaper.  Tried without a gain: numba's
constant-argument specialisations turned off (30 fewer functions, the callers' passes did the
work instead), cached Flags hashes, no function passes for link-only libraries (the callers'
passes then took longer), ``-O1`` for the kernels' module passes (4 s less, the G1 humanoid's
step 36 % slower), numba's loop and SLP vectorisers off (no change), a pass forwarding the
copies numba's inliner makes of a container argument to the argument (it saved time while a
container was a structure of every field; as a pointer, compile and run times were the same
without it, and it was dropped), the tree's step compiled as a function of its own for LLVM to
inline instead of numba inlining it (the tree kernel's LLVM time doubled).
"""
import functools
import weakref

from llvmlite import binding as llvm, ir as llvm_ir
import numba
from numba.core import cgutils
from numba.core.codegen import JITCodeLibrary
from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags
from numba.core.compiler_machinery import AnalysisPass, register_pass
from numba.core.typed_passes import AnnotateTypes

from .containers import check_returned_container, INLINED_BY_NUMBA, mark_arguments


class EngineLibrary(JITCodeLibrary):
    """
    numba's code library, without the optimisation and machine code nobody uses.

    numba optimises a library's module twice when it finalises it: a cheap pass that gathers
    NRT reference counts to prune them (the engine has none) and the full pass.  The engine's
    kernels get the full pass only.  A library of a function only kernels call (``link_only``)
    is linked into each caller's module, which the caller's full pass optimises and the
    caller's machine code contains: such a library gets the cheap pass only (its function
    passes still shrink what every caller links) and no machine code of its own.  numba emits
    and caches machine code for every function; for these it was a tenth of the cold compile,
    and nothing ever ran it.  What the library does emit is its environment variable (numba
    writes the function's environment pointer into it when it registers the function), so the
    cache entry holds that small object and the whole function as bitcode for callers to link.
    """

    link_only = False

    def add_ir_module(self, ir_module):
        """Add the module, its container arguments marked (physics/compile/containers.py)."""
        mark_arguments(ir_module, self._codegen._target_data)
        JITCodeLibrary.add_ir_module(self, ir_module)

    def _optimize_final_module(self):
        try:
            if self.link_only:
                manager, builder = self._codegen._module_pass_manager(
                    loop_vectorize=self._codegen._loopvect, slp_vectorize=False,
                    opt=self._codegen._opt_level, cost='cheap')
            else:
                manager, builder = self._codegen._module_pass_manager()
        except (AttributeError, TypeError):  # another numba: its own optimisation
            JITCodeLibrary._optimize_final_module(self)
            return
        with self._recorded_timings.record('Module passes', builder):
            manager.run(self._final_module, builder)

    def _finalize_final_module(self):
        if not self.link_only:
            JITCodeLibrary._finalize_final_module(self)
            return
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        data = self._codegen._create_empty_module(self.name + '.environment')
        null = cgutils.get_null_value(cgutils.voidptr_t)
        for variable in self._final_module.global_variables:
            if variable.name.startswith(_ENVIRONMENT_PREFIX) and not variable.is_declaration:
                copy = llvm_ir.GlobalVariable(data, cgutils.voidptr_t, name=variable.name)
                copy.linkage = 'common'
                copy.initializer = null
        module = llvm.parse_assembly(str(data))
        # numba's object-cache hook finds the library through this attribute (CPUCodeLibrary)
        module._CPUCodeLibrary__library = weakref.proxy(self)
        self._codegen._add_module(module)
        self._codegen._engine.finalize_object()  # the small object the cache stores
        self._finalized = True


#: How numba names a function's environment variable (numba.core.funcdesc, mangled 'NumbaEnv').
_ENVIRONMENT_PREFIX = '_ZN08NumbaEnv'


@register_pass(mutates_CFG=False, analysis_only=True)
class UseEngineLibrary(AnalysisPass):
    """Give the function an :class:`EngineLibrary` before numba lowers it into a library."""

    _name = 'jointsim_engine_library'

    def __init__(self):  # noqa: D107 - numba's pass protocol
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        """Create the library numba's lowering would create, as an EngineLibrary."""
        codegen = state.targetctx.codegen()
        if state.library is None and codegen._library_class is JITCodeLibrary:
            library = EngineLibrary(codegen, state.func_id.func_qualname)
            library.enable_object_caching()
            library.link_only = bool(state.flags.no_cpython_wrapper)
            state.library = library
        return False


@register_pass(mutates_CFG=False, analysis_only=True)
class CheckReturnedContainers(AnalysisPass):
    """Refuse a function that returns a container it built (physics/compile/containers.py)."""

    _name = 'jointsim_check_returned_containers'

    def __init__(self):  # noqa: D107 - numba's pass protocol
        AnalysisPass.__init__(self)

    def run_pass(self, state):
        """Raise numba's TypingError for such a function; change nothing."""
        check_returned_container(state.func_id.func, state.return_type, state.args)
        return False


class EngineCompiler(CompilerBase):
    """numba's default nopython pipeline with the two passes above added."""

    def define_pipelines(self):
        """Return the default nopython pipeline with the passes added."""
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.add_pass_after(CheckReturnedContainers, AnnotateTypes)
        pipeline.add_pass_after(UseEngineLibrary, CheckReturnedContainers)
        pipeline.finalize()
        return [pipeline]


def _flag_values(flags):
    """
    Return ``flags``' option values as a dict, as numba's ``TargetConfig.values`` does.

    numba compares the compile's ``Flags`` with those of each cached overload implementation at
    every typing of a call (``templates._get_impl``): two calls of this per comparison, and
    numba's builds the dict through one property call per option (22).  That was 4-5 % of
    the cold compile's CPU; this is the same dict from the class's defaults and the values set.
    """
    values = dict(_option_defaults(type(flags)))
    values.update(flags._values)
    return values


@functools.lru_cache(maxsize=None)
def _option_defaults(flags_class):
    """Return {option: default} of a TargetConfig class (what its properties return when unset)."""
    return {name: option.default for name, option in flags_class.options.items()}


Flags.values = _flag_values

_OPTIONS = {'cache': True, 'nogil': True, 'pipeline_class': EngineCompiler, '_nrt': False,
            'no_cfunc_wrapper': True}

entry = numba.njit(**_OPTIONS)
jit = numba.njit(no_cpython_wrapper=True, **_OPTIONS)
jit_inline = numba.njit(no_cpython_wrapper=True, forceinline=True, **_OPTIONS)
jit_inline_entry = numba.njit(forceinline=True, **_OPTIONS)
_inline_by_numba = numba.njit(inline='always', **_OPTIONS)


def jit_views(function):
    """Compile ``function`` to be inlined by numba (see the module): it may return containers."""
    setattr(function, INLINED_BY_NUMBA, True)
    return _inline_by_numba(function)
