"""The lowering passes assign-layouts and schedule-wgmma: emit-gluon prints what their attributes
say (a layout changed in the table is the layout emitted; a wgmma wait changed, taken out or moved
in the KIR is the wait emitted, where it now is; one it cannot print is an internal error), and
their attributes survive the KIR text form."""

from __future__ import annotations

from dataclasses import replace
import tempfile
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError
from tle_compiler.ir import kernel as K
from tle_compiler.ir.attrs import Blocked, Slice
from tle_compiler.ir.kernel_text import parse_kernel, print_kernel
from tle_compiler.lowering.codegen import kernel_ir
from tle_compiler.lowering.compile import kernel_info_of
from tle_compiler.lowering.kir_paths import carriers
from tle_compiler.passes.kir_rewrite import with_node_attrs
from tle_compiler.passes.manager import run_passes

ROOT = Path(__file__).resolve().parent.parent
ATTENTION = ROOT / "tle_kernels" / "examples" / "attention_tile.py"
PIPELINED = ROOT / "tests" / "filecheck" / "schedule_wgmma.py"



def _release_wait_kernel() -> Path:
    """PIPELINED with its delayed release of slot t - 1 moved up, right after Q·Kᵀ of tile t is
    issued: there the P·V wgmma of tile t - 1, carried across the back-edge, may still read the
    slot, so the release waits for it (and lets Q·Kᵀ, which reads the other slot, run on)."""
    src = PIPELINED.read_text()
    qk = ("                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))) * qk_scale\n")
    late = ("        if t > 0:  # the slot of t - 1: its wgmma retired by now, this one may still run\n"
            "            r.release(t - 1)\n")
    assert src.count(qk) == 1 and src.count(late) == 1
    src = src.replace(late, "").replace(qk, qk.replace(" * qk_scale", "") + (
        "        if t > 0:\n            r.release(t - 1)\n        s = s * qk_scale\n"))
    path = Path(tempfile.mkdtemp(prefix="tle_release_wait_")) / "release_wait.py"
    path.write_text(src)
    return path


RELEASE_WAIT = _release_wait_kernel()


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


def gluon_of(module) -> str:
    return run_passes(module, "emit-gluon").gluon


#: schedule-wgmma's wait before Q·Kᵀ's result is read, as the text form prints it
QK_READ = ("WgmmaWait(pending = 0, deps = ('acc', 'result of body[5].body[1].value.lhs', "
           "'A operand of body[5].body[6].value'), why = 'result of body[5].body[1].value.lhs is "
           "read'")
QK_READ_GLUON = "acc, _acc3, _a4 = warpgroup_mma_wait(0, deps=[acc, _acc3, _a4])  # _acc3 is read"


def test_a_hand_edited_wait_in_the_kir_text_is_the_wait_emitted():
    """emit-gluon prints the waits the KIR holds, not waits of its own: the pipelined kernel's
    KIR after schedule-wgmma, printed, edited as text (one wait lets a wgmma stay in flight and
    no longer rebinds the A operand) and read back, lowers to Gluon with exactly that wait."""
    m = scheduled(PIPELINED)
    text = print_kernel(m.kernel)
    assert text.count(QK_READ) == 1
    assert QK_READ_GLUON in gluon_of(m)
    edited = QK_READ.replace("pending = 0", "pending = 1").replace(
        ", 'A operand of body[5].body[6].value')", ")")
    m = scheduled(PIPELINED)
    m.kernel = parse_kernel(text.replace(QK_READ, edited))
    gluon = gluon_of(m)
    assert QK_READ_GLUON not in gluon
    assert "acc, _acc3 = warpgroup_mma_wait(1, deps=[acc, _acc3])  # _acc3 is read" in gluon


def release_in_the_loop(kernel: K.Kernel):
    """RELEASE_WAIT's delayed release of slot t - 1 (an Event in the loop's `if`)."""
    loop = kernel.partition("attend").body[5]
    return next(e for e in K.events(loop.body) if e.verb == "release")


def with_waits_on(module, node, waits):
    """``module`` with ``waits`` as the ``wgmma_waits`` of ``node`` (a node of its kernel)."""
    module.kernel = with_node_attrs(module.kernel, {id(node): {"wgmma_waits": waits}})
    return module


def test_a_wait_taken_out_of_the_kir_is_not_emitted():
    """Without the release's wait in the KIR, the release arrives without waiting: emit-gluon
    does not find out by itself that a wgmma still reads the slot."""
    wait = "warpgroup_mma_wait(1, deps=[gl.full([256], 0, gl.int32, layout=L3)])  # kv.release"
    m = scheduled(RELEASE_WAIT)
    assert wait in gluon_of(m)
    m = scheduled(RELEASE_WAIT)
    release = release_in_the_loop(m.kernel)
    assert [w.why for w in K.get_attr(release, "wgmma_waits")] == \
        ["kv.release: a wgmma may still read the slot"]
    assert wait not in gluon_of(with_waits_on(m, release, ()))


def test_a_wait_moved_in_the_kir_is_emitted_where_it_now_is():
    """The release's wait moved to the end of the `if` branch (its path from the loop: the
    loop body's third statement's `then`) is printed after the arrive instead of before it."""
    m = scheduled(RELEASE_WAIT)
    release = release_in_the_loop(m.kernel)
    wait, = K.get_attr(release, "wgmma_waits")
    with_waits_on(m, release, ())
    loop = m.kernel.partition("attend").body[5]
    moved = replace(wait, place="end", path="body[2].then")
    with_waits_on(m, loop, K.get_attr(loop, "wgmma_waits") + (moved,))
    lines = gluon_of(m).splitlines()
    arrive = next(i for i, x in enumerate(lines) if "mbarrier.arrive(kv_empty0.index(_kv_s4)" in x)
    assert "# kv.release: a wgmma may still read the slot" in lines[arrive + 1]
    assert "warpgroup_mma_wait" not in lines[arrive - 1]


@pytest.mark.parametrize("bad, message", [
    (dict(path="body[99].then"), "never reaches"),
    (dict(place="inside"), "not a WgmmaWait or WgmmaRewrap placed before / after / end"),
    (dict(deps=("no_such_name",)), "names nothing there"),
    (dict(deps=("result of body[0].value",)), "has not issued there"),
])
def test_a_wait_the_walk_cannot_print_is_an_internal_error(bad, message):
    m = scheduled(RELEASE_WAIT)
    release = release_in_the_loop(m.kernel)
    wait, = K.get_attr(release, "wgmma_waits")
    with_waits_on(m, release, (replace(wait, **bad),))
    with pytest.raises(TleError, match=message):
        gluon_of(m)


def test_a_partition_without_schedule_wgmmas_waits_is_an_internal_error():
    m = scheduled(ATTENTION)
    attend = m.kernel.partition("attend")
    m.kernel = replace(m.kernel, partitions=tuple(
        replace(p, attrs=tuple(a for a in p.attrs if a[0] != "wgmma_waits")) if p is attend else p
        for p in m.kernel.partitions))
    with pytest.raises(TleError, match="without schedule-wgmma's wgmma_waits"):
        gluon_of(m)


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
    """Every node's attributes (the partition's, its loops', operations' and events') come back
    from the text form equal, at the same path."""
    kernel = scheduled(path).kernel
    again = parse_kernel(print_kernel(kernel))
    waits = 0
    for a, b in zip(kernel.partitions, again.partitions):
        got, want = carriers(b), carriers(a)
        assert list(got) == list(want)
        assert [n.attrs for n in got.values()] == [n.attrs for n in want.values()]
        waits += sum(len(K.get_attr(n, "wgmma_waits", ())) for n in want.values())
    assert waits >= 1


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


def test_schedule_wgmma_run_again_decides_the_waits_again():
    """schedule-wgmma decides from the IR, not from the waits a previous run wrote: run on its
    own output with a wait edited and one taken out, it writes its attributes as before."""
    m = scheduled(RELEASE_WAIT)
    before = print_kernel(m.kernel)
    s_read = ("WgmmaWait(pending = 0, deps = ('acc', 's', 'A operand of body[5].body[8].value'), "
              "why = 's is read'")
    assert before.count(s_read) == 1
    m.kernel = parse_kernel(before.replace(s_read, s_read.replace("pending = 0", "pending = 5")))
    with_waits_on(m, release_in_the_loop(m.kernel), ())
    assert print_kernel(m.kernel) != before
    assert print_kernel(run_passes(m, "schedule-wgmma").kernel) == before
