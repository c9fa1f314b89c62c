# RUN: tle-dump -p verify-protocol,verify-deadlock --print-ir --no-locations %s
# EXIT: 1
# The producer commits q only after the kv loop, but the consumer waits for q first: for N >= 3
# the producer's third acquire needs a release the consumer never reaches. verify-deadlock writes
# the cycle as a ProtocolError (at the consumer's wait) and the kernel's verdict.
import triton.language as tl

import tle_compiler as tle


@tle.jit
def late_q(x_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    q = tle.pipe(capacity=1, one_shot=True, tile=tle.gpu.alloc([1, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, q, x_ptr, N)), (consume, (kv, q, x_ptr, N))], [4],
                            [232])


def produce(kv, q, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(t)
    wq = q.writer()
    s = wq.acquire(0)
    tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
    wq.commit(0)


def consume(kv, q, x_ptr, N):
    rq = q.reader()
    rq.wait(0)
    rq.release(0)
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(x_ptr + tl.arange(0, 64), v)

# CHECK: kernel late_q(x_ptr, N) num_warps=4 attrs {errors = (ProtocolError(check = 'deadlock', line = 34, message = 'deadlock: the partitions wait for each other in a cycle (when N=3)'),), verdict = ProtocolVerdict(kind = 'rejected', scope = '', checked = (('N', '[0,
# CHECK-NEXT: pipe kv capacity=2
# CHECK-NEXT: pipe q capacity=1 one_shot
# CHECK-NOT: attrs
# CHECK: partition consume
