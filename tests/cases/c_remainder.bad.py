# expect: error wait-never-committed line 29
"""t is a runtime loop variable: Triton computes t % 2 with C's remainder, -1 for odd t < 0, so the
producer skips t = -3 and -1 and indices 1 and 3 are never committed (Python's % would take them)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(-4, N):
        if t % 2 == 1:
            slot = w.acquire(t + 4)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
            w.commit(t + 4)


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(N + 4):
        if t % 2 == 1:
            res = r.wait(t)
            v = tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(t)
            tl.store(x_ptr + t * 64 + tl.arange(0, 64), v)
