# RUN: tle-dump -p materialize-barriers --no-locations %S/inputs/tma_tiles.py
# The expect-tx follows the field's shape: here the tile is [64, BLOCK_N] bf16 with BLOCK_N = 128
# from DEFAULT_CONFIG (the Pipe IR read generically does not know it; materialize-barriers lowers
# for DEFAULT_CONFIG's constexprs), so every commit declares 16384 bytes, not the 32768 of the
# 256-wide tiles of tle_kernels/gpu_tests/tma_ring.py.

# CHECK: pipe kv capacity=2 fields=(tile: bf16[2, 64, BLOCK_N])
# CHECK-NOT: expect_tx = 32768
# CHECK: expect_tx = 16384
# CHECK: tle.gpu.tma_load(slot.tile, x_desc, (i * BM, 0))
# CHECK-NOT: tx_bytes = 32768
# CHECK: MBarrierArrive(barrier = 'kv_full0', slot = index(i % 2), count = 1, tx_bytes = 16384)
