"""The persistent seesaw SparseMLA prefill at d_qk = 512 with FlashMLA's topk_length ([s_q]
int32), and optionally its attn_sink (constexpr HAS_SINK): tle_kernels/
sparse_mla_seesaw_topk_length.py for rows without the RoPE tail.

That kernel's partitions, imported and run with the literal argument ROPE = 0, which the frontend
folds while it builds the kernel: the producer gathers no tail, the consumers keep no q tail in
registers and issue no tail dot. Its pipes are the d512 seesaw's (``seesaw_d512_pipes``: no
``tkv`` fields, 214,144 B), its registers [224, 224]. Everything else is the 576 kernel's, word for
word: each program walks the flat sequence of its items' K-tile pairs with one loop over NP (the
sum of its items' pair counts, computed here from topk_length before ``warp_specialize``; one
opaque param, proved for every value), a row runs only max(1, ceil(n / 128)) pairs, slots past
its length are never read, and with HAS_SINK the epilogue adds exp(attn_sink[h]) to each row's
denominator (lse and max_logits stay the scores').

Launch: tle_kernels/sparse_mla_seesaw_sink_topk_launch.py, as the 576 kernel: a partial last
round runs as topk pieces of this kernel without the sink, each with its own length, and the
merge applies the sink.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_seesaw_d512 import seesaw_d512_pipes
from .sparse_mla_seesaw_topk_length import consumer0, consumer1, producer, walk_start


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw_d512_topk_length(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                                       stride_q_s, stride_q_h, stride_kv_s, stride_idx_s,
                                       stride_o_s, stride_o_h, stride_l_s, s_kv, sm_scale,
                                       n_items, n_hb, attn_sink_ptr, topk_length_ptr, n_heads,
                                       TOPK: tl.constexpr, BLOCK_H: tl.constexpr,
                                       HAS_SINK: tl.constexpr):
    # NP: one opaque value for the verifier, read once and shared by every partition
    NP, n0, left0 = walk_start(topk_length_ptr, n_items, n_hb, TOPK)

    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_d512_pipes(BLOCK_H)

    # the partitions' ROPE = 0: rows have no RoPE tail (d_qk = 512); q_div = 1: this kernel's
    # tail-split pieces run over a copy of q per piece (api.shares_q)
    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr, stride_idx_s, s_kv, topk_length_ptr, n_items, n_hb, n_heads, 1,
                     NP, n0, left0, TOPK, BLOCK_H, 0)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, attn_sink_ptr,
                      topk_length_ptr, sm_scale, n_items, n_hb, n_heads, 1, NP, left0, TOPK,
                      BLOCK_H, 0,
                      HAS_SINK)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s, attn_sink_ptr,
                      topk_length_ptr, sm_scale, n_items, n_hb, n_heads, 1, NP, left0, TOPK,
                      BLOCK_H, 0,
                      HAS_SINK))],
        [4, 4],
        [224, 224])


DEFAULT_CONFIG = {
    # q [s_q, h_q, 512] bf16, kv [s_kv, 1, 512] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32, attn_sink [h_q] fp32 (any
    # fp32 tensor when HAS_SINK is 0: not read), topk_length [s_q] int32; last dims contiguous.
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "attn_sink_ptr": "*fp32", "topk_length_ptr": "*i32", "n_heads": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr", "HAS_SINK": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64, "HAS_SINK": 1},  # TOPK a multiple of 64
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),           # min(items, SMs) persistent programs (api.launch_args)
}
