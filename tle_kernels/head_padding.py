"""Head counts that are not a multiple of 64 on the SparseMLA kernels that take query heads in
blocks of 64 (the seesaw prefill kernels and the sparse decode seesaws).

Why: DeepSeek's 128 query heads split over 4, 8 or 16 GPUs leave 32, 16 or 8 per GPU. FlashMLA's
sm90 sparse kernels refuse h_q < 64 and serving engines pad q to 64 heads themselves. Here the
kernels take the real head count (their ``n_heads`` argument): an item is still a block of 64
head rows, ``padded_heads(h_q)`` rows per token in all, and the last block's rows past h_q load
q as 0 and store nothing (out, lse, max_logits; their sink is not read). Each head's softmax is
its own row, so the real heads' results are those of an unpadded run, with no copy of q in and
none of the outputs back.

What still runs over padded copies (q padded by zero heads, scratch outputs, the real heads
copied back, a padded head's sink -inf: ``launch_padded_prefill``): a prefill call whose q,
outputs or sink are not 16-byte aligned where the kernels read and write them (h_q % 4 != 0
makes the lse rows misaligned; the copies are aligned); and the merge of a split last wave
(``run_split_any_heads``), whose kernel takes heads in blocks of ``MERGE_HEADS``: at an h_q that
is not a multiple of it, only the tail tokens' pieces run over copies padded to one. The copies
are device ops (no host reads): a call still captures in a CUDA graph.

When the prefill's "auto" takes the seesaw at such an h_q (``auto_pads``), for the calls the
narrow-head kernel (tle_kernels/sparse_mla_narrow.py, h_q <= 32 unpadded, the first choice where
it applies) does not take (d_qk 512): the seesaw computes
``padded_heads(h_q)`` head rows where the naive kernel computes its own blocks of 16, 32 or 64
heads (the last one masked). On an H200 at topk 2048, s_kv 32K, S 4096, the seesaw computes
64-row items at about 580 TFLOP/s, the naive kernel 16-row blocks at 138 (h_q 16), 32-row blocks
at 205 (h_q 32) and 64-row blocks at about 245 (h_q 128). So 2x the naive kernel's rows (h_q
17..32 -> 64, and every h_q > 32: 48 -> 64, 96 -> 128, at most 2x) leaves the seesaw 1.4x ahead
or more, while 4x the rows (h_q <= 16 -> 64) leaves 580 / 4 = 145 against 138: too close to
call, so "auto" keeps the naive kernel there and ``impl="seesaw"`` runs it on request.
``AUTO_PAD_MAX_ROWS`` is that factor.
"""

from __future__ import annotations

from typing import Callable, Optional

import torch
import torch.nn.functional as F

BLOCK_H = 64  # the heads of one seesaw work item
MERGE_HEADS = 16  # tail_split.combine's Triton kernel takes heads in blocks of 16

# "auto" pads for the seesaw when the padded kernel computes at most this many times the head
# rows the naive kernel computes (see the module docstring for the measured rates behind it)
AUTO_PAD_MAX_ROWS = 2


def padded_heads(h_q: int, block: int = BLOCK_H) -> int:
    """The head rows the seesaw kernels compute for a call of ``h_q`` heads: ``h_q`` rounded up
    to a multiple of 64 (of ``block``)."""
    return -(-h_q // block) * block


def decode_padded_heads(h_q: int) -> int:
    """The head rows the sparse decode seesaws compute for a call of ``h_q`` heads:
    ``padded_heads(h_q)`` for the tensor-parallel counts that divide 64 (8, 16, 32: the decode's
    validation takes h_q in (8, 16, 32, 64, 128) only), else ``h_q`` (the kernels' support
    checks then refuse a count that is not a multiple of 64)."""
    if h_q <= 0 or h_q % BLOCK_H == 0 or BLOCK_H % h_q != 0:
        return h_q
    return padded_heads(h_q)


def naive_head_rows(h_q: int) -> int:
    """The head rows the naive prefill kernel computes for ``h_q`` heads: its head blocks of 16,
    32 or 64 (tle_kernels/sparse_mla_naive.py ``block_h_for``), the last one masked."""
    from .sparse_mla_naive import block_h_for

    block = block_h_for(h_q)
    return -(-h_q // block) * block


def auto_pads(h_q: int) -> bool:
    """Whether the prefill's "auto" runs a call of ``h_q`` heads (h_q % 64 != 0) on the seesaw,
    which computes ``padded_heads(h_q)`` head rows, rather than on the naive kernel: when that is
    at most ``AUTO_PAD_MAX_ROWS`` times the head rows the naive kernel computes."""
    return padded_heads(h_q) <= AUTO_PAD_MAX_ROWS * naive_head_rows(h_q)


def zero_padded(x: torch.Tensor, dim: int, heads: int, fill: float = 0.0) -> torch.Tensor:
    """A new contiguous tensor: ``x`` with its dim ``dim`` extended to ``heads`` entries, the
    added ones ``fill``."""
    pad = [0, 0] * (x.dim() - 1 - dim % x.dim()) + [0, heads - x.shape[dim]]
    return F.pad(x, pad, value=fill)


def scratch(x: torch.Tensor, dim: int, heads: int) -> torch.Tensor:
    """An uninitialised contiguous tensor of ``x``'s dtype and device, its dim ``dim`` of size
    ``heads``."""
    shape = list(x.shape)
    shape[dim] = heads
    return x.new_empty(shape)


def padded_sink(attn_sink: Optional[torch.Tensor], heads: int) -> Optional[torch.Tensor]:
    """attn_sink [h_q] extended to [heads] with -inf (a padded head has no sink)."""
    if attn_sink is None:
        return None
    return zero_padded(attn_sink, 0, heads, float("-inf"))


def copy_real_heads(dst: torch.Tensor, src: torch.Tensor, dim: int) -> None:
    """``dst`` <- the first ``dst.shape[dim]`` heads of the padded ``src``."""
    dst.copy_(src.narrow(dim, 0, dst.shape[dim]))


def launch_padded_prefill(launch: Callable, q: torch.Tensor, kv, indices, sm_scale: float,
                          out: torch.Tensor, max_logits: torch.Tensor, lse: torch.Tensor,
                          attn_sink=None, topk_length=None) -> None:
    """``launch(q, kv, indices, sm_scale, out, max_logits, lse, attn_sink, topk_length)`` (a
    prefill launch, tle_kernels/api.py's arguments) over q [s_q, h_q, d_qk] padded to
    ``padded_heads(h_q)`` heads, then out [s_q, h_q, 512], max_logits and lse [s_q, h_q] from the
    real heads. kv, indices and topk_length reach ``launch`` as given. For a call whose own q,
    outputs or sink are not 16-byte aligned (the copies are)."""
    heads = padded_heads(q.shape[1])
    q_p = zero_padded(q, 1, heads)
    out_p = scratch(out, 1, heads)
    max_logits_p, lse_p = scratch(max_logits, 1, heads), scratch(lse, 1, heads)
    launch(q_p, kv, indices, sm_scale, out_p, max_logits_p, lse_p, padded_sink(attn_sink, heads),
           topk_length)
    copy_real_heads(out, out_p, 1)
    copy_real_heads(max_logits, max_logits_p, 1)
    copy_real_heads(lse, lse_p, 1)


def run_split_any_heads(run: Callable, q: torch.Tensor, kv, indices: torch.Tensor,
                        out: torch.Tensor, max_logits: torch.Tensor, lse: torch.Tensor, split,
                        sink: Optional[torch.Tensor] = None,
                        run_main: Optional[Callable] = None, shared_q: bool = False) -> None:
    """``tail_split.run_split`` (same arguments) at any head count: at an h_q that is a multiple
    of ``MERGE_HEADS``, that itself; otherwise the main tokens run as given, and the tail tokens
    run and merge over copies padded to ``padded_heads(h_q, MERGE_HEADS)`` heads (zero q, a -inf
    sink), their real heads copied back. A few tokens' copies: the tail is less than one wave."""
    from .tail_split import TailSplit, run_split

    h_q = q.shape[1]
    if h_q % MERGE_HEADS == 0:
        run_split(run, q, kv, indices, out, max_logits, lse, split, sink=sink, run_main=run_main,
                  shared_q=shared_q)
        return
    t0 = split.main_tokens
    if t0 > 0:
        (run_main or run)(q[:t0], kv, indices[:t0], out[:t0], max_logits[:t0], lse[:t0])
    heads = padded_heads(h_q, MERGE_HEADS)
    out_t, lse_t = scratch(out[t0:], 1, heads), scratch(lse[t0:], 1, heads)
    ml_t = scratch(max_logits[t0:], 1, heads)
    run_split(run, zero_padded(q[t0:], 1, heads), kv, indices[t0:], out_t, ml_t, lse_t,
              TailSplit(0, split.chunks), sink=padded_sink(sink, heads), shared_q=shared_q)
    copy_real_heads(out[t0:], out_t, 1)
    copy_real_heads(max_logits[t0:], ml_t, 1)
    copy_real_heads(lse[t0:], lse_t, 1)
