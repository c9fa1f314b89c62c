"""What sharing the seesaw's gathers between a CTA pair would need from Triton 3.6 and the H200
(docs/kernels.md, "TLE-FlashMLA seesaw"), checked on the GPU:

1. **Per-row TMA gathers.** A kv row piece of 64 bf16 columns (128 B) loaded by one TMA box [1, 64]
   of a 128-byte-swizzled tensor map into row i of a [64, 64] tile lands where the tile's 128B
   swizzle puts it (the hardware swizzles by shared-memory address), so the tile reads back as the
   gathered rows and works as a wgmma operand; an out-of-range row (negative, >= s_kv) is zero-filled,
   and every box still counts its 128 bytes toward the barrier's transaction count. Gluon refuses a
   TMA into a row slice of the swizzled tile ("splitting along the swizzling pattern"), so the rows
   are addressed through an unswizzled [64, 1, 64] alias of the same buffer.
2. **Clusters without cluster layouts.** A kernel compiled for one CTA (num_ctas=1) and launched with
   Triton's launcher told num_ctas=2 (the packed metadata) runs in clusters of two CTAs:
   %cluster_ctarank is 0/1 and %clusterid.x = program_id // 2. (Compiling with num_ctas=2 instead
   needs every layout to carry a 2-CTA CGA layout.)
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
pytest.importorskip("triton.experimental.gluon")

from triton.experimental import gluon  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier,  # noqa: E402
                                                              tma, warpgroup_mma,
                                                              warpgroup_mma_wait)

SW128 = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
ROWS = gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=16, rank=2)


@gluon.jit
def _row_gather(desc, idx_ptr, q_ptr, out_ptr, s_ptr, NR: gl.constexpr):
    tile = gl.allocate_shared_memory(gl.bfloat16, [NR, 64], SW128)
    qs = gl.allocate_shared_memory(gl.bfloat16, [64, 64], SW128)
    bar = gl.allocate_shared_memory(gl.int64, [1, 1], mbarrier.MBarrierLayout())
    mbarrier.init(bar.index(0), count=1)
    fence_async_shared()
    mbarrier.expect(bar.index(0), NR * 128)
    rows = tile._reinterpret(gl.bfloat16, [NR, 1, 64], ROWS)  # row i at byte offset i * 128
    for i in gl.static_range(NR):
        tma.async_copy_global_to_shared(desc, [gl.load(idx_ptr + i), 0], bar.index(0),
                                        rows.index(i))
    BL: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    offs_r = gl.arange(0, 64, layout=gl.SliceLayout(1, BL))
    offs_c = gl.arange(0, 64, layout=gl.SliceLayout(0, BL))
    qs.store(gl.load(q_ptr + offs_r[:, None] * 64 + offs_c[None, :]))
    fence_async_shared()
    mbarrier.wait(bar.index(0), 0)
    gl.store(out_ptr + gl.arange(0, NR, layout=gl.SliceLayout(1, BL))[:, None] * 64
             + offs_c[None, :], tile.load(BL))
    ACC: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                  instr_shape=[16, NR, 16])
    s = warpgroup_mma(qs, tile.permute((1, 0)), gl.zeros([64, NR], gl.float32, layout=ACC),
                      is_async=True)
    s = warpgroup_mma_wait(0, deps=[s])
    offs_m = gl.arange(0, 64, layout=gl.SliceLayout(1, ACC))
    offs_n = gl.arange(0, NR, layout=gl.SliceLayout(0, ACC))
    gl.store(s_ptr + offs_m[:, None] * NR + offs_n[None, :], s)


@gluon.jit
def _cluster_ids(out_ptr):
    L: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
    z = gl.full([128], 0, gl.int32, layout=L)
    rank = gl.inline_asm_elementwise("mov.u32 $0, %cluster_ctarank;", "=r,r", [z],
                                     dtype=gl.int32, is_pure=True, pack=1)
    cid = gl.inline_asm_elementwise("mov.u32 $0, %clusterid.x;", "=r,r", [z],
                                    dtype=gl.int32, is_pure=True, pack=1)
    first = gl.arange(0, 128, layout=L) == 0
    pid = gl.program_id(0)
    gl.store(out_ptr + 3 * pid + z, rank, mask=first)
    gl.store(out_ptr + 3 * pid + 1 + z, cid, mask=first)
    gl.store(out_ptr + 3 * pid + 2 + z, z + pid, mask=first)


def test_per_row_tma_boxes_land_in_the_swizzled_tile():
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    g = torch.Generator(device="cuda").manual_seed(0)
    s_kv, nr = 1000, 64
    kv = (torch.randn(s_kv, 576, device="cuda", generator=g) / 10).bfloat16()
    idx = torch.randint(0, s_kv, (nr,), device="cuda", dtype=torch.int32, generator=g)
    idx[[5, 9, 17, 33]] = torch.tensor([s_kv, -1, 2**31 - 1, -2**31], device="cuda",
                                       dtype=torch.int32)
    idx[40] = idx[41]  # a duplicate
    valid = (idx >= 0) & (idx < s_kv)
    want = torch.where(valid[:, None], kv[idx.clamp(0, s_kv - 1).long(), :64],
                       torch.zeros((), dtype=kv.dtype, device="cuda"))
    q = (torch.randn(64, 64, device="cuda", generator=g) / 10).bfloat16()
    out = torch.full((nr, 64), float("nan"), device="cuda").bfloat16()
    s = torch.full((64, nr), float("nan"), device="cuda")
    desc = TensorDescriptor(kv, [s_kv, 576], [576, 1], [1, 64], SW128)
    _row_gather[(1,)](desc, idx, q, out, s, NR=nr, num_warps=4)
    torch.cuda.synchronize()
    assert torch.equal(out, want), (out != want).any(1).nonzero().flatten().tolist()
    torch.testing.assert_close(s, q.float() @ want.float().T, atol=1e-5, rtol=1e-5)


def test_one_cta_binary_launches_in_clusters_of_two():
    out = torch.full((8, 3), -1, device="cuda", dtype=torch.int32)
    ck = _cluster_ids[(8,)](out, num_warps=4)  # an ordinary launch compiles it
    torch.cuda.synchronize()
    assert out[:, 0].tolist() == [0] * 8 and out[:, 1].tolist() == list(range(8))
    meta = list(ck.packed_metadata)  # (num_warps, num_ctas, shared): what the launcher reads
    assert meta[1] == 1
    ck.packed_metadata = (meta[0], 2, meta[2])
    out.fill_(-1)
    ck[(4, 1, 1)](out)  # 4 clusters of 2 CTAs
    torch.cuda.synchronize()
    assert out[:, 2].tolist() == list(range(8))
    assert out[:, 0].tolist() == [0, 1] * 4
    assert out[:, 1].tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
