"""An adversarial round on the drop-in entry points (tle_kernels.flash_mla_with_kvcache, dense and
sparse; tle_kernels.flash_mla_sparse_fwd), called as a serving engineer porting from FlashMLA
would get them wrong. Each call either raises before any launch (a TypeError / ValueError /
NotImplementedError whose message starts with the argument at fault, the metadata left empty) or
is taken with the right output shapes. Fake CUDA tensors (FakeTensorMode, the SM count patched)
let validation run to its end on a CPU-only machine: a call accepted there reaches the custom op's
fake implementation and launches nothing.

Wrong before the fixes that came with this file:
- dense, a k_cache of 0 blocks with a batch of requests was accepted, and the launcher's TMA
  producer built a tensor descriptor over it (Triton: AssertionError "shape must be positive",
  inside the op, after the metadata was filled). Now refused (k_cache: num_blocks); b = 0 still
  takes any cache; mla_decode_launch.tma_unavailable_reason says "empty" (cp.async instead, and a
  ValueError where TMA is forced) rather than the assertion.
- dense, impl="seesaw-tma" (TMA forced) with a k_cache whose stride of a one-entry dim (h_kv = 1)
  is not a multiple of 16 bytes passed validation (the row alignment skips such dims) and was
  refused by the launcher after the metadata was filled. Now refused by validation.
- dense, TLE_DECODE_TMA=1 with impl="seesaw" or "pipe" forces their TMA producer too; a cache
  no tensor descriptor takes was refused by the launcher, after the metadata was filled. Now
  refused by validation, naming the variable.
- an FP8 byte cache on the dense call, or on the sparse call without is_fp8_kvcache=True, was
  refused with the bf16 dtype rule only; the message now says it is the FP8 layout and what to
  pass.
- numpy scalars (numpy.bool for causal / is_fp8_kvcache, numpy.float32 for a scale) were refused
  with "expected a bool, got bool" / "expected a Python float, got float32": the message now
  names the type with its module.

- under FakeTensorMode (and so while torch.compile traces) a sparse call on a bf16 cache whose
  token rows are not evenly spaced (a layer slice of a [num_blocks, layers, page, 1, 576] buffer)
  leaked torch's "Cannot view a tensor ..." ValueError from sparse_decode_seesaw_launch.cache_rows,
  which caught only the RuntimeError real tensors raise: it catches both now (real CPU tensors
  reach the device check).

Checked and found right (pinned below): fp16 / fp32 q, int64 / bool block_table, cache_seqlens,
indices, topk_length; ranks and head dims 512 / 575 / 577; page size 32; h_kv 0 / 3; s_q 0, h_q 0;
s_q 5 and 9 (taken, as FlashMLA takes them); b mismatches of block_table / cache_seqlens / indices /
topk_length / extra_indices; topk 0 / 96; attn_sink length, dtype, rank, stride, device; devices
(CPU, meta, another CUDA device); a q, block_table, cache_seqlens or attn_sink whose last dim is
not contiguous (refused); q with its heads before its queries, expanded q, every other block or
one layer of a k_cache buffer, block_table column slices, indices with the query rows outermost
(taken: the launches pass their strides, and the naive kernels compute them right in Triton's
interpreter, dense and sparse, FP8 and bf16 caches); b = 0; a q that requires grad (forward runs,
backward refused by name); head_dim_v 256 / 576 / True / 512.0; softmax_scale 0 / negative /
NaN / inf / tensor / True (an int is taken); causal=True with s_q 1 (taken), with indices
(refused); num_splits given (tensor, 0, False); is_fp8_kvcache=1; sparse arguments on the dense
call and extra arguments without extra_k_cache; metadata filled by another shape, another causal
or the other kind of call (refused, as FlashMLA does), the tuple of get_mla_metadata passed whole;
FlashMLA's positional order of all 16 arguments, block_table / cache_seqlens ignored with indices;
the prefill's sm_scale None / tensor / NaN, d_v, dtypes, shapes, batched layout and devices.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import tle_kernels as flash_mla
from tle_kernels import decode_api as D
from tle_kernels import mla_decode_launch as L
from tle_kernels import sparse_decode_api as S

BF16, F16, F32, I32, I64, U8 = (torch.bfloat16, torch.float16, torch.float32, torch.int32,
                                torch.int64, torch.uint8)

pytestmark = pytest.mark.filterwarnings("ignore:Accessing the data pointer of FakeTensor")


@pytest.fixture(autouse=True)
def h200(monkeypatch):
    monkeypatch.setattr(D, "sm_count", lambda device: 132)
    monkeypatch.delenv(L.TMA_ENV, raising=False)


class On:
    """A tensor argument kept on ``device`` (fake), where the others become fake CUDA tensors."""

    def __init__(self, device: str, x: torch.Tensor):
        self.device, self.x = device, x


def fake(v, device="cuda"):
    """A CPU tensor (or ``On``) as a fake tensor of its shape, strides and dtype; inside
    FakeTensorMode only."""
    if isinstance(v, On):
        return fake(v.x, v.device)
    if not isinstance(v, torch.Tensor):
        return v
    return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device=device)


def dense(b=2, s_q=1, h_q=16, h_kv=1, blocks=4, max_blocks=2):
    return dict(q=torch.zeros(b, s_q, h_q, 576, dtype=BF16),
                k_cache=torch.zeros(blocks, 64, h_kv, 576, dtype=BF16),
                block_table=torch.zeros(b, max_blocks, dtype=I32),
                cache_seqlens=torch.zeros(b, dtype=I32), head_dim_v=512)


def sparse(b=2, s_q=1, h_q=64, topk=64, page=64, blocks=3, fp8=True):
    return dict(q=torch.zeros(b, s_q, h_q, 576, dtype=BF16),
                k_cache=torch.zeros(blocks, page, 1, 656 if fp8 else 576,
                                    dtype=U8 if fp8 else BF16),
                block_table=None, cache_seqlens=None, head_dim_v=512,
                indices=torch.zeros(b, s_q, topk, dtype=I32), is_fp8_kvcache=fp8)


def decode(kw: dict, meta=None):
    """flash_mla_with_kvcache on fake CUDA tensors; returns (out, lse, meta)."""
    meta = flash_mla.get_mla_metadata()[0] if meta is None else meta
    with FakeTensorMode():
        out, lse = flash_mla.flash_mla_with_kvcache(
            tile_scheduler_metadata=meta, **{k: fake(v) for k, v in kw.items()})
    return out, lse, meta


def refused(kw: dict, exc, match: str):
    meta = flash_mla.get_mla_metadata()[0]
    with pytest.raises(exc, match=match):
        decode(kw, meta)
    assert not meta.have_initialized and meta.config is None


def layer_slice(blocks, page, width, dtype, layers=2):
    """k_cache of one layer of a [num_blocks, layers, page, 1, width] buffer: block stride
    layers * page * width, token rows not evenly spaced across blocks."""
    return torch.zeros(blocks, layers, page, 1, width, dtype=dtype)[:, 1]


def odd_head_stride(blocks=4):
    """A [blocks, 64, 1, 576] cache whose (one-entry) head dim has stride 3 elements: rows are
    16-byte aligned, but a tensor descriptor needs every stride a multiple of 16 bytes."""
    return torch.zeros(blocks * 64 * 576, dtype=BF16).as_strided((blocks, 64, 1, 576),
                                                                 (64 * 576, 576, 3, 1))


# ---------------------------------------------------------------------------------------------
# Dense decode: refused before any launch, naming the argument
# ---------------------------------------------------------------------------------------------

def q_of(*shape, dtype=BF16):
    return lambda kw: torch.zeros(*shape, dtype=dtype)


DENSE_REFUSED = [
    # (id, change, exception, message start)
    ("fp16-q", dict(q=lambda kw: kw["q"].half()), TypeError, r"^q: expected dtype torch.bfloat16"),
    ("fp16-q-and-cache", dict(q=lambda kw: kw["q"].half(), k_cache=lambda kw: kw["k_cache"].half()),
     TypeError, r"^q: expected dtype"),
    ("fp32-q", dict(q=lambda kw: kw["q"].float()), TypeError, r"^q: expected dtype"),
    ("fp16-cache", dict(k_cache=lambda kw: kw["k_cache"].half()), TypeError,
     r"^k_cache: expected dtype torch.bfloat16"),
    ("q-rank-3", dict(q=lambda kw: kw["q"][:, 0]), ValueError, r"^q: expected rank 4"),
    ("q-d512", dict(q=q_of(2, 1, 16, 512)), ValueError, r"^q: head dim .* 576, got 512"),
    ("q-d575", dict(q=q_of(2, 1, 16, 575)), ValueError, r"^q: head dim .* got 575"),
    ("q-d577", dict(q=q_of(2, 1, 16, 577)), ValueError, r"^q: head dim .* got 577"),
    ("q-s_q-0", dict(q=q_of(2, 0, 16, 576)), ValueError, r"^q: s_q and h_q must be at least 1"),
    ("q-h_q-0", dict(q=q_of(2, 1, 0, 576)), ValueError, r"^q: s_q and h_q must be at least 1"),
    ("q-transposed-last-dim", dict(q=lambda kw: torch.zeros(2, 1, 576, 16, dtype=BF16)
                                   .transpose(2, 3)), ValueError, r"^q: the last dim must be"),
    ("page-32", dict(k_cache=lambda kw: torch.zeros(4, 32, 1, 576, dtype=BF16)), ValueError,
     r"^k_cache: page_block_size \(dim 1\) must be 64, got 32"),
    ("cache-d512", dict(k_cache=lambda kw: torch.zeros(4, 64, 1, 512, dtype=BF16)), ValueError,
     r"^k_cache: head dim"),
    ("h_kv-3", dict(k_cache=lambda kw: torch.zeros(4, 64, 3, 576, dtype=BF16)), ValueError,
     r"^k_cache: h_kv \(dim 2\) must divide q's h_q=16, got h_kv=3"),
    ("h_kv-0", dict(k_cache=lambda kw: torch.zeros(4, 64, 0, 576, dtype=BF16)), ValueError,
     r"^k_cache: h_kv"),
    # fixed: the TMA producer's descriptor over an empty cache was Triton's assertion
    ("cache-0-blocks", dict(k_cache=lambda kw: torch.zeros(0, 64, 1, 576, dtype=BF16)),
     ValueError, r"^k_cache: num_blocks \(dim 0\) must be at least 1 for a batch of 2"),
    # fixed: the FP8 layout named as such
    ("fp8-cache-dense", dict(k_cache=lambda kw: torch.zeros(4, 64, 1, 656, dtype=U8)), TypeError,
     r"^k_cache: a torch.uint8 cache is the FP8 layout, which only the sparse decode reads "
     r"\(pass indices and is_fp8_kvcache=True\)"),
    ("fp8-flag-dense", dict(is_fp8_kvcache=True), NotImplementedError, r"^is_fp8_kvcache: "),
    ("block_table-int64", dict(block_table=lambda kw: kw["block_table"].long()), TypeError,
     r"^block_table: expected dtype torch.int32"),
    ("block_table-bool", dict(block_table=lambda kw: kw["block_table"].bool()), TypeError,
     r"^block_table: expected dtype"),
    ("block_table-None", dict(block_table=None), TypeError,
     r"^block_table: expected a torch.Tensor"),
    ("block_table-b3", dict(block_table=lambda kw: torch.zeros(3, 2, dtype=I32)), ValueError,
     r"^block_table: expected 2 rows"),
    ("block_table-transposed", dict(block_table=lambda kw: torch.zeros(2, 2, dtype=I32).t()),
     ValueError, r"^block_table: the last dim must be contiguous"),
    ("cache_seqlens-int64", dict(cache_seqlens=lambda kw: kw["cache_seqlens"].long()), TypeError,
     r"^cache_seqlens: expected dtype torch.int32"),
    ("cache_seqlens-None", dict(cache_seqlens=None), TypeError,
     r"^cache_seqlens: expected a torch"),
    ("cache_seqlens-b3", dict(cache_seqlens=lambda kw: torch.zeros(3, dtype=I32)), ValueError,
     r"^cache_seqlens: expected shape \[2\]"),
    ("cache_seqlens-rank-2", dict(cache_seqlens=lambda kw: torch.zeros(2, 1, dtype=I32)),
     ValueError, r"^cache_seqlens: expected rank 1"),
    ("cache_seqlens-strided", dict(cache_seqlens=lambda kw: torch.zeros(4, dtype=I32)[::2]),
     ValueError, r"^cache_seqlens: the last dim must be contiguous"),
    ("head_dim_v-256", dict(head_dim_v=256), ValueError, r"^head_dim_v: expected 512"),
    ("head_dim_v-576", dict(head_dim_v=576), ValueError, r"^head_dim_v: expected 512"),
    ("head_dim_v-True", dict(head_dim_v=True), ValueError, r"^head_dim_v: expected 512"),
    ("head_dim_v-512.0", dict(head_dim_v=512.0), ValueError, r"^head_dim_v: expected 512"),
    ("scale-0", dict(softmax_scale=0.0), ValueError, r"^softmax_scale: expected a finite positive"),
    ("scale-negative", dict(softmax_scale=-0.1), ValueError, r"^softmax_scale: expected a finite"),
    ("scale-nan", dict(softmax_scale=float("nan")), ValueError, r"^softmax_scale: .* got nan"),
    ("scale-inf", dict(softmax_scale=float("inf")), ValueError, r"^softmax_scale: .* got inf"),
    ("scale-tensor", dict(softmax_scale=lambda kw: torch.tensor(0.1)), TypeError,
     r"^softmax_scale: expected a Python float or None"),
    ("scale-True", dict(softmax_scale=True), TypeError, r"^softmax_scale: .* got bool"),
    # fixed: "got float32" read as if a Python float had been refused
    ("scale-numpy-float32", dict(softmax_scale=np.float32(0.1)), TypeError,
     r"^softmax_scale: expected a Python float or None, got numpy.float32"),
    ("causal-1", dict(causal=1), TypeError, r"^causal: expected a bool, got int"),
    # fixed: "expected a bool, got bool"
    ("causal-numpy-bool", dict(causal=np.bool_(True)), TypeError,
     r"^causal: expected a bool, got numpy.bool"),
    ("is_fp8-numpy-bool", dict(is_fp8_kvcache=np.bool_(False)), TypeError,
     r"^is_fp8_kvcache: expected a bool, got numpy.bool"),
    ("num_splits-tensor", dict(num_splits=lambda kw: torch.zeros(3, dtype=I32)), ValueError,
     r"^num_splits: must be None"),
    ("num_splits-0", dict(num_splits=0), ValueError, r"^num_splits: must be None"),
    ("num_splits-False", dict(num_splits=False), ValueError, r"^num_splits: must be None"),
    ("attn_sink-on-dense", dict(attn_sink=lambda kw: torch.zeros(16)), ValueError,
     r"^attn_sink: belongs to the sparse decode"),
    ("topk_length-without-indices", dict(topk_length=lambda kw: torch.zeros(2, dtype=I32)),
     ValueError, r"^topk_length: belongs to the sparse decode"),
    ("extra_k_cache-without-indices", dict(extra_k_cache=lambda kw: kw["k_cache"]), ValueError,
     r"^extra_k_cache: belongs to the sparse decode"),
    ("impl-sparse-only", dict(impl="split-fp8"), ValueError, r"^impl: .*needs indices"),
    # fixed: TMA forced on a cache no tensor descriptor takes was the launcher's refusal, after
    # the metadata was filled
    ("seesaw-tma-odd-head-stride", dict(k_cache=lambda kw: odd_head_stride(), impl="seesaw-tma"),
     ValueError, r"^impl='seesaw-tma' cannot run this call: it copies K pages with TMA, and "
                 r"k_cache's strides are not multiples of 16 bytes"),
    ("q-on-meta", dict(q=lambda kw: On("meta", kw["q"])), ValueError,
     r"^q: expected a CUDA tensor, got device meta"),
    ("k_cache-on-cpu", dict(k_cache=lambda kw: On("cpu", kw["k_cache"])), ValueError,
     r"^k_cache: expected a CUDA tensor, got device cpu"),
    ("block_table-on-cpu", dict(block_table=lambda kw: On("cpu", kw["block_table"])), ValueError,
     r"^block_table: expected a CUDA tensor"),
    ("cache_seqlens-on-another-gpu",
     dict(cache_seqlens=lambda kw: On("cuda:1", kw["cache_seqlens"])), ValueError,
     r"^cache_seqlens: expected the same device as q \(cuda:0\), got cuda:1"),
]


@pytest.mark.parametrize("change,exc,match", [c[1:] for c in DENSE_REFUSED],
                         ids=[c[0] for c in DENSE_REFUSED])
def test_dense_call_refused_naming_the_argument(change, exc, match):
    kw = dense()
    for key, v in change.items():
        kw[key] = v(kw) if callable(v) else v
    refused(kw, exc, match)


@pytest.mark.parametrize("meta", [flash_mla.get_mla_metadata(), torch.zeros(4, 8, dtype=I32),
                                  None], ids=["tuple-not-unpacked", "old-tensor-metadata", "None"])
def test_dense_call_refuses_what_is_not_the_metadata(meta):
    kw = dense()
    with pytest.raises(TypeError, match=r"^tile_scheduler_metadata: expected the DecodeSchedMeta"):
        with FakeTensorMode():
            flash_mla.flash_mla_with_kvcache(tile_scheduler_metadata=meta,
                                             **{k: fake(v) for k, v in kw.items()})


# ---------------------------------------------------------------------------------------------
# Dense decode: the correct twins, taken
# ---------------------------------------------------------------------------------------------

DENSE_TAKEN = [
    ("plain", dense(), {}),
    ("s_q-5", dense(s_q=5), {}),
    ("s_q-9-grouped", dense(s_q=9, h_q=32, h_kv=2), {}),
    ("causal-s_q-1", dense(), dict(causal=True)),
    ("scale-int", dense(), dict(softmax_scale=1)),
    ("scale-numpy-float64", dense(), dict(softmax_scale=np.float64(0.1))),  # a float subclass
    ("block_table-column-slice", dense(), dict(block_table=torch.zeros(2, 4, dtype=I32)[:, 1:3])),
    ("block_table-no-columns", dense(), dict(block_table=torch.zeros(2, 0, dtype=I32))),
    ("k_cache-every-other-block", dense(), dict(k_cache=torch.zeros(8, 64, 1, 576,
                                                                    dtype=BF16)[::2])),
    ("k_cache-layer-slice", dense(), dict(k_cache=layer_slice(4, 64, 576, BF16, layers=3))),
    ("q-heads-before-queries", dense(), dict(q=torch.zeros(2, 16, 1, 576, dtype=BF16)
                                             .transpose(1, 2))),
    ("q-expanded-batch", dense(), dict(q=torch.zeros(1, 1, 16, 576, dtype=BF16)
                                       .expand(2, 1, 16, 576))),
    ("empty-batch", dense(b=0), {}),
    ("empty-batch-empty-cache", dense(b=0, blocks=0), {}),   # nothing launched: any cache
    ("seesaw-tma-aligned", dense(), dict(impl="seesaw-tma")),
    ("odd-head-stride-auto", dense(), dict(k_cache=odd_head_stride())),  # cp.async, not TMA
    ("impl-naive", dense(), dict(impl="naive")),
]


@pytest.mark.parametrize("kw,change", [c[1:] for c in DENSE_TAKEN], ids=[c[0] for c in DENSE_TAKEN])
def test_dense_call_taken(kw, change):
    kw = {**kw, **change}
    out, lse, meta = decode(kw)
    b, s_q, h_q, _ = kw["q"].shape
    assert tuple(out.shape) == (b, s_q, h_q, 512) and out.dtype == BF16
    assert tuple(lse.shape) == (b, h_q, s_q) and lse.dtype == F32
    assert meta.have_initialized and not meta.config.sparse
    assert (meta.config.b, meta.config.s_q, meta.config.h_q) == (b, s_q, h_q)
    assert meta.config.causal == kw.get("causal", False)


def test_strided_views_reach_the_kernel_with_their_strides():
    """A block_table column slice and a layer slice of k_cache are taken as views: the launch
    arguments are the views themselves and their strides (no copy, nothing assumed
    contiguous)."""
    q = torch.zeros(2, 1, 16, 576, dtype=BF16)
    k = layer_slice(4, 64, 576, BF16, layers=3)
    bt = torch.zeros(2, 5, dtype=I32)[:, 1:3]
    sl = torch.zeros(2, dtype=I32)
    out, lse = D.empty_outputs(q)
    for kernel in ("seesaw", "pipe"):
        if kernel == "seesaw":
            _, args, _ = L.scheduled_call(kernel, q, k, bt, sl, 0.1, False, out, lse, 2,
                                          balance=False)
        else:
            _, args, _ = L.decode_call(kernel, q, k, bt, sl, 0.1, False, 1, out, lse)
        assert args[0] is q and args[1] is k
        assert any(a is bt for a in args)
        assert (k.stride(0), k.stride(1), k.stride(2), bt.stride(0)) == (3 * 64 * 576, 576, 576, 5)
        tail = [a for a in args if isinstance(a, int)]
        assert [k.stride(0), k.stride(1), k.stride(2), bt.stride(0)] == \
            tail[3:7]  # after q's three strides


def test_an_empty_cache_has_no_tma_descriptor():
    """Fixed with the validation rule: the launcher's TMA choice said "available" for a cache of
    0 blocks, and the descriptor then failed on Triton's assertion. It now gives the reason, so
    the cp.async producer runs (tma=None) or TMA=True is a ValueError naming it."""
    empty = torch.zeros(0, 64, 1, 576, dtype=BF16)
    assert L.tma_unavailable_reason(empty) == "k_cache is empty (shape (0, 64, 1, 576))"
    assert not L.use_tma("seesaw", empty) and not L.use_tma("pipe", empty)
    with pytest.raises(ValueError, match="cannot copy K pages with TMA: k_cache is empty"):
        L.use_tma("seesaw", empty, True)
    assert L.tma_layout_unavailable_reason(odd_head_stride()).startswith(
        "k_cache's strides are not multiples of 16 bytes")
    assert L.tma_unavailable_reason(torch.zeros(2, 64, 1, 576, dtype=BF16)) is None


def test_refused_tma_cache_leaves_the_metadata_to_a_good_call():
    meta = flash_mla.get_mla_metadata()[0]
    with pytest.raises(ValueError, match=r"^impl='seesaw-tma'"):
        decode({**dense(), "k_cache": odd_head_stride(), "impl": "seesaw-tma"}, meta)
    assert not meta.have_initialized
    decode({**dense(), "k_cache": odd_head_stride()}, meta)       # "auto": cp.async
    assert meta.have_initialized and meta.config.b == 2


# ---------------------------------------------------------------------------------------------
# Metadata reuse (FlashMLA: one metadata object per shape)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("change,what", [
    (dict(q=torch.zeros(3, 1, 16, 576, dtype=BF16), block_table=torch.zeros(3, 2, dtype=I32),
          cache_seqlens=torch.zeros(3, dtype=I32)), "b 2 -> 3"),
    (dict(q=torch.zeros(2, 2, 16, 576, dtype=BF16)), "s_q 1 -> 2"),
    (dict(causal=True), "causal False -> True"),
    (dict(k_cache=torch.zeros(4, 64, 2, 576, dtype=BF16)), "h_kv 1 -> 2"),
], ids=["batch", "s_q", "causal", "h_kv"])
def test_metadata_of_another_shape_refused(change, what):
    _, _, meta = decode(dense())
    filled = (meta.config, meta.n_split)
    with pytest.raises(ValueError, match=rf"^tile_scheduler_metadata: .*{what}"):
        decode({**dense(), **change}, meta)
    assert (meta.config, meta.n_split) == filled
    decode({**dense(), "k_cache": torch.zeros(9, 64, 1, 576, dtype=BF16)}, meta)  # same shapes


def test_metadata_of_the_other_kind_refused():
    _, _, dense_meta = decode(dense())
    with pytest.raises(ValueError, match=r"^tile_scheduler_metadata: it was filled by a dense"):
        decode(sparse(), dense_meta)
    _, _, sparse_meta = decode(sparse())
    with pytest.raises(ValueError, match=r"^tile_scheduler_metadata: it was filled by a sparse"):
        decode(dense(), sparse_meta)


# ---------------------------------------------------------------------------------------------
# Sparse decode (indices given)
# ---------------------------------------------------------------------------------------------

SPARSE_REFUSED = [
    # fixed: the FP8 layout without is_fp8_kvcache=True is named as such
    ("fp8-cache-flag-false", dict(is_fp8_kvcache=False), TypeError,
     r"^k_cache: a torch.uint8 cache is the FP8 layout: pass is_fp8_kvcache=True"),
    ("fp8-extra-cache-flag-false", dict(
        is_fp8_kvcache=False, k_cache=lambda kw: torch.zeros(3, 64, 1, 576, dtype=BF16),
        extra_k_cache=lambda kw: torch.zeros(3, 64, 1, 656, dtype=torch.float8_e4m3fn),
        extra_indices_in_kvcache=lambda kw: kw["indices"]), TypeError,
     r"^extra_k_cache: a torch.float8_e4m3fn cache is the FP8 layout"),
    ("bf16-cache-flag-true", dict(k_cache=lambda kw: torch.zeros(3, 64, 1, 576, dtype=BF16)),
     TypeError, r"^k_cache: with is_fp8 the cache holds bytes"),
    ("fp8-e5m2-cache", dict(k_cache=lambda kw: torch.zeros(3, 64, 1, 656,
                                                           dtype=torch.float8_e5m2)),
     TypeError, r"^k_cache: with is_fp8 the cache holds bytes"),
    ("fp16-q", dict(q=lambda kw: kw["q"].half()), TypeError, r"^q: expected dtype"),
    ("q-d512", dict(q=q_of(2, 1, 64, 512)), ValueError, r"^q: head dim"),
    ("h_q-24", dict(q=q_of(2, 1, 24, 576)), ValueError, r"^q: h_q \(dim 2\) must be one of"),
    ("s_q-0", dict(q=q_of(2, 0, 64, 576), indices=lambda kw: torch.zeros(2, 0, 64, dtype=I32)),
     ValueError, r"^q: s_q must be at least 1"),
    ("h_kv-2", dict(k_cache=lambda kw: torch.zeros(3, 64, 2, 656, dtype=U8)), ValueError,
     r"^k_cache: the sparse decode has one kv head"),
    ("indices-int64", dict(indices=lambda kw: kw["indices"].long()), TypeError,
     r"^indices: expected dtype torch.int32"),
    ("indices-topk-96", dict(indices=lambda kw: torch.zeros(2, 1, 96, dtype=I32)), ValueError,
     r"^indices: topk \(last dim\) must be a positive multiple of 64, got 96"),
    ("indices-topk-0", dict(indices=lambda kw: torch.zeros(2, 1, 0, dtype=I32)), ValueError,
     r"^indices: topk .* got 0"),
    ("indices-b3", dict(indices=lambda kw: torch.zeros(3, 1, 64, dtype=I32)), ValueError,
     r"^indices: expected shape \[2, 1, topk\]"),
    ("indices-rank-4", dict(indices=lambda kw: torch.zeros(2, 1, 1, 64, dtype=I32)), ValueError,
     r"^indices: expected rank 3"),
    ("indices-list", dict(indices=[[0] * 64]), TypeError, r"^indices: expected a torch.Tensor"),
    ("indices-on-cpu", dict(indices=lambda kw: On("cpu", kw["indices"])), ValueError,
     r"^indices: expected a CUDA tensor"),
    ("attn_sink-length", dict(attn_sink=lambda kw: torch.zeros(8)), ValueError,
     r"^attn_sink: expected shape \[64\]"),
    ("attn_sink-bf16", dict(attn_sink=lambda kw: torch.zeros(64, dtype=BF16)), TypeError,
     r"^attn_sink: expected dtype torch.float32"),
    ("attn_sink-rank-2", dict(attn_sink=lambda kw: torch.zeros(1, 64)), ValueError,
     r"^attn_sink: expected rank 1"),
    ("attn_sink-strided", dict(attn_sink=lambda kw: torch.zeros(128)[::2]), ValueError,
     r"^attn_sink: the last dim must be contiguous"),
    ("attn_sink-on-another-gpu", dict(attn_sink=lambda kw: On("cuda:1", torch.zeros(64))),
     ValueError, r"^attn_sink: expected the same device as q"),
    ("topk_length-b3", dict(topk_length=lambda kw: torch.zeros(3, dtype=I32)), ValueError,
     r"^topk_length: expected shape \[2\]"),
    ("topk_length-int64", dict(topk_length=lambda kw: torch.zeros(2, dtype=I64)), TypeError,
     r"^topk_length: expected dtype torch.int32"),
    ("extra_k_cache-without-extra-indices", dict(extra_k_cache=lambda kw: kw["k_cache"]),
     ValueError, r"^extra_indices \(extra_indices_in_kvcache\): required with extra_k_cache"),
    ("extra-indices-without-extra-cache", dict(extra_indices_in_kvcache=lambda kw: kw["indices"]),
     ValueError, r"^extra_indices \(extra_indices_in_kvcache\): given without extra_k_cache"),
    ("extra_topk_length-without-extra-cache",
     dict(extra_topk_length=lambda kw: torch.zeros(2, dtype=I32)), ValueError,
     r"^extra_topk_length: given without extra_k_cache"),
    ("extra-indices-b3", dict(extra_k_cache=lambda kw: kw["k_cache"],
                              extra_indices_in_kvcache=lambda kw: torch.zeros(3, 1, 64, dtype=I32)),
     ValueError, r"^extra_indices \(extra_indices_in_kvcache\): expected shape \[2, 1, topk\]"),
    ("extra_topk_length-b3", dict(extra_k_cache=lambda kw: kw["k_cache"],
                                  extra_indices_in_kvcache=lambda kw: kw["indices"],
                                  extra_topk_length=lambda kw: torch.zeros(3, dtype=I32)),
     ValueError, r"^extra_topk_length: expected shape \[2\]"),
    ("causal-true", dict(causal=True), ValueError, r"^causal: must be False with indices"),
    ("num_splits-1", dict(num_splits=1), ValueError, r"^num_splits: must be None"),
    ("head_dim_v-576", dict(head_dim_v=576), ValueError, r"^head_dim_v: expected 512"),
    ("scale-nan", dict(softmax_scale=float("nan")), ValueError, r"^softmax_scale: "),
    ("is_fp8-int", dict(is_fp8_kvcache=1), TypeError, r"^is_fp8_kvcache: expected a bool, got int"),
    ("is_fp8-numpy-bool", dict(is_fp8_kvcache=np.bool_(True)), TypeError,
     r"^is_fp8_kvcache: expected a bool, got numpy.bool"),
    ("impl-seesaw-on-fp8", dict(impl="seesaw"), NotImplementedError, r"^impl: 'seesaw' cannot run"),
]


@pytest.mark.parametrize("change,exc,match", [c[1:] for c in SPARSE_REFUSED],
                         ids=[c[0] for c in SPARSE_REFUSED])
def test_sparse_call_refused_naming_the_argument(change, exc, match):
    kw = sparse()
    for key, v in change.items():
        kw[key] = v(kw) if callable(v) else v
    refused(kw, exc, match)


SPARSE_TAKEN = [
    ("fp8", sparse(), {}),
    ("bf16-cache", sparse(fp8=False), {}),
    ("fp8-e4m3-dtype", sparse(), dict(k_cache=torch.zeros(3, 64, 1, 656,
                                                          dtype=torch.float8_e4m3fn))),
    ("fp8-int8-dtype", sparse(), dict(k_cache=torch.zeros(3, 64, 1, 656, dtype=torch.int8))),
    ("page-7", sparse(page=7), {}),
    ("s_q-5", sparse(s_q=5), {}),
    ("h_q-8", sparse(h_q=8), dict(attn_sink=torch.zeros(8))),
    ("empty-batch", sparse(b=0), dict(topk_length=torch.zeros(0, dtype=I32))),
    ("fp8-layer-slice", sparse(), dict(k_cache=layer_slice(3, 64, 656, U8))),
    ("indices-transposed", sparse(topk=128), dict(indices=torch.zeros(2, 128, 1, dtype=I32)
                                                  .transpose(1, 2))),
    ("indices-every-other-request", sparse(), dict(indices=torch.zeros(4, 1, 64,
                                                                       dtype=I32)[::2])),
    ("q-heads-before-queries", sparse(s_q=2), dict(q=torch.zeros(2, 64, 2, 576, dtype=BF16)
                                                   .transpose(1, 2))),
    ("block_table-and-seqlens-ignored", sparse(), dict(block_table="x", cache_seqlens=3)),
    ("extra-cache", sparse(), dict(extra_k_cache=torch.zeros(2, 16, 1, 656, dtype=U8),
                                   extra_indices_in_kvcache=torch.zeros(2, 1, 128, dtype=I32),
                                   extra_topk_length=torch.zeros(2, dtype=I32),
                                   topk_length=torch.zeros(2, dtype=I32))),
    ("scale-given", sparse(), dict(softmax_scale=0.05)),
]


@pytest.mark.parametrize("kw,change", [c[1:] for c in SPARSE_TAKEN],
                         ids=[c[0] for c in SPARSE_TAKEN])
def test_sparse_call_taken(kw, change):
    kw = {**kw, **change}
    out, lse, meta = decode(kw)
    b, s_q, h_q, _ = kw["q"].shape
    assert tuple(out.shape) == (b, s_q, h_q, 512) and tuple(lse.shape) == (b, h_q, s_q)
    assert meta.config.sparse and meta.config.topk == kw["indices"].shape[-1]
    assert meta.config.is_fp8_kvcache == kw["is_fp8_kvcache"] and meta.n_split == 1


def test_uneven_bf16_cache_on_fake_tensors():
    out, lse, meta = decode({**sparse(fp8=False), "k_cache": layer_slice(3, 64, 576, BF16)})
    assert tuple(out.shape) == (2, 1, 64, 512)


def test_uneven_bf16_cache_on_real_tensors_reaches_the_device_check():
    """On real tensors the uneven cache passes every rule (the device check, last, refuses the
    CPU tensors) and "auto" runs it on the naive kernel, which reads any block stride (computed
    in test_strided_views_computed_in_triton_interpreter)."""
    kw = {**sparse(fp8=False), "k_cache": layer_slice(3, 64, 576, BF16)}
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        flash_mla.flash_mla_with_kvcache(tile_scheduler_metadata=flash_mla.get_mla_metadata()[0],
                                         **kw)
    call = dict(zip(S.SUPPORT_ARGS, (kw["q"], kw["k_cache"], kw["indices"], False, None, None,
                                     None, None, None)))
    assert S.select_sparse_impl("auto", call) == "naive"


def test_flashmla_positional_order_and_keywords():
    """All 16 of FlashMLA's arguments positionally (its signature's order), the same call by
    keyword, and the TLE-only ``impl`` refused positionally (keyword only)."""
    q, k = torch.zeros(2, 1, 64, 576, dtype=BF16), torch.zeros(3, 64, 1, 656, dtype=U8)
    idx, sink = torch.zeros(2, 1, 64, dtype=I32), torch.zeros(64)
    xk, xidx = torch.zeros(2, 16, 1, 656, dtype=U8), torch.zeros(2, 1, 64, dtype=I32)
    tl, xtl = torch.zeros(2, dtype=I32), torch.zeros(2, dtype=I32)
    meta = flash_mla.get_mla_metadata()[0]
    with FakeTensorMode():
        t = [fake(x) for x in (q, k, idx, sink, xk, xidx, tl, xtl)]
        out, lse = flash_mla.flash_mla_with_kvcache(t[0], t[1], None, None, 512, meta, None, 0.1,
                                                    False, True, t[2], t[3], t[4], t[5], t[6],
                                                    t[7])
        out2, _ = flash_mla.flash_mla_with_kvcache(
            q=t[0], k_cache=t[1], block_table=None, cache_seqlens=None, head_dim_v=512,
            tile_scheduler_metadata=meta, num_splits=None, softmax_scale=0.1, causal=False,
            is_fp8_kvcache=True, indices=t[2], attn_sink=t[3], extra_k_cache=t[4],
            extra_indices_in_kvcache=t[5], topk_length=t[6], extra_topk_length=t[7])
        with pytest.raises(TypeError):
            flash_mla.flash_mla_with_kvcache(t[0], t[1], None, None, 512, meta, None, 0.1, False,
                                             True, t[2], t[3], t[4], t[5], t[6], t[7], "naive")
    assert tuple(out.shape) == tuple(out2.shape) == (2, 1, 64, 512)
    assert meta.config.extra_page_block_size == 16 and meta.config.extra_topk == 64


# ---------------------------------------------------------------------------------------------
# Sparse prefill (flash_mla_sparse_fwd)
# ---------------------------------------------------------------------------------------------

def prefill(s_q=8, h_q=64, d=576, s_kv=100, topk=64):
    return [torch.zeros(s_q, h_q, d, dtype=BF16), torch.zeros(s_kv, 1, d, dtype=BF16),
            torch.zeros(s_q, 1, topk, dtype=I32), 0.1]


def batched(B=2, s_q=4, h_q=64, s_kv=50, topk=64):
    return [torch.zeros(B, s_q, h_q, 576, dtype=BF16), torch.zeros(B, s_kv, 1, 576, dtype=BF16),
            torch.zeros(B, s_q, 1, topk, dtype=I32), 0.1]


def run_prefill(args, kw):
    with FakeTensorMode():
        return flash_mla.flash_mla_sparse_fwd(*[fake(a) for a in args],
                                              **{k: fake(v) for k, v in kw.items()})


def with_arg(args, i, v):
    args = list(args)
    args[i] = v(args[i]) if callable(v) else v
    return args


PREFILL_REFUSED = [
    ("sm_scale-None", with_arg(prefill(), 3, None), {}, TypeError, r"^sm_scale: expected a Python "
                                                                   r"float, got NoneType"),
    ("sm_scale-tensor", with_arg(prefill(), 3, torch.tensor(0.1)), {}, TypeError, r"^sm_scale: "),
    ("sm_scale-numpy-float32", with_arg(prefill(), 3, np.float32(0.1)), {}, TypeError,
     r"^sm_scale: expected a Python float, got numpy.float32"),
    ("sm_scale-nan", with_arg(prefill(), 3, float("nan")), {}, ValueError, r"^sm_scale: "),
    ("sm_scale-0", with_arg(prefill(), 3, 0.0), {}, ValueError, r"^sm_scale: "),
    ("d_v-256", prefill(), dict(d_v=256), ValueError, r"^d_v: expected 512"),
    ("d_v-True", prefill(), dict(d_v=True), ValueError, r"^d_v: expected 512"),
    ("fp16-q", with_arg(prefill(), 0, lambda q: q.half()), {}, TypeError, r"^q: expected dtype"),
    ("indices-int64", with_arg(prefill(), 2, lambda i: i.long()), {}, TypeError,
     r"^indices: expected dtype torch.int32"),
    ("q-rank-2", with_arg(prefill(), 0, lambda q: q[0]), {}, ValueError,
     r"^q: expected rank 3 or 4"),
    ("d_qk-320", prefill(d=320), {}, ValueError, r"^q: d_qk \(last dim\) must be one of"),
    ("kv-d-mismatch", with_arg(prefill(), 1, torch.zeros(100, 1, 512, dtype=BF16)), {}, ValueError,
     r"^kv: last dim must equal q's d_qk=576"),
    ("kv-h_kv-2", with_arg(prefill(), 1, torch.zeros(100, 2, 576, dtype=BF16)), {}, ValueError,
     r"^kv: h_kv must be 1"),
    ("kv-empty", with_arg(prefill(), 1, torch.zeros(0, 1, 576, dtype=BF16)), {}, ValueError,
     r"^kv: s_kv must be at least 1"),
    ("h_q-0", prefill(h_q=0), {}, ValueError, r"^q: h_q must be at least 1"),
    ("indices-s_q-mismatch", with_arg(prefill(), 2, torch.zeros(4, 1, 64, dtype=I32)), {},
     ValueError, r"^indices: expected shape \[8, 1, topk\]"),
    ("attn_sink-length", prefill(), dict(attn_sink=torch.zeros(8)), ValueError,
     r"^attn_sink: expected shape \[64\]"),
    ("attn_sink-bf16", prefill(), dict(attn_sink=torch.zeros(64, dtype=BF16)), TypeError,
     r"^attn_sink: expected dtype"),
    ("topk_length-length", prefill(), dict(topk_length=torch.zeros(7, dtype=I32)), ValueError,
     r"^topk_length: expected shape \[8\]"),
    ("topk_length-int64", prefill(), dict(topk_length=torch.zeros(8, dtype=I64)), TypeError,
     r"^topk_length: expected dtype torch.int32"),
    ("batched-topk_length-rank-1", batched(), dict(topk_length=torch.zeros(8, dtype=I32)),
     ValueError, r"^topk_length: expected rank 2"),
    ("batched-kv-batch", with_arg(batched(), 1, torch.zeros(1, 50, 1, 576, dtype=BF16)), {},
     ValueError, r"^kv/indices: batch size must match q's 2"),
    ("batched-kv-rank-3", with_arg(batched(), 1, torch.zeros(100, 1, 576, dtype=BF16)), {},
     ValueError, r"^kv: expected rank 4"),
    ("kv-on-cpu", with_arg(prefill(), 1, lambda kv: On("cpu", kv)), {}, ValueError,
     r"^kv: expected a CUDA tensor"),
    ("indices-on-another-gpu", with_arg(prefill(), 2, lambda i: On("cuda:1", i)), {}, ValueError,
     r"^indices: expected the same device as q"),
    ("impl-seesaw-topk-65", prefill(topk=65), dict(impl="seesaw"), ValueError,
     r"^impl='seesaw' cannot run this call: seesaw needs topk % 64 == 0"),
]


@pytest.mark.parametrize("args,kw,exc,match", [c[1:] for c in PREFILL_REFUSED],
                         ids=[c[0] for c in PREFILL_REFUSED])
def test_prefill_refused_naming_the_argument(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        run_prefill(args, kw)


PREFILL_TAKEN = [
    ("plain", prefill(), {}),
    ("s_q-0", prefill(s_q=0), {}),
    ("topk-65-auto", prefill(topk=65), {}),        # beyond FlashMLA: the naive kernel takes it
    ("kv-every-other-row", with_arg(prefill(), 1, torch.zeros(200, 1, 576, dtype=BF16)[::2]), {}),
    ("q-every-other-head", with_arg(prefill(h_q=64), 0, torch.zeros(8, 128, 576,
                                                                     dtype=BF16)[:, ::2]), {}),
    ("d_qk-512-narrow-heads", prefill(h_q=16, d=512), {}),
    ("sink-and-topk_length-positional", prefill() + [512, torch.zeros(64),
                                                     torch.zeros(8, dtype=I32)], {}),
    ("sm_scale-int", with_arg(prefill(), 3, 1), {}),
    ("batched", batched(), dict(topk_length=torch.zeros(2, 4, dtype=I32))),
    ("batched-B-0", batched(B=0), {}),
    ("batched-kv-every-other-row", with_arg(batched(), 1, torch.zeros(2, 100, 1, 576,
                                                                       dtype=BF16)[:, ::2]), {}),
]


@pytest.mark.parametrize("args,kw", [c[1:] for c in PREFILL_TAKEN],
                         ids=[c[0] for c in PREFILL_TAKEN])
def test_prefill_taken(args, kw):
    out, max_logits, lse = run_prefill(args, kw)
    lead = tuple(args[0].shape[:-1])
    assert tuple(out.shape) == lead + (512,) and out.dtype == BF16
    assert tuple(max_logits.shape) == tuple(lse.shape) == lead and lse.dtype == F32


# ---------------------------------------------------------------------------------------------
# The strided views taken above, computed: the naive kernels run by Triton's interpreter through
# the custom ops on views whose other elements are NaN (or NaN bytes), against the fp32 reference
# on contiguous copies (fp32 q and dense cache: the interpreter's bf16 dots are wrong)
# ---------------------------------------------------------------------------------------------

INTERPRETED = r'''
import torch
import tle_kernels.decode_api  # registers the ops
from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,
                                                 sparse_decode_reference)
nan = float("nan")

def close(out, lse, want_out, want_lse, what):
    assert not out.isnan().any() and not lse.isnan().any(), what
    assert torch.allclose(out.float(), want_out, atol=2e-3, rtol=1e-2), what
    fin = torch.isfinite(want_lse)
    assert torch.equal(lse[~fin], want_lse[~fin]), what
    assert torch.allclose(lse[fin], want_lse[fin], atol=1e-5), what

# dense: q with its heads before its queries (transposed), k_cache one layer of a
# [num_blocks, 3, 64, 1, 576] buffer, block_table columns 1..3 of a wider table
b, s_q, h_q = 2, 2, 16
q, k, bt, sl = make_decode_inputs(b, s_q, h_q, 1, [70, 130], device="cpu", seed=3)
q, k = q.float(), k.float()
qb = torch.full((b, h_q, s_q, 576), nan)
qv = qb.transpose(1, 2)
qv.copy_(q)
kb = torch.full((k.shape[0], 3, 64, 1, 576), nan)
kv = kb[:, 1]
kv.copy_(k)
btb = torch.full((b, bt.shape[1] + 3), 2**30, dtype=torch.int32)
btv = btb[:, 1:1 + bt.shape[1]]
btv.copy_(bt)
assert not qv.is_contiguous() and not kv.is_contiguous() and not btv.is_contiguous()
for causal in (False, True):
    out, lse = torch.ops.tle_kernels.mla_decode(qv, kv, btv, sl, 576 ** -0.5, causal, 1, "naive")
    close(out, lse, *mla_decode_reference(q, k, bt, sl, causal=causal), ("dense", causal))

# sparse, FP8 cache: one layer of a [num_blocks, 2, page, 1, 656] byte buffer (the other layer
# NaN bytes), indices with the query rows outermost and q with the heads before the queries
x = make_sparse_decode_inputs(2, 2, 16, 128, page=16, is_fp8=True, device="cpu", seed=4)
k8 = x["k_cache"]
k8b = torch.full((k8.shape[0], 2, 16, 1, 656), 0x7F, dtype=torch.uint8)
k8v = k8b[:, 0]
k8v.copy_(k8)
ib = torch.full((2, 2, 128), -1, dtype=torch.int32)       # [s_q, b, topk]: requests interleaved
iv = ib.transpose(0, 1)
iv.copy_(x["indices"])
qs = x["q"].float()
qsb = torch.full((2, 16, 2, 576), nan)
qsv = qsb.transpose(1, 2)
qsv.copy_(qs)
assert not k8v.is_contiguous() and not iv.is_contiguous()
out, lse = torch.ops.tle_kernels.sparse_mla_decode(qsv, k8v, iv, 0.3, True, None, None, None,
                                                   None, None, "naive")
close(out, lse, *sparse_decode_reference(qs, k8, x["indices"], 512, 0.3), "sparse fp8")

# sparse, bf16-layout cache (as fp32) whose token rows are not evenly spaced: one layer of a
# [num_blocks, 2, page, 1, 576] buffer (the TLE kernels refuse it; the naive kernel takes it)
y = make_sparse_decode_inputs(2, 1, 16, 64, page=8, is_fp8=False, device="cpu", seed=5)
kf = y["k_cache"].float()
kfb = torch.full((kf.shape[0], 2, 8, 1, 576), nan)
kfv = kfb[:, 1]
kfv.copy_(kf)
qf = y["q"].float()
out, lse = torch.ops.tle_kernels.sparse_mla_decode(qf, kfv, y["indices"], 0.3, False, None, None,
                                                   None, None, None, "naive")
close(out, lse, *sparse_decode_reference(qf, kf, y["indices"], 512, 0.3), "sparse bf16")
print("INTERPRETED OK")
'''


def test_strided_views_computed_in_triton_interpreter(tmp_path):
    from .triton_cpu import run_in_triton_interpreter

    run_in_triton_interpreter(INTERPRETED, tmp_path, timeout=300)


def test_q_requiring_grad_runs_forward_and_refuses_backward(monkeypatch):
    """A q that requires grad (a Parameter, a training harness) runs the forward, as FlashMLA's
    decode does; backward is refused by name (no autograd formula), never a wrong gradient."""
    monkeypatch.setattr(D, "launch", lambda *args, **kw: "naive")
    q = torch.zeros(2, 1, 16, 576, dtype=BF16, requires_grad=True)
    kw = dense()
    out, lse = torch.ops.tle_kernels.mla_decode(q, kw["k_cache"], kw["block_table"],
                                                kw["cache_seqlens"], 0.1, False, 1, "naive")
    assert tuple(out.shape) == (2, 1, 16, 512)
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        out.float().sum().backward()


@pytest.mark.parametrize("impl", ["seesaw", "pipe"])
def test_tma_forced_by_the_environment_is_checked_before_the_metadata(monkeypatch, impl):
    """TLE_DECODE_TMA=1 with an explicit seesaw / pipe impl forces their TMA producer as
    impl="seesaw-tma" does: a cache no tensor descriptor takes is refused by validation, naming
    the variable, the metadata left to a good call (it was the launcher's refusal, after the
    fill). With the variable unset the same call runs the cp.async producer."""
    monkeypatch.setenv(L.TMA_ENV, "1")
    refused({**dense(h_q=64), "k_cache": odd_head_stride(), "impl": impl}, ValueError,
            rf"^impl='{impl}' cannot run this call: it copies K pages with TMA \(TLE_DECODE_TMA=1\)"
            r", and k_cache's strides are not multiples of 16 bytes")
    monkeypatch.delenv(L.TMA_ENV)
    out, _, meta = decode({**dense(h_q=64), "k_cache": odd_head_stride(), "impl": impl})
    assert tuple(out.shape) == (2, 1, 64, 512) and meta.have_initialized
