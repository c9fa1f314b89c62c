"""Launching the balanced split FP8 sparse decode (tle_kernels/sparse_decode_split_fp8_balanced.py):
the batch's K tiles (rows x tiles per row) dealt out evenly over SMs // head-blocks parts, each
part one program per head block, each program's segments stored as pieces of their rows, merged
by lse (tail_split.combine, which also applies attn_sink).

- ``balanced_cuts``: the programs' first tiles p * X // P (X = items * tiles per item), P + 1
  int32 on the device, computed from the shapes alone and kept per shape, so a decode step
  captures in a CUDA graph and replays.
- ``pieces_per_item``: J, the most programs that hold tiles of one item (the piece rows per
  token; a function of the shapes, kept per shape); the kernel's piece row of a segment is
  token * J + (p - the item's first program).
- ``run_balanced``: one launch into piece buffers (out bf16 or out's dtype, lse +inf where no
  segment writes: an empty piece, which the merge does not read), then the merge.
"""

from __future__ import annotations

import functools
from typing import Dict, Tuple

import torch

from . import api

BLOCK_H = 64
TILE = 64
_CUTS: Dict[Tuple[int, int, torch.device], torch.Tensor] = {}


def balanced_cuts(x: int, programs: int, device) -> torch.Tensor:
    """[programs + 1] int32: program p walks tiles [cuts[p], cuts[p + 1]) of x."""
    key = (x, programs, torch.device(device))
    if key not in _CUTS:
        _CUTS[key] = (torch.arange(programs + 1, device=device, dtype=torch.int64) * x
                      // programs).to(torch.int32)
    return _CUTS[key]


@functools.lru_cache(maxsize=64)
def pieces_per_item(n_items: int, nt: int, programs: int) -> int:
    """The most programs among which one item's nt tiles fall when n_items * nt tiles are cut at
    p * X // P (the program holding tile x is ceil((x + 1) * P / X) - 1)."""
    x = n_items * nt

    def holder(tile: int) -> int:
        return -(-(tile + 1) * programs // x) - 1

    return max(holder(i * nt + nt - 1) - holder(i * nt) + 1 for i in range(n_items))


def run_balanced(q3, k_cache, idx2, out3, lse2, max_logits, sm_scale: float, sink=None) -> None:
    """One decode over query rows (run_split_rows's arguments, q_div 1) on the balanced kernel:
    q3 [T, h_q, 576], idx2 [T, topk] into out3 [T, h_q, 512], lse2 and max_logits [T, h_q];
    ``sink`` applied by the merge."""
    from . import sparse_decode_split_fp8_balanced as bmod
    from .sparse_decode_seesaw_fp8_launch import cache_views
    from .tail_split import combine

    kv8, kv32, kv16, stride_blk, n_tokens = cache_views(k_cache)
    t, h_q = idx2.shape[0], q3.shape[1]
    topk = idx2.shape[-1]
    n_hb, nt = -(-h_q // BLOCK_H), topk // TILE
    # the head blocks of a part walk the same tiles side by side (they gather the same rows)
    parts = max(1, min(api.sm_count(q3.device) // n_hb, t * nt))
    cuts = balanced_cuts(t * nt, parts, q3.device)
    j = pieces_per_item(t, nt, parts)
    out_p = out3.new_empty((t * j, h_q, out3.shape[-1]))
    lse_p = lse2.new_full((t * j, h_q), float("inf"))
    ml_p = lse2.new_full((t * j, h_q), float("-inf"))
    bmod.sparse_decode_split_fp8_balanced[(n_hb, parts)](
        q3, kv8, kv32, kv16, idx2, out_p, lse_p, ml_p, q3.stride(0), q3.stride(1), stride_blk,
        k_cache.shape[1], idx2.stride(0), out_p.stride(0), out_p.stride(1), lse_p.stride(0),
        n_tokens, float(sm_scale), t, h_q, j, cuts, TOPK=topk, BLOCK_H=BLOCK_H)
    combine(out_p.view(t, j, h_q, -1), ml_p.view(t, j, h_q), lse_p.view(t, j, h_q), out3,
            max_logits, lse2, sink)
