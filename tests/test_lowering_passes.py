"""The lowering passes assign-layouts and schedule-wgmma: emit-gluon prints what their attributes
say (a layout changed in the table is the layout emitted; a wait that is not the scheduled one is
an internal error), and their attributes survive the KIR text form."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.ir import kernel as K
from tle_compiler.ir.attrs import Blocked, Slice, WgmmaWait
from tle_compiler.ir.kernel_text import parse_kernel, print_kernel
from tle_compiler.lowering.codegen import kernel_ir
from tle_compiler.lowering.compile import kernel_info_of
from tle_compiler.passes.manager import run_passes

ROOT = Path(__file__).resolve().parent.parent
ATTENTION = ROOT / "tle_kernels" / "examples" / "attention_tile.py"
PIPELINED = ROOT / "tests" / "filecheck" / "schedule_wgmma.py"


def scheduled(path: Path):
    info = kernel_info_of((str(path), "attention_tile"), {})
    return run_passes(kernel_ir(info), "schedule-wgmma", info=info, program=info.program)


def with_partition_attrs(module, name: str, **attrs):
    parts = tuple(K.with_attrs(p, **attrs) if p.name == name else p
                  for p in module.kernel.partitions)
    module.kernel = replace(module.kernel, partitions=parts)
    return module


def test_emit_gluon_prints_the_layout_table():
    """The loader's index vectors are created with their layout (``gl.arange(..., layout=)``):
    the layout emitted is the table's, whatever it says."""
    other = Slice(1, Blocked((1, 4), (8, 4), (4, 1), (1, 0)))
    other_src = "gl.SliceLayout(1, gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]))"
    m = scheduled(ATTENTION)
    table = K.get_attr(m.kernel.partition("loader"), "layouts")
    assert isinstance(table.layouts[0], Slice) and other not in table.layouts
    assert other_src not in run_passes(m, "emit-gluon").gluon
    m = scheduled(ATTENTION)
    with_partition_attrs(m, "loader", layouts=replace(table, layouts=(other,) + table.layouts[1:]))
    assert other_src in run_passes(m, "emit-gluon").gluon


def test_a_wait_other_than_the_scheduled_one_is_an_internal_error():
    m = scheduled(PIPELINED)
    waits = K.get_attr(m.kernel.partition("attend"), "wgmma_waits")
    assert waits and isinstance(waits[0], WgmmaWait)
    with_partition_attrs(m, "attend", wgmma_waits=(replace(waits[0], pending=1),) + waits[1:])
    with pytest.raises(TleError, match="schedule-wgmma scheduled"):
        run_passes(m, "emit-gluon")


def test_a_pipelined_loop_without_its_carried_set_is_an_internal_error():
    m = scheduled(PIPELINED)
    attend = m.kernel.partition("attend")
    body = tuple(replace(s, attrs=()) if isinstance(s, K.For) else s for s in attend.body)
    m.kernel = replace(m.kernel, partitions=tuple(
        replace(p, body=body) if p.name == "attend" else p for p in m.kernel.partitions))
    with pytest.raises(TleError, match="wgmma_carried"):
        run_passes(m, "emit-gluon")


@pytest.mark.parametrize("path", [ATTENTION, PIPELINED], ids=["attention", "pipelined"])
def test_the_attributes_survive_the_text_form(path):
    kernel = scheduled(path).kernel
    again = parse_kernel(print_kernel(kernel))
    for a, b in zip(kernel.partitions, again.partitions):
        assert a.attrs == b.attrs
        assert [s.attrs for s in K.walk_stmts(a.body) if isinstance(s, K.For)] == \
            [s.attrs for s in K.walk_stmts(b.body) if isinstance(s, K.For)]


RING = ROOT / "tle_kernels" / "examples" / "ring.py"


def materialized_ring():
    info = kernel_info_of((str(RING), "ring_sum"), {})
    return run_passes(kernel_ir(info), "materialize-barriers", info=info, program=info.program)


def with_pipe_attrs(module, **attrs):
    module.kernel = replace(module.kernel, pipes=tuple(K.with_attrs(p, **attrs)
                                                       for p in module.kernel.pipes))
    return module


def test_the_plan_is_built_from_the_pipes_attributes():
    """The mbarrier arrays and their counts are the pipes' MBarrierAlloc / BarrierDecl attributes
    (the protocol passes' Barrier list is not read): a count changed in the attribute is the
    count initialised, and the plan's barriers carry the declaration's roles."""
    m = materialized_ring()
    before = run_passes(materialized_ring(), "emit-gluon")
    assert "mbarrier.init(ring_empty0.index(0), count=1)" in before.gluon
    decl, = m.kernel.pipes
    allocs = tuple(replace(a, count=5) if a.barrier == "ring_empty0" else a
                   for a in K.get_attr(decl, "mbarriers"))
    m = run_passes(with_pipe_attrs(m, mbarriers=allocs), "emit-gluon")
    assert "mbarrier.init(ring_empty0.index(0), count=5)" in m.gluon
    assert "mbarrier.init(ring_full0.index(0), count=129)" in m.gluon  # 1 x 128 threads + 1
    arrays = m.generated.plans["ring"].arrays
    assert [a.var for a in arrays] == ["ring_full0", "ring_empty0"]
    assert arrays[1].counts == [5] * len(arrays[1].barriers)
    decls = {d.name: d for d in K.get_attr(decl, "barriers")}
    for arr in arrays:
        assert [b.label for b in arr.barriers] == [f"ring.{arr.kind}[g0][{s}]"
                                                 for s in range(len(arr.counts))]
        assert all(b.arrivers == decls[arr.var].arrive and b.waiters == decls[arr.var].wait
                   for b in arr.barriers)
    assert m.generated.barriers == [b for a in arrays for b in a.barriers]


def test_the_plan_needs_materialize_barriers():
    m = with_pipe_attrs(materialized_ring(), mbarriers=None)
    with pytest.raises(TleError, match="without materialize-barriers' mbarriers"):
        run_passes(m, "emit-gluon")
