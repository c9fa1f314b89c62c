"""Int32 arithmetic of addresses, for the memory-race check (frontend/global_races.py).

Triton computes an offset of int32 operands in int32: ``y_ptr + (t + 1) * 67108864`` reaches
``y_ptr + 0`` at ``t = 63``, where ``(t + 1) * 67108864`` is ``2 ** 32``. The address terms of
race_terms.py are integers, so the value of additions, subtractions, multiplications and left
shifts of int32 operands is wrapped into int32 (the integer result less a multiple of ``2 **
32``, in ``[-2 ** 31, 2 ** 31)``) where it meets a 64-bit operand or an op that is no ring
operation (:func:`settle`, :func:`operand`: a chain of them agrees with its int32 value modulo
``2 ** 32``, so it is wrapped once); one with a 64-bit operand is the integer result. 64-bit (:func:`width`): a pointer argument (adding an offset to a pointer
does not wrap), a ``.to(tl.int64)``, a number past int32, a loop variable over a 64-bit range,
and arithmetic with any of them. Integer kernel arguments hold int32 values, as the verdict
states ("in i32"; Triton passes an integer that fits as int32), so a loop variable over them
does too.

A kernel whose offsets cannot leave int32 shows it by bounding its arguments (``tle.assume(N <=
1 << 20)``: z3 then finds no wrap), or computes them in int64.
"""

from __future__ import annotations

from ..ir import kernel as K
from .race_terms import REBOUND, SAME_VALUE, Instance, Model, _at, item_of, loop_of, single_value

I32_MIN, I32_MAX = -2 ** 31, 2 ** 31 - 1

#: the integer ops whose int32 result wraps around
WRAPPING = ("+", "-", "*", "<<")


def settle(model: Model, e: K.BinOp, a, b, inst: Instance, where: str):
    """The term of ``e`` (``+``, ``-``, ``*`` or ``<<`` of operand terms ``a``, ``b``) as Triton
    computes it. Of two int32 operands, the integer result: a chain of such ops agrees with its
    int32 value modulo ``2 ** 32`` (they are ring operations), so the chain is wrapped once,
    where a 64-bit op or another kind of op takes it (:func:`operand`). With a 64-bit operand,
    the int32 one is wrapped first and the result is exact."""
    wide_a, wide_b = width(model, e.lhs, inst, where), width(model, e.rhs, inst, where)
    if wide_a or wide_b:
        if not wide_a:
            a = operand(model, e.lhs, a, inst, where)
        if not wide_b:
            b = operand(model, e.rhs, b, inst, where)
    if e.op == "+":
        return a + b
    if e.op == "-":
        return a - b
    if e.op == "*":
        return a * b
    return a * (1 << model.z3.simplify(b).as_long())  # `<<` by a number (all race_terms reads)


def operand(model: Model, e: K.Expr, value, inst: Instance, where: str, cut: bool = False):
    """The int32 value of ``e`` (term ``value``) where an op that is no int32 ring operation
    takes it (a 64-bit op, ``//``, ``%``, ``>>``, ``min``, a cast to int64): ``value`` wrapped
    into int32 (a fresh multiple of ``2 ** 32`` taken off, the result in int32's range), unless
    ``e`` is 64-bit or surely int32 already (a number, a lane, a loop variable, an argument);
    outside an address, ``value`` itself. ``cut``: a cast to int32, which wraps a 64-bit value
    too."""
    if not model.int32 or _atom(model, e, inst, where) or \
            (width(model, e, inst, where) and not cut):
        return value
    z3 = model.z3
    if z3.is_int_value(z3.simplify(value)):
        n = z3.simplify(value).as_long()
        if I32_MIN <= n <= I32_MAX:
            return value
    k = model.fresh("i32wrap", inst)
    v = value - 2 ** 32 * k
    ranges = [v >= I32_MIN, v <= I32_MAX]
    model.wrap_facts.update(c.get_id() for c in ranges)
    inst.constraints += ranges
    return v


def _atom(model: Model, e: K.Expr, inst: Instance, where: str) -> bool:
    """Whether ``e`` is an int32 value no arithmetic made: a number, a lane, a program id, a
    loaded value (any value the model gives it), a loop variable, an argument."""
    if isinstance(e, (K.Const, K.Global)):
        return True
    if isinstance(e, K.Op):
        return e.name not in ("to", "tl.where", "ifexp", "tl.minimum", "tl.maximum", "min",
                              "max", "tl.cdiv", "tl.full") + SAME_VALUE
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


def width(model: Model, e: K.Expr, inst: Instance, where: str, depth: int = 32) -> bool:
    """Whether ``e`` is 64-bit at ``inst`` (Triton computes arithmetic on it in int64)."""
    key = (id(e), where, tuple((x[0], x[1]) for x in inst.site.path))
    memo = model.cache.setdefault("width", {})
    if key not in memo:
        memo[key] = _width(model, e, inst, where, depth)
    return memo[key]


def _width(model: Model, e: K.Expr, inst: Instance, where: str, depth: int) -> bool:
    if depth <= 0:
        return False
    if isinstance(e, (K.Const, K.Global)):
        v = getattr(e.value, "value", e.value)  # tl.constexpr(64)
        return isinstance(v, int) and not isinstance(v, bool) and not I32_MIN <= v <= I32_MAX
    if isinstance(e, K.Name):
        return _name(model, e.id, inst, where, depth)
    if isinstance(e, K.Subscript):
        if len(e.index) == 1 and isinstance(e.index[0], int):
            got = item_of(model, e, inst, where)
            if got is None:
                return False
            item, at, w = got
            return width(model, item, at, w, depth - 1)
        return width(model, e.value, inst, where, depth - 1)  # a broadcast
    if isinstance(e, K.UnaryOp):
        return width(model, e.operand, inst, where, depth - 1)
    if isinstance(e, K.BinOp):
        return width(model, e.lhs, inst, where, depth - 1) or \
            width(model, e.rhs, inst, where, depth - 1)
    if isinstance(e, K.Op):
        if e.name == "to" and len(e.args) > 1 and isinstance(e.args[1], K.DType):
            return e.args[1].name in ("int64", "uint64")
        args = e.args
        if e.name in SAME_VALUE or e.name == "to":
            args = args[:1]
        elif e.name in ("tl.where", "ifexp") and len(args) == 3:
            args = args[1:]
        elif e.name == "tl.full" and len(args) >= 2:
            args = args[1:2]
        elif e.name not in ("tl.minimum", "tl.maximum", "min", "max", "tl.cdiv"):
            return False  # a lane, a program id, a loaded value: an int32 or an unknown
        return any(width(model, a, inst, where, depth - 1) for a in args)
    return False


def _name(model: Model, name: str, inst: Instance, where: str, depth: int) -> bool:
    if where == "part":
        loop = loop_of(inst.site, name)
        if loop is REBOUND:
            return False
        if isinstance(loop, K.For):  # the variable has its range's type
            return any(width(model, x, inst, where, depth - 1)
                       for x in (loop.start, loop.stop, loop.step))
        if loop is not None:
            return False
    got = single_value(model, name, inst, where)
    if got is not None:
        value, w, site = got
        return width(model, value, inst if site is None else _at(inst, site), w, depth - 1)
    local = inst.part.assigns if where == "part" else model.prologue_assigns
    if name in model.params and name not in local and \
            (where == "prologue" or name not in dict(inst.part.kp.bindings)):
        return name in model.pointers
    # a name of several values (a counter, a rebinding): 64-bit where any of them is
    values = [v for v, _ in local.get(name, [])] if where == "part" else \
        list(local.get(name, []))
    return any(_names_wide(model, v, depth) for v in values)


def _names_wide(model: Model, e: K.Expr, depth: int) -> bool:
    """Whether ``e`` holds a ``.to(tl.int64)`` or a pointer argument by name (a value of a name
    assigned more than once, read without its place: 64-bit where it may be)."""
    for x in K.walk_expr(e):
        if isinstance(x, K.Op) and x.name == "to" and len(x.args) > 1 and \
                isinstance(x.args[1], K.DType) and x.args[1].name in ("int64", "uint64"):
            return True
        if isinstance(x, K.Name) and x.id in model.pointers:
            return True
    return False


def pointer_arguments(kern: K.Kernel, bases: set[str]) -> set[str]:
    """Of ``bases`` (the arguments pointer expressions may be based on), those the kernel never
    uses as an integer: an operand of ``*``, ``/``, ``//``, ``%``, a shift, a bitwise op or a
    comparison, or in a loop's range. An integer argument added to a pointer (``y_ptr + N``) is
    among the bases, but where the kernel also multiplies it (``t * N``) it is an integer."""
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
    return bases - numbers
