"""Affine index expressions and the conditions built from them.

Pipe events are indexed by *logical iterations* that are affine in the enclosing loop variables and
the kernel's symbolic params (``2*p + 1``, ``ck - 1``, ``NK``). Keeping them affine is what lets the
passes reason about stages and phases for every param value; anything else is rejected at the
frontend with the offending line.
"""

from __future__ import annotations

from .record import record
from typing import Mapping, Optional, Union


#: The words the ``.pipe`` text reads as keywords where a name may stand (``for``/``if`` start a
#: statement, ``else`` follows a block, ``not`` starts a condition: ir/parser.RESERVED_WORDS). A
#: name spelled so (a .kir kernel may name a param `` `not` ``) prints in backticks, which the
#: reader takes as a name: :func:`name_text`.
RESERVED_WORDS = frozenset({"for", "if", "else", "not"})


def name_text(name: str) -> str:
    """``name`` as the ``.pipe`` text writes it: in backticks when it is a reserved word."""
    return f"`{name}`" if name in RESERVED_WORDS else name


@record
class Affine:
    """``const + sum(coef * var)``, normalised: no zero coefficients, terms sorted by name."""

    const: int = 0
    terms: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        # Keep equality structural however the value was built: merge, drop zeros, sort.
        merged: dict[str, int] = {}
        for v, c in self.terms:
            merged[v] = merged.get(v, 0) + c
        norm = tuple(sorted((v, c) for v, c in merged.items() if c != 0))
        if norm != self.terms:
            object.__setattr__(self, "terms", norm)

    @staticmethod
    def of(value: Union[int, str, "Affine"]) -> "Affine":
        if isinstance(value, Affine):
            return value
        if isinstance(value, bool):
            raise TypeError("booleans are not affine values")
        if isinstance(value, int):
            return Affine(value, ())
        if isinstance(value, str):
            return Affine(0, ((value, 1),))
        raise TypeError(f"cannot make an affine expression from {value!r}")

    @staticmethod
    def _norm(const: int, coefs: Mapping[str, int]) -> "Affine":
        return Affine(const, tuple(sorted((v, c) for v, c in coefs.items() if c != 0)))

    def __add__(self, other: Union[int, str, "Affine"]) -> "Affine":
        other = Affine.of(other)
        coefs = dict(self.terms)
        for v, c in other.terms:
            coefs[v] = coefs.get(v, 0) + c
        return Affine._norm(self.const + other.const, coefs)

    __radd__ = __add__

    def __neg__(self) -> "Affine":
        return Affine(-self.const, tuple((v, -c) for v, c in self.terms))

    def __sub__(self, other: Union[int, str, "Affine"]) -> "Affine":
        return self + (-Affine.of(other))

    def __rsub__(self, other: Union[int, str, "Affine"]) -> "Affine":
        return Affine.of(other) - self

    def scale(self, k: int) -> "Affine":
        return Affine._norm(self.const * k, {v: c * k for v, c in self.terms})

    def span(self, env: Mapping[str, tuple[int, int]]) -> Optional[tuple[int, int]]:
        """The least and greatest value over the intervals ``env`` of its variables (None: a
        variable without one)."""
        lo = hi = self.const
        for v, c in self.terms:
            if v not in env:
                return None
            vl, vh = env[v]
            lo, hi = (lo + c * vl, hi + c * vh) if c > 0 else (lo + c * vh, hi + c * vl)
        return lo, hi

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(v for v, _ in self.terms)

    @property
    def is_const(self) -> bool:
        return not self.terms

    def coef(self, var: str) -> int:
        return dict(self.terms).get(var, 0)

    def substitute(self, env: Mapping[str, "Affine"]) -> "Affine":
        out = Affine(self.const, ())
        for v, c in self.terms:
            out = out + (env[v].scale(c) if v in env else Affine(0, ((v, c),)))
        return out

    def eval(self, env: Mapping[str, int]) -> int:
        total = self.const
        for v, c in self.terms:
            try:
                total += c * env[v]
            except KeyError:
                raise KeyError(f"no value for '{v}'") from None
        return total

    def __str__(self) -> str:
        parts: list[str] = []
        for v, c in self.terms:
            mag = abs(c)
            term = name_text(v) if mag == 1 else f"{mag}*{name_text(v)}"
            if not parts:
                parts.append(term if c > 0 else f"-{term}")
            else:
                parts.append(f"+ {term}" if c > 0 else f"- {term}")
        if not parts:
            return str(self.const)
        if self.const > 0:
            parts.append(f"+ {self.const}")
        elif self.const < 0:
            parts.append(f"- {-self.const}")
        return " ".join(parts)


CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")


@record
class Compare:
    """``lhs OP rhs`` on affine values."""

    lhs: Affine
    op: str
    rhs: Affine

    def eval(self, env: Mapping[str, int]) -> bool:
        a, b = self.lhs.eval(env), self.rhs.eval(env)
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[self.op]

    @property
    def variables(self) -> frozenset[str]:
        return self.lhs.variables | self.rhs.variables

    def __str__(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"


def c_rem(a: int, m: int) -> int:
    """C's (and Triton's ``arith.remsi``) remainder: truncating division, the sign of ``a``."""
    r = abs(a) % abs(m)
    return r if a >= 0 else -r


def c_div(a: int, m: int) -> int:
    """C's (and Triton's ``arith.divsi``) quotient: rounds toward zero."""
    q = abs(a) // abs(m)
    return q if (a >= 0) == (m > 0) else -q


@record
class ModCompare:
    """``expr % modulus OP rem`` with OP in ``==``/``!=``.

    ``c=False``: Python's modulo (never negative), what a Triton kernel computes on constexprs;
    ``c=True``: C's remainder (the sign of ``expr``), what it computes on runtime integers
    (``arith.remsi``). The text form writes the second as ``rem(expr, modulus)``."""

    expr: Affine
    modulus: int
    op: str
    rem: int
    c: bool = False

    def eval(self, env: Mapping[str, int]) -> bool:
        a = self.expr.eval(env)
        r = c_rem(a, self.modulus) if self.c else a % self.modulus
        return r == self.rem if self.op == "==" else r != self.rem

    @property
    def variables(self) -> frozenset[str]:
        return self.expr.variables

    def __str__(self) -> str:
        if self.c:
            return f"rem({self.expr}, {self.modulus}) {self.op} {self.rem}"
        e = str(self.expr)
        if not (self.expr.is_const or (len(self.expr.terms) == 1 and self.expr.const == 0
                                        and self.expr.terms[0][1] == 1)):
            e = f"({e})"
        return f"{e} % {self.modulus} {self.op} {self.rem}"


@record
class BoolOp:
    """``a and b and ...`` / ``a or b or ...``."""

    op: str  # "and" | "or"
    items: tuple["Cond", ...]

    def eval(self, env: Mapping[str, int]) -> bool:
        vals = (c.eval(env) for c in self.items)
        return all(vals) if self.op == "and" else any(vals)

    @property
    def variables(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for c in self.items:
            out |= c.variables
        return out

    def __str__(self) -> str:
        return f" {self.op} ".join(_paren(c, self) for c in self.items)


@record
class Not:
    item: "Cond"

    def eval(self, env: Mapping[str, int]) -> bool:
        return not self.item.eval(env)

    @property
    def variables(self) -> frozenset[str]:
        return self.item.variables

    def __str__(self) -> str:
        return f"not {_paren(self.item, self)}"


def _paren(c: "Cond", parent: object) -> str:
    return f"({c})" if isinstance(c, BoolOp) else str(c)


Cond = Union[Compare, ModCompare, BoolOp, Not]
