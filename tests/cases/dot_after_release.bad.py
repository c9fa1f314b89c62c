# expect: error access-outside-window line 34
"""The tile is loaded before the release, but the dot comes after it: the lowering feeds wgmma
straight from the slot's shared memory at the dot, so the slot is read after it was handed back."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def qk(q_ptr, k_ptr, s_ptr, N):
    kv = tle.pipe(capacity=2, k=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, k_ptr, N)), (consume, (kv, q_ptr, s_ptr, N))],
                            [4], [232])


def produce(kv, k_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * 4096 + offs))
        w.commit(t)


def consume(kv, q_ptr, s_ptr, N):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    q = tl.load(q_ptr + offs)
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        k = tl.load(tle.gpu.local_ptr(res.slot.k))
        r.release(t)
        s = tl.dot(q, tl.trans(k))
        tl.store(s_ptr + t * 4096 + offs, s)
