"""The last wave of a launch, split across every SM (split-topk for the tail tokens).

A TLE kernel runs ``n_items = s_q * (h_q / 64)`` work items, one (query token, block of 64 heads)
each, on the GPU's SMs (the seesaw as one persistent program per SM, the pipe kernel as one CTA per
item at one CTA per SM). When ``n_items`` is not a multiple of the SM count, the last wave holds a
few items but lasts a whole item's time: at the headline shape (SQ = 4096, H = 128 on 132 SMs),
8,192 items are 62 full waves and 8 items, and the persistent seesaw keeps all 132 SMs busy through
that 63rd wave (the programs without an item of their own recompute the last one).

Here the launch is cut in two: the main launch runs the tokens that fill whole waves (none when
the launch is less than one wave, as a decode step of a small batch is), and the tail tokens run
as ``chunks`` independent pieces of their topk each (token t's chunk c attends to
indices ``[c * topk / chunks, (c + 1) * topk / chunks)``), enough pieces to give every SM one. Each
piece yields an output normalised over its own indices and its log-sum-exp; ``combine`` merges the
pieces exactly (weights ``exp(lse_c - lse)``), as split-KV decoding does. At the headline shape the
tail becomes 128 pieces of one K-tile pair each instead of one more wave of 16 pairs.

The pieces' outputs pass through bf16 (the kernels store bf16), so a tail token's output is rounded
twice; its error stays within the kernels' tolerance (tests/gpu/test_sparse_mla.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import torch

# A piece costs its share of the pairs plus about this many pairs' worth of fixed work (Q load,
# epilogue, the combine); a split must at least halve the tail wave to be worth a second launch.
OVERHEAD_TILES = 6


@dataclass(frozen=True)
class TailSplit:
    main_tokens: int  # tokens [0, main_tokens) run in the main launch
    chunks: int       # each later token's topk is cut into this many pieces (one launch for all)


def _tail(s_q: int, n_hb: int, topk: int, sms: int, granule: int):
    """(main tokens, tail items, K tiles per item) of ``s_q`` tokens of ``n_hb`` head blocks on
    ``sms`` SMs: the tokens that fill whole waves, the items of the partial last one, and topk
    in granules; None when the work fills its waves or the shape gives no split (topk not a
    multiple of ``granule``, a count that is not positive)."""
    if min(s_q, n_hb, topk, sms, granule) <= 0 or topk % granule:
        return None
    n_items = s_q * n_hb
    if n_items % sms == 0:
        return None
    # under one wave (a small batch: a decode step, a short prefill) every token is a tail token
    main_tokens = n_items // sms * sms // n_hb
    return main_tokens, (s_q - main_tokens) * n_hb, topk // granule


def plan_tail_split(s_q: int, n_hb: int, topk: int, sms: int, granule: int,
                    min_speedup: float = 2.0) -> Optional[TailSplit]:
    """The split for ``s_q`` tokens of ``n_hb`` head blocks on ``sms`` SMs, or None when the work
    fills its waves or a split would not pay. ``granule``: a piece's topk must be a multiple of
    it (the kernel's K tiles per loop step: 128 for the seesaw's pairs, 64 for the pipe kernel).
    ``min_speedup``: the tail wave must get at least this much shorter, a piece counted as its
    tiles plus OVERHEAD_TILES."""
    tail = _tail(s_q, n_hb, topk, sms, granule)
    if tail is None:
        return None
    main_tokens, tail_items, tiles = tail
    chunks = max((c for c in range(1, tiles + 1) if tiles % c == 0 and tail_items * c <= sms),
                 default=1)
    if chunks < 2 or (tiles // chunks + OVERHEAD_TILES) * min_speedup > tiles:
        return None
    return TailSplit(main_tokens, chunks)


def plan_round_split(s_q: int, n_hb: int, topk: int, sms: int, granule: int,
                     overhead_tiles: int, min_speedup: float,
                     max_rounds: int = 4) -> Optional[TailSplit]:
    """A split of the tail into pieces that take several rounds of the SMs, for a tail of more
    than half a wave's items, where no split fits one round (``plan_tail_split`` finds none):
    there, c pieces per item run in R = ceil(tail_items * c / sms) rounds, and when R pieces of
    tiles / c tiles take less time than one unsplit item the tail ends sooner although some SMs
    idle in the last round. The model: an item or a piece costs its tiles plus
    ``overhead_tiles`` (its Q load, its epilogue, its share of the merge), the tail R times a
    piece, or once an item unsplit; the cheapest c (the fewest pieces among equals) is taken when
    the unsplit tail is at least ``min_speedup`` times longer. None when the work fills its waves
    or no such split pays. ``granule``, the main tokens: as ``plan_tail_split``."""
    tail = _tail(s_q, n_hb, topk, sms, granule)
    if tail is None or max_rounds <= 0:
        return None
    main_tokens, tail_items, tiles = tail
    unsplit = tiles + overhead_tiles
    best = None
    for c in range(2, tiles + 1):
        rounds = -(-tail_items * c // sms)
        if tiles % c or rounds > max_rounds:
            continue
        cost = rounds * (tiles // c + overhead_tiles)
        if best is None or cost < best[0]:
            best = (cost, c)
    if best is None or best[0] * min_speedup > unsplit:
        return None
    return TailSplit(main_tokens, best[1])


Runner = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                   torch.Tensor], None]


def run_split(run: Runner, q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor,
              out: torch.Tensor, max_logits: torch.Tensor, lse: torch.Tensor,
              split: TailSplit, sink: Optional[torch.Tensor] = None,
              run_main: Optional[Runner] = None, shared_q: bool = False) -> None:
    """``run(q, kv, indices, out, max_logits, lse)`` (one launch of a kernel into given outputs)
    for the main tokens, once more for every tail token's pieces, then the merge into the tail
    tokens' outputs. ``sink`` [H]: attn_sink, applied by the merge (``run`` must not apply it:
    a piece would count exp(sink) once per piece); ``run_main`` (default ``run``) runs the main
    tokens, with the sink in its epilogue when there is one. ``shared_q``: ``run`` takes a
    keyword ``q_div`` and reads piece v's q from row v // q_div of the q it is given, so the
    pieces get the tail tokens' q as it is (no copy per piece: at a decode step of one request
    and 128 heads, 32 pieces' copies of q were 4.7 MB written before the kernel could start)."""
    s_q, h_q, d_qk = q.shape
    topk = indices.shape[-1]
    t0, c = split.main_tokens, split.chunks
    if t0 > 0:
        (run_main or run)(q[:t0], kv, indices[:t0], out[:t0], max_logits[:t0], lse[:t0])
    tail = s_q - t0
    # piece v = t * c + k: token t's q, indices [k * topk / c, (k + 1) * topk / c)
    idx_p = indices[t0:].reshape(tail, topk).contiguous().view(tail * c, 1, topk // c)
    out_p = out.new_empty((tail * c, h_q, out.shape[-1]))
    ml_p = max_logits.new_empty((tail * c, h_q))
    lse_p = lse.new_empty((tail * c, h_q))
    if shared_q:
        run(q[t0:], kv, idx_p, out_p, ml_p, lse_p, q_div=c)
    else:
        run(q[t0:].repeat_interleave(c, dim=0), kv, idx_p, out_p, ml_p, lse_p)
    combine(out_p.view(tail, c, h_q, -1), ml_p.view(tail, c, h_q), lse_p.view(tail, c, h_q),
            out[t0:], max_logits[t0:], lse[t0:], sink)


def combine_reference(out_p: torch.Tensor, ml_p: torch.Tensor, lse_p: torch.Tensor,
                      sink: Optional[torch.Tensor] = None):
    """The merge in PyTorch (fp32): pieces [T, C, H, D] / [T, C, H] -> (out [T, H, D] in out_p's
    dtype, max_logits, lse). A piece with no valid index (lse +inf, the kernels' convention for an
    empty row) carries no weight; a token with no valid index at all gets out 0, lse +inf.
    ``sink`` [H] (attn_sink, natural-log units): exp(sink) joins each row's denominator, out *=
    1 / (1 + exp(sink - lse)), in fp32 before the one rounding to out's dtype; lse stays that of
    the scores."""
    lse_f = torch.where(torch.isposinf(lse_p), torch.full_like(lse_p, float("-inf")), lse_p)
    top = lse_f.max(dim=1).values
    empty = torch.isneginf(top)
    w = torch.exp(lse_f - torch.where(empty, torch.zeros_like(top), top)[:, None])
    s = w.sum(dim=1)
    s_safe = torch.where(empty, torch.ones_like(s), s)
    pieces = torch.where(torch.isposinf(lse_p)[..., None], 0.0, out_p.float())  # empty: unread
    out = (w[..., None] * pieces).sum(dim=1) / s_safe[..., None]
    lse = torch.where(empty, torch.full_like(top, float("inf")), top + torch.log(s))
    if sink is not None:
        out = out * torch.sigmoid(lse - sink.float()[None, :])[..., None]
    out = torch.where(empty[..., None], torch.zeros_like(out), out)
    return out.to(out_p.dtype), ml_p.max(dim=1).values, lse


def combine(out_p, ml_p, lse_p, out, max_logits, lse, sink=None) -> None:
    """Merge the pieces into ``out`` [T, H, D], ``max_logits`` and ``lse`` [T, H] (written in
    place), with ``sink`` as ``combine_reference`` takes it: the Triton kernel below on a GPU
    where its blocks tile the shape (H a multiple of 16, D of 128), ``combine_reference``
    elsewhere."""
    _, _, H, D = out_p.shape
    if not out_p.is_cuda or H % 16 or D % 128:
        o, m, l_ = combine_reference(out_p, ml_p, lse_p, sink)
        out.copy_(o), max_logits.copy_(m), lse.copy_(l_)
        return
    combine_triton(out_p, ml_p, lse_p, out, max_logits, lse, sink)


def combine_triton(out_p, ml_p, lse_p, out, max_logits, lse, sink=None) -> None:
    """``combine`` by the Triton kernel (any device Triton runs on, its interpreter included);
    each piece's [H, D] block and [H] row contiguous (the token and piece strides are free, so
    pieces stored piece-major serve as well as token-major ones), H a multiple of 16 and D of
    128, lse / max_logits rows contiguous, sink (when given) [H] contiguous."""
    T, C, H, D = out_p.shape
    bh, bd = 16, 128
    assert H % bh == 0 and D % bd == 0
    assert out_p.stride(2) == D and out_p.stride(3) == 1
    assert lse_p.stride(2) == 1 and ml_p.stride() == lse_p.stride()
    assert lse.stride(1) == 1 and max_logits.stride() == lse.stride()
    assert sink is None or (tuple(sink.shape) == (H,) and sink.stride(0) == 1)
    _combine_kernel()[(T * (H // bh) * (D // bd),)](
        out_p, ml_p, lse_p, out, max_logits, lse, lse if sink is None else sink,
        out_p.stride(0), out_p.stride(1), lse_p.stride(0), lse_p.stride(1),
        out.stride(0), out.stride(1), lse.stride(0),
        H=H, D=D, C=C, BH=bh, BD=bd, HAS_SINK=sink is not None)


_KERNEL = None


def _combine_kernel():
    """The merge as a Triton kernel (built on first use, so that importing this module needs no
    GPU). One program per (token, 16 heads, 128 output dims); the weights are recomputed by each
    program from the C pieces' lse (C floats per row)."""
    global _KERNEL
    if _KERNEL is not None:
        return _KERNEL
    import triton
    import triton.language as tl

    @triton.jit
    def combine_pieces(out_p, ml_p, lse_p, out, ml, lse, sink, stride_p_t, stride_p_c,
                       stride_pl_t, stride_pl_c, stride_o_s, stride_o_h, stride_l_s,
                       H: tl.constexpr, D: tl.constexpr, C: tl.constexpr, BH: tl.constexpr,
                       BD: tl.constexpr, HAS_SINK: tl.constexpr):
        pid = tl.program_id(0)
        n_d: tl.constexpr = D // BD
        n_h: tl.constexpr = H // BH
        t = pid // (n_h * n_d)
        h = (pid // n_d) % n_h * BH + tl.arange(0, BH)
        d = pid % n_d * BD + tl.arange(0, BD)
        top = tl.full([BH], float("-inf"), tl.float32)
        mx = tl.full([BH], float("-inf"), tl.float32)
        for c in tl.static_range(C):
            l_c = tl.load(lse_p + t * stride_pl_t + c * stride_pl_c + h)
            top = tl.maximum(top, tl.where(l_c == float("inf"), float("-inf"), l_c))
            mx = tl.maximum(mx, tl.load(ml_p + t * stride_pl_t + c * stride_pl_c + h))
        empty = top == float("-inf")
        base = tl.where(empty, 0.0, top)
        s = tl.zeros([BH], tl.float32)
        acc = tl.zeros([BH, BD], tl.float32)
        for c in tl.static_range(C):
            l_c = tl.load(lse_p + t * stride_pl_t + c * stride_pl_c + h)
            w = tl.where(l_c == float("inf"), 0.0, tl.exp(l_c - base))
            s += w
            # an empty piece is not read (a balanced launch leaves some pieces unwritten)
            o_c = tl.load(out_p + t.to(tl.int64) * stride_p_t + c * stride_p_c
                          + h[:, None] * D + d[None, :], mask=(l_c != float("inf"))[:, None],
                          other=0.0).to(tl.float32)
            acc += w[:, None] * o_c
        res = tl.where(empty[:, None], 0.0, acc / tl.where(empty, 1.0, s)[:, None])
        if HAS_SINK:  # exp(sink) joins the denominator: out *= 1 / (1 + exp(sink - lse))
            lse_row = tl.where(empty, 0.0, top + tl.log(tl.where(empty, 1.0, s)))
            res = res / (1.0 + tl.exp(tl.load(sink + h) - lse_row))[:, None]
        tl.store(out + t * stride_o_s + h[:, None] * stride_o_h + d[None, :],
                 res.to(out.dtype.element_ty))
        if pid % n_d == 0:
            tl.store(lse + t * stride_l_s + h, tl.where(empty, float("inf"), top + tl.log(s)))
            tl.store(ml + t * stride_l_s + h, mx)

    _KERNEL = combine_pieces
    return _KERNEL
