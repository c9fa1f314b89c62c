# expect: ok
"""The consumer unrolls its loop with tl.static_range over N, a tl.constexpr kernel argument:
Triton unrolls it at compile time, one copy of the body per tile, and the trip counts of the
producer's range(N) and the consumer's unrolled loop agree for every N."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N: tl.constexpr):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for i in range(N):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, N: tl.constexpr):
    r = kv.reader()
    for i in tl.static_range(0, N, 1):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
