"""The persistent seesaw SparseMLA prefill with FlashMLA's attn_sink ([h_q] fp32, natural log).

tle_kernels/sparse_mla_seesaw.py with one change, in its two consumers' epilogue: each row's
softmax denominator gets exp(attn_sink[h]) (``sink_normalized``), so that
out = Σ exp(s - lse')·v with lse' = log(exp(lse) + exp(sink)); lse and max_logits stay those of
the scores (FlashMLA's semantics, tle_kernels/reference.py). Everything else is the plain
seesaw's, unchanged: its producer and ``q_tail_of`` (imported), the consumers' pair loop, the
persistent item loop (ROUNDS items per program, pipes indexed ``r * NP + p``: read specialised to
TOPK), shared memory (230,528 B) and registers ([224, 224], the producer what is left); its
docstring explains the schedule and the deadlock argument, which hold here word for word.

With l the row sum relative to the reference max ref (log2 units: lse = (log2 l + ref)·ln 2),
out = acc / (l + exp2(sink·log2e - ref)): acc / l · 1 / (1 + exp(sink - lse)) without forming
exp(lse), as FlashMLA's epilogue does. A sink far above a row's scores makes exp2(...) inf and the
row 0, its limit; a -inf sink is no sink; a row with no valid index (l = 0) is 0 whatever the sink.

Why a kernel of its own rather than a constexpr of the plain seesaw: a constexpr is a launch
argument every caller must pass (the plain seesaw is compiled by its callers and tests with TOPK
and BLOCK_H alone), and the consumers' pair loop cannot move into a helper both kernels call (a
statement that calls a helper with effects is read in sequential form, one temporary per call,
which the lowering's `tl.dot(a, tl.trans(tl.load(slot)))` wgmma operand does not survive).
Launch: tle_kernels/sparse_mla_seesaw_sink_topk_launch.py (the plain seesaw's persistent launch
with the sink after ROUNDS).
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import (BK, D_HALF, LN2, LOG2E, head0_of, lazy_ref, lse_of, rebase,
                                shift_of, token_of)
from .sparse_mla_seesaw import producer, q_tail_of, seesaw_pipes


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw_sink(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                           stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                           stride_o_h, stride_l_s, s_kv, sm_scale, n_items, n_hb, ROUNDS,
                           attn_sink_ptr, TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NP = TOPK // (2 * BK)                  # K-tile pairs per item

    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr, stride_idx_s, s_kv, n_items, n_hb, ROUNDS, NP, BLOCK_H, 1)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, n_items, n_hb, ROUNDS, NP, BLOCK_H)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, n_items, n_hb, ROUNDS, NP, BLOCK_H))],
        [4, 4],
        [224, 224])


def sink_normalized(acc, l_i, ref, sink_ptr, h0, BLOCK_H: tl.constexpr):
    """The output rows of heads h0 .. h0 + BLOCK_H - 1 with exp(sink[h]) in the softmax
    denominator: acc / (l_i + exp2(sink[h]·log2e - ref)), l_i the row sum relative to the
    reference max ``ref`` (log2 units); 0 for a row with no valid index (l_i == 0)."""
    sink = tl.load(sink_ptr + h0 + tl.arange(0, BLOCK_H)) * LOG2E
    inv = tl.where(l_i > 0, 1.0 / (l_i + tl.exp2(sink - ref)), 0.0)
    return acc * inv[:, None]


def consumer0(q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
              out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, sink_ptr, sm_scale, n_items,
              n_hb, ROUNDS, NP, BLOCK_H: tl.constexpr):
    qk_scale = sm_scale * LOG2E
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader("consumer0")
    own = kv0.reader()
    own_r = kv0r.reader("consumer0")
    peer = kv1l.reader("consumer0")
    mw = max0.writer()
    mr = max1.reader()
    pw = prob0.writer()
    pr = prob1.reader()
    q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, tl.program_id(0), n_items, n_hb, BLOCK_H)
    for r in range(ROUNDS):
        # this program's item of round r; past the last item, the last item again (its outputs
        # are written twice with the same values)
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        qres = qr.wait(r)
        ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_H], tl.float32)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
        for p in range(NP):
            g = r * NP + p
            k0 = own.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                       tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.kv_l))))
            s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.tkv))), s)
            if p > 0:
                pr.release(g - 1)
                peer.release(g - 1)
            k0r = own_r.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                       tl.trans(tl.load(tle.gpu.local_ptr(k0r.slot.kv_r))), s)
            valid = tl.load(tle.gpu.local_ptr(k0.slot.valid)) != 0
            s = tl.where(valid[None, :], s, float("-inf"))
            own_r.release(g)

            mx0 = tl.max(s, 1) * qk_scale
            mslot = mw.acquire(g)
            tl.store(tle.gpu.local_ptr(mslot.m), mx0)
            mw.commit(g)
            r0 = lazy_ref(ref, mx0)
            r0_use = shift_of(r0)
            alpha0 = tl.exp2(ref - r0_use)
            p0 = tl.exp2(s * qk_scale - r0_use[:, None])
            sum0 = tl.sum(p0, 1)
            acc = tle.gpu.scale_rows(acc, alpha0)
            acc = tl.dot(p0.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(k0.slot.kv_l)), acc)

            own.release(g)
            mres = mr.wait(g)
            r_new = tl.load(tle.gpu.local_ptr(mres.slot.m))
            mr.release(g)
            r_use = shift_of(r_new)
            beta = rebase(r0, r_use)
            pslot = pw.acquire(g)
            tl.store(tle.gpu.local_ptr(pslot.sS), tle.gpu.scale_rows(p0, beta).to(tl.bfloat16))
            tl.store(tle.gpu.local_ptr(pslot.row_sum), sum0)
            pw.commit(g)
            acc = tle.gpu.scale_rows(acc, beta)

            pres = pr.wait(g)
            k1 = peer.wait(g)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                         tl.load(tle.gpu.local_ptr(k1.slot.kv_l)), acc)
            sum1 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))

            l_i = (l_i * alpha0 + sum0) * beta + sum1
            ref = r_new
        if NP > 0:
            pr.release(r * NP + NP - 1)
            peer.release(r * NP + NP - 1)
        qr.release(r)  # our last QK of the item is done: the producer may load the next Q
        # the next item's RoPE tail: its load is in flight while this item's outputs are stored
        q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, (r + 1) * tl.num_programs(0)
                           + tl.program_id(0), n_items, n_hb, BLOCK_H)

        out = sink_normalized(acc, l_i, ref, sink_ptr, h0, BLOCK_H)
        out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
        tl.store(out_row + offs_h[:, None] * stride_o_h + offs_d[None, :], out.to(tl.bfloat16))
        tl.store(lse_ptr + pid_s * stride_l_s + h0 + offs_h,
                 lse_of(l_i, ref))


def consumer1(q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
              out_ptr, stride_o_s, stride_o_h, ml_ptr, stride_l_s, sink_ptr, sm_scale, n_items,
              n_hb, ROUNDS, NP, BLOCK_H: tl.constexpr):
    qk_scale = sm_scale * LOG2E
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader("consumer1")
    own = kv1.reader()
    own_l = kv1l.reader("consumer1")
    peer = kv0r.reader("consumer1")
    mw = max1.writer()
    mr = max0.reader()
    pw = prob1.writer()
    pr = prob0.reader()
    q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, tl.program_id(0), n_items, n_hb, BLOCK_H)
    for r in range(ROUNDS):
        # this program's item of round r; past the last item, the last item again (its outputs
        # are written twice with the same values)
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = token_of(item, n_hb)
        h0 = head0_of(item, n_hb, BLOCK_H)
        qres = qr.wait(r)
        m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
        ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_H], tl.float32)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
        for p in range(NP):
            g = r * NP + p
            k1 = own.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                       tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.kv_r))))
            s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.tkv))), s)
            k1l = own_l.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                       tl.trans(tl.load(tle.gpu.local_ptr(k1l.slot.kv_l))), s)
            valid = tl.load(tle.gpu.local_ptr(k1.slot.valid)) != 0
            s = tl.where(valid[None, :], s, float("-inf"))
            own_l.release(g)

            mx1 = tl.max(s, 1) * qk_scale
            mres = mr.wait(g)
            mx0 = tl.load(tle.gpu.local_ptr(mres.slot.m))
            mr.release(g)
            r0 = lazy_ref(ref, mx0)
            r_new = lazy_ref(r0, mx1)
            mslot = mw.acquire(g)
            tl.store(tle.gpu.local_ptr(mslot.m), r_new)
            mw.commit(g)
            m_i = tl.maximum(m_i, tl.maximum(mx0, mx1))
            r0_use = shift_of(r0)
            r_use = shift_of(r_new)
            alpha0 = tl.exp2(ref - r0_use)
            beta = rebase(r0, r_use)
            p1 = tl.exp2(s * qk_scale - r_use[:, None])
            sum1 = tl.sum(p1, 1)
            p1 = p1.to(tl.bfloat16)
            pslot = pw.acquire(g)
            tl.store(tle.gpu.local_ptr(pslot.sS), p1)
            tl.store(tle.gpu.local_ptr(pslot.row_sum), sum1)
            pw.commit(g)

            acc = tle.gpu.scale_rows(acc, tl.exp2(ref - r_use))
            acc = tl.dot(p1, tl.load(tle.gpu.local_ptr(k1.slot.kv_r)), acc)
            pres = pr.wait(g)
            k0r = peer.wait(g)
            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.sS)),
                         tl.load(tle.gpu.local_ptr(k0r.slot.kv_r)), acc)
            sum0 = tl.load(tle.gpu.local_ptr(pres.slot.row_sum))
            own.release(g)
            pr.release(g)
            peer.release(g)

            l_i = (l_i * alpha0 + sum0) * beta + sum1
            ref = r_new
        qr.release(r)
        # the next item's RoPE tail: its load is in flight while this item's outputs are stored
        q_tail = q_tail_of(q_ptr, stride_q_s, stride_q_h, (r + 1) * tl.num_programs(0)
                           + tl.program_id(0), n_items, n_hb, BLOCK_H)

        out = sink_normalized(acc, l_i, ref, sink_ptr, h0, BLOCK_H)
        out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
        tl.store(out_row + offs_h[:, None] * stride_o_h + D_HALF + offs_d[None, :],
                 out.to(tl.bfloat16))
        tl.store(ml_ptr + pid_s * stride_l_s + h0 + offs_h, m_i * LN2)


DEFAULT_CONFIG = {
    # q [s_q, h_q, 576] bf16, kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32, attn_sink [h_q] fp32;
    # last dims contiguous.
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32", "ROUNDS": "i32",
        "attn_sink_ptr": "*fp32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},  # TOPK must be a multiple of 2*BK = 128
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("programs",),
}
