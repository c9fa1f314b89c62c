"""The grid guard of tests/gpu/early_return_kernel.py on the GPU: programs past N_PROG return
before the partitions and write nothing (their rows of out keep a sentinel), the others sum
their tiles exactly (tests/test_lowering_early_return.py: the lowering)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("programs,n_prog,n_tiles", [(4, 2, 3), (3, 0, 5), (2, 2, 0), (5, 1, 17)])
def test_programs_past_the_guard_write_nothing(programs, n_prog, n_tiles):
    torch = pytest.importorskip("torch")
    from tests.gpu.early_return_kernel import BM, BN, guarded_ring_sum

    bm, bn = int(BM), int(BN)
    x = torch.randn(max(n_tiles, 1) * bm, bn, device="cuda")
    out = torch.full((programs * bm, bn), 7.0, device="cuda")
    guarded_ring_sum[(programs,)](x, out, n_prog, n_tiles)
    torch.cuda.synchronize()
    want = x[:n_tiles * bm].view(n_tiles, bm, bn).sum(0) if n_tiles else torch.zeros(bm, bn,
                                                                                      device="cuda")
    for p in range(programs):
        rows = out[p * bm:(p + 1) * bm]
        if p < n_prog:
            assert torch.allclose(rows, want, rtol=1e-5, atol=1e-5), p
        else:
            assert (rows == 7.0).all(), f"program {p} ran past the guard"
