"""SPSC rings of capacity 1, 2, 3 and 4 (one kernel each, sharing the partition functions): the
producer copies N_TILES int32 [BM, BN] tiles of x through the ring, the consumer writes them to y
unchanged. One program per row of tiles: program p copies x[p, 0:N_TILES] to y[p, 0:N_TILES].

Trip counts 0 (nothing written), 1, C, C + 1 and large ones cover: no event at all, a ring never
wrapped, exactly full, the first wrap (phase flip), and many phase flips."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def ring_c1(x_ptr, y_ptr, N_TILES):
    ring = tle.pipe(capacity=1, tile=tle.gpu.alloc([1, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N_TILES)),
                             (consume, (ring, y_ptr, N_TILES))],
                            [4], [232])


@tle.jit(num_warps=4)
def ring_c2(x_ptr, y_ptr, N_TILES):
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N_TILES)),
                             (consume, (ring, y_ptr, N_TILES))],
                            [4], [232])


@tle.jit(num_warps=4)
def ring_c3(x_ptr, y_ptr, N_TILES):
    ring = tle.pipe(capacity=3, tile=tle.gpu.alloc([3, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N_TILES)),
                             (consume, (ring, y_ptr, N_TILES))],
                            [4], [232])


@tle.jit(num_warps=4)
def ring_c4(x_ptr, y_ptr, N_TILES):
    ring = tle.pipe(capacity=4, tile=tle.gpu.alloc([4, BM, BN], tl.int32))
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


KERNELS = {1: "ring_c1", 2: "ring_c2", 3: "ring_c3", 4: "ring_c4"}  # capacity -> kernel

DEFAULT_CONFIG = {
    # x, y: [P, N_TILES, BM, BN] int32 contiguous; grid (P,)
    "signature": {"x_ptr": "*i32", "y_ptr": "*i32", "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": ("P",),
}
