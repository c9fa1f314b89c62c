# expect: error bad-loop line 27
"""The consumer unrolls its loop with tl.static_range over N, a runtime kernel argument: Triton
unrolls tl.static_range at compile time and refuses a bound that is not a constexpr, so the kernel
cannot compile, whatever its protocol (the producer's and consumer's trip counts do agree)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for i in range(N):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for i in tl.static_range(0, N, 1):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
