"""What tle-dump says about one verified (or rejected) kernel: text and JSON renderings.

The text report is the kernel's Pipe IR followed by ``#`` comment lines (barriers, dataflow,
verdict), so the whole report is itself a valid ``.pipe`` file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..diagnostics import Diagnostic
from ..ir.nodes import Program
from ..ir.printer import print_program
from ..passes import PassContext
from ..passes.infer_barriers import Barrier


@dataclass
class KernelReport:
    program: Program
    ctx: PassContext
    #: Diagnostics raised before the passes could run (frontend errors): the kernel is rejected.
    early: list[Diagnostic] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.early + self.ctx.diagnostics

    @property
    def verified(self) -> bool:
        return not self.early and self.ctx.ok and "verify-deadlock" in self.ctx.passes_run

    @property
    def barriers(self) -> list[Barrier]:
        return self.ctx.facts.get("barriers", [])

    def verdict(self) -> str:
        n = len([d for d in self.diagnostics if d.severity == "error"])
        if n:
            return f"rejected: {n} error{'s' if n > 1 else ''}"
        if not self.verified:
            run = ", ".join(self.ctx.passes_run) or "no passes"
            return f"not verified (ran {run}; verify-protocol and verify-deadlock prove it)"
        info = self.ctx.facts.get("bound_info")
        return "verified: protocol well-formed, deadlock-free, no stale read or overwrite; " + (
            info.describe() if info else "")


def dataflow_edges(ctx: PassContext) -> list[dict]:
    """One edge per (pipe, field group): writer partition → the partitions of its readers."""
    roles = ctx.facts.get("roles", {})
    out = []
    for pname, r in roles.items():
        if r.writer is None:
            continue
        for g in r.groups:
            out.append({"pipe": pname, "group": g.index, "fields": list(g.fields), "from": r.writer,
                        "to": [r.readers[n] for n in g.readers if n in r.readers],
                        "readers": list(g.readers), "capacity": r.pipe.capacity,
                        "one_shot": r.pipe.one_shot})
    return out


def _who(partition: str, reader: Optional[str]) -> str:
    """``left`` when the reader is named after its partition, ``part[reader]`` otherwise."""
    return partition if not reader or reader == partition else f"{partition}[{reader}]"


def _barrier_rows(barriers: list[Barrier]) -> list[str]:
    """Barriers of one (pipe, kind, group) differ only by stage: one row for all stages."""
    rows = [("barrier", "count", "arrive", "wait (parity)", "fields; before commit")]
    seen = set()
    for b in barriers:
        key = (b.pipe, b.kind, b.group)
        if key in seen:
            continue
        seen.add(key)
        stages = sum(1 for x in barriers if (x.pipe, x.kind, x.group) == key)
        name = f"{b.pipe}.{b.kind}[g{b.group}]" + (f"[0..{stages - 1}]" if stages > 1 else "[0]")
        arr = ", ".join(f"{a.partition}.{a.verb}" for a in b.arrivers) or "-"
        wait = ", ".join(f"{_who(w.partition, w.reader)}.{w.verb} @ {w.parity}" for w in b.waiters) or "-"
        extra = f"  fence={b.fence or 'none'} expect-tx={b.expect_tx}" if b.kind == "full" else ""
        rows.append((name, str(b.count), arr, wait, "(" + ", ".join(b.fields) + ")" + extra))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(c.ljust(widths[i]) if i < 4 else c for i, c in enumerate(r)).rstrip() for r in rows]


def render_text(rep: KernelReport, graph: bool, locations: bool = True) -> str:
    lines = [print_program(rep.program, locations=locations).rstrip("\n"), ""]
    if rep.barriers:
        lines.append("# barriers (counts in partition arrivals per phase; parity of the waits)")
        lines += ["#   " + r for r in _barrier_rows(rep.barriers)]
    if graph:
        lines.append("# dataflow (writer --pipe(fields)--> reader partitions)")
        for e in dataflow_edges(rep.ctx):
            kind = "one-shot" if e["one_shot"] else f"capacity {e['capacity']}"
            lines.append(f"#   {e['from']} --{e['pipe']}({', '.join(e['fields'])})--> "
                         f"{', '.join(e['to']) or '(no reader)'}    {kind}")
    lines.append(f"# verdict: {rep.verdict()}")
    return "\n".join(lines) + "\n"


def _barriers_json(rep: KernelReport) -> list[dict]:
    """``count`` is infer-barriers' count in partition units; ``arrive_unit`` and ``init_count``
    say how the lowering arrives and what it passes to ``mbarrier.init``: "partition" (one elected
    arrive per commit: init_count = count), "thread" (cp.async gathers, one arrive per writer thread:
    count x threads), "mixed" (both: count x (threads + 1))."""
    units = {}
    path = getattr(getattr(rep.program, "loc", None), "file", None)
    if path and str(path).endswith(".py") and rep.verified:
        from ..lowering.dumping import barrier_units

        units = barrier_units(str(path), rep.program.name)
    out = []
    for b in rep.barriers:
        d = b.to_json()
        u = units.get(b.label, {"arrive_unit": "partition", "init_count": b.count})
        d["arrive_unit"] = u["arrive_unit"]
        d["init_count"] = u["init_count"]
        out.append(d)
    return out


def render_json(rep: KernelReport, graph: bool) -> dict:
    prog = rep.program
    roles = rep.ctx.facts.get("roles", {})
    pipes = []
    for p in prog.pipes:
        r = roles.get(p.name)
        pipes.append({"name": p.name, "capacity": p.capacity, "one_shot": p.one_shot,
                      "readers": list(p.readers), "fields": list(p.fields), "mma": list(p.mma),
                      "writer": r.writer if r else None,
                      "reader_partitions": dict(r.readers) if r else {},
                      "views": {k: list(v) for k, v in r.views.items()} if r else {},
                      "line": p.loc.line})
    info = rep.ctx.facts.get("bound_info")
    out = {"name": prog.name, "params": [{"name": p.name, "min": p.min} for p in prog.params],
           "pipes": pipes,
           "partitions": [{"name": q.name, "default": q.default, "warps": q.warps, "regs": q.regs,
                           "line": q.loc.line} for q in prog.partitions],
           "barriers": _barriers_json(rep),
           "verified": rep.verified,
           "verdict": rep.verdict(),
           "bound": ({"values": info.bound, "min": info.minimum, "sufficient": info.sufficient,
                      "reason": info.reason, "instances": info.instances} if info else None),
           "diagnostics": [{"file": d.loc.file, "line": d.loc.line, "severity": d.severity,
                            "message": d.message, "check": d.check,
                            "notes": [{"line": n.loc.line, "message": n.message} for n in d.notes]}
                           for d in rep.diagnostics]}
    if graph:
        out["graph"] = {"edges": dataflow_edges(rep.ctx)}
    return out
