# expect: ok
"""The consumer reads res.is_closed before release(t), while it holds the slot the closed flag
lives in; the flag of the last index is read inside its window too."""
import triton.language as tl

import tle_compiler as tle

STAGES = 2
BM: tl.constexpr = 64


@tle.jit
def ring_sum(x_ptr, out_ptr, N_TILES):
    tle.assume(N_TILES >= 0)
    ring = tle.pipe(capacity=STAGES, tile=tle.gpu.alloc([STAGES, BM], tl.float32))
    tle.gpu.warp_specialize([(load_tiles, (ring, x_ptr, N_TILES)),
                             (sum_tiles, (ring, out_ptr, N_TILES))], [4], [232])


def load_tiles(ring, x_ptr, N_TILES):
    w = ring.writer()
    for t in tl.range(0, N_TILES):
        slot = w.acquire(t)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + t * BM + tl.arange(0, BM)))
        w.commit(t)
    w.close(N_TILES)


def sum_tiles(ring, out_ptr, N_TILES):
    r = ring.reader()
    acc = tl.zeros([BM], tl.float32)
    for t in range(N_TILES):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        acc += tl.where(res.is_closed, 0.0, v)
        r.release(t)
    last = r.wait(N_TILES)
    done = last.is_closed
    r.release(N_TILES)
    tl.store(out_ptr + tl.arange(0, BM), acc)


DEFAULT_CONFIG = {
    "signature": {"x_ptr": "*fp32", "out_ptr": "*fp32", "N_TILES": "i32"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
