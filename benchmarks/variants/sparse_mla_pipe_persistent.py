"""Persistent TLE-Pipe (an A/B variant of kernels/sparse_mla_pipe.py, not yet measured): one
program per SM looping over ROUNDS (query token, head block) items, as the bundled seesaw does
(kernels/sparse_mla_seesaw.py, "Persistent"): Q through a capacity-1 pipe per item, released by the
left consumer after its last QK of the item, so the next item's Q and first K tiles load while both
consumers store their outputs; item = r * programs + program, a short last round recomputing the
last item. Indices `r * NK + ck`: read specialised to TOPK (docs/language.md). Checked on the CPU
emulation against the fp32 reference (tests/test_kernels.py); A/B it with

    python3 benchmarks/ab_sparse_mla.py kernels/sparse_mla_pipe.py \
        benchmarks/variants/sparse_mla_pipe_persistent.py --reps 5
"""

import triton.language as tl

import tle_compiler as tle

BK = tl.constexpr(64)        # topk indices (kv rows) per K tile
D_HALF = tl.constexpr(256)   # half of the 512 main dims: each consumer owns one output half
D_MAIN = tl.constexpr(512)   # main dims of q/kv rows (also the V dims)
D_TAIL = tl.constexpr(64)    # RoPE tail dims: a row is D_MAIN + D_TAIL = 576 wide
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)


@tle.jit(num_warps=4)
def sparse_mla_pipe_persistent(q_ptr, kv_ptr, idx_ptr, out_ptr, lse_ptr, max_logits_ptr,
                               stride_q_s, stride_q_h, stride_kv_s, stride_idx_s, stride_o_s,
                               stride_o_h, stride_l_s, s_kv, sm_scale, n_items, n_hb, ROUNDS,
                               TOPK: tl.constexpr, BLOCK_H: tl.constexpr):
    NK = TOPK // BK
    q = tle.pipe(capacity=1,
                 q_l=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_r=tle.gpu.alloc([1, BLOCK_H, D_HALF], tl.bfloat16),
                 q_tail=tle.gpu.alloc([1, BLOCK_H, D_TAIL], tl.bfloat16))
    kv = tle.pipe(capacity=2, readers=("left", "right"),
                  kv_l=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  kv_r=tle.gpu.alloc([2, BK, D_HALF], tl.bfloat16),
                  tkv=tle.gpu.alloc([2, BK, D_TAIL], tl.bfloat16),
                  valid=tle.gpu.alloc([2, BK], tl.int8))
    score = tle.pipe(capacity=1,
                     alpha=tle.gpu.alloc([1, BLOCK_H], tl.float32),
                     probs=tle.gpu.alloc([1, BLOCK_H, BK], tl.bfloat16),
                     sum_exp=tle.gpu.alloc([1, BLOCK_H], tl.float32))

    tle.gpu.warp_specialize(
        [(producer, (q, kv, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s, idx_ptr,
                     stride_idx_s, s_kv, n_items, n_hb, ROUNDS, NK, BLOCK_H)),
         (left, (q, kv, score, out_ptr, stride_o_s, stride_o_h, lse_ptr, max_logits_ptr,
                 stride_l_s, sm_scale, n_items, n_hb, ROUNDS, NK, BLOCK_H)),
         (right, (kv, score, out_ptr, stride_o_s, stride_o_h, n_items, n_hb, ROUNDS, NK,
                  BLOCK_H))],
        [4, 4],
        [240, 168])


def producer(q, kv, q_ptr, stride_q_s, stride_q_h, kv_ptr, stride_kv_s, idx_ptr, stride_idx_s,
             s_kv, n_items, n_hb, ROUNDS, NK, BLOCK_H: tl.constexpr):
    offs_h = tl.arange(0, BLOCK_H)
    offs_k = tl.arange(0, BK)
    offs_d = tl.arange(0, D_HALF)
    offs_t = tl.arange(0, D_TAIL)
    qw = q.writer()
    kw = kv.writer()
    for r in range(ROUNDS):
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = (item // n_hb).to(tl.int64)
        h0 = (item % n_hb) * BLOCK_H
        q_rows = q_ptr + pid_s * stride_q_s + (h0 + offs_h[:, None]) * stride_q_h
        idx_row = idx_ptr + pid_s * stride_idx_s
        slot = qw.acquire(r)
        tl.store(tle.gpu.local_ptr(slot.q_l), tl.load(q_rows + offs_d[None, :]))
        tl.store(tle.gpu.local_ptr(slot.q_r), tl.load(q_rows + D_HALF + offs_d[None, :]))
        tl.store(tle.gpu.local_ptr(slot.q_tail), tl.load(q_rows + D_MAIN + offs_t[None, :]))
        qw.commit(r)
        for ck in range(NK):
            g = r * NK + ck
            t = tl.load(idx_row + ck * BK + offs_k)
            valid = (t >= 0) & (t < s_kv)
            rows = kv_ptr + tl.where(valid, t, 0).to(tl.int64)[:, None] * stride_kv_s
            keep = valid[:, None]
            slot = kw.acquire(g)
            tl.store(tle.gpu.local_ptr(slot.kv_l),
                     tl.load(rows + offs_d[None, :], mask=keep, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.kv_r),
                     tl.load(rows + D_HALF + offs_d[None, :], mask=keep, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.tkv),
                     tl.load(rows + D_MAIN + offs_t[None, :], mask=keep, other=0.0))
            tl.store(tle.gpu.local_ptr(slot.valid), valid.to(tl.int8))
            kw.commit(g)


def left(q, kv, score, out_ptr, stride_o_s, stride_o_h, lse_ptr, ml_ptr, stride_l_s, sm_scale,
         n_items, n_hb, ROUNDS, NK, BLOCK_H: tl.constexpr):
    qk_scale = sm_scale * LOG2E
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    qr = q.reader()
    kr = kv.reader("left")
    sw = score.writer()
    for r in range(ROUNDS):
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = (item // n_hb).to(tl.int64)
        h0 = (item % n_hb) * BLOCK_H
        qres = qr.wait(r)
        m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_H], tl.float32)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
        for ck in range(NK):
            g = r * NK + ck
            kres = kr.wait(g)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_l)),
                       tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_l))))
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_r)),
                       tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.kv_r))), s)
            s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q_tail)),
                       tl.trans(tl.load(tle.gpu.local_ptr(kres.slot.tkv))), s)
            valid = tl.load(tle.gpu.local_ptr(kres.slot.valid)) != 0
            s = tl.where(valid[None, :], s * qk_scale, float("-inf"))

            m_new = tl.maximum(m_i, tl.max(s, 1))
            m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
            alpha = tl.exp2(m_i - m_use)
            p = tl.exp2(s - m_use[:, None])
            l_i = l_i * alpha + tl.sum(p, 1)
            m_i = m_new
            p16 = p.to(tl.bfloat16)

            sslot = sw.acquire(g)
            tl.store(tle.gpu.local_ptr(sslot.alpha), alpha)
            tl.store(tle.gpu.local_ptr(sslot.probs), p16)
            tl.store(tle.gpu.local_ptr(sslot.sum_exp), l_i)
            sw.commit(g)

            acc = tl.dot(p16, tl.load(tle.gpu.local_ptr(kres.slot.kv_l)), acc * alpha[:, None])
            kr.release(g)
        qr.release(r)  # the item's last QK is done: the producer may load the next Q

        inv_l = tl.where(l_i > 0, 1.0 / l_i, 0.0)
        out = acc * inv_l[:, None]
        out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
        tl.store(out_row + offs_h[:, None] * stride_o_h + offs_d[None, :], out.to(tl.bfloat16))
        tl.store(ml_ptr + pid_s * stride_l_s + h0 + offs_h, m_i * LN2)
        tl.store(lse_ptr + pid_s * stride_l_s + h0 + offs_h,
                 tl.where(l_i > 0, (tl.log2(l_i) + m_i) * LN2, float("inf")))


def right(kv, score, out_ptr, stride_o_s, stride_o_h, n_items, n_hb, ROUNDS, NK,
          BLOCK_H: tl.constexpr):
    offs_h = tl.arange(0, BLOCK_H)
    offs_d = tl.arange(0, D_HALF)
    kr = kv.reader("right", fields=("kv_r",))
    sr = score.reader()
    for r in range(ROUNDS):
        item = r * tl.num_programs(0) + tl.program_id(0)
        item = tl.where(item < n_items, item, n_items - 1)
        pid_s = (item // n_hb).to(tl.int64)
        h0 = (item % n_hb) * BLOCK_H
        l_i = tl.zeros([BLOCK_H], tl.float32)
        acc = tl.zeros([BLOCK_H, D_HALF], tl.float32)
        for ck in range(NK):
            g = r * NK + ck
            kres = kr.wait(g)
            sres = sr.wait(g)
            alpha = tl.load(tle.gpu.local_ptr(sres.slot.alpha))
            l_i = tl.load(tle.gpu.local_ptr(sres.slot.sum_exp))
            acc = tl.dot(tl.load(tle.gpu.local_ptr(sres.slot.probs)),
                         tl.load(tle.gpu.local_ptr(kres.slot.kv_r)), acc * alpha[:, None])
            sr.release(g)
            kr.release(g)

        inv_l = tl.where(l_i > 0, 1.0 / l_i, 0.0)
        out = acc * inv_l[:, None]
        out_row = out_ptr + pid_s * stride_o_s + h0 * stride_o_h
        tl.store(out_row + offs_h[:, None] * stride_o_h + D_HALF + offs_d[None, :],
                 out.to(tl.bfloat16))


DEFAULT_CONFIG = {
    "signature": {
        "q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
        "lse_ptr": "*fp32", "max_logits_ptr": "*fp32",
        "stride_q_s": "i32", "stride_q_h": "i32", "stride_kv_s": "i32", "stride_idx_s": "i32",
        "stride_o_s": "i32", "stride_o_h": "i32", "stride_l_s": "i32",
        "s_kv": "i32", "sm_scale": "fp32", "n_items": "i32", "n_hb": "i32", "ROUNDS": "i32",
        "TOPK": "constexpr", "BLOCK_H": "constexpr",
    },
    "constexprs": {"TOPK": 2048, "BLOCK_H": 64},
    "num_warps": 4,
    "grid": ("programs",),
}
