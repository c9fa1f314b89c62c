"""The persistent seesaw SparseMLA prefill with FlashMLA's attn_sink ([h_q] fp32, natural log).

tle_kernels/sparse_mla_seesaw.py's partitions, imported, with one change, which the consumers
make when their literal argument SINK is 1: each row's softmax denominator gets exp(attn_sink[h])
(``sparse_mla_common.sink_normalized``), so that out = Σ exp(s - lse')·v with lse' = log(exp(lse)
+ exp(sink)); lse and max_logits stay those of the scores (FlashMLA's semantics,
tle_kernels/reference.py). Everything else is the plain seesaw's: its producer, the consumers' pair
loop, the persistent item loop (ROUNDS items per program, pipes indexed ``r * NP + p``: read
specialised to TOPK), its pipes (``seesaw_pipes``), shared memory (230,528 B) and registers
([224, 224], the producer what is left); its docstring explains the schedule and the deadlock
argument, which hold here word for word.

With l the row sum relative to the reference max ref (log2 units: lse = (log2 l + ref)·ln 2),
out = acc / (l + exp2(sink·log2e - ref)): acc / l · 1 / (1 + exp(sink - lse)) without forming
exp(lse), as FlashMLA's epilogue does. A sink far above a row's scores makes exp2(...) inf and the
row 0, its limit; a -inf sink is no sink; a row with no valid index (l = 0) is 0 whatever the sink.

Why a kernel of its own rather than a constexpr of the plain seesaw: a kernel constexpr is a
launch argument every caller must pass (the plain seesaw is compiled by its callers and tests with
TOPK and BLOCK_H alone); the partitions' SINK is a literal in each kernel's warp_specialize list,
folded while the frontend builds the kernel, so the plain seesaw's partitions carry no sink code.
Launch: tle_kernels/sparse_mla_seesaw_sink_topk_launch.py (the plain seesaw's persistent launch
with the sink after ROUNDS).
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import BK
from .sparse_mla_seesaw import consumer0, consumer1, producer, seesaw_pipes


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw_sink(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                           stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                           stride_o_h, stride_l_s, s_kv, sm_scale, n_items, n_hb, ROUNDS,
                           attn_sink_ptr, n_heads, TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = (TOPK + 2 * BK - 1) // (2 * BK)   # K-tile pairs per item (the last one half
                                          # past topk when TOPK % 128 == 64)

    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr, stride_idx_s, s_kv, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H,
                     1, TOPK)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 1, 1)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 1, 1))],
        [4, 4],
        [224, 224])


DEFAULT_CONFIG = {
    # q [s_q, h_q, 576] bf16, kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32, attn_sink [h_q] fp32;
    # last dims contiguous.
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32", "ROUNDS": "i32",
        "attn_sink_ptr": "*fp32", "n_heads": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of BK = 64
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),
}
