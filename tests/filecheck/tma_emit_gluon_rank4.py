# RUN: tle-dump -p emit-gluon --kernel tma_pages %repo/tle_kernels/gpu_tests/tma_ring.py
# emit-gluon spells a copy whose offsets outnumber the field's dimensions (a descriptor of higher
# rank, extra box dimensions 1) as Gluon's tma.async_copy_global_to_shared into the slot viewed
# with the descriptor's block shape: `.reshape(kv_desc.block_shape)` of the 2-D slot, the same
# bytes, whose NVMMA layout Triton infers as the descriptor's (rank 4, the ring's 128-byte
# swizzle). The ring itself stays a 2-D NVMMA ring, which the consumer reads as before.

# CHECK: def produce_pages(kv_desc, valid_ptr, N_PAGES, HEAD, COL0, ring_page, ring_full0, ring_empty0):
# CHECK: valid = gl.load(((valid_ptr + first) + t))
# CHECK: mbarrier.wait(ring_empty0.index(_ring_s1), (((t) // 2) & 1) ^ 1)
# CHECK-NEXT: tma.async_copy_global_to_shared(kv_desc, [(first + t), (valid - PAGE), HEAD, COL0], ring_full0.index(_ring_s1), ring_page.index(_ring_s1).reshape(kv_desc.block_shape))
# CHECK: mbarrier.expect(ring_full0.index(_ring_s2), 32768)
# CHECK: def consume_pages(
# CHECK: ring_page.index(_ring_s1).load(
# CHECK-NOT: reshape
# CHECK: def tma_pages(
# CHECK: ring_page = gl.allocate_shared_memory(gl.bfloat16, [2, 64, 256], gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2))
# CHECK: mbarrier.init(ring_full0.index(0), count=1)  # ring.full[g0][0] tma = 1 x (1: 1 expect-tx)
