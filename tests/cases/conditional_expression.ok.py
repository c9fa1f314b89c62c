# expect: ok
"""A conditional expression on a constexpr the launch binds (`1 if SKIP else 0`): read specialised
to it, only the operand Python evaluates exists, and both partitions skip the first row."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N, SKIP: tl.constexpr):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, SKIP)), (consume, (kv, x_ptr, N, SKIP))],
                            [4], [232])


def produce(kv, x_ptr, N, SKIP):
    first = 1 if SKIP else 0
    w = kv.writer()
    for t in range(first, N):
        slot = w.acquire(t - first)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t - first)


def consume(kv, x_ptr, N, SKIP):
    first = 1 if SKIP else 0
    r = kv.reader()
    for t in range(first, N):
        res = r.wait(t - first)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t - first)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*i32", "N": "i32"}, "constexprs": {"SKIP": 1},
                  "num_warps": 4, "grid": (1,)}
