"""Whether the integers a checked param value makes the GPU compute stay inside i32.

The verifier counts with unbounded integers; the GPU computes a kernel's integer arguments, and
the loop bounds, conditions and pipe indices made of them, in i32. Sums, differences and products
by constants wrap modulo 2^32, so such an expression computes its true value exactly when that
value lies in [-2^31, 2^31 - 1]; outside, the launch computes another number than the one checked
(``range(N, N + 2)`` at N = 2^31 - 1 runs no iteration, ``N + 1 > 0`` is false). A check at such
a value says nothing of the launch with it (docs/semantics.md, "Integers are unbounded").

:func:`first_wrap` walks a Program for one assignment of its params: every loop bound, every
operand of a condition and every event or access index, with each loop variable ranging over the
values its loop can give it (and its value one step past the last, which the compiled loop
computes before it compares; an interval, so a nest is over-approximated; an ``if`` whose
condition the params alone decide walks only the branch taken), and every intermediate value of
the derived params' definitions (``Program.derived``) whose operands the values given determine.
"""

from __future__ import annotations

from typing import Mapping, Optional, Union

from ..ir.derived import Definition, LaunchWidthError, derive, derive_on_gpu
from ..ir.expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from ..ir.i32 import I32_MAX, I32_MIN, fits_i32
from ..ir.loop_counter import Interval, Iterations, iterations
from ..ir.nodes import Access, Event, For, If, Program, Stmt


#: How a reason from :func:`first_wrap` ends when the GPU computes a definition otherwise than the
#: unbounded evaluation without any step leaving i32 (the others name a value outside i32).
ON_GPU = "on the GPU, while the check counts with unbounded integers"


def _outside(r: Optional[Interval]) -> Optional[int]:
    """The value of ``r`` furthest outside i32, if any."""
    if r is None:
        return None
    if r[1] > I32_MAX:
        return r[1]
    if r[0] < I32_MIN:
        return r[0]
    return None


def _cond_operands(c: Cond) -> list[Affine]:
    if isinstance(c, Compare):
        return [c.lhs, c.rhs]
    if isinstance(c, ModCompare):
        return [c.expr]
    if isinstance(c, BoolOp):
        return [a for item in c.items for a in _cond_operands(item)]
    return _cond_operands(c.item)


class _Walk:
    def __init__(self) -> None:
        self.found: Optional[str] = None

    def check(self, a: Affine, env: Mapping[str, Interval], what: str, line: int) -> bool:
        r = a.span(env)
        bad = _outside(r)
        if bad is None:
            return True
        verb = "is" if r[0] == r[1] else "reaches"
        self.found = f"{what} `{a}` (line {line}) {verb} {bad}"
        return False

    def counter(self, s: For, it: Iterations, line: int) -> bool:
        """The counter of a loop of negative step as Triton 3.6 compiles it: visit_For swaps the
        bounds and negates the step (`range(a, b, -k)` is an scf.for from b up to a by k, its
        variable `a - counter + b`), so the counter runs from the stop up to the start and its
        next value, computed in i32 before the compare, may wrap where the variable's does not
        (`range(N, 0, -3)` at N = 2^31 - 1: the counter steps from 2147483646 to 2147483649 and
        the loop never ends). Its values are ``it.counter`` (ir/loop_counter.py)."""
        name = f"{s.var}_counter"
        return self.check(Affine.of(name) + it.k, {name: it.counter},
                          f"the next value of the counter Triton's loop of step {s.step} steps up "
                          f"(from its stop to its start, by {it.k})", line)

    def body(self, stmts: tuple[Stmt, ...], env: dict[str, Interval]) -> bool:
        for s in stmts:
            if isinstance(s, (Event, Access)):
                if not self.check(s.index, env, "the index", s.loc.line):
                    return False
            elif isinstance(s, For):
                line = s.loc.line
                if not (self.check(s.start, env, "the loop bound", line)
                        and self.check(s.stop, env, "the loop bound", line)):
                    return False
                # the variable's values and the counter's, as the endless-loop check of data
                # loops reads them too (ir/loop_counter.py)
                it = iterations(s, env)
                if it is None:  # a bound not known here, or no iteration for any value
                    continue
                # the compiled loop steps its variable past the last value before it compares
                last = Affine.of(s.var) + s.step
                if not self.check(last, {s.var: it.values}, "the loop variable's next value",
                                  line):
                    return False
                if s.step < 0 and not self.counter(s, it, line):
                    return False
                if not self.body(s.body, {**env, s.var: it.values}):
                    return False
            elif isinstance(s, If):
                for a in _cond_operands(s.cond):
                    if not self.check(a, env, f"in the condition `{s.cond}`, the operand", s.loc.line):
                        return False
                taken = _decided(s.cond, env)
                if taken is not False and not self.body(s.then, env):
                    return False
                if taken is not True and not self.body(s.orelse, env):
                    return False
        return True


def _decided(c: Cond, env: Mapping[str, Interval]) -> Optional[bool]:
    """The condition's value when every variable it uses has one value here, else None."""
    point: dict[str, int] = {}
    for v in c.variables:
        r = env.get(v)
        if r is None or r[0] != r[1]:
            return None
        point[v] = r[0]
    return c.eval(point)


def _definition_wrap(d: Definition, env: Mapping[str, int]) -> Optional[tuple[str, int]]:
    """The first operand or intermediate result of ``d`` outside i32 at ``env`` (its text and
    value); None when every one is inside, or ``d`` is undefined there."""
    xs: list[int] = []
    for a in d.args:
        if isinstance(a, Definition):
            inner = _definition_wrap(a, env)
            if inner is not None:
                return inner
            x = a.eval(env)
        else:
            x = a.eval(env)
            if not I32_MIN <= x <= I32_MAX:
                return str(a), x
        if x is None:
            return None
        xs.append(x)
    v = d.eval(env)
    if v is not None and not I32_MIN <= v <= I32_MAX:
        return str(d), v
    return None


def _gpu_differs(program: Program, env: Mapping[str, int]) -> Optional[str]:
    """A derived param whose value the GPU computes from the base values in ``env`` (its i32 /
    i64 steps, ir/derived.derive_on_gpu) otherwise than the unbounded evaluation does, as text;
    None when every one the values determine agrees. Where every step is inside i32 (checked
    before) only a rule of the GPU's arithmetic without an unbounded counterpart differs."""
    names = {d.name for d in program.derived}
    base = {k: x for k, x in env.items() if k not in names}
    known, chain = set(base), []
    for d in program.derived:
        if d.definition.variables <= known:
            chain.append(d)
            known.add(d.name)
    exact = derive(tuple(chain), base)
    if exact is None:  # undefined over the integers too: no launch a claim covers
        return None
    try:
        gpu = derive_on_gpu(tuple(chain), base)
    except LaunchWidthError as e:
        return f"a derived param's definition: {e}"
    for d in chain:
        got = None if gpu is None else gpu[0].get(d.name)
        if got != exact[d.name]:
            # a shift by the width or more: 0 or -1 over the integers, undefined on the GPU
            return (f"the definition `{d}` (line {d.loc.line}) is {exact[d.name]} over the "
                    f"integers and {'undefined' if got is None else got} {ON_GPU}")
    return None


def definitions_wrap(program: Program, env: Mapping[str, int]) -> Optional[str]:
    """What :func:`first_wrap` finds in the params and the derived params' definitions alone at
    the values ``env`` (base values, and derived ones given): a value outside i32, an
    intermediate value of a definition whose operands ``env`` determines outside i32, or a
    definition the GPU computes otherwise than the unbounded evaluation; None when none."""
    for name, x in env.items():
        if not fits_i32(x):
            return f"the param {name} is {x}"
    return _definitions(program, dict(env), {k: (x, x) for k, x in env.items()})


def _definitions(program: Program, env: dict[str, int], ranges: dict[str, Interval]
                 ) -> Optional[str]:
    """Check the definitions at the point values ``env``, adding each derived param's value to
    ``env`` and ``ranges`` where it holds none yet."""
    for d in program.derived:
        if not d.definition.variables <= env.keys():
            continue
        bad = _definition_wrap(d.definition, env)
        if bad is not None:
            return f"`{bad[0]}` in the definition `{d}` (line {d.loc.line}) is {bad[1]}"
        v = d.definition.eval(env)
        if v is not None and d.name not in ranges:
            env[d.name] = v
            ranges[d.name] = (v, v)
    return _gpu_differs(program, env)


def _fits(b) -> bool:
    return b[0] is not None and b[1] is not None and I32_MIN <= b[0] and b[1] <= I32_MAX


def _product(a, b) -> Interval:
    """The interval of the products of two closed intervals."""
    corners = [x * y for x in a for y in b]
    return min(corners), max(corners)


def _fit_intervals(d: Definition, ranges: Mapping[str, Interval]) -> Optional[Interval]:
    """The interval of ``d`` over ``ranges`` when interval arithmetic shows every operand and
    intermediate result of it inside i32 (so the GPU's i32 steps compute the unbounded values),
    else None (an open end, an operation it does not bound: shifts, powers, bitwise ones, an
    i64 step)."""
    if d.op in ("<<", ">>", "**", "&", "|", "^") or d.wide:
        return None
    xs = []
    for a in d.args:
        if isinstance(a, Definition):
            x = _fit_intervals(a, ranges)
        else:
            if not a.variables <= ranges.keys():
                return None
            x = a.span(ranges)
        if x is None or not _fits(x):
            return None
        xs.append(x)
    out = _interval(d, xs)
    return out if out is not None and _fits(out) else None


def _interval(d: Definition, xs: list) -> Optional[Interval]:
    """``d``'s operation over its operands' intervals ``xs`` (None: not bounded here)."""
    from ..ir.derived import WIDEN, c_div, quotient_bounds

    op = d.op
    if op == WIDEN:
        return xs[0]
    if op in ("min", "minimum"):
        return min(x[0] for x in xs), min(x[1] for x in xs)
    if op in ("max", "maximum"):
        return max(x[0] for x in xs), max(x[1] for x in xs)
    if op == "abs" and len(xs) == 1:
        (lo, hi), = xs
        return (lo, hi) if lo >= 0 else (-hi, -lo) if hi <= 0 else (0, max(-lo, hi))
    if len(xs) != 2:  # next_power_of_2, or an arity the operations below do not have
        return None
    (a0, a1), (b0, b1) = xs
    if op == "+":
        return a0 + b0, a1 + b1
    if op == "-":
        return a0 - b1, a1 - b0
    if op == "*":
        return _product((a0, a1), (b0, b1))
    if op in ("//", "%") and b0 == b1 and b0 > 0:
        return quotient_bounds(op, a0, a1, b0, d.c)
    if op == "//" and d.c and (b0 > 0 or b1 < 0):
        # C's quotient is monotone in each operand on either side of a zero divisor: corners
        q = [c_div(x, y) for x in (a0, a1) for y in (b0, b1)]
        return min(q), max(q)
    return None


def derived_ranges(program: Program, ranges: Mapping[str, Interval]) -> Optional[dict]:
    """The intervals of the derived params over the base params' ``ranges`` when interval
    arithmetic shows every definition's operands and intermediate results inside i32 there
    (no base value in them makes the GPU compute other derived values), else None."""
    out = dict(ranges)
    for d in program.derived:
        got = _fit_intervals(d.definition, out)
        if got is None:
            return None
        out[d.name] = got
    return out


def first_wrap(program: Program, values: Mapping[str, Union[int, Interval]],
               bases: Optional[Mapping[str, int]] = None) -> Optional[str]:
    """The first expression ``program`` computes outside i32 for its params' ``values`` (each a
    value, or an interval ``(lo, hi)`` of values: the answer then covers every value in it, over-
    approximated) and the base params' ``bases``, from which the derived params' definitions are
    evaluated; as ``the loop bound `N + 2` (line 17) is 2147483649``; None when everything stays
    inside."""
    ranges = {k: (v, v) if isinstance(v, int) else tuple(v)
              for k, v in {**dict(bases or {}), **dict(values)}.items()}
    for name, r in ranges.items():
        bad = _outside(r)
        if bad is not None:
            return f"the param {name} {'is' if r[0] == r[1] else 'reaches'} {bad}"
    env = {k: r[0] for k, r in ranges.items() if r[0] == r[1]}
    bad = _definitions(program, env, ranges)
    if bad is not None:
        return bad
    walk = _Walk()
    for p in program.partitions:
        if not walk.body(p.body, dict(ranges)):
            return walk.found
    # the run-time loops without events, which the partitions leave out (Program.data_loops)
    if not walk.body(tuple(getattr(program, "data_loops", ())), dict(ranges)):
        return walk.found
    return None


__all__ = ["I32_MAX", "I32_MIN", "ON_GPU", "definitions_wrap", "derived_ranges", "first_wrap"]
