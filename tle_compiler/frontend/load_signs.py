"""Which integers come from a load whose element type the kernel file does not give, so that
their signedness is not known (adversarial round 48).

A value loaded through a pointer is as signed as the pointer's element type: through a ``*u32``
pointer Triton compares it unsigned (``k >= 0`` is ``arith.cmpi uge``, always true). Where
DEFAULT_CONFIG's signature types the pointer, :meth:`Walker.tile_dtype` knows the type and the
counter rule (frontend/loop_ends.py) reads the comparison as Triton does. Without a signature
(or through a pointer computed from several arguments) the type is the launch's: the value may
be a uint32 as well as the int32 the verifier reads, and a ``while`` loop whose ending holds only
for the signed reading (``k = tl.load(cnt_ptr); while k >= 0: k -= 1``) is not proved, nor a
comparison deciding pipe events whose truth may differ unsigned (:func:`unsigned_compare`:
``p - 1 >= -1`` over ``range(n)`` of such a load, whose variable Triton types as the bounds).

:func:`untyped_source` follows a value through names, arithmetic, ``tl.where`` /
``tl.maximum`` / ``tl.minimum``, reductions and shape functions back to such a load (in a
partition, the load itself; in the kernel body, or a kernel-body value handed to a partition, the
param it became; a loop variable over one: KernelCtx.untyped_params notes both); a cast
(``.to(tl.int32)``) or an operand of a known 64-bit or other known type fixes the type, and ends
the search. What an 8- or 16-bit integer or a float loaded so changes is
frontend/load_types.py's (adversarial round 50); a 64-bit one is read inside i32 (the
verdict's i32 caveat).
"""

from __future__ import annotations

from typing import Optional

from ..ir import kernel as K
from .params import is_placeholder
from .values import Aff, Data, KernelArg, Sym

#: operators whose integer result has the promoted type of their operands
_ARITHMETIC = ("+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>")
#: functions whose result keeps the type of a 32-bit integer operand (the first): reductions
#: (`tl.sum` of uint32 tiles is a uint32), shape and hint functions
_KEEPS_TYPE = frozenset({
    "tl.sum", "tl.max", "tl.min", "tl.xor_sum", "tl.cumsum", "tl.cumprod", "tl.abs",
    "tl.clamp", "tl.reshape", "tl.ravel", "tl.view", "tl.broadcast_to", "tl.expand_dims",
    "tl.multiple_of", "tl.max_contiguous", "tl.max_constancy", "tl.trans", "tl.permute",
    "tl.sort", "tl.flip"})


def untyped_load(walker, e: K.Expr) -> Optional[str]:
    """The pointer argument (its name, else the pointer's text) that the global load ``e``
    reads through, where ``e`` is a ``tl.load`` or atomic of global memory whose element type
    the frontend does not know (:meth:`tile_dtype` says nothing); else None."""
    if not (isinstance(e, K.Op) and e.args and
            (e.name == "tl.load" or e.name.startswith("tl.atomic_"))):
        return None
    if walker.tile_dtype(e) is not None:
        return None
    names = []
    for x in K.walk_expr(e.args[0]):
        v = walker.env.get(x.id) if isinstance(x, K.Name) else None
        if isinstance(v, Data) and v.shared:
            return None  # a load of shared memory: a slot's or buffer's type
        if isinstance(v, KernelArg) and v.name not in names:
            names.append(v.name)
    return names[0] if len(names) == 1 else walker.src(e.args[0])


def untyped_source(walker, e: K.Expr, depth: int = 24,
                   seen: frozenset = frozenset(), through_loops: bool = True) -> Optional[str]:
    """The pointer (:func:`untyped_load`) of a load of unknown element type that the integer
    ``e`` is computed from with its type unchanged, or None where ``e``'s type is known (a
    cast, a typed load, a kernel argument, a number) or it reads no such load. Without
    ``through_loops``, a loop variable over such a load is no such value (a float loop bound is
    refused by Triton: frontend/load_types.py)."""
    if depth <= 0:
        return None
    if isinstance(e, K.Name):
        v = walker.env.get(e.id)
        if isinstance(v, (Sym, Aff)):
            # (a param, or a loop variable over such a count: KernelCtx.untyped_params)
            phs = [v.param] if isinstance(v, Sym) else list(v.expr.variables)
            if not through_loops:
                phs = [ph for ph in phs if is_placeholder(ph)]
            for ph in phs:
                src = walker.k.untyped_params.get(ph)
                if src is not None:
                    return src
            return None
        if isinstance(v, Data) and not v.shared and v.node is not None \
                and id(v.node) not in seen:
            return untyped_source(walker, v.node, depth - 1, seen | {id(v.node)}, through_loops)
        return None
    if walker.tile_dtype(e) is not None:
        return None  # (a cast, a fill, a typed load: its type is known)
    if isinstance(e, K.Op):
        if e.name in ("tl.where", "tl.maximum", "tl.minimum"):
            items = e.args[1:] if e.name == "tl.where" else e.args
            return _first(walker, items, depth, seen, through_loops)
        if e.name in _KEEPS_TYPE and e.args:
            return untyped_source(walker, e.args[0], depth - 1, seen, through_loops)
        return untyped_load(walker, e)
    if isinstance(e, K.UnaryOp) and e.op in ("-", "+", "~"):
        return untyped_source(walker, e.operand, depth - 1, seen, through_loops)
    if isinstance(e, K.BinOp) and e.op in _ARITHMETIC:
        return _first(walker, (e.lhs, e.rhs), depth, seen, through_loops)
    return None


def first_untyped(walker, exprs) -> Optional[str]:
    """:func:`untyped_source` of the first of ``exprs`` that reads such a load, or None."""
    return next((p for p in (untyped_source(walker, x) for x in exprs) if p is not None), None)


def _first(walker, items, depth: int, seen: frozenset,
           through_loops: bool = True) -> Optional[str]:
    """:func:`untyped_source` of the first of the operands ``items`` that reads such a load,
    unless another is a known 64-bit integer (beside which a 32-bit value is promoted to a
    signed int64)."""
    if any(walker.scalar_int_type(x) in ("int64", "uint64") for x in items):
        return None
    for x in items:
        src = untyped_source(walker, x, depth - 1, seen, through_loops)
        if src is not None:
            return src
    return None


def unsigned_compare(walker, cond: K.Expr) -> Optional[tuple[str, K.Expr]]:
    """The pointer and the comparison of the first comparison in ``cond`` (through ``and`` /
    ``or`` / ``not``) whose truth may depend on whether a value loaded through a pointer of no
    known element type is signed: one side reads such a load (:func:`untyped_source`), neither
    is a known 64-bit integer (beside which it is compared signed), and a side may be negative
    as the verifier reads it (a negative value is past 2^31 - 1 as a uint32: `p - 1 >= -1`
    holds at p = 0 only). None where every comparison reads both sides the same either way."""
    for e in K.walk_expr(cond):
        if not (isinstance(e, K.Compare) and e.op in ("<", "<=", ">", ">=")):
            continue
        sides = (e.lhs, e.rhs)
        if any(walker.scalar_int_type(x) in ("int64", "uint64") for x in sides):
            continue
        pointer = first_untyped(walker, sides)
        if pointer is None:
            continue
        if all(_nonnegative(walker, x) for x in sides):
            continue
        return pointer, e
    return None


def _nonnegative(walker, e: K.Expr) -> bool:
    """Whether ``e`` is an integer affine in params and loop variables that is never negative
    over their ranges as the verifier reads them (then its bits are the same number as a
    uint32)."""
    v = walker.eval_quiet(e)
    aff = walker.as_aff(v) if v is not None else None
    return aff is not None and walker.nonneg(aff)
