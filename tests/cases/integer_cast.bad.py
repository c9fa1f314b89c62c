# expect: error non-affine-loop line 22
"""The writer's loop bound is N.to(tl.int8): the GPU truncates N to 8 bits (N = 200 gives -56, so
the writer commits nothing and the reader's first wait hangs), which the verifier does not model;
the loop is refused at its line, the message naming the cast. M = N.to(tl.uint32) at kernel level
would be refused where it decides events too (its comparisons are unsigned on the GPU)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def tiles(x_ptr, y_ptr, N):
    tle.assume(0 <= N <= 1000)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    # the cast truncates: for N >= 128 this loop runs a different number of times than the reader's
    for i in range(N.to(tl.int8)):
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
