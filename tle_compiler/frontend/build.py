"""Build the kernel IR (ir/kernel.py) of a file's ``@tle.jit`` kernels from their Python source.

This is the one place that reads a kernel's Python: names are bound (locals, module constants by
value, dtypes, imported modules and functions, of this module or any module it imports, relative
imports included), helpers are inlined with their locals renamed (``_helper3_x``), pipe handles
are resolved so that every verb is an :class:`~tle_compiler.ir.kernel.Event` naming its pipe,
reader and view, ``tle.pipe``/``tle.gpu.alloc`` declarations become the kernel's pipes and
buffers, and ``warp_specialize`` its partitions with their parameter bindings.

Evaluation order is Python's: a statement that calls a helper is built in *sequential* form (each
call's value bound to a temporary, in order), so the helper's inlined statements run after what
Python evaluates before the call and before what it evaluates after it.
"""

from __future__ import annotations

import ast
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.nodes import Loc
from ..language.gpu import normalize_dtype
from ..language.pipe import validate_reader
from .scope import DEFAULT_ALIASES, ModuleScope, attr_name, canon, fold_int

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
           ast.RShift: ">>", ast.Pow: "**"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_UNOPS = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not", ast.Invert: "~"}
RANGES = {"builtins.range": False, "tl.range": False, "tl.static_range": True}
VERBS = ("acquire", "commit", "close", "wait", "release")


# ----------------------------------------------------------------------------------------------
# modules


class Module:
    """One parsed Python file: its scope (imports, integer constants, dtypes, functions), its
    float constants, and the user modules it imports (resolved lazily, by file)."""

    def __init__(self, path: str, cache: "ModuleCache"):
        self.path = path
        self.cache = cache
        text = Path(path).read_text(encoding="utf-8")
        try:
            self.tree = ast.parse(text, filename=path)
        except SyntaxError as e:
            raise TleError(f"syntax error: {e.msg}", Loc(path, e.lineno or 0, e.offset or 0),
                           check="syntax") from None
        self.scope = ModuleScope(self.tree, path)
        self.consts: dict[str, Union[int, float]] = dict(self.scope.constants)
        self.imports: dict[str, tuple[str, Optional[str]]] = {}  # local -> (module file, name)
        for st in self.tree.body:
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                tgt = st.targets[0] if isinstance(st, ast.Assign) else st.target
                if isinstance(tgt, ast.Name) and st.value is not None and tgt.id not in self.consts:
                    v = self._const_float(st.value)
                    if v is not None:
                        self.consts[tgt.id] = v
            elif isinstance(st, ast.ImportFrom):
                base = self.cache.find(st.module or "", st.level, path)
                for a in st.names:
                    local = a.asname or a.name
                    sub = self.cache.find(a.name, 0, None, package=base) if base else None
                    if sub is not None:  # `from . import common`: a module
                        self.imports[local] = (sub, None)
                    elif base is not None:
                        self.imports[local] = (base, a.name)
            elif isinstance(st, ast.Import):
                for a in st.names:
                    f = self.cache.find(a.name, 0, path)
                    if f is not None and a.asname:
                        self.imports[a.asname] = (f, None)

    def _const_float(self, node: ast.expr) -> Optional[float]:
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            if self.scope.module_path(node.func) in ("tl.constexpr", "gl.constexpr"):
                node = node.args[0]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self._const_float(node.operand)
            return -v if v is not None else None
        if isinstance(node, ast.Constant) and isinstance(node.value, float):
            return node.value
        return None


class ModuleCache:
    def __init__(self) -> None:
        self.modules: dict[str, Module] = {}

    def get(self, path: str) -> Module:
        path = os.path.abspath(path)
        if path not in self.modules:
            self.modules[path] = Module(path, self)
        return self.modules[path]

    @staticmethod
    def find(module: str, level: int, importer: Optional[str],
             package: Optional[str] = None) -> Optional[str]:
        """The file of a user module (not triton, not tle_compiler): relative to the importer's
        folder for ``level`` >= 1, else on ``sys.path``; None when it is not a user module."""
        if module.split(".")[0] in ("triton", "tle_compiler", "torch", "math", "numpy"):
            return None
        if package is not None:
            bases = [os.path.dirname(package)] if os.path.basename(package) == "__init__.py" else []
        elif level:
            base = os.path.dirname(os.path.abspath(importer))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            bases = [p or os.getcwd() for p in sys.path]
        rel = module.replace(".", os.sep) if module else ""
        for b in bases:
            for cand in ((os.path.join(b, rel + ".py"), os.path.join(b, rel, "__init__.py"))
                         if rel else (os.path.join(b, "__init__.py"),)):
                if os.path.isfile(cand):
                    return os.path.abspath(cand)
        return None


# ----------------------------------------------------------------------------------------------
# compile-time values a name can hold


@dataclass(frozen=True)
class Static:
    """What the builder knows statically about a value: a module path (``tl.load``), a helper
    function, a pipe, a handle, a free buffer, a bound method, or a tuple of such."""

    kind: str  # "mod" | "func" | "pipe" | "handle" | "buffer" | "method" | "usermod" | "tuple"
    value: object


@dataclass
class Frame:
    """One function being built: its module, the prefix of its locals' KIR names, what each
    local name statically holds (None: a runtime value)."""

    module: Module
    prefix: str
    env: dict[str, Optional[Static]] = field(default_factory=dict)
    function: str = "<kernel>"

    def kir(self, name: str) -> str:
        return self.prefix + name


def _loc(path: str, node: ast.AST) -> Loc:
    return Loc(path, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)


class Builder:
    """Builds the KIR of one kernel (:meth:`kernel`)."""

    def __init__(self, cache: ModuleCache, module: Module, bind: Optional[dict] = None):
        self.cache = cache
        self.root = module
        self.bind = dict(bind or {})
        self.out: list[K.Stmt] = []
        self.frames: list[Frame] = []
        self.counter = 0
        self.consts: dict[str, object] = {}  # KIR id -> value
        self.const_ids: dict[tuple[str, str], str] = {}  # (module path, name) -> KIR id
        self.pipes: dict[str, K.PipeDecl] = {}
        self.buffers: dict[int, K.Buffer] = {}  # id(alloc node) -> buffer (free ones named)
        self.buffer_owner: dict[int, str] = {}  # id(alloc node) -> "pipe.field" once a field
        self.free_buffers: dict[str, K.Buffer] = {}
        self.sequential = 0  # > 0 while building a statement that calls a helper

    # -- helpers ----------------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def loc(self, node: ast.AST) -> Loc:
        return _loc(self.frame.module.path, node)

    def err(self, msg: str, node: ast.AST, check: str = "frontend") -> TleError:
        return TleError(msg, self.loc(node), check=check)

    def emit(self, s: K.Stmt) -> None:
        self.out.append(s)

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"_{base}{self.counter}"

    def block(self, stmts: list[ast.stmt]) -> tuple[K.Stmt, ...]:
        saved, self.out = self.out, []
        try:
            for s in stmts:
                self.stmt(s)
            return tuple(self.out)
        finally:
            self.out = saved

    def global_of(self, module: Module, name: str, node: ast.AST) -> K.Global:
        key = (module.path, name)
        kid = self.const_ids.get(key)
        if kid is None:
            value = module.consts[name]
            kid, k = name, 1
            while kid in self.consts and self.consts[kid] != value:
                kid, k = f"{name}_{k}", k + 1
            self.consts[kid] = value
            self.const_ids[key] = kid
        return K.Global(kid, self.consts[kid], self.loc(node))

    # -- names ------------------------------------------------------------------------------
    def lookup(self, name: str, node: ast.AST) -> tuple[K.Expr, Optional[Static]]:
        f = self.frame
        if name in f.env:
            st = f.env[name]
            loc = self.loc(node)
            if st is not None:
                if st.kind == "const":
                    return st.value, st
                if st.kind == "pipe":
                    return K.PipeRef(st.value.name, loc), st
                if st.kind == "handle":
                    return st.value, st
                if st.kind == "buffer" and st.value[1] is not None:
                    return K.BufferRef(st.value[1], loc), st
            return K.Name(f.kir(name), loc), st
        return self.module_name(f.module, name, node)

    def module_name(self, m: Module, name: str, node: ast.AST) -> tuple[K.Expr, Optional[Static]]:
        loc = self.loc(node)
        if name in m.consts:
            return self.global_of(m, name, node), None
        if name in m.scope.dtypes:
            return K.DType(m.scope.dtypes[name], loc), None
        if name in m.scope.functions:
            return K.Const(None, loc), Static("func", (m, m.scope.functions[name]))
        if name in m.imports:
            file, attr = m.imports[name]
            sub = self.cache.get(file)
            if attr is None:
                return K.Const(None, loc), Static("usermod", sub)
            return self.module_name(sub, attr, node)
        alias = m.scope.alias(name)
        if alias is not None:
            return K.Const(None, loc), Static("mod", alias)
        if name in ("range", "int", "float", "min", "max", "len", "print"):
            return K.Const(None, loc), Static("mod", f"builtins.{name}")
        raise self.err(f"name '{name}' is not defined here", node, check="unknown-name")

    # -- statements -------------------------------------------------------------------------
    def stmt(self, s: ast.stmt) -> None:
        calls_helper = self._calls_helper(s)
        self.sequential += calls_helper
        try:
            m = getattr(self, f"s_{type(s).__name__}", None)
            if m is None:
                raise self.err(f"`{ast.unparse(s).splitlines()[0]}` is not supported in a kernel",
                               s, check="unsupported-statement")
            m(s)
        finally:
            self.sequential -= calls_helper

    def _calls_helper(self, s: ast.stmt) -> bool:
        if isinstance(s, (ast.For, ast.If, ast.While)):
            nodes = [s.iter] if isinstance(s, ast.For) else [s.test]
        else:
            nodes = [s]
        for root in nodes:
            for n in ast.walk(root):
                if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute)):
                    try:
                        _, st = self.callee(n.func)
                    except TleError:
                        continue
                    if st is not None and st.kind == "func":
                        return True
        return False

    def callee(self, func: ast.expr) -> tuple[K.Expr, Optional[Static]]:
        """A call's function without evaluating anything (names and attribute chains)."""
        if isinstance(func, ast.Name):
            if func.id in self.frame.env:
                return K.Const(None), self.frame.env[func.id]
            return self.module_name(self.frame.module, func.id, func)
        if isinstance(func, ast.Attribute):
            _, base = self.callee(func.value)
            if base is not None and base.kind == "mod":
                return K.Const(None), Static("mod", canon(f"{base.value}.{func.attr}"))
            if base is not None and base.kind == "usermod":
                return self.module_name(base.value, func.attr, func)
        return K.Const(None), None

    def s_Expr(self, s: ast.Expr) -> None:
        if isinstance(s.value, ast.Constant):
            return  # a docstring
        e, _ = self.expr(s.value)
        if isinstance(e, (K.Name, K.Const, K.Global)):
            return  # nothing runs
        self.emit(K.Eval(e, self.loc(s)))

    def s_Pass(self, s: ast.Pass) -> None:
        pass

    def assign(self, target: ast.expr, e: K.Expr, st: Optional[Static], node: ast.AST) -> None:
        f = self.frame
        if isinstance(target, ast.Name):
            if st is not None and st.kind in ("func", "mod", "usermod", "method"):
                raise self.err(f"`{target.id}` would hold a {st.kind}: call it directly",
                               node, check="verb-as-value" if st.kind == "method" else "frontend")
            if st is not None and st.kind == "buffer" and st.value[1] is None:
                # a free buffer gets the name of its variable
                self.name_buffer(st, target.id, node)
                st = Static("buffer", (st.value[0], target.id))
                e = K.BufferRef(target.id, self.loc(node))
            f.env[target.id] = st
            if st is not None and st.kind in ("handle", "pipe", "buffer"):
                return  # compile-time values: uses are resolved to them, nothing runs
            self.emit(K.Assign(f.kir(target.id), e, self.loc(node)))
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(e, K.TupleExpr) or len(e.items) != len(target.elts):
                raise self.err("tuple assignment needs a tuple of the same length on the right",
                               node)
            items = st.value if st is not None and st.kind == "tuple" else [None] * len(e.items)
            for t, x, sx in zip(target.elts, e.items, items):
                self.assign(t, x, sx, node)
            return
        raise self.err(f"`{ast.unparse(target)} = ...`: only names (and tuples of names) can be "
                       f"assigned in a kernel", node)

    def s_Assign(self, s: ast.Assign) -> None:
        if len(s.targets) != 1:
            raise self.err("chained assignment is not supported", s)
        tgt = s.targets[0]
        if self.frame.function == "<kernel>" and isinstance(s.value, ast.Call):
            _, st = self.callee(s.value.func)
            if st is not None and st.kind == "mod" and st.value == "tle_compiler.pipe":
                if not isinstance(tgt, ast.Name):
                    raise self.err("assign a tle.pipe to a plain name", s, check="bad-pipe")
                pipe = self.declare_pipe(s.value, tgt.id)
                self.frame.env[tgt.id] = Static("pipe", pipe)
                return
        e, st = self.expr(s.value)
        self.assign(tgt, e, st, s)

    def s_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is None:
            return
        e, st = self.expr(s.value)
        self.assign(s.target, e, st, s)

    def s_AugAssign(self, s: ast.AugAssign) -> None:
        if not isinstance(s.target, ast.Name):
            raise self.err("augmented assignment to a name only", s)
        cur, _ = self.lookup(s.target.id, s.target)
        rhs, _ = self.expr(s.value)
        e = K.BinOp(_BINOPS[type(s.op)], cur, rhs, self.loc(s))
        self.assign(s.target, e, None, s)

    def s_For(self, s: ast.For) -> None:
        if s.orelse:
            raise self.err("`for ... else` is not supported (Triton rejects it after a range loop)",
                           s, check="unsupported-control-flow")
        if not isinstance(s.target, ast.Name):
            raise self.err("the loop variable must be a plain name", s)
        it = s.iter
        path = None
        if isinstance(it, ast.Call):
            _, st = self.callee(it.func)
            path = st.value if st is not None and st.kind == "mod" else None
        if path not in RANGES:
            raise self.err("loops are `for i in range(...)` / tl.range / tl.static_range", s,
                           check="unsupported-control-flow")
        args = [self.expr(a)[0] for a in it.args]
        kw = {k.arg: self.expr(k.value)[0] for k in it.keywords}
        if path == "builtins.range" and kw:
            raise self.err("Python's range takes no keywords", s, check="bad-range")
        start = kw.pop("arg1", None)
        stop = kw.pop("arg2", None)
        step = kw.pop("step", None)
        pos = list(args)
        if len(pos) > 3:
            raise self.err("range takes at most 3 positional arguments", s, check="bad-range")
        if pos and start is None:
            start = pos.pop(0)
        if pos and stop is None:
            stop = pos.pop(0)
        if pos and step is None:
            step = pos.pop(0)
        if stop is None:  # range(n)
            start, stop = K.Const(0, self.loc(it)), start
        for k in list(kw):
            if k not in ("num_stages", "loop_unroll_factor", "disallow_acc_multi_buffer",
                         "flatten", "warp_specialize", "disable_licm"):
                raise self.err(f"{path} has no argument '{k}'", s, check="bad-range")
        if step is None:
            step = K.Const(1, self.loc(it))
        f = self.frame
        before = dict(f.env)
        f.env[s.target.id] = None
        body = self.block(s.body)
        self._merge(before, [dict(f.env)])
        f.env[s.target.id] = None
        self.emit(K.For(f.kir(s.target.id), start, stop, step, body, RANGES[path], self.loc(s)))

    def s_If(self, s: ast.If) -> None:
        cond, _ = self.expr(s.test)
        folded = fold(cond)
        if isinstance(folded, (bool, int, float)) and not isinstance(folded, str):
            # decided now: only the branch that runs exists (Triton does the same with constexprs)
            for st in (s.body if folded else s.orelse):
                self.stmt(st)
            return
        f = self.frame
        before = dict(f.env)
        then = self.block(s.body)
        env_then = dict(f.env)
        f.env.clear()
        f.env.update(before)
        orelse = self.block(s.orelse)
        self._merge(before, [env_then, dict(f.env)], both=True)
        self.emit(K.If(cond, then, orelse, self.loc(s)))

    def _merge(self, before: dict, afters: list[dict], both: bool = False) -> None:
        """After control flow, a local's static value is kept only where every path agrees."""
        f = self.frame
        names = set(before)
        for a in afters:
            names |= set(a)
        for n in names:
            vals = [a.get(n) for a in afters] + ([] if both else [before.get(n)])
            f.env[n] = vals[0] if all(v == vals[0] for v in vals) else None

    def s_Return(self, s: ast.Return) -> None:
        raise self.err("`return` is allowed only as a helper's last statement", s,
                       check="unsupported-control-flow")

    def _unsupported(self, s: ast.stmt) -> None:
        raise self.err(f"`{type(s).__name__.lower()}` is not supported in a kernel (Triton 3.6 "
                       f"rejects it or its semantics differ)", s, check="unsupported-control-flow")

    s_Break = s_Continue = s_While = s_With = s_Try = s_Import = s_ImportFrom = _unsupported

    def s_Assert(self, s: ast.Assert) -> None:
        pass  # device asserts are not lowered

    # -- expressions ------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> tuple[K.Expr, Optional[Static]]:
        m = getattr(self, f"e_{type(node).__name__}", None)
        if m is None:
            raise self.err(f"`{ast.unparse(node)}` is not supported in a kernel", node)
        return m(node)

    def value(self, node: ast.expr) -> K.Expr:
        e, st = self.expr(node)
        if st is not None and st.kind in ("func", "mod", "usermod", "method"):
            what = "a pipe verb" if st.kind == "method" else f"`{ast.unparse(node)}`"
            raise self.err(f"{what} is used as a value: call it directly (a verb passed as a "
                           f"callback or stored hides its events)", node,
                           check="verb-as-value" if st.kind == "method" else "frontend")
        return e

    def e_Constant(self, node: ast.Constant) -> tuple[K.Expr, Optional[Static]]:
        return K.Const(node.value, self.loc(node)), None

    def e_Name(self, node: ast.Name) -> tuple[K.Expr, Optional[Static]]:
        return self.lookup(node.id, node)

    def e_Tuple(self, node: ast.Tuple) -> tuple[K.Expr, Optional[Static]]:
        items = [self.expr(e) for e in node.elts]
        st = Static("tuple", tuple(s for _, s in items)) if any(s for _, s in items) else None
        return K.TupleExpr(tuple(e for e, _ in items), self.loc(node)), st

    e_List = e_Tuple

    def e_BinOp(self, node: ast.BinOp) -> tuple[K.Expr, Optional[Static]]:
        a, b = self.value(node.left), self.value(node.right)
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.err("unsupported operator", node)
        return K.BinOp(op, a, b, self.loc(node)), None

    def e_UnaryOp(self, node: ast.UnaryOp) -> tuple[K.Expr, Optional[Static]]:
        x = self.value(node.operand)
        return K.UnaryOp(_UNOPS[type(node.op)], x, self.loc(node)), None

    def e_Compare(self, node: ast.Compare) -> tuple[K.Expr, Optional[Static]]:
        vals = [self.value(node.left)] + [self.value(c) for c in node.comparators]
        items = []
        for i, op in enumerate(node.ops):
            sym = _CMPOPS.get(type(op))
            if sym is None:
                raise self.err(f"`{type(op).__name__}` is not an arithmetic comparison", node)
            items.append(K.Compare(sym, vals[i], vals[i + 1], self.loc(node)))
        if len(items) == 1:
            return items[0], None
        return K.BoolOp("and", tuple(items), self.loc(node)), None

    def e_BoolOp(self, node: ast.BoolOp) -> tuple[K.Expr, Optional[Static]]:
        op = "and" if isinstance(node.op, ast.And) else "or"
        return K.BoolOp(op, tuple(self.value(v) for v in node.values), self.loc(node)), None

    def e_IfExp(self, node: ast.IfExp) -> tuple[K.Expr, Optional[Static]]:
        raise self.err("conditional expressions are not supported; use tl.where", node)

    def e_Subscript(self, node: ast.Subscript) -> tuple[K.Expr, Optional[Static]]:
        base, st = self.expr(node.value)
        if isinstance(base, K.TupleExpr):
            i = fold(self.value(node.slice))
            if isinstance(i, int) and -len(base.items) <= i < len(base.items):
                item_st = st.value[i] if st is not None and st.kind == "tuple" else None
                return base.items[i], item_st
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        idx: list = []
        for e in elts:
            if isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None:
                idx.append(":")
            elif isinstance(e, ast.Constant) and e.value is None:
                idx.append(None)
            else:
                v = fold(self.value(e))
                if not isinstance(v, int):
                    raise self.err("only `x[:, None]`-style expansions and constant tuple "
                                   "indices are supported", node)
                idx.append(v)
        return K.Subscript(self.value(node.value), tuple(idx), self.loc(node)), None

    def e_Attribute(self, node: ast.Attribute) -> tuple[K.Expr, Optional[Static]]:
        base, st = self.expr(node.value)
        loc = self.loc(node)
        if st is not None:
            if st.kind == "mod":
                path = canon(f"{st.value}.{node.attr}")
                if path.split(".")[0] in ("tl", "gl"):
                    dt = normalize_dtype(node.attr)
                    if dt is not None:
                        return K.DType(dt, loc), None
                return K.Const(None, loc), Static("mod", path)
            if st.kind == "usermod":
                return self.module_name(st.value, node.attr, node)
            if st.kind == "pipe":
                if node.attr in ("writer", "reader"):
                    return K.Const(None, loc), Static("method", (st, node.attr))
                raise self.err(f"pipe '{st.value.name}' has no attribute '{node.attr}'", node)
            if st.kind == "handle":
                if node.attr in VERBS:
                    return K.Const(None, loc), Static("method", (st, node.attr))
                raise self.err(f"the {st.value.side} of pipe '{st.value.pipe}' has no "
                               f"'{node.attr}'", node)
        if node.attr == "slot":
            return K.ResultSlot(base, loc), None
        if node.attr == "is_closed":
            return K.IsClosed(base, loc), None
        if node.attr == "to":
            return K.Const(None, loc), Static("method", (base, "to"))
        if node.attr == "T":
            raise self.err("`.T` is not supported; use tl.trans", node)
        return K.SlotField(base, node.attr, loc), None

    # -- calls ------------------------------------------------------------------------------
    def e_Call(self, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        _, fst = self.expr(node.func)
        loc = self.loc(node)
        if fst is None:
            raise self.err(f"`{ast.unparse(node.func)}` cannot be called in a kernel", node)
        if fst.kind == "func":
            return self.inline(fst.value, node)
        if fst.kind == "method":
            return self.call_method(fst.value, node)
        if fst.kind != "mod":
            raise self.err(f"`{ast.unparse(node.func)}` cannot be called", node)
        path = fst.value
        if path in ("tl.constexpr", "gl.constexpr") and len(node.args) == 1:
            return self.expr(node.args[0])
        if path == "tle_compiler.pipe":
            raise self.err("tle.pipe must be assigned to a name at the top level of the kernel "
                           "body", node, check="bad-pipe")
        if path == "tle_compiler.gpu.alloc":
            return self.alloc(node)
        if path == "tle_compiler.gpu.warp_specialize":
            raise self.err("tle.gpu.warp_specialize must be a statement at the top level of the "
                           "kernel body", node, check="bad-warp-specialize")
        args = [self.value(a) for a in node.args]
        kwargs = [(k.arg, self.value(k.value)) for k in node.keywords if k.arg is not None]
        if path in ("builtins.float", "builtins.int") and len(args) == 1 and not kwargs:
            v = fold(args[0])
            if v is not None:
                try:
                    return K.Const(float(v) if path.endswith("float") else int(v), loc), None
                except (TypeError, ValueError):
                    pass
            return self.seq(K.Op(path, tuple(args), (), loc)), None
        if path.startswith("tle_compiler."):
            name = "tle." + path[len("tle_compiler."):]
        elif path.startswith("gl."):
            name = "tl." + path[3:]
        else:
            name = path
        return self.seq(K.Op(name, tuple(args), tuple(kwargs), loc)), None

    def seq(self, e: K.Expr) -> K.Expr:
        """In a statement that calls a helper, bind each call's value to a temporary now, so
        that what the helper's body does runs in Python's order around it."""
        if not self.sequential:
            return e
        t = self.fresh("t")
        self.emit(K.Assign(self.frame.kir(t), e, e.loc))
        self.frame.env[t] = None
        return K.Name(self.frame.kir(t), e.loc)

    def call_method(self, m: tuple, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        base, name = m
        loc = self.loc(node)
        if isinstance(base, Static) and base.kind == "pipe":
            decl: K.PipeDecl = base.value
            if name == "writer":
                if node.args or node.keywords:
                    raise self.err(f"{decl.name}.writer() takes no arguments", node)
                h = K.Handle(decl.name, "writer", loc=loc)
                return h, Static("handle", h)
            rname = fold(self.value(node.args[0])) if node.args else None
            fields = None
            for k in node.keywords:
                if k.arg == "name":
                    rname = fold(self.value(k.value))
                elif k.arg == "fields":
                    fields = fold(self.value(k.value))
                else:
                    raise self.err(f"{decl.name}.reader() has no argument '{k.arg}'", node)
            if len(node.args) > 1:
                fields = fold(self.value(node.args[1]))
            reader, view = validate_reader(_decl_view(decl), rname, fields, loc)
            h = K.Handle(decl.name, "reader", reader, view, loc)
            return h, Static("handle", h)
        if isinstance(base, Static) and base.kind == "handle":
            h: K.Handle = base.value
            if len(node.args) + len(node.keywords) != 1:
                raise self.err(f"{h.side}.{name} takes one argument, the iteration index", node,
                               check="bad-event")
            idx_node = node.args[0] if node.args else node.keywords[0].value
            ev = K.Event(name, h, self.value(idx_node), loc)
            return self.seq(ev), None
        # x.to(dtype, bitcast=...)
        args = [self.value(a) for a in node.args]
        kwargs = tuple((k.arg, self.value(k.value)) for k in node.keywords)
        return self.seq(K.Op("to", (base,) + tuple(args), kwargs, loc)), None

    def inline(self, fn: tuple, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        module, fdef = fn
        if any(f.function == fdef.name and f.module is module for f in self.frames):
            raise self.err(f"recursive call of '{fdef.name}'", node, check="recursion")
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        for a_node, (_, st) in zip(list(node.args) + [k.value for k in node.keywords],
                                   args + list(kwargs.values())):
            if st is not None and st.kind == "method":
                raise self.err(f"`{ast.unparse(a_node)}` is used as a value: pipe verbs must be "
                               f"called directly on the handle (a verb passed as a callback "
                               f"hides its events)", a_node, check="verb-as-value")
        prefix = f"_{fdef.name}{self._next()}_"
        frame = Frame(module, prefix, {}, fdef.name)
        params = [p.arg for p in fdef.args.posonlyargs + fdef.args.args + fdef.args.kwonlyargs]
        defaults = dict(zip([p.arg for p in fdef.args.args][len(fdef.args.args)
                                                              - len(fdef.args.defaults):],
                            fdef.args.defaults))
        bound: dict[str, tuple[K.Expr, Optional[Static]]] = {}
        for p, a in zip(params, args):
            bound[p] = a
        for k, a in kwargs.items():
            if k not in params:
                raise self.err(f"'{fdef.name}' has no parameter '{k}'", node, check="bad-call")
            bound[k] = a
        if len(args) > len(params):
            raise self.err(f"'{fdef.name}' takes {len(params)} arguments, {len(args)} given",
                           node, check="bad-call")
        self.frames.append(frame)
        try:
            for p in params:
                if p not in bound:
                    if p not in defaults:
                        raise self.err(f"'{fdef.name}': missing argument '{p}'", node,
                                       check="bad-call")
                    bound[p] = self.expr(defaults[p])
            for p in params:
                e, st = bound[p]
                if st is not None or isinstance(e, (K.Const, K.Global, K.DType)):
                    frame.env[p] = st if st is not None else Static("const", e)
                    continue
                frame.env[p] = None
                self.emit(K.Assign(frame.kir(p), e, e.loc))
            body = list(fdef.body)
            ret: tuple[K.Expr, Optional[Static]] = (K.Const(None, self.loc(node)), None)
            for i, st in enumerate(body):
                if isinstance(st, ast.Return):
                    if i != len(body) - 1:
                        raise self.err(f"early `return` in '{fdef.name}': a helper returns at its "
                                       f"end", st, check="unsupported-control-flow")
                    if st.value is not None:
                        ret = self.expr(st.value)
                    continue
                self.stmt(st)
        finally:
            self.frames.pop()
        e, st = ret
        if st is None and not isinstance(e, (K.Const, K.Global, K.DType, K.Name, K.TupleExpr)):
            t = frame.kir("ret")
            self.emit(K.Assign(t, e, e.loc))
            e = K.Name(t, e.loc)
        return e, st

    def _next(self) -> int:
        self.counter += 1
        return self.counter

    # -- kernel-level declarations ----------------------------------------------------------
    def alloc(self, node: ast.Call) -> tuple[K.Expr, Optional[Static]]:
        args = list(node.args)
        kw = {k.arg: k.value for k in node.keywords}
        shape_n = args[0] if args else kw.get("shape")
        dtype_n = args[1] if len(args) > 1 else kw.get("dtype")
        if shape_n is None or dtype_n is None:
            raise self.err("tle.gpu.alloc(shape, dtype, scope=tle.gpu.smem)", node,
                           check="bad-alloc")
        if not isinstance(shape_n, (ast.List, ast.Tuple)):
            raise self.err("tle.gpu.alloc: the shape must be a list literal", node,
                           check="bad-alloc")
        shape = []
        for e in shape_n.elts:
            v = self.value(e)
            c = fold(v)
            shape.append(c if isinstance(c, int) else (v.id if isinstance(v, K.Name) else
                                                       ast.unparse(e)))
        dt = self.value(dtype_n)
        if not isinstance(dt, K.DType):
            c = fold(dt)
            dname = normalize_dtype(c) if isinstance(c, str) else None
            if dname is None:
                raise self.err("tle.gpu.alloc: the dtype must be a tl dtype", node,
                               check="bad-alloc")
            dt = K.DType(dname)
        buf = K.Buffer("", tuple(shape), dt.name, self.loc(node))
        self.buffers[id(node)] = buf
        return K.Const(None, self.loc(node)), Static("buffer", (id(node), None))

    def name_buffer(self, st: Static, name: str, node: ast.AST) -> None:
        key = st.value[0]
        buf = self.buffers[key]
        self.buffers[key] = K.Buffer(name, buf.shape, buf.dtype, buf.loc)
        self.free_buffers[name] = self.buffers[key]

    def declare_pipe(self, node: ast.Call, var: str) -> K.PipeDecl:
        if node.args:
            raise self.err("tle.pipe takes keyword arguments only", node, check="bad-pipe")
        opts: dict[str, object] = {"name": var, "readers": (), "one_shot": False, "capacity": None}
        fields: list[K.Buffer] = []
        for kwn in node.keywords:
            if kwn.arg in ("capacity", "scope", "name", "readers", "one_shot"):
                opts[kwn.arg] = fold(self.value(kwn.value))
                continue
            e, st = self.expr(kwn.value)
            if st is None or st.kind != "buffer":
                raise self.err(f"field '{kwn.arg}' must be a tle.gpu.alloc(...) buffer", kwn.value,
                               check="bad-pipe")
            key, free_name = st.value
            owner = self.buffer_owner.get(key)
            if owner is not None:
                raise self.err(f"this buffer is already field {owner}: each pipe field needs its "
                               f"own buffer", kwn.value, check="aliased-buffer")
            name = opts["name"] if isinstance(opts["name"], str) else var
            self.buffer_owner[key] = f"'{kwn.arg}' of pipe '{name}'"
            if free_name is not None:
                self.free_buffers.pop(free_name, None)
            buf = self.buffers[key]
            fields.append(K.Buffer(kwn.arg, buf.shape, buf.dtype, buf.loc))
        name = opts["name"] if isinstance(opts["name"], str) else var
        readers = opts["readers"]
        readers = tuple(readers) if isinstance(readers, (tuple, list)) else ()
        cap = opts["capacity"]
        decl = K.PipeDecl(name, cap if isinstance(cap, int) else 0, tuple(fields), readers,
                          bool(opts["one_shot"]), self.loc(node))
        self.pipes[name] = decl
        return decl

    # -- the kernel -------------------------------------------------------------------------
    def kernel(self, fdef: ast.FunctionDef, dec: ast.expr) -> K.Kernel:
        from .kernel import jit_options, kernel_params

        m = self.root
        num_warps, options = jit_options(m.scope, dec, m.path)
        params = []
        frame = Frame(m, "", {}, "<kernel>")
        for p, cx in kernel_params(m.scope, fdef):
            params.append(K.KParam(p.arg, cx, _loc(m.path, p)))
            if cx and isinstance(self.bind.get(p.arg), int):
                frame.env[p.arg] = Static("const", K.Const(self.bind[p.arg]))
            else:
                frame.env[p.arg] = None
        self.frames.append(frame)
        ws = None
        prologue: list[K.Stmt] = []
        self.out = prologue
        for st in fdef.body:
            if (isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                    and self.callee(st.value.func)[1] == Static("mod",
                                                                "tle_compiler.gpu.warp_specialize")):
                ws = st.value
                break
            self.stmt(st)
        if ws is None:
            raise TleError(f"kernel '{fdef.name}' calls no tle.gpu.warp_specialize",
                           _loc(m.path, fdef), check="bad-warp-specialize")
        partitions = self.warp_specialize(ws, num_warps)
        self.frames.pop()
        return K.Kernel(fdef.name, tuple(params), num_warps, tuple(sorted(options.items())),
                        tuple(sorted(self.consts.items())), tuple(self.pipes.values()),
                        tuple(self.free_buffers.values()), tuple(prologue), tuple(partitions),
                        _loc(m.path, fdef))

    def warp_specialize(self, ws: ast.Call, num_warps: int) -> list[K.KPartition]:
        given = dict(zip(("functions_and_args", "worker_num_warps", "worker_num_regs"), ws.args))
        for k in ws.keywords:
            given[k.arg] = k.value
        fa = given.get("functions_and_args")
        if not isinstance(fa, (ast.List, ast.Tuple)):
            raise self.err("warp_specialize takes a list of (function, (args...)) pairs", ws,
                           check="bad-warp-specialize")

        def ints(node: Optional[ast.expr]) -> list:
            if node is None:
                return []
            return [fold(self.value(e)) for e in node.elts]

        warps = ints(given.get("worker_num_warps"))
        regs = ints(given.get("worker_num_regs"))
        parts = []
        for i, elt in enumerate(fa.elts):
            fn_node, args_node = elt.elts
            _, fst = self.expr(fn_node)
            if fst is None or fst.kind != "func":
                raise self.err(f"`{ast.unparse(fn_node)}` is not a module-level function", fn_node,
                               check="unknown-partition")
            module, pdef = fst.value
            argv = [self.expr(a) for a in args_node.elts]
            names = [p.arg for p in pdef.args.posonlyargs + pdef.args.args]
            if len(names) != len(argv):
                raise self.err(f"partition '{pdef.name}' takes {len(names)} arguments, "
                               f"{len(argv)} given", elt, check="bad-call")
            frame = Frame(module, "", {}, pdef.name)
            bindings = []
            for p, (e, st) in zip(names, argv):
                bindings.append((p, e))
                if st is None and isinstance(e, (K.Const, K.Global, K.DType)):
                    st = Static("const", e)
                frame.env[p] = st
            self.frames.append(frame)
            try:
                body = self.block([s for s in pdef.body])
            finally:
                self.frames.pop()
            default = i == 0
            parts.append(K.KPartition(pdef.name, tuple(bindings), body,
                                      num_warps if default else warps[i - 1],
                                      None if default else (regs[i - 1] if regs else None),
                                      default, _loc(module.path, pdef)))
        return parts


def _decl_view(decl: K.PipeDecl):
    """The language's PipeDecl view of a KIR pipe (for validate_reader's rules)."""
    from ..language.gpu import SharedBuffer
    from ..language.pipe import PipeDecl

    fields = tuple((b.name, SharedBuffer(tuple(b.shape), b.dtype)) for b in decl.fields)
    return PipeDecl(decl.name, decl.capacity, "cta", decl.readers, decl.one_shot, fields, decl.loc)


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
                op = {v: k for k, v in _BINOPS.items()}[e.op]()
                return fold_int(op, a, b)
            return eval(f"a {e.op} b", {}, {"a": a, "b": b})  # floats: + - * ** only here
        except Exception:
            return None
    if isinstance(e, K.BoolOp):
        vals = [fold(x) for x in e.items]
        if any(v is None for v in vals):
            return None
        return all(vals) if e.op == "and" else any(vals)
    return None


# ----------------------------------------------------------------------------------------------
# entry points


def build_file(path: Union[str, os.PathLike], name: Optional[str] = None,
               bind: Optional[dict] = None) -> list[K.Kernel]:
    """The KIR of every ``@tle.jit`` kernel of a file that calls warp_specialize (or of the one
    named ``name``); ``bind``: integer constexpr values to read the kernels specialised to."""
    from .ast_reader import _jit_decorator

    cache = ModuleCache()
    m = cache.get(os.fspath(path))
    out = []
    for st in m.tree.body:
        if isinstance(st, ast.FunctionDef) and (name is None or st.name == name):
            dec = _jit_decorator(m.scope, st)
            if dec is None or not any(
                    isinstance(n, ast.Call) and m.scope.is_tle(n.func, "gpu.warp_specialize")
                    for n in ast.walk(st)):
                continue
            out.append(Builder(cache, m, bind).kernel(st, dec))
    return out
