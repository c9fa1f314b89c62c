"""Resume the instance checker's fast path from a recent instance whose traces begin the new one's.

A sweep checks a param's values one after another (0, 1, -1, 2, -2, ...), and in most kernels the
traces for N + 1 are those for N with events appended to each partition's (a loop over N whose
body does not read N). :meth:`passes.instances.Checker.clean` keeps per slot a state that each
event updates in trace order, and per partition the entries of its deadlock run. Where every
slot's state is updated by the events of one partition only (:func:`partition_local`), the state
after the longer traces is the state after the shorter ones updated by the appended events,
whatever order the partitions are walked in. So the state of a clean instance is kept (the few
most recent ones, :class:`Resumes`), and the next instance whose traces extend one of them
copies that state and walks the appended events only: the same answer, for the new events, a
comparison of the prefixes and a copy of the state (both at C speed), where every event was
walked again.

The deadlock run resumes likewise: its counters only grow and each requirement is a threshold,
so the completed run of the shorter traces is a valid start of the longer traces' run, and the
greedy run from there completes iff the run from the start does (the run's order does not
change where it ends). The checks made once the events are walked (fills, phases, rule 10, the
run's end) read the whole state and are made again for every instance.
"""

from __future__ import annotations

from typing import Optional

from ..ir.nodes import walk_accesses, walk_events

#: how many clean instances are kept to resume from (the sweep's order needs the one before last)
KEPT = 4
#: the smallest index noted for a field on a slot before any write of it (above every index)
NEVER = float("inf")


def partition_local(checker) -> bool:
    """Whether every (pipe, reader) endpoint's events, writer side (reader -1) or one reader's,
    are statements of a single partition: then the fast path's state of a slot is updated by
    one partition's trace only (``checker``: passes/instances.Checker, its ``info`` built)."""
    sid_of = {id(s): n for n, s in enumerate(checker.cp.stmts)}
    owner: dict[tuple[int, int], int] = {}
    for k, part in enumerate(checker.program.partitions):
        for s in (*walk_events(part.body), *walk_accesses(part.body)):
            sid = sid_of.get(id(s))
            if sid is None:
                return False
            if owner.setdefault(checker.info[sid][1:], k) != k:
                return False
    return True


class CleanState:
    """The fast path's state after some events (see Checker.clean for each field's meaning), and
    ``cnt``, the deadlock run's counters once it completed these events' entries."""

    __slots__ = ("w_open", "r_held", "commits", "acq_n", "waits", "closed", "once", "fills",
                 "least", "mask", "masks", "wrote", "seqs", "logs", "cnt")

    @classmethod
    def fresh(cls, nw: int, nr: int, n_pipes: int, n_fields: int, n_parts: int,
              named_mask: Optional[list]) -> "CleanState":
        st = cls()
        st.w_open = [-1] * nw
        st.r_held = [-1] * nr
        st.commits = [[] for _ in range(nw)]
        st.acq_n = [0] * nw
        st.waits = [[] for _ in range(nr)]
        st.closed = [False] * n_pipes
        st.once = set()
        st.fills = {}
        st.least = [NEVER] * (n_fields * nw)
        st.mask = [0] * nr
        st.masks = [[] for _ in range(nr)]
        st.wrote = {}
        st.seqs = [[] for _ in range(n_parts)]
        st.logs = None if named_mask is None else \
            [[[] if m else None for m in named_mask] for _ in range(n_parts)]
        st.cnt = None
        return st

    def copy(self) -> "CleanState":
        st = CleanState()
        st.w_open = self.w_open[:]
        st.r_held = self.r_held[:]
        st.commits = [c[:] for c in self.commits]
        st.acq_n = self.acq_n[:]
        st.waits = [w[:] for w in self.waits]
        st.closed = self.closed[:]
        st.once = set(self.once)
        st.fills = {k: v[:] for k, v in self.fills.items()}
        st.least = self.least[:]
        st.mask = self.mask[:]
        st.masks = [m[:] for m in self.masks]
        st.wrote = dict(self.wrote)
        st.seqs = [s[:] for s in self.seqs]
        st.logs = None if self.logs is None else \
            [[None if r is None else r[:] for r in log] for log in self.logs]
        st.cnt = None if self.cnt is None else self.cnt[:]
        return st


class _Kept:
    __slots__ = ("traces", "lens", "total", "state", "run_at")

    def __init__(self, traces: list, state: CleanState):
        self.traces = traces
        self.lens = [len(ids) for ids, _ in traces]
        self.total = sum(self.lens)
        self.state = state
        self.run_at = [len(s) for s in state.seqs]  # where each partition's run ended


class Resumes:
    """The most recent clean instances' traces and states (never changed once kept)."""

    def __init__(self) -> None:
        self.kept: list[_Kept] = []

    def keep(self, traces: list, state: CleanState) -> None:
        """Keep a clean instance (its traces are not changed afterwards: the sweep builds new
        lists for every instance)."""
        self.kept.append(_Kept(traces, state))
        if len(self.kept) > KEPT:
            del self.kept[0]

    def find(self, traces: list) -> Optional[tuple[CleanState, list[int], list[int]]]:
        """A copy of the state of the longest kept instance whose every partition's trace
        begins ``traces``' same partition's, with the positions where the new events start and
        where its run ended; None when none does (or all that do have no event)."""
        lens = [len(ids) for ids, _ in traces]
        for kept in sorted(self.kept, key=lambda k: -k.total):
            if not kept.total or len(kept.lens) != len(lens) or \
                    any(a > b for a, b in zip(kept.lens, lens)):
                continue
            if all(not n or (ids[n - 1] == kids[-1] and idx[n - 1] == kidx[-1]
                             and ids[:n] == kids and idx[:n] == kidx)
                   for n, (ids, idx), (kids, kidx) in zip(kept.lens, traces, kept.traces)):
                return kept.state.copy(), kept.lens, kept.run_at
        return None
