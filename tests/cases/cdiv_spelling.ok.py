# expect: ok
"""The kernel counts N's 64-wide tiles with tl.cdiv for the producer, the consumer with
(N + 63) // 64: Triton defines tl.cdiv(x, d) as (x + (d - 1)) // d, so both are one trip count
(one derived param) and every committed tile is consumed."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N):
    M = tl.cdiv(N, 64)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, M):
    w = kv.writer()
    for i in range(M):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for i in range((N + 63) // 64):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
