"""The split FP8 sparse MLA decode of tle_kernels/sparse_decode_split_fp8.py with FlashMLA's
attn_sink ([h_q] fp32, natural log): each row's softmax denominator gets exp(attn_sink[h]), out =
acc / (l + exp2(sink·log2e - m)), while lse (and max_logits) stay those of the scores.

Its producer and right warp group are the split kernel's (imported); only the left changes. The
left already hands the right its running row sum in the prob slot (``sum_exp``) with every tile,
and the right divides its half by the last one it read. Here the left hands over that sum with
the sink's term added, l_i + exp2(sink·log2e - m_use) relative to the same reference max as
l_i, and divides its own half by the same value (``sink_normalized``): after an item's last tile
both halves are scaled by one factor, the right with no code of its own, no extra shared memory
and no extra pipe field. The left keeps the plain sum l_i for lse. Per tile that costs the left
one exp2 and one add per row and a load of its block's 64 sinks (256 B, cached), issued before
the tile's S so that its latency hides behind the wgmmas: holding the sinks in registers across
the tile loop instead (two per thread) makes ptxas spill 24 bytes (its report for the kernel).

The reference max moves while an item's tiles go by, so each tile's published sum carries the
sink's term relative to that tile's max: only the last one is used, and it is the final one.
Rows: an empty row (no valid index) has acc 0 and l_i 0, so its out is 0 whatever the sink (the
left's ``sink_normalized`` gives 0 for l_i == 0; the right divides 0 by exp2(sink·log2e): 0,
also for a -inf sink, where ``normalized`` takes the 0 denominator as an empty row, and for a
+inf one, 0·(1/inf)) and its lse is +inf; a +inf sink zeroes a row, a -inf one changes nothing;
the sink of a row past n_heads is not read (loaded masked) and its outputs are not stored.

A kernel of its own, not a constexpr of the split kernel: its left partition takes one more
argument (the sink pointer), which would change the plain kernel's generated code, and a new
constexpr would be one more launch argument for every caller of it. Shared memory and registers
are the split kernel's (230,016 B; [192, 160] for the workers). Launch:
tle_kernels/sparse_decode_split_fp8_launch.py, when attn_sink is given.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_decode_split_fp8 import (item_of, right, split_fp8_producer, split_pipes,
                                      tile_scores)
from .sparse_mla_common import (BK, D_HALF, LN2, LOG2E, head0_of, head_index,
                                head_rows, lse_of, shift_of, sink_normalized, token_of)


@tle.jit(num_warps=4)
def sparse_decode_split_fp8_sink(q_ptr, q_desc, q_tail_desc, kv8_ptr, kv32_ptr, kv16_ptr,
                                 idx_ptr, out_ptr, lse_ptr, max_logits_ptr, stride_q_s,
                                 stride_q_h, q_div, stride_blk, page, stride_idx_s, stride_o_s,
                                 stride_o_h, stride_l_s, n_tokens, sm_scale, n_items, n_hb,
                                 ROUNDS, attn_sink_ptr, n_heads, TOPK: tl.constexpr,
                                 BLOCK_H: tl.constexpr, QTMA: tl.constexpr):
    NT = TOPK // BK                        # K tiles per item

    # sparse_decode_split_fp8's pipes, field for field (its producer and right read them)
    q, kv, prob = split_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(split_fp8_producer, (q, kv, q_ptr, q_desc, q_tail_desc, stride_q_s, stride_q_h, q_div,
                               kv8_ptr, kv32_ptr, kv16_ptr, stride_blk, page, idx_ptr,
                               stride_idx_s, n_tokens, n_items, n_hb, n_heads, ROUNDS, NT,
                               BLOCK_H, QTMA)),
         (left, (q, kv, prob, out_ptr, stride_o_s, stride_o_h, lse_ptr, max_logits_ptr,
                 stride_l_s, attn_sink_ptr, sm_scale, n_items, n_hb, n_heads, ROUNDS, NT,
                 BLOCK_H)),
         (right, (kv, prob, out_ptr, stride_o_s, stride_o_h, n_items, n_hb, n_heads, ROUNDS, NT,
                  BLOCK_H))],
        [4, 4],
        [192, 160])


def left(q, kv, prob, out_ptr, stride_o_s, stride_o_h, lse_ptr, ml_ptr, stride_l_s, sink_ptr,
         sm_scale, n_items, n_hb, n_heads, ROUNDS, NT, BLOCK_H: tl.constexpr):
    """sparse_decode_split_fp8's left with the sink's term in the denominator it hands the right
    (``sum_exp``) and divides its own half by; lse and max_logits are the scores'."""
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader()
    kr = kv.reader("left")
    pw = prob.writer()
    for r in range(ROUNDS):
        item = item_of(r)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        qres = qr.wait(r)
        m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)  # running row max (log2 units)
        l_i = tl.zeros([BLOCK_H], tl.float32)                 # row sum of exp2(s - m_i)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256], unnormalised
        for k in range(NT):
            g = r * NT + k
            kres = kr.wait(g)
            # the block's sinks in log2 units (a row past the real heads: 0, never stored)
            sink_t = tl.load(sink_ptr + head_index(h0, n_heads, BLOCK_H),
                             mask=head_rows(h0, n_heads, BLOCK_H), other=0.0) * LOG2E
            s = tile_scores(qres, kres)

            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            m_use = shift_of(m_new)      # 0 while every index so far is invalid (no NaN)
            alpha = tl.exp2(m_i - m_use)
            p = tl.exp2(s * qk_scale - m_use[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            m_i = m_new
            p16 = p.to(tl.bfloat16)

            # published before the left's own P·V_L, so the right's P·V_R overlaps it; the sum
            # with the sink's term relative to this tile's reference (the right uses the last)
            pslot = pw.acquire(g)
            tl.store(tle.gpu.local_ptr(pslot.alpha), alpha)
            tl.store(tle.gpu.local_ptr(pslot.probs), p16)
            tl.store(tle.gpu.local_ptr(pslot.sum_exp), l_i + tl.exp2(sink_t - m_use))
            pw.commit(g)

            acc = tle.gpu.scale_rows(acc, alpha)
            acc = tl.dot(p16, tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), acc)
            kr.release(g)  # after P·V_L retired (sparse_decode_split_fp8's docstring says why)
        # the item's last S is done: the producer may load the next Q (released after the last
        # tile here, not right after its S as sparse_decode_split_fp8's left does: in this left
        # that costs registers, and ptxas spills)
        qr.release(r)

        # the denominator the right got with the last tile; a row with no valid index has acc 0
        # (out 0 whatever the sink), lse +inf and max_logits -inf
        out = sink_normalized(acc, l_i, shift_of(m_i), sink_ptr, h0, n_heads, BLOCK_H)
        if h0 + BLOCK_H <= n_heads:  # a whole block of real heads: unmasked (16-byte) stores
            tl.store(out_ptr + pid_s * stride_o_s + (h0 + offs_h)[:, None] * stride_o_h
                     + offs_d[None, :], out)
            tl.store(lse_ptr + pid_s * stride_l_s + h0 + offs_h, lse_of(l_i, m_i))
            tl.store(ml_ptr + pid_s * stride_l_s + h0 + offs_h, m_i * LN2)
        else:  # the last block of an h_q % BLOCK_H != 0: its rows past h_q store nothing
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h
                     + offs_d[None, :], out, mask=real[:, None])
            tl.store(lse_ptr + pid_s * stride_l_s + heads, lse_of(l_i, m_i), mask=real)
            tl.store(ml_ptr + pid_s * stride_l_s + heads, m_i * LN2, mask=real)


DEFAULT_CONFIG = {
    # sparse_decode_split_fp8's arguments and attn_sink [h_q] fp32 (16-byte aligned): q [T, h_q,
    # 576] bf16 (T = b * s_q query rows); the cache [num_blocks, page, 1, 656] bytes passed three
    # times, viewed as fp8 / fp32 / bf16; indices [T, topk] int32; out [T, h_q, 512] bf16; lse /
    # max_logits [T, h_q] fp32; last dims contiguous. stride_blk in bytes. n_heads = h_q.
    "signature": {
        "q_ptr": "*bf16", "q_desc": "tensordesc<bf16[64, 256]>",
        "q_tail_desc": "tensordesc<bf16[64, 64]>", "kv8_ptr": "*fp8e4nv", "kv32_ptr": "*fp32",
        "kv16_ptr": "*bf16",
        "idx_ptr": "*i32", "out_ptr": "*bf16", "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "q_div": "i32", "stride_blk": "i64",
        "page": "i32",
        "stride_idx_s": "i32", "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "n_tokens": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "ROUNDS": "i32", "attn_sink_ptr": "*fp32", "n_heads": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr", "QTMA": "constexpr",
    },
    # TOPK must be a multiple of BK = 64; QTMA as sparse_decode_split_fp8's
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64, "QTMA": 0},
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),
}
