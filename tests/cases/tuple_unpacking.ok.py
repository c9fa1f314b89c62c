# expect: ok
"""A handle and an offset kept in a tuple and unpacked (`r, first = pair`): the handle is the
reader's and the offset the integer it holds (the frontend refused to unpack a name holding a
tuple, saying the right side was no tuple)."""

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
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N):
    pair = (kv.reader(), 0)
    r, first = pair
    for t in range(N):
        res = r.wait(t + first)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t + first)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
