"""Run the instance checks over the param values of a plan, within a budget, and say what it proved.

verify-protocol and verify-deadlock share one sweep per pass context: each value of the plan
(cutoff.py) is expanded once (ir/tracegen.py) and checked once (instances.py) for both the
protocol rules and deadlock-freedom. Protocol problems are reported by verify-protocol (once per
endpoint, at the smallest value that shows them), the first deadlock by verify-deadlock. The sweep
stops when the events it expanded exceed the budget (``PassContext.budget``); the verdict then is
"unknown" and names the values checked. Otherwise the verdict is the plan's claim ("proved" or
"bounded") or "rejected".

A sweep depends only on the program, the fixed params, the bound and the budget, so the last few
are kept by that key (programs compare as values, locations included): a process that verifies a
kernel and then lowers it (``tle-dump --ttgir``, a first launch) checks its instances once.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Optional

from ..diagnostics import Note
from ..ir.nodes import Access
from ..ir.tracegen import TraceBudgetExceeded, compile_program
from ..ir.unroll import Instance, unroll
from .context import PassContext
from .cutoff import Plan, plan
from .instances import Checker, Problem
from .verdict import BOUNDED, PROVED, UNKNOWN, Verdict

#: Values still checked after the first one that shows a protocol fault (to find faults of other
#: endpoints; the verdict is "rejected" anyway).
AFTER_FAULT = 4


@dataclass
class Sweep:
    plan: Plan
    done: list[dict[str, int]] = field(default_factory=list)
    events: int = 0
    exhausted: Optional[str] = None  # why the budget stopped the sweep
    protocol: list[tuple[dict[str, int], Problem]] = field(default_factory=list)
    deadlock: Optional[tuple[dict[str, int], Problem]] = None
    faulty: bool = False

    # ------------------------------------------------------------------ reporting
    def report_protocol(self, ctx: PassContext) -> None:
        seen: set = set()
        for params, pr in self.protocol:
            inst = _instances(ctx, params, pr.at)
            ev = inst.event
            # one report per access statement, and per pipe endpoint for the protocol rules: a
            # broken endpoint usually breaks several rules, and its first (smallest) one reads best
            key = ("access", id(ev)) if isinstance(ev, Access) else ev.endpoint
            if key in seen:
                continue
            seen.add(key)
            notes: tuple[Note, ...] = ()
            if pr.related is not None:
                rel = _instances(ctx, params, pr.related)
                notes = (Note(rel.event.loc, f"{rel.event.verb}({rel.index}) in partition "
                              f"'{rel.partition}'" + (f" at {rel.where()[3:]}" if rel.env else "")),)
            ctx.error(ev.loc, pr.message + _when(params, inst), pr.check, notes)

    def report_deadlock(self, ctx: PassContext) -> None:
        if self.deadlock is None:
            return
        params, pr = self.deadlock
        notes = []
        for blocked, awaited in pr.notes:
            u, v = _instances(ctx, params, awaited), _instances(ctx, params, blocked)
            notes.append(Note(v.event.loc, f"{_describe(v)} waits for {_describe(u)} "
                                           f"(line {u.event.loc.line})"))
        first = _instances(ctx, params, pr.at)
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        ctx.error(first.event.loc, pr.message + (f" (when {shown})" if shown else ""), "deadlock",
                  tuple(notes))

    def verdict(self, ctx: PassContext) -> Verdict:
        checked = self.plan.checked(self.done)
        if self.exhausted is not None:
            return Verdict(UNKNOWN, scope=self.plan.scope, checked=checked,
                           reason=self.exhausted, events=self.events)
        if self.plan.claim == PROVED:
            return Verdict(PROVED, scope=self.plan.scope, checked=checked,
                           argument=self.plan.argument, events=self.events)
        return Verdict(BOUNDED, scope=self.plan.scope, checked=checked, reason=self.plan.reason,
                       events=self.events)


def _when(params: dict[str, int], inst: Instance) -> str:
    context = ", ".join([f"{k}={v}" for k, v in params.items()] + [f"{k}={v}" for k, v in inst.env])
    return f" (when {context})" if context else ""


def _describe(inst: Instance) -> str:
    ev = inst.event
    who = f"[{ev.reader}]" if getattr(ev, "reader", None) else ""
    where = inst.where()
    return f"{inst.partition}: {ev.pipe}{who}.{ev.verb}({inst.index})" + (f" {where}" if where else "")


def _instances(ctx: PassContext, params: dict[str, int], at: tuple[int, int]) -> Instance:
    """The instance at (partition, position) of the trace for ``params``, with its loop variables
    (the slow, annotated expansion; only done for what a diagnostic shows)."""
    cache = ctx.annotated_traces
    key = tuple(sorted(params.items()))
    if key not in cache:
        cache.clear()
        # no length limit: this value's traces were expanded within the budget already
        cache[key] = unroll(ctx.program, params, limit=None)
    part = ctx.program.partitions[at[0]].name
    return cache[key][part][at[1]]


#: Recent sweeps by (program, fixed params, bound, budget); a Sweep is not changed once built.
_RECENT: "OrderedDict[tuple, Sweep]" = OrderedDict()
_RECENT_MAX = 8


def sweep(ctx: PassContext) -> Sweep:
    """The context's sweep, run on first use (or taken from a recent identical one)."""
    if ctx.sweep is not None:
        return ctx.sweep
    key = (ctx.program, tuple(sorted(ctx.fixed_params.items())), ctx.bound, ctx.budget)
    try:
        hit = _RECENT.get(key)
    except TypeError:  # a program holding an unhashable value: no reuse
        key, hit = None, None
    if hit is not None:
        _RECENT.move_to_end(key)
        ctx.sweep = hit
        return hit
    sw = _run_sweep(ctx)
    if key is not None:
        _RECENT[key] = sw
        while len(_RECENT) > _RECENT_MAX:
            _RECENT.popitem(last=False)
    return sw


def _run_sweep(ctx: PassContext) -> Sweep:
    pl = plan(ctx.program, ctx.fixed_params, ctx.bound)
    sw = Sweep(pl)
    ctx.sweep = sw
    cp = compile_program(ctx.program)
    checker = Checker(cp, ctx.roles())
    budget = ctx.budget

    def run(values: list[dict[str, int]], stop_on_fault: bool) -> bool:
        """Check ``values``; False when the budget ran out."""
        first_fault: Optional[int] = None
        for n, params in enumerate(values):
            if first_fault is not None and n > first_fault + AFTER_FAULT:
                break
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            left = budget - sw.events
            if left <= 0:
                sw.exhausted = f"the verification budget of {budget} events ran out before {shown}"
                return False
            try:
                traces = cp.run(params, left)
            except TraceBudgetExceeded as e:
                sw.exhausted = (f"the verification budget of {budget} events ran out at {shown} "
                                f"(partition '{e.partition}' alone needs more than the {left} "
                                f"events left)")
                return False
            sw.events += sum(len(ids) for ids, _ in traces)
            if checker.clean(traces):
                sw.done.append(params)
                continue
            res = checker.check(traces)
            if res.problems:
                sw.faulty = True
                sw.protocol += [(params, pr) for pr in res.problems]
                first_fault = n if first_fault is None else first_fault
                if stop_on_fault:
                    return True
            elif res.deadlock is not None:
                sw.faulty = True
                if sw.deadlock is None:
                    sw.deadlock = (params, res.deadlock)
                if stop_on_fault or first_fault is None:
                    first_fault = n
                if stop_on_fault:
                    return True
            sw.done.append(params)
        return True

    if pl.probe:
        # values below the domain that prove every value of it when fault-free (cutoff.py); when
        # one of them fails, the domain's own first values are checked instead
        if run(pl.probe, stop_on_fault=True) and not sw.faulty:
            return sw
        sw.done, sw.protocol, sw.deadlock, sw.faulty, sw.exhausted = [], [], None, False, None
    if run(pl.values, stop_on_fault=False) and pl.short and not sw.faulty:
        sw.exhausted = pl.short
    return sw


__all__ = ["Sweep", "sweep"]
