"""Launching the split FP8 sparse MLA decode kernels (tle_kernels/sparse_decode_split_fp8.py, and
tle_kernels/sparse_decode_split_fp8_sink.py with attn_sink): ``launch_sparse_split_fp8`` takes launch_sparse_seesaw_fp8's arguments (sparse_decode_naive's),
``sparse_split_fp8_unsupported_reason`` says why a call cannot run here, and ``run_split_rows``
launches the kernel over query rows with every output it writes (max_logits too).

The kernel takes sparse_decode_seesaw_fp8's arguments, so the rows are prepared as
sparse_decode_seesaw_fp8_launch.py prepares them: q [b, s_q, h_q, 576] -> [T = b * s_q, h_q,
576], indices -> [T, topk], out -> [T, h_q, 512] (views where the strides allow), the cache's
bytes as three 1-D views (fp8, fp32, bf16) with the block stride in bytes and the page size, lse
through ``RowOutputs`` (in place when s_q == 1, else a transposed scratch), max_logits to a
scratch, topk_length as -1 slots in a copy of the indices. One program per SM, persistent over
the (row, head block) items (``api.launch_args``); any h_q (the rows of the last head block past
it are masked in the kernel).

A batch that does not fill its last wave of items (a small decode step: all of it) runs its
rows past the whole waves as topk pieces on every SM, merged by lse (tail_split.py), as the
seesaw's launcher does; a piece is a whole number of K tiles, and the pieces of a token read
its q row in place (the kernel's ``q_div``: index row v reads q row v // q_div).

attn_sink [h_q] fp32 (16-byte aligned, else a copy): the sink kernel, whose epilogue puts
exp(sink) in each row's denominator. With a tail split the pieces run the plain kernel (a piece
must not count exp(sink): there would be one per piece) and the merge applies the sink, while
the main tokens run the sink kernel.

An extra cache is not read here: the decode API runs this launcher once per cache and merges
the two (tle_kernels/sparse_decode_extra.py), into fp32 partial outputs: the kernels store out
in out's dtype (bf16 or fp32), and so do the tail split's pieces and merge (``FP32_OUT``).

Nothing is read from the device on the host, so a call captures in a CUDA graph. The kernels are
looked up in their modules at call time, so a test can put emulated ones there.
"""

from __future__ import annotations

from typing import Optional

from . import api
from .sparse_decode_rows import RowOutputs, aligned, token_rows
from .sparse_decode_seesaw_fp8_launch import (cache_views, fp8_cache_unsupported_reason,
                                             masked_indices)

BLOCK_H = 64
TILE = 64        # topk indices per K tile
# A batch under one wave runs as topk pieces (tail_split) when they shorten it by this much (a
# piece counted as its tiles plus tail_split.OVERHEAD_TILES). The prefill's 2 kept two-piece
# splits out; at b = 32, h_q 128 (64 items on 132 SMs) two pieces of 16 tiles ran 1.32x the
# unsplit launch (H200, FP8 cache, topk 2048).
DECODE_MIN_SPEEDUP = 1.25
# Where no split fits one round (b 34-49 at h_q 128, s_q 1: 68-98 items, more than half of 132
# SMs), pieces over several rounds (tail_split.plan_round_split). Its model's fixed cost per piece
# or item, 3 tiles, is what fits the measured launches (H200, FP8 cache, topk 2048, h_q 128):
# four pieces per row in three rounds ran 1.075x / 1.066x the unsplit launch at b 40 / 48
# (modelled 1.06x both), eight 1.02x / 0.84x (1.00x / 0.83x), two 0.91x (0.92x), and at b 56 /
# 64, where four pieces take four rounds, 0.84x (0.80x); at h_q 64 / 32 (b 72-90 / 80) 1.02-1.05x.
ROUND_SPLIT_OVERHEAD_TILES = 3
ROUND_SPLIT_MIN_SPEEDUP = 1.04
# The balanced kernel (sparse_decode_split_fp8_balanced.py) where no split fits one round and
# the items fill at most this share of the SMs. Measured (H200, FP8 cache, topk 2048, h_q 128,
# against the pieces over rounds): b 36 / 40 (0.55 / 0.61 of 132 SMs) 1.12x / 1.05x, b 44 (0.67)
# 1.00x, b 48 / 56 / 64 0.93x / 0.89x / 0.81x; h_q 64, b 80 (0.61) 1.05x. Its tiles cost about
# 1.28x the per-item kernel's (b 128 h_q 64: 141.6 against 114.3 us for 31 against 32 tiles a
# program), which is what keeps it out of fuller batches. BALANCE: None follows this rule,
# True / False force it (A/B runs).
BALANCED_MAX_FILL = 0.62
BALANCE = None
FP32_OUT = True  # out may be fp32 (sparse_decode_extra.py's partial outputs)
# Q copied by TMA boxes (the kernels' constexpr QTMA) where q's rows allow it (q_tma_reason):
# Q_TMA None follows TLE_SPARSE_DECODE_QTMA (0 / 1) if set, else Q_TMA_BY_DEFAULT; True / False
# force it (A/B runs). The gather stays the default: the copy measured slower (docs/BENCHMARKS.md).
QTMA_ENV = "TLE_SPARSE_DECODE_QTMA"
Q_TMA = None
Q_TMA_BY_DEFAULT = False


def q_tma_reason(q3) -> Optional[str]:
    """None when the split kernels can copy an item's Q as TMA boxes of q3 [T', h_q, 576] viewed
    as rows [T' * h_q, 576] (a head block's rows consecutive there), else why not: the dense
    decode's rule (mla_decode_launch.q_tma_reason) for q3 as [T', 1, h_q, 576], one query per
    row and one kv head (its first two dims flatten into rows of 16 bytes' stride, its last dim
    contiguous, its base 16-byte aligned)."""
    from .mla_decode_launch import q_tma_reason as rows_reason

    return rows_reason(q3.unsqueeze(1), 1)


def use_q_tma(q3) -> bool:
    """Whether a launch over q3 copies Q by TMA: ``Q_TMA`` if set (True refused, naming why,
    where q_tma_reason refuses), else TLE_SPARSE_DECODE_QTMA if set, else Q_TMA_BY_DEFAULT where
    q_tma_reason allows it (mla_decode_launch.use_q_tma's rule)."""
    from .mla_decode_launch import use_q_tma as use_rows

    return use_rows(q3.unsqueeze(1), 1, Q_TMA, Q_TMA_BY_DEFAULT, env=QTMA_ENV)


def q_descriptors(q3, q_tma: bool) -> tuple:
    """The kernels' (q_desc, q_tail_desc): host TMA descriptors over q3 viewed as rows [T' * h_q,
    576] with boxes [64, 256] and [64, 64] (mla_decode_launch.q_row_descriptors) when
    ``q_tma``, else q3 twice (unused)."""
    if not q_tma:
        return q3, q3
    from .mla_decode_launch import q_row_descriptors

    return q_row_descriptors(q3.unsqueeze(1), 2)


def use_balanced(items: int, sms: int, h_q: int) -> bool:
    """Whether a batch of ``items`` (row, head block) items, for which no split fits one round,
    runs on the balanced kernel: where the items fill more than half of the SMs and at most
    ``BALANCED_MAX_FILL`` of them (``BALANCE`` forces either), h_q a multiple of the merge's
    head block (``head_padding.MERGE_HEADS``)."""
    from .head_padding import MERGE_HEADS

    if h_q % MERGE_HEADS or items <= 0:
        return False
    if BALANCE is not None:
        return bool(BALANCE)
    return sms / 2 < items <= BALANCED_MAX_FILL * sms


def sparse_split_fp8_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink=None,
                                        topk_length=None, extra_k_cache=None,
                                        extra_indices=None,
                                        extra_topk_length=None) -> Optional[str]:
    """None when ``launch_sparse_split_fp8`` runs this (validated) call, else why not. Reads
    shapes, strides and data pointers only."""
    if not is_fp8:
        return "split-fp8 reads the FP8 cache only"
    if extra_k_cache is not None:
        return "split-fp8 does not take an extra cache"
    topk = indices.shape[-1]
    if topk == 0 or topk % TILE != 0:
        return f"split-fp8 needs topk a positive multiple of {TILE} (got topk={topk})"
    return fp8_cache_unsupported_reason(k_cache, "split-fp8")


def run_split_rows(q3, k_cache, idx2, out3, lse2, max_logits, sm_scale: float,
                   sink=None, q_div: int = 1) -> None:
    """One launch over query rows: q3 [T / q_div, h_q, 576] bf16, idx2 [T, topk] int32 into out3
    [T, h_q, 512] bf16, lse2 and max_logits [T, h_q] fp32 with the same strides (natural log; a
    row with no valid index: out 0, lse +inf, max_logits -inf). Row t reads q row t // q_div
    (a tail split's pieces of one token share its q, with no copy of it per piece). ``sink``:
    attn_sink [h_q] fp32, 16-byte aligned, in the sink kernel's epilogue (out only: lse and
    max_logits are the scores')."""
    kv8, kv32, kv16, stride_blk, n_tokens = cache_views(k_cache)
    t, h_q = idx2.shape[0], q3.shape[1]
    assert max_logits.stride() == lse2.stride()
    assert q_div >= 1 and q3.shape[0] * q_div == t, (tuple(q3.shape), q_div, t)
    grid, n_items, n_hb, rounds = api.launch_args(t, h_q, api.sm_count(q3.device), BLOCK_H)
    q_tma = use_q_tma(q3)
    args = (q3, *q_descriptors(q3, q_tma), kv8, kv32, kv16, idx2, out3, lse2, max_logits,
            q3.stride(0), q3.stride(1), q_div, stride_blk, k_cache.shape[1], idx2.stride(0),
            out3.stride(0), out3.stride(1), lse2.stride(0), n_tokens, float(sm_scale), n_items,
            n_hb, rounds)
    # h_q (n_heads) last: the kernels mask the rows of their last head block past it
    if sink is None:
        from . import sparse_decode_split_fp8 as kmod

        kmod.sparse_decode_split_fp8[grid](*args, h_q, TOPK=idx2.shape[-1], BLOCK_H=BLOCK_H,
                                           QTMA=int(q_tma))
    else:
        from . import sparse_decode_split_fp8_sink as smod

        smod.sparse_decode_split_fp8_sink[grid](*args, sink, h_q, TOPK=idx2.shape[-1],
                                                BLOCK_H=BLOCK_H, QTMA=int(q_tma))


def launch_sparse_split_fp8(q, k_cache, indices, sm_scale: float, is_fp8: bool, out, lse,
                            attn_sink=None, topk_length=None, extra_k_cache=None,
                            extra_indices=None, extra_topk_length=None) -> None:
    """One sparse decode step into out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32
    (validated inputs; sparse_decode_naive's arguments)."""
    why = sparse_split_fp8_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink,
                                              topk_length, extra_k_cache, extra_indices,
                                              extra_topk_length)
    if why is not None:
        raise NotImplementedError(f"impl: 'split-fp8' cannot run this call: {why}")
    b, s_q, h_q = q.shape[0], q.shape[1], q.shape[2]
    t = b * s_q
    topk = indices.shape[-1]
    if topk_length is not None:
        indices = masked_indices(indices, topk_length)
    rows = RowOutputs(out, lse)
    q3, idx2 = token_rows(q, t), token_rows(indices, t)
    sink = None if attn_sink is None else aligned(attn_sink)
    from .head_padding import MERGE_HEADS, run_split_any_heads
    from .tail_split import plan_round_split, plan_tail_split

    def runner(sink):
        """tail_split's runner: a launch over rows, with ``sink`` in its epilogue if given."""
        def run(q3, _kv, idx3, out3, max_logits, lse2, q_div=1):
            run_split_rows(q3, k_cache, idx3.view(idx3.shape[0], idx3.shape[-1]), out3, lse2,
                           max_logits, sm_scale, sink, q_div)
        return run

    n_hb, sms = -(-h_q // BLOCK_H), api.sm_count(q.device)
    split = plan_tail_split(t, n_hb, topk, sms, TILE, min_speedup=DECODE_MIN_SPEEDUP)
    if split is None and use_balanced(t * n_hb, sms, h_q):
        from .sparse_decode_split_fp8_balanced_launch import run_balanced

        run_balanced(q3, k_cache, idx2, rows.out3, rows.lse2, rows.max_logits, sm_scale, sink)
        rows.finish()
        return
    if split is None and h_q % MERGE_HEADS == 0:
        # (at other head counts the tail's pieces run over padded copies of q and the outputs,
        # which the model leaves out: b 40 at h_q 100 ran 0.84x unsplit)
        split = plan_round_split(t, n_hb, topk, sms, TILE, ROUND_SPLIT_OVERHEAD_TILES,
                                 ROUND_SPLIT_MIN_SPEEDUP)
    if split is None:
        run_split_rows(q3, k_cache, idx2, rows.out3, rows.lse2, rows.max_logits, sm_scale, sink)
    else:
        # the pieces without the sink (it would count once per piece), the merge with it, the
        # main tokens (whole waves, if any) with it in the kernel
        run_split_any_heads(runner(None), q3, None, idx2.view(t, 1, topk), rows.out3,
                            rows.max_logits, rows.lse2, split, sink=sink, run_main=runner(sink),
                            shared_q=True)
    rows.finish()
