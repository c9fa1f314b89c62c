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


# ------------------------------------------------------------------ tma_pages: a rank-4 descriptor

PAGE = 64
PAGE_COLS = 576  # the descriptor's last dimension; the allocation's rows are wider (PAGE_PITCH)
PAGE_PITCH = 640
#: valid-row counts the pages cycle through: a full page, one row, none, and partial ones
PAGE_VALIDS = (64, 1, 0, 37, 63, 8)


def paged_source(pages: int, seed: int, device: str) -> torch.Tensor:
    """kv [pages, PAGE, HEADS, PAGE_COLS]: a strided view of a [pages, PAGE, HEADS, PAGE_PITCH]
    bf16 allocation (strides in elements: PAGE·HEADS·PITCH, HEADS·PITCH, PITCH, 1; every one but
    the last a multiple of 16 bytes). The columns past PAGE_COLS are NaN: a box that read past the
    descriptor's last dimension instead of zero-filling would show them."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randn(pages, PAGE, HEADS, PAGE_PITCH, generator=g).to(torch.bfloat16)
    base[..., PAGE_COLS:] = float("nan")
    return base.to(device)[..., :PAGE_COLS]


def page_descriptor(kv: torch.Tensor):
    """A host tensor descriptor over the rank-4 ``kv`` with box [1, PAGE, 1, BN]: one page of one
    head, BN columns (it fills a [PAGE, BN] slot field, the box's unit dimensions dropped)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    return TensorDescriptor(kv, list(kv.shape), list(kv.stride()), [1, PAGE, 1, BN])


def expected_pages(kv: torch.Tensor, valid: list, head: int, col0: int) -> torch.Tensor:
    """y of tma_pages: page g's rows r < PAGE - valid[g] are zero, row PAGE - valid[g] + j is
    token j < valid[g] of page g (head ``head``, columns [col0, col0 + BN), zero past
    PAGE_COLS)."""
    want = torch.zeros(len(valid) * PAGE, BN, dtype=torch.bfloat16, device=kv.device)
    c1 = min(col0 + BN, PAGE_COLS)
    for g, v in enumerate(valid):
        if v > 0 and c1 > col0:
            want[g * PAGE + PAGE - v:(g + 1) * PAGE, :c1 - col0] = kv[g, :v, head, col0:c1]
    return want


def check_tma_pages(mod, device: str, n: int, col0: int, head: int = 1, programs: int = 2,
                    valids=PAGE_VALIDS, debug_waits: bool = False) -> None:
    """tma_pages: program p copies pages [p·n, (p + 1)·n), page g with its token coordinate
    shifted to valid[g] - PAGE (valid cycling through ``valids``). The rows of each page past
    its valid count are NaN in kv (a paged cache's unused rows may hold anything): any of them in
    y, or any row out of place, fails the bit-exact comparison. n = 0: nothing is written.
    ``debug_waits`` (CUDA only): bounded waits that trap naming the pipe instead of hanging."""
    pages = programs * n
    kv = paged_source(max(pages, 1), 9000 + n + col0 + head, device)
    valid = [valids[g % len(valids)] for g in range(pages)]
    for g, v in enumerate(valid):
        kv[g, v:] = float("nan")  # the rows past the page's valid count
    valid_t = torch.tensor(valid or [0], dtype=torch.int32, device=device)
    y = torch.full((max(pages, 1) * PAGE, BN), float("nan"), dtype=torch.bfloat16, device=device)
    extra = {"debug_waits": True} if debug_waits else {}
    mod.tma_pages[(programs,)](page_descriptor(kv), valid_t, y, n, head, col0, **extra)
    _sync(device)
    if n == 0:
        assert bool(torch.isnan(y.float()).all()), "tma_pages, 0 pages: y was written"
        return
    _bits_equal(y, expected_pages(kv, valid, head, col0),
                f"tma_pages, {n} pages per program, head {head}, from column {col0}, valid "
                f"{valid[:8]}...")
