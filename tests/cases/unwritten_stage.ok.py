# expect: ok
"""Capacity 2: the producer stores slot.v at t < 2, once on each stage, and the consumer loads it at
every t: each stage keeps its own copy of v, filled before any load of that stage (a tile written
once per stage and kept by the slot)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def kv_ring(k_ptr, v_ptr, out_ptr, N):
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, 64], tl.float32),
                  v=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, k_ptr, v_ptr, N)), (consume, (kv, out_ptr, N))],
                            [4], [232])


def produce(kv, k_ptr, v_ptr, N):
    offs = tl.arange(0, 64)
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * 64 + offs))
        if t < 2:
            tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * 64 + offs))
        w.commit(t)


def consume(kv, out_ptr, N):
    offs = tl.arange(0, 64)
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        k = tl.load(tle.gpu.local_ptr(res.slot.k))
        v = tl.load(tle.gpu.local_ptr(res.slot.v))
        r.release(t)
        tl.store(out_ptr + t * 64 + offs, k + v)
