# expect: ok
"""Two pipes taken in turn, written out: each iteration fills (drains) pipe a, then pipe b,
both at index t (element rows 2t and 2t + 1)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    a = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.int32))
    b = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (a, b, x_ptr, N)), (consume, (a, b, x_ptr, N))],
                            [4], [232])


def produce(a, b, x_ptr, N):
    wa, wb = a.writer(), b.writer()
    for t in range(N):
        slot = wa.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + 2 * t * 64 + tl.arange(0, 64)))
        wa.commit(t)
        slot = wb.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + (2 * t + 1) * 64 + tl.arange(0, 64)))
        wb.commit(t)


def consume(a, b, x_ptr, N):
    ra, rb = a.reader(), b.reader()
    for t in range(N):
        res = ra.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        ra.release(t)
        tl.store(x_ptr + 2 * t * 64 + tl.arange(0, 64), v + 1)
        res = rb.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        rb.release(t)
        tl.store(x_ptr + (2 * t + 1) * 64 + tl.arange(0, 64), v + 1)
