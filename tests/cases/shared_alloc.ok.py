# expect: ok
"""Each pipe field has its own allocation."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def two(x_ptr, N):
    a = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.int32))
    b = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (a, b, x_ptr, N)), (consume, (a, b, x_ptr, N))], [4], [232])


def produce(a, b, x_ptr, N):
    wa = a.writer()
    wb = b.writer()
    for t in range(N):
        slot = wa.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        wa.commit(t)
        slot = wb.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        wb.commit(t)


def consume(a, b, x_ptr, N):
    ra = a.reader()
    rb = b.reader()
    for t in range(N):
        res = ra.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        ra.release(t)
        res = rb.wait(t)
        v += tl.load(tle.gpu.local_ptr(res.slot.tile))
        rb.release(t)
        tl.store(x_ptr + 64 + tl.arange(0, 64), v)
