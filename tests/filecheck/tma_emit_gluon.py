# RUN: tle-dump -p emit-gluon --kernel tma_mixed %repo/tle_kernels/gpu_tests/tma_ring.py
# emit-gluon spells a TMA copy as Gluon's tma.async_copy_global_to_shared into the slot, completing
# on the full barrier of the field's group at the slot's stage; the commit arrives once for the
# register-stored rows (bar.sync + elected arrive) and once with the expect-tx of the window's
# bytes; the close's expect declares 0 bytes. The consumer (the default partition here), whose
# slots no wgmma reads, fences nothing after its waits. The ring is NVMMA-swizzled (the
# descriptor's layout, which the lowering completes the signature with), the rows field is not,
# and the full barriers count 2 arrivals per phase.

# CHECK: from triton.experimental.gluon.language.nvidia.hopper import tma
# CHECK: def consume_mixed(
# CHECK-NOT: fence_async_shared
# CHECK: def produce_mixed(x_desc, N_TILES, COL0, ring_tile, ring_rows, ring_full0, ring_empty0, ring_closed):
# CHECK: mbarrier.wait(ring_empty0.index(_ring_s1), (((t) // 3) & 1) ^ 1)
# CHECK-NEXT: tma.async_copy_global_to_shared(x_desc, [((first + t) * BM), COL0], ring_full0.index(_ring_s1), ring_tile.index(_ring_s1))
# CHECK-NEXT: ring_rows.index(_ring_s1).store(
# CHECK: mbarrier.arrive(ring_full0.index(_ring_s2), count=1)
# CHECK-NEXT: mbarrier.expect(ring_full0.index(_ring_s2), 32768)
# CHECK: mbarrier.arrive(ring_full0.index(_ring_s3), count=1)
# CHECK-NEXT: mbarrier.expect(ring_full0.index(_ring_s3), 0)
# CHECK: def tma_mixed(
# CHECK: ring_tile = gl.allocate_shared_memory(gl.bfloat16, [3, 64, 256], gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2))
# CHECK-NEXT: ring_rows = gl.allocate_shared_memory(gl.int32, [3, 64], gl.SwizzledSharedLayout(1, 1, 1, [0]))
# CHECK: mbarrier.init(ring_full0.index(0), count=2)  # ring.full[g0][0] tma-partition = 1 x (2: 1 expect-tx + 1 elected)
# CHECK: mbarrier.init(ring_empty0.index(2), count=1)  # ring.empty[g0][2] partition
