"""Chained pipes across three partitions: stage_a loads tile t of x into ``ab`` (capacity 2);
stage_b adds 1 and forwards it through ``bc`` (capacity 3); stage_c stores it: y[t] = x[t] + 1."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def chain3(x_ptr, y_ptr, N_TILES):
    ab = tle.pipe(capacity=2, x=tle.gpu.alloc([2, BM, BN], tl.int32))
    bc = tle.pipe(capacity=3, y=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(stage_a, (ab, x_ptr, N_TILES)),
                             (stage_b, (ab, bc, N_TILES)),
                             (stage_c, (bc, y_ptr, N_TILES))],
                            [4, 4], [232, 168])


def stage_a(ab, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = ab.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + t * BM * BN + offs))
        w.commit(t)


def stage_b(ab, bc, N_TILES):
    r = ab.reader()
    w = bc.writer()
    for t in range(N_TILES):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.x)) + 1
        r.release(t)
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.y), v)
        w.commit(t)


def stage_c(bc, y_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = bc.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        tl.store(y_ptr + t * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.y)))
        r.release(t)


DEFAULT_CONFIG = {
    # x, y: [N_TILES, BM, BN] int32; grid (1,)
    "signature": {"x_ptr": "*i32", "y_ptr": "*i32", "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
