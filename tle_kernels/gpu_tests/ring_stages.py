"""An SPSC ring whose capacity is the constexpr STAGES (``tle.pipe(capacity=STAGES, ...)``): the
kernel is read, verified and lowered specialised to the STAGES of each launch, so one kernel
serves the capacities that spsc_ring.py spells out as four. The producer copies N_TILES int32
[BM, BN] tiles of x through the ring, the consumer writes them to y unchanged; program p copies
x[p, 0:N_TILES] to y[p, 0:N_TILES]."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def ring_stages(x_ptr, y_ptr, N_TILES, STAGES: tl.constexpr):
    ring = tle.pipe(capacity=STAGES, tile=tle.gpu.alloc([STAGES, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N_TILES)),
                             (consume, (ring, y_ptr, N_TILES))],
                            [4], [232])


def produce(ring, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    row = x_ptr + tl.program_id(0) * N_TILES * BM * BN
    w = ring.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(row + t * BM * BN + offs))
        w.commit(t)


def consume(ring, y_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    row = y_ptr + tl.program_id(0) * N_TILES * BM * BN
    r = ring.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(row + t * BM * BN + offs, tile)


DEFAULT_CONFIG = {
    # x, y: [P, N_TILES, BM, BN] int32 contiguous; grid (P,)
    "signature": {"x_ptr": "*i32", "y_ptr": "*i32", "N_TILES": "i32", "STAGES": "constexpr"},
    "constexprs": {"STAGES": 2},
    "num_warps": 4,
    "grid": ("P",),
}
