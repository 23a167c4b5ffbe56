"""
A monotonic wall clock callable from nopython code (for the solver's time budget).

``clock_gettime(CLOCK_MONOTONIC)`` is declared as an external symbol in the generated LLVM
module, so the compiled functions stay cacheable (a ctypes pointer would not be).
"""
from llvmlite import ir
import numba
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_CLOCK_MONOTONIC = 1


@intrinsic
def _clock_gettime(typingctx, buf):
    """Fill buf (int64[2]) with (seconds, nanoseconds) of CLOCK_MONOTONIC; return seconds."""
    sig = types.float64(buf)

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), i8p])
        fn = cgutils.get_or_insert_function(builder.module, fnty, 'clock_gettime')
        builder.call(fn, [ir.Constant(ir.IntType(32), _CLOCK_MONOTONIC),
                          builder.bitcast(arr.data, i8p)])
        sec = builder.sitofp(builder.load(arr.data), ir.DoubleType())
        nsec_ptr = builder.gep(arr.data, [ir.Constant(ir.IntType(64), 1)])
        nsec = builder.sitofp(builder.load(nsec_ptr), ir.DoubleType())
        return builder.fadd(sec, builder.fmul(nsec, ir.Constant(ir.DoubleType(), 1e-9)))

    return sig, codegen


@numba.njit(cache=True, nogil=True)
def monotonic(buf):
    """Seconds of CLOCK_MONOTONIC (same clock as time.monotonic); buf is a scratch int64[2]."""
    return _clock_gettime(buf)
