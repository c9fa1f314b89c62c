"""The sparse MLA decode's seesaws at the tensor-parallel head counts 8, 16 and 32 on the GPU: the
kernels take the real head count (their last head block's rows past h_q masked, no padded copy of
q or out; at h_q 8 the merge of a batch under one wave runs over its pieces padded to 16 heads),
on the bf16 cache ("seesaw") and the FP8 one ("seesaw-fp8"), with attn_sink and per-request
topk_length, s_q 1 and 2, a batch under one wave (topk pieces) and over one, into outputs that are
views inside fenced buffers (a write past h_q, past s_q or past the batch shows), against the fp32
reference with tests/gpu/test_sparse_decode.py's tolerances.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_decode_head_masking.py
"""

from __future__ import annotations

import pytest
import torch

from tle_kernels import sparse_decode_api as A
from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference

from .test_sparse_decode import (ARGS, LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL, SCALE, TOPK,
                                 close)

pytestmark = pytest.mark.gpu

LENGTHS = [700, 0, 1, TOPK, 5000, 64, 2047, 127, 128, 129, -3]


@pytest.fixture(autouse=True)
def fp32_reference_matmuls():
    """The reference's matmuls in full fp32 (TF32 would cost it about 3 decimal digits)."""
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = tf32


def fenced_outputs(b, s_q, h_q):
    """out [b, s_q, h_q, 512] and lse [b, h_q, s_q], NaN, as views inside 7.0-filled buffers
    with 4 more heads, one more query row and one more request."""
    out_b = torch.full((b + 1, s_q + 1, h_q + 4, 512), 7.0, device="cuda", dtype=torch.bfloat16)
    lse_b = torch.full((b + 1, h_q + 4, s_q + 1), 7.0, device="cuda")
    out, lse = out_b[:b, :s_q, :h_q], lse_b[:b, :h_q, :s_q]
    out.fill_(float("nan")), lse.fill_(float("nan"))
    return (out_b, lse_b), (out, lse)


def run_into_fences(impl, x, is_fp8, want_out, want_lse):
    """``impl`` on the inputs ``x`` into fenced outputs: the reference's values, nothing written
    past h_q, s_q or the batch."""
    b, s_q, h_q, _ = x["q"].shape
    (out_b, lse_b), (out, lse) = fenced_outputs(b, s_q, h_q)
    ran = A.launch_sparse(impl, x["q"], x["k_cache"], x["indices"], SCALE, is_fp8, out, lse,
                          *(x[k] for k in ARGS))
    torch.cuda.synchronize()
    assert ran == impl
    what = f"{impl} b={b} s_q={s_q} h_q={h_q}"
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
    assert (out_b[b:] == 7).all() and (out_b[:, s_q:] == 7).all()
    assert (out_b[:, :, h_q:] == 7).all(), f"{what}: a write past h_q"
    assert (lse_b[b:] == 7).all() and (lse_b[:, h_q:] == 7).all() \
        and (lse_b[:, :, s_q:] == 7).all()


@pytest.mark.parametrize("s_q", [1, 2])
@pytest.mark.parametrize("b", [1, 64])
@pytest.mark.parametrize("is_fp8", [False, True], ids=["bf16", "fp8"])
@pytest.mark.parametrize("h_q", [8, 16, 32])
def test_decode_heads_masked_into_fenced_outputs(h_q, is_fp8, b, s_q):
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, is_fp8=is_fp8, device="cuda",
                                  seed=500 + h_q + b + s_q, attn_sink=True,
                                  topk_length=(LENGTHS * (b // len(LENGTHS) + 1))[:b])
    call = dict(q=x["q"], k_cache=x["k_cache"], indices=x["indices"], is_fp8=is_fp8,
                **{k: x[k] for k in ARGS})
    # auto's kernel first, then the FP8 seesaw; for bf16 the narrow-head kernel, then the seesaw
    impls = ["split-fp8", "seesaw-fp8"] if is_fp8 else ["narrow", "seesaw"]
    assert A.select_sparse_impl("auto", call) == impls[0]
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    for impl in impls:
        run_into_fences(impl, x, is_fp8, want_out, want_lse)


@pytest.mark.parametrize("is_fp8", [False, True], ids=["bf16", "fp8"])
@pytest.mark.parametrize("h_q", [8, 32])
def test_decode_heads_masked_in_a_cuda_graph(h_q, is_fp8):
    """Captured once (the kernels, and at h_q 8 the merge's 16-head copies), replayed with new q
    and new lengths. The inputs are made with every row full: make_sparse_decode_inputs poisons
    the tokens past a row's length with NaN, which a longer length written in place for a
    replay would then name."""
    b = 4
    x = make_sparse_decode_inputs(b, 1, h_q, TOPK, is_fp8=is_fp8, device="cuda", seed=600 + h_q,
                                  attn_sink=True, topk_length=[TOPK] * b)
    args = (x["k_cache"], x["indices"], 512, SCALE, is_fp8, *(x[k] for k in ARGS))
    A.sparse_decode(x["q"], *args)  # compile outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = A.sparse_decode(x["q"], *args)
    for seed, lengths in ((601, [5, 2048, 0, 300]), (602, [1, 64, 128, 4000])):
        y = make_sparse_decode_inputs(b, 1, h_q, TOPK, is_fp8=is_fp8, device="cuda", seed=seed)
        x["q"].copy_(y["q"])
        x["topk_length"].copy_(torch.tensor(lengths, device="cuda", dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512,
                                                     SCALE, *(x[k] for k in ARGS))
        close(f"graph {seed} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
        close(f"graph {seed} lse", lse, want_lse, LSE_ABS, LSE_REL)


@pytest.mark.parametrize("s_q", [1, 2])
@pytest.mark.parametrize("b", [1, 64])
@pytest.mark.parametrize("h_q", [8, 16, 32])
def test_bf16_decode_on_the_narrow_head_kernel(h_q, b, s_q):
    """"auto" runs a bf16 cache at h_q <= 32 on the narrow-head prefill kernel
    (tle_kernels/sparse_decode_narrow_launch.py; with attn_sink and topk_length too:
    test_decode_heads_masked_into_fenced_outputs); it and the seesaw, into fenced
    outputs, against the reference; then through sparse_decode in a CUDA graph."""
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, is_fp8=False, device="cuda",
                                  seed=700 + h_q + b + s_q, invalid=0.25)
    call = dict(q=x["q"], k_cache=x["k_cache"], indices=x["indices"], is_fp8=False,
                **{k: x[k] for k in ARGS})
    assert A.select_sparse_impl("auto", call) == "narrow"
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    for impl in ("narrow", "seesaw"):
        run_into_fences(impl, x, False, want_out, want_lse)
    args = (x["k_cache"], x["indices"], 512, SCALE, False, *(x[k] for k in ARGS))
    A.sparse_decode(x["q"], *args)  # compile outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = A.sparse_decode(x["q"], *args)
    y = make_sparse_decode_inputs(b, s_q, h_q, TOPK, is_fp8=False, device="cuda", seed=801)
    x["q"].copy_(y["q"])
    graph.replay()
    torch.cuda.synchronize()
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    close("graph out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close("graph lse", lse, want_lse, LSE_ABS, LSE_REL)
