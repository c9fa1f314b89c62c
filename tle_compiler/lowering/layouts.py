"""The layout assignment pass: one register layout for every tensor value of a partition.

Gluon (unlike Triton) needs an explicit layout wherever a tensor is *created* (``gl.arange``,
``gl.full``, a shared-memory ``.load(layout)``) and refuses elementwise ops whose operands disagree;
most other ops infer their result layout (a load takes its pointer's, a reduction the ``Slice`` of
its operand's, ``x[:, None]`` the parent of ``x``'s slice). So the translator gives every
tensor-valued expression a *layout variable* and states the relations between them; this module
solves them.

Terms: a variable's class is free, fixed to a concrete layout (an MMA layout from a dot), or
``Slice(dim, v)`` of another variable. Constraints:
  * hard: a reduction's result is ``Slice(axis, operand)``; ``.to()`` / unary math keep the var;
  * anchors (applied first): a dot's result is the NVMMA layout of that dot; its accumulator operand
    equals the result;
  * soft (program order): elementwise operands equal the result; ``x[:, None]``'s operand is
    ``Slice(1, result)``; a store's value and mask equal its pointer; an assignment's value equals
    the variable's. When a soft constraint would force one class onto two different fixed layouts,
    it is *not* applied: the operand gets a ``gl.convert_layout`` to the other side's layout
    instead (the only place conversions appear).
Still-free classes get the partition's default blocked layout for their rank (sized to the
partition's warps: 16-byte rows for loads/stores, warps stacked along dim 0).

Layouts are plain hashable tuples here (``('blocked', spt, tpw, wpc, order)``, ``('mma', wpc,
instr)``, ``('slice', dim, parent)``, ``('dot', idx, parent, k_width)``); :func:`layout_src` prints
them as Gluon constructor source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


def blocked_default(rank: int, warps: int) -> tuple:
    """The partition's default layout: 8 contiguous elements per thread along the last dim
    (16-byte vectors for 16-bit data), a warp covers 4 x 8 threads, warps stacked on dim 0."""
    if rank == 1:
        return ("blocked", (1,), (32,), (warps,), (0,))
    if rank == 2:
        return ("blocked", (1, 8), (4, 8), (warps, 1), (1, 0))
    spt = (1,) * (rank - 1) + (8,)
    tpw = (1,) * (rank - 2) + (4, 8)
    wpc = (warps,) + (1,) * (rank - 1)
    return ("blocked", spt, tpw, wpc, tuple(range(rank - 1, -1, -1)))


#: Triton element types of one byte (a pointer to them loads 16 elements per 16-byte vector)
BYTE_TYPES = frozenset({"fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "i8", "u8"})


def pointee_of(arg_type) -> Optional[str]:
    """The element type a signature's pointer type names ("*fp8e4nv" -> "fp8e4nv"); None for
    anything else (scalars, descriptors, an unknown signature)."""
    if isinstance(arg_type, str) and arg_type.startswith("*"):
        return arg_type[1:].removeprefix("k")  # "*kfp8e4nv": a pointer to constant memory
    return None


def byte_rows(shape, warps: int) -> Optional[tuple]:
    """The layout a 2-D load of 1-byte elements prefers: 16 contiguous bytes per thread (one
    16-byte vector, as the default layout's 8 elements are for 16-bit data), 4 threads across 64
    bytes of a row and 8 rows per warp, so a thread holds few rows (fewer row addresses and
    per-row values) and each row segment is read by full vectors. None when the tile is too
    small for it (fewer than 64 columns or than 8 rows per warp): the default layout then."""
    if len(shape) != 2 or shape[1] % 64 or shape[0] % (8 * warps):
        return None
    return ("blocked", (1, 16), (8, 4), (warps, 1), (1, 0))


def mma_layout(warps: int, n: int, k_instr: int) -> tuple:
    """Hopper wgmma accumulator layout (NVMMA version [3, 0]) for an [M, n] result: one warpgroup
    per 64 rows; instr N is the largest multiple of 8 <= 256 dividing n (per column warp)."""
    wn = max(1, warps // 4)
    per = n // wn
    inst = 256
    while inst > 8 and (per % inst or inst > per):
        inst -= 8
    return ("mma", (min(warps, 4), wn), (16, inst, k_instr))


def layout_src(l: tuple) -> str:
    kind = l[0]
    if kind == "blocked":
        return f"gl.BlockedLayout({list(l[1])}, {list(l[2])}, {list(l[3])}, {list(l[4])})"
    if kind == "mma":
        return f"gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta={list(l[1])}, instr_shape={list(l[2])})"
    if kind == "slice":
        return f"gl.SliceLayout({l[1]}, {layout_src(l[2])})"
    if kind == "dot":
        return f"gl.DotOperandLayout(operand_index={l[1]}, parent={layout_src(l[2])}, k_width={l[3]})"
    raise ValueError(l)


@dataclass
class Soft:
    """A soft equality: ``a`` (an operand) should take ``b``'s layout, or ``Slice(dim, b)``."""

    id: int
    a: int
    b: int
    dim: Optional[int] = None


@dataclass
class _UF:
    parent: dict = field(default_factory=dict)
    term: dict = field(default_factory=dict)  # root -> ('fixed', L) | ('slice', dim, var)

    def copy(self) -> "_UF":
        """A trial copy: the two tables copied, their values (ints and layout tuples) shared, as
        they are immutable."""
        return _UF(dict(self.parent), dict(self.term))

    def find(self, v: int) -> int:
        while self.parent[v] != v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def unify(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        ta, tb = self.term.get(ra), self.term.get(rb)
        self.parent[ra] = rb
        self.term.pop(ra, None)
        if ta is None:
            return True
        if tb is None:
            self.term[rb] = ta
            return True
        return self._unify_terms(ta, tb, rb)

    def _unify_terms(self, ta, tb, root) -> bool:
        if ta[0] == "fixed" and tb[0] == "fixed":
            return ta[1] == tb[1]
        if ta[0] == "slice" and tb[0] == "slice":
            return ta[1] == tb[1] and self.unify(ta[2], tb[2])
        fixed, sl = (ta, tb) if ta[0] == "fixed" else (tb, ta)
        self.term[root] = fixed
        L = fixed[1]
        if L[0] != "slice" or L[1] != sl[1]:
            return False
        return self.fix(sl[2], L[2])

    def fix(self, v: int, L: tuple) -> bool:
        r = self.find(v)
        t = self.term.get(r)
        if t is None:
            self.term[r] = ("fixed", L)
            return True
        return self._unify_terms(("fixed", L), t, r)

    def set_slice(self, v: int, dim: int, parent: int) -> bool:
        r = self.find(v)
        t = self.term.get(r)
        if t is None:
            self.term[r] = ("slice", dim, parent)
            return True
        return self._unify_terms(("slice", dim, parent), t, r)


class LayoutSolver:
    """Collects layout variables and constraints while a partition is translated, then solves."""

    def __init__(self, warps: int):
        self.warps = warps
        self.rank: dict[int, int] = {}
        self.anchors: list[tuple] = []  # ('fix', v, L) | ('eq', a, b)
        self.hard: list[tuple] = []  # ('slice', v, dim, parent) | ('eq', a, b)
        self.soft: list[Soft] = []
        self.prefs: list[tuple] = []  # (v, L): applied after the soft constraints, if v is still free
        self.uf: Optional[_UF] = None
        self.converts: set[int] = set()
        self._replay: Optional[list[int]] = None  # [next var, next soft id] while replaying

    def replay(self) -> None:
        """Pass 2: the same visiting order hands out the same numbers; constraints are not re-added."""
        self._replay = [0, 0]

    def new(self, rank: int) -> int:
        if self._replay is not None:
            self._replay[0] += 1
            return self._replay[0] - 1
        v = len(self.rank)
        self.rank[v] = rank
        return v

    def fix(self, v: int, L: tuple) -> None:
        if self._replay is not None:
            return
        self.anchors.append(("fix", v, L))

    def anchor_eq(self, a: int, b: int) -> None:
        if self._replay is not None:
            return
        self.anchors.append(("eq", a, b))

    def slice_of(self, v: int, dim: int, parent: int) -> None:
        if self._replay is not None:
            return
        self.hard.append(("slice", v, dim, parent))

    def soft_eq(self, a: int, b: int, dim: Optional[int] = None) -> int:
        if self._replay is not None:
            self._replay[1] += 1
            return self._replay[1] - 1
        s = Soft(len(self.soft), a, b, dim)
        self.soft.append(s)
        return s.id

    def prefer(self, v: int, L: tuple) -> None:
        """A late preference: if ``v``'s class is still free once every soft constraint is applied,
        fix it to ``L`` (instead of the default blocked layout). Used for a register A operand of a
        dot that no other constraint places (e.g. a tile loaded from global memory): it is then
        loaded straight into the DotOperand layout and its conversion before the wgmma is a no-op,
        instead of a shared-memory round trip at every use."""
        if self._replay is not None:
            return
        self.prefs.append((v, L))

    def solve(self) -> None:
        uf = _UF({v: v for v in self.rank}, {})
        for c in self.hard:  # a reduction's result var is fresh: these never conflict
            assert uf.set_slice(c[1], c[2], c[3])
        for c in self.anchors:
            trial = uf.copy()
            ok = trial.fix(c[1], c[2]) if c[0] == "fix" else trial.unify(c[1], c[2])
            if ok:
                uf = trial
        for s in self.soft:
            trial = uf.copy()
            if s.dim is None:
                ok = trial.unify(s.a, s.b)
            else:
                ok = trial.set_slice(s.a, s.dim, s.b)
            if ok:
                uf = trial
            else:
                self.converts.add(s.id)
        for v, L in self.prefs:
            r = uf.find(v)
            if uf.term.get(r) is None:
                uf.term[r] = ("fixed", L)
        self.uf = uf
        self.replay()

    def layout(self, v: int, _depth: int = 0) -> tuple:
        assert self.uf is not None and _depth < 16
        r = self.uf.find(v)
        t = self.uf.term.get(r)
        if t is None:
            return blocked_default(self.rank[v], self.warps)
        if t[0] == "fixed":
            return t[1]
        return ("slice", t[1], self.layout(t[2], _depth + 1))

    def target(self, s_id: int) -> tuple:
        """The layout a converted operand of soft constraint ``s_id`` is converted to."""
        s = self.soft[s_id]
        L = self.layout(s.b)
        return L if s.dim is None else ("slice", s.dim, L)


# ----------------------------------------------------------------------------------------------
# the layouts as typed attributes of the kernel IR (assign-layouts writes them, emit-gluon reads)


def layout_attr(l: tuple):
    """A layout tuple as its ir/attrs.py attribute (Blocked, NVMMADistributed, Slice, DotOperand)."""
    from ..ir.attrs import Blocked, DotOperand, NVMMADistributed, Slice

    kind = l[0]
    if kind == "blocked":
        return Blocked(*l[1:])
    if kind == "mma":
        return NVMMADistributed(l[1], l[2])
    if kind == "slice":
        return Slice(l[1], layout_attr(l[2]))
    if kind == "dot":
        return DotOperand(l[1], layout_attr(l[2]), l[3])
    raise ValueError(l)


def layout_tuple(a) -> tuple:
    """The layout tuple of an attribute :func:`layout_attr` made."""
    from ..ir.attrs import Blocked, DotOperand, NVMMADistributed, Slice

    if isinstance(a, Blocked):
        return ("blocked", tuple(a.size_per_thread), tuple(a.threads_per_warp),
                tuple(a.warps_per_cta), tuple(a.order))
    if isinstance(a, NVMMADistributed):
        return ("mma", tuple(a.warps_per_cta), tuple(a.instr_shape))
    if isinstance(a, Slice):
        return ("slice", a.dim, layout_tuple(a.parent))
    if isinstance(a, DotOperand):
        return ("dot", a.operand_index, layout_tuple(a.parent), a.k_width)
    raise ValueError(f"not a register layout attribute: {a!r}")


def layout_table(solver: LayoutSolver):
    """A solved solver's choice as a :class:`~tle_compiler.ir.attrs.LayoutTable`: every
    variable's layout and every converted operand's target, the distinct layouts listed once in
    the order of the first variable (or conversion) that has them."""
    from ..ir.attrs import LayoutTable

    distinct: dict[tuple, int] = {}

    def index(l: tuple) -> int:
        return distinct.setdefault(l, len(distinct))

    values = tuple(index(solver.layout(v)) for v in sorted(solver.rank))
    converts = tuple((sid, index(solver.target(sid))) for sid in sorted(solver.converts))
    return LayoutTable(tuple(layout_attr(l) for l in distinct), values, converts)


class _AnyRank(dict):
    """Ranks in a replay: the translator passes a value's rank to ``new``, which only counts."""

    def __missing__(self, key):
        return 0


class AssignedLayouts:
    """The solver's interface over a :class:`~tle_compiler.ir.attrs.LayoutTable` (what
    assign-layouts wrote on the function): emit-gluon walks the function in the order the pass
    did, so variables and soft constraints get the same numbers; constraints are not collected
    and nothing is solved. ``finish`` checks that the walk used exactly the table's numbers."""

    def __init__(self, table, what: str):
        self.what = what
        layouts = [layout_tuple(a) for a in table.layouts]
        self.values = [layouts[i] for i in table.values]
        self.targets = {sid: layouts[i] for sid, i in table.converts}
        self.converts = set(self.targets)
        self.rank = _AnyRank()
        self.n_vars = 0
        self.n_soft = 0

    def new(self, rank) -> int:
        self.n_vars += 1
        return self.n_vars - 1

    def soft_eq(self, a: int, b: int, dim: Optional[int] = None) -> int:
        self.n_soft += 1
        return self.n_soft - 1

    def fix(self, v: int, L: tuple) -> None:
        pass

    def anchor_eq(self, a: int, b: int) -> None:
        pass

    def slice_of(self, v: int, dim: int, parent: int) -> None:
        pass

    def prefer(self, v: int, L: tuple) -> None:
        pass

    def layout(self, v: int) -> tuple:
        if v >= len(self.values):
            raise ValueError(f"{self.what}: layout variable {v} is not in the layout table "
                             f"({len(self.values)} variables): the IR changed after assign-layouts")
        return self.values[v]

    def target(self, s_id: int) -> tuple:
        return self.targets[s_id]

    def finish(self) -> None:
        if self.n_vars != len(self.values):
            raise ValueError(f"{self.what}: the translation made {self.n_vars} layout variables, "
                             f"assign-layouts' table has {len(self.values)}: the IR changed "
                             f"after assign-layouts")
