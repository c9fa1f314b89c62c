"""Executable semantics of a Pipe IR program (docs/semantics.md), used as the verifier's oracle.

For concrete param values every partition's event sequence is fixed, so each partition is first
expanded into a *trace* by an interpreter of ``For``/``If``/``Event``/``Access`` written here
(independent of ``ir/unroll.py`` and ``passes/`` on purpose: a fuzzing oracle must not share the
code it checks). The simulator then explores every interleaving of the traces over real mbarrier
parity semantics: ``(count, pending, completed)`` barriers, ``acquire`` waiting on ``empty`` at
parity ``φ ^ 1``, ``wait`` on ``full`` at parity ``φ``, arrives on ``commit`` / ``release``.

Slot accesses (``kv.write(i, f)``, ``kv[r].read(i, f)``) are steps of their partition that never
block. Each is checked twice: against its *window* (the writer's ``acquire(i)`` .. ``commit(i)``,
the reader's ``wait(i)`` .. ``release(i)``, a one-shot reader's ``wait(i)`` to the end when it
never releases), which depends only on the partition's own prefix (``access-outside-window``), and
*physically* against the slot at the moment it runs in the interleaving: a read must find the slot
holding committed index ``i`` and not being written (``stale-read``), a write of field ``f`` must
find no reader that sees ``f`` still holding the slot or not yet having waited its last committed
content (``overwrite``). A reader's read of field ``f`` at index ``i`` inside its window, when the
pipe has write accesses (or whatever it has, when the program records every access: a Python
kernel's), must find ``f`` written on its stage: some window of that stage, of an
index ``j <= i``, that wrote ``f`` was committed by then (the writer's state at the read, which in
a run that breaks no other rule is its state at the read's wait); else the read finds
uninitialised shared memory (``unwritten-field``). A close's window writes nothing. The writer's
read of its own slot (``kv.readback(i, f)``) must find ``f`` written in its own window, since
``acquire(i)``: what the stage held before does not count (``unwritten-field`` too); it reads, so
no reader's hold conflicts with it. A write that may not run (``kv.maywrite(i, f)``) is a write
for its window and for the readers' holds, and writes nothing for either of these checks.

Why a state is just the vector of program counters: every piece of simulated state is owned by one
endpoint (the writer owns open stages, slot contents and ``full`` arrivals; each reader owns its
holds, its waited count and its ``empty`` arrivals), each endpoint lives in one partition, and a
partition's trace is fixed. So the whole machine state is a function of how far each partition has
got, and barrier arrival counts do not depend on the order the arrivals happened in. We precompute,
per partition and per program counter, the endpoint-local quantities (cumulative arrivals, slot
index, holds) and explore pc vectors with a visited set.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Mapping, Optional

from ..ir.expr import Affine
from ..ir.nodes import (CLOSED_FLAG, READER_VERBS, VERBS, WRITER_VERBS, Access, Event, For, If, Loc,
                        Param, Pipe, Program)
from ..ir.record import record

ERROR_KINDS = (
    "deadlock",
    "stale-read",
    "overwrite",
    "release-without-wait",
    "commit-without-acquire",
    "double-acquire",
    "wait-on-held-stage",
    "event-after-close",
    "one-shot-reuse",
    "negative-index",
    "access-outside-window",
    "unwritten-field",
    "uncommitted-acquire",
    "missing-release",
    "unconsumed",
    "named-release",
)

MAX_ERRORS = 20


@record
class SimError:
    """One dynamic violation of the pipe contract, at the source location of the failing event."""

    kind: str
    message: str
    loc: Loc
    blocked: tuple[tuple[str, Loc], ...] = ()  # deadlock: (partition, loc of its blocked event)

    def __str__(self) -> str:
        return f"{self.loc}: error: {self.message} [{self.kind}]"


@dataclass
class SimResult:
    """The outcome of exploring every interleaving for one assignment of the params."""

    params: dict[str, int]
    errors: list[SimError]
    states: int
    complete: bool

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def kinds(self) -> set[str]:
        return {e.kind for e in self.errors}


class StructuralError(Exception):
    """The program is outside what the semantics can model (e.g. two writers of one pipe)."""

    def __init__(self, message: str, loc: Optional[Loc] = None):
        self.loc = loc
        self.message = message
        super().__init__(f"{loc}: {message}" if loc is not None else message)


# --------------------------------------------------------------------------------------------
# Structure: roles, field views and field groups of every pipe.


@dataclass
class _PipeInfo:
    pipe: Pipe
    writer: Optional[int] = None  # partition index of the writer
    reader_part: dict[str, Optional[int]] = field(default_factory=dict)  # reader name -> partition
    views: dict[str, frozenset[str]] = field(default_factory=dict)
    groups: list[tuple[str, ...]] = field(default_factory=list)  # reader names of each field group
    fields_of_group: list[tuple[str, ...]] = field(default_factory=list)
    written: frozenset[str] = frozenset()  # the fields the pipe's write accesses fill (any run)
    may_written: dict[str, int] = field(default_factory=dict)  # field -> line of a maywrite
    filled_stages: dict[str, set[int]] = field(default_factory=dict)  # field -> stages written
    checks_fills: bool = False  # its reads must find their field written (not a skeleton)

    @property
    def one_shot(self) -> bool:
        return self.pipe.one_shot

    def stage_phase(self, i: int) -> tuple[int, int]:
        # One-shot pipes have a single stage whose full barrier is waited at phase 0 (docs/semantics.md);
        # their index is only a name for the one slot.
        if self.pipe.one_shot:
            return 0, 0
        c = self.pipe.capacity
        return i % c, (i // c) % 2


def _walk(body, out: list, accesses: list) -> None:
    for st in body:
        if isinstance(st, Event):
            out.append(st)
        elif isinstance(st, Access):
            accesses.append(st)
        elif isinstance(st, For):
            _walk(st.body, out, accesses)
        elif isinstance(st, If):
            _walk(st.then, out, accesses)
            _walk(st.orelse, out, accesses)
        else:
            raise StructuralError(f"unknown statement {st!r}", getattr(st, "loc", None))


def _check_access_structure(a: Access, infos: dict[str, "_PipeInfo"]) -> None:
    """An access must name a declared pipe and field, and a read (like a reader event) a declared
    reader on an SPMC pipe and none on an SPSC pipe (a write is the writer's: a reader name on it
    means nothing, as in ``Access.endpoint``). When it runs is not structural: an access outside
    its endpoint's window is a dynamic error."""
    if a.side not in ("writer", "reader"):
        raise StructuralError(f"slot access side '{a.side}' (expected writer or reader)", a.loc)
    info = infos.get(a.pipe)
    if info is None:
        raise StructuralError(f"{a.verb} of unknown pipe '{a.pipe}'", a.loc)
    pipe = info.pipe
    if a.field == CLOSED_FLAG and a.side == "writer":
        raise StructuralError(f"write of {pipe.name}.{a.field}: the closed flag is set by close() "
                              f"and cleared by acquire(), never written as a field", a.loc)
    if a.field not in pipe.fields and a.field != CLOSED_FLAG:
        fields = ", ".join(pipe.fields) or "none"
        raise StructuralError(f"{a.verb} of unknown field '{a.field}' of pipe '{pipe.name}' "
                              f"(fields: {fields})", a.loc)
    rname = a.reader or ""
    if a.side == "writer":
        return
    if pipe.readers and rname not in pipe.readers:
        what = (f"'{rname}' is not a declared reader" if rname else "a read that names no reader")
        raise StructuralError(f"{what} of pipe '{pipe.name}' (readers: "
                              f"{', '.join(pipe.readers)})", a.loc)
    elif not pipe.readers and rname:
        raise StructuralError(f"'{rname}' is not a declared reader of pipe '{pipe.name}' (it "
                              "declares none)", a.loc)


def _analyze(program: Program) -> dict[str, _PipeInfo]:
    """Check the structural rules and compute roles and field groups of every pipe."""
    infos: dict[str, _PipeInfo] = {}
    for pipe in program.pipes:
        if pipe.name in infos:
            raise StructuralError(f"pipe '{pipe.name}' declared twice", pipe.loc)
        if pipe.capacity < 1:
            raise StructuralError(f"pipe '{pipe.name}' has capacity {pipe.capacity} < 1", pipe.loc)
        if len(set(pipe.readers)) != len(pipe.readers):
            raise StructuralError(f"pipe '{pipe.name}' declares a reader twice", pipe.loc)
        if len(set(pipe.fields)) != len(pipe.fields):
            raise StructuralError(f"pipe '{pipe.name}' declares a field twice", pipe.loc)
        infos[pipe.name] = _PipeInfo(pipe)

    writer_loc: dict[str, tuple[int, Loc]] = {}
    reader_loc: dict[tuple[str, str], tuple[int, Loc]] = {}
    view_loc: dict[tuple[str, str], tuple[frozenset[str], Loc]] = {}
    all_accesses: list[tuple[int, Access]] = []
    for pi, part in enumerate(program.partitions):
        events: list[Event] = []
        accesses: list[Access] = []
        _walk(part.body, events, accesses)
        for a in accesses:
            _check_access_structure(a, infos)
        all_accesses += [(pi, a) for a in accesses]
        for ev in events:
            if ev.verb not in VERBS:
                raise StructuralError(f"unknown verb '{ev.verb}'", ev.loc)
            info = infos.get(ev.pipe)
            if info is None:
                raise StructuralError(f"unknown pipe '{ev.pipe}'", ev.loc)
            pipe = info.pipe
            if ev.fields is not None:
                unknown = [f for f in ev.fields if f not in pipe.fields]
                if unknown:
                    raise StructuralError(
                        f"field view of pipe '{pipe.name}' names unknown field(s) "
                        f"{', '.join(unknown)} (fields: {', '.join(pipe.fields)})", ev.loc)
            if ev.verb in WRITER_VERBS:
                prev = writer_loc.setdefault(ev.pipe, (pi, ev.loc))
                if prev[0] != pi:
                    raise StructuralError(
                        f"pipe '{pipe.name}' is written from partitions "
                        f"'{program.partitions[prev[0]].name}' ({prev[1]}) and '{part.name}'",
                        ev.loc)
                continue
            rname = ev.reader or ""
            if pipe.readers:
                if not rname:
                    raise StructuralError(
                        f"{ev.verb} on pipe '{pipe.name}' names no reader; it declares readers "
                        f"({', '.join(pipe.readers)})", ev.loc)
                if rname not in pipe.readers:
                    raise StructuralError(
                        f"'{rname}' is not a declared reader of pipe '{pipe.name}' "
                        f"(readers: {', '.join(pipe.readers)})", ev.loc)
            elif rname:
                raise StructuralError(
                    f"'{rname}' is not a declared reader of pipe '{pipe.name}' (it declares none)",
                    ev.loc)
            prev = reader_loc.setdefault((ev.pipe, rname), (pi, ev.loc))
            if prev[0] != pi:
                other = program.partitions[prev[0]].name
                what = (f"reader '{rname}' of pipe '{pipe.name}'" if rname
                        else f"single-reader pipe '{pipe.name}'")
                raise StructuralError(
                    f"{what} is read from partitions '{other}' ({prev[1]}) and '{part.name}'",
                    ev.loc)
            if ev.fields is not None:
                fs = frozenset(ev.fields)
                pv = view_loc.setdefault((ev.pipe, rname), (fs, ev.loc))
                if pv[0] != fs:
                    raise StructuralError(
                        f"views of reader '{rname or '<single>'}' of pipe '{pipe.name}' disagree: "
                        f"({', '.join(sorted(pv[0]))}) at {pv[1]} vs ({', '.join(sorted(fs))})",
                        ev.loc)
                if not fs and pipe.fields:
                    raise StructuralError(
                        f"reader '{rname or '<single>'}' of pipe '{pipe.name}' sees no field, so "
                        "it has no barrier to wait on", ev.loc)

    for name, info in infos.items():
        pipe = info.pipe
        if name in writer_loc:
            info.writer = writer_loc[name][0]
        for r in pipe.reader_names:
            info.reader_part[r] = reader_loc[(name, r)][0] if (name, r) in reader_loc else None
            info.views[r] = view_loc[(name, r)][0] if (name, r) in view_loc else frozenset(pipe.fields)
        if not pipe.fields:
            # A pipe without payload is a pure signal: one group holding every reader (otherwise
            # it would have no barrier at all and synchronise nothing).
            info.groups = [tuple(pipe.reader_names)]
            info.fields_of_group = [()]
            continue
        by_key: dict[tuple[str, ...], list[str]] = {}
        for f in pipe.fields:
            key = tuple(r for r in pipe.reader_names if f in info.views[r])
            if key:  # a field nobody sees has no barrier
                by_key.setdefault(key, []).append(f)
        info.groups = list(by_key)
        info.fields_of_group = [tuple(v) for v in by_key.values()]
    for pi, a in all_accesses:
        _check_access_owner(program, pi, a, infos[a.pipe])
        if a.side == "writer" and a.may:
            infos[a.pipe].may_written.setdefault(a.field, a.loc.line)
        elif a.is_write:
            infos[a.pipe].written |= {a.field}
    for info in infos.values():
        # a pipe of a .pipe file without any write access is a protocol skeleton; a Python
        # kernel's program records every access, so there a pipe without writes is unwritten
        info.checks_fills = program.every_access or bool(info.written or info.may_written)
    return infos


def _check_access_owner(program: Program, pi: int, a: Access, info: "_PipeInfo") -> None:
    """An access belongs to an endpoint, and an endpoint to one partition: a write from another
    partition than the pipe's writer, or a read from another partition than the reader's, is the
    same fault as that endpoint's events in two partitions; a read of a field outside the reader's
    view reads a buffer its barriers do not cover. (An endpoint no partition performs has no
    owner: its accesses are only outside their window, dynamically.)"""
    parts = program.partitions
    if a.side == "writer":
        owner, endpoint = info.writer, f"the writer of pipe '{a.pipe}'"
    else:
        r = a.reader or ""
        owner = info.reader_part.get(r)
        endpoint = f"reader '{r}' of pipe '{a.pipe}'" if r else f"the reader of pipe '{a.pipe}'"
        if a.field not in info.views[r] and a.field != CLOSED_FLAG:
            raise StructuralError(
                f"read of {a.pipe}.{a.field}: field '{a.field}' is outside the view of {endpoint} "
                f"({', '.join(sorted(info.views[r]))})", a.loc)
    if owner is not None and owner != pi:
        raise StructuralError(
            f"{a.verb} of {a.pipe}.{a.field} in partition '{parts[pi].name}', but {endpoint} is "
            f"partition '{parts[owner].name}'", a.loc)


# --------------------------------------------------------------------------------------------
# The interpreter: a partition body -> its trace of (event or access, concrete index).


def _eval(expr: Affine, env: Mapping[str, int], loc: Loc) -> int:
    total = expr.const
    for v, c in expr.terms:
        if v not in env:
            raise StructuralError(f"'{v}' is neither a loop variable nor a param", loc)
        total += c * env[v]
    return total


def _eval_cond(cond, env: Mapping[str, int], loc: Loc) -> bool:
    try:
        return bool(cond.eval(env))
    except KeyError as e:
        raise StructuralError(f"condition '{cond}': {e.args[0]}", loc) from None


_UNSET = object()


def _expand(body, env: dict[str, int], out: list[tuple[Event, int]]) -> None:
    for st in body:
        if isinstance(st, (Event, Access)):
            out.append((st, _eval(st.index, env, st.loc)))
        elif isinstance(st, For):
            if st.step == 0:
                raise StructuralError(f"for {st.var}: range() step must not be zero", st.loc)
            lo, hi = _eval(st.start, env, st.loc), _eval(st.stop, env, st.loc)
            saved = env.get(st.var, _UNSET)
            for v in range(lo, hi, st.step):  # Python's range, negative steps included
                env[st.var] = v
                _expand(st.body, env, out)
            if saved is _UNSET:
                env.pop(st.var, None)
            else:
                env[st.var] = saved
        elif isinstance(st, If):
            _expand(st.then if _eval_cond(st.cond, env, st.loc) else st.orelse, env, out)
        else:
            raise StructuralError(f"unknown statement {st!r}", getattr(st, "loc", None))


# --------------------------------------------------------------------------------------------
# Per-partition scan: endpoint-local checks and the pc-indexed quantities other partitions read.

_ERR, _FREE, _ACQ, _WAIT, _ACC = 0, 1, 2, 3, 4


class _Step:
    """One event of a trace, compiled: what it waits on and what it checks once it passes."""

    __slots__ = ("code", "ev", "i", "s", "phi", "info", "reader", "error", "fill", "fillq",
                 "empties", "overwrite", "commits", "wq", "lastidx", "open", "mywaits", "named")
    # An access step (_ACC) keeps its window error, if any, in ``error`` and runs anyway: the
    # window is a rule of the partition's own prefix, the physical check one of the interleaving.
    # A read inside its window of a pipe with write accesses keeps in ``fill`` (owned by
    # partition ``fillq``) the writer's pc-indexed smallest committed index of a window of its
    # stage that wrote its field (None: none yet): the read checks it when it runs.

    def __init__(self, code: int, ev: Event, i: int):
        self.code = code
        self.ev = ev
        self.i = i
        self.error: Optional[SimError] = None
        self.fill: Optional[list] = None
        self.fillq = 0


def _describe(ev, i: int) -> str:
    if isinstance(ev, Access):
        sel = f"[{ev.reader}]" if ev.side == "reader" and ev.reader else ""
        return f"{ev.pipe}{sel}.{ev.verb}({i}, {ev.field})"
    if ev.verb in READER_VERBS and ev.reader:
        return f"{ev.pipe}[{ev.reader}].{ev.verb}({i})"
    return f"{ev.pipe}.{ev.verb}({i})"


class _Scan:
    """Replays one partition's trace alone, for the endpoints it owns.

    Records every endpoint-local quantity as change points ``key -> [(pc, value)]`` (value in
    effect from that pc on), and truncates the trace at its first endpoint-local error (those
    depend only on the partition's own prefix, so they fire whenever the partition gets there).
    """

    def __init__(self, pidx: int, pname: str, trace: list[tuple[Event, int]],
                 infos: dict[str, _PipeInfo]):
        self.pidx, self.pname, self.infos = pidx, pname, infos
        self.steps: list[_Step] = []
        self.changes: dict[tuple, list[tuple[int, object]]] = {}
        self.commit_log: dict[tuple[str, int], list[tuple[int, Loc]]] = {}
        self.open_end: list[tuple[str, int, Loc]] = []   # (pipe, index, loc of acquire)
        self.held_end: list[tuple[str, str, int, Loc]] = []  # (pipe, reader, index, loc of wait)
        self.pending: dict[tuple[str, int], set[str]] = {}  # fields written in each open window
        self.fillmin: dict[tuple[str, int, str], int] = {}  # smallest committed index per field
        self._run(trace)

    def _set(self, key: tuple, pc: int, value) -> None:
        self.changes.setdefault(key, []).append((pc, value))

    def _err(self, kind: str, ev: Event, i: int, msg: str) -> _Step:
        step = _Step(_ERR, ev, i)
        step.error = SimError(kind, msg, ev.loc)
        return step

    def _run(self, trace: list[tuple[Event, int]]) -> None:
        # writer state per pipe / reader state per (pipe, reader): only this partition's endpoints
        wopen: dict[str, dict[int, tuple[int, Loc]]] = {}
        wclosed: dict[str, tuple[int, Loc]] = {}
        wacq: dict[str, Loc] = {}
        wcom: dict[str, Loc] = {}
        commits: dict[tuple[str, int], int] = {}
        holds: dict[tuple[str, str], dict[int, tuple[int, Loc]]] = {}
        nwait: dict[tuple[str, str], Loc] = {}
        nrel: dict[tuple[str, str], Loc] = {}
        waits: dict[tuple[str, str, int], int] = {}
        rels: dict[tuple[str, str, int], int] = {}
        # (pipe, reader name or None for the writer, stage) -> (verb, index, loc) of the event
        # that last closed a window there: a late access names it
        closer: dict[tuple[str, Optional[str], int], tuple[str, int, Loc]] = {}
        who = f"partition '{self.pname}'"

        for pc, (ev, i) in enumerate(trace):
            info = self.infos[ev.pipe]
            desc = _describe(ev, i)
            nxt = pc + 1
            if i < 0:
                self.steps.append(self._err("negative-index", ev, i,
                                            f"{who}: {desc}: negative index {i}"))
                return
            s, phi = info.stage_phase(i)
            if isinstance(ev, Access):
                self.steps.append(self._access(ev, i, s, info, wopen, holds, closer))
                continue
            if ev.verb in WRITER_VERBS:
                p = ev.pipe
                opened = wopen.setdefault(p, {})
                if p in wclosed:
                    ci, cl = wclosed[p]
                    self.steps.append(self._err(
                        "event-after-close", ev, i,
                        f"{who}: {desc} after pipe '{p}' was closed by close({ci}) at {cl}"))
                    return
                if info.one_shot:
                    first = None
                    if ev.verb in ("acquire", "close") and p in wacq:
                        first = wacq[p]
                    elif ev.verb in ("commit", "close") and p in wcom:
                        first = wcom[p]
                    if first is not None:
                        self.steps.append(self._err(
                            "one-shot-reuse", ev, i,
                            f"{who}: {desc}: one-shot pipe '{p}' was already used by its writer "
                            f"at {first}"))
                        return
                if ev.verb in ("acquire", "close") and s in opened:
                    oi, ol = opened[s]
                    self.steps.append(self._err(
                        "double-acquire", ev, i,
                        f"{who}: {desc}: stage {s} of pipe '{p}' is still open for index {oi} "
                        f"(acquired at {ol})"))
                    return
                if ev.verb == "commit" and (s not in opened or opened[s][0] != i):
                    why = (f"stage {s} is open for index {opened[s][0]} (acquired at {opened[s][1]})"
                           if s in opened else f"stage {s} was not acquired")
                    self.steps.append(self._err("commit-without-acquire", ev, i,
                                                f"{who}: {desc} of pipe '{p}': {why}"))
                    return
                step = _Step(_ACQ if ev.verb in ("acquire", "close") else _FREE, ev, i)
                step.s, step.phi, step.info = s, phi, info
                self.steps.append(step)
                if ev.verb in ("acquire", "close"):
                    wacq.setdefault(p, ev.loc)
                if ev.verb == "acquire":
                    opened[s] = (i, ev.loc)
                    self._set(("open", p, s), nxt, i)
                else:  # commit or close: publish index i on stage s
                    wcom.setdefault(p, ev.loc)
                    closer[(p, None, s)] = (ev.verb, i, ev.loc)
                    if ev.verb == "commit":
                        del opened[s]
                        self._set(("open", p, s), nxt, None)
                        for f in sorted(self.pending.pop((p, s), ())):
                            if self.fillmin.get((p, s, f), i + 1) > i:
                                self.fillmin[(p, s, f)] = i
                                self._set(("fillmin", p, s, f), nxt, i)
                    else:
                        wclosed[p] = (i, ev.loc)
                    n = commits[(p, s)] = commits.get((p, s), 0) + 1
                    self._set(("commits", p, s), nxt, n)
                    self._set(("lastidx", p, s), nxt, i)
                    self.commit_log.setdefault((p, s), []).append((i, ev.loc))
            else:
                p, r = ev.pipe, ev.reader or ""
                rk = (p, r)
                rwho = f"reader '{r}' of '{p}' ({who})" if r else f"reader of '{p}' ({who})"
                held = holds.setdefault(rk, {})
                if info.one_shot:
                    seen = nwait if ev.verb == "wait" else nrel
                    if rk in seen:
                        self.steps.append(self._err(
                            "one-shot-reuse", ev, i,
                            f"{rwho}: {desc}: one-shot pipe '{p}' already had a {ev.verb} by this "
                            f"reader at {seen[rk]}"))
                        return
                if ev.verb == "wait" and s in held:
                    hi, hl = held[s]
                    self.steps.append(self._err(
                        "wait-on-held-stage", ev, i,
                        f"{rwho}: {desc}: stage {s} is still held for index {hi} (waited at {hl})"))
                    return
                if ev.verb == "release" and (s not in held or held[s][0] != i):
                    why = (f"stage {s} is held for index {held[s][0]}" if s in held
                           else f"stage {s} is not held")
                    self.steps.append(self._err("release-without-wait", ev, i,
                                                f"{rwho}: {desc}: {why}"))
                    return
                if ev.verb == "wait":
                    step = _Step(_WAIT, ev, i)
                    step.s, step.phi, step.info, step.reader = s, phi, info, r
                    self.steps.append(step)
                    nwait.setdefault(rk, ev.loc)
                    held[s] = (i, ev.loc)
                    self._set(("hold", p, r, s), nxt, i)
                    n = waits[(p, r, s)] = waits.get((p, r, s), 0) + 1
                    self._set(("waits", p, r, s), nxt, n)
                else:
                    step = _Step(_FREE, ev, i)
                    self.steps.append(step)
                    nrel.setdefault(rk, ev.loc)
                    del held[s]
                    closer[(p, r, s)] = ("release", i, ev.loc)
                    self._set(("hold", p, r, s), nxt, None)
                    n = rels[(p, r, s)] = rels.get((p, r, s), 0) + 1
                    self._set(("rels", p, r, s), nxt, n)

        self._finish(wopen, holds)

    def _access(self, a: Access, i: int, s: int, info: _PipeInfo, wopen: dict, holds: dict,
                closer: dict) -> _Step:
        """An access step, with its window error when this partition does not hold the slot of
        index ``i`` for the access's endpoint at this point of its trace."""
        step = _Step(_ACC, a, i)
        step.s, step.info = s, info
        step.reader = (a.reader or "") if a.side == "reader" else None
        p = a.pipe
        if a.side == "writer":
            cur = wopen.get(p, {}).get(s)
            key: tuple = (p, None, s)
            opener, holding = f"{p}.acquire({i})", "open"
        else:
            r = step.reader
            cur = holds.get((p, r), {}).get(s)
            key = (p, r, s)
            opener, holding = (f"{p}[{r}].wait({i})" if r else f"{p}.wait({i})"), "held"
        if cur is not None and cur[0] == i:
            if a.readback:
                if a.field not in self.pending.get((p, s), ()):
                    step.error = SimError(
                        "unwritten-field", f"partition '{self.pname}': {_describe(a, i)} reads "
                        f"field '{a.field}' (stage {s}) before its window (acquire({i}) at "
                        f"{cur[1]}) wrote it: an acquire starts the slot unwritten, so the read "
                        f"finds uninitialised or stale shared memory", a.loc)
            elif a.side == "writer":
                if not a.may:  # a write that may not run fills nothing
                    self.pending.setdefault((p, s), set()).add(a.field)
                    info.filled_stages.setdefault(a.field, set()).add(s)
            elif info.checks_fills and a.field != CLOSED_FLAG:  # acquire or close sets the flag
                step.fill = []  # filled in by _compile
            return step
        if cur is not None:
            why = f"stage {s} is {holding} for index {cur[0]} (since {cur[1]}), not {i}"
        elif key in closer and closer[key][1] == i:
            verb, _, loc = closer[key]
            why = f"{verb}({i}) at {loc} closed its window"
        else:
            why = f"no {opener} is open here"
        step.error = SimError("access-outside-window",
                              f"partition '{self.pname}': {_describe(a, i)} outside its window: "
                              f"{why}", a.loc)
        return step

    def _finish(self, wopen: dict, holds: dict) -> None:
        """What is still open or held at the end of the trace (checked in the final state)."""
        for p, opened in wopen.items():
            for s, (i, loc) in sorted(opened.items()):
                self.open_end.append((p, i, loc))
        for (p, r), held in holds.items():
            if self.infos[p].one_shot:
                continue  # a one-shot release is optional
            for s, (i, loc) in sorted(held.items()):
                self.held_end.append((p, r, i, loc))


_DEFAULTS = {"open": None, "commits": 0, "lastidx": None, "hold": None, "waits": 0, "rels": 0,
             "fillmin": None}


class _Tables:
    """pc-indexed arrays of every endpoint-local quantity, keyed like the scan's change points.

    A quantity is read as ``arr[state[q]]`` where ``q`` is its owner partition. Quantities of an
    endpoint no partition performs are constant; they point at a dummy slot ``n`` of the state
    vector that is always 0 (saves a branch in the hot loop).
    """

    def __init__(self, scans: list[_Scan]):
        self.n = len(scans)
        self.arrays: dict[tuple, tuple[int, list]] = {}
        self.lengths = [len(sc.steps) + 1 for sc in scans]
        for q, sc in enumerate(scans):
            length = len(sc.steps) + 1
            for key, changes in sc.changes.items():
                arr = [_DEFAULTS[key[0]]] * length
                for (pc, value), nxt in zip(changes, changes[1:] + [(length, None)]):
                    for k in range(pc, nxt[0]):
                        arr[k] = value
                self.arrays[key] = (q, arr)

    def get(self, key: tuple, owner: Optional[int]) -> tuple[int, list]:
        """The (owner, array) of ``key``; ``owner`` is the partition of the endpoint it belongs
        to (None: no partition performs it)."""
        got = self.arrays.get(key)
        if got is not None:
            return got
        if owner is None:
            return (self.n, [_DEFAULTS[key[0]]])
        return (owner, [_DEFAULTS[key[0]]] * self.lengths[owner])


def _compile(scans: list[_Scan], infos: dict[str, _PipeInfo]) -> _Tables:
    """Fill in, for every acquire and wait, the arrays its blocking test and post-checks read."""
    tables = _Tables(scans)
    for sc in scans:
        for step in sc.steps:
            if step.code not in (_ACQ, _WAIT, _ACC):
                continue
            info, s, p = step.info, step.s, step.ev.pipe
            w = info.writer
            step.wq, step.commits = tables.get(("commits", p, s), w)
            step.lastidx = tables.get(("lastidx", p, s), w)[1]
            step.open = tables.get(("open", p, s), w)[1]
            if step.code == _ACC:
                if step.ev.readback:  # a read of its own window: no physical check
                    continue
                if step.ev.side == "writer":
                    # a write of field f conflicts with the readers that see f
                    f = step.ev.field
                    readers = sorted({r for g in info.groups for r in g if f in info.views[r]})
                    step.overwrite = _reader_tables(tables, info, p, s, readers)
                elif step.fill is not None:
                    step.fillq, step.fill = tables.get(("fillmin", p, s, step.ev.field), w)
                continue
            if step.code == _ACQ:
                step.named = info.pipe.named
                step.empties = []
                if not info.one_shot:
                    for g in info.groups:
                        contribs = tuple(tables.get(("rels", p, r, s), info.reader_part[r])
                                         for r in g)
                        # acquire waits on empty[g][s] at parity φ^1: a fresh barrier (0 phases
                        # completed) passes parity 1, so the first lap (φ = 0) is free and lap k
                        # needs the readers' releases of lap k-1.
                        step.empties.append((len(g), step.phi ^ 1, contribs))
                readers = sorted({r for g in info.groups for r in g})
                step.overwrite = _reader_tables(tables, info, p, s, readers)
            else:
                r = step.reader
                step.mywaits = tables.get(("waits", p, r, s), info.reader_part[r])[1]
    return tables


def _reader_tables(tables: _Tables, info: _PipeInfo, p: str, s: int, readers) -> tuple:
    """(reader, owner, hold array, waits array) of each reader on stage ``s``: what an overwrite
    check reads."""
    return tuple((r, *tables.get(("hold", p, r, s), info.reader_part[r]),
                  tables.get(("waits", p, r, s), info.reader_part[r])[1])
                 for r in readers)


# --------------------------------------------------------------------------------------------
# Exploration.


def simulate(program: Program, params: Mapping[str, int], max_states: int = 200_000) -> SimResult:
    """Run every interleaving of ``program``'s partitions for these param values.

    Raises StructuralError for programs the semantics cannot model; returns the dynamic errors
    (deduplicated by kind and location) otherwise. A value outside its param's domain is a
    ValueError: the program says nothing about it.
    """
    infos = _analyze(program)
    env: dict[str, int] = {}
    for prm in program.params:
        if prm.name not in params:
            raise StructuralError(f"param '{prm.name}' has no value", prm.loc)
        env[prm.name] = int(params[prm.name])
        if not _in_domain(prm, env[prm.name]):
            raise ValueError(f"{prm.name} = {env[prm.name]} is outside its domain "
                             f"({_domain(prm)})")

    parts = program.partitions
    traces = []
    for part in parts:
        trace: list[tuple[Event, int]] = []
        _expand(part.body, dict(env), trace)
        traces.append(trace)
    # a read under `if not res.is_closed:` does not run at the index its pipe's writer closed
    # (the flag it tests, in the slot it holds, is set there)
    closed = {(ev.pipe, i) for trace in traces for ev, i in trace
              if isinstance(ev, Event) and ev.verb == "close"}
    scans = []
    for q, (part, trace) in enumerate(zip(parts, traces)):
        trace = [(ev, i) for ev, i in trace if not (
            isinstance(ev, Access) and ev.open_only and (ev.pipe, i) in closed)]
        scans.append(_Scan(q, part.name, trace, infos))
    _compile(scans, infos)

    n = len(parts)
    steps = [sc.steps for sc in scans]
    lens = [len(s) for s in steps]
    names = [p.name for p in parts]
    errors: dict[tuple[str, Loc], SimError] = {}

    capped = False

    def record(err: SimError) -> None:
        nonlocal capped
        key = (err.kind, err.loc)
        if key in errors:
            return
        if len(errors) >= MAX_ERRORS:
            capped = True  # the run is wrong many times over; more would not help the reader
            return
        errors[key] = err

    start = (0,) * (n + 1)  # the last slot is the dummy owner of constant quantities
    visited = {start}
    stack = [start]
    complete = True
    rng = range(n)

    while stack:
        if len(errors) >= MAX_ERRORS:
            capped = True
            break
        st = stack.pop()
        moved = False
        unfinished = False
        for q in rng:
            pc = st[q]
            if pc == lens[q]:
                continue
            unfinished = True
            step = steps[q][pc]
            code = step.code
            if code == _ERR:
                record(step.error)
                moved = True
                continue
            if code == _ACQ:
                blocked = False
                for cnt, parity, contribs in step.empties:
                    arrivals = 0
                    for owner, arr in contribs:
                        arrivals += arr[st[owner]]
                    if (arrivals // cnt) & 1 == parity:  # wait(parity) passes iff completed%2 != parity
                        blocked = True
                        break
                if blocked and not step.named:
                    continue
                if blocked:
                    # a named pipe has no empty barrier: the acquire runs, before the release
                    record(SimError("named-release", f"partition '{names[q]}': "
                                    f"{_describe(step.ev, step.i)} runs before the reader's "
                                    f"release of the slot's previous use (barrier=\"named\": no "
                                    f"empty barrier holds it back)", step.ev.loc))
                moved = True
                err = _check_overwrite(step, st, q, names)
                if err is not None:
                    record(err)
                    continue
            elif code == _WAIT:
                wpc = st[step.wq]
                if step.commits[wpc] & 1 == step.phi:  # full count 1: completed == commits
                    continue
                moved = True
                err = _check_stale(step, st, q, wpc, names)
                if err is not None:
                    record(err)
                    continue
            elif code == _ACC:
                moved = True
                if step.error is not None:
                    record(step.error)
                if step.fill is not None:
                    j = step.fill[st[step.fillq]]
                    if j is None or j > step.i:
                        record(_unwritten(step, names[q]))
                err = _check_access(step, st, q, names)
                if err is not None:
                    record(err)
                    continue
            else:
                moved = True
            nxt = st[:q] + (pc + 1,) + st[q + 1:]
            if nxt not in visited:
                if len(visited) >= max_states:
                    complete = False
                    stack.clear()
                    break
                visited.add(nxt)
                stack.append(nxt)
        if not unfinished:
            for err in _terminal_errors(scans, infos, names):
                record(err)
        elif not moved:
            blocked_at = tuple((names[q], steps[q][st[q]].ev.loc) for q in rng if st[q] < lens[q])
            what = "; ".join(
                f"'{names[q]}' in {_describe(steps[q][st[q]].ev, steps[q][st[q]].i)} at "
                f"{steps[q][st[q]].ev.loc}" for q in rng if st[q] < lens[q])
            record(SimError("deadlock", f"deadlock: no partition can move; blocked: {what}",
                            blocked_at[0][1], blocked_at))

    # complete=False also when the error cap stopped the search: not everything was explored
    return SimResult(dict(env), list(errors.values()), len(visited), complete and not capped)


def _unwritten(step: _Step, pname: str) -> SimError:
    """The error of a read whose stage holds no value of its field (rule 7): it names the stage,
    and the stages (or fields) the pipe's writes do fill."""
    a, i, s, info = step.ev, step.i, step.s, step.info
    rname = f"reader '{step.reader}'" if step.reader else "the reader"
    stages = sorted(info.filled_stages.get(a.field, ()))
    if stages:
        why = (f"field '{a.field}' of stage {s} was never written (no window of stage {s} "
               f"committed by then, at an index <= {i}, writes it; its writes fill "
               f"stage{'s' if len(stages) > 1 else ''} {', '.join(map(str, stages))})")
    elif a.field in info.written:
        why = (f"field '{a.field}' of stage {s} was never written (no write of it runs for "
               f"these param values)")
    elif a.field in info.may_written:
        why = (f"field '{a.field}' of stage {s} is never surely written (its write at line "
               f"{info.may_written[a.field]} may not run)")
    elif not info.written and not info.may_written:
        why = f"nothing writes the slots of pipe '{a.pipe}'"
    else:
        why = (f"no write of pipe '{a.pipe}' fills it (its writes fill only "
               f"{', '.join(sorted(info.written))})")
    return SimError("unwritten-field", f"{rname} of '{a.pipe}' (partition '{pname}'): "
                                       f"{_describe(a, i)} reads field '{a.field}' (stage {s}), "
                                       f"but {why}: uninitialised shared memory", a.loc)


def _check_overwrite(step: _Step, st: tuple, q: int, names: list[str]) -> Optional[SimError]:
    """After an acquire/close passed its empty barriers: every reader must be done with the slot.
    The message names every reader that is not."""
    whys = _busy_readers(step, st, names)
    if not whys:
        return None
    return SimError("overwrite", f"partition '{names[q]}': {_describe(step.ev, step.i)} passed "
                                 f"its empty barrier but {'; '.join(whys)}", step.ev.loc)


def _check_access(step: _Step, st: tuple, q: int, names: list[str]) -> Optional[SimError]:
    """The physical check of an access at this state: a read finds the slot holding committed
    index i (not being written); a write finds every reader of its field done with the slot."""
    a = step.ev
    if a.readback:  # the writer's read inside its own window (checked when its trace was scanned)
        return None
    if a.side == "writer":
        whys = _busy_readers(step, st, names)
        if not whys:
            return None
        return SimError("overwrite", f"partition '{names[q]}': {_describe(a, step.i)} writes "
                                     f"stage {step.s} but {'; '.join(whys)}", a.loc)
    wpc = st[step.wq]
    opened, last = step.open[wpc], step.lastidx[wpc]
    if opened is not None:
        why = f"the slot is being written (index {opened})"
    elif step.commits[wpc] == 0:
        why = "nothing was committed on this stage"
    elif last != step.i:
        why = f"the slot holds index {last}"
    else:
        return None
    return SimError("stale-read", f"partition '{names[q]}': {_describe(a, step.i)} reads stage "
                                  f"{step.s} but {why}", a.loc)


def _busy_readers(step: _Step, st: tuple, names: list[str]) -> list[str]:
    """Why the slot of ``step``'s stage is not the writer's to fill: each reader (of
    ``step.overwrite``) that still holds it or has not waited its last committed index."""
    wpc = st[step.wq]
    c = step.commits[wpc]
    whys = []
    for r, owner, hold, waits in step.overwrite:
        rpc = st[owner]
        h = hold[rpc]
        rname = f"reader '{r}'" if r else "the reader"
        where = f" (partition '{names[owner]}')" if owner < len(names) else " (in no partition)"
        if h is not None:
            whys.append(f"{rname}{where} still holds stage {step.s} (index {h})")
        elif waits[rpc] < c:
            whys.append(f"{rname}{where} has not waited index {step.lastidx[wpc]} committed on "
                        f"stage {step.s}")
    return whys


def _check_stale(step: _Step, st: tuple, q: int, wpc: int, names: list[str]) -> Optional[SimError]:
    """After a wait passed its full barrier: the slot must hold index i, committed, unread by us."""
    s, i = step.s, step.i
    c = step.commits[wpc]
    opened = step.open[wpc]
    mine = step.mywaits[st[q]]
    if opened is not None:
        why = f"the slot is being written (index {opened})"
    elif c == 0:
        why = "nothing was committed on this stage"
    elif step.lastidx[wpc] != i:
        why = f"the slot holds index {step.lastidx[wpc]}"
    elif c <= mine:
        why = f"index {i} on this stage was already consumed by this reader (phase aliasing)"
    elif c > mine + 1:
        why = f"this reader skipped {c - mine - 1} earlier commit(s) of stage {s}"
    else:
        return None
    rname = f"reader '{step.reader}'" if step.reader else "reader"
    return SimError("stale-read", f"{rname} (partition '{names[q]}'): "
                                  f"{_describe(step.ev, i)} passed the full barrier of stage {s} "
                                  f"but {why}", step.ev.loc)


def _terminal_errors(scans: list[_Scan], infos: dict[str, _PipeInfo], names: list[str]):
    """Checks at the state where every partition is at its end."""
    for sc in scans:
        for p, i, loc in sc.open_end:
            yield SimError("uncommitted-acquire",
                           f"partition '{sc.pname}': {p}.acquire({i}) was never committed", loc)
        for p, r, i, loc in sc.held_end:
            rname = f"reader '{r}' of '{p}'" if r else f"reader of '{p}'"
            yield SimError("missing-release",
                           f"{rname} (partition '{sc.pname}') never released index {i}", loc)
    for p, info in infos.items():
        if info.writer is None:
            continue
        wsc = scans[info.writer]
        readers = sorted({r for g in info.groups for r in g})
        for (pp, s), log in sorted(wsc.commit_log.items()):
            if pp != p:
                continue
            for r in readers:
                q = info.reader_part[r]
                got = 0
                if q is not None:
                    ch = scans[q].changes.get(("waits", p, r, s))
                    got = ch[-1][1] if ch else 0
                if got < len(log):
                    i, loc = log[got]
                    rname = f"reader '{r}'" if r else "the reader"
                    where = f"partition '{names[q]}'" if q is not None else "in no partition"
                    yield SimError(
                        "unconsumed",
                        f"pipe '{p}': index {i} (stage {s}) was committed but {rname} ({where}) "
                        f"never waited it", loc)


def _in_domain(prm: Param, value: int) -> bool:
    # written out here rather than Param.contains: the oracle reads the domain on its own
    return (prm.min is None or value >= prm.min) and (prm.max is None or value <= prm.max)


def _domain(prm: Param) -> str:
    lo = "" if prm.min is None else f"{prm.min} <= "
    hi = "" if prm.max is None else f" <= {prm.max}"
    return f"{lo}{prm.name}{hi}" if lo or hi else f"every integer {prm.name}"


#: how far below the default low end (``-max_value``) a param's own minimum is still enumerated
#: from: a derived param's minimum can be an i32 wrap's (``tl.cdiv(N, 64)`` of N <= 2^31 - 1 is at
#: least -2^25), millions of values no small-instance run can visit
FAR_MINIMUM = 1024


def param_values(prm: Param, max_value: int, low: Optional[int] = None) -> range:
    """The small values of ``prm``: from its minimum (``low``, default ``-max_value``, when it has
    none, or when its minimum lies more than FAR_MINIMUM below that) up to ``max_value`` or its
    maximum, whichever is smaller."""
    floor = -max_value if low is None else low
    start = prm.min if prm.min is not None and prm.min >= floor - FAR_MINIMUM else floor
    stop = max_value if prm.max is None else min(max_value, prm.max)
    return range(start, stop + 1)


def simulate_range(program: Program, max_value: int,
                   min_values: Optional[Mapping[str, int]] = None,
                   max_states: int = 200_000, low: Optional[int] = None) -> list[SimResult]:
    """``simulate`` for every combination of param values in their domains up to ``max_value``:
    from ``min_values[name]`` (raised to the param's minimum), else from the minimum, or from
    ``low`` (default ``-max_value``) for a param without one; up to ``max_value`` or the param's
    maximum."""
    mins = dict(min_values or {})
    ranges = []
    for p in program.params:
        values = param_values(p, max_value, low)
        if p.name in mins:
            start = mins[p.name] if p.min is None else max(p.min, mins[p.name])
            values = range(start, values.stop)
        ranges.append(values)
    names = program.param_names
    return [simulate(program, dict(zip(names, combo)), max_states)
            for combo in itertools.product(*ranges)]
