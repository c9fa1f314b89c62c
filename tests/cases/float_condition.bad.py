# expect: error non-affine-if line 22
"""The producer commits a tile only when `scale > 0`, the consumer waits for one only when
`scale >= 1`: for an integer the two agree, but scale is a float argument, and at scale = 0.5 the
producer commits tiles nobody waits for (and with the tests swapped, the consumer waits for tiles
never committed: a hang). The verifier models integers only, so a pipe event under a condition on
a float is refused at its line, not verified by reading the float as an integer."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N, scale: tl.float32):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, scale)), (consume, (kv, y_ptr, N, scale))],
                            [4], [232])


def produce(kv, x_ptr, N, scale):
    w = kv.writer()
    if scale > 0:
        for i in range(N):
            slot = w.acquire(i)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
            w.commit(i)


def consume(kv, y_ptr, N, scale):
    r = kv.reader()
    if scale >= 1:
        for i in range(N):
            res = r.wait(i)
            v = tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(i)
            tl.store(y_ptr + i * 64 + tl.arange(0, 64), v)
