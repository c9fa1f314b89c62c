"""What Triton 3.6 makes a constexpr, and the kernels the builder refuses for it: a mixin of
frontend/build.py's Builder, which supplies the state being built (``frame``, its ``env``,
``regions``, ``constexprs`` and ``static_bound``, and ``static_vars``) and its
reporting (``err``) and readings (``_folded_tensor``, ``is_runtime``, ``calls_helper``).

Triton keeps a name a constexpr where it is bound by `name: tl.constexpr = value`, where it is a
kernel's constexpr parameter, a partition's (a jit function's) parameter given a constexpr or
a number, or the variable of a tl.static_range loop (after it too: its last value); a plain
assignment makes a name a tensor (visit_Assign). From that follow three
refusals, each a kernel the frontend had verified and Triton does not compile:

- a constexpr rebound in the body of a loop or a branch of an `if` on a run-time value
  (``constexpr_rebound_in_region``): the rebinding makes it a tensor, and Triton refuses a name
  whose type a loop or a branch changes;
- a `tl.constexpr` annotation of a tensor (``constexpr_of_tensor``): Triton wraps the tensor, and
  any operator on the name fails;
- a plain name bound to an integer beyond 64 bits that ``fold`` gives up on (``wide_fold``, read by
  the builder's check of what visit_Assign cannot make a tensor of).

A condition Triton computes at compile time (of constexprs and numbers only) is a Python value,
not a tensor, and Triton refuses an `if` or a conditional expression on anything but a bool, an
int or None (``compile_time_condition``: `if C / 2:`, `if 0.5:`: "`if` conditionals can only
accept values of type {NoneType, bool, int}"). (A `while` on any compile-time value, which
Triton refuses too, is the protocol walker's: triton_rules.compile_time_condition_rule.)
"""

from __future__ import annotations

import ast

from ..ir import kernel as K
from ..ir.big_ints import ArithmeticRefusal, int_op
from .folding import fold


def constexpr_annotation(s: ast.AnnAssign) -> bool:
    """Whether ``s`` is written `name: tl.constexpr = value` (any spelling of constexpr)."""
    return ast.unparse(s.annotation).split(".")[-1] == "constexpr"


def condition_type_refusal(what: str, type_name: str) -> str:
    """Why Triton 3.6 refuses ``what``, an `if` (or a conditional expression) on a compile-time
    value of type ``type_name`` other than bool, int or None (the builder's and the walker's
    words, one text)."""
    return (f"{what}: Triton takes a compile-time condition of type bool, int or None only "
            f"(\"`if` conditionals can only accept values of type {{NoneType, bool, int}}, not "
            f"objects of type {type_name}\")")


class ConstexprRules:
    """The builder's constexpr rules (module docstring)."""

    def wide_fold(self, e: K.Expr, depth: int = 0) -> object:
        """``fold(e)``, or where ``e`` reads names holding a number (`C << 256` of a constexpr
        bound to a number), Python's integer value of the arithmetic on them (ir/big_ints.int_op,
        any width up to its bound): what Triton's visit_Assign would make a tensor of (refused
        when outside 64 bits, :meth:`string_binding`). None where it is no such arithmetic."""
        value = fold(e)
        if value is not None or depth > 32:
            return value
        if isinstance(e, K.Name):
            st = self.frame.env.get(e.id)
            return fold(st.value) if st is not None and st.kind == "const" \
                and isinstance(st.value, K.Expr) else None
        if isinstance(e, K.UnaryOp) and e.op in ("-", "+", "~"):
            v = self.wide_fold(e.operand, depth + 1)
            return {"-": lambda x: -x, "+": lambda x: x, "~": lambda x: ~x}[e.op](v) \
                if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(e, K.BinOp):
            a, b = self.wide_fold(e.lhs, depth + 1), self.wide_fold(e.rhs, depth + 1)
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b)):
                return None
            try:
                return int_op(e.op, a, b)
            except ArithmeticRefusal as wide:
                raise wide.at(e.loc)
        return None

    def constexpr_of_tensor(self, s: ast.AnnAssign, e: K.Expr) -> None:
        """Refuse `name: tl.constexpr = value` where ``value`` is a tensor in Triton 3.6: a tl
        function's result (`tl.minimum(C, 3)`, `tl.cdiv(C, 2)`, `tl.where(...)`), a helper's
        (visit_Return makes a returned number a tensor), a name a plain assignment binds to a
        number, a run-time value. Triton wraps the tensor in a constexpr, and any operator on
        the name then fails to compile ("_semantic argument must be provided outside of JIT
        functions"), where the frontend folded it to its number and verified the kernel."""
        why = None
        root = self._folded_tensor(s.value)
        if root is not None:
            why = f"`{ast.unparse(root)}` is a tensor there"
        elif self.is_runtime(e):
            why = "it is a run-time value"
        else:
            for n in ast.walk(s.value):
                if not isinstance(n, ast.Call):
                    continue
                path = self.frame.module.scope.module_path(n.func) or ""
                if path.startswith("tl.") and path != "tl.constexpr":
                    why = f"`{ast.unparse(n)}` returns a tensor"
                    break
                if self.calls_helper(n):
                    why = f"`{ast.unparse(n)}` returns a tensor (a helper's result is one)"
                    break
        if why is not None:
            raise self.err(f"`{ast.unparse(s).strip()}`: {why}, and Triton 3.6 wraps a tensor "
                           f"in the constexpr, on which any operator fails to compile (\"_semantic "
                           f"argument must be provided outside of JIT functions\"): bind it "
                           f"without the annotation", s, check="unsupported-expression")

    def compile_time_condition(self, test: ast.expr, cond: K.Expr, folded: object,
                               what: str) -> None:
        """Refuse the condition ``test`` (built as ``cond``, :func:`fold` giving ``folded``) of
        an `if` or a conditional expression (``what``) where Triton 3.6 computes it at compile
        time and refuses it (module docstring). A condition that reads a number a plain
        assignment bound (a tensor: ``to_tensor`` in the built expression, or
        :meth:`_folded_tensor`) is a tensor, which Triton tests at run time."""
        if folded is None or type(folded) in (bool, int):
            return
        if any(isinstance(n, ast.Call) for n in ast.walk(test)):
            return  # a function's result (a helper's: visit_Return makes it a tensor)
        if self.tensor_condition(test, cond):
            return
        why = condition_type_refusal(f"{what} on the compile-time {type(folded).__name__} "
                                     f"{folded!r}", type(folded).__name__)
        raise self.err(f"`{ast.unparse(test)}`: {why}; Triton 3.6 refuses the kernel", test,
                       check="unsupported-control-flow")

    def tensor_condition(self, test: ast.expr, cond: K.Expr) -> bool:
        """Whether the condition ``test`` (built as ``cond``) of an `if` reads a
        number a plain assignment bound (``to_tensor`` in the built expression, or
        :meth:`_folded_tensor`: `f = 1; if f:`, a helper's returned number): a tensor in Triton
        3.6, whose `if` on it is a run-time scf.if of both branches even where the value
        folds. The builder then builds both branches as it builds an `if` on a run-time value
        (a name one branch binds is undefined after it, a tl.static_assert in either branch is
        checked), where it took the folded branch alone: `f = 1; if f: m = N` then a loop to
        `m` was verified, and Triton refuses it ("m is not defined")."""
        if not self.in_partition:
            # the kernel body: a name it binds by a plain assignment is a tensor too (Triton's
            # visit_Assign converts every number it assigns), so `f = 1; if f: M = N` leaves M
            # undefined after the `if`, as Triton says
            return any(isinstance(n, ast.Name) and self._is_local_tensor(n)
                       for n in ast.walk(test))
        return self._folded_tensor(test) is not None or any(
            isinstance(x, K.Op) and x.name == "to_tensor" for x in K.walk_expr(cond))

    def constexpr_names(self) -> frozenset:
        """The names of the function being built that are a constexpr in Triton as bound now
        (:attr:`Frame.constexprs`, the variable of a tl.static_range loop being built and not
        unrolled, ``static_vars``, and a name such a loop left bound to its variable's last
        value, :attr:`Frame.static_bound`; kept with a region of :attr:`Frame.regions` as it
        is entered)."""
        f = self.frame
        return frozenset(f.constexprs) | frozenset(
            n for n in f.env if n in f.static_bound or f.kir(n) in self.static_vars)

    def constexpr_rebound_in_region(self, name: str, node: ast.AST) -> None:
        """Refuse a plain assignment, in the body of a range / tl.range / while loop or a branch
        of an `if` on a runtime value, to a name bound as a tl.constexpr before that region was
        entered. The assignment makes it a tensor (visit_Assign), and Triton 3.6 refuses a
        loop-carried or branch-joined name whose type changes ("Loop carried variable ... changed
        type", "initial value for `b` is of type constexpr[...], but the then block redefines
        it"); read as a plain rebinding, such a kernel was verified and lowered."""
        for region in self.frame.regions:
            if region[0] == "region" and name in region[1]:
                raise self.err(f"`{name}` is a constexpr in Triton (a tl.constexpr binding "
                               f"or parameter, or the variable of a tl.static_range loop before "
                               f"it), and this assignment in the body of a loop or a "
                               f"branch of an `if` on a runtime value makes it a tensor: Triton "
                               f"3.6 refuses a name whose type the loop or the branch changes; "
                               f"bind the new value to another name", node,
                               check="unsupported-expression")
