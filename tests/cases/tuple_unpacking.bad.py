# expect: error wait-never-committed line 29
"""A handle and an offset kept in a tuple and unpacked (`r, first = pair`): the offset is 1, so
the consumer waits index t + 1 where the producer commits t. Read through the tuple, the wrong
offset is seen (the frontend refused to unpack it, saying the right side was no tuple)."""

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
    pair = (kv.reader(), 1)
    r, first = pair
    for t in range(N):
        res = r.wait(t + first)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t + first)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
