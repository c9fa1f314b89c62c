"""The split FP8 sparse decode (sparse_decode_split_fp8.py) with the batch's K tiles balanced
over the SMs: the T query rows' tiles, row-major (X = T * NT), are cut into ``parts`` equal runs
[c * X // parts, (c + 1) * X // parts) (the launcher's ``balanced_cuts``), and part c runs as one
program per 64-head block (grid (head blocks, parts)), so the head blocks of a row gather the same
tokens side by side. A program crosses row boundaries where they fall; a maximal run of one row's
tiles in it is a *segment*, which stores its output, normalised over its own tiles, with its lse
and max_logits, as piece j of the row (piece-buffer row row * J + j, j = c - the first part
holding the row's first tile), and tail_split.combine merges a row's J pieces (pieces no segment
wrote hold lse +inf: empty, not read).

Why: the per-item kernel finishes a batch in ceil(items / SMs) item times, so from half a wave to
a wave of items every batch takes a whole item's time. Here a batch takes X / parts tiles per
program plus the segments' fixed costs and the merge (where it is taken: the launcher's
``use_balanced``).

The schedule is the split kernel's, tile for tile (the producer's loads, the left's softmax and
P·V_L, the right's P·V_R, the same pipes and budgets); what the walk changes:

- One loop ``for g in range(NG)`` over the program's tiles in every partition (NG read from the
  cut points once before ``warp_specialize``: one opaque value, the protocol proved for every
  NG), each partition carrying the same walk state (the tile's row and its index k in the row),
  advanced identically after each tile.
- q goes through its capacity-1 pipe at every tile (index g): the producer acquires and commits
  it each tile but stages Q only at a segment's first tile (the slot keeps it); the left waits
  for it before its S and releases it once S is consumed. (Indexing q by segment would need an
  index that is not affine in the loop variable, which tle-dump refuses.)
- A segment ends at its row's last tile or the program's last: each consumer, under one ``if``,
  stores its half of the piece (normalised), the left its lse and max_logits, and both start the
  next segment from nothing.

Its tiles cost about 1.28x the per-item kernel's on the H200 (docs/BENCHMARKS.md), which is why
the launcher takes it only for batches that fill little more than half the SMs.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_decode_seesaw_fp8 import ROPE_BYTE, dequantized, fp8_half, token_bytes
from .sparse_decode_split_fp8 import (publish_probs, split_pipes, tile_probs,
                                      tile_scores)
from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LN2, LOG2E, head_index, head_rows,
                                index_valid, lse_of, normalized)


@tle.jit(num_warps=4)
def sparse_decode_split_fp8_balanced(q_ptr, kv8_ptr, kv32_ptr, kv16_ptr, idx_ptr, out_ptr,
                                     lse_ptr, max_logits_ptr, stride_q_s, stride_q_h,
                                     stride_blk, page, stride_idx_s, stride_o_s, stride_o_h,
                                     stride_l_s, n_tokens, sm_scale, n_rows, n_heads, J, cuts_ptr,
                                     TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NT = TOPK // BK                        # K tiles per row
    # NG: one opaque value for the verifier (it proves the protocol for every NG), read once and
    # shared by every partition
    NG, lo = tile_range(cuts_ptr)

    q, kv, prob = split_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_ptr, stride_q_s, stride_q_h, kv8_ptr, kv32_ptr, kv16_ptr,
                     stride_blk, page, idx_ptr, stride_idx_s, n_tokens, n_rows, n_heads, lo,
                     NG, NT, BLOCK_H)),
         (left, (q, kv, prob, out_ptr, stride_o_s, stride_o_h, lse_ptr, max_logits_ptr,
                 stride_l_s, sm_scale, n_rows, n_heads, J, lo, NG, NT, BLOCK_H)),
         (right, (kv, prob, out_ptr, stride_o_s, stride_o_h, n_rows, n_heads, J, lo, NG, NT,
                  BLOCK_H))],
        [4, 4],
        [192, 160])


def tile_range(cuts_ptr):
    """(NG, lo): this program's tiles [lo, lo + NG) of the batch's rows * NT, from the cut points
    part * X // parts the launcher computes (``balanced_cuts``: they depend on the shapes alone);
    the program's part is its grid column (axis 1), its head block its grid row (axis 0)."""
    lo = tl.load(cuts_ptr + tl.program_id(1))
    return tl.load(cuts_ptr + tl.program_id(1) + 1) - lo, lo


def piece_row(row, n_rows, J, NT):
    """The piece-buffer row of this program's segment of query row ``row``: row * J + j, j the
    part's rank among those holding the row's tiles (the first holds tile row * NT: the smallest
    part c with (c + 1) * X // parts > row * NT, i.e. ceil((row * NT + 1) * parts / X) - 1)."""
    X = n_rows * NT
    first = ((row.to(tl.int64) * NT + 1) * tl.num_programs(1) + X - 1) // X - 1
    return row.to(tl.int64) * J + (tl.program_id(1) - first)


def tile_indices(idx_ptr, stride_idx_s, row, k, n_rows):
    """Tile k's 64 indices of query row ``row`` (a row past the last reads the last one's: the
    walk's look-ahead past a program's last tile stays inside the indices)."""
    row = tl.minimum(row, n_rows - 1)
    return tl.load(idx_ptr + row.to(tl.int64) * stride_idx_s + k * BK + tl.arange(0, BK))


def producer(q, kv, q_ptr, stride_q_s, stride_q_h, kv8_ptr, kv32_ptr, kv16_ptr, stride_blk,
             page, idx_ptr, stride_idx_s, n_tokens, n_rows, n_heads, lo, NG, NT,
             BLOCK_H: tl.constexpr):
    """Per tile: its FP8 bytes and scales loaded before the kv acquire (the next tile's indices a
    tile ahead), RoPE by cp.async, the NoPE halves dequantized and stored, the validity mask; then
    the q slot, with the row's Q staged at a segment's first tile."""
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    qw = q.writer()
    kw = kv.writer()
    h0 = tl.program_id(0) * BLOCK_H
    row = lo // NT
    k = lo % NT
    t_next = tile_indices(idx_ptr, stride_idx_s, row, k, n_rows)
    for g in range(NG):
        t = t_next
        valid = index_valid(t, n_tokens)
        off = token_bytes(t, valid, stride_blk, page)
        # the whole tile's bytes in flight during the wait for a free slot
        raw_l, lo_l, hi_l = fp8_half(kv8_ptr, kv32_ptr, off, valid, 0)
        raw_r, lo_r, hi_r = fp8_half(kv8_ptr, kv32_ptr, off, valid, 1)
        # the walk's next tile and its indices, one tile ahead
        last = k == NT - 1
        row_n = tl.where(last, row + 1, row)
        k_n = tl.where(last, 0, k + 1)
        t_next = tile_indices(idx_ptr, stride_idx_s, row_n, k_n, n_rows)
        slot = kw.acquire(g)
        tl.store(tle.gpu.local_ptr(slot.tkv),
                 tl.load(kv16_ptr + ((off + ROPE_BYTE) // 2)[:, None] + offs_t[None, :],
                         mask=valid[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.kv_l), dequantized(raw_l, lo_l, hi_l))
        tl.store(tle.gpu.local_ptr(slot.kv_r), dequantized(raw_r, lo_r, hi_r))
        tl.store(tle.gpu.local_ptr(slot.valid), valid.to(tl.int8))
        kw.commit(g)

        slot = qw.acquire(g)
        if (k == 0) | (g == 0):  # a segment's first tile: the row's Q (the slot keeps it)
            q_rows = (q_ptr + row.to(tl.int64) * stride_q_s
                      + head_index(h0, n_heads, BLOCK_H)[:, None] * stride_q_h)
            real = head_rows(h0, n_heads, BLOCK_H)[:, None]
            tl.store(tle.gpu.local_ptr(slot.q_l),
                     tl.load(q_rows + offs_d[None, :], mask=real, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.q_r),
                     tl.load(q_rows + D_HALF + offs_d[None, :], mask=real, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.q_t),
                     tl.load(q_rows + D_MAIN + offs_t[None, :], mask=real, other=0.0))
        qw.commit(g)
        row = row_n
        k = k_n


def left(q, kv, prob, out_ptr, stride_o_s, stride_o_h, lse_ptr, ml_ptr, stride_l_s, sm_scale,
         n_rows, n_heads, J, lo, NG, NT, BLOCK_H: tl.constexpr):
    """Scores over all 576 dims, the online softmax, P (with alpha and the running row sum)
    handed to the right, O_l = O_l·alpha + P·V_L; at a segment's end its piece's out[:, :256],
    lse and max_logits."""
    qk_scale = sm_scale * LOG2E
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader()
    kr = kv.reader("left")
    pw = prob.writer()
    h0 = tl.program_id(0) * BLOCK_H
    row = lo // NT
    k = lo % NT
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)  # running row max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                 # row sum of exp2(s - m_i)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256] of the segment
    for g in range(NG):
        qres = qr.wait(g)
        kres = kr.wait(g)
        s = tile_scores(qres, kres)

        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        qr.release(g)  # S is consumed: the producer may stage the next segment's Q
        alpha, p16, l_i = tile_probs(s, m_i, m_new, l_i, qk_scale)
        m_i = m_new

        publish_probs(pw, g, alpha, p16, l_i)

        acc = tle.gpu.scale_rows(acc, alpha)
        acc = tl.dot(p16, tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), acc)
        kr.release(g)

        if (k == NT - 1) | (g == NG - 1):  # the segment's last tile: its piece, then a new one
            prow = piece_row(row, n_rows, J, NT)
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + prow * stride_o_s + heads[:, None] * stride_o_h + offs_d[None, :],
                     normalized(acc, l_i), mask=real[:, None])
            tl.store(lse_ptr + prow * stride_l_s + heads, lse_of(l_i, m_i), mask=real)
            tl.store(ml_ptr + prow * stride_l_s + heads, m_i * LN2, mask=real)
            m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
            l_i = tl.zeros([BLOCK_H], tl.float32)
            acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
        last = k == NT - 1
        row = tl.where(last, row + 1, row)
        k = tl.where(last, 0, k + 1)


def right(kv, prob, out_ptr, stride_o_s, stride_o_h, n_rows, n_heads, J, lo, NG, NT,
          BLOCK_H: tl.constexpr):
    """O_r = O_r·alpha + P·V_R with the left's P; at a segment's end its piece's out[:, 256:]
    normalised by the left's row sum of the segment."""
    offs_d = tl.arange(0, D_HALF)
    kr = kv.reader("right", fields=("kv_r",))
    pr = prob.reader()
    h0 = tl.program_id(0) * BLOCK_H
    row = lo // NT
    k = lo % NT
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)  # O[:, 256:] of the segment
    for g in range(NG):
        kres = kr.wait(g)
        pres = pr.wait(g)
        alpha = tl.load(tle.gpu.local_ptr(pres.slot.alpha))
        l_i = tl.load(tle.gpu.local_ptr(pres.slot.sum_exp))
        acc = tle.gpu.scale_rows(acc, alpha)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.probs)),
                     tl.load(tle.gpu.local_ptr(kres.slot.kv_r)), acc)
        pr.release(g)
        kr.release(g)

        if (k == NT - 1) | (g == NG - 1):
            prow = piece_row(row, n_rows, J, NT)
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + prow * stride_o_s + heads[:, None] * stride_o_h + D_HALF
                     + offs_d[None, :], normalized(acc, l_i), mask=real[:, None])
            acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
        last = k == NT - 1
        row = tl.where(last, row + 1, row)
        k = tl.where(last, 0, k + 1)


DEFAULT_CONFIG = {
    # sparse_decode_split_fp8's arguments without q_div and ROUNDS, with J: out [T * J, h_q, 512]
    # (the pieces: row token * J + j), lse / max_logits [T * J, h_q] fp32; J = the most programs
    # that hold tiles of one row (pieces_per_item in the launcher).
    "signature": {
        "q_ptr": "*bf16", "kv8_ptr": "*fp8e4nv", "kv32_ptr": "*fp32", "kv16_ptr": "*bf16",
        "idx_ptr": "*i32", "out_ptr": "*bf16", "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_blk": "i64", "page": "i32",
        "stride_idx_s": "i32", "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "n_tokens": "i32", "sm_scale": "fp32", "n_rows": "i32", "n_heads": "i32", "J": "i32",
        "cuts_ptr": "*i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of BK = 64
    "num_warps": 4,
    "grid": ("head blocks", "parts"),
}
