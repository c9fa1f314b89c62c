"""A tensor's member functions (``x.sum(1)``, ``x.reshape(M, N)``, ``ptr.store(v)``), which
Triton 3.6 defines as the library function of the same name with the tensor first: the frontend
reads ``x.f(...)`` as ``tl.f(x, ...)``, so the checks of the call (the lowering's refusals, the
memory-race proof, the slot windows) see it as they see the call spelled out. Before, every
member but ``.to`` was refused ("cannot be called in a kernel"), correct kernels included.
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, run_dump, write_kernel
from .test_global_races import ring

#: the bundled SPSC ring (a writer fills tiles of x, a reader sums them into acc); EXTRA runs
#: in the reader after its last wait, with `acc` a [64, 64] fp32 tile
KERNEL = '''import triton.language as tl
import tle_compiler as tle

BM: tl.constexpr = 64
BN: tl.constexpr = 64


@tle.jit
def ring_sum(x_ptr, out_ptr, stride_x, N_TILES, C: tl.constexpr):
    tle.assume(N_TILES >= 0)
    ring = tle.pipe(capacity=3, tile=tle.gpu.alloc([3, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(load_tiles, (ring, x_ptr, stride_x, N_TILES)),
                             (sum_tiles, (ring, out_ptr, N_TILES, C))], [4], [232])


def load_tiles(ring, x_ptr, stride_x, N_TILES):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    w = ring.writer()
    for t in tl.range(0, N_TILES):
        ptrs = x_ptr + (t * BM + offs_m)[:, None] * stride_x + offs_n[None, :]
        slot = w.acquire(t)
        WRITE
        w.commit(t)
        LATE
    w.close(N_TILES)


def sum_tiles(ring, out_ptr, N_TILES, C: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    r = ring.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(N_TILES):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    last = r.wait(N_TILES)
    acc = tl.where(last.is_closed, acc, 0.0)
    r.release(N_TILES)
    EXTRA
    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], acc)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride_x": "i32", "N_TILES": "i32"},
    "constexprs": {"C": 4},
    "num_warps": 4,
    "grid": (1,),
}
'''

STORE = "tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))"


def kernel(extra: str = "pass", write: str = STORE, late: str = "pass") -> str:
    return KERNEL.replace("EXTRA", extra).replace("WRITE", write).replace("LATE", late)


#: member calls and, for each, the library call the lowering must emit for it
MEMBERS = {
    "acc = acc + acc.sum(axis=1).reshape(BM, 1)": ("gl.reshape(gl.sum(acc, 1), [64, 1])",),
    "acc = acc + acc.max(0)[None, :] - acc.min(axis=1, keep_dims=True)": (
        "gl.max(acc, 0)[None, :]", "gl.min(acc, 1)[:, None]"),
    "acc = acc.exp().log().abs().sqrt()": ("gl.sqrt(gl.abs(gl.log(gl.exp(acc))))",),
    "acc = acc.ravel().reshape(BM, BN).trans()": ("gl.permute(", "gl.reshape(acc, [4096])"),
    "acc = acc + acc.expand_dims(0).sum(0)": ("gl.sum(acc[None, :, :], 0)",),
    "acc = acc + N_TILES.cdiv(4)": ("cdiv",),
    "acc = acc.cast(tl.float16).to(tl.float32)": ("gl.float16",),
    # refused as a call the lowering did not translate until lowering adversarial round 13
    "acc = acc.permute(1, 0)": ("gl.permute(acc, (1, 0))",),
}


@pytest.mark.parametrize("extra", list(MEMBERS))
def test_a_member_call_is_verified_and_lowered_as_the_library_call(tmp_path, capsys, extra):
    code, err = dump(tmp_path, capsys, kernel(extra))
    expect(code, err, "verified")
    path = write_kernel(tmp_path, kernel(extra))
    code, out, err = run_dump(capsys, "-q", "--gluon", str(path))
    assert code == 0, err
    for fragment in MEMBERS[extra]:
        assert fragment in out, out


REFUSED = {
    # a compile-time number has no member functions in Triton 3.6
    "acc = acc + BM.sum()": "calls a member of the compile-time number 64",
    "acc = acc + C.sum()": "calls a member of the constexpr `C`",
    "acc = acc + (3).exp()": "calls a member of the compile-time number 3",
    # a dtype or a shape is no tensor
    "acc = acc + tl.float32.exp()": "`tl.float32` is no tensor and has no member 'exp'",
    "acc = acc + acc.dtype.exp()": "`acc.dtype` is no tensor",
    "acc = acc + acc.shape.sum()": "`acc.shape` is no tensor",
    # the lowering translates no scan or sort, whichever way they are spelled
    "acc = acc.cumsum(0)": "(tl.cumsum) is not supported by the lowering",
    "acc = acc.sort(1)": "(tl.sort) is not supported by the lowering",
    # members that are no library function
    "acc = acc + acc.sum().item()": "the tensor method 'item' is not read",
    "acc = tl.where(acc.logical_and(acc), acc, 0.0)": "the tensor method 'logical_and'",
}


@pytest.mark.parametrize("extra", list(REFUSED))
def test_a_member_call_triton_or_the_lowering_refuses_is_rejected(tmp_path, capsys, extra):
    code, err = dump(tmp_path, capsys, kernel(extra))
    expect(code, err, ("rejected", REFUSED[extra]))


def test_a_slot_store_through_the_member_is_a_slot_write(tmp_path, capsys):
    """``ptr.store(v)`` of a slot's pointer writes the slot: inside the window verified, after
    the commit rejected, as ``tl.store`` is."""
    member = "tle.gpu.local_ptr(slot.tile).store(tl.load(ptrs))"
    code, err = dump(tmp_path, capsys, kernel(write=member))
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, kernel(late=member))
    expect(code, err, ("rejected", "after commit(", "[access-outside-window]"))


#: global accesses through members: the memory-race proof sees them as the calls
RACES = {
    "a member store over the writer's store": ring(
        after="tl.store(y_ptr + offs, tl.load(x_ptr + offs))",
        window="(y_ptr + 32 + offs).store(v)"),
    "a member atomic over the writer's store": ring(
        after="tl.store(y_ptr + offs, tl.load(x_ptr + offs))",
        window="p = y_ptr + 32 + offs\n        p.atomic_add(v)"),
    "the writer's member store under the reader's load": ring(
        after="(y_ptr + offs).store(tl.load(x_ptr + offs))",
        window="tl.store(y_ptr + 128 + offs, tl.load(y_ptr + 32 + offs))"),
}


@pytest.mark.parametrize("name", list(RACES))
def test_a_race_through_a_member_is_rejected(tmp_path, capsys, name):
    code, err = dump(tmp_path, capsys, RACES[name])
    expect(code, err, ("rejected", "[memory-race]", "can reach the same global address"))


def test_member_accesses_apart_are_verified(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, ring(
        after="(y_ptr + offs).store(tl.load(x_ptr + offs))",
        window="p = y_ptr + 64 + offs\n        p.atomic_add(v)"))
    expect(code, err, "verified")
