"""The per-CTA TLE-FlashMLA seesaw: kernels/sparse_mla_seesaw.py as it was before it became
persistent (one program per (query token, head block), a one-shot Q pipe). Kept as the
A/B baseline and for benchmarks/seesaw_timeline.py, whose stamps follow this kernel's pair loop
(the pair loop of the persistent kernel is the same code). Its design notes:

TLE-FlashMLA: SparseMLA prefill with FlashMLA's "seesaw" schedule, three warp groups.

One program per (query token, block of BLOCK_H=64 heads). K tiles of BK=64 indices go in pairs:
k0 = 2p and k1 = 2p+1. Each consumer computes QK for its own tile and applies BOTH tiles'
probabilities to its own output half. The max order is one-directional (FlashMLA's): consumer0
publishes m0 = max(m_old, rowmax S0) and goes on with it; consumer1 folds in rowmax S1 and sends
the final m_new back. Consumer0 brings its P0·V0_L term from m0 to m_new (beta = exp2(m0 - m_new))
and hands P0 to consumer1 already relative to m_new, so consumer1 never rescales mid-pair.

    producer (4 warps, default)   consumer0 (4 warps, 216 regs)      consumer1 (4 warps, 216 regs)
    Q main dims ─► q (one_shot) ─► q_l q_r                            q_l q_r
    tile 2p:   K0_L,tail,mask ─► kv0 (consumer0 alone)
    tile 2p+1: K1_R,tail,mask ─► kv1 (consumer1 alone)
    tile 2p:   K0_R ─► kv0r ───►  QK0                                 P0·V0_R
    tile 2p+1: K1_L ─► kv1l ───►  P1·V1_L                             QK1
                                 S0 = Q·K0ᵀ                           S1 = Q·K1ᵀ
                                 m0 = max(m_old, rowmax S0) ─ max0 ─► m_new = max(m0, rowmax S1)
                                 O_l = O_l·a0 + P0·V0_L (async)       P1 = exp2(S1 - m_new)
                                 release kv0 (P0·V0_L retired)        ◄─ prob1 ─ (P1, rowsum P1)
                                 m_new ◄───────────────────── max1 ── O_r = O_r·a + P1·V1_R
                                 (P0·beta, rowsum P0) ─ prob0 ─►      O_r += P0·V0_R
                                 O_l = O_l·beta + P1·V1_L             release kv1, then kv0r
                                 (in flight into the next pair;
                                  kv1l released there)
    epilogue                     out[:, :256], lse, max_logits       out[:, 256:]
    (all pipes capacity 1; a0 = exp2(m_old - m0), beta = exp2(m0 - m_new), a = a0·beta,
     l = (l·a0 + rowsum P0)·beta + rowsum P1)

Both consumers keep identical (m, l): they combine the same fp32 values in the same order.

Fill and release order (FlashMLA's): each consumer's first QK piece is freed mid-pair, so the
producer gathers it for the next pair while the current one finishes. The producer fills kv0
(K0_L + tail + mask: consumer0's first piece, freed once P0·V0_L retired), kv1 (K1_R + tail +
mask: consumer1's first piece, freed once P1·V1_R retired), kv0r (K0_R: freed by consumer0's QK
and consumer1's P0·V0_R at its end of the pair) and kv1l (K1_L: freed by consumer1's QK and by
consumer0's P1·V1_L, which stays in flight across the loop back-edge: `@tle.jit(...,
wgmma_pipeline=True)`; consumer0 releases kv1l and prob1 of pair p-1 right after it issued the
next pair's first QK wgmmas, so the tensor core has that QK queued behind P1·V1_L). Capacity 2 for
the K tiles does not fit: one more 73,792 B tile pair is 147,584 B over a 230,528 B kernel.

Deadlock-freedom (by hand; the verifier proves it): within pair p the order
  P: kv0(p), kv1(p), kv0r(p), kv1l(p) → c0: wait kv0, kv0r; release kv0r; commit max0
  → c1: wait kv1, kv1l; release kv1l; wait max0; commit max1, prob1 → c0: release kv0; wait max1;
  commit prob0; wait prob1, kv1l → c1: wait prob0, kv0r; release kv1, prob0, kv0r
  → c0 (in pair p+1, or after the loop): release prob1(p), kv1l(p)
is a complete schedule respecting every partition's program order, and every cross edge points
forward in it (commit(p) → wait(p) inside pair p; release(p-1) → acquire(p) from the pair before;
consumer0's release of kv1l(p) and prob1(p) comes after its wait for kv0(p+1), which the producer
fills before it needs kv1l(p) back). The happens-before graph is therefore acyclic for every NP.
Consumer0's only waits on consumer1 inside a pair (max1, prob1) come after it committed what
consumer1 needs first (max0); waiting for m_new before committing m0 would be a cycle
(tests/test_kernels.py checks the verifier rejects that).

Shared memory (bf16 = 2 B): q 65,536 B (q_l + q_r); tile k0 (kv0 + kv0r) and tile k1 (kv1 + kv1l)
each 32 KiB + 32 KiB + 8 KiB + 64 B = 73,792 B; prob0 and prob1 each 8,192 + 256 = 8,448 B;
max0 and max1 256 B each; total 230,528 B (225.1 KiB) of Hopper's 227 KiB, 1,920 B left for
mbarriers (17 of them take 136 B). Keeping q_tail in shared memory too (as the TLE-Pipe kernel
does) would make it 238,720 B: over the limit. FlashMLA fits by aliasing sS0 with K0's dead RoPE
tail, which a verified pipe cannot express; here each consumer instead keeps
q_tail [64,64] in registers (16 regs/thread, the A operand of a register-A wgmma for the tail dot).

Grid order: the launch grid is (s_q, h_q // 64) and programs start axis 0 first, so the head
blocks of one query token (which gather exactly the same kv rows) would run ~s_q/132 waves apart.
The kernel renumbers its program so that they run in the same wave and the second one's gathers hit
L2: +14 % at SKV=128K, neutral at 8K (interleaved A/B on the H200, 2026-11-29, docs/BENCHMARKS.md).

Registers: FlashMLA gives each consumer warp group 216 registers per thread and its producer 72
(MISSION's "[216, 72]"). In `warp_specialize` the budget list covers the workers only, so the two
consumers (workers) ask for [216, 216] and the producer, the default partition, gets what is left
of the 64 Ki-register file: 65,536 / 128 threads = 512 per thread over the three warp groups, so
512 - 2*216 = 80 (the lowering may shrink it to FlashMLA's 72). A gather holds only indices,
pointers and masks, so that is enough.

History: the schedule before this one (measured 2026-11-29, docs/BENCHMARKS.md) had consumer1
apply P0 relative to m0 first and rescale mid-pair, and filled kv0, kv0r, kv1l, kv1; FlashMLA's
order measured +1 to +4 % (interleaved A/Bs on the H200).
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
