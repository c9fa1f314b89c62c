"""The kinds of integer values the memory-race check reads (global_races.py): which type each
value of an address, a mask or a condition has on the GPU -- a Python number, int32, uint32, a
narrow type, a 64-bit one, or a value of unknown width -- as Triton 3.6 types it (:func:`kind`).
race_wraps.py wraps each value in its type's width; race_spans.py bounds 64-bit values; both
read the kinds from here.
"""

from __future__ import annotations

from typing import Optional

from ..ir import kernel as K
from ..ir.promotion import computation_type
from .race_casts import CASTS, fill_type, target_of
from .race_terms import (COMPOSED, INTEGER_TYPES, NARROW_CASTS, REBOUND, SAME_VALUE, Instance,
                         Model, _at, item_of, loop_of, single_value)

I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1

#: kinds of integer values (:func:`kind`), least to most precedence in a promotion; ANY: a
#: value of 32 bits or more whose width the model does not know (a load, a reduction): an
#: int32, a uint32 or a 64-bit value. A value of a type narrower than 32 bits has the type's
#: name as its kind (:data:`NARROWS`), below I32, its promotion among them Triton's.
CONST, I32, U32, ANY, WIDE, U64, UNKNOWN = ("const", "i32", "u32", "any", "64", "u64", "unknown")
#: (uint64 after int64: Triton promotes int64 beside uint64 to uint64)
_ORDER = (CONST, I32, U32, ANY, WIDE, U64, UNKNOWN)

#: the narrow kinds: (least value, greatest value, the modulus their arithmetic wraps at), the
#: ranges of race_terms.NARROW_CASTS; int1 is unsigned in Triton, its arithmetic wraps at 2
#: (a cast to it, NARROW_CASTS' None, is whether the value is nonzero)
NARROWS = {t: (lo, hi, mod or 2) for t, (lo, hi, mod) in NARROW_CASTS.items() if t != "uint32"}

#: ops whose value is an int32 (the others the model does not read are ANY)
_INT32_OPS = ("tl.arange", "tl.program_id", "tl.num_programs")


def kind(model: Model, e: K.Expr, inst: Instance, where: str, depth: int = 32) -> str:
    """The kind of integer ``e`` is at ``inst``: 64-bit, uint32, int32, narrow, a Python
    number (which takes the other operand's type), or unknown (past the walk's depth)."""
    key = (id(e), where, tuple((x[0], x[1]) for x in inst.site.path))
    memo = model.cache.setdefault("kind", {})
    if key not in memo:
        memo[key] = _kind(model, e, inst, where, depth)
    return memo[key]


def _join(kinds) -> str:
    """The kind of an operation on values of ``kinds``: the widest (a 32-bit or wider kind
    beside a narrow one is the result's, as Triton promotes it), among narrow kinds alone
    Triton's promotion of their types (int8 beside uint8: uint8), a number beside them none."""
    kinds = list(kinds)
    if not kinds:
        return I32
    wide = [k for k in kinds if k not in NARROWS]
    top = max(wide, key=_ORDER.index) if wide else CONST
    if top != CONST:
        return top
    narrow = [k for k in kinds if k in NARROWS]
    if not narrow:
        return CONST
    t = narrow[0]
    for k in narrow[1:]:
        t = computation_type(t, k) or UNKNOWN
    if t == "int1" and CONST in kinds:
        # a Python number beside an int1 (a `.to(tl.int1)`, an `i1` argument) is an int32, and
        # the int1 zero-extended to it (`t.to(tl.int1) * 5` is 0 or 5, not 5 modulo 2); beside
        # the other narrow types the number takes their type (`x.to(tl.int8) + 100` is int8)
        return I32
    return t


def _number_kind(v: int) -> str:
    """Triton's type of an integer written in a kernel: int32, uint32, else 64-bit."""
    return I32 if I32_MIN <= v <= I32_MAX else U32 if 0 <= v < 2 ** 32 else \
        U64 if 2 ** 63 <= v < 2 ** 64 else WIDE


def _kind(model: Model, e: K.Expr, inst: Instance, where: str, depth: int) -> str:
    if depth <= 0:
        return UNKNOWN
    if isinstance(e, (K.Const, K.Global)):
        v = getattr(e.value, "value", e.value)  # tl.constexpr(64)
        if isinstance(v, bool):
            # a Python bool beside a tensor is an int1 (`t.to(tl.int1) + True` adds in int1,
            # 0 at t != 0), where a Python int beside an int1 makes an int32 (_join)
            return "int1"
        if isinstance(v, int):
            return CONST if I32_MIN <= v <= I32_MAX else _number_kind(v)
        return CONST
    if isinstance(e, K.Name):
        return _name(model, e.id, inst, where, depth)
    if isinstance(e, K.Subscript):
        if len(e.index) == 1 and isinstance(e.index[0], int):
            got = item_of(model, e, inst, where)
            if got is None:
                return I32
            item, at, w = got
            return kind(model, item, at, w, depth - 1)
        return kind(model, e.value, inst, where, depth - 1)  # a broadcast
    if isinstance(e, (K.UnaryOp, K.BinOp)):
        v = _python_value(model, e)
        if v is not None:
            # arithmetic of numbers alone is Python's, at compile time (`-2147483648` is the
            # int32 -2 ** 31, not the negation of the uint32 2147483648; `2147483648 - 1` an
            # int32): typed by its value where it meets a tensor, as a number written there
            return CONST if I32_MIN <= v <= I32_MAX else _number_kind(v)
    if isinstance(e, K.UnaryOp):
        return kind(model, e.operand, inst, where, depth - 1)
    if isinstance(e, K.BinOp):
        return _join([kind(model, e.lhs, inst, where, depth - 1),
                      kind(model, e.rhs, inst, where, depth - 1)])
    if isinstance(e, K.Op):
        if e.name in CASTS or fill_type(e) is not None or e.name in ("tl.full", "tl.zeros"):
            # the type a cast or a fill names (`x.to(dtype=tl.int64)`, `x.cast(tl.int64)`,
            # `tl.full([64], t, tl.int64)`); an unknown one: any width
            return _type_kind(target_of(e))
        args = e.args
        if e.name in SAME_VALUE:
            args = args[:1]
        elif e.name in ("tl.where", "ifexp") and len(args) == 3:
            args = args[1:]
        elif e.name in _INT32_OPS:
            return I32  # a lane, a program id
        elif e.name == "tl.load":
            return _load_kind(model, e, inst, where)
        elif e.name not in COMPOSED:
            return ANY  # a loaded value, a reduction: 32 bits or more
        k = _join(kind(model, a, inst, where, depth - 1) for a in args)
        return I32 if k == CONST else k
    return I32


#: the operators of Python's integer arithmetic :func:`_python_value` computes
_PY_BINOPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
              "//": lambda a, b: a // b, "%": lambda a, b: a % b, "&": lambda a, b: a & b,
              "|": lambda a, b: a | b, "^": lambda a, b: a ^ b}


def _python_value(model: Model, e: K.Expr, depth: int = 16) -> Optional[int]:
    """The value of ``e`` where it is arithmetic of integer numbers alone (written ones, module
    constants, constexprs the kernel is read with), which Triton computes in Python when it
    compiles the kernel; else None (a tensor, a free constexpr, a float, a shift or a product
    past 2 ** 64, a division by zero)."""
    if depth <= 0:
        return None
    if isinstance(e, (K.Const, K.Global)):
        v = getattr(e.value, "value", e.value)
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(e, K.Name):
        v = model.constexprs.get(e.id)
        return v if e.id in model.params and isinstance(v, int) else None
    if isinstance(e, K.UnaryOp) and e.op in ("-", "+", "~"):
        v = _python_value(model, e.operand, depth - 1)
        return None if v is None else -v if e.op == "-" else v if e.op == "+" else ~v
    if isinstance(e, K.BinOp) and e.op in _PY_BINOPS:
        a = _python_value(model, e.lhs, depth - 1)
        b = _python_value(model, e.rhs, depth - 1)
        if a is None or b is None or e.op in ("//", "%") and b == 0:
            return None
        v = _PY_BINOPS[e.op](a, b)
        return v if -2 ** 64 <= v < 2 ** 65 else None
    return None


def _load_kind(model: Model, e: K.Op, inst: Instance, where: str) -> str:
    """The kind of a value ``tl.load`` reads: its pointer's element type where the signature
    types the one pointer argument the pointer may be based on (an ``*i8`` table holds int8
    values, whose arithmetic wraps in int8), else :data:`ANY`."""
    ptr = e.args[0] if e.args else e.kw("pointer")
    if not model.elements or ptr is None or model.based_on is None:
        return ANY
    based = model.based_on(ptr, inst, where)
    if len(based) != 1:
        return ANY
    return _type_kind(model.elements.get(next(iter(based))))


def _type_kind(t: Optional[str]) -> str:
    """The kind of a value of the integer type named ``t`` (None, a float: :data:`ANY`; a narrow
    type: its name)."""
    if t in ("int64", "uint64"):
        return WIDE if t == "int64" else U64
    if t in ("int32", "uint32"):
        return I32 if t == "int32" else U32
    return t if t in NARROWS else ANY


def _name(model: Model, name: str, inst: Instance, where: str, depth: int) -> str:
    local = inst.part.assigns if where == "part" else model.prologue_assigns
    if where == "part":
        loop = loop_of(inst.site, name)
        if loop is REBOUND:
            return _several(model, name, local, where)
        if isinstance(loop, K.For):  # the variable has its range's type
            k = _join(kind(model, x, inst, where, depth - 1)
                      for x in (loop.start, loop.stop, loop.step))
            return I32 if k == CONST or k in NARROWS else k
        if loop is not None:
            return I32
    got = single_value(model, name, inst, where)
    if got is not None:
        value, w, site = got
        k = kind(model, value, inst if site is None else _at(inst, site), w, depth - 1)
        if k == CONST and site is None and w == "prologue" and isinstance(value, K.Name) and \
                _free_constexpr(model, value.id):
            return CONST  # a partition's parameter given a constexpr stays one (a number)
        return I32 if k == CONST else k  # a name bound to a number holds a tensor of it
    if name in model.params and name not in local and \
            (where == "prologue" or name not in dict(inst.part.kp.bindings)):
        if _free_constexpr(model, name):
            # a constexpr a launch gives: a Python number, its arithmetic with numbers Python's
            # (of any size: `C * 2` of C = 2 ** 30 is 2 ** 31, no int32 wrap), typed where it
            # meets a tensor or a pointer as a number written there
            return CONST
        v = model.constexprs.get(name)
        if v is not None and not I32_MIN <= v <= I32_MAX:
            # a constexpr the kernel is read with a number past int32: Triton types it by its
            # value as it does a number written there (2 ** 40: int64), and race_spans bounds
            # it by that value, not int32's range
            return _number_kind(v)
        return WIDE if name in model.pointers else model.widths.get(name, I32)
    return _several(model, name, local, where)


def _free_constexpr(model: Model, name: str) -> bool:
    """Whether ``name`` is a constexpr argument the kernel is read without a number for."""
    return name in model.params and name not in model.constexprs and \
        name in model.cache.setdefault("constexpr_params", {
            p.name for p in model.kern.params if p.constexpr})


def _several(model: Model, name: str, local: dict, where: str) -> str:
    """A name of several values (a counter, a rebinding), read without its place: 64-bit where
    any value holds a ``.to(tl.int64)`` or a pointer argument by name (uint64 where one holds a
    ``.to(tl.uint64)`` and none an int64; both: unknown, which a division must not read as
    either), uint32 where one holds a ``.to(tl.uint32)``, else int32."""
    values = [v for v, _ in local.get(name, [])] if where == "part" else \
        list(local.get(name, []))
    found = I32
    wide = set()
    for value in values:
        for x in K.walk_expr(value):
            if isinstance(x, K.Name) and x.id in model.pointers:
                return WIDE  # a pointer: its offsets do not wrap, nor are they divided
            if not isinstance(x, K.Op):
                continue
            t = target_of(x)
            if t in ("int64", "uint64"):
                wide.add(WIDE if t == "int64" else U64)
            if t == "uint32" and found == I32:
                found = U32
            elif x.name in CASTS and t not in INTEGER_TYPES or x.name not in \
                    COMPOSED + SAME_VALUE + CASTS + _INT32_OPS + ("tl.zeros",):
                found = ANY  # a loaded value, a reduction, a cast to a type not named here
    if wide:
        return wide.pop() if len(wide) == 1 else UNKNOWN
    return found
