"""close / is_closed: the producer commits N_TILES tiles, then closes the stream at index N_TILES.

The consumer waits every index 0..N_TILES. For each it records is_closed (flags[t], 1 = closed) and
counts the tiles it saw that were not closed (count; equals N_TILES when correct); it copies the
tiles of the open slots to y. The closing slot holds no data, it is only waited and released.
Capacity 2, so close(N) also exercises the acquire parity of the closing stage."""

import triton.language as tl

import tle_compiler as tle

BM = tl.constexpr(64)
BN = tl.constexpr(64)


@tle.jit(num_warps=4)
def close_count(x_ptr, y_ptr, flags_ptr, count_ptr, N_TILES):
    tle.assume(N_TILES >= 0)  # close(N_TILES) needs a non-negative index
    ring = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N_TILES)),
                             (consume, (ring, y_ptr, flags_ptr, count_ptr, N_TILES))],
                            [4], [232])


def produce(ring, x_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    w = ring.writer()
    for t in range(N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM * BN + offs))
        w.commit(t)
    w.close(N_TILES)


def consume(ring, y_ptr, flags_ptr, count_ptr, N_TILES):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    lane = tl.arange(0, BN)
    ones = tl.full([BN], 1, tl.int32)
    zeros = tl.zeros([BN], tl.int32)
    count = tl.zeros([BN], tl.int32)
    r = ring.reader()
    for t in range(N_TILES):
        res = r.wait(t)
        closed = tl.where(res.is_closed, ones, zeros)
        tile = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(t)
        tl.store(flags_ptr + t * BN + lane, closed)
        count = count + (1 - closed)
        tl.store(y_ptr + t * BM * BN + offs, tile)
    last = r.wait(N_TILES)
    tl.store(flags_ptr + N_TILES * BN + lane, tl.where(last.is_closed, ones, zeros))
    r.release(N_TILES)
    tl.store(count_ptr + lane, count)


DEFAULT_CONFIG = {
    # x, y: [N_TILES, BM, BN] int32; flags: [N_TILES + 1, BN] int32; count: [BN] int32; grid (1,)
    "signature": {"x_ptr": "*i32", "y_ptr": "*i32", "flags_ptr": "*i32", "count_ptr": "*i32",
                  "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
