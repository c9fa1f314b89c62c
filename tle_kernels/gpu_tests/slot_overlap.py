"""Two kernels whose wgmmas stay in flight while another slot of the same ring is written or
handed back, the waits the lowering tells apart by slot (docs/lowering.md, "Async wgmma"):

- ``refill``: a partition that writes and reads one two-slot ring issues the wgmma reading slot t,
  stores tile t + 1 into the other slot while it runs, then releases slot t. O = sum over t of
  X_t·V_t with small integers (exact in fp32).
- ``delayed_release``: pipelined attention (``wgmma_pipeline=True``) that releases the K/V slot
  of tile t - 1 right after issuing tile t's Q·Kᵀ: the wait before the release retires the P·V of
  tile t - 1 (carried across the back-edge) and leaves that Q·Kᵀ, which reads the other slot, in
  flight. Base-2 softmax without scale, against torch with a bf16 tolerance.
"""

import triton.language as tl

import tle_compiler as tle

B = tl.constexpr(64)


@tle.jit(num_warps=4)
def refill(x_ptr, v_ptr, o_ptr, NT):
    a = tle.pipe(capacity=1, x=tle.gpu.alloc([1, B, B], tl.bfloat16))
    r = tle.pipe(capacity=2, readers=("mm",), v=tle.gpu.alloc([2, B, B], tl.bfloat16))
    N = tl.maximum(NT, 1)  # at least one tile (the last one is read after the loop)
    tle.gpu.warp_specialize([(load_x, (a, x_ptr, N)), (mm, (a, r, v_ptr, o_ptr, N))],
                            [4], [232])


def load_x(a, x_ptr, NT):
    tile = tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :]
    w = a.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.x), tl.load(x_ptr + t * B * B + tile))
        w.commit(t)


def mm(a, r, v_ptr, o_ptr, NT):
    tile = tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :]
    ar = a.reader()
    rw = r.writer()
    rr = r.reader("mm")
    slot = rw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + tile))
    rw.commit(0)
    acc = tl.zeros([B, B], tl.float32)
    for t in range(NT - 1):
        nxt = tl.load(v_ptr + (t + 1) * B * B + tile)
        ares = ar.wait(t)
        rres = rr.wait(t)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(ares.slot.x)),
                     tl.load(tle.gpu.local_ptr(rres.slot.v)), acc)
        slot = rw.acquire(t + 1)  # the other slot, stored while the wgmma reads slot t
        tl.store(tle.gpu.local_ptr(slot.v), nxt)
        rw.commit(t + 1)
        ar.release(t)
        rr.release(t)
    ares = ar.wait(NT - 1)
    rres = rr.wait(NT - 1)
    acc = tl.dot(tl.load(tle.gpu.local_ptr(ares.slot.x)),
                 tl.load(tle.gpu.local_ptr(rres.slot.v)), acc)
    ar.release(NT - 1)
    rr.release(NT - 1)
    tl.store(o_ptr + tile, acc)


@tle.jit(num_warps=4, wgmma_pipeline=True)
def delayed_release(q_ptr, k_ptr, v_ptr, o_ptr, NT):
    q = tle.pipe(capacity=1, one_shot=True, q=tle.gpu.alloc([1, B, B], tl.bfloat16))
    kv = tle.pipe(capacity=2,
                  k=tle.gpu.alloc([2, B, B], tl.bfloat16),
                  v=tle.gpu.alloc([2, B, B], tl.bfloat16))
    tle.gpu.warp_specialize([(load_qkv, (q, kv, q_ptr, k_ptr, v_ptr, NT)),
                             (attend, (q, kv, o_ptr, NT))],
                            [4], [232])


def load_qkv(q, kv, q_ptr, k_ptr, v_ptr, NT):
    tile = tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :]
    qw = q.writer()
    slot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(slot.q), tl.load(q_ptr + tile))
    qw.commit(0)
    w = kv.writer()
    for t in range(NT):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * B * B + tile))
        tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * B * B + tile))
        w.commit(t)


def attend(q, kv, o_ptr, NT):
    qr = q.reader()
    r = kv.reader()
    qres = qr.wait(0)
    m_i = tl.full([B], float("-inf"), tl.float32)
    l_i = tl.zeros([B], tl.float32)
    acc = tl.zeros([B, B], tl.float32)
    for t in range(NT):
        res = r.wait(t)
        s = tl.dot(tl.load(tle.gpu.local_ptr(qres.slot.q)),
                   tl.trans(tl.load(tle.gpu.local_ptr(res.slot.k))))
        if t > 0:
            r.release(t - 1)  # the P·V of tile t - 1 retires first; this Q·Kᵀ runs on
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.bfloat16), tl.load(tle.gpu.local_ptr(res.slot.v)),
                     acc * alpha[:, None])
        m_i = m_new
    if NT > 0:
        r.release(NT - 1)
    out = acc / l_i[:, None]
    tl.store(o_ptr + tl.arange(0, B)[:, None] * B + tl.arange(0, B)[None, :], out)


DEFAULT_CONFIG = {
    # refill: x, v [NT * 64, 64] bf16, o [64, 64] fp32; delayed_release: q [64, 64], k / v
    # [NT * 64, 64] bf16, o [64, 64] fp32 (NT >= 1). One program.
    "refill": {
        "signature": {"x_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32", "NT": "i32"},
        "constexprs": {},
        "num_warps": 4,
        "grid": (1,),
    },
    "delayed_release": {
        "signature": {"q_ptr": "*bf16", "k_ptr": "*bf16", "v_ptr": "*bf16", "o_ptr": "*fp32",
                      "NT": "i32"},
        "constexprs": {},
        "num_warps": 4,
        "grid": (1,),
    },
}
