"""Naive Triton SparseMLA prefill: the baseline every TLE kernel is measured against.

Plain ``@triton.jit``, one program per (query token, block of BLOCK_H heads). The topk indices of
the token are walked in K tiles of BK=64: gather the kv rows by index (the 512 "main" dims, which
are also V, and the 64 RoPE "tail" dims when d_qk == 576), two QK dots (main + tail), online softmax
in base 2, one PV dot. 8 warps (4 for head blocks below 64), num_stages 2. No warp specialisation.

Semantics (FlashMLA's ``flash_mla_sparse_fwd``, docs/sparse_mla.md):
- index t is invalid when t < 0 or t >= s_kv, or when its slot is at or beyond topk_length[query]:
  it is clamped to row 0 and its load is masked (zero-fill), so it is never dereferenced whatever
  its value (-2**31, -1, s_kv, 2**31-1); its logit is -inf. Duplicates count as many times as they
  appear.
- max_logits and lse are in natural-log units of score * sm_scale; a row with no valid index gives
  out = 0, max_logits = -inf, lse = +inf.
- attn_sink [h_q] fp32 (natural-log units, not multiplied by sm_scale) adds exp(sink) to the
  softmax denominator of ``out`` only; lse and max_logits are those of the scores alone.
- heads beyond h_q in the last head block are masked (never loaded, never stored).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .online_softmax import online_softmax_step

BK = 64          # topk slots (kv rows) per K tile
D_MAIN = 512     # main dims = V dims
D_TAIL = 64      # RoPE tail dims (d_qk = 576); 0 when d_qk = 512
NUM_STAGES = 2

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


@triton.jit
def sparse_mla_naive_kernel(q_ptr, kv_ptr, idx_ptr, out_ptr, max_logits_ptr, lse_ptr, sink_ptr,
                            topk_length_ptr,
                            stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                            stride_o_h, stride_l_s,
                            s_kv, h_q, topk, sm_scale,
                            D_MAIN: tl.constexpr, D_TAIL: tl.constexpr, BLOCK_H: tl.constexpr,
                            BK: tl.constexpr, HAS_SINK: tl.constexpr, HAS_TOPK_LENGTH: tl.constexpr):
    pid_s = tl.program_id(0).to(tl.int64)          # query token
    offs_h = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    mask_h = offs_h < h_q
    offs_d = tl.arange(0, D_MAIN)
    offs_k = tl.arange(0, BK)

    qk_scale = sm_scale * 1.4426950408889634        # exp(x*sm_scale) == exp2(x*qk_scale)
    q_rows = q_ptr + pid_s * stride_q_s + offs_h.to(tl.int64)[:, None] * stride_q_h
    q_main = tl.load(q_rows + offs_d[None, :], mask=mask_h[:, None], other=0.0)
    if D_TAIL > 0:
        offs_t = tl.arange(0, D_TAIL)
        q_tail = tl.load(q_rows + D_MAIN + offs_t[None, :], mask=mask_h[:, None], other=0.0)

    n = topk
    if HAS_TOPK_LENGTH:
        n = tl.minimum(tl.maximum(tl.load(topk_length_ptr + pid_s), 0), topk)
    idx_row = idx_ptr + pid_s * stride_idx_s

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)   # running row max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                 # running row sum of exp2
    acc = tl.zeros([BLOCK_H, D_MAIN], tl.float32)         # unnormalised output

    for k0 in range(0, n, BK):
        slot = k0 + offs_k
        in_range = slot < n
        t = tl.load(idx_row + slot, mask=in_range, other=-1)
        valid = in_range & (t >= 0) & (t < s_kv)
        rows = kv_ptr + tl.where(valid, t, 0).to(tl.int64)[:, None] * stride_kv_s
        k_main = tl.load(rows + offs_d[None, :], mask=valid[:, None], other=0.0)      # [BK, 512]
        s = tl.dot(q_main, tl.trans(k_main))                                           # [BH, BK]
        if D_TAIL > 0:
            k_tail = tl.load(rows + D_MAIN + offs_t[None, :], mask=valid[:, None], other=0.0)
            s = tl.dot(q_tail, tl.trans(k_tail), s)
        s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
        m_i, l_i, acc = online_softmax_step(s, m_i, l_i, acc, k_main)

    has_any = l_i > 0
    denom = l_i
    if HAS_SINK:
        sink = tl.load(sink_ptr + offs_h, mask=mask_h, other=0.0)
        denom = l_i + tl.math.exp2(sink * 1.4426950408889634 - tl.where(has_any, m_i, 0.0))
    inv = tl.where(has_any, 1.0 / denom, 0.0)
    out = acc * inv[:, None]
    out_rows = out_ptr + pid_s * stride_o_s + offs_h.to(tl.int64)[:, None] * stride_o_h
    tl.store(out_rows + offs_d[None, :], out.to(out_ptr.dtype.element_ty), mask=mask_h[:, None])
    l_row = pid_s * stride_l_s + offs_h
    tl.store(max_logits_ptr + l_row, m_i * 0.6931471805599453, mask=mask_h)
    lse = tl.where(has_any, (tl.math.log2(l_i) + m_i) * 0.6931471805599453, float("inf"))
    tl.store(lse_ptr + l_row, lse, mask=mask_h)


def block_h_for(h_q: int) -> int:
    """Head block of one program: 64, or the smallest power of two >= h_q (at least 16, the
    smallest M of a tensor-core dot) when h_q < 64."""
    if h_q >= 64:
        return 64
    return max(16, triton.next_power_of_2(h_q))


def num_warps_for(block_h: int) -> int:
    return 8 if block_h >= 64 else 4


def sparse_mla_naive(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor, sm_scale: float,
                     out: torch.Tensor, max_logits: torch.Tensor, lse: torch.Tensor,
                     attn_sink: torch.Tensor | None = None,
                     topk_length: torch.Tensor | None = None) -> None:
    """Launch on already-validated tensors (tle_kernels/api.py validates): q [s_q, h_q, d_qk],
    kv [s_kv, 1, d_qk], indices [s_q, 1, topk] int32 (last dims contiguous), out [s_q, h_q, 512]
    bf16, max_logits / lse [s_q, h_q] fp32 with equal strides and a contiguous last dim."""
    s_q, h_q, d_qk = q.shape
    s_kv = kv.shape[0]
    topk = indices.shape[-1]
    assert max_logits.stride() == lse.stride()
    block_h = block_h_for(h_q)
    grid = (s_q, triton.cdiv(h_q, block_h))
    if s_q == 0:
        return
    sparse_mla_naive_kernel[grid](
        q, kv, indices, out, max_logits, lse,
        attn_sink if attn_sink is not None else lse,        # dummy pointer, never read
        topk_length if topk_length is not None else indices,  # dummy pointer, never read
        q.stride(0), q.stride(1), kv.stride(0), indices.stride(0), out.stride(0), out.stride(1),
        lse.stride(0), s_kv, h_q, topk, float(sm_scale),
        D_MAIN=D_MAIN, D_TAIL=d_qk - D_MAIN, BLOCK_H=block_h, BK=BK,
        HAS_SINK=attn_sink is not None, HAS_TOPK_LENGTH=topk_length is not None,
        num_warps=num_warps_for(block_h), num_stages=NUM_STAGES)
