"""The SparseMLA prefill at the tensor-parallel head counts 8, 16 and 32 on the GPU: the seesaw
runs q padded with zero heads to 64 (tle_kernels/head_padding.py), through ``sparse_mla_prefill``
(impl "auto": the padded seesaw at h_q 32, the naive kernel at 8 and 16; impl "seesaw": padded at
every count) and FlashMLA's name ``flash_mla_sparse_fwd``, against the fp32 reference with the
tolerances and NaN-poisoned outputs of tests/gpu/test_sparse_mla.py: hostile indices, attn_sink,
topk_length, launches under one wave (topk pieces) and over one (persistent rounds and a split
last wave), d_qk 512, the batched layout, torch.compile and CUDA graph capture and replay.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_mla_head_padding.py
"""

from __future__ import annotations

import math

import pytest
import torch

import tle_kernels as K
from tle_kernels import api

from .test_sparse_mla import compare, make_case, poisoned

pytestmark = pytest.mark.gpu

SCALE = 1 / math.sqrt(576)
HEADS = (8, 16, 32)


def features(h_q, s_q, topk, which, seed):
    """attn_sink (a -inf, a +4 and random ones) and / or topk_length (0, 1, 63, past topk,
    negative, random) for ``which`` in plain / sink / topk_length / both."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    sink = tlen = None
    if which in ("sink", "both"):
        sink = torch.randn(h_q, device="cuda", generator=g) * 2
        sink[0], sink[1] = float("-inf"), 4.0
    if which in ("topk_length", "both"):
        tlen = torch.randint(0, topk + 1, (s_q,), device="cuda", generator=g, dtype=torch.int32)
        tlen[:5] = torch.tensor([0, 1, 63, topk + 100, -5], dtype=torch.int32)
    return sink, tlen


def auto_impl(h_q: int) -> str:
    return "seesaw" if h_q > 16 else "naive"


@pytest.mark.parametrize("which", ["plain", "sink", "topk_length", "both"])
@pytest.mark.parametrize("s_q,s_kv", [(8, 32768), (274, 8192)])
@pytest.mark.parametrize("h_q", HEADS)
def test_padded_seesaw_against_the_reference(h_q, s_q, s_kv, which):
    """At topk 2048, 8 tokens (under one wave: the plain launch runs them as 16 topk pieces
    each) and 274 (on 132 SMs: two persistent rounds, then 10 tokens as 8 pieces each; the sink
    launch runs the rounds with the sink kernel); topk_length runs its per-item kernel. impl
    "seesaw" and the naive kernel into poisoned outputs, then sparse_mla_prefill (auto and
    "seesaw") and flash_mla_sparse_fwd."""
    topk = 2048
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, seed=h_q * 1000 + s_q)
    sink, tlen = features(h_q, s_q, topk, which, seed=h_q + s_q)
    assert api.supported_impls(h_q, 576, topk, sink is not None, tlen is not None) == \
        ["naive", "seesaw"]
    assert api.select_impl("auto", h_q, 576, topk, sink is not None, tlen is not None) == \
        auto_impl(h_q)
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    what = f"h_q={h_q} s_q={s_q} s_kv={s_kv} {which}"
    for impl in ("seesaw", "naive"):
        bufs = poisoned(q)
        assert api.launch(impl, q, kv, idx, SCALE, *bufs, attn_sink=sink,
                          topk_length=tlen) == impl
        torch.cuda.synchronize()
        compare(bufs, want, f"{what}: {impl}")
    compare(K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen), want,
            f"{what}: sparse_mla_prefill auto")
    compare(K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen,
                                 impl="seesaw"), want, f"{what}: sparse_mla_prefill seesaw")
    compare(K.flash_mla_sparse_fwd(q, kv, idx, SCALE, 512, sink, tlen), want,
            f"{what}: flash_mla_sparse_fwd")


@pytest.mark.parametrize("h_q", HEADS)
def test_outputs_past_the_real_heads_are_untouched(h_q):
    """Outputs as views into larger buffers (heads past h_q, a token past s_q): the padded
    heads' results never land there."""
    s_q, topk = 20, 1024
    q, kv, idx = make_case(s_q, h_q, topk, 4096, seed=70 + h_q)
    out_b = torch.full((s_q + 1, h_q + 4, 512), 7.0, device="cuda", dtype=torch.bfloat16)
    ml_b = torch.full((s_q + 1, h_q + 4), 7.0, device="cuda")
    lse_b = torch.full((s_q + 1, h_q + 4), 7.0, device="cuda")
    views = (out_b[:s_q, :h_q], ml_b[:s_q, :h_q], lse_b[:s_q, :h_q])
    for v in views:
        v.fill_(float("nan"))
    assert api.launch("seesaw", q, kv, idx, SCALE, *views) == "seesaw"
    torch.cuda.synchronize()
    compare(views, K.sparse_mla_reference(q, kv, idx, SCALE), f"h_q={h_q} into views")
    for b in (out_b, ml_b, lse_b):
        assert (b[s_q:] == 7).all() and (b[:, h_q:] == 7).all()


@pytest.mark.parametrize("h_q", HEADS)
def test_d512_padded(h_q):
    """d_qk 512 (the seesaw's d512 kernel) padded to 64 heads."""
    q, kv, idx = make_case(100, h_q, 2048, 8192, d_qk=512, seed=80 + h_q)
    want = K.sparse_mla_reference(q, kv, idx, 1 / math.sqrt(512))
    bufs = poisoned(q)
    assert api.launch("seesaw", q, kv, idx, 1 / math.sqrt(512), *bufs) == "seesaw"
    torch.cuda.synchronize()
    compare(bufs, want, f"d512 h_q={h_q}")
    compare(K.sparse_mla_prefill(q, kv, idx, 1 / math.sqrt(512)), want, f"d512 h_q={h_q} auto")


@pytest.mark.parametrize("impl", ["auto", "seesaw"])
@pytest.mark.parametrize("h_q", HEADS)
def test_batched_layout(h_q, impl):
    B, s_q, topk, s_kv = 3, 16, 256, 500
    parts = [make_case(s_q, h_q, topk, s_kv, seed=90 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))
    sink = torch.randn(h_q, device="cuda")
    tlen = torch.randint(0, topk + 1, (B, s_q), device="cuda", dtype=torch.int32)
    got = K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen, impl=impl)
    assert got[0].shape == (B, s_q, h_q, 512) and got[2].shape == (B, s_q, h_q)
    compare(got, K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen),
            f"batched h_q={h_q} {impl}")


def test_torch_compile_fullgraph_padded():
    B, s_q, h_q, topk, s_kv = 2, 8, 16, 256, 300
    parts = [make_case(s_q, h_q, topk, s_kv, seed=100 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))

    def f(q, kv, idx):
        out, ml, lse = K.sparse_mla_prefill(q, kv, idx, SCALE, impl="seesaw")
        return out.float() * 2, lse - ml

    got = torch.compile(f, fullgraph=True)(q, kv, idx)
    want = f(q, kv, idx)
    assert torch.allclose(got[0], want[0]) and torch.equal(got[1].isinf(), want[1].isinf())


@pytest.mark.parametrize("h_q,impl", [(32, "auto"), (8, "seesaw"), (16, "seesaw")])
def test_cuda_graph_capture_and_replay(h_q, impl):
    """The padding's allocations and copies captured with the kernels: replays with new inputs
    copied in place give the new results."""
    s_q, topk, s_kv = 200, 2048, 4096
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, seed=110)
    sink = torch.randn(h_q, device="cuda")
    K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, impl=impl)  # compile outside capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, impl=impl)
    for seed in (111, 112):
        q2, kv2, idx2 = make_case(s_q, h_q, topk, s_kv, seed=seed)
        q.copy_(q2), kv.copy_(kv2), idx.copy_(idx2)
        graph.replay()
        torch.cuda.synchronize()
        compare(outs, K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink),
                f"graph h_q={h_q} {impl}")
