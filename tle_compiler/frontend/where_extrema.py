"""``tl.where`` calls that compute a maximum or a minimum of their two values (adversarial round
48).

``tl.where(N > 0, N, 0)`` is ``tl.maximum(N, 0)``: where ``N > 0`` it is ``N``, elsewhere ``0``,
and at ``N == 0`` both are ``0``. A kernel that clamps a trip count so was refused (a loop over
it: `non-affine-loop`; a kernel-body value: an opaque param unrelated to N, so a writer looping
over it and a reader over N "deadlocked" at values no launch gives), where ``tl.maximum`` is a
derived param of its operands. :func:`where_extremum` recognises the pattern, and the walker
reads the call as the ``tl.maximum`` / ``tl.minimum`` it equals (protocol.py, the call of a
Triton function), with one key for both spellings.

The comparison's two sides must be the two values themselves (KIR's ``==`` ignores locations),
of names, constants and arithmetic only: a side that calls a function (``tl.load(p) > 0`` beside
another ``tl.load(p)``) may give another value at each call.
"""

from __future__ import annotations

from typing import Optional

from ..ir import kernel as K

#: the comparison (of `a` with `b`) whose true branch takes `a` (the larger of the two)
_TAKES_LARGER = {">": True, ">=": True, "<": False, "<=": False}


def _plain(e: K.Expr) -> bool:
    """Whether ``e`` reads only names, constants and operators (the same value wherever it is
    written, with the names it reads unchanged)."""
    return all(isinstance(x, (K.Name, K.Const, K.Global, K.BinOp, K.UnaryOp))
               for x in K.walk_expr(e))


def where_extremum(node: K.Op) -> Optional[str]:
    """``"maximum"`` or ``"minimum"`` where ``node`` is ``tl.where(a OP b, x, y)`` (positional)
    with ``{x, y}`` the two sides ``{a, b}`` of the comparison ``OP`` (``<``, ``<=``, ``>``,
    ``>=``), which is then ``tl.maximum(x, y)`` / ``tl.minimum(x, y)``; None otherwise."""
    if node.name != "tl.where" or len(node.args) != 3 or node.kwargs:
        return None
    cond, x, y = node.args
    if not (isinstance(cond, K.Compare) and cond.op in _TAKES_LARGER):
        return None
    if not (_plain(x) and _plain(y)) or x == y:
        return None
    larger = _TAKES_LARGER[cond.op]  # x is taken where `a OP b`: x is a
    if (cond.lhs, cond.rhs) == (x, y):
        return "maximum" if larger else "minimum"
    if (cond.lhs, cond.rhs) == (y, x):
        return "minimum" if larger else "maximum"
    return None
