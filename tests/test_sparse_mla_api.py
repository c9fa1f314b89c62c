"""SparseMLA prefill API on the CPU: input validation (before anything needs CUDA), the custom op's
fake implementation, the fp32 reference's semantics, and the impl selection table."""

from __future__ import annotations

import math

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

try:
    import tle_kernels as K
    from tle_kernels import api
except ImportError:  # repository on the path, package not installed
    import tle_kernels as K
    from tle_kernels import api

from .triton_cpu import compile_for_sm90, run_in_triton_interpreter

ref = K.sparse_mla_reference
BF16, I32, F32 = torch.bfloat16, torch.int32, torch.float32


def args(s_q=4, h_q=64, d_qk=576, s_kv=100, topk=64, device="cpu", batch=None):
    lead = () if batch is None else (batch,)
    q = torch.zeros(lead + (s_q, h_q, d_qk), dtype=BF16, device=device)
    kv = torch.zeros(lead + (s_kv, 1, d_qk), dtype=BF16, device=device)
    idx = torch.zeros(lead + (s_q, 1, topk), dtype=I32, device=device)
    return q, kv, idx


# ---------------------------------------------------------------------------------------------
# Validation: each error names the argument; CPU and meta tensors reach every rule but the device
# ---------------------------------------------------------------------------------------------

def bad_cases():
    q, kv, idx = args()
    yield "q", TypeError, dict(q=q.float())
    yield "q", TypeError, dict(q=[1, 2, 3])
    yield "q", ValueError, dict(q=q[0])
    yield "q", ValueError, dict(q=torch.zeros(4, 64, 640, dtype=BF16))           # d_qk
    yield "q", ValueError, dict(q=torch.zeros(4, 0, 576, dtype=BF16))            # h_q
    yield "q", ValueError, dict(q=torch.zeros(4, 576, 64, dtype=BF16).transpose(1, 2))  # last dim
    yield "kv", TypeError, dict(kv=kv.half())
    yield "kv", ValueError, dict(kv=kv[:, 0])
    yield "kv", ValueError, dict(kv=torch.zeros(100, 2, 576, dtype=BF16))        # h_kv
    yield "kv", ValueError, dict(kv=torch.zeros(100, 1, 512, dtype=BF16))        # d mismatch
    yield "kv", ValueError, dict(kv=torch.zeros(576, 1, 100, dtype=BF16).transpose(0, 2))
    yield "indices", TypeError, dict(indices=idx.long())
    yield "indices", ValueError, dict(indices=idx[:, 0])
    yield "indices", ValueError, dict(indices=torch.zeros(5, 1, 64, dtype=I32))  # s_q mismatch
    yield "indices", ValueError, dict(indices=torch.zeros(4, 2, 64, dtype=I32))  # h_kv
    yield "indices", ValueError, dict(indices=torch.zeros(4, 1, 128, dtype=I32)[..., ::2])
    yield "d_v", ValueError, dict(d_v=256)
    yield "sm_scale", TypeError, dict(sm_scale="0.1")
    yield "sm_scale", ValueError, dict(sm_scale=0.0)
    yield "sm_scale", ValueError, dict(sm_scale=-0.1)
    yield "sm_scale", ValueError, dict(sm_scale=float("nan"))
    yield "impl", ValueError, dict(impl="flash")
    yield "attn_sink", TypeError, dict(attn_sink=torch.zeros(64, dtype=BF16))
    yield "attn_sink", ValueError, dict(attn_sink=torch.zeros(32, dtype=F32))
    yield "attn_sink", ValueError, dict(attn_sink=torch.zeros(1, 64, dtype=F32))
    yield "topk_length", TypeError, dict(topk_length=torch.zeros(4, dtype=torch.int64))
    yield "topk_length", ValueError, dict(topk_length=torch.zeros(5, dtype=I32))
    yield "topk_length", ValueError, dict(topk_length=torch.zeros(8, dtype=I32)[::2])


def on(x, device):
    """x on ``device`` with the same strides (``.to`` would make a meta view contiguous)."""
    return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=device)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_validation_names_the_argument(device):
    q, kv, idx = args(device=device)
    base = dict(q=q, kv=kv, indices=idx, sm_scale=0.1)
    for name, exc, override in bad_cases():
        kw = dict(base)
        kw.update({k: (on(v, device) if isinstance(v, torch.Tensor) else v)
                   for k, v in override.items()})
        with pytest.raises(exc, match=rf"^{name}\b"):
            K.sparse_mla_prefill(**kw)


def test_validation_device_last():
    q, kv, idx = args()
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        K.sparse_mla_prefill(q, kv, idx, 0.1)
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        K.sparse_mla_prefill(*args(device="meta"), 0.1)


def test_validation_batched():
    q, kv, idx = args(batch=2)
    with pytest.raises(ValueError, match=r"^kv"):
        K.sparse_mla_prefill(q, kv[:, :, 0], idx, 0.1)
    with pytest.raises(ValueError, match=r"^kv/indices: batch"):
        K.sparse_mla_prefill(q, kv[:1], idx, 0.1)
    with pytest.raises(ValueError, match=r"^topk_length"):
        K.sparse_mla_prefill(q, kv, idx, 0.1, topk_length=torch.zeros(4, dtype=I32))
    with pytest.raises(ValueError, match=r"^q: expected a CUDA tensor"):
        K.sparse_mla_prefill(q, kv, idx, 0.1, topk_length=torch.zeros(2, 4, dtype=I32))


def test_explicit_impl_that_cannot_run_is_rejected_before_launch():
    with pytest.raises(ValueError, match=r"impl='pipe'.*h_q % 64"):
        K.sparse_mla_prefill(*args(h_q=32), 0.1, impl="pipe")
    with pytest.raises(ValueError, match=r"impl='seesaw'.*topk % 64"):
        K.sparse_mla_prefill(*args(topk=100), 0.1, impl="seesaw")
    with pytest.raises(ValueError, match=r"impl='pipe'.*d_qk == 576"):
        K.sparse_mla_prefill(*args(d_qk=512), 0.1, impl="pipe")
    with pytest.raises(ValueError, match=r"impl='pipe'.*attn_sink"):
        K.sparse_mla_prefill(*args(topk=128), 0.1, impl="pipe", attn_sink=torch.zeros(64))
    with pytest.raises(ValueError, match=r"impl='pipe'.*topk_length"):
        K.sparse_mla_prefill(*args(), 0.1, impl="pipe", topk_length=torch.zeros(4, dtype=I32))


# ---------------------------------------------------------------------------------------------
# Impl selection
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("h_q,d_qk,topk,sink,tlen,expect", [
    (128, 576, 2048, False, False, "seesaw"),
    # topk % 128 == 64: the seesaw with its last pair's second tile masked
    (64, 576, 64, False, False, "seesaw"),
    # h_q <= 32 without attn_sink / topk_length: the narrow-head kernel
    (8, 576, 2048, False, False, "narrow"),
    (16, 576, 2048, False, False, "narrow"),
    (24, 576, 2048, False, False, "narrow"),
    (32, 576, 2048, False, False, "narrow"),
    (32, 576, 576, False, False, "narrow"),
    # otherwise at h_q % 64 != 0: the seesaw padded to 64 heads where that is at most 2x the naive
    # kernel's head rows (tle_kernels/head_padding.py, auto_pads), else the naive kernel
    (32, 576, 2048, True, True, "narrow"),   # with topk_length: its topk_length kernel
    (32, 512, 2048, False, False, "narrow"),  # d_qk 512 at h_q <= 32: the narrow d512 kernels
    (48, 576, 2048, False, False, "seesaw"),
    (96, 576, 2048, True, False, "seesaw"),
    (32, 576, 100, False, False, "naive"),     # the pipe kernel does not pad
    (16, 576, 2048, True, True, "narrow"),
    (16, 512, 2048, True, True, "narrow"),
    (48, 512, 2048, True, True, "seesaw"),    # padded to 64 heads
    (128, 512, 2048, False, False, "seesaw"),  # tle_kernels/sparse_mla_seesaw_d512.py
    (128, 576, 2048, True, False, "seesaw"),   # tle_kernels/sparse_mla_seesaw_sink.py
    (128, 576, 2048, False, True, "seesaw"),   # tle_kernels/sparse_mla_seesaw_topk_length.py
    (128, 576, 2048, True, True, "seesaw"),
    (128, 512, 2048, True, False, "seesaw"),   # tle_kernels/sparse_mla_seesaw_d512_sink.py
    (128, 512, 2048, False, True, "seesaw"),   # tle_kernels/sparse_mla_seesaw_d512_topk_length.py
    (128, 512, 2048, True, True, "seesaw"),
    (32, 512, 2048, True, True, "narrow"),
    (128, 512, 576, True, True, "seesaw"),
    (128, 576, 576, True, False, "seesaw"),
    (128, 576, 576, False, True, "seesaw"),
    (128, 576, 576, False, False, "seesaw"),
    (128, 576, 100, False, False, "naive"),    # topk % 64 != 0: no TLE kernel
    (128, 576, 100, True, True, "naive"),
])
def test_auto_selection(h_q, d_qk, topk, sink, tlen, expect):
    assert api.select_impl("auto", h_q, d_qk, topk, sink, tlen) == expect


def test_selection_table(monkeypatch):
    assert api.PREFERENCE[-1] == "naive" and set(api.PREFERENCE) == set(api.IMPLS)
    assert api.supported_impls(128, 576, 2048) == ["naive", "pipe", "seesaw"]
    assert api.supported_impls(128, 576, 576) == ["naive", "pipe", "seesaw"]
    assert api.supported_impls(128, 576, 100) == ["naive"]
    assert api.supported_impls(16, 512, 64) == ["naive", "seesaw", "narrow"]
    assert api.supported_impls(16, 512, 100) == ["naive"]
    assert api.supported_impls(16, 576, 2048) == ["naive", "seesaw", "narrow"]
    assert api.supported_impls(8, 576, 2048, True, True) == ["naive", "seesaw", "narrow"]
    assert api.select_impl("auto", 128, 576, 2048, aligned=False) == "naive"
    assert api.select_impl("auto", 128, 576, 2048) == "seesaw"
    assert api.select_impl("auto", 128, 576, 576) == "seesaw"
    monkeypatch.setattr(api, "PREFERENCE", ("pipe", "seesaw", "naive"))
    assert api.select_impl("auto", 128, 576, 2048) == "pipe"
    with pytest.raises(ValueError, match="impl"):
        api.select_impl("bogus", 128, 576, 2048)


# ---------------------------------------------------------------------------------------------
# The custom op's fake implementation
# ---------------------------------------------------------------------------------------------

def test_fake_implementation_shapes():
    with FakeTensorMode():
        q, kv, idx = args(s_q=8, h_q=128, s_kv=4096, topk=2048, device="cuda")
        out, ml, lse = torch.ops.tle_kernels.sparse_mla_prefill(q, kv, idx, 0.1, 512, None, None,
                                                                "auto")
        assert out.shape == (8, 128, 512) and out.dtype == BF16 and out.device.type == "cuda"
        assert ml.shape == lse.shape == (8, 128) and ml.dtype == lse.dtype == F32
        q, kv, idx = args(s_q=8, h_q=16, d_qk=512, topk=64, device="cuda", batch=3)
        out, ml, lse = K.sparse_mla_prefill(q, kv, idx, 0.1, attn_sink=torch.zeros(16, device="cuda"),
                                            topk_length=torch.zeros(3, 8, dtype=I32, device="cuda"))
        assert out.shape == (3, 8, 16, 512) and out.dtype == BF16
        assert ml.shape == lse.shape == (3, 8, 16) and lse.dtype == F32


def test_op_schema():
    schema = str(torch.ops.tle_kernels.sparse_mla_prefill.default._schema)
    assert "Tensor? attn_sink" in schema and "Tensor? topk_length" in schema


# ---------------------------------------------------------------------------------------------
# The reference's semantics (tiny CPU cases against a per-row loop written out by hand)
# ---------------------------------------------------------------------------------------------

def loop_reference(q, kv, idx, sm_scale, sink=None, tlen=None):
    s_q, h_q, _ = q.shape
    s_kv = kv.shape[0]
    out = torch.zeros(s_q, h_q, 512, dtype=torch.float64)
    ml = torch.full((s_q, h_q), -math.inf, dtype=torch.float64)
    lse = torch.full((s_q, h_q), math.inf, dtype=torch.float64)
    for s in range(s_q):
        n = idx.shape[-1] if tlen is None else int(tlen[s])
        ts = [int(t) for t in idx[s, 0, :max(n, 0)] if 0 <= int(t) < s_kv]
        if not ts:
            continue
        rows = kv[ts, 0].double()
        logits = q[s].double() @ rows.T * sm_scale          # [h, n]
        ml[s] = logits.max(-1).values
        lse[s] = torch.logsumexp(logits, -1)
        den = lse[s] if sink is None else torch.logaddexp(lse[s], sink.double())
        out[s] = torch.exp(logits - den[:, None]) @ rows[:, :512]
    return out, ml, lse


def rand_case(s_q=3, h_q=16, d_qk=576, s_kv=20, topk=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = (torch.randn(s_q, h_q, d_qk, generator=g) / 10).to(BF16)
    kv = (torch.randn(s_kv, 1, d_qk, generator=g) / 10).to(BF16)
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=I32)
    return q, kv, idx


def assert_matches(got, want):
    for g, w in zip(got, want):
        assert torch.allclose(g.double(), w, atol=1e-5, rtol=1e-5, equal_nan=False), (g, w)


@pytest.mark.parametrize("d_qk", [512, 576])
def test_reference_plain(d_qk):
    q, kv, idx = rand_case(d_qk=d_qk)
    assert_matches(ref(q, kv, idx, 0.3), loop_reference(q, kv, idx, 0.3))


def test_reference_invalid_values_and_empty_rows():
    q, kv, idx = rand_case(s_q=4, s_kv=20, topk=8)
    bad = [-1, -2**31, 20, 2**31 - 1]
    idx[0, 0, ::2] = torch.tensor(bad, dtype=I32)
    idx[1, 0, :] = torch.tensor(bad * 2, dtype=I32)      # row 1 has no valid index
    got = ref(q, kv, idx, 0.3)
    assert_matches(got, loop_reference(q, kv, idx, 0.3))
    assert torch.all(got[0][1] == 0)
    assert torch.all(got[1][1] == -math.inf) and torch.all(got[2][1] == math.inf)
    # every invalid value behaves as -1
    idx2 = idx.clone()
    idx2[(idx2 < 0) | (idx2 >= 20)] = -1
    for a, b in zip(got, ref(q, kv, idx2, 0.3)):
        assert torch.equal(a, b)


def test_reference_duplicates_count_twice():
    q, kv, idx = rand_case(s_q=2, topk=8)
    idx[:, 0, :] = torch.tensor([3, 3, 3, 5, 5, 7, -1, 20], dtype=I32)
    assert_matches(ref(q, kv, idx, 0.3), loop_reference(q, kv, idx, 0.3))


def test_reference_attn_sink():
    q, kv, idx = rand_case(s_q=3, h_q=16)
    idx[2, 0, :] = -1                                   # empty row: out 0 even with a sink
    sink = torch.linspace(-3, 3, 16)
    got = ref(q, kv, idx, 0.3, attn_sink=sink)
    assert_matches(got, loop_reference(q, kv, idx, 0.3, sink=sink))
    plain = ref(q, kv, idx, 0.3)
    assert torch.equal(got[1], plain[1]) and torch.equal(got[2], plain[2])  # sink: out only
    assert torch.all(got[0][2] == 0) and torch.all(got[2][2] == math.inf)
    scale = 1 / (1 + torch.exp(sink[None, :] - plain[2][:2]))
    assert torch.allclose(got[0][:2], plain[0][:2] * scale[..., None], atol=1e-6)
    # a -inf sink is no sink
    assert_matches(ref(q, kv, idx, 0.3, attn_sink=torch.full((16,), -math.inf)),
                   loop_reference(q, kv, idx, 0.3))


def test_reference_topk_length():
    q, kv, idx = rand_case(s_q=4, topk=8)
    tlen = torch.tensor([8, 3, 0, 100], dtype=I32)
    got = ref(q, kv, idx, 0.3, topk_length=tlen)
    assert_matches(got, loop_reference(q, kv, idx, 0.3, tlen=tlen))
    cut = idx.clone()
    cut[1, 0, 3:] = -1
    cut[2, 0, :] = -1
    for a, b in zip(got, ref(q, kv, cut, 0.3)):
        assert torch.equal(a, b)
    assert torch.all(got[2][2] == math.inf)


def test_reference_batched_and_chunked():
    parts = [rand_case(seed=s) for s in range(2)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))
    got = ref(q, kv, idx, 0.3, chunk=2)
    for b in range(2):
        assert_matches(tuple(x[b] for x in got), loop_reference(*parts[b], 0.3))


def test_make_inputs_window():
    q, kv, idx = K.make_inputs(8, 40, 16, 16, device="cpu", seed=1)
    assert q.shape == (8, 16, 576) and kv.shape == (40, 1, 576) and idx.dtype == I32
    for t in range(8):
        row = idx[t, 0]
        valid = row[row < 40]
        assert len(set(valid.tolist())) == len(valid)           # distinct
        assert int(valid.max()) <= t + 40 - 8 if len(valid) else True
        assert len(valid) == min(16, t + 40 - 8 + 1)             # invalid slots = s_kv


# ---------------------------------------------------------------------------------------------
# The naive Triton kernel's semantics, run by Triton's CPU interpreter (fp32 data: the
# interpreter computes with numpy, which has no bf16; bf16 accuracy is the GPU tests' job)
# ---------------------------------------------------------------------------------------------

INTERPRETED = r'''
import torch
from tle_kernels.sparse_mla_naive import sparse_mla_naive
from tle_kernels.reference import sparse_mla_reference
worst = 0.0
for s_q, h, topk, s_kv, d, sink, tlen in [(6, 16, 64, 64, 576, False, False),
                                          (6, 48, 128, 300, 576, True, True),
                                          (6, 32, 100, 50, 512, False, True),
                                          (5, 8, 64, 90, 576, True, True),
                                          (4, 5, 64, 70, 512, True, False),
                                          (4, 128, 128, 1000, 576, True, False)]:
    g = torch.Generator().manual_seed(s_q + h)
    q = torch.randn(s_q, h, d, generator=g) / 10
    kv = torch.randn(s_kv, 1, d, generator=g) / 10
    idx = torch.randint(0, s_kv, (s_q, 1, topk), generator=g, dtype=torch.int32)
    idx[0, 0, ::3] = -1; idx[0, 0, 1::5] = -2**31; idx[0, 0, 2::7] = 2**31 - 1
    idx[1, 0, :] = s_kv; idx[2, 0, 1:5] = idx[2, 0, 0]
    sk = torch.randn(h, generator=g) * 2 if sink else None
    tl_ = torch.tensor([topk, 0, 5, 70, -3, topk + 9][:s_q], dtype=torch.int32) if tlen else None
    want = sparse_mla_reference(q, kv, idx, 0.05, attn_sink=sk, topk_length=tl_)
    out = torch.full((s_q, h, 512), float("nan"))
    ml = torch.full((s_q, h), float("nan")); lse = torch.full((s_q, h), float("nan"))
    sparse_mla_naive(q, kv, idx, 0.05, out, ml, lse, sk, tl_)
    assert torch.allclose(out, want[0], atol=1e-5), (s_q, h, topk)
    for a, b in ((ml, want[1]), (lse, want[2])):
        fin = torch.isfinite(b)
        assert torch.equal(a[~fin], b[~fin]), (s_q, h, topk)
        assert torch.allclose(a[fin], b[fin], atol=1e-5), (s_q, h, topk)
print("INTERPRETED OK")
'''


def test_naive_kernel_in_triton_interpreter(tmp_path):
    run_in_triton_interpreter(INTERPRETED, tmp_path, timeout=120)


@pytest.mark.parametrize("h_q,d_qk,sink,tlen", [(128, 576, False, False), (16, 512, True, True)])
def test_naive_kernel_compiles_for_sm90(h_q, d_qk, sink, tlen):
    from tle_kernels import sparse_mla_naive as N

    ints = ["stride_q_s", "stride_q_h", "stride_kv_s", "stride_idx_s", "stride_o_s", "stride_o_h",
            "stride_l_s", "s_kv", "h_q", "topk"]
    sig = {"q_ptr": "*bf16", "kv_ptr": "*bf16", "idx_ptr": "*i32", "out_ptr": "*bf16",
           "max_logits_ptr": "*fp32", "lse_ptr": "*fp32", "sink_ptr": "*fp32",
           "topk_length_ptr": "*i32", **{n: "i32" for n in ints}, "sm_scale": "fp32"}
    block_h = N.block_h_for(h_q)
    cx = {"D_MAIN": 512, "D_TAIL": d_qk - 512, "BLOCK_H": block_h, "BK": N.BK, "HAS_SINK": sink,
          "HAS_TOPK_LENGTH": tlen}
    k = compile_for_sm90(N.sparse_mla_naive_kernel, sig, cx, num_warps=N.num_warps_for(block_h),
                         num_stages=N.NUM_STAGES)
    assert "sparse_mla_naive_kernel" in k.asm["ptx"]


def test_per_cta_launch_adapts_the_grid_and_arguments(monkeypatch):
    """tle_kernels.api.PerCtaLaunch: the per-CTA call `k[(s_q, h_q // 64)](*args, TOPK=, BLOCK_H=,
    **extra)` becomes one program per SM with n_items, n_hb and rounds appended."""
    import types

    import torch

    from tle_kernels.api import PerCtaLaunch

    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda dev: types.SimpleNamespace(multi_processor_count=132))
    calls = []

    class Kernel:
        def __getitem__(self, grid):
            return lambda *a, **kw: calls.append((grid, a, kw))

    q = torch.zeros(1)
    PerCtaLaunch(Kernel())[(4096, 2)](q, "x", TOPK=2048, BLOCK_H=64, trace_ptr="t")
    ((grid, a, kw),) = calls
    assert grid == (132,) and a == (q, "x", 8192, 2, 63)  # 8192 items, 63 rounds of 132
    assert kw == {"TOPK": 2048, "BLOCK_H": 64, "trace_ptr": "t", "n_heads": 128, "q_div": 1}


def test_per_cta_launch_passes_the_head_count_only_to_kernels_that_take_it(monkeypatch):
    """A kernel taking ``n_heads`` gets the caller's (h_q 40: one masked head block) or, when
    none is given, its grid's heads; a kernel without it (an earlier version, as the A/B harness
    runs) gets none."""
    import types

    import torch

    from tle_kernels.api import PerCtaLaunch, takes_argument

    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda dev: types.SimpleNamespace(multi_processor_count=132))
    calls = []

    class Kernel:
        def __init__(self, fn):
            self.fn = fn

        def __getitem__(self, grid):
            return lambda *a, **kw: calls.append((grid, a, kw))

    def with_heads(q, n_items, n_hb, ROUNDS, n_heads, TOPK, BLOCK_H):
        pass

    def without(q, n_items, n_hb, ROUNDS, TOPK, BLOCK_H):
        pass

    assert takes_argument(Kernel(with_heads), "n_heads")
    assert not takes_argument(Kernel(without), "n_heads")
    q = torch.zeros(1)
    PerCtaLaunch(Kernel(with_heads))[(10, 1)](q, TOPK=128, BLOCK_H=64, n_heads=40)
    PerCtaLaunch(Kernel(with_heads))[(10, 2)](q, TOPK=128, BLOCK_H=64)
    PerCtaLaunch(Kernel(without))[(10, 2)](q, TOPK=128, BLOCK_H=64)
    assert [c[2].get("n_heads") for c in calls] == [40, 128, None]
    assert calls[0][1] == (q, 10, 1, 1) and calls[1][1] == (q, 20, 2, 1)


# ---------------------------------------------------------------------------------------------
# The benchmark's clock sampler (NVML faked: CI has no GPU)
# ---------------------------------------------------------------------------------------------

class _FakeNvml:
    """SM clock readings in turn (the last one repeated)."""
    NVML_CLOCK_SM = 0

    def __init__(self, clocks):
        self.clocks, self.i = list(clocks), 0

    def nvmlDeviceGetHandleByIndex(self, i):
        return "gpu0"

    def nvmlDeviceGetClockInfo(self, h, kind):
        assert h == "gpu0" and kind == self.NVML_CLOCK_SM
        c = self.clocks[min(self.i, len(self.clocks) - 1)]
        self.i += 1
        return c


def _bench_module():
    try:
        from tle_kernels import bench_sparse_mla as B
    except ImportError:
        from tle_kernels import bench_sparse_mla as B
    return B


def test_clock_sampler_reports_the_median_clock():
    import time as _time
    nvml = _FakeNvml([1980, 1980, 1700, 1680, 1690, 1710, 1700, 1690, 1700])
    with _bench_module().ClockSampler(nvml=nvml, period_s=0.001) as c:
        _time.sleep(0.05)
    assert nvml.i >= 5                 # it sampled while the block ran
    assert 1680 <= c.clock_mhz <= 1710  # the median, not the first (boost) samples
    assert c.note() == f"  (SM clock {c.clock_mhz} MHz)"


def test_clock_sampler_without_nvml_changes_nothing(monkeypatch):
    import sys as _sys
    monkeypatch.setitem(_sys.modules, "pynvml", None)  # import pynvml -> ImportError
    with _bench_module().ClockSampler() as c:
        pass
    assert c.clock_mhz is None and c.note() == ""
