"""Casts and typed fills as the memory-race check reads them (race_terms.py, race_wraps.py,
global_races.py).

Triton spells one conversion four ways: ``x.to(T)``, ``x.to(dtype=T)``, ``tl.cast(x, T)`` and
``x.cast(T)`` (the frontend reads the member as ``tl.cast``), and a fill takes its element type
from its dtype argument: ``tl.full(shape, v, T)`` is ``v`` cast to ``T`` (Triton's
``make_scalar``), ``tl.zeros(shape, T)`` a 0 of ``T``. The check read only ``x.to(T)`` with a
positional type: ``(t + 1).cast(tl.int64) * 67108864`` was read as int32 arithmetic, wrapped
where Triton computes it in int64 (adversarial round 38).
"""

from __future__ import annotations

from typing import Optional

from ..ir import kernel as K

#: the ops that convert their first argument to the type their second (or ``dtype=``) names
CASTS = ("to", "tl.cast")


def cast_type(e: K.Expr) -> Optional[K.Expr]:
    """The type expression of a cast ``e`` (positional or ``dtype=``), or None where ``e`` is
    no cast or names none."""
    if not (isinstance(e, K.Op) and e.name in CASTS and e.args):
        return None
    return e.args[1] if len(e.args) > 1 else e.kw("dtype")


def cast_target(e: K.Expr) -> Optional[str]:
    """The name of the type a cast ``e`` converts to (``"int64"``), where it names a dtype."""
    t = cast_type(e)
    return t.name if isinstance(t, K.DType) else None


def pointer_cast(e: K.Expr) -> bool:
    """Whether ``e`` is a cast to a pointer type (``x.to(tl.pointer_type(tl.float32))``)."""
    t = cast_type(e)
    return isinstance(t, K.Op) and "pointer" in t.name


def fill_type(e: K.Expr) -> Optional[str]:
    """The element type a ``tl.full(shape, value, dtype)`` or ``tl.zeros(shape, dtype)`` names,
    or None."""
    if not isinstance(e, K.Op) or e.name not in ("tl.full", "tl.zeros"):
        return None
    at = 2 if e.name == "tl.full" else 1
    t = e.args[at] if len(e.args) > at else e.kw("dtype")
    return t.name if isinstance(t, K.DType) else None


def target_of(e: K.Expr) -> Optional[str]:
    """The integer type ``e`` converts to: a cast's target or a fill's element type."""
    return cast_target(e) or fill_type(e)
