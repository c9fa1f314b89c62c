"""SparseMLA prefill on the GPU: every implementation that supports a case against the fp32 gather
reference (fresh randn/10 inputs, NaN-poisoned outputs), invalid indices of every kind, empty rows,
duplicates, attn_sink, topk_length, the batched layout, torch.compile(fullgraph=True) and CUDA
graph capture. A representative grid, not the full product: the whole file runs in about a minute
on an H200, kernel compilation included.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_mla.py
"""

from __future__ import annotations

import math

import pytest
import torch

try:
    import tle_kernels as K
    from tle_kernels import api
except ImportError:  # repository on the path, package not installed
    import tle_kernels as K
    from tle_kernels import api

pytestmark = pytest.mark.gpu

OUT_REL, OUT_ABS, LSE_ABS = 3e-3, 1e-2, 1e-4
BAD = (-1, -2**31, None, 2**31 - 1)  # None = s_kv


def make_case(s_q, h_q, topk, s_kv, d_qk=576, seed=0, invalid=True, dup=True, empty_rows=2):
    g = torch.Generator(device="cuda").manual_seed(seed)
    q = (torch.randn(s_q, h_q, d_qk, device="cuda", generator=g) / 10).to(torch.bfloat16)
    kv = (torch.randn(s_kv, 1, d_qk, device="cuda", generator=g) / 10).to(torch.bfloat16)
    idx = torch.randint(0, s_kv, (s_q, 1, topk), device="cuda", generator=g, dtype=torch.int32)
    if invalid:  # sprinkle every kind of invalid value over ~1/8 of the slots
        pick = torch.rand(s_q, 1, topk, device="cuda", generator=g) < 0.125
        kind = torch.randint(0, len(BAD), (s_q, 1, topk), device="cuda", generator=g)
        for i, v in enumerate(BAD):
            idx[pick & (kind == i)] = s_kv if v is None else v
        for r in range(min(empty_rows, s_q)):  # rows with no valid index at all
            row = (r * 7) % s_q
            idx[row, 0] = torch.tensor([BAD[j % 4] if BAD[j % 4] is not None else s_kv
                                        for j in range(topk)], dtype=torch.int32)
    if dup and s_q > 3 and topk > 4:  # duplicates: repeat a slot's index in other slots
        idx[3, 0, 1:4] = idx[3, 0, 0]
        idx[s_q - 1, 0, topk // 2:] = idx[s_q - 1, 0, :topk - topk // 2]
    return q, kv, idx


def poisoned(q):
    out, ml, lse = api.empty_outputs(q)
    return out.fill_(float("nan")), ml.fill_(float("nan")), lse.fill_(float("nan"))


def compare(got, want, what=""):
    out, ml, lse = got
    r_out, r_ml, r_lse = want
    assert not torch.isnan(out).any(), f"{what}: NaN in out (unwritten?)"
    assert not torch.isnan(ml).any() and not torch.isnan(lse).any(), f"{what}: NaN in lse/max_logits"
    d = out.float() - r_out
    rel = (d.norm() / r_out.norm().clamp_min(1e-30)).item()
    mx = d.abs().max().item()
    assert rel <= OUT_REL, f"{what}: out rel Frobenius {rel:.3e}"
    assert mx <= OUT_ABS, f"{what}: out max abs {mx:.3e}"
    for name, a, b in (("lse", lse, r_lse), ("max_logits", ml, r_ml)):
        fin = torch.isfinite(b)
        assert torch.equal(a[~fin], b[~fin]), f"{what}: {name} infinities differ"
        if fin.any():
            e = (a[fin] - b[fin]).abs().max().item()
            assert e <= LSE_ABS, f"{what}: {name} abs {e:.3e}"


def run_all(q, kv, idx, sm_scale, sink=None, tlen=None, expect=None):
    want = K.sparse_mla_reference(q, kv, idx, sm_scale, attn_sink=sink, topk_length=tlen)
    impls = api.supported_impls(q.shape[1], q.shape[2], idx.shape[-1], sink is not None,
                                tlen is not None)
    if expect is not None:
        assert impls == expect
    for impl in impls:
        bufs = poisoned(q)
        ran = api.launch(impl, q, kv, idx, sm_scale, *bufs, attn_sink=sink, topk_length=tlen)
        assert ran == impl
        torch.cuda.synchronize()
        compare(bufs, want, f"{impl} h_q={q.shape[1]} topk={idx.shape[-1]} s_kv={kv.shape[0]}")
    got = K.sparse_mla_prefill(q, kv, idx, sm_scale, attn_sink=sink, topk_length=tlen)
    compare(got, want, "api auto")
    return impls


SCALE = 1 / math.sqrt(576)


@pytest.mark.parametrize("s_q,h_q,topk,s_kv,d_qk,expect", [
    (48, 128, 2048, 8192, 576, ["naive", "pipe", "seesaw"]),
    (16, 128, 2048, 131072, 576, ["naive", "pipe", "seesaw"]),
    (32, 64, 576, 4096, 576, ["naive", "pipe", "seesaw"]),   # seesaw: the last pair half masked
    (32, 64, 64, 64, 576, ["naive", "pipe", "seesaw"]),
    (32, 16, 64, 64, 576, ["naive", "seesaw", "narrow"]),
    (24, 32, 2048, 32768, 576, ["naive", "seesaw", "narrow"]),  # seesaw: q padded to 64 heads
    (24, 16, 576, 1000, 512, ["naive", "seesaw", "narrow"]),  # narrow: its d512 kernels
    (16, 128, 576, 2048, 512, ["naive", "seesaw"]),
    (16, 128, 100, 2048, 576, ["naive"]),
    (16, 48, 128, 300, 576, ["naive", "seesaw"]),
])
def test_against_reference(s_q, h_q, topk, s_kv, d_qk, expect):
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, d_qk, seed=s_q + h_q + topk)
    run_all(q, kv, idx, SCALE, expect=expect)


def test_anchor_inputs_all_impls():
    """The benchmark's input generator (causal window, invalid slots = s_kv) at a small shape."""
    q, kv, idx = K.make_inputs(64, 2304, 128, 2048, seed=1)
    run_all(q, kv, idx, SCALE, expect=["naive", "pipe", "seesaw"])


def test_row_max_moving_mid_row():
    """Scores spanning ~40 log2 units, each row's indices in increasing score order (odd rows with
    each K-tile pair's higher tile first): the seesaw's lazy reference max moves many times per
    row, so its per-warp rescale skips (tle.gpu.scale_rows) must rescale exactly the warps whose
    rows moved. A skipped rescale is off by a factor of at least 2^8."""
    s_q, h_q, s_kv, topk = 64, 128, 4096, 2048
    g = torch.Generator(device="cuda").manual_seed(5)
    direction = torch.randn(s_q, 1, 576, device="cuda", generator=g)
    q = (direction * 40 + torch.randn(s_q, h_q, 576, device="cuda", generator=g) / 10).bfloat16()
    kv = (torch.randn(s_kv, 1, 576, device="cuda", generator=g) / 10).bfloat16()
    score = (q.float().mean(1) @ kv[:, 0].float().T) * SCALE * 1.4426950408889634
    idx = torch.argsort(torch.rand(s_q, s_kv, device="cuda", generator=g), 1)[:, :topk]
    for s in range(s_q):
        idx[s] = idx[s][score[s, idx[s]].argsort()]
        if s % 2:
            idx[s] = idx[s].view(topk // 128, 2, 64).flip(1).reshape(topk)
    idx = idx.to(torch.int32).view(s_q, 1, topk).contiguous()
    idx[3, 0, :300] = -1
    first = score.gather(1, idx[:, 0, 300:428].long()).amax(1)
    assert (score.gather(1, idx[:, 0].long().clamp(min=0)).amax(1) - first).min() > 16
    run_all(q, kv, idx, SCALE, expect=["naive", "pipe", "seesaw"])


@pytest.mark.parametrize("h_q,topk,d_qk", [(128, 2048, 576), (16, 576, 512)])
def test_attn_sink_and_topk_length(h_q, topk, d_qk):
    s_q = 32
    q, kv, idx = make_case(s_q, h_q, topk, 5000, d_qk, seed=7)
    sink = torch.randn(h_q, device="cuda") * 2
    sink[0] = float("-inf")
    tlen = torch.randint(0, topk + 1, (s_q,), device="cuda", dtype=torch.int32)
    tlen[:4] = torch.tensor([0, 1, 63, topk + 100], dtype=torch.int32)
    tlen[4] = -5
    # topk 576 too: the seesaw's last pair half masked; at h_q 16 the narrow kernel (d512)
    expect = ["naive", "seesaw"] + (["narrow"] if h_q <= 32 else [])
    assert run_all(q, kv, idx, SCALE, sink=sink) == expect
    assert run_all(q, kv, idx, SCALE, tlen=tlen) == expect
    assert run_all(q, kv, idx, SCALE, sink=sink, tlen=tlen) == expect


def test_strided_inputs():
    """Only the last dim needs to be contiguous: q, kv and indices as views with padded rows."""
    q0, kv0, idx0 = make_case(16, 128, 2048, 700, seed=3)
    qp = torch.zeros(16, 128 + 8, 576 + 64, device="cuda", dtype=torch.bfloat16)
    qp[:, :128, :576] = q0
    kvp = torch.zeros(700, 1, 640, device="cuda", dtype=torch.bfloat16)
    kvp[:, :, :576] = kv0
    ip = torch.zeros(16, 1, 2048 + 64, device="cuda", dtype=torch.int32)
    ip[..., :2048] = idx0
    q, kv, idx = qp[:, :128, :576], kvp[:, :, :576], ip[..., :2048]
    assert not q.is_contiguous()
    run_all(q, kv, idx, SCALE, expect=["naive", "pipe", "seesaw"])


@pytest.mark.parametrize("impl", ["auto", "naive"])
def test_batched_layout(impl):
    B, s_q, h_q, topk, s_kv = 3, 16, 64, 64, 256
    parts = [make_case(s_q, h_q, topk, s_kv, seed=20 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))
    got = K.sparse_mla_prefill(q, kv, idx, SCALE, impl=impl)
    assert got[0].shape == (B, s_q, h_q, 512) and got[2].shape == (B, s_q, h_q)
    want = K.sparse_mla_reference(q, kv, idx, SCALE)
    compare(got, want, f"batched {impl}")
    tlen = torch.randint(0, topk + 1, (B, s_q), device="cuda", dtype=torch.int32)
    compare(K.sparse_mla_prefill(q, kv, idx, SCALE, topk_length=tlen, impl="naive"),
            K.sparse_mla_reference(q, kv, idx, SCALE, topk_length=tlen), "batched topk_length")


def test_torch_compile_fullgraph():
    B, s_q, h_q, topk, s_kv = 2, 8, 64, 64, 300
    parts = [make_case(s_q, h_q, topk, s_kv, seed=40 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))

    def f(q, kv, idx):
        out, ml, lse = K.sparse_mla_prefill(q, kv, idx, SCALE)
        return out.float() * 2, lse - ml

    got = torch.compile(f, fullgraph=True)(q, kv, idx)
    want = f(q, kv, idx)
    assert torch.allclose(got[0], want[0]) and torch.equal(got[1].isinf(), want[1].isinf())


@pytest.mark.parametrize("impl", ["auto", "naive"])
def test_cuda_graph_capture_and_replay(impl):
    q, kv, idx = make_case(32, 128, 2048, 4096, seed=50)
    sink = None if impl == "auto" else torch.randn(128, device="cuda")
    K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, impl=impl)  # compile outside capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, impl=impl)
    for seed in (51, 52):  # new inputs in place, replay
        q2, kv2, idx2 = make_case(32, 128, 2048, 4096, seed=seed)
        q.copy_(q2), kv.copy_(kv2), idx.copy_(idx2)
        graph.replay()
        torch.cuda.synchronize()
        compare(outs, K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink), f"graph {impl}")


@pytest.mark.parametrize("impl", ["seesaw", "pipe"])
def test_last_wave_split_into_topk_pieces(impl, monkeypatch):
    """s_q = SMs/2 + 4 at h_q = 128: one full wave and 8 items, which run as 16 topk pieces each
    (tle_kernels/tail_split.py) and are merged. Tail tokens include a row with no valid index and a
    row whose later pieces are all invalid; then the same call captured in a CUDA graph. The pipe
    kernel does not split by default (api.SPLITS_TAIL); here it is made to."""
    monkeypatch.setattr(api, "SPLITS_TAIL", ("seesaw", "pipe"))
    import importlib

    plan_tail_split = importlib.import_module(K.__name__ + ".tail_split").plan_tail_split
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s_q = sms // 2 + 4
    split = plan_tail_split(s_q, 2, 2048, sms, api.TOPK_STEP[impl])
    assert split is not None and split.chunks >= 2 and split.main_tokens < s_q - 2
    q, kv, idx = make_case(s_q, 128, 2048, 8192, seed=60)
    idx[s_q - 2, 0] = -1
    idx[s_q - 1, 0, 300:] = 8192
    want = K.sparse_mla_reference(q, kv, idx, SCALE)
    bufs = poisoned(q)
    api.launch(impl, q, kv, idx, SCALE, *bufs)
    torch.cuda.synchronize()
    compare(bufs, want, f"{impl} with its last wave split")
    whole = poisoned(q)
    api.launch(impl, q, kv, idx, SCALE, *whole, tail_split=False)
    torch.cuda.synchronize()
    compare(whole, want, f"{impl} unsplit")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = K.sparse_mla_prefill(q, kv, idx, SCALE, impl=impl)
    q.copy_(make_case(s_q, 128, 2048, 8192, seed=61)[0])
    graph.replay()
    torch.cuda.synchronize()
    compare(outs, K.sparse_mla_reference(q, kv, idx, SCALE), f"graph {impl} split")
