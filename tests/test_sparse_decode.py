"""The sparse MLA decode (DeepSeek-V3.2) on the CPU: the FP8 KV-cache layout (byte offsets, a
token built by hand, round-trip error bounds), the fp32 reference against a per-slot float64 loop
and its rules (invalid indices, topk_length, attn_sink, the extra cache, empty rows), the API's
validation, and the naive Triton kernel run by Triton's interpreter against the reference with
hostile inputs, and compiled for sm_90a within Hopper's shared memory."""

from __future__ import annotations

import math
import struct

import pytest
import torch

from tle_kernels import fp8_kvcache as F
from tle_kernels import sparse_decode_api as A
from tle_kernels.sparse_decode_reference import (invalid_index_values, make_sparse_decode_inputs,
                                                 sparse_decode_reference)

from .triton_cpu import run_in_triton_interpreter

BF16, I32, F32, U8 = torch.bfloat16, torch.int32, torch.float32, torch.uint8
INF = float("inf")


# ---------------------------------------------------------------------------------------------
# The FP8 layout
# ---------------------------------------------------------------------------------------------

def bf16_bits(x: float) -> int:
    return int(torch.tensor([x], dtype=BF16).view(torch.int16)[0]) & 0xFFFF


def test_layout_constants():
    assert (F.D_NOPE, F.D_ROPE, F.N_SCALES, F.TILE) == (512, 64, 4, 128)
    assert (F.SCALE_OFFSET, F.ROPE_OFFSET, F.BYTES_PER_TOKEN) == (512, 528, 656)


def test_hand_built_token_dequantizes_to_its_values():
    """656 bytes written with struct, independent of the quantizer: e4m3 codes, little-endian
    fp32 scales, bf16 RoPE bits."""
    codes = [0x00] * 512
    codes[0], codes[1], codes[2] = 0x38, 0xB8, 0x40      # 1.0, -1.0, 2.0
    codes[127] = 0x7E                                     # 448, e4m3's largest
    codes[128], codes[129] = 0x01, 0x08                   # 2^-9 (subnormal), 2^-6 (least normal)
    codes[256], codes[300] = 0x3C, 0x3A                   # 1.5, 1.25
    codes[511] = 0xC4                                     # -3.0
    scales = [0.5, 2.0, 2.0 ** -13, 4.0]
    rope = [1.0, -2.0, 0.5] + [0.0] * 60 + [3.0]
    raw = bytes(codes) + struct.pack("<4f", *scales) + struct.pack(
        "<64H", *[bf16_bits(v) for v in rope])
    assert len(raw) == F.BYTES_PER_TOKEN
    cache = torch.tensor(list(raw), dtype=U8).view(1, 1, 1, 656)
    row = F.dequantize(cache)[0, 0, 0].float()
    assert row.shape == (576,)
    want = torch.zeros(576)
    want[0], want[1], want[2], want[127] = 0.5, -0.5, 1.0, 224.0
    want[128], want[129] = 2.0 ** -9 * 2.0, 2.0 ** -6 * 2.0
    want[256], want[300] = 1.5 * 2.0 ** -13, 1.25 * 2.0 ** -13
    want[511] = -12.0
    want[512:] = torch.tensor(rope)
    assert torch.equal(row, want)
    nope, sc, ro = F.split_token_bytes(cache)
    assert sc.flatten().tolist() == scales and ro.float().flatten().tolist() == rope
    assert nope.view(U8).flatten().tolist() == codes
    for dtype in (torch.int8, torch.float8_e4m3fn):       # the cache dtypes FlashMLA takes
        assert torch.equal(F.dequantize(cache.view(dtype)), F.dequantize(cache))


def test_quantize_writes_each_part_at_its_offset():
    g = torch.Generator().manual_seed(0)
    kv = (torch.randn(2, 3, 1, 576, generator=g) / 10).to(BF16)
    cache = F.quantize(kv)
    assert cache.shape == (2, 3, 1, 656) and cache.dtype == U8 and cache.is_contiguous()
    tok = bytes(cache[1, 2, 0].tolist())
    scales = struct.unpack("<4f", tok[512:528])
    x = kv[1, 2, 0].float()
    for t, s in enumerate(scales):
        amax = x[128 * t:128 * (t + 1)].abs().max().item()
        assert s == 2.0 ** math.ceil(math.log2(max(amax / 448, 1e-4)))
        want = (x[128 * t:128 * (t + 1)] / s).to(torch.float8_e4m3fn).view(U8).tolist()
        assert list(tok[128 * t:128 * (t + 1)]) == want
    assert list(struct.unpack("<64H", tok[528:])) == [bf16_bits(v) for v in x[512:].tolist()]


def test_round_trip_error_bounds():
    """|dequantize(quantize(x)) - x| <= max(|x| / 16, scale / 1024) (half an e4m3 ulp, normal
    or subnormal), each scale a power of two with amax / scale in (224, 448] unless the 1e-4
    floor holds it, RoPE exact; quantizing the result again changes nothing."""
    g = torch.Generator().manual_seed(1)
    kv = torch.randn(4, 8, 1, 576, generator=g)
    mags = torch.tensor([1e-6, 1e-3, 0.1, 1.0, 30.0, 3000.0, 0.0, 5e-5])
    kv = kv * mags[torch.arange(32) % 8].view(4, 8, 1, 1)
    kv[0, 0, 0, 128:256] = 0.0                                      # an all-zero tile
    kv[1, 1, 0, 5] = 1e4                                            # one outlier in a tile
    kv = kv.to(BF16)
    cache = F.quantize(kv)
    back = F.dequantize(cache)
    _, scales, _ = F.split_token_bytes(cache)
    x = kv.float()
    s = scales.repeat_interleave(128, dim=-1)                       # [..., 512]
    err = (back.float() - x)[..., :512].abs()
    bound = torch.maximum(x[..., :512].abs() / 16, s / 1024)
    assert (err <= bound).all()
    assert torch.equal(back[..., 512:], kv[..., 512:])
    assert torch.equal(torch.log2(scales), torch.log2(scales).round())
    amax = x[..., :512].abs().unflatten(-1, (4, 128)).amax(-1)
    floored = amax / 448 <= 2.0 ** -13
    ratio = amax / scales
    assert ((ratio > 224) & (ratio <= 448) | floored).all()
    assert (scales[floored] == 2.0 ** -13).all()
    assert torch.equal(F.dequantize(F.quantize(back)), back)


def test_quantize_keeps_nan_and_rejects_other_inputs():
    kv = torch.zeros(1, 2, 1, 576, dtype=BF16)
    kv[0, 1] = float("nan")
    back = F.dequantize(F.quantize(kv))
    assert not back[0, 0].isnan().any() and back[0, 1].isnan().all()
    with pytest.raises(TypeError, match="kv"):
        F.quantize(kv.float())
    with pytest.raises(ValueError, match="kv"):
        F.quantize(kv[..., :512])
    with pytest.raises(TypeError, match="cache"):
        F.dequantize(torch.zeros(1, 656, dtype=BF16))
    with pytest.raises(ValueError, match="cache"):
        F.dequantize(torch.zeros(1, 576, dtype=U8))


# ---------------------------------------------------------------------------------------------
# The reference
# ---------------------------------------------------------------------------------------------

def loop_reference(q, kv_rows, slots, scale, sink=None):
    """float64, one query row and slot at a time: ``slots[i][j]`` lists the token rows (of
    ``kv_rows`` [n, 576], already dequantized) that query (i, j) attends."""
    b, s_q, h_q, _ = q.shape
    out = torch.zeros(b, s_q, h_q, 512, dtype=torch.float64)
    lse = torch.full((b, h_q, s_q), INF, dtype=torch.float64)
    for i in range(b):
        for j in range(s_q):
            toks = slots[i][j]
            if not toks:
                continue
            k = kv_rows[toks].double()                                     # [n, 576]
            sc = q[i, j].double() @ k.T * scale                           # [h_q, n]
            m = sc.max(dim=1, keepdim=True).values
            e = torch.exp(sc - m)
            den = e.sum(1)
            row_lse = torch.log(den) + m[:, 0]
            o = (e @ k[:, :512]) / den[:, None]
            if sink is not None:
                o = o * (1.0 / (1.0 + torch.exp(sink.double() - row_lse)))[:, None]
            out[i, j], lse[i, :, j] = o, row_lse
    return out, lse


def valid_slots(indices, n_tokens, lengths=None):
    b, s_q, topk = indices.shape
    return [[[int(t) for k, t in enumerate(indices[i, j].tolist())
              if 0 <= t < n_tokens and (lengths is None or k < lengths[i])]
             for j in range(s_q)] for i in range(b)]


def flat_rows(cache):
    rows = cache.reshape(-1, cache.shape[-1])
    return F.dequantize(rows) if cache.dtype == U8 else rows


@pytest.mark.parametrize("is_fp8", [True, False])
def test_reference_matches_a_per_slot_loop(is_fp8):
    """Hostile indices (~30 % invalid), topk_length 0 / partial / over topk, a sink with +-inf,
    an extra cache with another page size and its own lengths, duplicated slots."""
    x = make_sparse_decode_inputs(3, 2, 8, 64, page=16, is_fp8=is_fp8, device="cpu", seed=2,
                                  invalid=0.3, topk_length=[0, 37, 500], attn_sink=True,
                                  extra_topk=64, extra_page=7, extra_topk_length=[64, 5, -3])
    nt, xnt = (c.shape[0] * c.shape[1] for c in (x["k_cache"], x["extra_k_cache"]))
    first = next(t for t in x["indices"][2, 1].tolist() if 0 <= t < nt)
    x["indices"][2, 1, :11] = first                                        # duplicates count
    out, lse = sparse_decode_reference(**x, softmax_scale=0.3)
    main = valid_slots(x["indices"], nt, [0, 37, 500])
    extra = valid_slots(x["extra_indices"], xnt, [64, 5, -3])
    assert main[2][1].count(main[2][1][0]) >= 11
    rows = torch.cat([flat_rows(x["k_cache"]), flat_rows(x["extra_k_cache"])])
    slots = [[main[i][j] + [nt + t for t in extra[i][j]] for j in range(2)] for i in range(3)]
    want_out, want_lse = loop_reference(x["q"], rows, slots, 0.3, x["attn_sink"])
    assert not out.isnan().any(), "a poisoned (unnamed) token was read"
    assert torch.allclose(out.double(), want_out, atol=1e-6, rtol=1e-5)
    fin = torch.isfinite(want_lse)
    assert torch.equal(lse[~fin], want_lse[~fin].float())
    assert torch.allclose(lse[fin].double(), want_lse[fin], atol=1e-5)


def small_case(is_fp8=True, **kw):
    return make_sparse_decode_inputs(2, 2, 8, 64, page=16, is_fp8=is_fp8, device="cpu",
                                     seed=kw.pop("seed", 3), **kw)


def test_reference_one_token_is_its_value_row():
    x = small_case(invalid=0.0, poison=False)
    idx = torch.full_like(x["indices"], -1)
    idx[1, 0, 40] = 5
    out, lse = sparse_decode_reference(x["q"], x["k_cache"], idx)
    row = flat_rows(x["k_cache"])[5].float()
    assert torch.allclose(out[1, 0], row[:512].expand(8, 512))
    assert torch.allclose(lse[1, :, 0], x["q"][1, 0].float() @ row * 576 ** -0.5)
    assert (out[0] == 0).all() and (lse[0] == INF).all() and (lse[1, :, 1] == INF).all()


def test_reference_invalid_indices_are_skipped():
    x = small_case(invalid=0.0)
    out, lse = sparse_decode_reference(**x)
    nt = x["k_cache"].shape[0] * x["k_cache"].shape[1]
    for k, bad in enumerate(invalid_index_values(nt)):
        idx = torch.cat([x["indices"], torch.full((2, 2, 64), bad, dtype=I32)], dim=2)
        o2, l2 = sparse_decode_reference(x["q"], x["k_cache"], idx)
        assert torch.allclose(o2, out, atol=1e-6) and torch.allclose(l2, lse, atol=1e-6), bad


def test_reference_topk_length_uses_the_first_slots():
    x = small_case(invalid=0.0, poison=False)
    lengths = torch.tensor([17, 64], dtype=I32)
    out, lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], topk_length=lengths)
    cut = x["indices"].clone()
    cut[0, :, 17:] = -1
    o2, l2 = sparse_decode_reference(x["q"], x["k_cache"], cut)
    assert torch.equal(out, o2) and torch.equal(lse, l2)
    for n, full in ((0, False), (-5, False), (64, True), (1000, True)):
        o3, l3 = sparse_decode_reference(x["q"], x["k_cache"], x["indices"],
                                         topk_length=torch.tensor([n, n], dtype=I32))
        if full:
            o4, l4 = sparse_decode_reference(x["q"], x["k_cache"], x["indices"])
            assert torch.equal(o3, o4) and torch.equal(l3, l4)
        else:
            assert (o3 == 0).all() and (l3 == INF).all()


def test_reference_sink_scales_out_and_leaves_lse():
    x = small_case(invalid=0.1)
    out, lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"])
    sink = torch.tensor([0.0, 2.5, -1.0, 40.0, -40.0, INF, -INF, 1e30])
    o2, l2 = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], attn_sink=sink)
    assert torch.equal(l2, lse)
    factor = torch.sigmoid(lse.transpose(1, 2) - sink)                    # [b, s_q, h_q]
    assert torch.allclose(o2, out * factor[..., None], atol=1e-7)
    assert (o2[:, :, [5, 7]] == 0).all() and torch.equal(o2[:, :, 6], out[:, :, 6])


def test_reference_extra_cache_is_one_softmax_with_the_main_cache():
    """Attending an extra cache equals attending one cache holding both (the extra tokens'
    indices shifted past the main ones)."""
    x = small_case(invalid=0.2, extra_topk=64, extra_page=16, topk_length=[30, 64],
                   extra_topk_length=[64, 9])
    out, lse = sparse_decode_reference(**x)
    nt = x["k_cache"].shape[0] * 16
    both = torch.cat([x["k_cache"], x["extra_k_cache"]])
    idx, xidx = x["indices"].clone(), x["extra_indices"].clone()
    idx[0, :, 30:] = -1
    xidx[1, :, 9:] = -1
    idx = torch.where((idx >= 0) & (idx < nt), idx, -1)       # past the end would be extra's
    xidx = torch.where((xidx >= 0) & (xidx < x["extra_k_cache"].shape[0] * 16), xidx + nt, -1)
    o2, l2 = sparse_decode_reference(x["q"], both, torch.cat([idx, xidx], dim=2))
    assert torch.allclose(out, o2, atol=1e-6) and torch.allclose(lse, l2, atol=1e-6)


def test_reference_fp8_cache_is_its_dequantized_bf16_cache():
    x = small_case(invalid=0.2, attn_sink=True)
    o8, l8 = sparse_decode_reference(**x)
    for dtype in (torch.int8, torch.float8_e4m3fn):
        o, l_ = sparse_decode_reference(**dict(x, k_cache=x["k_cache"].view(dtype)))
        assert torch.equal(o8, o) and torch.equal(l8, l_)
    x["k_cache"] = F.dequantize(x["k_cache"])
    ob, lb = sparse_decode_reference(**x)
    assert torch.equal(o8, ob) and torch.equal(l8, lb)


def test_inputs_poison_exactly_the_unnamed_tokens():
    x = small_case(is_fp8=False, invalid=0.3, topk_length=[10, 64])
    rows = x["k_cache"].reshape(-1, 576)
    named = valid_slots(x["indices"], rows.shape[0], [10, 64])
    used = sorted({t for i in named for j in i for t in j})
    assert not rows[used].isnan().any()
    rest = torch.ones(rows.shape[0], dtype=torch.bool)
    rest[used] = False
    assert rows[rest].isnan().all()
    assert ((x["indices"] < 0) | (x["indices"] >= rows.shape[0])).any()    # some invalid slots


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------

def args(b=2, s_q=1, h_q=16, topk=64, page=64, blocks=3, is_fp8=True, device="cpu"):
    q = torch.zeros(b, s_q, h_q, 576, dtype=BF16, device=device)
    if is_fp8:
        k = torch.zeros(blocks, page, 1, 656, dtype=U8, device=device)
    else:
        k = torch.zeros(blocks, page, 1, 576, dtype=BF16, device=device)
    idx = torch.zeros(b, s_q, topk, dtype=I32, device=device)
    return dict(q=q, k_cache=k, indices=idx)


def bad_cases():
    a = args()
    yield "impl", ValueError, dict(impl="flash")
    yield "impl", NotImplementedError, dict(impl="seesaw")     # the seesaw takes no FP8 cache
    yield "is_fp8", TypeError, dict(is_fp8=1)
    yield "head_dim_v", ValueError, dict(head_dim_v=576)
    yield "head_dim_v", ValueError, dict(head_dim_v=512.0)
    yield "softmax_scale", TypeError, dict(softmax_scale="0.1")
    yield "softmax_scale", ValueError, dict(softmax_scale=0.0)
    yield "softmax_scale", ValueError, dict(softmax_scale=float("nan"))
    yield "q", TypeError, dict(q=a["q"].float())
    yield "q", ValueError, dict(q=a["q"][0])
    yield "q", ValueError, dict(q=torch.zeros(2, 1, 16, 512, dtype=BF16))
    yield "q", ValueError, dict(q=torch.zeros(2, 1, 24, 576, dtype=BF16))     # h_q not allowed
    yield "q", ValueError, dict(q=torch.zeros(2, 0, 16, 576, dtype=BF16))
    yield "q", ValueError, dict(q=torch.zeros(2, 1, 576, 16, dtype=BF16).transpose(2, 3))
    yield "k_cache", TypeError, dict(k_cache=a["k_cache"].to(BF16))             # fp8 wants bytes
    yield "k_cache", TypeError, dict(k_cache=a["k_cache"], is_fp8=False)        # bf16 wants bf16
    yield "k_cache", ValueError, dict(k_cache=a["k_cache"][0])
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(3, 64, 1, 576, dtype=U8))
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(3, 64, 2, 656, dtype=U8))   # h_kv 2
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(3, 0, 1, 656, dtype=U8))
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(3, 64, 1, 1312, dtype=U8)[..., ::2])
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(3, 64, 1, 660, dtype=U8)[..., :656])
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(3 * 64 * 656 + 8, dtype=U8)[8:]
                                      .view(3, 64, 1, 656))                    # misaligned
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(3, 64 * 656 + 8, dtype=U8)[:, :64 * 656]
                                      .view(3, 64, 1, 656))                    # block stride
    yield "k_cache", ValueError, dict(k_cache=torch.zeros(3, 64, 1, 512, dtype=BF16),
                                      is_fp8=False)
    yield "indices", TypeError, dict(indices=a["indices"].long())
    yield "indices", ValueError, dict(indices=a["indices"][0])
    yield "indices", ValueError, dict(indices=torch.zeros(3, 1, 64, dtype=I32))
    yield "indices", ValueError, dict(indices=torch.zeros(2, 2, 64, dtype=I32))
    yield "indices", ValueError, dict(indices=torch.zeros(2, 1, 96, dtype=I32))
    yield "indices", ValueError, dict(indices=torch.zeros(2, 1, 0, dtype=I32))
    yield "indices", ValueError, dict(indices=torch.zeros(2, 1, 128, dtype=I32)[..., ::2])
    yield "attn_sink", TypeError, dict(attn_sink=torch.zeros(16, dtype=BF16))
    yield "attn_sink", ValueError, dict(attn_sink=torch.zeros(8))
    yield "attn_sink", ValueError, dict(attn_sink=torch.zeros(32)[::2])
    yield "topk_length", TypeError, dict(topk_length=torch.zeros(2, dtype=torch.int64))
    yield "topk_length", ValueError, dict(topk_length=torch.zeros(3, dtype=I32))
    yield "topk_length", ValueError, dict(topk_length=torch.zeros(2, 1, dtype=I32))
    extra = dict(extra_k_cache=torch.zeros(2, 16, 1, 656, dtype=U8),
                 extra_indices=torch.zeros(2, 1, 64, dtype=I32))
    yield "extra_k_cache", TypeError, dict(extra, extra_k_cache=torch.zeros(2, 16, 1, 576,
                                                                            dtype=BF16))
    yield "extra_k_cache", ValueError, dict(extra, extra_k_cache=torch.zeros(2, 16, 1, 600,
                                                                             dtype=U8))
    yield "extra_indices", ValueError, dict(extra, extra_indices=None)
    yield "extra_indices", ValueError, dict(extra_indices=extra["extra_indices"])
    yield "extra_indices", ValueError, dict(extra, extra_indices=torch.zeros(2, 1, 65, dtype=I32))
    yield "extra_indices", TypeError, dict(extra, extra_indices=torch.zeros(2, 1, 64))
    yield "extra_topk_length", ValueError, dict(extra_topk_length=torch.zeros(2, dtype=I32))
    yield "extra_topk_length", ValueError, dict(extra, extra_topk_length=torch.zeros(5, dtype=I32))


BAD = list(bad_cases())


@pytest.mark.parametrize("name,exc,change", BAD, ids=[f"{n}-{i}" for i, (n, _, _) in
                                                       enumerate(BAD)])
def test_validation_names_the_argument(name, exc, change):
    kw = dict(args(), **change)
    with pytest.raises(exc) as err:
        A.validate_sparse(**kw)
    assert str(err.value).startswith(name), str(err.value)


def test_validation_reaches_the_device_check_last():
    """A valid call on CPU tensors fails only at the device check (every other rule passed);
    FlashMLA's names appear beside ours."""
    for is_fp8, h_q, s_q in ((True, 128, 2), (False, 8, 3), (True, 64, 1)):
        kw = args(h_q=h_q, s_q=s_q, is_fp8=is_fp8, page=7)
        kw.update(attn_sink=torch.zeros(h_q), topk_length=torch.zeros(2, dtype=I32),
                  extra_k_cache=kw["k_cache"][:2], extra_indices=torch.zeros(2, s_q, 128,
                                                                             dtype=I32),
                  extra_topk_length=torch.zeros(2, dtype=I32), is_fp8=is_fp8)
        with pytest.raises(ValueError, match="^q: expected a CUDA tensor"):
            A.validate_sparse(**kw)
    with pytest.raises(TypeError, match=r"^is_fp8 \(is_fp8_kvcache\)"):
        A.validate_sparse(**args(), is_fp8="yes")
    with pytest.raises(ValueError, match=r"^extra_indices \(extra_indices_in_kvcache\)"):
        A.validate_sparse(**args(), extra_indices=torch.zeros(2, 1, 64, dtype=I32))


def test_validation_takes_every_cache_dtype_and_meta_tensors():
    for dtype in (torch.uint8, torch.int8, torch.float8_e4m3fn):
        kw = args(device="meta")
        kw["k_cache"] = kw["k_cache"].view(dtype)
        with pytest.raises(ValueError, match="^q: expected a CUDA tensor, got device meta"):
            A.validate_sparse(**kw)


def test_impls():
    # "auto" is resolved per call (tests/test_sparse_decode_seesaw.py); without one it stays
    assert A.select_sparse_impl("auto") == "auto" and A.select_sparse_impl("naive") == "naive"
    assert A.built_impls() == ("naive", "seesaw", "seesaw-fp8", "split-fp8", "narrow")
    assert set(A.IMPLS) == {"naive", "pipe", "seesaw", "seesaw-tma", "seesaw-fp8", "split-fp8",
                            "narrow"}
    for impl in ("pipe", "seesaw-tma"):
        with pytest.raises(NotImplementedError, match="^impl"):
            A.select_sparse_impl(impl)


# ---------------------------------------------------------------------------------------------
# The naive kernel: Triton's interpreter (fp32 q and bf16-layout caches: the interpreter's bf16
# dots are wrong; the FP8 cache stays bytes and is dequantized by the kernel as on a GPU)
# ---------------------------------------------------------------------------------------------

INTERPRETED = r'''
import struct, torch
from tle_kernels.fp8_kvcache import dequantize
from tle_kernels.sparse_decode_naive import sparse_decode_naive
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,
                                                 sparse_decode_reference)
nan, inf = float("nan"), float("inf")

def run(x, is_fp8, scale):
    q = x["q"].float()
    k, xk = x["k_cache"], x["extra_k_cache"]
    if not is_fp8:
        k = k.float()
        xk = None if xk is None else xk.float()
    b, s_q, h_q, _ = q.shape
    out = torch.full((b, s_q, h_q, 512), nan)
    lse = torch.full((b, h_q, s_q), nan)
    sparse_decode_naive(q, k, x["indices"], scale, is_fp8, out, lse, x["attn_sink"],
                        x["topk_length"], xk, x["extra_indices"], x["extra_topk_length"])
    return out, lse

def check(x, is_fp8, scale, what):
    out, lse = run(x, is_fp8, scale)
    want_out, want_lse = sparse_decode_reference(x["q"].float(), x["k_cache"], x["indices"],
        512, scale, x["attn_sink"], x["topk_length"], x["extra_k_cache"], x["extra_indices"],
        x["extra_topk_length"])
    assert not out.isnan().any() and not lse.isnan().any(), what
    assert torch.allclose(out, want_out, atol=2e-6, rtol=1e-4), (what, (out - want_out).abs().max())
    fin = torch.isfinite(want_lse)
    assert torch.equal(lse[~fin], want_lse[~fin]), what
    assert torch.allclose(lse[fin], want_lse[fin], atol=1e-5), what
    return out, lse

for is_fp8 in (True, False):
    # hostile indices (30 % invalid: -1, -2, -123456, -2**31, past the end, 2**31 - 1), duplicates,
    # topk_length 0 / partial / full / above topk / negative, a sink with +-inf and +-1e30, an
    # extra cache with page size 7 and its own lengths; h_q = 8 (a partial 16-head block)
    x = make_sparse_decode_inputs(5, 2, 8, 128, page=16, is_fp8=is_fp8, device="cpu", seed=11,
                                  invalid=0.3, topk_length=[0, 37, 128, 999, -4], attn_sink=True,
                                  extra_topk=64, extra_page=7, extra_topk_length=[64, 0, 5, 64, 70])
    row = x["indices"][3, 1]
    row[64:] = row[(row >= 0) & (row < 5 * 2 * 128)][0]              # a valid index, 65 times
    x["attn_sink"][:4] = torch.tensor([1e30, -1e30, inf, -inf])
    check(x, is_fp8, 0.2, ("features", is_fp8))
    # h_q = 128 (two 64-head blocks), no optional tensor, page size 64, rows with no valid slot
    x = make_sparse_decode_inputs(2, 1, 128, 64, is_fp8=is_fp8, device="cpu", seed=12,
                                  invalid=0.5)
    x["indices"][1, 0] = -1
    out, lse = check(x, is_fp8, 576 ** -0.5, ("plain", is_fp8))
    assert (out[1] == 0).all() and (lse[1] == inf).all()
    # h_q = 32 with an extra cache alone supplying every valid slot (topk_length 0)
    x = make_sparse_decode_inputs(2, 2, 32, 64, page=64, is_fp8=is_fp8, device="cpu", seed=13,
                                  topk_length=[0, 0], extra_topk=128, extra_page=64)
    check(x, is_fp8, 0.1, ("extra only", is_fp8))

# a hand-built FP8 token (codes, scales, RoPE bits written with struct): one slot, so out is
# its V row, which only the kernel's own dequantization can produce
codes = bytes([0x38, 0xB8, 0x40, 0x7E] * 128)
raw = codes + struct.pack("<4f", 0.5, 2.0, 2.0 ** -13, 3.0) + struct.pack("<64H", *([0x3F80] * 64))
cache = torch.zeros(2, 4, 1, 656, dtype=torch.uint8)
cache[1, 3, 0] = torch.tensor(list(raw), dtype=torch.uint8)
row = torch.tensor([1.0, -1.0, 2.0, 448.0] * 128) * torch.tensor([0.5, 2.0, 2.0 ** -13, 3.0]
                                                                ).repeat_interleave(128)
q = torch.zeros(1, 1, 16, 576)
q[0, 0, :, 512] = torch.arange(16.0)
idx = torch.full((1, 1, 64), -1, dtype=torch.int32)
idx[0, 0, 9] = 1 * 4 + 3
out, lse = torch.full((1, 1, 16, 512), nan), torch.full((1, 16, 1), nan)
sparse_decode_naive(q, cache, idx, 0.5, True, out, lse)
assert torch.equal(out[0, 0], row.expand(16, 512)), (out[0, 0, 0, :8], row[:8])
assert torch.allclose(lse[0, :, 0], torch.arange(16.0) * 0.5)
assert torch.equal(dequantize(cache)[1, 3, 0, :512].float(), row)
print("INTERPRETED OK")
'''


def test_naive_kernel_in_triton_interpreter(tmp_path):
    run_in_triton_interpreter(INTERPRETED, tmp_path, timeout=300)


# ---------------------------------------------------------------------------------------------
# The naive kernel compiled for sm_90a as a launch specialises it (16-divisible pointers and
# strides): it must fit Hopper's 227 KB of shared memory per block
# ---------------------------------------------------------------------------------------------

HOPPER_SMEM = 232448


@pytest.mark.parametrize("fp8", [True, False], ids=["fp8", "bf16"])
def test_naive_kernel_compiles_for_sm90_within_shared_memory(fp8):
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget

    from tle_kernels import sparse_decode_naive as N

    fn = N.sparse_decode_naive_kernel
    kt = "*u8" if fp8 else "*bf16"
    sig = {}
    for name in fn.arg_names:
        if name.endswith("_ptr"):
            sig[name] = {"k_ptr": kt, "xk_ptr": kt, "q_ptr": "*bf16", "out_ptr": "*bf16",
                         "sink_ptr": "*fp32", "lse_ptr": "*fp32"}.get(name, "*i32")
        elif name == "sm_scale":
            sig[name] = "fp32"
        elif name.isupper():
            continue
        else:
            sig[name] = "i32"
    cx = dict(FP8=fp8, HAS_TOPK_LEN=True, HAS_EXTRA=True, HAS_EXTRA_TOPK_LEN=True,
              HAS_SINK=True, BLOCK_H=64, D_MAIN=512, D_TAIL=64, SCALE_OFF=F.SCALE_OFFSET,
              ROPE_OFF=F.ROPE_OFFSET, SCALE_TILE=F.TILE, TILE=N.TOPK_TILE)
    div16 = [n for n in sig if n.endswith("_ptr") or (n.startswith("stride_")
                                                       and not n.startswith("stride_l_"))]
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in div16}
    src = triton.compiler.ASTSource(fn, dict(sig, **{k: "constexpr" for k in cx}), cx, attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                       options=dict(num_warps=N.num_warps_for(64), num_stages=N.NUM_STAGES))
    assert "sparse_decode_naive_kernel" in k.asm["ptx"]
    assert k.metadata.shared <= HOPPER_SMEM, k.metadata.shared
