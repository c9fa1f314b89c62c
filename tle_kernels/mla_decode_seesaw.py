"""TLE-FlashMLA: dense MLA decode (FlashMLA's ``flash_mla_with_kvcache``, bf16) in FlashMLA's
"seesaw" schedule, three warp groups, walking a schedule of the batch's K-tile pairs.

A program handles (kv head g, block of BLOCK_H = 64 query rows, part k): the rows of kv head g are
a request's s_q * (h_q / h_kv) query rows flattened as (query j, head), head fastest; part k walks
a range of the batch's flat pair space (mla_decode_parts.py: request b owns ceil(ceil(seqlen /
64) / 2) pairs, at least one), one 64-token page per K tile. BALANCE = True: P programs take equal
shares and cross request boundaries; each maximal run of one request is a segment, written to
out / lse when the request lies wholly in the part, else to partial slot b + k for
mla_decode_combine_scheduled. BALANCE = False: program k walks the RUN whole requests [RUN * k,
RUN * k + RUN), each written to out / lse (RUN = 1: one program per request). The dataflow is
the SparseMLA seesaw prefill's (sparse_mla_seesaw.py):
the K tiles go in pairs k0 = 2p, k1 = 2p + 1; each of the two consumers owns half of the 512
output dims, computes QK for its own tile of the pair and applies both tiles' probabilities to its
half; the row maxima and the probability tiles cross between them through small pipes.

    producer (default, 4 warps)     consumer0 (4 warps, 224 regs)      consumer1 (4 warps, 224 regs)
    Q rows ─► q (one_shot) ───────► q_l q_r                            q_l q_r
    (q's RoPE tail: each consumer loads it into registers itself)
    page 2p:   K0_L, tail ─► kv0 (consumer0 alone)
    page 2p+1: K1_R, tail ─► kv1 (consumer1 alone)
    page 2p:   K0_R ─► kv0r ───────► QK0                                P0·V0_R
    page 2p+1: K1_L ─► kv1l ───────► P1·V1_L                            QK1
                                   S0 = Q·K0ᵀ, mask                     S1 = Q·K1ᵀ, mask
                                   x0 = rowmax S0 ──────── max0 ──────► r0 = lazy(ref, x0)
                                   r0 = lazy(ref, x0)                   r_new = lazy(r0, rowmax S1)
                                   O_l = O_l·a0 + P0·V0_L               P1 = exp2(S1 - r_new)
                                   r_new ◄─────────────────── max1 ──   (P1, rowsum P1) ─ prob1 ─►
                                   (P0·beta, rowsum P0) ─ prob0 ─►      O_r = O_r·a + P1·V1_R
                                   O_l = O_l·beta + P1·V1_L             O_r += P0·V0_R
    epilogue                       out[:, :256], lse                    out[:, 256:]

(all pipes capacity 1; lazy(r, x) = x if x > r + TAU else r; a0 = exp2(ref - r0), beta =
exp2(r0 - r_new), a = a0·beta; both consumers keep the same (ref, l) by combining the same fp32
values in the same order.) The fill and release order, the mid-pair releases, the P1·V1_L wgmma
left in flight across the loop back-edge (``wgmma_pipeline=True``) and the deadlock argument are
the prefill seesaw's, with the pair index p in place of its ``r * NP + p``: see
sparse_mla_seesaw.py. The verifier proves it here for every pair count NP.

What decode changes:
- The walk: every partition carries the same state (the pair's request cb, its length, the pair's
  index pp in it, the request's pairs left, whether it is whole in the part), advanced after a
  request's last pair by next_request (one load of cache_seqlens). q is a capacity-1 pipe indexed
  by pair: the producer stages a request's Q rows at its segment's first pair only (the slot keeps
  them), each consumer reloads q's RoPE tail into registers then. A segment ends at the end of its
  last pair: each consumer stores its half (normalised in place, then cleared with the running
  max and sum), under an `if` that keeps the in-flight wgmmas in flight on the pairs that skip it
  (docs/lowering.md).
- One program per request (BALANCE = False, RUN = 1: WALK = BALANCE + RUN - 1 is 0, the launch
  full batches take) needs no walk: the partitions branch on the constexpr WALK into a loop over
  the one request's pairs in which q is waited for once (index 0, before the loop, released after
  it), the position masks read the pair index itself, and the output is stored once after the
  loop. Per pair this saves each consumer q's wait, proxy fence and release and the walk's
  bookkeeping (about 5 % of a consumer's instructions in the pair loop). Both loops call the same
  pair helpers (copy_pair, scores0 / update0, scores1 / update1). WALK is a sum of integer
  constexprs, so a reading binds it only where BALANCE and RUN are integers: the launcher passes
  BALANCE as 0 / 1.
- Pages instead of gathered indices: the producer reads the block-table entries of the pair's two
  pages and copies each page's 64 rows of kv head g; a position at or past the request's end
  loads as zeros (so P·V never meets the cache rows after seqlen, whatever they
  hold). An odd last tile's partner (tile NK when NK is odd) is all past the end: its K rows are
  zeros, its scores are masked, and its page is the last real page again, so no block-table entry
  past the request's pages is ever read (an empty request's pair reads entry 0 under a mask).
- Two K producers, chosen by the constexpr TMA (0 or 1, an integer so that the compiler reads the
  kernel specialised to it: only the producer that runs is verified and lowered). TMA = 0:
  cp.async gathers. TMA = 1: each piece of a page is one TMA box through a rank-4
  descriptor over k_cache [num_blocks, 64, h_kv, 576] (k_desc: box [1, 64, 1, 256] for a main
  half, tail_desc: box [1, 64, 1, 64] for the RoPE tail) at [page, shift, g, column], shift =
  n - 64 for a tile with n positions before the end (mla_decode_common.page_shift): the box's first
  -shift rows lie before the page and arrive as zeros, the page's n rows land last, so no cache
  row at or past the end reaches a slot whatever it holds (NaN included); an odd last tile's partner
  (n = 0) is a wholly out-of-bounds box, all zeros. The producer issues copies only, no register
  work; each commit arrives with the expect-tx of its window's boxes.
- Q by TMA (constexpr QTMA, 0 or 1, one program per request only): the producer copies the row
  block's Q as two boxes [64, 256] through q_desc, a descriptor over q viewed as rows
  [b * s_q * h_q, 576] (mla_decode_launch.q_args), instead of gathering it by cp.async; the
  launcher takes it where a block's rows are consecutive there (q_tma_reason). A partial block's
  unused rows then hold other rows of q (or zeros past its end): no row reads another's scores,
  and they are never stored. The walk keeps the gather: it stages Q under a run-time `if`.
- The exchange pipes (max0, max1, prob0, prob1) are ``barrier="named"``: a hand-off is one
  bar.arrive / bar.sync on a hardware named barrier, with no empty handshake (as FlashMLA's decode
  exchanges them); each left-out release is implied by the next hand-off the other way (max0's by
  max1's commit, max1's by prob0's, prob0's by the next pair's max1, prob1's by the next pair's
  max0), which the verifier proves (docs/semantics.md, rule 10).
- No validity field in the K slots: each consumer derives its tile's mask from the positions, the
  request's end and, with CAUSAL, query j's limit seqlen - s_q + j + 1 per row; with TMA, slot
  row r holds position tile_start + shift + r, a real one iff r >= -shift
  (mla_decode_common.masked_by_position). The cp.async path keeps its shift-0 expressions
  written out. consumer1 skips the mask on a tile wholly before every row's limit (needs_mask;
  the steady state of a long request): the compare and select sat between the QK's wait and the
  softmax. consumer0 does so only with CAUSAL, whole requests (not BALANCE) and the TMA producer,
  where it runs at 240 registers (``224 + 8 * TMA + 8 * TMA * CAUSAL * (1 - BALANCE)``: the
  balanced producer needs more than the 32 that leaves); elsewhere it masks every tile (at 232
  the branch spills; without CAUSAL the skip at 240 measured no faster: docs/decode.md).
- Rows past the last one of the kv head (a partial row block) load Q as zeros and store nothing.
The part's pair count NP = max(x_hi - x_lo, 0) is computed once from cache_seqlens, in the kernel
body before warp_specialize (mla_decode_parts.part_range); every partition loops ``for p in
range(NP)`` over the same value, an opaque param for the verifier (NP = 0: an idle part).

Outputs: a whole request's out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] (natural log; no
token: out 0, lse +inf); a split request's segments o_part [b + P, s_q, h_q, 512] fp32 (normalised
by the segment's own row sum) and lse_part [b + P, s_q, h_q] (no token in the segment: 0 and -inf)
at slot b + k. All four contiguous (their strides come from s_q and h_q).

Arguments: k_ptr (the cp.async producer's) and k_desc, tail_desc (the TMA producer's; the cp.async
launch passes k_cache in their places, unused), q_desc (QTMA's; q in its place otherwise):
mla_decode_launch.py builds them.

Shared memory (bf16 = 2 B): q 65,536 B (q_l + q_r); tile k0 (kv0 + kv0r) and tile k1 (kv1 + kv1l)
each 32 KiB + 32 KiB + 8 KiB = 73,728 B; prob0 and prob1 each 8,192 + 256 = 8,448 B; max0 and max1
256 B each; total 230,400 B of Hopper's 232,448. q's tail stays in registers (16 per thread, the A
operand of a register-A wgmma), as in the prefill seesaw. Registers: [232, 232] for the consumers
with the TMA producer (which issues copies only and keeps 40), [224, 224] with the cp.async one
(which needs 56 for its row addresses): ``224 + 8 * TMA``; consumer0 240 with CAUSAL, whole
requests and TMA (the producer then keeps 32).
"""

import triton.language as tl

import tle_compiler as tle

from .mla_decode_common import (block_rows, masked_by_position, needs_mask, page_shift,
                                q_box_row, q_row_ptrs, row_block_item, row_limit, row_offsets,
                                row_valid, store_half, store_lse)
from .mla_decode_parts import next_request, part_range, whole_in_part
from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LOG2E, kv_rows, lazy_ref, normalized,
                                rebase, shift_of)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def mla_decode_seesaw(q_ptr, k_ptr, k_desc, tail_desc, q_desc, bt_ptr, seqlens_ptr, out_ptr,
                      lse_ptr, opart_ptr, lpart_ptr,
                      stride_q_b, stride_q_s, stride_q_h,
                      stride_k_blk, stride_k_tok, stride_k_h, stride_bt_b,
                      B, n_chunks, s_q, h_kv, heads_per_kv, sm_scale,
                      BLOCK_H: tl.constexpr, CAUSAL: tl.constexpr, BALANCE: tl.constexpr,
                      TMA: tl.constexpr, RUN: tl.constexpr, QTMA: tl.constexpr):
    n_rows, rb, g = row_block_item(s_q, h_kv, heads_per_kv, BLOCK_H)
    # This program's pairs [x_lo, x_hi) of the batch's flat pair space and the request where they
    # start, read once and shared by every partition (mla_decode_parts.py).
    x_lo, x_hi, b0, s0, e0, sl0 = part_range(seqlens_ptr, B, n_chunks, BALANCE, RUN)
    # The walk's state at the part's first pair: its request b0, the pair's index pp0 in it, the
    # pairs of that request left from there, and whether the request lies wholly in the part.
    pp0 = x_lo - s0
    left0 = e0 - x_lo
    whole0 = whole_in_part(s0, e0, x_lo, x_hi)
    # The pair count, one opaque value for the verifier (it proves the protocol for every NP).
    NP = tl.maximum(x_hi - x_lo, 0)

    k_head = k_ptr + g * stride_k_h

    q = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16))
    # Tile k0 = 2p, split by last reader: consumer0 alone reads K0_L (QK, then V0_L) and the tail;
    # K0_R is read by consumer0's QK and by consumer1's P0·V0_R.
    kv0 = tle.pipe(capacity=1,
                   kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16))
    kv0r = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                    kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16))
    # Tile k1 = 2p+1, mirrored: consumer1 alone reads K1_R and the tail; K1_L is read by
    # consumer1's QK and by consumer0's P1·V1_L.
    kv1 = tle.pipe(capacity=1,
                   kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16))
    kv1l = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                    kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16))
    max0 = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer0 → 1
    max1 = tle.pipe(capacity=1, barrier="named", m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer1 → 0
    prob0 = tle.pipe(capacity=1, barrier="named",                                              # consumer0 → 1
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    prob1 = tle.pipe(capacity=1, barrier="named",                                              # consumer1 → 0
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))

    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_b, stride_q_s, stride_q_h, k_head,
                     stride_k_blk, stride_k_tok, k_desc, tail_desc, q_desc, bt_ptr, stride_bt_b,
                     seqlens_ptr, NP, b0, pp0, left0, sl0, rb, g, n_rows, h_kv, heads_per_kv,
                     BLOCK_H, TMA, BALANCE + RUN - 1, QTMA)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_b,
                      stride_q_s, stride_q_h, out_ptr, lse_ptr, opart_ptr, lpart_ptr,
                      seqlens_ptr, sm_scale, NP, b0, pp0, left0, sl0, whole0, s_q, h_kv, rb, g,
                      n_rows, heads_per_kv, BLOCK_H, CAUSAL, TMA, BALANCE, BALANCE + RUN - 1)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_b,
                      stride_q_s, stride_q_h, out_ptr, opart_ptr, seqlens_ptr, sm_scale, NP,
                      b0, pp0, left0, sl0, whole0, s_q, h_kv, rb, g, n_rows, heads_per_kv,
                      BLOCK_H, CAUSAL, TMA, BALANCE + RUN - 1))],
        [4, 4],
        [224 + 8 * TMA + 8 * TMA * CAUSAL * (1 - BALANCE), 224 + 8 * TMA])


def page_rows(k_head, stride_k_blk, stride_k_tok, bt_row, tile, last_tile, seqlen):
    """Row pointers [BK, 1] of K tile ``tile``'s page and which of its positions are before the
    request's end ``seqlen``. A tile past the last one (an odd last tile's partner, or an empty
    request's pair) reads the last tile's block-table entry (entry 0 for an empty request), so no
    entry past the request's pages is read, and has no valid position: its loads are masked,
    zero-filled."""
    page = page_of(bt_row, tile, last_tile, seqlen).to(tl.int64)
    offs_k = tl.arange(0, BK)
    valid = tile * BK + offs_k < seqlen
    return kv_rows(k_head + page * stride_k_blk, stride_k_tok, offs_k, valid), valid


def page_of(bt_row, tile, last_tile, seqlen):
    """The page (k_cache block) of K tile ``tile``: its block-table entry, or the last tile's for
    a tile past the last one, so no entry past the request's pages is read; page 0 for an empty
    request (entry 0 is read but not used: every position of its tiles is masked)."""
    entry = tl.maximum(tl.where(tile < last_tile, tile, last_tile), 0)
    return tl.load(bt_row + entry, mask=seqlen > 0, other=0)


def producer(q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_b, stride_q_s, stride_q_h, k_head,
             stride_k_blk, stride_k_tok, k_desc, tail_desc, q_desc, bt_ptr, stride_bt_b,
             seqlens_ptr, NP, b0, pp0, left0, sl0, rb, g, n_rows, h_kv, heads_per_kv,
             BLOCK_H: tl.constexpr, TMA: tl.constexpr, WALK: tl.constexpr,
             QTMA: tl.constexpr):
    r = block_rows(rb, n_rows, BLOCK_H)
    keep_q = row_valid(rb, n_rows, BLOCK_H)[:, None]
    qw = q.writer()
    w0 = kv0.writer()
    w0r = kv0r.writer()
    w1 = kv1.writer()
    w1l = kv1l.writer()
    if WALK:
        cb = b0      # the walk: pair p's request, its length, the pair's index pp in it (tiles
        csl = sl0    # 2pp and 2pp + 1), and the request's pairs left from pair p on
        pp = pp0
        left = left0
        for p in range(NP):
            if left == 0:  # the previous pair was its request's last (never at p = 0)
                cb, csl, pp, left = next_request(seqlens_ptr, cb)
            last_tile = (csl + BK - 1) // BK - 1
            bt_row = bt_ptr + cb.to(tl.int64) * stride_bt_b
            # Q rows are staged once per segment: the slot keeps them while the request goes on.
            slot = qw.acquire(p)
            if (pp == 0) | (p == 0):
                stage_q(slot, q_ptr, stride_q_b, stride_q_s, stride_q_h, cb, r, keep_q, g,
                        heads_per_kv)
            qw.commit(p)
            copy_pair(p, pp, csl, last_tile, bt_row, w0, w0r, w1, w1l, k_head, stride_k_blk,
                      stride_k_tok, k_desc, tail_desc, g, TMA)
            pp = pp + 1
            left = left - 1
    else:
        # One whole request (one program per request): its Q rows staged once, at q's index 0,
        # and its pairs copied with no walk.
        slot = qw.acquire(0)
        if QTMA:
            # two TMA boxes [64, 256] of q viewed as rows [b * s_q * h_q, 576]: the block's rows
            # are consecutive there (h_kv == 1 or s_q == 1, mla_decode_launch.q_tma_reason);
            # rows past the kv head's last one are other rows of q, or zeros past q's end, and
            # their outputs are never stored (no row reads another's scores)
            row0 = q_box_row(b0, n_rows, h_kv, g, heads_per_kv, rb, BLOCK_H)
            tle.gpu.tma_load(slot.q_l, q_desc, [row0, 0])
            tle.gpu.tma_load(slot.q_r, q_desc, [row0, D_HALF])
        else:
            stage_q(slot, q_ptr, stride_q_b, stride_q_s, stride_q_h, b0, r, keep_q, g,
                    heads_per_kv)
        qw.commit(0)
        last_tile = (sl0 + BK - 1) // BK - 1
        bt_row = bt_ptr + b0.to(tl.int64) * stride_bt_b
        for p in range(NP):
            copy_pair(p, p, sl0, last_tile, bt_row, w0, w0r, w1, w1l, k_head, stride_k_blk,
                      stride_k_tok, k_desc, tail_desc, g, TMA)


def stage_q(slot, q_ptr, stride_q_b, stride_q_s, stride_q_h, b, r, keep_q, g, heads_per_kv):
    """Store request ``b``'s Q rows ``r`` (their 512 main dims; rows that do not exist as zeros)
    into q's slot ``slot``."""
    offs_d = tl.arange(0, D_HALF)
    q_rows = q_row_ptrs(q_ptr + b.to(tl.int64) * stride_q_b, stride_q_s, stride_q_h, r, g,
                        heads_per_kv)
    tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_rows + offs_d[None, :], mask=keep_q,
                                                  other=0.0))
    tl.store(tle.gpu.local_ptr(slot.q_r), tl.load(q_rows + D_HALF + offs_d[None, :], mask=keep_q,
                                                  other=0.0))


def copy_pair(p, pp, csl, last_tile, bt_row, w0, w0r, w1, w1l, k_head, stride_k_blk,
              stride_k_tok, k_desc, tail_desc, g, TMA: tl.constexpr):
    """Pair p's K pieces into kv0, kv1, kv0r, kv1l, in that order: tiles 2pp and 2pp + 1 of the
    request of length csl whose block-table row is bt_row (last_tile its last tile)."""
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    if TMA:
        # Each piece is a TMA box [1, BK, 1, width] of page `page`, kv head g, at token
        # coordinate `shift` = n - BK (page_shift): rows past the request's end never arrive
        # (the box's rows before the page are zeros), a partner tile's box (n = 0) is all
        # zeros.
        page0 = page_of(bt_row, 2 * pp, last_tile, csl)
        page1 = page_of(bt_row, 2 * pp + 1, last_tile, csl)
        shift0 = page_shift(0, csl, 2 * pp)
        shift1 = page_shift(0, csl, 2 * pp + 1)

        slot = w0.acquire(p)
        tle.gpu.tma_load(slot.kv_l, k_desc, [page0, shift0, g, 0])
        tle.gpu.tma_load(slot.tkv, tail_desc, [page0, shift0, g, D_MAIN])
        w0.commit(p)

        slot = w1.acquire(p)
        tle.gpu.tma_load(slot.kv_r, k_desc, [page1, shift1, g, D_HALF])
        tle.gpu.tma_load(slot.tkv, tail_desc, [page1, shift1, g, D_MAIN])
        w1.commit(p)

        slot = w0r.acquire(p)
        tle.gpu.tma_load(slot.kv_r, k_desc, [page0, shift0, g, D_HALF])
        w0r.commit(p)

        slot = w1l.acquire(p)
        tle.gpu.tma_load(slot.kv_l, k_desc, [page1, shift1, g, 0])
        w1l.commit(p)
    else:
        # Both pages' block-table entries are read before the first acquire, so their latency
        # hides behind the wait for the previous pair's slots.
        rows0, valid0 = page_rows(k_head, stride_k_blk, stride_k_tok, bt_row, 2 * pp,
                                  last_tile, csl)
        rows1, valid1 = page_rows(k_head, stride_k_blk, stride_k_tok, bt_row, 2 * pp + 1,
                                  last_tile, csl)
        keep0 = valid0[:, None]
        keep1 = valid1[:, None]

        # Fill order (FlashMLA's): each consumer's first QK piece first, then the pieces
        # both read.
        slot = w0.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_l), tl.load(rows0 + offs_d[None, :], mask=keep0,
                                                       other=0.0))
        tl.store(tle.gpu.local_ptr(slot.tkv), tl.load(rows0 + D_MAIN + offs_t[None, :],
                                                      mask=keep0, other=0.0))
        w0.commit(p)

        slot = w1.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_r), tl.load(rows1 + D_HALF + offs_d[None, :],
                                                       mask=keep1, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.tkv), tl.load(rows1 + D_MAIN + offs_t[None, :],
                                                      mask=keep1, other=0.0))
        w1.commit(p)

        slot = w0r.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_r), tl.load(rows0 + D_HALF + offs_d[None, :],
                                                       mask=keep0, other=0.0))
        w0r.commit(p)

        slot = w1l.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_l), tl.load(rows1 + offs_d[None, :], mask=keep1,
                                                       other=0.0))
        w1l.commit(p)

def q_tail_of(q_ptr, stride_q_b, stride_q_s, stride_q_h, b, r, keep, g, heads_per_kv):
    """q's RoPE tail [BLOCK_H, D_TAIL] of request ``b``'s rows ``r`` (zeros for rows that do not
    exist), which each consumer keeps in registers as the A operand of its tail dot (shared
    memory is full)."""
    rows = q_row_ptrs(q_ptr + b.to(tl.int64) * stride_q_b, stride_q_s, stride_q_h, r, g,
                      heads_per_kv)
    return tl.load(rows + D_MAIN + tl.arange(0, D_TAIL)[None, :], mask=keep[:, None], other=0.0)


def flush_segment(out, l_i, ref, out_ptr, lse_ptr, opart_ptr, lpart_ptr, b, whole, r, keep, g,
                  heads_per_kv, s_q, h_kv, rb, n_rows, BLOCK_H: tl.constexpr, LSE: tl.constexpr):
    """Store a segment's normalised output half ``out`` (its column offset is in the pointers)
    and, with LSE, its log-sum-exp: when request b is whole in this part, bf16 into out[b] and
    the request's lse (+inf for a row without a token); else fp32 into partial slot b + part
    (part = program_id(1)) and the segment's part lse (-inf for a row that saw nothing). The
    outputs are contiguous (the launcher checks), so their strides come from s_q and h_q rather
    than from a dozen arguments each consumer would keep in registers. One ``if`` on ``whole``
    (two ifs on one condition crash Triton 3.6's combine-tensor-select-and-if pass)."""
    h_q = h_kv * heads_per_kv
    if whole:
        store_half(out_ptr + b.to(tl.int64) * (s_q * h_q * D_MAIN),
                   row_offsets(r, g, heads_per_kv, h_q * D_MAIN, D_MAIN), out, keep, rb, n_rows,
                   BLOCK_H, False)
        if LSE:  # lse [b, h_q, s_q]
            store_lse(lse_ptr + b.to(tl.int64) * (h_q * s_q)
                      + row_offsets(r, g, heads_per_kv, 1, s_q), l_i, ref, keep, False)
    else:
        slot = (b + tl.program_id(1)).to(tl.int64)
        store_half(opart_ptr + slot * (s_q * h_q * D_MAIN),
                   row_offsets(r, g, heads_per_kv, h_q * D_MAIN, D_MAIN), out, keep, rb, n_rows,
                   BLOCK_H, True)
        if LSE:  # lse_part [b + P, s_q, h_q]
            store_lse(lpart_ptr + slot * (s_q * h_q) + row_offsets(r, g, heads_per_kv, h_q, 1),
                      l_i, ref, keep, True)


def consumer0(q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_b, stride_q_s,
              stride_q_h, out_ptr, lse_ptr, opart_ptr, lpart_ptr, seqlens_ptr, sm_scale, NP,
              b0, pp0, left0, sl0, whole0, s_q, h_kv, rb, g, n_rows, heads_per_kv,
              BLOCK_H: tl.constexpr, CAUSAL: tl.constexpr, TMA: tl.constexpr,
              BALANCE: tl.constexpr, WALK: tl.constexpr):
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    r = block_rows(rb, n_rows, BLOCK_H)
    keep = row_valid(rb, n_rows, BLOCK_H)
    q_tail = q_tail_of(q_ptr, stride_q_b, stride_q_s, stride_q_h, b0, r, keep, g, heads_per_kv)

    qr = q.reader("consumer0")
    own = kv0.reader()
    own_r = kv0r.reader("consumer0")
    peer = kv1l.reader("consumer0")
    mw = max0.writer()
    mr = max1.reader()
    pw = prob0.writer()
    pr = prob1.reader()

    cb = b0    # the walk (as the producer's): pair p's request, its length, the pair's index
    csl = sl0  # in it, the request's pairs left from pair p on, and whether the request lies
    pp = pp0   # wholly in this part
    left = left0
    whole = whole0
    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)  # lazy reference max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                 # running row sum of exp2(s - ref)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256], unnormalised
    if WALK:
        for p in range(NP):
            qres = qr.wait(p)
            s, k0 = scores0(p, pp, csl, qres.slot, q_tail, own, own_r, peer, pr, s_q, r,
                            heads_per_kv, CAUSAL, TMA, BALANCE)
            qr.release(p)

            # Segment bookkeeping, where no wgmma is in flight (reading s waited for all of
            # them): which request the next pair belongs to, and whether this pair ends one.
            pb = cb    # this pair's request and whether it is whole in this part
            pwhole = whole
            ends = (left == 1) & (p + 1 < NP)  # the pair ends its request, and the part goes on
            pp = pp + 1
            left = left - 1
            if ends:
                cb, csl, pp, left = next_request(seqlens_ptr, cb)
                whole = left <= NP - (p + 1)   # it starts in this part: whole iff it ends here
                q_tail = q_tail_of(q_ptr, stride_q_b, stride_q_s, stride_q_h, cb, r, keep, g,
                                   heads_per_kv)

            acc, l_i, ref = update0(p, s, k0, own, mw, mr, pw, pr, peer, acc, l_i, ref,
                                    qk_scale)
            if ends:
                # the pair ends its request's segment: store it (normalised in place, so no
                # second accumulator's registers) and start the next request from nothing
                acc = normalized(acc, l_i)
                flush_segment(acc, l_i, ref, out_ptr, lse_ptr, opart_ptr, lpart_ptr, pb, pwhole,
                              r, keep, g, heads_per_kv, s_q, h_kv, rb, n_rows, BLOCK_H, True)
                acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
                ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
                l_i = tl.zeros([BLOCK_H], tl.float32)
    else:
        # One whole request: q waited for once, no walk, its output stored after the loop.
        qres = qr.wait(0)
        for p in range(NP):
            s, k0 = scores0(p, p, sl0, qres.slot, q_tail, own, own_r, peer, pr, s_q, r,
                            heads_per_kv, CAUSAL, TMA, BALANCE)
            acc, l_i, ref = update0(p, s, k0, own, mw, mr, pw, pr, peer, acc, l_i, ref,
                                    qk_scale)
        qr.release(0)
    if NP > 0:
        pr.release(NP - 1)
        peer.release(NP - 1)
        # the last segment: the last pair's request (a part's last pair never advances the walk)
        flush_segment(normalized(acc, l_i), l_i, ref, out_ptr, lse_ptr, opart_ptr, lpart_ptr, cb,
                      whole, r, keep, g, heads_per_kv, s_q, h_kv,
                      rb, n_rows, BLOCK_H, True)


def scores0(p, pp, csl, qslot, q_tail, own, own_r, peer, pr, s_q, r, heads_per_kv,
            CAUSAL: tl.constexpr, TMA: tl.constexpr, BALANCE: tl.constexpr):
    """consumer0's scores of pair p (tile 2pp of the request of length csl), masked, and kv0's
    wait result: Q·K0ᵀ over the 512 main dims and the tail, with the previous pair's prob1 and
    kv1l released between the two QK halves (its P1·V1_L, left in flight, is queued before
    this QK) and kv0r released once read."""
    offs_k = tl.arange(0, BK)
    k0 = own.wait(p)
    s = tl.dot(tl.load(tle.gpu.local_ptr(qslot.q_l)),
               tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.kv_l))))
    s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.tkv))), s)
    if p > 0:
        # the previous pair's P1·V1_L was left in flight; it is queued before this QK
        pr.release(p - 1)
        peer.release(p - 1)
    k0r = own_r.wait(p)
    s = tl.dot(tl.load(tle.gpu.local_ptr(qslot.q_r)),
               tl.trans(tl.load(tle.gpu.local_ptr(k0r.slot.kv_r))), s)
    if CAUSAL and not BALANCE and TMA:
        # a tile wholly before every row's limit skips the mask (as consumer1's), where
        # consumer0 has the registers for the branch ([240, 232]: whole requests,
        # the TMA producer) and it measured faster (causal; docs/decode.md)
        if needs_mask((2 * pp + 1) * BK, csl, s_q, csl, CAUSAL):
            lim = row_limit(csl, s_q, csl, r, heads_per_kv, CAUSAL)
            s = masked_by_position(s, 0, 2 * pp, page_shift(0, csl, 2 * pp), lim, CAUSAL)
    else:
        lim = row_limit(csl, s_q, csl, r, heads_per_kv, CAUSAL)
        if TMA:  # slot row r is position 2pp·BK + shift + r (page_shift)
            s = masked_by_position(s, 0, 2 * pp, page_shift(0, csl, 2 * pp), lim, CAUSAL)
        else:    # the same with shift 0: rows at or past seqlen were loaded as zeros
            pos = (2 * pp) * BK + offs_k
            # sm_scale > 0 keeps the max
            s = tl.where(pos[None, :] < lim[:, None], s, float("-inf"))
    own_r.release(p)
    return s, k0


def update0(p, s, k0, own, mw, mr, pw, pr, peer, acc, l_i, ref, qk_scale):
    """consumer0's pair p after its scores ``s``: publish the row max, P0·V0_L, take consumer1's
    max, hand P0 (rescaled to it) and its row sum over, then P1·V1_L (left in flight across the
    loop's back-edge); the new (acc, l_i, ref)."""
    mx0 = tl.max(s, 1) * qk_scale
    mslot = mw.acquire(p)
    tl.store(tle.gpu.local_ptr(mslot.m), mx0)
    mw.commit(p)
    r0 = lazy_ref(ref, mx0)
    r0_use = shift_of(r0)
    alpha0 = tl.exp2(ref - r0_use)
    p0 = tl.exp2(s * qk_scale - r0_use[:, None])
    sum0 = tl.sum(p0, 1)
    acc = tle.gpu.scale_rows(acc, alpha0)
    acc = tl.dot(p0.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(k0.slot.kv_l)), acc)

    own.release(p)
    mres = mr.wait(p)
    r_new = tl.load(tle.gpu.local_ptr(mres.slot.m))
    mr.release(p)
    r_use = shift_of(r_new)
    beta = rebase(r0, r_use)
    pslot = pw.acquire(p)
    tl.store(tle.gpu.local_ptr(pslot.sS), tle.gpu.scale_rows(p0, beta).to(tl.bfloat16))
    tl.store(tle.gpu.local_ptr(pslot.row_sum), sum0)
    pw.commit(p)
    acc = tle.gpu.scale_rows(acc, beta)

    pres = pr.wait(p)
    k1 = peer.wait(p)
    acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                 tl.load(tle.gpu.local_ptr(k1.slot.kv_l)), acc)
    sum1 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
    l_i = (l_i * alpha0 + sum0) * beta + sum1
    return acc, l_i, r_new


def consumer1(q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_b, stride_q_s,
              stride_q_h, out_ptr, opart_ptr, seqlens_ptr, sm_scale, NP, b0, pp0, left0,
              sl0, whole0, s_q, h_kv, rb, g, n_rows, heads_per_kv, BLOCK_H: tl.constexpr,
              CAUSAL: tl.constexpr, TMA: tl.constexpr, WALK: tl.constexpr):
    qk_scale = sm_scale * LOG2E
    r = block_rows(rb, n_rows, BLOCK_H)
    keep = row_valid(rb, n_rows, BLOCK_H)
    q_tail = q_tail_of(q_ptr, stride_q_b, stride_q_s, stride_q_h, b0, r, keep, g, heads_per_kv)

    qr = q.reader("consumer1")
    own = kv1.reader()
    own_l = kv1l.reader("consumer1")
    peer = kv0r.reader("consumer1")
    mw = max1.writer()
    mr = max0.reader()
    pw = prob1.writer()
    pr = prob0.reader()

    cb = b0
    csl = sl0
    pp = pp0
    left = left0
    whole = whole0
    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, 256:], unnormalised
    if WALK:
        for p in range(NP):
            qres = qr.wait(p)
            s, k1 = scores1(p, pp, csl, qres.slot, q_tail, own, own_l, s_q, r, heads_per_kv,
                            CAUSAL, TMA)
            qr.release(p)

            # segment bookkeeping, as consumer0's (both keep the same ref and l_i)
            pb = cb    # this pair's request and whether it is whole in this part
            pwhole = whole
            ends = (left == 1) & (p + 1 < NP)  # the pair ends its request, and the part goes on
            pp = pp + 1
            left = left - 1
            if ends:
                cb, csl, pp, left = next_request(seqlens_ptr, cb)
                whole = left <= NP - (p + 1)   # it starts in this part: whole iff it ends here
                q_tail = q_tail_of(q_ptr, stride_q_b, stride_q_s, stride_q_h, cb, r, keep, g,
                                   heads_per_kv)

            acc, l_i, ref = update1(p, s, k1, own, mw, mr, pw, pr, peer, acc, l_i, ref,
                                    qk_scale)
            if ends:
                acc = normalized(acc, l_i)
                flush_segment(acc, l_i, ref, out_ptr + D_HALF, out_ptr, opart_ptr + D_HALF,
                              opart_ptr, pb, pwhole, r, keep, g, heads_per_kv, s_q, h_kv, rb,
                              n_rows, BLOCK_H, False)
                acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
                ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
                l_i = tl.zeros([BLOCK_H], tl.float32)
    else:
        # One whole request: q waited for once, no walk, its output stored after the loop.
        qres = qr.wait(0)
        for p in range(NP):
            s, k1 = scores1(p, p, sl0, qres.slot, q_tail, own, own_l, s_q, r, heads_per_kv,
                            CAUSAL, TMA)
            acc, l_i, ref = update1(p, s, k1, own, mw, mr, pw, pr, peer, acc, l_i, ref,
                                    qk_scale)
        qr.release(0)
    if NP > 0:
        flush_segment(normalized(acc, l_i), l_i, ref, out_ptr + D_HALF, out_ptr,
                      opart_ptr + D_HALF, opart_ptr, cb, whole, r,
                      keep, g, heads_per_kv, s_q, h_kv, rb, n_rows, BLOCK_H, False)


def scores1(p, pp, csl, qslot, q_tail, own, own_l, s_q, r, heads_per_kv, CAUSAL: tl.constexpr,
            TMA: tl.constexpr):
    """consumer1's scores of pair p (tile 2pp + 1 of the request of length csl), masked where
    the tile reaches a row's limit (needs_mask), and kv1's wait result; kv1l released once
    read."""
    offs_k = tl.arange(0, BK)
    k1 = own.wait(p)
    s = tl.dot(tl.load(tle.gpu.local_ptr(qslot.q_r)),
               tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.kv_r))))
    s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.tkv))), s)
    k1l = own_l.wait(p)
    s = tl.dot(tl.load(tle.gpu.local_ptr(qslot.q_l)),
               tl.trans(tl.load(tle.gpu.local_ptr(k1l.slot.kv_l))), s)
    if needs_mask((2 * pp + 2) * BK, csl, s_q, csl, CAUSAL):
        lim = row_limit(csl, s_q, csl, r, heads_per_kv, CAUSAL)
        if TMA:
            s = masked_by_position(s, 0, 2 * pp + 1, page_shift(0, csl, 2 * pp + 1), lim,
                                   CAUSAL)
        else:
            pos = (2 * pp + 1) * BK + offs_k
            s = tl.where(pos[None, :] < lim[:, None], s, float("-inf"))
    own_l.release(p)
    return s, k1


def update1(p, s, k1, own, mw, mr, pw, pr, peer, acc, l_i, ref, qk_scale):
    """consumer1's pair p after its scores ``s``: take consumer0's max, publish the new one,
    hand P1 and its row sum over, P1·V1_R, then P0·V0_R; kv1, prob0 and kv0r released; the new
    (acc, l_i, ref)."""
    mx1 = tl.max(s, 1) * qk_scale
    mres = mr.wait(p)
    mx0 = tl.load(tle.gpu.local_ptr(mres.slot.m))
    mr.release(p)
    r0 = lazy_ref(ref, mx0)
    r_new = lazy_ref(r0, mx1)
    mslot = mw.acquire(p)
    tl.store(tle.gpu.local_ptr(mslot.m), r_new)
    mw.commit(p)
    r0_use = shift_of(r0)
    r_use = shift_of(r_new)
    alpha0 = tl.exp2(ref - r0_use)
    beta = rebase(r0, r_use)
    p1 = tl.exp2(s * qk_scale - r_use[:, None])
    sum1 = tl.sum(p1, 1)
    p1 = p1.to(tl.bfloat16)
    pslot = pw.acquire(p)
    tl.store(tle.gpu.local_ptr(pslot.sS), p1)
    tl.store(tle.gpu.local_ptr(pslot.row_sum), sum1)
    pw.commit(p)

    acc = tle.gpu.scale_rows(acc, tl.exp2(ref - r_use))
    acc = tl.dot(p1, tl.load(tle.gpu.local_ptr(k1.slot.kv_r)), acc)
    pres = pr.wait(p)
    k0r = peer.wait(p)
    acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                 tl.load(tle.gpu.local_ptr(k0r.slot.kv_r)), acc)
    sum0 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
    own.release(p)
    pr.release(p)
    peer.release(p)
    l_i = (l_i * alpha0 + sum0) * beta + sum1
    return acc, l_i, r_new


DEFAULT_CONFIG = {
    # q [b, s_q, h_q, 576] bf16, k_cache [num_blocks, 64, h_kv, 576] bf16, block_table
    # [b, max_blocks] int32, cache_seqlens [b] int32; out [b, s_q, h_q, 512] bf16, lse
    # [b, h_q, s_q] fp32 (strides in (batch, query, head) order), o_part [b + P, s_q, h_q, 512]
    # fp32 and lse_part [b + P, s_q, h_q] fp32 (P = grid axis 1).
    "signature": {
        "q_ptr": "*bf16", "k_ptr": "*bf16",
        "k_desc": "tensordesc<bf16[1, 64, 1, 256]>", "tail_desc": "tensordesc<bf16[1, 64, 1, 64]>",
        "q_desc": "tensordesc<bf16[64, 256]>",
        "bt_ptr": "*i32", "seqlens_ptr": "*i32",
        "out_ptr": "*bf16", "lse_ptr": "*fp32", "opart_ptr": "*fp32", "lpart_ptr": "*fp32",
        "stride_q_b": "i32", "stride_q_s": "i32", "stride_q_h": "i32",
        "stride_k_blk": "i32", "stride_k_tok": "i32", "stride_k_h": "i32", "stride_bt_b": "i32",
        "B": "i32", "n_chunks": "i32", "s_q": "i32", "h_kv": "i32", "heads_per_kv": "i32",
        "sm_scale": "fp32",
        "BLOCK_H": "constexpr", "CAUSAL": "constexpr", "BALANCE": "constexpr",
        "TMA": "constexpr", "RUN": "constexpr", "QTMA": "constexpr",
    },
    "constexprs": {"BLOCK_H": 64, "CAUSAL": False, "BALANCE": 1, "TMA": 0, "RUN": 1, "QTMA": 0},
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("h_kv * cdiv(s_q * h_q // h_kv, BLOCK_H)", "P"),
}
