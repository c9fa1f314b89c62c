"""What tle-dump says about one kernel: its verdict, and text and JSON renderings.

The text report is the kernel's Pipe IR followed by ``#`` comment lines (barriers, dataflow,
verdict), so the whole report is itself a valid ``.pipe`` file.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from ..diagnostics import Diagnostic, TleError
from ..ir.nodes import Program
from ..ir.printer import print_program
from ..passes import PassContext
from ..passes.infer_barriers import Barrier
from ..passes.verdict import BOUNDED, PROVED, REJECTED, UNKNOWN, Verdict, rejected

#: The passes a verdict other than "rejected" stands on: verify-deadlock's argument assumes the
#: protocol rules verify-protocol checks, so either one alone proves nothing.
CLAIM_PASSES = ("verify-protocol", "verify-deadlock")


def makes_claim(passes_run: list[str]) -> bool:
    """Whether a pipeline gives a verdict: verify-deadlock ran after verify-protocol (it records
    the verdict only then, passes/verify_deadlock.py; before it, it proves nothing)."""
    first = passes_run.index(CLAIM_PASSES[0]) if CLAIM_PASSES[0] in passes_run else None
    return first is not None and CLAIM_PASSES[1] in passes_run[first:]


@dataclass(frozen=True)
class Qualification:
    """What a verdict holds only under: ``reason`` (said in the verdict's reason), the
    ``names`` it bounds, each checked for ``checked`` ("the integers"); ``of_bounded``: it
    qualifies a bounded claim too (else a proved one only)."""

    reason: str
    names: tuple
    checked: str
    of_bounded: bool = False


@dataclass
class KernelReport:
    program: Program
    ctx: PassContext
    #: Diagnostics raised before the passes could run (frontend errors): the kernel is rejected.
    early: list[Diagnostic] = field(default_factory=list)
    #: Integer constexprs the kernel was read specialised to (no longer params): the claim holds
    #: for these values only.
    specialised: dict[str, int] = field(default_factory=dict)
    #: Why verification stopped before it reached a verdict (a trace longer than the verifier
    #: expands): the verdict is "unknown".
    stopped: Optional[TleError] = None
    #: The Gluon module the lowering translated the kernel to (cli/translation_check.py
    #: check_translation; lowering/codegen.Generated), or None when it was not translated.
    translated: object = None
    #: Why a kernel whose verdict is not "rejected" was not translated (a .pipe protocol, a
    #: constexpr without a value, a free shared buffer: cli/translation_check.py check_translation):
    #: its verdict is the protocol's alone. "" otherwise.
    not_translated: str = ""
    #: What the memory-race proof assumed of the launch beyond the verdict's values (the rows
    #: of a stride argument not overlapping: cli/kernel_checks.py check_memory_races), or "".
    assumed: str = ""
    #: What a "proved" verdict holds only under, each a :class:`Qualification`: the integer
    #: values of a constexpr a launch may give as a float (cli/kernel_checks.py
    #: check_float_constexprs), pointers to signed integers where a loop's ending or a
    #: condition needs a load of no known element type signed (check_signed_loads). The verdict
    #: is then bounded, its reason saying why.
    qualifications: list = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.early + self.ctx.diagnostics

    @property
    def verdict(self) -> Optional[Verdict]:
        """The claim this run makes, or None when it makes none (a pipeline without
        verify-protocol and verify-deadlock that found no error)."""
        errors = [d for d in self.diagnostics if d.severity == "error"]
        if errors:
            v = self.ctx.verdict()
            if v is not None and v.kind == REJECTED and v.errors == len(errors):
                return v
            return rejected(len(errors))
        if self.stopped is not None:
            e = self.stopped
            where = f" (line {e.loc.line})" if e.loc and e.loc.line else ""
            return Verdict(UNKNOWN, reason=f"verification stopped: {e.message}{where}")
        if not makes_claim(self.ctx.passes_run):
            return None
        v = self.ctx.verdict()
        if v is None:  # both passes ran and said nothing: no fault found, nothing proved
            return Verdict(UNKNOWN, reason="the passes gave no verdict")
        v = _narrowed(v, self.specialised)
        # a bounded claim is qualified too where the qualification holds of it as well
        quals = [q for q in self.qualifications
                 if v.kind == PROVED or (v.kind == BOUNDED and q.of_bounded)]
        if not quals:
            return v
        reasons = "; ".join(q.reason for q in quals)
        checked = {n: q.checked for q in quals for n in q.names}
        if v.kind == BOUNDED:
            return replace(v, reason=f"{v.reason}; {reasons}", checked={**v.checked, **checked})
        return replace(v, kind=BOUNDED, reason=f"proved for {v.scope}; {reasons}",
                       checked=checked)

    @property
    def verified(self) -> bool:
        """True only for a "proved" verdict."""
        v = self.verdict
        return v is not None and v.kind == PROVED

    @property
    def exit_code(self) -> int:
        """The verdict's exit code; 0 when no claim is made (and no error was found)."""
        v = self.verdict
        return v.exit_code if v is not None else 0

    @property
    def barriers(self) -> list[Barrier]:
        return self.ctx.barriers or []

    def summary(self) -> str:
        """One line: the verdict (Verdict.describe) or, without one, what ran."""
        v = self.verdict
        if v is not None:
            return v.describe()
        ran = self.ctx.passes_run
        if "verify-deadlock" in ran:
            return ("not verified: verify-deadlock ran without verify-protocol before it, whose "
                    "rules its argument assumes; no claim is made")
        return (f"not verified (ran {', '.join(ran) or 'no passes'}; no claim is made: "
                f"verify-protocol and verify-deadlock give the verdict)")


def _narrowed(v: Verdict, specialised: dict[str, int]) -> Verdict:
    """A verdict for a kernel read specialised to some constexprs names them in its scope and,
    as values checked, in ``checked``: the claim holds for those values only."""
    if not specialised or v.kind == REJECTED:
        return v
    specialised = dict(sorted(specialised.items()))  # one order whatever reading found them
    fixed = ", ".join(f"{k} = {x}" for k, x in specialised.items())
    checked = dict(v.checked)
    if checked or v.kind in (PROVED, BOUNDED):
        checked = {**{k: f"[{x}, {x}]" for k, x in specialised.items()}, **checked}
    return replace(v, scope=f"{v.scope}, with {fixed} (read specialised)" if v.scope else
                   f"{fixed} (read specialised)", checked=checked)


def verdict_json(rep: KernelReport) -> dict:
    """The verdict's fields (Verdict.to_json: "verdict", "scope", "checked", "argument", "reason",
    ...) plus "verified" (proved only) and "summary" (the one-line text); "verdict" is null when
    the run makes no claim."""
    v = rep.verdict
    out = v.to_json() if v is not None else {
        "verdict": None, "scope": "", "checked": {}, "argument": "", "reason": rep.summary(),
        "errors": 0, "events": 0, "exit_code": 0}
    out["verified"] = rep.verified
    out["summary"] = rep.summary()
    if rep.specialised:
        out["specialised"] = dict(rep.specialised)
    if rep.assumed and rep.verdict is not None and rep.verdict.kind != REJECTED:
        out["assumed"] = rep.assumed  # what the memory-race proof took of the launch
    return out


def translation_json(rep: KernelReport) -> dict:
    """"translated": whether the lowering translated the kernel to Gluon (cli/translation_check.py
    check_translation: a kernel it refuses is rejected); "not_translated", when a kernel that
    is not rejected was not: why (its verdict is then the protocol's alone)."""
    out = {"translated": rep.translated is not None}
    if rep.not_translated:
        out["not_translated"] = rep.not_translated
    return out


def not_translated_line(rep: KernelReport) -> Optional[str]:
    """The text report's line saying that a kernel of a .py or .kir file was verified without
    being translated to Gluon, and why (a .pipe file is a protocol: its report says nothing)."""
    path = str(getattr(getattr(rep.program, "loc", None), "file", "") or "")
    if not rep.not_translated or path.endswith(".pipe"):
        return None
    return (f"# lowering: not translated to Gluon: {rep.not_translated}; the verdict below is "
            f"the protocol's alone")


def diagnostic_json(d: Diagnostic, witnesses: Optional[dict] = None) -> dict:
    """A diagnostic; ``witnesses``: the sweep's base witnesses by (check, file, line), for a fault
    at values of derived params (``"witness": {"base": {"N": 0}, "derived": {"M": 0}}``)."""
    out = {"file": d.loc.file, "line": d.loc.line, "severity": d.severity, "message": d.message,
           "check": d.check, "notes": [{"line": n.loc.line, "message": n.message} for n in d.notes]}
    w = (witnesses or {}).get((d.check, d.loc.file, d.loc.line))
    if w is not None:
        out["witness"] = {"base": dict(w["base"]), "derived": dict(w["derived"])}
    return out


def params_json(prog: Program) -> list[dict]:
    """The params with their domains; a derived one (``M = tl.cdiv(N, 64)``) also with its
    definition (``"definition": "(N + 63) // 64"``)."""
    defs = {d.name: d for d in prog.derived}
    out = []
    for p in prog.params:
        item = {"name": p.name, "min": p.min, "max": p.max, "domain": p.domain()}
        if p.name in defs:
            item["definition"] = str(defs[p.name].definition)
        out.append(item)
    return out


def dataflow_edges(ctx: PassContext) -> list[dict]:
    """One edge per (pipe, field group): writer partition → the partitions of its readers."""
    roles = ctx.resolved_roles or {}
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


def _implied_by(pipe: str, hops: dict) -> str:
    """What implies a named pipe's releases (docs/semantics.md, rule 10): the hand-offs the
    instance checks found, or nothing when no acquire needed one."""
    found = sorted(hops.get(pipe, ()))
    return f" by {', '.join(found)}" if found else ""


def _barrier_rows(barriers: list[Barrier], hops: Optional[dict] = None) -> list[str]:
    """Barriers of one (pipe, kind, group) differ only by stage: one row for all stages;
    ``hops``: named pipe -> the hand-offs implying its releases."""
    rows = [("barrier", "count", "arrive", "wait (parity)", "fields; before commit")]
    seen = set()
    for b in barriers:
        key = (b.pipe, b.kind, b.group)
        if key in seen:
            continue
        seen.add(key)
        stages = sum(1 for x in barriers if (x.pipe, x.kind, x.group) == key)
        name = f"{b.pipe}.{b.kind}[g{b.group}]" + (f"[0..{stages - 1}]" if stages > 1 else "[0]")
        # an arriving release names its reader as a wait does: two readers of one partition
        # were "cons.release, cons.release", the two arrivals of the count told apart nowhere
        arr = ", ".join(f"{_who(a.partition, a.reader)}.{a.verb}" for a in b.arrivers) or "-"
        wait = ", ".join(f"{_who(w.partition, w.reader)}.{w.verb}"
                         + (f" @ {w.parity}" if w.parity is not None else "")
                         for w in b.waiters) or "-"
        tx = "?" if b.tma and not b.expect_tx else str(b.expect_tx)  # ? : shape not bound yet
        extra = f"  fence={b.fence or 'none'} expect-tx={tx}" if b.kind == "full" else \
            f"  fence={b.fence or 'none'}; hardware named barrier (bar.arrive -> bar.sync), " \
            f"no empty side: every release implied{_implied_by(b.pipe, hops or {})}" \
            if b.kind == "named" else ""
        rows.append((name, str(b.count), arr, wait, "(" + ", ".join(b.fields) + ")" + extra))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(c.ljust(widths[i]) if i < 4 else c for i, c in enumerate(r)).rstrip() for r in rows]


def render_text(rep: KernelReport, graph: bool, locations: bool = True) -> str:
    # the constexprs the kernel was read specialised to, so that the report reads back with the
    # verdict it gives ("with BLOCK_H = 64 (read specialised)")
    program = replace(rep.program, constexprs=tuple(sorted(rep.specialised.items())))
    lines = [print_program(program, locations=locations).rstrip("\n"), ""]
    if rep.barriers:
        lines.append("# barriers (counts in partition arrivals per phase; parity of the waits)")
        lines += ["#   " + r for r in _barrier_rows(rep.barriers, rep.ctx.named_hops)]
    if graph:
        lines.append("# dataflow (writer --pipe(fields)--> reader partitions)")
        for e in dataflow_edges(rep.ctx):
            kind = "one-shot" if e["one_shot"] else f"capacity {e['capacity']}"
            # each reader as the barrier table names it: two readers of one partition were
            # "cons, cons"
            to = e["to"]
            if len(to) == len(e["readers"]):
                to = [_who(part, name) for part, name in zip(to, e["readers"])]
            lines.append(f"#   {e['from']} --{e['pipe']}({', '.join(e['fields'])})--> "
                         f"{', '.join(to) or '(no reader)'}    {kind}")
    note = not_translated_line(rep)
    if note:
        lines.append(note)
    if rep.assumed and rep.verdict is not None and rep.verdict.kind != REJECTED:
        lines.append(f"# memory-race: {rep.assumed}")
    lines.append(f"# verdict: {rep.summary()}")
    return "\n".join(lines) + "\n"


def _barriers_json(rep: KernelReport) -> list[dict]:
    """``count`` is infer-barriers' count in partition units; ``arrive_unit`` and ``init_count``
    say how the lowering arrives and what it passes to ``mbarrier.init``: "partition" (one elected
    arrive per commit: init_count = count), "thread" (cp.async gathers, one arrive per writer thread:
    count x threads), "mixed" (both: count x (threads + 1)), "tma" / "tma-partition" / "tma-thread" /
    "tma-mixed" (TMA copies: one expect-tx arrive of ``expect_tx`` bytes, plus the arrives of the
    other fills: lowering/plan.py init_count); ``tma``: the group's fields filled by TMA copies. A
    named-barrier pipe's ``named`` barrier: arrive_unit "named", init_count the threads its
    ``bar.arrive`` / ``bar.sync`` count, ``bar_id`` the hardware barrier."""
    units = {}
    if rep.translated is not None and rep.verdict is not None and rep.verdict.ok:
        from ..lowering.dumping import barrier_units_of

        units = barrier_units_of(rep.translated)  # the kernel tle-dump translated (cli/dump.py)
    out = []
    for b in rep.barriers:
        d = b.to_json()
        u = units.get(b.label, {"arrive_unit": "partition", "init_count": b.count})
        d["arrive_unit"] = u["arrive_unit"]
        d["init_count"] = u["init_count"]
        if "bar_id" in u:
            d["bar_id"] = u["bar_id"]
        if b.kind == "named":  # the hand-offs that imply its releases (rule 10)
            d["implied_by"] = sorted(rep.ctx.named_hops.get(b.pipe, ()))
        out.append(d)
    return out


def render_json(rep: KernelReport, graph: bool) -> dict:
    prog = rep.program
    roles = rep.ctx.resolved_roles or {}
    witnesses = getattr(rep.ctx.sweep, "reported", None)
    pipes = []
    for p in prog.pipes:
        r = roles.get(p.name)
        pipes.append({"name": p.name, "capacity": p.capacity, "one_shot": p.one_shot,
                      "readers": list(p.readers), "fields": list(p.fields), "mma": list(p.mma),
                      "writer": r.writer if r else None,
                      "reader_partitions": dict(r.readers) if r else {},
                      "views": {k: list(v) for k, v in r.views.items()} if r else {},
                      "line": p.loc.line})
    out = {"name": prog.name,
           "params": params_json(prog),
           "pipes": pipes,
           "partitions": [{"name": q.name, "default": q.default, "warps": q.warps, "regs": q.regs,
                           "line": q.loc.line} for q in prog.partitions],
           "barriers": _barriers_json(rep),
           **verdict_json(rep),
           **translation_json(rep),
           "passes_run": list(rep.ctx.passes_run),
           "diagnostics": [diagnostic_json(d, witnesses) for d in rep.diagnostics]}
    if prog.derived:
        # what the derived params are computed from: the base params and every definition
        out["bases"] = [{"name": p.name, "min": p.min, "max": p.max, "domain": p.domain()}
                        for p in prog.bases]
        out["derived"] = [{"name": d.name, "definition": str(d.definition)} for d in prog.derived]
    if graph:
        out["graph"] = {"edges": dataflow_edges(rep.ctx)}
    return out
