"""The Pipe IR: a kernel's pipes, its partitions, the pipe events each partition performs, and the
slot accesses between them.

Only what the protocol depends on is kept: loop structure, affine indices, conditions on them, the
reads and writes of slot fields (:class:`Access`, checked against the window of the event that
handed the slot out), and the source location of every node. The math inside partitions
(``tl.dot`` and friends) is not part of this IR: it lives in the kernel IR (kernel.py), which the
frontend builds in the same walk and the lowering translates.

Verbs, and which side of a pipe performs them:

========  ======  ==========================================================
verb      side    meaning
========  ======  ==========================================================
acquire   writer  wait until every reader released index ``i - capacity``
commit    writer  publish the slot of index ``i``
close     writer  acquire + commit of index ``i`` flagged "stream finished"
wait      reader  wait until index ``i`` was committed; read the slot
release   reader  hand the slot of index ``i`` back to the writer
========  ======  ==========================================================
"""

from __future__ import annotations

from dataclasses import field as _field
from typing import Iterator, Optional, Union

from .expr import Affine, Cond
from .record import record

WRITER_VERBS = ("acquire", "commit", "close")
READER_VERBS = ("wait", "release")
VERBS = WRITER_VERBS + READER_VERBS
#: Slot accesses in the text form: ``write`` is the writer's (inside acquire(i)..commit(i)),
#: ``read`` a reader's (inside wait(i)..release(i)); ``tma`` is a writer's TMA copy into the field
#: (``tle.gpu.tma_load``), a write that lands asynchronously and completes on the commit's barrier;
#: ``readback`` is the writer's read of its own slot (a load, a wgmma operand) inside its window,
#: legal only after a write of that field in the same window (a fresh acquire starts unwritten);
#: ``maywrite`` is a writer's write that may not run (under control flow on data, or through a
#: pointer ``tl.where`` chose): inside the window like any write, but it fills nothing for rule 7.
ACCESS_VERBS = ("write", "read", "tma", "readback", "maywrite", "openread")
#: The field name of a reader's read of the slot's closed flag (``res.is_closed``, Pipe IR
#: ``P.read(i, is_closed)``). The flag lives in the slot of stage ``i mod C``: every acquire clears
#: it and a close sets it, so a read after ``release(i)`` may see the flag of a later index of the
#: stage. It is read like a field (inside its reader's window) but belongs to no field group, is
#: in every reader's view and is never unwritten; no pipe may declare a field of this name.
CLOSED_FLAG = "is_closed"

#: The checks of Program.zero_steps obligations a loop that may never end gives (a run-time
#: step that may be 0; a counter that may wrap in i32), which a ``.pipe`` file states as
#: ``endless CHECK "MESSAGE"`` lines (the division-by-zero ones follow from its ``def`` lines).
ENDLESS_CHECKS = ("zero-step", "endless-loop")

#: The element types a pointer of no known element type may point to, as a proof qualified to
#: them names them (Program.signed_only; a ``.pipe`` file's ``loaded PTR (TYPES) "WHY"`` lines):
#: the integer types, "float" standing for every float type (frontend/load_types.py reads them).
LOAD_TYPES = frozenset({"int1", "int8", "int16", "uint8", "uint16", "int32", "uint32", "int64",
                        "uint64", "float"})


@record
class Loc:
    """A source location: ``file`` may be None for programs built in memory."""

    file: Optional[str]
    line: int
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file or '<input>'}:{self.line}"


NOLOC = Loc(None, 0)


@record
class Pipe:
    """A CTA-scope dataflow edge. ``readers == ()`` means single-producer single-consumer.

    ``mma`` lists fields that a reader feeds to wgmma (an async-proxy read): commits of such pipes
    need the generic→async proxy fence.
    """

    name: str
    capacity: int
    fields: tuple[str, ...]
    readers: tuple[str, ...] = ()
    one_shot: bool = False
    mma: tuple[str, ...] = ()
    loc: Loc = NOLOC
    #: the hand-off is a hardware named barrier and the release is left out: every release must
    #: be implied by another pipe's hand-off (docs/semantics.md, "Named-barrier pipes")
    named: bool = False

    @property
    def is_spmc(self) -> bool:
        return bool(self.readers)

    @property
    def reader_names(self) -> tuple[str, ...]:
        """Declared readers; an SPSC pipe has one implicit reader named ``""``."""
        return self.readers if self.readers else ("",)


@record
class Event:
    """One pipe operation. ``reader`` is the reader name (None on writer verbs and on SPSC readers);
    ``fields`` is the reader's field view when written at this event (None: all fields)."""

    verb: str
    pipe: str
    index: Affine
    reader: Optional[str] = None
    fields: Optional[tuple[str, ...]] = None
    loc: Loc = NOLOC

    @property
    def is_writer(self) -> bool:
        return self.verb in WRITER_VERBS

    @property
    def endpoint(self) -> tuple[str, Optional[str]]:
        """(pipe, None) for the writer, (pipe, reader name or "") for a reader."""
        if self.is_writer:
            return (self.pipe, None)
        return (self.pipe, self.reader or "")


@record
class Access:
    """A read or write of field ``field`` of the slot that event ``index`` of ``pipe`` handed out.

    ``side`` is "writer" (the slot came from ``acquire(index)``: legal until ``commit(index)``) or
    "reader" (from ``wait(index)`` of reader ``reader``, None on an SPSC pipe: legal until
    ``release(index)``). ``op`` names the operation for messages (``tl.load``, ``tl.store``,
    ``tl.dot``); a reader's access is always a read.

    ``readback``: a writer's read of its own slot (``tl.load`` of ``acquire(index)``'s field, a
    wgmma operand): it fills nothing, and rule 7 asks a write of ``field`` in the same window
    (since ``acquire(index)``) to come before it: what the stage held before the acquire does
    not count, so a read of a field the window has not written finds uninitialised (or stale)
    shared memory.

    ``may``: a writer's write that may not run, or may fill only part of its field: a store under
    control flow whose runs the protocol does not model (a ``while``, a loop or ``if`` on data),
    recorded once where the block stands, or one through a pointer ``tl.where`` chose per
    element. It must lie in its window and counts against readers' holds (it may run), but it
    fills nothing: rule 7 does not count it as writing ``field``, for a reader's read or for the
    writer's readback.

    ``open_only``: a reader's read that runs only when the index it waited was not the one the
    writer closed (it stands under ``if not res.is_closed:``, text form ``P.openread(i, f)``):
    at the closing index it does not run, so it reads nothing there (rule 7); elsewhere it is a
    read like any other.

    ``tma``: the writer's TMA copy of a whole slot field (``tle.gpu.tma_load``): a write issued
    here that lands asynchronously; the commit of the window arrives on the full barrier with an
    expect-tx of ``nbytes`` (the field's slot size; 0 when its shape depends on constexprs the
    read did not bind), so the barrier's phase completes only once the bytes have landed.
    """

    side: str
    pipe: str
    field: str
    index: Affine
    reader: Optional[str] = None
    op: str = ""
    loc: Loc = NOLOC
    # compared, printed by the text form (``tma``), left out of repr (so the repr of a program
    # without TMA copies is what it was before they existed)
    tma: bool = _field(default=False, repr=False)
    nbytes: int = _field(default=0, repr=False)
    # as ``tma``: left out of repr, so programs without a writer's read keep theirs
    readback: bool = _field(default=False, repr=False)
    # as ``tma``: left out of repr, so programs without a write that may not run keep theirs
    may: bool = _field(default=False, repr=False)
    # as ``tma``: left out of repr, so programs without a read guarded by the closed flag keep
    # theirs
    open_only: bool = _field(default=False, repr=False)

    @property
    def verb(self) -> str:
        """Its verb in the text form."""
        if self.tma:
            return "tma"
        if self.readback:
            return "readback"
        if self.may:
            return "maywrite"
        if self.open_only:
            return "openread"
        return "write" if self.side == "writer" else "read"

    @property
    def is_write(self) -> bool:
        """Whether it writes its field, or may (a writer's store or copy; not a writer's read):
        it must lie in its window and no reader of the field may hold the slot."""
        return self.side == "writer" and not self.readback

    @property
    def fills(self) -> bool:
        """Whether it counts as writing its field for rule 7 (a write that surely runs)."""
        return self.is_write and not self.may

    @property
    def endpoint(self) -> tuple[str, Optional[str]]:
        return (self.pipe, None) if self.side == "writer" else (self.pipe, self.reader or "")


@record
class For:
    """``for var in range(start, stop, step)`` with Python's range semantics."""

    var: str
    start: Affine
    stop: Affine
    step: int
    body: tuple["Stmt", ...]
    loc: Loc = NOLOC


@record
class If:
    cond: Cond
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()
    loc: Loc = NOLOC


Stmt = Union[Event, Access, For, If]


@record
class Partition:
    """A warp group. Exactly one partition of a kernel is the default (it runs on the launch's
    num_warps); the others are workers with a requested register budget."""

    name: str
    body: tuple[Stmt, ...]
    warps: int = 4
    regs: Optional[int] = None
    default: bool = False
    loc: Loc = NOLOC


@record
class Param:
    """A symbolic integer (a trip count, usually) ranging over ``[min, max]``; ``None`` is an open
    end (``min=None``: every negative value too). The text form's ``param N`` is ``N >= 0``; a
    Python kernel's integer arguments range over every integer unless the kernel states a domain
    (``tle.assume(N >= 0)``)."""

    name: str
    min: Optional[int] = 0
    loc: Loc = NOLOC
    max: Optional[int] = None

    def contains(self, value: int) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    def domain(self) -> str:
        """``N >= 0``, ``0 <= N <= 64``, ``N <= 3``, ``every integer N``."""
        if self.min is None and self.max is None:
            return f"every integer {self.name}"
        if self.max is None:
            return f"{self.name} >= {self.min}"
        if self.min is None:
            return f"{self.name} <= {self.max}"
        if self.min == self.max:
            return f"{self.name} = {self.min}"
        return f"{self.min} <= {self.name} <= {self.max}"


@record
class Program:
    """A kernel's protocol. ``derived``: the params (of ``params``, and values computed on the way
    to them) that the kernel computes from others, each with its definition (ir/derived.py's
    ``Derived``, listed after what it uses); ``bases``: the params those definitions use that are
    not in ``params`` (``N`` of ``M = tl.cdiv(N, 64)`` when only ``M`` bounds a loop). The checks
    treat every param as independent; these say which combinations a launch can give, so that a
    fault is reported with values that give it. The text form prints them (``base N`` and
    ``def M = N // 2`` lines, ir/parser.py), so that a report reads back with its verdict;
    neither is compared or shown in the repr: they describe the params, not the protocol.

    ``every_access``: the program records every slot access the kernel makes (the frontend read
    it from a Python kernel), so a pipe without any write access is one nothing writes, and its
    reads find uninitialised shared memory (rule 7). False for a ``.pipe`` file, which may model
    events only: a pipe without write accesses there is a protocol skeleton, its reads checked
    against their windows only. Compared (a verdict may differ), not printed or shown in the
    repr (so a Python kernel's repr is what it was before this distinction)."""

    name: str
    params: tuple[Param, ...]
    pipes: tuple[Pipe, ...]
    partitions: tuple[Partition, ...]
    loc: Loc = NOLOC
    derived: tuple = _field(default=(), compare=False, repr=False)
    bases: tuple[Param, ...] = _field(default=(), compare=False, repr=False)
    every_access: bool = _field(default=False, repr=False)
    #: Params that stand for a value no name of the source holds (a load inside a larger
    #: expression, `n = tl.maximum(tl.load(p), 0)`): a witness names the params computed from
    #: them first (passes/sweep.py). Not compared or shown in the repr, as ``derived``.
    unnamed: frozenset = _field(default=frozenset(), compare=False, repr=False)
    #: Params that stand for a value the kernel computes in a way the verifier does not model
    #: (`C = tl.where(N % 64 == 0, N // 64, N // 64 + 1)`), each (name, line, values): checked
    #: for every value, so a proof stands, but a launch gives each one value of its arguments
    #: and memory, so a fault found at one of its values is no witness (passes/sweep.py), unless
    #: it holds one of ``values`` (affine in the params and bases; None: not known), the
    #: branches' values of one a branch chose on data (each taken at some launch). Printed as
    #: ``computed NAME LINE [in (...)]`` lines (ir/parser.py); not compared or in the repr.
    computed: tuple = _field(default=(), compare=False, repr=False)
    #: Loops (of any partition or the kernel body) whose step is computed at run time and may be
    #: 0, where the loop never ends: (location, message), refused by verify-protocol.
    zero_steps: tuple = _field(default=(), compare=False, repr=False)
    #: Run-time loops without pipe events or slot accesses, which the partitions leave out,
    #: each a ``For`` with no body nested in copies of the loops around it: the GPU computes
    #: their bounds and steps their variables in i32 too, so the i32 check of loop bounds
    #: (passes/i32_range.py) walks them (`range(0, N + 4, 3)` at N = 2^31 - 4 wraps and never
    #: ends). Not compared, printed or shown in the repr, as ``zero_steps``.
    data_loops: tuple = _field(default=(), compare=False, repr=False)
    #: The integer constexprs the kernel was read specialised to (``(("BLOCK_H", 64),)``): they
    #: are constants of the protocol, not params, and a verdict holds for these values only.
    #: tle-dump's report of a kernel read specialised prints them (``constexpr BLOCK_H = 64``
    #: lines, ir/parser.py) so that the report reads back with the verdict it gave ("with
    #: BLOCK_H = 64 (read specialised)"); not compared or shown in the repr, as ``derived``.
    constexprs: tuple[tuple[str, int], ...] = _field(default=(), compare=False, repr=False)
    #: What the verdict rests on a pointer of no known element type pointing to some element
    #: types for (frontend/load_signs.py, frontend/load_types.py): (location, pointer, why,
    #: types) of each `while` loop that ends, or comparison, loop bound or index deciding events
    #: that keeps the verifier's reading, only when such a load is of one of those types;
    #: tle-dump's proof is then qualified to them (cli/kernel_checks.py check_signed_loads). Not
    #: compared, printed or shown in the repr, as ``zero_steps``.
    signed_only: tuple = _field(default=(), compare=False, repr=False)

    def checks_fills(self, pipe: str, has_writes: bool) -> bool:
        """Whether rule 7 asks the reads of ``pipe`` to find their field written: always for a
        program that records every access; in a ``.pipe`` file, when the pipe has a write access
        (``has_writes``), a pipe without any being a protocol skeleton."""
        return has_writes or self.every_access

    def pipe(self, name: str) -> Optional[Pipe]:
        return next((p for p in self.pipes if p.name == name), None)

    def partition(self, name: str) -> Optional[Partition]:
        return next((p for p in self.partitions if p.name == name), None)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


@record
class Module:
    """What one input file holds: one or more kernels."""

    kernels: tuple[Program, ...]
    path: Optional[str] = None


def _walk(body: tuple[Stmt, ...], kind: type) -> Iterator:
    for s in body:
        if isinstance(s, kind):
            yield s
        elif isinstance(s, For):
            yield from _walk(s.body, kind)
        elif isinstance(s, If):
            yield from _walk(s.then, kind)
            yield from _walk(s.orelse, kind)


def walk_events(body: tuple[Stmt, ...]) -> Iterator[Event]:
    """Every event in ``body``, in source order, through loops and both branches of ifs."""
    return _walk(body, Event)


def walk_accesses(body: tuple[Stmt, ...]) -> Iterator[Access]:
    """Every slot access in ``body``, in source order, through loops and both branches of ifs."""
    return _walk(body, Access)


def walk_with_context(body: tuple[Stmt, ...], loops: tuple[For, ...] = ()) -> Iterator[tuple[Event, tuple[For, ...]]]:
    """Every event with the loops that enclose it (outermost first)."""
    for s in body:
        if isinstance(s, Event):
            yield s, loops
        elif isinstance(s, For):
            yield from walk_with_context(s.body, loops + (s,))
        elif isinstance(s, If):
            yield from walk_with_context(s.then, loops)
            yield from walk_with_context(s.orelse, loops)
