# expect: error bad-assume line 15
"""The same protocol with M loaded from memory: no launch can check tle.assume(M >= 1), so the
verified domain would be a promise nothing keeps (M = 0 commits nothing and the first wait
hangs); the assumption is refused at its line."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    M = tl.load(x_ptr).to(tl.int32)
    tle.assume(M >= 1)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M)), (consume, (kv, y_ptr, M))], [4], [232])


def produce(kv, x_ptr, M):
    w = kv.writer()
    for i in range(M):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, M):
    r = kv.reader()
    res = r.wait(0)
    acc = tl.load(tle.gpu.local_ptr(res.slot.tile))
    r.release(0)
    for i in range(1, M):
        res = r.wait(i)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
    tl.store(y_ptr + tl.arange(0, 64), acc)
