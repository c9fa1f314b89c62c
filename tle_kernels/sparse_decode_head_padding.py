"""The sparse decode at the tensor-parallel head counts 8, 16 and 32 on the seesaw kernels, which
take heads in blocks of 64: q gets zero heads up to 64, the kernel runs, and the real heads'
outputs are copied back.

DeepSeek's 128 query heads split over 4, 8 or 16 GPUs leave 32, 16 or 8 per GPU. FlashMLA's sm90
sparse decode refuses them and serving engines pad q to 64 heads themselves; here the launchers
of impl "seesaw" and "seesaw-fp8" do it, so such a call runs at the 64-head kernel's speed per
launch (h_q / 64 of its FLOP/s is real work) instead of on the naive kernel. A padded head's
query is zero: its scores are 0 and its output, lse and sink never leave the scratch buffers.
The copies are device ops (no host reads): a call still captures in a CUDA graph.
"""

from __future__ import annotations

from typing import Callable

import torch

BLOCK_H = 64  # the heads of one seesaw work item


def padded_heads(h_q: int) -> int:
    """The head count the seesaw kernels run a call of ``h_q`` heads with: ``h_q`` itself when it
    is a multiple of 64, else 64 when ``h_q`` divides it (8, 16, 32), else ``h_q`` (the kernels'
    support check then refuses it)."""
    if h_q % BLOCK_H == 0 or h_q <= 0 or BLOCK_H % h_q != 0:
        return h_q
    return BLOCK_H


def launch_padded(launch: Callable, q: torch.Tensor, k_cache, indices, sm_scale: float,
                  is_fp8: bool, out: torch.Tensor, lse: torch.Tensor, attn_sink=None,
                  *rest) -> None:
    """``launch`` (a sparse decode launcher: sparse_decode_naive's arguments) over q padded to
    ``padded_heads(h_q)`` heads, then out [b, s_q, h_q, 512] and lse [b, h_q, s_q] from the real
    heads. The padded heads' sinks are -inf (no weight; they are dropped anyway)."""
    b, s_q, h_q, d = q.shape
    heads = padded_heads(h_q)
    qp = q.new_zeros((b, s_q, heads, d))
    qp[:, :, :h_q] = q
    out_p = out.new_empty((b, s_q, heads, out.shape[-1]))
    lse_p = lse.new_empty((b, heads, s_q))
    sink_p = None
    if attn_sink is not None:
        sink_p = attn_sink.new_full((heads,), float("-inf"))
        sink_p[:h_q] = attn_sink
    launch(qp, k_cache, indices, sm_scale, is_fp8, out_p, lse_p, sink_p, *rest)
    out.copy_(out_p[:, :, :h_q])
    lse.copy_(lse_p[:, :h_q])
