"""The lowering as passes over the kernel IR, registered into the pass registry
(passes/kir_module.py):

materialize-barriers  KIR → KIR. Every pipe event gets ``barrier_ops``: the mbarrier operations
                      it lowers to, in the order they are emitted: MBarrierWait(array, slot,
                      parity) for the arrays infer-barriers says it waits on, MBarrierArrive(array,
                      slot, count, tx_bytes) for those it arrives on (count in partition arrivals;
                      tx_bytes: a commit's expect-tx on a TMA-filled group); every
                      pipe gets ``mbarriers``: an MBarrierAlloc per array (size, count, fence);
                      a ``barrier="named"`` pipe gets ``named_barriers`` instead: its hardware
                      barrier id and thread count (NamedBarrierAlloc), and its commits and
                      waits NamedBarrierArrive / NamedBarrierSync.
                      Slots and parities are infer-stages' index expressions.
assign-layouts        KIR → KIR (lowering/assign_layouts.py): every function's layout table, every
                      tensor-valued op's ``layout``, the stores that are cp.async gathers, every
                      pipe's field fills and the arrive unit / init count of its barrier arrays.
schedule-wgmma        KIR → KIR (lowering/schedule_wgmma.py): every wgmma wait, on the node it
                      goes before or after (``wgmma_waits``); every pipelined loop's wgmmas in
                      flight across its back-edge (``wgmma_carried``).
emit-gluon            KIR → Gluon source (lowering/emit.py: the translator prints what the
                      attributes say, the wgmma waits where its walk reaches them).

Importing this module registers the four (passes/manager.py registers the protocol passes): what
needs the whole registry (tle-dump, the lowering's entry points, :func:`run_passes` over a
lowering pass) imports it, or calls :func:`passes_with_lowering`.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import kernel as K
from ..diagnostics import TleError
from ..ir.attrs import (MBarrierAlloc, MBarrierArrive, MBarrierWait, NamedBarrierAlloc,
                        NamedBarrierArrive, NamedBarrierSync)
from ..ir.record import record
from ..passes.kir_rewrite import map_partition_events
from ..passes.named_budget import NAMED_BARRIERS, named_barrier_id, too_many_named  # noqa: F401
# run_passes is re-exported: run from here, a pipeline finds the lowering's passes registered
from ..passes.manager import KirModule, kir_passes, register, run_passes  # noqa: F401
from . import walks
from .assign_layouts import AssignLayouts
from .emit import emit
from .schedule_wgmma import ScheduleWgmma


def barrier_ops(event: K.Event, expect_tx: dict, named: dict) -> tuple:
    """The explicit barrier operations of an event from its infer-stages and infer-barriers
    attributes: the waits first (an acquire waits before it writes), then the arrives. A
    commit's arrive on a full array whose fields are filled by TMA copies declares the bytes of
    its window (``expect_tx``: array name -> BarrierDecl.expect_tx); a close copies nothing. On a
    named barrier (``named``: array name -> NamedBarrierAlloc) a wait is a ``bar.sync`` and an
    arrive a ``bar.arrive``."""
    stage = K.get_attr(event, "stage")
    ops: list = [NamedBarrierSync(w.barrier, named[w.barrier].bar_id, named[w.barrier].threads)
                 if w.barrier in named else MBarrierWait(w.barrier, stage, w.parity)
                 for w in K.get_attr(event, "waits", ())]
    tx = expect_tx if event.verb == "commit" else {}
    ops += [NamedBarrierArrive(name, named[name].bar_id, named[name].threads)
            if name in named else MBarrierArrive(name, stage, 1, tx.get(name, 0))
            for name in K.get_attr(event, "arrives", ())]
    return tuple(ops)


def named_barrier_allocs(kernel: K.Kernel) -> dict[str, NamedBarrierAlloc]:
    """A hardware barrier id for the named array of every ``barrier="named"`` pipe, from 15
    down: Triton's warp specialization takes the low ids (0 for the CTA and the default warp
    group, one per worker partition after 1), so the kernel's own start from the top; its
    ``threads``: the writer's and the reader's warps x 32. The budget and the refusal are
    passes/named_budget.py's, which the verifier's structural check reads too: a kernel it
    accepts gets its ids here."""
    warps = {p.name: p.warps for p in kernel.partitions}
    out: dict[str, NamedBarrierAlloc] = {}
    for p in kernel.pipes:
        for d in K.get_attr(p, "barriers", ()):
            if d.kind != "named":
                continue
            bar_id = named_barrier_id(len(out), len(kernel.partitions))
            if bar_id is None:
                raise TleError(too_many_named(p.name, len(kernel.partitions)), p.loc,
                               check="lowering")
            parts = {r.partition for r in d.arrive + d.wait}
            out[d.name] = NamedBarrierAlloc(d.name, bar_id, 32 * sum(warps[q] for q in parts),
                                            d.fence == "async-proxy")
    return out


@record
class MaterializeBarriers:
    name: str = "materialize-barriers"
    requires: tuple = ("infer-stages", "infer-barriers")

    def run(self, module: KirModule) -> KirModule:
        kernel = module.kernel
        named = named_barrier_allocs(kernel)
        pipes = []
        for p in kernel.pipes:
            decls = K.get_attr(p, "barriers", ())
            attrs = {"mbarriers": tuple(
                MBarrierAlloc(d.name, d.stages, d.count, d.fence == "async-proxy")
                for d in decls if d.name not in named)}
            if any(d.name in named for d in decls):
                attrs["named_barriers"] = tuple(named[d.name] for d in decls if d.name in named)
            pipes.append(K.with_attrs(p, **attrs))
        kernel = replace(kernel, pipes=tuple(pipes))
        expect_tx = {d.name: d.expect_tx for p in kernel.pipes
                     for d in K.get_attr(p, "barriers", ()) if d.kind == "full" and d.expect_tx}
        module.kernel = map_partition_events(
            kernel, lambda part, e: K.with_attrs(e, barrier_ops=barrier_ops(e, expect_tx, named)))
        return module


@record
class EmitGluon:
    name: str = "emit-gluon"
    requires: tuple = ("verify-protocol", "verify-deadlock", "materialize-barriers",
                       "assign-layouts", "schedule-wgmma")

    def run(self, module: KirModule) -> KirModule:
        info = walks.module_info(module)
        gen = emit(info, dict(module.constexprs), module, **module.lowering)
        module.generated = gen
        module.gluon = gen.source
        return module


# the lowering's passes, registered in pipeline order after the protocol passes (which
# passes.manager registers)
for _pass in (MaterializeBarriers(), AssignLayouts(), ScheduleWgmma(), EmitGluon()):
    register(_pass)


def passes_with_lowering() -> dict:
    """Every kernel IR pass by name, in pipeline order: the protocol passes and the lowering's
    (registered by this module's import)."""
    return kir_passes()
