"""Which element types a value loaded through a pointer of no known element type may have, and
which of them keep what the verifier read of it (adversarial round 50).

Without a DEFAULT_CONFIG signature the launch gives a pointer's element type, and the verifier
reads what is loaded through it as a 32-bit integer. frontend/load_signs.py covers the uint32 a
launch may pass instead (Triton compares it unsigned). The other types differ otherwise:

* an int1 (``*i1``): a loop bound of it is sign-extended (True is -1), a comparison
  zero-extends it;
* an 8- or 16-bit integer (``*i8``, ``*i16``, ``*u8``, ``*u16``): Triton computes arithmetic of
  the value and Python numbers in that type (``n + 1`` of an int8 127 is -128; a number that
  fits the type takes it), so a ``while`` counter ``k = tl.load(p); while k < 200: k += 1``
  wraps before it reaches the bound and never ends, and ``range(n + 1)`` of a kernel-body ``n =
  tl.load(p) & 127`` runs no iteration at n = 127 while ``range(n)`` beside it runs 127;
* a float (``*fp16``, ``*bf16``, ``*fp32``, ``*fp64``): a value between two integers, or an
  infinity: ``p + 1 <= n`` and ``p < n`` of n = 2.5 differ at p = 2, a float counter's ``k += 1``
  stops changing it (2^24 in fp32), and an integer counter never reaches ``inf``.

A 64-bit value keeps its reading inside i32 (the verdict's i32 caveat covers a launch beyond).
Each place the verifier rests on such a load notes the element types it holds for (a frozenset
of :data:`TYPES`); the verdict is then qualified to them (cli/kernel_checks.py check_signed_loads,
:func:`phrase`): "only for cnt_ptr in signed integer element types".
"""

from __future__ import annotations

from typing import Optional

from ..ir import kernel as K
from ..ir.nodes import LOAD_TYPES
from .params import is_placeholder
from .values import Aff, Data, KernelArg, Sym

#: the element types a pointer of no known type may have, a float standing for every float type
#: (an int1 is compared zero-extended, as 0 or 1; a loop bound widens it by sign extension:
#: BOUNDS)
NARROW = {"int1": (0, 1), "int8": (-(1 << 7), (1 << 7) - 1),
          "int16": (-(1 << 15), (1 << 15) - 1), "uint8": (0, (1 << 8) - 1),
          "uint16": (0, (1 << 16) - 1)}
#: (ir/nodes.LOAD_TYPES: the names a .pipe file's `loaded` lines may give)
TYPES = LOAD_TYPES
INTEGERS = TYPES - {"float"}
SIGNED = frozenset({"int8", "int16", "int32", "int64"})
#: the types in which a loop bound of the loaded value is the verifier's: Triton widens an int1
#: bound by sign extension (True is -1: `range(n)` runs no iteration where the verifier's 1
#: runs one)
BOUNDS = TYPES - {"int1"}
#: the types in which the arithmetic of an integer of 32 bits or more is the verifier's
WIDE_INTEGERS = frozenset({"int32", "uint32", "int64", "uint64"})
#: the types in which arithmetic of the value with Python numbers wraps where the verifier's
#: integer does (none of 1, 8 or 16 bits): what an event index or loop bound computed so keeps
NOT_NARROW = TYPES - frozenset(NARROW)

#: arithmetic that may leave an 8- or 16-bit type (a quotient, remainder or right shift of such
#: a value stays inside it)
_WRAPPING = ("+", "-", "*", "<<")


def phrase(types: frozenset) -> str:
    """The element types ``types`` in words, as a verdict's qualification names them: a name of
    the set, else those left out where they are few, else the types."""
    named = {INTEGERS: "integer element types", SIGNED: "signed integer element types",
             WIDE_INTEGERS: "integer element types of 32 or 64 bits",
             WIDE_INTEGERS | {"float"}: "integer element types of 32 or 64 bits, or float",
             frozenset({"int32", "int64"}): "signed integer element types of 32 or 64 bits",
             frozenset({"int32"}): "int32 element types"}
    if types in named:
        return named[types]
    others = TYPES - types
    if types and len(others) <= 3:
        return f"element types other than {_listed(others)}"
    return f"{_listed(types)} element types"


def _listed(types) -> str:
    """``types`` in one order (signed, unsigned, float; by width), as `a, b or c`."""
    order = sorted(types, key=lambda t: (t == "float", t.startswith("u"), len(t), t))
    return ", ".join(order[:-1]) + " or " + order[-1] if len(order) > 1 else order[0]


def own_typed(walker, e: K.Expr, depth: int = 24) -> Optional[str]:
    """The pointer of a load of no known element type whose type Triton computes ``e`` in
    (``e`` is such a load, a kernel-body value of one, or arithmetic of such values and Python
    numbers, which take the tensor's type), else None (a number alone, a loop variable, a value
    of a known type: arithmetic beside it is computed in its type)."""
    if depth <= 0:
        return None
    if isinstance(e, K.Name):
        v = walker.env.get(e.id)
        # (a kernel-body value: KernelCtx.own_typed_params, noted where it was computed; an
        # affine value computed in the load's type: KernelCtx.narrow_values)
        if isinstance(v, Aff) and v.expr in walker.k.narrow_values:
            return walker.k.narrow_values[v.expr][0]
        if isinstance(v, Sym):
            return walker.k.own_typed_params.get(v.param)
        if isinstance(v, Aff) and len(v.expr.terms) == 1 and v.expr.const == 0 \
                and v.expr.terms[0][1] == 1:
            var = v.expr.terms[0][0]
            return walker.k.own_typed_params.get(var) if is_placeholder(var) else None
        if isinstance(v, Data) and not v.shared and v.node is not None:
            return own_typed(walker, v.node, depth - 1)
        return None
    if walker.tile_dtype(e) is not None:
        return None
    if isinstance(e, K.Op):
        from .load_signs import untyped_load
        if e.name in ("tl.where", "tl.maximum", "tl.minimum"):
            # (tl.maximum makes a number an int32 tensor first: tl.maximum(n, 0) of an int8 n
            # is an int32; tl.where gives it the other value's type: tl.where(c, n, 0) is an
            # int8)
            items = e.args[1:] if e.name == "tl.where" else e.args
            found = [own_typed(walker, x, depth - 1) for x in items]
            weak = [e.name == "tl.where" and _number(walker, x) for x in items]
            pointers = {f for f in found if f is not None}
            if len(pointers) == 1 and all(f is not None or w for f, w in zip(found, weak)):
                return pointers.pop()
            return None
        return untyped_load(walker, e)
    if isinstance(e, K.UnaryOp) and e.op in ("-", "+", "~"):
        return own_typed(walker, e.operand, depth - 1)
    if isinstance(e, K.BinOp) and e.op in ("+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"):
        sides = [own_typed(walker, x, depth - 1) for x in (e.lhs, e.rhs)]
        numbers = [_number(walker, x) for x in (e.lhs, e.rhs)]
        if all(s is not None or n for s, n in zip(sides, numbers)) and any(sides):
            return next(s for s in sides if s is not None)
    return None


def _number(walker, e: K.Expr) -> bool:
    """Whether ``e`` is a Python number (a literal, a module constant, a constexpr argument or
    a value computed from them, a tl.static_range variable), which Triton gives the type of the
    tensor beside it."""
    v = walker.literal_int(e)
    if v is not None:
        return not isinstance(v, bool) and not any(
            isinstance(x, K.Name) and isinstance(walker.env.get(x.id), (Sym, Data))
            for x in K.walk_expr(e))
    if isinstance(e, K.Name):
        v = walker.env.get(e.id)
        return isinstance(v, KernelArg) and v.constexpr or isinstance(v, Aff) and not v.runtime
    if isinstance(e, K.BinOp) and e.op in ("+", "-", "*", "//", "%", "<<", ">>"):
        return _number(walker, e.lhs) and _number(walker, e.rhs)
    return False


def narrow_arithmetic(walker, e: K.Expr, depth: int = 24) -> Optional[tuple[str, K.Expr]]:
    """The pointer and the expression of the first ``+``, ``-``, ``*``, ``<<`` or negation in
    ``e`` (through names bound to values of the kernel) that Triton computes in the type of a
    load of no known element type (:func:`own_typed`): in a type of :data:`NARROW` it may wrap
    where the verifier's integer does not. None where there is none."""
    if depth <= 0:
        return None
    for x in K.walk_expr(e):
        if isinstance(x, K.BinOp) and x.op in _WRAPPING or \
                isinstance(x, K.UnaryOp) and x.op == "-":
            pointer = own_typed(walker, x)
            if pointer is not None and not (isinstance(x, K.UnaryOp) and
                                            _number(walker, x.operand)):
                return pointer, x
        if isinstance(x, K.Name):
            v = walker.env.get(x.id)
            if isinstance(v, Aff) and v.expr in walker.k.narrow_values:
                return walker.k.narrow_values[v.expr]  # (`m = n + 1`, then `range(m)`)
            if isinstance(v, Data) and not v.shared and v.node is not None and v.node is not e:
                found = narrow_arithmetic(walker, v.node, depth - 1)
                if found is not None:
                    return found
    return None


def first_float_read(walker, exprs) -> Optional[str]:
    """The pointer of a load of no known element type whose value one of ``exprs`` reads other
    than through a loop variable (Triton refuses a float loop bound, so a loop over such a load
    runs only where it is an integer), else None: where that load is a float, the expression
    may be a number between two integers."""
    from .load_signs import untyped_source

    return next((p for p in (untyped_source(walker, x, through_loops=False) for x in exprs)
                 if p is not None), None)
