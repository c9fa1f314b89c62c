# RUN: tle-dump -p emit-gluon %S/inputs/ring3.py
# emit-gluon prints the Gluon module: the barrier operations materialize-barriers put on the events,
# spelled with the index as the generated code computes it (slot (t) % 3, parity
# (((t) // 3) & 1) ^ 1 for the acquire, ((t) // 3) & 1 for the wait), and the arrays with their
# counts.

# CHECK: @gluon.jit
# CHECK-NEXT: def produce(x_ptr, N, kv_tile, kv_full0, kv_empty0, kv_closed):
# CHECK: for t in range(N):
# CHECK-NEXT: _kv_s1 = (t) % 3
# CHECK-NEXT: mbarrier.wait(kv_empty0.index(_kv_s1), (((t) // 3) & 1) ^ 1)
# CHECK: _kv_s3 = (t) % 3
# CHECK: mbarrier.arrive(kv_full0.index(_kv_s3), count=1)
# CHECK: _kv_s4 = (N) % 3
# CHECK-NEXT: mbarrier.wait(kv_empty0.index(_kv_s4), (((N) // 3) & 1) ^ 1)
# CHECK: def consume(
# CHECK: mbarrier.wait(kv_full0.index(_kv_s1), ((t) // 3) & 1)
# CHECK-NOT: ^ 1
# CHECK: mbarrier.arrive(kv_empty0.index(_kv_s3), count=1)
# CHECK: def ring(x_ptr, out_ptr, N):
# CHECK: kv_full0 = gl.allocate_shared_memory(gl.int64, [3, 1], mbarrier.MBarrierLayout())
# CHECK: mbarrier.init(kv_empty0.index(2), count=1)  # kv.empty[g0][2] partition
# CHECK: gl.warp_specialize([
