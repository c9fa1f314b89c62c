"""Which values Triton 3.6 holds as Python numbers (constexprs) rather than tensors, their Python
values, and the kernels refused for a number no tensor can hold. A mixin of
frontend/walker.py's Walker, which supplies the walk's state (``env``, ``number_names``, ``k``)
and its reporting (``err``, ``src``).

Triton computes arithmetic on constexprs in Python, with integers of any size, and makes a tensor
of the result where a plain assignment binds it (visit_Assign), where a jit function returns it
(visit_Return: ``tl.cdiv`` of two numbers, a helper's result) or where it meets a tensor. A tensor
of an integer is i32, u32, i64 or u64 by its range (semantic.to_tensor); one outside [-2**63,
2**64) is refused ("Nonrepresentable integer"), so the kernel does not compile. The reading that
folds such arithmetic to a number and checks the protocol with it would verify a kernel Triton
refuses.

A constexpr argument the reading leaves unbound (the generic reading of a file) is read at the
value the file's DEFAULT_CONFIG gives it, the one ``--gluon`` compiles; a refusal that depends on
it raises a check in SPECIALIZABLE, so that tle-dump (and a compile or a launch) reads the kernel
again specialised to the values it is compiled with, where the number decides.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from ..ir import kernel as K
from ..ir.big_ints import ArithmeticRefusal, NumberTooWide, PythonRaises, int_op, number_text
from .constexpr_rules import constexpr_annotation
from .folding import fold
from .values import Aff, KernelArg

#: the integers Triton 3.6 makes a tensor of (i32, u32, i64 or u64 by range)
TENSOR_INT_MIN, TENSOR_INT_END = -2 ** 63, 2 ** 64


def tensor_holds(value: int) -> bool:
    """Whether Triton 3.6 can make a tensor of the integer ``value`` (semantic.to_tensor)."""
    return TENSOR_INT_MIN <= value < TENSOR_INT_END


#: tl functions that make a tensor of each number passed at these argument positions (a
#: scalar operand is broadcast: semantic.to_tensor), whatever the other arguments are
TENSOR_ARGS = {"where": (0, 1, 2), "maximum": (0, 1), "minimum": (0, 1), "clamp": (0, 1, 2),
               "fma": (0, 1, 2), "full": (1,), "fdiv": (0, 1), "umulhi": (0, 1), "store": (1,),
               **{f"atomic_{op}": (1,) for op in ("add", "max", "min", "and", "or", "xor",
                                                  "xchg")},
               **{f: (0,) for f in ("abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin",
                                    "cos", "sigmoid", "floor", "ceil", "erf")}}
#: Python's builtins Triton 3.6 computes on Python numbers (code_generator.builtin_namespace)
_BUILTINS = ("builtins.int", "builtins.min", "builtins.max")
#: the most values of tl.static_range variables a number is evaluated at (their product;
#: PythonNumbers.python_ints)
_STATIC_VALUES = 16384


class PythonNumbers:
    """Python numbers of a partition or the kernel body (module docstring)."""

    def python_number(self, e: K.Expr) -> bool:
        """Whether Triton 3.6 holds ``e`` as a Python number (a constexpr) rather than a tensor:
        a literal or module constant, a constexpr parameter (or a name holding one:
        ``number_names``), and arithmetic of them only."""
        if isinstance(e, (K.Const, K.Global)):
            return True
        if isinstance(e, K.UnaryOp) and e.op in ("-", "+", "~"):
            return self.python_number(e.operand)
        if isinstance(e, K.BinOp):
            return self.python_number(e.lhs) and self.python_number(e.rhs)
        if isinstance(e, K.Op) and e.name in _BUILTINS and e.args and not e.kwargs:
            # Python's int / min / max of Python numbers: Triton computes them in Python too
            # (builtin_min / builtin_max of constexprs return a constexpr)
            return (len(e.args) == 1) == (e.name == "builtins.int") \
                and all(self.python_number(a) for a in e.args)
        if isinstance(e, K.Name):
            v = self.env.get(e.id)
            return isinstance(v, KernelArg) and v.constexpr or e.id in self.number_names
        return False

    def static_values(self, name: str) -> Optional[list[int]]:
        """The values the tl.static_range variable ``name`` takes in the loop being walked: its
        loop's range (``loop_ranges``, kept while the loop is walked) where both bounds are
        constants; None for another name, or bounds the reading leaves symbolic (a constexpr
        read at no value), so that a refusal never rests on a value the kernel is not read
        with."""
        v = self.env.get(name)
        if name not in self.number_names or not isinstance(v, Aff) or v.runtime \
                or len(v.expr.variables) != 1:
            return None
        (x,) = v.expr.variables
        rng = self.loop_ranges.get(x)
        if rng is None or not (rng[0].is_const and rng[1].is_const):
            return None
        return [v.expr.eval({x: i}) for i in range(rng[0].const, rng[1].const, rng[2])]

    def python_ints(self, e: K.Expr, used: set, strict: bool = False) -> list[int]:
        """:meth:`python_int` of ``e`` at each value of the tl.static_range variables it reads
        (:meth:`static_values`: Triton unrolls the loop, so each value is computed), [] where
        it is not known. Past :data:`_STATIC_VALUES` values: [], or with ``strict`` (where Triton
        makes a tensor of each value) a refusal."""
        ranges = {x.id: self.static_values(x.id) for x in K.walk_expr(e) if isinstance(x, K.Name)}
        names = sorted(n for n, values in ranges.items() if values is not None)
        count = 1
        for n in names:
            count *= len(ranges[n])
        if count > _STATIC_VALUES:
            if not strict:
                return []
            # (before adversarial round 29 such a number went unchecked past 256 values:
            # `for i in tl.static_range(300): x = 1 << i` was verified)
            raise self.err(f"`{self.src(e)}` reads tl.static_range variables at {count} "
                           f"combinations of their values, more than the reading computes "
                           f"({_STATIC_VALUES}): Triton computes it at each and makes a tensor "
                           f"of it, and the reading cannot show that each fits one (i64 or "
                           f"u64); unroll fewer iterations, or compute it at run time",
                           e, check="unsupported-expression")
        combos: list[dict] = [{}]
        for n in names:
            combos = [{**c, n: v} for c in combos for v in ranges[n]]
        try:
            values = [self.python_int(e, used, given=c) for c in combos]
            for c, v in zip(combos, values):
                if v is None:  # a float, or not known: computed where Python would raise
                    self.python_value(e, used, given=c)
        except ArithmeticRefusal as wide:
            if not used:
                raise wide.at(e.loc)
            given = ", ".join(f"{n} = {self.k.config_values.get(n)!r}" for n in sorted(used))
            what = (f"is an integer of {wide.bits} bits or more with {given} (DEFAULT_CONFIG), "
                    f"wider than the reading computes" if isinstance(wide, NumberTooWide) else
                    f"raises in Python with {given} (DEFAULT_CONFIG) ({wide.error})")
            raise self.err(f"`{self.src(e)}` {what}: the kernel is checked at the constexpr "
                           f"values it is compiled with", e, check="constexpr-operand") from None
        return [v for v in values if v is not None]

    def python_int(self, e: K.Expr, used: set, depth: int = 0,
                   given: Optional[dict] = None) -> Optional[int]:
        """Python's integer value of the Python-number expression ``e`` (:meth:`python_number`),
        of any size, reading an unbound constexpr argument at DEFAULT_CONFIG's value (its name
        added to ``used``) and the names in ``given`` at their values there; None where it is
        no integer or not known."""
        if depth > 32:
            return None
        if given and isinstance(e, K.Name) and e.id in given:
            return given[e.id]
        if isinstance(e, (K.Const, K.Global)):
            v = e.value if isinstance(e, K.Const) else fold(e)
            # a bool is Python's integer in arithmetic (`True << 64` is 2 ** 64)
            return v if isinstance(v, int) else None
        if isinstance(e, K.Name):
            v = self.env.get(e.id)
            if isinstance(v, KernelArg) and v.constexpr:
                c = self.k.config_values.get(v.name)
                if type(c) is not int:
                    return None
                used.add(v.name)
                return c
            if e.id in self.number_names and isinstance(v, Aff) and not v.runtime \
                    and v.expr.is_const:
                return v.expr.const
            return None
        if isinstance(e, K.UnaryOp) and e.op in ("-", "+", "~"):
            x = self.python_int(e.operand, used, depth + 1, given)
            return None if x is None else -x if e.op == "-" else ~x if e.op == "~" else x
        if isinstance(e, K.BinOp):
            a = self.python_int(e.lhs, used, depth + 1, given)
            b = self.python_int(e.rhs, used, depth + 1, given) if a is not None else None
            return None if b is None else int_op(e.op, a, b)
        if isinstance(e, K.Op) and e.name in _BUILTINS and e.args and not e.kwargs:
            values = [self.python_value(a, used, depth + 1, given) for a in e.args]
            if any(v is None for v in values):
                return None
            if e.name == "builtins.int":
                if len(values) != 1:
                    return None
                try:
                    return int(values[0])
                except (OverflowError, ValueError) as error:  # int(float('inf')), of a nan
                    raise PythonRaises(f"`{self.src(e)}`", f"{type(error).__name__}: {error}",
                                       e.loc) from None
            v = (min if e.name == "builtins.min" else max)(values)
            return v if type(v) is int else None
        return None

    def python_value(self, e: K.Expr, used: set, depth: int = 0,
                     given: Optional[dict] = None) -> Optional[object]:
        """:meth:`python_int`, or where ``e`` computes a float from Python numbers (`C * 1e30`,
        an argument of Python's int), that float as Python computes it (None where unknown)."""
        v = self.python_int(e, used, depth, given)
        if v is not None or depth > 32:
            return v
        if isinstance(e, K.Const) and type(e.value) is float:
            return e.value
        if isinstance(e, K.UnaryOp) and e.op in ("-", "+"):
            x = self.python_value(e.operand, used, depth + 1, given)
            return None if x is None else -x if e.op == "-" else x
        if isinstance(e, K.BinOp) and e.op in ("+", "-", "*", "/", "**"):
            a = self.python_value(e.lhs, used, depth + 1, given)
            b = self.python_value(e.rhs, used, depth + 1, given) if a is not None else None
            if b is None or type(a) not in (int, float) or type(b) not in (int, float):
                return None
            try:
                out = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                       "/": lambda: a / b, "**": lambda: a ** b}[e.op]()
            except (OverflowError, ZeroDivisionError) as error:
                raise PythonRaises(f"`{number_text(a)} {e.op} {number_text(b)}`",
                                   f"{type(error).__name__}: {error}", e.loc) from None
            return out if type(out) in (int, float) else None
        return None

    def made_tensor(self, e: K.Expr, what: Callable[[], str], node) -> None:
        """Refuse the Python number ``e`` where Triton makes a tensor of it (``what()`` says
        where: spelled only for a refusal, since rendering the source of every operand of a
        kernel costs more than the check) when some value it takes (at each value of the
        tl.static_range variables it reads) is one no tensor can hold."""
        if not self.python_number(e):
            return
        used: set = set()
        for value in self.python_ints(e, used, strict=True):
            self.refuse_untensorable(value, used, what, node)

    def plain_number_assignment(self, s: K.Assign) -> None:
        """Refuse the assignment ``s`` of the source (not one the builder made) when it binds a
        Python number no tensor can hold, or a tuple holding one: visit_Assign makes a tensor
        of each (`b = C << 256`, `b = (C << 70, 1)`); `b: tl.constexpr = ...` keeps a constexpr,
        and is left alone."""
        node = self.k.source.stmt(s.loc, ast.AnnAssign)
        if node is not None and constexpr_annotation(node):
            # kept a Python number, computed all the same: one too wide to compute is refused
            self.python_ints(s.value, set())
            return
        items = [s.value]
        while any(isinstance(x, K.TupleExpr) for x in items):
            items = [y for x in items for y in (x.items if isinstance(x, K.TupleExpr) else (x,))]
        for x in items:
            self.made_tensor(x, lambda: f"`{self.k.names.py(s.target)} = {self.src(s.value)}`, "
                                        f"a plain assignment,", s)

    def numbers_in_tensor_ops(self, e: K.Expr) -> None:
        """:meth:`number_beside_tensor` for every operator inside ``e`` (a condition of an `if`
        or a `while`, which the walk reads as a condition rather than as values)."""
        for x in K.walk_expr(e):
            if isinstance(x, (K.BinOp, K.Compare)):
                self.number_beside_tensor(x, (x.lhs, x.rhs))

    def range_bounds_made_tensors(self, s: K.For) -> None:
        """Refuse a `range` / `tl.range` bound that is a Python number no tensor can hold:
        Triton makes a tensor of each bound of a loop it does not unroll."""
        for bound in (s.start, s.stop, s.step):
            if bound is not None and not (isinstance(bound, K.Const) and bound.value is None):
                self.made_tensor(bound, lambda b=bound: f"`{self.src(b)}`, a bound of the loop,", s)

    def number_beside_tensor(self, e: K.Expr, operands: tuple) -> None:
        """Refuse the operator ``e`` whose operand is a Python number no tensor can hold beside
        a tensor operand (`t < 2**70`, `N + (C << 70)`): Triton makes a tensor of the number
        to compute it. Between numbers only, Triton computes in Python, which takes any size."""
        if all(self.python_number(x) for x in operands):
            return
        for x in operands:
            self.made_tensor(x, lambda x=x: f"`{self.src(x)}`, a number beside a tensor in "
                                         f"`{self.src(e)}`,", e)

    def number_arguments(self, name: str, node: K.Op) -> None:
        """Refuse a number no tensor can hold at an argument of the tl function ``name`` that
        makes a tensor of it (TENSOR_ARGS: `tl.where(m, 2**70, 0)`, `tl.minimum(2**70, C)`,
        `tl.full([64], C << 70, tl.int64)`, a stored value, a load's `other`, a printed
        value)."""
        at = [node.args[i] for i in TENSOR_ARGS.get(name, ()) if i < len(node.args)]
        at += [v for k, v in node.kwargs if (name, k) in (("load", "other"), ("store", "value"),
                                                         ("where", "x"), ("where", "y"))
               or name.startswith("atomic_") and k == "val"]
        if name in ("device_print", "static_print"):
            at += list(node.args[1:])
        for x in at:
            self.made_tensor(x, lambda x=x: f"`{self.src(x)}`, an argument of `tl.{name}`,", node)

    def builtin_of_tensors(self, node: K.Op) -> None:
        """Refuse a number no tensor can hold among the operands of Python's `min` / `max`
        beside a tensor: Triton compares it with the tensor, making a tensor of it
        (`min(C << 70, N)`); of numbers only, Python computes it."""
        self.number_beside_tensor(node, tuple(node.args))

    def cast_of_number(self, e: K.Op) -> None:
        """Refuse `x.to(...)` of a Python number computed by arithmetic (`(C << 70).to(...)`):
        Triton 3.6's constexpr has no `.to` (the walker's rule of a cast of a compile-time
        number, in Walker._e_Op, reads the value, which a shift of a constexpr it leaves
        unbound is not)."""
        x = e.args[0] if e.args else None
        if isinstance(x, (K.BinOp, K.UnaryOp)) and self.python_number(x):
            raise self.err(f"`{self.src(e)}`: `.to` of `{self.src(x)}`, a Python number (a "
                           f"constexpr) in Triton 3.6, which has no `.to` (\"'constexpr' object "
                           f"has no attribute 'to'\"); bind it to a name first (a tensor), or "
                           f"write it as a number of the type", e,
                           check="unsupported-expression")

    def refuse_untensorable(self, value: Optional[int], used: set, what: Callable[[], str],
                            node) -> None:
        """Refuse the kernel where Triton 3.6 makes a tensor of the integer ``value`` (``what()``
        says where: a plain assignment, a jit function's result) and cannot: outside [-2**63,
        2**64). Read from DEFAULT_CONFIG's constexprs (``used``), a check in SPECIALIZABLE."""
        if value is None or tensor_holds(value):
            return
        what = what()
        if used:
            given = ", ".join(f"{n} = {self.k.config_values.get(n)!r}" for n in sorted(used))
            raise self.err(f"{what} makes a tensor of the integer {number_text(value)} with {given} "
                           f"(DEFAULT_CONFIG), outside i64 and u64, which Triton 3.6 refuses "
                           f"(\"Nonrepresentable integer\"): the kernel is checked at the "
                           f"constexpr values it is compiled with", node,
                           check="constexpr-operand")
        bound = ", ".join(f"{n} = {v}" for n, v in sorted(self.k.bind.items()))
        where = f" (the kernel read specialised to {bound})" if bound else ""
        raise self.err(f"{what} makes a tensor of the integer {number_text(value)}{where}, outside "
                       f"i64 and u64: Triton 3.6 refuses it (\"Nonrepresentable integer\"), so the "
                       f"kernel does not compile", node, check="unsupported-expression")
