"""A kernel whose consumer never releases its slots: the verifier rejects it (missing-release), so
the lowering must refuse it, naming the line (tests/test_lowering.py)."""

import triton.language as tl

import tle_compiler as tle


@tle.jit
def leaky(x_ptr, y_ptr, N):
    ring = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N)), (consume, (ring, y_ptr, N))], [4], [200])


def produce(ring, x_ptr, N):
    w = ring.writer()
    for i in range(N):
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.t), tl.load(x_ptr + i * 64 + tl.arange(0, 64)))
        w.commit(i)


def consume(ring, y_ptr, N):
    r = ring.reader()
    for i in range(N):
        res = r.wait(i)
        tl.store(y_ptr + i * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.t)))


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}, "constexprs": {}}
