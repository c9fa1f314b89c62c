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

    @property
    def field_specs(self) -> dict[str, tuple[FieldSpec, ...]]:
        return {name: p.fields for name, p in self.pipes.items()}

    def partition(self, name: str) -> Optional[PartitionInfo]:
        return next((p for p in self.partitions if p.name == name), None)


def jit_decorator(scope: ModuleScope, fdef: ast.FunctionDef) -> Optional[ast.expr]:
    """The ``@tle.jit`` / ``@tle.jit(...)`` decorator of a function (None when it has none)."""
    for dec in fdef.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if scope.module_path(target) == "tle_compiler.jit":
            return dec
    return None


def jit_options(scope: ModuleScope, dec: ast.expr, path: str) -> tuple[int, dict]:
    """num_warps and the other literal options of ``@tle.jit(...)``."""
    num_warps, options = DEFAULT_NUM_WARPS, {}
    if isinstance(dec, ast.Call):
        for kw in dec.keywords:
            if kw.arg == "num_warps":
                v = scope.const_int(kw.value)
                num_warps = check_num_warps(
                    v if v is not None else Unevaluated(ast.unparse(kw.value)),
                    Loc(path, kw.value.lineno, kw.value.col_offset + 1))
            elif kw.arg is not None:
                c = scope.const_int(kw.value)
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
