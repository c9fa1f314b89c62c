"""The DeepSeek-V3.2 sparse MLA decode over an FP8 paged cache with the math split between the two
consumer warp groups by output half, so that the dequantizing producer gets 152 registers.

Why: the seesaw schedule (sparse_decode_seesaw_fp8.py) has both consumers compute scores and both
hold a [64, 256] fp32 accumulator plus S, P and the RoPE tail of q, so they need 216 registers
each and leave the producer 72: it can keep one [64, 256] FP8 piece (32 registers of bytes) in
flight, too few bytes per SM to cover the gather latency. Here one warp group does all the
softmax work and the other only a matrix product:

    producer (default, 4 warps, 152)      left (4 warps, 192 regs)        right (4 warps, 160)
    Q of the item ────────────► q ──────► q_l q_r q_t   (capacity 1, one item)
    per 64-token tile: FP8 bytes (both halves) loaded before the acquire, the next tile's
    indices one tile ahead; RoPE by cp.async, NoPE dequantized in registers
                     ────────► kv ─────► kv_l kv_r tkv valid                kv_r
                     (capacity 2)         S = Q·Kᵀ (512 + 64 dims), mask,
                                          online softmax (exp2, sm_scale)
                                          alpha P l ─────── prob ─────────► alpha P l
                                          O_l = O_l·alpha + P·V_L         O_r = O_r·alpha + P·V_R
                                          (P from registers)              (P from shared memory)
    epilogue                              out[:, :256], lse, max_logits   out[:, 256:]

The left consumer holds S [64, 64] fp32 (32 registers), P as bf16 (16) and O_l (128), with all
of Q in shared memory (its RoPE tail too: no q tail in registers); the right holds only O_r.
``l`` (sum_exp) rides in the prob slot: the left's running row sum through tile k, so after an
item's last tile the right holds the final one and normalises its half itself.

Per tile the left releases its kv slot once its P·V_L retired (a wgmma wait right after the
issue). Keeping P·V_L in flight across the loop's back edge instead (releasing the slot after the
next tile's S was issued, as the seesaw's consumer0 does) makes ptxas serialize the wgmmas (C7512,
"insufficient register resources") at every worker budget tried ([192, 160] to [232, 200]),
although ptxas does allocate each partition within its setmaxnreg budget (the SASS of the kernel
as it is uses up to R183 in the left's code, above the launch's 168): P·V_L's A operand is P in
registers, which would have to stay pinned across the back edge. The right cannot overlap
anything either: each tile's rescale reads its accumulator. The tensor core still runs one warp
group's products while the other does its softmax or waits.

Deadlock-freedom (by hand; the verifier proves it): within tile g the order
  P: acquire/commit kv(g) → L: wait kv(g), acquire/commit prob(g), release kv(g)
  → R: wait kv(g), prob(g), release prob(g), kv(g)
is a schedule that respects every partition's program order, and every cross edge points forward
in it: commits of g reach waits of g in tile g; the producer's acquire of kv(g) needs kv(g-2)
released by both consumers (in tile g-2); the left's acquire of prob(g) needs the right's
release of prob(g-1). The q pipe is indexed by the item and
read by the left alone, which releases it after the item's last tile. Released as soon as the
item's last S is computed (`if k == NT - 1:` after the row max, before that tile's softmax,
P·V_L and the item's stores), which tle-dump verifies too, the kernel ran 0.990-0.996x this
placement on an H100 (docs/BENCHMARKS.md, "Levers measured").

Q: gathered by cp.async (rows past the real heads as zeros), or with the constexpr QTMA as three
TMA boxes ([64, 256] twice and [64, 64]) through descriptors over q viewed as rows [T * h_q, 576]
(the launcher's ``q_tma_reason`` says when q allows them): one thread issues them, where the
gather costs each producer thread 36 copies and an arrive. Rows past the real heads are then the
next token's rows (or zeros past q's end); no real row reads another's scores and their outputs
are not stored.

Shared memory: q 73,728 B (q_l, q_r 32 KiB each, q_t 8 KiB); kv 2 x 73,792 B (kv_l, kv_r
32 KiB each, tkv 8 KiB, valid 64 B); prob 8,704 B (P 8 KiB, alpha and l 256 B each);
230,016 B of Hopper's 232,448, the rest for the mbarriers.

Registers: [192, 160] for the workers, so the producer gets 3 x 168 - 192 - 160 = 152: it loads
a whole tile's FP8 bytes (both halves, 64 registers) and its four scales before the acquire,
and the next tile's indices while it waits (clamped to the item's last tile, so the load stays
inside the row).

Softmax: the plain online softmax (the reference max is the running row max, rescale factors
exp2(m_old - m_new)), no lazy rescale; ``tle.gpu.scale_rows`` still skips a warp's multiplies
when its rows' maxima did not move (the factors are then exactly 1).

Everything else is sparse_decode_seesaw_fp8's: its arguments, its DEFAULT_CONFIG form, the byte
layout of a cache token and the helpers reading it (``token_bytes``, ``fp8_half``,
``dequantized``), the persistent item loop (ROUNDS items per program, a short last round
recomputing the last item, pipes indexed ``r * NT + k``: read specialised to TOPK), rows past
n_heads masked (q loaded as 0, nothing stored), a row with no valid index giving out 0, lse +inf
and max_logits -inf. Launch: tle_kernels/sparse_decode_split_fp8_launch.py. With attn_sink:
sparse_decode_split_fp8_sink.py, this producer and right with a left whose published row sum
(and its own denominator) carries the sink's term.
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_decode_seesaw_fp8 import ROPE_BYTE, dequantized, fp8_half, token_bytes
from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LN2, LOG2E, head0_of, head_index,
                                head_rows, index_valid, lse_of, normalized, shift_of, token_of)


@tle.jit(num_warps=4)
def sparse_decode_split_fp8(q_ptr, q_desc, q_tail_desc, kv8_ptr, kv32_ptr, kv16_ptr, idx_ptr,
                            out_ptr, lse_ptr, max_logits_ptr, stride_q_s, stride_q_h, q_div,
                            stride_blk, page, stride_idx_s, stride_o_s, stride_o_h, stride_l_s,
                            n_tokens, sm_scale, n_items, n_hb, ROUNDS, n_heads,
                            TOPK: tl.constexpr, BLOCK_H: tl.constexpr, QTMA: tl.constexpr):
    NT = TOPK // BK                        # K tiles per item

    q, kv, prob = split_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(split_fp8_producer, (q, kv, q_ptr, q_desc, q_tail_desc, stride_q_s, stride_q_h, q_div,
                               kv8_ptr, kv32_ptr, kv16_ptr, stride_blk, page, idx_ptr,
                               stride_idx_s, n_tokens, n_items, n_hb, n_heads, ROUNDS, NT,
                               BLOCK_H, QTMA)),
         (left, (q, kv, prob, out_ptr, stride_o_s, stride_o_h, lse_ptr, max_logits_ptr,
                 stride_l_s, sm_scale, n_items, n_hb, n_heads, ROUNDS, NT, BLOCK_H)),
         (right, (kv, prob, out_ptr, stride_o_s, stride_o_h, n_items, n_hb, n_heads, ROUNDS, NT,
                  BLOCK_H))],
        [4, 4],
        [192, 160])


def split_pipes(BLOCK_H: tl.constexpr):
    """The kernel's pipes (q: the item's Q, one slot; kv: two slots of a 64-token tile, bf16,
    read by both consumers, the right only kv_r; prob: the left's alpha, P and row sum for the
    right), shared by the sink and balanced variants, whose producer and right read them."""
    q = tle.pipe(capacity=1,
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_t=tle.gpu.alloc([1, BLOCK_H, D_TAIL], tl.bfloat16))
    kv = tle.pipe(capacity=2, readers=("left", "right"),
                  kv_l=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  kv_r=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  tkv=tle.gpu.alloc([2, BK, D_TAIL], tl.bfloat16),
                  valid=tle.gpu.alloc([2, BK], tl.int8))
    prob = tle.pipe(capacity=1,                                              # left → right
                    alpha=tle.gpu.alloc([1, BLOCK_H], tl.float32),
                    probs=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                    sum_exp=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    return q, kv, prob


def item_of(r):
    """This program's work item of round ``r`` (past the last item, the last item again: its
    outputs are written twice with the same values)."""
    return r * tl.num_programs(0) + tl.program_id(0)


def split_fp8_producer(q, kv, q_ptr, q_desc, q_tail_desc, stride_q_s, stride_q_h, q_div, kv8_ptr,
                       kv32_ptr, kv16_ptr, stride_blk, page, idx_ptr, stride_idx_s, n_tokens,
                       n_items, n_hb, n_heads, ROUNDS, NT, BLOCK_H: tl.constexpr,
                       QTMA: tl.constexpr):
    """Per item: Q (all 576 dims of q row token // q_div, rows past the real heads as zeros: a
    tail split's q_div pieces of one token, index rows token * q_div + k, share its q row; with
    QTMA three TMA boxes, whose rows past the real heads are other rows of q), then
    each 64-token tile whole: its FP8 bytes and scales loaded before the acquire, the RoPE
    values gathered by cp.async right after it, the two NoPE halves dequantized and stored, the
    validity mask."""
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    qw = q.writer()
    kw = kv.writer()
    for r in range(ROUNDS):
        item = item_of(r)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        q_rows = (q_ptr + (pid_s // q_div) * stride_q_s
                  + head_index(h0, n_heads, BLOCK_H)[:, None] * stride_q_h)
        idx_row = idx_ptr + pid_s * stride_idx_s
        real = head_rows(h0, n_heads, BLOCK_H)[:, None]
        t_next = tl.load(idx_row + offs_k)  # tile 0's indices
        slot = qw.acquire(r)
        if QTMA:
            # boxes [64, 256], [64, 256], [64, 64] of q viewed as rows [T / q_div * h_q, 576]
            # (the launcher's q_tma_reason: its rows flatten so): the block's heads are
            # consecutive rows there; rows past the last head are the next token's (or zeros
            # past q's end), whose scores no real row reads and whose outputs are not stored.
            # The copies run while the producer goes on to the first tile's bytes.
            row0 = ((pid_s // q_div) * n_heads + h0).to(tl.int32)
            tle.gpu.tma_load(slot.q_l, q_desc, [row0, 0])
            tle.gpu.tma_load(slot.q_r, q_desc, [row0, D_HALF])
            tle.gpu.tma_load(slot.q_t, q_tail_desc, [row0, D_MAIN])
        else:
            tl.store(tle.gpu.local_ptr(slot.q_l),
                     tl.load(q_rows + offs_d[None, :], mask=real, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.q_r),
                     tl.load(q_rows + D_HALF + offs_d[None, :], mask=real, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.q_t),
                     tl.load(q_rows + D_MAIN + offs_t[None, :], mask=real, other=0.0))
        qw.commit(r)
        for k in range(NT):
            g = r * NT + k
            t = t_next
            valid = index_valid(t, n_tokens)
            off = token_bytes(t, valid, stride_blk, page)
            # the whole tile's bytes in flight during the wait for a free slot
            raw_l, lo_l, hi_l = fp8_half(kv8_ptr, kv32_ptr, off, valid, 0)
            raw_r, lo_r, hi_r = fp8_half(kv8_ptr, kv32_ptr, off, valid, 1)
            # the next tile's indices, one tile ahead (the last tile loads its own again)
            t_next = tl.load(idx_row + tl.minimum(k + 1, NT - 1) * BK + offs_k)
            slot = kw.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.tkv),
                     tl.load(kv16_ptr + ((off + ROPE_BYTE) // 2)[:, None] + offs_t[None, :],
                             mask=valid[:, None], other=0.0))
            tl.store(tle.gpu.local_ptr(slot.kv_l), dequantized(raw_l, lo_l, hi_l))
            tl.store(tle.gpu.local_ptr(slot.kv_r), dequantized(raw_r, lo_r, hi_r))
            tl.store(tle.gpu.local_ptr(slot.valid), valid.to(tl.int8))
            kw.commit(g)


def tile_scores(qres, kres):
    """S = Q·K^T of one 64-token tile over all 576 dims (the q slot's three fields against the
    kv slot's), -inf where the tile's index is invalid (sm_scale > 0 keeps the max): the
    wgmmas read both operands from their slots (shared by the sink and balanced variants)."""
    s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
               tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_l))))
    s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
               tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_r))), s)
    s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_t)),
               tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.tkv))), s)
    valid = tl.load(tle.gpu.local_ptr(kres.slot.valid)) != 0
    return tl.where(valid[None, :], s, float("-inf"))


def tile_probs(s, m_i, m_new, l_i, qk_scale):
    """One tile of the online softmax (base 2) from its scores ``s`` and the new running row max
    ``m_new`` (log2 units): ``(alpha, p16, l_i)``, the rescale of what came before, the tile's
    probabilities in bf16 and the running row sum. While every index so far is invalid the max
    is -inf and the exponents are taken against 0 (``shift_of``), so alpha and p are 0, not NaN."""
    m_use = shift_of(m_new)
    alpha = tl.exp2(m_i - m_use)
    p = tl.exp2(s * qk_scale - m_use[:, None])
    return alpha, p.to(tl.bfloat16), l_i * alpha + tl.sum(p, 1)


def publish_probs(pw, g, alpha, p16, sum_exp):
    """The left's prob slot ``g`` for the right: alpha, P and the row sum it normalises with."""
    pslot = pw.acquire(g)
    tl.store(tle.gpu.local_ptr(pslot.alpha), alpha)
    tl.store(tle.gpu.local_ptr(pslot.probs), p16)
    tl.store(tle.gpu.local_ptr(pslot.sum_exp), sum_exp)
    pw.commit(g)


def left(q, kv, prob, out_ptr, stride_o_s, stride_o_h, lse_ptr, ml_ptr, stride_l_s, sm_scale,
         n_items, n_hb, n_heads, ROUNDS, NT, BLOCK_H: tl.constexpr):
    """Scores over all 576 dims, the online softmax, P (with alpha and the running row sum)
    handed to the right, and O_l = O_l·alpha + P·V_L; stores out[:, :256], lse, max_logits."""
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader()
    kr = kv.reader("left")
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
        for k in range(NT):
            g = r * NT + k
            kres = kr.wait(g)
            s = tile_scores(qres, kres)

            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
            alpha, p16, l_i = tile_probs(s, m_i, m_new, l_i, qk_scale)
            m_i = m_new

            # published before the left's own P·V_L, so the right's P·V_R overlaps it
            publish_probs(pw, g, alpha, p16, l_i)

            acc = tle.gpu.scale_rows(acc, alpha)
            acc = tl.dot(p16, tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), acc)
            kr.release(g)  # after P·V_L retired (the module docstring says why here)
        # the item's last S and P·V_L are done: the producer may load the next Q (the module
        # docstring says why not sooner)
        qr.release(r)

        # A row with no valid index has l_i == 0: out 0, lse +inf, max_logits -inf.
        out = normalized(acc, l_i)
        if h0 + BLOCK_H <= n_heads:  # a whole block of real heads: unmasked (16-byte) stores
            tl.store(out_ptr + pid_s * stride_o_s + (h0 + offs_h)[:, None] * stride_o_h
                     + offs_d[None, :], out)
            tl.store(lse_ptr + pid_s * stride_l_s + h0 + offs_h, lse_of(l_i, m_i))
            tl.store(ml_ptr + pid_s * stride_l_s + h0 + offs_h, m_i * LN2)
        else:  # the last block of an h_q % BLOCK_H != 0: its rows past h_q store nothing
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h
                     + offs_d[None, :], out, mask=real[:, None])
            tl.store(lse_ptr + pid_s * stride_l_s + heads, lse_of(l_i, m_i), mask=real)
            tl.store(ml_ptr + pid_s * stride_l_s + heads, m_i * LN2, mask=real)


def right(kv, prob, out_ptr, stride_o_s, stride_o_h, n_items, n_hb, n_heads, ROUNDS, NT,
          BLOCK_H: tl.constexpr):
    """O_r = O_r·alpha + P·V_R with the left's P read from the prob slot; stores out[:, 256:]
    normalised by the left's final row sum."""
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    kr = kv.reader("right", fields=("kv_r",))
    pr = prob.reader()
    for r in range(ROUNDS):
        item = item_of(r)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        l_i = tl.zeros([BLOCK_H], tl.float32)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)  # O[:, 256:], unnormalised
        for k in range(NT):
            g = r * NT + k
            kres = kr.wait(g)
            pres = pr.wait(g)
            alpha = tl.load(tle.gpu.local_ptr(pres.slot.alpha))
            l_i = tl.load(tle.gpu.local_ptr(pres.slot.sum_exp))  # the left's sum through tile k
            acc = tle.gpu.scale_rows(acc, alpha)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.probs)),
                         tl.load(tle.gpu.local_ptr(kres.slot.kv_r)), acc)
            pr.release(g)
            kr.release(g)

        out = normalized(acc, l_i)
        if h0 + BLOCK_H <= n_heads:
            tl.store(out_ptr + pid_s * stride_o_s + (h0 + offs_h)[:, None] * stride_o_h + D_HALF
                     + offs_d[None, :], out)
        else:
            real = head_rows(h0, n_heads, BLOCK_H)
            heads = head_index(h0, n_heads, BLOCK_H)
            tl.store(out_ptr + pid_s * stride_o_s + heads[:, None] * stride_o_h + D_HALF
                     + offs_d[None, :], out, mask=real[:, None])


DEFAULT_CONFIG = {
    # sparse_decode_seesaw_fp8's arguments: q [T, h_q, 576] bf16 (T = b * s_q query rows); the
    # cache [num_blocks, page, 1, 656] bytes passed three times, viewed as fp8 / fp32 / bf16;
    # indices [T, topk] int32; out [T, h_q, 512] bf16 (or fp32: the stores take out's dtype, as
    # the extra-cache path's partial outputs need, tle_kernels/sparse_decode_extra.py); lse /
    # max_logits [T, h_q] fp32; last dims contiguous. stride_blk in bytes. n_heads = h_q (the
    # last head block's rows past it masked).
    "signature": {
        "q_ptr": "*bf16", "q_desc": "tensordesc<bf16[64, 256]>",
        "q_tail_desc": "tensordesc<bf16[64, 64]>", "kv8_ptr": "*fp8e4nv", "kv32_ptr": "*fp32",
        "kv16_ptr": "*bf16",
        "idx_ptr": "*i32", "out_ptr": "*bf16", "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "q_div": "i32", "stride_blk": "i64",
        "page": "i32",
        "stride_idx_s": "i32", "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "n_tokens": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32",
        "ROUNDS": "i32", "n_heads": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr", "QTMA": "constexpr",
    },
    # TOPK must be a multiple of BK = 64; QTMA: Q copied by TMA boxes (q_desc, q_tail_desc: q
    # viewed as rows [T * h_q, 576]), else gathered (the descriptors unused)
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64, "QTMA": 0},
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),
}
