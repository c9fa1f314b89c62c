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
from .nodes import NOLOC, Loc
from .record import record

#: Binary operators a definition may apply (``//`` and ``%`` are C's when ``Definition.c``).
BINARY_OPS = ("+", "-", "*", "//", "%", "<<", ">>", "&", "|", "^", "**")
#: Functions a definition may apply, by their Triton / Python names.
FUNCTIONS = ("min", "max", "minimum", "maximum", "abs", "next_power_of_2")


def _next_power_of_2(n: int) -> int:
    """``triton.next_power_of_2``: the bit-smearing of a 32-bit value minus one, plus one."""
    n -= 1
    for s in (1, 2, 4, 8, 16, 32):
        n |= n >> s
    return n + 1


def _apply(op: str, xs: list[int], c: bool) -> Optional[int]:
    """``op`` applied to ``xs``; None when undefined (a division by zero, a negative shift, a
    power too large to be an index)."""
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


@record
class Definition:
    """``op`` applied to ``args``: affine expressions of params, or nested definitions (a value
    computed on the way that is no param of its own). ``c``: the operands are runtime integers, so
    ``//`` and ``%`` are C's (``arith.divsi`` / ``arith.remsi``: truncating, the remainder takes
    the dividend's sign)."""

    op: str
    args: tuple[Operand, ...]
    c: bool = False

    def eval(self, env: Mapping[str, int]) -> Optional[int]:
        """The value for the params' values in ``env`` (None when undefined there)."""
        xs: list[int] = []
        for a in self.args:
            x = a.eval(env)
            if x is None:
                return None
            xs.append(x)
        return _apply(self.op, xs, self.c)

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
        return Definition(self.op, tuple(a.substitute(env) for a in self.args), self.c)

    def __str__(self) -> str:
        def text(a: Operand) -> str:
            s = str(a)
            simple = isinstance(a, Affine) and (a.is_const or (len(a.terms) == 1 and not a.const
                                                                 and a.terms[0][1] == 1))
            return s if simple or self.op in FUNCTIONS else f"({s})"

        if self.op in FUNCTIONS:
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


__all__ = ["BINARY_OPS", "FUNCTIONS", "Definition", "Derived", "derive"]
