"""The DeepSeek-V3.2 sparse MLA decode over an FP8 paged cache, as the seesaw SparseMLA schedule:
the seesaw prefill's two consumers (imported from tle_kernels/sparse_mla_seesaw.py, unchanged)
fed by a producer that gathers FP8 tokens and dequantizes them to bf16 in registers.

The decode is the prefill with another K source. Each (request b, query row j) is one query token
t = b * s_q + j of h_q heads with its own topk indices; token = block * page_block_size + offset
names a cache token, and an index < 0 or >= num_blocks * page_block_size is invalid (skipped,
never read), the prefill's rule with s_kv = the cache's token count. So the pipes, the slot
layout, the consumers' pair loop, the one-directional max exchange, the lazy rescale, the fill
and release order and the deadlock argument are sparse_mla_seesaw.py's word for word (its
docstring), as are shared memory (230,528 B) and the persistent item loop (ROUNDS items per
program, pipes indexed ``r * NP + p``: read specialised to TOPK).

What differs is the producer. A cache token is 656 bytes (tle_kernels/fp8_kvcache.py): 512
float8_e4m3fn NoPE values, 4 fp32 scales (one per 128 values) at byte 512, 64 bf16 RoPE values at
byte 528. For each K piece the producer
- computes the byte offset of each of the tile's 64 tokens, (token // page) * block stride +
  (token % page) * 656 (any page size, FlashMLA's padded block stride too);
- fills the RoPE field ``tkv`` [64, 64] bf16 by a cp.async gather straight from the cache (those
  bytes are bf16 already: no registers);
- fills a NoPE half (``kv_l``: dims 0..255, scales 0 and 1; ``kv_r``: dims 256..511, scales 2
  and 3) [64, 256] by a register load of the FP8 bytes (``fp8_half``, issued before the slot's
  acquire, so the load is in flight while the producer waits for the slot), ``fp8 * scale`` in
  fp32 rounded to bf16 (``dequantized``: exactly fp8_kvcache.dequantize's value), and a register
  store into the slot; rows of invalid indices are 0 (their loads are masked), as cp.async's
  zero-fill makes them in the prefill;
- stores the validity mask, as the prefill's producer does.

The cache comes in as three pointers to the same bytes (the launcher passes one tensor viewed as
float8_e4m3fn, float32 and bfloat16): the NoPE bytes are read through the FP8 pointer, the scales
through the fp32 one and the RoPE values through the bf16 one, each at its byte offset divided by
the element size (656 and the block stride are multiples of 16 bytes), so the kernel needs no
pointer casts.

Registers: a slot field is stored whole (the lowering stores a register tile into a whole
field, not into a part of one), so a NoPE half is one elementwise expression over the [64, 256]
tile: 128 FP8 bytes per thread (32 registers). With the prefill's budgets ([224, 224], the
producer 56 registers) that spilled; with FlashMLA's [216, 216] the producer gets 72 (the CTA's
pool is 3 x 168 per thread). Within them the producer keeps its latency chain short:
- a piece's bytes are loaded before its acquire (in flight while the producer waits);
- the next pair's indices are loaded one pair ahead, so no byte load waits for an index load;
- the RoPE gather is issued right after the acquire, before the NoPE store;
- the FP8 tile loads as 16-byte vectors (the lowering's layout for 1-byte elements: 8 loads per
  thread per piece, 2 rows per thread).
Keeping a second piece's bytes in flight, as FlashMLA's dequantizing warp group does with 152
registers, spills about 1 KB at any budget the consumers allow (they spill below 216), and ran
at half the speed.

Launch: tle_kernels/sparse_decode_seesaw_fp8_launch.py.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import (BK, D_HALF, D_TAIL, head0_of, head_index, head_rows,
                                index_valid, token_of)
from .sparse_mla_seesaw import consumer0, consumer1, seesaw_pipes

TOKEN_BYTES = tl.constexpr(656)   # one cache token: 512 fp8, 4 fp32 scales, 64 bf16
SCALE_BYTE = tl.constexpr(512)    # where a token's 4 fp32 scales start
ROPE_BYTE = tl.constexpr(528)     # where a token's 64 bf16 RoPE values start
SCALE_DIMS = tl.constexpr(128)    # NoPE dims per scale


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_decode_seesaw_fp8(q_ptr, kv8_ptr, kv32_ptr, kv16_ptr, idx_ptr, out_ptr, lse_ptr,
                             max_logits_ptr, stride_q_s, stride_q_h, stride_blk, page,
                             stride_idx_s, stride_o_s, stride_o_h, stride_l_s, n_tokens,
                             sm_scale, n_items, n_hb, ROUNDS, n_heads,
                             TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = TOPK // (2 * BK)                  # K-tile pairs per item

    # sparse_mla_seesaw's pipes, field for field (its consumers read them)
    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(fp8_producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv8_ptr,
                         kv32_ptr, kv16_ptr, stride_blk, page, idx_ptr, stride_idx_s, n_tokens,
                         n_items, n_hb, n_heads, ROUNDS, NP, BLOCK_H)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, lse_ptr,
                      sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 1, 0)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s,
                      max_logits_ptr, sm_scale, n_items, n_hb, n_heads, 1, ROUNDS, NP, BLOCK_H, 1,
                      0))],
        [4, 4],
        [216, 216])


def token_bytes(t, valid, stride_blk, page):
    """Byte offsets [BK] (int64) of the cache tokens of indices ``t``: block t // page, offset
    t % page; an invalid index is clamped to token 0 so that no address is formed past the cache
    (its loads are masked)."""
    tok = tl.where(valid, t, 0)
    return (tok // page).to(tl.int64) * stride_blk + (tok % page).to(tl.int64) * TOKEN_BYTES


def fp8_half(kv8_ptr, kv32_ptr, off, valid, HALF: tl.constexpr):
    """The raw bytes of NoPE dims [HALF * 256, HALF * 256 + 256) of the tokens at byte offsets
    ``off``, as (fp8 [BK, 256], the fp32 scales of its two 128-dim groups, [BK] each); 0 for
    rows of invalid indices (masked loads)."""
    offs_d = tl.arange(0, D_HALF)
    raw = tl.load(kv8_ptr + off[:, None] + HALF * D_HALF + offs_d[None, :], mask=valid[:, None],
                  other=0.0)
    scales = kv32_ptr + (off + SCALE_BYTE) // 4 + 2 * HALF
    lo = tl.load(scales, mask=valid, other=0.0)
    hi = tl.load(scales + 1, mask=valid, other=0.0)
    return raw, lo, hi


def dequantized(raw, lo, hi):
    """bf16 [BK, 256] of ``fp8_half``'s values: bf16(fp8 * scale) with the scale of each value's
    128-dim group (exactly fp8_kvcache.dequantize's value: the product in fp32)."""
    offs_d = tl.arange(0, D_HALF)
    scale = tl.where(offs_d[None, :] < SCALE_DIMS, lo[:, None], hi[:, None])
    return (raw.to(tl.float32) * scale).to(tl.bfloat16)


def fp8_producer(q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv8_ptr, kv32_ptr,
                 kv16_ptr, stride_blk, page, idx_ptr, stride_idx_s, n_tokens, n_items, n_hb,
                 n_heads, ROUNDS, NP, BLOCK_H: tl.constexpr):
    """sparse_mla_seesaw's producer with FP8 tokens: the same pieces in the same order (Q, rows
    past the real heads as zeros, then per pair kv0, kv1, kv0r, kv1l), the NoPE halves
    dequantized in registers, the RoPE tails gathered by cp.async from the cache's bf16 bytes."""
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    qw = q.writer()
    w0 = kv0.writer()
    w0r = kv0r.writer()
    w1 = kv1.writer()
    w1l = kv1l.writer()
    for r in range(ROUNDS):
        # this program's item of round r; past the last item, the last item again (its outputs
        # are written twice with the same values)
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        q_rows = (q_ptr + pid_s * stride_q_s
                  + head_index(h0, n_heads, BLOCK_H)[:, None] * stride_q_h)
        idx_row = idx_ptr + pid_s * stride_idx_s
        real = head_rows(h0, n_heads, BLOCK_H)[:, None]
        slot = qw.acquire(r)
        tl.store(tle.gpu.local_ptr(slot.q_l),
                 tl.load(q_rows + offs_d[None, :], mask=real, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.q_r),
                 tl.load(q_rows + D_HALF + offs_d[None, :], mask=real, other=0.0))
        qw.commit(r)
        # the first pair's indices; each pair then loads the next pair's (clamped to the last:
        # the row's indices end there), so no piece waits for an index load before its bytes
        tn0 = tl.load(idx_row + offs_k)
        tn1 = tl.load(idx_row + BK + offs_k)
        for p in range(NP):
            g = r * NP + p
            t0 = tn0
            t1 = tn1
            pn = tl.minimum(p + 1, NP - 1)
            tn0 = tl.load(idx_row + (2 * pn) * BK + offs_k)
            tn1 = tl.load(idx_row + (2 * pn + 1) * BK + offs_k)
            # Each piece's FP8 bytes and scales are loaded before its acquire: in flight while
            # the producer waits for the slot. The RoPE gather (cp.async) is issued right after
            # the acquire, so it completes while the NoPE half is dequantized and stored.
            valid0 = index_valid(t0, n_tokens)
            off0 = token_bytes(t0, valid0, stride_blk, page)
            raw, lo, hi = fp8_half(kv8_ptr, kv32_ptr, off0, valid0, 0)
            slot = w0.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.tkv),
                     tl.load(kv16_ptr + ((off0 + ROPE_BYTE) // 2)[:, None] + offs_t[None, :],
                             mask=valid0[:, None], other=0.0))
            tl.store(tle.gpu.local_ptr(slot.kv_l), dequantized(raw, lo, hi))
            tl.store(tle.gpu.local_ptr(slot.valid), valid0.to(tl.int8))
            w0.commit(g)

            valid1 = index_valid(t1, n_tokens)
            off1 = token_bytes(t1, valid1, stride_blk, page)
            raw, lo, hi = fp8_half(kv8_ptr, kv32_ptr, off1, valid1, 1)
            slot = w1.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.tkv),
                     tl.load(kv16_ptr + ((off1 + ROPE_BYTE) // 2)[:, None] + offs_t[None, :],
                             mask=valid1[:, None], other=0.0))
            tl.store(tle.gpu.local_ptr(slot.kv_r), dequantized(raw, lo, hi))
            tl.store(tle.gpu.local_ptr(slot.valid), valid1.to(tl.int8))
            w1.commit(g)

            # the second halves read their tile's indices again (an L1 hit) rather than keeping
            # both tiles' offsets live across the pair (fewer registers in the producer)
            t0r = tl.load(idx_row + (2 * p) * BK + offs_k)
            valid0r = index_valid(t0r, n_tokens)
            off0r = token_bytes(t0r, valid0r, stride_blk, page)
            raw, lo, hi = fp8_half(kv8_ptr, kv32_ptr, off0r, valid0r, 1)
            slot = w0r.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.kv_r), dequantized(raw, lo, hi))
            w0r.commit(g)

            t1l = tl.load(idx_row + (2 * p + 1) * BK + offs_k)
            valid1l = index_valid(t1l, n_tokens)
            off1l = token_bytes(t1l, valid1l, stride_blk, page)
            raw, lo, hi = fp8_half(kv8_ptr, kv32_ptr, off1l, valid1l, 0)
            slot = w1l.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.kv_l), dequantized(raw, lo, hi))
            w1l.commit(g)

DEFAULT_CONFIG = {
    # q [T, h_q, 576] bf16 (T = b * s_q query rows); the cache [num_blocks, page, 1, 656] bytes
    # passed three times, viewed as fp8 / fp32 / bf16; indices [T, topk] int32; out [T, h_q,
    # 512] bf16; lse / max_logits [T, h_q] fp32; last dims contiguous. stride_blk in bytes.
    # n_heads = h_q (any count: n_hb = ceil(h_q / BLOCK_H) head blocks, the last one masked).
    "signature": {
        "q_ptr": "*bf16", "kv8_ptr": "*fp8e4nv", "kv32_ptr": "*fp32", "kv16_ptr": "*bf16",
        "idx_ptr": "*i32", "out_ptr": "*bf16", "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_blk": "i64", "page": "i32",
        "stride_idx_s": "i32", "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "n_tokens": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "ROUNDS": "i32", "n_heads": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of 2*BK = 128
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),
}
