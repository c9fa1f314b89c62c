# RUN: tle-dump -p assign-layouts --no-locations %s
# assign-layouts (a lowering pass: tle-dump prints the IR after it) solves the register layout of
# every tensor value and writes it into the IR: each partition's layout table (its distinct
# layouts; per layout variable, the index of its layout; the converted operands), each tensor-valued
# op's `layout`, the stores that become cp.async gathers, how each pipe's fields are filled and the
# arrive unit and init count of its barrier arrays.
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



# The q and k/v fields are filled by cp.async gathers only: every thread of the loader arrives on
# the full barriers (128 arrivals), the empty barrier keeps one elected arrive per release.
# CHECK: pipe q capacity=1 one_shot
# CHECK: arrive_units = (ArriveUnit(barrier = 'q_full0', mode = 'thread', threads = 128, init_count = 128),)
# CHECK: fills = (FieldFill(field = 'q', cp_async = True, registers = False),)
# CHECK: pipe kv capacity=2
# CHECK: arrive_units = (ArriveUnit(barrier = 'kv_full0', mode = 'thread', threads = 128, init_count = 128), ArriveUnit(barrier = 'kv_empty0', mode = 'partition', threads = 128, init_count = 1))
# CHECK: fills = (FieldFill(field = 'k', cp_async = True, registers = False), FieldFill(field = 'v', cp_async = True, registers = False))
# The loader: default blocked layouts of its 4 warps; index vectors are slices of them.
# CHECK: partition loader default
# CHECK: layouts = LayoutTable(layouts = (Slice(dim = 1, parent = Blocked(size_per_thread = (1, 8), threads_per_warp = (4, 8), warps_per_cta = (4, 1), order = (1, 0))), Blocked(
# CHECK: tile = tl.arange(0, BN) attrs {layout = Slice(dim = 1, parent = Blocked(size_per_thread = (1, 8)
# CHECK: tl.store(tle.gpu.local_ptr(slot.k), tl.load(k_ptr + t * BN * D + tile)) attrs {cp_async = True}
# CHECK-NEXT: tl.store(tle.gpu.local_ptr(slot.v), tl.load(v_ptr + t * BN * D + tile)) attrs {cp_async = True}
# The consumer: the wgmma accumulator layout (4 warps, instr 16x64x16) anchors S and O; the row
# statistics are its dim-1 slice, so the softmax needs no layout conversion.
# CHECK: partition attend
# CHECK: layouts = LayoutTable(layouts = (Slice(dim = 1, parent = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16))), NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16)), Slice(dim = 0, parent = NVMMADistributed(
# CHECK: converts = ())}
# CHECK: m_i = tl.full((BM,), -inf, tl.fp32) attrs {layout = Slice(dim = 1, parent = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16)))}
# CHECK: acc = tl.zeros((BM, D), tl.fp32) attrs {layout = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16))}
# CHECK: s = tl.dot(
# CHECK: attrs {layout = NVMMADistributed(warps_per_cta = (4, 1), instr_shape = (16, 64, 16))} * qk_scale
# CHECK-NEXT: m_new = tl.maximum(m_i, tl.max(s, 1) attrs {layout = Slice(dim = 1, parent = NVMMADistributed(
# CHECK: l_i = l_i * alpha + tl.sum(p, 1) attrs {layout = Slice(dim = 1, parent = NVMMADistributed(
# CHECK: acc = tl.dot(p.to(tl.bf16) attrs {layout = NVMMADistributed(
