# expect: error buffer-race line 30
"""A free shared buffer's pointer taken in the kernel body and handed to both partitions: the
producer clears it while the consumer reads it, with no barrier between them. Bound as a kernel
value, the pointer was read as an opaque integer and the race went unseen."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    scratch = tle.gpu.alloc([64], tl.int32)
    sp = tle.gpu.local_ptr(scratch)
    tle.gpu.warp_specialize([(produce, (kv, sp, x_ptr, N)), (consume, (kv, sp, x_ptr, N))],
                            [4], [232])


def produce(kv, sp, x_ptr, N):
    tl.store(sp, tl.zeros([64], tl.int32))
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, sp, x_ptr, N):
    bias = tl.load(sp)
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + bias)
