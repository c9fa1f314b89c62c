"""Launching the narrow-head SparseMLA prefill kernel (tle_kernels/sparse_mla_narrow.py): h_q <= 32,
one program per query token, the heads as the wgmma's N (16 or 32 columns, the ones past h_q
masked); d_qk 576 or 512 (the kernels without the RoPE tail).

The kernel reads q and writes the outputs in place when their rows are 16-byte aligned (its
cp.async copies and vector stores need that); otherwise it runs over aligned scratch copies and
the results are copied back (device ops only, so a call still captures in a CUDA graph).
"""

from __future__ import annotations

import torch

def block_heads(h_q: int) -> int:
    """The kernel's BLOCK_H for ``h_q`` heads: 16 up to 16 heads, else 32."""
    from .api import NARROW_MAX_HEADS

    if not 1 <= h_q <= NARROW_MAX_HEADS:
        raise ValueError(f"the narrow kernel takes 1 <= h_q <= {NARROW_MAX_HEADS} "
                         f"(got h_q={h_q})")
    return 16 if h_q <= 16 else 32


def launch_narrow(q, kv, indices, sm_scale: float, out, max_logits, lse, attn_sink=None,
                  topk_length=None) -> None:
    """One prefill call (3-D layout, validated tensors) into out [s_q, h_q, 512] bf16,
    max_logits / lse [s_q, h_q] fp32; ``attn_sink`` [h_q] fp32 or None; ``topk_length`` [s_q]
    int32 or None (each row reads only its first clamp(topk_length, 0, topk) slots: the
    kernel's topk_length variant, whose rows run only their own K tiles)."""
    from . import sparse_mla_narrow as kernels
    from .api import aligned, rows_aligned

    s_q, h_q, _ = q.shape
    if s_q == 0:
        return
    bh = block_heads(h_q)
    qk = aligned(q)
    dst = (out, max_logits, lse)
    aligned_out = rows_aligned(out, max_logits, lse) and max_logits.stride() == lse.stride()
    o, ml, ls = dst if aligned_out else (torch.empty_like(out, memory_format=torch.contiguous_format),
                                         torch.empty((s_q, h_q), device=q.device, dtype=torch.float32),
                                         torch.empty((s_q, h_q), device=q.device, dtype=torch.float32))
    args = (qk, kv, indices, o, ls, ml, qk.stride(0), qk.stride(1), kv.stride(0),
            indices.stride(0), o.stride(0), o.stride(1), ls.stride(0), kv.shape[0],
            float(sm_scale), h_q, ls if attn_sink is None else attn_sink)  # sink read only with SINK
    cx = dict(TOPK=indices.shape[-1], BLOCK_H=bh, SINK=attn_sink is not None)
    # d_qk 576 (512 + the 64-dim RoPE tail) or 512 (no tail: the d512 kernels)
    d512 = q.shape[-1] == 512
    if topk_length is None:
        kernel = kernels.sparse_mla_narrow_d512 if d512 else kernels.sparse_mla_narrow
        kernel[(s_q,)](*args, **cx)
    else:
        # read at topk_length + token: one int32 per row, consecutive
        kernel = (kernels.sparse_mla_narrow_d512_topk_length if d512
                  else kernels.sparse_mla_narrow_topk_length)
        kernel[(s_q,)](*args, topk_length.contiguous(), **cx)
    if not aligned_out:
        out.copy_(o)
        max_logits.copy_(ml)
        lse.copy_(ls)
