"""Launching the seesaw SparseMLA prefill with attn_sink and/or topk_length (tle_kernels/api.py's
impl "seesaw" when either is given; without them api.py launches the plain seesaw itself).

- topk_length given (with or without attn_sink): tle_kernels/sparse_mla_seesaw_topk_length.py
  (d_qk 576) or sparse_mla_seesaw_d512_topk_length.py (d_qk 512, no RoPE tail), persistent (one
  program per SM, or per item when there are fewer items: ``api.launch_args``;
  ``persistent=False``: one program per item), each program walking only its items' K-tile
  pairs. Its partial last round is split into topk pieces as the plain seesaw's: the pieces run
  the same kernel without the sink, each with its own length (``piece_lengths``), and the merge
  applies the sink.
- attn_sink alone: tle_kernels/sparse_mla_seesaw_sink.py (d_qk 576) or
  sparse_mla_seesaw_d512_sink.py (d_qk 512), persistent like the plain seesaw (one
  program per SM, ``api.launch_args``), with its last partial wave split into topk pieces
  as the plain seesaw's is (tle_kernels/tail_split.py). A piece must not apply the sink (it would
  count exp(sink) once per piece), so the tail tokens run as the plain seesaw's pieces (the d512
  kernel's at d_qk 512: ``run_plain``) and the merge applies it: out *= 1 / (1 + exp(sink -
  lse)) on the merged lse, in fp32 before the one rounding to bf16 (tail_split.combine), the
  same factor the kernel's epilogue applies.

Any head count: each kernel takes the real h_q (``n_heads``) in ceil(h_q / 64) head blocks, the
last one's rows past h_q masked; the merge of a split wave at an h_q that is not a multiple of
16 runs over padded copies of the tail tokens (``head_padding.run_split_any_heads``).

The kernel of a call's width is picked by q's last dim (``sink_kernel``, ``topk_length_kernel``)
and looked up in its module at call time, so a test can put emulated ones there.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from .head_padding import run_split_any_heads

BLOCK_H = 64


def launch_sink_topk(run_plain: Callable, q: torch.Tensor, kv: torch.Tensor,
                     indices: torch.Tensor, sm_scale: float, out: torch.Tensor,
                     max_logits: torch.Tensor, lse: torch.Tensor,
                     attn_sink: Optional[torch.Tensor], topk_length: Optional[torch.Tensor],
                     tail_split: bool = True, persistent: bool = True,
                     tail_min_speedup: float = 2.0, shared_q: bool = False) -> None:
    """One 3-D call into given outputs (validated by api.py). ``run_plain(q, kv, indices, out,
    max_logits, lse)``: a launch of the plain seesaw (api.launch's), for the tail pieces of a
    sink-only call; ``shared_q``: it takes ``q_div`` (tail_split.run_split's). ``tail_split`` /
    ``persistent`` / ``tail_min_speedup``: as api.launch's."""
    topk = indices.shape[-1]
    if topk_length is not None:
        _launch_topk_length(q, kv, indices, sm_scale, out, max_logits, lse, attn_sink,
                            topk_length, tail_split, persistent, tail_min_speedup, shared_q)
        return
    assert attn_sink is not None
    kernel = sink_kernel(q.shape[-1])

    def run_sink(q, kv, indices, out, max_logits, lse):
        # api.PerCtaLaunch's persistent launch (one program per SM, or per item), the sink and
        # the head count (the rows past it masked) last
        grid, n_items, n_hb, rounds = _grid(q, indices, persistent)
        kernel[grid](
            *_common_args(q, kv, indices, sm_scale, out, max_logits, lse), n_items, n_hb, rounds,
            attn_sink, q.shape[1], TOPK=topk, BLOCK_H=BLOCK_H)

    split = _tail_plan(q, topk, tail_split, persistent, tail_min_speedup)
    if split is None:
        run_sink(q, kv, indices, out, max_logits, lse)
        return
    run_split_any_heads(run_plain, q, kv, indices, out, max_logits, lse, split, sink=attn_sink,
                        run_main=run_sink, shared_q=shared_q)


def _launch_topk_length(q, kv, indices, sm_scale, out, max_logits, lse, attn_sink, topk_length,
                        tail_split, persistent, tail_min_speedup, shared_q=False) -> None:
    """The topk_length kernel (HAS_SINK when attn_sink is given) on the tokens that fill whole
    rounds, and a partial last round as topk pieces of the plain seesaw's split
    (tle_kernels/tail_split.py): piece k of a tail token attends to its slots [k * w, (k + 1) * w)
    with length clamp(n - k * w, 0, w) (``piece_lengths``, computed on the device, so a CUDA graph
    replays it with new lengths), run without the sink, which the merge applies once.
    ``shared_q`` (the 576 kernel: its ``q_div``): the pieces of a token read its q row in place
    (piece v reads q row v // q_div) rather than a copy of q per piece."""
    from .api import shares_q

    kernel = topk_length_kernel(q.shape[-1])
    # q_div is an argument of the 576 kernel only (api.shares_q's rule); the 512 one's pieces
    # read copies of q
    takes_q_div = shares_q("seesaw", q.shape[-1])
    shared_q = shared_q and takes_q_div

    def run(q, kv, indices, out, max_logits, lse, lengths, sink, q_div=1):
        # persistent: one program per SM (or per item when there are fewer), each walking the
        # K-tile pairs of its items k, k + P, ...; persistent=False: one program per item
        grid, n_items, n_hb, _ = _grid(q, indices, persistent)
        kernel[grid](
            *_common_args(q, kv, indices, sm_scale, out, max_logits, lse), n_items, n_hb,
            lse if sink is None else sink,  # not read without the sink
            lengths, q.shape[1], TOPK=indices.shape[-1], BLOCK_H=BLOCK_H,
            HAS_SINK=int(sink is not None), **({"q_div": q_div} if takes_q_div else {}))

    split = _tail_plan(q, indices.shape[-1], tail_split, persistent, tail_min_speedup)
    if split is None:
        run(q, kv, indices, out, max_logits, lse, topk_length, attn_sink)
        return
    t0, c = split.main_tokens, split.chunks
    pieces = piece_lengths(topk_length[t0:], c, indices.shape[-1] // c)
    run_split_any_heads(lambda *a, q_div=1: run(*a, pieces, None, q_div), q, kv, indices, out,
                        max_logits, lse, split, sink=attn_sink,
                        run_main=lambda *a: run(*a, topk_length[:t0], attn_sink),
                        shared_q=shared_q)


def sink_kernel(d_qk: int):
    """The persistent attn_sink seesaw of a row width: with the RoPE tail (576) or without (512)."""
    if d_qk == 512:
        from . import sparse_mla_seesaw_d512_sink as mod

        return mod.sparse_mla_seesaw_d512_sink
    from . import sparse_mla_seesaw_sink as mod

    return mod.sparse_mla_seesaw_sink


def topk_length_kernel(d_qk: int):
    """The topk_length seesaw (HAS_SINK: with attn_sink) of a row width: 576 or 512."""
    if d_qk == 512:
        from . import sparse_mla_seesaw_d512_topk_length as mod

        return mod.sparse_mla_seesaw_d512_topk_length
    from . import sparse_mla_seesaw_topk_length as mod

    return mod.sparse_mla_seesaw_topk_length


def piece_lengths(topk_length: torch.Tensor, chunks: int, width: int) -> torch.Tensor:
    """The lengths of the topk pieces of tokens with ``topk_length`` [T] (piece t * chunks + k
    holds slots [k * width, (k + 1) * width) of token t): clamp(n - k * width, 0, width), so the
    pieces of a token hold exactly its first clamp(n, 0, topk) slots. [T * chunks] int32."""
    start = torch.arange(chunks, device=topk_length.device, dtype=torch.int64) * width
    n = topk_length.to(torch.int64)[:, None] - start[None, :]
    return n.clamp(0, width).to(torch.int32).reshape(-1)


def _tail_plan(q, topk, tail_split, persistent, min_speedup):
    """The plain seesaw's split of a partial last round into topk pieces
    (tail_split.plan_tail_split, ``min_speedup``), or None: not asked for, not persistent, or not
    worth it."""
    from . import api

    if not (tail_split and persistent and "seesaw" in api.SPLITS_TAIL):
        return None
    from .tail_split import plan_tail_split

    return plan_tail_split(q.shape[0], -(-q.shape[1] // BLOCK_H), topk, api.sm_count(q.device),
                           api.TOPK_STEP["seesaw"], min_speedup=min_speedup)


def _grid(q, indices, persistent: bool):
    """api.launch_args for the index rows of ``indices`` (a token each, or a tail split's pieces,
    which read their token's q row: q_div) and the heads of ``q`` (the head blocks: ceil(h_q /
    64), the last one masked by the kernel): one program per SM, or per item when there are
    fewer or ``persistent`` is False."""
    from . import api

    rows = indices.shape[0]
    items = rows * -(-q.shape[1] // BLOCK_H)
    programs = api.sm_count(q.device) if persistent else items
    return api.launch_args(rows, q.shape[1], programs, BLOCK_H)


def _common_args(q, kv, indices, sm_scale, out, max_logits, lse) -> tuple:
    """The arguments every seesaw kernel starts with (tle_kernels/api.py's order)."""
    assert max_logits.stride() == lse.stride()
    return (q, kv, indices, out, lse, max_logits, q.stride(0), q.stride(1), kv.stride(0),
            indices.stride(0), out.stride(0), out.stride(1), lse.stride(0), kv.shape[0],
            float(sm_scale))
