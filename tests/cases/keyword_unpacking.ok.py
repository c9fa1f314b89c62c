# expect: ok
"""The keyword spelled out: the helper runs as Python calls it."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        fill(slot, x_ptr, t,
             late=0)
        w.commit(t)


def fill(slot, x_ptr, t, late=0):
    if late == 0:
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
