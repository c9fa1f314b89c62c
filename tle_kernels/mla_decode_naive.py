"""Naive Triton dense MLA decode: the baseline the TLE decode kernels are measured against.

Plain ``@triton.jit``, no warp specialisation. One program per (request, kv head, block of
BLOCK_M query rows) and split: the rows of kv head g are the s_q * (h_q / h_kv) query rows
(query j, head g * group + r) flattened as j * group + r, so all the queries of one request that
share a kv head read its pages once per row block. The program walks the pages of its request one
64-token page (= one K tile) at a time: the block-table entry, the page's 512 "main" dims (also V)
and 64 RoPE dims, two QK dots (main + tail), an online softmax in base 2, one PV dot.
BLOCK_M = 64 rows with 8 warps (16 or 32 rows with 4 warps for small groups), num_stages 2.

Semantics (FlashMLA's ``flash_mla_with_kvcache``, tle_kernels/decode_reference.py):
- positions p >= seqlen are never read: the loop stops at the request's last page and a row of
  the last page past seqlen loads as zeros (so P·V never meets what lies there, NaN included);
  block-table entries past the request's pages are never loaded.
- causal: query j sees positions p < seqlen - s_q + j + 1 (its score is -inf beyond).
- a row that sees no token gives out = 0 and lse = +inf.

Split-KV (``n_split`` > 1): split s covers the positions [s * chunk, min(seqlen, (s + 1) * chunk)),
chunk = ceil(ceil(seqlen / n_split) / 64) * 64 (so every split starts on a page), and writes its
o_part [b, n_split, s_q, h_q, 512] fp32 normalised by its own row sum and lse_part [b, n_split,
s_q, h_q] fp32 (natural log; a row without a token in the split: 0 and -inf) for
tle_kernels/mla_decode_combine.py to merge. The decode API runs the naive kernel unsplit (the
baseline); the split form exists to test the combine against a second producer of partials.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .online_softmax import online_softmax_step

PAGE = 64        # tokens per KV-cache page = K tile
D_MAIN = 512     # main dims = V dims
D_TAIL = 64      # RoPE tail dims (d = 576)
NUM_STAGES = 2


@triton.jit
def mla_decode_naive_kernel(q_ptr, k_ptr, bt_ptr, seqlens_ptr, out_ptr, lse_ptr,
                            stride_q_b, stride_q_s, stride_q_h,
                            stride_k_blk, stride_k_tok, stride_k_h, stride_bt_b,
                            stride_o_b, stride_o_split, stride_o_s, stride_o_h,
                            stride_l_b, stride_l_split, stride_l_s, stride_l_h,
                            s_q, h_kv, group, sm_scale,
                            D_MAIN: tl.constexpr, D_TAIL: tl.constexpr, BLOCK_M: tl.constexpr,
                            PAGE: tl.constexpr, CAUSAL: tl.constexpr, SPLIT: tl.constexpr):
    # axis 0: (request, kv head, row block), row block fastest; axis 1: the split
    n_rows = s_q * group
    n_rb = (n_rows + BLOCK_M - 1) // BLOCK_M
    item = tl.program_id(0)
    split = tl.program_id(1)
    rb = item % n_rb
    g = (item // n_rb) % h_kv
    b = (item // n_rb // h_kv).to(tl.int64)

    rows = rb * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n_rows
    j = rows // group                        # query of the row
    head = g * group + rows % group
    offs_d = tl.arange(0, D_MAIN)
    offs_t = tl.arange(0, D_TAIL)
    offs_p = tl.arange(0, PAGE)

    q_rows = q_ptr + b * stride_q_b + j.to(tl.int64)[:, None] * stride_q_s \
        + head.to(tl.int64)[:, None] * stride_q_h
    q_main = tl.load(q_rows + offs_d[None, :], mask=row_ok[:, None], other=0.0)
    q_tail = tl.load(q_rows + D_MAIN + offs_t[None, :], mask=row_ok[:, None], other=0.0)

    seqlen = tl.load(seqlens_ptr + b)
    if SPLIT:
        chunk = (seqlen + tl.num_programs(1) - 1) // tl.num_programs(1)
        chunk = (chunk + PAGE - 1) // PAGE * PAGE
        lo = split * chunk
        hi = tl.minimum(seqlen, lo + chunk)
    else:
        lo = 0
        hi = seqlen
    if CAUSAL:
        limit = seqlen - s_q + j + 1                              # row sees positions < limit
        j_last = tl.max(tl.where(row_ok, j, 0), 0)
        hi = tl.minimum(hi, seqlen - s_q + j_last + 1)            # no row of the block sees more

    qk_scale = sm_scale * 1.4426950408889634                      # exp(x*sm_scale) = exp2(x*qk_scale)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)          # running row max (log2 units)
    l_i = tl.zeros([BLOCK_M], tl.float32)                        # running row sum of exp2
    acc = tl.zeros([BLOCK_M, D_MAIN], tl.float32)                # unnormalised output
    k_head = k_ptr + g.to(tl.int64) * stride_k_h
    bt_row = bt_ptr + b * stride_bt_b
    for p0 in range(lo, hi, PAGE):                                # lo is a page boundary
        blk = tl.load(bt_row + p0 // PAGE).to(tl.int64)
        pos = p0 + offs_p
        in_seq = pos < hi
        k_rows = k_head + blk * stride_k_blk + offs_p.to(tl.int64)[:, None] * stride_k_tok
        k_main = tl.load(k_rows + offs_d[None, :], mask=in_seq[:, None], other=0.0)    # [PAGE, 512]
        k_tail = tl.load(k_rows + D_MAIN + offs_t[None, :], mask=in_seq[:, None], other=0.0)
        s = tl.dot(q_main, tl.trans(k_main))                                             # [M, PAGE]
        s = tl.dot(q_tail, tl.trans(k_tail), s)
        seen = in_seq[None, :]
        if CAUSAL:
            seen = seen & (pos[None, :] < limit[:, None])
        s = tl.where(seen, s * qk_scale, float("-inf"))
        m_i, l_i, acc = online_softmax_step(s, m_i, l_i, acc, k_main)

    has_any = l_i > 0
    out = acc * tl.where(has_any, 1.0 / l_i, 0.0)[:, None]
    lse = (tl.math.log2(tl.where(has_any, l_i, 1.0)) + m_i) * 0.6931471805599453
    if SPLIT:
        lse = tl.where(has_any, lse, float("-inf"))     # an empty split: weight 0 in the combine
    else:
        lse = tl.where(has_any, lse, float("inf"))      # a row without a token (FlashMLA's rule)
    o_rows = out_ptr + b * stride_o_b + split * stride_o_split + j.to(tl.int64)[:, None] * stride_o_s \
        + head.to(tl.int64)[:, None] * stride_o_h
    tl.store(o_rows + offs_d[None, :], out.to(out_ptr.dtype.element_ty), mask=row_ok[:, None])
    l_ptrs = lse_ptr + b * stride_l_b + split * stride_l_split + j * stride_l_s + head * stride_l_h
    tl.store(l_ptrs, lse, mask=row_ok)


def block_m_for(n_rows: int) -> int:
    """Query rows of one program: 64, or the smallest power of two >= the kv head's rows (at least
    16, the smallest M of a tensor-core dot) when it has fewer."""
    return 64 if n_rows >= 64 else max(16, triton.next_power_of_2(n_rows))


def num_warps_for(block_m: int) -> int:
    return 8 if block_m >= 64 else 4


def grid_for(b: int, s_q: int, h_q: int, h_kv: int, n_split: int = 1):
    n_rows = s_q * (h_q // h_kv)
    return (b * h_kv * triton.cdiv(n_rows, block_m_for(n_rows)), n_split)


def mla_decode_naive(q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor,
                     cache_seqlens: torch.Tensor, sm_scale: float, causal: bool,
                     out: torch.Tensor, lse: torch.Tensor, n_split: int = 1) -> None:
    """Launch on validated tensors (tle_kernels/decode_api.py validates): q [b, s_q, h_q, 576]
    bf16, k_cache [num_blocks, 64, h_kv, 576] bf16, block_table [b, max_blocks] int32,
    cache_seqlens [b] int32 (last dims contiguous). ``n_split`` == 1: out [b, s_q, h_q, 512] bf16,
    lse [b, h_q, s_q] fp32. ``n_split`` > 1: out = o_part [b, n_split, s_q, h_q, 512] fp32,
    lse = lse_part [b, n_split, s_q, h_q] fp32 (the combine's inputs)."""
    b, s_q, h_q, d = q.shape
    h_kv = k_cache.shape[2]
    group = h_q // h_kv
    if b == 0 or s_q == 0 or h_q == 0:
        return
    split = n_split > 1
    if split:
        so = (out.stride(0), out.stride(1), out.stride(2), out.stride(3))
        sl = (lse.stride(0), lse.stride(1), lse.stride(2), lse.stride(3))
    else:
        so = (out.stride(0), 0, out.stride(1), out.stride(2))
        sl = (lse.stride(0), 0, lse.stride(2), lse.stride(1))
    block_m = block_m_for(s_q * group)
    mla_decode_naive_kernel[grid_for(b, s_q, h_q, h_kv, n_split)](
        q, k_cache, block_table, cache_seqlens, out, lse,
        q.stride(0), q.stride(1), q.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), block_table.stride(0),
        *so, *sl, s_q, h_kv, group, float(sm_scale),
        D_MAIN=D_MAIN, D_TAIL=d - D_MAIN, BLOCK_M=block_m, PAGE=PAGE, CAUSAL=bool(causal),
        SPLIT=split, num_warps=num_warps_for(block_m), num_stages=NUM_STAGES)
