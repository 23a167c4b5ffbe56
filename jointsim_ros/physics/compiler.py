"""
The engine's numba decorators: no reference counting, and one compiler pass of their own.

Without numba's runtime (NRT, ``_nrt=False``) arrays carry no reference counts: the engine never
allocates in a kernel (its scratch arrays live in ``Work``), and the caller keeps every array
alive for the call.  With it, every copy of one of the engine's namedtuple containers (``Work``
holds about 40 arrays) incremented and decremented the count of each array in it, atomically;
the step kernel makes such copies at about a hundred places, so 60 % of its LLVM IR (8 700 NRT
calls) was that bookkeeping, LLVM spent most of the compile time removing it again, and the
atomic operations that stayed took the arm's step from 23 to 42 us.  A kernel that allocates
no longer compiles ("NRT required but not enabled"), which is the point.

``ForwardArgumentCopies``: numba inlines an ``inline='always'`` helper by assigning each caller
argument to a fresh variable of the helper (``helper.work = work``), each a stack slot the size
of the whole container.  The pass uses the kernel's argument itself where such a copy (or a
copy of a copy) of one is used: an argument is assigned once and never rebound, so the copy
always holds the same value.  It shortens the step kernel's LLVM IR by a third and its compile
by about 10 s; the compiled code runs as fast as without it.

Where the cold compile's time still goes (CPU, 2-core machine): the maximal variant's 37 s are
28 s for the step kernel (lowering and LLVM 14, numba's inlining 7, typing 5, SSA 3) and 9 s
for joint_impulse_on_child, joint_rates and the small helpers; contacts adds the collision code
to its own step (about 60 s); the tree variant (32 s) is some twenty functions of 1-2 s each,
each taking the three tree containers (about 90 arrays, passed as ~800 scalar arguments), and
inlining them all makes one function numba and LLVM take 80 s over.  Per function, numba's cost
grows with the width of the containers it is given (a trivial helper: 0.37 s with one 40-array
namedtuple, 0.09 s with two arrays) and LLVM's superlinearly with a function's size; numba's
inliner deep-copies the callee's whole variable scope once per block, which is quadratic.  What
would take it further: stages and helpers that take the few arrays they use instead of whole
containers, kernels per tree integrator instead of one with all three.
"""
import numba
from numba.core import ir
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import build_definitions, replace_vars
from numba.core.untyped_passes import InlineInlinables


def _argument_aliases(blocks):
    """Map each variable that only copies a function argument to that argument's variable."""
    definitions = {}
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                name = stmt.target.name
                definitions[name] = None if name in definitions else stmt.value
    roots = {name: value for name, value in definitions.items() if isinstance(value, ir.Arg)}
    aliases = {}
    for name, value in definitions.items():
        seen = {name}
        while isinstance(value, ir.Var) and value.name not in roots and value.name not in seen:
            seen.add(value.name)
            value = definitions.get(value.name)
        if isinstance(value, ir.Var) and value.name in roots and value.name != name:
            aliases[name] = value
    return aliases


@register_pass(mutates_CFG=False, analysis_only=False)
class ForwardArgumentCopies(FunctionPass):
    """Use the kernel's arguments in place of the copies inlining makes of them."""

    _name = 'jointsim_forward_argument_copies'

    def __init__(self):  # noqa: D107 - numba's pass protocol
        FunctionPass.__init__(self)

    def run_pass(self, state):
        """Replace every use of an argument's copy by the argument; drop the copies."""
        blocks = state.func_ir.blocks
        aliases = _argument_aliases(blocks)
        if not aliases:
            return False
        for block in blocks.values():
            block.body = [stmt for stmt in block.body
                          if not (isinstance(stmt, ir.Assign) and stmt.target.name in aliases)]
        replace_vars(blocks, aliases)
        state.func_ir._definitions = build_definitions(blocks)
        return True


class EngineCompiler(CompilerBase):
    """numba's default pipeline with ``ForwardArgumentCopies`` right after inlining."""

    def define_pipelines(self):
        """Return the default nopython pipeline with the pass added."""
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.add_pass_after(ForwardArgumentCopies, InlineInlinables)
        pipeline.finalize()
        return [pipeline]


jit = numba.njit(cache=True, nogil=True, pipeline_class=EngineCompiler, _nrt=False)
#: For the step's stages and the helpers they call with the namedtuple containers: inlined in
#: numba's IR, so a call does not pass every array of a container as separate arguments.
jit_inline = numba.njit(cache=True, nogil=True, inline='always', pipeline_class=EngineCompiler,
                        _nrt=False)
