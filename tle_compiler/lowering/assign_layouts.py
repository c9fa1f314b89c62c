"""assign-layouts: the register layout of every tensor value of the kernel, and the decisions the
layouts depend on, written into the kernel IR as attributes.

The translator walks each function (the kernel prologue, then every partition) without emitting,
collecting layout variables and constraints (lowering/layouts.py); the solver picks the layouts.
The pass writes:

  Kernel, KPartition  ``layouts = LayoutTable(layouts, values, converts)``: the function's
                      distinct layouts, each layout variable's (by number, in visiting order) and
                      the operands converted (``gl.convert_layout``) to the value they feed
  Op                  ``layout``: the layout of the op's tensor result (Blocked, NVMMADistributed,
                      Slice, DotOperand), where every visit of the op gave one layout
  tl.store Op         ``cp_async = True``: the store fills a pipe slot with a cp.async gather (its
                      layout constraints and its commit's arrives depend on it)
  PipeDecl            ``fills``: per field the writer fills, FieldFill(cp_async, registers, tma);
                      ``arrive_units``: per full/empty array, ArriveUnit(mode, threads,
                      init_count): how the writer's commits arrive (plan.arrive_mode, the eager
                      publish) and the mbarrier init count (plan.init_count)

emit-gluon reads these instead of solving or deciding (lowering/walks.py, codegen.py).
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import kernel as K
from ..ir.attrs import ArriveUnit, FieldFill
from ..ir.record import record
from ..passes.kir_rewrite import with_node_attrs
from ..passes.kir_module import KirModule
from . import walks
from .layouts import LayoutSolver, layout_attr, layout_table
from .plan import arrive_mode, init_count


def _op_layouts(tr, solver, attrs: dict) -> None:
    """``layout`` for every Op the walk ``tr`` gave a tensor result (omitted for an op visited
    several times with different layouts)."""
    seen: dict[int, set] = {}
    for node, var in tr.op_vars:
        seen.setdefault(id(node), set()).add(solver.layout(var))
    for key, ls in seen.items():
        if len(ls) == 1:
            attrs.setdefault(key, {})["layout"] = layout_attr(next(iter(ls)))
    for node in tr.cp_async_stores:
        attrs.setdefault(id(node), {})["cp_async"] = True


def named_readers(kernel: K.Kernel) -> set[str]:
    """The partitions that read a named-barrier pipe (whose releases other commits imply)."""
    return {r.partition for p in kernel.pipes for d in K.get_attr(p, "barriers", ())
            if d.kind == "named" for r in d.wait}


def arrive_units(low: walks.Lowering) -> dict[str, tuple]:
    """Per pipe, the ArriveUnit of each barrier array, from the fills the walks recorded. A
    commit by a partition that reads a named-barrier pipe may be the hand-off that implies that
    pipe's release (docs/semantics.md, rule 10), so it must order the partition's earlier reads
    of the named slot (a release arrive): a commit filled by cp.async alone ("thread": each
    thread's cp.async.mbarrier.arrive, which tracks its copies, not its loads) gets the elected
    arrive as well ("mixed")."""
    info, ctx = low.info, low.ctx
    warps_of = {p.name: p.warps for p in info.partitions}
    readers_of_named = named_readers(low.kir)
    out = {}
    for pp in ctx.plans.values():
        units = []
        for arr in pp.arrays:
            mode = arrive_mode(ctx.fills, pp, arr)
            writer = next((a.partition for b in arr.barriers for a in b.arrivers), None)
            if mode == "thread" and arr.kind == "full" and writer in readers_of_named:
                mode = "mixed"
            if arr.var in ctx.eager_arrays and mode != "thread":
                mode = "eager-mixed" if mode == "mixed" else "eager"
            threads = 32 * warps_of.get(writer, info.num_warps)
            counts = {init_count(c, mode, threads) for c in arr.counts}
            assert len(counts) == 1, f"{arr.var}: slots with different counts {counts}"
            units.append(ArriveUnit(arr.barrier, mode, threads, counts.pop()))
        out[pp.name] = tuple(units)
    return out


def field_fills(low: walks.Lowering, pipe: str) -> tuple:
    fills = low.ctx.fills
    return tuple(FieldFill(f, "async" in fills[(pipe, f)], "plain" in fills[(pipe, f)],
                           "tma" in fills[(pipe, f)])
                 for f in low.ctx.plans[pipe].rings if (pipe, f) in fills)


def assign_layouts(module: KirModule) -> KirModule:
    info = walks.module_info(module)
    low = walks.prepare(info, dict(module.constexprs), module, **module.lowering)
    node_attrs: dict[int, dict] = {}
    ks = LayoutSolver(info.num_warps)
    kt = walks.prologue(low, False, ks)
    ks.solve()
    _op_layouts(kt, ks, node_attrs)
    kernel_table = layout_table(ks)
    kt = walks.prologue(low, True, ks)  # the partitions' bindings are read in the prologue
    tables = []
    for pinfo, kpart in zip(info.partitions, low.kir.partitions):
        b = walks.bindings(low, kt, kpart)
        solver = LayoutSolver(pinfo.warps)
        tr = walks.partition(low, pinfo, kpart, b.env, False, solver)
        solver.solve()
        _op_layouts(tr, solver, node_attrs)
        tables.append(layout_table(solver))
    kir = with_node_attrs(low.kir, node_attrs)
    units = arrive_units(low)
    pipes = tuple(K.with_attrs(p, fills=field_fills(low, p.name), arrive_units=units[p.name])
                  for p in kir.pipes)
    parts = tuple(K.with_attrs(p, layouts=t) for p, t in zip(kir.partitions, tables))
    module.kernel = K.with_attrs(replace(kir, pipes=pipes, partitions=parts), layouts=kernel_table)
    return module


@record
class AssignLayouts:
    name: str = "assign-layouts"
    requires: tuple = ("verify-protocol", "verify-deadlock", "materialize-barriers")

    def run(self, module: KirModule) -> KirModule:
        return assign_layouts(module)

