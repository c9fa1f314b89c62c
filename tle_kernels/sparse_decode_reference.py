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

``make_sparse_decode_inputs`` makes the inputs the sparse decode tests use.

One request at a time on the device of the inputs (a [s_q, topk + extra_topk, 576] gather each),
so the reference runs on the GPU at DeepSeek's shapes and on the CPU at small ones. The matmuls
are fp32 (on a GPU they need TF32 off, torch's default for matmul).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import torch

from .fp8_kvcache import CACHE_DTYPES, D_QK, dequantize, quantize


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
        fp8 = k_cache.dtype in CACHE_DTYPES
        cache = k_cache.view(torch.uint8) if fp8 else k_cache          # gather bytes as bytes
        kv = cache[named // page, named % page, 0]                      # [n, 576] or [n, 656]
        if fp8:
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


def invalid_index_values(n_tokens: int) -> List[int]:
    """Indices that name no token of a cache of ``n_tokens``: negative ones (FlashMLA's -1, the
    int32 extremes) and ones at or past the cache's end."""
    return [-1, -2, -123456, -2**31, n_tokens, n_tokens + 1, 2**31 - 1]


def _cache_and_indices(g: torch.Generator, b: int, s_q: int, topk: int, s_kv: int, page: int,
                       invalid: float, lengths: Optional[Sequence[int]], device):
    """A bf16 cache holding each request's ``s_kv`` tokens on its own pages (handed out by a random
    permutation, so a request's pages are neither contiguous nor in order) and indices naming
    distinct tokens of the request, a fraction ``invalid`` of them replaced by invalid values.
    Returns (kv [n_blocks, page, 1, 576], indices [b, s_q, topk], used [n_blocks * page] bool:
    the tokens some valid slot within its request's length names)."""
    pages_per_req = max(1, -(-s_kv // page))
    n_blocks = b * pages_per_req
    kv = (torch.randn(n_blocks, page, 1, D_QK, generator=g, device=device) / 10).clamp(-1, 1)
    kv = kv.to(torch.bfloat16)
    block_table = torch.randperm(n_blocks, generator=g, device=device).view(b, pages_per_req)
    # distinct positions per query row: the first topk of a random order of the request's tokens
    n_pick = min(topk, s_kv)
    pos = torch.rand(b * s_q, s_kv, generator=g, device=device).argsort(dim=1)[:, :n_pick]
    pos = pos.view(b, s_q, n_pick)
    req = torch.arange(b, device=device).view(b, 1, 1)
    token = block_table[req, pos // page] * page + pos % page
    indices = torch.full((b, s_q, topk), -1, dtype=torch.int64, device=device)
    indices[..., :n_pick] = token
    n_tokens = n_blocks * page
    bad = torch.tensor(invalid_index_values(n_tokens), dtype=torch.int64, device=device)
    hit = torch.rand(b, s_q, topk, generator=g, device=device) < invalid
    pick = torch.randint(0, len(bad), (b, s_q, topk), generator=g, device=device)
    indices = torch.where(hit, bad[pick], indices)
    slot = torch.arange(topk, device=device)
    in_len = torch.ones(b, 1, topk, dtype=torch.bool, device=device)
    if lengths is not None:
        in_len = slot.view(1, 1, topk) < torch.tensor(lengths, device=device).view(b, 1, 1)
    named = (indices >= 0) & (indices < n_tokens) & in_len
    used = torch.zeros(n_tokens, dtype=torch.bool, device=device)
    used[indices[named]] = True
    return kv, indices.to(torch.int32), used


def make_sparse_decode_inputs(b: int, s_q: int, h_q: int, topk: int, *, s_kv: Optional[int] = None,
                              page: int = 64, is_fp8: bool = True, device="cuda", seed: int = 0,
                              invalid: float = 0.1, topk_length: Optional[Sequence[int]] = None,
                              attn_sink: bool = False, extra_topk: Optional[int] = None,
                              extra_page: int = 64,
                              extra_topk_length: Optional[Sequence[int]] = None,
                              poison: bool = True) -> Dict[str, Optional[torch.Tensor]]:
    """The tensor arguments of one sparse decode step as a dict (keys: q, k_cache, indices,
    attn_sink, topk_length, extra_k_cache, extra_indices, extra_topk_length), in FlashMLA's test
    distribution: q = randn clamped to [-1, 1], K rows randn / 10, each request's tokens on its
    own randomly placed pages (``s_kv`` tokens, default 2 * topk), each query row naming distinct
    tokens of its request, a fraction ``invalid`` of the slots holding invalid indices (-1, the
    int32 extremes, past the cache). ``attn_sink``: randn per head, some set to +inf and -inf.
    ``is_fp8``: caches in the FP8 layout (quantized), else bf16.

    ``poison`` (default): every token no valid slot names (within its request's topk_length) is
    NaN, in bf16 or quantized (NaN bytes, scales and RoPE), so a kernel that reads one produces NaN
    instead of a plausible number; the reference reads none."""
    g = torch.Generator(device=device).manual_seed(seed)
    s_kv = 2 * topk if s_kv is None else s_kv
    q = torch.randn(b, s_q, h_q, D_QK, generator=g, device=device).clamp(-1, 1).to(torch.bfloat16)
    out: Dict[str, Optional[torch.Tensor]] = dict(q=q, attn_sink=None, topk_length=None,
                                                  extra_k_cache=None, extra_indices=None,
                                                  extra_topk_length=None)

    def cache(kv, used):
        if poison:
            kv.view(-1, D_QK)[~used] = float("nan")
        return quantize(kv) if is_fp8 else kv

    kv, out["indices"], used = _cache_and_indices(g, b, s_q, topk, s_kv, page, invalid,
                                                  topk_length, device)
    out["k_cache"] = cache(kv, used)
    if topk_length is not None:
        out["topk_length"] = torch.tensor(topk_length, dtype=torch.int32, device=device)
    if extra_topk is not None:
        kv, out["extra_indices"], used = _cache_and_indices(g, b, s_q, extra_topk, 2 * extra_topk,
                                                            extra_page, invalid,
                                                            extra_topk_length, device)
        out["extra_k_cache"] = cache(kv, used)
        if extra_topk_length is not None:
            out["extra_topk_length"] = torch.tensor(extra_topk_length, dtype=torch.int32,
                                                    device=device)
    if attn_sink:
        sink = torch.randn(h_q, generator=g, device=device)
        flip = torch.randn(h_q, generator=g, device=device)
        sink[flip > 1.0] = float("inf")
        sink[flip < -1.0] = float("-inf")
        out["attn_sink"] = sink
    return out
