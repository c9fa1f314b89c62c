"""The bf16 sparse MLA decode on the narrow-head prefill kernel (impl "narrow",
tle_kernels/sparse_decode_narrow_launch.py) on the CPU: what it takes and refuses, what "auto"
picks, and the decode's rows through the kernel's CPU emulation (every address bounds-checked)
against the fp32 sparse decode reference, into fenced outputs (nothing written past h_q, s_q or
the batch), s_q 1 (lse in place) and 2 (through the transposing scratch), hostile indices."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_mla_narrow as narrow_mod  # noqa: E402
from tle_kernels import sparse_decode_api as A  # noqa: E402
from tle_kernels.sparse_decode_narrow_launch import (launch_sparse_narrow,  # noqa: E402
                                                     sparse_narrow_unsupported_reason)
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,  # noqa: E402
                                                 sparse_decode_reference)

from .gpu.test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL,  # noqa: E402
                                     SCALE, close)
from .test_prefill_head_padding import as_kernel_argument  # noqa: E402
from .test_sparse_decode_head_masking import fenced_outputs, fences_intact  # noqa: E402

KDIR = Path(__file__).resolve().parent.parent / "tle_kernels"
OPTIONAL = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


def inputs(b, s_q, h_q, topk, is_fp8=False, **kw):
    return make_sparse_decode_inputs(b, s_q, h_q, topk, page=16, is_fp8=is_fp8, device="cpu",
                                     seed=h_q + b + s_q, invalid=0.25, **kw)


def call_of(x, is_fp8=False, **over):
    call = {k: x[k] for k in ("q", "k_cache", "indices") + OPTIONAL}
    call["is_fp8"] = is_fp8
    call.update(over)
    return call


@pytest.mark.parametrize("h_q", [8, 16, 32])
def test_auto_takes_it_for_bf16(h_q):
    x = inputs(2, 1, h_q, 128)
    assert A.select_sparse_impl("auto", call_of(x)) == "narrow"
    sink = torch.zeros(h_q)
    assert A.select_sparse_impl("auto", call_of(x, attn_sink=sink)) == "narrow"
    lengths = torch.full((2,), 64, dtype=torch.int32)
    assert A.select_sparse_impl("auto", call_of(x, topk_length=lengths)) == "narrow"


def test_what_it_refuses_and_why():
    x = inputs(2, 1, 16, 128)
    assert sparse_narrow_unsupported_reason(**call_of(x)) is None
    assert sparse_narrow_unsupported_reason(**call_of(x, is_fp8=True)) == \
        "narrow reads a bf16 cache only"
    assert sparse_narrow_unsupported_reason(**call_of(x, extra_k_cache=x["k_cache"])) == \
        "narrow does not take an extra cache"
    lengths = torch.ones(2, dtype=torch.int32)
    assert sparse_narrow_unsupported_reason(**call_of(x, topk_length=lengths)) is None
    assert sparse_narrow_unsupported_reason(**call_of(x, attn_sink=torch.zeros(16))) is None
    x64 = inputs(1, 1, 64, 128)
    assert sparse_narrow_unsupported_reason(**call_of(x64)) == \
        "narrow needs h_q <= 32 (got h_q=64)"
    padded = torch.zeros(x["k_cache"].shape[0], 17, 1, 576, dtype=torch.bfloat16)[:, :16]
    assert "evenly spaced" in sparse_narrow_unsupported_reason(**call_of(x, k_cache=padded))
    with pytest.raises(NotImplementedError, match="impl: 'narrow' cannot run this call: narrow "
                                                  "reads a bf16 cache only"):
        launch_sparse_narrow(x["q"], x["k_cache"], x["indices"], SCALE, True,
                             *fenced_outputs(2, 1, 16)[1])
    x8 = inputs(1, 1, 16, 128, is_fp8=True)
    assert A.select_sparse_impl("auto", call_of(x8, is_fp8=True)) == "split-fp8"


@pytest.mark.parametrize("b,s_q,h_q,topk,sink", [(3, 1, 16, 192, False), (2, 2, 32, 128, True),
                                                 (2, 2, 8, 64, False), (3, 1, 8, 64, True)])
def test_decode_rows_against_the_reference(monkeypatch, b, s_q, h_q, topk, sink):
    from tle_compiler.testing.emulator import load_kernel_module

    emu = load_kernel_module(KDIR / "sparse_mla_narrow.py",
                             dot_dtypes=(torch.bfloat16,)).sparse_mla_narrow
    seen = []

    class Strided:  # the emulation takes contiguous tensors: views are handed over as such
        def __getitem__(self, grid):
            def run(*args, **kw):
                seen.append((args[0], args[3]))
                return emu[grid](*map(as_kernel_argument, args), **kw)
            return run
    monkeypatch.setattr(narrow_mod, "sparse_mla_narrow", Strided())
    x = inputs(b, s_q, h_q, topk, attn_sink=sink)
    x["indices"][0, 0] = -1  # a row with no valid index
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in OPTIONAL))
    (out_b, lse_b), (out, lse) = fenced_outputs(b, s_q, h_q)
    launch_sparse_narrow(x["q"], x["k_cache"], x["indices"], SCALE, False, out, lse,
                         *(x[k] for k in OPTIONAL))
    close(f"h_q={h_q} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"h_q={h_q} lse", lse, want_lse, LSE_ABS, LSE_REL)
    assert (out[0, 0] == 0).all() and (lse[0, :, 0] == float("inf")).all()
    fences_intact(out_b, lse_b, b, s_q, h_q)
    ((kq, _),) = seen  # one launch, on the caller's q rows (no padded copy)
    assert kq.shape == (b * s_q, h_q, 576)


@pytest.mark.parametrize("b,s_q,h_q,topk,sink", [(3, 2, 16, 192, True), (4, 1, 32, 128, False)])
def test_decode_with_topk_length_against_the_reference(monkeypatch, b, s_q, h_q, topk, sink):
    """topk_length [b] reaches the narrow kernel's topk_length variant as one length per token
    row (a request's s_q rows share it); lengths 0, 1, past topk and in between."""
    from tle_compiler.testing.emulator import load_kernel_module

    emu = load_kernel_module(KDIR / "sparse_mla_narrow.py",
                             dot_dtypes=(torch.bfloat16,)).sparse_mla_narrow_topk_length
    lengths_seen = []

    class Strided:
        def __getitem__(self, grid):
            def run(*args, **kw):
                lengths_seen.append(args[17].clone())
                return emu[grid](*map(as_kernel_argument, args), **kw)
            return run
    monkeypatch.setattr(narrow_mod, "sparse_mla_narrow_topk_length", Strided())
    lengths = [0, 1, topk + 50, 70][:b]
    x = inputs(b, s_q, h_q, topk, attn_sink=sink, topk_length=lengths)
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in OPTIONAL))
    (out_b, lse_b), (out, lse) = fenced_outputs(b, s_q, h_q)
    assert A.select_sparse_impl("auto", call_of(x, attn_sink=x["attn_sink"],
                                                topk_length=x["topk_length"])) == "narrow"
    launch_sparse_narrow(x["q"], x["k_cache"], x["indices"], SCALE, False, out, lse,
                         *(x[k] for k in OPTIONAL))
    close(f"h_q={h_q} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"h_q={h_q} lse", lse, want_lse, LSE_ABS, LSE_REL)
    assert (out[0] == 0).all() and (lse[0] == float("inf")).all()  # request 0: length 0
    fences_intact(out_b, lse_b, b, s_q, h_q)
    (seen,) = lengths_seen
    assert seen.tolist() == [n for n in lengths for _ in range(s_q)]


def test_a_misaligned_topk_length_is_handed_over_aligned(monkeypatch):
    """A topk_length [b] whose data does not start on 16 bytes (a slice of a longer tensor) is
    one "auto" takes the narrow kernel for; the launch hands the kernel an aligned copy of it (as
    the seesaw's launch does, through sparse_decode_rows.token_lengths) instead of refusing."""
    x = inputs(3, 1, 16, 128)
    lengths = torch.tensor([9, 0, 100, 64], dtype=torch.int32)[1:]
    assert lengths.data_ptr() % 16 != 0
    assert A.select_sparse_impl("auto", call_of(x, topk_length=lengths)) == "narrow"
    seen = []

    class Record:
        def __getitem__(self, grid):
            return lambda *a, **kw: seen.append(a[17])
    monkeypatch.setattr(narrow_mod, "sparse_mla_narrow_topk_length", Record())
    out, lse = A.empty_outputs(x["q"])
    launch_sparse_narrow(x["q"], x["k_cache"], x["indices"], SCALE, False, out, lse, None,
                         lengths)
    (got,) = seen
    assert got.tolist() == [0, 100, 64] and got.data_ptr() % 16 == 0
