# RUN: tle-dump -p verify-protocol,verify-deadlock --print-ir --no-locations %s
# A ring of capacity 3 closed after N tiles: verified for every N >= 0 by the cutoff theorem; the
# kernel carries the proof's verdict (kind, scope, values checked, argument) and no errors.
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

# CHECK: kernel ring(x_ptr, out_ptr, N) num_warps=4 attrs {verdict = ProtocolVerdict(kind = 'proved', scope = 'every value of N (N >= 0)'

# CHECK-NOT: ProtocolError
# CHECK: partition consume
