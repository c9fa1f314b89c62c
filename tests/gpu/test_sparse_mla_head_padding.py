"""The SparseMLA prefill at head counts that are not a multiple of 64 on the GPU (the
tensor-parallel 8, 16 and 32, and 48, 96): the seesaw kernels take the real head count, their
last head block's rows past h_q masked (tle_kernels/head_padding.py), through
``sparse_mla_prefill`` (impl "auto": the seesaw at h_q > 16, the naive kernel at 8 and 16; impl
"seesaw": at every count) and FlashMLA's name ``flash_mla_sparse_fwd``, against the fp32
reference with the tolerances and NaN-poisoned outputs of tests/gpu/test_sparse_mla.py: hostile
indices, attn_sink, topk_length, launches under one wave (topk pieces, merged over 16-head copies
at h_q 8) and over one (persistent rounds and a split last wave), outputs as views inside fenced
buffers (nothing written past h_q), d_qk 512 (with attn_sink and topk_length too), misaligned
outputs (h_q 5: the padded copies), the batched layout, torch.compile and CUDA graph capture and
replay.

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
HEADS = (8, 16, 32, 48, 96)


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


def auto_impl(h_q: int, which: str = "plain") -> str:
    """What "auto" takes: the narrow-head kernel up to 32 heads (tle_kernels/sparse_mla_narrow.py,
    with attn_sink and topk_length too), else the seesaw padded to 64 heads above 16 heads and the
    naive kernel at 16 and fewer."""
    if h_q <= 32:
        return "narrow"
    return "seesaw" if h_q > 16 else "naive"


@pytest.mark.parametrize("which", ["plain", "sink", "topk_length", "both"])
@pytest.mark.parametrize("s_q,s_kv", [(8, 32768), (274, 8192)])
@pytest.mark.parametrize("h_q", HEADS)
def test_masked_seesaw_against_the_reference(h_q, s_q, s_kv, which):
    """At topk 2048, 8 tokens (under one wave: the launch runs them as topk pieces) and 274
    (persistent rounds, then a split last wave); the sink launch runs the rounds with the sink
    kernel, topk_length its walking kernel. impl "seesaw" and the naive kernel into poisoned
    outputs, then sparse_mla_prefill (auto and "seesaw") and flash_mla_sparse_fwd."""
    topk = 2048
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, seed=h_q * 1000 + s_q)
    sink, tlen = features(h_q, s_q, topk, which, seed=h_q + s_q)
    narrow = ["narrow"] if h_q <= 32 else []
    assert api.supported_impls(h_q, 576, topk, sink is not None, tlen is not None) == \
        ["naive", "seesaw"] + narrow
    assert api.select_impl("auto", h_q, 576, topk, sink is not None, tlen is not None) == \
        auto_impl(h_q, which)
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


def fenced_outputs(s_q, h_q):
    """NaN-poisoned outputs as views into buffers with 7.0 fences (4 heads past h_q, a token
    past s_q)."""
    out_b = torch.full((s_q + 1, h_q + 4, 512), 7.0, device="cuda", dtype=torch.bfloat16)
    ml_b = torch.full((s_q + 1, h_q + 4), 7.0, device="cuda")
    lse_b = torch.full((s_q + 1, h_q + 4), 7.0, device="cuda")
    views = (out_b[:s_q, :h_q], ml_b[:s_q, :h_q], lse_b[:s_q, :h_q])
    for v in views:
        v.fill_(float("nan"))
    return (out_b, ml_b, lse_b), views


def fences_intact(bufs, s_q, h_q):
    for b in bufs:
        assert (b[s_q:] == 7).all() and (b[:, h_q:] == 7).all()


@pytest.mark.parametrize("d_qk", [576, 512])
@pytest.mark.parametrize("which", ["plain", "sink", "topk_length", "both"])
@pytest.mark.parametrize("s_q", [20, 300])
@pytest.mark.parametrize("h_q", HEADS)
def test_outputs_past_the_real_heads_are_untouched(h_q, s_q, which, d_qk):
    """Outputs as views into larger buffers (heads past h_q, a token past s_q), written by the
    kernels themselves (their rows are 16-byte aligned): the masked rows' results never land
    there. 20 tokens (all as topk pieces) and 300 (persistent rounds and a split last wave)."""
    topk, scale = 1024, 1 / math.sqrt(d_qk)
    q, kv, idx = make_case(s_q, h_q, topk, 4096, d_qk=d_qk, seed=70 + h_q + s_q)
    sink, tlen = features(h_q, s_q, topk, which, seed=h_q + 3)
    bufs, views = fenced_outputs(s_q, h_q)
    assert api.rows_aligned(*views)
    assert api.launch("seesaw", q, kv, idx, scale, *views, attn_sink=sink,
                      topk_length=tlen) == "seesaw"
    torch.cuda.synchronize()
    compare(views, K.sparse_mla_reference(q, kv, idx, scale, attn_sink=sink, topk_length=tlen),
            f"h_q={h_q} s_q={s_q} {which} d_qk={d_qk} into views")
    fences_intact(bufs, s_q, h_q)


def test_misaligned_outputs_run_over_padded_copies():
    """h_q 5: lse rows of 20 bytes are not 16-byte aligned, so the seesaw runs over aligned
    copies padded to 64 heads; the fenced views still get exactly the real heads."""
    s_q, h_q, topk = 40, 5, 1024
    q, kv, idx = make_case(s_q, h_q, topk, 4096, seed=77)
    sink, tlen = features(h_q, s_q, topk, "both", seed=78)
    bufs, views = fenced_outputs(s_q, h_q)
    assert api.launch("seesaw", q, kv, idx, SCALE, *views, attn_sink=sink,
                      topk_length=tlen) == "seesaw"
    torch.cuda.synchronize()
    compare(views, K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen),
            "h_q=5")
    fences_intact(bufs, s_q, h_q)


@pytest.mark.parametrize("h_q", HEADS)
def test_d512_masked(h_q):
    """d_qk 512 (the seesaw's d512 kernel), its last head block masked."""
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


def test_torch_compile_fullgraph_masked():
    B, s_q, h_q, topk, s_kv = 2, 8, 16, 256, 300
    parts = [make_case(s_q, h_q, topk, s_kv, seed=100 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))

    def f(q, kv, idx):
        out, ml, lse = K.sparse_mla_prefill(q, kv, idx, SCALE, impl="seesaw")
        return out.float() * 2, lse - ml

    got = torch.compile(f, fullgraph=True)(q, kv, idx)
    want = f(q, kv, idx)
    assert torch.allclose(got[0], want[0]) and torch.equal(got[1].isinf(), want[1].isinf())


@pytest.mark.parametrize("h_q,impl", [(32, "auto"), (8, "seesaw"), (16, "seesaw"), (48, "auto")])
def test_cuda_graph_capture_and_replay(h_q, impl):
    """Captured with the kernels (and at h_q 8 the merge's 16-head copies): replays with new
    inputs copied in place give the new results."""
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
