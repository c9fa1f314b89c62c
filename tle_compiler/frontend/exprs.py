"""Abstract evaluation of expressions: names, arithmetic (affine or not), attribute access on slots,
method calls on pipes and handles (which emit the pipe events), and calls of tl / tle functions.

Expressions are evaluated in Python's order, once, so an event written inside an expression
(``tl.store(local_ptr(w.acquire(i).x), v)``) is emitted where Python would run it.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import replace
from typing import Optional

from ..diagnostics import TleError
from ..ir.expr import Affine
from ..ir.nodes import READER_VERBS, WRITER_VERBS, Access, Event, Loc, Stmt
from ..language.gpu import Unevaluated, smem, validate_alloc
from ..language.pipe import validate_reader
from .context import ASSUME_WHERE, KNOWN_DOMAINS, Frame, KernelCtx
from .params import is_placeholder
from .scope import attr_name, canon, fold_int, is_triton
from .values import (HANDLES, Aff, BufferRef, Const, Data, FuncRef, KernelArg, ModRef, PipeRef,
                     Poison, ReaderRef, SlotField, SlotV, Sym, TupleV, Value, WaitV, WriterRef)

#: tl/gl functions (and tensor methods) whose result is a view of their first argument: of a
#: loaded tile, the same tile rearranged (a matrix multiply still reads it from shared memory).
VIEW_OPS = frozenset({"trans", "permute", "reshape", "view", "broadcast_to", "expand_dims",
                      "convert_layout"})
#: Matrix multiplies: the fields their A and B operands are views of are read by wgmma.
DOT_OPS = frozenset({"dot", "warpgroup_mma", "dot_scaled", "mma_v2", "tcgen05_mma"})
#: Integer functions of their arguments only: of params and constants they are params.
PURE_OPS = frozenset({"cdiv", "minimum", "maximum", "program_id", "num_programs",
                      "next_power_of_2", "min", "max", "abs"})
#: Pure integer functions whose result is a runtime integer whatever their arguments.
RUNTIME_OPS = frozenset({"program_id", "num_programs"})
HANDLE_METHODS = frozenset(("writer", "reader") + WRITER_VERBS + READER_VERBS)
RANGE_FUNCS = frozenset({"builtins.range", "tl.range", "tl.static_range", "gl.range",
                         "gl.static_range"})
#: Unrolled at compile time: their loop variable is a constexpr.
STATIC_RANGES = frozenset({"tl.static_range", "gl.static_range"})
#: The parameters of tl.range / tl.static_range (Triton 3.6), in positional order.
TL_RANGE_ARGS = ("arg1", "arg2", "step", "num_stages", "loop_unroll_factor",
                 "disallow_acc_multi_buffer", "flatten", "warp_specialize", "disable_licm")
STATIC_RANGE_ARGS = ("arg1", "arg2", "step")

_OPTEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Div: "/", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&",
           ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@"}


def src(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover - unparse handles every expression
        return type(node).__name__


class ExprEval:
    """Evaluates expressions for one kernel; ``mode`` is "kernel" (the kernel body) or
    "partition" (a partition function and what it inlines)."""

    def __init__(self, kctx: KernelCtx, mode: str, frame: Frame):
        self.k = kctx
        self.scope = kctx.scope
        self.mode = mode
        self.frames: list[Frame] = [frame]
        self.out: list[Stmt] = []
        self.loop_vars: list[str] = []  # IR names of the enclosing loops, outermost first
        # IR loop variable -> (start, stop, step) of its loop, for sign proofs (`bounds`)
        self.loop_ranges: dict[str, tuple[Affine, Affine, int]] = {}
        self.no_events: Optional[str] = None  # why an event here would be conditional
        # (loop node, message, check) of an enclosing loop that may not contain events
        self.bad_loop: Optional[tuple[ast.AST, str, str]] = None
        self.depth = 0  # compound-statement nesting in the kernel body
        self.assign_hint: Optional[tuple[str, ast.expr]] = None  # (target, value) of `x = call()`
        self.partition: Optional[str] = None  # the partition being read (None: the kernel body)

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    @property
    def env(self) -> dict[str, Value]:
        return self.frame.env

    def err(self, message: str, node: ast.AST, check: str = "frontend") -> TleError:
        return self.k.error(message, node, check)

    # -- affine views of values -----------------------------------------------------------------
    def param_of(self, v: Data) -> str:
        hint = v.hint or (src(v.node) if v.node is not None else "P")
        loc = self.k.loc(v.node) if v.node is not None else Loc(self.k.path, 0)
        return self.k.reserve_pure(v.key, hint, loc)

    def as_aff(self, v: Value) -> Optional[Affine]:
        """The affine form of ``v``, or None when it has none."""
        if isinstance(v, Aff):
            return v.expr
        if isinstance(v, (KernelArg, Sym)):
            return Affine.of(v.param)
        if isinstance(v, Const) and isinstance(v.value, bool):
            return Affine.of(int(v.value))
        if isinstance(v, Data) and v.key is not None:
            return Affine.of(self.param_of(v))
        return None

    def key_of(self, v: Value) -> Optional[str]:
        """Canonical text of a pure function of params and constants (no loop variable)."""
        if isinstance(v, Aff):
            if any(not is_placeholder(x) for x in v.expr.variables):
                return None
            return str(v.expr)
        if isinstance(v, (KernelArg, Sym)):
            return v.param
        if isinstance(v, Data):
            return v.key
        if isinstance(v, Const) and isinstance(v.value, (bool, int)):
            return str(int(v.value))
        return None

    def affine(self, v: Value, node: ast.AST, what: str) -> Affine:
        """``v`` as an affine expression, or a TleError at ``node``."""
        a = self.as_aff(v)
        if a is not None:
            return a
        text = src(node)
        if isinstance(v, Poison):
            detail = f"'{v.name}' {v.reason}"
        elif isinstance(v, Data) and v.why:
            detail = v.why
        elif isinstance(v, Data):
            detail = "it is a data value, not an integer known from loop variables and params"
        else:
            detail = f"it is not an integer (it is {type(v).__name__})"
        raise self.err(f"{what} must be affine in loop variables and kernel params, got "
                       f"`{text}`: {detail}", node, check="non-affine")

    def const_int(self, v: Value) -> Optional[int]:
        a = self.as_aff(v) if isinstance(v, Aff) else None
        return a.const if a is not None and a.is_const else None

    @staticmethod
    def is_runtime(v: Value) -> bool:
        """Whether Triton computes the integer ``v`` at run time (C's ``//`` and ``%``) rather than
        as a constexpr (a Python int)."""
        if isinstance(v, KernelArg):
            return not v.constexpr
        if isinstance(v, (Aff, Sym, Data)):
            return v.runtime
        return False

    # -- sign proofs ----------------------------------------------------------------------------
    def bounds(self, e: Affine, depth: int = 0) -> tuple[Optional[int], Optional[int]]:
        """Lower and upper bound of ``e`` over the ranges of the enclosing loops and the params'
        domains (None: unbounded on that side)."""
        lo: Optional[int] = e.const
        hi: Optional[int] = e.const
        for var, c in e.terms:
            vlo, vhi = self.var_bounds(var, depth)
            if c < 0:
                vlo, vhi = vhi, vlo
            lo = None if lo is None or vlo is None else lo + c * vlo
            hi = None if hi is None or vhi is None else hi + c * vhi
        return lo, hi

    def var_bounds(self, var: str, depth: int) -> tuple[Optional[int], Optional[int]]:
        if depth > 64:  # pragma: no cover - loop nests are far shallower
            return None, None
        rng = self.loop_ranges.get(var)
        if rng is not None:
            # the body runs only for values of range(start, stop, step)
            start, stop, step = rng
            if step > 0:
                lo, hi = self.bounds(start, depth + 1)[0], self.bounds(stop, depth + 1)[1]
                return lo, None if hi is None else hi - 1
            lo, hi = self.bounds(stop, depth + 1)[0], self.bounds(start, depth + 1)[1]
            return None if lo is None else lo + 1, hi
        if is_placeholder(var):
            return self.k.params.domain(var)
        return None, None

    def nonneg(self, e: Affine) -> bool:
        """Whether ``e >= 0`` wherever it is evaluated (so C's and Python's ``%`` agree on it)."""
        lo = self.bounds(e)[0]
        return lo is not None and lo >= 0

    # -- names ----------------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> Value:
        if name in self.env:
            return self.env[name]
        if name in self.scope.constants:
            return Aff(Affine.of(self.scope.constants[name]))
        if name in self.scope.functions:
            return FuncRef(name)
        if name in self.scope.dtypes:
            return Const(self.scope.dtypes[name])
        alias = self.scope.alias(name)
        if alias is not None:
            return ModRef(alias)
        if name not in self.scope.other and hasattr(builtins, name):
            return ModRef(f"builtins.{name}")
        return Data(node=node)

    def module_path_of(self, node: ast.expr) -> Optional[str]:
        """The canonical path of ``a.b.c`` when ``a`` names a module here (locals included),
        without evaluating anything; else None."""
        attrs: list[str] = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.lookup(node.id, node)
        if not isinstance(base, ModRef):
            return None
        return canon(".".join([base.path] + attrs[::-1]))

    # -- expressions ----------------------------------------------------------------------------
    def eval(self, node: ast.expr) -> Value:
        method = getattr(self, f"_e_{type(node).__name__}", None)
        if method is not None:
            return method(node)
        return self._generic(node)

    def eval_guarded(self, node: ast.expr, why: str) -> Value:
        """Evaluate ``node`` where a pipe event would be conditional (rejected)."""
        saved = self.no_events
        self.no_events = self.no_events or why
        try:
            return self.eval(node)
        finally:
            self.no_events = saved

    def _generic(self, node: ast.AST) -> Value:
        guarded = isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                    ast.GeneratorExp))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.comprehension):
                for sub in [child.iter, *child.ifs]:
                    self.eval_guarded(sub, "a comprehension")
            elif isinstance(child, ast.expr):
                if guarded:
                    self.eval_guarded(child, "a lambda or comprehension")
                else:
                    self.eval(child)
        return Data(node=node)

    def _e_Constant(self, node: ast.Constant) -> Value:  # a Python int: a constexpr
        v = node.value
        if isinstance(v, int) and not isinstance(v, bool):
            return Aff(Affine.of(v))
        return Const(v)

    def _e_Name(self, node: ast.Name) -> Value:
        return self.lookup(node.id, node)

    def _e_Tuple(self, node: ast.Tuple) -> Value:
        return TupleV(tuple(self.eval(e) for e in node.elts))

    _e_List = _e_Tuple

    def _e_Starred(self, node: ast.Starred) -> Value:
        self.eval(node.value)
        return Data(node=node)

    def _e_NamedExpr(self, node: ast.NamedExpr) -> Value:
        v = self.eval(node.value)
        self.bind_name(node.target.id, v, node)
        return v

    def _e_Subscript(self, node: ast.Subscript) -> Value:
        base = self.eval(node.value)
        idx = self.eval(node.slice)
        if isinstance(base, TupleV):
            i = self.const_int(idx)
            if i is not None and -len(base.items) <= i < len(base.items):
                return base.items[i]
        if isinstance(base, HANDLES):
            raise self.err(f"`{src(node.value)}` is a pipe handle and cannot be indexed", node)
        if isinstance(base, Poison) and base.slot:
            return base  # an item of a path-dependent tuple of slots
        if isinstance(base, Data) and base.shared:
            return replace(base, node=node, key=None, hint=None, why=None)  # a view of a view
        return Data(node=node, fields=base.fields if isinstance(base, Data) else frozenset())

    def _e_IfExp(self, node: ast.IfExp) -> Value:
        self.eval(node.test)
        a = self.eval_guarded(node.body, "a conditional expression (x if c else y)")
        b = self.eval_guarded(node.orelse, "a conditional expression (x if c else y)")
        if a == b:
            return a
        why = "is chosen at run time by a conditional expression"
        merged = merge_views(a, b, f"`{src(node)}` {why}")
        if merged is not None:
            return replace(merged, node=node)
        if holds_slot(a) or holds_slot(b):
            return Poison(src(node), why, slot=True)
        return Data(node=node)

    def _e_BoolOp(self, node: ast.BoolOp) -> Value:
        self.eval(node.values[0])
        for v in node.values[1:]:
            self.eval_guarded(v, f"the right operand of `{type(node.op).__name__.lower()}`")
        return Data(node=node)

    def _e_Compare(self, node: ast.Compare) -> Value:
        self.eval(node.left)
        for c in node.comparators:
            self.eval(c)
        return Data(node=node)

    def _e_UnaryOp(self, node: ast.UnaryOp) -> Value:
        v = self.eval(node.operand)
        a = self.as_aff(v) if isinstance(v, (Aff, KernelArg, Sym)) else None
        if a is not None and isinstance(node.op, ast.USub):
            return Aff(-a, self.is_runtime(v))
        if a is not None and isinstance(node.op, ast.UAdd):
            return Aff(a, self.is_runtime(v))
        return Data(node=node)

    def _e_BinOp(self, node: ast.BinOp) -> Value:
        left, right = self.eval(node.left), self.eval(node.right)
        return self.binop(node.op, left, right, node)

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        # a pointer into shared memory plus (or minus) an offset still points into it
        for ptr, other in ((left, right), (right, left)):
            if (isinstance(ptr, Data) and ptr.view == "pointer" and ptr.shared
                    and not (isinstance(other, Data) and other.shared)
                    and (isinstance(op, ast.Add) or isinstance(op, ast.Sub) and ptr is left)):
                return replace(ptr, node=node)
        a, b = self.as_aff(left), self.as_aff(right)
        # a runtime operand makes the operation a runtime one (Triton's semantic.floordiv/mod:
        # arith.divsi/remsi); only two constexprs are combined with Python's operators
        rt = self.is_runtime(left) or self.is_runtime(right)
        if a is not None and b is not None:
            if isinstance(op, ast.Add):
                return Aff(a + b, rt)
            if isinstance(op, ast.Sub):
                return Aff(a - b, rt)
            if isinstance(op, ast.Mult) and (a.is_const or b.is_const):
                return Aff(b.scale(a.const) if a.is_const else a.scale(b.const), rt)
            if a.is_const and b.is_const and not isinstance(op, ast.Div):
                folded = fold_int(op, a.const, b.const, rt)
                if folded is not None:
                    return Aff(Affine.of(folded), rt)
        ka, kb = self.key_of(left), self.key_of(right)
        opt = _OPTEXT.get(type(op), "?")
        key = f"({ka} {opt} {kb})" if ka is not None and kb is not None and opt != "/" else None
        why = None
        if a is not None and b is not None:
            if isinstance(op, ast.Mult):
                why = f"`{src(node)}` multiplies two variables"
            elif isinstance(op, (ast.FloorDiv, ast.Div, ast.Mod)):
                why = f"`{src(node)}` divides (or takes a remainder of) a variable"
            else:
                why = f"`{src(node)}` uses `{opt}` on variables"
        return Data(node=node, key=key, why=why, runtime=rt)

    def _e_Attribute(self, node: ast.Attribute) -> Value:
        base = self.eval(node.value)
        return self.attribute(base, node.attr, node)

    def attribute(self, base: Value, attr: str, node: ast.Attribute) -> Value:
        if isinstance(base, HANDLES) and attr in HANDLE_METHODS:
            # a bound verb as a value (a callback, a stored method): the frontend would not see
            # the events it performs where it is called, but the lowering would emit them
            raise self.err(f"`{src(node)}` is used as a value: pipe verbs must be called directly "
                           f"on the handle, e.g. `{src(node)}(i)` (a verb passed as a callback or "
                           f"stored in a variable hides its events from the verifier)", node,
                           check="verb-as-value")
        if isinstance(base, ModRef):
            return ModRef(canon(f"{base.path}.{attr}"))
        if isinstance(base, SlotV):
            if attr in base.fields:
                fields = frozenset({(base.pipe, attr)}) if base.role == "reader" else frozenset()
                return Data(node=node, fields=fields, view="buffer",
                            slots=frozenset({SlotField(base, attr)}))
            decl = self.k.pipes[base.pipe].decl
            if attr in decl.field_names:
                raise self.err(f"this reader of pipe '{base.pipe}' sees only fields "
                               f"({', '.join(base.fields)}): `{src(node)}` is outside its view",
                               node, check="outside-view")
            raise self.err(f"pipe '{base.pipe}' has no field '{attr}' (fields: "
                           f"{', '.join(decl.field_names)})", node, check="unknown-field")
        if isinstance(base, WaitV):
            if attr == "slot":
                return base.slot
            if attr == "is_closed":
                return Data(node=node)
            raise self.err(f"the result of wait() has .slot and .is_closed, not .{attr}", node)
        if isinstance(base, Poison):
            if base.slot and attr == "slot":
                return base
            if base.slot and attr != "is_closed":
                # a field of a slot that depends on the path taken: an access through it fails
                return Data(node=node, view="buffer", lost=f"`{base.name}` {base.reason}")
            return Data(node=node)
        if isinstance(base, Data) and attr == "T":
            if base.shared:
                return replace(base, node=node, key=None, hint=None, why=None)
            return Data(node=node, fields=base.fields)
        return Data(node=node)

    # -- calls ----------------------------------------------------------------------------------
    def _e_Call(self, node: ast.Call) -> Value:
        pending, self.assign_hint = self.assign_hint, None
        hint = pending[0] if pending is not None and pending[1] is node else None
        if isinstance(node.func, ast.Attribute):
            recv = self.eval(node.func.value)
            attr = node.func.attr
            if isinstance(recv, HANDLES) or (
                    isinstance(recv, Poison) and attr in HANDLE_METHODS) or (
                    isinstance(recv, Data) and attr in WRITER_VERBS + READER_VERBS
                    and len(node.args) == 1 and self.mode == "partition"):
                args, kwargs = self.eval_args(node)
                return self.method(recv, node.func.attr, args, kwargs, node)
            if attr == "to" and (isinstance(recv, (Aff, KernelArg, Sym)) or
                                 isinstance(recv, Data) and recv.key is not None):
                self.eval_args(node)  # x.to(dtype): the same integer
                return recv
            if isinstance(recv, Data) and recv.shared and attr in VIEW_OPS:
                self.eval_args(node)  # x.trans() / x.reshape(...): the same view
                return replace(recv, node=node, key=None, hint=None, why=None)
            callee = self.attribute(recv, attr, node.func)
        else:
            callee = self.eval(node.func)
        if isinstance(callee, ModRef):
            if callee.path == "tle_compiler.pipe":
                return self.declare_pipe(node, hint)
            if callee.path == "tle_compiler.gpu.alloc":
                return self.alloc(node)
            if callee.path == "tle_compiler.assume":
                raise self.err(ASSUME_WHERE, node, check="bad-assume")
            if callee.path == "tle_compiler.gpu.warp_specialize":
                where = ("inside a partition" if self.mode == "partition" else
                         "here: it must be a statement at the top level of the kernel body")
                raise self.err(f"tle.gpu.warp_specialize cannot be called {where}", node,
                               check="bad-warp-specialize")
        args, kwargs = self.eval_args(node)
        if isinstance(callee, FuncRef):
            return self.call_function(callee.name, args, kwargs, node)
        if isinstance(callee, ModRef):
            return self.call_module(callee.path, args, kwargs, node)
        self.reject_handles(args, kwargs, node)
        # an unknown callable: whatever it does with a view of shared memory is an access
        self.opaque_access([*args, *kwargs.values()], src(node.func), node, loaded=True)
        return Data(node=node)

    def eval_args(self, node: ast.Call) -> tuple[list[Value], dict[str, Value]]:
        args = [self.eval(a) for a in node.args]
        kwargs: dict[str, Value] = {}
        for kw in node.keywords:
            v = self.eval(kw.value)
            if kw.arg is not None:
                kwargs[kw.arg] = v
        return args, kwargs

    def reject_handles(self, args: list[Value], kwargs: dict[str, Value], node: ast.Call) -> None:
        for v in [*args, *kwargs.values()]:
            if isinstance(v, HANDLES) or (isinstance(v, TupleV) and any(
                    isinstance(i, HANDLES) for i in v.items)):
                raise self.err(f"`{src(node.func)}` receives a pipe or a pipe handle, but the "
                               f"frontend can only follow module-level functions of this file "
                               f"(pipe events in other code would be missed)", node,
                               check="opaque-call")

    def call_module(self, path: str, args: list[Value], kwargs: dict[str, Value],
                    node: ast.Call) -> Value:
        self.reject_handles(args, kwargs, node)
        name = attr_name(path)
        if path in ("tl.constexpr", "gl.constexpr") and len(args) == 1:
            return args[0]
        if path == "builtins.int" and len(args) == 1 and isinstance(args[0], (Aff, KernelArg, Sym)):
            return args[0]
        first = args[0] if args else next(
            (kwargs[k] for k in ("pointer", "input", "buf", "x") if k in kwargs), None)
        if path == "tle_compiler.gpu.local_ptr":
            return self.local_ptr(first, node)
        triton = is_triton(path)
        op = f"tl.{name}" if triton else src(node.func)
        if triton and name == "load" and isinstance(first, Data) and first.shared \
                and first.view != "loaded":
            # a load from shared memory: a read of what it points to, now; the tile it gives is
            # still that view (a matrix multiply reads it from shared memory where it is used)
            self.access(first, op, node, write=False)
            self.opaque_access([*args[1:], *(v for k, v in kwargs.items() if k != "pointer")],
                               op, node)
            return replace(first, node=node, view="loaded", key=None, hint=None, why=None)
        if triton and (name == "store" or name.startswith("atomic_")):
            if isinstance(first, Data) and first.shared and first.view != "loaded":
                self.access(first, op, node, write=True)
            return Data(node=node)
        if triton and name in VIEW_OPS:
            if isinstance(first, Data) and first.shared:
                self.opaque_access([*args[1:], *kwargs.values()], op, node)
                return replace(first, node=node, key=None, hint=None, why=None)
            return Data(node=node, fields=_fields(first))
        if triton and name in DOT_OPS:
            # wgmma reads its shared-memory operands when it runs: every operand that is a view
            # of a slot is read at the dot, wherever the tile was loaded
            for v in [*args, *kwargs.values()]:
                for pipe, f in _fields(v):
                    self.k.mma.setdefault(pipe, set()).add(f)
                if isinstance(v, Data) and v.shared:
                    self.access(v, op, node, write=False)
            return Data(node=node)
        # any other function: for tl/gl/tle functions and builtins a loaded tile is a register
        # value, but a pointer (or a buffer) goes to something we do not model; a function of
        # another module may do anything with what it gets, so every view is an access there
        known = triton or path.startswith(("builtins.", "tle_compiler."))
        self.opaque_access([*args, *kwargs.values()], op, node, loaded=not known)
        if (triton or path.startswith("builtins.")) and name in PURE_OPS:
            keys = [self.key_of(a) for a in args]
            if args and all(k is not None for k in keys) and not kwargs:
                rt = name in RUNTIME_OPS or any(self.is_runtime(a) for a in args)
                key = f"{path}({', '.join(keys)})"
                if name in KNOWN_DOMAINS:
                    self.k.known[key] = KNOWN_DOMAINS[name]
                return Data(node=node, key=key, runtime=rt)
        return Data(node=node)

    # -- shared-memory views and slot accesses ----------------------------------------------------
    def local_ptr(self, buf: Optional[Value], node: ast.Call) -> Value:
        """``tle.gpu.local_ptr(buf)``: a pointer view of a slot field or of a free buffer."""
        if isinstance(buf, BufferRef):
            field_of = self.k.field_buffers.get(buf.site) if buf.site is not None else None
            if field_of is not None:
                raise self.err(f"`{src(node)}` reaches the buffer of field '{field_of[1]}' of pipe "
                               f"'{field_of[0]}' directly: use the slot of an acquire or a wait "
                               f"(whose window the verifier checks)", node, check="field-buffer")
            if buf.site is not None and buf.site in self.k.kernel_allocs:
                name = buf.var or f"tle.gpu.alloc at line {buf.site.line}"
                return Data(node=node, view="pointer", buffers=frozenset({name}))
            return Data(node=node)
        if isinstance(buf, Data) and buf.shared:
            return replace(buf, node=node, view="pointer", key=None, hint=None, why=None)
        if isinstance(buf, Poison) and buf.slot:
            return Data(node=node, view="pointer", lost=f"`{buf.name}` {buf.reason}")
        return Data(node=node, fields=_fields(buf))

    def access(self, v: "Data", op: str, node: ast.AST, write: bool) -> None:
        """Record that ``op`` at ``node`` reads (or writes) the shared memory view ``v`` names:
        an Access per slot field, a use per free buffer."""
        if v.lost is not None:
            raise self.err(f"cannot tell which slot `{src(node)}` touches: {v.lost}", node,
                           check="unknown-slot")
        loc = self.k.loc(node)
        for sf in sorted(v.slots, key=lambda x: (x.slot.pipe, x.field, str(x.slot.index))):
            slot = sf.slot
            if write and slot.role == "reader":
                who = f"reader '{slot.reader}'" if slot.reader else "the reader"
                raise self.err(f"a reader may not write into its slot: `{src(node)}` writes field "
                               f"'{sf.field}' of pipe '{slot.pipe}', which {who} waited (only "
                               f"the writer fills a slot, between acquire and commit)", node,
                               check="reader-write")
            self.record(Access(slot.role, slot.pipe, sf.field, slot.index, slot.reader, op, loc))
        if self.mode == "partition":
            for b in sorted(v.buffers):
                self.k.buffer_uses.setdefault(b, []).append((self.partition, write, loc, op))

    def opaque_access(self, values: list, op: str, node: ast.AST, loaded: bool = False) -> None:
        """A call we do not model receives ``values``: a pointer or buffer view among them (and,
        with ``loaded``, a loaded tile too) is conservatively an access (a read on a reader's slot,
        the writer's own access on a writer's)."""
        for v in values:
            items = v.items if isinstance(v, TupleV) else (v,)
            for x in items:
                if isinstance(x, Data) and x.shared and (loaded or x.view != "loaded"):
                    self.access(x, op, node, write=False)
                elif isinstance(x, (SlotV, WaitV)) or isinstance(x, Poison) and x.slot:
                    if loaded:
                        raise self.err(f"`{src(node)}` receives a pipe slot, but the frontend "
                                       f"cannot follow what it does with it (pass slot fields "
                                       f"through tl.load / tl.store / tl.dot, or module-level "
                                       f"functions of this file)", node, check="opaque-call")

    def record(self, a: Access) -> None:
        """Append an access, unless the same slot field of the same index was already accessed
        since the last event of this block (the window cannot have changed in between)."""
        key = (a.side, a.pipe, a.field, a.index, a.reader)
        for prev in reversed(self.out):
            if not isinstance(prev, Access):
                break
            if (prev.side, prev.pipe, prev.field, prev.index, prev.reader) == key:
                return
        self.out.append(a)

    # -- pipes and handles ------------------------------------------------------------------------
    def method(self, recv: Value, name: str, args: list[Value], kwargs: dict[str, Value],
               node: ast.Call) -> Value:
        who = src(node.func.value)
        if isinstance(recv, Poison):
            raise self.err(f"`{who}` {recv.reason}, so `{who}.{name}(...)` cannot be resolved",
                           node)
        if isinstance(recv, Data):
            raise self.err(f"`{who}.{name}(...)`: the frontend cannot tell which pipe handle "
                           f"`{who}` is (create handles with pipe.writer() / pipe.reader(...) and "
                           f"pass them as plain arguments)", node, check="unknown-handle")
        if isinstance(recv, PipeRef):
            decl = recv.decl
            if name == "writer":
                if args or kwargs:
                    raise self.err(f"{who}.writer() takes no arguments", node)
                return WriterRef(decl.name)
            if name == "reader":
                return self.make_reader(recv, args, kwargs, node)
            if name in WRITER_VERBS + READER_VERBS:
                side = "writer()" if name in WRITER_VERBS else "reader(...)"
                raise self.err(f"`{who}.{name}(...)`: pipe events go through a handle: "
                               f"{who}.{side}.{name}(i)", node, check="bad-event")
            raise self.err(f"pipe '{decl.name}' has no method '{name}' (writer, reader)", node)
        verbs = WRITER_VERBS if isinstance(recv, WriterRef) else READER_VERBS
        side = "writer" if isinstance(recv, WriterRef) else "reader"
        if name not in verbs:
            other = "a reader" if name in READER_VERBS else "a writer"
            hint = f" ('{name}' is a verb of {other})" if name in WRITER_VERBS + READER_VERBS else ""
            raise self.err(f"`{who}` is the {side} of pipe '{recv.pipe}': it has "
                           f"{', '.join(verbs)}, not {name}{hint}", node, check="bad-event")
        return self.event(recv, name, args, kwargs, node)

    def make_reader(self, recv: PipeRef, args: list[Value], kwargs: dict[str, Value],
                    node: ast.Call) -> ReaderRef:
        extra = set(kwargs) - {"name", "fields"}
        if extra or len(args) > 2 or (args and "name" in kwargs) or (len(args) > 1 and "fields" in kwargs):
            raise self.err(f"{src(node.func)}(name=None, fields=None): bad arguments", node)
        name_v = args[0] if args else kwargs.get("name")
        fields_v = args[1] if len(args) > 1 else kwargs.get("fields")
        name_node = node.args[0] if node.args else _kw_node(node, "name")
        fields_node = node.args[1] if len(node.args) > 1 else _kw_node(node, "fields")
        rname = self.literal(name_v, name_node)
        fields = self.literal(fields_v, fields_node)
        loc = self.k.loc(node)
        reader, view = validate_reader(recv.decl, rname, fields, loc)
        # every handle of one reader must see the same fields: the barriers are laid out per
        # reader view, and a wider second handle would read fields nobody waited for
        seen = view or recv.decl.field_names
        first = self.k.reader_views.setdefault((recv.decl.name, reader), (seen, loc))
        if set(first[0]) != set(seen):
            who = f"reader '{reader}'" if reader else "the reader"
            raise self.err(f"{who} of pipe '{recv.decl.name}' has two handles with different "
                           f"views: fields ({', '.join(first[0])}) at line {first[1].line}, fields "
                           f"({', '.join(seen)}) at line {loc.line}; make every handle of a "
                           f"reader with the same fields=", node, check="inconsistent-view")
        return ReaderRef(recv.decl.name, reader, view)

    def literal(self, v: Optional[Value], node: Optional[ast.AST]) -> object:
        """A Python literal from an abstract value (for the shared validation rules)."""
        if v is None:
            return None
        if isinstance(v, Const):
            return v.value
        if isinstance(v, Aff) and v.expr.is_const:
            return v.expr.const
        if isinstance(v, TupleV):
            items = tuple(self.literal(i, None) for i in v.items)
            return list(items) if isinstance(node, ast.List) else items
        return Unevaluated(src(node) if node is not None else type(v).__name__)

    def event(self, recv: Value, verb: str, args: list[Value], kwargs: dict[str, Value],
              node: ast.Call) -> Value:
        who = src(node.func.value)
        if self.mode == "kernel":
            raise self.err(f"`{who}.{verb}(...)`: pipe events belong in partition functions, not "
                           f"in the kernel body", node, check="bad-event")
        if self.no_events:
            raise self.err(f"`{who}.{verb}(...)` inside {self.no_events}: the pipe events of a "
                           f"partition must not depend on data; use an `if` on loop variables "
                           f"and params", node, check="conditional-event")
        if self.bad_loop is not None:
            loop, message, check = self.bad_loop
            raise self.err(message, loop, check=check)
        if len(args) + len(kwargs) != 1 or (kwargs and "i" not in kwargs):
            raise self.err(f"`{who}.{verb}` takes one argument, the iteration index", node,
                           check="bad-event")
        idx_node = node.args[0] if node.args else node.keywords[0].value
        index = self.affine(args[0] if args else kwargs["i"], idx_node, f"index of {who}.{verb}")
        if isinstance(recv, WriterRef):
            ev = Event(verb, recv.pipe, index, None, None, self.k.loc(node))
        else:
            assert isinstance(recv, ReaderRef)
            ev = Event(verb, recv.pipe, index, recv.reader, recv.fields, self.k.loc(node))
        self.out.append(ev)
        self.k.events += 1
        decl = self.k.pipes[recv.pipe].decl
        if verb == "acquire":
            return SlotV(recv.pipe, decl.field_names, "writer", index)
        if verb == "wait":
            return WaitV(SlotV(recv.pipe, recv.fields or decl.field_names, "reader", index,
                               recv.reader))
        return Const(None)

    def declare_pipe(self, node: ast.Call, hint: Optional[str]) -> Value:
        raise self.err("tle.pipe must be declared in the kernel body, not inside a partition",
                       node, check="bad-pipe")

    def alloc(self, node: ast.Call) -> Value:
        loc = self.k.loc(node)
        shape_node = node.args[0] if node.args else _kw_node(node, "shape")
        dtype_node = node.args[1] if len(node.args) > 1 else _kw_node(node, "dtype")
        scope_node = node.args[2] if len(node.args) > 2 else _kw_node(node, "scope")
        for a in node.args[3:]:
            raise self.err("tle.gpu.alloc(shape, dtype, scope=tle.gpu.smem): too many arguments", a)
        if shape_node is None or dtype_node is None:
            raise self.err("tle.gpu.alloc(shape, dtype, scope=tle.gpu.smem): shape and dtype are "
                           "required", node, check="bad-alloc")
        shape: object
        if isinstance(shape_node, (ast.List, ast.Tuple)):
            dims: list = []
            for e in shape_node.elts:
                v = self.eval(e)
                c = self.const_int(v)
                if c is not None:
                    dims.append(c)
                elif isinstance(v, (KernelArg, Sym)):
                    dims.append(v.name)
                else:
                    dims.append(src(e))
            shape = dims
        else:
            self.eval(shape_node)
            shape = Unevaluated(src(shape_node))
        dtype = self.scope.dtype_of(dtype_node)
        if dtype is None:
            v = self.eval(dtype_node)
            dtype = v.value if isinstance(v, Const) and isinstance(v.value, str) else \
                Unevaluated(src(dtype_node))
        scope: object = smem
        if scope_node is not None:
            sv = self.eval(scope_node)
            if isinstance(sv, ModRef) and sv.path == "tle_compiler.gpu.smem":
                scope = smem
            elif isinstance(sv, Const):
                scope = sv.value
            else:
                scope = Unevaluated(src(scope_node))
        buf = validate_alloc(shape, dtype, scope, loc, symbolic_ok=True)
        if self.mode == "kernel":
            self.k.kernel_allocs.add(loc)
        return BufferRef(buf, site=loc)

    # implemented by the statement walker
    def call_function(self, name: str, args: list[Value], kwargs: dict[str, Value],
                      node: ast.Call) -> Value:  # pragma: no cover - overridden
        raise NotImplementedError

    def bind_name(self, name: str, value: Value, node: ast.AST) -> None:  # pragma: no cover
        raise NotImplementedError


def _fields(v: Optional[Value]) -> frozenset:
    return v.fields if isinstance(v, Data) else frozenset()


def holds_slot(v: Optional[Value]) -> bool:
    """Whether ``v`` is (or contains) a slot, a wait result or a view of a slot."""
    if isinstance(v, (SlotV, WaitV)):
        return True
    if isinstance(v, Poison):
        return v.slot
    if isinstance(v, Data):
        return bool(v.slots) or v.lost is not None
    if isinstance(v, TupleV):
        return any(holds_slot(x) for x in v.items)
    return False


def merge_views(a: Optional[Value], b: Optional[Value], reason: str) -> Optional[Data]:
    """The merge of two non-affine data values (or unbound names) that reach one point on
    different paths: the union of what they view; when they view different slots, the slot is
    path-dependent (``lost`` with ``reason``). None when either is not plain data."""
    if not all(x is None or isinstance(x, Data) for x in (a, b)):
        return None
    da = a if isinstance(a, Data) else Data()
    db = b if isinstance(b, Data) else Data()
    lost = da.lost or db.lost
    if da.slots != db.slots and lost is None:
        lost = reason
    node = da.node if da.node is not None else db.node
    return Data(node=node, fields=da.fields | db.fields, view=da.view or db.view,
                slots=da.slots | db.slots, buffers=da.buffers | db.buffers, lost=lost)


def _kw_node(node: ast.Call, name: str) -> Optional[ast.expr]:
    return next((kw.value for kw in node.keywords if kw.arg == name), None)
