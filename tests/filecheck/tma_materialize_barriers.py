# RUN: tle-dump -p materialize-barriers --no-locations %repo/tle_kernels/gpu_tests/tma_ring.py
# materialize-barriers gives the commit of a TMA-filled slot its expect-tx: the arrive on the
# full barrier carries tx_bytes = 32768 (one [64, 256] bf16 slot, infer-barriers' expect_tx); the
# allocation still counts one partition arrival (the lowering scales it by the arrive unit). The
# close of tma_mixed copies nothing, so its arrive declares no bytes; releases never do.

# CHECK: kernel tma_ring
# CHECK: fence = None, expect_tx = 32768)
# CHECK: MBarrierAlloc(barrier = 'ring_full0', size = 2, count = 1, fence = False)
# CHECK: tle.gpu.tma_load(slot.tile, x_desc, ((first + t) * BM, COL0))
# CHECK-NEXT: ring.writer.commit(t) attrs {arrives = ('ring_full0',), barrier_ops = (MBarrierArrive(barrier = 'ring_full0', slot = index(t % 2), count = 1, tx_bytes = 32768),)
# CHECK: ring.reader.release(t) attrs {arrives = ('ring_empty0',), barrier_ops = (MBarrierArrive(barrier = 'ring_empty0', slot = index(t % 2), count = 1),)
# CHECK: kernel tma_mixed
# CHECK: ring.writer.commit(t) attrs {arrives = ('ring_full0',), barrier_ops = (MBarrierArrive(barrier = 'ring_full0', slot = index(t % 3), count = 1, tx_bytes = 32768),)
# CHECK: ring.writer.close(N_TILES)
# CHECK-NOT: tx_bytes
# CHECK: MBarrierArrive(barrier = 'ring_full0', slot = index(N_TILES % 3), count = 1))
