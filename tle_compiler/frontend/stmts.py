"""Statements of a partition (or of the kernel body): assignments, ``for`` over ranges, ``if`` on
affine conditions, and inlining of module-level helper functions.

Control flow that contains pipe events must be static (depend only on loop variables and params):
such loops become :class:`For`, such ifs :class:`If`; otherwise the frontend rejects them with the
line. Control flow without events is dropped, but what it assigns is tracked: a name assigned in a
loop body or in one branch only is *poisoned* (:class:`Poison`) for index computations, so a
loop-carried counter (``it += 1``) is never mistaken for a constant.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Optional, Union

from ..ir.expr import Affine, BoolOp, Compare, Cond, ModCompare, Not
from ..ir.nodes import READER_VERBS, WRITER_VERBS, For, If, Stmt, walk_accesses, walk_events
from .context import Frame
from .exprs import (RANGE_FUNCS, STATIC_RANGE_ARGS, STATIC_RANGES, TL_RANGE_ARGS, ExprEval,
                    holds_slot, merge_views, src)
from .values import (HANDLES, Aff, Const, Data, KernelArg, ModRef, Poison, SlotV, Sym, TupleV, Value,
                     WaitV)

MAX_INLINE_DEPTH = 32

_CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}

# A condition: an IR Cond, a constant, or the reason it is not affine.
CondResult = Union[Cond, bool, "NotAffine"]


class NotAffine:
    def __init__(self, reason: str):
        self.reason = reason


def assigned_names(body: list[ast.stmt]) -> dict[str, int]:
    """Names stored anywhere in ``body`` (not inside nested functions) → first line."""
    out: dict[str, int] = {}

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef)):
                if hasattr(child, "name"):
                    out.setdefault(child.name, child.lineno)
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                out.setdefault(child.id, child.lineno)
            visit(child)

    for s in body:
        if isinstance(s, ast.Name) and isinstance(s.ctx, ast.Store):  # pragma: no cover
            out.setdefault(s.id, s.lineno)
        visit(ast.Module(body=[s], type_ignores=[]))
    return out


def _affine_like(v: Optional[Value]) -> bool:
    return isinstance(v, (Aff, KernelArg, Sym)) or (isinstance(v, Data) and v.key is not None)


class StmtWalker(ExprEval):
    # -- binding --------------------------------------------------------------------------------
    def bind_name(self, name: str, value: Value, node: ast.AST) -> None:
        if isinstance(value, Data) and value.key is not None and value.hint is None:
            value = Data(node=value.node, fields=value.fields, key=value.key, hint=name,
                         why=value.why)
        self.env[name] = value

    def bind(self, target: ast.expr, value: Value, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.bind_name(target.id, value, node)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if (isinstance(value, TupleV) and len(value.items) == len(target.elts)
                    and not any(isinstance(e, ast.Starred) for e in target.elts)):
                for t, v in zip(target.elts, value.items):
                    self.bind(t, v, node)
            else:
                for t in target.elts:
                    self.bind(t.value if isinstance(t, ast.Starred) else t, Data(node=node), node)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, Data(node=node), node)
        elif isinstance(target, ast.Attribute):
            self.eval(target.value)
        elif isinstance(target, ast.Subscript):
            self.eval(target.value)
            self.eval(target.slice)

    # -- blocks ---------------------------------------------------------------------------------
    def exec_block(self, body: list[ast.stmt]) -> list[Stmt]:
        saved, self.out = self.out, []
        try:
            for s in body:
                self.exec_stmt(s)
            return self.out
        finally:
            self.out = saved

    def exec_stmt(self, s: ast.stmt) -> None:
        method = getattr(self, f"_s_{type(s).__name__}", None)
        if method is not None:
            method(s)
        else:
            self._s_other(s)

    def _s_Expr(self, s: ast.Expr) -> None:
        self.eval(s.value)

    def _s_Assign(self, s: ast.Assign) -> None:
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            self.assign_hint = (s.targets[0].id, s.value)
        v = self.eval(s.value)
        self.assign_hint = None
        for t in s.targets:
            self.bind(t, v, s)

    def _s_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is None:
            return
        if isinstance(s.target, ast.Name):
            self.assign_hint = (s.target.id, s.value)
        v = self.eval(s.value)
        self.assign_hint = None
        self.bind(s.target, v, s)

    def _s_AugAssign(self, s: ast.AugAssign) -> None:
        if isinstance(s.target, ast.Name):
            cur = self.lookup(s.target.id, s.target)
            v = self.binop(s.op, cur, self.eval(s.value), s)
            self.bind_name(s.target.id, v, s)
        else:
            self.bind(s.target, Data(node=s), s)
            self.eval(s.value)

    def _s_Pass(self, s: ast.stmt) -> None:
        pass

    _s_Global = _s_Nonlocal = _s_Delete = _s_Assert = _s_Pass

    def _s_Break(self, s: Union[ast.Break, ast.Continue]) -> None:
        word = "break" if isinstance(s, ast.Break) else "continue"
        raise self.err(f"`{word}` is not supported: Triton rejects it (an unsupported AST node); "
                       f"guard the rest of the loop body with an `if` instead", s,
                       check="unsupported-control-flow")

    _s_Continue = _s_Break

    def reject_loop_else(self, s: Union[ast.For, ast.While], how: str) -> None:
        """A loop's ``else`` does not run the Python way in Triton: an error at the loop."""
        if s.orelse:
            kind = "for" if isinstance(s, ast.For) else "while"
            raise self.err(f"`{kind} ... else` is not supported: {how}; move the else body after "
                           f"the loop (line {s.orelse[0].lineno})", s,
                           check="unsupported-control-flow")

    def _s_Import(self, s: Union[ast.Import, ast.ImportFrom]) -> None:
        for a in s.names:
            self.env[(a.asname or a.name).split(".")[0]] = Data(node=s)

    _s_ImportFrom = _s_Import

    def _s_FunctionDef(self, s: ast.stmt) -> None:
        if self.mode == "partition":
            for n in ast.walk(s):
                if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                        and n.func.attr in WRITER_VERBS + READER_VERBS):
                    raise self.err(f"`{src(n.func)}(...)` inside the nested function '{s.name}': "
                                   f"the frontend follows module-level functions only; define "
                                   f"'{s.name}' at module level", n, check="nested-function")
        self.env[s.name] = Data(node=s)

    _s_AsyncFunctionDef = _s_ClassDef = _s_FunctionDef

    def _s_Return(self, s: ast.Return) -> None:
        v = self.eval(s.value) if s.value is not None else Const(None)
        self.frame.returns.append(v)
        if not self.frame_top_last(s):
            self.frame.early_return = self.frame.early_return or s

    def frame_top_last(self, s: ast.Return) -> bool:
        return getattr(self, "_last_top", None) is s

    def _s_With(self, s: ast.With) -> None:
        for item in s.items:
            v = self.eval(item.context_expr)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, Data(node=item.context_expr) if not isinstance(
                    v, HANDLES) else v, s)
        self.depth += 1
        try:
            self.out.extend(self.exec_block(s.body))
        finally:
            self.depth -= 1

    _s_AsyncWith = _s_With

    def _s_other(self, s: ast.stmt) -> None:
        """try/match/async for and the like: allowed only without pipe events."""
        env_before = dict(self.env)
        self.depth += 1
        saved_bad = self.bad_loop
        self.bad_loop = (s, f"pipe events inside a `{type(s).__name__.lower()}` statement are not "
                            f"supported: keep them in plain code, for-range loops and ifs",
                         "unsupported-control-flow")
        try:
            # no events in here (else an error); the slot accesses stay, in order
            for field in ("body", "orelse", "finalbody"):
                sub = getattr(s, field, None)
                if isinstance(sub, list):
                    self.hoist(walk_accesses(tuple(self.exec_block(sub))))
            for h in getattr(s, "handlers", []) or []:
                self.hoist(walk_accesses(tuple(self.exec_block(h.body))))
            for case in getattr(s, "cases", []) or []:
                self.hoist(walk_accesses(tuple(self.exec_block(case.body))))
        finally:
            self.depth -= 1
            self.bad_loop = saved_bad
        self.merge_into(env_before, [dict(self.env)], assigned_names([s]), s, "statement")

    # -- merging environments -------------------------------------------------------------------
    def merge_value(self, name: str, a: Optional[Value], b: Optional[Value], reason: str,
                    slot_reason: Optional[str] = None) -> Optional[Value]:
        """The value of ``name`` where paths giving ``a`` and ``b`` meet (None: unbound).
        ``slot_reason``: why a slot (or a view of one) that differs is path-dependent."""
        if isinstance(a, Aff) and isinstance(b, Aff) and a == b:
            return Aff(a.expr, a.runtime or b.runtime)  # runtime on either path: runtime
        if a == b:
            return a
        if a is None and b is None:
            return None
        why = slot_reason or reason
        if (a is None or isinstance(a, Data) and not _affine_like(a)) and \
                (b is None or isinstance(b, Data) and not _affine_like(b)):
            return merge_views(a, b, f"`{name}` {why}")
        slot = holds_slot(a) or holds_slot(b)
        for p in (a, b):
            if isinstance(p, Poison):
                return replace(p, slot=True) if slot and not p.slot else p
        return Poison(name, why if slot else reason, slot)

    def merge_into(self, before: dict[str, Value], afters: list[dict[str, Value]],
                   names: dict[str, int], node: ast.AST, what: str) -> None:
        """After a statement that may run its body zero or several times (or one of several
        branches), set each name it assigns to the merge of the possible values."""
        self.merge_node = node
        for name, line in names.items():
            values = [before.get(name)] + [env.get(name) for env in afters] \
                if what != "if" else [env.get(name) for env in afters]
            merged = values[0]
            for v in values[1:]:
                merged = self.merge_value(name, merged, v, self.poison_reason(what, node, line),
                                          self.slot_reason(what, node, line))
            if merged is None:
                self.env.pop(name, None)
            else:
                self.env[name] = merged

    @staticmethod
    def slot_reason(what: str, node: ast.AST, line: int) -> str:
        """Why a slot assigned in a loop, an if or another statement depends on the path."""
        if what == "loop":
            return (f"is assigned inside the loop at line {node.lineno} (at line {line}): after the "
                    f"loop, or in the next iteration before it is assigned again, it may hold any "
                    f"iteration's slot (slots are per iteration)")
        if what == "if":
            return (f"is assigned differently in the branches of the if at line {node.lineno}, so "
                    f"which slot it holds depends on the condition")
        return f"is assigned inside the {what} at line {node.lineno}"

    def hoist(self, accesses) -> None:
        """Keep the slot accesses of control flow the IR does not express (data-dependent ifs,
        while loops, try, ...: they hold no events) in this block, in order: each may happen."""
        for a in accesses:
            self.record(a)

    def forget_slots(self, names: dict[str, int], node: ast.AST) -> None:
        """At the head of a loop: a name the body assigns that holds a slot (or a view of one)
        may hold the previous iteration's slot there."""
        for name, line in names.items():
            v = self.env.get(name)
            if holds_slot(v):
                self.env[name] = self.lose(v, name, self.slot_reason("loop", node, line))

    def lose(self, v: Value, name: str, reason: str) -> Value:
        if isinstance(v, Data):
            return replace(v, lost=v.lost or f"`{name}` {reason}")
        if isinstance(v, TupleV):
            return TupleV(tuple(self.lose(x, name, reason) for x in v.items))
        if isinstance(v, (SlotV, WaitV, Poison)):
            return Poison(name, reason, slot=True)
        return v

    @staticmethod
    def poison_reason(what: str, node: ast.AST, line: int) -> str:
        if what == "loop":
            return (f"is assigned inside the loop at line {node.lineno} (at line {line}), so its "
                    f"value depends on the iteration (write indices as affine expressions of the "
                    f"loop variables)")
        if what == "if":
            return (f"is assigned differently in the branches of the if at line {node.lineno}, so "
                    f"its value depends on the condition")
        return f"is assigned inside the {what} at line {node.lineno}"

    # -- for ------------------------------------------------------------------------------------
    def fresh_loop_var(self, name: str) -> str:
        ir, k = name, 1
        while ir in self.loop_vars:
            ir, k = f"{name}_{k}", k + 1
        return ir

    def range_bounds(self, path: str, it: ast.Call, s: ast.For
                     ) -> tuple[Optional[tuple[Affine, Affine, int]], Optional[str]]:
        """(start, stop, step) of a ``range`` / ``tl.range`` / ``tl.static_range`` call, bound as
        Triton binds them, or (None, why not) when the loop cannot be a Pipe IR loop. Calls
        Triton (or Python) would reject are errors whether or not the loop has events."""
        text = src(it)
        # arguments are evaluated once, in Python's order (positional, then keywords)
        pos = [(a, self.eval(a.value if isinstance(a, ast.Starred) else a)) for a in it.args]
        kws = [(kw, self.eval(kw.value)) for kw in it.keywords]
        fn = "range" if path == "builtins.range" else path
        if path == "builtins.range" and kws:
            raise self.err(f"`{text}`: Python's range takes no keyword arguments (Triton ignores "
                           f"them, so the loop would run with the default step); write the step "
                           f"as the third positional argument, or use tl.range(..., step=...)",
                           s, check="bad-loop")
        if any(isinstance(a, ast.Starred) for a, _ in pos) or any(kw.arg is None for kw, _ in kws):
            return None, f"`{text}` must spell its arguments out (no *args or **kwargs)"
        if path == "builtins.range":
            if not 1 <= len(pos) <= 3:
                raise self.err(f"`{text}`: range takes 1 to 3 arguments, got {len(pos)}", s,
                               check="bad-loop")
            names = ("arg1", "arg2", "step")
        else:
            names = STATIC_RANGE_ARGS if path in STATIC_RANGES else TL_RANGE_ARGS
            if len(pos) > len(names):
                raise self.err(f"`{text}`: {fn} takes at most {len(names)} positional arguments "
                               f"({', '.join(names)}), got {len(pos)}", s, check="bad-loop")
        given: dict[str, tuple[ast.expr, Value]] = dict(zip(names, pos))
        for kw, v in kws:
            if kw.arg not in names:
                raise self.err(f"`{text}`: {fn} has no argument '{kw.arg}' (its arguments: "
                               f"{', '.join(names)})", s, check="bad-loop")
            if kw.arg in given:
                raise self.err(f"`{text}`: {fn} got two values for '{kw.arg}'", s,
                               check="bad-loop")
            given[kw.arg] = (kw.value, v)
        if "arg1" not in given:
            raise self.err(f"`{text}`: {fn} needs at least its first argument", s,
                           check="bad-loop")

        def absent(name: str) -> bool:
            v = given.get(name)
            return v is None or isinstance(v[1], Const) and v[1].value is None

        zero = (ast.Constant(0), Aff(Affine.of(0)))
        start, stop = (zero, given["arg1"]) if absent("arg2") else (given["arg1"], given["arg2"])
        step_c = 1 if absent("step") else self.const_int(given["step"][1])
        if step_c == 0:
            raise self.err(f"the step of `{text}` must be a non-zero integer, got 0 (the loop "
                           f"would never end)", s, check="bad-loop")
        if step_c is None:
            return None, (f"the step of `{text}` must be a non-zero integer literal or constant, "
                          f"got `{src(given['step'][0])}`")
        lo, hi = self.as_aff(start[1]), self.as_aff(stop[1])
        if lo is None or hi is None:
            which = start[0] if lo is None else stop[0]
            return None, (f"loop bounds must be affine in enclosing loop variables and kernel "
                          f"params: `{src(which)}` is not")
        return (lo, hi, step_c), None

    def _s_For(self, s: ast.For) -> None:
        self.reject_loop_else(s, "Triton rejects it after a range / tl.range loop (\"Don't know "
                                 "what to do with else after for\") and runs it inside every "
                                 "iteration of a tl.static_range loop")
        bad: Optional[str] = None
        bounds: Optional[tuple[Affine, Affine, int]] = None
        it = s.iter
        path = None
        if isinstance(it, ast.Call):
            callee = self.eval(it.func)
            path = callee.path if isinstance(callee, ModRef) else None
        if path in RANGE_FUNCS:
            bounds, bad = self.range_bounds(path, it, s)
        else:
            self.eval(it)
            bad = (f"only `for v in range(...)` / tl.range / tl.static_range loops may contain "
                   f"pipe events, not `for ... in {src(it)}`")
        if not isinstance(s.target, ast.Name) and bad is None:
            bad = f"the loop target `{src(s.target)}` must be a plain name"

        names = assigned_names(s.body)
        if isinstance(s.target, ast.Name):
            names.setdefault(s.target.id, s.lineno)
        else:
            names.update(assigned_names([ast.Assign(targets=[s.target], value=ast.Constant(0),
                                                    lineno=s.lineno)]))
        before = dict(self.env)
        reason = self.poison_reason("loop", s, s.lineno)
        for name in names:
            if _affine_like(self.env.get(name)):
                self.env[name] = Poison(name, reason)
        self.forget_slots(names, s)
        ir_var = self.fresh_loop_var(s.target.id) if isinstance(s.target, ast.Name) else "_"
        # a static_range variable is a constexpr (the loop is unrolled); a range / tl.range
        # variable is a runtime integer
        runtime = path not in STATIC_RANGES
        if isinstance(s.target, ast.Name):
            self.env[s.target.id] = (Aff(Affine.of(ir_var), runtime) if bounds
                                     else Data(node=s.target, runtime=runtime))
        else:
            self.bind(s.target, Data(node=s.target), s)
        if bounds:
            self.loop_ranges[ir_var] = bounds  # type: ignore[assignment]

        self.loop_vars.append(ir_var)
        self.depth += 1
        saved_bad = self.bad_loop
        if bad is not None:
            self.bad_loop = (s, f"this loop contains pipe events, but {bad}", "non-affine-loop")
        try:
            body = self.exec_block(s.body)
        finally:
            self.loop_vars.pop()
            self.loop_ranges.pop(ir_var, None)
            self.depth -= 1
            self.bad_loop = saved_bad
        after = dict(self.env)
        self.env.clear()
        self.env.update(before)
        self.merge_into(before, [after], names, s, "loop")
        if isinstance(s.target, ast.Name) and s.target.id in names:
            self.env[s.target.id] = Poison(s.target.id, f"is the variable of the loop at line "
                                           f"{s.lineno}, used after the loop")
        if any(walk_events(tuple(body))):
            if bad is not None:
                raise self.err(f"this loop contains pipe events, but {bad}", s,
                               check="non-affine-loop")
        if body and bad is not None:
            # only slot accesses, in a loop the IR cannot express: they may happen, so they stay
            self.hoist(walk_accesses(tuple(body)))
        elif body:
            start, stop, step = bounds  # type: ignore[misc]
            self.out.append(For(ir_var, start, stop, step, tuple(body), self.k.loc(s)))

    def _s_While(self, s: ast.While) -> None:
        self.reject_loop_else(s, "Triton does not run a while loop's else")
        names = assigned_names(s.body)
        before = dict(self.env)
        reason = self.poison_reason("loop", s, s.lineno)
        for name in names:
            if _affine_like(self.env.get(name)):
                self.env[name] = Poison(name, reason)
        self.forget_slots(names, s)
        self.eval_guarded(s.test, "a while condition")
        self.depth += 1
        saved_bad = self.bad_loop
        self.bad_loop = (s, "pipe events inside a `while` loop: its trip count is not known to the "
                            "compiler; use `for i in range(n)` with n a kernel param",
                         "unsupported-control-flow")
        try:
            # no events (else an error): its slot accesses may happen, so they stay, in order
            self.hoist(walk_accesses(tuple(self.exec_block(s.body))))
        finally:
            self.depth -= 1
            self.bad_loop = saved_bad
        after = dict(self.env)
        self.env.clear()
        self.env.update(before)
        self.merge_into(before, [after], names, s, "loop")

    # -- if -------------------------------------------------------------------------------------
    def _s_If(self, s: ast.If) -> None:
        cond = self.cond(s.test)
        if isinstance(cond, bool):  # static: only the taken branch exists
            self.out.extend(self.exec_block(s.body if cond else s.orelse))
            return
        before = dict(self.env)
        self.depth += 1
        try:
            then = self.exec_block(s.body)
            env_then = dict(self.env)
            self.env.clear()
            self.env.update(before)
            orelse = self.exec_block(s.orelse)
            env_else = dict(self.env)
        finally:
            self.depth -= 1
        names = assigned_names(s.body)
        names.update(assigned_names(s.orelse))
        self.merge_into(before, [env_then, env_else], names, s, "if")
        if not then and not orelse:
            return
        if isinstance(cond, NotAffine) and not any(walk_events(tuple(then) + tuple(orelse))):
            # only slot accesses under a data-dependent condition: each may happen
            self.hoist(walk_accesses(tuple(then) + tuple(orelse)))
            return
        if isinstance(cond, NotAffine):
            raise self.err(f"pipe events under a condition that is not affine in loop variables "
                           f"and kernel params: `{src(s.test)}` ({cond.reason}; line {s.lineno}). "
                           f"Which events a partition performs must not depend on data",
                           s, check="non-affine-if")
        self.out.append(If(cond, tuple(then), tuple(orelse), self.k.loc(s)))

    def cond(self, node: ast.expr, guarded: bool = False) -> CondResult:
        ev = self.eval_guarded if guarded else (lambda n, why=None: self.eval(n))
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            items: list[CondResult] = [self.cond(node.values[0], guarded)]
            for v in node.values[1:]:
                items.append(self.cond(v, True))
            consts = [i for i in items if isinstance(i, bool)]
            if op == "and" and False in consts or op == "or" and True in consts:
                return op == "or"  # decided statically, whatever the other operands are
            bad = next((i for i in items if isinstance(i, NotAffine)), None)
            if bad is not None:
                return bad
            conds = [i for i in items if not isinstance(i, bool)]
            if not conds:
                return op == "and"
            return conds[0] if len(conds) == 1 else BoolOp(op, tuple(conds))  # type: ignore[arg-type]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = self.cond(node.operand, guarded)
            if isinstance(inner, NotAffine):
                return inner
            return (not inner) if isinstance(inner, bool) else Not(inner)
        if isinstance(node, ast.Compare):
            return self.compare(node, guarded)
        v = ev(node, "a condition")
        if isinstance(v, Const) and isinstance(v.value, (bool, type(None))):
            return bool(v.value)
        a = self.as_aff(v)
        if a is None:
            return NotAffine(self.why_not(v, node))
        if a.is_const:
            return a.const != 0
        return Compare(a, "!=", Affine.of(0))

    def why_not(self, v: Value, node: ast.AST) -> str:
        if isinstance(v, Poison):
            return f"'{v.name}' {v.reason}"
        if isinstance(v, Data) and v.why:
            return v.why
        return f"`{src(node)}` depends on data"

    def compare(self, node: ast.Compare, guarded: bool) -> CondResult:
        why = "a condition"
        ev = (lambda n: self.eval_guarded(n, why)) if guarded else self.eval
        operands = [node.left, *node.comparators]
        # Evaluate each operand once; `e % K` operands keep their pieces for ModCompare.
        # (e, K, runtime): a runtime `e % K` is C's remainder (the sign of e), a constexpr one
        # Python's
        vals: list[tuple[Optional[Affine], Optional[tuple[Affine, int, bool]], Value]] = []
        for o in operands:
            if isinstance(o, ast.BinOp) and isinstance(o.op, ast.Mod):
                lv, rv = ev(o.left), ev(o.right)
                la, k = self.as_aff(lv), self.const_int(rv)
                rt = self.is_runtime(lv) or self.is_runtime(rv)
                full = self.binop(o.op, lv, rv, o)
                vals.append((self.as_aff(full) if isinstance(full, Aff) else None,
                             (la, k, rt) if la is not None and k is not None and k > 0 else None,
                             full))
            else:
                v = ev(o)
                vals.append((self.as_aff(v), None, v))
        pieces: list[CondResult] = []
        for i, op in enumerate(node.ops):
            sym = _CMP.get(type(op))
            (la, lm, lv), (ra, rm, rv) = vals[i], vals[i + 1]
            lnode, rnode = operands[i], operands[i + 1]
            if sym is None:
                return NotAffine(f"`{type(op).__name__}` is not an integer comparison")
            if la is not None and ra is not None:
                c = Compare(la, sym, ra)
                pieces.append(c.eval({}) if not c.variables else c)
                continue
            mod = None
            if lm is not None and ra is not None and ra.is_const:
                mod = (lm, ra.const)
            elif rm is not None and la is not None and la.is_const:
                mod = (rm, la.const)
            if mod is not None and sym in ("==", "!="):
                (e, k, rt), r = mod
                # C's and Python's remainders agree where e >= 0: keep the Python form there
                mc = ModCompare(e, k, sym, r, c=rt and not self.nonneg(e))
                pieces.append(mc.eval({}) if not mc.variables else mc)
                continue
            if mod is not None:
                return NotAffine(f"`{src(node)}`: a remainder can only be compared with == or !=")
            bad_v, bad_n = (lv, lnode) if la is None and lm is None else (rv, rnode)
            if la is None and lm is not None or ra is None and rm is not None:
                return NotAffine(f"`{src(node)}`: compare `e % K` with an integer constant")
            return NotAffine(self.why_not(bad_v, bad_n))
        conds = [p for p in pieces if not isinstance(p, bool)]
        if False in pieces:
            return False
        if not conds:
            return True
        return conds[0] if len(conds) == 1 else BoolOp("and", tuple(conds))  # type: ignore[arg-type]

    # -- inlining -------------------------------------------------------------------------------
    def call_function(self, name: str, args: list[Value], kwargs: dict[str, Value],
                      node: ast.Call) -> Value:
        fdef = self.scope.functions[name]
        if self.mode == "kernel":
            self.reject_handles(args, kwargs, node)
            return Data(node=node)
        if any(f.function == name for f in self.frames):
            raise self.err(f"recursive call of '{name}' in a partition: the frontend inlines "
                           f"module-level functions and cannot inline a recursion", node,
                           check="recursion")
        if len(self.frames) >= MAX_INLINE_DEPTH:
            raise self.err(f"calls nested deeper than {MAX_INLINE_DEPTH} levels", node,
                           check="recursion")
        env = self.bind_params(fdef, args, kwargs, node, f"'{name}'")
        return self.run_function(fdef, env, inlined=True)

    def bind_params(self, fdef: ast.FunctionDef, args: list[Value], kwargs: dict[str, Value],
                    node: ast.AST, what: str) -> dict[str, Value]:
        a = fdef.args
        positional = [p.arg for p in a.posonlyargs + a.args]
        defaults = dict(zip(positional[len(positional) - len(a.defaults):], a.defaults))
        for p, d in zip(a.kwonlyargs, a.kw_defaults):
            if d is not None:
                defaults[p.arg] = d
        env: dict[str, Value] = {}
        if len(args) > len(positional) and a.vararg is None:
            raise self.err(f"{what} takes {len(positional)} positional argument(s), "
                           f"{len(args)} given", node, check="bad-call")
        for p, v in zip(positional, args):
            env[p] = v
        if a.vararg is not None:
            env[a.vararg.arg] = TupleV(tuple(args[len(positional):]))
        names = set(positional) | {p.arg for p in a.kwonlyargs}
        for k, v in kwargs.items():
            if k in env and k in positional[:len(args)]:
                raise self.err(f"{what} got two values for '{k}'", node, check="bad-call")
            if k not in names and a.kwarg is None:
                raise self.err(f"{what} has no parameter '{k}'", node, check="bad-call")
            env[k] = v
        for p in positional + [p.arg for p in a.kwonlyargs]:
            if p not in env:
                if p not in defaults:
                    raise self.err(f"{what}: missing argument '{p}'", node, check="bad-call")
                env[p] = self.default_value(defaults[p])
        if a.kwarg is not None:
            env[a.kwarg.arg] = Data(node=node)
        return env

    def default_value(self, node: ast.expr) -> Value:
        c = self.scope.const_int(node)
        if c is not None:
            return Aff(Affine.of(c))
        if isinstance(node, ast.Constant):
            return Const(node.value)
        return Data(node=node)

    def run_function(self, fdef: ast.FunctionDef, env: dict[str, Value], inlined: bool) -> Value:
        frame = Frame(fdef.name, env, events_at_start=self.k.events)
        self.frames.append(frame)
        saved_last = getattr(self, "_last_top", None)
        self._last_top = fdef.body[-1] if fdef.body else None
        try:
            for s in fdef.body:
                self.exec_stmt(s)
        finally:
            self.frames.pop()
            self._last_top = saved_last
        if frame.early_return is not None and self.k.events != frame.events_at_start:
            raise self.err(f"early `return` in '{fdef.name}', which performs pipe events: the "
                           f"events after it would depend on the path taken; restructure so the "
                           f"function returns at its end", frame.early_return,
                           check="unsupported-control-flow")
        if not frame.returns:
            return Const(None)
        merged: Optional[Value] = frame.returns[0]
        for v in frame.returns[1:]:
            merged = self.merge_value("<return>", merged, v,
                                      f"is the result of '{fdef.name}', which returns different "
                                      f"values on different paths")
        return merged if merged is not None else Const(None)

