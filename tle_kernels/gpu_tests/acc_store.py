"""Stores of a wgmma accumulator tile (lowering/acc_store.py): O = A·B for one [64, 64] x [64, 128]
block, written as ``tl.store(o_ptr + OFF + rows[:, None] * LD + cols[None, :], acc.to(...))``.

The lowering turns that store into a quad transpose + 16-byte stores when the destination's element
is 16 bits wide; ``OFF`` (elements, a runtime integer) makes the rows start 2 bytes off a 16-byte
boundary when odd, which takes the asm's 2-byte fallback; an fp32 destination takes the plain
store. The producer stages A and B through a one-shot pipe. Inputs are small integers, so every
product and sum is exact in fp32 and in the 16-bit output: the check is element-exact."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BK = tl.constexpr(64)
BN = tl.constexpr(128)


@tle.jit(num_warps=4)
def acc_store(a_ptr, b_ptr, o_ptr, OFF, LD):
    ab = tle.pipe(capacity=1, one_shot=True,
                  a=tle.gpu.alloc([1, BM, BK], tl.bfloat16),
                  b=tle.gpu.alloc([1, BK, BN], tl.bfloat16))
    tle.gpu.warp_specialize([(stage_ab, (ab, a_ptr, b_ptr)),
                             (matmul_store, (ab, o_ptr, OFF, LD))],
                            [4], [232])


def stage_ab(ab, a_ptr, b_ptr):
    w = ab.writer()
    slot = w.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.a),
             tl.load(a_ptr + tl.arange(0, BM)[:, None] * BK + tl.arange(0, BK)[None, :]))
    tl.store(tle.gpu.local_ptr(slot.b),
             tl.load(b_ptr + tl.arange(0, BK)[:, None] * BN + tl.arange(0, BN)[None, :]))
    w.commit(0)


def matmul_store(ab, o_ptr, OFF, LD):
    r = ab.reader()
    res = r.wait(0)
    acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)), tl.load(tle.gpu.local_ptr(res.slot.b)))
    r.release(0)
    cols = tl.arange(0, BN)
    tl.store(o_ptr + OFF + tl.arange(0, BM)[:, None] * LD + cols[None, :], acc)  # cast on store


DEFAULT_CONFIG = {
    # a: [64, 64] bf16, b: [64, 128] bf16, o: at least OFF + 64 * LD elements (bf16, fp16 or fp32)
    "signature": {"a_ptr": "*bf16", "b_ptr": "*bf16", "o_ptr": "*bf16", "OFF": "i32", "LD": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
