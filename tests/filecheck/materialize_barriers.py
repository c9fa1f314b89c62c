# RUN: tle-dump -p materialize-barriers --no-locations %s
# materialize-barriers (a lowering pass: tle-dump prints the IR after it) runs its prerequisites
# infer-stages and infer-barriers, then gives every pipe its mbarrier allocations and every event
# its barrier operations in emission order: which array, which slot expression, which parity.
import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, out_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=3, tile=tle.gpu.alloc([3, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, out_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)
    w.close(N)


def consume(kv, out_ptr, N):
    r = kv.reader()
    acc = tl.zeros([64], tl.float32)
    for t in range(N):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    r.wait(N)
    r.release(N)
    tl.store(out_ptr + tl.arange(0, 64), acc)

# CHECK: pipe kv capacity=3
# CHECK: mbarriers = (MBarrierAlloc(barrier = 'kv_full0', size = 3, count = 1, fence = False), MBarrierAlloc(barrier = 'kv_empty0', size = 3, count = 1, fence = False))
# CHECK: partition produce
# CHECK: slot = kv.writer.acquire(t) attrs {barrier_ops = (MBarrierWait(barrier = 'kv_empty0', slot = index(t % 3), parity = index(t // 3 & 1 ^ 1)),)
# CHECK-NEXT: tl.store
# CHECK-NEXT: kv.writer.commit(t) attrs {arrives = ('kv_full0',), barrier_ops = (MBarrierArrive(barrier = 'kv_full0', slot = index(t % 3), count = 1),)
# close: the acquire's wait, then the commit's arrive, at index N
# CHECK: kv.writer.close(N) attrs {arrives = ('kv_full0',), barrier_ops = (MBarrierWait(barrier = 'kv_empty0', slot = index(N % 3), parity = index(N // 3 & 1 ^ 1)),
# CHECK: MBarrierArrive(barrier = 'kv_full0', slot = index(N % 3), count = 1))
# CHECK: partition consume
# CHECK: kv.reader.wait(t) attrs {barrier_ops = (MBarrierWait(barrier = 'kv_full0', slot = index(t % 3), parity = index(t // 3 & 1)),)
# CHECK: kv.reader.release(t) attrs {arrives = ('kv_empty0',), barrier_ops = (MBarrierArrive(barrier = 'kv_empty0'
