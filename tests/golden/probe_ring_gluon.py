"""Hand-written Gluon probe (Triton 3.6): an SPSC ring of 64x64 bf16 tiles, global -> smem slot ->
global, between the default partition (producer) and one worker (consumer), capacity 2.

This is the reference the lowering was built from (docs/lowering.md): what the generated code for
tle_kernels/examples/ring.py looks like, reduced to the essentials. Compile it on the CPU with
``python tests/golden/probe_ring_gluon.py``."""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, fence_async_shared

C = gl.constexpr(2)
BM = gl.constexpr(64)
BN = gl.constexpr(64)


@gluon.jit
def producer(x_ptr, N, tile, full, empty):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    offs = gl.arange(0, BM, layout=gl.SliceLayout(1, L))[:, None] * BN + \
        gl.arange(0, BN, layout=gl.SliceLayout(0, L))[None, :]
    for i in range(N):
        s = i % C
        mbarrier.wait(empty.index(s), ((i // C) & 1) ^ 1)   # acquire: a fresh barrier passes parity 1
        tile.index(s).store(gl.load(x_ptr + i * BM * BN + offs))
        mbarrier.arrive(full.index(s), count=1)             # commit


@gluon.jit
def consumer(y_ptr, N, tile, full, empty):
    L: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    offs = gl.arange(0, BM, layout=gl.SliceLayout(1, L))[:, None] * BN + \
        gl.arange(0, BN, layout=gl.SliceLayout(0, L))[None, :]
    for i in range(N):
        s = i % C
        mbarrier.wait(full.index(s), (i // C) & 1)           # wait
        v = tile.index(s).load(L)
        mbarrier.arrive(empty.index(s), count=1)            # release
        gl.store(y_ptr + i * BM * BN + offs, v)


@gluon.jit
def ring_probe(x_ptr, y_ptr, N):
    tile = gl.allocate_shared_memory(gl.bfloat16, [C, BM, BN],
                                     gl.SwizzledSharedLayout(1, 1, 1, [1, 0]))
    full = gl.allocate_shared_memory(gl.int64, [C, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [C, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(C):
        mbarrier.init(full.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)
    fence_async_shared()
    gl.warp_specialize([(producer, (x_ptr, N, tile, full, empty)),
                        (consumer, (y_ptr, N, tile, full, empty))], [4], [232])


if __name__ == "__main__":
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    src = GluonASTSource(ring_probe, {"x_ptr": "*bf16", "y_ptr": "*bf16", "N": "i32"},
                         attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]})
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    print(k.asm["ttgir"])
