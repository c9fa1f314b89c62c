"""fp32 PyTorch reference for the DeepSeek-V3.2 sparse MLA decode (FlashMLA's
``flash_mla_with_kvcache`` with ``indices``): each query row attends to the tokens its indices
name, in a paged KV cache stored in the FP8 layout (tle_kernels/fp8_kvcache.py) or as bf16.

``sparse_decode_reference(q, k_cache, indices, head_dim_v=512, softmax_scale=None,
attn_sink=None, topk_length=None, extra_k_cache=None, extra_indices=None,
extra_topk_length=None)`` returns ``(out, lse)``, fp32: out [b, s_q, h_q, head_dim_v], lse
[b, h_q, s_q].

- q [b, s_q, h_q, 576]. k_cache [num_blocks, page_block_size, 1, 656] uint8 / int8 /
  float8_e4m3fn (FP8 layout, dequantized to bf16 first) or [num_blocks, page_block_size, 1, 576]
  bf16; any strides. K and V are one cache: V = the first head_dim_v dims of a K row.
- indices [b, s_q, topk] int32: slot k of query (i, j) names token ``indices[i, j, k]`` =
  block * page_block_size + offset, the row ``k_cache[block, offset, 0]``. An index < 0 or
  >= num_blocks * page_block_size is invalid: its slot is skipped and nothing is read for it.
  Duplicates count as often as they occur.
- topk_length [b] int32: request i uses only its first topk_length[i] slots (of every query row);
  values above topk use all slots, values <= 0 none. Slots past it are never read.
- extra_k_cache / extra_indices [b, s_q, extra_topk] / extra_topk_length [b]: a second cache (same
  format, its own page_block_size) whose named tokens are attended in addition, under the same
  rules; one softmax runs over the tokens of both.
- Scores are ``q . k * softmax_scale`` (default 576 ** -0.5); lse = log(sum(exp(scores))) over
  the valid slots, natural log.
- attn_sink [h_q] float32: out of head h is multiplied by exp(lse) / (exp(lse) + exp(sink[h])),
  i.e. the sink joins the softmax's denominator only; lse is returned without it. +inf zeroes
  the row's out, -inf leaves it as it is.
- A query row without a valid slot gives out = 0 and lse = +inf (with or without a sink).

One request at a time on the device of the inputs (a [s_q, topk + extra_topk, 576] gather each),
so the reference runs on the GPU at DeepSeek's shapes and on the CPU at small ones. The matmuls
are fp32 (on a GPU they need TF32 off, torch's default for matmul).
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from .fp8_kvcache import CACHE_DTYPES, D_QK, dequantize


def gather_tokens(k_cache: torch.Tensor, indices: torch.Tensor,
                  topk_length: Optional[int]) -> Tuple[torch.Tensor, torch.Tensor]:
    """K rows [*indices.shape, 576] fp32 (0 at invalid slots) and the mask of valid slots for
    one request's indices [s_q, topk]. Only the valid slots' rows are read and dequantized."""
    n_blocks, page = k_cache.shape[0], k_cache.shape[1]
    idx = indices.to(torch.long)
    slot = torch.arange(idx.shape[-1], device=idx.device)
    valid = (idx >= 0) & (idx < n_blocks * page)
    if topk_length is not None:
        valid &= slot < topk_length
    rows = torch.zeros(*idx.shape, D_QK, dtype=torch.float32, device=idx.device)
    if valid.any():
        named = idx[valid].to(k_cache.device)
        kv = k_cache[named // page, named % page, 0]                    # [n, 576] or [n, 656]
        if k_cache.dtype in CACHE_DTYPES:
            kv = dequantize(kv)
        rows[valid] = kv.to(device=idx.device, dtype=torch.float32)
    return rows, valid


def sparse_decode_reference(q: torch.Tensor, k_cache: torch.Tensor, indices: torch.Tensor,
                            head_dim_v: int = 512, softmax_scale: Optional[float] = None,
                            attn_sink: Optional[torch.Tensor] = None,
                            topk_length: Optional[torch.Tensor] = None,
                            extra_k_cache: Optional[torch.Tensor] = None,
                            extra_indices: Optional[torch.Tensor] = None,
                            extra_topk_length: Optional[torch.Tensor] = None,
                            ) -> Tuple[torch.Tensor, torch.Tensor]:
    b, s_q, h_q, d = q.shape
    scale = d ** -0.5 if softmax_scale is None else float(softmax_scale)
    dev = indices.device
    lengths = topk_length.tolist() if topk_length is not None else [None] * b
    extra_lengths = (extra_topk_length.tolist() if extra_topk_length is not None
                     else [None] * b)
    out = torch.zeros(b, s_q, h_q, head_dim_v, dtype=torch.float32, device=dev)
    lse = torch.full((b, h_q, s_q), float("inf"), dtype=torch.float32, device=dev)
    sink = None if attn_sink is None else attn_sink.to(device=dev, dtype=torch.float32)
    for i in range(b):
        kv, valid = gather_tokens(k_cache, indices[i], lengths[i])        # [s_q, topk, 576]
        if extra_k_cache is not None:
            kv1, valid1 = gather_tokens(extra_k_cache, extra_indices[i], extra_lengths[i])
            kv, valid = torch.cat([kv, kv1], dim=1), torch.cat([valid, valid1], dim=1)
        qi = q[i].to(device=dev, dtype=torch.float32)                     # [s_q, h_q, 576]
        scores = torch.bmm(qi, kv.transpose(1, 2)) * scale                # [s_q, h_q, slots]
        scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
        row_lse = torch.logsumexp(scores, dim=-1)                         # [s_q, h_q]
        empty = row_lse == float("-inf")
        p = torch.exp(scores - row_lse.masked_fill(empty, 0.0)[..., None])  # 0 on empty rows
        o = torch.bmm(p, kv[..., :head_dim_v])                            # [s_q, h_q, dv]
        if sink is not None:
            # exp(lse) / (exp(lse) + exp(sink)) = sigmoid(lse - sink); empty rows are 0 anyway
            o = o * torch.sigmoid(row_lse.masked_fill(empty, 0.0) - sink[None, :])[..., None]
        out[i] = o
        lse[i] = row_lse.masked_fill(empty, float("inf")).transpose(0, 1)
    return out, lse
