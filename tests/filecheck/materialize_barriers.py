# RUN: tle-dump -p materialize-barriers --no-locations %S/inputs/ring3.py
# materialize-barriers (a lowering pass: tle-dump prints the IR after it) runs its prerequisites
# infer-stages and infer-barriers, then gives every pipe its mbarrier allocations and every event
# its barrier operations in emission order: which array, which slot expression, which parity.

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
