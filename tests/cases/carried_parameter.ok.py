# expect: ok
"""A partition parameter bound to a literal, the first index: the index is `i + t`, and a
counter carried by the loop only addresses data (row, read as the variable it is)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N, 0))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N, i):
    r = kv.reader()
    row = i
    for t in range(N):
        res = r.wait(i + t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i + t)
        tl.store(x_ptr + row * 64 + tl.arange(0, 64), v + 1)
        row += 1
