"""The named-barrier rule: every release of a ``barrier="named"`` pipe is implied by a hand-off.

A named-barrier pipe (``tle.pipe(capacity=1, barrier="named")``, ``named_barrier`` in the text
forms) is lowered without its empty barrier: the writer's commit is ``bar.arrive`` and the
reader's wait ``bar.sync`` on one hardware named barrier, and acquire and release emit no barrier
operation. That is only sound when the writer's next acquire is ordered after the reader's release
anyway: otherwise the writer could overwrite the slot the reader still reads, and its next
``bar.arrive`` could land in the generation the reader has not synced yet.

The rule (docs/semantics.md, "Named-barrier pipes"), on each instance's traces: for the n-th
acquire (n >= 1) of pipe X by its writer W, with R's (n-1)-th release of X at position r in R's
trace, some *hop* must lead from R after r to W before the acquire:
  * R commits a pipe Y that W reads, and W waits for that commit before the acquire;
  * R releases a pipe Y (not itself named: its release emits nothing) that W writes, and W's
    acquire that this release enables comes before the acquire.
Commits and waits are matched as the deadlock run matches them (the m-th commit on a stage with
the m-th wait of each reader on it; the m-th release with the (m+1)-th acquire). One hop is what
the check looks for; a chain through a third partition is not searched (the kernel is rejected
and the message says which release is not covered). The writer and the reader must be different
partitions (a named barrier counts the threads of both), and a named pipe is never closed.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from itertools import accumulate, compress, repeat
from operator import itemgetter, lt
from typing import Optional

from .trace_kinds import ACQ, CLOSE, COMMIT, RELEASE, WAIT, Problem


def named_release_problems(checker, traces: list[tuple[list[int], list[int]]],
                           logs: Optional[list] = None) -> list[Problem]:
    """The named-barrier rule's problems on one instance (``checker``: passes/instances.Checker;
    ``traces``: per partition, statement ids and indices). Assumes the pairing rules hold.
    ``logs`` (the fast path's): per partition, per statement the rule reads, the (event ordinal,
    index) of each of its runs, so the traces need not be walked again; the problems' positions
    are then ordinals, good for a yes/no answer only."""
    named = checker.named_pipes
    if not named:
        return []
    info, cap = checker.info, checker.cap
    mask, involved = checker.named_mask, checker.named_involved
    # per partition: positions of each (kind, pipe, reader, stage) in program order, for the
    # events of the pipes a named pipe's rule can involve (picked at C speed: a kernel's traces
    # hold millions of events, most of them slot accesses and other pipes')
    events: list[dict[tuple, list[int]]] = []
    closes: dict[int, tuple[int, int]] = {}  # pipe -> (partition, position) of its first close
    for k, (ids, idx) in enumerate(traces):
        ev: dict[tuple, list[int]] = {}
        events.append(ev)
        if k not in involved:
            continue
        # the selected positions grouped by statement, in program order: on a capacity-1 pipe
        # positions alone, else (position, index)
        by_sid: dict[int, list]
        if logs is not None:  # the fast path's (its traces have no negative index)
            by_sid = {sid: runs for sid, runs in enumerate(logs[k]) if runs}
        else:
            sel = list(compress(range(len(ids)), map(mask.__getitem__, ids)))
            by_sid = defaultdict(list)
            for sid, pos in zip(map(ids.__getitem__, sel), sel):
                i = idx[pos]
                if i >= 0:  # a negative index is other rules' fault
                    by_sid[sid].append(pos if cap[info[sid][1]] == 1 else (pos, i))
        for sid, runs in by_sid.items():
            kind, p, r = info[sid]
            c = cap[p]
            if c == 1:  # one stage: the key is the statement's
                by_stage = {0: runs}
            else:
                by_stage = {}
                for pos, i in runs:
                    by_stage.setdefault(i % c, []).append(pos)
            for s, ps in by_stage.items():
                if not ps:
                    continue
                if kind == CLOSE:  # an acquire and a commit in one (as the deadlock run counts)
                    closes.setdefault(p, (k, ps[0]))
                    ev.setdefault((ACQ, p, r, s), []).extend(ps)
                    ev.setdefault((COMMIT, p, r, s), []).extend(ps)
                else:
                    ev.setdefault((kind, p, r, s), []).extend(ps)
        for ps in ev.values():  # several statements of one key: back to program order
            ps.sort()
    problems: list[Problem] = []
    # per (reader partition, writer partition): the hops and their suffix minima, shared by the
    # named pipes between the same two partitions (the seesaw's max0 and prob0, max1 and prob1)
    reach_of: dict[tuple[int, int], tuple[list, list]] = {}
    for x in named:
        writer = [k for k, ev in enumerate(events) if any(key[0] in (ACQ, COMMIT) and
                                                          key[1] == x for key in ev)]
        reader = [k for k, ev in enumerate(events) if any(key[0] in (WAIT, RELEASE) and
                                                          key[1] == x for key in ev)]
        if not writer or not reader:
            continue
        w, rd = writer[0], reader[0]
        if x in closes:
            problems.append(Problem(
                "named-release", f"pipe '{checker.pipes[x]}' has barrier=\"named\" and is closed "
                f"here: a named-barrier pipe has no closed flag; use a pipe with mbarriers",
                closes[x]))
            continue
        if w == rd:
            acq = events[w].get((ACQ, x, -1, 0), [])
            problems.append(Problem(
                "named-release", f"pipe '{checker.pipes[x]}' has barrier=\"named\" but one "
                f"partition both writes and reads it: a named barrier joins two partitions "
                f"(the writer's arrive and the reader's sync); use a pipe with mbarriers",
                (w, acq[0] if acq else 0)))
            continue
        acquires = events[w].get((ACQ, x, -1, 0), [])
        releases = events[rd].get((RELEASE, x, 0, 0), [])
        if (rd, w) not in reach_of:
            hops = _hops(checker, events, rd, w, named)
            # suffix minimum of the target positions: the earliest W event a hop after r
            # reaches, and that hop's pipe and verb (what tle-dump names as implying the release)
            best = list(accumulate(zip(reversed([d for _, d, _ in hops]),
                                       reversed([lab for _, _, lab in hops])), min))[::-1]
            best.append((float("inf"), ""))
            reach_of[(rd, w)] = ([pos for pos, _, _ in hops], best)
        srcs, best = reach_of[(rd, w)]
        used = checker.named_hops.setdefault(checker.pipes[x], set())
        rels = releases[:max(len(acquires) - 1, 0)]  # use n - 1's release for acquire n >= 1
        acqs = acquires[1:len(rels) + 1]
        found = [best[bisect_right(srcs, r)] for r in rels]
        reach = list(map(itemgetter(0), found))
        if all(map(lt, reach, acqs)):
            used.update(map(itemgetter(1), found))
            continue
        n = next(n for n, (d, a) in enumerate(zip(reach, acqs), 1) if d >= a)
        r, a = rels[n - 1], acqs[n - 1]
        problems.append(Problem(
            "named-release", f"pipe '{checker.pipes[x]}' has barrier=\"named\" (no empty "
            f"handshake), but this acquire (use {n}) is not ordered after the reader's "
            f"release of use {n - 1}: no commit the writer waits for before it (nor a "
            f"release of a pipe it writes) follows that release in the reader's partition, "
            f"so the writer could overwrite the slot, and arrive on the barrier, before "
            f"the reader is done. Release earlier, or use barrier=\"mbarrier\"", (w, a),
            (rd, r)))
    return problems


def relevant_events(checker) -> tuple[list[bool], set[int]]:
    """Per statement of ``checker``'s program (passes/instances.Checker, its ``info`` built),
    whether it is an event of a pipe the rule reads (a named pipe, or a pipe that can carry a hop
    between a named pipe's reader and writer): the fast path logs those as it runs; and the
    partitions (trace numbers) of the named pipes' writers and readers."""
    named = checker.named_pipes
    parts = [p.name for p in checker.program.partitions]
    pipes = checker.program.pipes
    roles = checker.roles
    ends = []
    for x in named:
        r = roles.get(pipes[x].name)
        if r is not None and r.writer is not None:
            ends += [(r.writer, part) for part in r.readers.values() if part]
    keep = set(named)
    for p, pipe in enumerate(pipes):
        r = roles.get(pipe.name)
        if r is None or r.writer is None:
            continue
        readers = set(r.readers.values())
        for w, rd in ends:
            if (r.writer == rd and w in readers) or (r.writer == w and rd in readers):
                keep.add(p)
    mask = [kind <= RELEASE and p in keep for kind, p, _ in checker.info]
    involved = {parts.index(n) for e in ends for n in e if n in parts}
    return mask, involved


def _hops(checker, events, src: int, dst: int, named: list[int]) -> list[tuple[int, int, str]]:
    """(position in partition ``src``, position in partition ``dst``, ``PIPE.commit`` or
    ``PIPE.release``) of every hand-off from ``src`` to ``dst`` through a pipe: a commit and the
    wait of it, a release (of a pipe that is not named) and the acquire it enables; sorted by the
    source position."""
    out: list[tuple[int, int, str]] = []
    s_ev, d_ev = events[src], events[dst]
    for (kind, p, r, s), ps in s_ev.items():
        if kind == COMMIT:
            for key in ((WAIT, p, rr, s) for rr in range(len(checker.readers[p]))):
                ws = d_ev.get(key)
                if ws:
                    out += zip(ps, ws, repeat(f"{checker.pipes[p]}.commit"))
        elif kind == RELEASE and p not in named:
            acq = d_ev.get((ACQ, p, -1, s), [])
            out += zip(ps, acq[1:], repeat(f"{checker.pipes[p]}.release"))
    out.sort()
    return out
