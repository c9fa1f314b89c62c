"""The split FP8 sparse MLA decode (sparse_decode_split_fp8.py) fed by two dequantizing producers,
each with its own tile latency chain.

Why: in the split kernel one producer loads a tile's FP8 bytes, waits for a slot, dequantizes and
stores; its global load latency sets the pace (per 64-token tile it takes about 3.4 us while the
two consumers need about 2.4 us). Keeping the next tile's bytes in flight inside that one
producer needs a loop-carried FP8 register tile, which LLVM holds as one 32-bit register per byte
and ptxas spills. Two producers give two independent chains instead: while one waits on its
loads, the other dequantizes and stores.

    producer A (default, 4 warps)   producer B (4 warps)   left (4 warps)    right (4 warps)
    Q of the item ──────────────────────────────────────► q (capacity 1)
    even tiles 0, 2, 4, ...  ─► kv_even (capacity 1) ───► left, right (kv_r)
                                odd tiles 1, 3, ... ─► kv_odd (capacity 1) ─► left, right (kv_r)
                                                         alpha P l ── prob ──► alpha P l

The consumers are the split kernel's left and right, walking the tiles in pairs (the even tile,
then the odd one); the tile math is the same (``left_step``, ``right_tile``), and the prob pipe
(capacity 1) is indexed by the tile: 2 * pair and 2 * pair + 1. Every item has an even number of
tiles, so TOPK must be a multiple of 2 * BK = 128 (the launcher says so for other topk).

Each producer does what the split kernel's producer does for its own tiles: the tile's FP8 bytes
(both halves) and scales loaded before its acquire, the next own tile's indices (two tiles on,
clamped to the item's last own tile) loaded one own tile ahead, the RoPE values gathered by
cp.async right after the acquire, the NoPE halves dequantized and stored, the validity mask.

Deadlock-freedom (by hand; the verifier proves it): within pair g the order
  A: acquire/commit kv_even(g) → L: wait kv_even(g), acquire/commit prob(2g), release kv_even(g)
  → R: wait kv_even(g), prob(2g), release both
  → B: acquire/commit kv_odd(g) → L: same for kv_odd(g), prob(2g + 1) → R: same
respects every partition's program order and every cross edge points forward: a producer's
acquire of its pipe's slot for pair g needs the release of pair g - 1 by both consumers; the
left's acquire of prob(i) the right's release of prob(i - 1); A's acquire of q(r) the left's
release of q(r - 1), after the left's last tile of item r - 1.

Shared memory: the two capacity-1 kv pipes hold what the split kernel's capacity-2 pipe holds
(2 x 73,792 B); q and prob as there: 230,016 B.

Registers: four warp groups launch at 65,536 / 512 = 128 per thread; the workers ask for left
192, right 160 and producer B 80, which leaves producer A 4 x 128 - 432 = 80 (regs.py). A whole
tile's FP8 bytes are 64 registers per thread of a producer. This does not compile yet: ptxas
allocates the code of every partition under the launch's .maxnreg (128 here; setmaxnreg only
moves registers at run time), and the left's P·V_L wgmma, a [64, 256] fp32 accumulator with P
in registers, needs 158 ("Insufficient registers (128)"). The split kernel's three warp groups
compile under 168. tests/test_sparse_decode_split2_fp8.py holds this as a strict xfail.

Arguments, DEFAULT_CONFIG form, persistent item loop (``item_of``), masking of the rows past
n_heads and the rows with no valid index are the split kernel's. Launch:
tle_kernels/sparse_decode_split2_fp8_launch.py.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_decode_seesaw_fp8 import ROPE_BYTE, dequantized, fp8_half, token_bytes
from .sparse_decode_split_fp8 import item_of
from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LN2, LOG2E, head0_of, head_index,
                                head_rows, index_valid, lse_of, normalized, shift_of, token_of)


@tle.jit(num_warps=4)
def sparse_decode_split2_fp8(q_ptr, kv8_ptr, kv32_ptr, kv16_ptr, idx_ptr, out_ptr, lse_ptr,
                             max_logits_ptr, stride_q_s, stride_q_h, stride_blk, page,
                             stride_idx_s, stride_o_s, stride_o_h, stride_l_s, n_tokens,
                             sm_scale, n_items, n_hb, ROUNDS, n_heads,
                             TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = TOPK // (2 * BK)                  # tile pairs per item (TOPK % 128 == 0)

    q = tle.pipe(capacity=1,
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_t=tle.gpu.alloc([1, BLOCK_H, D_TAIL], tl.bfloat16))
    # each producer's tiles: capacity 1, read by the left (all fields) and the right (kv_r)
    kv_even = tle.pipe(capacity=1, readers=("left", "right"),
                       kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                       kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                       tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16),
                       valid=tle.gpu.alloc([1, BK], tl.int8))
    kv_odd = tle.pipe(capacity=1, readers=("left", "right"),
                      kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                      kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                      tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16),
                      valid=tle.gpu.alloc([1, BK], tl.int8))
    prob = tle.pipe(capacity=1,                                              # left → right
                    alpha=tle.gpu.alloc([1, BLOCK_H], tl.float32),
                    probs=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                    sum_exp=tle.gpu.alloc([1, BLOCK_H], tl.float32))

    tle.gpu.warp_specialize(
        [(producer_even, (q, kv_even, q_ptr, stride_q_s, stride_q_h, kv8_ptr, kv32_ptr,
                          kv16_ptr, stride_blk, page, idx_ptr, stride_idx_s, n_tokens,
                          n_items, n_hb, n_heads, ROUNDS, NP, BLOCK_H)),
         (left, (q, kv_even, kv_odd, prob, out_ptr, stride_o_s, stride_o_h, lse_ptr,
                 max_logits_ptr, stride_l_s, sm_scale, n_items, n_hb, n_heads, ROUNDS, NP,
                 BLOCK_H)),
         (right, (kv_even, kv_odd, prob, out_ptr, stride_o_s, stride_o_h, n_items, n_hb,
                  n_heads, ROUNDS, NP, BLOCK_H)),
         (producer_odd, (kv_odd, kv8_ptr, kv32_ptr, kv16_ptr, stride_blk, page, idx_ptr,
                         stride_idx_s, n_tokens, n_items, n_hb, ROUNDS, NP))],
        [4, 4, 4],
        [192, 160, 80])


def tile_bytes(t, kv8_ptr, kv32_ptr, stride_blk, page, n_tokens):
    """The tile of indices ``t``: its validity, byte offsets, and both NoPE halves' FP8 bytes and
    scales (``fp8_half``), loaded into registers (masked for invalid indices)."""
    valid = index_valid(t, n_tokens)
    off = token_bytes(t, valid, stride_blk, page)
    raw_l, lo_l, hi_l = fp8_half(kv8_ptr, kv32_ptr, off, valid, 0)
    raw_r, lo_r, hi_r = fp8_half(kv8_ptr, kv32_ptr, off, valid, 1)
    return valid, off, raw_l, lo_l, hi_l, raw_r, lo_r, hi_r


def store_tile(kw, g, valid, off, raw_l, lo_l, hi_l, raw_r, lo_r, hi_r, kv16_ptr):
    """``tile_bytes``' tile into the pipe's slot ``g``: the RoPE values gathered by cp.async right
    after the acquire (they complete while the NoPE halves are dequantized and stored), then the
    validity mask."""
    offs_t = tl.arange(0, D_TAIL)
    slot = kw.acquire(g)
    tl.store(tle.gpu.local_ptr(slot.tkv),
             tl.load(kv16_ptr + ((off + ROPE_BYTE) // 2)[:, None] + offs_t[None, :],
                     mask=valid[:, None], other=0.0))
    tl.store(tle.gpu.local_ptr(slot.kv_l), dequantized(raw_l, lo_l, hi_l))
    tl.store(tle.gpu.local_ptr(slot.kv_r), dequantized(raw_r, lo_r, hi_r))
    tl.store(tle.gpu.local_ptr(slot.valid), valid.to(tl.int8))
    kw.commit(g)


def producer_even(q, kv_even, q_ptr, stride_q_s, stride_q_h, kv8_ptr, kv32_ptr, kv16_ptr,
                  stride_blk, page, idx_ptr, stride_idx_s, n_tokens, n_items, n_hb, n_heads,
                  ROUNDS, NP, BLOCK_H: tl.constexpr):
    """Producer A: per item Q (all 576 dims; rows past the real heads as zeros), then the even
    tiles 0, 2, 4, ... into kv_even."""
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    qw = q.writer()
    kw = kv_even.writer()
    for r in range(ROUNDS):
        item = item_of(r)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        q_rows = (q_ptr + pid_s * stride_q_s
                  + head_index(h0, n_heads, BLOCK_H)[:, None] * stride_q_h)
        idx_row = idx_ptr + pid_s * stride_idx_s
        real = head_rows(h0, n_heads, BLOCK_H)[:, None]
        t_next = tl.load(idx_row + offs_k)  # tile 0's indices
        slot = qw.acquire(r)
        tl.store(tle.gpu.local_ptr(slot.q_l),
                 tl.load(q_rows + offs_d[None, :], mask=real, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.q_r),
                 tl.load(q_rows + D_HALF + offs_d[None, :], mask=real, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.q_t),
                 tl.load(q_rows + D_MAIN + offs_t[None, :], mask=real, other=0.0))
        qw.commit(r)
        for p in range(NP):
            g = r * NP + p
            # the whole tile's bytes in flight during the wait for a free slot
            valid, off, raw_l, lo_l, hi_l, raw_r, lo_r, hi_r = tile_bytes(
                t_next, kv8_ptr, kv32_ptr, stride_blk, page, n_tokens)
            # tile 2p + 2's indices, one own tile ahead (the last pair loads its own again)
            t_next = tl.load(idx_row + (2 * tl.minimum(p + 1, NP - 1)) * BK + offs_k)
            store_tile(kw, g, valid, off, raw_l, lo_l, hi_l, raw_r, lo_r, hi_r,
                       kv16_ptr)


def producer_odd(kv_odd, kv8_ptr, kv32_ptr, kv16_ptr, stride_blk, page, idx_ptr, stride_idx_s,
                 n_tokens, n_items, n_hb, ROUNDS, NP):
    """Producer B: per item the odd tiles 1, 3, 5, ... into kv_odd."""
    offs_k = tl.arange(0, BK)
    kw = kv_odd.writer()
    for r in range(ROUNDS):
        item = item_of(r)
        item = tl.where(item < n_items, item, n_items - 1)
        idx_row = idx_ptr + token_of(item, n_hb) * stride_idx_s
        t_next = tl.load(idx_row + BK + offs_k)  # tile 1's indices
        for p in range(NP):
            g = r * NP + p
            valid, off, raw_l, lo_l, hi_l, raw_r, lo_r, hi_r = tile_bytes(
                t_next, kv8_ptr, kv32_ptr, stride_blk, page, n_tokens)
            # tile 2p + 3's indices, one own tile ahead (the last pair loads its own again)
            t_next = tl.load(idx_row + (2 * tl.minimum(p + 1, NP - 1) + 1) * BK + offs_k)
            store_tile(kw, g, valid, off, raw_l, lo_l, hi_l, raw_r, lo_r, hi_r,
                       kv16_ptr)


def left_step(s, kres, pw, i, m_i, l_i, acc, qk_scale):
    """The rest of the left's work on one tile (the split kernel's loop body) after its scores
    ``s`` = Q·Kᵀ: the mask, the online softmax step, P with alpha and the running row sum
    published as prob ``i``, then O_l = O_l·alpha + P·V_L (retired before the caller releases
    the tile). Returns the new (m_i, l_i, acc). (The scores' wgmmas stay in the caller: in a
    helper with pipe verbs each sub-expression gets its own temporary, and the lowering reads
    a wgmma's B operand from shared memory only as ``tl.trans(tl.load(...))`` written inline.)"""
    valid = tl.load(tle.gpu.local_ptr(kres.slot.valid)) != 0
    s = tl.where(valid[None, :], s, float("-inf"))  # sm_scale > 0 keeps the max

    m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
    m_use = shift_of(m_new)      # 0 while every index so far is invalid (no NaN)
    alpha = tl.exp2(m_i - m_use)
    p = tl.exp2(s * qk_scale - m_use[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    p16 = p.to(tl.bfloat16)

    # published before the left's own P·V_L, so the right's P·V_R overlaps it
    pslot = pw.acquire(i)
    tl.store(tle.gpu.local_ptr(pslot.alpha), alpha)
    tl.store(tle.gpu.local_ptr(pslot.probs), p16)
    tl.store(tle.gpu.local_ptr(pslot.sum_exp), l_i)
    pw.commit(i)

    acc = tle.gpu.scale_rows(acc, alpha)
    acc = tl.dot(p16, tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), acc)
    return m_new, l_i, acc


def left(q, kv_even, kv_odd, prob, out_ptr, stride_o_s, stride_o_h, lse_ptr, ml_ptr, stride_l_s,
         sm_scale, n_items, n_hb, n_heads, ROUNDS, NP, BLOCK_H: tl.constexpr):
    """The split kernel's left over tile pairs (the even tile from kv_even, then the odd one from
    kv_odd): scores, the online softmax, P handed to the right, O_l; stores out[:, :256], lse,
    max_logits."""
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader()
    er = kv_even.reader("left")
    orr = kv_odd.reader("left")
    pw = prob.writer()
    for r in range(ROUNDS):
        item = item_of(r)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        qres = qr.wait(r)
        m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)  # running row max (log2 units)
        l_i = tl.zeros([BLOCK_H], tl.float32)                 # row sum of exp2(s - m_i)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256], unnormalised
        for p in range(NP):
            g = r * NP + p
            even = er.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                       tl.trans(tl.load(tle.gpu.local_ptr(even.slot.kv_l))))
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                       tl.trans(tl.load(tle.gpu.local_ptr(even.slot.kv_r))), s)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_t)),
                       tl.trans(tl.load(tle.gpu.local_ptr(even.slot.tkv))), s)
            m_i, l_i, acc = left_step(s, even, pw, 2 * g, m_i, l_i, acc, qk_scale)
            er.release(g)  # after P·V_L retired
            odd = orr.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                       tl.trans(tl.load(tle.gpu.local_ptr(odd.slot.kv_l))))
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                       tl.trans(tl.load(tle.gpu.local_ptr(odd.slot.kv_r))), s)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_t)),
                       tl.trans(tl.load(tle.gpu.local_ptr(odd.slot.tkv))), s)
            m_i, l_i, acc = left_step(s, odd, pw, 2 * g + 1, m_i, l_i, acc, qk_scale)
            orr.release(g)
        qr.release(r)  # the item's last S is done: producer A may load the next Q

        # A row with no valid index has l_i == 0: out 0, lse +inf, max_logits -inf.
        out = normalized(acc, l_i)
        if h0 + BLOCK_H <= n_heads:  # a whole block of real heads: unmasked (16-byte) stores
            tl.store(out_ptr + pid_s * stride_o_s + (h0 + offs_h)[:, None] * stride_o_h
                     + offs_d[None, :], out.to(tl.bfloat16))
            tl.store(lse_ptr + pid_s * stride_l_s + h0 + offs_h, lse_of(l_i, m_i))
            tl.store(ml_ptr + pid_s * stride_l_s + h0 + offs_h, m_i * LN2)
        else:  # the last block of an h_q % BLOCK_H != 0: its rows past h_q store nothing
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h
                     + offs_d[None, :], out.to(tl.bfloat16), mask=real[:, None])
            tl.store(lse_ptr + pid_s * stride_l_s + heads, lse_of(l_i, m_i), mask=real)
            tl.store(ml_ptr + pid_s * stride_l_s + heads, m_i * LN2, mask=real)


def right_tile(kres, pr, i, acc):
    """The right's work on one tile: O_r = O_r·alpha + P·V_R with prob ``i``'s P, released
    after; returns (acc, the left's row sum through this tile)."""
    pres = pr.wait(i)
    alpha = tl.load(tle.gpu.local_ptr(pres.slot.alpha))
    l_i = tl.load(tle.gpu.local_ptr(pres.slot.sum_exp))
    acc = tle.gpu.scale_rows(acc, alpha)
    acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.probs)),
                 tl.load(tle.gpu.local_ptr(kres.slot.kv_r)), acc)
    pr.release(i)
    return acc, l_i


def right(kv_even, kv_odd, prob, out_ptr, stride_o_s, stride_o_h, n_items, n_hb, n_heads,
          ROUNDS, NP, BLOCK_H: tl.constexpr):
    """The split kernel's right over tile pairs: O_r from each tile's V_R and the left's P;
    stores out[:, 256:] normalised by the left's final row sum."""
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    er = kv_even.reader("right", fields=("kv_r",))
    orr = kv_odd.reader("right", fields=("kv_r",))
    pr = prob.reader()
    for r in range(ROUNDS):
        item = item_of(r)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        l_i = tl.zeros([BLOCK_H], tl.float32)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)  # O[:, 256:], unnormalised
        for p in range(NP):
            g = r * NP + p
            even = er.wait(g)
            acc, l_i = right_tile(even, pr, 2 * g, acc)
            er.release(g)
            odd = orr.wait(g)
            acc, l_i = right_tile(odd, pr, 2 * g + 1, acc)
            orr.release(g)

        out = normalized(acc, l_i)
        if h0 + BLOCK_H <= n_heads:
            tl.store(out_ptr + pid_s * stride_o_s + (h0 + offs_h)[:, None] * stride_o_h + D_HALF
                     + offs_d[None, :], out.to(tl.bfloat16))
        else:
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h + D_HALF
                     + offs_d[None, :], out.to(tl.bfloat16), mask=real[:, None])


DEFAULT_CONFIG = {
    # sparse_decode_seesaw_fp8's arguments: q [T, h_q, 576] bf16 (T = b * s_q query rows); the
    # cache [num_blocks, page, 1, 656] bytes passed three times, viewed as fp8 / fp32 / bf16;
    # indices [T, topk] int32; out [T, h_q, 512] bf16; lse / max_logits [T, h_q] fp32; last dims
    # contiguous. stride_blk in bytes. n_heads = h_q (the last head block's rows past it masked).
    "signature": {
        "q_ptr": "*bf16", "kv8_ptr": "*fp8e4nv", "kv32_ptr": "*fp32", "kv16_ptr": "*bf16",
        "idx_ptr": "*i32", "out_ptr": "*bf16", "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_blk": "i64", "page": "i32",
        "stride_idx_s": "i32", "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "n_tokens": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "ROUNDS": "i32", "n_heads": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of 2 * BK = 128
    "num_warps": 4,                  # producer A (default partition)
    "grid": ("programs",),
}
