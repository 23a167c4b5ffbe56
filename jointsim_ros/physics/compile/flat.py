"""
Containers whose arrays share one buffer per dtype, so a kernel call passes a few arrays.

numba unboxes every array of a namedtuple argument on each call (about 18 ns each): the tree
step's three containers hold about 90 arrays, which cost more than a third of a 7-DOF arm's step.
:func:`pack` lays a container's arrays out in one float64 and one int64 buffer and returns the
container rebuilt from views into them (Python code keeps reading and writing the same fields),
plus a layout; a kernel rebuilds the container from the buffers and the layout with
:func:`unpack`, so its call unboxes three arrays instead of the container's.  The views are built
by hand (``_c_view``): numba's ``reshape`` calls a C helper per view, which for the tree's 90
arrays cost as much as the unboxing it replaces.

Layout row k (the container's k-th field): offset into its buffer, then the shape (unused
dimensions 0).  A field's dtype chooses its buffer (float64 or int64; nothing else is allowed);
which buffer and rank each field has is fixed by the code that builds the container, and
declared once per container class for :func:`unpack` (:func:`declare`, physics/tree.py).
"""
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array
import numpy as np

from .containers import ContainerRef

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


#: How :func:`unpack` rebuilds each container class (filled by :func:`declare`).
DECLARED = {}


def declare(cls, fields):
    """
    Say how kernels rebuild the packed containers of ``cls`` with :func:`unpack`.

    Args:
        cls: a namedtuple class passed by reference (physics/compile/containers.py).
        fields: for each of its fields in order, (source, layout row, dimensions): the field is
            a C-contiguous view into the ``source``-th buffer of the sources ``unpack`` gets,
            where that buffer's layout's row says.
    """
    fields = tuple((int(source), int(row), int(ndim)) for source, row, ndim in fields)
    if len(fields) != len(cls._fields) or any(not 1 <= ndim <= 3 for _, _, ndim in fields):
        raise ValueError(f'{cls.__name__}: one (source, row, 1..3 dimensions) per field')
    DECLARED[cls] = fields


def in_order(kinds):
    """
    Return :func:`declare`'s fields of a container packed alone: field k in layout row k.

    ``kinds``: one word per field, ``f`` (float64 buffer, source 0) or ``i`` (int64, source 1)
    followed by the dimensions, e.g. ``'f1 f2 i1'``.
    """
    return [('fi'.index(kind[0]), row, int(kind[1:])) for row, kind in enumerate(kinds.split())]


@intrinsic
def unpack(typingctx, cls, sources):
    """
    Rebuild a container of ``cls`` packed by :func:`pack`: views into the sources' buffers.

    ``sources``: a tuple of (buffer, layout) pairs, as :func:`declare` numbers them.  The
    container is passed by reference (physics/compile/containers.py): its fields are written once,
    here, into the calling function's frame, so it lives as long as that call.  One intrinsic for
    the whole container: building it from a numba function per view (inlined by numba) was 2 MB of
    LLVM IR for the tree's three containers, a third of the tree kernel's compile.
    """
    if not isinstance(cls, types.NamedTupleClass) or cls.instance_class not in DECLARED:
        return None
    spec = DECLARED[cls.instance_class]
    if any(source >= len(sources) for source, _, _ in spec):
        return None
    field_types = [types.Array(sources[source][0].dtype, ndim, 'C') for source, _, ndim in spec]
    result = ContainerRef(field_types, cls.instance_class)

    def codegen(context, builder, signature, args):
        pairs = []
        for k, (buffer_type, layout_type) in enumerate(signature.args[1]):
            pair = builder.extract_value(args[1], k)
            layout = make_array(layout_type)(context, builder, builder.extract_value(pair, 1))
            pairs.append((make_array(buffer_type)(context, builder,
                                                  builder.extract_value(pair, 0)),
                          layout, cgutils.unpack_tuple(builder, layout.shape),
                          cgutils.unpack_tuple(builder, layout.strides), layout_type.layout))
        fields = cgutils.alloca_once(builder, context.get_value_type(result.value))
        for k, ((source, row, ndim), field_type) in enumerate(zip(spec, field_types)):
            buffer, layout, shape, strides, order = pairs[source]

            def entry(column):
                return builder.load(cgutils.get_item_pointer2(
                    context, builder, layout.data, shape, strides, order,
                    [context.get_constant(types.intp, row),
                     context.get_constant(types.intp, column)]))

            view = _c_view(context, builder, buffer, entry(0),
                           [entry(column) for column in range(1, ndim + 1)], field_type)
            builder.store(view, cgutils.gep_inbounds(builder, fields, 0, k))
        return fields

    return result(cls, sources), codegen


def _c_view(context, builder, source, start, dims, result):
    """Return a C-contiguous view of ``source[start:]`` with ``dims``; no checks, no copy."""
    out = make_array(result)(context, builder)
    stride = source.itemsize
    strides = []
    for dim in reversed(dims):
        strides.insert(0, stride)
        stride = builder.mul(stride, dim)
    populate_array(out, data=builder.gep(source.data, [start]), shape=dims, strides=strides,
                   itemsize=source.itemsize, meminfo=source.meminfo)
    return out._getvalue()
