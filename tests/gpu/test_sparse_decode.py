"""Sparse MLA decode (DeepSeek-V3.2) on the GPU: the naive Triton kernel against the fp32
reference with FlashMLA's sparse-decode tolerances, over b in {1, 7, 64}, s_q in {1, 2}, h_q in
{16, 64, 128}, topk 2048, FP8 and bf16 caches; then topk_length, the extra cache, page sizes
other than 64, FlashMLA's padded block stride, all-invalid rows and the public entry point; then
FlashMLA's entry point ``flash_mla_with_kvcache`` with indices, once per cache format and captured
in a CUDA graph.

Inputs come from ``make_sparse_decode_inputs``: each query row names distinct tokens of its
request, 10 % of the slots (more where said) hold invalid indices (-1, -2, -123456, -2**31, past
the cache, 2**31 - 1: a kernel that dereferences one faults or reads NaN), every token no valid
slot names is NaN (bf16, or quantized: NaN bytes, scales and RoPE), and outputs are NaN before
each launch, so an unwritten row shows too.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_decode.py
"""

from __future__ import annotations

import pytest
import torch

from tle_kernels import sparse_decode_api as A
from tle_kernels.fp8_kvcache import BYTES_PER_TOKEN
from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference

pytestmark = pytest.mark.gpu

# FlashMLA's sparse-decode test: an element passes when its absolute error is below abs_tol or
# its relative error below rel_tol; the whole tensor also within a cosine distance; infinities
# at the same places.
OUT_ABS, OUT_REL, OUT_COS = 1e-3, 2.01 / 128, 5e-6
LSE_ABS, LSE_REL = 1e-6, 8.01 / 65536
SCALE = 576 ** -0.55          # FlashMLA's test scale
TOPK = 2048
ARGS = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


@pytest.fixture(autouse=True)
def fp32_reference_matmuls():
    """The reference's matmuls in full fp32 (TF32 would cost it about 3 decimal digits), whatever
    another test set."""
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = tf32


def close(name, got, want, abs_tol, rel_tol, cos_tol=None):
    got, want = got.float(), want.float()
    assert got.shape == want.shape, f"{name}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    assert not torch.isnan(got).any(), f"{name}: NaN (a row unwritten, or an unnamed token read)"
    for v in (float("inf"), float("-inf")):
        assert torch.equal(got == v, want == v), f"{name}: {v} at other places than the reference"
    fin = torch.isfinite(want)
    g, w = got[fin].double(), want[fin].double()
    err = (g - w).abs()
    bad = (err >= abs_tol) & (err / (w.abs() + 1e-6) >= rel_tol)
    assert not bad.any(), (f"{name}: {int(bad.sum())} of {bad.numel()} elements off; worst abs "
                           f"{err.max().item():.3e}")
    if cos_tol is not None and (w * w).sum() > 1e-12:
        cos = 1 - 2 * (g * w).sum() / (g * g + w * w).sum()
        assert cos.item() < cos_tol, f"{name}: cosine distance {cos.item():.3e}"


def run_and_check(x, is_fp8, what, scale=SCALE):
    """The naive kernel into NaN-poisoned outputs and the public entry point, each against the
    reference; where "auto" runs the naive kernel too, the entry point's outputs equal the
    launch's bit for bit. Returns the reference (out, lse)."""
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, scale,
                                                 *(x[k] for k in ARGS))
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    ran = A.launch_sparse("naive", x["q"], x["k_cache"], x["indices"], scale, is_fp8, out, lse,
                          *(x[k] for k in ARGS))
    torch.cuda.synchronize()
    assert ran == "naive"
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
    out2, lse2 = A.sparse_decode(x["q"], x["k_cache"], x["indices"], 512, scale, is_fp8,
                                 *(x[k] for k in ARGS))
    torch.cuda.synchronize()
    assert out2.shape == out.shape and lse2.shape == lse.shape
    call = dict(q=x["q"], k_cache=x["k_cache"], indices=x["indices"], is_fp8=is_fp8,
                **{k: x[k] for k in ARGS})
    if A.select_sparse_impl("auto", call) == "naive":
        assert torch.equal(out2, out) and torch.equal(lse2, lse), f"{what}: API differs from launch"
    else:  # a faster kernel serves the call: its own check against the reference
        close(f"{what} API out", out2, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
        close(f"{what} API lse", lse2, want_lse, LSE_ABS, LSE_REL)
    return want_out, want_lse


@pytest.mark.parametrize("is_fp8", [True, False], ids=["fp8", "bf16"])
@pytest.mark.parametrize("h_q", [128, 64, 16])
@pytest.mark.parametrize("s_q", [1, 2])
@pytest.mark.parametrize("b", [1, 7, 64])
def test_naive_against_reference(b, s_q, h_q, is_fp8):
    x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, is_fp8=is_fp8, device="cuda",
                                  seed=b * 100 + s_q * 10 + h_q, attn_sink=True)
    run_and_check(x, is_fp8, f"b={b} s_q={s_q} h_q={h_q} fp8={is_fp8}")


@pytest.mark.parametrize("is_fp8", [True, False], ids=["fp8", "bf16"])
def test_topk_length_and_extra_cache(is_fp8):
    """topk_length 0 / partial / full / above topk, an extra cache of page size 2 with its own
    lengths (FlashMLA's MODEL1 features, here on the V3.2 layout), h_q 128, 64, 16 and 8 (the
    API runs a TLE kernel once per cache and merges the two, sparse_decode_extra.py)."""
    lengths = [0, 1, 700, TOPK, 5000, 64, 2047]
    extra_lengths = [512, 0, 3, 512, 100, 511, 256]
    for h_q, s_q in ((128, 2), (64, 1), (16, 2), (8, 1)):
        x = make_sparse_decode_inputs(7, s_q, h_q, TOPK, is_fp8=is_fp8, device="cuda",
                                      seed=h_q + s_q, attn_sink=True, topk_length=lengths,
                                      extra_topk=512, extra_page=2,
                                      extra_topk_length=extra_lengths)
        run_and_check(x, is_fp8, f"lengths + extra h_q={h_q} s_q={s_q} fp8={is_fp8}")


@pytest.mark.parametrize("page", [2, 61, 576])
def test_page_sizes(page):
    x = make_sparse_decode_inputs(5, 2, 128, 576, page=page, device="cuda", seed=page,
                                  attn_sink=True)
    run_and_check(x, True, f"page={page}")


def test_padded_block_stride_and_every_cache_dtype():
    """FlashMLA's tests allocate page + 1 token rows per block and slice the page off, so the
    block stride is not page * 656; and the cache may be int8 or float8_e4m3fn as well."""
    x = make_sparse_decode_inputs(7, 2, 64, TOPK, device="cuda", seed=5, attn_sink=True)
    k = x["k_cache"]
    n_blocks, page = k.shape[0], k.shape[1]
    padded = torch.full((n_blocks, page + 1, 1, BYTES_PER_TOKEN), 0x7F, dtype=torch.uint8,
                        device="cuda")            # 0x7F: NaN in e4m3, in a scale and in bf16
    padded[:, :page] = k
    x["k_cache"] = padded[:, :page]
    assert x["k_cache"].stride(0) == (page + 1) * BYTES_PER_TOKEN
    run_and_check(x, True, "padded block stride")
    for dtype in (torch.int8, torch.float8_e4m3fn):
        x["k_cache"] = padded[:, :page].view(dtype)
        run_and_check(x, True, f"cache dtype {dtype}")


@pytest.mark.parametrize("is_fp8", [True, False], ids=["fp8", "bf16"])
def test_mostly_and_wholly_invalid_rows(is_fp8):
    """60 % invalid slots; one request whose rows name nothing (out 0, lse +inf, with a sink);
    large scores (scale 1.0) and a sink of +-1e30 / +-inf on some heads."""
    x = make_sparse_decode_inputs(7, 2, 128, TOPK, is_fp8=is_fp8, device="cuda", seed=17,
                                  invalid=0.6, attn_sink=True)
    x["indices"][3] = -1
    x["indices"][5, 1, :] = 2**31 - 1
    x["attn_sink"][:4] = torch.tensor([1e30, -1e30, float("inf"), float("-inf")], device="cuda")
    want_out, want_lse = run_and_check(x, is_fp8, "invalid rows", scale=1.0)
    assert (want_lse[3] == float("inf")).all() and (want_lse[5, :, 1] == float("inf")).all()
    assert (want_out[3] == 0).all()


@pytest.mark.parametrize("is_fp8", [True, False], ids=["fp8", "bf16"])
def test_through_flash_mla_with_kvcache(is_fp8):
    """FlashMLA's entry point with indices, called as FlashMLA's sparse-decode test calls it
    (positionally, block_table and cache_seqlens None, q with a padded last dim), every optional
    tensor given: within FlashMLA's tolerances of the reference, equal to the entry point of the
    sparse decode, and the same again on a second call reusing the metadata the first filled."""
    import tle_kernels as K

    x = make_sparse_decode_inputs(7, 2, 128, TOPK, is_fp8=is_fp8, device="cuda", seed=31,
                                  attn_sink=True, topk_length=[0, 1, 700, TOPK, 5000, 64, 2047],
                                  extra_topk=512, extra_page=2,
                                  extra_topk_length=[512, 0, 3, 512, 100, 511, 256])
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    direct = A.sparse_decode(x["q"], x["k_cache"], x["indices"], 512, SCALE, is_fp8,
                             *(x[k] for k in ARGS))
    q = torch.full((8, 3, 129, 576 + 128), float("nan"), dtype=torch.bfloat16, device="cuda")
    q = q[:7, :2, :128, :576]
    q.copy_(x["q"])
    meta, _ = K.get_mla_metadata()
    for call in ("first", "reuse"):
        out, lse = K.flash_mla_with_kvcache(
            q, x["k_cache"], None, None, 512, meta, None, SCALE, False, is_fp8, x["indices"],
            x["attn_sink"], x["extra_k_cache"], x["extra_indices"], x["topk_length"],
            x["extra_topk_length"])
        torch.cuda.synchronize()
        what = f"flash_mla_with_kvcache fp8={is_fp8} {call}"
        close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
        close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
        assert torch.equal(out, direct[0]) and torch.equal(lse, direct[1]), what
        assert meta.have_initialized and meta.config.topk == TOPK and meta.config.extra_topk == 512
        assert meta.config.is_fp8_kvcache is is_fp8 and meta.config.extra_page_block_size == 2


def test_flash_mla_with_kvcache_in_a_cuda_graph():
    """A decode step through flash_mla_with_kvcache captured once and replayed with new
    topk_length values written in place (all within the tokens the inputs name, so no NaN-poisoned
    token becomes readable): each replay equals the reference of its lengths."""
    import tle_kernels as K

    x = make_sparse_decode_inputs(5, 1, 64, TOPK, device="cuda", seed=37, attn_sink=True,
                                  topk_length=[TOPK] * 5)
    meta, _ = K.get_mla_metadata()

    def step():
        return K.flash_mla_with_kvcache(x["q"], x["k_cache"], None, None, 512, meta, None, SCALE,
                                        False, True, x["indices"], x["attn_sink"],
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
        want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512,
                                                     SCALE, *(x[k] for k in ARGS))
        close(f"graph replay {lengths} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL,
              OUT_COS)
        close(f"graph replay {lengths} lse", lse, want_lse, LSE_ABS, LSE_REL)
