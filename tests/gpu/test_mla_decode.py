"""Dense MLA decode on the GPU: every implementation whose file exists (the naive Triton kernel
always; the TLE launchers of tle_kernels/decode_api.py's LAUNCHERS once their files are in the
package) against the fp32 reference, with FlashMLA's decode-test tolerances, over a sample of the
grid b in {1, 7, 64, 128}, s_q in {1, 2}, h_q in {16, 32, 64, 128}, seqlens 0 / 1 / 63 / 64 / 65 /
4096 / 32768 mixed in one batch, causal on and off, grouped kv heads; random non-contiguous block
tables with NaN in every cache row past a request's seqlen and an out-of-range block id in every
block-table entry past its pages; outputs NaN-poisoned before each launch. The combine is checked
through the split-KV form of the naive kernel and through every split-KV TLE kernel. Then a
CUDA-graph capture of the public API with its metadata reused, replayed with new q and
cache_seqlens. About a minute on an H200, most of it compiling the kernels' variants.

    python3 -m pytest -q -m gpu tests/gpu/test_mla_decode.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import tle_kernels as K
from tle_kernels import decode_api as D
from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference

pytestmark = pytest.mark.gpu

# FlashMLA's dense-decode test: an element passes when its absolute error is below abs_tol or its
# relative error below rel_tol; the whole tensor also within a cosine distance; infinities equal.
OUT_ABS, OUT_REL, OUT_COS = 8e-4, 2.01 / 128, 5e-6
LSE_ABS, LSE_REL = 1e-6, 8.01 / 65536
MIXED = (0, 1, 63, 64, 65, 4096, 32768)


def existing_impls():
    """naive, and each TLE implementation whose launcher file is in the package (a file that is
    there but fails to import fails the tests that use it)."""
    here = Path(K.__file__).parent
    return ["naive"] + [name for name, (mod, _, _) in D.LAUNCHERS.items()
                        if (here / f"{mod}.py").exists()]


IMPLS = existing_impls()


def mixed_seqlens(b: int, shift: int = 0):
    return [MIXED[(i + shift) % len(MIXED)] for i in range(b)]


def close(name, got, want, abs_tol, rel_tol, cos_tol=None):
    got, want = got.float(), want.float()
    assert got.shape == want.shape, f"{name}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    assert not torch.isnan(got).any(), f"{name}: NaN (unwritten or read past seqlen?)"
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


def compare(what, out, lse, want):
    w_out, w_lse = want
    close(f"{what} out", out, w_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, w_lse, LSE_ABS, LSE_REL)


def poisoned(q):
    out, lse = D.empty_outputs(q)
    return out.fill_(float("nan")), lse.fill_(float("nan"))


def run_impls(q, k, bt, sl, causal, scale=None, naive_splits=(1,)):
    """Every existing implementation (a TLE one unsplit and split as the metadata would split it,
    the naive one at ``naive_splits``) and the public API, against the reference."""
    want = mla_decode_reference(q, k, bt, sl, causal=causal, softmax_scale=scale)
    sm_scale = 576 ** -0.5 if scale is None else scale
    b, s_q, h_q, _ = q.shape
    h_kv = k.shape[2]
    meta_split = D.choose_n_split(b, h_kv, D.row_blocks(s_q, h_q, h_kv), D.sm_count(q.device))
    ran = []
    for impl in IMPLS:
        why = D.unsupported_reason(impl, s_q, h_q, h_kv)
        if why is not None:   # an explicit request says why, before any launch
            with pytest.raises(ValueError, match="cannot run this call"):
                D.select_impl(impl, s_q, h_q, h_kv)
            continue
        splits = {1, meta_split} if impl in D.SPLIT_IMPLS else set(naive_splits)
        for n_split in sorted(splits):
            out, lse = poisoned(q)
            assert D.launch(impl, q, k, bt, sl, sm_scale, causal, n_split, out, lse) == impl
            torch.cuda.synchronize()
            compare(f"{impl} n_split={n_split} b={b} s_q={s_q} h_q={h_q} h_kv={h_kv} causal={causal}",
                    out, lse, want)
        ran.append(impl)
    meta, _ = K.get_mla_metadata()
    out, lse = K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, softmax_scale=scale, causal=causal)
    compare("api auto", out, lse, want)
    assert out.shape == (b, s_q, h_q, 512) and lse.shape == (b, h_q, s_q)
    return ran


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal", [
    (1, 1, 128, 1, [32768], False),
    (1, 2, 16, 1, [65], True),
    (7, 1, 64, 1, "mixed", False),
    (7, 2, 32, 1, "mixed", True),
    (64, 1, 16, 1, "mixed", True),
    (64, 2, 128, 1, "mixed", True),
    (128, 1, 128, 1, "mixed", False),
    (128, 2, 64, 1, "mixed", False),
    (128, 1, 32, 1, "mixed", True),
])
def test_against_reference(b, s_q, h_q, h_kv, seqlens, causal):
    if seqlens == "mixed":
        seqlens = mixed_seqlens(b, shift=b + s_q)
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, seqlens, device="cuda", seed=b * s_q + h_q)
    assert "naive" in run_impls(q, k, bt, sl, causal)


@pytest.mark.parametrize("b,s_q,h_q,h_kv,seqlens,causal", [
    (2, 4, 126, 2, [140, 20], True),        # FlashMLA's grid: grouped, h_q not a power of two
    (6, 2, 9, 3, [4096, 0, 1, 63, 64, 65], False),
    (2, 1, 1, 1, [4096, 5], False),         # one query head
    (1, 3, 64, 8, [200], True),             # 8 kv heads of 8 heads each
])
def test_grouped_heads_and_odd_shapes(b, s_q, h_q, h_kv, seqlens, causal):
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, h_kv, seqlens, device="cuda", seed=h_q)
    run_impls(q, k, bt, sl, causal)


@pytest.mark.parametrize("b,s_q,h_q,seqlens,causal,n_split", [
    (3, 2, 128, [4096, 65, 0], True, 5),   # 64-row blocks; empty splits, an empty request
    (4, 1, 16, [1, 700, 63, 32768], False, 37),
])
def test_combine_of_naive_splits(b, s_q, h_q, seqlens, causal, n_split):
    """The combine merging the naive kernel's split-KV partials (a second producer of partials
    besides the TLE kernels, whose splits every other test runs)."""
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, 1, seqlens, device="cuda", seed=n_split)
    run_impls(q, k, bt, sl, causal, naive_splits=(n_split,))


def test_empty_batch_and_custom_scale():
    q, k, bt, sl = make_decode_inputs(4, 2, 64, 1, [0, 0, 0, 0], device="cuda", seed=1)
    meta, _ = K.get_mla_metadata()
    out, lse = K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, causal=True)
    torch.cuda.synchronize()
    assert torch.all(out == 0) and torch.all(lse == float("inf"))
    q, k, bt, sl = make_decode_inputs(3, 1, 32, 1, [100, 7, 4096], device="cuda", seed=2)
    run_impls(q, k, bt, sl, False, scale=0.3)


def test_unaligned_rows_run_on_the_naive_kernel():
    """q whose rows start 2 bytes into a wider buffer: "auto" runs the naive kernel (the TLE
    kernels copy 16-byte aligned rows) and still matches the reference."""
    q, k, bt, sl = make_decode_inputs(5, 2, 64, 1, [3, 64, 65, 900, 0], device="cuda", seed=9)
    wide = torch.zeros(5, 2, 64, 600, dtype=torch.bfloat16, device="cuda")
    wide[..., 1:577] = q
    qs = wide[..., 1:577]
    assert not D.rows_aligned(qs)
    meta, _ = K.get_mla_metadata()
    out, lse = K.flash_mla_with_kvcache(qs, k, bt, sl, 512, meta, causal=True)
    compare("unaligned q, auto", out, lse, mla_decode_reference(q, k, bt, sl, causal=True))


@pytest.mark.parametrize("b,s_q,causal", [(8, 1, False), (4, 2, True), (32, 1, True),
                                         (2, 1, False), (2, 2, True)])
def test_auto_runs_the_split_pipe_decode_at_a_small_batch(b, s_q, causal):
    """A batch of 4 to fewer-than-SMs (request, 64-row block) items of two or more requests at
    h_q 128 (at b 2 the combine pipelines its split loop): "auto" runs the
    pipe decode split as the metadata splits it (decode_api.auto_prefers_split), through the
    public API too, against the reference."""
    n_split = auto_runs_the_pipe_decode(b, s_q, 128, causal, "split pipe",
                                        lambda sms: D.auto_prefers_split(b, s_q, 128, 1, sms))
    assert n_split > 1


def auto_runs_the_pipe_decode(b, s_q, h_q, causal, label, prefers) -> int:
    """"auto" runs the pipe decode (``prefers(sms)`` says it should), split as the metadata
    splits it, through decode_api.launch and the public API, against the reference; the split."""
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, 1, mixed_seqlens(b, b), device="cuda", seed=b)
    sms = D.sm_count(q.device)
    assert prefers(sms)
    want = mla_decode_reference(q, k, bt, sl, causal=causal)
    n_split = D.choose_n_split(b, 1, D.row_blocks(s_q, h_q, 1), sms)
    out, lse = poisoned(q)
    assert D.launch("auto", q, k, bt, sl, 576 ** -0.5, causal, n_split, out, lse) == "pipe"
    torch.cuda.synchronize()
    compare(f"auto ({label})", out, lse, want)
    meta, _ = K.get_mla_metadata()
    out, lse = K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, causal=causal)
    assert meta.n_split == n_split
    compare(f"api auto ({label})", out, lse, want)
    return n_split


@pytest.mark.parametrize("b,s_q,h_q,causal", [(32, 1, 16, False), (40, 2, 16, True),
                                              (132, 1, 32, True)])
def test_auto_runs_the_pipe_decode_at_few_rows(b, s_q, h_q, causal):
    """32 or more requests of at most 32 query rows per kv head: "auto" runs the pipe decode
    (decode_api.auto_prefers_few_rows), split as the metadata splits it where the requests do not
    fill the SMs, through the public API too, against the reference."""
    auto_runs_the_pipe_decode(b, s_q, h_q, causal, "pipe, few rows",
                              lambda sms: D.auto_prefers_few_rows(b, s_q, h_q, 1))


@pytest.mark.parametrize("impl", IMPLS + ["auto"])
def test_cuda_graph_capture_and_replay(impl):
    """The public API captured in a CUDA graph, the metadata filled by the warm-up call and reused
    by the captured one; replayed after new q values and new cache_seqlens (same shapes, each at
    most the old one: a request's block-table entries past its old pages are poisoned) are copied
    into the captured inputs ("auto": the split pipe decode at this batch)."""
    b, s_q, h_q = 8, 2, 128
    seqlens = [4096, 65, 0, 1, 700, 64, 2000, 63]
    q, k, bt, sl = make_decode_inputs(b, s_q, h_q, 1, seqlens, device="cuda", seed=11)
    if impl != "auto" and D.unsupported_reason(impl, s_q, h_q, 1) is not None:
        pytest.fail(f"{impl} cannot run the DeepSeek decode shape: "
                    f"{D.unsupported_reason(impl, s_q, h_q, 1)}")
    meta, _ = K.get_mla_metadata()
    K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, causal=True, impl=impl)  # compile, fill meta
    filled = (meta.config, meta.n_split)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, causal=True, impl=impl)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, lse = K.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, causal=True, impl=impl)
    assert (meta.config, meta.n_split) == filled
    for step, new_lens in enumerate(([4096, 65, 0, 1, 700, 64, 2000, 63],
                                     [4000, 1, 0, 0, 640, 64, 1999, 2])):
        g = torch.Generator(device="cuda").manual_seed(100 + step)
        q.copy_(torch.randn(q.shape, generator=g, device="cuda", dtype=torch.bfloat16) / 10)
        sl.copy_(torch.tensor(new_lens, dtype=torch.int32))
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        compare(f"graph {impl} step {step}", out, lse,
                mla_decode_reference(q, k, bt, sl, causal=True))
    with pytest.raises(ValueError, match=r"^tile_scheduler_metadata"):
        K.flash_mla_with_kvcache(q[:, :1], k, bt, sl, 512, meta, causal=True, impl=impl)
