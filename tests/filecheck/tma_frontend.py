# RUN: tle-dump -p verify-protocol --print-ir --no-locations %S/inputs/tma_tiles.py
# The frontend reads tle.gpu.tma_load(slot.tile, x_desc, [i * BM, 0]) as one KIR op with its
# operands in order (destination slot field, descriptor, offsets as a tuple), between the acquire
# and the commit of its window; the field keeps its constexpr-shaped type.

# CHECK: kernel tiles(x_desc, out_ptr, N, BLOCK_N: constexpr)
# CHECK: pipe kv capacity=2 fields=(tile: bf16[2, 64, BLOCK_N])
# CHECK: partition produce default warps=4 (kv = kv, x_desc = x_desc, N = N)
# CHECK: slot = kv.writer.acquire(i)
# CHECK-NEXT: tle.gpu.tma_load(slot.tile, x_desc, (i * BM, 0))
# CHECK-NEXT: kv.writer.commit(i)
# CHECK: partition consume
# CHECK-NOT: tma_load
# CHECK: res = kv.reader.wait(i)
