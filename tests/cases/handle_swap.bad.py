# expect: error unsupported-control-flow line 21
"""Two pipes taken in turn by swapping their handles each iteration: pipe a gets indices 0, 2, 4
(one stage, one parity: stale reads) and pipe b 1, 3, 5. Built with the handles the loop starts
with, every event was a's and the kernel read as a plain ring."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    a = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.int32))
    b = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (a, b, x_ptr, N)), (consume, (a, b, x_ptr, N))],
                            [4], [232])


def produce(a, b, x_ptr, N):
    h, g = a.writer(), b.writer()
    for t in range(N):
        slot = h.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        h.commit(t)
        h, g = g, h


def consume(a, b, x_ptr, N):
    h, g = a.reader(), b.reader()
    for t in range(N):
        res = h.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        h.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
        h, g = g, h
