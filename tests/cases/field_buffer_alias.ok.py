# expect: ok
"""The pipe field's buffer handed to the producer in a tuple it never uses: the slot is cleared
through the slot of its acquire, inside the window."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    ring_buf = tle.gpu.alloc([2, 64], tl.int32)
    kv = tle.pipe(capacity=2, tile=ring_buf)
    tle.gpu.warp_specialize([(produce, (kv, (ring_buf,), x_ptr, N)), (consume, (kv, x_ptr, N))],
                            [4], [232])


def produce(kv, bufs, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.zeros([64], tl.int32))
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
