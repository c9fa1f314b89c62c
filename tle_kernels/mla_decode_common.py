"""What the TLE MLA decode kernels (mla_decode_pipe.py, mla_decode_seesaw.py) share beyond the
SparseMLA pieces of sparse_mla_common.py: a program's work item and the positions of its split, the
query rows of a row block and where they live in q / out / lse, each row's first position it must
not see, and the epilogue's stores of an output half and of the log-sum-exp (one split: bf16 out
and lse; one split of several: the fp32 parts mla_decode_combine.py merges).

Both kernels take the same arguments (mla_decode_launch.py's launch contract), so the helpers name
them alike. They are plain tile functions the frontend inlines into the kernel body or partition
that calls them (see sparse_mla_common.py): a kernel computes with them what it computed with the
expressions written in place. What stays written out in each kernel does so for a reason: a helper
that loads or stores is inlined in sequential form (every call bound to a temporary), which would
turn a slot's ``tl.store(local_ptr(...), tl.load(...))`` cp.async copy into a register copy, so
the producers' copies into pipe slots are not helpers.
"""

import triton.language as tl

from .sparse_mla_common import BK, D_HALF, LN2, lse_of


def work_item(s_q, h_kv, heads_per_kv, BLOCK_H: tl.constexpr):
    """``(n_rows, rb, g, b, split)`` of this program. Grid axis 0 is (request b, kv head g, row
    block rb) with the row block fastest, so the row blocks that read the same pages run side by
    side and share them through L2; axis 1 is the split. The n_rows = s_q * heads_per_kv query
    rows of a kv head are (query j, head) flattened, head fastest."""
    n_rows = s_q * heads_per_kv
    n_rb = (n_rows + BLOCK_H - 1) // BLOCK_H
    item = tl.program_id(0)
    split = tl.program_id(1)
    rb = item % n_rb
    g = (item // n_rb) % h_kv
    b = (item // n_rb // h_kv).to(tl.int64)
    return n_rows, rb, g, b, split


def row_block_item(s_q, h_kv, heads_per_kv, BLOCK_H: tl.constexpr):
    """``(n_rows, rb, g)`` of a program of the scheduled grid: axis 0 is (kv head g, row block
    rb), row block fastest; axis 1 is the part of the batch's K-tile pairs it walks
    (mla_decode_parts.py)."""
    n_rows = s_q * heads_per_kv
    n_rb = (n_rows + BLOCK_H - 1) // BLOCK_H
    item = tl.program_id(0)
    return n_rows, item % n_rb, (item // n_rb) % h_kv


def split_range(seqlens_ptr, b, split):
    """``(seqlen, lo, hi, NK)``: request b's length, the positions [lo, hi) of split ``split`` and
    its K tiles NK = ceil(max(hi - lo, 0) / 64). A split spans chunk = ceil(ceil(seqlen / n_split)
    / 64) * 64 positions, so it starts on a page boundary (a page holds one K tile); NK is 0 for a
    split past the last token. Read once in the kernel body and handed to every partition, NK is
    one opaque param for the verifier, which proves the protocol for every value of it."""
    seqlen = tl.load(seqlens_ptr + b)
    chunk = (seqlen + tl.num_programs(1) - 1) // tl.num_programs(1)
    chunk = (chunk + BK - 1) // BK * BK
    lo = split * chunk
    hi = tl.minimum(seqlen, lo + chunk)
    NK = (tl.maximum(hi, lo) - lo + BK - 1) // BK
    return seqlen, lo, hi, NK


def block_rows(rb, n_rows, BLOCK_H: tl.constexpr):
    """The row indices of row block ``rb``; a row past the last one is clamped to row 0 so its
    address stays inside the tensor (its loads and stores are masked with ``row_valid``)."""
    r = rb * BLOCK_H + tl.arange(0, BLOCK_H)
    return tl.where(r < n_rows, r, 0)


def row_valid(rb, n_rows, BLOCK_H: tl.constexpr):
    """Which rows of row block ``rb`` exist (the last block of a kv head may be partial)."""
    return rb * BLOCK_H + tl.arange(0, BLOCK_H) < n_rows


def row_offsets(r, g, heads_per_kv, stride_s, stride_h):
    """Element offsets of rows ``r`` of kv head ``g`` in a [.., s_q, h_q, ..] tensor: row r is query
    r // heads_per_kv, head g * heads_per_kv + r % heads_per_kv."""
    return (r // heads_per_kv) * stride_s + (g * heads_per_kv + r % heads_per_kv) * stride_h


def q_box_row(b, n_rows, h_kv, g, heads_per_kv, rb, BLOCK_H: tl.constexpr):
    """The first row of row block ``rb`` of kv head ``g`` of request ``b`` in q viewed as rows
    [b * s_q * h_q, 576] (n_rows * h_kv = s_q * h_q rows a request), where the decode kernels'
    Q boxes start; the block's rows follow it there when h_kv == 1 or s_q == 1
    (mla_decode_launch.q_tma_reason). An i32, as a TMA coordinate is."""
    return (b * n_rows * h_kv + g * heads_per_kv + rb * BLOCK_H).to(tl.int32)


def q_row_ptrs(q_base, stride_q_s, stride_q_h, r, g, heads_per_kv):
    """Pointers [BLOCK_H, 1] to the q rows ``r`` of kv head ``g`` of request ``q_base``."""
    return q_base + row_offsets(r, g, heads_per_kv, stride_q_s, stride_q_h)[:, None]


def row_limit(seqlen, s_q, hi, r, heads_per_kv, CAUSAL: tl.constexpr):
    """The first position each row must not see: the split's end hi, and with CAUSAL also
    seqlen - s_q + j + 1 for the row's query j (query j sees the positions before it)."""
    if CAUSAL:
        lim = tl.minimum(seqlen - s_q + 1 + r // heads_per_kv, hi)
    else:
        lim = hi + r * 0
    return lim


def needs_mask(end, seqlen, s_q, hi, CAUSAL: tl.constexpr):
    """Whether a K tile whose positions lie before ``end`` may hold a position that some row must
    not see (row_limit): one at or past the split's end ``hi``, or with CAUSAL one at or past
    seqlen - s_q + 1, the smallest row limit. A tile wholly before both needs no mask, so the
    many whole tiles of a long request skip the per-element compare and select (the request's
    last tiles, or its last s_q positions with CAUSAL, still take it)."""
    if CAUSAL:
        first = tl.minimum(seqlen - s_q + 1, hi)
    else:
        first = hi
    return end > first


def page_shift(lo, hi, tile):
    """The token shift of K tile ``tile``'s page box when pages are copied with TMA: n - BK, n the
    tile's positions before the split's end ``hi`` (BK for a whole tile, fewer for the split's
    last tile, 0 for an odd last tile's partner). Copied at token coordinate ``shift`` (<= 0), the
    box's first -shift rows lie before the page and arrive as zeros, and the page's first n rows
    land last, so no cache row at or past hi reaches the slot, whatever it holds."""
    n = hi - lo - tile * BK
    n = tl.where(n < 0, 0, tl.where(n > BK, BK, n))
    return n - BK


def masked_by_position(s, lo, tile, shift, lim, CAUSAL: tl.constexpr):
    """Scores ``s`` [BLOCK_H, BK] of K tile ``tile`` with -inf where a row may not see the key:
    slot row r holds position lo + tile * BK + shift + r, a real one iff r >= -shift (``shift``
    from :func:`page_shift`; 0 when the page is copied unshifted). Every real row is a position
    before the split's end (page_shift puts them there), so without CAUSAL the mask is one per
    column; with CAUSAL the query row also sees only the positions before its ``lim``
    (row_limit), compared relative to the tile so that the per-element compare needs no
    per-column position. sm_scale > 0 keeps -inf the row max's floor."""
    offs_k = tl.arange(0, BK)
    if CAUSAL:
        keep = (offs_k >= -shift)[None, :] & \
            ((shift + offs_k)[None, :] < (lim - (lo + tile * BK))[:, None])
    else:
        keep = (offs_k >= -shift)[None, :]
    return tl.where(keep, s, float("-inf"))


def store_out(base, row_off, out, keep, rb, n_rows, BLOCK_H: tl.constexpr):
    """Store a bf16 output half at ``base + row_off[:, None] + column``: a whole row block
    unmasked, which the lowering turns into 16-byte stores of the accumulator tile
    (lowering/acc_store.py), a partial one masked."""
    if rb * BLOCK_H + BLOCK_H <= n_rows:
        tl.store(base + row_off[:, None] + tl.arange(0, D_HALF)[None, :], out)
    else:
        tl.store(base + row_off[:, None] + tl.arange(0, D_HALF)[None, :], out, mask=keep[:, None])


def store_half(half_base, o_row, out, keep, rb, n_rows, BLOCK_H: tl.constexpr,
               SPLIT: tl.constexpr):
    """Store the normalised output half ``out`` of the rows at offsets ``o_row`` from
    ``half_base`` (out_base, or out_base + D_HALF for the upper half): fp32 into the split's
    o_part (SPLIT), bf16 into out (one split); rows that do not exist store nothing."""
    if SPLIT:
        tl.store(half_base + o_row[:, None] + tl.arange(0, D_HALF)[None, :], out,
                 mask=keep[:, None])
    else:
        store_out(half_base, o_row, out.to(tl.bfloat16), keep, rb, n_rows, BLOCK_H)


def part_lse_of(l_i, ref):
    """A split's log-sum-exp in natural-log units (l_i sums exp2(score - ref)); -inf for a row that
    saw no position in the split, so the combine gives it weight 0."""
    return tl.where(l_i > 0, (tl.log2(l_i) + ref) * LN2, float("-inf"))


def store_lse(l_ptrs, l_i, ref, keep, SPLIT: tl.constexpr):
    """Store the rows' log-sum-exp at ``l_ptrs``: a split's part (-inf for a row that saw no
    position, SPLIT) or the whole request's (+inf for a row without a token)."""
    if SPLIT:
        tl.store(l_ptrs, part_lse_of(l_i, ref), mask=keep)
    else:
        tl.store(l_ptrs, lse_of(l_i, ref), mask=keep)
