"""The persistent seesaw SparseMLA prefill at d_qk = 512 with FlashMLA's attn_sink ([h_q] fp32,
natural log): tle_kernels/sparse_mla_seesaw_sink.py for rows without the RoPE tail.

tle_kernels/sparse_mla_seesaw.py's partitions, imported and run with the literal arguments
ROPE = 0 (no tail gather, no q tail in the consumers' registers, no tail dot: the d_qk = 512
kernel's, tle_kernels/sparse_mla_seesaw_d512.py) and SINK = 1 (each row's softmax denominator
gets exp(attn_sink[h]): the attn_sink kernel's epilogue, ``sparse_mla_common.sink_normalized``);
the frontend folds both while it builds the kernel. Its pipes are the d512 kernel's
(``seesaw_d512_pipes``: no ``tkv`` fields, 214,144 B), its registers [224, 224]. Schedule,
deadlock argument, persistent item loop (ROUNDS items per program, pipes indexed ``r * NP + p``:
read specialised to TOPK) and the sink's semantics (lse and max_logits stay the scores') are
those kernels' (their docstrings).

Launch: tle_kernels/sparse_mla_seesaw_sink_topk_launch.py, as the 576 attn_sink kernel: the
plain persistent launch with the sink after ROUNDS; a partial last round runs as pieces of the
d512 kernel and the merge applies the sink once.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import BK
from .sparse_mla_seesaw import consumer0, consumer1, producer
from .sparse_mla_seesaw_d512 import seesaw_d512_pipes


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw_d512_sink(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                                stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                                stride_o_h, stride_l_s, s_kv, sm_scale, n_items, n_hb, ROUNDS,
                                attn_sink_ptr, n_heads, TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = (TOPK + 2 * BK - 1) // (2 * BK)   # K-tile pairs per item (the last one half
                                          # past topk when TOPK % 128 == 64)

    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_d512_pipes(BLOCK_H)

    # the partitions' ROPE = 0: rows have no RoPE tail (d_qk = 512); the consumers' SINK = 1
    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr, stride_idx_s, s_kv, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H,
                     0, TOPK)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 0, 1)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 0, 1))],
        [4, 4],
        [224, 224])


DEFAULT_CONFIG = {
    # q [s_q, h_q, 512] bf16, kv [s_kv, 1, 512] bf16, indices [s_q, 1, topk] int32,
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
