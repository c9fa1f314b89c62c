"""Translate one function body (a partition, or the kernel prologue) from Triton syntax to Gluon
source text.

The translator is a small abstract interpreter over the Python AST: every expression becomes a
:class:`V` (a compile-time constant, a runtime scalar, a register tensor with a layout variable, a
shared-memory descriptor, or a pipe handle / slot that exists only at compile time). Pipe verbs
become mbarrier code (see :mod:`.pipes`); helper functions of the kernel's file are inlined with
their locals renamed.

It runs twice over the same AST (:func:`translate`): pass 1 only collects layout constraints
(:mod:`.layouts`), pass 2 emits source with the solved layouts. Variables and constraints are
numbered in visiting order, which is identical in both passes, so pass 2 finds pass 1's solution by
number.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, Optional

from ..diagnostics import TleError
from ..ir.nodes import Loc
from .layouts import LayoutSolver, layout_src, mma_layout
from .plan import BITS, GL_DTYPES, PipePlan

TL_DTYPES = {"bfloat16": "bfloat16", "float16": "float16", "float32": "float32", "float64": "float64",
             "int1": "int1", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
             "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
             "float8e4nv": "float8e4nv", "float8e5": "float8e5"}
TL_DTYPES.update({k: v for k, v in GL_DTYPES.items()})
UNARY_MATH = {"exp2", "log2", "exp", "log", "sqrt", "abs", "sin", "cos", "rsqrt", "floor", "ceil",
              "erf"}
REDUCE = {"max", "min", "sum"}
BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
          ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<",
          ast.RShift: ">>", ast.Pow: "**"}
CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


CACHE_HINTS = ("eviction_policy", "cache_modifier")  # tl.load keywords passed through


@dataclass
class V:
    kind: str  # const scalar tensor smem lptr dtype pipe writer reader slot res func mod tuple none
    text: str = ""
    var: Optional[int] = None
    shape: Optional[tuple] = None
    dtype: Optional[str] = None
    value: Any = None


def _SlotField(text: str, ring, role: Optional[str]) -> "V":
    """A slot field's shared-memory descriptor; ``slot`` is "writer" when it came from acquire."""
    v = V("smem", text, shape=tuple(ring.shape), dtype=ring.dtype, value=ring)
    v.slot = role
    return v


def bcast(a: Optional[tuple], b: Optional[tuple]) -> Optional[tuple]:
    if a is None or b is None:
        return a or b
    if len(a) != len(b):
        return a if len(a) > len(b) else b
    return tuple(max(x, y) for x, y in zip(a, b))


class Ctx:
    """What every function translation of one kernel shares."""

    def __init__(self, path: str, module: ast.Module, consts: dict, functions: dict, aliases: dict,
                 plans: dict[str, PipePlan], debug_waits: bool):
        self.path = path
        self.module = module
        self.consts = consts  # name -> python value (module constants and kernel constexprs)
        self.functions = functions  # module-level FunctionDef by name
        self.aliases = aliases  # import alias -> canonical prefix ("tl", "tle", "math")
        self.plans = plans
        self.debug_waits = debug_waits
        # (pipe, field) -> {"async", "plain"}: how the writer fills the field (translation pass 1);
        # decides each full barrier's arrive unit (plan.arrive_mode)
        self.fills: dict[tuple, set] = {}
        self.cp_async = True  # emit cp.async gathers where the form allows (compile.py may retry without)
        self.wait_sites: list[str] = []  # "pipe.kind[g] (partition, line)" for debug-wait ids
        self.wgmma_pipeline = False  # @tle.jit(wgmma_pipeline=True): wgmmas across back-edges
        self.eager_arrays: set[str] = set()  # barrier arrays with per-thread arrives (eager.py)
        self.acc_stores = True  # 16-byte stores of accumulator-layout tiles (acc_store.py)
        # instrument.skip_fills (a probe): pipes / "pipe.field"s whose fills are not emitted, to
        # measure what their gathers cost (benchmarks/gather_probe.py); wrong results
        self.probe_skip: set[str] = set()
        self.uses_acc_store = False
        self.lazy_scale_packs: set[int] = set()  # tle.gpu.scale_rows helpers in use (lazy_scale.py)


class FnTranslator:
    def __init__(self, ctx: Ctx, partition: str, warps: int, solver: LayoutSolver, emit: bool):
        self.ctx = ctx
        self.partition = partition
        self.warps = warps
        self.S = solver
        self.emitting = emit
        self.lines: list[str] = []
        self.ind = 1
        self.env: dict[str, V] = {}
        self.name_vars: dict[str, int] = {}
        self.name_vars_seen: set[str] = set()  # names ever bound to a non-arange tensor
        self.assign_counts: Optional[dict] = None  # name -> assignments in the function body
        self.tmp = 0
        self.prefix = ""
        self.layout_names: dict[tuple, str] = {}
        self.ret: Optional[V] = None
        # async wgmma bookkeeping (see docs/lowering.md, "Async wgmma"): the wgmmas issued and not
        # yet waited, in issue order, and the generated names that hold an in-flight result.
        self.inflight: list[dict] = []  # {"seq", "rings": set of ring vars read, "regs": [names]}
        self.pending: dict[str, int] = {}  # generated name -> seq of the wgmma producing it
        self.seq = 0
        self._allow_pending = False
        self.loops: list[dict] = []  # enclosing loops, innermost last: var, body indent, opaque 0
        self._frames: list[list] = []  # [statements, index being translated], outermost first
        self._wait_in_place = False  # inside a release-only `if` (st_If)

    # ---------------------------------------------------------------- helpers
    def err(self, msg: str, node: Optional[ast.AST]) -> TleError:
        return TleError(f"lowering: {msg}", Loc(self.ctx.path, getattr(node, "lineno", 0),
                                                  getattr(node, "col_offset", -1) + 1),
                        check="lowering")

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    def fresh(self, base: str = "t") -> str:
        self.tmp += 1
        return f"_{base}{self.tmp}"

    def L(self, layout: tuple) -> str:
        """A named constexpr for a layout (declared at the top of the function)."""
        if layout not in self.layout_names:
            self.layout_names[layout] = f"L{len(self.layout_names)}"
        return self.layout_names[layout]

    def Lv(self, var: int) -> str:
        return self.L(self.S.layout(var)) if self.emitting else "None"

    def cvt(self, text: str, sid: int) -> str:
        if self.emitting and sid in self.S.converts:
            return f"gl.convert_layout({text}, {self.L(self.S.target(sid))})"
        return text

    def layout_decls(self) -> list[str]:
        return [f"    {n}: gl.constexpr = {layout_src(l)}" for l, n in self.layout_names.items()]

    def materialize(self, v: V, base: str = "t") -> V:
        name = self.fresh(base)
        self.emit(f"{name} = {v.text}")
        return replace(v, text=name)

    # ---------------------------------------------------------------- names
    def canonical(self, node: ast.AST) -> Optional[str]:
        """``tl.arange`` / ``tle.gpu.local_ptr`` / ``math.x`` for module attribute chains."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.env:
            return None
        root = self.ctx.aliases.get(node.id)
        if root is None:
            return None
        return ".".join([root] + list(reversed(parts)))

    def lookup(self, name: str, node: ast.AST) -> V:
        if name in self.env:
            v = self.env[name]
            if v.kind == "remat":
                # a name bound to tl.arange: a fresh arange (and layout variable) at every use, so
                # unrelated uses (a register operand's load, the epilogue's store) do not force one
                # layout on each other through the shared index vector
                var = self.S.new(1)
                a, b = v.value["arange"]
                return V("tensor", f"gl.arange({a}, {b}, layout={self.Lv(var)})", var, v.shape,
                         "int32")
            return self.env[name]
        if name in self.ctx.consts:
            val = self.ctx.consts[name]
            return V("const", name, value=val)
        if name in self.ctx.functions:
            return V("func", name, value=self.ctx.functions[name])
        if name in ("float", "int", "range", "min", "max", "len"):
            return V("func", name, value=name)
        raise self.err(f"name '{name}' is not defined here", node)

    # ---------------------------------------------------------------- expressions
    def ex(self, node: ast.AST, allow_pending: bool = False) -> V:
        """Translate an expression. Its value may be the result of an in-flight wgmma only where
        ``allow_pending`` (the right-hand side of ``name = ...`` and the accumulator of a dot);
        anywhere else reading it is a register read, so the wgmma is waited for first."""
        m = getattr(self, "ex_" + type(node).__name__, None)
        if m is None:
            raise self.err(f"unsupported expression `{ast.unparse(node)}`", node)
        self._allow_pending = False
        v = m(node)
        if not allow_pending and self.is_pending(v):
            v = self.wait_value(v)
        return v

    # ---------------------------------------------------------------- async wgmma
    def is_pending(self, v: V) -> bool:
        return (v.kind == "tensor" and v.text in self.pending
                and any(e["seq"] == self.pending[v.text] for e in self.inflight))

    def _wait_through(self, pos: int, why: str) -> None:
        """Emit ``warpgroup_mma_wait`` so that inflight[0..pos] are complete (wgmma groups retire in
        issue order): ``num_outstanding`` = the wgmmas issued after inflight[pos]. Every name holding
        a result of a completed wgmma, and every register A operand it read, is a dep (rebound to
        the wait's result: later reads are ordered after the wait; registers stay alive until it)."""
        if pos < 0:
            return
        done = self.inflight[:pos + 1]
        seqs = {e["seq"] for e in done}
        n = len(self.inflight) - 1 - pos
        if self._wait_in_place:
            # inside a release-only `if` (st_If): wait without rebinding anything and leave the
            # in-flight list as it is, since the path that skips the `if` waits for nothing
            self.emit(f"warpgroup_mma_wait({n}, deps=[{self._throwaway_dep()}])  # {why}")
            return
        names = [k for k, q in self.pending.items() if q in seqs]
        regs = [r for e in done for r in e["regs"] if r not in names]
        deps = names + regs
        if deps:
            self.emit(f"{', '.join(deps)} = warpgroup_mma_wait({n}, deps=[{', '.join(deps)}])"
                      f"  # {why}")
        else:
            # the retired wgmmas left no name to rebind (their results were accumulated into a
            # later wgmma, their A operands were in shared memory): Triton's wait op still needs
            # one dependency
            self.emit(f"warpgroup_mma_wait({n}, deps=[{self._throwaway_dep()}])  # {why}")
        self.inflight = self.inflight[pos + 1:]
        for k in names:
            del self.pending[k]

    def _throwaway_dep(self) -> str:
        """A tensor for a ``warpgroup_mma_wait`` that has no real dependency (the op needs one):
        two elements per thread, since with one its inline asm would return a one-field struct,
        which LLVM rejects."""
        one = self.L(("blocked", (1,), (32,), (self.warps,), (0,))) if self.emitting else "None"
        return f"gl.full([{64 * self.warps}], 0, gl.int32, layout={one})"

    def wait_value(self, v: V) -> V:
        q = self.pending[v.text]
        pos = next(i for i, e in enumerate(self.inflight) if e["seq"] == q)
        self._wait_through(pos, f"{v.text} is read")
        return v

    def wait_rings(self, rings: set, why: str) -> None:
        """Before shared memory in ``rings`` may be overwritten (a release, a store): wait for the
        last in-flight wgmma reading any of them."""
        pos = max((i for i, e in enumerate(self.inflight) if e["rings"] & rings), default=-1)
        self._wait_through(pos, why)

    def drain(self, why: str) -> None:
        self._wait_through(len(self.inflight) - 1, why)

    def ex_Constant(self, node: ast.Constant) -> V:
        if node.value is None:
            return V("none", "None", value=None)
        return V("const", repr(node.value), value=node.value)

    def ex_Name(self, node: ast.Name) -> V:
        return self.lookup(node.id, node)

    def ex_Tuple(self, node) -> V:
        items = [self.ex(e) for e in node.elts]
        return V("tuple", "(" + ", ".join(i.text for i in items) + (",)" if len(items) == 1 else ")"),
                 value=items)

    ex_List = ex_Tuple

    def ex_Attribute(self, node: ast.Attribute) -> V:
        canon = self.canonical(node)
        if canon is not None:
            attr = canon.rsplit(".", 1)[-1]
            if canon.startswith("tl.") and attr in TL_DTYPES:
                return V("dtype", f"gl.{TL_DTYPES[attr]}", value=TL_DTYPES[attr])
            return V("mod", canon, value=canon)
        base = self.ex(node.value)
        if base.kind == "slot":
            pp: PipePlan = self.ctx.plans[base.value["pipe"]]
            ring = pp.rings.get(node.attr)
            if ring is None or node.attr not in base.value["fields"]:
                raise self.err(f"slot of pipe '{pp.name}' has no (visible) field '{node.attr}'", node)
            return _SlotField(f"{ring.var}.index({base.value['stage']})", ring,
                              base.value.get("role"))
        if base.kind == "res":
            if node.attr == "slot":
                return base.value["slot"]
            if node.attr == "is_closed":
                pp = self.ctx.plans[base.value["slot"].value["pipe"]]
                if pp.closed is None:
                    return V("const", "False", value=False)
                stage = base.value["slot"].value["stage"]
                t = self.fresh("closed")
                l1 = self.L(("blocked", (1,), (32,), (self.warps,), (0,)))
                self.emit(f"{t} = gl.max({pp.closed}.index({stage}).load({l1}), 0) != 0")
                return V("scalar", t)
        if base.kind in ("tensor", "scalar") and node.attr in ("T",):
            raise self.err("`.T` is not supported; use tl.trans on a shared-memory dot operand", node)
        if base.kind in ("tensor", "scalar", "pipe", "writer", "reader"):
            return V("method", node.attr, value=(base, node.attr))
        raise self.err(f"unsupported attribute `{ast.unparse(node)}`", node)

    def ex_Subscript(self, node: ast.Subscript) -> V:
        base = self.ex(node.value)
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base.kind == "tuple" and isinstance(node.slice, ast.Constant):
            return base.value[node.slice.value]
        if base.kind != "tensor":
            raise self.err(f"unsupported subscript `{ast.unparse(node)}`", node)
        cur = base
        pos = 0
        shape = list(cur.shape or ())
        text_idx = []
        for e in idx:
            if isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None:
                text_idx.append(":")
                pos += 1
            elif isinstance(e, ast.Constant) and e.value is None:
                text_idx.append("None")
                shape.insert(pos, 1)
                pos += 1
            else:
                raise self.err("only `x[:, None]`-style expansions are supported on tensors", node)
        # one expand at a time keeps the Slice relation simple: x[:, None] / x[None, :]
        nones = [i for i, t in enumerate(text_idx) if t == "None"]
        if len(nones) != 1:
            raise self.err("expand exactly one dimension per subscript (x[:, None] or x[None, :])",
                           node)
        res = self.S.new(len(shape))
        sid = self.S.soft_eq(base.var, res, dim=nones[0])
        return V("tensor", f"{self.cvt(base.text, sid)}[{', '.join(text_idx)}]", res, tuple(shape),
                 base.dtype)

    def _elementwise(self, operands: list[V], fmt) -> V:
        tens = [o for o in operands if o.kind == "tensor"]
        shape = None
        for o in tens:
            shape = bcast(shape, o.shape)
        rank = max(self.S.rank[o.var] for o in tens)
        res = self.S.new(rank)
        texts = []
        for o in operands:
            if o.kind == "tensor":
                sid = self.S.soft_eq(o.var, res)
                texts.append(self.cvt(o.text, sid))
            else:
                texts.append(o.text)
        dt = next((o.dtype for o in tens if o.dtype), None)
        return V("tensor", fmt(*texts), res, shape, dt)

    def ex_BinOp(self, node: ast.BinOp) -> V:
        a, b = self.ex(node.left), self.ex(node.right)
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.err("unsupported operator", node)
        return self.binop(a, b, op, node)

    def binop(self, a: V, b: V, op: str, node) -> V:
        if a.kind == "const" and b.kind == "const":
            try:
                val = eval(f"a {op} b", {}, {"a": a.value, "b": b.value})
            except Exception:
                val = None
            return V("const", f"({a.text} {op} {b.text})", value=val)
        for x in (a, b):
            if x.kind not in ("const", "scalar", "tensor"):
                raise self.err(f"operator {op} on a {x.kind}", node)
        if a.kind == "tensor" or b.kind == "tensor":
            return self._elementwise([a, b], lambda x, y: f"({x} {op} {y})")
        return V("scalar", f"({a.text} {op} {b.text})")

    def ex_Compare(self, node: ast.Compare) -> V:
        if len(node.ops) != 1:
            raise self.err("chained comparisons are not supported", node)
        op = CMPOPS.get(type(node.ops[0]))
        if op is None:
            raise self.err("unsupported comparison", node)
        return self.binop(self.ex(node.left), self.ex(node.comparators[0]), op, node)

    def ex_UnaryOp(self, node: ast.UnaryOp) -> V:
        v = self.ex(node.operand)
        op = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not ", ast.Invert: "~"}[type(node.op)]
        if v.kind == "const":
            try:
                val = eval(f"{op}x", {}, {"x": v.value})
            except Exception:
                val = None
            return V("const", f"({op}{v.text})", value=val)
        return replace(v, text=f"({op}{v.text})")

    def ex_BoolOp(self, node: ast.BoolOp) -> V:
        vs = [self.ex(v) for v in node.values]
        op = " and " if isinstance(node.op, ast.And) else " or "
        return V("scalar", "(" + op.join(v.text for v in vs) + ")")

    def ex_IfExp(self, node: ast.IfExp) -> V:
        raise self.err("conditional expressions are not supported; use tl.where", node)

    # ---------------------------------------------------------------- calls
    def kwargs(self, node: ast.Call) -> dict[str, ast.AST]:
        return {k.arg: k.value for k in node.keywords}

    def ex_Call(self, node: ast.Call) -> V:
        canon = self.canonical(node.func)
        if canon is not None:
            return self.call_builtin(canon, node)
        f = self.ex(node.func)
        if f.kind == "func":
            if f.value == "float":
                v = self.ex(node.args[0])
                return V("const", f"float({v.text})", value=float(v.value))
            if f.value in ("int",):
                v = self.ex(node.args[0])
                return V("const" if v.kind == "const" else "scalar", f"int({v.text})",
                         value=int(v.value) if v.kind == "const" else None)
            if isinstance(f.value, ast.FunctionDef):
                return self.inline(f.value, node)
            raise self.err(f"`{f.value}(...)` is not supported in a kernel", node)
        if f.kind == "method":
            return self.call_method(f.value[0], f.value[1], node)
        raise self.err(f"unsupported call `{ast.unparse(node)}`", node)

    def call_method(self, base: V, name: str, node: ast.Call) -> V:
        from . import pipes

        if base.kind in ("pipe", "writer", "reader"):
            return pipes.handle_method(self, base, name, node)
        if name == "to":
            dt = self.ex(node.args[0]) if node.args else self.ex(self.kwargs(node)["dtype"])
            return replace(base, text=f"{base.text}.to({dt.text})", dtype=dt.value)
        raise self.err(f"method `.{name}()` is not supported", node)

    def call_builtin(self, canon: str, node: ast.Call) -> V:
        kw = self.kwargs(node)
        name = canon.rsplit(".", 1)[-1]
        args = node.args
        if canon.startswith("tle."):
            if canon == "tle.gpu.local_ptr":
                buf = self.ex(args[0])
                if buf.kind != "smem":
                    raise self.err("tle.gpu.local_ptr takes a shared-memory buffer (a slot field)", node)
                if len(args) > 1 or "indices" in kw:
                    raise self.err("tle.gpu.local_ptr(buf, indices) is not supported by the lowering", node)
                return V("lptr", buf.text, shape=buf.shape, dtype=buf.dtype,
                         value=SimpleNamespace(value=buf.value, slot=getattr(buf, "slot", None),
                                               text=buf.text, shape=buf.shape, dtype=buf.dtype))
            if canon == "tle.gpu.scale_rows":
                return self._scale_rows(node)
            raise self.err(f"`{canon}` is not supported inside a partition", node)
        if not canon.startswith("tl."):
            raise self.err(f"`{canon}` is not supported", node)
        if name == "arange":
            a, b = self.ex(args[0]), self.ex(args[1])
            if a.kind != "const" or b.kind != "const":
                raise self.err("tl.arange bounds must be compile-time constants", node)
            var = self.S.new(1)
            return V("tensor", f"gl.arange({a.text}, {b.text}, layout={self.Lv(var)})", var,
                     (b.value - a.value,), "int32",
                     value={"arange": (a.text, b.text), "bounds": (a.value, b.value)})
        if name in ("zeros", "full"):
            shape = self.ex(args[0])
            if name == "zeros":
                value = V("const", "0", value=0)
                dt = self.ex(args[1] if len(args) > 1 else kw["dtype"])
            else:
                value = self.ex(args[1])
                dt = self.ex(args[2] if len(args) > 2 else kw["dtype"])
            dims = tuple(x.value for x in shape.value)
            if any(not isinstance(d, int) for d in dims):
                raise self.err("tensor shapes must be compile-time constants", node)
            var = self.S.new(len(dims))
            return V("tensor", f"gl.full({shape.text}, {value.text}, {dt.text}, layout={self.Lv(var)})",
                     var, dims, dt.value)
        if name == "load":
            return self.load(node, kw)
        if name == "store":
            self.store(node, kw)
            return V("none", "None")
        if name == "dot":
            return self.dot(node, kw)
        if name == "where":
            c, a, b = (self.ex(x) for x in args)
            if not any(x.kind == "tensor" for x in (c, a, b)):
                return V("scalar", f"gl.where({c.text}, {a.text}, {b.text})")
            res = self._elementwise([c, a, b], lambda x, y, z: f"gl.where({x}, {y}, {z})")
            # the values' dtype, not the condition's
            dt = next((v.dtype for v in (a, b) if v.kind == "tensor" and v.dtype), None)
            return replace(res, dtype=dt)
        if name in ("maximum", "minimum"):
            a, b = self.ex(args[0]), self.ex(args[1])
            if a.kind != "tensor" and b.kind != "tensor":
                return V("scalar", f"gl.{name}({a.text}, {b.text})")
            return self._elementwise([a, b], lambda x, y: f"gl.{name}({x}, {y})")
        if name in REDUCE:
            x = self.ex(args[0])
            axis_node = args[1] if len(args) > 1 else kw.get("axis")
            if axis_node is None or x.kind != "tensor":
                raise self.err(f"tl.{name} needs a tensor and an explicit axis", node)
            axis = self.ex(axis_node).value
            if len(x.shape) == 1:
                # a whole 1-D tensor to one value: a scalar (e.g. `if tl.max(flag, 0) > 0:`, a
                # branch every thread of the partition takes the same way)
                if axis not in (0, -1):
                    raise self.err(f"tl.{name} of a 1-D tensor: axis must be 0, got {axis}", node)
                return V("scalar", f"gl.{name}({x.text}, 0)")
            res = self.S.new(len(x.shape) - 1)
            self.S.slice_of(res, axis, x.var)
            shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
            return V("tensor", f"gl.{name}({x.text}, {axis})", res, shape, x.dtype)
        if name in UNARY_MATH:
            x = self.ex(args[0])
            return replace(x, text=f"gl.{name}({x.text})")
        if name == "program_id" or name == "num_programs":
            a = self.ex(args[0] if args else kw["axis"])
            return V("scalar", f"gl.{name}({a.text})")
        if name == "cdiv":
            a, b = self.ex(args[0]), self.ex(args[1])
            if a.kind == "const" and b.kind == "const":
                return V("const", f"gl.cdiv({a.text}, {b.text})", value=-(-a.value // b.value))
            return V("scalar", f"gl.cdiv({a.text}, {b.text})")
        if name == "constexpr":
            v = self.ex(args[0])
            return v
        if name == "trans":
            raise self.err("tl.trans is only supported on a shared-memory tile fed to tl.dot "
                           "(tl.dot(a, tl.trans(tl.load(tle.gpu.local_ptr(slot.f)))))", node)
        raise self.err(f"`tl.{name}` is not supported by the lowering", node)

    def _scale_rows(self, node: ast.Call) -> V:
        """``tle.gpu.scale_rows(x, factor)`` = ``x * factor[:, None]``; on a wgmma accumulator a warp
        whose factors are all 1 skips its multiplies (lowering/lazy_scale.py)."""
        from . import lazy_scale

        if len(node.args) != 2 or node.keywords:
            raise self.err("tle.gpu.scale_rows(x, factor) takes two arguments", node)
        x, f = self.ex(node.args[0]), self.ex(node.args[1])
        if (x.kind != "tensor" or len(x.shape or ()) != 2 or f.kind != "tensor"
                or len(f.shape or ()) != 1 or f.shape[0] != x.shape[0]):
            raise self.err("tle.gpu.scale_rows(x, factor): x must be a 2-D tensor and factor a 1-D "
                           "tensor with one value per row of x", node)
        col = ast.Subscript(value=node.args[1], ctx=ast.Load(),
                            slice=ast.Tuple(elts=[ast.Slice(), ast.Constant(None)], ctx=ast.Load()))
        ast.copy_location(col, node.args[1])
        texts: list[str] = []

        def fmt(a, b):
            texts[:] = [a, b]
            return f"({a} * {b})"

        res = self._elementwise([x, self.ex(col)], fmt)
        if self.emitting:
            pack = lazy_scale.pack_for(self.S.layout(res.var), res.shape, x.dtype)
            if pack:
                self.ctx.lazy_scale_packs.add(pack)
                res = replace(res, text=f"{lazy_scale.helper_name(pack)}({texts[0]}, {texts[1]})")
        return res

    def _local(self, node: ast.AST) -> Optional[V]:
        """``tl.load(tle.gpu.local_ptr(buf))`` → the buffer, without loading it."""
        if (isinstance(node, ast.Call) and self.canonical(node.func) == "tl.load"
                and len(node.args) == 1 and not node.keywords):
            p = self.ex(node.args[0])
            if p.kind == "lptr":
                return p.value
        return None

    def load(self, node: ast.Call, kw: dict) -> V:
        p = self.ex(node.args[0])
        if p.kind == "lptr":
            var = self.S.new(len(p.shape))
            # value: the descriptor, so a dot can read the tile from shared memory instead
            return self.materialize(V("tensor", f"{p.text}.load({self.Lv(var)})", var, p.shape,
                                      p.dtype, value={"smem": p.value}), "v")
        if p.kind != "tensor":
            raise self.err("tl.load of a scalar pointer is not supported (load a tensor of pointers)",
                           node)
        parts = [p.text]
        for key in ("mask", "other"):
            a = kw.get(key)
            if a is None:
                continue
            v = self.ex(a)
            if v.kind == "tensor":
                sid = self.S.soft_eq(v.var, p.var)
                parts.append(f"{key}={self.cvt(v.text, sid)}")
            else:
                parts.append(f"{key}={v.text}")
        parts += self._cache_hints(kw, node)
        return self.materialize(V("tensor", f"gl.load({', '.join(parts)})", p.var, p.shape), "v")

    def _cache_hints(self, kws: dict, node: ast.AST) -> list[str]:
        """tl.load's cache hints (``eviction_policy``, ``cache_modifier``: string literals) as
        Gluon keyword arguments, for a register load and a cp.async gather alike (Triton 3.6's
        cp.async lowering ignores them, docs/BENCHMARKS.md session 3)."""
        out = []
        for key in CACHE_HINTS:
            a = kws.get(key)
            if a is not None:
                if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
                    raise self.err(f"tl.load's {key} must be a string literal", node)
                out.append(f"{key}={a.value!r}")
        return out

    def _cp_async_source(self, p: V, val_node: ast.AST):
        """``tl.load(ptrs, mask=m, other=0)`` stored whole into a writer's slot field: the form a
        16-byte cp.async gather can fill (masked elements are zero-filled by cp.async)."""
        ring = getattr(p.value, "value", None)
        slot = getattr(p.value, "slot", None)
        if not self.ctx.cp_async:
            return None
        if not (isinstance(val_node, ast.Call) and self.canonical(val_node.func) == "tl.load"
                and len(val_node.args) == 1 and hasattr(ring, "var") and slot == "writer"):
            return None
        kws = {k.arg: k.value for k in val_node.keywords}
        # (with cache hints too: they stay a cp.async gather rather than a register load)
        if set(kws) - {"mask", "other", *CACHE_HINTS} or len(ring.shape) < 2 \
                or BITS.get(ring.dtype) not in (16, 32):
            return None
        if "other" in kws and not (isinstance(kws["other"], ast.Constant)
                                   and kws["other"].value == 0 and kws["other"].value is not False):
            return None
        return ring, kws

    def store(self, node: ast.Call, kw: dict) -> None:
        p = self.ex(node.args[0])
        val_node = node.args[1] if len(node.args) > 1 else kw["value"]
        if p.kind == "lptr":
            ring = getattr(p.value, "value", None)
            # shared memory about to be overwritten: no in-flight wgmma may still read it
            self.wait_rings({getattr(ring, "var", None), None}, "the slot is overwritten")
            src = self._cp_async_source(p, val_node)
            if hasattr(ring, "pipe") and ({ring.pipe, f"{ring.pipe}.{ring.field}"}
                                          & self.ctx.probe_skip):
                # recorded as if filled, so the commit arrives exactly as in the real kernel
                self._record_fill(ring, "async" if src is not None else "plain")
                self.emit(f"pass  # PROBE: the fill of {ring.pipe}.{ring.field} is skipped "
                          f"(instrument.skip_fills; the kernel's results are wrong)")
                return
            if src is not None:
                ring, kws = src
                ptr = self.ex(val_node.args[0])
                if ptr.kind == "tensor" and tuple(ptr.shape or ()) == tuple(ring.shape):
                    parts = [p.text, ptr.text]
                    if "mask" in kws:
                        m = self.ex(kws["mask"])
                        if m.kind == "tensor":
                            sid = self.S.soft_eq(m.var, ptr.var)
                            parts.append(f"mask={self.cvt(m.text, sid)}")
                        else:
                            parts.append(f"mask={m.text}")
                    if "other" in kws:
                        self.ex(kws["other"])
                    parts += self._cache_hints(kws, val_node)
                    self.emit(f"async_copy.async_copy_global_to_shared({', '.join(parts)})"
                              f"  # cp.async gather; arrives per thread at the commit")
                    self._record_fill(ring, "async")
                    return
                raise self.err("internal: cp.async form with a mismatched pointer shape", node)
            val = self.ex(val_node)
            if val.kind != "tensor":
                raise self.err("a shared-memory store needs a tensor value", node)
            self.emit(f"{p.text}.store({val.text})")
            if hasattr(ring, "var"):
                self._record_fill(ring, "plain")
            return
        val = self.ex(val_node)
        if p.kind != "tensor":
            raise self.err("tl.store to a scalar pointer is not supported", node)
        if self._acc_store(p, val, node, kw):
            return
        parts = [p.text]
        if val.kind == "tensor":
            sid = self.S.soft_eq(val.var, p.var)
            parts.append(self.cvt(val.text, sid))
        else:
            parts.append(val.text)
        if "mask" in kw:
            m = self.ex(kw["mask"])
            if m.kind == "tensor":
                sid = self.S.soft_eq(m.var, p.var)
                parts.append(f"mask={self.cvt(m.text, sid)}")
            else:
                parts.append(f"mask={m.text}")
        self.emit(f"gl.store({', '.join(parts)})")

    def _record_fill(self, ring, kind: str) -> None:
        """How the writer fills a pipe field ("async": cp.async, "plain": register stores); decides
        the arrive unit of the field's full barrier (plan.arrive_mode)."""
        self.ctx.fills.setdefault((ring.pipe, ring.field), set()).add(kind)

    def _acc_store(self, p: V, val: V, node: ast.Call, kw: dict) -> bool:
        """An unmasked store of a wgmma-accumulator-layout tile to column-contiguous addresses:
        quad transpose + 16-byte stores (lowering/acc_store.py)."""
        from .acc_store import column_contiguous, layout_qualifies

        if (not self.ctx.acc_stores or "mask" in kw or len(node.args) > 2 or val.kind != "tensor"
                or p.var is None or not self.emitting):
            return False
        shape = tuple(p.shape or ())
        if not layout_qualifies(self.S.layout(p.var), shape) or tuple(val.shape or ()) != shape:
            return False
        if not column_contiguous(self, node.args[0], shape[1]):
            return False
        sid = self.S.soft_eq(val.var, p.var)
        self.emit(f"_tle_store_acc({p.text}, {self.cvt(val.text, sid)})  # 16-byte stores "
                  f"(lowering/acc_store.py)")
        self.ctx.uses_acc_store = True
        return True

    def dot(self, node: ast.Call, kw: dict) -> V:
        args = list(node.args)
        a_node, b_node = args[0], args[1]
        acc_node = args[2] if len(args) > 2 else kw.get("acc")

        def from_smem(n):
            s = self._local(n)
            if s is None and isinstance(n, ast.Name):
                v = self.ex(n)  # a variable holding `tl.load(local_ptr(buf))`: read buf directly
                if v.kind == "tensor" and isinstance(v.value, dict) and "smem" in v.value:
                    s = v.value["smem"]
            return s

        def smem_operand(n):
            s = from_smem(n)
            if s is not None:
                return V("smem", s.text, shape=s.shape, dtype=s.dtype, value=s.value)
            if isinstance(n, ast.Call) and self.canonical(n.func) == "tl.trans" and len(n.args) == 1:
                s = from_smem(n.args[0])
                if s is not None and len(s.shape) == 2:
                    return V("smem", f"{s.text}.permute((1, 0))", shape=(s.shape[1], s.shape[0]),
                             dtype=s.dtype, value=s.value)
            return None

        rings = set()
        a = smem_operand(a_node)
        if a is not None:
            a = self.opaque_stage(a)
        if a is None:
            a = self.ex(a_node)
            if a.kind != "tensor":
                raise self.err("tl.dot: the A operand must be a tensor", node)
        b = smem_operand(b_node)
        if b is not None:
            b = self.opaque_stage(b)
        if b is None:
            raise self.err("tl.dot: the B operand must be a shared-memory tile, "
                           "`tl.load(tle.gpu.local_ptr(slot.f))` or tl.trans of one (wgmma reads B "
                           "from shared memory)", b_node)
        M, K = a.shape
        N = b.shape[1]
        bits = BITS.get(b.dtype, 16)
        k_instr = 256 // bits if bits <= 16 else 8
        mma = mma_layout(self.warps, N, k_instr)
        res = self.S.new(2)
        self.S.fix(res, mma)
        regs = []
        reg_types = []  # (shape, dtype, layout) of each register A operand (pipelined loops)
        for x in (a, b):
            if x.kind == "smem":
                rings.add(getattr(x.value, "var", None))  # None: unknown buffer, waited for always
        a_text = a.text
        if a.kind == "tensor":
            # A register A operand: DotOperand(0, mma, k_width = 32 bits / element) for wgmma. It is
            # named so that the wait retiring this wgmma keeps its registers alive (a dep).
            dot_l = ("dot", 0, mma, max(1, 32 // bits))
            self.S.prefer(a.var, dot_l)
            a_text = self.fresh("a")
            self.emit(f"{a_text} = gl.convert_layout({a.text}, "
                      f"{self.L(dot_l) if self.emitting else 'None'})")
            regs.append(a_text)
            reg_types.append((tuple(a.shape), a.dtype, dot_l))
        if acc_node is not None:
            acc = self.ex(acc_node, allow_pending=True)
            self.S.anchor_eq(acc.var, res)
            sid = self.S.soft_eq(acc.var, res)
            acc_text = self.cvt(acc.text, sid)
            use_acc = ""
        else:
            acc_text = f"gl.zeros([{M}, {N}], gl.float32, layout={self.L(mma) if self.emitting else 'None'})"
            use_acc = ", use_acc=False"
        if acc_node is not None and self.is_pending(acc) and sid in self.S.converts and self.emitting:
            raise self.err("internal: an in-flight accumulator needs a layout conversion", node)
        out = self.materialize(V("tensor", f"warpgroup_mma({a.text if a.kind == 'smem' else a_text}, "
                                           f"{b.text}, {acc_text}{use_acc}, is_async=True)", res,
                                 (M, N), "float32"), "acc")
        self.seq += 1
        if acc_node is not None and acc.text in self.pending:
            # the accumulator chain: the old name's wgmma retires before this one (in order)
            pass
        self.inflight.append({"seq": self.seq, "rings": rings, "regs": regs, "reg_types": reg_types})
        self.pending[out.text] = self.seq
        return out

    _CONST_STAGE = re.compile(r"^(\w+)\.index\(0\)")

    def opaque_stage(self, v: V) -> V:
        """A wgmma operand in a slot of a capacity-1 (or one_shot) ring, inside a loop: index the
        ring with an opaque, loop-variant 0 instead of the literal 0. With a literal the slot
        address, hence every k-step's 64-bit wgmma descriptor (36 for a 576-deep QK), is loop
        invariant; LLVM hoists them all out of the loop and keeps them live across it, which made
        the seesaw's consumers spill (docs/lowering.md, "Seesaw registers"). Recomputed in the loop
        they cost a few uniform-datapath instructions per iteration. The zero is an inline-asm
        `mov` (pure, so LLVM merges the copies of one iteration) fed the loop variable."""
        if not self.loops or self.loops[-1]["static"] or not self._CONST_STAGE.match(v.text):
            return v  # (a static_range body is unrolled: no loop for LLVM to hoist out of)
        loop = self.loops[-1]
        z = loop["z"] if loop["ind"] == self.ind else None
        if z is None:
            z = self.fresh("z")
            self.emit(f'{z} = gl.inline_asm_elementwise("mov.b32 $0, 0;", "=r,r", [{loop["var"]}], '
                      f'dtype=gl.int32, is_pure=True, pack=1)  # opaque 0: descriptors stay in the loop')
            if loop["ind"] == self.ind:  # at the loop body's top level: dominates the rest of it
                loop["z"] = z
        return replace(v, text=self._CONST_STAGE.sub(lambda m: f"{m.group(1)}.index({z})", v.text))

    # ---------------------------------------------------------------- inlining
    def inline(self, fdef: ast.FunctionDef, node: ast.Call) -> V:
        args = [self.ex(a) for a in node.args]
        kws = {k.arg: self.ex(k.value) for k in node.keywords}
        saved_env, saved_prefix, saved_ret = self.env, self.prefix, self.ret
        saved_counts = self.assign_counts
        self.assign_counts = self._count_assigns(fdef.body)
        self.tmp += 1
        prefix = f"_{fdef.name}{self.tmp}_"
        env = {}
        params = fdef.args.args
        for i, p in enumerate(params):
            v = args[i] if i < len(args) else kws.get(p.arg)
            if v is None:
                raise self.err(f"helper '{fdef.name}': argument '{p.arg}' is missing", node)
            env[p.arg] = v
        self.env, self.prefix, self.ret = env, prefix, None
        try:
            for i, st in enumerate(fdef.body):
                if isinstance(st, ast.Return):
                    if i != len(fdef.body) - 1:
                        raise self.err("a helper returns only at its end", st)
                    self.ret = self.ex(st.value) if st.value is not None else V("none", "None")
                elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                    continue
                else:
                    self.stmt(st)
            ret = self.ret or V("none", "None")
        finally:
            self.env, self.prefix, self.ret = saved_env, saved_prefix, saved_ret
            self.assign_counts = saved_counts
        return ret

    # ---------------------------------------------------------------- statements
    def stmt(self, st: ast.stmt) -> None:
        m = getattr(self, "st_" + type(st).__name__, None)
        if m is None:
            raise self.err(f"unsupported statement `{ast.unparse(st).splitlines()[0]}`", st)
        m(st)

    @staticmethod
    def _count_assigns(stmts: list[ast.stmt]) -> dict:
        counts: dict = {}
        for st in stmts:
            for n in ast.walk(st):
                targets = []
                if isinstance(n, ast.Assign):
                    targets = n.targets
                elif isinstance(n, (ast.AugAssign, ast.AnnAssign, ast.For)):
                    targets = [n.target]
                for t in targets:
                    for x in ast.walk(t):
                        if isinstance(x, ast.Name):
                            counts[x.id] = counts.get(x.id, 0) + 1
        return counts

    def body(self, stmts: list[ast.stmt], drain: Optional[str] = None) -> None:
        if self.assign_counts is None:  # the function's top-level body
            self.assign_counts = self._count_assigns(stmts)
        n = len(self.lines)
        frame = [stmts, 0]
        self._frames.append(frame)
        try:
            for i, s in enumerate(stmts):
                frame[1] = i
                self.stmt(s)
        finally:
            self._frames.pop()
        if drain:
            self.drain(drain)
        if len(self.lines) == n:
            self.emit("pass")

    def later_names(self) -> set[str]:
        """Names read by the statements after the one being translated, in its block and in every
        enclosing block of the function (eager publish: what a commit's arrive must precede)."""
        names: set[str] = set()
        for stmts, i in self._frames:
            for st in stmts[i + 1:]:
                names |= {n.id for n in ast.walk(st)
                          if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return names

    def st_Pass(self, st) -> None:
        pass

    def st_Expr(self, st: ast.Expr) -> None:
        if isinstance(st.value, ast.Constant):
            return
        if isinstance(st.value, ast.Call) and self._is_assume(st.value.func):
            return  # tle.assume(COND): a param domain for the verifier; nothing runs
        self.ex(st.value)

    def _is_assume(self, func: ast.AST) -> bool:
        """``tle.assume`` (or ``assume`` imported from tle_compiler) in the kernel's file."""
        if self.canonical(func) == "tle.assume":
            return True
        if not isinstance(func, ast.Name) or func.id in self.env:
            return False
        return any(isinstance(st, ast.ImportFrom) and st.module in (
            "tle_compiler", "tle_compiler.language", "tle_compiler.language.assume")
            and any(a.name == "assume" and (a.asname or a.name) == func.id for a in st.names)
            for st in self.ctx.module.body)

    def assign(self, name: str, v: V, node: ast.AST) -> None:
        if v.kind in ("pipe", "writer", "reader", "slot", "res", "smem", "lptr", "dtype", "func",
                      "mod", "tuple", "none"):
            self.env[name] = v
            return
        gen = self.prefix + name
        if v.kind == "const":
            self.emit(f"{gen} = {v.text}")
            self.env[name] = V("const", gen, value=v.value)
            return
        if v.kind == "scalar":
            self.emit(f"{gen} = {v.text}")
            self.env[name] = V("scalar", gen)
            return
        if v.kind == "method":
            raise self.err("a bound method cannot be stored in a variable", node)
        assert v.kind == "tensor"
        if (isinstance(v.value, dict) and "arange" in v.value and gen not in self.name_vars_seen
                and self.assign_counts.get(name, 0) == 1):
            # rematerialised at each use (lookup); nothing is emitted for the name itself
            self.env[name] = V("remat", gen, shape=v.shape, dtype="int32", value=v.value)
            return
        self.name_vars_seen.add(gen)
        var = self.name_vars.get(gen)
        prev = self.env.get(name)
        if var is None or prev is None or prev.kind != "tensor":
            var = self.S.new(self.S.rank[v.var])
            self.name_vars[gen] = var
        sid = self.S.soft_eq(v.var, var)
        if self.is_pending(v) and self.emitting and sid in self.S.converts:
            v = self.wait_value(v)  # a conversion reads the registers
        pend = self.pending.pop(v.text, None) if self.is_pending(v) else None
        self.pending.pop(gen, None)
        self.emit(f"{gen} = {self.cvt(v.text, sid)}")
        if pend is not None:
            self.pending[gen] = pend
        shape = v.shape if prev is None or prev.shape is None else prev.shape
        self.env[name] = V("tensor", gen, var, shape, v.dtype, value=v.value)

    def st_Assign(self, st: ast.Assign) -> None:
        if len(st.targets) != 1 or not isinstance(st.targets[0], ast.Name):
            raise self.err("only `name = value` assignments are supported", st)
        self.assign(st.targets[0].id, self.ex(st.value, allow_pending=True), st)

    def st_AnnAssign(self, st: ast.AnnAssign) -> None:
        if st.value is None or not isinstance(st.target, ast.Name):
            raise self.err("unsupported annotated assignment", st)
        self.assign(st.target.id, self.ex(st.value, allow_pending=True), st)

    def st_AugAssign(self, st: ast.AugAssign) -> None:
        if not isinstance(st.target, ast.Name):
            raise self.err("only `name op= value` is supported", st)
        cur = self.lookup(st.target.id, st)
        if self.is_pending(cur):
            cur = self.wait_value(cur)
        v = self.binop(cur, self.ex(st.value), BINOPS[type(st.op)], st)
        self.assign(st.target.id, v, st)

    def st_For(self, st: ast.For) -> None:
        """A ``range`` / ``tl.range`` / ``tl.static_range`` loop, its arguments bound as Triton 3.6
        binds them (``tl.range(arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
        disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False, disable_licm=False)``,
        ``tl.static_range(arg1, arg2=None, step=None)``, builtin ``range`` positional only) and
        emitted as Gluon's ``range(...)`` / ``gl.static_range(...)`` with the same start, stop and
        step (a negative constant step included: Triton's scf.for lowering handles it). The other
        tl.range options steer passes Gluon does not run (software pipelining, unrolling,
        flattening, warp specialization) or need tl.range itself (disable_licm), so a value other
        than the default is an error rather than silently dropped."""
        if not isinstance(st.target, ast.Name) or not isinstance(st.iter, ast.Call) or st.orelse:
            raise self.err("loops are `for i in range(...)` / tl.range / tl.static_range", st)
        canon = self.canonical(st.iter.func)
        fn = canon or (st.iter.func.id if isinstance(st.iter.func, ast.Name) else None)
        if fn not in ("range", "tl.range", "tl.static_range"):
            raise self.err("loops are `for i in range(...)` / tl.range / tl.static_range", st)
        call = st.iter
        options = {"num_stages": None, "loop_unroll_factor": None,
                   "disallow_acc_multi_buffer": False, "flatten": False, "warp_specialize": False,
                   "disable_licm": False}
        names = ("arg1", "arg2", "step") + (tuple(options) if fn == "tl.range" else ())
        if fn == "range" and call.keywords:
            raise self.err("builtin range takes no keyword arguments (Triton ignores them, so "
                           "`step=` would be dropped): use tl.range(start, stop, step=...) or a "
                           "positional step", st)
        if len(call.args) > (3 if fn == "range" else len(names)):
            raise self.err(f"{fn}() takes at most {3 if fn == 'range' else len(names)} positional "
                           f"arguments", st)
        given = dict(zip(names, call.args))
        for kw in call.keywords:
            if kw.arg not in names:
                raise self.err(f"{fn}() has no argument '{kw.arg or '**'}' (Triton 3.6: "
                               f"{fn}({', '.join(names)}))", kw.value)
            if kw.arg in given:
                raise self.err(f"{fn}(): argument '{kw.arg}' is given twice", kw.value)
            given[kw.arg] = kw.value
        given = {k: v for k, v in given.items()
                 if not (isinstance(v, ast.Constant) and v.value is None)}  # None: the default
        for opt, default in options.items():
            if opt in given:
                v = self.ex(given[opt])
                if v.kind != "const" or v.value is not default:
                    raise self.err(f"tl.range(..., {opt}={ast.unparse(given[opt])}) is not supported "
                                   f"by the lowering: Gluon runs none of Triton's loop pipelining, "
                                   f"unrolling, flattening or warp-specialization passes, and its "
                                   f"builtin range carries no loop options (the pipes are the "
                                   f"pipelining); leave it at its default ({default})", given[opt])
        if "arg1" not in given:
            raise self.err(f"{fn}() needs an upper bound", st)
        # in source order (positional, then keywords), as the arguments were evaluated before
        vals = {k: self.ex(a) for k, a in given.items() if k in ("arg1", "arg2", "step")}
        for k, v in vals.items():
            if v.kind not in ("const", "scalar") or (fn == "tl.static_range" and v.kind != "const"):
                what = {"arg1": "bound", "arg2": "bound", "step": "step"}[k]
                raise self.err(f"the {what} `{ast.unparse(given[k])}` of {fn}() must be "
                               + ("a compile-time integer" if fn == "tl.static_range"
                                  else "an integer scalar"), given[k])
        step = vals.get("step")
        if step is not None and step.kind == "const" and step.value == 0:
            raise self.err(f"{fn}() step must not be zero", given["step"])
        if "arg2" in vals:
            bounds = [vals["arg1"], vals["arg2"]]
        elif step is not None:
            bounds = [V("const", "0", value=0), vals["arg1"]]
        else:
            bounds = [vals["arg1"]]
        if step is not None:
            bounds.append(step)
        it = "gl.static_range" if fn == "tl.static_range" else "range"
        var = self.prefix + st.target.id
        self.drain("loop entry: no wgmma in flight across a loop boundary")
        pipelined = self.ctx.wgmma_pipeline and it == "range"
        if pipelined:
            key, carried = self._carried_at_head()
            self._emit_carried_regs(carried)
            entry_names = {v.text for v in self.env.values() if v.kind == "tensor"}
        self.emit(f"for {var} in {it}({', '.join(b.text for b in bounds)}):")
        self.env[st.target.id] = V("scalar", var)
        self.ind += 1
        self.loops.append({"var": var, "ind": self.ind, "z": None,
                           "static": it == "gl.static_range"})
        if pipelined:
            self._enter_carried(carried)
            self.body(st.body)
            self._pipelined_back_edge(key, carried, entry_names)
        else:
            self.body(st.body, drain="loop back-edge")
        self.loops.pop()
        self.ind -= 1
        if pipelined:
            self.drain("loop exit: wgmmas carried by the loop")

    # ---------------------------------------------------------------- pipelined wgmma (opt-in)
    # docs/lowering.md, "Pipelined wgmma (opt-in)". With @tle.jit(wgmma_pipeline=True), a `range`
    # loop's body may end with wgmmas in flight (the carried set T): the loop head then has T in
    # flight both on the back-edge and (as an over-approximation: wait_group(n) retires at least
    # what it must) on entry, where nothing is in flight. T is decided in translation pass 1 (where
    # waits emit nothing and create no names or layout variables, so the numbering is unchanged),
    # and pass 2 enters the body with T in flight and checks that its back-edge leaves exactly T.
    def _carried_at_head(self):
        self.loop_no = getattr(self, "loop_no", 0) + 1
        key = (self.partition, self.loop_no)
        carried = getattr(self.ctx, "carried", {}).get(key, []) if self.emitting else []
        return key, carried

    def _emit_carried_regs(self, carried) -> None:
        """A carried wgmma's register A operand is a dep of a wait in the next iteration (or after
        the loop): it is loop-carried, so it needs a value before the loop (never read)."""
        for e in carried:
            for n in e["names"]:  # the loop carries the async accumulator type (retyped by waits)
                self.emit(f"{n} = warpgroup_mma_init({n})  # in flight across the back-edge")
            for r, (shape, dtype, lay) in zip(e["regs"], e["reg_types"]):
                self.emit(f"{r} = gl.zeros([{', '.join(map(str, shape))}], gl.{dtype}, "
                          f"layout={self.L(lay)})  # carried register A operand")

    def _enter_carried(self, carried) -> None:
        for e in carried:
            self.seq += 1
            ent = dict(e, seq=self.seq, rings=set(e["rings"]))
            self.inflight.append(ent)
            for n in e["names"]:
                self.pending[n] = self.seq

    def _pipelined_back_edge(self, key, carried, entry_names: set) -> None:
        """Keep in flight the longest suffix of the in-flight wgmmas whose results are held only by
        loop-carried names (defined before the loop); wait for the rest (in-order retirement)."""
        def names(e):
            return [k for k, q in self.pending.items() if q == e["seq"]]

        keep = 0
        for e in reversed(self.inflight):
            if ("reg_types" not in e or not all(dt for _, dt, _ in e["reg_types"])
                    or not all(n in entry_names for n in names(e))):
                break
            keep += 1
        self._wait_through(len(self.inflight) - 1 - keep,
                           "loop back-edge: wait for all but the carried wgmmas")
        got = [{"names": sorted(names(e)), "rings": sorted(e["rings"], key=str), "regs": e["regs"],
                "reg_types": e["reg_types"]} for e in self.inflight]
        if not self.emitting:
            if not hasattr(self.ctx, "carried"):
                self.ctx.carried = {}
            self.ctx.carried[key] = got
            return
        want = [{"names": sorted(e["names"]), "rings": sorted(e["rings"], key=str), "regs": e["regs"],
                 "reg_types": e["reg_types"]} for e in carried]
        if got != want:
            raise TleError(f"lowering: internal: the wgmmas in flight at a loop back-edge ({got}) "
                           f"differ from the loop head's ({want})", Loc(self.ctx.path, 0, 0),
                           check="lowering")

    @staticmethod
    def _release_only(stmts: list) -> bool:
        """Statements that only hand pipe slots back: ``r.release(i)`` calls (``pass`` allowed)."""
        return all(isinstance(s, ast.Pass) or (
            isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "release")
            for s in stmts)

    def st_If(self, st: ast.If) -> None:
        c = self.ex(st.test)
        if c.kind == "tensor":
            raise self.err("an `if` condition must be a scalar", st)
        if (self.ctx.wgmma_pipeline and self.inflight
                and self._release_only(st.body) and self._release_only(st.orelse)):
            # Pipelined wgmma: a delayed release (`if ck > 0: r.release(ck - 1)`) keeps what is
            # in flight. Each branch waits only as far as its releases need (a `deps=[]` wait: no
            # name is rebound, so both paths leave the same types); afterwards everything counts
            # as still in flight, which over-approximates the path that waited.
            self.emit(f"if {c.text}:")
            self.ind += 1
            self._wait_in_place = True
            try:
                self.body(st.body)
                if st.orelse:
                    self.ind -= 1
                    self.emit("else:")
                    self.ind += 1
                    self.body(st.orelse)
            finally:
                self._wait_in_place = False
            self.ind -= 1
            return
        self.drain("no wgmma in flight across an if")
        self.emit(f"if {c.text}:")
        self.ind += 1
        self.body(st.body, drain="end of the if branch")
        self.ind -= 1
        if st.orelse:
            self.emit("else:")
            self.ind += 1
            self.body(st.orelse, drain="end of the else branch")
            self.ind -= 1
