"""The seesaw SparseMLA prefill with attn_sink and topk_length on the GPU, against the fp32 reference
(tle_kernels/sparse_mla_seesaw_sink.py, sparse_mla_seesaw_topk_length.py, launched by
sparse_mla_seesaw_sink_topk_launch.py): the headline shape family (H = 128, topk = 2048, the
benchmark's inputs) with a sink, per-row topk_length and both; the topk_length kernel's walk over
rows of mixed lengths (0, 1, 63, 64, 127, 128, 129, topk, with slots past a row's length naming
NaN kv rows) on more items than SMs, fewer, 7 programs walking ~170 items each, and one program
per item; the last wave split into topk pieces with their own lengths, with and without a sink;
a sink with the last wave split into pieces; topk_length = topk everywhere against the
plain seesaw; the batched layout; CUDA graph capture with the lengths changed between replays.
Tolerances and NaN-poisoned outputs as tests/gpu/test_sparse_mla.py.

    python3 -m pytest -q -m gpu tests/gpu/test_seesaw_sink_topk.py
"""

from __future__ import annotations

import math

import pytest
import torch

import tle_kernels as K
from tle_kernels import api
from tle_kernels.reference import make_inputs

from .test_sparse_mla import compare, make_case, poisoned

pytestmark = pytest.mark.gpu

SCALE = 1 / math.sqrt(576)
EDGE_LENGTHS = [0, 1, 63, 64, 65, 127, 128, 129, 2047, 2048, 5000, -3]


def hostile_sink(h_q, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    sink = torch.randn(h_q, device="cuda", generator=g) * 2
    sink[:6] = torch.tensor([float("-inf"), float("inf"), 60.0, -60.0, 1e4, 0.0], device="cuda")
    return sink


def lengths(s_q, topk, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    n = torch.randint(0, topk + 1, (s_q,), device="cuda", generator=g, dtype=torch.int32)
    n[:len(EDGE_LENGTHS)] = torch.tensor(EDGE_LENGTHS, device="cuda", dtype=torch.int32)
    return n


def seesaw(q, kv, idx, sink=None, tlen=None, **kw):
    bufs = poisoned(q)
    assert api.launch("seesaw", q, kv, idx, SCALE, *bufs, attn_sink=sink, topk_length=tlen,
                      **kw) == "seesaw"
    torch.cuda.synchronize()
    return bufs


@pytest.mark.parametrize("case", ["sink", "topk_length", "both"])
@pytest.mark.parametrize("s_q,s_kv", [(4096, 8192), (1024, 131072)])
def test_headline_family_against_the_reference(s_q, s_kv, case):
    q, kv, idx = make_inputs(s_q, s_kv, 128, 2048, seed=s_q + s_kv)
    sink = hostile_sink(128, seed=1) if case in ("sink", "both") else None
    tlen = lengths(s_q, 2048, seed=2) if case in ("topk_length", "both") else None
    assert api.select_impl("auto", 128, 576, 2048, sink is not None, tlen is not None) == "seesaw"
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    got = seesaw(q, kv, idx, sink, tlen)
    compare(got, want, f"seesaw {case} s_q={s_q} s_kv={s_kv}")
    compare(K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen), want,
            f"auto {case}")
    if tlen is not None:  # rows without a valid slot: exactly out 0, lse +inf, max_logits -inf
        out, ml, lse = got
        empty = tlen <= 0
        assert (out[empty] == 0).all() and torch.isposinf(lse[empty]).all()
        assert torch.isneginf(ml[empty]).all()


WALK_LENGTHS = [0, 1, 63, 64, 127, 128, 129, 2048]
# how the topk_length kernel is launched: (s_q at H = 128, SMs the launch sees (None: the
# device's), persistent)
WALKS = {"more_items_than_sms": (600, None, True), "fewer_items_than_sms": (24, None, True),
         "7_programs": (600, 7, True), "one_program_per_item": (600, None, False)}


def walk_lengths(s_q, topk):
    """Row lengths cycling through WALK_LENGTHS (topk for 2048) in an order that gives
    neighbouring items different lengths."""
    return [min(WALK_LENGTHS[(5 * s) % len(WALK_LENGTHS)], topk) for s in range(s_q)]


def walk_case(s_q, topk, seed, lengths=None):
    """Inputs with row lengths ``lengths`` (default ``walk_lengths``) whose slots at or past a
    row's length name a NaN kv row: a slot the kernel reads or uses past the length makes its
    row NaN."""
    q, kv, idx = make_case(s_q, 128, topk, 8192, seed=seed)
    nan_row = kv.shape[0]
    idx[idx == nan_row] = nan_row + 1  # the invalid index s_kv stays s_kv of the longer kv
    kv = torch.cat([kv, torch.full_like(kv[:1], float("nan"))])
    lengths = walk_lengths(s_q, topk) if lengths is None else lengths
    tlen = torch.tensor(lengths, device="cuda", dtype=torch.int32)
    past = torch.arange(topk, device="cuda")[None, :] >= tlen[:, None]
    idx[:, 0][past] = nan_row
    return q, kv, idx, tlen


@pytest.mark.parametrize("walk", list(WALKS))
@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_topk_length_walk_over_rows_of_mixed_lengths(walk, with_sink, monkeypatch):
    s_q, sms, persistent = WALKS[walk]
    if sms is not None:
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    q, kv, idx, tlen = walk_case(s_q, 2048, seed=110 + s_q)
    sink = hostile_sink(128, seed=7) if with_sink else None
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    got = seesaw(q, kv, idx, sink, tlen, persistent=persistent)
    compare(got, want, f"{walk}, sink={with_sink}")
    out, ml, lse = got
    empty = tlen <= 0
    assert (out[empty] == 0).all() and torch.isposinf(lse[empty]).all()
    assert torch.isneginf(ml[empty]).all()


@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_topk_length_with_the_last_wave_split(with_sink):
    """s_q = SMs/2 + 4 at H = 128: the persistent topk_length kernel runs the full wave, the
    tail tokens run as topk pieces of the same kernel with their own lengths, merged, then
    scaled by the sink once; against the reference and the unsplit launch."""
    from tle_kernels.tail_split import plan_tail_split

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s_q = sms // 2 + 4
    assert plan_tail_split(s_q, 2, 2048, sms, api.TOPK_STEP["seesaw"]) is not None
    # the tail tokens: an empty row, one ending inside its 6th piece, a full one, 129 slots
    lengths = walk_lengths(s_q, 2048)[:-4] + [0, 700, 2048, 129]
    q, kv, idx, tlen = walk_case(s_q, 2048, seed=72, lengths=lengths)
    sink = hostile_sink(128, seed=8) if with_sink else None
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    compare(seesaw(q, kv, idx, sink, tlen), want, "topk_length, split")
    compare(seesaw(q, kv, idx, sink, tlen, tail_split=False), want, "topk_length, unsplit")


def test_sink_with_the_last_wave_split():
    """s_q = SMs/2 + 4 at H = 128: the persistent sink kernel runs the full wave, the tail tokens
    run as plain-seesaw topk pieces, merged, then scaled by the sink once."""
    from tle_kernels.tail_split import plan_tail_split

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s_q = sms // 2 + 4
    assert plan_tail_split(s_q, 2, 2048, sms, api.TOPK_STEP["seesaw"]) is not None
    q, kv, idx = make_case(s_q, 128, 2048, 8192, seed=70)
    idx[s_q - 2, 0] = -1                      # a tail row with no valid index
    sink = hostile_sink(128, seed=3)
    sink[6:] += 2.0                           # a large share of the denominator
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink)
    compare(seesaw(q, kv, idx, sink), want, "sink, split")
    compare(seesaw(q, kv, idx, sink, tail_split=False), want, "sink, unsplit")
    compare(seesaw(q, kv, idx, sink, persistent=False), want, "sink, one program per item")


def test_full_topk_length_is_the_plain_seesaw():
    """topk_length = topk everywhere: the topk_length kernel computes what the plain seesaw
    does."""
    q, kv, idx = make_case(64, 128, 2048, 8192, seed=71)
    tlen = torch.full((64,), 2048, device="cuda", dtype=torch.int32)
    plain = poisoned(q)
    assert api.launch("seesaw", q, kv, idx, SCALE, *plain, tail_split=False) == "seesaw"
    got = seesaw(q, kv, idx, None, tlen)
    compare(got, tuple(x.float() for x in plain), "topk_length = topk vs the plain seesaw")


def test_batched_layout_with_topk_length_and_sink():
    B, s_q, h_q, topk, s_kv = 2, 64, 128, 512, 1024
    parts = [make_case(s_q, h_q, topk, s_kv, seed=80 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))
    tlen = torch.stack([lengths(s_q, topk, seed=90 + b) for b in range(B)])
    sink = hostile_sink(h_q, seed=4)
    got = K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    compare(got, K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen),
            "batched, auto")


@pytest.mark.parametrize("with_lengths", [False, True], ids=["sink", "sink+topk_length"])
def test_cuda_graph_capture_and_replay(with_lengths):
    """Captured once, replayed with new q and (read on the device) new lengths."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s_q = sms // 2 + 4  # the sink-only call splits its last wave inside the graph
    q, kv, idx = make_case(s_q, 128, 2048, 4096, seed=100)
    sink = hostile_sink(128, seed=5)
    tlen = lengths(s_q, 2048, seed=6) if with_lengths else None
    K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)  # compile first
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    for seed in (101, 102):
        q.copy_(make_case(s_q, 128, 2048, 4096, seed=seed)[0])
        if tlen is not None:
            tlen.copy_(lengths(s_q, 2048, seed=seed))
        graph.replay()
        torch.cuda.synchronize()
        compare(outs, K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen),
                f"graph, replay {seed}")
