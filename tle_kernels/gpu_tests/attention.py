"""A small attention kernel: one program per 64-row block of queries, D = 64, bf16 data.

The producer stages the program's Q block once (one_shot pipe ``q``), then streams K and V tiles
of 64 keys through ``kv`` (capacity 2). The consumer computes, per tile, S = Q·Kᵀ (tl.dot, fp32
accumulation), an online softmax in base 2 (scores scaled by qk_scale = sm_scale·log2 e, running
row max m and row sum l, rescale alpha = exp2(m_old - m_new)), and O = O·alpha + P·V with P cast to
bf16; at the end O / l goes out in fp32. Checked against torch's fp32 softmax(Q Kᵀ · sm_scale) V
with a bf16 tolerance."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)   # query rows per program
BN = tl.constexpr(64)   # keys per K/V tile
D = tl.constexpr(64)    # head dim


@tle.jit(num_warps=4)
def attention(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, NK):
    q = tle.pipe(capacity=1, one_shot=True, tile=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity=2,
                  k=tle.gpu.alloc([2, BN, D], tl.bfloat16),
                  v=tle.gpu.alloc([2, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(load_qkv, (q, kv, q_ptr, k_ptr, v_ptr, NK)),
                             (softmax_pv, (q, kv, o_ptr, qk_scale, NK))],
                            [4], [232])


def load_qkv(q, kv, q_ptr, k_ptr, v_ptr, NK):
    q_offs = tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :]
    kv_offs = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    qw = q.writer()
    qslot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(qslot.tile), tl.load(q_ptr + tl.program_id(0) * BM * D + q_offs))
    qw.commit(0)
    w = kv.writer()
    for ck in range(NK):
        slot = w.acquire(ck)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + ck * BN * D + kv_offs))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + ck * BN * D + kv_offs))
        w.commit(ck)


def softmax_pv(q, kv, o_ptr, qk_scale, NK):
    qr = q.reader()
    qres = qr.wait(0)
    qt = tl.load(tle.gpu.local_ptr(qres.slot.tile))  # each QK wgmma reads the slot: released below
    m_i = tl.full([BM], -1.0e30, tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    r = kv.reader()
    for ck in range(NK):
        res = r.wait(ck)
        k = tl.load(tle.gpu.local_ptr(res.slot.k))
        s = tl.dot(qt, tl.trans(k)) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(tle.gpu.local_ptr(res.slot.v))
        acc = tl.dot(p.to(tl.bfloat16), v, acc * alpha[:, None])
        r.release(ck)
        m_i = m_new
    qr.release(0)
    inv_l = tl.where(l_i > 0, 1.0 / l_i, 0.0)
    o = acc * inv_l[:, None]
    tl.store(o_ptr + tl.program_id(0) * BM * D + tl.arange(0, BM)[:, None] * D
             + tl.arange(0, D)[None, :], o)


DEFAULT_CONFIG = {
    # q: [M, D] bf16 (M a multiple of BM), k, v: [NK * BN, D] bf16, o: [M, D] fp32; grid (M // BM,)
    "signature": {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32",
                  "qk_scale": "fp32", "NK": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": ("M // BM",),
}
