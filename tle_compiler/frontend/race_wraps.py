"""Fixed-width integer arithmetic of addresses, for the memory-race check (global_races.py).

Triton computes an offset of int32 operands in int32: ``y_ptr + (t + 1) * 67108864`` reaches
``y_ptr + 0`` at ``t = 63``, where ``(t + 1) * 67108864`` is ``2 ** 32``. The terms of
race_terms.py are integers, so each value is read in its type (race_kinds.kind):

- 64-bit: a pointer argument, a ``.to(tl.int64)``, a number past uint32, and arithmetic with
  any of them: the integer result where its bounds (race_spans.span) stay within int64, else
  that result less a multiple of ``2 ** 64`` where an op that is no ring operation takes it
  (:func:`in_type`: ``(t.to(tl.int64) + 1) * 2 ** 63 > 0`` is false); an address is the base
  plus the offset times the element's size modulo ``2 ** 64`` bytes (:func:`address_wrap`);
- uint32 (a ``.to(tl.uint32)``, a number in ``[2 ** 31, 2 ** 32)``, arithmetic with them and no
  64-bit operand) and int32 (the rest: lanes, program ids, loop variables over int32 ranges,
  integer arguments, which hold int32 values as the verdict states): additions, subtractions,
  multiplications and left shifts are ring operations, so a chain of them agrees with its
  wrapped value modulo ``2 ** 32`` and is wrapped once, where a 64-bit op or another kind of op
  (``//``, ``%``, ``>>``, ``min``, a comparison, a cast) takes it (:func:`settle`,
  :func:`operand`): the integer result less a multiple of ``2 ** 32``, in ``[0, 2 ** 32)`` or
  ``[-2 ** 31, 2 ** 31)``;
- narrower (arithmetic of int8, int16, their unsigned kinds and int1 alone, which Triton computes
  in that type, the promoted one of two: int8 beside uint8 is a uint8, beside int16 an int16):
  its integer result wrapped into the type once where it is taken, as for int32 (less a
  multiple of ``2 ** 8`` or ``2 ** 16``, in the type's range), so ``x * 64`` of an int8 keeps
  its alignment to 64.

A value loaded from memory has its pointer's element type where DEFAULT_CONFIG's signature
types the one pointer argument it is based on (``*i8``: int8, so ``(x * 0 + 100) * 2`` of it is
-56; ``*i32``: int32; ``*i64``: 64-bit); otherwise it is taken to be of 32 bits or more (an index
table: :data:`ANY`). A kernel whose offsets cannot leave int32 shows it by bounding its
arguments (``tle.assume(N <= 1 << 20)``: z3 then finds no wrap), or computes them in int64.
"""

from __future__ import annotations

from typing import Optional

from ..ir import kernel as K
from .race_casts import CASTS, fill_type, target_of
from .race_kinds import (ANY, CONST, I32, I32_MAX, I32_MIN, NARROWS, U32, U64, UNKNOWN, WIDE,
                         _join, kind)
from .race_spans import I64_MAX, I64_MIN, clamp64, inside, span
from .race_terms import (COMPOSED, INTEGER_TYPES, SAME_VALUE, Instance, Integers, Model, loop_of)

#: the range of a wrapped value of each kind
_RANGES = {I32: (I32_MIN, I32_MAX), U32: (0, 2 ** 32 - 1)}


def settle(model: Model, e: K.BinOp, a, b, inst: Instance, where: str):
    """The term of ``e`` (``+``, ``-``, ``*`` or ``<<`` of operand terms ``a``, ``b``) as Triton
    computes it: the integer result of the operands in the result's type (its chain is wrapped
    where it is taken: :func:`operand`), an operand of a narrower type (int8 beside int32,
    int32 beside int64) read in its own first."""
    if not model.int32:  # a pipe index: an integer
        return Integers.settle(model, e, a, b, inst, where)
    ka, kb = kind(model, e.lhs, inst, where), kind(model, e.rhs, inst, where)
    if UNKNOWN in (ka, kb):
        return model.fresh("opaque", inst)  # a type the walk did not reach: any value
    # an operand promoted to another type (int8 beside int32, int32 beside int64) is its value
    # in its own type first
    result = _join([ka, kb])
    if ka not in (CONST, result):
        a = operand(model, e.lhs, a, inst, where)
    if e.op == "-" and ka in (WIDE, ANY) and (kb in (I32, U32, ANY) or kb in NARROWS):
        # (ANY: a value loaded from memory, which a pointer table holds)
        pointer = _pointer_valued(model, e.lhs, inst, where)
        if pointer is not False:
            # Triton's `ptr - off` is `ptr + (0 - off)`, the negation in the offset's own type
            # (semantic.sub, minus), then added as an offset is (an unsigned one
            # zero-extended): `ptr - u` of a uint8 1 is `ptr + 255`, of an int8 -128 `ptr -
            # 128`, of a uint32 1 `ptr + 2 ** 32 - 1`
            neg = a + in_type(model, e.rhs, -operand(model, e.rhs, b, inst, where), inst, where)
            if pointer:
                return neg
            # a loaded value that may be a pointer (a pointer table's) or an integer
            v = model.fresh("choice", inst)
            inst.constraints.append(model.z3.Or(v == neg, v == a - operand(
                model, e.rhs, b, inst, where)))
            return v
    if kb not in (CONST, result):
        b = operand(model, e.rhs, b, inst, where)
    return Integers.settle(model, e, a, b, inst, where)


def both_int32(model: Model, x: K.Expr, y: K.Expr, inst: Instance, where: str) -> bool:
    """Whether ``x`` and ``y`` are both int32 values (race_kinds.kind), for race_terms, which
    reads ``tl.cdiv`` of two such exactly (race_kinds imports race_terms)."""
    return kind(model, x, inst, where) == I32 and kind(model, y, inst, where) == I32


def _pointer_valued(model: Model, e: K.Expr, inst: Instance, where: str) -> Optional[bool]:
    """Whether the 64-bit value ``e`` is a pointer (True: it adds a pointer argument), an integer
    (False), or either (None: a value loaded from memory alone, which a pointer table holds)."""
    if model.based_on is None:
        return False
    based = model.based_on(e, inst, where)
    if based & model.pointers and based <= model.pointers:
        return True
    if based & model.pointers:
        return None
    return False


def operand(model: Model, e: K.Expr, value, inst: Instance, where: str, cut: bool = False):
    """The value of ``e`` (term ``value``) in its type, where an op that is no ring operation of
    its width takes it (a 64-bit op, ``//``, ``%``, ``>>``, ``min``, a comparison, a cast):
    ``value`` wrapped (a fresh multiple of ``2 ** 32`` taken off, the result in the type's
    range), unless ``e`` is 64-bit or no arithmetic made it (a number, a lane, a loop variable,
    an argument, a loaded value, a cast the model reads exactly); any value of the narrow types
    for narrow arithmetic; where the model reads integers (a pipe index), ``value`` itself.
    ``cut``: a cast to int32, which wraps a 64-bit value too."""
    if not model.int32 or _atom(model, e, inst, where):
        return value
    return in_type(model, e, value, inst, where, cut)


def in_type(model: Model, e: K.Expr, value, inst: Instance, where: str, cut: bool = False,
            plus: int = 0):
    """``value``, a ring operation's result on the value of ``e``, wrapped in ``e``'s type as
    :func:`operand` wraps a value arithmetic made (``tl.cdiv(x, 64)`` adds 63 to ``x`` in
    ``x``'s type: ``x + 63`` of an int32 ``x`` near ``2 ** 31`` is negative). ``plus``: a
    number ``value`` adds to the value of ``e`` as :func:`operand` gives it (tl.cdiv's
    ``c - 1``), for the bounds of a 64-bit one (:func:`_in_int64`)."""
    if not model.int32:
        return value
    k = kind(model, e, inst, where)
    if k == WIDE and not cut:
        return _in_int64(model, e, value, inst, where, plus)
    if k == U64 and not cut or k == CONST:
        return value
    if k == UNKNOWN:
        return model.fresh("opaque", inst)
    if k in NARROWS:
        # its arithmetic's result less a multiple of the type's modulus, in its range (also
        # under a cast to int32, which keeps a narrow value)
        lo, hi, modulus = NARROWS[k]
        return _wrapped(model, value, inst, (lo, hi), modulus)
    if k == ANY and not cut:
        # an int32 or a uint32 wrapped, or a 64-bit value as it is
        return _wrapped(model, value, inst, None)
    lo, hi = _RANGES[U32 if k == U32 and not cut else I32]
    z3 = model.z3
    if z3.is_int_value(z3.simplify(value)):
        n = z3.simplify(value).as_long()
        if lo <= n <= hi:
            return value
    return _wrapped(model, value, inst, (lo, hi))


def _in_int64(model: Model, e: K.Expr, value, inst: Instance, where: str, plus: int):
    """The 64-bit value of ``e`` (term ``value``) where an op that is no ring operation takes
    it: Triton's int64 is the integer result modulo ``2 ** 64``, in ``[-2 ** 63, 2 ** 63)``
    (``(t.to(tl.int64) + 1) * 2 ** 63`` is negative at t = 0, so ``> 0`` is false, ``// 2 **
    62`` is -2, ``>> 62`` is -2). Where the bounds of the value (race_spans.span) stay within
    int64 no wrap happens: ``value`` as it is (an offset ``pid.to(tl.int64) * stride`` of int32
    operands, and z3 has no unknown more); else ``value`` less a multiple of ``2 ** 64``, in
    int64. A pointer (a comparison of two, a choice of two) is its base plus its offsets: as it
    is where the offsets stay within int64 (the reading the model has of pointers), else an
    unknown."""
    s = span(model, e, inst, where)
    if plus:  # ``value`` is the value taken in int64, plus a number
        s = clamp64(s)
        s = (s[0] + plus, s[1] + plus)
    if inside(s):
        return value
    if model.based_on is not None and model.based_on(e, inst, where) & model.pointers:
        off = span(model, e, inst, where, bases=True)
        if plus and off is not None:
            off = (off[0] + plus, off[1] + plus)
        return value if inside(off) else model.fresh("opaque", inst)
    return _wrapped(model, value, inst, (I64_MIN, I64_MAX), 2 ** 64, "i64wrap")


#: bytes of an element of a pointer whose signature type the model does not know: the widest
#: scalar (int64, fp64), whose addresses repeat soonest in its offsets (every ``2 ** 61``)
WIDEST_ELEMENT = 8


def address_wrap(model: Model, ptr_a: K.Expr, ia: Instance, ptr_b: K.Expr, ib: Instance,
                 args: set[str]):
    """Where two accesses at ``ptr_a`` and ``ptr_b``, off the pointer arguments ``args``, may
    meet through the wraparound of 64-bit addresses: (an unknown ``w``, the modulus ``m``), the
    two addresses meeting where their terms differ by ``m * w`` (``w``'s range is added to
    ``ib``'s constraints); None where their terms meet exactly where the addresses do.

    Triton's address is the base plus the offset times the element's size, modulo ``2 **
    64``: two offsets off one base reach one byte where they agree modulo ``m = 2 ** 64 /
    size`` (``y_ptr + 2 ** 62`` of an fp32 ``y_ptr`` is ``y_ptr``). Where the offsets of both
    (race_spans.span, a pointer argument counted 0) stay in one window of fewer than ``m``
    values (``[-m / 2, m / 2)``, say) their difference is less than ``m`` apart from zero, and
    the terms are equal exactly where the addresses are: None. Else ``w`` (``addrwrap``) ranges
    over the multiples of ``m`` the difference of the offsets' bounds holds (so that z3 rules
    it out where the columns leave no room), or over any integer where an offset has no bounds.
    The element's size is the signature's for each argument (``*fp32``: 4), the widest
    scalar's where it gives none."""
    size = max([model.sizes.get(n, WIDEST_ELEMENT) for n in args] or [WIDEST_ELEMENT])
    m = 2 ** 64 // size
    sa = span(model, ptr_a, ia, "part", bases=True)
    sb = span(model, ptr_b, ib, "part", bases=True)
    if sa is not None and sb is not None and max(sa[1], sb[1]) - min(sa[0], sb[0]) < m:
        return None
    w = model.fresh("addrwrap", ib)
    if sa is not None and sb is not None:
        ib.constraints += [w >= -((sb[1] - sa[0]) // m), w <= (sa[1] - sb[0]) // m]
    return w, m


def element_bytes(signature: Optional[dict]) -> dict[str, int]:
    """The bytes of an element of each pointer argument a signature types (``*fp32``: 4,
    ``*bf16``: 2, ``*fp8e4nv``: 1, ``*i1``: 1): the first number in the type's name, in bits."""
    out: dict[str, int] = {}
    for name, t in (signature or {}).items():
        if not (isinstance(t, str) and t.startswith("*")):
            continue
        digits = ""
        for ch in t[1:]:
            if ch.isdigit():
                digits += ch
            elif digits:
                break
        if digits:
            out[name] = max(1, int(digits) // 8)
    return out


def unsigned(model: Model, e: K.Expr, value, inst: Instance, where: str):
    """The value of ``e`` (term ``value``, as :func:`operand` gives it) as a ``//``, ``%``,
    ``>>`` or ``tl.cdiv`` of it reads it: a uint64 in ``[0, 2 ** 64)``. The model keeps a
    uint64 as the signed value it was cast from (``(t - 1).to(tl.uint64)`` is -1 there), which
    sums, products and an address agree with modulo ``2 ** 64``; a division or a right shift
    does not: Triton divides and shifts the unsigned value (``2 ** 64 - 1 >> 60`` is 15, where
    -1 >> 60 is -1). A value of unknown width (:data:`ANY`, a load through a pointer the
    signature does not type) may be a uint64: the value as it is, or in ``[0, 2 ** 64)``."""
    if not model.int32:
        return value
    k = kind(model, e, inst, where)
    if k == ANY:
        z3 = model.z3
        w = model.fresh("u64wrap", inst)
        v = value - 2 ** 64 * w
        inst.constraints.append(z3.Or(w == 0, z3.And(v >= 0, v < 2 ** 64)))
        return v
    if k != U64:
        return value
    return _wrapped(model, value, inst, (0, 2 ** 64 - 1), 2 ** 64, "u64wrap")


def bits(model: Model, e: K.Expr, inst: Instance, where: str) -> int:
    """The bits of the type the shift ``e`` computes in (race_terms._binop: a shift by that many
    or more is LLVM's poison): 8 and 16 for the narrow types (1 for int1), 32 for int32, uint32
    and a value of unknown width (which may be of 32 bits), 64 for 64-bit values and numbers
    (a shift of numbers only is Python's, exact, but reads as before)."""
    if not model.int32:
        return 64
    k = kind(model, e, inst, where)
    if k in NARROWS:
        modulus = NARROWS[k][2]
        return modulus.bit_length() - 1
    return 32 if k in (I32, U32, ANY) else 64


def _wrapped(model: Model, value, inst: Instance, bounds: Optional[tuple[int, int]],
             modulus: int = 2 ** 32, tag: str = "i32wrap"):
    """``value`` with a multiple of ``modulus`` (``2 ** 32``; a narrow type's ``2 ** 8`` or
    ``2 ** 16``) taken off, the result in ``bounds``; None: either none taken off (a 64-bit
    value) or the result in int32 or uint32 (a value of unknown width). The wrapped value of one
    term in one type is one number (``bounds`` name the type, and with it ``modulus``), so a
    term wrapped again (a kernel-body value both accesses read, an expression spelt twice)
    reuses its unknown: one multiple, not one per use, which z3 would have to find equal."""
    key = (value.get_id(), bounds)
    hit = model.wraps.get(key)
    if hit is None:
        z3 = model.z3
        w = model.fresh(tag, inst)
        inst.fresh.pop()  # (appended below, as for a reuse)
        v = value - modulus * w
        if bounds is None:
            facts = [z3.Or(w == 0, z3.And(v >= I32_MIN, v < 2 ** 32))]
        else:
            facts = [v >= bounds[0], v <= bounds[1]]
        model.wrap_facts.update(c.get_id() for c in facts)
        hit = model.wraps[key] = (value, w, v, facts)  # (value held: its id names no other)
    _, w, v, facts = hit
    inst.fresh.append(w)
    inst.constraints += facts
    return v


def _atom(model: Model, e: K.Expr, inst: Instance, where: str) -> bool:
    """Whether ``e`` is a value no arithmetic made, in its type's range in the model: a number,
    a lane, a program id, a loaded value (any value the model gives it), a loop variable, an
    argument, a cast to a narrow type or uint32 (read modulo its width)."""
    if isinstance(e, (K.Const, K.Global)):
        return True
    if isinstance(e, K.Op):
        if e.name in CASTS or fill_type(e) is not None:
            # a cast or fill to a narrow type or uint32 is its value modulo its width; one to
            # a type not named here an unknown
            t = target_of(e)
            return t in tuple(NARROWS) + ("uint32",) or e.name in CASTS and \
                t not in INTEGER_TYPES
        return e.name not in COMPOSED + SAME_VALUE
    if isinstance(e, K.Name):
        if where == "part" and isinstance(loop_of(inst.site, e.id), K.For):
            return True
        local = inst.part.assigns if where == "part" else model.prologue_assigns
        if e.id in local:
            return False
        binds = dict(inst.part.kp.bindings) if where == "part" else {}
        if e.id in binds:  # a partition parameter: what it is bound to
            return _atom(model, binds[e.id], inst, "prologue")
        return e.id in model.params
    return False


def ordered(model: Model, args, inst: Instance, where: str) -> bool:
    """Whether a ``min`` / ``max`` of ``args`` compares their terms (each in its type: int32,
    a narrow type, a Python number) as integers: Triton compares the promoted type, signed
    for int32 (a narrow value beside it is extended to its own value), in the narrow type
    beside a number; not so for uint32 (a negative int32 beside it is a large one), two narrow
    types (uint16 beside int16 compares unsigned), 64-bit values (uint64 compares unsigned)
    or a value of unknown width."""
    if not model.int32:
        return True
    kinds = [kind(model, a, inst, where) for a in args]
    narrow = [k for k in kinds if k in NARROWS]
    return all(k in (CONST, I32) or k in NARROWS for k in kinds) and (
        len(narrow) <= 1 or all(k in ("int8", "int16") for k in narrow))


def divides(model: Model, e: K.BinOp, inst: Instance, where: str) -> bool:
    """Whether the ``//`` or ``%`` ``e``, its divisor no number, divides signed values the
    model reads exactly (race_terms._quotient): int32 or int64 after promotion, each operand of
    int32, int64, a narrow type (whose value a wider signed type keeps) or a number. Not so for
    an unsigned 32- or 64-bit operand (Triton divides unsigned values: an int32 -1 beside it is
    a large one) or a value of unknown width."""
    if not model.int32:
        return True
    kinds = [kind(model, x, inst, where) for x in (e.lhs, e.rhs)]
    return _join(kinds) in (I32, WIDE) and all(k in (CONST, I32, WIDE) or k in NARROWS
                                               for k in kinds)


#: the width and signedness of each kind a comparison reads exactly (a Python number is an
#: int32 there: Triton's tensor comparison makes a tensor of it first, to_tensor)
_COMPARED = {CONST: (32, True), I32: (32, True), U32: (32, False), WIDE: (64, True),
             U64: (64, False), "int8": (8, True), "uint8": (8, False), "int16": (16, True),
             "uint16": (16, False), "int1": (1, False)}


def compared(model: Model, e: K.Compare, a, b, inst: Instance, where: str):
    """The operand terms (each in its own type, as :func:`operand` gives them) the comparison
    ``e`` compares as integers, or None where the model does not know how Triton compares them
    (a value of unknown width or signedness). Triton compares the promoted type of the two
    (semantic.integer_promote_impl, C's usual conversions): an unsigned operand at least as wide
    as a signed one makes the comparison unsigned, the signed value taken modulo ``2 ** bits``
    (an int32 -1 beside a uint32 3 is 4294967295, not below it: ``icmp ult``); a narrower
    unsigned one beside a signed one is zero-extended (its value). A uint64, which the model
    keeps as the signed value it was cast from, is its value in ``[0, 2 ** 64)`` there."""
    if not model.int32:
        return a, b
    ka, kb = kind(model, e.lhs, inst, where), kind(model, e.rhs, inst, where)
    if ka not in _COMPARED or kb not in _COMPARED:
        return None
    (ra, sa), (rb, sb) = _COMPARED[ka], _COMPARED[kb]
    z3 = model.z3
    if not sa and ra == 64:
        a = unsigned(model, e.lhs, a, inst, where)
    if not sb and rb == 64:
        b = unsigned(model, e.rhs, b, inst, where)
    if sa and not sb and rb >= ra:
        a = z3.If(a < 0, a + 2 ** rb, a)
    if sb and not sa and ra >= rb:
        b = z3.If(b < 0, b + 2 ** ra, b)
    return a, b


def element_types(signature: Optional[dict]) -> dict[str, str]:
    """The element types of the pointer arguments a signature types (``*i8``: ``int8``, ``*u16``:
    ``uint16``, ``*fp32``: ``fp32``), for the kind of a value loaded through them."""
    out: dict[str, str] = {}
    for name, t in (signature or {}).items():
        if isinstance(t, str) and t.startswith("*") and t[1:2] in ("i", "u") and \
                t[2:].isdigit():
            out[name] = f"{'int' if t[1] == 'i' else 'uint'}{t[2:]}"
    return out


def integer_widths(signature: Optional[dict]) -> dict[str, str]:
    """The kinds of the integer arguments a signature types (``i64`` / ``u64``: 64-bit, ``u32``:
    uint32, the other integers int32); an argument it does not type holds an int32."""
    out: dict[str, str] = {}
    for name, t in (signature or {}).items():
        if isinstance(t, str) and t[:1] in ("i", "u") and t[1:].isdigit():
            out[name] = WIDE if t[1:] == "64" else U32 if t == "u32" else I32
    return out


def float_arguments(signature: Optional[dict]) -> set[str]:
    """The scalar arguments a signature types as floats (``fp32``, ``bf16``, ``fp8e4nv``): their
    values are no integers (race_terms.floating)."""
    return {name for name, t in (signature or {}).items()
            if isinstance(t, str) and (t.startswith("fp") or t.startswith("bf"))}


def pointer_arguments(kern: K.Kernel, bases: set[str],
                      signature: Optional[dict] = None) -> set[str]:
    """The pointer arguments: those a signature types ``*...`` (a descriptor or a pointer),
    where it gives the argument's type; else of ``bases`` (the arguments pointer expressions
    may be based on), those the kernel never uses as an integer: an operand of ``*``, ``/``,
    ``//``, ``%``, a shift, a bitwise op or a comparison, or in a loop's range. An integer
    argument added to a pointer (``y_ptr + N``) is among the bases, but where the kernel also
    multiplies it (``t * N``) it is an integer; one only ever added (``y_ptr + (OFF + t)``) is
    taken to be a pointer where no signature says otherwise."""
    signature = signature or {}
    typed = {n for n, t in signature.items() if isinstance(t, str) and t.startswith("*")}
    bases = {b for b in bases if b not in signature} | (typed & {p.name for p in kern.params})
    numbers: set[str] = set()

    def names(e: K.Expr) -> set[str]:
        return {x.id for x in K.walk_expr(e) if isinstance(x, K.Name)}

    for body in [kern.prologue] + [kp.body for kp in kern.partitions]:
        for st in K.walk_stmts(body):
            if isinstance(st, K.For):
                numbers |= names(st.start) | names(st.stop) | names(st.step)
            for x in K.stmt_exprs(st):
                for node in K.walk_expr(x):
                    if isinstance(node, K.BinOp) and node.op not in ("+", "-") or \
                            isinstance(node, K.Compare):
                        numbers |= names(node.lhs) | names(node.rhs)
    # a partition parameter used as an integer makes the argument bound to it one
    for kp in kern.partitions:
        for param, value in kp.bindings:
            if param in numbers:
                numbers |= names(value)
    return bases - (numbers - typed)
