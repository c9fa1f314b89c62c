"""SPMC with a field view: a producer gathers K and V tiles into a 2-deep pipe read by two
consumers. "scores" sees both fields and computes Q·Kᵀ with tl.dot (so k is an mma field);
"vsum" sees only v (fields=("v",)) and keeps each tile until the next one arrives (it releases
tile ck - 1 after waiting tile ck), so its loop has an affine `if`."""

import triton.language as tl

import tle_compiler as tle

BK = 64
D = tl.constexpr(64)


@tle.jit(num_warps=4)
def spmc_qk(q_ptr, k_ptr, v_ptr, s_ptr, o_ptr, N):
    NK = tl.cdiv(N, BK)
    kv = tle.pipe(capacity=2, readers=("scores", "vsum"),
                  k=tle.gpu.alloc([2, BK, D], tl.float16),
                  v=tle.gpu.alloc([2, BK, D], "float16"))
    tle.gpu.warp_specialize([(producer, (kv, k_ptr, v_ptr, NK)),
                             (scores, (kv, q_ptr, s_ptr, NK)),
                             (vsum, (kv.reader("vsum", fields=("v",)), o_ptr, NK))],
                            [4, 4], [232, 160])


def producer(kv, k_ptr, v_ptr, NK):
    rows = tl.arange(0, BK)[:, None] * D + tl.arange(0, D)[None, :]
    w = kv.writer()
    for ck in range(NK):
        slot = w.acquire(ck)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + ck * BK * D + rows))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + ck * BK * D + rows))
        w.commit(ck)


def scores(kv, q_ptr, s_ptr, NK):
    q = tl.load(q_ptr + tl.arange(0, BK)[:, None] * D + tl.arange(0, D)[None, :])
    r = kv.reader("scores")
    for ck in range(NK):
        res = r.wait(ck)
        k = tl.load(tle.gpu.local_ptr(res.slot.k))
        s = tl.dot(q, tl.trans(k))
        r.release(ck)
        tl.store(s_ptr + ck * BK * BK + tl.arange(0, BK)[:, None] * BK + tl.arange(0, BK)[None, :],
                 s)


def vsum(r, o_ptr, NK):
    acc = tl.zeros([BK, D], tl.float32)
    for ck in range(NK):
        res = r.wait(ck)
        acc += tl.load(tle.gpu.local_ptr(res.slot.v)).to(tl.float32)
        if ck > 0:
            r.release(ck - 1)
    if NK > 0:
        r.release(NK - 1)
    tl.store(o_ptr + tl.arange(0, BK)[:, None] * D + tl.arange(0, D)[None, :], acc)


DEFAULT_CONFIG = {
    # q [BK, D] fp16, k/v [N, D] fp16, s [cdiv(N, BK) * BK, BK] fp32, o [BK, D] fp32
    "signature": {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "s_ptr": "*fp32",
                  "o_ptr": "*fp32", "N": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
