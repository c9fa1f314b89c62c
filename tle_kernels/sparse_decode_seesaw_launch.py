"""The bf16 sparse MLA decode run by the seesaw SparseMLA prefill kernels (impl "seesaw" of
tle_kernels/sparse_decode_api.py).

A bf16 paged cache whose token rows are evenly spaced (block stride = page_block_size * token
stride) is one kv array of num_blocks * page_block_size rows, and a decode index block * page +
offset is a row of that array: the prefill's kv and indices, with the same rule for an invalid
index (< 0 or past the last row: skipped, never read). Each (request i, query row j) of the decode
is one prefill query token with h_q heads and its own topk indices; topk_length [b] becomes one
length per token; attn_sink [h_q] is the prefill's, with the same meaning (the sink joins the
denominator of out only, lse is that of the scores). So one decode step is one prefill launch
(tle_kernels/api.py ``launch`` with impl "seesaw": the persistent seesaw, its attn_sink variant or
the per-row topk_length kernel) over T = b * s_q tokens:

- q [b, s_q, h_q, 576] -> [T, h_q, 576], indices [b, s_q, topk] -> [T, 1, topk], out
  [b, s_q, h_q, 512] -> [T, h_q, 512], k_cache -> kv [num_blocks * page, 1, 576]: views whenever
  the strides allow (always for contiguous tensors); a q, indices or out that cannot be flattened
  or whose rows are not 16-byte aligned goes through a contiguous copy.
- lse: the prefill writes [T, h_q] with the heads contiguous, the decode's lse is [b, h_q, s_q].
  With s_q == 1 the two are the same memory and the kernel writes lse itself; otherwise it writes
  a scratch [T, h_q] that is copied, transposed, into lse.
- max_logits: written by the prefill, not part of the decode: a scratch.
- topk_length [b] -> [T], each request's length repeated over its s_q rows (a view when s_q == 1).

h_q 8 / 16 / 32 (tensor parallelism) run as the prefill runs them: the kernel's one block of 64
head rows has its rows past h_q masked (q read as 0, nothing stored), no copy of q or out.

Nothing is read from the device on the host (no ``.item()``, no value-dependent shapes), so a call
captures in a CUDA graph.

``sparse_seesaw_unsupported_reason`` says why a call cannot run here (sparse_decode_api's "auto"
then takes another): an FP8 cache ("seesaw-fp8", sparse_decode_seesaw_fp8_launch.py, reads it)
and an extra cache (a launch reads one cache, and the decode API's two-launch path,
sparse_decode_extra.py, needs kernels that store fp32 outputs, which the prefill kernels do not),
an h_q or topk the
seesaw prefill does not take (api.py's ``unsupported_reason``), a cache whose token rows are not
evenly spaced (FlashMLA's padded block stride) or not 16-byte aligned.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import api
from .data_pointers import rows_aligned_where_known
from .head_padding import decode_padded_heads
from .sparse_decode_rows import RowOutputs, aligned, token_lengths, token_rows

D_QK = 576
D_V = 512
# The seesaw's tail split counts a piece as its K-tile pairs plus tail_split.OVERHEAD_TILES pairs,
# which overstates a decode piece's fixed cost: at topk 2048 two pieces of 8 pairs are modelled
# 16 / 14 = 1.14x shorter and ran 1.38-1.47x faster (H200, bf16 cache, h_q 128, b 24 and 32,
# against the unsplit launch in one process). So the decode splits from 1.1x by the model.
SEESAW_DECODE_MIN_SPEEDUP = 1.1


def cache_rows(k_cache: torch.Tensor) -> Optional[torch.Tensor]:
    """The cache's token rows as the prefill's kv [num_blocks * page, 1, 576] (a view), or None
    when they are not evenly spaced (the block stride is not page * the token stride)."""
    n_blocks, page = k_cache.shape[0], k_cache.shape[1]
    try:
        return k_cache.view(n_blocks * page, 1, k_cache.shape[-1])
    except (RuntimeError, ValueError):  # a FakeTensor (torch.compile's tracing) raises the latter
        return None


def sparse_seesaw_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink=None,
                                     topk_length=None, extra_k_cache=None, extra_indices=None,
                                     extra_topk_length=None) -> Optional[str]:
    """None when ``launch_sparse_seesaw`` runs this (validated) call, else why not. Reads shapes,
    strides and data pointers only."""
    if is_fp8:
        return "seesaw reads a bf16 cache only (seesaw-fp8 reads the FP8 one)"
    if extra_k_cache is not None:
        return "seesaw does not take an extra cache"
    h_q, topk = q.shape[2], indices.shape[-1]
    # h_q 8 / 16 / 32 run as one block of 64 head rows, those past h_q masked (head_padding.py);
    # the prefill's launch takes any other count too, but the decode takes only these
    heads = decode_padded_heads(h_q)
    if heads % 64 != 0:
        return f"seesaw needs h_q % 64 == 0 (got h_q={h_q})"
    why = api.unsupported_reason("seesaw", heads, D_QK, topk, attn_sink is not None,
                                 topk_length is not None)
    if why is not None:
        return why
    return cache_rows_unsupported_reason("seesaw", k_cache)


def cache_rows_unsupported_reason(impl: str, k_cache) -> Optional[str]:
    """Why ``impl``, which reads a bf16 cache as the prefill's kv rows (``cache_rows``), cannot
    read ``k_cache``: its token rows not evenly spaced, or not 16-byte aligned; else None."""
    kv = cache_rows(k_cache)
    if kv is None:
        return (f"{impl} needs the cache's token rows evenly spaced (block stride = "
                f"page_block_size * token stride), got k_cache strides {tuple(k_cache.stride())}")
    # the address where it can be read (not while torch.compile traces: the op checks it again)
    if not rows_aligned_where_known(kv):
        return f"{impl} needs k_cache's token rows 16-byte aligned (data_ptr and strides)"
    return None


def launch_sparse_seesaw(q, k_cache, indices, sm_scale: float, is_fp8: bool, out, lse,
                         attn_sink=None, topk_length=None, extra_k_cache=None, extra_indices=None,
                         extra_topk_length=None) -> None:
    """One sparse decode step into out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32
    (validated inputs; sparse_decode_naive's arguments) by one seesaw prefill launch."""
    why = sparse_seesaw_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink, topk_length,
                                           extra_k_cache, extra_indices, extra_topk_length)
    if why is not None:
        raise NotImplementedError(f"impl: 'seesaw' cannot run this call: {why}")
    b, s_q, h_q, _ = q.shape
    t = b * s_q
    kv = cache_rows(k_cache)
    q3 = token_rows(q, t)
    idx3 = token_rows(indices, t).view(t, 1, indices.shape[-1])
    rows = RowOutputs(out, lse)
    sink = None if attn_sink is None else aligned(attn_sink)
    lengths = None if topk_length is None else token_lengths(topk_length, s_q)

    # a decode step is under one wave for b * s_q * h_q / 64 < SMs: its topk splits when the
    # model says that makes it SEESAW_DECODE_MIN_SPEEDUP shorter, the pieces reading q in place
    ran = api.launch("seesaw", q3, kv, idx3, float(sm_scale), rows.out3, rows.max_logits,
                     rows.lse2, attn_sink=sink, topk_length=lengths,
                     tail_min_speedup=SEESAW_DECODE_MIN_SPEEDUP)
    assert ran == "seesaw"
    rows.finish()
