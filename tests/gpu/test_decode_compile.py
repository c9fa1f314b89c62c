"""The drop-in decode call under torch.compile(fullgraph=True) on the GPU: the dense call (impl
"auto" and explicit TLE impls) and the sparse call (bf16 and FP8 caches, "auto" and the explicit
FP8 kernels) trace in one graph, the first call filling the metadata (the SM count not cached
yet) and match the eager call; an explicit impl refused inside the op (a q whose data starts off
a 16-byte boundary, which a trace cannot see) leaves the metadata as it was.

    python3 -m pytest -q -m gpu tests/gpu/test_decode_compile.py
"""

from __future__ import annotations

import pytest
import torch

import tle_kernels as flash_mla
from tle_kernels import api
from tle_kernels.decode_reference import make_decode_inputs
from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    torch._dynamo.reset()
    monkeypatch.setattr(api, "_SMS", {})      # the first call asks the device inside the trace


def _close(got, want):
    out, lse = got
    torch.testing.assert_close(out.float(), want[0].float(), atol=2e-3, rtol=2e-2)
    torch.testing.assert_close(lse, want[1], atol=1e-4, rtol=1e-4, equal_nan=True)


def _dense_step(impl):
    def step(q, k, bt, sl, meta):
        return flash_mla.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, impl=impl)
    return step


@pytest.mark.parametrize("impl", ["auto", "naive", "pipe", "seesaw"])
def test_dense_call_compiles_fullgraph_and_matches_eager(impl):
    q, k, bt, sl = make_decode_inputs(4, 1, 64, 1, [0, 63, 65, 700], poison=False)
    meta, _ = flash_mla.get_mla_metadata()
    got = torch.compile(_dense_step(impl), fullgraph=True)(q, k, bt, sl, meta)
    assert meta.have_initialized and meta.config.b == 4
    want = _dense_step(impl)(q, k, bt, sl, flash_mla.get_mla_metadata()[0])
    _close(got, want)
    sl2 = torch.tensor([5, 64, 129, 300], dtype=torch.int32, device="cuda")
    _close(torch.compile(_dense_step(impl), fullgraph=True)(q, k, bt, sl2, meta),
           _dense_step(impl)(q, k, bt, sl2, flash_mla.get_mla_metadata()[0]))


def test_explicit_impl_refused_in_the_op_leaves_the_metadata_unfilled():
    q, k, bt, sl = make_decode_inputs(2, 1, 16, 1, 64, poison=False)
    buf = torch.zeros(q.numel() + 8, dtype=q.dtype, device="cuda")
    shifted = buf[1:1 + q.numel()].view(q.shape)   # strides aligned, data 2 bytes off
    shifted.copy_(q)
    meta, _ = flash_mla.get_mla_metadata()
    with pytest.raises(Exception, match="16-byte aligned rows"):
        torch.compile(_dense_step("seesaw"), fullgraph=True)(shifted, k, bt, sl, meta)
    assert not meta.have_initialized


def _sparse_step(impl, is_fp8):
    def step(c, meta):
        return flash_mla.flash_mla_with_kvcache(
            c["q"], c["k_cache"], None, None, 512, meta, is_fp8_kvcache=is_fp8,
            indices=c["indices"], attn_sink=c["attn_sink"], topk_length=c["topk_length"],
            impl=impl)
    return step


@pytest.mark.parametrize("impl,is_fp8", [("auto", True), ("auto", False), ("split-fp8", True),
                                         ("seesaw-fp8", True), ("naive", True)])
def test_sparse_call_compiles_fullgraph_and_matches_eager(impl, is_fp8):
    c = make_sparse_decode_inputs(3, 1, 64, 128, is_fp8=is_fp8, topk_length=[128, 70, 0],
                                  poison=False)
    meta, _ = flash_mla.get_mla_metadata()
    got = torch.compile(_sparse_step(impl, is_fp8), fullgraph=True)(c, meta)
    assert meta.have_initialized and meta.config.topk == 128
    _close(got, _sparse_step(impl, is_fp8)(c, flash_mla.get_mla_metadata()[0]))
