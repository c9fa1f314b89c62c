"""Shared-memory plan of a kernel: the ring buffers of its pipes and the mbarrier arrays, read from
the kernel IR and the attributes the passes wrote on its pipes only.

* one ring ``[capacity, *slot_shape]`` per field (the PipeDecl's Buffers); NVMMA-swizzled when the
  field feeds wgmma (the protocol view's ``Pipe.mma``) or is filled by TMA copies (the tensor
  descriptor of the copy has the same layout, :func:`tma_layout`), else an unswizzled shared
  layout;
* one mbarrier array ``[size, 1]`` per MBarrierAlloc (materialize-barriers), with the
  BarrierDecl of the same name (infer-barriers: kind, field group, fields, who arrives and who
  waits); every stage is initialised with the allocation's ``count`` (partition units) scaled
  by the writer's arrive unit (:func:`arrive_mode`, :func:`init_count`: x 32·warps per-thread
  arrivals for cp.async-filled groups, +1 elected arrive when register stores are mixed in);
* which arrays an event waits on / arrives at, at which slot and parity, is not decided here:
  materialize-barriers puts it on the event (lowering/kir_passes.py, from infer-barriers' waiters
  and arrivers, so a reader with a field view touches only its groups' barriers);
* a ``[capacity, 1]`` i32 closed-flag ring for pipes that are closed (``w.close(i)``);
* each of these named uniquely in the generated code (lowering/names.py).
Nothing here re-derives a count.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.attrs import BarrierDecl, BarrierRole
from ..ir.record import record
from ..passes.infer_barriers import tma_fields
from .names import NameAllocator

GL_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64",
             "int1": "int1", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
             "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
             "fp8e4nv": "float8e4nv", "fp8e5": "float8e5"}
#: a signature's pointee ("bf16", "i8", "u32", "fp8e4nv") -> the Gluon dtype of what it points to
POINTEE_DTYPES = {**GL_DTYPES, **{f"{s}{b}": f"{t}{b}" for s, t in (("i", "int"), ("u", "uint"))
                                  for b in (8, 16, 32, 64)}, "i1": "int1"}
BITS = {"bfloat16": 16, "float16": 16, "float32": 32, "float64": 64, "int1": 8, "int8": 8,
        "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
        "uint64": 64, "float8e4nv": 8, "float8e5": 8}


def nvmma_shared_src(shape: list[int], dtype: str) -> str:
    """NVMMASharedLayout.get_default_for(shape, dtype), written out (the widest swizzle that
    divides a row)."""
    sw, bits, rank = nvmma_shared_params(shape, dtype)
    return f"gl.NVMMASharedLayout(swizzle_byte_width={sw}, element_bitwidth={bits}, rank={rank})"


def nvmma_shared_params(shape: list[int], dtype: str) -> tuple[int, int, int]:
    """(swizzle bytes, element bits, rank) of :func:`nvmma_shared_src`'s layout."""
    bits = BITS[dtype]
    row = shape[-1] * bits // 8
    sw = next((w for w in (128, 64, 32) if row >= w and row % w == 0), 0)
    outer = 1
    for s in shape[:-1]:
        outer *= s
    if len(shape) < 2 or outer < 8:
        sw = 0
    return sw, bits, len(shape)


def plain_shared_src(rank: int) -> str:
    return f"gl.SwizzledSharedLayout(1, 1, 1, {list(range(rank - 1, -1, -1))})"


@dataclass
class Ring:
    pipe: str
    field: str
    var: str  # name in the generated code
    capacity: int
    shape: list[int]  # slot shape (without the capacity)
    dtype: str  # gl dtype name
    mma: bool
    tma: bool = False  # filled by TMA copies (tle.gpu.tma_load)

    @property
    def layout_src(self) -> str:
        if self.mma or self.tma:
            return nvmma_shared_src(self.shape, self.dtype)
        return plain_shared_src(len(self.shape))

    @property
    def slot_bytes(self) -> int:
        """The bytes of one slot: what a TMA copy of the whole field moves."""
        n = BITS[self.dtype] // 8
        for d in self.shape:
            n *= d
        return n


@record
class StageBarrier:
    """One barrier of an array (stage ``stage``), as the plan's readers see it: its array's
    BarrierDecl fields and the allocation's count."""

    pipe: str
    kind: str  # "full" | "empty"
    group: int
    fields: tuple[str, ...]
    stage: int
    count: int  # partition arrivals per phase
    arrivers: tuple[BarrierRole, ...]
    waiters: tuple[BarrierRole, ...]
    fence: Optional[str] = None  # "async-proxy" when a wgmma reads the slot after this barrier
    expect_tx: int = 0

    @property
    def label(self) -> str:
        return f"{self.pipe}.{self.kind}[g{self.group}][{self.stage}]"


@dataclass
class BarrierArray:
    pipe: str
    kind: str
    group: int
    var: str
    counts: list[int]  # per stage, the MBarrierAlloc's count
    barriers: list[StageBarrier]
    fence: bool
    #: arrive unit of the writer's commits (arrive_mode), its threads and the init counts per
    #: stage (counts scaled by the unit, init_count): assign-layouts' ``arrive_units`` attribute
    mode: str = "partition"
    threads: int = 0
    init_counts: Optional[list[int]] = None
    #: materialize-barriers' name of the array, which the events' barrier_ops and the
    #: arrive_units attribute use; ``var`` is its name in the generated code (names.py)
    barrier: str = ""


@dataclass
class PipePlan:
    name: str
    capacity: int
    one_shot: bool
    rings: dict[str, Ring] = field(default_factory=dict)
    arrays: list[BarrierArray] = field(default_factory=list)
    closed: Optional[str] = None  # closed-flag ring var
    #: a ``barrier="named"`` pipe: (hardware barrier id, threads) of its NamedBarrierAlloc
    named: Optional[tuple[int, int]] = None

    def full(self) -> list[BarrierArray]:
        return [a for a in self.arrays if a.kind == "full"]

    def empty(self) -> list[BarrierArray]:
        return [a for a in self.arrays if a.kind == "empty"]

    @property
    def vars(self) -> list[str]:
        """Everything a partition touching this pipe receives, in a fixed order."""
        return ([r.var for r in self.rings.values()] + [a.var for a in self.arrays]
                + ([self.closed] if self.closed else []))


def arrive_mode(fills: dict, pp: "PipePlan", arr: "BarrierArray") -> str:
    """How the writer arrives on a full barrier array at each commit, from how it fills the fields
    of the group (``fills``: (pipe, field) -> {"async", "plain", "tma"}, recorded by the
    translator): "partition" (register stores only: one elected arrive), "thread" (cp.async
    gathers only: one ``cp.async.mbarrier.arrive.noinc`` per thread), "mixed" (both, or a closed
    flag to publish). TMA copies add one elected ``mbarrier.arrive.expect_tx`` of the window's
    bytes: "tma" alone, "tma-partition" / "tma-thread" / "tma-mixed" with the arrives the other
    fills need (a closed flag counts as a register store)."""
    if arr.kind != "full":
        return "partition"
    modes: set = set()
    for f in arr.barriers[0].fields:
        modes |= fills.get((pp.name, f), set())
    if "tma" in modes:
        plain = "plain" in modes or pp.closed
        rest = {(False, False): "", (True, False): "-partition", (False, True): "-thread",
                (True, True): "-mixed"}[(bool(plain), "async" in modes)]
        return "tma" + rest
    if "async" not in modes:
        return "partition"
    return "mixed" if ("plain" in modes or pp.closed) else "thread"


def arrive_parts(mode: str) -> tuple[bool, bool, bool]:
    """What one commit emits in an arrive mode: (an elected arrive after the register stores,
    per-thread cp.async arrives, an elected expect-tx arrive for the TMA copies)."""
    base = mode[4:] if mode.startswith("tma-") else ("" if mode == "tma" else mode)
    base = {"eager": "partition", "eager-mixed": "mixed"}.get(base, base)
    return base in ("partition", "mixed"), base in ("thread", "mixed"), mode.startswith("tma")


def init_count(count: int, mode: str, writer_threads: int) -> int:
    """The mbarrier's init count from infer-barriers' partition-unit ``count``: each partition
    arrival becomes ``writer_threads`` per-thread arrivals (thread; eager: per-thread release
    arrives, lowering/eager.py), plus the elected one (mixed), or twice that (eager-mixed); a
    TMA-filled group adds the expect-tx arrive (tma: 1; tma-partition: 2; tma-thread: threads +
    1; tma-mixed: threads + 2)."""
    if mode.startswith("tma"):
        plain, threads, _ = arrive_parts(mode)
        return count * (1 + int(plain) + (writer_threads if threads else 0))
    if mode in ("thread", "eager"):
        return count * writer_threads
    if mode == "mixed":
        return count * (writer_threads + 1)
    if mode == "eager-mixed":  # each thread: its release arrive and its cp.async arrive
        return count * 2 * writer_threads
    return count


def tma_layout(block_shape: list[int], dtype: str) -> str:
    """The NVMMA shared layout of a TMA copy's box (its tensor descriptor's layout) and of the
    ring it fills: the same function, so the two agree."""
    return nvmma_shared_src(block_shape, dtype)


def resolve_dim(d, consts: dict, loc) -> int:
    if isinstance(d, int):
        return d
    v = consts.get(str(d))
    if isinstance(v, int):
        return v
    raise TleError(f"shared-memory dimension `{d}` is not a compile-time integer (make it a "
                   f"constexpr of the kernel or a module constant)", loc, check="lowering")


def barrier_arrays(decl: K.PipeDecl) -> list[BarrierArray]:
    """The mbarrier arrays of a pipe from its ``mbarriers`` (materialize-barriers) and
    ``barriers`` (infer-barriers) attributes, in allocation order."""
    allocs = K.get_attr(decl, "mbarriers")
    if allocs is None:
        raise TleError(f"internal: pipe '{decl.name}' reaches the lowering without "
                       f"materialize-barriers' mbarriers", decl.loc, check="lowering")
    decls: dict[str, BarrierDecl] = {d.name: d for d in K.get_attr(decl, "barriers", ())}
    out = []
    for a in allocs:
        d = decls.get(a.barrier)
        if d is None:
            raise TleError(f"internal: pipe '{decl.name}' allocates mbarrier array "
                           f"'{a.barrier}' that infer-barriers did not declare", decl.loc,
                           check="lowering")
        bs = [StageBarrier(decl.name, d.kind, d.group, tuple(d.fields), s, a.count, d.arrive,
                           d.wait, d.fence, d.expect_tx) for s in range(a.size)]
        out.append(BarrierArray(decl.name, d.kind, d.group, a.barrier, [a.count] * a.size, bs,
                                a.fence, barrier=a.barrier))
    return out


def build_plan(info, kernel: K.Kernel, consts: dict) -> dict[str, PipePlan]:
    """The plan of every pipe of ``kernel`` (after materialize-barriers); ``info``: the protocol
    view's pipes say which fields feed wgmma."""
    plans: dict[str, PipePlan] = {}
    mma = {p.name: set(p.mma) for p in info.program.pipes}
    tma = tma_fields(info.program)
    closed_pipes = {e.handle.pipe for part in kernel.partitions for e in K.events(part.body)
                    if e.verb == "close"}
    arrays = {decl.name: barrier_arrays(decl) for decl in kernel.pipes}
    # the generated code's names of the rings, closed flags and barrier arrays, unique (names.py)
    unique = NameAllocator(kernel, [f"{d.name}_{b.name}" for d in kernel.pipes for b in d.fields]
                           + [f"{d.name}_closed" for d in kernel.pipes if d.name in closed_pipes]
                           + [a.var for arrs in arrays.values() for a in arrs])
    for decl in kernel.pipes:
        pp = PipePlan(decl.name, decl.capacity, decl.one_shot)
        for buf in decl.fields:
            shape = [resolve_dim(d, consts, buf.loc) for d in buf.shape]
            dt = GL_DTYPES.get(buf.dtype)
            if dt is None:
                raise TleError(f"field '{buf.name}': dtype {buf.dtype} is not supported by the "
                               f"lowering", buf.loc, check="lowering")
            pp.rings[buf.name] = Ring(decl.name, buf.name, unique(f"{decl.name}_{buf.name}"),
                                      shape[0], shape[1:], dt, buf.name in mma.get(decl.name, ()),
                                      buf.name in tma.get(decl.name, {}))
        if decl.name in closed_pipes:
            pp.closed = unique(f"{decl.name}_closed")
        pp.arrays = arrays[decl.name]
        for nb in K.get_attr(decl, "named_barriers", ()):
            pp.named = (nb.bar_id, nb.threads)
        for arr in pp.arrays:
            arr.var = unique(arr.var)
        plans[decl.name] = pp
    return plans
