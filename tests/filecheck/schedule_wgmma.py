# RUN: tle-dump -p schedule-wgmma --no-locations %s
# schedule-wgmma (a lowering pass: tle-dump prints the IR after it) decides where the partition
# waits for its async wgmmas and writes each wait on the node it goes before or after
# (`wgmma_waits`: how many wgmmas stay in flight, the values the wait rebinds, why, the line, and
# where: schedule_wgmma_placement.py shows every kind of point). With wgmma_pipeline=True a loop
# keeps the wgmmas whose results only loop-carried names hold in flight across its back-edge: the
# loop gets them as `wgmma_carried`.
import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)
D = tl.constexpr(64)
LOG2E = tl.constexpr(1.4426950408889634)


@tle.jit(num_warps=4, wgmma_pipeline=True)
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
        if t > 0:  # the slot of t - 1: its wgmma retired by now, this one may still run
            r.release(t - 1)
    if NT > 0:
        r.release(NT - 1)
    out = acc / l_i[:, None]
    tl.store(o_ptr + tl.arange(0, BM)[:, None] * D + tl.arange(0, D)[None, :], out)



# The loader issues no wgmma: no waits, nothing carried.
# CHECK: partition loader default
# CHECK: wgmma_waits = ()} {
# CHECK: for t in range(0, NT, 1) attrs {wgmma_carried = ()} {
# CHECK-NOT: WgmmaWait(
# The consumer: the P·V wgmma (result in acc, reading the v ring, its A operand P in registers,
# issued by the tl.dot at body[5].body[6].value) stays in flight across the back-edge; after the
# loop it is drained (the loop's own wait, placed after it).
# CHECK: partition attend
# CHECK: wgmma_waits = ()} {
# CHECK: for t in range(0, NT, 1) attrs {wgmma_carried = (CarriedWgmma(names = ('acc',), rings = ('kv_v',), regs = ('_a4',), reg_types = (((64, 64), 'bfloat16', DotOperand(operand_index = 0, parent = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16)), k_width = 2)),), wgmma = 'body[5].body[6].value'),)
# CHECK: wgmma_waits = (WgmmaWait(pending = 0, deps = ('acc', 'A operand of body[5].body[6].value'), why = 'loop exit: wgmmas carried by the loop'
# CHECK: place = 'after', path = ''),)} {
# Reading S (`s * qk_scale`, the Q·Kᵀ result straight from the tl.dot, which the kernel never
# names) waits for everything in flight: the previous iteration's P·V wgmma, carried into this
# one, and Q·Kᵀ, rebinding both results and the register A operand. The wait is on the tl.dot,
# after it.
# CHECK: s = tl.dot(
# CHECK: wgmma_waits = (WgmmaWait(pending = 0, deps = ('acc', 'result of body[5].body[1].value.lhs', 'A operand of body[5].body[6].value'), why = 'result of body[5].body[1].value.lhs is read'
# CHECK: place = 'after', path = '')
# CHECK-NEXT: m_new = tl.maximum(
# The delayed release of slot t - 1 waits for nothing: the P·V wgmma in flight reads the other
# slot (t % 2; wgmma_sites.rings_overlap), and the one of tile t - 1 retired where S was read.
# CHECK: if t > 0 {
# CHECK-NEXT: kv.reader.release(t - 1)
# CHECK-NOT: WgmmaWait(
# CHECK: out = acc / l_i[:, None]
