"""Check one param instance of a protocol: the rules of docs/semantics.md on its event traces.

For concrete param values each partition's trace is fixed (ir/tracegen.py expands it into flat
lists of statement numbers and indices). One sweep per partition checks the local rules (pairing
of acquire/commit and wait/release per stage, one-shot use, close, negative indices, every slot
access inside its window, every read finding its field written on its stage, every writer's
readback finding its field written in its own window; a write that may not run, Pipe IR
``maywrite``, is a write for its window and fills nothing) and numbers the
uses of every stage; then the cross-partition rules (phases alternate per stage, every reader
waits exactly the writer's committed indices in commit order); then deadlock-freedom by
*running* the traces: each partition advances while its next event is enabled (a wait once the
matching commit ran, an acquire once every reader released the previous use of the stage).
Under the protocol rules this is Kahn's algorithm on the happens-before graph of
docs/semantics.md, so it completes iff the graph is acyclic; when it gets stuck, following "who
waits for whom" among the stuck partitions gives the cycle. The cost is a few hundred nanoseconds
per event (docs/passes.md, "Cost").

Problems carry (partition number, trace position); :mod:`.verify_protocol` turns them into
diagnostics, re-expanding the one trace it describes with ``ir.unroll`` to name loop variables.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import compress, islice
from typing import Optional, Sequence

from ..ir.nodes import CLOSED_FLAG, Access, Event, Program, walk_accesses
from ..ir.tracegen import CompiledProgram
from .clean_resume import CleanState, Resumes, partition_local
from .named_release import named_release_problems, relevant_events
from .roles import PipeRoles
from .trace_kinds import (ACQ, CLOSE, COMMIT, MAY_WRITE, READ, READBACK, RELEASE,  # noqa: F401
                          TRACKED_WRITE, WAIT, WRITE, Problem, _KIND)


@dataclass
class InstanceResult:
    problems: list[Problem] = field(default_factory=list)  # protocol rules (verify-protocol)
    deadlock: Optional[Problem] = None  # None: every run completes (verify-deadlock)
    events: int = 0


class Checker:
    """Per-program tables for checking instances fast: statement kinds, pipes, readers."""

    def __init__(self, cp: CompiledProgram, roles: dict[str, PipeRoles]):
        self.cp = cp
        self.program: Program = cp.program
        self.roles = roles
        self.pipes = [p.name for p in self.program.pipes]
        pipe_no = {n: i for i, n in enumerate(self.pipes)}
        self.readers = [list(p.reader_names) for p in self.program.pipes]
        self.cap = [p.capacity for p in self.program.pipes]
        self.one_shot = [p.one_shot for p in self.program.pipes]
        # passes/named_release.py: the named-barrier pipes (numbers), rule 10's subject
        self.named_pipes = [p for p, pipe in enumerate(self.program.pipes) if pipe.named]
        self.named = bool(self.named_pipes)
        #: named pipe -> the hand-offs (``PIPE.commit`` / ``PIPE.release``) found implying its
        #: releases, over every instance checked (tle-dump's barrier table names them)
        self.named_hops: dict[str, set[str]] = {}
        # per statement: (kind, pipe number, reader number or -1)
        self.info: list[tuple[int, int, int]] = []
        for s in cp.stmts:
            p = pipe_no[s.pipe]
            if isinstance(s, Access):
                kind = READ if s.side == "reader" else \
                    READBACK if s.readback else MAY_WRITE if s.may else WRITE
                r = -1 if s.side == "writer" else self.readers[p].index(s.reader or "")
            else:
                kind = _KIND[s.verb]
                r = -1 if s.is_writer else self.readers[p].index(s.reader or "")
            self.info.append((kind, p, r))
        # the fast path's tables: one writer slot per (pipe, stage), one reader slot per
        # (pipe, reader, stage), numbered densely
        self.wbase, self.rbase, w, rr = [], [], 0, 0
        for p in range(len(self.pipes)):
            self.wbase.append(w)
            w += self.cap[p]
            bases = []
            for _ in self.readers[p]:
                bases.append(rr)
                rr += self.cap[p]
            self.rbase.append(bases)
        self.nw, self.nr = w, rr
        # per statement: the field a slot access touches (None for events), and whether it is a
        # read rule 7 asks to find its field written on its stage (a read of a pipe that has write
        # accesses, or of any pipe of a Python kernel; a .pipe file's pipe without any is a
        # protocol skeleton, its reads bound by windows only)
        self.field_of = [s.field if isinstance(s, Access) else None for s in cp.stmts]
        self.written = written_fields(self.program)  # pipe -> the fields its writes fill
        # pipe -> field -> the line of its first write that may not run (for messages)
        self.may_written: dict[str, dict[str, int]] = {}
        for part in self.program.partitions:
            for a in walk_accesses(part.body):
                if a.is_write and not a.fills:
                    self.may_written.setdefault(a.pipe, {}).setdefault(a.field, a.loc.line)
        has_writes = set(self.written) | set(self.may_written)
        self.filled_read = [isinstance(st, Access) and st.side == "reader"
                            and self.program.checks_fills(st.pipe, st.pipe in has_writes)
                            and st.field != CLOSED_FLAG
                            for st in cp.stmts]
        # per statement: a reader's read that runs only where its index was not closed (and
        # the statements of each pipe's close, whose index decides it)
        self.open_only = [isinstance(st, Access) and st.open_only for st in cp.stmts]
        self.any_open_only = any(self.open_only)
        # the fields as small integers, so the fast path keys its fills by one int
        names = sorted({f for f in self.field_of if f is not None})
        self.n_fields = max(1, len(names))
        self.fid_of = [names.index(f) if f is not None else -1 for f in self.field_of]
        # the (pipe, field) pairs some readback reads: their writes note their window
        read_back = {(st.pipe, st.field) for st in cp.stmts
                     if isinstance(st, Access) and st.readback}
        # rule 10's tables: which statements' events it reads, which partitions (trace numbers)
        # hold them
        self.named_mask, self.named_involved = relevant_events(self) if self.named else ([], set())
        #: per statement, what :meth:`clean` needs of it, in one tuple: (kind, capacity, writer
        #: slot base, reader slot base or -1, aux, pipe, one-shot, release counters of the pipe's
        #: readers, reader number or -1, logged for rule 10). ``aux``: for a read rule 7 checks,
        #: its field's bit (1 << field number), else 0; for a write or readback, field number *
        #: ``nw``, so that aux + writer slot keys the field on that slot; else 0.
        self.fast_info = []
        for sid, (kind, p, r) in enumerate(self.info):
            st = cp.stmts[sid]
            if kind == WRITE and (st.pipe, st.field) in read_back:
                kind = TRACKED_WRITE
            aux = 0
            if kind == READ:
                aux = 1 << self.fid_of[sid] if self.filled_read[sid] else 0
            elif kind in (WRITE, TRACKED_WRITE, READBACK):
                aux = self.fid_of[sid] * self.nw
            self.fast_info.append((kind, self.cap[p], self.wbase[p],
                                   self.rbase[p][r] if r >= 0 else -1, aux, p, self.one_shot[p],
                                   tuple(w + b for b in self.rbase[p]), r,
                                   bool(self.named_mask) and self.named_mask[sid]))
        # reader slot -> the writer slot of the same pipe and stage (whose fills its reads need)
        self.w_of_r = [self.wbase[p] + s for p in range(len(self.pipes))
                       for _ in self.readers[p] for s in range(self.cap[p])]
        #: the recent clean instances :meth:`clean` resumes from, where each endpoint's events
        #: are one partition's (passes/clean_resume.py); None: every instance is walked whole
        self.resumes: Optional[Resumes] = Resumes() if partition_local(self) else None

    def without_closed_reads(self, traces: list) -> list:
        """``traces`` without the reads that do not run: a read under ``if not res.is_closed:``
        (:attr:`Access.open_only`) at the index its pipe's writer closed, where the flag it
        tests is set (its window holds that index's slot, whose flag the close set; outside
        the window the flag's own read is the fault)."""
        if not self.any_open_only:
            return traces
        closed = {(self.info[sid][1], i) for ids, idx in traces for sid, i in zip(ids, idx)
                  if self.info[sid][0] == CLOSE}
        if not closed:
            return traces
        out = []
        for ids, idx in traces:
            keep = [n for n, sid in enumerate(ids)
                    if not (self.open_only[sid] and (self.info[sid][1], idx[n]) in closed)]
            if len(keep) == len(ids):
                out.append((ids, idx))
            else:
                out.append(([ids[n] for n in keep], [idx[n] for n in keep]))
        return out

    # ------------------------------------------------------------------ the fast path
    def clean(self, traces: list[tuple[list[int], list[int]]]) -> bool:
        """True when the instance breaks no rule and its run completes: the common case, decided
        in a few hundred nanoseconds per event. Anything else goes through :meth:`check`, which
        finds and words the problem.

        One pass over the traces keeps each slot's state (:meth:`check` does the same per
        partition, with positions for its messages) and does per event only what cannot wait:
        a slot access checks its window; a write notes a fill only when it lowers the smallest
        index noted for its field and slot (all the fill points of note_fill); a read rule 7
        checks only sets its field's bit in the window's mask, and each release files the mask
        of the window it closes, so the fills are checked afterwards once per (reader slot,
        field) over every window that read it (:func:`all_filled`) instead of once per read.
        Each partition's events become one list of ints for the run (see :meth:`_clean_run`):
        a counter it bumps, or ``~(m * K + c)``, a requirement that counter ``c`` has reached
        ``m``. Where a recent clean instance's traces begin these (passes/clean_resume.py), its
        state is copied and only the events after them are walked."""
        traces = self.without_closed_reads(traces)
        nw, nr = self.nw, self.nr
        K = nw + nr  # counters: commits per writer slot, then releases per reader slot
        found = self.resumes.find(traces) if self.resumes is not None else None
        if found is None:
            st = CleanState.fresh(nw, nr, len(self.pipes), self.n_fields, len(traces),
                                  self.named_mask if self.named else None)
            starts = run_at = None
        else:
            st, starts, run_at = found
        for k, (_, idx) in enumerate(traces):  # a negative index breaks a rule (check() says which)
            at = starts[k] if starts else 0
            if len(idx) > at and min(idx[at:] if at else idx) < 0:
                return False
        w_open = st.w_open  # index acquired and not committed, per writer slot
        r_held = st.r_held  # index waited and not released, per reader slot
        commits = st.commits
        acq_n = st.acq_n
        waits = st.waits
        closed = st.closed
        once = st.once
        info = self.fast_info
        # field number * nw + writer slot -> the fill points of note_fill; least: the same key ->
        # the smallest index among them (a write at a larger or equal one adds no point)
        fills = st.fills
        least = st.least
        # the fields (bit mask) read by checked reads in the window held now, per reader slot;
        # and per reader slot, the mask of each window closed so far (its n-th release closes
        # its n-th wait)
        mask = st.mask
        masks = st.masks
        # field number * nw + writer slot -> the acquire count of the stage when a tracked write
        # of the field last ran: a readback needs it to be the count now (written in this window)
        wrote = st.wrote
        seqs = st.seqs  # per partition, its entries for the run
        # named-barrier pipes: per partition, per statement of the events rule 10 reads, the
        # ordinal of each run of it (the number of run entries before it: every event adds at
        # least one), with its index on a ring of capacity > 1 (passes/named_release.py); None:
        # not logged
        logs = st.logs
        for k, (ids, idx) in enumerate(traces):
            seq = seqs[k]
            put = seq.append
            log = None if logs is None else logs[k]
            at = starts[k] if starts else 0
            if at == len(ids):
                continue
            for sid, i in zip(islice(ids, at, None), islice(idx, at, None)) if at else \
                    zip(ids, idx):
                kind, cap, wb, rb, aux, p, one, rbases, r, logged = info[sid]
                s = i % cap
                if kind == READ:
                    x = rb + s
                    if r_held[x] != i:
                        return False
                    mask[x] |= aux
                    continue
                if kind == WRITE:
                    ws = wb + s
                    if w_open[ws] != i:
                        return False
                    key = aux + ws
                    if i < least[key]:  # note_fill, inlined: most writes add nothing
                        least[key] = i
                        fills.setdefault(key, []).append((len(commits[ws]), i))
                    continue
                if kind > RELEASE:  # the other slot accesses
                    ws = wb + s
                    if w_open[ws] != i:
                        return False
                    if kind == TRACKED_WRITE:
                        key = aux + ws
                        if i < least[key]:
                            least[key] = i
                            fills.setdefault(key, []).append((len(commits[ws]), i))
                        wrote[key] = acq_n[ws]
                    elif kind == READBACK:
                        if wrote.get(aux + ws) != acq_n[ws]:
                            return False
                    continue  # MAY_WRITE: inside its window, it fills nothing
                if logged:  # its ordinal in the partition (rule 10 reads the order only)
                    log[sid].append(len(seq) if cap == 1 else (len(seq), i))
                if one:
                    key = (p, r, COMMIT if kind == CLOSE else kind)
                    if key in once:
                        return False
                    once.add(key)
                if kind == WAIT:
                    x = rb + s
                    if r_held[x] != -1:
                        return False
                    r_held[x] = i
                    wl = waits[x]
                    wl.append(i)
                    put(~(len(wl) * K + wb + s))
                elif kind == RELEASE:
                    x = rb + s
                    if r_held[x] != i:
                        return False
                    r_held[x] = -1
                    put(nw + x)
                    masks[x].append(mask[x])
                    mask[x] = 0
                elif kind == COMMIT:
                    ws = wb + s
                    if closed[p] or w_open[ws] != i:
                        return False
                    w_open[ws] = -1
                    commits[ws].append(i)
                    put(ws)
                else:  # acquire or close
                    ws = wb + s
                    if closed[p] or w_open[ws] != -1:
                        return False
                    n = acq_n[ws]
                    acq_n[ws] = n + 1
                    if n and not one and rbases:  # every reader released the previous use
                        for b in rbases:
                            put(~(n * K + b + s))
                    else:  # no requirement (m = 0): an entry all the same, so that every event
                        put(~ws)  # adds one and its ordinal (len(seq) before it) is its own
                    if kind == ACQ:
                        w_open[ws] = i
                    else:
                        closed[p] = True
                        commits[ws].append(i)
                        put(ws)
        if w_open.count(-1) != nw:  # an acquire never committed
            return False
        # rule 7's fills, once every write is noted: per reader slot and field read, over the
        # windows (wait ordinals) that read it, with the index of each (its wait's)
        for x in range(nr):
            held = masks[x] + [mask[x]] if r_held[x] != -1 else masks[x]  # one per wait
            kinds = set(held)  # the distinct masks: few
            every = everywhere = 0
            for m in kinds:
                every |= m
            if every:
                everywhere = every
                for m in kinds:
                    everywhere &= m
            ws, got = self.w_of_r[x], waits[x]
            f = 0
            while every:
                if every & 1:
                    if everywhere & 1:  # every window read field f
                        ords, at = range(len(got)), got
                    else:  # the windows whose mask has field f, and their indices
                        ords = list(compress(range(len(held)), map((1 << f).__and__, held)))
                        at = list(map(got.__getitem__, ords))
                    if not all_filled(fills.get(f * nw + ws), ords, at):
                        return False
                every >>= 1
                everywhere >>= 1
                f += 1
        for p in range(len(self.pipes)):
            cap, wb = self.cap[p], self.wbase[p]
            for s in range(cap):
                cs = commits[wb + s]
                # phases alternate: use n of the stage has phase n % 2, (i // cap) % 2 == n % 2,
                # i.e. i % (2 * cap) < cap at even n and >= cap at odd n
                if not self.one_shot[p] and cs:
                    twice = 2 * cap
                    if max(map(twice.__rmod__, cs[0::2])) >= cap or \
                            (len(cs) > 1 and min(map(twice.__rmod__, cs[1::2])) < cap):
                        return False
                for b in self.rbase[p]:
                    if waits[b + s] != cs:
                        return False
                    if r_held[b + s] != -1 and not self.one_shot[p]:
                        return False
        if self.named and named_release_problems(self, traces, logs):
            return False
        if found is None:
            cnt = self._clean_run(seqs, K)
        else:
            cnt = self._clean_run(seqs, K, st.cnt, run_at)
        if cnt is None:
            return False
        if self.resumes is not None:
            st.cnt = cnt
            self.resumes.keep(traces, st)
        return True

    @staticmethod
    def _clean_run(seqs: list[list[int]], K: int, cnt: Optional[list[int]] = None,
                   ptr: Optional[list[int]] = None) -> Optional[list[int]]:
        """The run of :meth:`clean` (see :meth:`_run`): every partition advances while its next
        entry is enabled; the counters at the end when every partition reaches its end, else
        None. An entry ``e >= 0`` bumps counter ``e``; ``~(m * K + c)`` needs counter ``c`` to
        be at least ``m``. The counters are kept as ``count * K + c`` (so the requirement
        compares one int, without decoding ``m``). ``cnt`` and ``ptr``: the counters and
        positions of a run that completed a prefix of every partition's entries, resumed here
        (passes/clean_resume.py); by default the run starts from nothing."""
        cnt = list(range(K)) if cnt is None else cnt[:]
        ptr = [0] * len(seqs) if ptr is None else list(ptr)
        moved = True
        while moved:
            moved = False
            for k, seq in enumerate(seqs):
                i = ptr[k]
                n = len(seq)
                while i < n:
                    q = seq[i]
                    if q >= 0:
                        cnt[q] += K
                    else:
                        q = ~q
                        if cnt[q % K] < q:
                            break
                    i += 1
                if i != ptr[k]:
                    ptr[k] = i
                    moved = True
        return cnt if all(ptr[k] == len(seq) for k, seq in enumerate(seqs)) else None

    # ------------------------------------------------------------------ one instance
    def check(self, traces: list[tuple[list[int], list[int]]], deadlock: bool = True
              ) -> InstanceResult:
        traces = self.without_closed_reads(traces)
        res = InstanceResult(events=sum(len(ids) for ids, _ in traces))
        self._traces_ids = [ids for ids, _ in traces]
        info, cap, one_shot = self.info, self.cap, self.one_shot
        problems = res.problems
        # uses[(pipe, stage)]: writer acquires/commits and per reader waits/releases, each a list
        # of (partition, position, index) in program order
        commits: dict[tuple[int, int], list] = {}
        acquires: dict[tuple[int, int], list] = {}
        waits: dict[tuple[int, int, int], list] = {}
        releases: dict[tuple[int, int, int], list] = {}
        # the greedy run's requirements are attached after the cross checks
        broken: set = set()  # endpoints with a local problem: one report each
        fills: dict = {}  # (pipe, stage, field) -> change points, see note_fill
        reads: list = []  # (partition, position, index, wait ordinal) of each checked read
        # (pipe, stage, field) -> (acquire count of the stage, partition, position) of its last
        # write: a readback finds its field written iff that count is the stage's count now
        wrote: dict = {}
        maywrote: dict = {}  # the same for writes that may not run (named in messages)

        for k, (ids, idx) in enumerate(traces):
            open_acq: dict[tuple[int, int], tuple[int, int]] = {}  # (pipe, stage) -> (pos, index)
            held: dict[tuple[int, int, int], tuple[int, int]] = {}  # (pipe, reader, stage)
            closer: dict[tuple[int, int, int], tuple[int, int]] = {}  # who closed a window last
            closed: dict[int, int] = {}  # pipe -> pos of its close
            once: dict[tuple[int, int, int], int] = {}  # one-shot (pipe, reader, kind) -> pos
            for pos in range(len(ids)):
                kind, p, r = info[ids[pos]]
                i = idx[pos]
                if i < 0:
                    self._local(problems, broken, (p, r), Problem(
                        "negative-index", f"{self._what(ids[pos])} at negative index {i}",
                        (k, pos)))
                    continue
                c = cap[p]
                s = i % c
                if kind >= WRITE:  # a slot access
                    if kind != READ:
                        cur = open_acq.get((p, s))
                    else:
                        cur = held.get((p, r, s))
                    if cur is not None and cur[1] == i:
                        sid = ids[pos]
                        if kind == WRITE:
                            note_fill(fills, (p, s, self.field_of[sid]),
                                      len(commits.get((p, s), ())), i)
                            wrote[(p, s, self.field_of[sid])] = (len(acquires[(p, s)]), k, pos)
                        elif kind == MAY_WRITE:
                            maywrote[(p, s, self.field_of[sid])] = (len(acquires[(p, s)]), k,
                                                                    pos)
                        elif kind == READBACK:
                            last = wrote.get((p, s, self.field_of[sid]))
                            if last is None or last[0] != len(acquires[(p, s)]):
                                may = maywrote.get((p, s, self.field_of[sid]))
                                if may is not None and may[0] != len(acquires[(p, s)]):
                                    may = None
                                self._local(problems, broken, ("unwritten", sid),
                                            self._readback_problem(k, pos, sid, i, last, may))
                        elif self.filled_read[sid]:
                            reads.append((k, pos, i, len(waits[(p, r, s)]) - 1))
                        continue
                    pr = self._access_problem(k, pos, ids[pos], i, s, cur,
                                              closer.get((p, r, s)), traces)
                    self._local(problems, broken, ("access", ids[pos]), pr)
                    continue
                if one_shot[p]:
                    key = (p, r, COMMIT if kind == CLOSE else kind)
                    if key in once:
                        prev = once[key]
                        self._local(problems, broken, (p, r), Problem(
                            "one-shot-reuse", f"one-shot pipe '{self.pipes[p]}' is used more than "
                            f"once: {self._verb(ids[pos])}({i}) after "
                            f"{self._verb(ids[prev])}({idx[prev]})", (k, pos), (k, prev)))
                        continue
                    once[key] = pos
                    if kind == CLOSE:
                        once[(p, r, ACQ)] = pos
                if kind <= CLOSE:  # writer verbs
                    if p in closed:
                        self._local(problems, broken, (p, r), Problem(
                            "event-after-close", f"{self._verb(ids[pos])}({i}) on pipe "
                            f"'{self.pipes[p]}' after it was closed", (k, pos), (k, closed[p])))
                        continue
                    if kind == ACQ or kind == CLOSE:
                        prev = open_acq.get((p, s))
                        if prev is not None:
                            self._local(problems, broken, (p, r), Problem(
                                "double-acquire", f"{self._verb(ids[pos])}({i}) on stage {s} of "
                                f"pipe '{self.pipes[p]}' while acquire({prev[1]}) is not "
                                f"committed", (k, pos), (k, prev[0])))
                            continue
                        acquires.setdefault((p, s), []).append((k, pos, i))
                        if kind == ACQ:
                            open_acq[(p, s)] = (pos, i)
                        else:
                            commits.setdefault((p, s), []).append((k, pos, i))
                            closed[p] = pos
                            closer[(p, -1, s)] = (pos, i)
                    else:  # commit
                        prev = open_acq.get((p, s))
                        if prev is None or prev[1] != i:
                            if prev is None:  # an open acquire of another stage, if any
                                prev = max((v for (pp, _), v in open_acq.items() if pp == p),
                                           default=None)
                                prev = prev if prev is not None and \
                                    self.cp.stmts[ids[prev[0]]].index != self.cp.stmts[ids[pos]].index \
                                    else None
                            self._local(problems, broken, (p, r),
                                        self._pair_problem(k, pos, prev, ids, idx, "acquire"))
                            continue
                        del open_acq[(p, s)]
                        closer[(p, -1, s)] = (pos, i)
                        commits.setdefault((p, s), []).append((k, pos, i))
                elif kind == WAIT:
                    prev = held.get((p, r, s))
                    if prev is not None:
                        self._local(problems, broken, (p, r), Problem(
                            "wait-on-held-stage", f"{self._who(p, r)} waits index {i} of pipe "
                            f"'{self.pipes[p]}' while still holding index {prev[1]} on the same "
                            f"stage (release it first)", (k, pos), (k, prev[0])))
                        continue
                    held[(p, r, s)] = (pos, i)
                    waits.setdefault((p, r, s), []).append((k, pos, i))
                else:  # release
                    prev = held.get((p, r, s))
                    if prev is None or prev[1] != i:
                        if prev is None:  # a held wait of another stage, if any
                            prev = max((v for (pp, rr, _), v in held.items() if pp == p and rr == r),
                                       default=None)
                            prev = prev if prev is not None and \
                                self.cp.stmts[ids[prev[0]]].index != self.cp.stmts[ids[pos]].index \
                                else None
                        self._local(problems, broken, (p, r),
                                    self._pair_problem(k, pos, prev, ids, idx, "wait"))
                        continue
                    del held[(p, r, s)]
                    closer[(p, r, s)] = (pos, i)
                    releases.setdefault((p, r, s), []).append((k, pos, i))
            for (p, s), (pos, i) in open_acq.items():
                self._local(problems, broken, (p, -1), Problem(
                    "uncommitted-acquire", f"acquire({i}) of pipe '{self.pipes[p]}' is never "
                    f"committed", (k, pos)))
            for (p, r, s), (pos, i) in held.items():
                if not one_shot[p]:
                    self._local(problems, broken, (p, r), Problem(
                        "missing-release", f"{self._who(p, r)} never releases index {i} of pipe "
                        f"'{self.pipes[p]}'", (k, pos)))
        if problems:
            return res
        self._cross(commits, waits, problems)
        if problems:
            return res
        # rule 7's fills, once every wait is known to match the commit of its ordinal
        for k, pos, i, ordinal in reads:
            sid = traces[k][0][pos]
            p = self.info[sid][1]
            if not is_filled(fills, (p, i % cap[p], self.field_of[sid]), ordinal, i):
                self._local(problems, broken, ("unwritten", sid),
                            self._unwritten_problem(k, pos, sid, i, fills))
        if not problems and self.named:
            problems += named_release_problems(self, traces)
        if problems or not deadlock:
            return res
        res.deadlock = self._run(traces, commits, acquires, waits, releases)
        return res

    # ------------------------------------------------------------------ cross-partition rules
    def _cross(self, commits, waits, problems: list[Problem]) -> None:
        stages = sorted(set(commits) | {(p, s) for (p, r, s) in waits})
        for p, s in stages:
            cs = commits.get((p, s), [])
            cap = self.cap[p]
            if not self.one_shot[p]:
                for n, (k, pos, i) in enumerate(cs):
                    if (i // cap) % 2 != n % 2:
                        problems.append(Problem(
                            "phase-aliasing", f"{self._verb(self._id(k, pos))}({i}) is use {n} of "
                            f"stage {s} of pipe '{self.pipes[p]}' but has phase {(i // cap) % 2}: "
                            f"indices on one stage must alternate phases (a parity wait cannot "
                            f"tell them apart)", (k, pos)))
                        break
            for r in range(len(self.readers[p])):
                ws = waits.get((p, r, s), [])
                for n in range(max(len(ws), len(cs))):
                    if n >= len(ws):
                        k, pos, i = cs[n]
                        problems.append(Problem(
                            "unconsumed", f"{self._who(p, r)} of pipe '{self.pipes[p]}' never "
                            f"waits index {i} that {self._expr(k, pos)} commits here", (k, pos)))
                        break
                    k, pos, i = ws[n]
                    if n >= len(cs):
                        problems.append(Problem(
                            "wait-never-committed", f"{self._who(p, r)} waits index {i} of pipe "
                            f"'{self.pipes[p]}' ({self._expr(k, pos)}) that the writer never "
                            f"commits", (k, pos)))
                        break
                    if i != cs[n][2]:
                        problems.append(Problem(
                            "order-mismatch", f"{self._who(p, r)} waits index {i} of pipe "
                            f"'{self.pipes[p]}' where the writer's next commit on stage {s} is "
                            f"index {cs[n][2]}", (k, pos), (cs[n][0], cs[n][1])))
                        break

    # ------------------------------------------------------------------ deadlock: run it
    def _run(self, traces, commits, acquires, waits, releases) -> Optional[Problem]:
        """Advance every partition while its next event is enabled; stuck partitions deadlock."""
        nparts = len(traces)
        counter_of: dict[tuple, int] = {}  # ("c", p, s) / ("r", p, r, s) -> counter number
        owner: list[list[tuple[int, int]]] = []  # counter -> positions that increment it

        def counter(key, positions) -> int:
            c = counter_of.get(key)
            if c is None:
                c = counter_of[key] = len(owner)
                owner.append([(k, pos) for k, pos, _ in positions])
            return c

        req: list[dict[int, tuple]] = [dict() for _ in range(nparts)]  # pos -> ((counter, need),)
        eff: list[dict[int, int]] = [dict() for _ in range(nparts)]  # pos -> counter it bumps
        for (p, s), cs in commits.items():
            c = counter(("c", p, s), cs)
            for k, pos, _ in cs:
                eff[k][pos] = c
        for (p, r, s), rs in releases.items():
            c = counter(("r", p, r, s), rs)
            for k, pos, _ in rs:
                eff[k][pos] = c
        for (p, r, s), ws in waits.items():
            c = counter_of.get(("c", p, s))
            for n, (k, pos, _) in enumerate(ws):
                req[k][pos] = ((c, n + 1),)
        for (p, s), acq in acquires.items():
            if self.one_shot[p]:
                continue
            for n, (k, pos, _) in enumerate(acq):
                if n == 0:
                    continue
                need = []
                for r in range(len(self.readers[p])):
                    need.append((counter(("r", p, r, s), releases.get((p, r, s), [])), n))
                req[k][pos] = tuple(need)
        ncount = [0] * len(owner)
        # only the events that wait or arrive matter to the run
        order = [sorted(set(req[k]) | set(eff[k])) for k in range(nparts)]
        ptr = [0] * nparts
        moved = True
        while moved:
            moved = False
            for k in range(nparts):
                seq, rq, ef = order[k], req[k], eff[k]
                i, n = ptr[k], len(seq)
                while i < n:
                    pos = seq[i]
                    need = rq.get(pos)
                    if need is not None and any(ncount[c] < m for c, m in need):
                        break
                    c = ef.get(pos)
                    if c is not None:
                        ncount[c] += 1
                    i += 1
                if i != ptr[k]:
                    ptr[k] = i
                    moved = True
        stuck = [k for k in range(nparts) if ptr[k] < len(order[k])]
        if not stuck:
            return None
        # who waits for whom: the first unmet requirement of each stuck partition
        waits_for: dict[int, tuple[int, int, int]] = {}  # k -> (its pos, awaited k', awaited pos)
        for k in stuck:
            pos = order[k][ptr[k]]
            for c, m in req[k][pos]:
                if ncount[c] < m and m - 1 < len(owner[c]):
                    k2, pos2 = owner[c][m - 1]
                    waits_for[k] = (pos, k2, pos2)
                    break
        k = stuck[0]
        seen: list[int] = []
        while k in waits_for and k not in seen:
            seen.append(k)
            k = waits_for[k][1]
        cycle = seen[seen.index(k):] if k in seen else seen
        notes = [((kk, waits_for[kk][0]), (waits_for[kk][1], waits_for[kk][2]))
                 for kk in cycle if kk in waits_for]
        # start the report at a blocked wait (data that never comes) when there is one
        ids = self._traces_ids
        start = next((j for j, ((kk, pos), _) in enumerate(notes)
                      if self.info[ids[kk][pos]][0] == WAIT), 0)
        notes = tuple(notes[start:] + notes[:start])
        first = notes[0][0] if notes else (stuck[0], order[stuck[0]][ptr[stuck[0]]])
        return Problem("deadlock", "deadlock: the partitions wait for each other in a cycle",
                       first, notes=notes)

    # ------------------------------------------------------------------ messages
    def _id(self, k: int, pos: int) -> int:
        return self._traces_ids[k][pos]

    def _expr(self, k: int, pos: int) -> str:
        """The event at (k, pos) as written: ``wait(i + 1)``."""
        ev = self.cp.stmts[self._id(k, pos)]
        return f"{ev.verb}({ev.index})"

    def _verb(self, sid: int) -> str:
        s = self.cp.stmts[sid]
        return s.verb

    def _who(self, p: int, r: int) -> str:
        name = self.readers[p][r] if r >= 0 else ""
        return f"reader '{name}'" if name else "the reader"

    def _what(self, sid: int) -> str:
        s = self.cp.stmts[sid]
        if isinstance(s, Access):
            return f"{'write to' if s.is_write else 'read of'} {s.pipe}.{s.field}"
        return f"{s.verb} of pipe '{s.pipe}'"

    @staticmethod
    def _local(problems: list[Problem], broken: set, key, pr: Problem) -> None:
        """One problem per endpoint (or access statement) and instance: later ones repeat it."""
        if key in broken:
            return
        broken.add(key)
        problems.append(pr)

    def _access_problem(self, k, pos, sid, i, s, cur, last, traces) -> Problem:
        a: Access = self.cp.stmts[sid]
        what = f"{'write to' if a.is_write else 'read of'} {a.pipe}.{a.field} at index {i}"
        ids = traces[k][0]
        if cur is not None:
            ev = self.cp.stmts[ids[cur[0]]]
            return Problem("access-outside-window", f"{what} outside its window: the slot of "
                           f"stage {s} is held for index {cur[1]} ({ev.verb} at line "
                           f"{ev.loc.line}), not {i}", (k, pos), (k, cur[0]))
        if last is not None and last[1] == i:
            ev = self.cp.stmts[ids[last[0]]]
            return Problem("access-outside-window", f"{what} after {ev.verb}({i}) at line "
                           f"{ev.loc.line} closed its window", (k, pos), (k, last[0]))
        who = a.pipe if a.side == "writer" or not a.reader else f"{a.pipe}[{a.reader}]"
        opener = f"{who}.{'acquire' if a.side == 'writer' else 'wait'}({i})"
        return Problem("access-outside-window", f"{what} outside its window: no {opener} is open "
                       f"here", (k, pos), (k, last[0]) if last else None)

    def _unwritten_problem(self, k, pos, sid, i, fills) -> Problem:
        """A read whose stage holds no value of its field: name the stage, and the stages (or
        fields) the pipe's writes do fill."""
        a: Access = self.cp.stmts[sid]
        p = self.info[sid][1]
        cap = self.cap[p]
        s = i % cap
        who = f"reader '{a.reader}'" if a.reader else "the reader"
        part = self.program.partitions[k].name
        stages = sorted({ss for (pp, ss, f) in fills if pp == p and f == a.field})
        if stages:
            why = (f"field '{a.field}' of stage {s} was never written (no window of stage {s} "
                   f"committed before this wait, at an index <= {i}, writes it; its writes fill "
                   f"stage{'s' if len(stages) > 1 else ''} {', '.join(map(str, stages))})")
        elif a.field in self.written.get(a.pipe, ()):
            why = (f"field '{a.field}' of stage {s} was never written (no write of it runs for "
                   f"these param values)")
        elif a.field in self.may_written.get(a.pipe, {}):
            why = (f"field '{a.field}' of stage {s} is never surely written: its write at line "
                   f"{self.may_written[a.pipe][a.field]} {MAY_NOT_RUN}")
        elif not self.written.get(a.pipe) and not self.may_written.get(a.pipe):
            why = (f"nothing writes the slots of pipe '{a.pipe}' (its writer stores, copies or "
                   f"TMA-loads into no field)")
        else:
            filled = sorted(self.written.get(a.pipe, ()))
            why = (f"no write of pipe '{a.pipe}' fills field '{a.field}' (its writes fill only "
                   f"{', '.join(filled) or 'fields they may not write'})")
        return Problem("unwritten-field", f"{who} of pipe '{a.pipe}' (partition '{part}') reads "
                       f"{a.pipe}.{a.field} at index {i} (stage {s}), but {why}: the read finds "
                       f"uninitialised shared memory", (k, pos))

    def _readback_problem(self, k, pos, sid, i, last, may=None) -> Problem:
        """A writer's read of a field its window has not written (rule 7): what the stage held
        before ``acquire(i)`` does not count, so the read finds uninitialised (or stale) shared
        memory. ``last``: (acquire count, partition, position) of the field's last write on the
        stage, if any (an earlier window's, named as the write that does not count); ``may``: the
        same of a write in this window that may not run, if any."""
        a: Access = self.cp.stmts[sid]
        s = i % self.cap[self.info[sid][1]]
        part = self.program.partitions[k].name
        op = f" ({a.op})" if a.op else ""
        if may is not None:
            prev = self.cp.stmts[self._traces_ids[may[1]][may[2]]]
            why = (f"the window of acquire({i}) has not surely written field '{a.field}': its "
                   f"write at line {prev.loc.line} {MAY_NOT_RUN}")
        elif last is not None:
            prev = self.cp.stmts[self._traces_ids[last[1]][last[2]]]
            why = (f"the window of acquire({i}) has not written field '{a.field}' yet: the write "
                   f"at line {prev.loc.line} was in an earlier window of stage {s}, and an "
                   f"acquire starts the slot unwritten (its earlier contents do not count)")
        else:
            why = (f"the window of acquire({i}) has not written field '{a.field}' yet (a "
                   f"readback reads only what its own window wrote)")
        return Problem("unwritten-field", f"the writer of pipe '{a.pipe}' (partition '{part}') "
                       f"reads back {a.pipe}.{a.field} at index {i} (stage {s}){op}, but {why}: "
                       f"the read finds uninitialised or stale shared memory", (k, pos))

    def _pair_problem(self, k, pos, prev, ids, idx, opener: str) -> Problem:
        """A commit (release) whose index differs from the open acquire (held wait) on its stage.

        When the two index *expressions* differ (``acquire(t + 1)`` / ``commit(t)``), the one the
        rest of the pipe's events disagree with is reported, at its own line, naming the index it
        took (docs/semantics.md, "Which event is wrong")."""
        ev = self.cp.stmts[ids[pos]]
        i = idx[pos]
        closing = ev.verb
        if prev is None:
            if closing == "commit":
                return Problem("commit-without-acquire", f"commit({i}) of pipe '{ev.pipe}' but no "
                               f"acquire is open", (k, pos))
            return Problem("release-without-wait", f"{self._reader_text(ev)} releases index {i} of "
                           f"pipe '{ev.pipe}' but it holds nothing there", (k, pos))
        pev = self.cp.stmts[ids[prev[0]]]
        if pev.index != ev.index and self._odd_one(pev, ev) is pev:
            return Problem("index-mismatch", f"{pev.verb}({pev.index}) takes index {prev[1]}, but "
                           f"the {closing} at line {ev.loc.line} ({closing}({ev.index})) gives back "
                           f"index {i}: the two must name the same index",
                           (k, prev[0]), (k, pos))
        if pev.index != ev.index:
            return Problem("index-mismatch", f"{closing}({ev.index}) gives back index {i}, but the "
                           f"{opener} at line {pev.loc.line} ({pev.verb}({pev.index})) took index "
                           f"{prev[1]}: the two must name the same index", (k, pos), (k, prev[0]))
        if closing == "commit":
            return Problem("commit-without-acquire", f"commit({i}) of pipe '{ev.pipe}' but "
                           f"acquire({prev[1]}) is open on that stage", (k, pos), (k, prev[0]))
        return Problem("release-without-wait", f"{self._reader_text(ev)} releases index {i} of "
                       f"pipe '{ev.pipe}' but it holds index {prev[1]} there", (k, pos),
                       (k, prev[0]))

    @staticmethod
    def _reader_text(ev: Event) -> str:
        return f"reader '{ev.reader}'" if ev.reader else "the reader"

    def _odd_one(self, a: Event, b: Event) -> Event:
        """Of two events of one pipe whose index expressions differ, the one fewer events of the
        pipe share (the later one on a tie)."""
        count = {a.index: 0, b.index: 0}
        for s in self.cp.stmts:
            if isinstance(s, Event) and s.pipe == a.pipe and s.index in count:
                count[s.index] += 1
        return a if count[a.index] < count[b.index] else b


# Why a write that may not run (Pipe IR ``maywrite``) fills nothing, for messages.
MAY_NOT_RUN = ("may not run, or write only part of the field (it stands under a `while` or a "
               "loop or `if` on data, stores with a mask, through an offset slot pointer or a "
               "pointer tl.where chose, is an atomic, or only passes the pointer to a tl "
               "function), so it does not count as writing it; write the "
               "field unconditionally inside the window (a write in both branches of an "
               "if/else counts)")


def written_fields(program: Program) -> dict[str, set[str]]:
    """Pipe -> the fields its write accesses fill (anywhere in the program, run or not; a write
    that may not run fills nothing). Rule 7 (docs/semantics.md) asks a read, when it runs, to
    find its field written on its stage: a read of any pipe of a Python kernel, and of a .pipe
    file's pipe with a write access (a pipe without any is a protocol skeleton, modelling events
    only: its reads are checked against their windows only)."""
    written: dict[str, set[str]] = {}
    for part in program.partitions:
        for a in walk_accesses(part.body):
            if a.fills:
                written.setdefault(a.pipe, set()).add(a.field)
    return written


# The fills of one field on one stage, as change points [(ordinal, smallest index)]: from the
# stage's ordinal-th commit on (closes count: they are uses of the stage), the smallest index of a
# window of that stage, committed by then, that wrote the field. A read at index i whose wait is
# the stage's ordinal-th use (the wait of a well-formed reader matches the commit of that
# ordinal) finds the field written iff some window of index j <= i among those commits wrote it.

def note_fill(fills: dict, key, ordinal: int, index: int) -> None:
    """A write of a field inside the window of ``index``, the stage's ``ordinal``-th use."""
    points = fills.get(key)
    if points is None:
        fills[key] = [(ordinal, index)]
    elif index < points[-1][1]:
        points.append((ordinal, index))


def is_filled(fills: dict, key, ordinal: int, index: int) -> bool:
    """Whether a read at ``index``, waited as the stage's ``ordinal``-th use, finds its field
    written: some window of index <= ``index`` among the stage's first ``ordinal + 1`` uses."""
    points = fills.get(key)
    if not points:
        return False
    at = bisect_right(points, (ordinal, float("inf"))) - 1
    return at >= 0 and points[at][1] <= index



def all_filled(points: Optional[list[tuple[int, int]]], ordinals: Sequence[int],
               indices: list[int]) -> bool:
    """:func:`is_filled` of every read ``(ordinals[n], indices[n])`` of one field on one stage,
    ``ordinals`` ascending, with ``points`` that field's fill points (None: never written). The
    points split the ordinals into ranges, each with one smallest index written (the last point
    at or before it); the reads of a range find the field written iff the smallest of their
    indices is not below it. A few steps per point instead of a search per read."""
    if not ordinals:
        return True
    if not points or ordinals[0] < points[0][0]:
        return False
    for n, (ordinal, index) in enumerate(points):
        lo = bisect_left(ordinals, ordinal)
        hi = bisect_left(ordinals, points[n + 1][0]) if n + 1 < len(points) else len(ordinals)
        if lo < hi and min(indices[lo:hi]) < index:
            return False
    return True
