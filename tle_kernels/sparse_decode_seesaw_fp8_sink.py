"""The FP8 sparse MLA decode of tle_kernels/sparse_decode_seesaw_fp8.py with FlashMLA's attn_sink
([h_q] fp32, natural log) applied in the consumers' epilogue.

The kernel is sparse_decode_seesaw_fp8.py's (its FP8 producer, imported; the same pipes, budgets
and persistent item loop) with the seesaw prefill's consumers at SINK = 1 (imported from
tle_kernels/sparse_mla_seesaw.py): each row's softmax denominator gets exp(attn_sink[h]), out =
acc / (l + exp2(sink * log2e - ref)), while lse stays that of the scores. A kernel of its own for
the prefill's reason (sparse_mla_seesaw_sink.py's docstring: a kernel constexpr would be one more
launch argument for every caller). Launch: tle_kernels/sparse_decode_seesaw_fp8_launch.py, when
attn_sink is given.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_decode_seesaw_fp8 import fp8_producer
from .sparse_mla_common import BK
from .sparse_mla_seesaw import consumer0, consumer1, seesaw_pipes


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_decode_seesaw_fp8_sink(q_ptr, kv8_ptr, kv32_ptr, kv16_ptr, idx_ptr, out_ptr,
                                  lse_ptr, max_logits_ptr, stride_q_s, stride_q_h, stride_blk,
                                  page, stride_idx_s, stride_o_s, stride_o_h, stride_l_s,
                                  n_tokens, sm_scale, n_items, n_hb, ROUNDS, attn_sink_ptr,
                                  n_heads, TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = TOPK // (2 * BK)                  # K-tile pairs per item

    # sparse_mla_seesaw's pipes, field for field (its consumers read them)
    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(fp8_producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv8_ptr,
                         kv32_ptr, kv16_ptr, stride_blk, page, idx_ptr, stride_idx_s, n_tokens,
                         n_items, n_hb, n_heads, ROUNDS, NP, BLOCK_H)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 1, 1)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 1, 1))],
        [4, 4],
        [216, 216])


DEFAULT_CONFIG = {
    # q [T, h_q, 576] bf16 (T = b * s_q query rows); the cache [num_blocks, page, 1, 656] bytes
    # passed three times, viewed as fp8 / fp32 / bf16; indices [T, topk] int32; out [T, h_q,
    # 512] bf16; lse / max_logits [T, h_q] fp32; attn_sink [h_q] fp32; last dims contiguous.
    # stride_blk in bytes.
    "signature": {
        "q_ptr": "*bf16", "kv8_ptr": "*fp8e4nv", "kv32_ptr": "*fp32", "kv16_ptr": "*bf16",
        "idx_ptr": "*i32", "out_ptr": "*bf16", "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_blk": "i64", "page": "i32",
        "stride_idx_s": "i32", "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "n_tokens": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "ROUNDS": "i32", "attn_sink_ptr": "*fp32", "n_heads": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of 2*BK = 128
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),
}
