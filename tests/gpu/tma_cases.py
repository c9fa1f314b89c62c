"""The checks of tle_kernels/gpu_tests/tma_ring.py, written once for two launchers: the real
kernels on CUDA (tests/gpu/test_tma_ring.py) and the CPU emulation (tests/test_tma.py).

The source x is a strided 2-D view, as a per-head slice of a paged KV cache is: head 1 of a
[rows, 3, 576] bf16 tensor, so rows are 3·576 elements apart (3456 bytes, a multiple of 16 as TMA
needs) and the view starts 1152 bytes into the allocation (16-byte aligned). The host passes
``triton.tools.tensor_descriptor.TensorDescriptor(x, shape, strides, [BM, BN])``; the lowering
picks the shared layout. Every bf16 is compared bit for bit, poison (NaN) included: a tile that
never arrived, or arrived late (read before its bytes landed), shows."""

from __future__ import annotations

import torch

BM, BN = 64, 256
HEADS, COLS = 3, 576


def descriptor(x: torch.Tensor):
    """A host tensor descriptor over the 2-D ``x`` with box [BM, BN] (no layout: the lowering
    completes the kernel's type with the ring's)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor(x, list(x.shape), list(x.stride()), [BM, BN])


def source(rows: int, seed: int, device: str) -> torch.Tensor:
    """x: head 1 of a [rows, HEADS, COLS] bf16 tensor of random normals (no NaN, no -0 issues:
    compared as bits)."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(rows, HEADS, COLS, generator=g).to(torch.bfloat16).to(device)
    return base[:, 1, :]


def expected(x: torch.Tensor, total_rows: int, col0: int) -> torch.Tensor:
    """Rows [0, total_rows) and columns [col0, col0 + BN) of x, zeros where x ends."""
    want = torch.zeros(total_rows, BN, dtype=torch.bfloat16, device=x.device)
    r = min(total_rows, x.shape[0])
    c1 = min(col0 + BN, x.shape[1])
    if r > 0 and c1 > col0:
        want[:r, :c1 - col0] = x[:r, col0:c1]
    return want


def _sync(device: str) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _bits_equal(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    bad = got.view(torch.int16) != want.view(torch.int16)
    if bool(bad.any()):
        idx = bad.nonzero()[0].tolist()
        raise AssertionError(f"{what}: {int(bad.sum())} of {got.numel()} elements differ; first "
                             f"at {idx}: got {float(got[tuple(idx)])}, want "
                             f"{float(want[tuple(idx)])}")


def check_tma_ring(mod, device: str, n: int, col0: int, programs: int = 2,
                   short_rows: int = 20) -> None:
    """tma_ring: program p's tiles t < n land in y rows [(p·n + t)·BM, +BM), columns [col0,
    col0 + BN) of x; the last ``short_rows`` rows of the last tile and columns past 576 are past
    x's end (zeros). n = 0: nothing is written."""
    total = programs * n * BM
    x = source(max(total - short_rows, 1), 7000 + n + col0, device)
    y = torch.full((max(total, 1), BN), float("nan"), dtype=torch.bfloat16, device=device)
    mod.tma_ring[(programs,)](descriptor(x), y, BN, n, col0)
    _sync(device)
    if n == 0:
        assert bool(torch.isnan(y.float()).all()), "tma_ring, 0 tiles: y was written"
        return
    _bits_equal(y, expected(x, total, col0), f"tma_ring, {n} tiles from column {col0}")


def check_tma_mixed(mod, device: str, n: int, col0: int, programs: int = 2) -> None:
    """tma_mixed: as tma_ring (rows taken from the register-stored field of each slot), then
    the closing slot: every program's consumer saw ``is_closed`` (done == 1)."""
    total = programs * n * BM
    x = source(max(total, 1), 8000 + n + col0, device)
    y = torch.full((max(total, 1), BN), float("nan"), dtype=torch.bfloat16, device=device)
    done = torch.full((programs, BM), -1, dtype=torch.int32, device=device)
    mod.tma_mixed[(programs,)](descriptor(x), y, done, BN, n, col0)
    _sync(device)
    assert bool((done == 1).all()), f"tma_mixed, {n} tiles: the closing slot was not seen closed"
    if n == 0:
        assert bool(torch.isnan(y.float()).all()), "tma_mixed, 0 tiles: y was written"
        return
    _bits_equal(y, expected(x, total, col0), f"tma_mixed, {n} tiles from column {col0}")
