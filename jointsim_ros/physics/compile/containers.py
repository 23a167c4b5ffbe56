"""
The engine's containers reach a kernel by reference: one pointer, not every field of every array.

numba passes a namedtuple by value: a function taking ``Work`` (about 40 arrays) receives every
field of every array as an argument of its own (about 300), rebuilds the tuple from them at its
entry and takes it apart again at every call it makes with it, and each copy of it is a store of
the whole structure.  That plumbing was 46 % of the LLVM IR numba generated for the engine
(extractvalue and insertvalue instructions, 38 MB of IR text for the maximal kernels, where every
instruction spells out the whole structure type), and most of the cold compile was numba
building, printing and parsing it and LLVM optimising it away again.

A class marked with :func:`by_reference` is typed as a :class:`ContainerRef` instead: its value is
a pointer to the tuple's fields in memory, a function receives that one pointer, and reading a
field (the only thing a kernel does with a container, besides passing it on) loads that field.
The memory is written once, where the tuple enters compiled code (unboxing it from Python,
:func:`reference` for one a kernel builds from arrays, or ``unpack`` for one packed into a few
buffers, physics/compile/flat.py), and never after: the containers are immutable, so every function
may treat the pointer as ``noalias`` and read-only, which lets LLVM keep a field in a register
across stores into the arrays, as it did when the fields were arguments (:func:`mark_arguments`,
called by the engine's code library).
A function's symbol names a container type by its class and a digest of its fields' types
(``ContainerRef.mangling_args``) instead of spelling out every field, which made each symbol of
the step's stages about 5 kB long.  With this the maximal kernels' IR is 20 MB, the cold compile
of all kernels about 16 s instead of 23 s on two cores, and the kernels run as fast as before
(docs/benchmarks.md, issue 14).

What this allows and forbids:

- reading a field, passing the container to a function: as for a namedtuple;
- anything else a namedtuple offers (indexing, iteration, ``len``, comparison) does not type
  (test/test_containers.py);
- a function returns a container only if it received one of that type, or if numba inlines it
  (``jit_views``): a container it built would point into a stack frame that is gone
  (:func:`check_returned_container`, run on every engine function after typing).
"""
import hashlib

from llvmlite import ir as llvm_ir
from numba.core import cgutils, types
from numba.core.datamodel import models
from numba.core.errors import TypingError
from numba.core.extending import (infer_getattr, intrinsic, lower_getattr_generic, NativeValue,
                                  register_model, typeof_impl, unbox)
from numba.core.typing.templates import AttributeTemplate

#: The namedtuple classes passed by reference (filled by :func:`by_reference`).
CLASSES = set()

#: Attribute set on a Python function numba inlines (compiler.jit_views).
INLINED_BY_NUMBA = '_jointsim_inlined_by_numba'


class ContainerRef(types.Type):
    """numba type of a container passed by reference: its class and its fields' types."""

    def __init__(self, field_types, cls):
        self.types = tuple(field_types)
        self.fields = tuple(cls._fields)
        self.instance_class = cls
        # the tuple stored behind the pointer
        self.value = types.BaseTuple.from_types(self.types, cls)
        super().__init__(f'&{self.value}')

    @property
    def key(self):
        """Identity: the class and the fields' types."""
        return self.instance_class, self.types

    @property
    def mangling_args(self):
        """Return a short symbol name: the class and a digest of the fields' types."""
        digest = hashlib.sha1(repr(self.types).encode()).hexdigest()[:12]
        return f'{self.instance_class.__name__}Ref{digest}', ()


class ContainerPointer(llvm_ir.types._TypedPointerType):
    """The LLVM type of a :class:`ContainerRef`: a pointer :func:`mark_arguments` recognises."""


@register_model(ContainerRef)
class ContainerModel(models.PrimitiveModel):
    """A pointer to the tuple's value; as a value, an argument and a return alike."""

    def __init__(self, dmm, fe_type):
        pointee = dmm.lookup(fe_type.value).get_value_type()
        super().__init__(dmm, fe_type, ContainerPointer(pointee))


def by_reference(cls):
    """Class decorator: pass this namedtuple class of arrays to kernels by reference."""
    CLASSES.add(cls)
    typeof_impl.register(cls)(_typeof_container)
    return cls


def _typeof_container(value, context):
    field_types = [typeof_impl(field, context) for field in value]
    if any(t is None for t in field_types):
        return None
    return ContainerRef(field_types, type(value))


@infer_getattr
class ContainerAttributes(AttributeTemplate):
    """Typing of ``container.field``."""

    key = ContainerRef

    def generic_resolve(self, ref, attr):
        """Return the field's type, or None (not an attribute) for any other name."""
        if attr in ref.fields:
            return ref.types[ref.fields.index(attr)]
        return None


@lower_getattr_generic(ContainerRef)
def container_getattr(context, builder, typ, value, attr):
    """Load ``container.field`` from the fields the pointer points to."""
    return builder.load(cgutils.gep_inbounds(builder, value, 0, typ.fields.index(attr)))


def _store(builder, value):
    """Return a pointer to a stack slot in the function's entry block holding ``value``."""
    slot = cgutils.alloca_once(builder, value.type)
    builder.store(value, slot)
    return slot


@unbox(ContainerRef)
def unbox_container(typ, obj, c):
    """
    Unbox a container from Python field by field into the memory its pointer points to.

    An array field is written there by numba's own array adaptor, as numba's array unboxing does
    (without its copy through a stack slot of its own and its branch per array): the step takes
    about 170 arrays.  The dispatcher chose this compiled function because the arguments' types
    are this signature's, so no array can have another dtype or rank.
    """
    if c.context.enable_nrt:
        raise TypingError('containers passed by reference are for kernels compiled without '
                          "numba's reference counting (_nrt=False, physics/compile/compiler.py)")
    builder = c.builder
    fields = cgutils.alloca_once(builder, c.context.get_value_type(typ.value))
    failed = cgutils.false_bit
    cleanups = []
    for i, field_type in enumerate(typ.types):
        item = c.pyapi.tuple_getitem(obj, i)
        target = cgutils.gep_inbounds(builder, fields, 0, i)
        if isinstance(field_type, types.Array):
            status = c.pyapi.numba_array_adaptor(item, builder.bitcast(target, c.pyapi.voidptr))
            failed = builder.or_(failed, cgutils.is_not_null(builder, status))
            continue
        native = c.unbox(field_type, item)
        builder.store(native.value, target)
        failed = builder.or_(failed, native.is_error)
        if native.cleanup is not None:
            cleanups.append(native.cleanup)

    def cleanup():
        for release in reversed(cleanups):
            release()

    return NativeValue(fields, is_error=failed, cleanup=cleanup if cleanups else None)


@intrinsic
def reference(typingctx, value):
    """Pass a container that a kernel builds from its fields by reference, as the others."""
    if not (isinstance(value, types.BaseNamedTuple) and value.instance_class in CLASSES):
        return None
    result = ContainerRef(tuple(value), value.instance_class)

    def codegen(context, builder, signature, args):
        return _store(builder, args[0])

    return result(value), codegen


def check_returned_container(function, return_type, arg_types):
    """
    Refuse a function returning a container it built, unless numba inlines it (see the module).

    Raises:
        TypingError: naming the function and what to do instead.
    """
    if (isinstance(return_type, ContainerRef) and return_type not in arg_types
            and not getattr(function, INLINED_BY_NUMBA, False)):
        raise TypingError(
            f'{function.__qualname__} returns a {return_type.instance_class.__name__} it built: '
            f'passed by reference, it would point into a stack frame that is gone; decorate it '
            f'with jit_views (inlined by numba) or return the arrays')


def mark_arguments(ir_module, target_data):
    """
    Mark the module's functions' container arguments read-only, noalias and dereferenceable.

    Nothing writes a container's fields after they are stored (see the module), so no store in
    a function can change them: LLVM may keep a field loaded once in a register.
    """
    for function in ir_module.functions:
        for arg in function.args:
            pointer = arg.type
            if not isinstance(pointer, ContainerPointer):
                continue
            size = getattr(pointer, 'size', None)
            if size is None:
                size = pointer.size = pointer.pointee.get_abi_size(target_data)
            arg.add_attribute('noalias')
            arg.add_attribute('captures(none)')
            arg.add_attribute('nonnull')
            set.add(arg.attributes, 'readonly')  # an LLVM attribute llvmlite does not list
            arg.attributes.dereferenceable = size
            arg.attributes.align = 8
