"""Launching the two-producer split FP8 sparse MLA decode kernel
(tle_kernels/sparse_decode_split2_fp8.py): ``launch_sparse_split2_fp8`` takes
launch_sparse_split_fp8's arguments, ``sparse_split2_fp8_unsupported_reason`` says why a call
cannot run here, and ``run_split2_rows`` launches the kernel over query rows with every output it
writes (max_logits too).

Everything is sparse_decode_split_fp8_launch.py's (the kernels share their arguments): the rows
prepared as views, lse through ``RowOutputs``, topk_length as -1 slots, one persistent program
per SM, a batch under one wave run as topk pieces merged by lse. What differs: the kernel walks
its K tiles in pairs (even tiles from one producer, odd ones from the other), so topk must be a
multiple of 2 x 64 = 128, and a tail-split piece is a whole number of pairs.

The kernel is looked up in its module at call time, so a test can put an emulated one there.
"""

from __future__ import annotations

from typing import Optional

from . import api
from .sparse_decode_rows import RowOutputs, token_rows
from .sparse_decode_seesaw_fp8_launch import cache_views, masked_indices
from .sparse_decode_split_fp8_launch import BLOCK_H, TILE, sparse_split_fp8_unsupported_reason

PAIR = 2 * TILE   # topk indices per step of the kernel's tile-pair loop


def sparse_split2_fp8_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink=None,
                                         topk_length=None, extra_k_cache=None,
                                         extra_indices=None,
                                         extra_topk_length=None) -> Optional[str]:
    """None when ``launch_sparse_split2_fp8`` runs this (validated) call, else why not: the split
    kernel's conditions, with topk a positive multiple of 128 (a whole number of tile pairs).
    Reads shapes, strides and data pointers only."""
    topk = indices.shape[-1]
    if topk == 0 or topk % PAIR != 0:
        return (f"split2-fp8 needs topk a positive multiple of {PAIR} (its two producers take "
                f"the even and the odd {TILE}-token tiles; got topk={topk})")
    why = sparse_split_fp8_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink,
                                              topk_length, extra_k_cache, extra_indices,
                                              extra_topk_length)
    return None if why is None else why.replace("split-fp8", "split2-fp8", 1)


def run_split2_rows(q3, k_cache, idx2, out3, lse2, max_logits, sm_scale: float) -> None:
    """One launch over query rows: q3 [T, h_q, 576] bf16, idx2 [T, topk] int32 into out3 [T, h_q,
    512] bf16, lse2 and max_logits [T, h_q] fp32 with the same strides (natural log; a row with
    no valid index: out 0, lse +inf, max_logits -inf)."""
    kv8, kv32, kv16, stride_blk, n_tokens = cache_views(k_cache)
    t, h_q = q3.shape[0], q3.shape[1]
    assert max_logits.stride() == lse2.stride()
    assert idx2.shape[-1] % PAIR == 0, idx2.shape
    grid, n_items, n_hb, rounds = api.launch_args(t, h_q, api.sm_count(q3.device), BLOCK_H)
    from . import sparse_decode_split2_fp8 as kmod

    kmod.sparse_decode_split2_fp8[grid](
        q3, kv8, kv32, kv16, idx2, out3, lse2, max_logits, q3.stride(0), q3.stride(1),
        stride_blk, k_cache.shape[1], idx2.stride(0), out3.stride(0), out3.stride(1),
        lse2.stride(0), n_tokens, float(sm_scale), n_items, n_hb, rounds, h_q,
        TOPK=idx2.shape[-1], BLOCK_H=BLOCK_H)


def launch_sparse_split2_fp8(q, k_cache, indices, sm_scale: float, is_fp8: bool, out, lse,
                             attn_sink=None, topk_length=None, extra_k_cache=None,
                             extra_indices=None, extra_topk_length=None) -> None:
    """One sparse decode step into out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32
    (validated inputs; sparse_decode_naive's arguments)."""
    why = sparse_split2_fp8_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink,
                                               topk_length, extra_k_cache, extra_indices,
                                               extra_topk_length)
    if why is not None:
        raise NotImplementedError(f"impl: 'split2-fp8' cannot run this call: {why}")
    b, s_q, h_q = q.shape[0], q.shape[1], q.shape[2]
    t = b * s_q
    topk = indices.shape[-1]
    if topk_length is not None:
        indices = masked_indices(indices, topk_length)
    rows = RowOutputs(out, lse)
    q3, idx2 = token_rows(q, t), token_rows(indices, t)
    from .head_padding import run_split_any_heads
    from .tail_split import plan_tail_split

    def run(q3, _kv, idx3, out3, max_logits, lse2):   # tail_split's runner
        run_split2_rows(q3, k_cache, idx3.view(q3.shape[0], idx3.shape[-1]), out3, lse2,
                        max_logits, sm_scale)

    split = plan_tail_split(t, -(-h_q // BLOCK_H), topk, api.sm_count(q.device), PAIR)
    if split is None:
        run_split2_rows(q3, k_cache, idx2, rows.out3, rows.lse2, rows.max_logits, sm_scale)
    else:
        run_split_any_heads(run, q3, None, idx2.view(t, 1, topk), rows.out3, rows.max_logits,
                            rows.lse2, split)
    rows.finish()
