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


@dataclass(frozen=True)
class Assumption:
    """One ``tle.assume`` comparison: param ``param`` (its name in the Program) lies in ``[min,
    max]`` (None: open); ``arg`` is the kernel argument the param is, if any (checked at launch);
    ``text`` the source of the whole ``tle.assume(...)`` and ``loc`` its line."""

    param: str
    arg: Optional[str]
    min: Optional[int]
    max: Optional[int]
    text: str
    loc: Loc

    def holds(self, value: int) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


#: Where tle.assume may stand (the error everywhere else).
ASSUME_WHERE = ("tle.assume must be a statement at the top level of the kernel body, before "
                "tle.gpu.warp_specialize (it states the domain of the kernel's params)")

#: Known domains of pure integer functions, by name: a program id is never negative, a program
#: count at least 1.
KNOWN_DOMAINS = {"program_id": (0, None), "num_programs": (1, None)}


class KernelCtx:
    def __init__(self, scope: Optional[ModuleScope], kernel: str, path: Optional[str] = None):
        self.scope = scope
        self.path = path if scope is None else scope.path
        self.kernel = kernel
        self.params = ParamTable()
        self.pipes: dict[str, PipeInfo] = {}
        self.mma: dict[str, set[str]] = {}
        self.buffers: dict[str, SharedBuffer] = {}
        # tle.gpu.alloc call → (pipe, field, location of the field) of the pipe field it became
        self.field_buffers: dict[Loc, tuple[str, str, Loc]] = {}
        # tle.gpu.alloc calls of the kernel body (free buffers the partitions may share)
        self.kernel_allocs: set[Loc] = set()
        # free buffer → (partition, writes, location, operation) of every access, in reading order
        self.buffer_uses: dict[str, list[tuple[Optional[str], bool, Loc, str]]] = {}
        # (pipe, reader name or None) → (fields the reader sees, where its first handle was made)
        self.reader_views: dict[tuple[str, Optional[str]], tuple[tuple[str, ...], Loc]] = {}
        self.events = 0  # events emitted so far (all partitions)
        # tle.assume comparisons, with the placeholder of their param (named at the end)
        self.assumptions: list[tuple[str, Assumption]] = []
        # canonical key of a pure integer expression → its known (min, max)
        self.known: dict[str, tuple[Optional[int], Optional[int]]] = {}

    def reserve_pure(self, key: str, hint: str, loc: Loc) -> str:
        """The placeholder of the param standing for the pure expression ``key``."""
        return self.params.reserve(("pure", key), hint, loc, self.known.get(key, (None, None)))

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
