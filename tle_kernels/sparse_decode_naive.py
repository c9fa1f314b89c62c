"""Naive Triton sparse MLA decode (DeepSeek-V3.2): the baseline the TLE sparse decode kernels are
measured against.

Plain ``@triton.jit``, no warp specialisation, no split. One program per (request, query row,
block of BLOCK_H heads); it walks the query row's index slots one tile of 64 at a time, first the
main cache's, then the extra cache's: load 64 indices, gather the 64 named K rows (dequantizing
the FP8 layout in registers, or reading bf16 rows), two QK dots (512 NoPE dims + 64 RoPE dims),
an online softmax in base 2 (tle_kernels/online_softmax.py), one PV dot on the NoPE dims.
BLOCK_H = 64 heads (16 or 32 for smaller h_q), 8 warps (4 for 16 heads).

FP8 layout (tle_kernels/fp8_kvcache.py): the kernel reads a token's 512 e4m3 bytes, its 4 fp32
scales and its 64 bf16 RoPE values from the byte cache, and forms bf16(fp8 * scale) in fp32,
the dequantizer's value, so the dots see exactly the reference's K.

Semantics (tle_kernels/sparse_decode_reference.py): an index < 0 or >= num_blocks *
page_block_size, or a slot at or past the request's topk_length, is invalid: its K row is not
loaded (the load is masked) and its score is -inf. attn_sink joins the denominator of out only:
out = acc / (l + 2^(sink * log2(e) - m)) in the kernel's base-2 units, lse = ln(l * 2^m). A row
without a valid slot gives out = 0 and lse = +inf.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .fp8_kvcache import BYTES_PER_TOKEN, CACHE_DTYPES, D_NOPE, D_ROPE, ROPE_OFFSET, SCALE_OFFSET
from .fp8_kvcache import TILE as SCALE_TILE
from .online_softmax import online_softmax_step

TOPK_TILE = 64     # index slots per K tile
NUM_STAGES = 2


@triton.jit
def attend_index_tiles(q_main, q_tail, m_i, l_i, acc, k_ptr, idx_row, n_slots, n_tokens, page,
                       stride_k_blk, stride_k_tok, qk_scale,
                       FP8: tl.constexpr, D_MAIN: tl.constexpr, D_TAIL: tl.constexpr,
                       SCALE_OFF: tl.constexpr, ROPE_OFF: tl.constexpr, SCALE_TILE: tl.constexpr,
                       TILE: tl.constexpr):
    """The online softmax state ``(m_i, l_i, acc)`` after the first ``n_slots`` index slots at
    ``idx_row`` (int32), each naming a token of the cache at ``k_ptr`` (``n_tokens`` rows,
    ``page`` per block)."""
    offs_d = tl.arange(0, D_MAIN)
    offs_t = tl.arange(0, D_TAIL)
    N_SCALES: tl.constexpr = D_MAIN // SCALE_TILE
    for t0 in range(0, n_slots, TILE):
        slots = t0 + tl.arange(0, TILE)
        in_len = slots < n_slots
        idx = tl.load(idx_row + slots, mask=in_len, other=-1).to(tl.int64)
        valid = in_len & (idx >= 0) & (idx < n_tokens)
        token = tl.where(valid, idx, 0)
        rows = k_ptr + (token // page) * stride_k_blk + (token % page) * stride_k_tok    # [TILE]
        if FP8:
            raw = tl.load(rows[:, None] + offs_d[None, :], mask=valid[:, None], other=0)
            scale_ptrs = (rows + SCALE_OFF).to(tl.pointer_type(tl.float32))
            scale = tl.load(scale_ptrs[:, None] + tl.arange(0, N_SCALES)[None, :],
                            mask=valid[:, None], other=0.0)                             # [TILE, 4]
            nope = tl.reshape(raw.to(tl.float8e4nv, bitcast=True).to(tl.float32),
                              [TILE, N_SCALES, SCALE_TILE]) * scale[:, :, None]
            # bf16 as the dequantizer rounds, then q's dtype (bf16 on a GPU; fp32 in Triton's
            # interpreter, whose bf16 dots are wrong)
            k_main = tl.reshape(nope, [TILE, D_MAIN]).to(tl.bfloat16).to(q_main.dtype)
            rope_ptrs = (rows + ROPE_OFF).to(tl.pointer_type(tl.bfloat16))
            k_tail = tl.load(rope_ptrs[:, None] + offs_t[None, :], mask=valid[:, None],
                             other=0.0).to(q_tail.dtype)
        else:
            k_main = tl.load(rows[:, None] + offs_d[None, :], mask=valid[:, None], other=0.0)
            k_tail = tl.load(rows[:, None] + D_MAIN + offs_t[None, :], mask=valid[:, None],
                             other=0.0)
        s = tl.dot(q_main, tl.trans(k_main))                                            # [H, TILE]
        s = tl.dot(q_tail, tl.trans(k_tail), s)
        s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
        m_i, l_i, acc = online_softmax_step(s, m_i, l_i, acc, k_main)
    return m_i, l_i, acc


@triton.jit
def sparse_decode_naive_kernel(q_ptr, k_ptr, idx_ptr, topk_len_ptr, xk_ptr, xidx_ptr,
                               xtopk_len_ptr, sink_ptr, out_ptr, lse_ptr,
                               stride_q_b, stride_q_s, stride_q_h,
                               stride_k_blk, stride_k_tok, stride_i_b, stride_i_s,
                               stride_xk_blk, stride_xk_tok, stride_xi_b, stride_xi_s,
                               stride_o_b, stride_o_s, stride_o_h,
                               stride_l_b, stride_l_h, stride_l_s,
                               s_q, h_q, topk, n_tokens, page, x_topk, x_n_tokens, x_page,
                               sm_scale,
                               FP8: tl.constexpr, HAS_TOPK_LEN: tl.constexpr,
                               HAS_EXTRA: tl.constexpr, HAS_EXTRA_TOPK_LEN: tl.constexpr,
                               HAS_SINK: tl.constexpr, BLOCK_H: tl.constexpr,
                               D_MAIN: tl.constexpr, D_TAIL: tl.constexpr,
                               SCALE_OFF: tl.constexpr, ROPE_OFF: tl.constexpr,
                               SCALE_TILE: tl.constexpr, TILE: tl.constexpr):
    # one program per (request, query row, head block), head block fastest
    n_hb = tl.cdiv(h_q, BLOCK_H)
    item = tl.program_id(0)
    hb = item % n_hb
    j = (item // n_hb) % s_q
    b = (item // n_hb // s_q).to(tl.int64)

    heads = hb * BLOCK_H + tl.arange(0, BLOCK_H)
    head_ok = heads < h_q
    offs_d = tl.arange(0, D_MAIN)
    offs_t = tl.arange(0, D_TAIL)
    q_rows = q_ptr + b * stride_q_b + j * stride_q_s + heads.to(tl.int64)[:, None] * stride_q_h
    q_main = tl.load(q_rows + offs_d[None, :], mask=head_ok[:, None], other=0.0)
    q_tail = tl.load(q_rows + D_MAIN + offs_t[None, :], mask=head_ok[:, None], other=0.0)

    qk_scale = sm_scale * 1.4426950408889634                   # exp(x*sm_scale) = exp2(x*qk_scale)
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)       # running row max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                     # running row sum of exp2
    acc = tl.zeros([BLOCK_H, D_MAIN], tl.float32)             # unnormalised output

    n_slots = topk
    if HAS_TOPK_LEN:
        n_slots = tl.minimum(tl.maximum(tl.load(topk_len_ptr + b), 0), topk)
    m_i, l_i, acc = attend_index_tiles(
        q_main, q_tail, m_i, l_i, acc, k_ptr, idx_ptr + b * stride_i_b + j * stride_i_s,
        n_slots, n_tokens, page, stride_k_blk, stride_k_tok, qk_scale,
        FP8, D_MAIN, D_TAIL, SCALE_OFF, ROPE_OFF, SCALE_TILE, TILE)
    if HAS_EXTRA:
        x_slots = x_topk
        if HAS_EXTRA_TOPK_LEN:
            x_slots = tl.minimum(tl.maximum(tl.load(xtopk_len_ptr + b), 0), x_topk)
        m_i, l_i, acc = attend_index_tiles(
            q_main, q_tail, m_i, l_i, acc, xk_ptr, xidx_ptr + b * stride_xi_b + j * stride_xi_s,
            x_slots, x_n_tokens, x_page, stride_xk_blk, stride_xk_tok, qk_scale,
            FP8, D_MAIN, D_TAIL, SCALE_OFF, ROPE_OFF, SCALE_TILE, TILE)

    has_any = l_i > 0
    m_fin = tl.where(has_any, m_i, 0.0)
    denom = l_i
    if HAS_SINK:
        # exp(sink) in units of 2^m: +inf (or overflow) zeroes out, -inf adds nothing
        sink = tl.load(sink_ptr + heads, mask=head_ok, other=float("-inf"))
        denom = l_i + tl.math.exp2(sink * 1.4426950408889634 - m_fin)
    out = acc * tl.where(has_any, 1.0 / tl.where(has_any, denom, 1.0), 0.0)[:, None]
    lse = (tl.math.log2(tl.where(has_any, l_i, 1.0)) + m_fin) * 0.6931471805599453
    lse = tl.where(has_any, lse, float("inf"))
    o_rows = out_ptr + b * stride_o_b + j * stride_o_s + heads.to(tl.int64)[:, None] * stride_o_h
    tl.store(o_rows + offs_d[None, :], out.to(out_ptr.dtype.element_ty), mask=head_ok[:, None])
    tl.store(lse_ptr + b * stride_l_b + heads * stride_l_h + j * stride_l_s, lse, mask=head_ok)


def block_h_for(h_q: int) -> int:
    """Heads of one program: 64, or the smallest power of two >= h_q (at least 16, the smallest
    M of a tensor-core dot) when there are fewer."""
    return 64 if h_q >= 64 else max(16, triton.next_power_of_2(h_q))


def num_warps_for(block_h: int) -> int:
    """8 warps from 32 heads up (fewer spill there than 4), 4 for 16 heads."""
    return 8 if block_h >= 32 else 4


def grid_for(b: int, s_q: int, h_q: int):
    return (b * s_q * triton.cdiv(h_q, block_h_for(h_q)),)


def _cache_args(k_cache: torch.Tensor, is_fp8: bool):
    """The kernel's view of a cache (bytes for the FP8 layout) and its (block stride, token
    stride, token count, page_block_size), strides in elements of that view."""
    if is_fp8 and k_cache.dtype in CACHE_DTYPES:
        k_cache = k_cache.view(torch.uint8)
    n_blocks, page = k_cache.shape[0], k_cache.shape[1]
    return k_cache, (k_cache.stride(0), k_cache.stride(1), n_blocks * page, page)


def sparse_decode_naive(q: torch.Tensor, k_cache: torch.Tensor, indices: torch.Tensor,
                        sm_scale: float, is_fp8: bool, out: torch.Tensor, lse: torch.Tensor,
                        attn_sink=None, topk_length=None, extra_k_cache=None, extra_indices=None,
                        extra_topk_length=None) -> None:
    """Launch on validated tensors (tle_kernels/sparse_decode_api.py validates): q [b, s_q, h_q,
    576] bf16; k_cache [num_blocks, page, 1, 656] bytes (``is_fp8``) or [num_blocks, page, 1, 576]
    bf16; indices [b, s_q, topk] int32; out [b, s_q, h_q, 512] bf16 (or fp32), lse [b, h_q, s_q]
    fp32; the optional tensors as the reference takes them. Last dims contiguous."""
    b, s_q, h_q, d = q.shape
    if b == 0 or s_q == 0 or h_q == 0:
        return
    if d != D_NOPE + D_ROPE:
        raise ValueError(f"q: head dim must be {D_NOPE + D_ROPE}, got {d}")
    if is_fp8 and k_cache.shape[-1] != BYTES_PER_TOKEN:
        raise ValueError(f"k_cache: expected {BYTES_PER_TOKEN} bytes per token, got "
                         f"{k_cache.shape[-1]}")
    kc, (sk_blk, sk_tok, n_tokens, page) = _cache_args(k_cache, is_fp8)
    has_extra = extra_k_cache is not None
    if has_extra:
        xkc, (sx_blk, sx_tok, x_n_tokens, x_page) = _cache_args(extra_k_cache, is_fp8)
        xidx, x_topk = extra_indices, extra_indices.shape[2]
        sxi = (extra_indices.stride(0), extra_indices.stride(1))
    else:  # never read: HAS_EXTRA is off
        xkc, xidx, x_topk = kc, indices, 0
        (sx_blk, sx_tok, x_n_tokens, x_page), sxi = (0, 0, 0, 1), (0, 0)
    block_h = block_h_for(h_q)
    sparse_decode_naive_kernel[grid_for(b, s_q, h_q)](
        q, kc, indices, topk_length if topk_length is not None else indices,
        xkc, xidx, extra_topk_length if extra_topk_length is not None else indices,
        attn_sink if attn_sink is not None else lse, out, lse,
        q.stride(0), q.stride(1), q.stride(2),
        sk_blk, sk_tok, indices.stride(0), indices.stride(1),
        sx_blk, sx_tok, sxi[0], sxi[1],
        out.stride(0), out.stride(1), out.stride(2),
        lse.stride(0), lse.stride(1), lse.stride(2),
        s_q, h_q, indices.shape[2], n_tokens, page, x_topk, x_n_tokens, x_page,
        float(sm_scale),
        FP8=bool(is_fp8), HAS_TOPK_LEN=topk_length is not None, HAS_EXTRA=has_extra,
        HAS_EXTRA_TOPK_LEN=has_extra and extra_topk_length is not None,
        HAS_SINK=attn_sink is not None, BLOCK_H=block_h, D_MAIN=D_NOPE, D_TAIL=D_ROPE,
        SCALE_OFF=SCALE_OFFSET, ROPE_OFF=ROPE_OFFSET, SCALE_TILE=SCALE_TILE, TILE=TOPK_TILE,
        num_warps=num_warps_for(block_h), num_stages=NUM_STAGES)
