"""SPMC pipes with field views.

``spmc2``: one producer, a capacity-2 pipe with fields (a, b) and readers (left, right).
  left  sees only a (fields=("a",)) and writes out0[t] = a;
  right sees a and b and writes out1[t] = a + b; it keeps tile t until tile t + 1 has arrived
  (releases t - 1 after waiting t), so the producer runs at most one tile ahead of it.
``spmc3``: a capacity-3 pipe with fields (a, b, c) and readers (r0, r1, r2), two field groups:
  r0 sees a            -> out0[t] = a
  r1 sees b, c         -> out1[t] = b - c
  r2 sees a, b, c      -> out2[t] = a + b + c
x is [N_TILES, 3, BM, BN] int32: tile t of field f is x[t, f] (spmc2 uses fields 0 and 1)."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def spmc2(x_ptr, out0_ptr, out1_ptr, N_TILES):
    kv = tle.pipe(capacity=2, readers=("left", "right"),
                  a=tle.gpu.alloc([2, BM, BN], tl.int32),
                  b=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce2, (kv, x_ptr, N_TILES)),
                             (left, (kv, out0_ptr, N_TILES)),
                             (right, (kv, out1_ptr, N_TILES))],
                            [4, 4], [232, 168])


def produce2(kv, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = kv.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(x_ptr + (t * 3 + 0) * BM * BN + offs))
        tl.store(tle.gpu.local_ptr(slot.b), tl.load(x_ptr + (t * 3 + 1) * BM * BN + offs))
        w.commit(t)


def left(kv, out0_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = kv.reader("left", fields=("a",))
    for t in range(N_TILES):
        res = r.wait(t)
        tl.store(out0_ptr + t * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.a)))
        r.release(t)


def right(kv, out1_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = kv.reader("right")
    for t in range(N_TILES):
        res = r.wait(t)
        s = tl.load(tle.gpu.local_ptr(res.slot.a)) + tl.load(tle.gpu.local_ptr(res.slot.b))
        tl.store(out1_ptr + t * BM * BN + offs, s)
        if t > 0:
            r.release(t - 1)
    if N_TILES > 0:
        r.release(N_TILES - 1)


@tle.jit(num_warps=4)
def spmc3(x_ptr, out0_ptr, out1_ptr, out2_ptr, N_TILES):
    abc = tle.pipe(capacity=3, readers=("r0", "r1", "r2"),
                   a=tle.gpu.alloc([3, BM, BN], tl.int32),
                   b=tle.gpu.alloc([3, BM, BN], tl.int32),
                   c=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce3, (abc, x_ptr, N_TILES)),
                             (read_a, (abc, out0_ptr, N_TILES)),
                             (read_bc, (abc, out1_ptr, N_TILES)),
                             (read_abc, (abc, out2_ptr, N_TILES))],
                            [4, 4, 4], [120, 120, 120])


def produce3(abc, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = abc.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(x_ptr + (t * 3 + 0) * BM * BN + offs))
        tl.store(tle.gpu.local_ptr(slot.b), tl.load(x_ptr + (t * 3 + 1) * BM * BN + offs))
        tl.store(tle.gpu.local_ptr(slot.c), tl.load(x_ptr + (t * 3 + 2) * BM * BN + offs))
        w.commit(t)


def read_a(abc, out0_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = abc.reader("r0", fields=("a",))
    for t in range(N_TILES):
        res = r.wait(t)
        tl.store(out0_ptr + t * BM * BN + offs, tl.load(tle.gpu.local_ptr(res.slot.a)))
        r.release(t)


def read_bc(abc, out1_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = abc.reader("r1", fields=("b", "c"))
    for t in range(N_TILES):
        res = r.wait(t)
        d = tl.load(tle.gpu.local_ptr(res.slot.b)) - tl.load(tle.gpu.local_ptr(res.slot.c))
        r.release(t)
        tl.store(out1_ptr + t * BM * BN + offs, d)


def read_abc(abc, out2_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    r = abc.reader("r2")
    for t in range(N_TILES):
        res = r.wait(t)
        s = (tl.load(tle.gpu.local_ptr(res.slot.a)) + tl.load(tle.gpu.local_ptr(res.slot.b))
             + tl.load(tle.gpu.local_ptr(res.slot.c)))
        r.release(t)
        tl.store(out2_ptr + t * BM * BN + offs, s)


DEFAULT_CONFIG = {  # one config per kernel (the types tests/gpu/cases.py launches them with)
    # x: [N_TILES, 3, BM, BN] int32; outK: [N_TILES, BM, BN] int32; grid (1,)
    "spmc2": {
        "signature": {"x_ptr": "*i32", "out0_ptr": "*i32", "out1_ptr": "*i32", "N_TILES": "i32"},
        "constexprs": {}, "num_warps": 4, "grid": (1,),
    },
    "spmc3": {
        "signature": {"x_ptr": "*i32", "out0_ptr": "*i32", "out1_ptr": "*i32", "out2_ptr": "*i32",
                      "N_TILES": "i32"},
        "constexprs": {}, "num_warps": 4, "grid": (1,),
    },
}
