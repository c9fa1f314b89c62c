"""The translator's reports to schedule-wgmma of what a register read becomes
(lowering/wgmma_sites.py ``WgmmaWaits.assigning`` / ``rebuilding_a_operand``): each is made at the
node it names, just before the point after that node, and schedule-wgmma's tracker puts its wait
there (an accumulator reset in a branch; a register A operand rebuilt while the carried wgmma of
the same ``tl.dot`` reads the previous one). The tracker reads nothing else of the translator to
find these points.

The walks are observed by a recording subclass of the tracker, swapped in for schedule-wgmma's."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tle_compiler.ir import kernel as K
from tle_compiler.ir.attrs import WgmmaWait
from tle_compiler.lowering import gluon_source, kir_paths

schedule_wgmma = importlib.import_module("tle_compiler.lowering.schedule_wgmma")

HEAD = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
D = tl.constexpr(64)

'''

#: a pipelined GEMM over NT tiles of B whose accumulator is reset every fourth tile, right after
#: the wgmma that writes it (still in flight there)
ACC_RESET = HEAD + '''
@tle.jit(num_warps=4, wgmma_pipeline=True)
def acc_reset(a_ptr, b_ptr, o_ptr, NT):
    ab = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, D], tl.bfloat16),
                  b=tle.gpu.alloc([2, D, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (ab, a_ptr, b_ptr, NT)), (mma, (ab, o_ptr, NT))], [4], [232])


def loader(ab, a_ptr, b_ptr, NT):
    tile = tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :]
    w = ab.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(a_ptr + t * BM * D + tile))
        tl.store(tle.gpu.local_ptr(slot.b), tl.load(b_ptr + t * D * D + tile))
        w.commit(t)


def mma(ab, o_ptr, NT):
    r = ab.reader()
    acc = tl.zeros([BM, D], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        if t > 0:
            r.release(t - 1)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)), tl.load(tle.gpu.local_ptr(res.slot.b)),
                     acc)
        if t % 4 == 0:
            acc = tl.zeros([BM, D], tl.float32)
    if NT > 0:
        r.release(NT - 1)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], acc)
'''

#: a GEMM whose A operand is loaded into registers every iteration (B stays in shared memory)
A_IN_REGISTERS = HEAD + '''
@tle.jit(num_warps=4, wgmma_pipeline=PIPELINED)
def a_regs(x_ptr, b_ptr, o_ptr, NT):
    b = tle.pipe(capacity=1, one_shot=True, b=tle.gpu.alloc([1, D, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (b, b_ptr)), (mma, (b, x_ptr, o_ptr, NT))], [4], [232])


def loader(b, b_ptr):
    w = b.writer()
    slot = w.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.b), tl.load(b_ptr + tl.arange(0, D)[:, None] * D
                                                 + tl.arange(0, D)[None, :]))
    w.commit(0)


def mma(b, x_ptr, o_ptr, NT):
    tile = tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :]
    r = b.reader()
    res = r.wait(0)
    acc = tl.zeros([BM, D], tl.float32)
    for t in range(NT):
        x = tl.load(x_ptr + t * BM * D + tile).to(tl.bfloat16)
        acc = tl.dot(x, tl.load(tle.gpu.local_ptr(res.slot.b)), acc)
    r.release(0)
    tl.store(o_ptr + tile, acc)
'''


class Recording(schedule_wgmma.InflightWgmmas):
    """schedule-wgmma's tracker, keeping every report and the partition it walked."""

    walks: list = []  # every instance of a run, in creation order

    def __init__(self):
        super().__init__()
        self.reports: list[tuple] = []  # ("assigning", path, name, value) / ("a_operand", ...)
        self.partition = None
        Recording.walks.append(self)

    def assigning(self, tr, path, name, value) -> None:
        self.reports.append(("assigning", path, name, value, len(self.waits)))
        super().assigning(tr, path, name, value)

    def rebuilding_a_operand(self, tr, dot_path, path) -> None:
        self.reports.append(("a_operand", dot_path, path, len(self.waits)))
        super().rebuilding_a_operand(tr, dot_path, path)

    def finish(self, tr, function) -> None:
        self.partition = function


def _walks(monkeypatch, tmp_path: Path, text: str, kernel: str, partition: str) -> list:
    """The emitting walks of ``partition`` while the kernel's Gluon is generated (the last one
    is the walk whose waits schedule-wgmma writes)."""
    Recording.walks = []
    monkeypatch.setattr(schedule_wgmma, "InflightWgmmas", Recording)
    path = tmp_path / f"{kernel}.py"
    path.write_text(text)
    gluon_source((str(path), kernel))
    walks = [w for w in Recording.walks if w.partition is not None
             and w.partition.name == partition]
    assert walks, f"no walk of partition {partition!r}"
    return walks


def _node_at(kpart, path: str):
    return dict(kir_paths.walk(kpart))[path]


def _waits_at(walk, place: str, path: str) -> list:
    return [w for p, q, w in walk.waits if (p, q) == (place, path) and isinstance(w, WgmmaWait)]


def test_an_accumulator_reset_in_a_branch_is_reported_at_its_value_and_waits_there(
        monkeypatch, tmp_path):
    walk = _walks(monkeypatch, tmp_path, ACC_RESET, "acc_reset", "mma")[-1]
    assigned = [r for r in walk.reports if r[0] == "assigning"]
    # every tensor assignment is reported at its right-hand side, with the generated name
    for _, path, name, value, _ in assigned:
        assert _node_at(walk.partition, path) is value
        assert name == "acc"
    resets = [r for r in assigned if isinstance(r[3], K.Op) and r[3].name == "tl.zeros"
              and ".then[" in r[1]]
    assert len(resets) == 1, assigned
    _, path, _, _, before = resets[0]
    # the wait for the in-flight wgmma writing acc: at the point after the reset's value, the
    # first wait decided there, and it retires acc
    waits = _waits_at(walk, "after", path)
    assert len(waits) == 1, walk.waits
    assert "replaced in a branch" in waits[0].why and "acc" in waits[0].deps, waits[0]
    assert walk.waits[before][2] is waits[0]
    # the other assignments (the first zeros, outside any branch; the wgmma's result) wait for
    # nothing of their own
    for _, other, _, _, _ in assigned:
        if other != path:
            assert not any("replaced" in w.why for w in _waits_at(walk, "after", other))


@pytest.mark.parametrize("pipelined", [True, False])
def test_a_register_a_operand_rebuilt_is_reported_at_the_operand(monkeypatch, tmp_path,
                                                                  pipelined):
    text = A_IN_REGISTERS.replace("PIPELINED", str(pipelined))
    walk = _walks(monkeypatch, tmp_path, text, "a_regs", "mma")[-1]
    reports = [r for r in walk.reports if r[0] == "a_operand"]
    assert len(reports) == 1, walk.reports
    _, dot_path, path, before = reports[0]
    dot = _node_at(walk.partition, dot_path)
    assert isinstance(dot, K.Op) and dot.name == "tl.dot"
    assert path == f"{dot_path}.args[0]" and _node_at(walk.partition, path) is dot.args[0]
    waits = [w for w in _waits_at(walk, "after", path) if "register A operand" in w.why]
    if not pipelined:
        # nothing is in flight across the back-edge: the previous operand is already retired
        assert waits == [], walk.waits
        return
    # the carried wgmma of this tl.dot still reads the previous operand: retire it first, with
    # that operand a dependency (its registers live until the wait)
    assert len(waits) == 1, walk.waits
    assert walk.waits[before][2] is waits[0]
    assert waits[0].pending == 0 and f"A operand of {dot_path}" in waits[0].deps, waits[0]
