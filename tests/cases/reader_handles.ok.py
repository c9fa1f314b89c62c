# expect: ok
"""Two handles of reader 'b' with the same view."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def views(x_ptr, N):
    kv = tle.pipe(capacity=2, readers=("a", "b"), k=tle.gpu.alloc([2, 64], tl.int32),
                  v=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (left, (kv, x_ptr, N)),
                             (right, (kv, x_ptr, N))], [4, 4], [232, 232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(x_ptr + tl.arange(0, 64)))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(t)


def left(kv, x_ptr, N):
    r = kv.reader("a")
    for t in range(N):
        res = r.wait(t)
        s = tl.load(tle.gpu.local_ptr(res.slot.k)) + tl.load(tle.gpu.local_ptr(res.slot.v))
        r.release(t)
        tl.store(x_ptr + 64 + tl.arange(0, 64), s)


def right(kv, x_ptr, N):
    r = kv.reader("b", fields=("k",))
    again = kv.reader("b", fields=("k",))
    for t in range(N):
        res = r.wait(t)
        s = tl.load(tle.gpu.local_ptr(res.slot.k))
        again.release(t)
        tl.store(x_ptr + 128 + tl.arange(0, 64), s)  # not the left's row (memory-race)
