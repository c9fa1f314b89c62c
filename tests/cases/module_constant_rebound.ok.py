# expect: ok
"""A module constant rebound by an augmented assignment, read with the value Python gives it
(FIRST = 1): both partitions start at tile FIRST, the pipe at index 0."""

import triton.language as tl

import tle_compiler as tle

FIRST = 0


@tle.jit
def ring(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(FIRST, N):
        slot = w.acquire(t - FIRST)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t - FIRST)


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(FIRST, N):
        res = r.wait(t - FIRST)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t - FIRST)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)


FIRST += 1
