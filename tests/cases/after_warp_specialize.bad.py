# expect: error bad-warp-specialize line 15
"""An epilogue after warp_specialize that waits the last tile again: the kernel IR holds the
prologue and the partitions only, so reading it as if the kernel ended at warp_specialize would
verify (and compile) a kernel without the wait that hangs (index N is never committed)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, out_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N))], [4], [232])
    r = kv.reader()
    res = r.wait(N)
    tl.store(out_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))


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
        r.release(t)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
