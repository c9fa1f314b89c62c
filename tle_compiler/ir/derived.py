"""Derived params: params the kernel computes from others, and how to compute them.

A kernel that counts its tiles as ``M = tl.cdiv(N, 64)`` in one partition and ``(N + 64) // 64``
in another has two params, ``M`` and ``N_64_64``, that the verifier checks as if independent (every
combination of values is covered, so a verdict without a fault is sound). A fault found at such a
combination may be one that no value of ``N`` gives (``M = 1`` needs ``N`` in ``[1, 64]``,
``N_64_64 = 0`` needs ``N`` in ``[-64, -1]``). The frontend therefore keeps each derived param's
:class:`Definition`, an expression over the params it was computed from, with Triton's semantics
(C's truncating ``//`` and ``%`` on runtime integers, Python's on constexprs); the passes evaluate
it from *base* values (kernel arguments and other values the kernel does not compute) to tell a
real witness from an impossible one (passes/witness.py).
"""

from __future__ import annotations

from typing import Mapping, Optional, Union

from .expr import Affine, c_div, c_rem
from .i32 import fits_i32
from .nodes import NOLOC, Loc
from .record import record

#: Binary operators a definition may apply (``//`` and ``%`` are C's when ``Definition.c``).
BINARY_OPS = ("+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^", "**")
#: Functions a definition may apply, by their Triton / Python names.
FUNCTIONS = ("min", "max", "minimum", "maximum", "abs", "next_power_of_2")
#: A widening of an i32 value to i64 (``x.to(tl.int64)``, or Triton's promotion of an i32 operand
#: beside an i64 one): the value itself, but computed in i32 up to there, so the verifier's i32
#: check covers its operand (passes/i32_range.py) and a launch computes what follows in i64.
WIDEN = "int64"


def _next_power_of_2(n: int) -> int:
    """``triton.next_power_of_2``: the bit-smearing of a 32-bit value minus one, plus one."""
    n -= 1
    for s in (1, 2, 4, 8, 16, 32):
        n |= n >> s
    return n + 1


def _apply(op: str, xs: list[int], c: bool) -> Optional[int]:
    """``op`` applied to ``xs``; None when undefined (a division by zero, a negative shift, a
    power too large to be an index)."""
    if op == WIDEN:
        return xs[0]
    if op in FUNCTIONS:
        if op in ("min", "minimum"):
            return min(xs)
        if op in ("max", "maximum"):
            return max(xs)
        if op == "abs":
            return abs(xs[0])
        return _next_power_of_2(xs[0])
    a, b = xs
    if op in ("//", "%"):
        if b == 0:
            return None
        if c:
            return c_div(a, b) if op == "//" else c_rem(a, b)
        return a // b if op == "//" else a % b
    if op in ("<<", ">>"):
        if b < 0 or b > 64:
            return None
        return a << b if op == "<<" else a >> b
    if op == "**":
        return a ** b if 0 <= b <= 64 else None
    return {"+": a + b, "-": a - b, "*": a * b, "&": a & b, "|": a | b, "^": a ^ b}[op]


Operand = Union[Affine, "Definition"]


def constant_fault(op: str, b: "Operand") -> Optional[str]:
    """What ``a OP b`` does wrong at every value when its right operand ``b`` is a constant that
    leaves it undefined (a ``//`` or ``%`` by 0, a shift or power by a constant outside
    [0, 64]), else None (``b`` names a param, or is a fine constant, or is itself undefined)."""
    if b.variables:
        return None
    k = b.const if isinstance(b, Affine) else b.eval({})
    if k is None:
        return None
    if op in ("//", "%") and k == 0:
        return "divides by 0" if op == "//" else "takes a remainder modulo 0"
    if op in ("<<", ">>") and not 0 <= k <= 64:
        return f"shifts by {k} (outside [0, 64])"
    if op == "**" and not 0 <= k <= 64:
        return f"raises to the power {k} (outside [0, 64])"
    return None


@record
class Definition:
    """``op`` applied to ``args``: affine expressions of params, or nested definitions (a value
    computed on the way that is no param of its own). ``c``: the operands are runtime integers, so
    ``//`` and ``%`` are C's (``arith.divsi`` / ``arith.remsi``: truncating, the remainder takes
    the dividend's sign). ``wide``: the GPU computes it in i64 (an operand went through a
    widening cast), however narrow the arguments it names are."""

    op: str
    args: tuple[Operand, ...]
    c: bool = False
    wide: bool = False

    def eval(self, env: Mapping[str, int]) -> Optional[int]:
        """The value for the params' values in ``env`` (None when undefined there)."""
        xs: list[int] = []
        for a in self.args:
            x = a.eval(env)
            if x is None:
                return None
            xs.append(x)
        return _apply(self.op, xs, self.c)

    def why_undefined(self, env: Mapping[str, int]) -> str:
        """Why :meth:`eval` gives None at ``env``: the first operation that has no integer
        value there, and what it does ("divides by zero", "raises 3 to the power -1 (Python
        gives a float)")."""
        xs: list[int] = []
        for a in self.args:
            x = a.eval(env)
            if x is None:
                return a.why_undefined(env) if isinstance(a, Definition) else "is undefined"
            xs.append(x)
        if self.op == "**" and len(xs) == 2:
            if xs[1] < 0:
                return (f"raises {xs[0]} to the power {xs[1]} (a negative exponent: Python gives "
                        f"a float, or fails at 0)")
            return f"raises {xs[0]} to the power {xs[1]} (an exponent above 64)"
        if self.op in ("<<", ">>") and len(xs) == 2:
            return f"shifts by {xs[1]} (outside [0, 64])"
        return "divides by zero"

    def fault_everywhere(self) -> Optional[str]:
        """The first operation in the definition that is undefined at every value because of a
        constant right operand (:func:`constant_fault`), as ``"'a OP b' divides by 0"``; None
        when there is none (the .pipe reader refuses such a definition)."""
        for a in self.args:
            if isinstance(a, Definition):
                why = a.fault_everywhere()
                if why is not None:
                    return why
        if len(self.args) == 2 and self.op not in FUNCTIONS:
            why = constant_fault(self.op, self.args[1])
            if why is not None:
                return f"'{self}' {why}"
        return None

    @property
    def variables(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for a in self.args:
            out |= a.variables
        return out

    @property
    def constants(self) -> tuple[int, ...]:
        """Every integer constant in the definition (divisors, offsets): how far apart the values
        of its operands that change its value may lie."""
        out: list[int] = []
        for a in self.args:
            if isinstance(a, Affine):
                out += [a.const] + [c for _, c in a.terms]
            else:
                out += list(a.constants)
        return tuple(out)

    def substitute(self, env: Mapping[str, Affine]) -> "Definition":
        return Definition(self.op, tuple(a.substitute(env) for a in self.args), self.c, self.wide)

    def __str__(self) -> str:
        def text(a: Operand) -> str:
            s = str(a)
            simple = isinstance(a, Affine) and (a.is_const or (len(a.terms) == 1 and not a.const
                                                                 and a.terms[0][1] == 1))
            return s if simple or self.op in FUNCTIONS or self.op == WIDEN else f"({s})"

        if self.op in FUNCTIONS or self.op == WIDEN:
            return f"{self.op}({', '.join(text(a) for a in self.args)})"
        a, b = self.args
        return f"{text(a)} {self.op} {text(b)}"


@record
class Derived:
    """The param ``name`` is ``definition`` of other params (base or derived)."""

    name: str
    definition: Definition
    loc: Loc = NOLOC

    def __str__(self) -> str:
        return f"{self.name} = {self.definition}"


def quotient_bounds(op: str, lo: Optional[int], hi: Optional[int], c: int, c_semantics: bool
                    ) -> tuple[Optional[int], Optional[int]]:
    """The values ``x // c`` or ``x % c`` (``op``; ``c > 0``) takes for ``lo <= x <= hi`` (None:
    an open end), C's truncating division and remainder when ``c_semantics`` (a runtime
    operand), else Python's floor ones. Both divisions are non-decreasing in ``x``; Python's
    remainder takes the divisor's sign, C's the dividend's."""
    if op == "//":
        div = (lambda v: c_div(v, c)) if c_semantics else (lambda v: v // c)
        return (None if lo is None else div(lo), None if hi is None else div(hi))
    if not c_semantics or (lo is not None and lo >= 0):
        return (0, c - 1)
    if hi is not None and hi <= 0:
        return (-(c - 1), 0)
    return (-(c - 1), c - 1)


Bounds = tuple[Optional[int], Optional[int]]  # an interval; None is an open end


def _add(a: Bounds, b: Bounds, sign: int = 1) -> Bounds:
    lo_b, hi_b = (b[0], b[1]) if sign > 0 else (
        None if b[1] is None else -b[1], None if b[0] is None else -b[0])
    return (None if a[0] is None or lo_b is None else a[0] + lo_b,
            None if a[1] is None or hi_b is None else a[1] + hi_b)


def _scale(a: Bounds, k: int) -> Bounds:
    if k == 0:
        return (0, 0)
    lo, hi = (None if a[0] is None else a[0] * k), (None if a[1] is None else a[1] * k)
    return (lo, hi) if k > 0 else (hi, lo)


def affine_bounds(a: Affine, domains: Mapping[str, Bounds]) -> Bounds:
    out: Bounds = (a.const, a.const)
    for name, k in a.terms:
        out = _add(out, _scale(domains.get(name, (None, None)), k))
    return out


def bounds_of(d: Definition, domains: Mapping[str, Bounds]) -> Bounds:
    """The values ``d`` can take when each param it names ranges over its interval in
    ``domains`` (absent: every integer), as far as interval arithmetic tells: sums, products by
    a constant, quotients and remainders by a positive constant (C's or Python's: both are
    non-decreasing in the dividend), min, max and abs; anything else every integer."""
    xs = [bounds_of(a, domains) if isinstance(a, Definition) else affine_bounds(a, domains)
          for a in d.args]
    const = [a.const if isinstance(a, Affine) and a.is_const else None for a in d.args]
    if d.op == WIDEN:
        return xs[0]
    if d.op in ("+", "-"):
        return _add(xs[0], xs[1], 1 if d.op == "+" else -1)
    if d.op == "*" and (const[0] is not None or const[1] is not None):
        return _scale(xs[1], const[0]) if const[0] is not None else _scale(xs[0], const[1])
    if d.op in ("min", "minimum", "max", "maximum"):
        pick = min if d.op in ("min", "minimum") else max
        los, his = [x[0] for x in xs], [x[1] for x in xs]
        if pick is min:
            return (None if None in los else min(los),
                    min(h for h in his if h is not None) if any(h is not None for h in his)
                    else None)
        return (max(lo for lo in los if lo is not None) if any(lo is not None for lo in los)
                else None, None if None in his else max(his))
    if d.op == "abs":
        lo, hi = xs[0]
        if lo is not None and lo >= 0:
            return (lo, hi)
        if hi is not None and hi <= 0:
            return (-hi, None if lo is None else -lo)
        return (0, None if lo is None or hi is None else max(-lo, hi))
    if d.op in ("//", "%") and const[1] is not None and const[1] > 0:
        return quotient_bounds(d.op, *xs[0], const[1], d.c)
    return (None, None)


def undefined_divisions(derived: tuple["Derived", ...], domains: Mapping[str, Bounds]
                        ) -> list[tuple["Derived", "Definition", str, tuple]]:
    """The run-time ``//`` and ``%`` (``Definition.c``) in the definitions of ``derived`` that
    some values of the params' ``domains`` leave undefined on the GPU: a divisor whose interval
    (``bounds_of``) holds 0 (arith.divsi / remsi by zero, LLVM's sdiv / srem), or holds -1
    where the dividend's holds the type's least value (the quotient overflows). Each as (the
    derived param, the division, why, (dividend, divisor, least, whether the dividend may be
    the least)), the operands verify_protocol's ``_division_defined`` reads to drop it where
    --param fixes the divisor where it is defined. A definition of constexprs (Python's
    division, at compile time) is left out: Triton refuses it there, no launch runs it.
    (frontend/walk_loops.py ``runtime_division`` is the same obligation on a Python kernel.)"""
    env: dict[str, Bounds] = dict(domains)
    out: list[tuple[Derived, Definition, str, tuple]] = []

    def bounds(a: "Operand") -> Bounds:
        return bounds_of(a, env) if isinstance(a, Definition) else affine_bounds(a, env)

    def walk(d: "Derived", x: "Definition") -> None:
        for a in x.args:
            if isinstance(a, Definition):
                walk(d, a)
        if not x.c or x.op not in ("//", "%") or len(x.args) != 2:
            return
        a, b = x.args
        if not b.variables:
            return  # a constant divisor: 0 is refused when the file is read (constant_fault)
        (alo, _), (blo, bhi) = bounds(a), bounds(b)
        least = -2 ** 63 if x.wide else -2 ** 31
        may_be_least = alo is None or alo <= least
        if (blo is None or blo <= 0) and (bhi is None or bhi >= 0):
            why = f"its divisor '{b}' may be 0 in the params' domains"
        elif (blo is None or blo <= -1) and (bhi is None or bhi >= -1) and may_be_least:
            why = (f"its divisor '{b}' may be -1 where '{a}' may be {least} (the quotient "
                   f"overflows)")
        else:
            return
        out.append((d, x, why, (a, b, least, may_be_least)))

    for d in derived:
        walk(d, d.definition)
        env[d.name] = bounds_of(d.definition, env)
    return out


def derive(derived: tuple[Derived, ...], base: Mapping[str, int]) -> Optional[dict[str, int]]:
    """The values of the ``derived`` params (listed after the params their definitions use) for
    the base params' values ``base``, with those values; None when a definition is undefined
    there (a value the kernel cannot be launched with)."""
    env = dict(base)
    for d in derived:
        v = d.definition.eval(env)
        if v is None:
            return None
        env[d.name] = v
    return env


def wrap(value: int, bits: int) -> int:
    """``value`` as a ``bits``-wide two's complement integer holds it (i32 or i64 arithmetic)."""
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


class LaunchWidthError(ValueError):
    """A derived param whose definition mixes i32 and i64 values and whose i32 part leaves i32:
    where the GPU's i32 arithmetic wraps before the i64 one begins depends on the expression's
    shape, which the affine operand no longer has."""


def derive_on_gpu(derived: tuple[Derived, ...], base: Mapping[str, int],
                  wide: frozenset = frozenset()) -> Optional[tuple[dict[str, int], list[str]]]:
    """The derived params' values as the GPU computes them from the runtime base values ``base``:
    each step's operands and result in two's complement i32, or i64 where a base value it uses is
    in ``wide`` (an i64 argument) or a constant leaves i32 (Triton's promotion). Sums and
    products by constants wrap as the GPU's do (modular arithmetic: the wrapped affine value is
    the GPU's whatever the order of its terms), then ``//`` and ``%`` divide the wrapped values.
    A definition of constexprs only (``Definition.c`` false) is Python's, unbounded. Returns the
    values and, for each step that wrapped, ``"3*N = -2147483647"`` (what the GPU computed);
    None where a definition is undefined (a division by zero)."""
    env = dict(base)
    width: dict[str, int] = {n: 64 if n in wide else 32 for n in base}
    wrapped: list[str] = []

    def bits_of(a: "Operand") -> int:
        out = 32
        for v in a.variables:
            out = max(out, width.get(v, 32))
        consts = a.constants if isinstance(a, Definition) else [a.const] + [c for _, c in a.terms]
        if not all(fits_i32(c) for c in consts):
            out = 64
        return out

    def operand(a: "Operand", bits: int, c: bool) -> Optional[int]:
        if isinstance(a, Definition):
            return step(a)
        exact = a.eval(env)
        if not c:
            return exact
        narrow = [v for v in a.variables if width.get(v, 32) == 32]
        if bits == 64 and narrow:
            part = Affine(a.const, tuple((v, k) for v, k in a.terms if v in narrow))
            terms = [part.const] + [k * env[v] for v, k in part.terms]
            # every partial sum, in whatever order, lies between these two
            low, high = sum(t for t in terms if t < 0), sum(t for t in terms if t > 0)
            if not all(fits_i32(t) for t in [*terms, low, high]):
                raise LaunchWidthError(f"`{part}` = {part.eval(env)} mixes i32 arguments into an "
                                       f"i64 expression and leaves i32")
        got = wrap(exact, bits)
        if got != exact:
            wrapped.append(f"{a} = {got}")
        return got

    def step(d: Definition) -> Optional[int]:
        c = d.c
        # a widening computes its operand in i32 (its own width), what follows it in i64
        bits = 64 if d.wide and d.op != WIDEN else max(bits_of(a) for a in d.args)
        xs: list[int] = []
        for a in d.args:
            x = operand(a, bits, c)
            if x is None:
                return None
            xs.append(x)
        if c and d.op in ("<<", ">>") and xs[1] >= bits:
            return None  # a shift by the width or more is undefined on the GPU
        v = _apply(d.op, xs, d.c)
        if v is None or not c:
            return v
        got = wrap(v, bits)
        if got != v:
            wrapped.append(f"{d} = {got}")
        return got

    for d in derived:
        v = step(d.definition)
        if v is None:
            return None
        env[d.name] = v
        width[d.name] = 64 if d.definition.c and (bits_of(d.definition) == 64 or d.definition.wide
                                                  or d.definition.op == WIDEN) else 32
    return env, wrapped


__all__ = ["BINARY_OPS", "FUNCTIONS", "WIDEN", "Bounds", "Definition", "Derived",
           "LaunchWidthError", "affine_bounds", "bounds_of", "derive", "derive_on_gpu",
           "undefined_divisions", "wrap"]
