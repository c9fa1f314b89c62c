"""SPSC ring: a producer streams [BM, BN] tiles of x through a STAGES-deep ring; one consumer sums
them and stores the sum. The producer closes the stream after the last tile (``w.close``), and the
consumer consumes that closing slot too: every committed index is waited and released."""

import triton.language as tl

import tle_compiler as tle

STAGES = 3
BM: tl.constexpr = 64
BN = tl.constexpr(64)


@tle.jit
def ring_sum(x_ptr, out_ptr, stride_x, N_TILES):
    tle.assume(N_TILES >= 0)  # close(N_TILES) needs a non-negative index
    ring = tle.pipe(capacity=STAGES, tile=tle.gpu.alloc([STAGES, BM, BN], tl.float32))
    tle.gpu.warp_specialize([(load_tiles, (ring, x_ptr, stride_x, N_TILES)),
                             (sum_tiles, (ring, out_ptr, N_TILES))], [4], [232])


def load_tiles(ring, x_ptr, stride_x, N_TILES):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    w = ring.writer()
    for t in tl.range(0, N_TILES):
        ptrs = x_ptr + (t * BM + offs_m)[:, None] * stride_x + offs_n[None, :]
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(ptrs))
        w.commit(t)
    w.close(N_TILES)


def sum_tiles(ring, out_ptr, N_TILES):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    r = ring.reader()
    acc = tl.zeros([BM, BN], tl.float32)
    for t in range(N_TILES):
        res = r.wait(t)
        acc += tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
    last = r.wait(N_TILES)  # the closing slot: last.is_closed is true
    acc = tl.where(last.is_closed, acc, 0.0)
    r.release(N_TILES)
    tl.store(out_ptr + offs_m[:, None] * BN + offs_n[None, :], acc)


DEFAULT_CONFIG = {
    # x [N_TILES * BM, stride_x] fp32, out [BM, BN] fp32 (tle-dump --ttgir uses these types)
    "signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride_x": "i32", "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
