# RUN: tle-dump -p verify-protocol,verify-deadlock,infer-barriers --no-locations %repo/tle_kernels/gpu_tests/tma_ring.py
# The protocol view of TMA copies: each is a `PIPE.tma(i, FIELD, BYTES)` access of the writer
# (BYTES: one [64, 256] bf16 slot), checked in its acquire..commit window like any write, and the
# barrier table gives the full barrier's expect-tx: what every commit's arrive declares. A slot
# that also holds register-stored rows keeps its plain write; the close copies nothing.

# CHECK: kernel tma_ring
# CHECK: ring.acquire(t)
# CHECK-NEXT: ring.tma(t, tile, 32768)
# CHECK-NEXT: ring.commit(t)
# CHECK: ring.full[g0][0..1]   1      produce.commit
# CHECK: (tile)  fence=none expect-tx=32768
# CHECK: # verdict: verified for every value of N_TILES
# CHECK: kernel tma_mixed
# CHECK: ring.tma(t, tile, 32768)
# CHECK-NEXT: ring.write(t, rows)
# CHECK-NEXT: ring.commit(t)
# CHECK-NEXT: }
# CHECK-NEXT: ring.close(N_TILES)
# CHECK: ring.full[g0][0..2]   1      produce_mixed.commit, produce_mixed.close
# CHECK: (tile, rows)  fence=none expect-tx=32768
# CHECK: # verdict: verified for every value of N_TILES
