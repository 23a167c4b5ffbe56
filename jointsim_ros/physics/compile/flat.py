"""
Containers whose arrays share one buffer per dtype, so a kernel call passes a few arrays.

numba unboxes every array of a namedtuple argument on each call (about 18 ns each): the tree
step's containers hold about 290 arrays, whose unboxing alone would cost more than a 7-DOF arm's
step.  :func:`pack` lays a container's arrays out in one float64 and one int64 buffer
(:func:`pack_together` several containers, and bool arrays in a third buffer) and returns the
container rebuilt from views into them (Python code keeps reading and writing the same fields),
plus a layout; a kernel rebuilds the container from the buffers and the layout with
:func:`unpack`, so its call unboxes a few arrays instead of the container's.  The views are built
by hand (``_c_view``): numba's ``reshape`` calls a C helper per view, which for the tree's 90
arrays cost as much as the unboxing it replaces.  Building them still writes every view's array
structure at every call (about 1 us for the tree's 290): :func:`keep_views` writes them once
into an array the engine owns (:func:`view_slots`), and a kernel that only reads them takes that
array alone (:func:`bound_view`): the tree binds its buffers once and steps on the kept views.
A container that is not packed can be kept too (:func:`keep_container`: the maximal step's, whose
about 190 arrays cost about 1 us of unboxing per call): its class's field types are recorded
once (:func:`bind_types`) so that :func:`bound_view` can type it.

Layout row k (the container's k-th field): offset into its buffer, then the shape (unused
dimensions 0).  A field's dtype chooses its buffer (float64, int64 or, with
:func:`pack_together`, bool; nothing else is allowed);
which buffer and rank each field has is fixed by the code that builds the container, and
declared once per container class for :func:`unpack` (:func:`declare`, physics/tree.py).
"""
from numba import typeof, types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np import numpy_support
from numba.np.arrayobj import make_array, populate_array
import numpy as np

from .compiler import jit
from .containers import ContainerRef

#: The buffers' dtypes, in the order of their source numbers (``f``, ``i``, ``b``).
_BUFFERS = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_))
#: The most dimensions a field may have.
MAX_DIMS = 4


def pack(container):
    """
    Return (container of views, float64 buffer, int64 buffer, layout) for a namedtuple of arrays.

    The values are copied into the buffers; the views alias them, so writes through either are
    seen by both.  Every field must be a float64 or int64 array of at most four dimensions.
    """
    (views,), buffers, layout = pack_together([container], dtypes=2)
    return views, buffers[0], buffers[1], layout


def pack_together(containers, dtypes=3, declare_classes=False):
    """
    Pack several containers into one float64, one int64 and one bool buffer with one layout.

    Returns (containers of views, (float64, int64, bool buffers), layout).  The layout's rows
    are the containers' fields in order (the second container's first field follows the first
    container's last).  A field that lies inside an earlier field's memory (a reshaped view of
    it, say) stays a view of that field's place in the buffer, so the aliasing survives the
    packing.  ``dtypes``: how many of the buffers' dtypes are allowed (2: no bool fields).
    With ``declare_classes`` each container's class is declared for :func:`unpack` with
    sources 0, 1, 2 the three (buffer, layout) pairs; a class declared otherwise before is
    refused (its kernels would read the wrong rows).
    """
    allowed = _BUFFERS[:dtypes]
    n_fields = sum(len(c) for c in containers)
    layout = np.zeros((max(n_fields, 1), 1 + MAX_DIMS), dtype=np.int64)
    sizes = [0] * len(_BUFFERS)
    placed = []     # (array, buffer, offset) of the fields with a place of their own
    fields = []     # (row, array, buffer) of every field
    specs = []
    row = 0
    for container in containers:
        spec = []
        for name, array in zip(container._fields, container):
            array = np.asarray(array)
            if array.dtype not in allowed or array.ndim > MAX_DIMS or \
                    not array.flags.c_contiguous:
                raise TypeError(f'{type(container).__name__}.{name}: {array.dtype} with '
                                f'{array.ndim} dimensions cannot be packed')
            which = _BUFFERS.index(array.dtype)
            layout[row, 1:1 + array.ndim] = array.shape
            home = _inside(array, which, placed, f'{type(container).__name__}.{name}')
            if home is None:
                home = sizes[which]
                sizes[which] += array.size
                placed.append((array, which, home))
            layout[row, 0] = home
            fields.append((row, array, which))
            spec.append((which, row, array.ndim))
            row += 1
        specs.append(spec)
    buffers = [np.zeros(max(size, 1), dtype=dtype) for size, dtype in zip(sizes, _BUFFERS)]
    for array, which, start in placed:
        buffers[which][start:start + array.size] = array.reshape(-1)
    views = iter([buffers[which][layout[row, 0]:layout[row, 0] + array.size].reshape(array.shape)
                  for row, array, which in fields])
    packed = [type(container)(*[next(views) for _ in container]) for container in containers]
    if declare_classes:
        for container, spec in zip(containers, specs):
            cls = type(container)
            if cls in DECLARED and DECLARED[cls] != tuple(spec):
                raise ValueError(f'{cls.__name__} is declared with another layout')
            declare(cls, spec)
    return packed, tuple(buffers[:dtypes]), layout


def _inside(array, which, placed, name):
    """Return the buffer offset of ``array`` if it lies in a placed field's memory, else None."""
    if array.size == 0:
        return None
    start = array.ctypes.data
    for other, other_which, offset in placed:
        if other.size == 0 or not np.shares_memory(array, other):
            continue
        inside = other_which == which and other.ctypes.data <= start and \
            start + array.nbytes <= other.ctypes.data + other.nbytes and \
            (start - other.ctypes.data) % array.itemsize == 0
        if not inside:
            raise TypeError(f'{name} overlaps an earlier field without lying inside it')
        return offset + (start - other.ctypes.data) // array.itemsize
    return None


#: How :func:`unpack` rebuilds each container class (filled by :func:`declare`).
DECLARED = {}
#: Each declared class's fields' dtypes (:func:`bound_view`).
DTYPES = {}
#: The numba types of the fields of each class :func:`keep_container` binds unpacked
#: (:func:`bind_types`).
BOUND_TYPES = {}


def declare(cls, fields, dtypes=None):
    """
    Say how kernels rebuild the packed containers of ``cls`` with :func:`unpack`.

    Args:
        cls: a namedtuple class passed by reference (physics/compile/containers.py).
        fields: for each of its fields in order, (source, layout row, dimensions): the field is
            a C-contiguous view into the ``source``-th buffer of the sources ``unpack`` gets,
            where that buffer's layout's row says.
        dtypes: each field's numpy dtype, when :func:`bound_view` is to read the container
            without its buffers; None: each source's place in float64, int64, bool.
    """
    fields = tuple((int(source), int(row), int(ndim)) for source, row, ndim in fields)
    if len(fields) != len(cls._fields) or any(not 1 <= ndim <= MAX_DIMS for _, _, ndim in fields):
        raise ValueError(f'{cls.__name__}: one (source, row, 1..{MAX_DIMS} dimensions) per field')
    if dtypes is None and all(source < len(_BUFFERS) for source, _, _ in fields):
        dtypes = [_BUFFERS[source] for source, _, _ in fields]
    DECLARED[cls] = fields
    if dtypes is not None:
        DTYPES[cls] = tuple(np.dtype(d) for d in dtypes)


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
    result = _declared_ref(cls, sources)
    if result is None:
        return None

    def codegen(context, builder, signature, args):
        fields = cgutils.alloca_once(builder, context.get_value_type(result.value))
        _write_views(context, builder, signature.args[1], args[1], result, fields)
        return fields

    return result(cls, sources), codegen


@intrinsic
def keep_views(typingctx, cls, sources, cache, start, end):
    """
    Write the views of a container of ``cls`` packed by :func:`pack` into ``cache[start:end]``.

    Building a container's views writes every field's array structure (about 100 bytes each):
    for the tree step's 290 fields that was about 1 us of every call.  Here they are written once
    into the slot ``cache[start:end]`` (int64 words, the first a flag, set to 1 here;
    :func:`view_slots` lays the slots out), and :func:`bound_view` reads them from there at every
    later call.  The views point into the buffers, which never move while their owner keeps them,
    so they stay valid: whoever hands the kernels other buffers zeroes the flags
    (:func:`clear_views`) and keeps their views again (kernels run without numba's reference
    counting, so a view's meminfo is never read).  Returns False, writing nothing, when the slot
    is too small for the container.
    """
    result = _declared_ref(cls, sources)
    if result is None or not isinstance(cache, types.Array) or cache.dtype != types.int64 \
            or cache.ndim != 1 or not isinstance(start, types.Integer) \
            or not isinstance(end, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        def write(kept):
            _write_views(context, builder, signature.args[1], args[1], result, kept)
        return _into_slot(context, builder, result, signature.args[2:], args[2:], write)

    return types.boolean(cls, sources, cache, start, end), codegen


def _into_slot(context, builder, result, slot_types, slot_args, write):
    """
    Write a container of ``result``'s type into ``cache[start:end]`` if it fits; return fits.

    ``slot_args``: (cache, start, end) and their types.  ``write(pointer)`` writes the fields
    where the pointer points; then the slot's flag is set to 1.
    """
    struct = context.get_value_type(result.value)
    words = (context.get_abi_sizeof(struct) + 7) // 8
    array = make_array(slot_types[0])(context, builder, slot_args[0])
    first = context.cast(builder, slot_args[1], slot_types[1], types.intp)
    last = context.cast(builder, slot_args[2], slot_types[2], types.intp)
    fits = builder.and_(
        builder.icmp_signed('>=', first, context.get_constant(types.intp, 0)),
        builder.and_(builder.icmp_signed('<=', builder.add(first, context.get_constant(
            types.intp, words + 1)), last), builder.icmp_signed(
                '<=', last, builder.extract_value(array.shape, 0))))
    with builder.if_then(fits, likely=True):
        flag = builder.gep(array.data, [first])
        write(builder.bitcast(builder.gep(flag, [context.get_constant(types.intp, 1)]),
                              struct.as_pointer()))
        builder.store(context.get_constant(types.int64, 1), flag)
    return fits


@intrinsic
def bound_view(typingctx, cls, cache, start, end):
    """
    Return the container of ``cls`` whose views :func:`keep_views` kept in ``cache[start:end]``.

    No buffers: a kernel that only reads containers bound before (by a call of another kernel
    that unpacked them into the same slots) takes this one array instead of their buffers and
    layouts.  The slot must hold the views (:func:`views_bound`): this reads what is there.
    """
    if not isinstance(cls, types.NamedTupleClass) or not isinstance(cache, types.Array) \
            or cache.dtype != types.int64 or cache.ndim != 1:
        return None
    field_types = _bound_field_types(cls.instance_class)
    if field_types is None:
        return None
    result = ContainerRef(field_types, cls.instance_class)

    def codegen(context, builder, signature, args):
        struct = context.get_value_type(result.value)
        array = make_array(signature.args[1])(context, builder, args[1])
        first = context.cast(builder, args[2], signature.args[2], types.intp)
        slot = builder.gep(array.data, [builder.add(first, context.get_constant(types.intp, 1))])
        return builder.bitcast(slot, struct.as_pointer())

    return result(cls, cache, start, end), codegen


@intrinsic
def keep_container(typingctx, container, cache, start, end):
    """
    Write a container a kernel received (by reference) into ``cache[start:end]``.

    :func:`keep_views` for containers that are not packed: the arrays' structures numba built
    when it unboxed them at this call are copied into the slot (flag set to 1), and
    :func:`bound_view` reads them at later calls, which then unbox nothing.  The arrays must
    outlive the slot: their owner keeps them, and zeroes the flags (:func:`clear_views`) when it
    hands the kernels other arrays.  The class's field types must be :func:`bind_types`' (a
    container of other types is refused at typing).  Returns False, writing nothing, when the
    slot is too small.
    """
    if not isinstance(container, ContainerRef) or not isinstance(cache, types.Array) \
            or cache.dtype != types.int64 or cache.ndim != 1 \
            or not isinstance(start, types.Integer) or not isinstance(end, types.Integer) \
            or BOUND_TYPES.get(container.instance_class) != container.types:
        return None

    def codegen(context, builder, signature, args):
        def write(kept):
            builder.store(builder.load(args[0]), kept)
        return _into_slot(context, builder, container, signature.args[1:], args[1:], write)

    return types.boolean(container, cache, start, end), codegen


def bind_types(container):
    """
    Record the field types of ``container``'s class for :func:`keep_container` and return them.

    Every container of a class must type alike (the kernels read the slots with these types):
    a class recorded, or declared, with other types is refused.
    """
    cls = type(container)
    field_types = typeof(container).types
    known = BOUND_TYPES.get(cls) or (_declared_field_types(cls) if cls in DTYPES else None)
    if known is not None and tuple(known) != field_types:
        raise TypeError(f'{cls.__name__}: its fields type as {field_types}, bound before as '
                        f'{tuple(known)}')
    BOUND_TYPES[cls] = field_types
    return field_types


def _declared_field_types(cls):
    """Return the array types of a class declared with dtypes (:func:`declare`)."""
    return tuple(types.Array(numpy_support.from_dtype(dtype), ndim, 'C')
                 for dtype, (_, _, ndim) in zip(DTYPES[cls], DECLARED[cls]))


def _bound_field_types(cls):
    """Return the field types :func:`bound_view` gives ``cls``, or None if none are known."""
    if cls in BOUND_TYPES:
        return BOUND_TYPES[cls]
    if cls in DTYPES:
        return _declared_field_types(cls)
    return None


@jit
def slots_bound(views):
    """Return True when every slot of a :func:`view_slots` cache holds its views (in kernels)."""
    for k in range(0, views[0], 2):
        if views[views[k]] == 0:
            return False
    return True


def views_bound(cache):
    """Return True when every slot of a :func:`view_slots` cache holds its views."""
    return bool(np.all(cache[cache[0:cache[0]:2]] != 0))


def view_slots(classes):
    """
    Return the int64 cache for :func:`keep_views` of these classes, one slot each.

    Each class declared with dtypes (:func:`declare`) or bound (:func:`bind_types`).

    Words 0 .. 2 n - 1 hold each slot's (start, end); the slots follow, side by side, each a
    flag (0: no views kept) and room for the container's views: numba's array structure is
    five words and two per dimension.  :func:`clear_views` zeroes the flags.
    """
    bounds = []
    at = 2 * len(classes)
    for cls in classes:
        words = 1 + sum(5 + 2 * t.ndim for t in _bound_field_types(cls))
        bounds.append((at, at + words))
        at += words
    cache = np.zeros(at, dtype=np.int64)
    cache[:2 * len(classes)] = np.ravel(bounds)
    return cache


def clear_views(cache):
    """Zero every slot's flag of a :func:`view_slots` cache (its views are to be kept again)."""
    for n in range(0, int(cache[0]), 2):
        cache[cache[n]] = 0


def _declared_ref(cls, sources):
    """Return the ContainerRef of a declared class rebuilt from ``sources``, else None."""
    if not isinstance(cls, types.NamedTupleClass) or cls.instance_class not in DECLARED:
        return None
    spec = DECLARED[cls.instance_class]
    if any(source >= len(sources) for source, _, _ in spec):
        return None
    field_types = [types.Array(sources[source][0].dtype, ndim, 'C') for source, _, ndim in spec]
    return ContainerRef(field_types, cls.instance_class)


def _write_views(context, builder, sources_type, sources, result, fields):
    """Write the views of ``result``'s declared fields into the tuple ``fields`` points to."""
    spec = DECLARED[result.instance_class]
    pairs = []
    for k, (buffer_type, layout_type) in enumerate(sources_type):
        pair = builder.extract_value(sources, k)
        layout = make_array(layout_type)(context, builder, builder.extract_value(pair, 1))
        pairs.append((make_array(buffer_type)(context, builder, builder.extract_value(pair, 0)),
                      layout, cgutils.unpack_tuple(builder, layout.shape),
                      cgutils.unpack_tuple(builder, layout.strides), layout_type.layout))
    for k, ((source, row, ndim), field_type) in enumerate(zip(spec, result.types)):
        buffer, layout, shape, strides, order = pairs[source]

        def entry(column):
            return builder.load(cgutils.get_item_pointer2(
                context, builder, layout.data, shape, strides, order,
                [context.get_constant(types.intp, row),
                 context.get_constant(types.intp, column)]))

        view = _c_view(context, builder, buffer, entry(0),
                       [entry(column) for column in range(1, ndim + 1)], field_type)
        builder.store(view, cgutils.gep_inbounds(builder, fields, 0, k))


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
