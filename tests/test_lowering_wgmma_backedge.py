"""Pipelined wgmma (``wgmma_pipeline=True``) at a loop back-edge and in a branch
(lowering/schedule_wgmma.py).

1. A wgmma the loop head carries in that no wait of the body retires (its result only
   accumulated into the body's wgmma: the K-loop GEMM with the delayed release ``if t > 0:
   r.release(t - 1)``, whose wait is in place) is waited for at the back-edge; the body's own
   wgmma is carried. Keeping the head's entry too grew the carried set by one per walk and the
   kernel failed with "internal: the wgmmas in flight at a loop back-edge ... differ".
2. A register A operand rebuilt in the next iteration waits for the carried wgmma reading it.
3. ``if t % 4 == 0: acc = tl.zeros(...)`` right after the in-flight P·V wgmma waits for it before
   the reset (unwaited, ptxas serialised every wgmma of the kernel: C7514)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import gluon_source  # noqa: E402
from tle_compiler.testing.gluon_trace import LoweredKernel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ATT = ROOT / "tle_kernels/examples/attention_tile.py"

GEMM = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
BK = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def gemm(a_ptr, b_ptr, o_ptr, NT):
    ab = tle.pipe(capacity=2, a=tle.gpu.alloc([2, BM, BK], tl.bfloat16),
                  b=tle.gpu.alloc([2, BK, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (ab, a_ptr, b_ptr, NT)), (mma, (ab, o_ptr, NT))], [4], [232])


def loader(ab, a_ptr, b_ptr, NT):
    ta = tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :]
    tb = tl.arange(0, BK)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = ab.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(a_ptr + t * BM * BK + ta))
        tl.store(tle.gpu.local_ptr(slot.b), tl.load(b_ptr + t * BK * BN + tb))
        w.commit(t)


def mma(ab, o_ptr, NT):
    r = ab.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        if t > 0:
            r.release(t - 1)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)), tl.load(tle.gpu.local_ptr(res.slot.b)),
                     acc)
    if NT > 0:
        r.release(NT - 1)
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], acc)
'''
GEMM_SIG = {"a_ptr": "*bf16", "b_ptr": "*bf16", "o_ptr": "*fp32", "NT": "i32"}

A_REUSE = '''
import triton.language as tl
import tle_compiler as tle

BM = tl.constexpr(64)
D = tl.constexpr(64)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def a_reuse(x_ptr, b_ptr, o_ptr, NT):
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

_QK = "                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))) * qk_scale\n"
_REL = "        r.release(t)\n"
_PV = ("        acc = tl.dot(p.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)),\n"
       "                     acc * alpha[:, None])\n")
ATT_SIG = {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32",
           "N_KV": "i32", "sm_scale": "fp32"}


def _acc_reset_source() -> str:
    """attention_tile pipelined with the delayed release, and the accumulator reset every fourth
    tile right after the P·V wgmma."""
    src = ATT.read_text()
    for old, new in [("@tle.jit(num_warps=4)", "@tle.jit(num_warps=4, wgmma_pipeline=True)"),
                     (_QK, _QK + "        if t > 0:\n            r.release(t - 1)\n"),
                     (_REL, ""),
                     (_PV, _PV + "        if t % 4 == 0:\n"
                                 "            acc = tl.zeros([BM, D], tl.float32)\n"),
                     ("    out = ", "    if NT > 0:\n        r.release(NT - 1)\n    out = ")]:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    return src


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / f"{name}.py"
    p.write_text(text)
    return p


def _partition(src: str, name: str) -> str:
    return src[src.index(f"def {name}("):].split("\n\n\n")[0]


def _trace_clean(path: Path, kernel: str, arg: str, values) -> None:
    """gluon_trace runs the generated kernel's waits and releases: no release while a wgmma
    reading its slot may be in flight, no read of an in-flight result."""
    lk = LoweredKernel((str(path), kernel), {})
    for v in values:
        _, problems = lk.check({arg: v})
        assert not problems, (v, problems)


def test_delayed_release_gemm_carries_the_tile_wgmma(tmp_path):
    path = _write(tmp_path, "gemm_delayed", GEMM)
    mma = _partition(gluon_source((str(path), "gemm")).source, "mma")
    loop = mma[mma.index("    for t in range(NT):"):mma.index("loop exit")]
    # the accumulator is carried in flight across the back-edge
    assert "acc = warpgroup_mma_init(acc)  # in flight across the back-edge" in mma
    # the release of tile t - 1 waits for every wgmma (the previous tile's) first
    rel = loop.index("mbarrier.arrive(ab_empty0")
    assert re.search(r"warpgroup_mma_wait\(0, deps=\[.+\]\)  # ab\.release",
                     loop[loop.index("if (t > 0):"):rel])
    # the back-edge waits for the head's wgmma only: the tile's own stays in flight
    back = [ln for ln in loop.splitlines() if "loop back-edge" in ln]
    assert len(back) == 1 and "warpgroup_mma_wait(1," in back[0], back
    assert loop.index("= warpgroup_mma(") < loop.index(back[0])
    _trace_clean(path, "gemm", "NT", [0, 1, 2, 3, 5])


def test_register_a_operand_waits_for_the_carried_wgmma(tmp_path):
    path = _write(tmp_path, "a_reuse", A_REUSE)
    mma = _partition(gluon_source((str(path), "a_reuse")).source, "mma")
    loop = mma[mma.index("    for t in range(NT):"):mma.index("loop exit")]
    a_op = re.search(r"(_a\d+) = gl\.convert_layout\(x,", loop).group(1)
    before = loop[:loop.index(f"{a_op} = gl.convert_layout(x,")]
    # the previous iteration's wgmma (reading the old registers) is retired, the old operand a dep
    assert re.search(rf"warpgroup_mma_wait\(0, deps=\[[^\]]*\b{a_op}\b[^\]]*\]\)", before), loop
    _trace_clean(path, "a_reuse", "NT", [0, 1, 2, 3])


def test_accumulator_reset_in_a_branch_waits_first(tmp_path):
    path = _write(tmp_path, "acc_reset", _acc_reset_source())
    attend = _partition(gluon_source((str(path), "attention_tile")).source, "attend")
    branch = attend[attend.index("if ((t % 4) == 0):"):]
    reset = branch.index("acc = gl.full(")
    assert re.search(r"acc(, \w+)* = warpgroup_mma_wait\(0, deps=\[acc\b", branch[:reset]), branch
    _trace_clean(path, "attention_tile", "N_KV", [0, 64, 128, 320])


def test_acc_reset_and_gemm_compile_unserialised(tmp_path):
    """sm_90a: ptxas keeps the wgmmas asynchronous (no C7514/C7515 serialisation)."""
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    for name, kernel, text, sig in [("acc_reset", "attention_tile", _acc_reset_source(), ATT_SIG),
                                    ("gemm_delayed", "gemm", GEMM, GEMM_SIG)]:
        c = compile_kernel((str(_write(tmp_path, name, text)), kernel), sig)
        st = ptxas_stats(c)
        assert st["ok"], st["log"]
        assert not st["wgmma_serialized"], (name, st["log"])
