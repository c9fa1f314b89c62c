"""schedule-wgmma: where the kernel waits for its async wgmmas, written into the kernel IR.

Every ``tl.dot`` is an async wgmma (``is_async=True``); a ``warpgroup_mma_wait(n)`` lets at most
``n`` of them stay in flight (they retire in issue order). The translator tracks what is in flight
and waits where it must (docs/lowering.md, "Async wgmma"): before a register read of a result,
before shared memory a wgmma reads is released or overwritten, at loop entry, back-edge and exit,
around an ``if``, at the end of the partition; with ``@tle.jit(wgmma_pipeline=True)`` a loop keeps
the wgmmas whose results only loop-carried names hold in flight across its back-edge.

The pass walks each partition twice with assign-layouts' layouts (lowering/walks.py):
  1. collecting (as assign-layouts' walk): what stays in flight at each pipelined loop's
     back-edge, written on the loop: ``wgmma_carried = (CarriedWgmma(names, rings, regs,
     reg_types), ...)`` (the loop head starts with them in flight);
  2. emitting, with those sets: every wait in emission order, written on the partition:
     ``wgmma_waits = (WgmmaWait(pending, deps, why, line), ...)``.
emit-gluon prints each wait from the partition's list; the walk it makes to name the values
must reach the same waits, in the same order (an internal error otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..ir import kernel as K
from ..ir.attrs import CarriedWgmma
from ..passes.kir_rewrite import with_node_attrs
from ..passes.kir_module import KirModule
from . import walks
from .layouts import layout_attr


def carried_attr(found: list) -> tuple:
    """What a collecting walk found in flight at a back-edge, as CarriedWgmma attributes."""
    return tuple(CarriedWgmma(tuple(e["names"]), tuple(e["rings"]), tuple(e["regs"]),
                              tuple((tuple(sh), dt, layout_attr(lay))
                                    for sh, dt, lay in e["reg_types"]))
                 for e in found)


def schedule_wgmma(module: KirModule) -> KirModule:
    info = walks.module_info(module)
    low = walks.prepare(info, dict(module.constexprs), module, **module.lowering)
    if low.ctx.wgmma_pipeline:
        ks = walks.assigned(low.kir, "the kernel prologue")
        kt = walks.prologue(low, True, ks)
        loops: dict[int, dict] = {}
        for pinfo, kpart in zip(info.partitions, low.kir.partitions):
            b = walks.bindings(low, kt, kpart)
            solver = walks.assigned(kpart, f"partition '{kpart.name}'")
            tr = walks.partition(low, pinfo, kpart, b.env, False, solver)
            for loop, found in tr.carried_found:
                loops[id(loop)] = {"wgmma_carried": carried_attr(found)}
        module.kernel = with_node_attrs(module.kernel, loops)
        low = walks.prepare(info, dict(module.constexprs), module, **module.lowering)
    waits = {}
    for pinfo, tr, _ in walks.emitting_walks(low):
        if pinfo is not None:
            waits[pinfo.name] = tuple(tr.wait_log)
    parts = tuple(K.with_attrs(p, wgmma_waits=waits[p.name]) for p in module.kernel.partitions)
    module.kernel = replace(module.kernel, partitions=parts)
    return module


@dataclass(frozen=True)
class ScheduleWgmma:
    name: str = "schedule-wgmma"
    requires: tuple = ("assign-layouts",)

    def run(self, module: KirModule) -> KirModule:
        return schedule_wgmma(module)

