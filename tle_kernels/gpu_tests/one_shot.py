"""A one_shot pipe read by two readers, beside a stream.

The producer stages tile q once (one_shot pipe ``q``, readers (r0, r1)), then streams N_TILES
tiles of x through an SPSC capacity-2 pipe ``xs`` to r0.
  r0: out0[t] = q + x[t] for every t (q read once, reused from registers); releases q.
  r1: out1 = 2 * q, read once; does not release q (optional on one_shot pipes).
int32 data: exact."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def one_shot_two_readers(q_ptr, x_ptr, out0_ptr, out1_ptr, N_TILES):
    q = tle.pipe(capacity=1, one_shot=True, readers=("r0", "r1"),
                 tile=tle.gpu.alloc([1, BM, BN], tl.int32))
    xs = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(stage, (q, xs, q_ptr, x_ptr, N_TILES)),
                             (r0, (q, xs, out0_ptr, N_TILES)),
                             (r1, (q, out1_ptr))],
                            [4, 4], [232, 168])


def stage(q, xs, q_ptr, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    qw = q.writer()
    qslot = qw.acquire(0)
    tl.store(tle.gpu.local_ptr(qslot.tile), tl.load(q_ptr + offs))
    qw.commit(0)
    w = xs.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM * BN + offs))
        w.commit(t)


def r0(q, xs, out0_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    qr = q.reader("r0")
    qres = qr.wait(0)
    qt = tl.load(tle.gpu.local_ptr(qres.slot.tile))
    qr.release(0)
    r = xs.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        x = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(out0_ptr + t * BM * BN + offs, qt + x)


def r1(q, out1_ptr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    qr = q.reader("r1")
    qres = qr.wait(0)
    qt = tl.load(tle.gpu.local_ptr(qres.slot.tile))
    tl.store(out1_ptr + offs, qt * 2)


DEFAULT_CONFIG = {
    # q: [BM, BN] int32; x, out0: [N_TILES, BM, BN] int32; out1: [BM, BN] int32; grid (1,)
    "signature": {"q_ptr": "*i32", "x_ptr": "*i32", "out0_ptr": "*i32", "out1_ptr": "*i32",
                  "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
