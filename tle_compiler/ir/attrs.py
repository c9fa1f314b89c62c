"""Typed attributes that passes attach to kernel IR nodes (``attrs`` of ir/kernel.py's Kernel,
PipeDecl, KPartition, For, Op and Event).

An attribute value is an int, bool, str, None, a tuple of attribute values, a kernel IR
expression, or an instance of a frozen dataclass registered here with :func:`attr_type`; the text
form (kernel_text.py) prints a registered class as ``Name(field = value, ...)`` and parses it back
through :data:`ATTR_TYPES`, so every attribute a pass writes survives a print/parse round trip.
"""

from __future__ import annotations

from dataclasses import field as _field
from typing import Mapping, Optional, Union
from .record import record

#: Field metadata: the text form leaves the field out while it holds its default (attributes
#: that only some kernels use print as before for the others).
ELIDE_DEFAULT = {"elide_default": True}

#: Registered attribute classes by name (the text form's constructor names).
ATTR_TYPES: dict[str, type] = {}


def attr_type(cls: type) -> type:
    """Class decorator: register a frozen dataclass as an attribute type of the text form."""
    if cls.__name__ in ATTR_TYPES and ATTR_TYPES[cls.__name__] is not cls:
        raise ValueError(f"attribute type {cls.__name__} registered twice")
    ATTR_TYPES[cls.__name__] = cls
    return cls


# ----------------------------------------------------------------------------------------------
# index arithmetic: the stage and parity of a pipe event (infer-stages)
#
# A pipe event at index i of a ring of capacity C uses slot ``i % C`` at phase ``(i // C) & 1``;
# a blocking verb waits at that phase (wait) or its complement (acquire, close: ``^ 1``). These
# classes keep that structure as values: an :class:`AffineIndex` leaf (the event's index, affine in
# loop variables and params) under ``%``, ``//``, ``& 1`` and ``^ 1`` nodes, or a plain int where
# the formula is a constant (the slot of a capacity-1 ring, the parity of a one-shot pipe).


@attr_type
@record
class AffineIndex:
    """``const + Σ coef·var`` over loop variables and params (the protocol's names, those of the
    Pipe IR); ``terms`` sorted by variable, no zero coefficients."""

    const: int = 0
    terms: tuple = ()

    @staticmethod
    def of(affine) -> "AffineIndex":
        """From an :class:`~tle_compiler.ir.expr.Affine` (normalised already)."""
        return AffineIndex(affine.const, tuple((v, c) for v, c in affine.terms))

    def eval(self, env: Mapping[str, int]) -> int:
        return self.const + sum(c * env[v] for v, c in self.terms)

    @property
    def simple(self) -> bool:
        """A constant or a lone variable: needs no parentheses under an operator."""
        return not self.terms or (self.const == 0 and len(self.terms) == 1
                                  and self.terms[0][1] == 1)

    def __str__(self) -> str:
        from .expr import Affine

        return str(Affine(self.const, self.terms))


@attr_type
@record
class Mod:
    """``operand % k`` (k > 0; pipe indices are never negative, so C's and Python's agree)."""

    operand: "IndexExpr"
    k: int


@attr_type
@record
class FloorDiv:
    """``operand // k`` (k > 0)."""

    operand: "IndexExpr"
    k: int


@attr_type
@record
class BitAnd:
    """``operand & mask``."""

    operand: "IndexExpr"
    mask: int


@attr_type
@record
class BitXor:
    """``operand ^ bits``."""

    operand: "IndexExpr"
    bits: int


IndexExpr = Union[int, AffineIndex, Mod, FloorDiv, BitAnd, BitXor]


def eval_index(e: IndexExpr, env: Mapping[str, int]) -> int:
    """The value of an index expression for values of its variables."""
    if isinstance(e, int):
        return e
    if isinstance(e, AffineIndex):
        return e.eval(env)
    x = eval_index(e.operand, env)
    if isinstance(e, Mod):
        return x % e.k
    if isinstance(e, FloorDiv):
        return x // e.k
    if isinstance(e, BitAnd):
        return x & e.mask
    return x ^ e.bits


def render_index(e: IndexExpr, leaf=None) -> str:
    """``e`` as Python/Gluon source: ``leaf(a)`` spells each :class:`AffineIndex` (by default its
    affine text, parenthesised unless simple). The lowering passes a ``leaf`` that spells the
    event's index as the generated code computes it."""
    if isinstance(e, int):
        return str(e)
    if isinstance(e, AffineIndex):
        if leaf is not None:
            return leaf(e)
        return str(e) if e.simple else f"({e})"
    x = render_index(e.operand, leaf)
    if isinstance(e, Mod):
        return f"{x} % {e.k}"
    if isinstance(e, FloorDiv):
        return f"({x} // {e.k})"
    if isinstance(e, BitAnd):
        return f"{x} & {e.mask}"
    return f"({x}) ^ {e.bits}"


def stage_expr(index: AffineIndex, capacity: int, one_shot: bool) -> IndexExpr:
    """The slot of an event at ``index``: ``index % C`` (0 for a capacity-1 ring or a one-shot
    pipe, which has one slot)."""
    return 0 if one_shot or capacity == 1 else Mod(index, capacity)


def phase_expr(index: AffineIndex, capacity: int, one_shot: bool) -> IndexExpr:
    """The phase bit of an event at ``index``: ``(index // C) & 1`` (``index & 1`` for C = 1; 0
    for a one-shot pipe, whose full barrier completes once)."""
    if one_shot:
        return 0
    return BitAnd(index if capacity == 1 else FloorDiv(index, capacity), 1)


def parity_expr(verb: str, index: AffineIndex, capacity: int, one_shot: bool
                ) -> Optional[IndexExpr]:
    """The parity a blocking verb waits at: the phase for ``wait``, its complement for
    ``acquire``/``close`` (a fresh mbarrier reports parity 1 complete, so the first C acquires pass);
    None for the verbs that do not wait (and a one-shot pipe's acquire, which touches no barrier)."""
    if verb == "wait":
        return phase_expr(index, capacity, one_shot)
    if verb in ("acquire", "close") and not one_shot:
        return BitXor(phase_expr(index, capacity, one_shot), 1)
    return None


# ----------------------------------------------------------------------------------------------
# barriers (infer-barriers, materialize-barriers)


@attr_type
@record
class BarrierRole:
    """A partition's verb on a barrier: arrivers commit/close/release, waiters acquire/close/wait;
    ``reader``: the reader the partition speaks for ("" on an SPSC pipe, None for the writer)."""

    partition: str
    verb: str
    reader: Optional[str] = None


@attr_type
@record
class BarrierDecl:
    """One mbarrier array of a pipe (infer-barriers): ``kind`` full/empty of field group
    ``group`` (the fields it guards), one barrier per slot (``stages``), each completing a phase
    after ``count`` partition arrivals; who arrives and who waits; ``fence``: "async-proxy" when a
    field of the group feeds wgmma. ``name`` is the array's name in the generated code."""

    name: str
    kind: str
    group: int
    fields: tuple
    stages: int
    count: int
    arrive: tuple = ()
    wait: tuple = ()
    fence: Optional[str] = None
    # the bytes of a commit's TMA copies into the group; None: TMA-filled fields whose shape
    # holds a constexpr without a value here (passes/kir_protocol.py tma_bytes)
    expect_tx: Optional[int] = 0


@attr_type
@record
class BarrierWait:
    """An event waits on barrier array ``barrier`` at ``parity`` (infer-barriers)."""

    barrier: str
    parity: IndexExpr


# ----------------------------------------------------------------------------------------------
# verdicts (verify-protocol, verify-deadlock)


@attr_type
@record
class ProtocolVerdict:
    """What the verification proved (passes/verdict.py's Verdict): ``kind`` proved / rejected /
    bounded / unknown, the scope of the claim, the values checked per param (``(param, range)``
    pairs), the argument or the reason, and the number of errors."""

    kind: str
    scope: str = ""
    checked: tuple = ()
    argument: str = ""
    reason: str = ""
    errors: int = 0


@attr_type
@record
class ProtocolError:
    """A fault the verifier reported: its check, line and message."""

    check: str
    line: int
    message: str


# ----------------------------------------------------------------------------------------------
# explicit barrier operations (materialize-barriers)


@attr_type
@record
class MBarrierWait:
    """``mbarrier.wait(barrier[slot], parity)``."""

    barrier: str
    slot: IndexExpr
    parity: IndexExpr


@attr_type
@record
class MBarrierArrive:
    """An arrive on ``barrier[slot]`` counting ``count`` partition arrivals (the lowering turns a
    partition arrival into one elected arrive or one per thread, lowering/plan.py arrive_mode).
    ``tx_bytes``: the expect-tx the arrive declares on a barrier whose fields are filled by TMA
    copies (the bytes of the commit's window; 0 for a close, and on other barriers)."""

    barrier: str
    slot: IndexExpr
    count: int = 1
    tx_bytes: int = _field(default=0, metadata=ELIDE_DEFAULT)


@attr_type
@record
class MBarrierAlloc:
    """An mbarrier array the kernel allocates: ``size`` barriers, each initialised to ``count``
    partition arrivals (scaled by the writer's arrive unit when lowered); ``fence``: a field it
    guards feeds wgmma."""

    barrier: str
    size: int
    count: int
    fence: bool = False


@attr_type
@record
class NamedBarrierAlloc:
    """The hardware named barrier ``bar_id`` (0..15) of a ``barrier="named"`` pipe's array
    ``barrier``: ``threads`` = the writer's and the reader's threads, which one hand-off's
    ``bar.arrive`` and ``bar.sync`` count together; ``fence``: a field feeds wgmma."""

    barrier: str
    bar_id: int
    threads: int
    fence: bool = False


@attr_type
@record
class NamedBarrierArrive:
    """``bar.arrive bar_id, threads`` by every thread of the writer (a named pipe's commit)."""

    barrier: str
    bar_id: int
    threads: int


@attr_type
@record
class NamedBarrierSync:
    """``bar.sync bar_id, threads`` by every thread of the reader (a named pipe's wait)."""

    barrier: str
    bar_id: int
    threads: int


# ----------------------------------------------------------------------------------------------
# register layouts (assign-layouts)
#
# The Gluon layouts the lowering gives tensor values, as lowering/layouts.py's solver picks them:
# a blocked layout, the wgmma accumulator layout, a slice of a layout (a reduction's result), the
# register A operand layout of a wgmma. lowering/layouts.py converts them to and from its tuples.


@attr_type
@record
class Blocked:
    """``gl.BlockedLayout(size_per_thread, threads_per_warp, warps_per_cta, order)``."""

    size_per_thread: tuple
    threads_per_warp: tuple
    warps_per_cta: tuple
    order: tuple


@attr_type
@record
class NVMMADistributed:
    """``gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta, instr_shape)``: the Hopper
    wgmma accumulator layout."""

    warps_per_cta: tuple
    instr_shape: tuple


@attr_type
@record
class Slice:
    """``gl.SliceLayout(dim, parent)``: ``parent`` with dimension ``dim`` removed."""

    dim: int
    parent: object


@attr_type
@record
class DotOperand:
    """``gl.DotOperandLayout(operand_index, parent, k_width)``: a register wgmma operand."""

    operand_index: int
    parent: object
    k_width: int


@attr_type
@record
class LayoutTable:
    """The layouts of one function's tensor values (a partition, or the kernel prologue), as
    assign-layouts solved them. The lowering numbers the function's layout variables and its
    layout constraints between operands in the order it visits them (the same in every walk);
    ``layouts``: the distinct layouts, ``values``: per variable, the index of its layout in
    ``layouts``; ``converts``: ``(constraint number, layout index)`` for every operand that is
    converted (``gl.convert_layout``) to the layout of the value it feeds."""

    layouts: tuple
    values: tuple
    converts: tuple = ()


@attr_type
@record
class FieldFill:
    """How the writer fills a pipe field: cp.async gathers (``cp_async``), register stores
    (``registers``), TMA copies (``tma``), or several of them."""

    field: str
    cp_async: bool
    registers: bool
    tma: bool = _field(default=False, metadata=ELIDE_DEFAULT)


@attr_type
@record
class ArriveUnit:
    """How the writer's commits arrive on a barrier array, and its init count per slot:
    ``mode`` partition (one elected arrive), thread (every thread's cp.async arrive), mixed (both),
    eager / eager-mixed (per-thread arrives, lowering/eager.py), tma (one expect-tx arrive for the
    TMA copies), tma-partition / tma-thread / tma-mixed (that arrive plus the arrives of the
    mode after the dash); ``threads``: the arriving
    partition's threads; ``init_count``: the mbarrier init count (infer-barriers' count in
    partition arrivals scaled by the unit, lowering/plan.py init_count)."""

    barrier: str
    mode: str
    threads: int
    init_count: int


# ----------------------------------------------------------------------------------------------
# async wgmma waits (schedule-wgmma)


@attr_type
@record
class WgmmaWait:
    """``warpgroup_mma_wait(pending, deps)``: wait until at most ``pending`` wgmmas are in flight.

    ``deps``: the values rebound to the wait's result (the retired wgmmas' results and register A
    operands; empty: a throw-away dependency), each a name of the partition or, for a value the
    kernel never names, ``"result of PATH"`` / ``"A operand of PATH"`` of the ``tl.dot`` at PATH
    (a path from the partition, lowering/kir_paths.py); ``why``: what needs the wait (the
    comment it is printed with, values named as in ``deps``); ``line``: the source line of the
    statement it precedes or ends. Where it goes: ``place`` "before" / "after" the node at
    ``path`` (relative to the node that carries the attribute; "" that node itself), or at the
    "end" of the statement list at ``path``."""

    pending: int
    deps: tuple
    why: str
    line: int = 0
    place: str = "before"
    path: str = ""


@attr_type
@record
class WgmmaRewrap:
    """At the end of a branch of an ``if`` that keeps wgmmas in flight (a pipelined loop's
    ``if`` whose branch reads or replaces an in-flight result, lowering/schedule_wgmma.py): the
    names of in-flight results the branch rebound (waited for, or assigned), made in-flight
    accumulators again (``name = warpgroup_mma_init(name)``) so that both paths leave the ``if``
    with the same types; the path that skips the branch still has them in flight. ``names`` as
    WgmmaWait's ``deps``; ``why``, ``line``, ``place``, ``path`` as WgmmaWait's."""

    names: tuple
    why: str
    line: int = 0
    place: str = "end"
    path: str = ""


@attr_type
@record
class CarriedWgmma:
    """A wgmma a pipelined loop (``wgmma_pipeline=True``) keeps in flight across its back-edge:
    the names holding its result, the shared-memory rings it reads, and its register A operands
    (as the generated code names them: the loop declares them before its head) with their
    (shape, dtype, layout); ``wgmma``: the path of its ``tl.dot`` in the partition."""

    names: tuple
    rings: tuple
    regs: tuple = ()
    reg_types: tuple = ()
    wgmma: str = ""
