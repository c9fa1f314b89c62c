"""The balanced decode schedule as the seesaw decode kernel computes it in place: which part of the
batch's K-tile pairs a program walks, and the walk from one request to the next.

The schedule (tle_kernels/decode_schedule.py is its reference in Python, with the argument why
partial slots are unique): request b owns pairs(seqlen_b) = max(1, ceil(ceil(seqlen_b / 64) / 2))
consecutive pairs of a flat pair space [0, X), starting at S_b = sum of the earlier requests'
pairs; an empty request still owns one pair, fully masked, so that the program walking it writes
its out 0 / lse +inf. With P programs per (kv head, row block), P_eff = max(1, min(P, max(X //
MIN_PAIRS, min(X, FINE_PARTS)))) of them walk the pairs [cut_k, cut_k+1), cut_k = k * X // P_eff; the others idle. A
program's pairs cross request boundaries; each maximal run of one request is a segment, and a
request whose pairs all lie in one part is whole (its out / lse are written directly), else each
of its segments writes partial slot b + k for mla_decode_combine's scheduled merge.

``BALANCE = False`` walks whole requests, no partials: program k walks the run of RUN requests
[RUN * k, RUN * k + RUN) (the last run shorter, programs past the batch idle), so the grid has
P = ceil(B / RUN) programs per (kv head, row block). RUN = 1 is one program per request; a longer
run lets a program's producer stage the next request's Q and first pair while its consumers
finish the request before (a program that ends makes way for a fresh one, which starts from
nothing).

Everything is computed from cache_seqlens by every program (no metadata tensors, so the schedule
can never be stale and a decode step captures in a CUDA graph). The prefix sums run on chunks of
SCHED_CHUNK requests as a masked [chunk, chunk] sum (Triton's cumsum has no Gluon lowering here).
"""

import triton.language as tl

from .sparse_mla_common import BK

MIN_PAIRS = tl.constexpr(2)      # fewest pairs per busy part: fewer parts when X is small,
FINE_PARTS = tl.constexpr(16)    # but up to this many parts of one pair (decode_schedule.p_eff)
SCHED_CHUNK = tl.constexpr(128)  # requests per prefix-sum chunk


def request_pairs(seqlen):
    """The K-tile pairs request of length ``seqlen`` owns: ceil(ceil(seqlen / 64) / 2), at least
    one (an empty request's pair is fully masked)."""
    return tl.maximum(((seqlen + BK - 1) // BK + 1) // 2, 1)


def part_range(seqlens_ptr, B, n_chunks, BALANCE: tl.constexpr, RUN: tl.constexpr):
    """``(x_lo, x_hi, b0, s0, e0, sl0)`` of this program (grid axis 1 = part k): its flat pairs
    [x_lo, x_hi), the request b0 holding pair x_lo, that request's pairs [s0, e0) and its length
    sl0. n_chunks = ceil(B / SCHED_CHUNK). A part with no pair has x_lo == x_hi. Without BALANCE
    the pairs are counted from the run's first request (x_lo = s0 = 0)."""
    k = tl.program_id(1)
    if BALANCE:
        offs = tl.arange(0, SCHED_CHUNK)
        total = 0
        for c in range(n_chunks):
            idx = c * SCHED_CHUNK + offs
            sl = tl.load(seqlens_ptr + tl.minimum(idx, B - 1), mask=idx < B, other=0)
            total += tl.sum(tl.where(idx < B, request_pairs(sl), 0), 0)
        p_eff = tl.maximum(tl.minimum(tl.num_programs(1),
                                      tl.maximum(total // MIN_PAIRS,
                                                 tl.minimum(total, FINE_PARTS))), 1)
        x_lo = (tl.minimum(k, p_eff).to(tl.int64) * total // p_eff).to(tl.int32)
        x_hi = (tl.minimum(k + 1, p_eff).to(tl.int64) * total // p_eff).to(tl.int32)
        # b0 = how many requests end at or before x_lo; s0 = where the last of them ends
        b0 = 0
        s0 = 0
        base = 0
        for c in range(n_chunks):
            idx = c * SCHED_CHUNK + offs
            sl = tl.load(seqlens_ptr + tl.minimum(idx, B - 1), mask=idx < B, other=0)
            n = tl.where(idx < B, request_pairs(sl), 0)
            ends = base + tl.sum(tl.where(offs[None, :] <= offs[:, None], n[None, :], 0), 1)
            done = (ends <= x_lo) & (idx < B)
            b0 += tl.sum(done.to(tl.int32), 0)
            s0 = tl.maximum(s0, tl.max(tl.where(done, ends, 0), 0))
            base += tl.sum(n, 0)
        b0 = tl.minimum(b0, B - 1)  # a part with no pair: any request, never walked
        sl0 = tl.load(seqlens_ptr + b0)
        e0 = s0 + request_pairs(sl0)
    elif RUN == 1:
        b0 = k
        sl0 = tl.load(seqlens_ptr + k)
        x_lo = 0
        s0 = 0
        x_hi = request_pairs(sl0)
        e0 = x_hi
    else:
        b0 = tl.minimum(RUN * k, B - 1)  # a program past the batch: any request, never walked
        sl0 = tl.load(seqlens_ptr + b0)
        x_lo = 0
        s0 = 0
        e0 = request_pairs(sl0)
        x_hi = 0
        for i in range(RUN * k, tl.minimum(RUN * k + RUN, B)):
            x_hi += request_pairs(tl.load(seqlens_ptr + i))
    return x_lo, x_hi, b0, s0, e0, sl0


def next_request(seqlens_ptr, b):
    """The walk's state ``(b, seqlen, pp, left)`` at the first pair of the request after ``b``:
    every request owns at least one pair, so the pair after a request's last is the next
    request's first (pp = 0, all its pairs left)."""
    nb = b + 1
    nsl = tl.load(seqlens_ptr + nb)
    return nb, nsl, 0, request_pairs(nsl)


def whole_in_part(s, e, x_lo, x_hi):
    """Whether the request with pairs [s, e) lies wholly in the part [x_lo, x_hi): its output is
    written directly, not as a partial."""
    return (s >= x_lo) & (e <= x_hi)
