"""The seesaw SparseMLA prefill with FlashMLA's topk_length ([s_q] int32), and optionally its
attn_sink (constexpr HAS_SINK): one program per (query token, head block) item.

Query token s uses only its first n = clamp(topk_length[s], 0, TOPK) index slots; the others are
invalid (masked, never dereferenced: the producer does not even read their indices, they count as
-1). Per-row early stop: the kernel body reads n once, before ``warp_specialize``, and hands every
partition NP = ceil(n / 128) K-tile pairs (an odd tile count's partner tile is all slots past n,
fully masked), so a row runs only the pairs it needs instead of masking all TOPK slots. NP is
one opaque param for the verifier (a kernel-level integer computed from data), which proves the
protocol for every value of it, NP = 0 (an empty row: out 0, lse +inf, max_logits -inf) included,
as for the MLA decode kernels' trip count (docs/decode.md).

The schedule is tle_kernels/sparse_mla_seesaw.py's, word for word, for one item: the producer's
gathers, the consumers' pair loop (pipes indexed by the pair p), the one-directional max exchange,
the lazy rescale, the fill and release order and the deadlock argument (its docstring). What
differs: no item loop (the trip count differs from row to row, and a loop over an opaque param
may not sit inside another loop for the protocol to be proved for every value of it:
docs/semantics.md, the cutoff theorem's fragment), so Q goes through its capacity-1 pipe once,
at index 0, and the launch runs one program per item, s_q * h_q / 64 of them, head blocks of one
token next to each other (tle_kernels/sparse_mla_seesaw_sink_topk_launch.py). With HAS_SINK the
epilogue adds exp(attn_sink[h]) to each row's denominator (``sink_normalized`` of
tle_kernels/sparse_mla_common.py); lse and max_logits stay those of the scores.

Shared memory and registers are the plain seesaw's (230,528 B; [224, 224], the producer 64).
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LN2, LOG2E, head0_of, index_valid,
                                kv_rows, lazy_ref, lse_of, normalized, rebase, shift_of,
                                sink_normalized, token_of)
from .sparse_mla_seesaw import seesaw_pipes


@tle.jit(num_warps=4, wgmma_pipeline=True)
def sparse_mla_seesaw_topk_length(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                                  stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                                  stride_o_h, stride_l_s, s_kv, sm_scale, n_hb, attn_sink_ptr,
                                  topk_length_ptr, TOPK: tl.constexpr, BLOCK_H: tl.constexpr,
                                  HAS_SINK: tl.constexpr):
    item = tl.program_id(0)                # (query token item // n_hb, head block item % n_hb)
    # The item's valid slots and its K-tile pairs, read once and shared by every partition.
    n_valid = tl.minimum(tl.maximum(tl.load(topk_length_ptr + token_of(item, n_hb)), 0), TOPK)
    NP = (n_valid + 2 * BK - 1) // (2 * BK)

    q, kv0, kv0r, kv1, kv1l, max0, max1, prob0, prob1 = seesaw_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(producer, (q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr, stride_idx_s, s_kv, item, n_hb, n_valid, NP, BLOCK_H)),
         (consumer0, (q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, item, n_hb, NP, BLOCK_H, HAS_SINK)),
         (consumer1, (q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
                      out_ptr, stride_o_s, stride_o_h, max_logits_ptr, stride_l_s, attn_sink_ptr,
                      sm_scale, item, n_hb, NP, BLOCK_H, HAS_SINK))],
        [4, 4],
        [224, 224])


def producer(q, kv0, kv0r, kv1, kv1l, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
             idx_ptr, stride_idx_s, s_kv, item, n_hb, n_valid, NP, BLOCK_H: tl.constexpr):
    offs_h = tl.arange(0, BLOCK_H)
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    qw = q.writer()
    w0 = kv0.writer()
    w0r = kv0r.writer()
    w1 = kv1.writer()
    w1l = kv1l.writer()
    pid_s = token_of(item, n_hb)
    h0 = head0_of(item, n_hb, BLOCK_H)
    q_rows = q_ptr + pid_s * stride_q_s + h0 * stride_q_h + offs_h[:, None] * stride_q_h
    idx_row = idx_ptr + pid_s * stride_idx_s
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_rows + offs_d[None, :]))
    tl.store(tle.gpu.local_ptr(slot.q_r), tl.load(q_rows + D_HALF + offs_d[None, :]))
    qw.commit(0)
    for p in range(NP):
        # slots at or past n_valid are not read: index -1, invalid
        slots0 = (2 * p) * BK + offs_k
        slots1 = (2 * p + 1) * BK + offs_k
        t0 = tl.load(idx_row + slots0, mask=slots0 < n_valid, other=-1)
        t1 = tl.load(idx_row + slots1, mask=slots1 < n_valid, other=-1)
        valid0 = index_valid(t0, s_kv)
        valid1 = index_valid(t1, s_kv)
        rows0 = kv_rows(kv_ptr, stride_kv_s, t0, valid0)
        rows1 = kv_rows(kv_ptr, stride_kv_s, t1, valid1)

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


def q_tail_at(q_ptr, stride_q_s, stride_q_h, item, n_hb, BLOCK_H: tl.constexpr):
    """q's RoPE tail [BLOCK_H, D_TAIL] of work ``item``, which each consumer keeps in registers as
    the A operand of its tail dot."""
    rows = (q_ptr + token_of(item, n_hb) * stride_q_s
            + (head0_of(item, n_hb, BLOCK_H) + tl.arange(0, BLOCK_H)[:, None]) * stride_q_h)
    return tl.load(rows + D_MAIN + tl.arange(0, D_TAIL)[None, :])


def consumer0(q, kv0, kv0r, kv1l, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
              out_ptr, stride_o_s, stride_o_h, lse_ptr, stride_l_s, sink_ptr, sm_scale, item,
              n_hb, NP, BLOCK_H: tl.constexpr, HAS_SINK: tl.constexpr):
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
    q_tail = q_tail_at(q_ptr, stride_q_s, stride_q_h, item, n_hb, BLOCK_H)
    pid_s = token_of(item, n_hb)
    h0 = head0_of(item, n_hb, BLOCK_H)
    qres = qr.wait(0)
    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
    for p in range(NP):
        k0 = own.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.kv_l))))
        s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k0.slot.tkv))), s)
        if p > 0:
            pr.release(p - 1)
            peer.release(p - 1)
        k0r = own_r.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k0r.slot.kv_r))), s)
        valid = tl.load(tle.gpu.local_ptr(k0.slot.valid)) != 0
        s = tl.where(valid[None, :], s, float("-inf"))
        own_r.release(p)

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
        ref = r_new
    if NP > 0:
        pr.release(NP - 1)
        peer.release(NP - 1)
    qr.release(0)
    if HAS_SINK:
        out = sink_normalized(acc, l_i, ref, sink_ptr, h0, BLOCK_H)
    else:
        out = normalized(acc, l_i)
    out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
    tl.store(out_row + offs_h[:, None] * stride_o_h + offs_d[None, :], out.to(tl.bfloat16))
    tl.store(lse_ptr + pid_s * stride_l_s + h0 + offs_h,
             lse_of(l_i, ref))


def consumer1(q, kv1, kv1l, kv0r, max0, max1, prob0, prob1, q_ptr, stride_q_s, stride_q_h,
              out_ptr, stride_o_s, stride_o_h, ml_ptr, stride_l_s, sink_ptr, sm_scale, item,
              n_hb, NP, BLOCK_H: tl.constexpr, HAS_SINK: tl.constexpr):
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
    q_tail = q_tail_at(q_ptr, stride_q_s, stride_q_h, item, n_hb, BLOCK_H)
    pid_s = token_of(item, n_hb)
    h0 = head0_of(item, n_hb, BLOCK_H)
    qres = qr.wait(0)
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
    for p in range(NP):
        k1 = own.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.kv_r))))
        s = tl.dot(q_tail, tl.trans(tl.load(tle.gpu.local_ptr(k1.slot.tkv))), s)
        k1l = own_l.wait(p)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(k1l.slot.kv_l))), s)
        valid = tl.load(tle.gpu.local_ptr(k1.slot.valid)) != 0
        s = tl.where(valid[None, :], s, float("-inf"))
        own_l.release(p)

        mx1 = tl.max(s, 1) * qk_scale
        mres = mr.wait(p)
        mx0 = tl.load(tle.gpu.local_ptr(mres.slot.m))
        mr.release(p)
        r0 = lazy_ref(ref, mx0)
        r_new = lazy_ref(r0, mx1)
        mslot = mw.acquire(p)
        tl.store(tle.gpu.local_ptr(mslot.m), r_new)
        mw.commit(p)
        m_i = tl.maximum(m_i, tl.maximum(mx0, mx1))
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
        ref = r_new
    qr.release(0)
    if HAS_SINK:
        out = sink_normalized(acc, l_i, ref, sink_ptr, h0, BLOCK_H)
    else:
        out = normalized(acc, l_i)
    out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
    tl.store(out_row + offs_h[:, None] * stride_o_h + D_HALF + offs_d[None, :],
             out.to(tl.bfloat16))
    tl.store(ml_ptr + pid_s * stride_l_s + h0 + offs_h, m_i * LN2)


DEFAULT_CONFIG = {
    # q [s_q, h_q, 576] bf16, kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk] int32,
    # out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32, attn_sink [h_q] fp32 (any
    # fp32 tensor when HAS_SINK is 0: not read), topk_length [s_q] int32; last dims contiguous.
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32", "n_hb": "i32",
        "attn_sink_ptr": "*fp32", "topk_length_ptr": "*i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr", "HAS_SINK": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64, "HAS_SINK": 1},  # TOPK a multiple of 128
    "num_warps": 4,                  # the producer (default partition)
    "grid": ("items",),              # s_q * h_q / BLOCK_H programs
}
