"""The seesaw SparseMLA prefill for d_qk = 512: rows without the RoPE tail (FlashMLA's "MODEL1"
layout: q [s_q, h_q, 512], kv [s_kv, 1, 512], QK over all 512 dims and V the same 512 dims).

The kernel is tle_kernels/sparse_mla_seesaw.py's: its producer and both consumers, imported and
run with ROPE = 0, which the frontend folds away while it builds the kernel (no tail gather, no q
tail in the consumers' registers, no tail dot). Its pipes are that kernel's without the ``tkv``
fields: the two K pieces that carried a tile's tail (kv0, kv1) now carry its half and its mask
only. Schedule, fill and release order, deadlock argument, persistent item loop (ROUNDS items per
program, pipes indexed ``r * NP + p``: read specialised to TOPK), launch and tail split are the
576 kernel's (its docstring).

Shared memory: q 65,536 B; tile k0 (kv0 + kv0r) and tile k1 (kv1 + kv1l) 32 KiB + 32 KiB + 64 B =
65,600 B each; prob0 and prob1 8,448 B each; max0 and max1 256 B each; 214,144 B in all, 16 KiB
less than with the tail. Registers: the 576 kernel's [224, 224] (the producer what is left), so
each consumer has the 16 registers of the q tail to spare. Neither is spent yet: a second buffer
for the late K pieces would need another 64 KiB.

Launch: tle_kernels/api.py runs it as impl "seesaw" for d_qk = 512 without attn_sink and
topk_length; with them, its variants run (sparse_mla_seesaw_d512_sink.py,
sparse_mla_seesaw_d512_topk_length.py), which declare the same pipes (``seesaw_d512_pipes``).
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import BK, D_HALF
from .sparse_mla_seesaw import consumer0, consumer1, producer


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw_d512(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                           stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                           stride_o_h, stride_l_s, s_kv, sm_scale, n_items, n_hb, ROUNDS,
                           n_heads, TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = (TOPK + 2 * BK - 1) // (2 * BK)   # K-tile pairs per item (the last one half
                                          # past topk when TOPK % 128 == 64)

    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_d512_pipes(BLOCK_H)

    # the partitions' ROPE = 0: rows have no RoPE tail (d_qk = 512); the consumers' SINK = 0: no
    # attn_sink (their sink_ptr, here lse_ptr / max_logits_ptr, is not read)
    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr, stride_idx_s, s_kv, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H,
                     0, TOPK)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, lse_ptr,
                      sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 0, 0)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s,
                      max_logits_ptr, sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 0,
                      0))],
        [4, 4],
        [224, 224])


def seesaw_d512_pipes(BLOCK_H: tl.constexpr):
    """sparse_mla_seesaw.seesaw_pipes without the RoPE tail fields (``tkv``), declared once for
    every seesaw kernel over 512-dim rows (this one, its attn_sink and topk_length variants):
    (q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1)."""
    q = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16))
    kv0 = tle.pipe(capacity=1,
                   kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   valid=tle.gpu.alloc([1, BK], tl.int8))
    kv0r = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                    kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16))
    kv1 = tle.pipe(capacity=1,
                   kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   valid=tle.gpu.alloc([1, BK], tl.int8))
    kv1l = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                    kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16))
    max0 = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer0 → 1
    max1 = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer1 → 0
    prob0 = tle.pipe(capacity=1, barrier="named",                                              # consumer0 → 1
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    prob1 = tle.pipe(capacity=1, barrier="named",                                              # consumer1 → 0
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    return q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1


DEFAULT_CONFIG = {
    # q [s_q, h_q, 512] bf16, kv [s_kv, 1, 512] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32; last dims contiguous.
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "ROUNDS": "i32", "n_heads": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of BK = 64
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),
}
