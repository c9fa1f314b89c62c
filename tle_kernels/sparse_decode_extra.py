"""The extra cache of the sparse decode on a TLE kernel that reads one cache: two launches and an
exact merge.

FlashMLA's ``flash_mla_with_kvcache`` takes, besides the main cache and its ``indices``, an
``extra_k_cache`` with its own ``extra_indices`` (and ``extra_topk_length``): each query row
attends to the valid tokens of both, under one softmax (tle_kernels/sparse_decode_reference.py).
Attention over a union of token sets splits exactly into attention over each set and a merge by
log-sum-exp, as split-KV decoding merges its splits: with ``(o_c, lse_c)`` the output normalised
over set c and its lse,

    lse = log(sum_c exp(lse_c)),   out = sum_c exp(lse_c - lse) * o_c,

and attn_sink, which adds exp(sink) to the denominator once, is applied by the merge alone
(out *= 1 / (1 + exp(sink - lse)); lse stays the scores'). So a kernel that reads one cache runs
the call as two launches, the main cache with ``indices`` and ``topk_length``, the extra cache
with ``extra_indices`` and ``extra_topk_length``, both without the sink, and tail_split's merge
(``combine``) writes out and lse. A row with no valid token in one set carries no weight from it
(lse +inf, the kernels' empty-row convention); a row with none in either gets out 0, lse +inf.

The two partial outputs are fp32: a launcher takes part only if its kernels store out in out's
dtype (its module's ``FP32_OUT``), so the output is rounded to bf16 once, after the merge. bf16
partials (each rounded, then the merge rounded again) add a rounding that took the split FP8
kernel's output past FlashMLA's cosine tolerance on hostile batches (docs/sparse_decode.md).

Nothing is read from the device on the host, so the call still captures in a CUDA graph.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from .sparse_decode_rows import RowOutputs
from .tail_split import combine

D_V = 512

# A launcher's support function and launch function, with sparse_decode_api's LAUNCHERS
# signatures: support(q, k_cache, indices, is_fp8, attn_sink, topk_length, extra_k_cache,
# extra_indices, extra_topk_length) -> Optional[str]; launch(q, k_cache, indices, sm_scale,
# is_fp8, out, lse, attn_sink, topk_length, extra_k_cache, extra_indices, extra_topk_length).
Support = Callable[..., Optional[str]]
Launch = Callable[..., None]


def extra_unsupported_reason(support: Support, fp32_out: bool, q, k_cache, indices,
                             is_fp8: bool, topk_length=None, extra_k_cache=None,
                             extra_indices=None, extra_topk_length=None) -> Optional[str]:
    """None when the kernel behind ``support`` runs both launches of a call with an extra cache
    (each one cache, no sink: the merge applies it) into fp32 partial outputs (``fp32_out``: its
    kernels store out in out's dtype), else why not, naming the launch."""
    if not fp32_out:
        return ("its kernels store bf16 outputs only, and an extra cache runs as two launches "
                "whose outputs are merged in fp32")
    why = support(q, k_cache, indices, is_fp8, None, topk_length, None, None, None)
    if why is not None:
        return f"the main cache's launch: {why}"
    why = support(q, extra_k_cache, extra_indices, is_fp8, None, extra_topk_length, None, None,
                  None)
    if why is not None:
        return f"the extra cache's launch: {why}"
    return None


def merge_pieces(out_p: torch.Tensor, lse_p: torch.Tensor, out: torch.Tensor,
                 lse: torch.Tensor, attn_sink: Optional[torch.Tensor] = None) -> None:
    """Merge C partial results of a decode step into ``out`` [b, s_q, h_q, 512] and ``lse`` [b,
    h_q, s_q] (written in place): ``out_p`` [C, b, s_q, h_q, 512] and ``lse_p`` [C, b, h_q, s_q]
    (contiguous; piece c is a whole decode's outputs, normalised over its own tokens);
    ``attn_sink`` [h_q] joins the merged denominator."""
    c, b, s_q, h_q, d_v = out_p.shape
    t = b * s_q
    lse_rows = lse_p.permute(1, 3, 0, 2).reshape(t, c, h_q)      # [t, C, h_q], a small copy
    pieces = out_p.view(c, t, h_q, d_v).permute(1, 0, 2, 3)     # [t, C, h_q, d_v], a view
    rows = RowOutputs(out, lse)
    max_logits = torch.full_like(lse_rows, float("-inf"))  # the merge's third output, unused
    combine(pieces, max_logits, lse_rows, rows.out3, rows.max_logits, rows.lse2, attn_sink)
    rows.finish()


def launch_with_extra(launch: Launch, q, k_cache, indices, sm_scale: float, is_fp8: bool, out,
                      lse, attn_sink=None, topk_length=None, extra_k_cache=None,
                      extra_indices=None, extra_topk_length=None) -> None:
    """One sparse decode step with an extra cache by a launcher that reads one cache and stores
    out in out's dtype: the main and the extra launch into fp32 partial buffers, then the merge
    into out and lse (validated inputs; sparse_decode_naive's arguments)."""
    b, s_q, h_q = q.shape[0], q.shape[1], q.shape[2]
    # each launch's outputs whole, contiguous and fp32 (rounded to out's bf16 once, merged)
    out_p = out.new_empty((2, b, s_q, h_q, D_V), dtype=torch.float32)
    lse_p = lse.new_empty((2, b, h_q, s_q))
    launch(q, k_cache, indices, sm_scale, is_fp8, out_p[0], lse_p[0], None, topk_length, None,
           None, None)
    launch(q, extra_k_cache, extra_indices, sm_scale, is_fp8, out_p[1], lse_p[1], None,
           extra_topk_length, None, None, None)
    merge_pieces(out_p, lse_p, out, lse, attn_sink)
