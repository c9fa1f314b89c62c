"""Pipelined wgmma (``wgmma_pipeline=True``) through an inlined helper that updates the
loop-carried accumulator and returns it (``acc = update(res, s, m, acc)``, the helper rescaling
its rows and accumulating a product: the way a kernel shares one pair body between two loops).

Two lowering faults made such a helper cost a wgmma wait in every iteration: the accumulator's
layout was taken from the row factor met first (a slice of the scores' N = 64 wgmma layout), so
the name the helper returns into was converted to it, and a conversion reads the in-flight
result; and the helper's local accumulator, assigned more than once and read last by the
return, was kept as an alias of the carried result, so the back-edge waited for the wgmma (only
results held by names bound before the loop stay in flight). Now a tensor name bound to another
name shares its layout (an anchor), and a block-local name read last by the rename hands its
in-flight result on (lowering/translate.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import gluon_source  # noqa: E402
from tle_compiler.testing.gluon_trace import LoweredKernel  # noqa: E402

KERNEL = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
BK = tl.constexpr(64)
DV = tl.constexpr(128)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def helper_acc(a_ptr, b_ptr, v_ptr, o_ptr, NT):
    ab = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BK], tl.bfloat16),
                  b=tle.gpu.alloc([2, BK, BK], tl.bfloat16),
                  v=tle.gpu.alloc([2, BK, DV], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (ab, a_ptr, b_ptr, v_ptr, NT)), (mma, (ab, o_ptr, NT))],
                            [4], [232])


def loader(ab, a_ptr, b_ptr, v_ptr, NT):
    ta = tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :]
    tv = tl.arange(0, BK)[:, None] * DV + tl.arange(0, DV)[None, :]
    w = ab.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(a_ptr + t * BM * BK + ta))
        tl.store(tle.gpu.local_ptr(slot.b), tl.load(b_ptr + t * BK * BK + ta))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BK * DV + tv))
        w.commit(t)


def mma(ab, o_ptr, NT):
    r = ab.reader()
    acc = tl.zeros([BM, DV], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        if t > 0:
            r.release(t - 1)
        s = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)), tl.load(tle.gpu.local_ptr(res.slot.b)))
        m = tl.max(s, 1)
        acc = update(res, s, m, acc)
    if NT > 0:
        r.release(NT - 1)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * DV + tl.arange(0, DV)[None, :], acc)


def update(res, s, m, acc):
    acc = acc * m[:, None]
    acc = tl.dot(s.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)), acc)
    return acc
'''
SIG = {"a_ptr": "*bf16", "b_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32", "NT": "i32"}


def _mma(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "helper_acc.py"
    path.write_text(KERNEL)
    src = gluon_source((str(path), "helper_acc")).source
    return path, src[src.index("def mma("):].split("\n\n\n")[0]


def test_a_helper_returned_accumulator_stays_in_flight_across_the_back_edge(tmp_path):
    path, mma = _mma(tmp_path)
    start, end = mma.index("    for t in range(NT):"), mma.find("loop exit")
    loop = mma[start:end if end > start else len(mma)]
    # the product the helper issues is carried across the back-edge, as a product written in the
    # loop body itself is: no wait for it at the back-edge
    assert "acc = warpgroup_mma_init(acc)  # in flight across the back-edge" in mma, mma
    assert "loop back-edge" not in loop, loop
    # the returned accumulator is the loop's, in the product's layout: no conversion of it
    assert not re.search(r"\bacc = gl\.convert_layout\(", loop), loop
    # the generated waits and releases hold for every trip count tried
    lk = LoweredKernel((str(path), "helper_acc"), {})
    for n in (0, 1, 2, 3, 5):
        _, problems = lk.check({"NT": n})
        assert not problems, (n, problems)


def test_a_helper_returned_accumulator_compiles_unserialised(tmp_path):
    """sm_90a: ptxas keeps the wgmmas asynchronous (no C7514/C7515 serialisation)."""
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    path, _ = _mma(tmp_path)
    st = ptxas_stats(compile_kernel((str(path), "helper_acc"), SIG))
    assert st["ok"], st["log"]
    assert not st["wgmma_serialized"], st["log"]
