# RUN: tle-dump -p infer-stages --print-ir --no-locations %s
# A ring of capacity 2 (slot i % 2, phase (i // 2) & 1), a capacity-1 ring (slot 0, phase i & 1)
# and a one-shot pipe (slot 0, waited at parity 0): stage/phase/parity are index expressions over
# the event's affine index (loop variables and params), not strings.
import triton.language as tl

import tle_compiler as tle


@tle.jit
def stages(x_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    one = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, 64], tl.int32))
    q = tle.pipe(capacity=1, one_shot=True, tile=tle.gpu.alloc([1, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, one, q, x_ptr, N)), (consume, (kv, one, q, x_ptr, N))],
                            [4], [232])


def produce(kv, one, q, x_ptr, N):
    wq = q.writer()
    s = wq.acquire(0)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    wq.commit(0)
    w = kv.writer()
    w1 = one.writer()
    for t in range(N):
        slot = w.acquire(2 * t + 1)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(2 * t + 1)
        s1 = w1.acquire(t)
        tl.store(tle.gpu.local_ptr(s1.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w1.commit(t)


def consume(kv, one, q, x_ptr, N):
    rq = q.reader()
    rq.wait(0)
    rq.release(0)
    r = kv.reader()
    r1 = one.reader()
    for t in range(N):
        res = r.wait(2 * t + 1)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(2 * t + 1)
        r1.wait(t)
        r1.release(t)
        tl.store(x_ptr + tl.arange(0, 64), v)

# CHECK: partition produce
# the one-shot pipe: one slot, no parity for the writer (it waits on no barrier)
# CHECK: q.writer.acquire(0) attrs {phase = 0, stage = 0}
# CHECK-NEXT: tl.store
# CHECK-NEXT: q.writer.commit(0) attrs {phase = 0, stage = 0}
# capacity 2 at index 2*t + 1: the acquire waits at ((2t+1) // 2) & 1, complemented
# CHECK: kv.writer.acquire(2 * t + 1) attrs {parity = index((2 * t + 1) // 2 & 1 ^ 1)
# CHECK: kv.writer.commit(2 * t + 1) attrs {phase = index((2 * t + 1) // 2 & 1), stage = index((2 * t + 1) % 2)}
# capacity 1: slot 0, phase t & 1
# CHECK: one.writer.acquire(t) attrs {parity = index(t & 1 ^ 1), phase = index(t & 1), stage = 0}
# CHECK: partition consume
# CHECK: q.reader.wait(0) attrs {parity = 0, phase = 0, stage = 0}
# CHECK-NEXT: q.reader.release(0) attrs {phase = 0, stage = 0}
# the reader waits at the phase itself
# CHECK: kv.reader.wait(2 * t + 1) attrs {parity = index((2 * t + 1) // 2 & 1),
# CHECK-NOT: ^ 1
# CHECK: kv.reader.release(2 * t + 1) attrs {phase =
# CHECK: one.reader.wait(t) attrs {parity = index(t & 1),
# CHECK-NOT: barrier_ops
