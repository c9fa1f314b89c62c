# expect: ok
"""local_ptr_part.bad with a field per part: the writer fills part0 and the reader reads part0
(whole fields, as the protocol tracks them)."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit
def parts(x_ptr, y_ptr, N):
    a = tle.pipe(capacity=2, part0=tle.gpu.alloc([2, BM, BN], tl.float32),
                 part1=tle.gpu.alloc([2, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(produce, (a, x_ptr, N)), (consume, (a, y_ptr, N))], [4], [232])


def produce(a, x_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    wa = a.writer()
    for t in range(N):
        sa = wa.acquire(t)
        tl.store(tle.gpu.local_ptr(sa.part0), tl.load(x_ptr + offs))
        tl.store(tle.gpu.local_ptr(sa.part1), tl.load(x_ptr + offs))
        wa.commit(t)


def consume(a, y_ptr, N):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    ra = a.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(N):
        x = ra.wait(t)
        acc += tl.load(tle.gpu.local_ptr(x.slot.part1))
        ra.release(t)
    tl.store(y_ptr + offs, acc)
