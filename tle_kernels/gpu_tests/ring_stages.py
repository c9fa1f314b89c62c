"""An SPSC ring whose capacity is the constexpr STAGES (``tle.pipe(capacity=STAGES, ...)``): the
kernel is read, verified and lowered specialised to the STAGES of each launch, so one kernel
serves the capacities that spsc_ring.py spells out as four. The producer copies N_TILES int32
[BM, BN] tiles of x through the ring, the consumer writes them to y unchanged; program p copies
x[p, 0:N_TILES] to y[p, 0:N_TILES]. The partitions are spsc_ring.py's."""

import triton.language as tl

import tle_compiler as tle

from .spsc_ring import BM, BN, consume, produce


@tle.jit(num_warps=4)
def ring_stages(x_ptr, y_ptr, N_TILES, STAGES: tl.constexpr):
    ring = tle.pipe(capacity=STAGES, tile=tle.gpu.alloc([STAGES, BM, BN], tl.int32))
    tle.gpu.warp_specialize([(produce, (ring, x_ptr, N_TILES)),
                             (consume, (ring, y_ptr, N_TILES))],
                            [4], [232])


DEFAULT_CONFIG = {
    # x, y: [P, N_TILES, BM, BN] int32 contiguous; grid (P,)
    "signature": {"x_ptr": "*i32", "y_ptr": "*i32", "N_TILES": "i32", "STAGES": "constexpr"},
    "constexprs": {"STAGES": 2},
    "num_warps": 4,
    "grid": ("P",),
}
