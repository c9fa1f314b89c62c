"""The per-CTA TLE-FlashMLA seesaw: tle_kernels/sparse_mla_seesaw.py without the persistent item
loop: one program per (query token, head block), launched on the grid (s_q, h_q // 64) with
the program renumbered so that both head blocks of a token run in the same wave, and Q through a
one-shot pipe. The pair loop is the bundled kernel's, line for line (its docstring has the design
notes: schedule, fill order, deadlock-freedom, shared memory, registers). Kept as the A/B baseline
of the persistent kernel and for benchmarks/seesaw_timeline.py, whose stamps assume one CTA per
item. Shared memory: 230,528 B, as the bundled kernel.
"""

import triton.language as tl

import tle_compiler as tle

BK = tl.constexpr(64)        # topk indices (kv rows) per K tile; a pair covers 2*BK
D_HALF = tl.constexpr(256)   # half of the 512 main dims: consumer c owns output half c
D_MAIN = tl.constexpr(512)   # main dims of q/kv rows (also the V dims)
D_TAIL = tl.constexpr(64)    # RoPE tail dims: a row is D_MAIN + D_TAIL = 576 wide
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                      stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s, stride_o_h,
                      stride_l_s, s_kv, sm_scale,
                      TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = TOPK // (2 * BK)                  # K-tile pairs (FlashMLA requires topk % 128 == 0 too)
    n_hb = tl.num_programs(1)
    lin = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)  # launch order
    pid_s = (lin // n_hb).to(tl.int64)    # query token
    h0 = (lin % n_hb) * BLOCK_H            # first head of this program's block
    q_row = q_ptr + pid_s * stride_q_s + h0 * stride_q_h
    idx_row = idx_ptr + pid_s * stride_idx_s
    out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
    lse_row = lse_ptr + pid_s * stride_l_s + h0
    ml_row = max_logits_ptr + pid_s * stride_l_s + h0

    q = tle.pipe(capacity=1, one_shot=True, readers=("consumer0", "consumer1"),
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16))
    # Tile k0 = 2p, split by last reader: consumer0 alone reads K0_L (QK, then V0_L), the tail and
    # the mask; K0_R is read by consumer0's QK and by consumer1's P0·V0_R.
    kv0 = tle.pipe(capacity=1,
                   kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16),
                   valid=tle.gpu.alloc([1, BK], tl.int8))
    kv0r = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                    kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16))
    # Tile k1 = 2p+1, mirrored: consumer1 alone reads K1_R, the tail and the mask; K1_L is read by
    # consumer1's QK and by consumer0's P1·V1_L.
    kv1 = tle.pipe(capacity=1,
                   kv_r=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16),
                   tkv=tle.gpu.alloc([1, BK, D_TAIL], tl.bfloat16),
                   valid=tle.gpu.alloc([1, BK], tl.int8))
    kv1l = tle.pipe(capacity=1, readers=("consumer0", "consumer1"),
                    kv_l=tle.gpu.alloc([1, BK, D_HALF], tl.bfloat16))
    max0 = tle.pipe(capacity=1, m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer0 → 1
    max1 = tle.pipe(capacity=1, m=tle.gpu.alloc([1, BLOCK_H], tl.float32))   # consumer1 → 0
    prob0 = tle.pipe(capacity=1,                                              # consumer0 → 1
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    prob1 = tle.pipe(capacity=1,                                              # consumer1 → 0
                     sS=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     row_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))

    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row,
                     s_kv, NP, BLOCK_H)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_row, stride_q_h, out_row,
                      stride_o_h, lse_row, ml_row, sm_scale, NP, BLOCK_H)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_row, stride_q_h, out_row,
                      stride_o_h, sm_scale, NP, BLOCK_H))],
        [4, 4],
        [216, 216])


def producer(q, kv0, kv0r, kv1, kv1l, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row, s_kv, NP,
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
    w0r = kv0r.writer()
    w1 = kv1.writer()
    w1l = kv1l.writer()
    for p in range(NP):
        # Both tiles' indices first: their latency hides behind the wait for kv0 to be free.
        t0 = tl.load(idx_row + (2 * p) * BK + offs_k)
        t1 = tl.load(idx_row + (2 * p + 1) * BK + offs_k)
        valid0 = (t0 >= 0) & (t0 < s_kv)
        valid1 = (t1 >= 0) & (t1 < s_kv)
        # An invalid index is never dereferenced: clamp it to row 0 and mask its load (zero-fill).
        rows0 = kv_ptr + tl.where(valid0, t0, 0).to(tl.int64)[:, None] * stride_kv_s
        rows1 = kv_ptr + tl.where(valid1, t1, 0).to(tl.int64)[:, None] * stride_kv_s

        # Each consumer's first piece, then the second ones: K0_L + tail (consumer0's first,
        # freed mid-pair by consumer0), K1_R + tail (consumer1's first, freed mid-pair by
        # consumer1), K0_R (freed at consumer1's end), K1_L (freed at consumer0's end).
        slot = w0.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_l),
                 tl.load(rows0 + offs_d[None, :], mask=valid0[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.tkv),
                 tl.load(rows0 + D_MAIN + offs_t[None, :], mask=valid0[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.valid), valid0.to(tl.int8))
        w0.commit(p)

        slot = w1.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_r),
                 tl.load(rows1 + D_HALF + offs_d[None, :], mask=valid1[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.tkv),
                 tl.load(rows1 + D_MAIN + offs_t[None, :], mask=valid1[:, None], other=0.0))
        tl.store(tle.gpu.local_ptr(slot.valid), valid1.to(tl.int8))
        w1.commit(p)

        slot = w0r.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_r),
                 tl.load(rows0 + D_HALF + offs_d[None, :], mask=valid0[:, None], other=0.0))
        w0r.commit(p)

        slot = w1l.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.kv_l),
                 tl.load(rows1 + offs_d[None, :], mask=valid1[:, None], other=0.0))
        w1l.commit(p)


def consumer0(q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_row, stride_q_h, out_row,
              stride_o_h, lse_row, ml_row, sm_scale, NP, BLOCK_H: tl.constexpr):
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    # The Q tail lives in registers (the shared-memory budget has no room for it; see above).
    q_tail = tl.load(q_row + offs_h[:, None] * stride_q_h + D_MAIN + offs_t[None, :])

    qr = q.reader("consumer0")
    own = kv0.reader()                      # tile k0: K0_L, tail, mask (ours alone)
    own_r = kv0r.reader("consumer0")        # tile k0: K0_R (our QK; consumer1's V0_R)
    peer = kv1l.reader("consumer0")         # tile k1: K1_L (consumer1's QK; our V1_L)
    mw = max0.writer()
    mr = max1.reader()
    pw = prob0.writer()
    pr = prob1.reader()
    qres = qr.wait(0)

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)  # running row max (log2 units)
    l_i = tl.zeros([BLOCK_H], tl.float32)                 # running row sum of exp2
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, :256], unnormalised

    for p in range(NP):
        # S0 = Q·K0ᵀ: K0_L + tail (gathered first), then K0_R. The previous pair's P1·V1_L is
        # still in flight here (pipelined wgmma): QK0 queues behind it on the tensor core.
        k0 = own.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.kv_l))))
        s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.tkv))), s)
        if p > 0:
            pr.release(p - 1)    # the previous pair's P1·V1_L retired (one wgmma wait)
            peer.release(p - 1)
        k0r = own_r.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k0r.slot.kv_r))), s)
        valid = tl.load(tle.gpu.local_ptr(k0.slot.valid)) != 0
        s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
        own_r.release(p)  # the QK chain is retired (s was read): K0_R is consumer1's alone now

        # One-directional max: publish m0 = max(m_old, rowmax S0) and go on with it; consumer1
        # folds in its own tile's max and sends the final m_new back.
        m0 = tl.maximum(m_i, tl.max(s, 1))
        mslot = mw.acquire(p)
        tl.store(tle.gpu.local_ptr(mslot.m), m0)
        mw.commit(p)
        # All indices invalid so far: shift by 0 so alpha and P are 0, not exp2(-inf - -inf) = NaN.
        m0_use = tl.where(m0 == float("-inf"), 0.0, m0)
        alpha0 = tl.exp2(m_i - m0_use)
        p0 = tl.exp2(s - m0_use[:, None])
        sum0 = tl.sum(p0, 1)
        acc = tl.dot(p0.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(k0.slot.kv_l)),
                     acc * alpha0[:, None])

        own.release(p)              # retires P0·V0_L: K0_L, tail, mask free as early as can be
        mres = mr.wait(p)
        m_new = tl.load(tle.gpu.local_ptr(mres.slot.m))
        mr.release(p)
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        beta = tl.where(m0 == float("-inf"), 1.0, tl.exp2(m0 - m_use))
        # P0 goes to consumer1 already relative to m_new (it needs no rescale of its own).
        pslot = pw.acquire(p)
        tl.store(tle.gpu.local_ptr(pslot.sS), (p0 * beta[:, None]).to(tl.bfloat16))
        tl.store(tle.gpu.local_ptr(pslot.row_sum), sum0)
        pw.commit(p)
        acc = acc * beta[:, None]

        # The peer's probabilities (relative to m_new) on V1's left half; in flight across the
        # back-edge, released in the next pair (or after the loop).
        pres = pr.wait(p)
        k1 = peer.wait(p)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                     tl.load(tle.gpu.local_ptr(k1.slot.kv_l)), acc)
        sum1 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))

        l_i = (l_i * alpha0 + sum0) * beta + sum1
        m_i = m_new
    if NP > 0:
        pr.release(NP - 1)
        peer.release(NP - 1)

    # A row with no valid index has l_i == 0: out 0, max_logits -inf (m_i stayed -inf), lse +inf.
    inv_l = tl.where(l_i > 0, 1.0 / l_i, 0.0)
    out = acc * inv_l[:, None]
    tl.store(out_row + offs_h[:, None] * stride_o_h + offs_d[None, :], out.to(tl.bfloat16))
    tl.store(ml_row + offs_h, m_i * LN2)  # natural-log units: max(score * sm_scale)
    tl.store(lse_row + offs_h, tl.where(l_i > 0, (tl.log2(l_i) + m_i) * LN2, float("inf")))


def consumer1(q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_row, stride_q_h, out_row,
              stride_o_h, sm_scale, NP, BLOCK_H: tl.constexpr):
    qk_scale = sm_scale * LOG2E
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    q_tail = tl.load(q_row + offs_h[:, None] * stride_q_h + D_MAIN + offs_t[None, :])

    qr = q.reader("consumer1")
    own = kv1.reader()                      # tile k1: K1_R, tail, mask (ours alone)
    own_l = kv1l.reader("consumer1")        # tile k1: K1_L (our QK; consumer0's V1_L)
    peer = kv0r.reader("consumer1")         # tile k0: K0_R (consumer0's QK; our V0_R)
    mw = max1.writer()
    mr = max0.reader()
    pw = prob1.writer()
    pr = prob0.reader()
    qres = qr.wait(0)

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)         # O[:, 256:], unnormalised

    for p in range(NP):
        # S1 = Q·K1ᵀ: K1_R + tail first (gathered mid-pair), K1_L (gathered last) after.
        k1 = own.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.kv_r))))
        s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.tkv))), s)
        k1l = own_l.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k1l.slot.kv_l))), s)
        valid = tl.load(tle.gpu.local_ptr(k1.slot.valid)) != 0
        s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
        own_l.release(p)  # QK retired: K1_L is consumer0's alone now

        # m0 = max(m_old, rowmax S0) from consumer0; m_new = max(m0, rowmax S1) goes back.
        mres = mr.wait(p)
        m0 = tl.load(tle.gpu.local_ptr(mres.slot.m))
        mr.release(p)
        m_new = tl.maximum(m0, tl.max(s, 1))
        mslot = mw.acquire(p)
        tl.store(tle.gpu.local_ptr(mslot.m), m_new)
        mw.commit(p)
        m0_use = tl.where(m0 == float("-inf"), 0.0, m0)
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha0 = tl.exp2(m_i - m0_use)
        beta = tl.where(m0 == float("-inf"), 1.0, tl.exp2(m0 - m_use))
        p1 = tl.exp2(s - m_use[:, None])
        sum1 = tl.sum(p1, 1)
        p1 = p1.to(tl.bfloat16)
        pslot = pw.acquire(p)
        tl.store(tle.gpu.local_ptr(pslot.sS), p1)
        tl.store(tle.gpu.local_ptr(pslot.row_sum), sum1)
        pw.commit(p)

        # P1 (relative to m_new) on our own tile first: K1_R is free mid-pair, for the next pair's
        # gather; then the peer's P0, which consumer0 already brought to m_new.
        acc = tl.dot(p1, tl.load(tle.gpu.local_ptr(k1.slot.kv_r)),
                     acc * tl.exp2(m_i - m_use)[:, None])
        pres = pr.wait(p)
        k0r = peer.wait(p)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                     tl.load(tle.gpu.local_ptr(k0r.slot.kv_r)), acc)
        sum0 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
        own.release(p)              # after P1·V1_R only (P0·V0_R may still run)
        pr.release(p)
        peer.release(p)             # after P0·V0_R

        l_i = (l_i * alpha0 + sum0) * beta + sum1  # same operands, same order as consumer0
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
