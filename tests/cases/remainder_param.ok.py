# expect: ok
"""N >= 0 and M = N % 4 (C's remainder of a non-negative value), so M is 0, 1, 2 or 3: the
derived param has that domain. Each partition uses only index M of a capacity-4 pipe, the first use
of stage M at phase 0, for every N."""
import triton.language as tl
import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    tle.assume(N >= 0)
    M = N % 4
    kv = tle.pipe(capacity=4, tile=tle.gpu.alloc([4, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M)), (consume, (kv, x_ptr, M))], [4], [232])


def produce(kv, x_ptr, M):
    w = kv.writer()
    slot = w.acquire(M)
    tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
    w.commit(M)


def consume(kv, x_ptr, M):
    r = kv.reader()
    res = r.wait(M)
    v = tl.load(tle.gpu.local_ptr(res.slot.tile))
    r.release(M)
    tl.store(x_ptr + tl.arange(0, 64), v)
