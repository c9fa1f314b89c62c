"""The lowering as passes over the kernel IR (registered with passes/manager.py):

materialize-barriers  KIR → KIR. Every pipe event gets ``barrier_ops``: the mbarrier operations
                      it lowers to, in the order they are emitted: MBarrierWait(array, slot,
                      parity) for the arrays infer-barriers says it waits on, MBarrierArrive(array,
                      slot, count) for those it arrives on (count in partition arrivals); every
                      pipe gets ``mbarriers``: an MBarrierAlloc per array (size, count, fence).
                      Slots and parities are infer-stages' index expressions.
assign-layouts        KIR → KIR (lowering/assign_layouts.py): every function's layout table, every
                      tensor-valued op's ``layout``, the stores that are cp.async gathers, every
                      pipe's field fills and the arrive unit / init count of its barrier arrays.
schedule-wgmma        KIR → KIR (lowering/schedule_wgmma.py): every partition's wgmma waits, every
                      pipelined loop's wgmmas in flight across its back-edge.
emit-gluon            KIR → Gluon source (codegen.generate: the translator prints what the
                      attributes say).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace

from ..ir import kernel as K
from ..ir.attrs import MBarrierAlloc, MBarrierArrive, MBarrierWait
from ..passes.kir_rewrite import map_partition_events
from ..passes.manager import KirModule, register


def barrier_ops(event: K.Event) -> tuple:
    """The explicit barrier operations of an event from its infer-stages and infer-barriers
    attributes: the waits first (an acquire waits before it writes), then the arrives."""
    stage = K.get_attr(event, "stage")
    ops: list = [MBarrierWait(w.barrier, stage, w.parity) for w in K.get_attr(event, "waits", ())]
    ops += [MBarrierArrive(name, stage, 1) for name in K.get_attr(event, "arrives", ())]
    return tuple(ops)


@dataclass(frozen=True)
class MaterializeBarriers:
    name: str = "materialize-barriers"
    requires: tuple = ("infer-stages", "infer-barriers")

    def run(self, module: KirModule) -> KirModule:
        kernel = module.kernel
        pipes = tuple(K.with_attrs(p, mbarriers=tuple(
            MBarrierAlloc(d.name, d.stages, d.count, d.fence == "async-proxy")
            for d in K.get_attr(p, "barriers", ()))) for p in kernel.pipes)
        kernel = replace(kernel, pipes=pipes)
        module.kernel = map_partition_events(
            kernel, lambda part, e: K.with_attrs(e, barrier_ops=barrier_ops(e)))
        return module


register(MaterializeBarriers())


def kernel_facts(kernel: K.Kernel, program) -> SimpleNamespace:
    """What the lowering reads of a kernel besides its IR (the frontend's KernelInfo has the same
    fields), for a kernel that comes without one (parsed from the KIR text form)."""
    parts = tuple(SimpleNamespace(name=p.name, warps=p.warps, regs=p.regs, default=p.default,
                                  loc=p.loc) for p in kernel.partitions)
    pipes = {d.name: SimpleNamespace(fields=[SimpleNamespace(name=b.name, shape=list(b.shape),
                                                             dtype=b.dtype, loc=b.loc)
                                             for b in d.fields])
             for d in kernel.pipes}
    return SimpleNamespace(name=kernel.name, path=kernel.loc.file or "<kir>", program=program,
                           num_warps=kernel.num_warps, partitions=parts, options=dict(kernel.options),
                           args=tuple(p.name for p in kernel.params),
                           constexprs=tuple(p.name for p in kernel.params if p.constexpr),
                           pipes=pipes, kir=kernel)


@dataclass(frozen=True)
class EmitGluon:
    name: str = "emit-gluon"
    requires: tuple = ("verify-protocol", "verify-deadlock", "materialize-barriers",
                       "assign-layouts", "schedule-wgmma")

    def run(self, module: KirModule) -> KirModule:
        from .codegen import generate
        from .walks import module_info

        info = module_info(module)
        gen = generate(info, dict(module.constexprs), module=module, **module.lowering)
        module.generated = gen
        module.gluon = gen.source
        return module


register(EmitGluon())

# the passes between materialize-barriers and emit-gluon, registered in pipeline order
from . import assign_layouts as _assign_layouts  # noqa: E402,F401
from . import schedule_wgmma as _schedule_wgmma  # noqa: E402,F401
