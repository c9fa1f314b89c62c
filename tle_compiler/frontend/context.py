"""State shared while one kernel's protocol is derived (protocol.py): its params, pipes, mma uses,
shared-buffer uses and assumptions; and the pipe and assumption records the KernelInfo carries."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Optional

from ..ir.nodes import Loc
from ..ir.record import record
from ..language.gpu import SharedBuffer
from ..language.pipe import PipeDecl
from .params import ParamTable


@record
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
    node: Optional[ast.Call]

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def loc(self) -> Loc:
        return self.decl.loc


@record
class Assumption:
    """One ``tle.assume`` comparison: param ``param`` (its name in the Program) lies in ``[min,
    max]`` (None: open); ``arg`` is the kernel argument the param is, if any; ``steps``, for a
    param the kernel computes from its arguments (``M = N // 64``), how: ir/derived.py's
    ``Derived`` definitions over argument names, in order, the last one the param's (a launch
    evaluates them, with C's ``//`` and ``%``, and checks the value); ``text`` the source of the
    whole ``tle.assume(...)`` and ``loc`` its line."""

    param: str
    arg: Optional[str]
    min: Optional[int]
    max: Optional[int]
    text: str
    loc: Loc
    steps: tuple = field(default=(), repr=False)

    def holds(self, value: int) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    @property
    def arguments(self) -> tuple[str, ...]:
        """The kernel arguments the param is computed from (its own, or its steps' leaves)."""
        if self.arg is not None:
            return (self.arg,)
        names = {st.name for st in self.steps}
        out: list[str] = []
        for st in self.steps:
            for v in sorted(st.definition.variables):
                if v not in names and v not in out:
                    out.append(v)
        return tuple(out)


#: Where tle.assume may stand (the error everywhere else).
ASSUME_WHERE = ("tle.assume must be a statement at the top level of the kernel body, before "
                "tle.gpu.warp_specialize (it states the domain of the kernel's params)")

#: Known domains of pure integer functions, by name: a program id is never negative, a program
#: count at least 1.
KNOWN_DOMAINS = {"program_id": (0, None), "num_programs": (1, None)}


class KernelCtx:
    def __init__(self, kernel: str, path: Optional[str] = None):
        self.path = path
        self.kernel = kernel
        self.params = ParamTable()
        self.pipes: dict[str, PipeInfo] = {}
        self.mma: dict[str, set[str]] = {}
        # free buffer → (partition, writes, location, operation) of every access, in reading order
        self.buffer_uses: dict[str, list[tuple[Optional[str], bool, Loc, str]]] = {}
        self.events = 0  # events emitted so far (all partitions)
        # tle.assume comparisons, with the placeholder of their param (named at the end)
        self.assumptions: list[tuple[str, Assumption]] = []
        # canonical key of a pure integer expression → its known (min, max)
        self.known: dict[str, tuple[Optional[int], Optional[int]]] = {}
        # canonical key of a pure integer expression → how it is computed from the placeholders
        # of its operands (ir/derived.py's Definition; none for opaque values: a program id)
        self.definitions: dict[str, object] = {}
        # keys of values computed at a width a cancelled param decides (protocol.note_width)
        self.unsure_width: set[str] = set()
        # integer constexprs the kernel is read specialised to (shape names of pipe fields)
        self.bind: dict[str, int] = {}
        # integer constexprs the DEFAULT_CONFIG gives (the values the lowering compiles with)
        self.config_constexprs: dict[str, int] = {}
        # the DEFAULT_CONFIG's constexprs as it writes them (a bool kept a bool)
        self.config_values: dict[str, object] = {}
        # the constexpr arguments this reading leaves unbound (their values are the launch's)
        self.free_constexprs: frozenset[str] = frozenset()
        # placeholder of a kernel-body value Triton holds as an unsigned integer (`k =
        # tl.full([], 5, tl.uint32)`) -> its type: the param drops the type, which decides
        # whether a `while` counter compared with it wraps (frontend/loop_ends.py)
        self.unsigned_params: dict[str, str] = {}
        # placeholder of a kernel-body value computed, without reading memory, in a way the
        # verifier does not model (`C = tl.where(N % 64 == 0, N // 64, N // 64 + 1)`, a value a
        # branch chose between computed ones) -> its line: an opaque param checked for every
        # value, though a launch gives it one value of its arguments; a fault found at one of
        # its values is no launch's witness (Program.computed, passes/sweep.py)
        self.computed_params: dict[str, int] = {}
        # placeholder of such a value a branch chose on data or the program id (each way taken at
        # some launch) -> the affine values of the branches, over placeholders: a fault where it
        # holds one of them is a launch's (Program.computed)
        self.computed_options: dict[str, tuple] = {}
        # placeholder of a kernel-body value loaded through a pointer of no known element type
        # (or IR variable of a loop over one) -> that pointer (frontend/load_signs.py): the
        # value may be unsigned as well as signed
        self.untyped_params: dict[str, str] = {}
        # placeholder of a kernel-body value Triton computes in the type of such a load (the
        # load, or its arithmetic with Python numbers: load_types.own_typed) -> that pointer
        self.own_typed_params: dict[str, str] = {}
        # an affine value a name was bound to by arithmetic in such a load's own type -> that
        # pointer and expression (load_types.narrow_arithmetic, which reads names through it)
        self.narrow_values: dict = {}
        # pointer of such a load -> where its value is a loop bound of pipe events as it is
        # (sign-extended where it is an int1), and where it is read otherwise (zero-extended)
        self.bool_bounds: dict[str, Loc] = {}
        self.bool_others: dict[str, Loc] = {}
        # `while` loops that end, and comparisons or arithmetic deciding events that keep the
        # verifier's reading, only where such a load is of some element types: (location,
        # pointer, why, those types), Program.signed_only (cli/kernel_checks.py check_signed_loads
        # qualifies the verdict with them; frontend/load_types.py)
        self.signed_only: list[tuple[Loc, str, str, frozenset]] = []
        # placeholder of a kernel-body value computed by such a comparison -> its note, kept in
        # signed_only where the Program reads the param
        self.signed_params: dict[str, tuple[Loc, str, str, frozenset]] = {}
        # the key of a pure value a partition's argument computes (`n >= 2` passed as a flag)
        # -> its note, made the param's where a partition makes it one (reserve_pure)
        self.key_notes: dict[str, tuple[Loc, str, str, frozenset]] = {}

    def keep_signed_only(self, note: tuple[Loc, str, str, frozenset]) -> None:
        """Keep ``note`` (location, pointer, why, element types) in :attr:`signed_only`, once
        per location."""
        if not any(kept[0] == note[0] for kept in self.signed_only):
            self.signed_only.append(note)

    def reserve_pure(self, key: str, hint: str, loc: Loc) -> str:
        """The placeholder of the param standing for the pure expression ``key`` (a note of
        :attr:`key_notes` on it then becomes the param's, kept where the Program reads it)."""
        ph = self.params.reserve(("pure", key), hint, loc, self.known.get(key, (None, None)))
        note = self.key_notes.get(key)
        if note is not None:
            self.signed_params.setdefault(ph, note)
        return ph
