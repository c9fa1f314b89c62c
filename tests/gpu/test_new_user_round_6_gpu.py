"""New user round 6, on the GPU: what tests/test_new_user_round_6.py checks on the CPU, run.

- ``tle_kernels.sparse_decode`` runs in the custom op ``tle_kernels::sparse_mla_decode``: its
  outputs equal ``flash_mla_with_kvcache``'s with indices bit for bit, it captures in a CUDA graph
  and traces under ``torch.compile(fullgraph=True)``.
- on a torch with CUDA, a first call on FakeTensors fills the metadata with the device's SM count
  (the CPU build fills n_split 1).

    python3 -m pytest -q -m gpu tests/gpu/test_new_user_round_6_gpu.py
"""

from __future__ import annotations

import pytest
import torch

import tle_kernels as flash_mla
from tle_kernels import decode_api
from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs

pytestmark = pytest.mark.gpu

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
SCALE = 576 ** -0.5


@needs_cuda
@pytest.mark.parametrize("fp8", [True, False])
def test_sparse_decode_equals_flash_mla_with_kvcache(fp8):
    x = make_sparse_decode_inputs(4, 1, 64, 256, is_fp8=fp8, device="cuda", seed=5)
    out, lse = flash_mla.sparse_decode(x["q"], x["k_cache"], x["indices"], 512, SCALE, fp8)
    meta, _ = flash_mla.get_mla_metadata()
    want = flash_mla.flash_mla_with_kvcache(x["q"], x["k_cache"], None, None, 512, meta, None,
                                            SCALE, False, fp8, x["indices"])
    torch.cuda.synchronize()
    assert torch.equal(out, want[0]) and torch.equal(lse, want[1])


@needs_cuda
def test_sparse_decode_captures_in_a_cuda_graph():
    x = make_sparse_decode_inputs(4, 1, 64, 256, is_fp8=True, device="cuda", seed=6)
    args = (x["q"], x["k_cache"], x["indices"], 512, SCALE, True)
    want = flash_mla.sparse_decode(*args)  # compiles outside the capture
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out, lse = flash_mla.sparse_decode(*args)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, want[0]) and torch.equal(lse, want[1])


@needs_cuda
def test_sparse_decode_traces_under_torch_compile():
    x = make_sparse_decode_inputs(2, 1, 64, 128, is_fp8=True, device="cuda", seed=7)
    want = flash_mla.sparse_decode(x["q"], x["k_cache"], x["indices"], 512, SCALE, True)

    @torch.compile(fullgraph=True)
    def step(q, k, idx):
        return flash_mla.sparse_decode(q, k, idx, 512, SCALE, True)

    out, lse = step(x["q"], x["k_cache"], x["indices"])
    torch.cuda.synchronize()
    assert torch.equal(out, want[0]) and torch.equal(lse, want[1])


@needs_cuda
def test_a_fake_first_call_with_cuda_fills_the_device_sm_count():
    from torch._subclasses.fake_tensor import FakeTensorMode

    meta, _ = flash_mla.get_mla_metadata()
    with FakeTensorMode():
        q = torch.empty(2, 1, 128, 576, dtype=torch.bfloat16, device="cuda")
        k = torch.empty(4, 64, 1, 576, dtype=torch.bfloat16, device="cuda")
        bt = torch.empty(2, 4, dtype=torch.int32, device="cuda")
        cs = torch.empty(2, dtype=torch.int32, device="cuda")
        out, lse = flash_mla.flash_mla_with_kvcache(q, k, bt, cs, 512, meta)
    assert tuple(out.shape) == (2, 1, 128, 512) and tuple(lse.shape) == (2, 128, 1)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert meta.sm_count == sms
    assert meta.n_split == decode_api.choose_n_split(2, 1, 2, sms)
