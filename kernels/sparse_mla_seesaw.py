"""TLE-FlashMLA: SparseMLA prefill with FlashMLA's "seesaw" schedule, three warp groups.

One program per (query token, block of BLOCK_H=64 heads). K tiles of BK=64 indices go in pairs:
k0 = 2p and k1 = 2p+1. Each consumer computes QK for its own tile, the two swap row maxima so
both use the same new max, then each applies BOTH tiles' probabilities to its own output half:

    producer (default, 4 warps)   consumer0 (worker, 4 warps, 216)   consumer1 (worker, 4 warps,216)
    Q main dims ─────► q ───────► q_l q_r                            q_l q_r          (one_shot)
    gather tile 2p ──► kv0 ─────► kv_l kv_r tkv valid                kv_r             (view kv_r)
    gather tile 2p+1 ► kv1 ─────► kv_l                   (view kv_l) kv_l kv_r tkv valid
                                  S0 = Q·K0ᵀ                         S1 = Q·K1ᵀ
                                  rowmax(S0) ─► max0 ──────────────► m
                                  m ◄──────────────────────── max1 ◄ rowmax(S1)
                                  m_new = max(m_old, rowmax S0, rowmax S1)  (same in both)
                                  P0, rowsum(P0) ─► prob0 ─────────► sS, row_sum
                                  sS, row_sum ◄────────────── prob1 ◄ P1, rowsum(P1)
                                  O_l = O_l·a + P0·V0_l + P1·V1_l    O_r = O_r·a + P1·V1_r + P0·V0_r
    epilogue                      out[:, :256], lse, max_logits      out[:, 256:]
    (kv0, kv1, max0, max1, prob0, prob1: capacity 1; a = exp2(m_old - m_new))

Both consumers keep identical (m, l): they combine the same fp32 values in the same order.

Deadlock-freedom (by hand): each consumer commits its own max (and later its probabilities)
before it waits for the peer's, so within pair p the order
  P: kv0(p), kv1(p) → c0: wait kv0, commit max0 → c1: wait kv1, commit max1 → c0: max1 → c1: max0
  → c0: commit prob0 → c1: commit prob1 → c0: prob1, kv1, release kv0 → c1: prob0, kv0, release kv1
is a complete schedule respecting every partition's program order, and every cross edge points
forward in it (commit(p) → wait(p) inside pair p; release(p-1) → acquire(p) from the pair before).
The happens-before graph is therefore acyclic for every NP. A kv tile is released by the peer only
after its PV on the shared half, so the producer cannot refill it early; its owner releases it after
both of its PVs, so its own PV stays in flight (async wgmma) while it waits for the peer's P.

Shared memory (bf16 = 2 B): q 65,536 B (q_l + q_r); kv0 and kv1 each 32 KiB + 32 KiB + 8 KiB + 64 B
= 73,792 B; prob0 and prob1 each 8,192 + 256 = 8,448 B; max0 and max1 256 B each; total 230,528 B
(225.1 KiB) of Hopper's 227 KiB, 1,920 B left for mbarriers. Keeping q_tail in shared memory too
(as the TLE-Pipe kernel does) would make it 238,720 B: over the limit. FlashMLA fits by aliasing
sS0 with K0's dead RoPE tail, which a verified pipe cannot express; here each consumer instead keeps
q_tail [64,64] in registers (16 regs/thread, the A operand of a register-A wgmma for the tail dot).

Registers: FlashMLA gives each consumer warp group 216 registers per thread and its producer 72
(MISSION's "[216, 72]"). In `warp_specialize` the budget list covers the workers only, so the two
consumers (workers) ask for [216, 216] and the producer, the default partition, gets what is left
of the 64 Ki-register file: 65,536 / 128 threads = 512 per thread over the three warp groups, so
512 - 2*216 = 80 (the lowering may shrink it to FlashMLA's 72). A gather holds only indices,
pointers and masks, so that is enough.
"""

import triton.language as tl

import tle_compiler as tle

BK = tl.constexpr(64)        # topk indices (kv rows) per K tile; a pair covers 2*BK
D_HALF = tl.constexpr(256)   # half of the 512 main dims: consumer c owns output half c
D_MAIN = tl.constexpr(512)   # main dims of q/kv rows (also the V dims)
D_TAIL = tl.constexpr(64)    # RoPE tail dims: a row is D_MAIN + D_TAIL = 576 wide
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)


@tle.jit(num_warps=4)
def sparse_mla_seesaw(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                      stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s, stride_o_h,
                      stride_l_s, s_kv, sm_scale,
                      TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = TOPK // (2 * BK)                  # K-tile pairs (FlashMLA requires topk % 128 == 0 too)
    pid_s = tl.program_id(0).to(tl.int64)  # query token
    h0 = tl.program_id(1) * BLOCK_H        # first head of this program's block
    q_row = q_ptr + pid_s * stride_q_s + h0 * stride_q_h
    idx_row = idx_ptr + pid_s * stride_idx_s
    out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
    lse_row = lse_ptr + pid_s * stride_l_s + h0
    ml_row = max_logits_ptr + pid_s * stride_l_s + h0

    q = tle.pipe(capacity=1, one_shot=True, readers=("consumer0", "consumer1"),
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16))
    kv0 = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                   kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16),
                   valid=tle.gpu.alloc([1, BK], tl.int8))
    kv1 = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                   kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16),
                   valid=tle.gpu.alloc([1, BK], tl.int8))
    max0 = tle.pipe(capacity=1, m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer0 → 1
    max1 = tle.pipe(capacity=1, m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer1 → 0
    prob0 = tle.pipe(capacity=1,                                              # consumer0 → 1
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    prob1 = tle.pipe(capacity=1,                                              # consumer1 → 0
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))

    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv1, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row, s_kv, NP,
                     BLOCK_H)),
         (consumer0, (q, kv0, kv1, max0, max1, prob0, prob1, q_row, stride_q_h, out_row,
                      stride_o_h, lse_row, ml_row, sm_scale, NP, BLOCK_H)),
         (consumer1, (q, kv0, kv1, max0, max1, prob0, prob1, q_row, stride_q_h, out_row,
                      stride_o_h, sm_scale, NP, BLOCK_H))],
        [4, 4],
        [216, 216])


def producer(q, kv0, kv1, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row, s_kv, NP,
             BLOCK_H: tl.constexpr):
    offs_h = tl.arange(0, BLOCK_H)
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)

    qw = q.writer()
    slot = qw.acquire(0)
    q_rows = q_row + offs_h[:, None] * stride_q_h
    tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_rows + offs_d[None, :]))
    tl.store(tle.gpu.local_ptr(slot.q_r), tl.load(q_rows + D_HALF + offs_d[None, :]))
    qw.commit(0)

    w0 = kv0.writer()
    w1 = kv1.writer()
    for p in range(NP):
        # Both tiles' indices first: their latency hides behind the wait for kv0 to be free.
        t0 = tl.load(idx_row + (2 * p) * BK + offs_k)
        t1 = tl.load(idx_row + (2 * p + 1) * BK + offs_k)
        valid0 = (t0 >= 0) & (t0 < s_kv)
        valid1 = (t1 >= 0) & (t1 < s_kv)
        # An invalid index is never dereferenced: clamp it to row 0 and mask its load (zero-fill).
        rows0 = kv_ptr + tl.where(valid0, t0, 0).to(tl.int64)[:, None] * stride_kv_s
        rows1 = kv_ptr + tl.where(valid1, t1, 0).to(tl.int64)[:, None] * stride_kv_s

        # Tile k0 = 2p → kv0 (consumer0 computes its QK; consumer1 uses its V right half).
        slot = w0.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_l),
                 tl.load(rows0 + offs_d[None, :], mask=valid0[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.kv_r),
                 tl.load(rows0 + D_HALF + offs_d[None, :], mask=valid0[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.tkv),
                 tl.load(rows0 + D_MAIN + offs_t[None, :], mask=valid0[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.valid), valid0.to(tl.int8))
        w0.commit(p)

        # Tile k1 = 2p+1 → kv1 (consumer1 computes its QK; consumer0 uses its V left half).
        slot = w1.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_l),
                 tl.load(rows1 + offs_d[None, :], mask=valid1[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.kv_r),
                 tl.load(rows1 + D_HALF + offs_d[None, :], mask=valid1[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.tkv),
                 tl.load(rows1 + D_MAIN + offs_t[None, :], mask=valid1[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.valid), valid1.to(tl.int8))
        w1.commit(p)


def consumer0(q, kv0, kv1, max0, max1, prob0, prob1, q_row, stride_q_h, out_row, stride_o_h,
              lse_row, ml_row, sm_scale, NP, BLOCK_H: tl.constexpr):
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    # The Q tail lives in registers (the shared-memory budget has no room for it; see above).
    q_tail = tl.load(q_row + offs_h[:, None] * stride_q_h + D_MAIN + offs_t[None, :])

    qr = q.reader("consumer0")
    own = kv0.reader("consumer0")                     # tile k0: all of it
    peer = kv1.reader("consumer0", fields=("kv_l",))  # tile k1: only V1's left half
    mw = max0.writer()
    mr = max1.reader()
    pw = prob0.writer()
    pr = prob1.reader()
    qres = qr.wait(0)

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)  # running row max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                 # running row sum of exp2
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256], unnormalised

    for p in range(NP):
        k0 = own.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.kv_l))))
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.kv_r))), s)
        s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.tkv))), s)
        valid = tl.load(tle.gpu.local_ptr(k0.slot.valid)) != 0
        s = tl.where(valid[None, :], s * qk_scale, float("-inf"))

        # Seesaw step 1: swap row maxima (commit ours before waiting for the peer's).
        m_k0 = tl.max(s, 1)
        mslot = mw.acquire(p)
        tl.store(tle.gpu.local_ptr(mslot.m), m_k0)
        mw.commit(p)
        mres = mr.wait(p)
        m_k1 = tl.load(tle.gpu.local_ptr(mres.slot.m))
        mr.release(p)

        m_new = tl.maximum(m_i, tl.maximum(m_k0, m_k1))
        # All indices invalid so far: shift by 0 so alpha and P are 0, not exp2(-inf - -inf) = NaN.
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_use)
        p0 = tl.exp2(s - m_use[:, None])
        sum0 = tl.sum(p0, 1)
        p0 = p0.to(tl.bfloat16)

        # Step 2: publish P0 (consumer1 applies it to V0's right half), then our own PV.
        pslot = pw.acquire(p)
        tl.store(tle.gpu.local_ptr(pslot.sS), p0)
        tl.store(tle.gpu.local_ptr(pslot.row_sum), sum0)
        pw.commit(p)
        acc = tl.dot(p0, tl.load(tle.gpu.local_ptr(k0.slot.kv_l)), acc * alpha[:, None])

        # Step 3: the peer's probabilities on V1's left half. kv0 is released only after this:
        # P0·V0_l stays in flight (async wgmma) while we wait for the peer's P1, and both PVs are
        # retired by one wgmma wait at pr.release.
        pres = pr.wait(p)
        k1 = peer.wait(p)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                     tl.load(tle.gpu.local_ptr(k1.slot.kv_l)), acc)
        sum1 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
        pr.release(p)
        peer.release(p)
        own.release(p)

        l_i = l_i * alpha + (sum0 + sum1)
        m_i = m_new

    # A row with no valid index has l_i == 0: out 0, max_logits -inf (m_i stayed -inf), lse +inf.
    inv_l = tl.where(l_i > 0, 1.0 / l_i, 0.0)
    out = acc * inv_l[:, None]
    tl.store(out_row + offs_h[:, None] * stride_o_h + offs_d[None, :], out.to(tl.bfloat16))
    tl.store(ml_row + offs_h, m_i * LN2)  # natural-log units: max(score * sm_scale)
    tl.store(lse_row + offs_h, tl.where(l_i > 0, (tl.log2(l_i) + m_i) * LN2, float("inf")))


def consumer1(q, kv0, kv1, max0, max1, prob0, prob1, q_row, stride_q_h, out_row, stride_o_h,
              sm_scale, NP, BLOCK_H: tl.constexpr):
    qk_scale = sm_scale * LOG2E
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    q_tail = tl.load(q_row + offs_h[:, None] * stride_q_h + D_MAIN + offs_t[None, :])

    qr = q.reader("consumer1")
    own = kv1.reader("consumer1")                     # tile k1: all of it
    peer = kv0.reader("consumer1", fields=("kv_r",))  # tile k0: only V0's right half
    mw = max1.writer()
    mr = max0.reader()
    pw = prob1.writer()
    pr = prob0.reader()
    qres = qr.wait(0)

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, 256:], unnormalised

    for p in range(NP):
        k1 = own.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.kv_l))))
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.kv_r))), s)
        s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.tkv))), s)
        valid = tl.load(tle.gpu.local_ptr(k1.slot.valid)) != 0
        s = tl.where(valid[None, :], s * qk_scale, float("-inf"))

        m_k1 = tl.max(s, 1)
        mslot = mw.acquire(p)
        tl.store(tle.gpu.local_ptr(mslot.m), m_k1)
        mw.commit(p)
        mres = mr.wait(p)
        m_k0 = tl.load(tle.gpu.local_ptr(mres.slot.m))
        mr.release(p)

        m_new = tl.maximum(m_i, tl.maximum(m_k0, m_k1))
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_use)
        p1 = tl.exp2(s - m_use[:, None])
        sum1 = tl.sum(p1, 1)
        p1 = p1.to(tl.bfloat16)

        pslot = pw.acquire(p)
        tl.store(tle.gpu.local_ptr(pslot.sS), p1)
        tl.store(tle.gpu.local_ptr(pslot.row_sum), sum1)
        pw.commit(p)
        acc = tl.dot(p1, tl.load(tle.gpu.local_ptr(k1.slot.kv_r)), acc * alpha[:, None])

        pres = pr.wait(p)
        k0 = peer.wait(p)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                     tl.load(tle.gpu.local_ptr(k0.slot.kv_r)), acc)
        sum0 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
        pr.release(p)
        peer.release(p)
        own.release(p)  # after both PVs (see consumer0)

        l_i = l_i * alpha + (sum0 + sum1)  # same operands, same order as consumer0
        m_i = m_new

    inv_l = tl.where(l_i > 0, 1.0 / l_i, 0.0)
    out = acc * inv_l[:, None]
    tl.store(out_row + offs_h[:, None] * stride_o_h + D_HALF + offs_d[None, :],
             out.to(tl.bfloat16))


DEFAULT_CONFIG = {
    # q [s_q, h_q, 576] bf16, kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32; last dims contiguous.
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of 2*BK = 128
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("s_q", "h_q // BLOCK_H"),
}
