# expect: error missing-release line 28
"""The slots handed back in pairs after each odd tile (`if t % 2:`, read as `t % 2 != 0`), and
nothing after the loop: when N is odd, the last tile is never released."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    tle.assume(N >= 0)
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
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
        if t % 2:
            r.release(t - 1)
            r.release(t)
