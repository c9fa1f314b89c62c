"""Launching the FP8 sparse MLA decode kernels (tle_kernels/sparse_decode_seesaw_fp8.py, and
tle_kernels/sparse_decode_seesaw_fp8_sink.py with attn_sink) from
tle_kernels/sparse_decode_api.py: ``launch_sparse_seesaw_fp8`` takes sparse_decode_naive's
arguments, ``sparse_seesaw_fp8_unsupported_reason`` says why a call cannot run here.

The kernel is the seesaw prefill over T = b * s_q query rows, persistent (one program per SM,
ROUNDS (row, head block) items each, ``api.launch_args``):

- q [b, s_q, h_q, 576] -> [T, h_q, 576], indices [b, s_q, topk] -> [T, topk], out [b, s_q, h_q,
  512] -> [T, h_q, 512]: views whenever the strides allow (always for contiguous tensors), else
  contiguous copies (and out through a scratch copied back).
- k_cache [num_blocks, page, 1, 656] bytes: one flat 1-D view of the bytes it spans, passed three
  times as float8_e4m3fn, float32 and bfloat16 (NoPE values, scales, RoPE values; the kernel
  divides byte offsets by the element size), with the block stride in bytes and the page size,
  so a padded block stride (FlashMLA's) needs no copy.
- lse: the kernel writes [T, h_q] rows (heads contiguous); the decode's lse is [b, h_q, s_q].
  With s_q == 1 the two are the same memory; otherwise a scratch is copied, transposed, into lse.
  max_logits (the prefill's other output) goes to a scratch.
- topk_length [b]: each request's slots at or past its length are made invalid (-1) in a copy of
  the indices, which the kernel then skips as any invalid index (an elementwise op over
  [b, s_q, topk]; the rows do not stop early).
- attn_sink [h_q]: the same kernel with the seesaw prefill's consumers at SINK = 1
  (tle_kernels/sparse_decode_seesaw_fp8_sink.py), the sink in their epilogue.
- A call of fewer (row, head block) items than fill their last wave of SMs (every call of a
  batch under one wave) runs the rows past the whole waves as topk pieces (tail_split.py: 2
  rows of 64 heads at topk 2048 become 32 pieces of one K-tile pair), merged by lse; with
  attn_sink the pieces run the plain kernel and the merge applies the sink.

- h_q 8 / 16 / 32 (tensor parallelism): the kernel's one block of 64 head rows has its rows
  past h_q masked (q read as 0, nothing stored; ``n_heads``), no copy of q or out; the merge of
  split pieces at h_q 8 runs over copies of the pieces padded to 16 heads
  (``head_padding.run_split_any_heads``).

Nothing is read from the device on the host, so a call captures in a CUDA graph. The kernels are
looked up in their modules at call time, so a test can put emulated ones there.
"""

from __future__ import annotations

from typing import Optional

import torch

from . import api
from .data_pointers import address_aligned
from .head_padding import decode_padded_heads, run_split_any_heads
from .sparse_decode_rows import RowOutputs, aligned, token_rows
from .fp8_kvcache import BYTES_PER_TOKEN, CACHE_DTYPES

D_QK = 576
D_V = 512
BLOCK_H = 64
PAIR = 128       # topk indices per K-tile pair


def sparse_seesaw_fp8_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink=None,
                                         topk_length=None, extra_k_cache=None,
                                         extra_indices=None,
                                         extra_topk_length=None) -> Optional[str]:
    """None when ``launch_sparse_seesaw_fp8`` runs this (validated) call, else why not. Reads
    shapes, strides and data pointers only."""
    if not is_fp8:
        return "seesaw-fp8 reads the FP8 cache only (a bf16 cache runs on 'seesaw')"
    if extra_k_cache is not None:
        return "seesaw-fp8 does not take an extra cache"
    h_q, topk = q.shape[2], indices.shape[-1]
    if decode_padded_heads(h_q) % BLOCK_H != 0:  # h_q 8 / 16 / 32: one masked block of 64
        return f"seesaw-fp8 needs h_q % {BLOCK_H} == 0 or h_q in (8, 16, 32) (got h_q={h_q})"
    if topk % PAIR != 0:
        return f"seesaw-fp8 needs topk % {PAIR} == 0 (got topk={topk})"
    return fp8_cache_unsupported_reason(k_cache, "seesaw-fp8")


def fp8_cache_unsupported_reason(k_cache, impl: str) -> Optional[str]:
    """Why an FP8 kernel reading the cache through ``cache_views`` cannot take ``k_cache`` (its
    bytes as fp8 / fp32 / bf16 views at 16-byte aligned token rows), or None; ``impl`` names the
    kernel in the message. Reads shape, strides and data pointer only (the pointer where it can
    be read: not while torch.compile traces, data_pointers.address_known)."""
    if k_cache.dtype not in CACHE_DTYPES or k_cache.shape[-1] != BYTES_PER_TOKEN:
        return f"{impl} needs a byte cache of {BYTES_PER_TOKEN} bytes per token"
    if k_cache.shape[1] > 1 and k_cache.stride(1) != BYTES_PER_TOKEN:
        return f"{impl} needs a block's tokens back to back"
    if k_cache.shape[0] > 1 and k_cache.stride(0) % 16 != 0:
        return f"{impl} needs a block stride that is a multiple of 16 bytes"
    if not address_aligned(k_cache):
        return f"{impl} needs k_cache 16-byte aligned"
    return None


def cache_views(k_cache: torch.Tensor):
    """(fp8, fp32, bf16) 1-D views of the bytes ``k_cache`` spans (from its first byte to the end
    of its last token), its block stride in bytes and its token count."""
    raw = k_cache.view(torch.uint8)
    n_blocks, page = raw.shape[0], raw.shape[1]
    stride_blk = raw.stride(0) if n_blocks > 1 else page * BYTES_PER_TOKEN
    span = (n_blocks - 1) * stride_blk + page * BYTES_PER_TOKEN
    flat = raw.as_strided((span,), (1,))
    return (flat.view(torch.float8_e4m3fn), flat.view(torch.float32), flat.view(torch.bfloat16),
            stride_blk, n_blocks * page)


def masked_indices(indices: torch.Tensor, topk_length: torch.Tensor) -> torch.Tensor:
    """A copy of ``indices`` [b, s_q, topk] with request i's slots at or past topk_length[i] set
    to -1 (invalid)."""
    slot = torch.arange(indices.shape[-1], device=indices.device, dtype=torch.int32)
    keep = slot.view(1, 1, -1) < topk_length.view(-1, 1, 1)
    return torch.where(keep, indices, torch.full_like(indices, -1))


def run_rows(views, sink):
    """A launch of the FP8 kernel (the sink one when ``sink`` is given) over query rows, as
    tail_split's runner: ``(q [T, h_q, 576], _, indices [T, 1, topk], out [T, h_q, 512],
    max_logits [T, h_q], lse [T, h_q])``, max_logits and lse with the same strides. ``views``:
    the cache's (fp8, fp32, bf16) views, block stride, page size, token count and sm_scale."""
    kv8, kv32, kv16, stride_blk, page, n_tokens, sm_scale = views

    def run(q3, _kv, idx3, out3, max_logits, lse2):
        t, h_q = q3.shape[0], q3.shape[1]
        topk = idx3.shape[-1]
        idx2 = idx3.view(t, topk)
        assert max_logits.stride() == lse2.stride()
        grid, n_items, n_hb, rounds = api.launch_args(t, h_q, api.sm_count(q3.device), BLOCK_H)
        args = (q3, kv8, kv32, kv16, idx2, out3, lse2, max_logits, q3.stride(0), q3.stride(1),
                stride_blk, page, idx2.stride(0), out3.stride(0), out3.stride(1),
                lse2.stride(0), n_tokens, sm_scale, n_items, n_hb, rounds)
        # h_q (n_heads) last: the kernel masks the rows of its last head block past it
        if sink is None:
            from . import sparse_decode_seesaw_fp8 as kmod

            kmod.sparse_decode_seesaw_fp8[grid](*args, h_q, TOPK=topk, BLOCK_H=BLOCK_H)
        else:
            from . import sparse_decode_seesaw_fp8_sink as smod

            smod.sparse_decode_seesaw_fp8_sink[grid](*args, sink, h_q, TOPK=topk,
                                                     BLOCK_H=BLOCK_H)
    return run


def launch_sparse_seesaw_fp8(q, k_cache, indices, sm_scale: float, is_fp8: bool, out, lse,
                             attn_sink=None, topk_length=None, extra_k_cache=None,
                             extra_indices=None, extra_topk_length=None) -> None:
    """One sparse decode step into out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32
    (validated inputs; sparse_decode_naive's arguments)."""
    why = sparse_seesaw_fp8_unsupported_reason(q, k_cache, indices, is_fp8, attn_sink,
                                               topk_length, extra_k_cache, extra_indices,
                                               extra_topk_length)
    if why is not None:
        raise NotImplementedError(f"impl: 'seesaw-fp8' cannot run this call: {why}")

    b, s_q, h_q, _ = q.shape
    t = b * s_q
    topk = indices.shape[-1]
    if topk_length is not None:
        indices = masked_indices(indices, topk_length)
    q3 = token_rows(q, t)
    idx2 = token_rows(indices, t)
    kv8, kv32, kv16, stride_blk, n_tokens = cache_views(k_cache)
    rows = RowOutputs(out, lse)
    sink = None if attn_sink is None else aligned(attn_sink)
    views = (kv8, kv32, kv16, stride_blk, k_cache.shape[1], n_tokens, float(sm_scale))
    idx3 = idx2.view(t, 1, topk)
    from .tail_split import plan_tail_split

    outputs = (rows.out3, rows.max_logits, rows.lse2)
    split = plan_tail_split(t, -(-h_q // BLOCK_H), topk, api.sm_count(q.device), PAIR)
    if split is None:
        run_rows(views, sink)(q3, None, idx3, *outputs)
    else:
        # fewer items than fill their last wave (a small batch: all of them): the rows past the
        # whole waves run as topk pieces on every SM, merged by lse (tail_split.py); a piece must
        # not apply the sink (it would count exp(sink) once per piece): the merge applies it
        run_split_any_heads(run_rows(views, None), q3, None, idx3, *outputs, split, sink=sink,
                            run_main=run_rows(views, sink))
    rows.finish()
