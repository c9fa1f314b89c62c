"""What the frontend hands on for one ``@tle.jit`` kernel (:class:`KernelInfo`), and the reading
of a kernel's ``def`` line: its ``@tle.jit`` decorator and options, and its parameters."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from ..ir import kernel as K
from ..ir.nodes import Loc, Program
from ..language.gpu import DEFAULT_NUM_WARPS, Unevaluated, check_num_warps
from .context import Assumption, FieldSpec, PipeInfo
from .parsed import per_tree
from .scope import ModuleScope
from .values import Value


@dataclass
class PartitionInfo:
    """A partition as the lowering needs it: its function, and each parameter's kernel-level value
    (:mod:`tle_compiler.frontend.values`: KernelArg, PipeRef, WriterRef, ReaderRef, Aff, Sym,
    BufferRef, Data, ...). Affine values and params use the Program's param names. ``node``: the
    function's ``def`` when it is in the kernel's file (else None)."""

    name: str
    function: str
    node: Optional[ast.FunctionDef]
    bindings: dict[str, Value]
    warps: int
    regs: Optional[int]
    default: bool
    loc: Loc


@dataclass
class KernelInfo:
    """Everything the frontend read about one kernel. ``kir``: the kernel IR it was derived from
    (build.py; the Program is its protocol view, protocol.py); the lowering translates this same
    object, so what is verified and what is lowered come from one reading of the source."""

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
    kir: Optional[K.Kernel] = field(default=None, repr=False, compare=False)
    #: register budgets written as expressions of constexprs this reading left free: each worker
    #: partition's as a kernel IR expression, and the budget list's location (frontend/budgets.py
    #: evaluates them); None when the budgets are numbers or absent
    budgets: Optional[tuple] = field(default=None, repr=False, compare=False)

    @property
    def field_specs(self) -> dict[str, tuple[FieldSpec, ...]]:
        return {name: p.fields for name, p in self.pipes.items()}

    def partition(self, name: str) -> Optional[PartitionInfo]:
        return next((p for p in self.partitions if p.name == name), None)


def _first_line(fdef: ast.FunctionDef) -> int:
    """The line of the def statement's first decorator (of the ``def`` without one): Python
    evaluates the decorators there, with the names the statements above it bind."""
    return min([d.lineno for d in fdef.decorator_list] + [fdef.lineno])


def jit_call_binding(scope: ModuleScope, name: str) -> Optional[ast.Call]:
    """The call of ``tle.jit`` that module-level ``name`` is bound to in ``scope``
    (``myjit = tle.jit(num_warps=8)``), None when it is bound to anything else."""
    call = scope.calls.get(name)
    if call is not None and scope.at(call.lineno).module_path(call.func) == "tle_compiler.jit":
        return call
    return None


def jit_decorator(scope: ModuleScope, fdef: ast.FunctionDef) -> Optional[ast.expr]:
    """The ``@tle.jit`` / ``@tle.jit(...)`` decorator of a function (None when it has none),
    spelt through any name bound to the decorator or to a call of it (``@myjit`` with ``myjit =
    tle.jit(num_warps=8)``), each name read as the statements above the def bind it: Python
    evaluates the decorator there (a later ``myjit = print`` does not undo the kernel)."""
    at = scope.at(_first_line(fdef))
    for dec in fdef.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        # a name bound only below the def (`import tle_compiler as tle` after it) raises
        # NameError at the import, which the import checks report: read as the module binds it
        sc = scope if _unbound(at, target) else at
        if sc.module_path(target) == "tle_compiler.jit":
            return dec
        if isinstance(dec, ast.Name) and jit_call_binding(sc, dec.id) is not None:
            return dec
    return None


def _unbound(scope: ModuleScope, node: ast.expr) -> bool:
    """Whether the name at the root of ``node`` (``tle`` of ``tle.jit``) is bound by no
    statement of ``scope``."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and not (
        node.id in scope.other or node.id in scope.functions or node.id in scope.aliases
        or node.id in scope.constants or node.id in scope.dtypes or node.id in scope.rebound)


def jit_call(scope: ModuleScope, fdef: ast.FunctionDef, dec: ast.expr) -> ast.expr:
    """The expression whose options make the kernel: the decorator ``dec`` itself, or the call
    of tle.jit the decorator's name is bound to above the def (``myjit = tle.jit(num_warps=8)``,
    ``@myjit``: Python's kernel has the call's options)."""
    if isinstance(dec, ast.Name):
        call = jit_call_binding(scope.at(_first_line(fdef)), dec.id)
        if call is not None:
            return call
    return dec


def jit_options(scope: ModuleScope, dec: ast.expr, path: str,
                fdef: Optional[ast.FunctionDef] = None) -> tuple[int, dict]:
    """num_warps and the other literal options of ``@tle.jit(...)`` (or of the call of tle.jit a
    decorator name is bound to, given the def ``fdef``), their names read as Python reads them
    where the call is evaluated. One reading for the verifier, the lowering and a launch (which
    compiles with the num_warps read here). A ``**options`` argument is refused: which options it
    holds is not read."""
    from ..diagnostics import TleError

    if fdef is not None:
        dec = jit_call(scope, fdef, dec)
    num_warps, options = DEFAULT_NUM_WARPS, {}
    if isinstance(dec, ast.Call):
        at = scope.at(dec.lineno)
        for kw in dec.keywords:
            if kw.arg is None:
                raise TleError(f"`{ast.unparse(dec)}`: tle.jit's options are read where they "
                               f"are written as keywords (`tle.jit(num_warps=8)`); a `**` "
                               f"argument's options are not", Loc(path, kw.value.lineno,
                                                                  kw.value.col_offset + 1),
                               check="bad-jit")
            if kw.arg == "num_warps" and isinstance(kw.value, ast.Constant) \
                    and kw.value.value is None:
                continue  # tle.jit's default: 4 warps, as Python's jit(num_warps=None) gives
            if kw.arg == "num_warps":
                v = at.const_int(kw.value)
                num_warps = check_num_warps(
                    v if v is not None else Unevaluated(ast.unparse(kw.value)),
                    Loc(path, kw.value.lineno, kw.value.col_offset + 1))
            else:
                c = at.const_int(kw.value)
                if c is not None:
                    options[kw.arg] = c
                else:
                    try:
                        options[kw.arg] = ast.literal_eval(kw.value)
                    except ValueError:
                        options[kw.arg] = ast.unparse(kw.value)
    return num_warps, options


#: Annotations that make a kernel argument a float (Triton's dtypes by name, Python's float).
FLOAT_ANNOTATIONS = ("builtins.float", "float", "fp8e4nv", "fp8e5", "fp16", "bf16", "fp32", "fp64")


def is_float_param(scope: ModuleScope, fdef: ast.FunctionDef, p: ast.arg) -> bool:
    """Whether the source declares kernel argument ``p`` a float: annotated ``float``, a float
    dtype (``tl.float32``, ``tl.bfloat16``, ``"fp32"``, ...), or given a float default. Triton
    passes such an argument as a float, so a condition or a bound on it is no integer one."""
    ann = p.annotation
    if ann is not None:
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            if ann.value in FLOAT_ANNOTATIONS:
                return True
        elif isinstance(ann, ast.Name) and ann.id == "float" and scope.alias("float") is None:
            return True
        else:
            path = scope.module_path(ann) or ""
            leaf = path.rsplit(".", 1)[-1]
            if path.startswith(("tl.", "gl.")) and leaf.startswith(("float", "bfloat")):
                return True
    a = fdef.args
    positional = a.posonlyargs + a.args
    default = None
    if p in positional and positional.index(p) >= len(positional) - len(a.defaults):
        default = a.defaults[positional.index(p) - (len(positional) - len(a.defaults))]
    elif p in a.kwonlyargs:
        default = a.kw_defaults[a.kwonlyargs.index(p)]
    return isinstance(default, ast.Constant) and isinstance(default.value, float)


def kernel_params(scope: ModuleScope, fdef: ast.FunctionDef) -> list[tuple[ast.arg, bool]]:
    """The kernel's parameters in order, each with whether it is annotated ``tl.constexpr``."""
    a = fdef.args
    return [(p, p.annotation is not None and (
        scope.module_path(p.annotation) in ("tl.constexpr", "gl.constexpr")
        or (isinstance(p.annotation, ast.Constant) and p.annotation.value == "constexpr")))
        for p in a.posonlyargs + a.args + a.kwonlyargs]


#: Module-level statements whose bodies Python runs only on some paths (or once per item): a
#: ``def`` inside one is bound by what runs, not by the file's order.
_BLOCKS = (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.AsyncFor, ast.AsyncWith) + (
    (ast.Match,) if hasattr(ast, "Match") else ()) + (
    (ast.TryStar,) if hasattr(ast, "TryStar") else ())


def _calls_warp_specialize(scope: ModuleScope, fdef: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Call) and scope.is_tle(n.func, "gpu.warp_specialize")
               for n in ast.walk(fdef))


def helper_warp_specialize(scope: ModuleScope, fdef: ast.FunctionDef
                           ) -> Optional[tuple[ast.Call, list[str]]]:
    """A ``tle.gpu.warp_specialize`` call that a ``@tle.jit`` def whose own body has none reaches
    through the module-level functions it calls (directly or through other helpers), with the
    chain of helper names that leads to it; None when there is none. The frontend reads the
    partitions of the kernel body's warp_specialize only (a helper may declare the pipes), so such
    a kernel has no protocol to verify and cannot be launched. Without this check a file
    holding it and another kernel was verified as a whole (exit 0) with this kernel left out."""
    seen = {fdef.name}
    todo: list[tuple[ast.FunctionDef, list[str]]] = [(fdef, [])]
    while todo:
        fn, chain = todo.pop(0)
        for n in ast.walk(fn):
            if not isinstance(n, ast.Call):
                continue
            if chain and scope.is_tle(n.func, "gpu.warp_specialize"):
                return n, chain
            if isinstance(n.func, ast.Name) and n.func.id in scope.functions \
                    and n.func.id not in seen:
                seen.add(n.func.id)
                todo.append((scope.functions[n.func.id], chain + [n.func.id]))
    return None


def kernel_def_problem(scope: ModuleScope, fdef: ast.FunctionDef, dec: ast.expr,
                       bound_lines: dict[str, list[int]], kernel_lines: frozenset = frozenset()
                       ) -> Optional[tuple[int, int, str]]:
    """Why the module-level ``@tle.jit`` def ``fdef`` is not the kernel Python binds to its name
    when it imports the module, as (line, column, message) of the construct; None when it is.
    The frontend reads the def's body; Python binds the name to what the decorators return, and
    a later statement may bind the name again or delete it:

    - another decorator beside ``@tle.jit``: ``@tle.jit`` over ``@tle.jit`` raises when the module
      is imported (a TleKernel has no code object), a decorator above it may return anything (None,
      a wrapper), one below it hands tle.jit a wrapper whose body is not the def's;
    - ``@tle.jit(...)`` given a positional argument: ``jit(fn=8)`` raises at the import (no
      callable), ``jit(None)`` is another spelling the launch path does not read;
    - the name bound again (``del k``, ``k = None``, a second ``def k``, a class, an import, a loop
      variable) after the def: the module's ``k`` is no longer this kernel, so a verdict for it
      names a kernel no one can launch. When the name's last binding is another module-level
      ``@tle.jit def`` of it (``kernel_lines``: the lines of those defs), that def is what Python
      binds and this one is skipped (:func:`superseded`), not refused."""
    name = fdef.name
    for d in fdef.decorator_list:
        if d is not dec:
            return d.lineno, d.col_offset + 1, (
                f"kernel '{name}' has the decorator `@{ast.unparse(d)}` beside "
                f"`@{ast.unparse(dec)}`: Python binds '{name}' to what the decorators return "
                f"(`@tle.jit` over a @tle.jit kernel raises when the module is imported, any "
                f"other decorator may replace or wrap the function), not to the def that is "
                f"read; a kernel's only decorator is @tle.jit")
    call = jit_call(scope, fdef, dec)
    if isinstance(call, ast.Call) and call.args:
        via = "" if call is dec else f" (`{ast.unparse(call)}`)"
        return call.args[0].lineno, call.args[0].col_offset + 1, (
            f"`@{ast.unparse(dec)}`{via}: tle.jit takes its options by keyword "
            f"(`@tle.jit(num_warps=8)`); a positional argument is the function itself, so "
            f"Python raises when it imports the module")
    if superseded(fdef, bound_lines, kernel_lines):
        return None  # a later `@tle.jit def` of the name holds it: that one is read, this skipped
    later = [ln for ln in bound_lines.get(name, ()) if ln > fdef.lineno]
    if later:
        return later[0], 1, (
            f"kernel '{name}' (def at line {fdef.lineno}) is bound again or deleted here: once "
            f"the module is imported, '{name}' is not this kernel, so no launch runs what would "
            f"be verified (rename one of them, or drop the later binding)")
    dynamic = _dynamic_binding(scope.tree, name)
    if dynamic is not None:
        return dynamic.lineno, dynamic.col_offset + 1, (
            f"`{ast.unparse(dynamic)}` binds or deletes the module's '{name}' (kernel '{name}', "
            f"def at line {fdef.lineno}) by its name as a string: Python's '{name}' may not be "
            f"this kernel once it runs")
    if name in scope.rebound:
        return fdef.lineno, fdef.col_offset + 1, (
            f"kernel '{name}' is bound again elsewhere in the module (a `global {name}` in a "
            f"function, `:=`, a match pattern or globals()): Python's '{name}' may not be this "
            f"kernel")
    return None


@per_tree
def _dynamic_binding(tree: ast.Module, name: str) -> Optional[ast.AST]:
    """A call or subscript that may bind or delete module-level ``name`` through its string:
    ``setattr(mod, "k", ...)`` / ``delattr``, ``globals().pop("k")``, ``del globals()["k"]``,
    ``vars().update(k=...)``, anywhere in the file (a function may run it at import)."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in ("setattr", "delattr") and len(n.args) >= 2 \
                and isinstance(n.args[1], ast.Constant) and n.args[1].value == name:
            return n
        if isinstance(n, (ast.Call, ast.Subscript)):
            base = n.func.value if isinstance(n, ast.Call) and isinstance(
                n.func, ast.Attribute) else n.value if isinstance(n, ast.Subscript) else None
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) \
                    and base.func.id in ("globals", "vars"):
                strings = [c.value for c in ast.walk(n) if isinstance(c, ast.Constant)]
                words = [k.arg for k in n.keywords] if isinstance(n, ast.Call) else []
                if name in strings or name in words:
                    return n
    return None


def kernel_def_lines(scope: ModuleScope, tree: ast.Module) -> dict[str, frozenset]:
    """The lines of the module-level ``@tle.jit`` defs of each name."""
    out: dict[str, set] = {}
    for st in tree.body:
        if isinstance(st, ast.FunctionDef) and jit_decorator(scope, st) is not None:
            out.setdefault(st.name, set()).add(st.lineno)
    return {n: frozenset(v) for n, v in out.items()}


def superseded(fdef: ast.FunctionDef, bound_lines: dict[str, list[int]],
               kernel_lines: frozenset) -> bool:
    """Whether a later module-level ``@tle.jit def`` of the same name is the name's last binding:
    Python's name holds that kernel, and this def is never launched (read twice, both were
    reported under one name)."""
    later = [ln for ln in bound_lines.get(fdef.name, ()) if ln > fdef.lineno]
    return bool(later) and later[-1] in kernel_lines


def jit_call_kernel(scope: ModuleScope, tree: ast.Module
                    ) -> Optional[tuple[ast.expr, ast.FunctionDef]]:
    """A call of the decorator on a module-level function that calls warp_specialize
    (``bad = tle.jit(bad_fn)``, ``tle.jit(num_warps=8)(bad_fn)``), anywhere in the file, with that
    function; None when there is none. Python makes the result a kernel, but the frontend reads
    ``@tle.jit`` defs only, so the function was left out of the file's verdict (exit 0 beside a
    correct kernel) and its launch had no Pipe IR: such a call is refused rather than skipped.
    (A decorator that is a name bound to a call of tle.jit, ``myjit = tle.jit(num_warps=8)``
    then ``@myjit``, is read with the call's options: :func:`jit_decorator`, :func:`jit_call`.)"""
    return _jit_call_kernel(tree, scope)


@per_tree
def _jit_call_kernel(tree: ast.Module, scope: ModuleScope
                     ) -> Optional[tuple[ast.expr, ast.FunctionDef]]:
    """:func:`jit_call_kernel`, walked once per tree and scope
    (parsed.per_tree: each reading of the file asks again)."""
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call) or len(n.args) != 1 or not isinstance(n.args[0], ast.Name):
            continue
        target = n.func.func if isinstance(n.func, ast.Call) else n.func
        fn = scope.functions.get(n.args[0].id)
        if fn is None or jit_decorator(scope, fn) is not None \
                or not _calls_warp_specialize(scope, fn):
            continue
        # the decorator, or a name bound to a call of it (`myjit(bad_fn)`), as the module's last
        # bindings or those above the call name it (a call in a function runs later)
        for sc in (scope, scope.at(n.lineno)):
            if sc.module_path(target) == "tle_compiler.jit" or isinstance(target, ast.Name) \
                    and jit_call_binding(sc, target.id) is not None:
                return n, fn
    return None


def jit_reference(scope: ModuleScope, tree: ast.Module
                  ) -> Optional[tuple[ast.expr, ast.FunctionDef]]:
    """A use of ``tle.jit`` (or a name bound to it) in the file that may make a kernel of a
    function the reading cannot name, when a module-level function calls warp_specialize without
    being a ``@tle.jit`` kernel: that function's name read anywhere (handed to whatever may make
    it a kernel, `getattr(tle, 'jit')(bad_fn)`), a call of it on anything but a module-level
    function's name
    (``[tle.jit(f) for f in [bad_fn]]``, ``tle.jit(fn=bad_fn)``, ``tle.jit(*[bad_fn])``), or the
    decorator itself passed on (``map(tle.jit, [bad_fn])``); with that function. None when there
    is none. (A decorator, an alias ``J = tle.jit`` (its own uses are read the same way), a call
    of options ``tle.jit(num_warps=8)`` and a call on a function's name, which
    :func:`jit_call_kernel` reads, are no such use.)"""
    return _jit_reference(tree, scope)


@per_tree
def _jit_reference(tree: ast.Module, scope: ModuleScope
                   ) -> Optional[tuple[ast.expr, ast.FunctionDef]]:
    """:func:`jit_reference`, walked once per tree and scope
    (parsed.per_tree: each reading of the file asks again)."""
    loose_fns = {f.name: f for f in scope.functions.values() if jit_decorator(scope, f) is None
                 and _calls_warp_specialize(scope, f)}
    if not loose_fns:
        return None
    loose = next(iter(loose_fns.values()))
    decorators, parents = set(), {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            parents[id(c)] = n
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in n.decorator_list:
                decorators.add(id(d.func if isinstance(d, ast.Call) else d))
    # a kernel's own body is read as kernel code (a partition that calls warp_specialize, or a
    # helper that does, is refused there in its own words)
    in_kernels = {id(x) for f in scope.functions.values() if jit_decorator(scope, f) is not None
                  for x in ast.walk(f)}
    for n in ast.walk(tree):
        # the function itself handed on (`getattr(tle, 'jit')(bad_fn)`, `fns = [bad_fn]`):
        # whatever receives it may make it a kernel (a call of it is no hand-off: a kernel
        # calling it as a helper is read, and refused, as such)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in loose_fns \
                and id(n) not in in_kernels:
            parent = parents.get(id(n))
            if not (isinstance(parent, ast.Call) and parent.func is n):
                return n, loose_fns[n.id]
    for n in ast.walk(tree):
        if not isinstance(n, (ast.Name, ast.Attribute)) or id(n) in decorators \
                or not isinstance(n.ctx, ast.Load):
            continue
        sc = scope.at(n.lineno)
        if sc.module_path(n) != "tle_compiler.jit" and not (
                isinstance(n, ast.Name) and jit_call_binding(sc, n.id) is not None):
            continue
        parent = parents.get(id(n))
        if isinstance(parent, ast.Attribute) and parent.attr != "__call__" \
                or isinstance(parent, ast.Assign) and parent.value is n:
            continue
        if isinstance(parent, ast.Call) and parent.func is n:
            call = parent
            if not call.args and all(k.arg not in (None, "fn") for k in call.keywords):
                outer = parents.get(id(call))  # `tle.jit(num_warps=8)`: options only
                if not (isinstance(outer, ast.Call) and outer.func is call) \
                        or id(call) in decorators:
                    continue
                call = outer
            if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Name) \
                    and call.args[0].id in scope.functions:
                continue
            if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Lambda) \
                    and not any(isinstance(x, ast.Name) and x.id in scope.functions
                                or isinstance(x, ast.Call) and scope.is_tle(
                                    x.func, "gpu.warp_specialize")
                                for x in ast.walk(call.args[0])):
                continue  # a kernel of a lambda that reaches no module function
            return call, loose
        return n, loose
    return None


#: Decorators that make a def no TLE kernel: Triton's and Gluon's jit (a function calling
#: tle.gpu.warp_specialize under them is a Triton function, which Triton refuses to compile).
TRITON_JITS = frozenset({"triton.jit", "triton.language.jit", "tl.jit", "gl.jit",
                         "triton.experimental.gluon.jit"})


def foreign_decorated_kernel(scope: ModuleScope, tree: ast.Module
                             ) -> Optional[tuple[ast.expr, ast.FunctionDef]]:
    """A module-level def that calls tle.gpu.warp_specialize under a decorator that is neither
    tle.jit (however spelt, :func:`jit_decorator`) nor Triton's or Gluon's jit, with that
    decorator; None when there is none. Python binds the name to what the decorator returns,
    which may be a kernel (``myjit = functools.partial(tle.jit, num_warps=8)``, a function that
    calls ``tle.jit``): the frontend does not read it as one, so it would be left out of the
    file's verdict; such a def is refused rather than skipped."""
    return _foreign_decorated_kernel(tree, scope)


@per_tree
def _foreign_decorated_kernel(tree: ast.Module, scope: ModuleScope
                              ) -> Optional[tuple[ast.expr, ast.FunctionDef]]:
    """:func:`foreign_decorated_kernel`, walked once per tree and scope
    (parsed.per_tree: each reading of the file asks again)."""
    for st in tree.body:
        if not isinstance(st, ast.FunctionDef) or not st.decorator_list \
                or jit_decorator(scope, st) is not None or not _calls_warp_specialize(scope, st):
            continue
        at = scope.at(_first_line(st))
        for d in st.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            # a builtin that returns no kernel (`@print`, `@staticmethod`) is skipped, but not
            # a call of one: `@getattr(tle, 'jit')` returns tle.jit itself
            if at.module_path(target) in TRITON_JITS \
                    or not isinstance(d, ast.Call) and _builtin(at, target):
                continue
            return d, st
    return None


def _builtin(scope: ModuleScope, node: ast.expr) -> bool:
    """Whether ``node`` is (an attribute of) a name the module does not bind where the decorator
    is evaluated: a builtin such as ``print``, which returns no kernel, directly or through
    module-level names bound to it (``deco = print``), or a name bound only later (Python raises
    NameError at the import, which the import checks report)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    seen: set[str] = set()
    while isinstance(node, ast.Name) and node.id not in seen:
        seen.add(node.id)
        if node.id in scope.bound_to:
            node = scope.bound_to[node.id]
            continue
        return _unbound(scope, node)
    return False


def string_code_call(scope: ModuleScope, tree: ast.Module) -> Optional[ast.Call]:
    """A call of the builtin ``exec`` or ``eval`` that Python makes when it imports the module
    (in a module-level statement, not in a function body) and whose code may make a kernel
    (:func:`_may_make_kernel`); None when there is none. The code it runs is a string tle-dump
    does not read: a ``@tle.jit`` def in it is a kernel Python makes that would be left out of
    the file's verdict (and no launch could read its source)."""
    for st in tree.body:
        todo: list[ast.AST] = [st]
        while todo:
            n = todo.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                # what runs at the import: decorators and defaults, not the body
                todo.extend(getattr(n, "decorator_list", []))
                todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
                continue
            if isinstance(n, ast.ClassDef):
                todo.extend(n.decorator_list + n.bases + [k.value for k in n.keywords])
                todo.extend(n.body)
                continue
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                    and n.func.id in ("exec", "eval") and _unbound(scope, n.func) \
                    and _may_make_kernel(n):
                return n
            todo.extend(ast.iter_child_nodes(n))
    return None


def _may_make_kernel(call: ast.Call) -> bool:
    """Whether the code an ``exec`` / ``eval`` runs may make a kernel: code that is no string
    constant (tle-dump cannot tell), or a constant that defines a function or names ``jit``
    (``exec('B = 1')`` makes none)."""
    code = call.args[0] if call.args else None
    if not (isinstance(code, ast.Constant) and isinstance(code.value, str)):
        return True
    try:
        tree = ast.parse(code.value, mode="exec" if call.func.id == "exec" else "eval")
    except SyntaxError:
        return False  # Python raises it at the import: no kernel is made
    return any(isinstance(x, (ast.FunctionDef, ast.AsyncFunctionDef))
               or isinstance(x, ast.Attribute) and x.attr == "jit"
               or isinstance(x, ast.Name) and x.id == "jit" for x in ast.walk(tree))


def nested_kernel(scope: ModuleScope, tree: ast.Module) -> Optional[tuple[ast.FunctionDef, str]]:
    """A ``@tle.jit`` def that calls warp_specialize inside module-level control flow (``if``,
    ``try``, ``with``, a loop), with the statement's keyword; None when there is none. Whether
    Python defines it depends on what runs (``if False:``, an ``except`` branch, a loop's
    iterations), which the frontend does not decide, so such a kernel is refused rather than left
    out (a file whose only kernel is there was "no kernel", unusable input). So is one in the
    body of a module-level ``class`` or function (a kernel factory; keyword "class" or "def"):
    Python makes it a kernel (``Kernels.k``, ``k = make()``) that the frontend, reading
    module-level kernels only, left out of the file's verdict (exit 0 beside a correct kernel)."""
    return _nested_kernel(tree, scope)


@per_tree
def _nested_kernel(tree: ast.Module, scope: ModuleScope
                   ) -> Optional[tuple[ast.FunctionDef, str]]:
    """:func:`nested_kernel`, walked once per tree and scope
    (parsed.per_tree: each reading of the file asks again)."""
    for st in tree.body:
        if not isinstance(st, _BLOCKS + (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in ast.walk(st):
            if n is not st and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and jit_decorator(scope, n) is not None and _calls_warp_specialize(scope, n):
                kw = {ast.AsyncFor: "async for", ast.AsyncWith: "async with",
                      ast.ClassDef: "class", ast.FunctionDef: "def",
                      ast.AsyncFunctionDef: "async def"}.get(
                    type(st), type(st).__name__.lower().replace("trystar", "try"))
                return n, kw
    return None
