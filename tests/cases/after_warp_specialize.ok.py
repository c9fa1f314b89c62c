# expect: ok
"""The epilogue is the consumer's: it keeps the last tile's result and stores it once its loop is
done; the kernel body ends with warp_specialize (a docstring or `pass` after it runs nothing)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, out_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, out_ptr, N))],
                            [4], [232])
    pass


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, out_ptr, N):
    r = kv.reader()
    last = tl.zeros([64], tl.int32)
    for t in range(N):
        res = r.wait(t)
        last = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), last + 1)
    tl.store(out_ptr + tl.arange(0, 64), last)
