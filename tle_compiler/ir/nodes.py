"""The Pipe IR: a kernel's pipes, its partitions, and the pipe events each partition performs.

Only what the protocol depends on is kept: loop structure, affine indices, conditions on them, and
the source location of every node. The math inside partitions (``tl.dot`` and friends) is not part
of this IR; the lowering reads it from the Python source.

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

from dataclasses import dataclass
from typing import Iterator, Optional, Union

from .expr import Affine, Cond

WRITER_VERBS = ("acquire", "commit", "close")
READER_VERBS = ("wait", "release")
VERBS = WRITER_VERBS + READER_VERBS


@dataclass(frozen=True)
class Loc:
    """A source location: ``file`` may be None for programs built in memory."""

    file: Optional[str]
    line: int
    column: int = 0

    def __str__(self) -> str:
        return f"{self.file or '<input>'}:{self.line}"


NOLOC = Loc(None, 0)


@dataclass(frozen=True)
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

    @property
    def is_spmc(self) -> bool:
        return bool(self.readers)

    @property
    def reader_names(self) -> tuple[str, ...]:
        """Declared readers; an SPSC pipe has one implicit reader named ``""``."""
        return self.readers if self.readers else ("",)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class For:
    """``for var in range(start, stop, step)`` with Python's range semantics."""

    var: str
    start: Affine
    stop: Affine
    step: int
    body: tuple["Stmt", ...]
    loc: Loc = NOLOC


@dataclass(frozen=True)
class If:
    cond: Cond
    then: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...] = ()
    loc: Loc = NOLOC


Stmt = Union[Event, For, If]


@dataclass(frozen=True)
class Partition:
    """A warp group. Exactly one partition of a kernel is the default (it runs on the launch's
    num_warps); the others are workers with a requested register budget."""

    name: str
    body: tuple[Stmt, ...]
    warps: int = 4
    regs: Optional[int] = None
    default: bool = False
    loc: Loc = NOLOC


@dataclass(frozen=True)
class Param:
    """A symbolic integer (a trip count, usually) ranging over ``min, min+1, ...``."""

    name: str
    min: int = 0
    loc: Loc = NOLOC


@dataclass(frozen=True)
class Program:
    name: str
    params: tuple[Param, ...]
    pipes: tuple[Pipe, ...]
    partitions: tuple[Partition, ...]
    loc: Loc = NOLOC

    def pipe(self, name: str) -> Optional[Pipe]:
        return next((p for p in self.pipes if p.name == name), None)

    def partition(self, name: str) -> Optional[Partition]:
        return next((p for p in self.partitions if p.name == name), None)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


@dataclass(frozen=True)
class Module:
    """What one input file holds: one or more kernels."""

    kernels: tuple[Program, ...]
    path: Optional[str] = None


def walk_events(body: tuple[Stmt, ...]) -> Iterator[Event]:
    """Every event in ``body``, in source order, through loops and both branches of ifs."""
    for s in body:
        if isinstance(s, Event):
            yield s
        elif isinstance(s, For):
            yield from walk_events(s.body)
        else:
            yield from walk_events(s.then)
            yield from walk_events(s.orelse)


def walk_with_context(body: tuple[Stmt, ...], loops: tuple[For, ...] = ()) -> Iterator[tuple[Event, tuple[For, ...]]]:
    """Every event with the loops that enclose it (outermost first)."""
    for s in body:
        if isinstance(s, Event):
            yield s, loops
        elif isinstance(s, For):
            yield from walk_with_context(s.body, loops + (s,))
        else:
            yield from walk_with_context(s.then, loops)
            yield from walk_with_context(s.orelse, loops)
