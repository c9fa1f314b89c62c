"""The input of the TMA FileCheck files: a producer TMA-copies [64, BLOCK_N] bf16 tiles of a
tensor descriptor into a capacity-2 pipe (tle.gpu.tma_load), a consumer stores each tile. The
field's shape names the constexpr BLOCK_N, so its bytes are known once DEFAULT_CONFIG binds it."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)


@tle.jit
def tiles(x_desc, out_ptr, N, BLOCK_N: tl.constexpr):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BLOCK_N], tl.bfloat16))
    tle.gpu.warp_specialize([(produce, (kv, x_desc, N)), (consume, (kv, out_ptr, N, BLOCK_N))],
                            [4], [232])


def produce(kv, x_desc, N):
    w = kv.writer()
    for i in range(N):
        slot = w.acquire(i)
        tle.gpu.tma_load(slot.tile, x_desc, [i * BM, 0])
        w.commit(i)


def consume(kv, out_ptr, N, BLOCK_N):
    r = kv.reader()
    for i in range(N):
        res = r.wait(i)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(out_ptr + (i * BM + tl.arange(0, BM))[:, None] * BLOCK_N
                 + tl.arange(0, BLOCK_N)[None, :], t)


DEFAULT_CONFIG = {"signature": {"x_desc": "tensordesc<bf16[64, 128]>", "out_ptr": "*bf16",
                                "N": "i32", "BLOCK_N": "constexpr"},
                  "constexprs": {"BLOCK_N": 128}, "num_warps": 4}
