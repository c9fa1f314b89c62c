"""Folding kernel IR expressions of compile-time values to the Python value they compute (the
builder's and the protocol walker's constexpr arithmetic)."""

from __future__ import annotations

import ast

from ..ir import kernel as K
from ..ir.big_ints import ArithmeticRefusal, PythonRaises
from .scope import fold_int

#: a kernel IR binary operator -> the Python operator fold_int computes it with
_AST_BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "//": ast.FloorDiv,
               "%": ast.Mod, "&": ast.BitAnd, "|": ast.BitOr, "^": ast.BitXor, "<<": ast.LShift,
               ">>": ast.RShift, "**": ast.Pow}


def fold(e: K.Expr) -> object:
    """The value of a compile-time constant expression (Python's semantics: constexprs), else
    None."""
    if isinstance(e, K.Const):
        return e.value
    if isinstance(e, K.Global):
        return e.value
    if isinstance(e, K.TupleExpr):
        vals = [fold(x) for x in e.items]
        return None if any(v is None for v in vals) else tuple(vals)
    if isinstance(e, K.UnaryOp):
        if e.op == "not" and isinstance(e.operand, (K.Const, K.Global)) \
                and e.operand.value is None:
            return True  # `not None` (None itself folds to None, which says "not constant")
        v = fold(e.operand)
        if v is None:
            return None
        return {"-": lambda x: -x, "+": lambda x: +x, "not": lambda x: not x,
                "~": lambda x: ~x}[e.op](v)
    if isinstance(e, (K.BinOp, K.Compare)):
        a, b = fold(e.lhs), fold(e.rhs)
        if a is None or b is None or isinstance(a, str) or isinstance(b, str):
            return None
        try:
            if isinstance(e, K.Compare):
                return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                        ">=": a >= b}[e.op]
            if e.op == "/":
                return a / b
            if isinstance(a, int) and isinstance(b, int):
                op = _AST_BINOPS[e.op]()
                return fold_int(op, a, b)
            return eval(f"a {e.op} b", {}, {"a": a, "b": b})  # floats: + - * ** only here
        except PythonRaises:
            # Python raises on these numbers (`C >> -1`): callers fold names a plain assignment
            # made tensors too, whose arithmetic is Triton's, so no refusal here; where they
            # are Python numbers the walker refuses them (PythonNumbers.python_ints,
            # Walker.binop)
            return None
        except ArithmeticRefusal as wide:
            raise wide.at(e.loc)
        except Exception:
            return None
    if isinstance(e, K.Op) and e.name == "to_tensor" and len(e.args) == 1:
        # a number a plain assignment made a tensor: the same value (its type is the
        # lowering's; where Triton's value on it differs, the frontend refuses the use)
        return fold(e.args[0])
    if isinstance(e, K.BoolOp):
        # Python's value, which Triton's constexpr `and` / `or` returns too: the operand that
        # decides it, else the last (`0 or 4` is 4, not True)
        vals = [fold(x) for x in e.items]
        if any(v is None for v in vals):
            return None
        return next((v for v in vals[:-1] if bool(v) == (e.op == "or")), vals[-1])
    return None
