"""A small attention tile: one program computes O = softmax(Q·Kᵀ·scale)·V for a [BM, D] block of
queries against N_KV keys, with the K/V tiles streamed through a pipe.

    loader (default, 4 warps)        attend (worker, 4 warps, 232 regs)
    Q ─► q  (one_shot) ────────────► S = Q·Kᵀ   (wgmma, both operands from shared memory)
    K, V tiles ─► kv (capacity 2) ─► online softmax (max / exp2 / sum)
                                     O = O·alpha + P·V  (P a register A operand, V from smem)
                                     store O / l

Both pipes feed wgmma, so the lowering fences the generic→async proxy before each commit and after
each wait."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)
LOG2E = tl.constexpr(1.4426950408889634)


@tle.jit(num_warps=4)
def attention_tile(q_ptr, k_ptr, v_ptr, o_ptr, N_KV, sm_scale):
    NT = tl.cdiv(N_KV, BN)
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, BM, D], tl.bfloat16))
    kv = tle.pipe(capacity=2,
                  k=tle.gpu.alloc([2, BN, D], tl.bfloat16),
                  v=tle.gpu.alloc([2, BN, D], tl.bfloat16))
    tle.gpu.warp_specialize([(loader, (q, kv, q_ptr, k_ptr, v_ptr, NT)),
                             (attend, (q, kv, o_ptr, sm_scale, NT))],
                            [4], [232])


def loader(q, kv, q_ptr, k_ptr, v_ptr, NT):
    tile = tl.arange(0, BN)[:, None] * D + tl.arange(0, D)[None, :]
    qw = q.writer()
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + tl.arange(0, BM)[:, None] * D
                                                 + tl.arange(0, D)[None, :]))
    qw.commit(0)
    w = kv.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * BN * D + tile))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile))
        w.commit(t)


def attend(q, kv, o_ptr, sm_scale, NT):
    qk_scale = sm_scale * LOG2E
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k)))) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)),
                     acc * alpha[:, None])
        m_i = m_new
        r.release(t)
    out = acc / l_i[:, None]
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], out)


DEFAULT_CONFIG = {
    # q [BM, D] bf16, k/v [N_KV, D] bf16 (N_KV a multiple of BN), o [BM, D] fp32
    "signature": {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32",
                  "N_KV": "i32", "sm_scale": "fp32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
