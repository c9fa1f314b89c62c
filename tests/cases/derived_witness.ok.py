# expect: ok
"""The producer commits the first of N's 64-wide tiles, if there is one (tl.minimum(M, 1) with
M = tl.cdiv(N, 64)), and the consumer waits for the same count: one derived param, every tile
consumed."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    M = tl.cdiv(N, 64)
    K = tl.minimum(M, 1)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, K)), (consume, (kv, y_ptr, K))], [4], [232])


def produce(kv, x_ptr, K):
    w = kv.writer()
    for i in range(K):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, K):
    r = kv.reader()
    for i in range(K):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
