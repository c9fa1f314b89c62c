# expect: ok
"""`if t % 2:` is `if t % 2 != 0:` (a remainder's truth, the Triton idiom): the consumer hands the
slots back in pairs, after each odd tile, and the last one after the loop when N is odd."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    tle.assume(0 <= N <= 1048576)  # rows t * 64 stay in int32 (past 2 ** 25 they wrap)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
        if t % 2:
            r.release(t - 1)
            r.release(t)
    if N % 2:
        r.release(N - 1)
