"""The balanced split-KV schedule of the MLA decode, in plain Python: the reference that the
decode kernel's and the scheduled combine's in-kernel arithmetic must agree with.

What it balances, and why. A grid of one program per request (or per (request, split) with one
split count for the whole batch) gives each program as much work as its request's length: with
mixed lengths the longest request decides the time while the SMs that held short requests sit
idle, and a batch that does not fill a whole number of waves leaves the last wave partly empty
(wave quantisation). Here a fixed number P of programs per (kv head, row block) share the batch's
work instead. The unit of work is a *pair* of 64-token K tiles (the seesaw kernel's loop step);
request b owns

    pairs(seqlen_b) = max(1, ceil(ceil(seqlen_b / 64) / 2))

pairs, laid end to end in a flat pair space [0, X): request b's pairs are [S_b, S_{b+1}) with
S_b = sum of pairs(seqlen_b') over b' < b and X = S_B. Program (part) k of P_eff walks the flat
range [cut_k, cut_{k+1}), cut_k = floor(k X / P_eff), crossing request boundaries where they fall,
so every part gets floor(X / P_eff) or ceil(X / P_eff) pairs whatever the lengths are. P_eff =
max(1, min(P, max(X // MIN_PAIRS, min(X, FINE_PARTS)))) keeps every part at MIN_PAIRS pairs or
more (a part's fixed cost, loading Q and writing its fp32 partial, is not worth less), except that
a batch of few pairs still gets up to FINE_PARTS parts of one pair or more: there the walk's
latency, not the partials' traffic, decides the time (H200, h_q 128, one request of 1K tokens,
X = 8: eight parts of one pair ran 1.10x four parts of two; at 4K, X = 32: sixteen parts of two
pairs ran 1.10x thirty-two of one). Parts k >= P_eff are idle.

The empty-request rule. A request with seqlen 0 still owns one pair (every position masked): some
program must write its row (out 0, lse +inf, FlashMLA's rule for a row without a token), and
owning a pair makes exactly one part do so with no special case in the walk. One pair never
straddles a cut, so such a request is always whole.

Whole and split requests. part_of(x) = ((x + 1) P_eff - 1) // X is the part whose range holds flat
pair x (x >= cut_k iff (x + 1) P_eff > k X, and x < cut_{k+1} iff (x + 1) P_eff <= (k + 1) X).
Request b is walked by parts first(b) = part_of(S_b) .. last(b) = part_of(S_{b+1} - 1), one
segment each. If first(b) == last(b) the request is *whole*: its one part writes out and lse
itself. Otherwise part k writes its segment's partial into slot b + k of o_part / lse_part, and
the scheduled combine (mla_decode_combine.py) merges slots b + first(b) .. b + last(b).

Why slot b + k is unique. part_of is non-decreasing in x, so for requests b < b' we have
first(b') = part_of(S_b') >= part_of(S_{b+1} - 1) = last(b) (as S_b' >= S_{b+1}). Hence
b' + first(b') > b + last(b): the slot ranges [b + first(b), b + last(b)] of successive requests
are disjoint and increasing, and within one request k is distinct. The largest slot is at most
(B - 1) + (P_eff - 1) < B + P, so buffers of B + P slots hold them all, and no metadata tensor is
needed: every program recomputes the schedule from cache_seqlens and P.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import torch

BLOCK_K = 64        # tokens per K tile (one page)
MIN_PAIRS = 2       # the fewest pairs a non-idle part walks (when X allows it) ...
FINE_PARTS = 16     # ... unless it leaves fewer parts than this: then parts of one pair, up to 16
D_V = 512           # value head dim of the partial outputs


def pairs(seqlen: int) -> int:
    """Tile pairs a request of length ``seqlen`` owns: ceil(ceil(seqlen / 64) / 2), at least one."""
    tiles = -(-int(seqlen) // BLOCK_K)
    return max(1, -(-tiles // 2))


def _as_ints(seqlens: Iterable[int] | torch.Tensor) -> list[int]:
    if isinstance(seqlens, torch.Tensor):
        return [int(s) for s in seqlens.flatten().tolist()]
    return [int(s) for s in seqlens]


def flat_starts(seqlens: Iterable[int] | torch.Tensor) -> list[int]:
    """S_0 .. S_B: request b's pairs are flat pairs [S_b, S_{b+1}); S_B = X, the total."""
    starts = [0]
    for s in _as_ints(seqlens):
        starts.append(starts[-1] + pairs(s))
    return starts


def p_eff(total_pairs: int, P: int) -> int:
    """Parts that get work when ``P`` programs share ``total_pairs`` = X pairs: max(1, min(P,
    max(X // MIN_PAIRS, min(X, FINE_PARTS)))). Idempotent (p_eff(X, p_eff(X, P)) == p_eff(X,
    P)), so the functions below accept either."""
    X = int(total_pairs)
    return max(1, min(int(P), max(X // MIN_PAIRS, min(X, FINE_PARTS))))


def cuts(total_pairs: int, P: int) -> list[int]:
    """cut_0 .. cut_{P_eff}: part k walks flat pairs [cut_k, cut_{k+1})."""
    n = p_eff(total_pairs, P)
    return [(k * total_pairs) // n for k in range(n + 1)]


def part_of(x: int, total_pairs: int, P: int) -> int:
    """The part whose range holds flat pair ``x`` (0 <= x < total_pairs)."""
    n = p_eff(total_pairs, P)
    return ((x + 1) * n - 1) // total_pairs


@dataclass(frozen=True)
class Segment:
    """The pairs [pair_lo, pair_hi) of ``request`` (request-relative) that ``part`` walks.
    ``whole``: the request has this one segment and the part writes out / lse itself; otherwise
    ``slot`` (= request + part) is the partial slot it writes, None for a whole request."""

    part: int
    request: int
    pair_lo: int
    pair_hi: int
    whole: bool
    slot: int | None


def segments(seqlens: Iterable[int] | torch.Tensor, P: int) -> list[Segment]:
    """Every (request, part) segment of the schedule, in flat order (by request, then part)."""
    starts = flat_starts(seqlens)
    total = starts[-1]
    if total == 0:                      # an empty batch: no request, no work
        return []
    cut = cuts(total, P)
    out = []
    for b in range(len(starts) - 1):
        lo, hi = starts[b], starts[b + 1]
        first, last = part_of(lo, total, P), part_of(hi - 1, total, P)
        whole = first == last
        for k in range(first, last + 1):
            out.append(Segment(part=k, request=b, pair_lo=max(lo, cut[k]) - lo,
                               pair_hi=min(hi, cut[k + 1]) - lo, whole=whole,
                               slot=None if whole else b + k))
    return out


def partial_buffers(b: int, s_q: int, h_q: int, P: int,
                    device: torch.device | str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Uninitialised partial buffers for a batch of ``b`` requests and ``P`` parts:
    o_part fp32 [b + P, s_q, h_q, 512] and lse_part fp32 [b + P, s_q, h_q]. Only the split
    requests' slots are written, and only those the combine reads."""
    o_part = torch.empty(b + P, s_q, h_q, D_V, dtype=torch.float32, device=device)
    lse_part = torch.empty(b + P, s_q, h_q, dtype=torch.float32, device=device)
    return o_part, lse_part


__all__ = ["BLOCK_K", "MIN_PAIRS", "FINE_PARTS", "Segment", "pairs", "flat_starts", "p_eff", "cuts", "part_of",
           "segments", "partial_buffers"]
