"""Conservative intervals of integer expressions, for the memory-race check's 64-bit arithmetic
(race_wraps.py).

The terms of race_terms.py are unbounded integers; Triton computes a 64-bit value modulo
``2 ** 64`` and an address modulo ``2 ** 64`` bytes. Wrapping every 64-bit value would give z3
an unknown for each, so a value is wrapped only where it may leave its type: :func:`span` bounds
the values an expression can take on the GPU, and a value whose bounds stay within int64 is its
integer (no wrap happens), one whose bounds do not is wrapped (race_wraps.in_type, and
race_wraps.address_wrap for an address).

The bounds are those of the value as the model reads it where a 64-bit op takes it: a number is
itself; a value of a 32-bit or narrower kind (race_kinds.kind) is wrapped into its type there
(race_wraps.settle / operand), so its type's range bounds it (a program id, a lane of a
``tl.arange`` of numbers and a loop variable over a range of numbers are tighter); a cast to a
64-bit type is its operand's value; a sum, difference or product of two values, and a left
shift by a number, is interval arithmetic; a quotient, a remainder, a right shift, ``&`` with a
number, a choice and a ``min`` / ``max`` are bounded by their operands (each, taken by a
non-ring op, in int64). Anything else of 64 bits is unbounded (None): an ``i64`` argument, a
value loaded through a ``*i64`` table or of a width the model does not know, a loop variable
over a 64-bit range, a name of several values, an op the model does not read. Where ``bases``
is set, a pointer argument counts 0: the span is then that of the offsets a pointer expression
adds to its base.
"""

from __future__ import annotations

from typing import Optional

from ..ir import kernel as K
from .race_casts import CASTS, fill_type, target_of
from .race_kinds import ANY, CONST, I32, NARROWS, U32, U64, UNKNOWN, WIDE, kind
from .race_terms import (SAME_VALUE, REBOUND, Instance, Model, _at, floating, item_of,
                         loop_of, single_value)

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1

Span = Optional[tuple[int, int]]

#: the min / max ops (race_terms._MIN_MAX)
_MIN_MAX = ("tl.minimum", "tl.maximum", "builtins.min", "builtins.max", "min", "max")


def inside(s: Span, lo: int = I64_MIN, hi: int = I64_MAX) -> bool:
    """Whether the span ``s`` is known and within ``[lo, hi]``."""
    return s is not None and lo <= s[0] and s[1] <= hi


def clamp64(s: Span) -> tuple[int, int]:
    """The span of a value ``s`` bounds, taken in int64: itself where it stays in int64, else
    int64's range (the value is wrapped)."""
    return s if inside(s) else (I64_MIN, I64_MAX)


def span(model: Model, e: K.Expr, inst: Instance, where: str, bases: bool = False,
         depth: int = 32) -> Span:
    """Bounds of the value of ``e`` at ``inst`` as a 64-bit op takes it (module docstring), or
    None where the model does not bound it."""
    key = (id(e), where, tuple((x[0], x[1]) for x in inst.site.path), bases)
    memo = model.cache.setdefault("span", {})
    if key not in memo:
        memo[key] = _span(model, e, inst, where, bases, depth)
    return memo[key]


def taken(model: Model, e: K.Expr, inst: Instance, where: str, bases: bool = False,
          depth: int = 32) -> Span:
    """The span of ``e`` where an op that is no ring operation takes it (a comparison, ``//``,
    a choice, a cast): a 64-bit value wrapped into int64 where it may leave it
    (race_wraps.in_type), a uint64 as the model keeps it (its signed value: race_wraps.unsigned
    reads it unsigned where it is divided)."""

    s = span(model, e, inst, where, bases, depth)
    return clamp64(s) if kind(model, e, inst, where) == WIDE else s


def _add(a: Span, b: Span) -> Span:
    return None if a is None or b is None else (a[0] + b[0], a[1] + b[1])


def _mul(a: Span, b: Span) -> Span:
    if a is None or b is None:
        return None
    ends = [x * y for x in a for y in b]
    return min(ends), max(ends)


def _hull(spans) -> Span:
    spans = list(spans)
    if not spans or any(s is None for s in spans):
        return None
    return min(s[0] for s in spans), max(s[1] for s in spans)


def quotient(s: Span, c: int) -> Span:
    """Bounds of ``q`` with ``|a - c q| < |c|`` for ``a`` in ``s`` (race_terms._binop's
    quotient, floor or truncation)."""
    if s is None or c == 0:
        return None
    ends = [s[0] // c, s[1] // c]
    return min(ends) - 1, max(ends) + 1


def _number(e: K.Expr) -> Optional[int]:
    if isinstance(e, (K.Const, K.Global)):
        v = getattr(e.value, "value", e.value)
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, int):
            return v
    return None


def _span(model: Model, e: K.Expr, inst: Instance, where: str, bases: bool,
          depth: int) -> Span:

    if depth <= 0:
        return None
    k = kind(model, e, inst, where)
    if k in NARROWS:
        return NARROWS[k][0], NARROWS[k][1]
    if k == U32:
        return 0, 2 ** 32 - 1
    if k == I32:
        return _int32(model, e, inst, where, depth)
    if k in (ANY, UNKNOWN):
        return None
    # a number, or a 64-bit value: its structure
    n = _number(e)
    if n is not None:
        return n, n
    sub = lambda x, at=inst, w=where: span(model, x, at, w, bases, depth - 1)  # noqa: E731
    took = lambda x: taken(model, x, inst, where, bases, depth - 1)  # noqa: E731
    if isinstance(e, K.Name):
        if where == "part" and loop_of(inst.site, e.id) is not None:
            return None  # a loop variable over a 64-bit range (or bound again)
        got = single_value(model, e.id, inst, where)
        if got is not None:
            value, w, site = got
            return sub(value, inst if site is None else _at(inst, site), w)
        if _argument_read(model, e.id, inst, where):
            if e.id in model.pointers:
                return (0, 0) if bases else None  # the base itself
            return _argument(model, e.id)
        return None
    if isinstance(e, K.Subscript):
        if len(e.index) == 1 and isinstance(e.index[0], int):
            got = item_of(model, e, inst, where)
            return None if got is None else sub(got[0], got[1], got[2])
        return sub(e.value)
    if isinstance(e, K.UnaryOp):
        s = sub(e.operand)
        if s is None:
            return None
        return {"-": (-s[1], -s[0]), "+": s, "~": (-s[1] - 1, -s[0] - 1)}.get(e.op)
    if isinstance(e, K.BinOp):
        return _binop(model, e, inst, where, bases, depth, k)
    if isinstance(e, K.Op):
        if e.name in CASTS or fill_type(e) is not None or e.name in ("tl.full", "tl.zeros"):
            if e.name == "tl.zeros":
                return 0, 0
            x = e.args[1] if e.name == "tl.full" and len(e.args) >= 2 else \
                e.kw("value") if e.name == "tl.full" else e.args[0] if e.args else None
            if x is None or target_of(e) not in ("int64", "uint64"):
                return None
            if floating(model, x, inst, where):
                # a float truncated into the type (race_terms._cast): any value of it
                return (I64_MIN, I64_MAX) if target_of(e) == "int64" else (0, 2 ** 64 - 1)
            return took(x)  # (race_terms._cast takes its operand in its type)
        if e.name in SAME_VALUE and e.args:
            return sub(e.args[0])
        if e.name in ("tl.where", "ifexp") and len(e.args) == 3:
            return _hull(took(x) for x in e.args[1:])
        if e.name in _MIN_MAX and len(e.args) >= 2:
            return _hull(took(x) for x in e.args)
        if e.name == "tl.cdiv" and len(e.args) == 2:
            c = _number(e.args[1])
            if not c:
                return None
            return quotient(_divided(model, e.args[0], inst, where, bases, depth, c - 1), c)
        return None  # a load of a 64-bit value, an op the model does not read
    return None


def _binop(model: Model, e: K.BinOp, inst: Instance, where: str, bases: bool, depth: int,
           k: str) -> Span:
    """The span of a 64-bit (or numbers') ``+``, ``-``, ``*``, shift, ``//``, ``%`` or ``&``.
    An operand of the result's kind is its value as it is (a ring operation does not wrap it);
    one of a narrower kind is wrapped into its type (race_wraps.settle), which its span
    bounds; a 64-bit operand of a uint64 op is taken in int64."""

    def operand(x):
        s = span(model, x, inst, where, bases, depth - 1)
        kx = kind(model, x, inst, where)
        return s if kx in (k, CONST) else taken(model, x, inst, where, bases, depth - 1)

    if e.op in ("+", "-", "*"):
        a, b = operand(e.lhs), operand(e.rhs)
        if e.op == "*":
            return _mul(a, b)
        if e.op == "-":
            b = None if b is None else (-b[1], -b[0])
        return _add(a, b)
    c = _number(e.rhs)
    if c is None:
        return None
    if e.op == "<<":
        return _mul(operand(e.lhs), (1 << c, 1 << c)) if 0 <= c < 64 else None
    if e.op in ("//", ">>"):
        if e.op == ">>" and not 0 <= c < 64:
            return None
        return quotient(_divided(model, e.lhs, inst, where, bases, depth, 0),
                        c if e.op == "//" else 1 << c)
    if e.op == "%":
        return (-abs(c) + 1, abs(c) - 1) if c else None
    if e.op == "&":
        return (0, c) if c >= 0 else None
    return None


def _divided(model: Model, x: K.Expr, inst: Instance, where: str, bases: bool, depth: int,
             plus: int) -> Span:
    """The span of the dividend ``x`` (plus ``plus``: tl.cdiv's ``c - 1``) as a division or a
    right shift reads it: in int64 where it may leave it, a uint64 unsigned."""

    kx = kind(model, x, inst, where)
    s = span(model, x, inst, where, bases, depth - 1)
    if kx == U64:
        return 0, 2 ** 64 - 1
    if kx == WIDE:
        s = clamp64(_add(clamp64(s), (plus, plus)))
    else:
        s = _add(s, (plus, plus))
    return s


def _int32(model: Model, e: K.Expr, inst: Instance, where: str, depth: int) -> Span:
    """The span of an int32 value: its number, a program id's ``[0, 2 ** 31)``, a lane of
    ``tl.arange(a, b)`` of numbers ``[a, b)``, a loop variable over a range of numbers that
    range, the name of one of them; else int32's range (a value made by arithmetic is wrapped
    into it where a 64-bit op takes it)."""
    whole = (-2 ** 31, 2 ** 31 - 1)
    n = _number(e)
    if n is not None:
        return n, n
    if isinstance(e, K.Op):
        if e.name == "tl.program_id":
            return 0, 2 ** 31 - 1
        if e.name == "tl.num_programs":
            return 1, 2 ** 31 - 1
        if e.name == "tl.arange" and len(e.args) == 2:
            a, b = _number(e.args[0]), _number(e.args[1])
            if a is not None and b is not None and a < b:
                return a, b - 1
        if e.name in SAME_VALUE and e.args and depth > 0:
            return _int32(model, e.args[0], inst, where, depth - 1)
        return whole
    if isinstance(e, K.Name) and depth > 0:
        if where == "part":
            loop = loop_of(inst.site, e.id)
            if loop is REBOUND:
                return whole
            if isinstance(loop, K.For):
                ends = [_number(x) for x in (loop.start, loop.stop)]
                if None in ends:
                    return whole
                return min(ends), max(ends)
            if loop is not None:
                return whole
        got = single_value(model, e.id, inst, where)
        if got is not None:
            value, w, site = got
            return _int32(model, value, inst if site is None else _at(inst, site), w, depth - 1)
        if _argument_read(model, e.id, inst, where):
            got = _argument(model, e.id)
            if got is not None and whole[0] <= got[0] and got[1] <= whole[1]:
                return got
    return whole


def _argument_read(model: Model, name: str, inst: Instance, where: str) -> bool:
    """Whether ``name`` read at ``inst`` is the kernel argument (race_terms._name's rule)."""
    local = inst.part.assigns if where == "part" else model.prologue_assigns
    return name in model.params and name not in local and \
        (where == "prologue" or name not in dict(inst.part.kp.bindings))


def _argument(model: Model, name: str) -> Span:
    """The span of an integer kernel argument: its number where the kernel is read with one (a
    constexpr), its ``tle.assume`` range where both ends are given (facts of the model too),
    else None."""
    if name in model.constexprs:
        return model.constexprs[name], model.constexprs[name]
    lo, hi = model.domains.get(name, (None, None))
    return None if lo is None or hi is None else (lo, hi)

