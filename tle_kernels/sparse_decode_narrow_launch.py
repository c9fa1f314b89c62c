"""The bf16 sparse MLA decode at the tensor-parallel head counts (h_q 8 / 16 / 32) run by the
narrow-head SparseMLA prefill kernel (impl "narrow" of tle_kernels/sparse_decode_api.py;
tle_kernels/sparse_mla_narrow.py: the heads as the wgmma N, no head rows padded).

As for impl "seesaw" (tle_kernels/sparse_decode_seesaw_launch.py, whose views and output rows this
reuses), one decode step over a bf16 cache with evenly spaced token rows is one prefill launch over
T = b * s_q query tokens: q [b, s_q, h_q, 576] -> [T, h_q, 576], indices -> [T, 1, topk], the
cache -> kv [num_blocks * page, 1, 576], out and lse through ``RowOutputs``, attn_sink [h_q] as
the prefill's, topk_length [b] as one length per token row (repeated over a request's s_q rows).
The narrow kernel takes no extra cache (the decode API's two-launch path, sparse_decode_extra.py,
needs kernels that store fp32 outputs): those calls go to the naive kernel.
"""

from __future__ import annotations

from typing import Optional

from . import api
from .sparse_decode_rows import RowOutputs, token_lengths, token_rows
from .sparse_decode_seesaw_launch import D_QK, cache_rows, cache_rows_unsupported_reason


def sparse_narrow_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink=None,
                                     topk_length=None, extra_k_cache=None, extra_indices=None,
                                     extra_topk_length=None) -> Optional[str]:
    """None when ``launch_sparse_narrow`` runs this (validated) call, else why not. Reads shapes,
    strides and data pointers only."""
    if is_fp8:
        return "narrow reads a bf16 cache only"
    if extra_k_cache is not None:
        return "narrow does not take an extra cache"
    why = api.unsupported_reason("narrow", q.shape[2], D_QK, indices.shape[-1],
                                 attn_sink is not None, topk_length is not None)
    if why is not None:
        return why
    return cache_rows_unsupported_reason("narrow", k_cache)


def launch_sparse_narrow(q, k_cache, indices, sm_scale: float, is_fp8: bool, out, lse,
                         attn_sink=None, topk_length=None, extra_k_cache=None, extra_indices=None,
                         extra_topk_length=None) -> None:
    """One sparse decode step into out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32
    (validated inputs; sparse_decode_naive's arguments) by one narrow-head prefill launch."""
    why = sparse_narrow_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink, topk_length,
                                           extra_k_cache, extra_indices, extra_topk_length)
    if why is not None:
        raise NotImplementedError(f"impl: 'narrow' cannot run this call: {why}")
    b, s_q, _, _ = q.shape
    t = b * s_q
    idx3 = token_rows(indices, t).view(t, 1, indices.shape[-1])
    rows = RowOutputs(out, lse)
    lengths = None if topk_length is None else token_lengths(topk_length, s_q)
    ran = api.launch("narrow", token_rows(q, t), cache_rows(k_cache), idx3, float(sm_scale),
                     rows.out3, rows.max_logits, rows.lse2, attn_sink=attn_sink,
                     topk_length=lengths)
    assert ran == "narrow"
    rows.finish()
