"""The SparseMLA prefill at d_qk = 512 (no RoPE tail) on the GPU: the seesaw's d512 kernel
(tle_kernels/sparse_mla_seesaw_d512.py) and the naive kernel against the fp32 reference, with
the tolerances and NaN-poisoned outputs of tests/gpu/test_sparse_mla.py: h_q 64 and 128, topk
128 to 2048, invalid indices of every kind, wholly and mostly invalid rows, duplicates, the
benchmark's inputs, scores that move the lazy reference max, the per-CTA launch, q and kv as
512-wide views of 576-wide rows, the batched layout, the last wave split into topk pieces, a CUDA
graph replay; and that ``impl="auto"`` runs the seesaw for these calls (with attn_sink and
topk_length too), the naive kernel for the ones it does not take.

    python3 -m pytest -q -m gpu tests/gpu/test_sparse_mla_d512.py
"""

from __future__ import annotations

import importlib
import math

import pytest
import torch

import tle_kernels as K
from tle_kernels import api
from tle_kernels.reference import make_inputs

from .test_sparse_mla import compare, make_case, poisoned

pytestmark = pytest.mark.gpu

D = 512
SCALE = 1 / math.sqrt(D)


def run_both(q, kv, idx, what, **launch_kw):
    """The seesaw and the naive kernel on the same call against the reference; auto picks the
    seesaw."""
    h_q, topk = q.shape[1], idx.shape[-1]
    assert api.supported_impls(h_q, D, topk) == ["naive", "seesaw"]
    assert api.select_impl("auto", h_q, D, topk) == "seesaw"
    want = K.sparse_mla_reference(q, kv, idx, SCALE)
    for impl in ("seesaw", "naive"):
        bufs = poisoned(q)
        assert api.launch(impl, q, kv, idx, SCALE, *bufs, **launch_kw) == impl
        torch.cuda.synchronize()
        compare(bufs, want, f"{what}: {impl}")
    return want


@pytest.mark.parametrize("s_q,h_q,topk,s_kv", [
    (48, 128, 2048, 8192),
    (16, 128, 2048, 131072),
    (40, 64, 2048, 4096),
    (32, 64, 128, 300),
    (24, 128, 512, 1000),
    (33, 64, 640, 2048),
])
def test_d512_against_reference_with_hostile_indices(s_q, h_q, topk, s_kv):
    """~1/8 of the slots -1, -2^31, 2^31 - 1 or s_kv; two rows with no valid index; duplicated
    indices; then one row valid only in its first 64 slots."""
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, d_qk=D, seed=s_q + h_q + topk)
    idx[s_q - 2, 0, 64:] = -1
    got = poisoned(q)
    api.launch("auto", q, kv, idx, SCALE, *got)
    torch.cuda.synchronize()
    want = run_both(q, kv, idx, f"h_q={h_q} topk={topk} s_kv={s_kv}")
    compare(got, want, "auto")
    for row in (0, 7 % s_q):  # make_case's rows with no valid index
        assert (got[0][row] == 0).all() and (got[2][row] == float("inf")).all()
        assert (got[1][row] == float("-inf")).all()


def test_d512_benchmark_inputs():
    """The benchmark's generator (causal window, invalid slots = s_kv) at d_qk = 512."""
    q, kv, idx = make_inputs(64, 2304, 128, 2048, d_qk=D, seed=1)
    run_both(q, kv, idx, "benchmark inputs")


def test_d512_row_max_moving_mid_row():
    """Scores spanning ~40 log2 units, each row's indices in increasing score order (odd rows
    with each K-tile pair's higher tile first): the lazy reference max moves many times per row."""
    s_q, h_q, s_kv, topk = 64, 128, 4096, 2048
    g = torch.Generator(device="cuda").manual_seed(5)
    direction = torch.randn(s_q, 1, D, device="cuda", generator=g)
    q = (direction * 40 + torch.randn(s_q, h_q, D, device="cuda", generator=g) / 10).bfloat16()
    kv = (torch.randn(s_kv, 1, D, device="cuda", generator=g) / 10).bfloat16()
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
    run_both(q, kv, idx, "moving max")


def test_d512_one_program_per_item():
    q, kv, idx = make_case(40, 128, 1024, 3000, d_qk=D, seed=7)
    want = K.sparse_mla_reference(q, kv, idx, SCALE)
    bufs = poisoned(q)
    api.launch("seesaw", q, kv, idx, SCALE, *bufs, persistent=False)
    torch.cuda.synchronize()
    compare(bufs, want, "per-CTA")


def test_d512_views_of_576_wide_rows():
    """q and kv as the first 512 dims of 576-wide rows (row strides 1,152 B), indices padded: only
    the last dims are contiguous."""
    q0, kv0, idx0 = make_case(16, 128, 2048, 700, d_qk=576, seed=3)
    ip = torch.zeros(16, 1, 2048 + 64, device="cuda", dtype=torch.int32)
    ip[..., :2048] = idx0
    q, kv, idx = q0[..., :D], kv0[..., :D], ip[..., :2048]
    assert not q.is_contiguous() and api.rows_aligned(q, kv, idx)
    want = run_both(q, kv, idx, "views")
    compare(K.sparse_mla_prefill(q, kv, idx, SCALE), want, "views, sparse_mla_prefill")


def test_d512_batched_layout():
    B, s_q, h_q, topk, s_kv = 3, 16, 64, 256, 500
    parts = [make_case(s_q, h_q, topk, s_kv, d_qk=D, seed=20 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))
    got = K.sparse_mla_prefill(q, kv, idx, SCALE)
    assert got[0].shape == (B, s_q, h_q, 512) and got[2].shape == (B, s_q, h_q)
    compare(got, K.sparse_mla_reference(q, kv, idx, SCALE), "batched")


@pytest.mark.parametrize("sink,tlen", [(True, False), (False, True), (True, True)])
def test_d512_with_sink_or_topk_length_runs_the_seesaw(sink, tlen):
    """attn_sink / topk_length at d_qk = 512: auto runs the seesaw (its d512 sink and topk_length
    kernels, tests/gpu/test_seesaw_d512_sink_topk.py), and it agrees with the naive kernel and
    the reference."""
    s_q, h_q, topk = 16, 128, 512
    q, kv, idx = make_case(s_q, h_q, topk, 900, d_qk=D, seed=30)
    attn_sink = torch.randn(h_q, device="cuda") if sink else None
    topk_length = (torch.randint(0, topk + 1, (s_q,), device="cuda", dtype=torch.int32)
                   if tlen else None)
    assert api.select_impl("auto", h_q, D, topk, sink, tlen) == "seesaw"
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=attn_sink,
                                  topk_length=topk_length)
    for impl in ("seesaw", "naive"):
        bufs = poisoned(q)
        assert api.launch(impl, q, kv, idx, SCALE, *bufs, attn_sink=attn_sink,
                          topk_length=topk_length) == impl
        torch.cuda.synchronize()
        compare(bufs, want, f"{impl} with sink / topk_length")
    compare(K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=attn_sink, topk_length=topk_length),
            want, "auto with sink / topk_length")


def test_d512_last_wave_split_and_graph_replay():
    """s_q = SMs/2 + 4 at h_q = 128: one full wave and 8 items, which run as topk pieces of the
    d512 kernel and are merged; a tail token with no valid index and one whose later pieces are
    all invalid; the unsplit launch; then the call captured in a CUDA graph and replayed on new
    q."""
    plan_tail_split = importlib.import_module(K.__name__ + ".tail_split").plan_tail_split
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s_q = sms // 2 + 4
    split = plan_tail_split(s_q, 2, 2048, sms, api.TOPK_STEP["seesaw"])
    assert split is not None and split.chunks >= 2 and split.main_tokens < s_q - 2
    q, kv, idx = make_case(s_q, 128, 2048, 8192, d_qk=D, seed=60)
    idx[s_q - 2, 0] = -1
    idx[s_q - 1, 0, 300:] = 8192
    want = K.sparse_mla_reference(q, kv, idx, SCALE)
    bufs = poisoned(q)
    api.launch("seesaw", q, kv, idx, SCALE, *bufs)
    torch.cuda.synchronize()
    compare(bufs, want, "d512 with its last wave split")
    whole = poisoned(q)
    api.launch("seesaw", q, kv, idx, SCALE, *whole, tail_split=False)
    torch.cuda.synchronize()
    compare(whole, want, "d512 unsplit")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = K.sparse_mla_prefill(q, kv, idx, SCALE)
    q.copy_(make_case(s_q, 128, 2048, 8192, d_qk=D, seed=61)[0])
    graph.replay()
    torch.cuda.synchronize()
    compare(outs, K.sparse_mla_reference(q, kv, idx, SCALE), "graph d512 split")
