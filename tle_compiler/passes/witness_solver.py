"""Base values that give a faulty combination of derived params, found by a solver.

The search for witnesses (witness.py) enumerates base values smallest first. A fault the
independent check found may need base values far beyond what that enumeration reaches: a
persistent kernel's per-program tile count ``my_tiles = cdiv(cdiv(M, 128) * cdiv(N, 128) - pid,
num_programs)`` is 2 only for ``M`` above 128, past tens of thousands of smaller tuples. This
module asks z3 for base values whose definitions give exactly the faulty combination (each of
the Program's params equal to its value there), inside the base params' domains, every value on
the way inside i32. A model
is only a candidate: the search derives the params from it again (``derive``, and as the GPU
computes them, ``derive_on_gpu``: a candidate where they differ is dropped) and checks that
combination like any other, so the solver can make the search find a fault sooner but never
makes it report one that is not there. Definitions the solver does not model (shifts, bitwise
operations, powers, ``next_power_of_2``) give no candidate.
"""

from __future__ import annotations

import time
from typing import Mapping, Optional, Sequence

from ..ir.derived import WIDEN, Definition
from ..ir.expr import Affine
from ..ir.i32 import I32_MAX, I32_MIN
from ..ir.nodes import Param, Program

#: How long one solver query may take (milliseconds); a first query that times out gives no
#: candidate, a later one keeps the smallest model found.
TIMEOUT_MS = 1000
#: How long the solver may take over one search for witnesses, every query of every target
#: together (seconds): a query past it is not asked, a shrinking stops with the best model found
#: (a tle-dump of a kernel whose targets are hard, `(N * M) % 65521`, stays within seconds).
TOTAL_S = 3.0
#: How many times a model is asked for again with a bound on the sum of the base values'
#: magnitudes, bisected (a witness a reader can follow: ``M = 129`` rather than ``M = 1900000``).
SHRINK_ROUNDS = 12


class _Unmodelled(Exception):
    """A definition uses an operation the solver does not model."""


def _c_div(z3, a, b):
    """C's truncating quotient of z3 integers (z3's ``/`` is Euclidean)."""
    q = z3.If(a >= 0, z3.Abs(a) / z3.Abs(b), -(z3.Abs(a) / z3.Abs(b)))
    return z3.If(b > 0, q, -q)


def _c_rem(z3, a, b):
    r = z3.Abs(a) % z3.Abs(b)
    return z3.If(a >= 0, r, -r)


def _floor_div(z3, a, b):
    """Python's floor quotient from z3's Euclidean one (``a = b*q + r`` with ``0 <= r < |b|``):
    the same for ``b > 0``; for ``b < 0`` the Euclidean quotient is the ceiling of ``a / b``,
    one above the floor where the division is inexact (``7 // -2`` is -4, Euclid's -3)."""
    q = a / b
    return z3.If(z3.And(b < 0, a % b != 0), q - 1, q)


def _floor_rem(z3, a, b):
    return a - b * _floor_div(z3, a, b)


def _term(z3, a, env, side):
    if isinstance(a, Affine):
        out = z3.IntVal(a.const)
        for name, coef in a.terms:
            out = out + coef * env[name]
        side.append(z3.And(out >= I32_MIN, out <= I32_MAX))
        return out
    return _expr(z3, a, env, side)


def _expr(z3, d: Definition, env, side: list):
    """``d`` as a z3 integer expression over ``env``; ``side`` gathers the conditions under which
    it is defined (divisors not zero) and under which the GPU computes it as the integers do
    (every operand and result inside i32)."""
    out = _value(z3, d, [_term(z3, a, env, side) for a in d.args], side)
    side.append(z3.And(out >= I32_MIN, out <= I32_MAX))
    return out


def _value(z3, d: Definition, xs: list, side: list):
    op = d.op
    if op == WIDEN:
        return xs[0]
    if op in ("min", "minimum"):
        out = xs[0]
        for x in xs[1:]:
            out = z3.If(x < out, x, out)
        return out
    if op in ("max", "maximum"):
        out = xs[0]
        for x in xs[1:]:
            out = z3.If(x > out, x, out)
        return out
    if op == "abs":
        return z3.Abs(xs[0])
    if op in ("+", "-", "*"):
        a, b = xs
        return a + b if op == "+" else a - b if op == "-" else a * b
    if op in ("//", "%"):
        a, b = xs
        side.append(b != 0)
        if d.c:
            return _c_div(z3, a, b) if op == "//" else _c_rem(z3, a, b)
        return _floor_div(z3, a, b) if op == "//" else _floor_rem(z3, a, b)
    raise _Unmodelled(op)


def solve_bases(program: Program, bases: Sequence[Param], target: Mapping[str, int],
                ranges: Mapping[str, tuple[int, int]], deadline: Optional[float] = None
                ) -> Optional[dict[str, int]]:
    """Base values (one per param of ``bases``) within ``ranges`` (inclusive, per base param;
    i32 where absent) and the params' domains, whose derived values make each of the Program's
    params named in ``target`` equal its value there; None when there are none, the solver ran
    out of time, or a definition is one it does not model. ``deadline`` (time.monotonic()):
    no query runs past it."""
    try:
        import z3
    except ImportError:  # pragma: no cover - z3-solver is a dependency
        return None

    def left_ms() -> int:
        if deadline is None:
            return TIMEOUT_MS
        return min(TIMEOUT_MS, int((deadline - time.monotonic()) * 1000))

    if left_ms() <= 0:
        return None
    env = {p.name: z3.Int(p.name) for p in bases}
    solver = z3.Solver()
    solver.set("timeout", left_ms())
    for p in bases:
        lo, hi = ranges.get(p.name, (I32_MIN, I32_MAX))
        if p.min is not None:
            lo = max(lo, p.min)
        if p.max is not None:
            hi = min(hi, p.max)
        if lo > hi:
            return None
        solver.add(env[p.name] >= lo, env[p.name] <= hi)
    side: list = []
    try:
        for d in program.derived:
            env[d.name] = _expr(z3, d.definition, env, side)
    except _Unmodelled:
        return None
    solver.add(*side)
    for name, value in target.items():
        if name not in env:
            return None
        solver.add(env[name] == value)
    if solver.check() != z3.sat:
        return None
    best = _model_values(solver, bases, env)
    # smaller witnesses: bisect the sum of magnitudes between 0 and the best found
    size = z3.Sum([z3.Abs(env[p.name]) for p in bases]) if bases else z3.IntVal(0)
    lo, hi = -1, sum(abs(v) for v in best.values())
    for _ in range(SHRINK_ROUNDS):
        if hi - lo <= 1 or left_ms() <= 0:
            break
        mid = (lo + hi) // 2
        solver.set("timeout", left_ms())
        solver.push()
        solver.add(size <= mid)
        if solver.check() == z3.sat:
            best = _model_values(solver, bases, env)
            hi = sum(abs(v) for v in best.values())
        else:  # none that small, or no answer in time: look between mid and the best
            lo = mid
        solver.pop()
    return best


def _model_values(solver, bases: Sequence[Param], env) -> dict[str, int]:
    model = solver.model()
    return {p.name: model.eval(env[p.name], model_completion=True).as_long() for p in bases}


__all__ = ["solve_bases"]
