"""TLE narrow-head SparseMLA prefill: h_q <= 32 (tensor-parallel serving), heads as the wgmma N.

A 64-row wgmma tile wastes most of its work when a query token has 8, 16 or 32 heads: the seesaw
and pipe kernels run such a token as one 64-head block with the rows past h_q masked. This kernel
puts the heads on the other side of every product, so no tensor-core work is padded:

    Sᵀ [64 tokens, H] = K [64, 576] · Qᵀ [576, H]         (A = the K tile, B = Q, both in shared memory)
    Oᵀ [512, H]      += Vᵀ [512, 64] · Pᵀ [64, H]          (A = the V tile transposed, B = the P tile)

with H = BLOCK_H (16 or 32; rows of q past h_q load as zeros, outputs past h_q are not stored). The
softmax runs down the columns of Sᵀ: a head's max and sum are reductions over axis 0. At d_qk =
512 (no RoPE tail) ``sparse_mla_narrow_d512`` and ``sparse_mla_narrow_d512_topk_length`` run the
same partitions given ROPE = 0: K is [64, 512] and the tail's product is skipped.

    producer (default, 4 warps)    scores (4 warps)          pv_l (4 warps)     pv_r (4 warps)
    Q of the token's heads ─► q ─► Sᵀ = K·Qᵀ, softmax
    gather kv rows by index ► kv ► kv_l kv_r tkv valid ──────► kv_l ───────────► kv_r
      (capacity 2, tile ck)        alpha probs ──────► score ► Oᵀ_L = Oᵀ_L·alpha + V_Lᵀ·Pᵀ
                                                       (cap. 2)  ───────────────► Oᵀ_R likewise
    after the loop                 inv_sum ──────────► total ► (one-shot) ──────► (one-shot)
    epilogue                       lse, max_logits           out[:, :, :256]     out[:, :, 256:]

The P tile must be in shared memory for both products (wgmma reads B only from there), so the
partition that computes it does not multiply with it (a writer's own slot is not a wgmma operand);
two readers each own half of Oᵀ, 64 registers of accumulator per thread.

What bounds it: a reduction over axis 0 crosses the four warps of the wgmma tile (a shared-memory
round trip and a barrier), and it sits on the scores partition's per-tile chain (wgmma, max,
exp2, the P tile's store), which is what sets the kernel's pace (docs/BENCHMARKS.md). So the row
sums are kept per element (`l_acc`, 16 registers) and reduced once after the loop; the PV
consumers get 1 / each head's denominator through the one-shot `total` pipe (with constexpr SINK,
exp(attn_sink[h]) joins that denominator, as FlashMLA's attn_sink does: lse stays that of the
scores). Only the max is reduced per tile (the lazy reference needs it).

Shared memory at BLOCK_H = 32 (bf16 = 2 B): q 36,864 B; kv 2 stages x (32 KiB + 32 KiB + 8 KiB +
64 B) = 147,584 B; score 2 stages x (128 + 4,096) = 8,448 B; total 128 B; about 193 KB with
the barriers.

Registers: the three workers ask for 128 each, the producer gets what is left of the 512 per thread
that four warp groups share (128).

Eager publish (`@tle.jit(eager_publish=True)`, docs/lowering.md): every thread arrives on the
barriers itself, with release semantics, instead of one elected thread behind a partition-wide
`bar.sync`. The scores partition releases three barrier groups of its kv slot per tile (kv_l is
also pv_l's, kv_r pv_r's, the tail and mask its own) and commits its score slot: four `bar.sync`
pairs on the chain that sets the kernel's pace, which this removes (43 -> 30 `bar.sync` in the
PTX at BLOCK_H = 32; on the H200, interleaved in one process at S 4096, topk 2048, SKV 32K:
1.027x at h_q 32, 1.023x at h_q 16).
"""

import triton.language as tl

import tle_compiler as tle

from .sparse_mla_common import (BK, D_HALF, D_MAIN, D_TAIL, LN2, LOG2E, index_valid, kv_rows,
                                lazy_ref, lse_of, shift_of)


@tle.jit(num_warps=4, eager_publish=True)
def sparse_mla_narrow(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                      stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s, stride_o_h,
                      stride_l_s, s_kv, sm_scale, n_heads, attn_sink_ptr,
                      TOPK: tl.constexpr, BLOCK_H: tl.constexpr, SINK: tl.constexpr):
    NK = TOPK // BK
    pid_s = tl.program_id(0).to(tl.int64)
    q_row = q_ptr + pid_s * stride_q_s
    idx_row = idx_ptr + pid_s * stride_idx_s
    out_row = out_ptr + pid_s * stride_o_s
    lse_row = lse_ptr + pid_s * stride_l_s
    ml_row = max_logits_ptr + pid_s * stride_l_s

    q, kv, score, total = narrow_pipes(BLOCK_H)

    # the producer's n_valid and LENGTH = 0: every slot of the row is read (TOPK of them)
    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row, s_kv, n_heads, NK,
                     TOPK, BLOCK_H, 0, 1)),
         (scores, (q, kv, score, total, lse_row, ml_row, sm_scale, n_heads, attn_sink_ptr, NK,
                   BLOCK_H, SINK, 1)),
         (pv_l, (kv, score, total, out_row, stride_o_h, n_heads, NK, BLOCK_H)),
         (pv_r, (kv, score, total, out_row, stride_o_h, n_heads, NK, BLOCK_H))],
        [4, 4, 4],
        [128, 128, 128])


@tle.jit(num_warps=4, eager_publish=True)
def sparse_mla_narrow_topk_length(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                                  stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                                  stride_o_h, stride_l_s, s_kv, sm_scale, n_heads, attn_sink_ptr,
                                  topk_length_ptr, TOPK: tl.constexpr, BLOCK_H: tl.constexpr,
                                  SINK: tl.constexpr):
    """The same partitions over a row's first n = clamp(topk_length[s], 0, TOPK) index slots only:
    NK = ceil(n / 64) tiles (one value every partition gets from the kernel body, so the verifier
    proves the protocol for every NK, 0 included), the last tile's slots past n read as -1. A row
    with n = 0 runs no tile: out 0, lse +inf, max_logits -inf."""
    pid_s = tl.program_id(0).to(tl.int64)
    n_valid = tl.minimum(tl.maximum(tl.load(topk_length_ptr + pid_s), 0), TOPK)
    NK = (n_valid + BK - 1) // BK
    q_row = q_ptr + pid_s * stride_q_s
    idx_row = idx_ptr + pid_s * stride_idx_s
    out_row = out_ptr + pid_s * stride_o_s
    lse_row = lse_ptr + pid_s * stride_l_s
    ml_row = max_logits_ptr + pid_s * stride_l_s

    q, kv, score, total = narrow_pipes(BLOCK_H)

    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row, s_kv, n_heads, NK,
                     n_valid, BLOCK_H, 1, 1)),
         (scores, (q, kv, score, total, lse_row, ml_row, sm_scale, n_heads, attn_sink_ptr, NK,
                   BLOCK_H, SINK, 1)),
         (pv_l, (kv, score, total, out_row, stride_o_h, n_heads, NK, BLOCK_H)),
         (pv_r, (kv, score, total, out_row, stride_o_h, n_heads, NK, BLOCK_H))],
        [4, 4, 4],
        [128, 128, 128])


@tle.jit(num_warps=4, eager_publish=True)
def sparse_mla_narrow_d512(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                           stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                           stride_o_h, stride_l_s, s_kv, sm_scale, n_heads, attn_sink_ptr,
                           TOPK: tl.constexpr, BLOCK_H: tl.constexpr, SINK: tl.constexpr):
    """``sparse_mla_narrow`` for d_qk = 512 (d_v = 512, no RoPE tail: q [s_q, h_q, 512], kv
    [s_kv, 1, 512]): the same partitions with the tail fields neither written nor read."""
    NK = TOPK // BK
    pid_s = tl.program_id(0).to(tl.int64)
    q, kv, score, total = narrow_pipes(BLOCK_H)
    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_ptr + pid_s * stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr + pid_s * stride_idx_s, s_kv, n_heads, NK, TOPK, BLOCK_H, 0, 0)),
         (scores, (q, kv, score, total, lse_ptr + pid_s * stride_l_s,
                   max_logits_ptr + pid_s * stride_l_s, sm_scale, n_heads, attn_sink_ptr, NK,
                   BLOCK_H, SINK, 0)),
         (pv_l, (kv, score, total, out_ptr + pid_s * stride_o_s, stride_o_h, n_heads, NK,
                 BLOCK_H)),
         (pv_r, (kv, score, total, out_ptr + pid_s * stride_o_s, stride_o_h, n_heads, NK,
                 BLOCK_H))],
        [4, 4, 4],
        [128, 128, 128])


@tle.jit(num_warps=4, eager_publish=True)
def sparse_mla_narrow_d512_topk_length(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr,
                                       max_logits_ptr, stride_q_s, stride_q_h, stride_kv_s,
                                       stride_idx_s, stride_o_s, stride_o_h, stride_l_s, s_kv,
                                       sm_scale, n_heads, attn_sink_ptr, topk_length_ptr,
                                       TOPK: tl.constexpr, BLOCK_H: tl.constexpr,
                                       SINK: tl.constexpr):
    """``sparse_mla_narrow_topk_length`` for d_qk = 512 (as ``sparse_mla_narrow_d512``)."""
    pid_s = tl.program_id(0).to(tl.int64)
    n_valid = tl.minimum(tl.maximum(tl.load(topk_length_ptr + pid_s), 0), TOPK)
    NK = (n_valid + BK - 1) // BK
    q, kv, score, total = narrow_pipes(BLOCK_H)
    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_ptr + pid_s * stride_q_s, stride_q_h, kv_ptr, stride_kv_s,
                     idx_ptr + pid_s * stride_idx_s, s_kv, n_heads, NK, n_valid, BLOCK_H, 1, 0)),
         (scores, (q, kv, score, total, lse_ptr + pid_s * stride_l_s,
                   max_logits_ptr + pid_s * stride_l_s, sm_scale, n_heads, attn_sink_ptr, NK,
                   BLOCK_H, SINK, 0)),
         (pv_l, (kv, score, total, out_ptr + pid_s * stride_o_s, stride_o_h, n_heads, NK,
                 BLOCK_H)),
         (pv_r, (kv, score, total, out_ptr + pid_s * stride_o_s, stride_o_h, n_heads, NK,
                 BLOCK_H))],
        [4, 4, 4],
        [128, 128, 128])


def narrow_pipes(BLOCK_H: tl.constexpr):
    """The pipes of the dataflow above (q, kv, score, total), declared once for the four kernels
    (the d512 kernels leave the tail fields q_tail and tkv unused)."""
    q = tle.pipe(capacity=1, one_shot=True,
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_tail=tle.gpu.alloc([1, BLOCK_H, D_TAIL], tl.bfloat16))
    kv = tle.pipe(capacity=2, readers=("scores", "pv_l", "pv_r"),
                  kv_l=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  kv_r=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  tkv=tle.gpu.alloc([2, BK, D_TAIL], tl.bfloat16),
                  valid=tle.gpu.alloc([2, BK], tl.int8))
    score = tle.pipe(capacity=2, readers=("pv_l", "pv_r"),
                     alpha=tle.gpu.alloc([2, BLOCK_H], tl.float32),
                     probs=tle.gpu.alloc([2, BK, BLOCK_H], tl.bfloat16))
    total = tle.pipe(capacity=1, one_shot=True, readers=("pv_l", "pv_r"),
                     inv_sum=tle.gpu.alloc([1, BLOCK_H], tl.float32))
    return q, kv, score, total


def producer(q, kv, q_row, stride_q_h, kv_ptr, stride_kv_s, idx_row, s_kv, n_heads, NK, n_valid,
             BLOCK_H: tl.constexpr, LENGTH: tl.constexpr, ROPE: tl.constexpr):
    """Q once, then the NK K tiles. With LENGTH, slots at or past ``n_valid`` read as -1 (their
    addresses stay inside the row: NK * 64 <= TOPK); without it ``n_valid`` is TOPK and every
    slot is read as it is. Without ROPE (d_qk = 512) the rows have no RoPE tail: the tail fields
    are neither written nor read."""
    offs_h = tl.arange(0, BLOCK_H)
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)

    # Q of the token's heads, staged once; a row past h_q is zero, so its scores are 0 (finite)
    # and nothing of it is stored.
    qw = q.writer()
    slot = qw.acquire(0)
    real = (offs_h < n_heads)[:, None]
    q_rows = q_row + tl.minimum(offs_h, n_heads - 1)[:, None] * stride_q_h
    tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_rows + offs_d[None, :], mask=real, other=0.0))
    tl.store(tle.gpu.local_ptr(slot.q_r),
             tl.load(q_rows + D_HALF + offs_d[None, :], mask=real, other=0.0))
    if ROPE:
        tl.store(tle.gpu.local_ptr(slot.q_tail),
                 tl.load(q_rows + D_MAIN + offs_t[None, :], mask=real, other=0.0))
    qw.commit(0)

    kw = kv.writer()
    for ck in range(NK):
        # Indices are read before acquire so their latency hides behind the wait for a free stage.
        if LENGTH:
            slots = ck * BK + offs_k
            t = tl.load(idx_row + slots, mask=slots < n_valid, other=-1)
        else:
            t = tl.load(idx_row + ck * BK + offs_k)
        valid = index_valid(t, s_kv)
        # An invalid index is never dereferenced: its row is row 0 and its load is masked.
        rows = kv_rows(kv_ptr, stride_kv_s, t, valid)
        keep = valid[:, None]
        slot = kw.acquire(ck)
        tl.store(tle.gpu.local_ptr(slot.kv_l),
                 tl.load(rows + offs_d[None, :], mask=keep, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.kv_r),
                 tl.load(rows + D_HALF + offs_d[None, :], mask=keep, other=0.0))
        if ROPE:
            tl.store(tle.gpu.local_ptr(slot.tkv),
                     tl.load(rows + D_MAIN + offs_t[None, :], mask=keep, other=0.0))
        tl.store(tle.gpu.local_ptr(slot.valid), valid.to(tl.int8))
        kw.commit(ck)


def scores(q, kv, score, total, lse_row, ml_row, sm_scale, n_heads, attn_sink_ptr, NK,
           BLOCK_H: tl.constexpr, SINK: tl.constexpr, ROPE: tl.constexpr):
    qk_scale = sm_scale * LOG2E  # softmax in base 2: exp(x*sm_scale) == exp2(x*sm_scale*log2(e))
    offs_h = tl.arange(0, BLOCK_H)

    qr = q.reader()
    kr = kv.reader("scores", fields=("kv_l", "kv_r", "tkv", "valid"))
    sw = score.writer()
    tw = total.writer()
    qres = qr.wait(0)

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)  # running max per head (log2 units)
    ref = tl.full([BLOCK_H], float("-inf"), tl.float32)  # lazy reference max (log2 units)
    # exp2(s - ref) summed per element; its column sums (one cross-warp reduction) are taken
    # once, after the loop, rather than per tile
    l_acc = tl.zeros([BK, BLOCK_H], tl.float32)

    for ck in range(NK):
        kres = kr.wait(ck)
        # Sᵀ = K·Qᵀ: the K tile is the wgmma's A operand, Q its B operand (N = BLOCK_H heads)
        s = tl.dot(tl.load(tle.gpu.local_ptr(kres.slot.kv_l)),
                   tl.trans(tl.load(tle.gpu.local_ptr(qres.slot.q_l))))
        s = tl.dot(tl.load(tle.gpu.local_ptr(kres.slot.kv_r)),
                   tl.trans(tl.load(tle.gpu.local_ptr(qres.slot.q_r))), s)
        if ROPE:
            s = tl.dot(tl.load(tle.gpu.local_ptr(kres.slot.tkv)),
                       tl.trans(tl.load(tle.gpu.local_ptr(qres.slot.q_tail))), s)
        valid = tl.load(tle.gpu.local_ptr(kres.slot.valid)) != 0
        kr.release(ck)
        s = tl.where(valid[:, None], s, float("-inf"))  # raw scores: sm_scale > 0 keeps the max

        mx = tl.max(s, 0) * qk_scale
        m_i = tl.maximum(m_i, mx)
        r_new = lazy_ref(ref, mx)    # lazy: after the first tiles alpha is exactly 1
        r_use = shift_of(r_new)      # 0 while every index so far is invalid (no NaN)
        alpha = tl.exp2(ref - r_use)
        p = tl.exp2(s * qk_scale - r_use[None, :])
        l_acc = l_acc * alpha[None, :] + p
        ref = r_new

        sslot = sw.acquire(ck)
        tl.store(tle.gpu.local_ptr(sslot.alpha), alpha)
        tl.store(tle.gpu.local_ptr(sslot.probs), p.to(tl.bfloat16))
        sw.commit(ck)

    # A head with no valid index has l_i == 0: out 0, max_logits -inf (m_i stayed -inf), lse
    # +inf. A head past h_q is not stored (nor its sink read); its address is clamped to the
    # last real head.
    l_i = tl.sum(l_acc, 0)
    real = offs_h < n_heads
    heads = tl.minimum(offs_h, n_heads - 1)
    if SINK:
        # exp(sink[h]) joins the denominator of out only (lse is that of the scores)
        sink = tl.load(attn_sink_ptr + heads, mask=real, other=0.0) * LOG2E
        inv = tl.where(l_i > 0, 1.0 / (l_i + tl.exp2(sink - ref)), 0.0)
    else:
        inv = tl.where(l_i > 0, 1.0 / l_i, 0.0)
    tslot = tw.acquire(0)
    tl.store(tle.gpu.local_ptr(tslot.inv_sum), inv)
    tw.commit(0)

    tl.store(ml_row + heads, m_i * LN2, mask=real)  # natural-log units: max(score * sm_scale)
    tl.store(lse_row + heads, lse_of(l_i, ref), mask=real)


def pv_l(kv, score, total, out_row, stride_o_h, n_heads, NK, BLOCK_H: tl.constexpr):
    """Oᵀ[0:256] = V_Lᵀ·Pᵀ over the tiles; stores out[:, :, 0:256] of the real heads."""
    kr = kv.reader("pv_l", fields=("kv_l",))
    sr = score.reader("pv_l")
    tr = total.reader("pv_l")

    acc = tl.zeros([D_HALF, BLOCK_H], tl.float32)  # Oᵀ[0:256], unnormalised
    for ck in range(NK):
        kres = kr.wait(ck)
        sres = sr.wait(ck)
        acc = acc * tl.load(tle.gpu.local_ptr(sres.slot.alpha))[None, :]
        acc = tl.dot(tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_l))),
                     tl.load(tle.gpu.local_ptr(sres.slot.probs)), acc)
        sr.release(ck)
        kr.release(ck)

    tres = tr.wait(0)
    inv = tl.load(tle.gpu.local_ptr(tres.slot.inv_sum))  # 1 / each head's denominator
    tr.release(0)
    store_half(acc, inv, out_row + 0, stride_o_h, n_heads, BLOCK_H)


def pv_r(kv, score, total, out_row, stride_o_h, n_heads, NK, BLOCK_H: tl.constexpr):
    """Oᵀ[256:512] = V_Rᵀ·Pᵀ over the tiles; stores out[:, :, 256:512] of the real heads."""
    kr = kv.reader("pv_r", fields=("kv_r",))
    sr = score.reader("pv_r")
    tr = total.reader("pv_r")

    acc = tl.zeros([D_HALF, BLOCK_H], tl.float32)  # Oᵀ[256:512], unnormalised
    for ck in range(NK):
        kres = kr.wait(ck)
        sres = sr.wait(ck)
        acc = acc * tl.load(tle.gpu.local_ptr(sres.slot.alpha))[None, :]
        acc = tl.dot(tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_r))),
                     tl.load(tle.gpu.local_ptr(sres.slot.probs)), acc)
        sr.release(ck)
        kr.release(ck)

    tres = tr.wait(0)
    inv = tl.load(tle.gpu.local_ptr(tres.slot.inv_sum))  # 1 / each head's denominator
    tr.release(0)
    store_half(acc, inv, out_row + D_HALF, stride_o_h, n_heads, BLOCK_H)


def store_half(acc, inv, out_row, stride_o_h, n_heads, BLOCK_H: tl.constexpr):
    """out[h, d] = Oᵀ[d, h] · inv[h] for the 256 dims of ``acc`` from ``out_row`` on, the real
    heads only (the address of a head past h_q is clamped to the last real head)."""
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    heads = tl.minimum(offs_h, n_heads - 1)
    tl.store(out_row + heads[None, :] * stride_o_h + offs_d[:, None],
             (acc * inv[None, :]).to(tl.bfloat16), mask=(offs_h < n_heads)[None, :])


DEFAULT_CONFIG = {
    # q [s_q, h_q, 576] bf16 (h_q <= BLOCK_H), kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk]
    # int32, out [s_q, h_q, 512] bf16, lse / max_logits [s_q, h_q] fp32; last dims contiguous;
    # attn_sink [h_q] fp32, read only with SINK; topk_length [s_q] int32 (second kernel).
    "sparse_mla_narrow": {
        "signature": {
            "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
            "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
            "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
            "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
            "s_kv": "i32", "sm_scale": "fp32", "n_heads": "i32", "attn_sink_ptr": "*fp32",
            "TOPK": "constexpr", "BLOCK_H": "constexpr", "SINK": "constexpr",
        },
        "constexprs": {"TOPK": 2048, "BLOCK_H": 32, "SINK": False},
        "num_warps": 4,                  # the producer (default partition)
        "grid": ("s_q",),
    },
    "sparse_mla_narrow_topk_length": {
        "signature": {
            "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
            "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
            "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
            "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
            "s_kv": "i32", "sm_scale": "fp32", "n_heads": "i32", "attn_sink_ptr": "*fp32",
            "topk_length_ptr": "*i32",
            "TOPK": "constexpr", "BLOCK_H": "constexpr", "SINK": "constexpr",
        },
        "constexprs": {"TOPK": 2048, "BLOCK_H": 32, "SINK": False},
        "num_warps": 4,
        "grid": ("s_q",),
    },
    # d_qk = 512: q [s_q, h_q, 512], kv [s_kv, 1, 512]; the same arguments otherwise
    "sparse_mla_narrow_d512": {
        "signature": {
            "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
            "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
            "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
            "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
            "s_kv": "i32", "sm_scale": "fp32", "n_heads": "i32", "attn_sink_ptr": "*fp32",
            "TOPK": "constexpr", "BLOCK_H": "constexpr", "SINK": "constexpr",
        },
        "constexprs": {"TOPK": 2048, "BLOCK_H": 32, "SINK": False},
        "num_warps": 4,                  # the producer (default partition)
        "grid": ("s_q",),
    },
    "sparse_mla_narrow_d512_topk_length": {
        "signature": {
            "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
            "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
            "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
            "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
            "s_kv": "i32", "sm_scale": "fp32", "n_heads": "i32", "attn_sink_ptr": "*fp32",
            "topk_length_ptr": "*i32",
            "TOPK": "constexpr", "BLOCK_H": "constexpr", "SINK": "constexpr",
        },
        "constexprs": {"TOPK": 2048, "BLOCK_H": 32, "SINK": False},
        "num_warps": 4,
        "grid": ("s_q",),
    },
}
