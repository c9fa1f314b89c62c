"""The input of several FileCheck files: a producer fills a capacity-3 pipe with N tiles of x,
a consumer sums them into out; the producer closes the pipe after the last tile."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, out_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=3, tile=tle.gpu.alloc([3, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, out_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)
    w.close(N)


def consume(kv, out_ptr, N):
    r = kv.reader()
    acc = tl.zeros([64], tl.float32)
    for t in range(N):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    r.wait(N)
    r.release(N)
    tl.store(out_ptr + tl.arange(0, 64), acc)
