"""A grid guard before the partitions: programs at or past N_PROG return at once, the others sum
N_TILES [BM, BN] tiles of x through a ring into their row block of out. Used by
tests/test_lowering_early_return.py (the generated Gluon and PTX) and
tests/gpu/test_early_return.py (the guard on the GPU)."""

import triton.language as tl

import tle_compiler as tle

BM: tl.constexpr = 64
BN = tl.constexpr(64)


@tle.jit
def guarded_ring_sum(x_ptr, out_ptr, N_PROG, N_TILES):
    tle.assume(N_TILES >= 0)
    pid = tl.program_id(0)
    if pid >= N_PROG:
        return
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(load_tiles, (ring, x_ptr, N_TILES)),
                             (sum_tiles, (ring, out_ptr, pid, N_TILES))], [4], [232])


def load_tiles(ring, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = ring.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM * BN + offs))
        w.commit(t)


def sum_tiles(ring, out_ptr, pid, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = ring.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(N_TILES):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    tl.store(out_ptr + pid * BM * BN + offs, acc)


DEFAULT_CONFIG = {
    # x [N_TILES * BM, BN] fp32, out [programs * BM, BN] fp32
    "signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "N_PROG": "i32", "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": ("programs",),
}
