# RUN: tle-dump -p verify-protocol --print-ir --no-locations %s
# EXIT: 1
# The writer skips odd indices (t % 2 on a runtime t is C's remainder: -1 for odd t < 0), so the
# reader waits indices that are never committed: verify-protocol writes the fault as a
# ProtocolError and the rejection as the kernel's verdict.
import triton.language as tl

import tle_compiler as tle


@tle.jit
def skipping(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(-4, N):
        if t % 2 == 1:
            slot = w.acquire(t + 4)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
            w.commit(t + 4)


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(N + 4):
        if t % 2 == 1:
            res = r.wait(t)
            v = tl.load(tle.gpu.local_ptr(res.slot.tile))
            r.release(t)
            tl.store(x_ptr + t * 64 + tl.arange(0, 64), v)

# CHECK: kernel skipping(x_ptr, N) num_warps=4 attrs {errors = (ProtocolError(check = 'wait-never-committed', line = 30, message = "the reader waits index 1 of pipe 'kv' (wait(t)) that the writer never commits (when N=0, t=1)"),), verdict = ProtocolVerdict(kind = 'rejected'
# CHECK-NEXT: pipe kv capacity=2
# verify-protocol writes nothing on the events
# CHECK-NOT: attrs
# CHECK: partition consume
