# expect: error unsupported-expression line 36
"""A partition parameter bound to a literal and counted up in the loop: Python waits 0, 1, 2, ...
but the parameter, read in place as the literal, made every iteration wait index 0 (a misread
kernel, and a wrong reason to reject it). A counter carried by a loop is no affine index; and
before that, a parameter given a number is a constexpr in Triton 3.6, which `i += 1` in a loop
makes a tensor: Triton refuses the loop ("Loop carried variable i changed type"), and so does the
frontend, at the increment."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def ring(x_ptr, N):
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, x_ptr, N, 0))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for t in range(N):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * 64 + tl.arange(0, 64)))
        w.commit(t)


def consume(kv, x_ptr, N, i):
    r = kv.reader()
    for t in range(N):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(i)
        tl.store(x_ptr + t * 64 + tl.arange(0, 64), v + 1)
        i += 1
