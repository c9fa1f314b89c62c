"""The kernel IR (KIR): a whole ``@tle.jit`` kernel as the frontend read it, once.

The Pipe IR (nodes.py) is the protocol only; the KIR is everything the lowering needs, resolved:
the kernel's params with their kinds, module constants by value, pipes and free buffers with their
shapes and dtypes, the kernel prologue, and each partition's body with helpers inlined (from any
module: imports are resolved by the frontend), every name bound, every module path canonical, every
pipe verb an :class:`Event` that names its pipe, reader and index. The frontend builds it in the
same walk that builds the Pipe IR, so the two never disagree; the lowering reads only the KIR.

Expressions are trees (``q_row + offs_h[:, None] * stride``), statements are structured (``For``,
``If``, ``Assign``, ``Eval``, ``While`` (without pipe events) and ``Return``), every node carries
its source location. Tile operations are
:class:`Op` nodes named by their canonical path (``tl.load``, ``tl.dot``, ``tle.gpu.local_ptr``,
``tl.where``, ...; :data:`OPS` lists them with what they are); the text form (kernel_text.py)
prints them as calls, and parses them back.

=========================  =============================================================
node                       meaning
=========================  =============================================================
Const(value)               a Python constant (int, float, bool, str, None)
Name(id)                   a local value of the function (inlined helpers' locals renamed)
Global(id, value)          a module constant (``BK = tl.constexpr(64)``), by value
DType(name)                a dtype, by triton's short name (``tl.bfloat16`` -> "bf16")
BinOp / UnaryOp / Compare  arithmetic and comparisons (Python operators, Triton semantics)
BoolOp                     ``and`` / ``or`` of scalars
TupleExpr                  a tuple or list
Subscript(value, index)    ``x[:, None]`` (index entries: ":" or None) or ``t[i]`` (a Const)
Op(name, args, kwargs)     a tile or scalar operation (``tl.load(p, mask=m)``, ``x.to(dt)`` is
                           ``Op("to", (x, dt))``)
PipeRef / Handle           a pipe, its writer, or one of its readers (compile-time values)
BufferRef(name)            a free shared-memory buffer of the kernel
Event(verb, handle, index) ``w.acquire(i)``, ``r.wait(i)``, ... (``index``: an expression)
SlotField(slot, field)     ``slot.kv_l`` / ``res.slot.kv_l``: a shared-memory tile of the slot
ResultSlot / IsClosed      ``res.slot`` / ``res.is_closed`` of a wait's result
=========================  =============================================================
"""

from __future__ import annotations

import itertools
from dataclasses import field
from typing import Iterator, Optional, Sequence, Union

from .nodes import NOLOC, Loc
from .record import record

#: The operations the KIR names, with their arity in the text form's words. Keys are canonical
#: paths; the lowering implements each (lowering/translate.py) or refuses it with its line.
OPS = {
    # tensors
    "tl.arange": "arange(start, stop)",
    "tl.zeros": "zeros(shape, dtype)",
    "tl.full": "full(shape, value, dtype)",
    "tl.load": "load(ptr, mask=, other=, cache hints): global or shared memory",
    "tl.store": "store(ptr, value, mask=): global or shared memory",
    "tl.dot": "dot(a, b, acc): wgmma when b is a shared-memory tile",
    "tl.trans": "trans(x): transposed view of a shared-memory tile",
    "tl.where": "where(cond, a, b)",
    "tl.maximum": "maximum(a, b)", "tl.minimum": "minimum(a, b)",
    "tl.max": "max(x, axis)", "tl.min": "min(x, axis)", "tl.sum": "sum(x, axis)",
    "to": "x.to(dtype): a cast",
    # read by the frontend, refused by the lowering
    "T": "x.T: the transposed view (tl.trans)",
    "ifexp": "ifexp(cond, a, b): `a if cond else b` (only the chosen operand is evaluated)",
    # a number a plain assignment made a tensor (`b = 100`, read as `t + b`): Triton's
    # visit_Assign converts it (an int an i32, u32 or i64 by its range, a float an fp32), so it
    # promotes a narrower tile where the number written in place would take the tile's type
    "to_tensor": "to_tensor(number): the scalar tensor a plain assignment makes of a number the "
                 "frontend folded in place of its name",
    # scalars
    "tl.program_id": "program_id(axis)", "tl.num_programs": "num_programs(axis)",
    "tl.cdiv": "cdiv(a, b)",
    # TLE
    "tle.gpu.local_ptr": "local_ptr(slot field): pointers into a shared-memory tile",
    "tle.gpu.scale_rows": "scale_rows(x, factor): x * factor[:, None], skipping rows of 1s",
    "tle.gpu.tma_load": "tma_load(dst, desc, offsets): a TMA copy of the box of a tensor "
                        "descriptor at offsets into a slot field (the commit expects its bytes)",
    "tle.gpu.prefetch_l2": "prefetch_l2(ptr, nbytes, mask=): a bulk prefetch of nbytes at each "
                           "address into L2 (no protocol meaning)",
    "tle.gpu.launch_dependents": "launch_dependents(): griddepcontrol.launch_dependents, the "
                                 "programmatic dependent may start (no protocol meaning)",
}
#: Element-wise math: ``tl.exp2(x)`` and friends.
UNARY_MATH = ("exp2", "log2", "exp", "log", "sqrt", "abs", "sin", "cos", "rsqrt", "floor", "ceil",
              "erf")
for _m in UNARY_MATH:
    OPS[f"tl.{_m}"] = f"{_m}(x)"


# ----------------------------------------------------------------------------------------------
# expressions


@record
class Const:
    value: object
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Name:
    id: str
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Global:
    """A module-level constant of the kernel's module (or of the module a helper came from)."""

    id: str
    value: object
    loc: Loc = field(default=NOLOC, compare=False)


@record
class DType:
    name: str  # triton's short name (language.gpu.normalize_dtype): "bf16", "fp32", "int8", ...
    loc: Loc = field(default=NOLOC, compare=False)


@record
class BinOp:
    op: str  # + - * / // % & | ^ << >> **
    lhs: "Expr"
    rhs: "Expr"
    loc: Loc = field(default=NOLOC, compare=False)


@record
class UnaryOp:
    op: str  # - + not ~
    operand: "Expr"
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Compare:
    op: str  # == != < <= > >=
    lhs: "Expr"
    rhs: "Expr"
    loc: Loc = field(default=NOLOC, compare=False)


@record
class BoolOp:
    op: str  # and | or
    items: tuple["Expr", ...]
    loc: Loc = field(default=NOLOC, compare=False)


@record
class TupleExpr:
    items: tuple["Expr", ...]
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Subscript:
    """``x[:, None]`` (``index`` entries ":" or None) or ``t[k]`` of a tuple (one Const)."""

    value: "Expr"
    index: tuple
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Op:
    name: str
    args: tuple["Expr", ...] = ()
    kwargs: tuple[tuple[str, "Expr"], ...] = ()
    loc: Loc = field(default=NOLOC, compare=False)
    #: results of passes over the IR, sorted by key (ir/attrs.py); printed by the text form
    attrs: tuple[tuple[str, object], ...] = ()

    def kw(self, key: str) -> Optional["Expr"]:
        return next((v for k, v in self.kwargs if k == key), None)

    def attr(self, key: str, default: object = None) -> object:
        return get_attr(self, key, default)


@record
class PipeRef:
    pipe: str
    loc: Loc = field(default=NOLOC, compare=False)


@record
class BufferRef:
    """A free shared-memory buffer of the kernel (``tle.gpu.alloc`` that is no pipe field)."""

    name: str
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Handle:
    """The writer of ``pipe`` (``side="writer"``) or its reader ``reader`` (None: SPSC) with the
    field view ``view`` (None: every field)."""

    pipe: str
    side: str
    reader: Optional[str] = None
    view: Optional[tuple[str, ...]] = None
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Event:
    """A pipe verb on a handle; acquire gives a slot, wait a result (``res.slot``,
    ``res.is_closed``), the others nothing."""

    verb: str
    handle: Handle
    index: "Expr"
    loc: Loc = field(default=NOLOC, compare=False)
    #: results of passes over the IR, sorted by key (ir/attrs.py); printed by the text form
    attrs: tuple[tuple[str, object], ...] = ()


@record
class SlotField:
    slot: "Expr"
    field: str
    loc: Loc = field(default=NOLOC, compare=False)


@record
class ResultSlot:
    result: "Expr"
    loc: Loc = field(default=NOLOC, compare=False)


@record
class IsClosed:
    result: "Expr"
    loc: Loc = field(default=NOLOC, compare=False)


Expr = Union[Const, Name, Global, DType, BinOp, UnaryOp, Compare, BoolOp, TupleExpr, Subscript,
             Op, PipeRef, BufferRef, Handle, Event, SlotField, ResultSlot, IsClosed]


# ----------------------------------------------------------------------------------------------
# statements


@record
class Assign:
    target: str
    value: Expr
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Eval:
    value: Expr
    loc: Loc = field(default=NOLOC, compare=False)


@record
class For:
    """``for var in range(start, stop, step)``; ``static``: tl.static_range (unrolled);
    ``options``: tl.range's loop options given a value other than their default (``num_stages``,
    ...), which the lowering refuses (Gluon runs no pass that honours them)."""

    var: str
    start: Expr
    stop: Expr
    step: Expr
    body: tuple["Stmt", ...]
    static: bool = False
    loc: Loc = field(default=NOLOC, compare=False)
    options: tuple[tuple[str, Expr], ...] = ()
    #: results of passes over the IR, sorted by key (ir/attrs.py); printed by the text form
    attrs: tuple[tuple[str, object], ...] = ()


@record
class If:
    cond: Expr
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()
    loc: Loc = field(default=NOLOC, compare=False)


@record
class While:
    """``while cond: body``: the frontend reads it only without pipe events (its slot accesses
    may happen); the lowering emits a Gluon ``while`` (translate.py ``st_While``)."""

    cond: Expr
    body: tuple["Stmt", ...]
    loc: Loc = field(default=NOLOC, compare=False)


@record
class Return:
    """``return`` in the kernel body or a partition (a helper's last ``return`` is inlined as
    its value): the function ends there."""

    value: Optional[Expr] = None
    loc: Loc = field(default=NOLOC, compare=False)


Stmt = Union[Assign, Eval, For, If, While, Return]


# ----------------------------------------------------------------------------------------------
# the kernel


@record
class KParam:
    """A kernel argument: ``constexpr`` ones are compile-time values of a launch; ``floating``:
    the source declares it a float (a float annotation or default), so it is never an integer
    param of the protocol (Triton passes it as fp32 and compares it as a float)."""

    name: str
    constexpr: bool = False
    loc: Loc = field(default=NOLOC, compare=False)
    floating: bool = False


@record
class Buffer:
    """A shared-memory allocation: a pipe field (leading dimension = capacity) or a free buffer.
    Shape entries are ints or the names of constexpr params."""

    name: str
    shape: tuple
    dtype: str
    loc: Loc = field(default=NOLOC, compare=False)


def slot_shape_error(pipe: str, field: str, capacity: int, shape) -> str:
    """The rule every pipe field keeps, one slot per stage (its leading dimension is the pipe's
    capacity), broken: the message, for the frontend's ``tle.pipe`` and the text form's reader."""
    return (f"pipe '{pipe}': the leading dimension of field '{field}' must be the capacity "
            f"{capacity} (one slot per stage), got shape [{', '.join(map(str, shape))}]")


def named_pipe_error(pipe: str, capacity: int, readers, one_shot: bool) -> "str | None":
    """The shape a named-barrier pipe must have (``tle.pipe(barrier="named")``, ``named_barrier``
    in the text forms), broken: the message; None when it has it. One hardware named barrier
    holds one hand-off between two partitions at a time, so: one slot, one reader, a release to
    leave out."""
    if one_shot or capacity != 1 or len(readers) > 1:
        return (f"pipe '{pipe}': a named-barrier pipe hands one slot from one partition to one "
                f"other over a hardware named barrier, so it has capacity=1, at most one reader "
                f"and is not one_shot (got capacity={capacity}, {len(readers) or 1} reader(s)"
                f"{', one_shot' if one_shot else ''})")
    return None


@record
class PipeDecl:
    name: str
    capacity: int
    fields: tuple[Buffer, ...]
    readers: tuple[str, ...] = ()
    one_shot: bool = False
    loc: Loc = field(default=NOLOC, compare=False)
    #: results of passes over the IR, sorted by key (ir/attrs.py); printed by the text form
    attrs: tuple[tuple[str, object], ...] = ()
    #: ``tle.pipe(barrier="named")``: a hardware named barrier hands the slot over, no release
    named: bool = False


@record
class KPartition:
    """A partition: its function's parameters bound to kernel-level expressions (``bindings``, in
    order), its warps and register request, and its body (helpers inlined)."""

    name: str
    bindings: tuple[tuple[str, Expr], ...]
    body: tuple[Stmt, ...]
    warps: int
    regs: Optional[int] = None
    default: bool = False
    loc: Loc = field(default=NOLOC, compare=False)
    #: results of passes over the IR, sorted by key (ir/attrs.py); printed by the text form
    attrs: tuple[tuple[str, object], ...] = ()


@record
class Kernel:
    """``prologue``: the kernel body's statements before ``warp_specialize`` (scalars; pipe
    declarations are ``pipes``, free shared buffers ``buffers``). ``consts``: the module constants
    the kernel uses (every :class:`Global` names one of them, with its value); ``options``: the
    literal options of ``@tle.jit(...)`` other than num_warps."""

    name: str
    params: tuple[KParam, ...]
    num_warps: int
    options: tuple[tuple[str, object], ...]
    consts: tuple[tuple[str, object], ...]
    pipes: tuple[PipeDecl, ...]
    buffers: tuple[Buffer, ...]
    prologue: tuple[Stmt, ...]
    partitions: tuple[KPartition, ...]
    loc: Loc = field(default=NOLOC, compare=False)
    #: results of passes over the IR, sorted by key (ir/attrs.py); printed by the text form
    attrs: tuple[tuple[str, object], ...] = ()

    def partition(self, name: str) -> Optional[KPartition]:
        return next((p for p in self.partitions if p.name == name), None)

    def pipe(self, name: str) -> Optional[PipeDecl]:
        return next((p for p in self.pipes if p.name == name), None)


# ----------------------------------------------------------------------------------------------
# attributes


def get_attr(node: object, key: str, default: object = None) -> object:
    """The value a pass attached to ``node`` under ``key`` (``default`` when none did)."""
    return next((v for k, v in getattr(node, "attrs", ()) if k == key), default)


def with_attrs(node, **new):
    """``node`` with the given attributes set (replacing those of the same keys); the IR is
    immutable, so a pass returns the new node in place of the old one."""
    from dataclasses import replace

    merged = dict(getattr(node, "attrs", ()))
    merged.update(new)
    return replace(node, attrs=tuple(sorted(merged.items())))


# ----------------------------------------------------------------------------------------------
# walking


def children(e: Expr) -> Iterator[Expr]:
    """The direct sub-expressions of ``e``."""
    if isinstance(e, (BinOp, Compare)):
        yield e.lhs
        yield e.rhs
    elif isinstance(e, UnaryOp):
        yield e.operand
    elif isinstance(e, (BoolOp, TupleExpr)):
        yield from e.items
    elif isinstance(e, Subscript):
        yield e.value
    elif isinstance(e, Op):
        yield from e.args
        for _, v in e.kwargs:
            yield v
    elif isinstance(e, Event):
        yield e.handle
        yield e.index
    elif isinstance(e, SlotField):
        yield e.slot
    elif isinstance(e, (ResultSlot, IsClosed)):
        yield e.result


def _children_seq(e: Expr) -> Sequence[Expr]:
    """:func:`children` of ``e`` as one sequence (the walks' stack takes it whole)."""
    if isinstance(e, (BinOp, Compare)):
        return (e.lhs, e.rhs)
    if isinstance(e, UnaryOp):
        return (e.operand,)
    if isinstance(e, (BoolOp, TupleExpr)):
        return e.items
    if isinstance(e, Subscript):
        return (e.value,)
    if isinstance(e, Op):
        return (*e.args, *(v for _, v in e.kwargs)) if e.kwargs else e.args
    if isinstance(e, Event):
        return (e.handle, e.index)
    if isinstance(e, SlotField):
        return (e.slot,)
    if isinstance(e, (ResultSlot, IsClosed)):
        return (e.result,)
    return ()


def walk_expr(e: Expr) -> Iterator[Expr]:
    """``e`` and every sub-expression, parents first (children in order). Walked with a stack of
    its own: a generator per node, each resumed through every one above it, cost as much again
    per level of nesting."""
    stack = [e]
    pop, push = stack.pop, stack.extend
    while stack:
        x = pop()
        yield x
        kids = _children_seq(x)
        if kids:
            push(reversed(kids))


def walk_stmts(body: tuple[Stmt, ...]) -> Iterator[Stmt]:
    """Every statement, through loop bodies and both branches of ifs, in source order (with a
    stack of iterators, as :func:`walk_expr` walks)."""
    stack = [iter(body)]
    while stack:
        for s in stack[-1]:
            yield s
            if isinstance(s, (For, While)):
                stack.append(iter(s.body))
                break
            if isinstance(s, If):
                stack.append(itertools.chain(s.then, s.orelse))
                break
        else:
            stack.pop()


def stmt_exprs(s: Stmt) -> Iterator[Expr]:
    """The expressions a statement evaluates itself (not those of nested bodies)."""
    if isinstance(s, (Assign, Eval)):
        yield s.value
    elif isinstance(s, For):
        yield s.start
        yield s.stop
        yield s.step
    elif isinstance(s, (If, While)):
        yield s.cond
    elif isinstance(s, Return) and s.value is not None:
        yield s.value


def events(body: tuple[Stmt, ...]) -> Iterator[Event]:
    """Every pipe event of ``body``, in evaluation order."""
    for s in walk_stmts(body):
        for e in stmt_exprs(s):
            # children are evaluated before their parent: post-order
            yield from _post(e)


def same_events(kir_events: list, view_events: list) -> bool:
    """Whether a KIR partition's pipe events (``events(body)``) are those of its protocol view
    (``nodes.walk_events`` of its Pipe IR body): the same verbs on the same pipes in the same
    order. What lets the lowering pair them (passes/kir_protocol.event_pairs), and what the
    reader checks before it picks a build (frontend/ast_reader.py)."""
    return ([(e.verb, e.handle.pipe) for e in kir_events]
            == [(e.verb, e.pipe) for e in view_events])


def _post(e: Expr) -> Iterator[Event]:
    for c in children(e):
        yield from _post(c)
    if isinstance(e, Event):
        yield e
