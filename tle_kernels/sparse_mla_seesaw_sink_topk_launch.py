"""Launching the seesaw SparseMLA prefill with attn_sink and/or topk_length (tle_kernels/api.py's
impl "seesaw" when either is given; without them api.py launches the plain seesaw itself).

- topk_length given (with or without attn_sink): tle_kernels/sparse_mla_seesaw_topk_length.py,
  persistent (one program per SM, or per item when there are fewer items: ``api.launch_args``;
  ``persistent=False``: one program per item), each program walking only its items' K-tile
  pairs. No tail split: a piece of a row would need its own length.
- attn_sink alone: tle_kernels/sparse_mla_seesaw_sink.py, persistent like the plain seesaw (one
  program per SM, ``api.launch_args``), with its last partial wave split into topk pieces
  as the plain seesaw's is (tle_kernels/tail_split.py). A piece must not apply the sink (it would
  count exp(sink) once per piece), so the tail tokens run as the plain seesaw's pieces and the
  merge applies it: out *= 1 / (1 + exp(sink - lse)) on the merged lse, in fp32 before the one
  rounding to bf16 (tail_split.combine), the same factor the kernel's epilogue applies.

The kernels are looked up in their modules at call time, so a test can put emulated ones there.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

BLOCK_H = 64


def launch_sink_topk(run_plain: Callable, q: torch.Tensor, kv: torch.Tensor,
                     indices: torch.Tensor, sm_scale: float, out: torch.Tensor,
                     max_logits: torch.Tensor, lse: torch.Tensor,
                     attn_sink: Optional[torch.Tensor], topk_length: Optional[torch.Tensor],
                     tail_split: bool = True, persistent: bool = True) -> None:
    """One 3-D call into given outputs (validated by api.py). ``run_plain(q, kv, indices, out,
    max_logits, lse)``: a launch of the plain seesaw (api.launch's), for the tail pieces of a
    sink-only call. ``tail_split``: as api.launch's (sink-only calls); ``persistent``: as
    api.launch's (both kernels)."""
    from . import api

    s_q, h_q, _ = q.shape
    topk = indices.shape[-1]
    if topk_length is not None:
        from . import sparse_mla_seesaw_topk_length as mod

        items = s_q * (h_q // BLOCK_H)
        programs = api.sm_count(q.device) if persistent else items
        grid, n_items, n_hb, _ = api.launch_args(s_q, h_q, programs, BLOCK_H)
        mod.sparse_mla_seesaw_topk_length[grid](
            *_common_args(q, kv, indices, sm_scale, out, max_logits, lse), n_items, n_hb,
            lse if attn_sink is None else attn_sink,  # not read without the sink
            topk_length, TOPK=topk, BLOCK_H=BLOCK_H, HAS_SINK=int(attn_sink is not None))
        return
    assert attn_sink is not None
    from . import sparse_mla_seesaw_sink as mod


    def run_sink(q, kv, indices, out, max_logits, lse):
        # api.PerCtaLaunch's persistent launch (one program per SM, or per item), the sink last
        items = q.shape[0] * (h_q // BLOCK_H)
        programs = api.sm_count(q.device) if persistent else items
        grid, n_items, n_hb, rounds = api.launch_args(q.shape[0], h_q, programs, BLOCK_H)
        mod.sparse_mla_seesaw_sink[grid](
            *_common_args(q, kv, indices, sm_scale, out, max_logits, lse), n_items, n_hb, rounds,
            attn_sink, TOPK=topk, BLOCK_H=BLOCK_H)

    split = None
    if tail_split and persistent and "seesaw" in api.SPLITS_TAIL:
        from .tail_split import plan_tail_split

        split = plan_tail_split(s_q, h_q // BLOCK_H, topk, api.sm_count(q.device),
                                api.TOPK_STEP["seesaw"])
    if split is None:
        run_sink(q, kv, indices, out, max_logits, lse)
        return
    from .tail_split import run_split

    run_split(run_plain, q, kv, indices, out, max_logits, lse, split, sink=attn_sink,
              run_main=run_sink)


def _common_args(q, kv, indices, sm_scale, out, max_logits, lse) -> tuple:
    """The arguments every seesaw kernel starts with (tle_kernels/api.py's order)."""
    assert max_logits.stride() == lse.stride()
    return (q, kv, indices, out, lse, max_logits, q.stride(0), q.stride(1), kv.stride(0),
            indices.stride(0), out.stride(0), out.stride(1), lse.stride(0), kv.shape[0],
            float(sm_scale))
