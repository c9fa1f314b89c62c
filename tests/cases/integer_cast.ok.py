# expect: ok
"""The writer's loop bound and the reader's condition are casts of the argument N to tl.int32 and
tl.int64: the same integer on the GPU for every N in i32 (the values a verdict covers), so the
casts are the identity and the protocol is verified for every N."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N):
    tle.assume(0 <= N <= 1000)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for i in range(N.to(tl.int32)):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(kv, y_ptr, N):
    r = kv.reader()
    acc = tl.zeros([64], tl.float32)
    if N.to(tl.int64) >= 1:
        for i in range(N):
            res = r.wait(i)
            acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(i)
    tl.store(y_ptr + tl.arange(0, 64), acc)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"},
    "constexprs": {}, "num_warps": 4, "grid": (1,),
}
