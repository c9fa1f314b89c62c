"""Which param values the instance checks try, and what checking them proves.

A protocol is checked exactly for each param value it expands (passes/instances.py). Params are
unbounded, so a claim about *every* value needs an argument for the values not checked. The
argument here is the cutoff theorem of docs/semantics.md ("For every value: the cutoff theorem"):
for programs in its fragment (one free param N; each partition at most one loop over N, of the form
``range(s, N + c)`` at its top level; every other loop of constant trip count; conditions that
compare the loop variable with constants, or with N at unit distance, or take remainders; every
index of a pipe advancing with one slope a_P in that loop variable or in N), the verdict for
N >= N0 + L follows from the verdicts for N0 <= N < N0 + 2L, and for very negative N from a few
values below zero. :func:`plan` checks that fragment syntactically (reporting the first construct
outside it, with its line), computes N0 and L from the program's constants, and returns the
values to check and the claim their checking supports: "proved" inside the fragment, "bounded"
outside it (every value up to a default bound is checked, and the verdict says which). A finite
domain (``tle.assume(0 <= N <= 64)``, ``param N <= 64``), no free param, or params fixed by the
caller (``--param``) need no theorem: every value is checked.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..ir.expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from ..ir.nodes import Access, Event, For, If, Loc, Program, Stmt
from ..ir.record import record

#: Values checked on each side of zero when the cutoff theorem does not apply.
DEFAULT_BOUND = 64
#: The most param combinations checked with several free params.
MAX_INSTANCES = 4096
#: The most value combinations of params of finite domains a plan checks the others at, one by one
#: (a flag FLAG in [0, 1] beside N: N proved by the cutoff theorem at FLAG = 0 and at FLAG = 1).
MAX_SPLIT = 16
#: The most values of one param a plan lists. A program whose theorem needs more (a huge capacity,
#: index offset or domain makes N0 or L huge) is planned with the values of smallest magnitude
#: only, and its verdict is "unknown" when they are fault-free (``Plan.short``): listing them all
#: exhausted the memory before a single one was checked.
MAX_PLANNED = 100_000


@record
class Outside:
    """Why a program is outside the theorem's fragment: the construct and its line."""

    reason: str
    loc: Optional[Loc] = None

    def __str__(self) -> str:
        return self.reason + (f" (line {self.loc.line})" if self.loc and self.loc.line else "")


@dataclass
class Fragment:
    """The constants of the cutoff theorem for one program (docs/semantics.md)."""

    param: str
    L: int = 1  # the period: every modulus, and 2C/gcd(a, 2C) per sloped pipe, divide it
    R: int = 0  # the largest |constant part| of a comparison atom
    slopes: dict[str, int] = field(default_factory=dict)  # pipe -> a_P
    D: dict[str, int] = field(default_factory=dict)  # pipe -> largest |constant part| of an index
    starts: list[int] = field(default_factory=list)  # s of each N-loop range(s, N + c)
    ends: list[int] = field(default_factory=list)  # c of each N-loop
    partitions: int = 1
    capacities: dict[str, int] = field(default_factory=dict)

    @property
    def lag(self) -> int:
        """Λ: how many loop iterations apart two events joined by a hand-off (a commit and its wait,
        a release and the next acquire of the stage) can be in the steady state."""
        return max([self.L + -(-2 * self.D[p] // a) + 1 for p, a in self.slopes.items()] or [0])

    @property
    def spread(self) -> int:
        """E2: how far (in iterations) an index's events can sit apart from each other."""
        return max([-(-2 * self.D[p] // a) for p, a in self.slopes.items()] or [0])

    @property
    def n0(self) -> int:
        T = self.R + 1
        lam = self.lag
        s_max = max([abs(s) for s in self.starts] or [0])
        c_max = max([abs(c) for c in self.ends] or [0])
        z_start = s_max + T + self.spread + lam
        z_end = c_max + T + self.spread + lam
        middle = self.partitions * (lam + self.L) + 3 * lam + self.L
        return max(T, z_start + z_end + middle + s_max + c_max)

    @property
    def n0_negative(self) -> int:
        """Below -N0' every loop over N is empty, every threshold on N is settled, and every index
        that depends on N is negative."""
        s_max = max([abs(s) for s in self.starts] or [0])
        c_max = max([abs(c) for c in self.ends] or [0])
        d_max = max(self.D.values() or [0])
        return max(s_max + c_max, self.R + 1, d_max) + 1

    def describe(self) -> str:
        return (f"cutoff theorem, docs/semantics.md: N0 = {self.n0}, L = {self.L}, "
                f"lag {self.lag}")


# ----------------------------------------------------------------------------------------------
# the fragment, checked on the syntax


def _interval(e: Affine, ranges: dict[str, tuple[int, int]], skip: frozenset) -> tuple[int, int]:
    """Bounds of ``e`` without the terms in ``skip``, over the loop-variable ranges."""
    lo = hi = e.const
    for v, c in e.terms:
        if v in skip:
            continue
        a, b = ranges[v]
        lo += min(c * a, c * b)
        hi += max(c * a, c * b)
    return lo, hi


def _atoms(c: Cond) -> Iterator[Cond]:
    if isinstance(c, BoolOp):
        for i in c.items:
            yield from _atoms(i)
    elif isinstance(c, Not):
        yield from _atoms(c.item)
    else:
        yield c


class _Classifier:
    def __init__(self, program: Program, n: str, fixed: dict[str, int]):
        self.program = program
        self.n = n
        self.fixed = {k: Affine(v) for k, v in fixed.items()}
        self.frag = Fragment(n, partitions=len(program.partitions),
                             capacities={p.name: p.capacity for p in program.pipes})
        self.moduli: list[int] = []
        self.slope_loc: dict[str, Loc] = {}

    def run(self) -> Optional[Outside]:
        for part in self.program.partitions:
            self.nloop_seen: Optional[For] = None
            why = self.body(part.body, {}, None, 0)
            if why is not None:
                return why
        frag = self.frag
        period = 1
        for m in self.moduli:
            period = math.lcm(period, m)
        for p, a in frag.slopes.items():
            two_c = 2 * frag.capacities[p]
            period = math.lcm(period, two_c // math.gcd(a, two_c))
        frag.L = period
        for p in frag.slopes:
            frag.D.setdefault(p, 0)
        return None

    def sub(self, e: Affine) -> Affine:
        return e.substitute(self.fixed) if self.fixed else e

    def body(self, body: tuple[Stmt, ...], ranges: dict[str, tuple[int, int]],
             v: Optional[str], depth: int) -> Optional[Outside]:
        n = self.n
        for s in body:
            if isinstance(s, (Event, Access)):
                why = self.index(s, self.sub(s.index), ranges, v)
                if why is not None:
                    return why
            elif isinstance(s, For):
                start, stop = self.sub(s.start), self.sub(s.stop)
                names = start.variables | stop.variables
                if n in names or (v is not None and v in names):
                    if depth or v is not None:
                        what = "N" if n in names else f"the loop variable {v} of the loop over {n}"
                        return Outside(f"the bounds of the loop over {s.var} depend on {what}, "
                                       f"inside another loop (nested or triangular loops)", s.loc)
                    if self.nloop_seen is not None:
                        return Outside(f"a second loop over {n} in one partition (the first at "
                                       f"line {self.nloop_seen.loc.line})", s.loc)
                    if not (start.is_const and stop.terms == ((n, 1),) and s.step == 1):
                        return Outside(f"the loop over {s.var} is not range(s, {n} + c) with "
                                       f"constant s, c and step 1", s.loc)
                    self.nloop_seen = s
                    self.frag.starts.append(start.const)
                    self.frag.ends.append(stop.const)
                    why = self.body(s.body, ranges, s.var, depth + 1)
                else:
                    a = _interval(start, ranges, frozenset())
                    b = _interval(stop, ranges, frozenset())
                    if s.step > 0:
                        lo, hi = a[0], b[1] - 1
                    else:
                        lo, hi = b[0] + 1, a[1]
                    if lo > hi:
                        continue  # never runs
                    why = self.body(s.body, {**ranges, s.var: (lo, hi)}, v, depth + 1)
                if why is not None:
                    return why
            elif isinstance(s, If):
                for atom in _atoms(s.cond):
                    why = self.atom(atom, ranges, v, s.loc)
                    if why is not None:
                        return why
                for branch in (s.then, s.orelse):
                    why = self.body(branch, ranges, v, depth)
                    if why is not None:
                        return why
        return None

    def atom(self, atom: Cond, ranges, v: Optional[str], loc: Loc) -> Optional[Outside]:
        if isinstance(atom, ModCompare):
            self.moduli.append(atom.modulus)
            if not atom.c:
                return None  # Python's modulo is periodic on both sides of zero
            # C's remainder is periodic only where the sign of its operand is settled: treat the
            # operand like a comparison with zero
            e = self.sub(atom.expr)
        else:
            e = self.sub(atom.lhs - atom.rhs)
        alpha = e.coef(v) if v is not None else 0
        beta = e.coef(self.n)
        if alpha and beta and (alpha, beta) not in ((1, -1), (-1, 1)):
            return Outside(f"the condition `{atom}` compares the loop variable with {self.n} at "
                           f"slopes other than 1 (its truth can flip in the middle of the loop)",
                           loc)
        if alpha or beta:  # a threshold on the loop variable or on N: settled beyond |rest| + 1
            lo, hi = _interval(e, ranges, frozenset(x for x in (v, self.n) if x))
            self.frag.R = max(self.frag.R, abs(lo), abs(hi))
        return None

    def index(self, s, e: Affine, ranges, v: Optional[str]) -> Optional[Outside]:
        n = self.n
        what = f"{s.pipe}.{s.verb}({s.index})"
        if v is not None:
            if e.coef(n):
                return Outside(f"the index of {what} uses {n} inside the loop over {n}", s.loc)
            a = e.coef(v)  # 0: the same slot every iteration (Q read in every K tile)
            if a < 0:
                return Outside(f"the index of {what} falls as the loop over {n} advances", s.loc)
        else:
            a = e.coef(n)
            if a < 0:
                return Outside(f"the index of {what} falls as {n} grows", s.loc)
        if a:
            prev = self.frag.slopes.setdefault(s.pipe, a)
            self.slope_loc.setdefault(s.pipe, s.loc)
            if prev != a:
                return Outside(f"the indices of pipe '{s.pipe}' advance at two rates ({prev} at "
                               f"line {self.slope_loc[s.pipe].line}, {a} in {what})", s.loc)
        lo, hi = _interval(e, ranges, frozenset(x for x in (v, n) if x))
        self.frag.D[s.pipe] = max(self.frag.D.get(s.pipe, 0), abs(lo), abs(hi))
        return None


def classify(program: Program, n: str, fixed: dict[str, int]) -> tuple[Optional[Fragment],
                                                                        Optional[Outside]]:
    c = _Classifier(program, n, fixed)
    why = c.run()
    return (None, why) if why is not None else (c.frag, None)


# ----------------------------------------------------------------------------------------------
# the plan


@dataclass
class Plan:
    """The values to check (``values``, smallest magnitude first) and what checking all of them
    without a fault proves: ``claim`` "proved" (for ``scope``, by ``argument``) or "bounded"
    (``reason`` says why no more is claimed). ``fallback``: for a domain whose least value lies
    beyond the theorem's range, values checked first (below the domain) that prove it cheaply;
    when one of them fails, ``values`` are checked instead."""

    values: list[dict[str, int]]
    claim: str
    scope: str
    argument: str = ""
    reason: str = ""
    fragment: Optional[Fragment] = None
    probe: list[dict[str, int]] = field(default_factory=list)
    #: why ``values`` stop short of what the claim needs (too many to list): the sweep's verdict
    #: is then "unknown" unless it finds a fault
    short: str = ""

    def checked(self, done: list[dict[str, int]]) -> dict[str, str]:
        out: dict[str, list[int]] = {}
        for d in done:
            for k, v in d.items():
                out.setdefault(k, []).append(v)
        return {k: (f"[{min(vs)}, {max(vs)}]" if len(set(vs)) > 1 else f"{{{vs[0]}}}")
                for k, vs in out.items()}


def _order(values: Iterator[int]) -> list[int]:
    return sorted(set(values), key=lambda x: (abs(x), x < 0))


def _size(r: range) -> int:
    """len(r) of a step-1 range, for ranges longer than len() takes."""
    return max(0, r.stop - r.start)


def _nearest(r: range, count: int) -> list[int]:
    """The ``count`` values of the step-1 range ``r`` of smallest magnitude, in ``_order``'s
    order, without listing ``r`` (it may hold more values than memory does)."""
    if _size(r) <= count:
        return _order(r)
    if r.start >= 0:
        return list(range(r.start, r.start + count))
    if r.stop <= 1:
        return list(range(r.stop - 1, r.stop - 1 - count, -1))
    return _order(range(max(r.start, -count), min(r.stop, count + 1)))[:count]


def _too_many(r: range, what: str) -> str:
    return (f"the {what} needs {_size(r)} values, more than the {MAX_PLANNED} a check lists; only "
            f"the {MAX_PLANNED} of smallest magnitude were planned")


def _domain_range(lo: Optional[int], hi: Optional[int], a: int, b: int) -> range:
    """[a, b] cut to the domain [lo, hi]."""
    a = a if lo is None else max(a, lo)
    b = b if hi is None else min(b, hi)
    return range(a, b + 1)


def _fixed_text(program: Program, fixed: dict[str, int]) -> str:
    """The values fixed, as a scope names them: ``NK = 2``; with base params given, those and the
    derived params they determine beside them: ``N = 4 (M = 2)``."""
    params = {p.name for p in program.params}
    derived = {d.name for d in program.derived}
    bases = {b.name for b in program.bases}
    head = [f"{k} = {v}" for k, v in fixed.items()
            if (k in params or k in bases) and k not in derived]
    tail = [f"{k} = {v}" for k, v in fixed.items() if k in params and k in derived]
    if head and tail:
        return f"{', '.join(head)} ({', '.join(tail)})"
    return ", ".join(head or tail)


def _mentioned(program: Program) -> set[str]:
    """The variables the partitions' indices, loop bounds and conditions mention."""
    out: set[str] = set()

    def walk(body) -> None:
        for s in body:
            if isinstance(s, (Event, Access)):
                out.update(s.index.variables)
            elif isinstance(s, For):
                out.update(s.start.variables | s.stop.variables)
                walk(s.body)
            else:
                out.update(s.cond.variables)
                walk(s.then)
                walk(s.orelse)

    for part in program.partitions:
        walk(part.body)
    return out


def plan(program: Program, fixed: Optional[dict[str, int]] = None,
         bound: Optional[int] = None) -> Plan:
    """What to check for ``program`` with ``fixed`` params given (``--param``) and the caller's
    ``bound`` (``--bound``: no value beyond it in magnitude is checked)."""
    fixed = dict(fixed or {})
    params = {p.name: p for p in program.params}
    given = {k: v for k, v in fixed.items() if k in params}
    fixed_text = _fixed_text(program, fixed)
    # a derived param no event, bound or condition mentions (a value only a tle.assume bounds,
    # kept for the launches its domain excludes: the search for witnesses, witness.py) changes
    # no trace: one value of its domain stands for all, and it is no free param
    mentioned = _mentioned(program)
    for d in program.derived:
        q = params.get(d.name)
        if q is not None and q.name not in given and q.name not in mentioned:
            given[q.name] = 0 if q.contains(0) else (q.min if q.min is not None and q.min > 0
                                                      else q.max)
    free = [p for p in program.params if p.name not in given]
    if not free:
        scope = fixed_text or "its single instance (no params)"
        return Plan([dict(given)], "proved", scope,
                    argument="the values given, checked" if fixed_text else "checked exactly")

    def with_fixed(d: dict[str, int]) -> dict[str, int]:
        return {p.name: d.get(p.name, given.get(p.name)) for p in program.params}

    suffix = f", {fixed_text}" if fixed_text else ""
    if len(free) > 1:
        split = _split_finite(program, free, fixed, bound, suffix)
        if split is not None:
            return split
        names = [p.name for p in free]
        b = DEFAULT_BOUND if bound is None else bound
        def combos_within(b: int) -> int:
            return math.prod(_size(_domain_range(p.min, p.max, -b, b)) for p in free)

        if combos_within(b) > MAX_INSTANCES:
            # the largest b within the limit (a binary search: --bound may be huge)
            lo_b, hi_b = 0, b
            while lo_b < hi_b:
                mid = (lo_b + hi_b + 1) // 2
                lo_b, hi_b = (mid, hi_b) if combos_within(mid) <= MAX_INSTANCES else (lo_b, mid - 1)
            b = lo_b
        ranges = [_order(_domain_range(p.min, p.max, -b, b)) for p in free]
        combos = sorted(itertools.product(*ranges), key=lambda c: (sum(map(abs, c)), c))
        values = [with_fixed(dict(zip(names, c))) for c in combos]
        return Plan(values, "bounded", f"{', '.join(names)} within {b} of zero{suffix}",
                    reason=f"{len(free)} free params: the cutoff theorem covers one (fix the others "
                           f"with --param to prove it for every value of the last)")

    p = free[0]
    n = p.name
    frag, outside = classify(program, n, given)
    if p.min is not None and p.max is not None:
        dom = range(p.min, p.max + 1)
        if bound is not None:
            dom = range(max(p.min, -bound), min(p.max, bound) + 1)
        if bound is None and frag is not None:
            # inside the theorem's fragment a finite domain needs only the values the theorem
            # names, cut to the domain (a fault at N >= N0 + L implies one at N - L, inside the
            # domain too): fewer than every value of a large domain, which no budget covers
            by_theorem = _cutoff_plan(p, frag, None, suffix, with_fixed)
            if (not by_theorem.short
                    and len(by_theorem.values) + len(by_theorem.probe) < _size(dom)):
                return by_theorem
        short = _too_many(dom, f"domain {p.domain()}") if _size(dom) > MAX_PLANNED else ""
        values = [with_fixed({n: v}) for v in _nearest(dom, MAX_PLANNED)]
        if bound is None or _size(dom) == p.max - p.min + 1:
            return Plan(values, "proved", f"every value of {n} ({p.domain()}){suffix}",
                        argument="every value of the finite domain checked", short=short)
        return Plan(values, "bounded", f"{n} within {bound} of zero{suffix}",
                    reason=f"--bound {bound} cuts the domain {p.domain()}")

    if frag is None:
        b = DEFAULT_BOUND if bound is None else bound
        # every value within b of zero, or the domain's first b + 1 values when it starts further
        # out (a bound of its own, not a proof)
        lo = -b if p.min is None else (p.min if abs(p.min) > b else -b)
        span = _domain_range(p.min, p.max, lo, lo + 2 * b if p.min is not None and abs(p.min) > b
                             else b)
        values = [with_fixed({n: v}) for v in _nearest(span, MAX_PLANNED)]
        return Plan(values, "bounded", f"{n} in [{values and min(d[n] for d in values)}, "
                    f"{values and max(d[n] for d in values)}]{suffix}",
                    reason=f"outside the fragment of the cutoff theorem: {outside}",
                    short=_too_many(span, "bound") if len(span) > MAX_PLANNED else "")
    return _cutoff_plan(p, frag, bound, suffix, with_fixed)


def _split_finite(program: Program, free: list, fixed: dict[str, int], bound: Optional[int],
                  suffix: str) -> Optional[Plan]:
    """Several free params, each but at most one of a small finite domain (a flag the kernel
    assumes 0 or 1: ``tle.assume(0 <= FLAG <= 1)``): for each combination of their
    values, the plan of the program with them fixed (the cutoff theorem for the last param, or
    its own finite domain). When every one of those plans proves its scope, checking all their
    values proves every combination: one plan of them all. None otherwise (a plan only bounded,
    with fallback values below its domain, or too long), and the caller bounds every param."""
    small = [p for p in free if p.min is not None and p.max is not None
             and p.max - p.min + 1 <= MAX_SPLIT]
    rest = [p for p in free if p not in small]
    if len(rest) > 1 or math.prod(p.max - p.min + 1 for p in small) > MAX_SPLIT:
        return None
    every = not rest
    if every:  # the last of them is planned over its own finite domain
        rest, small = small[-1:], small[:-1]
    values: list[dict[str, int]] = []
    arguments: list[str] = []
    for combo in itertools.product(*(range(p.min, p.max + 1) for p in small)):
        sub = plan(program, {**fixed, **{p.name: v for p, v in zip(small, combo)}}, bound)
        if sub.claim != "proved" or sub.probe or sub.short:
            return None
        values += sub.values
        if sub.argument not in arguments:
            arguments.append(sub.argument)
    # smallest magnitude first over all of them, as a plan of one param lists its values
    values.sort(key=lambda d: (sum(abs(d[p.name]) for p in free), [abs(d[p.name]) for p in free]))
    p = rest[0]
    if every:
        shown = [f"{q.name} ({q.domain()})" for q in free]
        return Plan(values, "proved", f"every combination of {', '.join(shown[:-1])} and "
                    f"{shown[-1]}{suffix}", argument="every value of the finite domains checked")
    flags = ", ".join(q.domain() for q in small)
    return Plan(values, "proved", f"every value of {p.name} ({p.domain()}) at each value of "
                f"{' and '.join(q.name for q in small)} ({flags}){suffix}",
                argument="; ".join(arguments) + f", at each value of "
                         f"{', '.join(q.name for q in small)}")


def _cutoff_plan(p, frag: Fragment, bound: Optional[int], suffix: str, with_fixed) -> Plan:
    """The values that prove every value of the one free param ``p`` by the cutoff theorem
    (``frag``: the program's fragment for p), cut to p's domain; ``suffix`` names the values
    fixed beside p, ``with_fixed`` completes a value of p with them; ``bound`` (--bound) makes
    the plan "bounded" where it stops short of the theorem's values."""
    n = p.name
    n0, L = frag.n0, frag.L
    lo = p.min
    top = max(lo if lo is not None else n0, n0) + 2 * L - 1
    # a whole period at or below -N0' - 1 (and below the domain's top): below it, a fault at N
    # implies one at N + L (docs/semantics.md, step 6), inside the domain too, so a domain whose
    # least value lies further down (`NT = L >> 1`: NT >= -2^30) needs no more values than an
    # unbounded one
    w = -frag.n0_negative - 1 if p.max is None else min(p.max, -frag.n0_negative - 1)
    bottom = w - L + 1 if lo is None else max(lo, w - L + 1)
    cand = _domain_range(lo, p.max, bottom, top)
    probe_range = range(0)
    if lo is not None and lo > n0 + 2 * L:
        # the least value lies beyond the theorem's range: N0 <= N < N0 + 2L (below the domain)
        # already prove every N >= N0; the domain's own first values are the fallback
        probe_range = range(n0, n0 + 2 * L)
        cand = _domain_range(lo, p.max, lo, lo + 2 * L - 1)
    scope = f"every value of {n} ({p.domain()}){suffix}"
    if bound is not None:
        kept = range(max(cand.start, -bound), min(cand.stop, bound + 1))
        if _size(kept) < _size(cand) or (probe_range and max(abs(probe_range.start),
                                                         abs(probe_range[-1])) > bound):
            return Plan([with_fixed({n: v}) for v in _nearest(kept, MAX_PLANNED)], "bounded",
                        f"{n} within {bound} of zero{suffix}",
                        reason=f"--bound {bound} stops short of the values the cutoff theorem "
                               f"needs ({frag.describe()})", fragment=frag)
    if _size(cand) > MAX_PLANNED or _size(probe_range) > MAX_PLANNED:
        # too many to list: the values nearest zero (the domain's first ones) are checked, which
        # finds small faults; a fault-free run of them proves nothing for every value
        big = cand if _size(cand) > MAX_PLANNED else probe_range
        return Plan([with_fixed({n: v}) for v in _nearest(cand, MAX_PLANNED)], "proved", scope,
                    argument=frag.describe(), fragment=frag,
                    short=_too_many(big, f"cutoff theorem ({frag.describe()})"))
    values = [with_fixed({n: v}) for v in _order(cand)]
    probe = [with_fixed({n: v}) for v in probe_range]
    if probe_range:
        values = [with_fixed({n: v}) for v in cand]
    return Plan(values, "proved", scope, argument=frag.describe(), fragment=frag, probe=probe)
