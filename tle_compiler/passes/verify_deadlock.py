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
from .bound import param_instances
from .context import PassContext
from .matching import StageUses, match_instance
from .roles import PipeRoles


def happens_before(program, roles: dict[str, PipeRoles], traces: dict[str, list[Instance]],
                   uses: dict[str, dict[int, StageUses]]) -> tuple[nx.DiGraph, list[Instance]]:
    """The graph over integer node ids (hashing instances is what made this slow), and the
    instance of each id."""
    nodes: list[Instance] = []
    base: dict[str, int] = {}
    g = nx.DiGraph()
    for part, trace in traces.items():
        base[part] = len(nodes)
        nodes.extend(trace)
        ids = range(base[part], base[part] + len(trace))
        g.add_nodes_from(ids)
        g.add_edges_from(zip(ids, ids[1:]))

    def nid(inst: Instance) -> int:
        return base[inst.partition] + inst.pos

    for pname, stages in uses.items():
        r = roles[pname]
        for su in stages.values():
            for k, commit in enumerate(su.commits):
                for name in r.pipe.reader_names:
                    waits = su.waits.get(name, [])
                    if k < len(waits):
                        g.add_edge(nid(commit), nid(waits[k]), sync=True)
            if r.pipe.one_shot:
                continue
            for k in range(1, len(su.acquires)):
                for name in r.pipe.reader_names:
                    rel = su.releases.get(name, [])
                    if k - 1 < len(rel):
                        g.add_edge(nid(rel[k - 1]), nid(su.acquires[k]), sync=True)
    return g, nodes


def _describe(inst: Instance) -> str:
    ev = inst.event
    who = f"[{ev.reader}]" if ev.reader else ""
    where = inst.where()
    return f"{inst.partition}: {ev.pipe}{who}.{ev.verb}({inst.index})" + (f" {where}" if where else "")


def describe_cycle(g: nx.DiGraph, nodes: list[Instance], cycle: list[tuple]) -> list[Note]:
    """The cycle as its cross-partition hand-offs: "X waits for Y" with lines."""
    notes = []
    for a, b in cycle:
        if g.edges[a, b].get("sync"):
            u, v = nodes[a], nodes[b]
            notes.append(Note(v.event.loc, f"{_describe(v)} waits for {_describe(u)} "
                              f"(line {u.event.loc.line})"))
    return notes


@dataclass(frozen=True)
class VerifyDeadlock:
    name: str = "verify-deadlock"

    def apply(self, ctx: PassContext) -> None:
        roles = ctx.roles()
        info = ctx.bound_info()
        checked = 0
        for params in param_instances(ctx.program, info, ctx.fixed_params):
            cached = ctx.facts.get("matched", {}).get(tuple(params.items()))
            if cached is not None:
                traces, uses = cached
            else:
                traces = unroll(ctx.program, params)
                uses, problems = match_instance(ctx.program, roles, traces)
                if problems:
                    continue  # verify-protocol reports these; the graph is meaningless without pairing
            checked += 1
            g, nodes = happens_before(ctx.program, roles, traces, uses)
            if nx.is_directed_acyclic_graph(g):
                continue
            cycle = nx.find_cycle(g)
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            notes = describe_cycle(g, nodes, cycle)
            first = nodes[next((b for a, b in cycle if g.edges[a, b].get("sync")), cycle[0][0])]
            ctx.error(first.event.loc, "deadlock: the partitions wait for each other in a cycle"
                      + (f" (when {shown})" if shown else ""), "deadlock", tuple(notes))
            break  # one cycle is enough to reject; the smallest instance shows it best
        ctx.facts["deadlock_instances_checked"] = checked
        if not ctx.errors:
            ctx.facts["verdict"] = _verdict_of(ctx, info)


def _verdict_of(ctx: PassContext, info):
    """Interim: the verdict from the bound analysis (replaced by passes/cutoff.py)."""
    from .verdict import BOUNDED, PROVED, Verdict

    fixed = dict(ctx.fixed_params)
    names = [p.name for p in ctx.program.params]
    checked = {p: f"[{info.minimum[p]}, {b}]" for p, b in info.bound.items() if p not in fixed}
    checked.update({p: f"[{v}, {v}]" for p, v in fixed.items() if p in names})
    if not names:
        return Verdict(PROVED, scope="its single instance (no params)", argument="checked exactly")
    if all(n in fixed for n in names):
        scope = ", ".join(f"{n} = {fixed[n]}" for n in names)
        return Verdict(PROVED, scope=scope, checked=checked, argument="the values given")
    if info.sufficient:
        free = [n for n in names if n not in fixed]
        scope = "every value of " + ", ".join(free) + "".join(
            f", {n} = {fixed[n]}" for n in names if n in fixed)
        return Verdict(PROVED, scope=scope, checked=checked, argument=info.reason)
    return Verdict(BOUNDED, scope=info.describe(), checked=checked, reason=info.reason)
