# expect: error access-outside-window line 35
"""The K tile converted with .to() before the release, the dot after it: the lowering feeds the
wgmma from the slot in shared memory through the conversion, so the dot reads the slot after
its release (read as a register value, the conversion hid the read)."""

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
        k = tl.load(tle.gpu.local_ptr(res.slot.k)).to(tl.bfloat16)
        r.release(t)
        s = tl.dot(q, k)
        tl.store(s_ptr + t * 4096 + offs, s)
