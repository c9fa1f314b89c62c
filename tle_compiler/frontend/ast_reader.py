"""Read a Python file's ``@tle.jit`` kernels into Pipe IR, from the AST (the kernel never runs).

Public entry points (re-exported by :mod:`tle_compiler.frontend`):

- :func:`read_file` / :func:`read_source` → :class:`~tle_compiler.ir.nodes.Module`: one Program per
  module-level ``@tle.jit`` function (``@tle.jit``, ``@tle.jit(...)``, ``@jit``/``@jit(...)`` with
  ``jit`` imported from tle_compiler) whose body calls ``tle.gpu.warp_specialize``;
- :func:`read_kernels` → list of :class:`KernelInfo`, with what the lowering needs besides the
  Program: field specs, partition functions and their parameter bindings.

Every user mistake is a :class:`~tle_compiler.diagnostics.TleError` at the offending line.
"""

from __future__ import annotations

import ast
import os
from typing import Optional, Union

from ..diagnostics import TleError
from ..ir.nodes import Loc, Module
from .context import FieldSpec, PipeInfo
from .kernel import KernelInfo, PartitionInfo, kernel_params, read_kernel
from .scope import ModuleScope

PathLike = Union[str, "os.PathLike[str]"]


def _jit_decorator(scope: ModuleScope, fdef: ast.FunctionDef) -> Optional[ast.expr]:
    for dec in fdef.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if scope.module_path(target) == "tle_compiler.jit":
            return dec
    return None


def parse(text: str, path: str) -> ast.Module:
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as e:
        raise TleError(f"syntax error: {e.msg}", Loc(path, e.lineno or 0, e.offset or 0),
                       check="syntax") from None


def kernels_of_source(text: str, path: str, name: Optional[str] = None,
                      bind: Optional[dict] = None) -> list[KernelInfo]:
    tree = parse(text, path)
    scope = ModuleScope(tree, path)
    out: list[KernelInfo] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and (name is None or stmt.name == name):
            dec = _jit_decorator(scope, stmt)
            if dec is not None:
                info = read_kernel(scope, stmt, dec, bind)
                if info is not None:
                    out.append(info)
    return out


# Reading errors that binding the kernel's constexprs to their values can remove (an index, a loop
# bound or a condition that is affine only once e.g. NP = TOPK // 128 is a number).
SPECIALIZABLE = frozenset({"non-affine", "non-affine-loop", "non-affine-if"})


def kernel_signature(path: PathLike, name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(arguments, constexpr arguments) of the @tle.jit function ``name`` of a file, from its
    ``def`` alone: what a launch needs before the kernel can be read specialised."""
    p = os.fspath(path)
    tree = parse(_read_text(p), p)
    scope = ModuleScope(tree, p)
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name and _jit_decorator(scope, stmt):
            params = kernel_params(scope, stmt)
            return tuple(p.arg for p, _ in params), tuple(p.arg for p, cx in params if cx)
    raise TleError(f"{p}: no @tle.jit function named '{name}'", Loc(p, 0), check="no-kernel")


def _read_text(path: PathLike) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise TleError(f"cannot read {os.fspath(path)}: {e.strerror or e}",
                       Loc(os.fspath(path), 0), check="io") from None


def read_source(text: str, path: str = "<input>") -> Module:
    """The Pipe IR of the kernels in ``text`` (``path`` names it in locations)."""
    return Module(tuple(k.program for k in kernels_of_source(text, path)), path)


def read_file(path: PathLike) -> Module:
    """The Pipe IR of the kernels of a Python file."""
    p = os.fspath(path)
    return read_source(_read_text(p), p)


def read_kernels(path: PathLike, text: Optional[str] = None, name: Optional[str] = None,
                 bind: Optional[dict] = None) -> list[KernelInfo]:
    """The kernels of a Python file (or of ``text``, located at ``path``) with everything the
    frontend learned about them; ``name`` reads only the kernel(s) of that name. ``bind``: values
    of integer constexpr arguments to read the kernel *specialised* to (they become constants,
    not params; the protocol is then verified for those values only)."""
    p = os.fspath(path)
    return kernels_of_source(_read_text(p) if text is None else text, p, name, bind)


__all__ = ["read_file", "read_source", "read_kernels", "kernel_signature", "SPECIALIZABLE",
           "KernelInfo", "PartitionInfo", "PipeInfo",
           "FieldSpec"]
