"""The two-producer split FP8 sparse MLA decode (tle_kernels/sparse_decode_split2_fp8.py, through
tle_kernels/sparse_decode_split2_fp8_launch.py) on the GPU, against the fp32 reference with
FlashMLA's sparse-decode tolerances (tests/gpu/test_sparse_decode.py's check): b in {1, 64}, s_q
in {1, 2}, h_q in {64, 128}, topk 512 and 2048 on hostile indices; then mostly and wholly
invalid rows.

Every test is a strict xfail for now: ptxas allocates every partition's code under the launch's
.maxnreg, 65,536 / 512 threads = 128 registers for four warp groups, and the left's P·V_L wgmma
needs 158, so the kernel does not compile (a TleError at the launch;
tests/test_sparse_decode_split2_fp8.py holds the same fact on the CPU). Once it compiles, each
test fails as an unexpected pass, and the marker goes.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_decode_split2_fp8.py
"""

from __future__ import annotations

import pytest
import torch

from tle_compiler.diagnostics import TleError
from tle_kernels import sparse_decode_api as A
from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference
from tle_kernels.sparse_decode_split2_fp8_launch import launch_sparse_split2_fp8

from .test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL, SCALE, TOPK,
                                 close)

pytestmark = [pytest.mark.gpu,
              pytest.mark.xfail(strict=True, raises=TleError,
                                reason="ptxas compiles four warp groups under .maxnreg 128; the "
                                       "left's P·V_L wgmma needs 158")]
ARGS = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


@pytest.fixture(autouse=True)
def fp32_reference_matmuls():
    """The reference's matmuls in full fp32 (TF32 would cost it about 3 decimal digits)."""
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = tf32


def check(x, what):
    """The launcher into NaN-poisoned outputs, against the reference."""
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    launch_sparse_split2_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse,
                             *(x[k] for k in ARGS))
    torch.cuda.synchronize()
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
    return out, lse


@pytest.mark.parametrize("topk", [512, TOPK])
@pytest.mark.parametrize("h_q", [64, 128])
@pytest.mark.parametrize("s_q", [1, 2])
@pytest.mark.parametrize("b", [1, 64])
def test_matches_the_reference(b, s_q, h_q, topk):
    x = make_sparse_decode_inputs(b, s_q, h_q, topk, seed=b * 100 + s_q * 10 + h_q + topk)
    check(x, f"b={b} s_q={s_q} h_q={h_q} topk={topk}")


def test_mostly_and_wholly_invalid_rows():
    """95 % invalid slots, two rows with none valid: out 0, lse +inf there."""
    x = make_sparse_decode_inputs(7, 2, 128, TOPK, seed=3, invalid=0.95)
    x["indices"][2, 1] = -1
    x["indices"][5, 0] = torch.iinfo(torch.int32).max
    out, lse = check(x, "mostly invalid")
    for i, j in ((2, 1), (5, 0)):
        assert (out[i, j] == 0).all() and (lse[i, :, j] == float("inf")).all()
