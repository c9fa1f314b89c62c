"""What the frontend knows about a Python value while it reads a kernel (an abstract value).

The frontend never runs the kernel: protocol.py interprets its kernel IR and tracks, for every
local name, one of the values below. Only what the Pipe IR needs is tracked precisely (pipes, handles, affine integers,
slots); everything else is :class:`Data`, which remembers at most which slot fields or shared
buffers it is a view of (for the slot accesses of the IR and ``mma`` detection) and, when it is a
pure function of params and constants, a canonical key (so it can become a symbolic param).

Integers carry whether Triton computes them at run time (``runtime``): loop variables of
``range``/``tl.range``, runtime kernel arguments and what is computed from them are runtime
integers, on which ``//`` and ``%`` are C's (truncating) operations; constexprs and literals are
Python ints, with Python's floor semantics.

Kernel-level values also appear in :class:`~tle_compiler.frontend.kernel.PartitionInfo`
``bindings`` (a partition parameter's value): :class:`KernelArg`, :class:`PipeRef`,
:class:`WriterRef`, :class:`ReaderRef`, :class:`Aff`, :class:`Sym`, :class:`BufferRef`,
:class:`Data`.
"""

from __future__ import annotations

from dataclasses import field
from typing import Optional, Union

from ..ir.expr import Affine
from ..ir.nodes import Loc
from ..ir.record import record
from ..language.gpu import SharedBuffer
from ..language.pipe import PipeDecl


class Value:
    """Base class of abstract values."""


#: In a runtime integer's ``wide`` set: it went through ``.to(tl.int64)`` (or Triton's promotion
#: beside such a value), so the GPU computes it in i64. The set's other members are the params
#: that an affine sum or product cancelled from it (``N + 0 * B``): each may be an i64 argument,
#: which makes the GPU compute the value in i64 though the affine form no longer names it. An
#: empty set: i32. Operators applied to values of different widths are different values (their
#: results wrap at different widths), so the frontend keys them apart.
I64 = "i64"


@record
class Aff(Value):
    """An integer affine in loop variables and params (IR names); ``runtime``: Triton computes it
    at run time (C semantics for ``//`` and ``%``), not as a constexpr. ``wide``: why the GPU
    may compute it in i64 rather than i32 (see :data:`I64`)."""

    expr: Affine
    runtime: bool = field(default=False, compare=False)
    wide: frozenset[str] = frozenset()


@record
class KernelArg(Value):
    """A kernel argument; in an index, bound or condition it is the param ``param``."""

    name: str
    param: str
    constexpr: bool = False


@record
class Sym(Value):
    """A kernel-level variable assigned a non-affine value (``NK = tl.cdiv(TOPK, BK)``), or a pure
    non-affine expression of params inside a partition; an opaque param ``param`` when used."""

    name: str
    param: str
    text: str
    runtime: bool = field(default=True, compare=False)


@record
class Data(Value):
    """Anything else: tensors, pointers, floats. ``fields``: the (pipe, field) reader views this is a
    view of (through ``local_ptr``/``load``/``trans``/...), for mma detection; ``key``: canonical
    text when this is a pure function of params and constants; ``hint``: a name for the param it
    would become; ``why``: why it is not affine (for error messages); ``node``: the expression it
    came from; ``runtime``: a keyed integer Triton computes at run time.

    Shared-memory views: ``view`` says what this is of the ``slots`` (slot fields) and ``buffers``
    (free ``tle.gpu.alloc`` buffers of the kernel, by name) it views: "buffer" (``slot.f``
    itself), "pointer" (``local_ptr(slot.f)`` and pointers computed from it) or "loaded" (a tile
    loaded from one, or ``tl.trans`` of it: in registers, except that a matrix multiply reads it
    from shared memory where it is used). ``lost``: why the slot of a view depends on the path
    taken (it was assigned in a loop, or differently in an if's branches); an access through it
    is an error. ``unmodelled``: an integer cast the verifier does not model
    (``N.to(tl.int8)``): it stays data at kernel level, so events that depend on it are refused
    with ``why`` rather than checked against a free param. ``partial``: why a store through this
    pointer may leave part of what it views unwritten (``tl.where`` chose it per element), so
    the store is a write that may not run (``Access.may``), which fills no field.
    ``floating``: a float kernel argument."""

    node: object = field(default=None, compare=False, repr=False)  # a KIR expression
    fields: frozenset[tuple[str, str]] = frozenset()
    key: Optional[str] = None
    hint: Optional[str] = None
    why: Optional[str] = field(default=None, compare=False)
    runtime: bool = field(default=False, compare=False)
    view: Optional[str] = None
    slots: frozenset["SlotField"] = frozenset()
    buffers: frozenset[str] = frozenset()
    lost: Optional[str] = None
    unmodelled: bool = field(default=False, compare=False)
    partial: Optional[str] = None
    wide: frozenset[str] = frozenset()
    floating: bool = field(default=False, compare=False)
    #: ``res.is_closed`` (or ``not res.is_closed``, ``flag_negated``): the slot of the wait
    #: whose closed flag this is; compared, so that two paths holding different flags merge
    #: into a value that is neither
    closed_of: Optional["SlotV"] = None
    flag_negated: bool = False

    @property
    def shared(self) -> bool:
        """Whether this is a view of shared memory (a slot field or a free buffer)."""
        return self.view is not None and bool(self.slots or self.buffers or self.lost)


@record
class Poison(Value):
    """A name whose value depends on the path taken (assigned in a loop or one branch of an if).
    ``slot``: it held a slot (or a wait result) on some path, so an access through it cannot
    tell which slot it touches."""

    name: str
    reason: str
    slot: bool = False


@record
class Const(Value):
    """A Python literal that is not an int: str, bool, float, None."""

    value: object


@record
class TupleV(Value):
    items: tuple[Value, ...]


@record
class PipeRef(Value):
    decl: PipeDecl

    @property
    def name(self) -> str:
        return self.decl.name


@record
class WriterRef(Value):
    pipe: str


@record
class ReaderRef(Value):
    pipe: str
    reader: Optional[str]
    fields: Optional[tuple[str, ...]] = None


@record
class SlotV(Value):
    """A slot handed out by ``acquire(index)`` (role "writer") or by reader ``reader``'s
    ``wait(index)`` (role "reader"; ``reader`` None on an SPSC pipe). ``index`` is the event's
    index (affine in loop variables and params), so slots of different iterations differ."""

    pipe: str
    fields: tuple[str, ...]
    role: str
    index: Affine = Affine()
    reader: Optional[str] = None


@record
class SlotField:
    """Field ``field`` of slot ``slot``: what a slot access touches."""

    slot: SlotV
    field: str


@record
class WaitV(Value):
    """``res = r.wait(i)``: ``res.slot``, ``res.is_closed``."""

    slot: SlotV


@record
class BufferRef(Value):
    """A ``tle.gpu.alloc`` buffer (``var``: the kernel-level variable holding it, if any; ``site``:
    the ``tle.gpu.alloc`` call that made it, which tells two buffers of one shape apart)."""

    buf: SharedBuffer
    var: Optional[str] = None
    site: Optional[Loc] = None


HANDLES = (PipeRef, WriterRef, ReaderRef)
KernelValue = Union[KernelArg, PipeRef, WriterRef, ReaderRef, Aff, Sym, BufferRef, Data, Const,
                    TupleV]
