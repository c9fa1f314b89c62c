"""The FP8 sparse MLA decode as the seesaw schedule (tle_kernels/sparse_decode_seesaw_fp8.py,
through its launcher tle_kernels/sparse_decode_seesaw_fp8_launch.py) on the GPU, against the fp32
reference with FlashMLA's sparse-decode tolerances (tests/gpu/test_sparse_decode.py's check):
b in {1, 7, 64}, s_q in {1, 2}, h_q in {64, 128}, topk 2048; then mostly and wholly invalid
rows, topk_length, attn_sink, page sizes 2 and 61, FlashMLA's padded block stride and the three
cache dtypes, and a decode step captured in a CUDA graph.

Inputs come from ``make_sparse_decode_inputs``: invalid indices of every kind (-1, the int32
extremes, past the cache), every token no valid slot names NaN (bytes, scales and RoPE), outputs
NaN before each launch, so a read of an unnamed token or an unwritten row shows.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_decode_seesaw_fp8.py
"""

from __future__ import annotations

import pytest
import torch

from tle_kernels import sparse_decode_api as A
from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference
from tle_kernels.sparse_decode_seesaw_fp8_launch import launch_sparse_seesaw_fp8

from .test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL, SCALE, TOPK,
                                 close)

pytestmark = pytest.mark.gpu
ARGS = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


@pytest.fixture(autouse=True)
def fp32_reference_matmuls():
    """The reference's matmuls in full fp32 (TF32 would cost it about 3 decimal digits)."""
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = tf32


def run(x):
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    launch_sparse_seesaw_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse,
                             *(x[k] for k in ARGS))
    torch.cuda.synchronize()
    return out, lse


def check(x, what):
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    out, lse = run(x)
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
    return out, lse


@pytest.mark.parametrize("h_q", [64, 128])
@pytest.mark.parametrize("s_q", [1, 2])
@pytest.mark.parametrize("b", [1, 7, 64])
def test_matches_the_reference(b, s_q, h_q):
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, seed=b * 100 + s_q * 10 + h_q)
    check(x, f"b={b} s_q={s_q} h_q={h_q}")


def test_mostly_and_wholly_invalid_rows():
    x = make_sparse_decode_inputs(7, 2, 128, TOPK, seed=3, invalid=0.95)
    x["indices"][2, 1] = -1
    x["indices"][5, 0] = torch.iinfo(torch.int32).max
    out, lse = check(x, "mostly invalid")
    for i, j in ((2, 1), (5, 0)):
        assert (out[i, j] == 0).all() and (lse[i, :, j] == float("inf")).all()


@pytest.mark.parametrize("s_q", [1, 2])
def test_topk_length_and_attn_sink(s_q):
    lengths = [0, 1, 63, 64, 65, 127, 128, 129, 1000, 2047, 2048, 5000, -3]
    x = make_sparse_decode_inputs(len(lengths), s_q, 128, TOPK, seed=4 + s_q, topk_length=lengths,
                                  attn_sink=True)
    check(x, "topk_length + attn_sink")
    x["attn_sink"] = None
    check(x, "topk_length")


@pytest.mark.parametrize("page", [2, 61])
def test_page_sizes(page):
    check(make_sparse_decode_inputs(7, 2, 64, TOPK, seed=6, page=page), f"page {page}")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.float8_e4m3fn])
def test_padded_block_stride_and_cache_dtypes(dtype):
    """FlashMLA's padded block stride (blocks 16 * 41 + 48 bytes apart more than their tokens
    need, the gap NaN bytes) with each cache dtype it takes."""
    x = make_sparse_decode_inputs(7, 1, 128, TOPK, seed=7)
    kc = x["k_cache"]
    n_blocks, page = kc.shape[:2]
    padded = torch.full((n_blocks, page * 656 + 48), 0xFF, dtype=torch.uint8, device=kc.device)
    padded[:, :page * 656] = kc.reshape(n_blocks, page * 656)
    x["k_cache"] = padded[:, :page * 656].view(n_blocks, page, 1, 656).view(dtype)
    check(x, f"padded {dtype}")


def test_a_decode_step_replays_in_a_cuda_graph():
    """Captured once, replayed with new queries and indices written into the same tensors."""
    x = make_sparse_decode_inputs(64, 1, 128, TOPK, seed=8)
    y = make_sparse_decode_inputs(64, 1, 128, TOPK, seed=9)
    out, lse = A.empty_outputs(x["q"])
    launch_sparse_seesaw_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch_sparse_seesaw_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse)
    for z in (x, y):
        x["q"].copy_(z["q"])
        x["k_cache"].copy_(z["k_cache"])
        x["indices"].copy_(z["indices"])
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        want_out, want_lse = sparse_decode_reference(z["q"], z["k_cache"], z["indices"], 512,
                                                     SCALE)
        close("graph out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
        close("graph lse", lse, want_lse, LSE_ABS, LSE_REL)


@pytest.mark.parametrize("h_q", [8, 16, 32])
@pytest.mark.parametrize("b", [1, 64])
def test_tensor_parallel_head_counts_padded_to_64(b, h_q):
    """h_q 8 / 16 / 32 (FlashMLA refuses them): q padded with zero heads to 64
    (tle_kernels/head_padding.py), with attn_sink and topk_length; b = 1 also runs
    as topk pieces (a batch under one wave)."""
    x = make_sparse_decode_inputs(b, 2, h_q, TOPK, is_fp8=True, device="cuda", seed=300 + h_q + b,
                                  attn_sink=True,
                                  topk_length=([700, 0, 2048, 65] * (b // 4 + 1))[:b])
    assert A.sparse_unsupported_reason("seesaw-fp8", q=x["q"], k_cache=x["k_cache"],
                                       indices=x["indices"], is_fp8=True,
                                       **{k: x[k] for k in ARGS}) is None
    check(x, f"b={b} h_q={h_q}")
