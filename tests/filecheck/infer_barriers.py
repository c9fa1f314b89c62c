# RUN: tle-dump -p infer-barriers --print-ir --no-locations %s
# Two readers of kv: 'left' sees both fields, 'right' only kv_r. The fields split into two groups
# (kv_l: read by left; kv_r: read by both), each with a full and an empty array; the empty array of
# kv_r's group completes after 2 releases, that of kv_l's after 1, and right waits and releases
# only kv_r's barriers. infer-barriers runs infer-stages first (the parities on the waits).
import triton.language as tl

import tle_compiler as tle


@tle.jit
def spmc(x_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, readers=("left", "right"),
                  kv_l=tle.gpu.alloc([2, 64], tl.float32), kv_r=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (left, (kv, x_ptr, N)),
                             (right, (kv, x_ptr, N))], [4, 4], [96, 96])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.kv_l), tl.load(x_ptr + tl.arange(0, 64)))
        tl.store(tle.gpu.local_ptr(slot.kv_r), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(t)


def left(kv, x_ptr, N):
    r = kv.reader("left")
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.kv_l)) + tl.load(tle.gpu.local_ptr(res.slot.kv_r))
        r.release(t)
        tl.store(x_ptr + tl.arange(0, 64), v)


def right(kv, x_ptr, N):
    r = kv.reader("right", fields=("kv_r",))
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.kv_r))
        r.release(t)
        tl.store(x_ptr + 64 + tl.arange(0, 64), v)

# CHECK: pipe kv capacity=2 readers=(left, right) fields=(kv_l: fp32[2, 64], kv_r: fp32[2, 64]) attrs {barriers = (
# CHECK: BarrierDecl(name = 'kv_full0', kind = 'full', group = 0, fields = ('kv_l',), stages = 2, count = 1
# CHECK: BarrierDecl(name = 'kv_empty0', kind = 'empty', group = 0, fields = ('kv_l',), stages = 2, count = 1, arrive = (BarrierRole(partition = 'left', verb = 'release', reader = 'left'),)
# CHECK: BarrierDecl(name = 'kv_empty1', kind = 'empty', group = 1, fields = ('kv_r',), stages = 2, count = 2, arrive = (BarrierRole(partition = 'left', verb = 'release', reader = 'left'), BarrierRole(partition = 'right', verb = 'release', reader = 'right'))
# CHECK: partition produce
# the writer's acquire waits on both empty arrays; its commit arrives on both full arrays
# CHECK: kv.writer.acquire(t) attrs {
# CHECK: waits = (BarrierWait(barrier = 'kv_empty0', parity = index(t // 2 & 1 ^ 1)
# CHECK: kv.writer.commit(t) attrs {arrives = ('kv_full0', 'kv_full1')
# CHECK: partition left
# CHECK: arrives = ('kv_empty0', 'kv_empty1')
# CHECK: partition right
# CHECK: kv.reader[right fields=(kv_r)].wait(t) attrs {
# CHECK: waits = (BarrierWait(barrier = 'kv_full1', parity = index(t // 2 & 1)
# CHECK: kv.reader[right fields=(kv_r)].release(t) attrs {arrives = ('kv_empty1',)
