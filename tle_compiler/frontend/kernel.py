"""One ``@tle.jit`` kernel → its Program: the kernel body (params, pipes, handles, buffers), the
``warp_specialize`` call (partitions, warps, registers, argument binding), then each partition's
body, and finally the params' names and the pipes' ``mma`` fields."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Optional

from ..diagnostics import TleError
from ..ir.expr import Affine
from ..ir.nodes import Loc, Partition, Pipe, Program
from ..jit import DEFAULT_NUM_WARPS, check_num_warps
from ..language.gpu import Unevaluated, validate_warp_specialize
from ..language.pipe import validate_pipe
from .context import ASSUME_WHERE, Assumption, FieldSpec, Frame, KernelCtx, PipeInfo
from .exprs import src
from .params import finalize, is_placeholder
from .scope import ModuleScope
from .stmts import StmtWalker
from .values import (HANDLES, Aff, BufferRef, Data, KernelArg, PipeRef, Poison, SlotV, Sym,
                     TupleV, Value, WaitV)

WS_ARGS = ("functions_and_args", "worker_num_warps", "worker_num_regs")


@dataclass
class PartitionInfo:
    """A partition as the lowering needs it: its function, and each parameter's kernel-level value
    (:mod:`tle_compiler.frontend.values`: KernelArg, PipeRef, WriterRef, ReaderRef, Aff, Sym,
    BufferRef, Data, ...). Affine values and params use the Program's param names."""

    name: str
    function: str
    node: ast.FunctionDef
    bindings: dict[str, Value]
    warps: int
    regs: Optional[int]
    default: bool
    loc: Loc


@dataclass
class KernelInfo:
    """Everything the frontend read about one kernel."""

    name: str
    program: Program
    node: ast.FunctionDef
    path: str
    num_warps: int
    options: dict
    args: tuple[str, ...]
    constexprs: tuple[str, ...]
    pipes: dict[str, PipeInfo]
    partitions: tuple[PartitionInfo, ...]
    buffers: dict[str, object]
    constants: dict[str, int]
    values: dict[str, Value] = field(default_factory=dict)  # kernel-level names at warp_specialize
    # Program param → the kernel argument it is (params of kernel-level values are not listed)
    param_args: dict[str, str] = field(default_factory=dict)
    # the tle.assume comparisons of the kernel body, in order (a launch checks those of arguments)
    assumptions: tuple[Assumption, ...] = ()

    @property
    def field_specs(self) -> dict[str, tuple[FieldSpec, ...]]:
        return {name: p.fields for name, p in self.pipes.items()}

    def partition(self, name: str) -> Optional[PartitionInfo]:
        return next((p for p in self.partitions if p.name == name), None)


class KernelBodyWalker(StmtWalker):
    """The kernel body: names assigned non-affine values become opaque params."""

    def bind_name(self, name: str, value: Value, node: ast.AST) -> None:
        if isinstance(value, Data):
            if value.key is not None:
                ph = self.k.reserve_pure(value.key, name, self.k.loc(node))
                runtime = value.runtime
            else:  # data (a load, ...): a runtime value
                ph = self.k.params.reserve(("var", name, getattr(node, "lineno", 0)), name,
                                           self.k.loc(node))
                runtime = True
            value = Sym(name, ph, value.text, runtime)
        elif isinstance(value, BufferRef) and value.var is None:
            value = replace(value, var=name)
            if self.depth == 0:
                self.k.buffers[name] = value.buf
        self.env[name] = value

    def _s_Expr(self, s: ast.Expr) -> None:
        call = s.value
        if isinstance(call, ast.Call) and self.module_path_of(call.func) == "tle_compiler.assume":
            if self.depth:
                raise self.err(ASSUME_WHERE, call, check="bad-assume")
            self.assume(call)
            return
        super()._s_Expr(s)

    def assume(self, call: ast.Call) -> None:
        """``tle.assume(COND)``: narrow the domains of the params COND bounds."""
        text = src(call)
        if len(call.args) != 1 or call.keywords:
            raise self.err(f"`{text}`: tle.assume takes one condition, e.g. tle.assume(N >= 0)",
                           call, check="bad-assume")
        conjuncts: list[ast.expr] = []

        def flatten(e: ast.expr) -> None:
            if isinstance(e, ast.BoolOp) and isinstance(e.op, ast.And):
                for v in e.values:
                    flatten(v)
            else:
                conjuncts.append(e)

        flatten(call.args[0])
        bounds: dict[str, list[Optional[int]]] = {}  # placeholder -> [lo, hi] of this statement
        for c in conjuncts:
            if not isinstance(c, ast.Compare):
                raise self.err(f"`{text}`: `{src(c)}` is not a comparison of a param with integer "
                               f"constants (e.g. N >= 0, 1 <= N <= 64, N < 100; `and` of such)",
                               c, check="bad-assume")
            operands = [c.left, *c.comparators]
            kinds = [self.assume_operand(o, text) for o in operands]
            for i, op in enumerate(c.ops):
                (lk, lx), (rk, rx) = kinds[i], kinds[i + 1]
                sym = _ASSUME_OPS.get(type(op))
                piece = f"{src(operands[i])} {_CMP_TEXT.get(type(op), '?')} {src(operands[i + 1])}"
                if sym is None:
                    raise self.err(f"`{text}`: `{piece}` does not bound a param (use <, <=, >, >= "
                                   f"or ==)", c, check="bad-assume")
                if lk == "const" and rk == "const":
                    if not _holds(lx, sym, rx):
                        raise self.err(f"`{text}` does not hold: `{piece}` is false for the values "
                                       f"the kernel is read with ({lx} {sym} {rx})", c,
                                       check="bad-assume")
                    continue
                if lk == "param" and rk == "param":
                    raise self.err(f"`{text}`: `{piece}` compares two params; tle.assume bounds "
                                   f"one param by integer constants", c, check="bad-assume")
                if lk == "const":  # c OP N  ==  N OP' c
                    (lk, lx), (rk, rx), sym = (rk, rx), (lk, lx), _FLIP[sym]
                lo, hi = {">=": (rx, None), ">": (rx + 1, None), "<=": (None, rx),
                          "<": (None, rx - 1), "==": (rx, rx)}[sym]
                cur = bounds.setdefault(lx, [None, None])
                if lo is not None:
                    cur[0] = lo if cur[0] is None else max(cur[0], lo)
                if hi is not None:
                    cur[1] = hi if cur[1] is None else min(cur[1], hi)
        loc = self.k.loc(call)
        for ph, (lo, hi) in bounds.items():
            new_lo, new_hi = self.k.params.narrow(ph, lo, hi)
            slot = self.k.params.slot(ph)
            if new_lo is not None and new_hi is not None and new_lo > new_hi:
                raise self.err(f"`{text}` leaves no value of {slot.hint}: its domain would be "
                               f"[{new_lo}, {new_hi}]", call, check="bad-assume")
            self.k.assumptions.append((ph, Assumption(slot.hint, slot.arg, lo, hi, text, loc)))

    def assume_operand(self, node: ast.expr, text: str) -> tuple[str, object]:
        """("const", value) or ("param", placeholder) of an operand of a tle.assume comparison."""
        v = self.eval(node)
        c = self.const_int(v)
        if c is not None:
            return "const", c
        a = self.as_aff(v) if isinstance(v, (Aff, KernelArg, Sym, Data)) else None
        if (a is not None and a.const == 0 and len(a.terms) == 1 and a.terms[0][1] == 1
                and is_placeholder(a.terms[0][0])):
            return "param", a.terms[0][0]
        raise self.err(f"`{text}`: `{src(node)}` is neither a param (a kernel argument or a "
                       f"kernel-level integer computed from them) nor an integer constant", node,
                       check="bad-assume")

    def merge_value(self, name: str, a: Optional[Value], b: Optional[Value], reason: str,
                    slot_reason: Optional[str] = None) -> Optional[Value]:
        # A kernel-level value is one runtime value shared by every partition, whatever path
        # computed it: an opaque param rather than poison.
        merged = super().merge_value(name, a, b, reason, slot_reason)
        if (isinstance(merged, (Poison, Data)) and name != "<return>"
                and not any(isinstance(x, HANDLES + (BufferRef, SlotV, WaitV)) for x in (a, b))):
            node = getattr(self, "merge_node", None)
            loc = self.k.loc(node) if node is not None else Loc(self.k.path, 0)
            ph = self.k.params.reserve(("var", name, reason), name, loc)
            return Sym(name, ph, name)
        return merged

    def declare_pipe(self, node: ast.Call, hint: Optional[str]) -> Value:
        k = self.k
        if self.depth:
            raise self.err("tle.pipe must be declared at the top level of the kernel body (not "
                           "inside a loop, an if or a with)", node, check="bad-pipe")
        if node.args:
            raise self.err("tle.pipe takes keyword arguments only: tle.pipe(capacity=C, ..., "
                           "field=tle.gpu.alloc(...))", node.args[0], check="bad-pipe")
        opts: dict[str, object] = {"scope": "cta", "name": hint, "readers": (), "one_shot": False}
        arg_locs: dict[str, Loc] = {}
        fields: dict[str, object] = {}
        refs: dict[str, tuple[BufferRef, ast.keyword]] = {}
        capacity: object = None
        for kw in node.keywords:
            if kw.arg is None:
                raise self.err("tle.pipe: write each field as name=tle.gpu.alloc(...), not "
                               "**fields", kw.value, check="bad-pipe")
            arg_locs[kw.arg] = k.loc(kw)
            v = self.eval(kw.value)
            if kw.arg in ("capacity", "scope", "name", "readers", "one_shot"):
                lit = self.literal(v, kw.value)
                if kw.arg == "capacity":
                    capacity = lit
                elif kw.arg == "name" and lit is None:
                    pass  # name=None: the variable's name
                else:
                    opts[kw.arg] = lit
            else:
                fields[kw.arg] = v.buf if isinstance(v, BufferRef) else Unevaluated(src(kw.value))
                if isinstance(v, BufferRef):
                    refs[kw.arg] = (v, kw)
        if capacity is None:
            raise self.err("tle.pipe: capacity= is required", node, check="bad-pipe")
        if opts["name"] is None:
            raise self.err("tle.pipe: name= is required when the pipe is not assigned to a "
                           "variable", node, check="bad-pipe")
        if fields:
            arg_locs.setdefault("fields", k.loc(node))
        decl = validate_pipe(capacity=capacity, scope=opts["scope"], name=opts["name"],
                             readers=opts["readers"], one_shot=opts["one_shot"], fields=fields,
                             loc=k.loc(node), arg_locs=arg_locs)
        if decl.name in k.pipes:
            first = k.pipes[decl.name].loc.line
            raise self.err(f"pipe '{decl.name}' is declared twice (first at line {first})", node,
                           check="bad-pipe")
        for f, (ref, kw) in refs.items():
            # one buffer behind two fields: two rings in the same shared memory, which no barrier
            # of either pipe orders
            if ref.site is None:
                continue
            prev = k.field_buffers.get(ref.site)
            if prev is not None:
                what = f"`{src(kw.value)}` (the tle.gpu.alloc at line {ref.site.line})"
                raise self.err(f"{what} is already field '{prev[1]}' of pipe '{prev[0]}' (line "
                               f"{prev[2].line}): each pipe field needs its own buffer", kw.value,
                               check="aliased-buffer")
            k.field_buffers[ref.site] = (decl.name, f, k.loc(kw))
        specs = tuple(FieldSpec.of(f, buf, arg_locs.get(f, k.loc(node))) for f, buf in decl.fields)
        k.pipes[decl.name] = PipeInfo(decl, specs, hint, node)
        return PipeRef(decl)


_ASSUME_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "=="}
_CMP_TEXT = {**_ASSUME_OPS, ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
             ast.NotIn: "not in"}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}


def _holds(a: int, op: str, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b}[op]


def check_free_buffers(k: KernelCtx) -> None:
    """A free shared buffer (a tle.gpu.alloc of the kernel that is no pipe field) touched by two
    partitions, one of them writing, is a data race: no barrier orders the two. An error at the
    later access, naming both."""
    what = {True: "writes", False: "reads"}
    for buf, uses in k.buffer_uses.items():
        for i, (p2, w2, loc2, op2) in enumerate(uses):
            for p1, w1, loc1, op1 in uses[:i]:
                if p1 != p2 and (w1 or w2):
                    raise TleError(
                        f"shared buffer `{buf}` is used by two partitions, one of them writing: "
                        f"'{p1}' {what[w1]} it ({op1} at line {loc1.line}) and '{p2}' "
                        f"{what[w2]} it ({op2} at line {loc2.line}); no barrier orders them (a "
                        f"data race outside any pipe): hand the data over through a pipe", loc2,
                        check="buffer-race")


def _is_ws_call(scope: ModuleScope, node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and scope.is_tle(node.func, "gpu.warp_specialize")


def _walk_no_defs(nodes: list[ast.stmt]):
    stack = list(reversed(nodes))
    while stack:
        n = stack.pop()
        yield n
        children = [c for c in ast.iter_child_nodes(n)
                    if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                          ast.ClassDef))]
        stack.extend(reversed(children))


def jit_options(scope: ModuleScope, dec: ast.expr, path: str) -> tuple[int, dict]:
    """num_warps and the other literal options of ``@tle.jit(...)``."""
    num_warps, options = DEFAULT_NUM_WARPS, {}
    if isinstance(dec, ast.Call):
        for kw in dec.keywords:
            if kw.arg == "num_warps":
                v = scope.const_int(kw.value)
                num_warps = check_num_warps(v if v is not None else Unevaluated(src(kw.value)),
                                            Loc(path, kw.value.lineno, kw.value.col_offset + 1))
            elif kw.arg is not None:
                c = scope.const_int(kw.value)
                if c is not None:
                    options[kw.arg] = c
                else:
                    try:
                        options[kw.arg] = ast.literal_eval(kw.value)
                    except ValueError:
                        options[kw.arg] = src(kw.value)
    return num_warps, options


def kernel_params(scope: ModuleScope, fdef: ast.FunctionDef) -> list[tuple[ast.arg, bool]]:
    """The kernel's parameters in order, each with whether it is annotated ``tl.constexpr``."""
    a = fdef.args
    return [(p, p.annotation is not None and (
        scope.module_path(p.annotation) in ("tl.constexpr", "gl.constexpr")
        or (isinstance(p.annotation, ast.Constant) and p.annotation.value == "constexpr")))
        for p in a.posonlyargs + a.args + a.kwonlyargs]


def read_kernel(scope: ModuleScope, fdef: ast.FunctionDef, dec: ast.expr,
                bind: Optional[dict] = None) -> Optional[KernelInfo]:
    """The kernel's KernelInfo, or None when its body does not call warp_specialize."""
    path = scope.path
    calls = [n for n in _walk_no_defs(fdef.body) if _is_ws_call(scope, n)]
    if not calls:
        return None
    k = KernelCtx(scope, fdef.name)
    if len(calls) > 1:
        raise k.error("a kernel calls tle.gpu.warp_specialize once; this is a second call",
                      calls[1], check="bad-warp-specialize")
    ws = calls[0]
    ws_stmt = next((s for s in fdef.body if isinstance(s, ast.Expr) and s.value is ws), None)
    if ws_stmt is None:
        raise k.error("tle.gpu.warp_specialize must be a statement at the top level of the kernel "
                      "body (not nested in a loop, an if, or an expression)", ws,
                      check="bad-warp-specialize")
    num_warps, options = jit_options(scope, dec, path)

    # Kernel arguments: every one may become a param (constexpr or not).
    env: dict[str, Value] = {}
    args, constexprs = [], []
    for p, is_cx in kernel_params(scope, fdef):
        args.append(p.arg)
        value = (bind or {}).get(p.arg) if is_cx else None
        if isinstance(value, int) and not isinstance(value, bool):
            # a constexpr bound to its value (a specialisation, see read_kernels): a constant,
            # so `it * NP + p` with NP derived from it stays affine
            env[p.arg] = Aff(Affine.of(value))
            constexprs.append(p.arg)
            continue
        ph = k.params.reserve(("arg", p.arg), p.arg, k.loc(p), arg=p.arg)
        env[p.arg] = KernelArg(p.arg, ph, is_cx)
        if is_cx:
            constexprs.append(p.arg)
    body = KernelBodyWalker(k, "kernel", Frame(fdef.name, env))
    for s in fdef.body:
        if s is ws_stmt:
            break
        body.exec_stmt(s)
    for s in fdef.body[fdef.body.index(ws_stmt) + 1:]:
        for n in _walk_no_defs([s]):
            if isinstance(n, ast.Call) and scope.module_path(n.func) == "tle_compiler.assume":
                raise k.error(ASSUME_WHERE, n, check="bad-assume")

    # warp_specialize(functions_and_args, worker_num_warps, worker_num_regs)
    given: dict[str, ast.expr] = dict(zip(WS_ARGS, ws.args))
    for kw in ws.keywords:
        if kw.arg not in WS_ARGS:
            raise k.error(f"warp_specialize has no argument '{kw.arg}' ({', '.join(WS_ARGS)})",
                          kw.value, check="bad-warp-specialize")
        given[kw.arg] = kw.value
    if len(ws.args) > 3:
        raise k.error("warp_specialize(functions_and_args, worker_num_warps, worker_num_regs): "
                      "too many arguments", ws, check="bad-warp-specialize")
    fa = given.get("functions_and_args")
    if not isinstance(fa, (ast.List, ast.Tuple)) or not fa.elts:
        raise k.error("warp_specialize: the first argument must be a list literal of "
                      "(function, (args...)) pairs, the default partition first",
                      fa if fa is not None else ws, check="bad-warp-specialize")
    entries: list[tuple[ast.expr, ast.FunctionDef, list[Value]]] = []
    seen: dict[str, int] = {}
    for elt in fa.elts:
        if not isinstance(elt, (ast.Tuple, ast.List)) or len(elt.elts) != 2:
            raise k.error(f"warp_specialize: each entry is a pair (function, (args...)), got "
                          f"`{src(elt)}`", elt, check="bad-warp-specialize")
        fn_node, args_node = elt.elts
        if (not isinstance(fn_node, ast.Name) or fn_node.id in body.env
                or fn_node.id not in scope.functions):
            raise k.error(f"partition function `{src(fn_node)}` is not a module-level function of "
                          f"this file (partition functions must be defined at module level in the "
                          f"kernel's file)", fn_node, check="unknown-partition")
        if fn_node.id in seen:
            raise k.error(f"partition function '{fn_node.id}' is used twice in warp_specialize "
                          f"(first at line {seen[fn_node.id]}): each partition needs its own "
                          f"function, partition names are function names", fn_node,
                          check="duplicate-partition")
        seen[fn_node.id] = fn_node.lineno
        argv = body.eval(args_node)
        if not isinstance(argv, TupleV):
            raise k.error(f"warp_specialize: the arguments of '{fn_node.id}' must be a tuple, e.g. "
                          f"({fn_node.id}, (kv, NK)), got `{src(args_node)}`", args_node,
                          check="bad-warp-specialize")
        entries.append((elt, scope.functions[fn_node.id], list(argv.items)))

    def int_list(node: Optional[ast.expr]) -> object:
        if node is None:
            return None
        if not isinstance(node, (ast.List, ast.Tuple)):
            return Unevaluated(src(node))
        out: list[object] = []
        for e in node.elts:
            c = body.const_int(body.eval(e))
            out.append(c if c is not None else Unevaluated(src(e)))
        return out

    warps_node, regs_node = given.get("worker_num_warps"), given.get("worker_num_regs")
    if warps_node is None:
        raise k.error("warp_specialize: worker_num_warps (a list, one warp count per worker "
                      "partition) is required", ws, check="bad-warp-specialize")
    arg_locs = {"warps": k.loc(warps_node)}
    if regs_node is not None:
        arg_locs["regs"] = k.loc(regs_node)
    warps, regs = validate_warp_specialize(len(entries), int_list(warps_node), int_list(regs_node),
                                           k.loc(ws), arg_locs)

    # Partitions.
    partitions: list[Partition] = []
    infos: list[PartitionInfo] = []
    for i, (elt, pdef, argv) in enumerate(entries):
        default = i == 0
        pw = StmtWalker(k, "partition", Frame("<kernel>"))
        pw.partition = pdef.name
        bindings = pw.bind_params(pdef, argv, {}, elt, f"partition '{pdef.name}'")
        stmts_before = len(pw.out)
        pw.run_function(pdef, dict(bindings), inlined=False)
        assert stmts_before == 0
        warps_i = num_warps if default else warps[i - 1]
        regs_i = None if default else regs[i - 1]
        ploc = Loc(path, pdef.lineno, pdef.col_offset + 1)
        partitions.append(Partition(pdef.name, tuple(pw.out), warps_i, regs_i, default, ploc))
        infos.append(PartitionInfo(pdef.name, pdef.name, pdef, bindings, warps_i, regs_i, default,
                                   ploc))

    check_free_buffers(k)
    params, partitions, names = finalize(k.params, partitions)
    env_names = {ph: Affine.of(n) for ph, n in names.items()}

    def rename(v: Value) -> Value:
        if isinstance(v, Aff):
            return Aff(v.expr.substitute(env_names))
        if isinstance(v, (KernelArg, Sym)):
            return replace(v, param=names.get(v.param, v.param))
        if isinstance(v, TupleV):
            return TupleV(tuple(rename(x) for x in v.items))
        return v

    for info in infos:
        info.bindings = {p: rename(v) for p, v in info.bindings.items()}
    # which Program params are kernel arguments (a launch checks their assumptions)
    by_name = {names[ph]: slot for ph, slot in k.params.by_placeholder.items()}
    param_args = {p.name: by_name[p.name].arg for p in params if by_name[p.name].arg}
    assumptions = tuple(replace(a, param=names.get(ph, a.param)) for ph, a in k.assumptions)
    pipes = tuple(
        Pipe(p.decl.name, p.decl.capacity, p.decl.field_names, p.decl.readers, p.decl.one_shot,
             tuple(f for f in p.decl.field_names if f in k.mma.get(p.decl.name, ())), p.decl.loc)
        for p in k.pipes.values())
    program = Program(fdef.name, params, pipes, tuple(partitions),
                      Loc(path, fdef.lineno, fdef.col_offset + 1))
    return KernelInfo(fdef.name, program, fdef, path, num_warps, options, tuple(args),
                      tuple(constexprs), dict(k.pipes), tuple(infos), dict(k.buffers),
                      dict(scope.constants), {n: rename(v) for n, v in body.env.items()},
                      param_args, assumptions)

