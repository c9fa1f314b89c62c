# expect: error wait-never-committed line 27
"""N is an i32: at N = -1 the consumer waits tile 0, which range(N) never produces (a hang); the
kernel states no domain, so negative values are checked."""

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
    r = kv.reader()
    if N != 0:
        res = r.wait(0)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(0)
        tl.store(x_ptr + tl.arange(0, 64), v)
    for t in range(1, N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v)
