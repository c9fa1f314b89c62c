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

from .trace_kinds import ACQ, CLOSE, COMMIT, RELEASE, WAIT, Problem


def named_release_problems(checker, traces: list[tuple[list[int], list[int]]]) -> list[Problem]:
    """The named-barrier rule's problems on one instance (``checker``: passes/instances.Checker;
    ``traces``: per partition, statement ids and indices). Assumes the pairing rules hold."""
    named = [p for p, pipe in enumerate(checker.program.pipes) if pipe.named]
    if not named:
        return []
    info, cap = checker.info, checker.cap
    # per partition: positions of each (kind, pipe, reader, stage) in program order
    events: list[dict[tuple, list[int]]] = []
    closes: dict[int, tuple[int, int]] = {}  # pipe -> (partition, position) of its first close
    for k, (ids, idx) in enumerate(traces):
        ev: dict[tuple, list[int]] = {}
        for pos, (sid, i) in enumerate(zip(ids, idx)):
            kind, p, r = info[sid]
            if kind > RELEASE or i < 0:
                continue
            s = i % cap[p]
            if kind == CLOSE:  # an acquire and a commit in one (as the deadlock run counts it)
                closes.setdefault(p, (k, pos))
                ev.setdefault((ACQ, p, r, s), []).append(pos)
                kind = COMMIT
            ev.setdefault((kind, p, r, s), []).append(pos)
        events.append(ev)
    problems: list[Problem] = []
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
        hops = _hops(checker, events, rd, w, named)
        srcs = [pos for pos, _, _ in hops]
        # suffix minimum of the target positions: the earliest W event a hop after r reaches,
        # and that hop's pipe and verb (what tle-dump names as implying the release)
        best = [(float("inf"), "")] * (len(hops) + 1)
        for t in range(len(hops) - 1, -1, -1):
            best[t] = min((hops[t][1], hops[t][2]), best[t + 1])
        used = checker.named_hops.setdefault(checker.pipes[x], set())
        for n in range(1, len(acquires)):
            if n - 1 >= len(releases):
                break  # the pairing rules report a missing release
            r = releases[n - 1]
            a = acquires[n]
            t = bisect_right(srcs, r)
            if best[t][0] < a:
                used.add(best[t][1])
                continue
            problems.append(Problem(
                "named-release", f"pipe '{checker.pipes[x]}' has barrier=\"named\" (no empty "
                f"handshake), but this acquire (use {n}) is not ordered after the reader's "
                f"release of use {n - 1}: no commit the writer waits for before it (nor a "
                f"release of a pipe it writes) follows that release in the reader's partition, "
                f"so the writer could overwrite the slot, and arrive on the barrier, before "
                f"the reader is done. Release earlier, or use barrier=\"mbarrier\"", (w, a),
                (rd, r)))
            break
    return problems


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
                    label = f"{checker.pipes[p]}.commit"
                    out += [(ps[m], ws[m], label) for m in range(min(len(ps), len(ws)))]
        elif kind == RELEASE and p not in named:
            acq = d_ev.get((ACQ, p, -1, s), [])
            label = f"{checker.pipes[p]}.release"
            out += [(ps[m], acq[m + 1], label) for m in range(len(ps)) if m + 1 < len(acq)]
    out.sort()
    return out
