"""Combine of split-KV MLA decode: merge the partial outputs of the splits by their lse.

A split-KV decode kernel writes, per split s of a request's positions, o_part[b, s] (the split's
softmax-weighted mean of V, normalised by the split's own row sum) and lse_part[b, s] (the log of
that row sum in natural-log units, -inf when the split saw no token). The full row is

    lse = log(sum_s exp(lse_s)),   out = sum_s exp(lse_s - lse) * o_s

computed with the largest lse_s subtracted first. A split with lse_s = -inf has weight 0 and its
o_part is not read (whatever it holds, NaN included, cannot leak into the sum); a row whose splits
are all empty gives out = 0 and lse = +inf (FlashMLA's rule for a row without a token).

Shapes: o_part fp32 [b, n_split, s_q, h_q, 512], lse_part fp32 [b, n_split, s_q, h_q] →
out bf16 [b, s_q, h_q, 512], lse fp32 [b, h_q, s_q] (any strides: the kernel takes them all).
One program per ((request b, query j), block of BLOCK_H heads, block of BLOCK_D output columns:
combine_blocks); the split count is a runtime argument, so one compiled kernel serves every
n_split up to ``SPLIT_P2`` (its power of two).

``mla_decode_combine_scheduled`` is the same merge for the balanced schedule (decode_schedule.py):
there a request is split over parts first(b) .. last(b) whose partials lie in slots b + first(b) ..
b + last(b) of o_part [B + P, s_q, h_q, 512] / lse_part [B + P, s_q, h_q]. No metadata tensor
says which: each program recomputes the request's flat start S_b, its pair count and the total X
from cache_seqlens (a masked loop over chunks of SEQLEN_CHUNK requests, so any batch size works),
then first and last by the schedule's formulas. A whole request (first == last) was written by the
decode kernel itself; its program touches nothing.

Both combines launch as programmatic dependents of the decode kernel before them on the stream
(``launch_pdl``, Hopper's programmatic dependent launch): their programs start while the decode
kernel's last programs still run, do what does not read its outputs (the scheduled combine's scan
of cache_seqlens, which the decode kernel does not write), then wait for its writes with
``griddepcontrol.wait`` (``gdc_wait``) before reading a partial. ``TLE_DECODE_PDL=0`` launches
them plainly (the wait is then a no-op); Triton's CPU interpreter always does, having no device
launch to overlap.
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_wait

from .api import sm_count

D_V = 512
BLOCK_H = 16
BLOCK_K = 64            # tokens per K tile: decode_schedule.BLOCK_K
MIN_PAIRS = 2           # decode_schedule.MIN_PAIRS
FINE_PARTS = 16         # decode_schedule.FINE_PARTS
SEQLEN_CHUNK = 1024     # requests whose seqlens one step of the scheduled combine's scan reads
PIPELINED_STAGES = 4    # partials in flight per program where the combine pipelines its loop


def sms_of(device) -> int:
    """The SM count the combines size their launch for: the device's, or an H200's 132 off a
    GPU (Triton's interpreter), so that the CPU tests take the same choices."""
    return sm_count(device) if getattr(device, "type", "cpu") == "cuda" else 132


def combine_blocks(rows: int, h_q: int, device) -> tuple:
    """(BLOCK_H, BLOCK_D) of a combine over ``rows`` (request, query) pairs: BLOCK_H heads (16, or
    h_q's power of two when smaller) and the 512 output columns split into as many BLOCK_D-wide
    column blocks (down to 64) as it takes to give the launch two programs per SM. Each program
    reads every split of its rows one after the other, so at a batch of one or two requests a
    program per 16 heads (8 programs at h_q 128) streams megabytes of partials on a few SMs
    while the rest of the GPU idles; split by columns, the same bytes are read by up to 8x as
    many programs. ``TLE_COMBINE_BLOCK_D`` (64..512) forces the column block."""
    block_h = min(BLOCK_H, max(2, triton.next_power_of_2(h_q)))
    forced = os.environ.get("TLE_COMBINE_BLOCK_D")
    if forced:
        block_d = int(forced)
        if block_d not in (64, 128, 256, 512):
            raise ValueError(f"TLE_COMBINE_BLOCK_D must be 64, 128, 256 or 512 (got {forced})")
        return block_h, block_d
    want = 2 * sms_of(device)
    programs = rows * triton.cdiv(h_q, block_h)
    block_d = D_V
    while block_d > 64 and programs * (D_V // block_d) < want:
        block_d //= 2
    return block_h, block_d


def combine_stages(programs: int, device) -> int:
    """Partials in flight per program in the combines' split loops (``tl.range``'s num_stages).
    A launch of fewer programs than SMs (a batch of one or two requests) has one program per SM
    at most, each a chain of dependent loads, one partial after the other: pipelined, four of
    its partials stream in by cp.async at once (the lse-masked load of the unpipelined loop
    waits for its lse first, so each partial is loaded unmasked and its weight zeroed by
    ``tl.where``, which a NaN in an empty split's partial cannot pass). With two or more programs
    per SM the loads of the other programs already overlap and the pipelined loop was no faster
    or slower (H200, docs/decode.md): 0 there, the plain loop. ``TLE_COMBINE_STAGES`` forces
    the value (0 = the plain loop)."""
    forced = os.environ.get("TLE_COMBINE_STAGES")
    if forced:
        if not forced.isdigit() or int(forced) > 8:
            raise ValueError(f"TLE_COMBINE_STAGES must be an integer from 0 to 8 (got {forced})")
        return int(forced)
    return PIPELINED_STAGES if programs < sms_of(device) else 0


def use_pdl(x: torch.Tensor) -> bool:
    """Launch a combine as a programmatic dependent of the kernel before it: on a CUDA device,
    outside Triton's interpreter, unless ``TLE_DECODE_PDL=0``."""
    return (x.is_cuda and os.environ.get("TRITON_INTERPRET", "0") != "1"
            and os.environ.get("TLE_DECODE_PDL", "1") != "0")


@triton.jit
def split_term(lse_ptrs, o_ptrs, h_ok, m_use, inv_wsum, PIPELINED: tl.constexpr):
    """One split's term of the merge, [BLOCK_H, BLOCK_D]: its partial (``o_ptrs``) weighted by
    exp(lse_s - m) / Σ (``lse_ptrs``: its lse per head), 0 for a head whose split is empty (lse
    -inf). Unpipelined, the partial's load is masked by the lse, so an empty split's partial is
    never read; ``PIPELINED``, it is loaded whatever the lse (a load that waits for the lse cannot
    be issued stages ahead) and its term zeroed by ``tl.where``, which a NaN there cannot pass."""
    l_s = tl.load(lse_ptrs, mask=h_ok, other=float("-inf"))
    live = l_s > float("-inf")
    w = tl.where(live, tl.exp(l_s - m_use) * inv_wsum, 0.0)
    if PIPELINED:
        o = tl.load(o_ptrs, mask=h_ok[:, None], other=0.0)
        return tl.where(live[:, None], w[:, None] * o, 0.0)
    o = tl.load(o_ptrs, mask=live[:, None], other=0.0)
    return w[:, None] * o


@triton.jit
def mla_decode_combine_kernel(o_part_ptr, lse_part_ptr, out_ptr, lse_ptr,
                              stride_op_b, stride_op_split, stride_op_s, stride_op_h,
                              stride_lp_b, stride_lp_split, stride_lp_s, stride_lp_h,
                              stride_o_b, stride_o_s, stride_o_h,
                              stride_l_b, stride_l_h, stride_l_s,
                              s_q, h_q, n_split,
                              D_V: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
                              SPLIT_P2: tl.constexpr, PDL: tl.constexpr,
                              STAGES: tl.constexpr):
    if PDL:  # every partial is the decode kernel's: wait for its writes
        gdc_wait()
    row = tl.program_id(0)                                       # (request, query) pair
    j = row % s_q
    b = (row // s_q).to(tl.int64)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = heads < h_q
    splits = tl.arange(0, SPLIT_P2)
    lp_row = lse_part_ptr + b * stride_lp_b + j * stride_lp_s

    # the row's largest split lse and the sum of the weights, all splits at once
    lp = tl.load(lp_row + splits[:, None] * stride_lp_split + heads[None, :] * stride_lp_h,
                 mask=(splits < n_split)[:, None] & h_ok[None, :], other=float("-inf"))
    m = tl.max(lp, 0)                                            # [BLOCK_H]
    has_any = m > float("-inf")
    m_use = tl.where(has_any, m, 0.0)
    total = tl.sum(tl.exp(lp - m_use[None, :]), 0)              # exp(-inf) = 0: empty splits
    inv_total = tl.where(has_any, 1.0 / total, 0.0)

    acc = tl.zeros([BLOCK_H, BLOCK_D], tl.float32)
    offs_d = tl.program_id(2) * BLOCK_D + tl.arange(0, BLOCK_D)
    o_rows = o_part_ptr + b * stride_op_b + j * stride_op_s + heads.to(tl.int64)[:, None] * stride_op_h
    lp_heads = lp_row + heads * stride_lp_h
    o_cols = o_rows + offs_d[None, :]
    if STAGES == 0:
        for s in range(0, n_split):
            acc += split_term(lp_heads + s * stride_lp_split, o_cols + s * stride_op_split, h_ok,
                              m_use, inv_total, False)
    else:
        for s in tl.range(0, n_split, num_stages=STAGES):
            acc += split_term(lp_heads + s * stride_lp_split, o_cols + s * stride_op_split, h_ok,
                              m_use, inv_total, True)

    out_rows = out_ptr + b * stride_o_b + j * stride_o_s + heads.to(tl.int64)[:, None] * stride_o_h
    tl.store(out_rows + offs_d[None, :], acc.to(out_ptr.dtype.element_ty), mask=h_ok[:, None])
    lse = tl.where(has_any, tl.log(tl.where(has_any, total, 1.0)) + m_use, float("inf"))
    tl.store(lse_ptr + b * stride_l_b + heads * stride_l_h + j * stride_l_s, lse,
             mask=h_ok & (tl.program_id(2) == 0))


def mla_decode_combine(o_part: torch.Tensor, lse_part: torch.Tensor, out: torch.Tensor,
                       lse: torch.Tensor) -> None:
    """Merge ``o_part`` [b, n_split, s_q, h_q, 512] and ``lse_part`` [b, n_split, s_q, h_q] (fp32)
    into ``out`` [b, s_q, h_q, 512] (bf16) and ``lse`` [b, h_q, s_q] (fp32)."""
    b, n_split, s_q, h_q, d_v = o_part.shape
    assert d_v == D_V and tuple(lse_part.shape) == (b, n_split, s_q, h_q)
    assert tuple(out.shape) == (b, s_q, h_q, d_v) and tuple(lse.shape) == (b, h_q, s_q)
    assert o_part.stride(-1) == 1 and out.stride(-1) == 1
    if b == 0 or s_q == 0 or h_q == 0:
        return
    block_h, block_d = combine_blocks(b * s_q, h_q, out.device)
    grid = (b * s_q, triton.cdiv(h_q, block_h), D_V // block_d)
    pdl = use_pdl(out)
    stages = combine_stages(grid[0] * grid[1] * grid[2], out.device)
    mla_decode_combine_kernel[grid](
        o_part, lse_part, out, lse,
        o_part.stride(0), o_part.stride(1), o_part.stride(2), o_part.stride(3),
        lse_part.stride(0), lse_part.stride(1), lse_part.stride(2), lse_part.stride(3),
        out.stride(0), out.stride(1), out.stride(2),
        lse.stride(0), lse.stride(1), lse.stride(2),
        s_q, h_q, n_split,
        D_V=D_V, BLOCK_H=block_h, BLOCK_D=block_d,
        SPLIT_P2=max(2, triton.next_power_of_2(n_split)), PDL=pdl, STAGES=stages,
        num_warps=4, launch_pdl=pdl)


@triton.jit
def mla_decode_combine_scheduled_kernel(o_part_ptr, lse_part_ptr, out_ptr, lse_ptr, seqlens_ptr,
                                        stride_op_slot, stride_op_s, stride_op_h,
                                        stride_lp_slot, stride_lp_s, stride_lp_h,
                                        stride_o_b, stride_o_s, stride_o_h,
                                        stride_l_b, stride_l_h, stride_l_s,
                                        s_q, h_q, batch, n_parts,
                                        D_V: tl.constexpr, BLOCK_H: tl.constexpr,
                                        BLOCK_D: tl.constexpr,
                                        SPLIT_P2: tl.constexpr, SEQLEN_CHUNK: tl.constexpr,
                                        BLOCK_K: tl.constexpr, MIN_PAIRS: tl.constexpr,
                                        FINE_PARTS: tl.constexpr,
                                        PDL: tl.constexpr, STAGES: tl.constexpr):
    row = tl.program_id(0)                                       # (request, query) pair
    j = row % s_q
    b = (row // s_q).to(tl.int64)

    # S_b (pairs before request b), request b's own pair count and the total X, in int64
    offs_b = tl.arange(0, SEQLEN_CHUNK)
    start_b = tl.full([], 0, tl.int64)
    own = tl.full([], 0, tl.int64)
    total = tl.full([], 0, tl.int64)
    for c in range(0, batch, SEQLEN_CHUNK):
        idx = c + offs_b
        real = idx < batch
        seqlen = tl.load(seqlens_ptr + idx, mask=real, other=0).to(tl.int64)
        tiles = (seqlen + (BLOCK_K - 1)) // BLOCK_K
        n_pairs = tl.where(real, tl.maximum((tiles + 1) // 2, 1), 0)
        total += tl.sum(n_pairs, 0)
        start_b += tl.sum(tl.where(idx < b, n_pairs, 0), 0)
        own += tl.sum(tl.where(idx == b, n_pairs, 0), 0)

    # the parts holding the request's first and last pair: part_of(x) = ((x + 1) P_eff - 1) // X.
    # X >= 1 (every request owns a pair); dividing by max(X, 1) rather than by the scan's result
    # itself also keeps Triton 3.6's sm_90 lowering from failing (ConvertTritonGPUToLLVM rejects an
    # int64 division whose divisor is the loop result and whose dividend is computed from it).
    divisor = tl.maximum(total, 1)
    p_eff = tl.maximum(tl.minimum(tl.maximum(total // MIN_PAIRS, tl.minimum(total, FINE_PARTS)),
                                  n_parts), 1)                          # int64
    first = ((start_b + 1) * p_eff - 1) // divisor
    last = ((start_b + own) * p_eff - 1) // divisor

    if first != last:                                            # a split request: merge its slots
        if PDL:  # the partials are the decode kernel's: wait for its writes (the scan above
            gdc_wait()  # read only cache_seqlens, which it does not write)
        n_split = (last - first + 1).to(tl.int32)
        slot0 = b + first
        heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
        h_ok = heads < h_q
        splits = tl.arange(0, SPLIT_P2)
        lp_row = lse_part_ptr + slot0 * stride_lp_slot + j * stride_lp_s

        # the row's largest slot lse and the sum of the weights, all slots at once
        lp = tl.load(lp_row + splits.to(tl.int64)[:, None] * stride_lp_slot
                     + heads[None, :] * stride_lp_h,
                     mask=(splits < n_split)[:, None] & h_ok[None, :], other=float("-inf"))
        m = tl.max(lp, 0)                                        # [BLOCK_H]
        has_any = m > float("-inf")
        m_use = tl.where(has_any, m, 0.0)
        wsum = tl.sum(tl.exp(lp - m_use[None, :]), 0)            # exp(-inf) = 0: empty slots
        inv_wsum = tl.where(has_any, 1.0 / wsum, 0.0)

        acc = tl.zeros([BLOCK_H, BLOCK_D], tl.float32)
        offs_d = tl.program_id(2) * BLOCK_D + tl.arange(0, BLOCK_D)
        o_rows = (o_part_ptr + slot0 * stride_op_slot + j * stride_op_s
                  + heads.to(tl.int64)[:, None] * stride_op_h)
        lp_slot = lp_row + heads * stride_lp_h
        o_cols = o_rows + offs_d[None, :]
        if STAGES == 0:
            for _ in range(0, n_split):                          # slot by slot: pointers advance
                acc += split_term(lp_slot, o_cols, h_ok, m_use, inv_wsum, False)
                lp_slot += stride_lp_slot
                o_cols += stride_op_slot
        else:
            for s in tl.range(0, n_split, num_stages=STAGES):
                acc += split_term(lp_slot + s * stride_lp_slot, o_cols + s * stride_op_slot, h_ok,
                                  m_use, inv_wsum, True)

        out_rows = out_ptr + b * stride_o_b + j * stride_o_s + heads.to(tl.int64)[:, None] * stride_o_h
        tl.store(out_rows + offs_d[None, :], acc.to(out_ptr.dtype.element_ty), mask=h_ok[:, None])
        lse = tl.where(has_any, tl.log(tl.where(has_any, wsum, 1.0)) + m_use, float("inf"))
        tl.store(lse_ptr + b * stride_l_b + heads * stride_l_h + j * stride_l_s, lse,
                 mask=h_ok & (tl.program_id(2) == 0))


def mla_decode_combine_scheduled(o_part: torch.Tensor, lse_part: torch.Tensor, out: torch.Tensor,
                                 lse: torch.Tensor, seqlens: torch.Tensor, P: int,
                                 seqlen_chunk: int = SEQLEN_CHUNK) -> None:
    """Merge the split requests' partials of the balanced schedule with ``P`` parts
    (decode_schedule.py) into ``out`` [B, s_q, h_q, 512] and ``lse`` [B, h_q, s_q] (fp32);
    o_part [B + P, s_q, h_q, 512] and lse_part [B + P, s_q, h_q] (fp32) hold them in slots
    b + k; ``seqlens``: cache_seqlens [B] int32. Whole requests' rows of out / lse are left as
    they are. ``seqlen_chunk``: requests per step of the kernel's seqlens scan (a power of two;
    the scan covers any batch size whatever it is)."""
    b, s_q, h_q, d_v = out.shape
    assert d_v == D_V and P >= 1
    assert tuple(o_part.shape) == (b + P, s_q, h_q, d_v), (tuple(o_part.shape), b, P)
    assert tuple(lse_part.shape) == (b + P, s_q, h_q) and tuple(lse.shape) == (b, h_q, s_q)
    assert tuple(seqlens.shape) == (b,) and seqlens.dtype == torch.int32
    assert o_part.stride(-1) == 1 and out.stride(-1) == 1 and seqlens.stride(0) == 1
    assert seqlen_chunk >= 1 and seqlen_chunk & (seqlen_chunk - 1) == 0
    if b == 0 or s_q == 0 or h_q == 0:
        return
    block_h, block_d = combine_blocks(b * s_q, h_q, out.device)
    chunk = min(seqlen_chunk, max(16, triton.next_power_of_2(b)))
    grid = (b * s_q, triton.cdiv(h_q, block_h), D_V // block_d)
    pdl = use_pdl(out)
    stages = combine_stages(grid[0] * grid[1] * grid[2], out.device)
    mla_decode_combine_scheduled_kernel[grid](
        o_part, lse_part, out, lse, seqlens,
        o_part.stride(0), o_part.stride(1), o_part.stride(2),
        lse_part.stride(0), lse_part.stride(1), lse_part.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        lse.stride(0), lse.stride(1), lse.stride(2),
        s_q, h_q, b, P,
        D_V=D_V, BLOCK_H=block_h, BLOCK_D=block_d, SPLIT_P2=max(2, triton.next_power_of_2(P)),
        SEQLEN_CHUNK=chunk,
        BLOCK_K=BLOCK_K, MIN_PAIRS=MIN_PAIRS, FINE_PARTS=FINE_PARTS, PDL=pdl,
        STAGES=stages, num_warps=4, launch_pdl=pdl)
