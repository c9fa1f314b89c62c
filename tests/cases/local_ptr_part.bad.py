# expect: error bad-call line 26
"""The slot field is a [2, 64, 64] buffer the writer fills through local_ptr(tile, [0]) and the
reader reads through local_ptr(tile, [1]): part 1 is never written, yet the protocol tracks whole
fields and would count the read as one of a written field. A part of a buffer is refused at its
line (the lowering has no sub-buffer views either)."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit
def parts(x_ptr, y_ptr, N):
    a = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, x_ptr, N)), (consume, (a, y_ptr, N))], [4], [232])


def produce(a, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    wa = a.writer()
    for t in range(N):
        sa = wa.acquire(t)
        tl.store(tle.gpu.local_ptr(sa.tile, [0]), tl.load(x_ptr + offs))
        wa.commit(t)


def consume(a, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ra = a.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(N):
        x = ra.wait(t)
        acc += tl.load(tle.gpu.local_ptr(x.slot.tile, [1]))
        ra.release(t)
    tl.store(y_ptr + offs, acc)
