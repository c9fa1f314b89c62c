"""The bf16 sparse MLA decode by the seesaw SparseMLA prefill kernels on the GPU
(tle_kernels/sparse_decode_seesaw_launch.py, impl "seesaw" of tle_kernels/sparse_decode_api.py):
against the fp32 reference with FlashMLA's sparse-decode tolerances (those of
tests/gpu/test_sparse_decode.py) over b in {1, 7, 64}, s_q in {1, 2}, h_q in {64, 128}, topk 2048,
with attn_sink (+-inf on some heads) and per-request topk_length (0, partial, past topk,
negative), reaching each of the three prefill kernels (plain persistent, persistent with the sink,
per-row topk_length); mostly and wholly invalid rows; pages of 1 and 61 tokens; the calls it does
not take falling back to the naive kernel; FlashMLA's entry point ``flash_mla_with_kvcache``
("auto" picks the seesaw for a bf16 cache), once as FlashMLA's test calls it and once captured in a
CUDA graph, replayed with new topk_length values.

Inputs come from ``make_sparse_decode_inputs``: 10 % of the slots (more where said) hold invalid
indices (-1, -2, -123456, -2**31, past the cache, 2**31 - 1), every token no valid slot names is
NaN, and outputs are NaN before each launch, so a read of an unnamed token or an unwritten row
shows.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_decode_seesaw.py
"""

from __future__ import annotations

import pytest
import torch

from tle_kernels import sparse_decode_api as A
from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference

from .test_sparse_decode import (ARGS, LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL, SCALE, TOPK,
                                 close)

pytestmark = pytest.mark.gpu

# per-request lengths, repeated over the batch: partial, empty, one slot, all, past topk, tile and
# pair edges, negative (no slot)
LENGTHS = [700, 0, 1, TOPK, 5000, 64, 2047, 127, 128, 129, -3]


@pytest.fixture(autouse=True)
def fp32_reference_matmuls():
    """The reference's matmuls in full fp32 (TF32 would cost it about 3 decimal digits)."""
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = tf32


def lengths_for(b):
    return (LENGTHS * (b // len(LENGTHS) + 1))[:b]


def reference(x, scale=SCALE):
    return sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, scale,
                                   *(x[k] for k in ARGS))


def support_call(x, is_fp8=False):
    return dict(q=x["q"], k_cache=x["k_cache"], indices=x["indices"], is_fp8=is_fp8,
                **{k: x[k] for k in ARGS})


def run_and_check(x, what, scale=SCALE, impl="seesaw", by_name=False):
    """``impl`` ("auto" picks it, or with ``by_name`` it is named) into NaN-poisoned outputs
    through launch_sparse, and (under "auto") the public entry point, each against the
    reference. Returns the reference (out, lse)."""
    if not by_name:
        assert A.select_sparse_impl("auto", support_call(x)) == impl, what
    want_out, want_lse = reference(x, scale)
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    ran = A.launch_sparse(impl if by_name else "auto", x["q"], x["k_cache"], x["indices"], scale,
                          False, out, lse, *(x[k] for k in ARGS))
    torch.cuda.synchronize()
    assert ran == impl, what
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
    if by_name:
        return want_out, want_lse
    out2, lse2 = A.sparse_decode(x["q"], x["k_cache"], x["indices"], 512, scale, False,
                                 *(x[k] for k in ARGS))
    torch.cuda.synchronize()
    assert torch.equal(out2, out) and torch.equal(lse2, lse), f"{what}: API differs from launch"
    return want_out, want_lse


@pytest.mark.parametrize("features", ["sink", "topk_length+sink"])
@pytest.mark.parametrize("h_q", [128, 64])
@pytest.mark.parametrize("s_q", [1, 2])
@pytest.mark.parametrize("b", [1, 7, 64])
def test_seesaw_against_reference(b, s_q, h_q, features):
    lengths = lengths_for(b) if "topk_length" in features else None
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, is_fp8=False, device="cuda",
                                  seed=b * 100 + s_q * 10 + h_q, attn_sink=True,
                                  topk_length=lengths)
    assert torch.isinf(x["attn_sink"]).any()
    run_and_check(x, f"b={b} s_q={s_q} h_q={h_q} {features}")


@pytest.mark.parametrize("b,s_q,h_q", [(7, 2, 128), (64, 1, 64), (64, 2, 128)])
@pytest.mark.parametrize("features", ["plain", "topk_length"])
def test_seesaw_without_the_sink(b, s_q, h_q, features):
    """The plain persistent seesaw (64 x 2 x 128: 256 items on the SMs, repeated last items) and
    the per-row topk_length kernel without the sink."""
    lengths = lengths_for(b) if features == "topk_length" else None
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, is_fp8=False, device="cuda",
                                  seed=b + s_q + h_q, topk_length=lengths)
    run_and_check(x, f"b={b} s_q={s_q} h_q={h_q} {features}")


@pytest.mark.parametrize("with_lengths", [False, True], ids=["sink", "topk_length+sink"])
def test_mostly_and_wholly_invalid_rows(with_lengths):
    """60 % invalid slots; one request whose rows name nothing and one row of only 2**31 - 1
    (out 0, lse +inf, with a sink); large scores (scale 1.0) and sinks of +-1e30 / +-inf."""
    x = make_sparse_decode_inputs(7, 2, 128, TOPK, is_fp8=False, device="cuda", seed=17,
                                  invalid=0.6, attn_sink=True,
                                  topk_length=lengths_for(7) if with_lengths else None)
    x["indices"][3] = -1
    x["indices"][5, 1, :] = 2**31 - 1
    x["attn_sink"][:4] = torch.tensor([1e30, -1e30, float("inf"), float("-inf")], device="cuda")
    want_out, want_lse = run_and_check(x, "invalid rows", scale=1.0)
    assert (want_lse[3] == float("inf")).all() and (want_lse[5, :, 1] == float("inf")).all()
    assert (want_out[3] == 0).all()


@pytest.mark.parametrize("page", [1, 61])
def test_page_sizes(page):
    x = make_sparse_decode_inputs(5, 2, 64, TOPK, page=page, is_fp8=False, device="cuda",
                                  seed=page, attn_sink=True, topk_length=[9, 2048, 0, 1000, 77])
    run_and_check(x, f"page={page}")


def test_calls_it_does_not_take_run_on_the_naive_kernel():
    """A padded block stride (FlashMLA's tests' layout) and an extra cache: "auto" runs the
    naive kernel, within the same tolerances; topk % 128 == 64 runs on the seesaw (its last
    pair's second tile masked). (h_q 8 / 16 / 32 run on the seesaw, padded to 64 heads:
    test_tensor_parallel_head_counts_padded_to_64.)"""
    x = make_sparse_decode_inputs(7, 2, 64, TOPK, is_fp8=False, device="cuda", seed=5,
                                  attn_sink=True)
    k = x["k_cache"]
    padded = torch.full((k.shape[0], k.shape[1] + 1, 1, 576), float("nan"), dtype=torch.bfloat16,
                        device="cuda")
    padded[:, :k.shape[1]] = k
    x["k_cache"] = padded[:, :k.shape[1]]
    run_and_check(x, "padded block stride", impl="naive")
    x = make_sparse_decode_inputs(7, 1, 128, TOPK - 64, is_fp8=False, device="cuda", seed=7)
    run_and_check(x, "topk 1984", impl="seesaw")
    x = make_sparse_decode_inputs(7, 2, 64, 192, is_fp8=False, device="cuda", seed=9,
                                  attn_sink=True, topk_length=[0, 150, 192, 1, 64, 999, 129])
    run_and_check(x, "topk 192, sink, topk_length", impl="seesaw")
    x = make_sparse_decode_inputs(7, 2, 128, TOPK, is_fp8=False, device="cuda", seed=8,
                                  attn_sink=True, extra_topk=512, extra_page=2)
    run_and_check(x, "extra cache", impl="naive")


def test_through_flash_mla_with_kvcache():
    """FlashMLA's entry point with a bf16 cache, called as FlashMLA's sparse-decode test calls it
    (positionally, block_table / cache_seqlens None, q with padded dims: its b and s_q do not
    flatten), sink and topk_length: within the tolerances of the reference, bit-equal to the
    seesaw launched directly, and again on a second call reusing the metadata."""
    import tle_kernels as K

    x = make_sparse_decode_inputs(7, 2, 128, TOPK, is_fp8=False, device="cuda", seed=31,
                                  attn_sink=True, topk_length=lengths_for(7))
    want_out, want_lse = reference(x)
    direct = A.empty_outputs(x["q"])
    assert A.launch_sparse("seesaw", x["q"], x["k_cache"], x["indices"], SCALE, False, *direct,
                           *(x[k] for k in ARGS)) == "seesaw"
    q = torch.full((8, 3, 129, 576 + 128), float("nan"), dtype=torch.bfloat16, device="cuda")
    q = q[:7, :2, :128, :576]
    q.copy_(x["q"])
    meta, _ = K.get_mla_metadata()
    for call in ("first", "reuse"):
        out, lse = K.flash_mla_with_kvcache(
            q, x["k_cache"], None, None, 512, meta, None, SCALE, False, False, x["indices"],
            x["attn_sink"], None, None, x["topk_length"])
        torch.cuda.synchronize()
        what = f"flash_mla_with_kvcache bf16 {call}"
        close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
        close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
        assert torch.equal(out, direct[0]) and torch.equal(lse, direct[1]), what


@pytest.mark.parametrize("s_q", [1, 2])
def test_flash_mla_with_kvcache_in_a_cuda_graph(s_q):
    """A decode step through flash_mla_with_kvcache (bf16 cache: the seesaw) captured once and
    replayed with new topk_length values written in place (within the tokens the inputs name, so
    no NaN-poisoned token becomes readable): each replay equals the reference of its lengths.
    s_q 2 also captures the lengths' repeat and the lse transpose."""
    import tle_kernels as K

    x = make_sparse_decode_inputs(5, s_q, 128, TOPK, is_fp8=False, device="cuda", seed=37 + s_q,
                                  attn_sink=True, topk_length=[TOPK] * 5)
    assert A.select_sparse_impl("auto", support_call(x)) == "seesaw"
    meta, _ = K.get_mla_metadata()

    def step():
        return K.flash_mla_with_kvcache(x["q"], x["k_cache"], None, None, 512, meta, None, SCALE,
                                        False, False, x["indices"], x["attn_sink"],
                                        topk_length=x["topk_length"])

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()  # compile, fill the metadata and warm up outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = step()
    for lengths in ([TOPK] * 5, [0, 5, 700, 64, 1], [2047, 1, 0, TOPK, 1000]):
        x["topk_length"].copy_(torch.tensor(lengths, dtype=torch.int32))
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        want_out, want_lse = reference(x)
        close(f"graph replay {lengths} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL,
              OUT_COS)
        close(f"graph replay {lengths} lse", lse, want_lse, LSE_ABS, LSE_REL)


@pytest.mark.parametrize("h_q", [8, 16, 32])
@pytest.mark.parametrize("b", [1, 64])
def test_tensor_parallel_head_counts_padded_to_64(b, h_q):
    """h_q 8 / 16 / 32 on the bf16 cache through the seesaw by name: q padded with zero heads to
    64 (tle_kernels/head_padding.py), with attn_sink and topk_length; b = 1 also runs as topk
    pieces (a batch under one wave). "auto" runs these calls on the narrow-head kernel
    (tle_kernels/sparse_decode_narrow_launch.py, no head padded): checked the same way."""
    x = make_sparse_decode_inputs(b, 2, h_q, TOPK, is_fp8=False, device="cuda",
                                  seed=400 + h_q + b, attn_sink=True,
                                  topk_length=lengths_for(b))
    run_and_check(x, f"b={b} h_q={h_q} seesaw", by_name=True)
    run_and_check(x, f"b={b} h_q={h_q} auto", impl="narrow")
