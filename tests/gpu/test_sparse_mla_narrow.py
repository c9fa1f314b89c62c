"""The narrow-head SparseMLA prefill (tle_kernels/sparse_mla_narrow.py: h_q <= 32, the heads as the
wgmma's N) on the GPU against the fp32 reference, with the tolerances and NaN-poisoned outputs of
tests/gpu/test_sparse_mla.py: every head count from 1 to 32 that serving uses and some that it
does not, hostile indices (every invalid kind, rows with none valid, duplicates), the launch over
aligned copies (q and the outputs off a 16-byte boundary), "auto" taking it, attn_sink, outputs
inside fenced buffers (nothing written past them), the batched layout, CUDA graph capture, and
d_qk = 512 (the kernels without the RoPE tail) over views of rows with NaN tails.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_mla_narrow.py
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


@pytest.mark.parametrize("s_q,s_kv,topk", [(37, 8192, 2048), (300, 32768, 2048), (5, 700, 64),
                                           (64, 4096, 576)])
@pytest.mark.parametrize("h_q", [1, 3, 8, 16, 17, 24, 32])
def test_against_the_reference(h_q, s_q, s_kv, topk):
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, seed=h_q * 1000 + s_q)
    want = K.sparse_mla_reference(q, kv, idx, SCALE)
    got = poisoned(q)
    assert api.launch("narrow", q, kv, idx, SCALE, *got) == "narrow"
    torch.cuda.synchronize()
    compare(got, want, f"narrow h_q={h_q} s_q={s_q}")
    out, ml, lse = K.sparse_mla_prefill(q, kv, idx, SCALE)  # "auto" takes it
    compare((out, ml, lse), want, f"auto h_q={h_q}")
    assert api.select_impl("auto", h_q, 576, topk) == "narrow"


def test_misaligned_q_and_outputs_in_fenced_buffers():
    s_q, h_q, topk = 40, 13, 2048
    q0, kv, idx = make_case(s_q, h_q, topk, 8192, seed=7)
    qbuf = torch.zeros(q0.numel() + 1, device="cuda", dtype=torch.bfloat16)
    q = qbuf[1:].view(s_q, h_q, 576)
    q.copy_(q0)
    obuf = torch.full((s_q * h_q * 512 + 2,), 7.0, device="cuda", dtype=torch.bfloat16)
    lbuf = torch.full((2, s_q * h_q + 2), 7.0, device="cuda")
    out = obuf[1:-1].view(s_q, h_q, 512).fill_(float("nan"))
    ml, lse = (lbuf[i, 1:-1].view(s_q, h_q).fill_(float("nan")) for i in (0, 1))
    assert not api.rows_aligned(q) and not api.rows_aligned(out)
    assert api.launch("auto", q, kv, idx, SCALE, out, ml, lse) == "narrow"
    torch.cuda.synchronize()
    compare((out, ml, lse), K.sparse_mla_reference(q0, kv, idx, SCALE), "misaligned")
    assert obuf[0] == 7 and obuf[-1] == 7
    assert (lbuf[:, 0] == 7).all() and (lbuf[:, -1] == 7).all()


def test_batched_layout():
    B, s_q, h_q, s_kv, topk = 3, 20, 16, 2048, 512
    parts = [make_case(s_q, h_q, topk, s_kv, seed=90 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))
    got = K.sparse_mla_prefill(q, kv, idx, SCALE, impl="narrow")
    for b in range(B):
        compare(tuple(x[b] for x in got), K.sparse_mla_reference(*parts[b], SCALE), f"batch {b}")


def test_cuda_graph_capture_and_replay():
    q, kv, idx = make_case(48, 32, 2048, 4096, seed=60)
    K.sparse_mla_prefill(q, kv, idx, SCALE)  # compile outside capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = K.sparse_mla_prefill(q, kv, idx, SCALE)
    for seed in (61, 62):  # new inputs in place, replay
        q2, kv2, idx2 = make_case(48, 32, 2048, 4096, seed=seed)
        q.copy_(q2), kv.copy_(kv2), idx.copy_(idx2)
        graph.replay()
        torch.cuda.synchronize()
        compare(outs, K.sparse_mla_reference(q, kv, idx, SCALE), f"graph replay {seed}")


@pytest.mark.parametrize("h_q", [8, 16, 32])
def test_attn_sink(h_q):
    """exp(sink[h]) in each head's denominator of out (lse that of the scores): -inf, +30 and
    random sinks, by name and through "auto"."""
    q, kv, idx = make_case(64, h_q, 2048, 8192, seed=300 + h_q)
    sink = torch.randn(h_q, device="cuda") * 2
    sink[0], sink[1] = float("-inf"), 30.0
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink)
    got = poisoned(q)
    assert api.launch("narrow", q, kv, idx, SCALE, *got, attn_sink=sink) == "narrow"
    torch.cuda.synchronize()
    compare(got, want, f"narrow sink h_q={h_q}")
    compare(K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink), want, f"auto sink h_q={h_q}")
    assert api.select_impl("auto", h_q, 576, 2048, True) == "narrow"


@pytest.mark.parametrize("h_q,topk", [(8, 2048), (16, 192), (32, 2048), (24, 64)])
def test_topk_length(h_q, topk):
    """Each row reads only its first clamp(topk_length, 0, topk) slots (0, 1, 63, 64, 65, past
    topk, negative, random); the slots past a row's length name kv rows full of NaN, so a kernel
    that read one would return NaN. By name and through "auto", with attn_sink as well."""
    s_q, s_kv = 96, 8192
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, seed=500 + h_q + topk)
    kv = torch.cat([kv, torch.full((64, 1, 576), float("nan"), device="cuda",
                                   dtype=torch.bfloat16)])
    idx[idx == s_kv] = s_kv + 64  # the invalid index s_kv would name a NaN row now
    g = torch.Generator(device="cuda").manual_seed(h_q)
    tlen = torch.randint(0, topk + 1, (s_q,), device="cuda", generator=g, dtype=torch.int32)
    tlen[:8] = torch.tensor([0, 1, 63, 64, 65, topk + 100, -5, topk], dtype=torch.int32)
    for r in range(s_q):
        n = max(0, min(int(tlen[r]), topk))
        idx[r, 0, n:] = torch.randint(s_kv, s_kv + 64, (topk - n,), device="cuda",
                                      generator=g, dtype=torch.int32)
    sink = torch.randn(h_q, device="cuda") * 2
    for sk in (None, sink):
        want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sk, topk_length=tlen)
        got = poisoned(q)
        assert api.launch("narrow", q, kv, idx, SCALE, *got, attn_sink=sk,
                          topk_length=tlen) == "narrow"
        torch.cuda.synchronize()
        compare(got, want, f"narrow topk_length h_q={h_q} sink={sk is not None}")
        compare(K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sk, topk_length=tlen), want,
                f"auto topk_length h_q={h_q}")
    assert api.select_impl("auto", h_q, 576, topk, False, True) == "narrow"


@pytest.mark.parametrize("h_q,topk,features", [(1, 2048, ""), (8, 2048, "sink"),
                                               (16, 192, "length"), (24, 576, "sink+length"),
                                               (32, 2048, "")])
def test_d512_views_of_rows_with_nan_tails(h_q, topk, features):
    """d_qk = 512 (the d512 kernels): q and kv are the first 512 columns of 576-wide rows whose
    other 64 columns are NaN, so a kernel that read a RoPE tail would return NaN; hostile
    indices, attn_sink and topk_length (0, 1, 65, past topk, negative, random), by name and
    through "auto"."""
    s_q, s_kv = 80, 4096
    q6, kv6, idx = make_case(s_q, h_q, topk, s_kv, seed=700 + h_q + topk)
    q6[..., 512:] = float("nan")
    kv6[..., 512:] = float("nan")
    q, kv = q6[..., :512], kv6[..., :512]
    scale = 512 ** -0.5
    sink = tlen = None
    if "sink" in features:
        sink = torch.randn(h_q, device="cuda") * 2
        sink[0] = float("-inf")
    if "length" in features:
        g = torch.Generator(device="cuda").manual_seed(h_q)
        tlen = torch.randint(0, topk + 1, (s_q,), device="cuda", generator=g, dtype=torch.int32)
        tlen[:5] = torch.tensor([0, 1, 65, topk + 7, -3], dtype=torch.int32)
    want = K.sparse_mla_reference(q, kv, idx, scale, attn_sink=sink, topk_length=tlen)
    got = poisoned(q)
    assert api.launch("narrow", q, kv, idx, scale, *got, attn_sink=sink,
                      topk_length=tlen) == "narrow"
    torch.cuda.synchronize()
    compare(got, want, f"narrow d512 h_q={h_q} {features}")
    compare(K.sparse_mla_prefill(q, kv, idx, scale, attn_sink=sink, topk_length=tlen), want,
            f"auto d512 h_q={h_q} {features}")
    assert api.select_impl("auto", h_q, 512, topk, sink is not None, tlen is not None) == "narrow"
