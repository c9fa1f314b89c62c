# RUN: tle-dump -p materialize-barriers --print-ir --no-locations --kernel tma_pages %repo/tle_kernels/gpu_tests/tma_ring.py
# A copy from a rank-4 descriptor (tma_pages: box [1, 64, 1, 256] of a paged tensor into a
# [64, 256] field) is the same KIR op with four offsets, the token one shifted by data (valid -
# PAGE; a coordinate is any integer, negative ones included). The field keeps its 2-D shape and
# the commit's expect-tx is the field's bytes (64 x 256 x 2 = the box's product).

# CHECK: kernel tma_pages(kv_desc, valid_ptr, y_ptr, N_PAGES, HEAD, COL0)
# CHECK: pipe ring capacity=2 fields=(page: bf16[2, 64, 256])
# CHECK: expect_tx = 32768
# CHECK: partition produce_pages default
# CHECK: valid = tl.load(valid_ptr + first + t)
# CHECK: slot = ring.writer.acquire(t)
# CHECK-NEXT: tle.gpu.tma_load(slot.page, kv_desc, (first + t, valid - PAGE, HEAD, COL0))
# CHECK-NEXT: ring.writer.commit(t)
# CHECK: MBarrierArrive(barrier = 'ring_full0', slot = index(t % 2), count = 1, tx_bytes = 32768)
# CHECK: partition consume_pages
# CHECK-NOT: tma_load
