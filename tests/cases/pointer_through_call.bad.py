# expect: error access-outside-window line 24
"""A slot pointer passed through tl.multiple_of and kept: the store through it after the commit
writes the slot while the reader may be reading it. The pointer a call gives back is still a
view of the slot (read as a plain value, the late store was no slot write at all)."""

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
        p = tl.multiple_of(tle.gpu.local_ptr(slot.tile), 16)
        tl.store(p, tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)
        tl.store(p, tl.zeros([64], tl.int32))


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
