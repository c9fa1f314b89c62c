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
