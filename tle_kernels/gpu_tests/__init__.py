"""TLE kernels exercised by the GPU tests (tests/gpu/): small, simple pipe protocols whose outputs
are compared element-exact (or, for attention, to a bf16 tolerance) against torch.

Every module is a regular TLE kernel file: module-level partition functions, ``tl.*`` math,
``tle.gpu.local_ptr(slot.field)`` loads and stores, and a ``DEFAULT_CONFIG`` (signature,
constexprs, num_warps) that applies to every kernel of the module (or one per kernel, keyed by
its name). ``tle-dump FILE`` verifies each.

=================  =========================================================================
module             what a run checks
=================  =========================================================================
spsc_ring          int32 64x64 tiles copied through an SPSC ring of capacity 1, 2, 3 or 4
ring_stages        the same ring with capacity=STAGES, a constexpr: lowered per launch's STAGES
spmc               2 and 3 readers with field views; one reader releases late
one_shot           a tile staged once (one_shot) and read by two readers, beside a stream
close              close(N) after N tiles: is_closed is false N times, then true
chain              A -> B (+1) -> C across three partitions
seesaw             two consumers swap values through two capacity-1 pipes every iteration
attention          Q one_shot, K/V capacity-2 pipe, S = QK^T, online softmax (exp2), O += PV
acc_store          a wgmma result stored as bf16 / fp16 (16-byte quad-transpose stores, and their
                   2-byte fallback at odd offsets) and as fp32 (plain stores)
tma_ring           bf16 tiles of a strided 2-D tensor TMA-copied into a ring (tle.gpu.tma_load;
                   the commit's expect-tx), alone and beside a register-stored field and a close
slot_overlap       wgmmas in flight while another slot of their ring is stored into (a
                   partition refilling the ring it reads) or released (pipelined attention)
=================  =========================================================================
"""

MODULES = ("spsc_ring", "ring_stages", "spmc", "one_shot", "close", "chain", "seesaw", "attention", "acc_store",
           "tma_ring", "slot_overlap")
