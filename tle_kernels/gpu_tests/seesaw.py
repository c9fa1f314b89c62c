"""A seesaw exchange: the producer streams tile pairs (x0[t], x1[t]) through ``kv`` (capacity 2,
readers c0 and c1, each seeing only its own field). Every iteration each consumer publishes its
tile to the other through its own capacity-1 pipe (m0: c0 -> c1, m1: c1 -> c0) *before* waiting
for the peer's, then writes the sum of both: out0[t] = x0[t] + x1[t] (c0), out1[t] = x1[t] + x0[t]
(c1). Committing before waiting is what keeps the exchange deadlock-free."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def seesaw(x0_ptr, x1_ptr, out0_ptr, out1_ptr, N_TILES):
    kv = tle.pipe(capacity=2, readers=("c0", "c1"),
                  k0=tle.gpu.alloc([2, BM, BN], tl.int32),
                  k1=tle.gpu.alloc([2, BM, BN], tl.int32))
    m0 = tle.pipe(capacity=1, v=tle.gpu.alloc([1, BM, BN], tl.int32))
    m1 = tle.pipe(capacity=1, v=tle.gpu.alloc([1, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x0_ptr, x1_ptr, N_TILES)),
                             (consumer0, (kv, m0, m1, out0_ptr, N_TILES)),
                             (consumer1, (kv, m1, m0, out1_ptr, N_TILES))],
                            [4, 4], [232, 168])


def produce(kv, x0_ptr, x1_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = kv.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k0), tl.load(x0_ptr + t * BM * BN + offs))
        tl.store(tle.gpu.local_ptr(slot.k1), tl.load(x1_ptr + t * BM * BN + offs))
        w.commit(t)


def consumer0(kv, mine, peer, out0_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = kv.reader("c0", fields=("k0",))
    mw = mine.writer()
    pr = peer.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.k0))
        r.release(t)
        slot = mw.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.v), v)
        mw.commit(t)
        pres = pr.wait(t)
        other = tl.load(tle.gpu.local_ptr(pres.slot.v))
        pr.release(t)
        tl.store(out0_ptr + t * BM * BN + offs, v + other)


def consumer1(kv, mine, peer, out1_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = kv.reader("c1", fields=("k1",))
    mw = mine.writer()
    pr = peer.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.k1))
        r.release(t)
        slot = mw.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.v), v)
        mw.commit(t)
        pres = pr.wait(t)
        other = tl.load(tle.gpu.local_ptr(pres.slot.v))
        pr.release(t)
        tl.store(out1_ptr + t * BM * BN + offs, v + other)


DEFAULT_CONFIG = {
    # x0, x1, out0, out1: [N_TILES, BM, BN] int32; grid (1,)
    "signature": {"x0_ptr": "*i32", "x1_ptr": "*i32", "out0_ptr": "*i32", "out1_ptr": "*i32",
                  "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
