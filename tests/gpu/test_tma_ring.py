"""tle_kernels/gpu_tests/tma_ring.py on the GPU: [64, 256] bf16 tiles of a strided 2-D view (head 1
of a [rows, 3, 576] tensor, as one kv head of a paged cache) TMA-copied into a ring by
``tle.gpu.tma_load`` and copied out by the consumer, compared bit for bit (tests/gpu/tma_cases.py;
the same checks pass on the CPU emulation in tests/test_tma.py, so a failure here is the
lowering's: the expect-tx count, the barrier a copy signals, the ring's swizzle against the
descriptor's). Column 448 makes every box run past column 576 (zero-filled); the last tile of
tma_ring runs 20 rows past the tensor. Trip counts 0, 1, C, C + 1 and a long run (many phase
flips with copies in flight).

tma_pages reads pages of a paged cache through a rank-4 descriptor (box [1, 64, 1, 256] into a
[64, 256] field) with the token coordinate shifted to valid - 64: negative coordinates must
arrive as zeros and the page's rows past its valid count (NaN) must never land; valid counts 64,
1 and 0 (a box wholly out of bounds, which still brings its bytes) among partial ones."""

from __future__ import annotations

import importlib

import pytest

from tests.gpu import tma_cases

pytestmark = pytest.mark.gpu

DEVICE = "cuda"


def _mod():
    return importlib.import_module("tle_kernels.gpu_tests.tma_ring")


@pytest.mark.parametrize("n", [0, 1, 2, 3, 200])
@pytest.mark.parametrize("col0", [0, 256, 448])
def test_tma_ring_copies_tiles_bit_exact(n, col0):
    tma_cases.check_tma_ring(_mod(), DEVICE, n, col0)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 200])
@pytest.mark.parametrize("col0", [256, 448])
def test_tma_beside_register_stores_and_a_close(n, col0):
    tma_cases.check_tma_mixed(_mod(), DEVICE, n, col0)


def test_many_programs_share_the_sms():
    """More CTAs than SMs, each streaming its own rows: descriptors and barriers per CTA."""
    tma_cases.check_tma_ring(_mod(), DEVICE, 7, 256, programs=300)
    tma_cases.check_tma_mixed(_mod(), DEVICE, 5, 128, programs=300)


def test_tma_pages_a_box_wholly_out_of_bounds_completes_under_bounded_waits():
    """Every page with valid 0: each box lies wholly before its page (token coordinates -64 ..
    -1) and must still bring its 32768 bytes, or the readers' wait never passes. Run first and
    with bounded waits, so such a failure traps naming the pipe rather than hanging the run."""
    tma_cases.check_tma_pages(_mod(), DEVICE, 3, 0, valids=(0,), debug_waits=True)


@pytest.mark.parametrize("n", [0, 1, 3, 200])
@pytest.mark.parametrize("col0", [0, 320, 448])
def test_tma_pages_rank4_descriptor_with_shifted_tokens_bit_exact(n, col0):
    tma_cases.check_tma_pages(_mod(), DEVICE, n, col0)


@pytest.mark.parametrize("valid", [64, 1, 0])
@pytest.mark.parametrize("head", [0, 2])
def test_tma_pages_every_page_with_one_valid_count(valid, head):
    tma_cases.check_tma_pages(_mod(), DEVICE, 5, 256, head=head, valids=(valid,))


def test_tma_pages_many_programs():
    tma_cases.check_tma_pages(_mod(), DEVICE, 2, 128, programs=300)


@pytest.mark.parametrize("col0", [2**32, 2**32 + 256, -2**32, 2**40 + 64])
def test_i64_coordinates_past_the_i32_range_arrive_as_zeros(col0):
    """A column coordinate Triton types i64 (a launch argument of 2^32 or more in magnitude) is
    replaced by -2^31 by the lowering: the box stays outside the tensor and arrives as zeros. A
    plain cast would wrap 2^32 + c onto column c and copy real data; a clamp to 2^31 - 1 raised
    an illegal-instruction fault."""
    import torch

    mod = _mod()
    n, programs = 2, 2
    total = programs * n * tma_cases.BM
    x = tma_cases.source(total, 7100, DEVICE)
    y = torch.full((total, tma_cases.BN), float("nan"), dtype=torch.bfloat16, device=DEVICE)
    mod.tma_ring[(programs,)](tma_cases.descriptor(x), y, tma_cases.BN, n, col0)
    torch.cuda.synchronize()
    assert bool((y.float() == 0).all()), f"column {col0}: the box did not arrive as zeros"
