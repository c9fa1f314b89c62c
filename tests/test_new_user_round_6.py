"""A new user's round (6) on the kernel APIs, on a machine without a GPU: FlashMLA's Python
interface (``import tle_kernels as flash_mla``), the custom ops' fake implementations and the
benchmarks' arguments. One test per fix, and tests that pin what was found right:

- ``tle_kernels.sparse_decode`` launched its kernel from Python instead of through the custom op
  ``tle_kernels::sparse_mla_decode`` that ``flash_mla_with_kvcache`` uses: on FakeTensors it read
  their data pointers and tried to run on a device ("PyTorch is not linked with support for cuda
  devices"), where the op's fake implementation gives the outputs.
- ``is_fp8_kvcache=True`` with a bf16 cache (FlashMLA's sparse decode requires the flag; this
  package reads a bf16 cache with it False) said "with is_fp8 the cache holds bytes", a name the
  caller of ``flash_mla_with_kvcache`` never used, and not how a bf16 cache is read.
- FlashMLA's ``flash_attn_varlen_func`` (and its packed forms) gave the bare "module
  'tle_kernels' has no attribute"; it now says that FlashMLA's dense varlen prefill is not
  provided and which of FlashMLA's names are (docs/decode.md too).
"""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import tle_kernels as flash_mla  # noqa: E402
from tle_kernels import decode_api, sparse_decode_api  # noqa: E402

BF16 = torch.bfloat16
I32 = torch.int32


def sparse_args(device, b=2, s_q=1, h_q=64, topk=128, fp8=True):
    q = torch.empty(b, s_q, h_q, 576, dtype=BF16, device=device)
    if fp8:
        k = torch.empty(4, 64, 1, 656, dtype=torch.uint8, device=device)
    else:
        k = torch.empty(4, 64, 1, 576, dtype=BF16, device=device)
    return q, k, torch.empty(b, s_q, topk, dtype=I32, device=device)


# ---- sparse_decode runs in the custom op ------------------------------------------------------


@pytest.mark.parametrize("fp8", [True, False])
def test_sparse_decode_on_fake_tensors_gives_the_fake_outputs(fp8):
    with warnings.catch_warnings():
        # reading a FakeTensor's data pointer warns: it must not happen
        warnings.simplefilter("error")
        with FakeTensorMode():
            q, k, idx = sparse_args("cuda", b=3, s_q=2, h_q=16, fp8=fp8)
            out, lse = flash_mla.sparse_decode(q, k, idx, is_fp8=fp8)
    assert (tuple(out.shape), out.dtype, out.device.type) == ((3, 2, 16, 512), BF16, "cuda")
    assert (tuple(lse.shape), lse.dtype, lse.device.type) == ((3, 16, 2), torch.float32, "cuda")


def test_sparse_decode_calls_the_custom_op(monkeypatch):
    seen = []

    def op(*args):
        seen.append(args)
        return sparse_decode_api.empty_outputs(args[0])

    monkeypatch.setattr(decode_api, "sparse_mla_decode_op", op)
    monkeypatch.setattr(sparse_decode_api, "launch_sparse",
                        lambda *a, **k: pytest.fail("launched outside the custom op"))
    monkeypatch.setattr(sparse_decode_api, "validate_sparse",
                        lambda *a, **k: dict(softmax_scale=0.25, impl="naive"))
    q, k, idx = sparse_args("cpu")
    out, lse = flash_mla.sparse_decode(q, k, idx, 512, None, True)
    assert len(seen) == 1 and seen[0][3:5] == (0.25, True) and seen[0][-1] == "naive"
    assert tuple(out.shape) == (2, 1, 64, 512) and tuple(lse.shape) == (2, 64, 1)


def test_sparse_decode_still_validates_on_cpu_tensors():
    q, k, idx = sparse_args("cpu")
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor, got device cpu$"):
        flash_mla.sparse_decode(q, k, idx)


# ---- is_fp8_kvcache=True with a bf16 cache ----------------------------------------------------


def test_a_bf16_cache_flagged_fp8_names_flashmla_flag_and_the_bf16_way():
    # FlashMLA's sparse decode requires is_fp8_kvcache=True; this package also reads a bf16
    # cache, with the flag False: the error names the flag as the caller spelt it and says so
    q, _, idx = sparse_args("cpu")
    meta, _ = flash_mla.get_mla_metadata()
    k = torch.empty(4, 64, 1, 576, dtype=BF16)
    with pytest.raises(TypeError) as e:
        flash_mla.flash_mla_with_kvcache(q, k, None, None, 512, meta, is_fp8_kvcache=True,
                                         indices=idx)
    assert str(e.value) == (
        "k_cache: with is_fp8 the cache holds bytes (is_fp8_kvcache=True: FlashMLA's FP8 layout "
        "[num_blocks, page_block_size, 1, 656]): expected dtype uint8, int8 or float8_e4m3fn, got "
        "torch.bfloat16; a bf16 cache [num_blocks, page_block_size, 1, 576] is read with "
        "is_fp8_kvcache=False")
    assert not meta.have_initialized
    # a cache of another dtype gets no bf16 advice
    with pytest.raises(TypeError) as e:
        flash_mla.flash_mla_with_kvcache(q, k.half(), None, None, 512, meta,
                                         is_fp8_kvcache=True, indices=idx)
    assert str(e.value).endswith("got torch.float16")
    # ... and the same cache with the flag False gets as far as the device rule
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor, got device cpu$"):
        flash_mla.flash_mla_with_kvcache(q, k, None, None, 512, meta, is_fp8_kvcache=False,
                                         indices=idx)


# ---- FlashMLA's names ------------------------------------------------------------------------

# flash_mla/__init__.py's __all__ (FlashMLA 1.0.0)
FLASH_MLA_ALL = ("get_mla_metadata", "flash_mla_with_kvcache", "flash_attn_varlen_func",
                 "flash_attn_varlen_qkvpacked_func", "flash_attn_varlen_kvpacked_func",
                 "flash_mla_sparse_fwd")
NOT_PROVIDED = ("flash_attn_varlen_func", "flash_attn_varlen_qkvpacked_func",
                "flash_attn_varlen_kvpacked_func")


@pytest.mark.parametrize("name", NOT_PROVIDED)
def test_flashmla_varlen_prefill_is_missing_saying_so(name):
    assert not hasattr(flash_mla, name)
    with pytest.raises(AttributeError) as e:
        getattr(flash_mla, name)
    assert str(e.value) == (
        f"module 'tle_kernels' has no attribute {name!r}: FlashMLA's dense variable-length "
        "prefill (flash_attn_varlen_func and its packed forms, SM100 kernels) is not provided; "
        "of FlashMLA's interface tle_kernels has get_mla_metadata, flash_mla_with_kvcache (dense "
        "and sparse decode) and flash_mla_sparse_fwd")


def test_every_other_flashmla_name_is_there_and_the_docs_say_which_are_not():
    for name in FLASH_MLA_ALL:
        if name not in NOT_PROVIDED:
            assert callable(getattr(flash_mla, name)) and name in flash_mla.__all__
    with pytest.raises(AttributeError, match=r"^module 'tle_kernels' has no attribute 'nosuch'$"):
        flash_mla.nosuch
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parent.parent / "docs" / "decode.md")
                    .read_text().split())
    assert ("FlashMLA's dense variable-length prefill (`flash_attn_varlen_func`, "
            "`flash_attn_varlen_qkvpacked_func`, `flash_attn_varlen_kvpacked_func`: SM100 "
            "kernels) is not: asking for one raises AttributeError saying so") in text
