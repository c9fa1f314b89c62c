"""Which param values the instance-based checks try, and why that is enough.

Pipe IR control flow depends only on loop variables and params, so for fixed param values every
partition's event trace is fixed and the protocol can be decided exactly (see verify_protocol and
verify_deadlock). Params are unbounded, so we check every value from each param's minimum up to a
bound B computed from the program's constants:

    B = min + K + 2·L + 2

where K is the largest absolute constant of any index, loop bound or condition and L is the least
common multiple of 2·capacity of every pipe, every modulus in a condition and every loop step.
Argument (docs/passes.md): the checked properties are local — a protocol mismatch pairs events of
the same stage use, and a minimal happens-before cycle visits each partition once with sync edges
that shift the iteration by at most one capacity — and beyond K the traces for N and N + L differ
only by one more period of identical steady-state iterations (stage and phase repeat with period
2·capacity, conditions with their moduli). A violation at N > B can therefore be pumped down by a
period to one at N − L, down to N ≤ B. The argument needs uniform loops (unit coefficients of params
in bounds); for other programs the result is reported as "checked up to B" rather than proved.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Iterator

from ..ir.expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from ..ir.nodes import Event, For, If, Program, Stmt

#: The most instances (param combinations) checked; with several params the bound shrinks to fit.
MAX_INSTANCES = 4096
#: Never check beyond this value of a single param (keeps traces small).
MAX_BOUND = 64


@dataclass(frozen=True)
class BoundInfo:
    bound: dict[str, int]  # highest value checked per param
    minimum: dict[str, int]
    sufficient: bool  # the pumping argument applies (else: "checked up to")
    reason: str
    instances: int

    def describe(self) -> str:
        if not self.bound:
            return "no params: the single instance was checked"
        ranges = ", ".join(f"{p} in [{self.minimum[p]}, {b}]" for p, b in self.bound.items())
        if self.sufficient:
            return f"proved for every value (checked {ranges}; bound sufficient: {self.reason})"
        return f"checked only for {ranges} ({self.reason})"


def _affines_and_mods(body: tuple[Stmt, ...], out_aff: list[Affine], mods: list[int],
                      steps: list[int], uniform: list[bool], params: set[str]) -> None:
    def cond(c: Cond) -> None:
        if isinstance(c, Compare):
            out_aff.extend([c.lhs, c.rhs])
        elif isinstance(c, ModCompare):
            out_aff.append(c.expr)
            mods.append(c.modulus)
        elif isinstance(c, BoolOp):
            for x in c.items:
                cond(x)
        elif isinstance(c, Not):
            cond(c.item)

    for s in body:
        if isinstance(s, Event):
            out_aff.append(s.index)
        elif isinstance(s, For):
            out_aff.extend([s.start, s.stop])
            steps.append(abs(s.step))
            for e in (s.start, s.stop):
                if any(abs(c) != 1 for v, c in e.terms if v in params):
                    uniform[0] = False
            _affines_and_mods(s.body, out_aff, mods, steps, uniform, params)
        elif isinstance(s, If):
            cond(s.cond)
            _affines_and_mods(s.then, out_aff, mods, steps, uniform, params)
            _affines_and_mods(s.orelse, out_aff, mods, steps, uniform, params)


def compute_bound(program: Program, requested: int | None = None) -> BoundInfo:
    params = {p.name for p in program.params}
    affs: list[Affine] = []
    mods: list[int] = []
    steps: list[int] = []
    uniform = [True]
    for part in program.partitions:
        _affines_and_mods(part.body, affs, mods, steps, uniform, params)
    k = max([abs(a.const) for a in affs] + [abs(c) for a in affs for _, c in a.terms] + [0])
    period = 1
    for x in [2 * p.capacity for p in program.pipes] + mods + steps:
        period = math.lcm(period, max(1, x))
    minimum = {p.name: p.min for p in program.params}
    if requested is not None:
        per = {p: minimum[p] + requested for p in minimum}
        sufficient, reason = False, f"bound set to {requested} by the caller"
    else:
        extra = k + 2 * period + 2
        sufficient = uniform[0]
        reason = (f"B = min + K + 2L + 2 with K={k}, L={period}" if sufficient else
                  "param coefficients other than 1 in loop bounds: the pumping argument does not apply")
        if extra > MAX_BOUND:
            extra, sufficient = MAX_BOUND, False
            reason = f"K + 2L + 2 = {k + 2 * period + 2} exceeds the cap {MAX_BOUND}"
        per = {p: minimum[p] + extra for p in minimum}
        # Several params: shrink the box until it fits the instance budget.
        while per and math.prod(b - minimum[p] + 1 for p, b in per.items()) > MAX_INSTANCES:
            per = {p: max(minimum[p], b - 1) for p, b in per.items()}
            sufficient = False
            reason = f"{len(per)} params: the grid was cut to {MAX_INSTANCES} instances"
    count = math.prod(b - minimum[p] + 1 for p, b in per.items()) if per else 1
    return BoundInfo(per, minimum, sufficient, reason, count)


def param_instances(program: Program, info: BoundInfo, fixed: dict[str, int] | None = None) -> Iterator[dict[str, int]]:
    """Every param assignment to check, smallest first (so diagnostics name the smallest case)."""
    names = [p.name for p in program.params]
    fixed = fixed or {}
    ranges = [[fixed[n]] if n in fixed else range(info.minimum[n], info.bound[n] + 1) for n in names]
    combos = list(itertools.product(*ranges))
    combos.sort(key=lambda c: (sum(c), c))
    for combo in combos:
        yield dict(zip(names, combo))
