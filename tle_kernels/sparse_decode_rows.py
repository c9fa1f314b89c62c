"""A sparse decode step as rows of the prefill kernels: each (request, query row) of the decode is
one query token, so [b, s_q, ...] tensors become [t = b * s_q, ...] rows, and the outputs the
kernels write as rows are the decode's out and lse (views where the memory allows, scratch
buffers copied back otherwise). Shared by the bf16 and FP8 seesaw launchers
(sparse_decode_seesaw_launch.py, sparse_decode_seesaw_fp8_launch.py). Nothing is read from the
device on the host, so a call still captures in a CUDA graph.
"""

from __future__ import annotations

import torch

from . import api
from .api import aligned  # noqa: F401 (the decode launchers import it from here)


def token_lengths(topk_length: torch.Tensor, s_q: int) -> torch.Tensor:
    """topk_length [b] of a decode step as one length per token row [b * s_q] (a request's s_q
    rows share it), contiguous and 16-byte aligned: a prefill kernel reads token t's length at
    topk_length + t (an expanded view would have stride 0)."""
    return aligned(topk_length if s_q == 1 else topk_length.repeat_interleave(s_q))


def token_rows(x: torch.Tensor, t: int) -> torch.Tensor:
    """[b, s_q, ...] -> [t = b * s_q, ...] with 16-byte aligned rows: a view when the strides
    allow, else a contiguous copy."""
    return aligned(x.reshape((t,) + tuple(x.shape[2:])))


class RowOutputs:
    """out [b, s_q, h_q, d_v] bf16 and lse [b, h_q, s_q] as the kernels' rows: ``out3`` [t, h_q,
    d_v] (out itself when it flattens to aligned rows, else a scratch), ``lse2`` [t, h_q] with
    the heads contiguous (lse itself only when s_q == 1: otherwise a scratch, transposed back)
    and ``max_logits`` [t, h_q] (the prefill's other output, a scratch with lse2's strides).
    ``finish()`` copies the scratches into out and lse."""

    def __init__(self, out: torch.Tensor, lse: torch.Tensor):
        b, s_q, h_q, d_v = out.shape
        t = b * s_q
        self.out, self.lse = out, lse
        try:
            out3 = out.view(t, h_q, d_v)
        except RuntimeError:
            out3 = None
        self.out_scratch = out3 is None or not api.rows_aligned(out3)
        self.out3 = out.new_empty((t, h_q, d_v)) if self.out_scratch else out3
        self.max_logits = lse.new_empty((t, h_q))
        lse2 = lse[:, :, 0] if s_q == 1 else None
        self.lse_scratch = (lse2 is None or lse2.stride() != self.max_logits.stride()
                            or not api.rows_aligned(lse2))
        self.lse2 = lse.new_empty((t, h_q)) if self.lse_scratch else lse2

    def finish(self) -> None:
        b, s_q, h_q, _ = self.out.shape
        if self.out_scratch:
            self.out.copy_(self.out3.view(self.out.shape))
        if self.lse_scratch:
            self.lse.copy_(self.lse2.view(b, s_q, h_q).transpose(1, 2))
