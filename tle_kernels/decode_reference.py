"""fp32 PyTorch reference for dense MLA decode over a paged KV cache (FlashMLA's
``flash_mla_with_kvcache`` semantics), and the inputs the decode tests and benchmark use.

``mla_decode_reference(q, k_cache, block_table, cache_seqlens, head_dim_v=512, softmax_scale=None,
causal=False)`` returns ``(out, lse)``, both fp32: out [b, s_q, h_q, head_dim_v], lse [b, h_q, s_q].

- Request i's tokens are positions 0 .. cache_seqlens[i] - 1; position t lives in page
  ``block_table[i, t // page]`` at row ``t % page`` of ``k_cache`` [num_blocks, page, h_kv, d].
  Only the first ceil(seqlen / page) block-table entries of a request are read, and only its first
  seqlen rows of them: whatever lies beyond (NaN, an out-of-range block id) never matters.
- The caller's precondition (FlashMLA's, which the kernels cannot check without reading device
  memory): cache_seqlens[i] <= block_table.shape[1] * page and each entry read is a block of
  k_cache. The reference refuses a call that breaks it (ValueError naming cache_seqlens or
  block_table) rather than define a result no kernel computes.
- K and V are the same cache: V is the first ``head_dim_v`` dims of each K row.
- Grouped heads: query head h uses kv head h // (h_q // h_kv).
- causal: query j of s_q sees the positions < seqlen - s_q + j + 1 (the last s_q tokens of the
  cache are the queries' own, speculative / MTP decoding); without causal every query sees all.
- lse = log(sum(exp(score * scale))) in natural-log units; a query row that sees no token (an
  empty request, or a causal row before the first token) gives out = 0 and lse = +inf.
- softmax_scale defaults to d ** -0.5 (d = q's last dim, 576 for DeepSeek).

The loop runs over requests on the device of the inputs: per request one [h_kv, s_q*group,
seqlen] score tensor, so it runs on the GPU at the benchmark's shapes and on the CPU at small ones.
"""

from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

import torch

PAGE = 64


def mla_decode_reference(q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor,
                         cache_seqlens: torch.Tensor, head_dim_v: int = 512,
                         softmax_scale: Optional[float] = None,
                         causal: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
    b, s_q, h_q, d = q.shape
    _, page, h_kv, _ = k_cache.shape
    group = h_q // h_kv
    scale = d ** -0.5 if softmax_scale is None else float(softmax_scale)
    dev = q.device
    out = torch.zeros(b, s_q, h_q, head_dim_v, dtype=torch.float32, device=dev)
    lse = torch.full((b, h_q, s_q), float("inf"), dtype=torch.float32, device=dev)
    seqlens = [int(x) for x in cache_seqlens.tolist()]
    num_blocks, max_blocks = k_cache.shape[0], block_table.shape[1]
    for i, n in enumerate(seqlens):
        if n > max_blocks * page:
            raise ValueError(f"cache_seqlens: request {i} has {n} tokens, more than its block_table "
                             f"row covers ({max_blocks} pages of {page} = {max_blocks * page})")
    for i, n in enumerate(seqlens):
        if n <= 0:
            continue
        pages = block_table[i, :-(-n // page)].to(device=k_cache.device, dtype=torch.long)
        bad = (pages < 0) | (pages >= num_blocks)
        if bool(bad.any()):
            j = int(bad.nonzero()[0, 0])
            raise ValueError(f"block_table: request {i} reads entry {j} = {int(pages[j])} for its "
                             f"cache_seqlens {n}, not a block of k_cache (num_blocks {num_blocks})")
        kv = k_cache.index_select(0, pages).reshape(-1, h_kv, d)[:n].to(dev).float()  # [n, h_kv, d]
        kv = kv.permute(1, 0, 2)                                                        # [h_kv, n, d]
        # rows of kv head g: (query j, head g*group + r) at row j*group + r
        qg = q[i].float().reshape(s_q, h_kv, group, d).permute(1, 0, 2, 3).reshape(h_kv, s_q * group, d)
        scores = torch.bmm(qg, kv.transpose(1, 2)) * scale                              # [h_kv, rows, n]
        if causal:
            j = torch.arange(s_q, device=dev).repeat_interleave(group)                  # query of a row
            limit = n - s_q + j + 1                                                     # positions < limit
            pos = torch.arange(n, device=dev)
            scores = scores.masked_fill(pos[None, None, :] >= limit[None, :, None], float("-inf"))
        row_lse = torch.logsumexp(scores, dim=-1)                                      # -inf: no token
        empty = row_lse == float("-inf")
        p = torch.exp(scores - row_lse.masked_fill(empty, 0.0)[..., None])             # 0 on empty rows
        o = torch.bmm(p, kv[..., :head_dim_v])                                         # [h_kv, rows, dv]
        out[i] = o.reshape(h_kv, s_q, group, head_dim_v).permute(1, 0, 2, 3).reshape(s_q, h_q, head_dim_v)
        lse[i] = row_lse.masked_fill(empty, float("inf")).reshape(h_kv, s_q, group) \
            .permute(0, 2, 1).reshape(h_q, s_q)
    return out, lse


# Block-table entries past a request's need, when poisoned: a block id no cache has, so that a
# kernel dereferencing one faults (or reads far out of bounds) instead of quietly reading a page.
BAD_BLOCK = 2**31 - 1


def make_decode_inputs(b: int, s_q: int, h_q: int, h_kv: int, seqlens: Union[int, Sequence[int]],
                       device="cuda", seed: int = 0, block: int = PAGE, d: int = 576,
                       poison: bool = True):
    """``(q, k_cache, block_table, cache_seqlens)`` for one decode step: q and the cache = randn/10
    bf16; every request owns ceil(max seqlen / block) pages (at least one), handed out by a random
    permutation of all pages, so a request's pages are neither contiguous nor in order.

    ``poison`` (default): every cache row at or past its request's seqlen is NaN and every
    block-table entry past a request's ceil(seqlen / block) pages is ``BAD_BLOCK``, so a kernel that
    reads past seqlen produces NaN (or faults) instead of a plausible number; the reference reads
    neither. ``seqlens``: one per request, or one int for all."""
    if isinstance(seqlens, int):
        seqlens = [seqlens] * b
    seqlens = [int(x) for x in seqlens]
    if len(seqlens) != b:
        raise ValueError(f"seqlens: expected {b} values (one per request), got {len(seqlens)}")
    g = torch.Generator(device=device).manual_seed(seed)
    max_blocks = max(1, -(-max(seqlens, default=0) // block))
    n_blocks = b * max_blocks
    q = torch.randn(b, s_q, h_q, d, generator=g, device=device, dtype=torch.bfloat16).div_(10)
    k_cache = torch.randn(n_blocks, block, h_kv, d, generator=g, device=device,
                          dtype=torch.bfloat16).div_(10)
    perm = torch.randperm(n_blocks, generator=g, device=device)
    block_table = perm.to(torch.int32).view(b, max_blocks).contiguous()
    cache_seqlens = torch.tensor(seqlens, dtype=torch.int32, device=device)
    if poison:
        # page perm[k] holds positions (k % max_blocks) * block + [0, block) of request k // max_blocks
        owner = torch.empty(n_blocks, dtype=torch.long, device=device)
        owner[perm] = torch.arange(n_blocks, device=device)
        first = (owner % max_blocks) * block                                  # first position of a page
        seq = cache_seqlens.to(torch.long)[owner // max_blocks]
        pos = first[:, None] + torch.arange(block, device=device)[None, :]  # [n_blocks, block]
        k_cache[pos >= seq[:, None]] = float("nan")
        need = -(-cache_seqlens.to(torch.long) // block)                     # pages each request uses
        cols = torch.arange(max_blocks, device=device)
        block_table[cols[None, :] >= need[:, None]] = BAD_BLOCK
    return q, k_cache, block_table, cache_seqlens
