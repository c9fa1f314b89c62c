"""The FP8 sparse MLA decode with the math split by output half (tle_kernels/sparse_decode_split_fp8.py,
through tle_kernels/sparse_decode_split_fp8_launch.py) on the GPU, against the fp32 reference with
FlashMLA's sparse-decode tolerances (tests/gpu/test_sparse_decode.py's check): b in {1, 64}, s_q
in {1, 2}, h_q in {64, 128}, topk 512 and 2048; then mostly and wholly invalid rows with
max_logits, h_q 8 / 32 (masked head rows), topk_length, page sizes 2 and 61, FlashMLA's padded
block stride and the three cache dtypes, and a decode step captured in a CUDA graph; attn_sink
(tle_kernels/sparse_decode_split_fp8_sink.py: randn sinks with +inf and -inf among them) at b 1
(a tail split: pieces without the sink, merged with it) and 64, h_q 64 / 128, s_q 1 / 2, with an
empty row, "auto" choosing it, and a sink step replayed in a CUDA graph with new sinks; an
extra cache by name (two launches into fp32 partials, merged: sparse_decode_extra.py).

Inputs come from ``make_sparse_decode_inputs``: invalid indices of every kind (-1, the int32
extremes, past the cache), every token no valid slot names NaN (bytes, scales and RoPE), outputs
NaN before each launch, so a read of an unnamed token or an unwritten row shows.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_decode_split_fp8.py
"""

from __future__ import annotations

import pytest
import torch

from tle_kernels import sparse_decode_api as A
from tle_kernels.sparse_decode_reference import (gather_tokens, make_sparse_decode_inputs,
                                                  sparse_decode_reference)
from tle_kernels.sparse_decode_split_fp8_launch import launch_sparse_split_fp8, run_split_rows

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
    launch_sparse_split_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse,
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


@pytest.mark.parametrize("topk", [512, TOPK])
@pytest.mark.parametrize("h_q", [64, 128])
@pytest.mark.parametrize("s_q", [1, 2])
# at h_q 128, topk 2048: b 36 the balanced kernel, b 44 pieces over 3 rounds
@pytest.mark.parametrize("b", [1, 36, 44, 64])
def test_matches_the_reference(b, s_q, h_q, topk):
    x = make_sparse_decode_inputs(b, s_q, h_q, topk, seed=b * 100 + s_q * 10 + h_q + topk)
    check(x, f"b={b} s_q={s_q} h_q={h_q} topk={topk}")


def test_mostly_and_wholly_invalid_rows_and_max_logits():
    """95 % invalid slots, two rows with none valid (out 0, lse +inf, max_logits -inf); elsewhere
    max_logits is the largest scaled score of the row."""
    b, s_q, h_q = 7, 2, 128
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, seed=3, invalid=0.95)
    x["indices"][2, 1] = -1
    x["indices"][5, 0] = torch.iinfo(torch.int32).max
    out, lse = check(x, "mostly invalid")
    for i, j in ((2, 1), (5, 0)):
        assert (out[i, j] == 0).all() and (lse[i, :, j] == float("inf")).all()

    t = b * s_q
    q3, idx2 = x["q"].view(t, h_q, 576), x["indices"].view(t, TOPK)
    out3 = torch.empty(t, h_q, 512, dtype=torch.bfloat16, device="cuda")
    lse2 = torch.full((t, h_q), float("nan"), device="cuda")
    max_logits = torch.full((t, h_q), float("nan"), device="cuda")
    run_split_rows(q3, x["k_cache"], idx2, out3, lse2, max_logits, SCALE)
    torch.cuda.synchronize()
    for i in range(b):
        kv, valid = gather_tokens(x["k_cache"], x["indices"][i], None)    # [s_q, topk, 576]
        scores = torch.bmm(x["q"][i].float(), kv.transpose(1, 2)) * SCALE
        want = scores.masked_fill(~valid[:, None, :], float("-inf")).amax(-1)  # [s_q, h_q]
        got = max_logits[i * s_q:(i + 1) * s_q]
        empty = ~valid.any(-1)
        assert (got[empty] == float("-inf")).all()
        torch.testing.assert_close(got[~empty], want[~empty], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("h_q", [8, 32])
@pytest.mark.parametrize("b", [1, 64])
def test_head_counts_under_64_are_masked_rows(b, h_q):
    """h_q 8 / 32 as one block of 64 head rows whose rows past h_q store nothing, with
    per-request topk_length (0 included: out 0, lse +inf)."""
    x = make_sparse_decode_inputs(b, 2, h_q, TOPK, seed=300 + h_q + b,
                                  topk_length=([700, 0, 2048, 65] * (b // 4 + 1))[:b])
    out, lse = check(x, f"b={b} h_q={h_q}")
    if b > 1:
        assert (out[1] == 0).all() and (lse[1] == float("inf")).all()


def test_topk_length():
    lengths = [0, 1, 63, 64, 65, 127, 128, 129, 1000, 2047, 2048, 5000, -3]
    x = make_sparse_decode_inputs(len(lengths), 2, 128, TOPK, seed=4, topk_length=lengths)
    out, lse = check(x, "topk_length")
    for i in (0, 12):
        assert (out[i] == 0).all() and (lse[i] == float("inf")).all()


@pytest.mark.parametrize("page", [2, 61])
def test_page_sizes(page):
    check(make_sparse_decode_inputs(7, 2, 64, TOPK, seed=6, page=page), f"page {page}")


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.float8_e4m3fn])
def test_padded_block_stride_and_cache_dtypes(dtype):
    """FlashMLA's padded block stride (blocks 48 bytes apart more than their tokens need, the gap
    NaN bytes) with each cache dtype it takes."""
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
    launch_sparse_split_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch_sparse_split_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse)
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


# -------------------------------------------------------------------------------------- attn_sink

def sink_inputs(b, s_q, h_q, seed):
    """FlashMLA's inputs with attn_sink (randn per head, some +inf and -inf; head 0 +inf, head
    1 -inf whatever the draw gave) and, with more than one query row, the last row empty."""
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, seed=seed, attn_sink=True)
    sink = x["attn_sink"]
    sink[0], sink[1] = float("inf"), float("-inf")
    if b * s_q > 1:
        x["indices"][b - 1, s_q - 1] = -1
    return x


@pytest.mark.parametrize("h_q", [64, 128])
@pytest.mark.parametrize("s_q", [1, 2])
@pytest.mark.parametrize("b", [1, 36, 44, 64])
def test_attn_sink_matches_the_reference(b, s_q, h_q):
    """The sink kernel (b 64), a tail split whose merge applies the sink (b 1; at h_q 128 b 44:
    pieces over three rounds, b 36: the balanced kernel, whose merge applies it), auto's kernel
    for an FP8 cache with attn_sink. Empty row: out 0, lse +inf; a +inf sink zeroes its head."""
    x = sink_inputs(b, s_q, h_q, seed=700 + b + s_q * 10 + h_q)
    call = dict(q=x["q"], k_cache=x["k_cache"], indices=x["indices"], is_fp8=True,
                **{k: x[k] for k in ARGS})
    assert A.sparse_unsupported_reason("split-fp8", **call) is None
    assert A.select_sparse_impl("auto", call) == "split-fp8"
    out, lse = check(x, f"sink b={b} s_q={s_q} h_q={h_q}")
    if b * s_q > 1:
        assert (out[b - 1, s_q - 1] == 0).all()
        assert (lse[b - 1, :, s_q - 1] == float("inf")).all()
    assert (out[:, :, 0] == 0).all() and torch.isfinite(lse[0, :, 0]).all()


def test_attn_sink_leaves_lse_and_max_logits_to_the_scores():
    """run_split_rows with and without the sink: equal lse and max_logits; out scaled by
    exp(lse) / (exp(lse) + exp(sink)) per row."""
    b, h_q = 64, 128
    x = sink_inputs(b, 1, h_q, seed=11)
    q3, idx2 = x["q"].view(b, h_q, 576), x["indices"].view(b, TOPK)
    runs = []
    for sink in (None, x["attn_sink"]):
        out3 = torch.full((b, h_q, 512), float("nan"), dtype=torch.bfloat16, device="cuda")
        lse2 = torch.full((b, h_q), float("nan"), device="cuda")
        ml = torch.full((b, h_q), float("nan"), device="cuda")
        run_split_rows(q3, x["k_cache"], idx2, out3, lse2, ml, SCALE, sink)
        runs.append((out3, lse2, ml))
    torch.cuda.synchronize()
    (o0, l0, m0), (o1, l1, m1) = runs
    assert torch.equal(l0, l1) and torch.equal(m0, m1)
    # exp(lse) / (exp(lse) + exp(sink)); an empty row (lse +inf) is 0 with or without the sink
    factor = torch.sigmoid(l0.masked_fill(torch.isposinf(l0), 0.0) - x["attn_sink"][None, :])
    torch.testing.assert_close(o1.float(), o0.float() * factor[..., None], atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("b", [1, 64])
def test_a_sink_decode_step_replays_in_a_cuda_graph(b):
    """Captured once with attn_sink (b 1: the tail split and its merge are captured too),
    replayed with new queries, indices and sinks written into the same tensors."""
    x = sink_inputs(b, 2, 128, seed=12)
    y = sink_inputs(b, 2, 128, seed=13)
    y["attn_sink"].mul_(-1.0)                        # other signs, +inf and -inf swapped
    out, lse = A.empty_outputs(x["q"])
    args = (x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse, x["attn_sink"])
    launch_sparse_split_fp8(*args)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        launch_sparse_split_fp8(*args)
    for z in (x, y):
        for k in ("q", "k_cache", "indices", "attn_sink"):
            x[k].copy_(z[k])
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        want_out, want_lse = sparse_decode_reference(z["q"], z["k_cache"], z["indices"], 512,
                                                     SCALE, z["attn_sink"])
        close("sink graph out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
        close("sink graph lse", lse, want_lse, LSE_ABS, LSE_REL)


@pytest.mark.parametrize("b,s_q,h_q", [(3, 2, 128), (7, 1, 16), (2, 1, 8), (64, 1, 128),
                                       (40, 2, 64)])
def test_an_extra_cache_as_two_launches_with_fp32_partials(b, s_q, h_q):
    """impl="split-fp8" with an extra cache (page 2, its own hostile indices and lengths, 0 and
    negative among them), attn_sink and topk_length: two launches into fp32 partials, merged by
    lse and rounded once (tle_kernels/sparse_decode_extra.py), within FlashMLA's tolerances,
    the cosine distance included (bf16 partials missed it on such batches)."""
    lengths = ([0, 700, TOPK, 65, 129, -3, 5000] * (b // 7 + 1))[:b]
    extra_lengths = ([512, 0, 3, 511, -1, 600, 64] * (b // 7 + 1))[:b]
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, is_fp8=True, device="cuda",
                                  seed=b + 10 * s_q + h_q, invalid=0.3, attn_sink=True,
                                  topk_length=lengths, extra_topk=512, extra_page=2,
                                  extra_topk_length=extra_lengths)
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    ran = A.launch_sparse("split-fp8", x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse,
                          *(x[k] for k in ARGS))
    torch.cuda.synchronize()
    assert ran == "split-fp8"
    what = f"extra cache b={b} s_q={s_q} h_q={h_q}"
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
