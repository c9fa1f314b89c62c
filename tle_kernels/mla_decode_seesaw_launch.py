"""Launching the TLE-FlashMLA seesaw MLA decode kernel (tle_kernels/mla_decode_seesaw.py) on given
tensors, with the TLE-Pipe decode launcher's contract (mla_decode_pipe_launch.py): the same
arguments, work item, split scheme and outputs, so tle_kernels/decode_api.py runs either kernel the
same way.

``launch_decode_seesaw`` runs one decode step into outputs the caller allocated: with one split it
writes ``out`` and ``lse`` directly; with ``n_split > 1`` it writes the splits' partial results
``o_part`` / ``lse_part``, which the caller merges with tle_kernels/mla_decode_combine.py. Nothing
here synchronises with the GPU or allocates, so a decode step captures in a CUDA graph.
``seesaw_unsupported_reason`` says which shapes the kernel cannot run.
"""

from __future__ import annotations

from typing import Optional

import torch

from .mla_decode_launch import check_row_alignment, decode_call, unsupported_reason


def seesaw_unsupported_reason(s_q: int, h_q: int, h_kv: int) -> Optional[str]:
    """Why the seesaw kernel cannot run a call with these head counts, or None when it can. Any
    row count s_q * h_q / h_kv works (a partial block of 64 rows is masked)."""
    return unsupported_reason("seesaw", s_q, h_q, h_kv)


def launch_decode_seesaw(q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor,
                         cache_seqlens: torch.Tensor, sm_scale: float, causal: bool, n_split: int,
                         out: torch.Tensor, lse: torch.Tensor,
                         o_part: Optional[torch.Tensor] = None,
                         lse_part: Optional[torch.Tensor] = None) -> None:
    """One decode step of the seesaw kernel on validated inputs.

    q [b, s_q, h_q, 576] bf16; k_cache [num_blocks, 64, h_kv, 576] bf16 (V = its first 512 dims);
    block_table [b, max_blocks] int32; cache_seqlens [b] int32. ``n_split == 1``: writes out
    [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32 (natural log; a row without a token: out 0,
    lse +inf). ``n_split > 1``: writes o_part [b, n_split, s_q, h_q, 512] fp32 and lse_part
    [b, n_split, s_q, h_q] fp32 (a split without a token for a row: 0 and -inf) and leaves out and
    lse alone; split s of request b covers positions [s * chunk, min(seqlen, (s + 1) * chunk)),
    chunk = ceil(ceil(seqlen / n_split) / 64) * 64."""
    from .mla_decode_seesaw import mla_decode_seesaw

    check_row_alignment("seesaw", q=q, k_cache=k_cache)
    call = decode_seesaw_call(q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split,
                              out, lse, o_part, lse_part)
    if call is not None:
        grid, args, constexprs = call
        mla_decode_seesaw[grid](*args, **constexprs)


def decode_seesaw_call(q, k_cache, block_table, cache_seqlens, sm_scale: float, causal: bool,
                       n_split: int, out, lse, o_part=None, lse_part=None):
    """``(grid, args, constexprs)`` of the kernel launch :func:`launch_decode_seesaw` makes (None
    when there is nothing to run: b == 0), after checking shapes; shared with the CPU emulation
    test, which launches the emulated kernel with exactly these arguments."""
    return decode_call("seesaw", q, k_cache, block_table, cache_seqlens, sm_scale, causal,
                       n_split, out, lse, o_part, lse_part)
