# expect: error unwritten-field line 37
"""Capacity 2: the producer stores slot.v only at t == 0 (stage 0) and the consumer loads it at
every t. Stage 1's copy of v is never written: the load at t = 1 finds uninitialised shared memory,
though some store of the kernel does fill v (on the other stage)."""

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
        if t == 0:
            tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * 64 + offs))
        w.commit(t)


def consume(kv, out_ptr, N):
    offs = tl.arange(0, 64)
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        k = tl.load(tle.gpu.local_ptr(res.slot.k))
        # stage 1's v was never stored
        v = tl.load(tle.gpu.local_ptr(res.slot.v))
        r.release(t)
        tl.store(out_ptr + t * 64 + offs, k + v)
