"""verify-deadlock: prove that every interleaving of the partitions runs to the end.

For each param instance (bound.py), build the happens-before graph of its event instances:
  - program order inside each partition;
  - the k-th commit (or close) of a stage → every reader's k-th wait of that stage;
  - every reader's (k−1)-th release of a stage → the writer's k-th acquire (or close) of it.
Under the protocol rules checked by verify-protocol, each event blocks exactly until its graph
predecessors have run (docs/semantics.md), so the partitions deadlock in some interleaving iff this
graph has a cycle — and if it has none, every interleaving completes. A cycle is reported as the
chain of cross-partition waits it consists of, each with its source line.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from ..diagnostics import Note
from ..ir.unroll import Instance, unroll
from .bound import compute_bound, param_instances
from .context import PassContext
from .matching import StageUses, match_instance
from .roles import PipeRoles, resolve_roles


def happens_before(program, roles: dict[str, PipeRoles], traces: dict[str, list[Instance]],
                   uses: dict[str, dict[int, StageUses]]) -> nx.DiGraph:
    g = nx.DiGraph()
    for part, trace in traces.items():
        nx.add_path(g, trace) if len(trace) > 1 else g.add_nodes_from(trace)
    for pname, stages in uses.items():
        r = roles[pname]
        for su in stages.values():
            for k, commit in enumerate(su.commits):
                for name in r.pipe.reader_names:
                    waits = su.waits.get(name, [])
                    if k < len(waits):
                        g.add_edge(commit, waits[k], sync=True)
            if r.pipe.one_shot:
                continue
            for k in range(1, len(su.acquires)):
                for name in r.pipe.reader_names:
                    rel = su.releases.get(name, [])
                    if k - 1 < len(rel):
                        g.add_edge(rel[k - 1], su.acquires[k], sync=True)
    return g


def _describe(inst: Instance) -> str:
    ev = inst.event
    who = f"[{ev.reader}]" if ev.reader else ""
    where = inst.where()
    return f"{inst.partition}: {ev.pipe}{who}.{ev.verb}({inst.index})" + (f" {where}" if where else "")


def describe_cycle(g: nx.DiGraph, cycle: list[tuple]) -> list[Note]:
    """The cycle as its cross-partition hand-offs: "X waits for Y" with lines."""
    notes = []
    for u, v in cycle:
        if g.edges[u, v].get("sync"):
            notes.append(Note(v.event.loc, f"{_describe(v)} waits for {_describe(u)} "
                              f"(line {u.event.loc.line})"))
    return notes


@dataclass(frozen=True)
class VerifyDeadlock:
    name: str = "verify-deadlock"

    def apply(self, ctx: PassContext) -> None:
        roles = ctx.facts.get("roles") or resolve_roles(ctx.program)
        info = ctx.facts.get("bound_info") or compute_bound(ctx.program, ctx.bound)
        ctx.facts["bound_info"] = info
        checked = 0
        for params in param_instances(ctx.program, info, ctx.fixed_params):
            traces = unroll(ctx.program, params)
            uses, problems = match_instance(ctx.program, roles, traces)
            if problems:
                continue  # verify-protocol reports these; the graph is meaningless without pairing
            checked += 1
            g = happens_before(ctx.program, roles, traces, uses)
            try:
                cycle = nx.find_cycle(g)
            except nx.NetworkXNoCycle:
                continue
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            notes = describe_cycle(g, cycle)
            first = next((v for u, v in cycle if g.edges[u, v].get("sync")), cycle[0][0])
            ctx.error(first.event.loc, f"deadlock: the partitions wait for each other in a cycle"
                      + (f" (when {shown})" if shown else ""), "deadlock", tuple(notes))
            break  # one cycle is enough to reject; the smallest instance shows it best
        ctx.facts["deadlock_instances_checked"] = checked
