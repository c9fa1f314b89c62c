"""A three-partition chain: stage_a → ab → stage_b → bc → stage_c. stage_a writes tiles 2p and
2p+1 for each pair p (a static inner loop); stage_b takes both through a helper (inlined by the
frontend) and forwards their sum; stage_c stores it."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(32)
BN = tl.constexpr(64)


@tle.jit
def chain(x_ptr, y_ptr, N_PAIRS):
    ab = tle.pipe(capacity=2, x=tle.gpu.alloc([2, BM, BN], tl.float32))
    bc = tle.pipe(capacity=1, y=tle.gpu.alloc([1, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(stage_a, (ab, x_ptr, N_PAIRS)),
                             (stage_b, (ab, bc, N_PAIRS)),
                             (stage_c, (bc, y_ptr, N_PAIRS))],
                            [4, 4], [200, 200])


def tile_offsets():
    return tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]


def stage_a(ab, x_ptr, N_PAIRS):
    w = ab.writer()
    for p in range(N_PAIRS):
        for j in tl.static_range(2):
            k = 2 * p + j
            slot = w.acquire(k)
            tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + k * BM * BN + tile_offsets()))
            w.commit(k)


def take(r, i):
    res = r.wait(i)
    t = tl.load(tle.gpu.local_ptr(res.slot.x))
    r.release(i)
    return t


def stage_b(ab, bc, N_PAIRS):
    r = ab.reader()
    w = bc.writer()
    for p in range(N_PAIRS):
        s = take(r, 2 * p) + take(r, 2 * p + 1)
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.y), s)
        w.commit(p)


def stage_c(bc, y_ptr, N_PAIRS):
    r = bc.reader()
    for p in range(N_PAIRS):
        res = r.wait(p)
        tl.store(y_ptr + p * BM * BN + tile_offsets(), tl.load(tle.gpu.local_ptr(res.slot.y)))
        r.release(p)


DEFAULT_CONFIG = {
    # x [2 * N_PAIRS * BM, BN] fp32, y [N_PAIRS * BM, BN] fp32
    "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N_PAIRS": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
