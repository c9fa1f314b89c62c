# expect: ok
"""The float argument scale only scales the data; whether the tiles are handed over at all is
decided by the integer argument N (more than one tile), the same test in both partitions, so
every committed tile is waited for and released whatever scale is."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N, scale: tl.float32):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, scale)),
                             (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N, scale):
    w = kv.writer()
    if N > 1:
        for i in range(N):
            slot = w.acquire(i)
            x = tl.load(x_ptr + i * 64 + tl.arange(0, 64))
            tl.store(tle.gpu.local_ptr(slot.tile), x * scale)
            w.commit(i)


def consume(kv, y_ptr, N):
    r = kv.reader()
    if N > 1:
        for i in range(N):
            res = r.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(i)
            tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
