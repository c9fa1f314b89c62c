"""Rules of the drop-in decode call (tle_kernels.flash_mla_with_kvcache) that a fake-CUDA sweep
found broken: an explicit impl's alignment rule is checked before the metadata is filled; the
sparse impl names reach the sparse call; b = 0 is taken by the dense and the sparse call alike;
the fp32 reference refuses cache_seqlens past the block table. Fake CUDA tensors
(FakeTensorMode) let validation run to its end on a CPU-only machine; the SM count is patched."""

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import tle_kernels as flash_mla
from tle_kernels import decode_api as D
from tle_kernels import sparse_decode_api as S
from tle_kernels.decode_reference import mla_decode_reference

BF16, I32, U8 = torch.bfloat16, torch.int32, torch.uint8


@pytest.fixture
def h200(monkeypatch):
    monkeypatch.setattr(D, "sm_count", lambda device: 132)


def _misaligned_q(b=2, h_q=16, device="cpu"):
    # rows 16-byte strided, but the data starts 2 bytes past a boundary
    buf = torch.zeros(b * h_q * 576 + 8, dtype=BF16, device=device)
    return buf[1:1 + b * h_q * 576].view(b, 1, h_q, 576)


@pytest.mark.parametrize("impl", ["pipe", "seesaw", "seesaw-tma"])
def test_explicit_impl_misaligned_address_refused_before_the_metadata_is_filled(impl):
    meta, _ = flash_mla.get_mla_metadata()
    q = _misaligned_q()
    k = torch.zeros(4, 64, 1, 576, dtype=BF16)
    with pytest.raises(ValueError, match="16-byte aligned rows"):
        flash_mla.flash_mla_with_kvcache(q, k, torch.zeros(2, 2, dtype=I32),
                                         torch.zeros(2, dtype=I32), 512, meta, impl=impl)
    assert not meta.have_initialized and meta.config is None
    # "auto" takes the naive kernel for such rows instead: it gets past alignment to the device
    with pytest.raises(ValueError, match="expected a CUDA tensor"):
        flash_mla.flash_mla_with_kvcache(q, k, torch.zeros(2, 2, dtype=I32),
                                         torch.zeros(2, dtype=I32), 512, meta)


def test_explicit_impl_misaligned_strides_refused_on_fake_cuda_before_fill(h200):
    meta, _ = flash_mla.get_mla_metadata()
    with FakeTensorMode():
        q = torch.empty(2 * 16 * 577, dtype=BF16, device="cuda").as_strided(
            (2, 1, 16, 576), (16 * 577, 16 * 577, 577, 1))                   # 1154-byte rows
        k = torch.zeros(4, 64, 1, 576, dtype=BF16, device="cuda")
        bt = torch.zeros(2, 2, dtype=I32, device="cuda")
        sl = torch.zeros(2, dtype=I32, device="cuda")
        with pytest.raises(ValueError, match="16-byte aligned rows"):
            flash_mla.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, impl="seesaw")
        assert not meta.have_initialized
        out, lse = flash_mla.flash_mla_with_kvcache(q, k, bt, sl, 512, meta, impl="naive")
    assert meta.have_initialized and tuple(out.shape) == (2, 1, 16, 512)


@pytest.mark.parametrize("impl", ["seesaw-fp8", "split-fp8", "naive"])
def test_sparse_impl_names_reach_the_sparse_call(h200, impl):
    meta, _ = flash_mla.get_mla_metadata()
    with FakeTensorMode():
        q = torch.zeros(1, 1, 64, 576, dtype=BF16, device="cuda")
        k = torch.zeros(2, 64, 1, 656, dtype=U8, device="cuda")
        idx = torch.zeros(1, 1, 128, dtype=I32, device="cuda")
        info = D.validate(q, k, None, None, 512, meta, is_fp8_kvcache=True, indices=idx,
                          impl=impl)
        out, lse = flash_mla.flash_mla_with_kvcache(q, k, None, None, 512, meta,
                                                    is_fp8_kvcache=True, indices=idx, impl=impl)
    assert info["impl"] == impl
    assert tuple(out.shape) == (1, 1, 64, 512) and tuple(lse.shape) == (1, 64, 1)


def test_sparse_impl_that_cannot_run_the_call_still_refused():
    meta, _ = flash_mla.get_mla_metadata()
    q = torch.zeros(1, 1, 64, 576, dtype=BF16)
    k = torch.zeros(2, 64, 1, 576, dtype=BF16)             # a bf16 cache: not the FP8 kernels'
    with pytest.raises(NotImplementedError, match="seesaw-fp8"):
        flash_mla.flash_mla_with_kvcache(q, k, None, None, 512, meta, indices=torch.zeros(
            1, 1, 128, dtype=I32), impl="seesaw-fp8")
    assert not meta.have_initialized


@pytest.mark.parametrize("impl", ["seesaw-fp8", "split-fp8", "bogus"])
def test_dense_call_refuses_sparse_names_listing_its_own(impl):
    meta, _ = flash_mla.get_mla_metadata()
    with pytest.raises(ValueError) as info:
        flash_mla.flash_mla_with_kvcache(torch.zeros(1, 1, 16, 576, dtype=BF16),
                                         torch.zeros(2, 64, 1, 576, dtype=BF16),
                                         torch.zeros(1, 1, dtype=I32), torch.zeros(1, dtype=I32),
                                         512, meta, impl=impl)
    msg = str(info.value)
    assert msg.startswith("impl:") and all(repr(n) in msg for n in ("auto",) + D.IMPLS)
    assert ("needs indices" in msg) == (impl in S.IMPLS)


def test_batch_zero_gives_empty_outputs_dense_and_sparse(h200):
    dense_meta, _ = flash_mla.get_mla_metadata()
    sparse_meta, _ = flash_mla.get_mla_metadata()
    with FakeTensorMode():
        q = torch.zeros(0, 1, 64, 576, dtype=BF16, device="cuda")
        dense = flash_mla.flash_mla_with_kvcache(
            q, torch.zeros(2, 64, 1, 576, dtype=BF16, device="cuda"),
            torch.zeros(0, 1, dtype=I32, device="cuda"), torch.zeros(0, dtype=I32, device="cuda"),
            512, dense_meta)
        idx = torch.zeros(0, 1, 64, dtype=I32, device="cuda")
        k8 = torch.zeros(2, 64, 1, 656, dtype=U8, device="cuda")
        sparse = flash_mla.flash_mla_with_kvcache(q, k8, None, None, 512, sparse_meta,
                                                  is_fp8_kvcache=True, indices=idx,
                                                  topk_length=torch.zeros(0, dtype=I32,
                                                                          device="cuda"))
        direct = flash_mla.sparse_decode(q, k8, idx)
    for out, lse in (dense, sparse, direct):
        assert tuple(out.shape) == (0, 1, 64, 512) and tuple(lse.shape) == (0, 64, 1)
    assert sparse_meta.config.b == 0 and sparse_meta.n_split == 1


def test_sparse_launch_of_an_empty_batch_runs_no_kernel():
    # CPU tensors: a kernel launch would fail here, so returning the impl shows none was launched
    q = torch.zeros(0, 1, 64, 576, dtype=BF16)
    k = torch.zeros(2, 64, 1, 656, dtype=U8)
    out, lse = S.empty_outputs(q)
    assert S.launch_sparse("naive", q, k, torch.zeros(0, 1, 64, dtype=I32), 0.1, True, out,
                           lse) == "naive"


def test_sparse_op_checks_the_fp8_cache_address_itself():
    # under torch.compile validation cannot read the address: the op body refuses it
    raw = torch.zeros(2 * 64 * 656 + 16, dtype=U8)
    k = raw[1:1 + 2 * 64 * 656].view(2, 64, 1, 656)
    q = torch.zeros(1, 1, 64, 576, dtype=BF16)
    idx = torch.zeros(1, 1, 64, dtype=I32)
    with pytest.raises(ValueError, match="k_cache: the data must start on a 16-byte boundary"):
        D._sparse_mla_decode_impl(q, k, idx, 0.1, True, None, None, None, None, None, "naive")
    with pytest.raises(ValueError, match="extra_k_cache: the data must start"):
        D._sparse_mla_decode_impl(q, raw[:2 * 64 * 656].view(2, 64, 1, 656), idx, 0.1, True,
                                  None, None, k, idx, None, "naive")


def _ref_inputs(seqlen, table):
    torch.manual_seed(0)
    return (torch.randn(1, 1, 16, 576), torch.randn(2, 64, 1, 576),
            torch.tensor([table], dtype=I32), torch.tensor([seqlen], dtype=I32))


def test_reference_refuses_seqlens_past_the_block_table():
    with pytest.raises(ValueError, match="cache_seqlens: request 0 has 100 tokens.*64"):
        mla_decode_reference(*_ref_inputs(100, [0]))
    out, lse = mla_decode_reference(*_ref_inputs(64, [1]))   # exactly the table: accepted
    assert torch.isfinite(lse).all()


@pytest.mark.parametrize("bad", [2, -1])
def test_reference_refuses_used_block_ids_outside_the_cache(bad):
    with pytest.raises(ValueError, match="block_table: request 0 reads entry 1"):
        mla_decode_reference(*_ref_inputs(65, [0, bad]))
    out, lse = mla_decode_reference(*_ref_inputs(64, [0, bad]))  # entry 1 unused: never read
    assert torch.isfinite(lse).all()
