"""Run the instance checks over the param values of a plan, within a budget, and say what it proved.

verify-protocol and verify-deadlock share one sweep per pass context: each value of the plan
(cutoff.py) is expanded once (ir/tracegen.py) and checked once (instances.py) for both the
protocol rules and deadlock-freedom. Protocol problems are reported by verify-protocol (once per
endpoint, at the smallest value that shows them), the first deadlock by verify-deadlock. The sweep
stops when the events it expanded exceed the budget (``PassContext.budget``); the verdict then is
"unknown" and names the values checked. Otherwise the verdict is the plan's claim ("proved" or
"bounded") or "rejected".

A fault at values of derived params (``M = tl.cdiv(N, 64)``, ``Program.derived``) is checked again
from base values (witness.py): it is reported with values of the kernel's arguments that give it,
or, when none of those checked does, the verdict is "bounded" over them instead of "rejected".

A sweep depends only on the program, the fixed params, the bound and the budget, so the last few
are kept by that key (programs compare as values, locations included): a process that verifies a
kernel and then lowers it (``tle-dump --ttgir``, a first launch) checks its instances once.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Optional, Sequence

from ..diagnostics import Note
from ..ir.nodes import Access
from ..ir.tracegen import TraceBudgetExceeded, compile_program
from ..ir.unroll import Instance, unroll
from .context import PassContext
from .cutoff import Plan, plan
from .exact_bases import launch_values, over_bases
from .i32_range import ON_GPU, definitions_wrap, derived_ranges, first_wrap
from .instances import Checker, Problem
from .verdict import BOUNDED, PROVED, UNKNOWN, Verdict
from .witness import base_params, search

#: Values still checked after the first one that shows a protocol fault (to find faults of other
#: endpoints; the verdict is "rejected" anyway).
AFTER_FAULT = 4


@dataclass
class Sweep:
    plan: Plan
    done: list[dict[str, int]] = field(default_factory=list)
    events: int = 0
    exhausted: Optional[str] = None  # why the budget stopped the sweep
    #: the value the budget stopped the sweep at (not checked, so not in ``done``): an i32 wrap
    #: it makes is named as well (a --param too large to expand, ``range(N)`` at N = 2^31)
    stopped_at: Optional[dict[str, int]] = None
    protocol: list[tuple[dict[str, int], Problem]] = field(default_factory=list)
    deadlock: Optional[tuple[dict[str, int], Problem]] = None
    faulty: bool = False
    #: the base values (witness.py) that give a faulty combination of derived params, by the
    #: combination's values (``_key``): the faults reported are those of these combinations
    witness: dict[tuple, dict[str, int]] = field(default_factory=dict)
    #: a fault the independent check found at derived values that no checked base value gives
    #: (its check, line and values); the verdict is then "bounded" over ``base_checked``
    unreal: str = ""
    base_checked: dict[str, str] = field(default_factory=dict)
    #: the base values (each a launch) the search checked without a fault, when ``unreal``: what
    #: the verdict then covers, so what has to stay in i32 (:meth:`_within_i32`)
    base_values: list[dict[str, int]] = field(default_factory=list)
    #: the base tuples the search set aside as no launch of its claim (witness.BaseSearch)
    base_skipped: list[dict[str, int]] = field(default_factory=list)
    #: every value of the base params' finite domains was checked without a fault (a proof)
    base_complete: bool = False
    #: what was reported with base values, by (check, file, line): {"base": ..., "derived": ...}
    reported: dict[tuple, dict] = field(default_factory=dict)
    #: the proof the Program rewritten over its base params gave (exact_bases.py), when every
    #: derived param is affine in them and the independent check's fault needs values no launch
    #: gives
    exact: Optional[Verdict] = None
    #: a fault the independent check found at values of params the kernel computes in a way the
    #: verifier does not model (Program.computed): no launch is known to give them, so the
    #: verdict is "unknown" (its check, line and values, and what the params are)
    opaque: str = ""
    #: named pipe -> the hand-offs (``PIPE.commit`` / ``PIPE.release``) found implying its
    #: releases over the instances checked (passes/named_release.py; tle-dump names them)
    named_hops: dict[str, set[str]] = field(default_factory=dict)

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
            self.note_witness(pr.check, ev.loc, params, ctx.program)
            ctx.error(ev.loc, pr.message + _when(params, inst, self.base_of(params), ctx.program),
                      pr.check, notes)

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
        shown = _values(params, self.base_of(params), ctx.program)
        self.note_witness("deadlock", first.event.loc, params, ctx.program)
        ctx.error(first.event.loc, pr.message + (f" (when {shown})" if shown else ""), "deadlock",
                  tuple(notes))

    def base_of(self, params: dict[str, int]) -> Optional[dict[str, int]]:
        """The base values a faulty combination was found from (None: no derived params)."""
        return self.witness.get(_key(params))

    def note_witness(self, check: str, loc, params: dict[str, int], program) -> None:
        base = self.base_of(params)
        if base is not None:
            derived = {d.name for d in program.derived}
            self.reported.setdefault((check, loc.file, loc.line), {
                "base": dict(base), "derived": {k: v for k, v in params.items() if k in derived}})

    def verdict(self, ctx: PassContext) -> Verdict:
        """What the checks prove; values at which an expression leaves i32 are not among the
        values a claim covers (:meth:`_within_i32`)."""
        return self._within_i32(ctx, self._verdict(ctx))

    def _within_i32(self, ctx: PassContext, v: Verdict) -> Verdict:
        """``v`` without the checked values at which a loop bound, a condition's operand, an
        index or a derived param's definition leaves i32 (i32_range.py): the GPU computes those
        in i32, where they wrap, so the check at such a value (over unbounded integers) says
        nothing of a launch with it. With any, a proof becomes "bounded", its reason naming the
        first such expression and the values that make it, and its values a box of those kept
        (safe_ranges); a claim over base values always names such a box."""
        program = ctx.program
        names = {p.name for p in program.params}
        bases = {k: x for k, x in ctx.fixed_params.items() if k not in names}
        # a verdict over base values (a fault of independent derived values no launch gives)
        # covers the launches checked: each base value, the derived params computed from it
        done = self.base_values if self.unreal else self.done
        stopped = [] if self.unreal or self.stopped_at is None else [self.stopped_at]
        hull: dict[str, tuple[int, int]] = {}
        for d in done + stopped:
            for k, x in d.items():
                lo, hi = hull.get(k, (x, x))
                hull[k] = (min(lo, x), max(hi, x))
        # over intervals first_wrap skips the derived params' definitions: base values are
        # checked one by one
        if not self.unreal and first_wrap(program, hull, bases) is None:
            return v
        wrapped: Optional[tuple[dict[str, int], str]] = None
        kept: list[dict[str, int]] = []
        # base values checked: where interval arithmetic keeps every definition's steps in i32
        # over their hull, the derived params' intervals join it and one walk covers them all
        # (one walk per value took minutes after 200,000 tuples of a search for witnesses)
        every = derived_ranges(program, {**{k: (x, x) for k, x in bases.items()}, **hull}) \
            if self.unreal and done and not stopped else None
        if every is not None and first_wrap(program, every) is None:
            kept = list(done)
        else:
            for n, d in enumerate(done + stopped or [{}]):
                why = first_wrap(program, d, bases)
                if why is None:
                    if n < len(done):
                        kept.append(d)
                elif wrapped is None:
                    wrapped = (d, why)
        # a claim over the base values checked names a box of them (safe_ranges): the hull of
        # those kept would take in values left out between them, where a step wraps
        over_bases = self.unreal and v.kind != PROVED
        if wrapped is None and not over_bases:  # the hull over-approximates: each value is inside
            return v
        if self.unreal:
            # tuples whose derived values are no launch of the claim (outside a domain, or not
            # the values fixed) may lie in the box, unless the GPU computes other derived values
            # there than the unbounded evaluation that set them aside
            checked = safe_ranges(kept, self.base_skipped,
                                  lambda d: definitions_wrap(program, {**bases, **d}) is None) \
                or {p.name: "{}" for p in base_params(program)}
            # derived values the caller fixed: the claim is about the launches that give them
            checked.update({d.name: f"{{{ctx.fixed_params[d.name]}}}" for d in program.derived
                            if d.name in ctx.fixed_params and d.name not in checked})
            scope = ", ".join(f"{k} in {r}" for k, r in checked.items())
            if wrapped is None:
                return replace(v, checked=checked, scope=scope)
        values, why = wrapped
        derived = {d.name for d in program.derived}
        head = [f"{k}={x}" for k, x in {**bases, **values}.items() if k not in derived]
        tail = [f"{k}={x}" for k, x in values.items() if k in derived]
        at = ", ".join(head) + (f" ({', '.join(tail)})" if head and tail else ", ".join(tail))
        # no params: the expression is a constant, outside i32 at every launch
        reason = (f"at {at}, " if at else "") + (why if why.endswith(ON_GPU) else (
            f"{why}, outside i32: the GPU computes it in i32, where it wraps, while the check "
            f"counts with unbounded integers"))
        if v.reason:
            reason = f"{reason}; {v.reason}"
        kind = BOUNDED if v.kind == PROVED else v.kind
        if self.unreal:
            return Verdict(kind, scope=scope, checked=checked, reason=reason, events=v.events)
        # nothing left: no value of the params given (a base's, not the params derived from it)
        empty = list(bases) + [k for k in hull if not (bases and k in derived)]
        checked = (safe_ranges(kept) if done else dict(v.checked)) or {k: "{}" for k in empty}
        return Verdict(kind, scope=v.scope, checked=checked, reason=reason, events=v.events)

    def _verdict(self, ctx: PassContext) -> Verdict:
        if self.exact is not None:
            return self.exact
        if self.opaque:
            return Verdict(UNKNOWN, scope=self.plan.scope, checked=safe_ranges(self.done),
                           reason=self.opaque, events=self.events)
        if self.unreal:
            bases = [p.name for p in base_params(ctx.program)]
            names = ", ".join(bases)
            # no checked base value gives the values the caller fixed (--param): the empty set
            checked = dict(self.base_checked) or {b: "{}" for b in bases}
            scope = ", ".join(f"{k} in {r}" for k, r in checked.items())
            if self.base_complete:
                domains = ", ".join(p.domain() for p in base_params(ctx.program))
                return Verdict(PROVED, scope=f"every value of {names} ({domains})",
                               checked=checked, events=self.events,
                               argument=f"every value of the finite domain of {names} checked, "
                                        f"the params derived from {names} computed from it")
            reason = (f"the params derived from {names} were checked as independent values, and "
                      f"the fault found ({self.unreal}) needs derived values no checked value of "
                      f"{names} gives")
            if self.exhausted is not None:
                return Verdict(UNKNOWN, scope=scope, checked=checked,
                               reason=f"{reason}; {self.exhausted}", events=self.events)
            return Verdict(BOUNDED, scope=scope, checked=checked, reason=reason,
                           events=self.events)
        # what a claim short of a proof names: a box of the values checked (a budget that ran
        # out leaves a set by magnitude, whose hull takes in values never checked)
        checked = safe_ranges(self.done)
        if self.exhausted is not None:
            return Verdict(UNKNOWN, scope=self.plan.scope, checked=checked,
                           reason=self.exhausted, events=self.events)
        if self.plan.claim == PROVED:
            return Verdict(PROVED, scope=self.plan.scope, checked=self.plan.checked(self.done),
                           argument=self.plan.argument, events=self.events)
        return Verdict(BOUNDED, scope=self.plan.scope, checked=checked, reason=self.plan.reason,
                       events=self.events)


def _lazy_product(axes: list) -> Iterator[tuple]:
    """``itertools.product(*axes)`` without making a tuple of each axis first: a face that
    fails at its first tuple costs one tuple, not the length of the box's other sides (with
    100000 values of N beside one of M, safe_ranges copied N's range at every step and took
    hours: adversarial round 58)."""
    if not axes:
        yield ()
        return
    for x in axes[0]:
        for rest in _lazy_product(axes[1:]):
            yield (x, *rest)


def safe_ranges(values: list[dict[str, int]], also: Sequence[dict[str, int]] = (),
                also_ok: Optional[Callable[[dict[str, int]], bool]] = None) -> dict[str, str]:
    """Per param, the range of a box of values every tuple of which is one of ``values`` or of
    ``also`` (tuples the claim need not cover; with ``also_ok``, only those it accepts, asked
    for the tuples the box reaches), as ``{"N": "[-8, 7]"}``: grown from the first of ``values``
    (the smallest checked) one value at a time on either side of each param while the whole new
    face lies among them. A claim over the values checked names this box, not their hull, which
    takes in values between them that were left out (one at which a step wraps in i32, or one a
    budget stopped before). {} without values."""
    if not values:
        return {}
    names = list(values[0])
    allowed = {tuple(d.get(k) for k in names) for d in values}
    spare = {tuple(d.get(k) for k in names) for d in also} - allowed
    asked: dict[tuple, bool] = {}

    def inside(t: tuple) -> bool:
        if t in allowed:
            return True
        if t not in spare:
            return False
        if t not in asked:
            asked[t] = also_ok is None or also_ok(dict(zip(names, t)))
        return asked[t]

    lo, hi = [values[0][k] for k in names], [values[0][k] for k in names]
    grew = True
    while grew:
        grew = False
        for i in range(len(names)):
            for side in (lo, hi):
                x = side[i] + (1 if side is hi else -1)
                axes = [range(lo[j], hi[j] + 1) if j != i else (x,) for j in range(len(names))]
                if all(inside(t) for t in _lazy_product(axes)):
                    side[i] = x
                    grew = True
    return {k: f"[{a}, {b}]" if a < b else f"{{{a}}}" for k, a, b in zip(names, lo, hi)}


def _key(params: dict[str, int]) -> tuple:
    return tuple(sorted(params.items()))


def _values(params: dict[str, int], base: Optional[dict[str, int]], program) -> str:
    """``M=2, N=3``; with the base values a combination of derived params came from, those values
    and the derived ones beside them: ``N=65 (M=2, N_64_64=2)``."""
    if base is None:
        return ", ".join(f"{k}={v}" for k, v in params.items())
    derived = {d.name for d in program.derived}
    head = ", ".join(f"{k}={v}" for k, v in base.items())
    shown = ", ".join(f"{k}={v}" for k, v in params.items() if k in derived)
    if shown and head and set(base) <= set(getattr(program, "unnamed", ())):
        # the bases are values no source name holds (a load inside `tl.maximum(tl.load(p), 0)`):
        # the named values first, ``n=-1 (load_p=-1)``
        return f"{shown} ({head})"
    return f"{head} ({shown})" if shown and head else head or shown


def _when(params: dict[str, int], inst: Instance, base: Optional[dict[str, int]] = None,
          program=None) -> str:
    shown = _values(params, base, program)
    context = ", ".join(([shown] if shown else []) + [f"{k}={v}" for k, v in inst.env])
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
    # (the fields a program does not compare by, which the sweep reads, beside it)
    key = (ctx.program, ctx.program.derived, ctx.program.bases,
           getattr(ctx.program, "computed", ()),
           tuple(sorted(ctx.fixed_params.items())), ctx.bound, ctx.budget)
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
    sw.named_hops = checker.named_hops  # filled as the instances are checked
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
                sw.stopped_at = params
                return False
            try:
                traces = cp.run(params, left)
            except TraceBudgetExceeded as e:
                sw.stopped_at = params
                sw.exhausted = (f"the verification budget of {budget} events ran out at "
                                f"{shown or 'its single instance'} (partition '{e.partition}' "
                                f"alone needs more than the {left} events or loop iterations "
                                f"left)")
                return False
            sw.events += cp.work  # events, or loop iterations where those are more
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
        sw.stopped_at = None
    if run(pl.values, stop_on_fault=False) and pl.short and not sw.faulty:
        sw.exhausted = pl.short
    if sw.faulty and _computed_fault(ctx, sw, cp, checker):
        return sw
    if sw.faulty and ctx.program.derived:
        _from_bases(ctx, sw, cp, checker)
        if sw.unreal and not sw.base_complete:
            _over_bases(ctx, sw)
    return sw


def _branch_values(values, params: dict[str, int]) -> set[int]:
    """The values a computed param's branches (``(value, guard)`` pairs of Program.computed)
    give at ``params``: each whose guard holds there (None: a branch on data, taken at some
    launch) and which ``params`` determine."""
    return {v.eval(params) for v, g in values if v.variables <= params.keys()
            and (g is None or g.variables <= params.keys() and g.eval(params) is True)}


def _launches(params: dict[str, int], computed: dict) -> Iterator[dict[str, int]]:
    """``params`` with each computed param (Program.computed) set to each value its branches
    give there: the combinations a launch gives (none where a param's values are not known)."""
    choices: list[list[tuple[str, int]]] = []
    for k, (_, values) in computed.items():
        if values is None or k not in params:
            return
        got = sorted(_branch_values(values, params))
        if not got:
            return
        choices.append([(k, x) for x in got])
    for picked in _lazy_product(choices):
        yield {**params, **dict(picked)}


def _computed_fault(ctx: PassContext, sw: Sweep, cp=None, checker=None) -> bool:
    """Whether the faults found are at values of params the kernel computes from its arguments
    in a way the verifier does not model (Program.computed: ``C = tl.where(N % 64 == 0, N // 64,
    N // 64 + 1)``, checked as any integer): a launch gives C one value of N, perhaps never the
    one of the fault (the ring above is correct, and was rejected `when C=1, N=0`). Such a fault
    is dropped, unless each such param holds there one of the values a branch on data gives it
    (``M = N; if tl.load(p) > 0: M = N + 1`` at M = N + 1: a launch whose memory holds 1); with
    none left the verdict is "unknown", its reason naming the fault and the params."""
    program = ctx.program
    names = {p.name for p in program.params} | {b.name for b in program.bases}
    computed = {k: (line, values) for k, line, values in getattr(program, "computed", ())
                if k in names}
    if not computed:
        return False

    def launched(params: dict[str, int]) -> bool:
        # each computed value one of the values its branches give there (a branch on data or
        # the program id: some launch takes each); derived params: their witnesses need bases
        if program.derived:
            return False
        return all(values is not None and k in params
                   and params[k] in _branch_values(values, params)
                   for k, (_, values) in computed.items())

    protocol = [(params, pr) for params, pr in sw.protocol if launched(params)]
    deadlock = sw.deadlock if sw.deadlock is not None and launched(sw.deadlock[0]) else None
    if not protocol and deadlock is None and cp is not None and not program.derived:
        # none is a launch's: check the faulty combinations again with each computed param set
        # to a value its branches give there (`C = P if P > 4 else 4` at P = 0: C = 4)
        faulty = [params for params, _ in sw.protocol] + (
            [sw.deadlock[0]] if sw.deadlock is not None else [])
        tried: set = set()
        domains = {p.name: p for p in program.params}
        for params in faulty:
            for launch in _launches(params, computed):
                key = _key(launch)
                if key in tried or len(tried) >= AFTER_FAULT * 4 or any(
                        k in domains and not domains[k].contains(v)
                        or launch[k] != ctx.fixed_params.get(k, v) for k, v in launch.items()):
                    continue  # outside a domain, or not the value --param fixed
                tried.add(key)
                try:
                    traces = cp.run(launch, max(0, ctx.budget - sw.events))
                except TraceBudgetExceeded:
                    continue
                sw.events += cp.work
                if checker.clean(traces):
                    continue
                res = checker.check(traces)
                protocol += [(launch, pr) for pr in res.problems]
                if deadlock is None and res.deadlock is not None:
                    deadlock = (launch, res.deadlock)
            if protocol or deadlock is not None:
                break
    if protocol or deadlock is not None:
        sw.protocol, sw.deadlock = protocol, deadlock
        return True
    params, pr = sw.protocol[0] if sw.protocol else sw.deadlock
    line = _instances(ctx, params, pr.at).event.loc.line
    which = ", ".join(f"{k} (line {n})" for k, (n, _) in computed.items())
    sw.opaque = (f"the fault found ({pr.check} at line {line} when "
                 f"{_values(params, None, program)}) is at values of {which}, which the kernel "
                 f"computes in a way the verifier does not model (checked as any integer, where "
                 f"a launch gives one value of its arguments and memory): no launch is known to "
                 f"give them")
    sw.protocol, sw.deadlock, sw.faulty = [], None, False
    return True


def _from_bases(ctx: PassContext, sw: Sweep, cp, checker: Checker) -> None:
    """The sweep found faults at values of independent derived params: keep those that base
    values give (witness.py), reported with them; when none does, no fault stands and the
    verdict is bounded over the base values checked."""
    faulty = [params for params, _ in sw.protocol] + ([sw.deadlock[0]] if sw.deadlock else [])
    found = search(ctx.program, cp, checker, ctx.fixed_params, ctx.bound,
                   max(0, ctx.budget - sw.events), faulty, AFTER_FAULT)
    sw.events += found.events
    if found.faults:
        protocol: list[tuple[dict[str, int], Problem]] = []
        deadlock = None
        for base, params, res in found.faults:
            sw.witness.setdefault(_key(params), base)
            if res.problems:
                protocol += [(params, pr) for pr in res.problems]
            elif deadlock is None:
                deadlock = (params, res.deadlock)
        sw.protocol, sw.deadlock = protocol, deadlock
        return
    params, pr = sw.protocol[0] if sw.protocol else sw.deadlock
    line = _instances(ctx, params, pr.at).event.loc.line
    sw.unreal = f"{pr.check} at line {line} when {_values(params, None, ctx.program)}"
    sw.protocol, sw.deadlock, sw.faulty = [], None, False
    sw.base_checked = found.checked_ranges()
    keys = list(found.checked)  # one value per base param appended for each tuple checked
    sw.base_values = [dict(zip(keys, t)) for t in zip(*found.checked.values())]
    # tuples not checked because the GPU computes other derived values from them: each wraps
    # (i32_range.first_wrap), so _within_i32 keeps them out of the claim and names the first
    sw.base_values += found.elsewhere
    sw.base_complete = found.complete
    sw.base_skipped = found.skipped
    sw.exhausted = found.stopped or None  # what stopped the independent check matters no more


def _over_bases(ctx: PassContext, sw: Sweep) -> None:
    """The independent check's faults need combinations no launch gives and the search from base
    values found none: when every derived param is affine in the bases (a program count is its
    program id plus one plus the programs after it), check the Program rewritten over the bases
    (exact_bases.py), whose params are independent with exactly the launches as values. A proof
    there is one for every launch; a fault there is one a launch gives, reported with its base
    values and the derived ones beside them. Anything else leaves the bounded verdict as it is."""
    program = ctx.program
    exact = over_bases(program)
    if exact is None:
        return
    fixed = ctx.fixed_params
    for d in program.derived:
        if d.name in fixed and not d.definition.variables <= fixed.keys():
            return  # a derived value given on its own: the caller checks that value, not launches
    names = {p.name for p in exact.params}
    sub = PassContext(exact, bound=ctx.bound, budget=max(0, ctx.budget - sw.events),
                      fixed_params={k: v for k, v in fixed.items() if k in names})
    found = _run_sweep(sub)
    sw.events += found.events
    if found.faulty:
        protocol: list[tuple[dict[str, int], Problem]] = []
        for params, pr in found.protocol:
            launch = _launch(program, params, sw)
            if launch is not None:
                protocol.append((launch, pr))
        deadlock = None
        if found.deadlock is not None:
            launch = _launch(program, found.deadlock[0], sw)
            if launch is not None:
                deadlock = (launch, found.deadlock[1])
        if protocol or deadlock is not None:
            sw.protocol, sw.deadlock, sw.faulty = protocol, deadlock, True
            sw.unreal, sw.exhausted = "", None
        return
    v = found.verdict(sub)
    if v.kind != PROVED:
        return
    how = "; ".join(str(d) for d in program.derived)
    sw.exact = replace(v, events=sw.events, argument=(
        f"{v.argument}; checked over {', '.join(sorted(names)) or 'no params'}, "
        f"from which {how}" if v.argument else f"checked over the base params ({how})"))
    sw.unreal, sw.exhausted = "", None


def _launch(program, values: dict[str, int], sw: Sweep) -> Optional[dict[str, int]]:
    """The original Program's params at the rewritten one's values, noted as a witness."""
    launch = launch_values(program, values)
    if launch is None:
        return None
    base = {p.name: values.get(p.name) for p in base_params(program)}
    sw.witness.setdefault(_key(launch), {k: v for k, v in base.items() if v is not None}
                          or dict(values))
    return launch


__all__ = ["Sweep", "sweep"]
