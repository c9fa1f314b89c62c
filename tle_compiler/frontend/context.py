"""State shared while one kernel is read: its file scope, params, pipes, mma uses; and the frame of
one function being interpreted (the kernel body, a partition, or an inlined helper)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from ..diagnostics import TleError
from ..ir.nodes import Loc
from ..language.gpu import SharedBuffer
from ..language.pipe import PipeDecl
from .params import ParamTable
from .scope import ModuleScope
from .values import Value


@dataclass(frozen=True)
class FieldSpec:
    """A pipe field as the lowering needs it: ``shape`` entries are ints, or names (source text)
    of values not known at compile time (kernel constexprs); ``dtype`` is triton's name (``bf16``)."""

    name: str
    shape: list
    dtype: str
    scope: str = "smem"
    loc: Loc = Loc(None, 0)

    @staticmethod
    def of(name: str, buf: SharedBuffer, loc: Loc) -> "FieldSpec":
        return FieldSpec(name, list(buf.shape), buf.dtype, buf.scope, loc)


@dataclass
class PipeInfo:
    """A pipe declaration of the kernel: the checked declaration, its field specs, the kernel
    variable it was assigned to (if any) and the ``tle.pipe(...)`` call node."""

    decl: PipeDecl
    fields: tuple[FieldSpec, ...]
    var: Optional[str]
    node: ast.Call

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def loc(self) -> Loc:
        return self.decl.loc


class KernelCtx:
    def __init__(self, scope: ModuleScope, kernel: str):
        self.scope = scope
        self.path = scope.path
        self.kernel = kernel
        self.params = ParamTable()
        self.pipes: dict[str, PipeInfo] = {}
        self.mma: dict[str, set[str]] = {}
        self.buffers: dict[str, SharedBuffer] = {}
        # tle.gpu.alloc call → (pipe, field, location of the field) of the pipe field it became
        self.field_buffers: dict[Loc, tuple[str, str, Loc]] = {}
        # (pipe, reader name or None) → (fields the reader sees, where its first handle was made)
        self.reader_views: dict[tuple[str, Optional[str]], tuple[tuple[str, ...], Loc]] = {}
        self.events = 0  # events emitted so far (all partitions)

    def loc(self, node: ast.AST) -> Loc:
        return Loc(self.path, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)

    def error(self, message: str, node: ast.AST, check: str = "frontend") -> TleError:
        return TleError(message, self.loc(node), check=check)


@dataclass
class Frame:
    """One function being interpreted: its local names, and what its returns gave."""

    function: str
    env: dict[str, Value] = field(default_factory=dict)
    returns: list[Value] = field(default_factory=list)
    early_return: Optional[ast.Return] = None
    events_at_start: int = 0
