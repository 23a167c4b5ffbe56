"""
Containers whose arrays share one buffer per dtype, so a kernel call passes a few arrays.

numba unboxes every array of a namedtuple argument on each call (about 18 ns each): the tree
step's three containers hold about 90 arrays, which cost more than a third of a 7-DOF arm's step.
:func:`pack` lays a container's arrays out in one float64 and one int64 buffer and returns the
container rebuilt from views into them (Python code keeps reading and writing the same fields),
plus a layout; a kernel rebuilds the container from the buffers and the layout with :func:`view1`,
:func:`view2` and :func:`view3`, so its call unboxes three arrays instead of the container's.
The views are built by hand (``_c_view``): numba's ``reshape`` calls a C helper per view, which
for the tree's 90 arrays cost as much as the unboxing it replaces.

Layout row k (the container's k-th field): offset into its buffer, then the shape (unused
dimensions 0).  A field's dtype chooses its buffer (float64 or int64; nothing else is allowed),
its rank the view function the kernel uses; both are fixed by the code that builds the container,
so a kernel's unpacking is written once per container (physics/tree.py).
"""
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array
import numpy as np

from .math3d import jit_views

_BUFFERS = (np.dtype(np.float64), np.dtype(np.int64))


def pack(container):
    """
    Return (container of views, float64 buffer, int64 buffer, layout) for a namedtuple of arrays.

    The values are copied into the buffers; the views alias them, so writes through either are
    seen by both.  Every field must be a float64 or int64 array of at most three dimensions.
    """
    sizes = [0, 0]
    layout = np.zeros((len(container), 4), dtype=np.int64)
    for k, (name, array) in enumerate(zip(container._fields, container)):
        array = np.asarray(array)
        if array.dtype not in _BUFFERS or array.ndim > 3:
            raise TypeError(f'{type(container).__name__}.{name}: {array.dtype} with '
                            f'{array.ndim} dimensions cannot be packed')
        which = _BUFFERS.index(array.dtype)
        layout[k, 0] = sizes[which]
        layout[k, 1:1 + array.ndim] = array.shape
        sizes[which] += array.size
    buffers = [np.zeros(max(size, 1), dtype=dtype) for size, dtype in zip(sizes, _BUFFERS)]
    views = []
    for k, array in enumerate(container):
        array = np.asarray(array)
        start = layout[k, 0]
        view = buffers[_BUFFERS.index(array.dtype)][start:start + array.size]
        view = view.reshape(array.shape)
        view[...] = array
        views.append(view)
    return type(container)(*views), buffers[0], buffers[1], layout


@intrinsic
def _c_view(typingctx, buffer, start, shape):
    """Return a C-contiguous view of ``buffer[start:]`` with ``shape``; no checks, no copy."""
    ndim = len(shape)
    result = types.Array(buffer.dtype, ndim, 'C')

    def codegen(context, builder, signature, args):
        source = make_array(signature.args[0])(context, builder, args[0])
        out = make_array(result)(context, builder)
        dims = cgutils.unpack_tuple(builder, args[2], ndim)
        stride = source.itemsize
        strides = []
        for dim in reversed(dims):
            strides.insert(0, stride)
            stride = builder.mul(stride, dim)
        populate_array(out, data=builder.gep(source.data, [args[1]]), shape=dims,
                       strides=strides, itemsize=source.itemsize, meminfo=source.meminfo)
        return impl_ret_borrowed(context, builder, result, out._getvalue())

    return result(buffer, start, shape), codegen


@jit_views
def view1(buffer, layout, k):
    """Return the k-th field of a packed container as a 1-D view."""
    return _c_view(buffer, layout[k, 0], (layout[k, 1],))


@jit_views
def view2(buffer, layout, k):
    """Return the k-th field of a packed container as a 2-D view."""
    return _c_view(buffer, layout[k, 0], (layout[k, 1], layout[k, 2]))


@jit_views
def view3(buffer, layout, k):
    """Return the k-th field of a packed container as a 3-D view."""
    return _c_view(buffer, layout[k, 0], (layout[k, 1], layout[k, 2], layout[k, 3]))
