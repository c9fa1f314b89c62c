"""Per-instance analysis: walk each partition's trace and pair the events of every stage use.

For one param assignment, every pipe's writer and readers are replayed against the rules of
docs/semantics.md (pairing, one-shot use, phase alternation, per-stage agreement between the
writer's commits and each reader's waits). What comes out is (a) the problems found, each tied to
the instance that shows it, and (b) for programs without problems, the k-th use of every stage by
every endpoint, which is what the happens-before graph is built from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ir.nodes import Access, Program
from ..ir.unroll import Instance
from .roles import PipeRoles, reader_name


@dataclass
class StageUses:
    """The k-th entry of each list belongs to the k-th use of one stage."""

    acquires: list[Instance] = field(default_factory=list)  # acquire, or the close itself
    commits: list[Instance] = field(default_factory=list)  # commit or close
    waits: dict[str, list[Instance]] = field(default_factory=dict)  # reader -> waits
    releases: dict[str, list[Instance]] = field(default_factory=dict)  # reader -> releases


@dataclass
class Problem:
    check: str
    message: str
    at: Instance  # the event that shows the problem
    related: Optional[Instance] = None


def _idx(inst: Instance) -> str:
    return str(inst.index)


def match_instance(program: Program, roles: dict[str, PipeRoles],
                   traces: dict[str, list[Instance]]) -> tuple[dict[str, dict[int, StageUses]], list[Problem]]:
    uses: dict[str, dict[int, StageUses]] = {p.name: {} for p in program.pipes}
    problems: list[Problem] = []
    # Per (pipe, endpoint) state while replaying partitions independently.
    for part in program.partitions:
        open_acq: dict[tuple[str, int], Instance] = {}  # (pipe, stage) -> open acquire
        held: dict[tuple[str, str, int], Instance] = {}  # (pipe, reader, stage) -> wait
        closed: dict[str, Instance] = {}
        counts: dict[tuple[str, str, str], Instance] = {}  # one-shot use per (pipe, endpoint, verb)
        # the event that last closed a window, per (pipe, endpoint, stage): named by a late access
        closer: dict[tuple, Instance] = {}
        for inst in traces[part.name]:
            ev = inst.event
            if isinstance(ev, Access):
                pr = _check_access(inst, roles, open_acq, held, closer)
                if pr is not None:
                    problems.append(pr)
                continue
            r = roles.get(ev.pipe)
            if r is None:
                continue
            pipe = r.pipe
            cap = pipe.capacity
            if inst.index < 0:
                problems.append(Problem("negative-index", f"{ev.verb} of pipe '{pipe.name}' at negative "
                                        f"index {_idx(inst)}", inst))
                continue
            s = inst.index % cap
            su = uses[pipe.name].setdefault(s, StageUses())
            if pipe.one_shot:
                endpoint = "" if ev.is_writer else "r:" + reader_name(ev, pipe)
                verb = "commit" if ev.verb == "close" else ev.verb
                key = (pipe.name, endpoint, verb)
                if key in counts:
                    problems.append(Problem("one-shot-reuse", f"one-shot pipe '{pipe.name}' is used more "
                                            f"than once: {ev.verb}({_idx(inst)}) after "
                                            f"{counts[key].event.verb}({_idx(counts[key])})", inst, counts[key]))
                    continue
                counts[key] = inst
                if ev.verb == "close":
                    counts[(pipe.name, endpoint, "acquire")] = inst
            if ev.is_writer:
                if pipe.name in closed:
                    problems.append(Problem("event-after-close", f"{ev.verb}({_idx(inst)}) on pipe "
                                            f"'{pipe.name}' after it was closed", inst, closed[pipe.name]))
                    continue
                if ev.verb in ("acquire", "close"):
                    if (pipe.name, s) in open_acq:
                        prev = open_acq[(pipe.name, s)]
                        problems.append(Problem("double-acquire", f"{ev.verb}({_idx(inst)}) on stage {s} of "
                                                f"pipe '{pipe.name}' while acquire({_idx(prev)}) is not "
                                                f"committed", inst, prev))
                        continue
                    su.acquires.append(inst)
                    if ev.verb == "acquire":
                        open_acq[(pipe.name, s)] = inst
                    else:
                        su.commits.append(inst)
                        closed[pipe.name] = inst
                        closer[(pipe.name, None, s)] = inst
                else:  # commit
                    prev = open_acq.get((pipe.name, s))
                    if prev is None or prev.index != inst.index:
                        what = f"acquire({_idx(prev)}) is open on that stage" if prev else "no acquire is open"
                        problems.append(Problem("commit-without-acquire", f"commit({_idx(inst)}) of pipe "
                                                f"'{pipe.name}' but {what}", inst, prev))
                        continue
                    del open_acq[(pipe.name, s)]
                    closer[(pipe.name, None, s)] = inst
                    su.commits.append(inst)
            else:
                name = reader_name(ev, pipe)
                who = f"reader '{name}'" if name else "the reader"
                if ev.verb == "wait":
                    prev = held.get((pipe.name, name, s))
                    if prev is not None:
                        problems.append(Problem("wait-on-held-stage", f"{who} waits index {_idx(inst)} of pipe "
                                                f"'{pipe.name}' while still holding index {_idx(prev)} on the "
                                                f"same stage (release it first)", inst, prev))
                        continue
                    held[(pipe.name, name, s)] = inst
                    su.waits.setdefault(name, []).append(inst)
                else:
                    prev = held.get((pipe.name, name, s))
                    if prev is None or prev.index != inst.index:
                        what = f"it holds index {_idx(prev)} there" if prev else "it holds nothing there"
                        problems.append(Problem("release-without-wait", f"{who} releases index {_idx(inst)} of "
                                                f"pipe '{pipe.name}' but {what}", inst, prev))
                        continue
                    del held[(pipe.name, name, s)]
                    closer[(pipe.name, name, s)] = inst
                    su.releases.setdefault(name, []).append(inst)
        for (pname, s), inst in open_acq.items():
            problems.append(Problem("uncommitted-acquire", f"acquire({_idx(inst)}) of pipe '{pname}' is never "
                                    f"committed", inst))
        for (pname, name, s), inst in held.items():
            if not roles[pname].pipe.one_shot:
                who = f"reader '{name}'" if name else "the reader"
                problems.append(Problem("missing-release", f"{who} never releases index {_idx(inst)} of pipe "
                                        f"'{pname}'", inst))
    if problems:
        return uses, problems
    # Cross-partition agreement: phases alternate, and readers wait what the writer commits.
    for pname, stages in uses.items():
        r = roles[pname]
        cap = r.pipe.capacity
        for s, su in sorted(stages.items()):
            for k, c in enumerate(su.commits):
                # One-shot pipes are waited at parity 0 whatever the index (used once, no ring).
                if not r.pipe.one_shot and (c.index // cap) % 2 != k % 2:
                    problems.append(Problem("phase-aliasing", f"{c.event.verb}({_idx(c)}) is use {k} of stage "
                                            f"{s} of pipe '{pname}' but has phase {(c.index // cap) % 2}: "
                                            f"indices on one stage must alternate phases (a parity wait "
                                            f"cannot tell them apart)", c))
                    break
            committed = [c.index for c in su.commits]
            for name in r.pipe.reader_names:
                waits = su.waits.get(name, [])
                who = f"reader '{name}'" if name else "the reader"
                for k in range(max(len(waits), len(committed))):
                    if k >= len(waits):
                        c = su.commits[k]
                        problems.append(Problem("unconsumed", f"{who} of pipe '{pname}' never waits index "
                                                f"{_idx(c)} that is committed here", c))
                        break
                    w = waits[k]
                    if k >= len(committed):
                        problems.append(Problem("wait-never-committed", f"{who} waits index {_idx(w)} of pipe "
                                                f"'{pname}' that the writer never commits", w))
                        break
                    if w.index != committed[k]:
                        problems.append(Problem("order-mismatch", f"{who} waits index {_idx(w)} of pipe '{pname}' "
                                                f"where the writer's next commit on stage {s} is index "
                                                f"{_idx(su.commits[k])}", w, su.commits[k]))
                        break
    return uses, problems


def _check_access(inst: Instance, roles: dict[str, PipeRoles], open_acq: dict, held: dict,
                  closer: dict) -> Optional[Problem]:
    """A slot access must lie inside the window of its index: the writer's acquire(i)..commit(i),
    or the reader's wait(i)..release(i) (a one-shot reader's window stays open to the end)."""
    a: Access = inst.event
    r = roles.get(a.pipe)
    if r is None:
        return None
    pipe = r.pipe
    i = inst.index
    if i < 0:
        return Problem("negative-index", f"{a.verb} of {a.pipe}.{a.field} at negative index {i}", inst)
    s = i % pipe.capacity
    what = f"{'write to' if a.side == 'writer' else 'read of'} {a.pipe}.{a.field} at index {i}"
    if a.side == "writer":
        cur = open_acq.get((pipe.name, s))
        if cur is not None and cur.index == i:
            return None
        last = closer.get((pipe.name, None, s))
        opener = f"{a.pipe}.acquire({i})"
    else:
        name = a.reader or ""
        cur = held.get((pipe.name, name, s))
        if cur is not None and cur.index == i:
            return None
        last = closer.get((pipe.name, name, s))
        who = f"{a.pipe}[{name}]" if name else a.pipe
        opener = f"{who}.wait({i})"
    if cur is not None:
        why = (f"the slot of stage {s} is held for index {cur.index} ({cur.event.verb} at line "
               f"{cur.event.loc.line}), not {i}")
        return Problem("access-outside-window", f"{what} outside its window: {why}", inst, cur)
    if last is not None and last.index == i:
        return Problem("access-outside-window", f"{what} after {last.event.verb}({i}) at line "
                       f"{last.event.loc.line} closed its window", inst, last)
    return Problem("access-outside-window", f"{what} outside its window: no {opener} is open "
                   f"here", inst, last)
