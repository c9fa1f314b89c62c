"""fp32 PyTorch gather reference for SparseMLA prefill, with FlashMLA's exact semantics.

``sparse_mla_reference(q, kv, indices, sm_scale, d_v=512, attn_sink=None, topk_length=None)``
returns ``(out, max_logits, lse)``, all fp32: out [s_q, h_q, d_v], max_logits / lse [s_q, h_q]
(the batched layout q [B, SQ, H, D], kv [B, SKV, 1, D], indices [B, SQ, 1, topk] gives
[B, SQ, H, ...]).

- index t is invalid when t < 0 or t >= s_kv, or (with topk_length) when its slot is at or beyond
  topk_length[query]; an invalid index is never dereferenced (it is replaced by 0 before the gather)
  and its logit is -inf. Duplicated indices count once per occurrence.
- max_logits = max(score * sm_scale), lse = log(sum(exp(score * sm_scale))), natural log, over the
  valid slots only; a row with no valid slot gives out = 0, max_logits = -inf, lse = +inf.
- attn_sink [h_q] fp32 adds exp(attn_sink[h]) to the softmax denominator of ``out`` only (the sink
  has no value row); lse and max_logits are those of the scores without the sink.

Runs chunked over queries (memory ~ chunk * topk * d_qk * 4 B for the gathered rows), so it runs on
the GPU at the headline shape and on the CPU at small ones.
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch


def _chunk_for(topk: int, d_qk: int, h_q: int, budget_bytes: int = 1 << 30) -> int:
    per_query = 4 * topk * (d_qk + 2 * h_q) + 1
    return max(1, min(4096, budget_bytes // per_query))


def sparse_mla_reference(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor, sm_scale: float,
                         d_v: int = 512, attn_sink: Optional[torch.Tensor] = None,
                         topk_length: Optional[torch.Tensor] = None,
                         chunk: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if q.dim() == 4:  # batched layout: one batch at a time (indices are per-batch positions)
        outs = [sparse_mla_reference(q[b], kv[b], indices[b], sm_scale, d_v, attn_sink,
                                     None if topk_length is None else topk_length[b], chunk)
                for b in range(q.shape[0])]
        return tuple(torch.stack([o[i] for o in outs]) for i in range(3))  # type: ignore[return-value]
    s_q, h_q, d_qk = q.shape
    s_kv = kv.shape[0]
    topk = indices.shape[-1]
    dev = q.device
    kv2 = kv.reshape(s_kv, d_qk) if kv.dim() == 3 else kv
    idx2 = indices.reshape(s_q, topk)
    out = torch.zeros(s_q, h_q, d_v, dtype=torch.float32, device=dev)
    max_logits = torch.full((s_q, h_q), float("-inf"), dtype=torch.float32, device=dev)
    lse = torch.full((s_q, h_q), float("inf"), dtype=torch.float32, device=dev)
    if s_q == 0 or topk == 0:
        return out, max_logits, lse
    sink = None if attn_sink is None else attn_sink.to(device=dev, dtype=torch.float32)
    chunk = chunk or _chunk_for(topk, d_qk, h_q)
    slots = torch.arange(topk, device=dev)
    for s0 in range(0, s_q, chunk):
        s1 = min(s_q, s0 + chunk)
        t = idx2[s0:s1].to(device=dev, dtype=torch.int64)
        valid = (t >= 0) & (t < s_kv)
        if topk_length is not None:
            n = topk_length[s0:s1].to(device=dev, dtype=torch.int64)
            valid &= slots[None, :] < n[:, None]
        safe = torch.where(valid, t, torch.zeros_like(t))  # never dereference an invalid index
        rows = kv2.index_select(0, safe.flatten()).reshape(s1 - s0, topk, d_qk).float()
        logits = torch.einsum("chd,ctd->cht", q[s0:s1].float(), rows) * sm_scale
        logits = logits.masked_fill(~valid[:, None, :], float("-inf"))
        ml = logits.max(dim=-1).values
        ls = torch.logsumexp(logits, dim=-1)               # -inf for an empty row
        denom = ls if sink is None else torch.logaddexp(ls, sink[None, :].expand_as(ls))
        denom = denom.masked_fill(denom == float("-inf"), float("inf"))  # empty row -> out 0
        p = torch.exp(logits - denom[..., None])
        out[s0:s1] = torch.einsum("cht,ctd->chd", p, rows[..., :d_v])
        max_logits[s0:s1] = ml
        lse[s0:s1] = ls.masked_fill(ls == float("-inf"), float("inf"))
    return out, max_logits, lse


def make_inputs(sq: int, skv: int, h: int, topk: int, d_qk: int = 576, device="cuda", seed: int = 0,
                batch: Optional[int] = None):
    """The benchmark's inputs (docs/sparse_mla.md): q, kv = randn/10 bf16; query t may attend to positions
    [0, t + skv - sq] (causal window), indices = topk distinct random positions in that window,
    invalid slots (window smaller than topk) = skv. ``batch`` gives the batched layout."""
    if batch is not None:
        parts = [make_inputs(sq, skv, h, topk, d_qk, device, seed + 7919 * b) for b in range(batch)]
        return tuple(torch.stack([p[i] for p in parts]) for i in range(3))
    g = torch.Generator(device=device).manual_seed(seed)
    q = (torch.randn(sq, h, d_qk, device=device, generator=g) / 10).to(torch.bfloat16)
    kv = (torch.randn(skv, 1, d_qk, device=device, generator=g) / 10).to(torch.bfloat16)
    idx = torch.empty(sq, 1, topk, dtype=torch.int32, device=device)
    step = max(1, min(256, (1 << 28) // max(1, 4 * skv)))
    cols = torch.arange(skv, device=device)
    for s0 in range(0, sq, step):
        rows = torch.arange(s0, min(sq, s0 + step), device=device)
        limit = rows + skv - sq  # last visible position (inclusive)
        score = torch.rand(len(rows), skv, device=device, generator=g)
        score[cols[None, :] > limit[:, None]] = -1.0
        k = min(topk, skv)
        top = score.topk(k, dim=1)
        chosen = torch.where(top.values >= 0, top.indices, torch.full_like(top.indices, skv))
        if k < topk:
            chosen = torch.cat([chosen, torch.full((len(rows), topk - k), skv, device=device,
                                                   dtype=chosen.dtype)], dim=1)
        idx[s0:s0 + len(rows), 0] = chosen.to(torch.int32)
    return q, kv, idx
