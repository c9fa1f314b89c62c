"""Combine of split-KV MLA decode: merge the partial outputs of the splits by their lse.

A split-KV decode kernel writes, per split s of a request's positions, o_part[b, s] (the split's
softmax-weighted mean of V, normalised by the split's own row sum) and lse_part[b, s] (the log of
that row sum in natural-log units, -inf when the split saw no token). The full row is

    lse = log(sum_s exp(lse_s)),   out = sum_s exp(lse_s - lse) * o_s

computed with the largest lse_s subtracted first. A split with lse_s = -inf has weight 0 and its
o_part is not read (whatever it holds, NaN included, cannot leak into the sum); a row whose splits
are all empty gives out = 0 and lse = +inf (FlashMLA's rule for a row without a token).

Shapes: o_part fp32 [b, n_split, s_q, h_q, 512], lse_part fp32 [b, n_split, s_q, h_q] →
out bf16 [b, s_q, h_q, 512], lse fp32 [b, h_q, s_q] (any strides: the kernel takes them all).
One program per ((request b, query j), block of BLOCK_H heads); the split count is a runtime
argument, so one compiled kernel serves every n_split up to ``SPLIT_P2`` (its power of two).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

D_V = 512
BLOCK_H = 16


@triton.jit
def mla_decode_combine_kernel(o_part_ptr, lse_part_ptr, out_ptr, lse_ptr,
                              stride_op_b, stride_op_split, stride_op_s, stride_op_h,
                              stride_lp_b, stride_lp_split, stride_lp_s, stride_lp_h,
                              stride_o_b, stride_o_s, stride_o_h,
                              stride_l_b, stride_l_h, stride_l_s,
                              s_q, h_q, n_split,
                              D_V: tl.constexpr, BLOCK_H: tl.constexpr, SPLIT_P2: tl.constexpr):
    row = tl.program_id(0)                                       # (request, query) pair
    j = row % s_q
    b = (row // s_q).to(tl.int64)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = heads < h_q
    splits = tl.arange(0, SPLIT_P2)
    lp_row = lse_part_ptr + b * stride_lp_b + j * stride_lp_s

    # the row's largest split lse and the sum of the weights, all splits at once
    lp = tl.load(lp_row + splits[:, None] * stride_lp_split + heads[None, :] * stride_lp_h,
                 mask=(splits < n_split)[:, None] & h_ok[None, :], other=float("-inf"))
    m = tl.max(lp, 0)                                            # [BLOCK_H]
    has_any = m > float("-inf")
    m_use = tl.where(has_any, m, 0.0)
    total = tl.sum(tl.exp(lp - m_use[None, :]), 0)              # exp(-inf) = 0: empty splits
    inv_total = tl.where(has_any, 1.0 / total, 0.0)

    acc = tl.zeros([BLOCK_H, D_V], tl.float32)
    offs_d = tl.arange(0, D_V)
    o_rows = o_part_ptr + b * stride_op_b + j * stride_op_s + heads.to(tl.int64)[:, None] * stride_op_h
    for s in range(0, n_split):
        l_s = tl.load(lp_row + s * stride_lp_split + heads * stride_lp_h, mask=h_ok,
                      other=float("-inf"))
        live = l_s > float("-inf")
        w = tl.where(live, tl.exp(l_s - m_use) * inv_total, 0.0)
        o = tl.load(o_rows + s * stride_op_split + offs_d[None, :], mask=live[:, None], other=0.0)
        acc += w[:, None] * o

    out_rows = out_ptr + b * stride_o_b + j * stride_o_s + heads.to(tl.int64)[:, None] * stride_o_h
    tl.store(out_rows + offs_d[None, :], acc.to(out_ptr.dtype.element_ty), mask=h_ok[:, None])
    lse = tl.where(has_any, tl.log(tl.where(has_any, total, 1.0)) + m_use, float("inf"))
    tl.store(lse_ptr + b * stride_l_b + heads * stride_l_h + j * stride_l_s, lse, mask=h_ok)


def mla_decode_combine(o_part: torch.Tensor, lse_part: torch.Tensor, out: torch.Tensor,
                       lse: torch.Tensor) -> None:
    """Merge ``o_part`` [b, n_split, s_q, h_q, 512] and ``lse_part`` [b, n_split, s_q, h_q] (fp32)
    into ``out`` [b, s_q, h_q, 512] (bf16) and ``lse`` [b, h_q, s_q] (fp32)."""
    b, n_split, s_q, h_q, d_v = o_part.shape
    assert d_v == D_V and tuple(lse_part.shape) == (b, n_split, s_q, h_q)
    assert tuple(out.shape) == (b, s_q, h_q, d_v) and tuple(lse.shape) == (b, h_q, s_q)
    assert o_part.stride(-1) == 1 and out.stride(-1) == 1
    if b == 0 or s_q == 0 or h_q == 0:
        return
    block_h = min(BLOCK_H, max(2, triton.next_power_of_2(h_q)))
    grid = (b * s_q, triton.cdiv(h_q, block_h))
    mla_decode_combine_kernel[grid](
        o_part, lse_part, out, lse,
        o_part.stride(0), o_part.stride(1), o_part.stride(2), o_part.stride(3),
        lse_part.stride(0), lse_part.stride(1), lse_part.stride(2), lse_part.stride(3),
        out.stride(0), out.stride(1), out.stride(2),
        lse.stride(0), lse.stride(1), lse.stride(2),
        s_q, h_q, n_split,
        D_V=D_V, BLOCK_H=block_h, SPLIT_P2=max(2, triton.next_power_of_2(n_split)), num_warps=4)
