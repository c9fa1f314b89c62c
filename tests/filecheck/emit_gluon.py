# RUN: tle-dump -p emit-gluon %s
# emit-gluon prints the Gluon module: the barrier operations materialize-barriers put on the events,
# spelled with the index as the generated code computes it (slot (t) % 3, parity
# (((t) // 3) & 1) ^ 1 for the acquire, ((t) // 3) & 1 for the wait), and the arrays with their
# counts.
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
