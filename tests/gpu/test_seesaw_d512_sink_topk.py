"""The seesaw SparseMLA prefill at d_qk = 512 with attn_sink and topk_length on the GPU, against
the fp32 reference (tle_kernels/sparse_mla_seesaw_d512_sink.py, sparse_mla_seesaw_d512_topk_length.py,
launched by sparse_mla_seesaw_sink_topk_launch.py): ``impl="auto"`` runs the seesaw for these
calls (never the naive kernel); H = 128, topk 2048 with a hostile sink, per-row topk_length and
both; the topk_length walk over rows of mixed lengths (0, 1, 63, 64, 65, 127, 128, 129, topk,
slots past a row's length naming a NaN kv row) on more items than SMs, fewer, 7 programs and one
program per item; the last wave split into topk pieces, with and without a sink; q and kv as
512-wide views of 576-wide rows; the batched layout; a CUDA graph replayed with new lengths.
Tolerances and NaN-poisoned outputs as tests/gpu/test_sparse_mla.py.

    python3 -m pytest -q -m gpu tests/gpu/test_seesaw_d512_sink_topk.py
"""

from __future__ import annotations

import math

import pytest
import torch

import tle_kernels as K
from tle_kernels import api

from .test_seesaw_sink_topk import hostile_sink, lengths
from .test_sparse_mla import compare, make_case, poisoned

pytestmark = pytest.mark.gpu

D = 512
SCALE = 1 / math.sqrt(D)
WALK_LENGTHS = [0, 1, 63, 64, 65, 127, 128, 129, 2048]


def seesaw(q, kv, idx, sink=None, tlen=None, **kw):
    bufs = poisoned(q)
    assert api.launch("seesaw", q, kv, idx, SCALE, *bufs, attn_sink=sink, topk_length=tlen,
                      **kw) == "seesaw"
    torch.cuda.synchronize()
    return bufs


def walk_case(s_q, topk, seed, row_lengths=None, h_q=128):
    """d_qk = 512 inputs with row lengths ``row_lengths`` (default: WALK_LENGTHS cycled so that
    neighbouring items differ); the slots at or past a row's length name a NaN kv row, so a slot
    the kernel reads or uses past the length makes its row NaN."""
    q, kv, idx = make_case(s_q, h_q, topk, 8192, d_qk=D, seed=seed)
    nan_row = kv.shape[0]
    idx[idx == nan_row] = nan_row + 1  # the invalid index s_kv stays s_kv of the longer kv
    kv = torch.cat([kv, torch.full_like(kv[:1], float("nan"))])
    if row_lengths is None:
        row_lengths = [min(WALK_LENGTHS[(5 * s) % len(WALK_LENGTHS)], topk) for s in range(s_q)]
    tlen = torch.tensor(row_lengths, device="cuda", dtype=torch.int32)
    past = torch.arange(topk, device="cuda")[None, :] >= tlen[:, None]
    idx[:, 0][past] = nan_row
    return q, kv, idx, tlen


def check_empty_rows(got, tlen):
    out, ml, lse = got
    empty = tlen <= 0
    assert (out[empty] == 0).all() and torch.isposinf(lse[empty]).all()
    assert torch.isneginf(ml[empty]).all()


@pytest.mark.parametrize("case", ["sink", "topk_length", "both"])
@pytest.mark.parametrize("s_q,s_kv", [(1024, 8192), (256, 131072)])
def test_d512_against_the_reference_and_auto_takes_the_seesaw(s_q, s_kv, case):
    q, kv, idx = make_case(s_q, 128, 2048, s_kv, d_qk=D, seed=s_q + s_kv)
    sink = hostile_sink(128, seed=1) if case in ("sink", "both") else None
    tlen = lengths(s_q, 2048, seed=2) if case in ("topk_length", "both") else None
    assert api.select_impl("auto", 128, D, 2048, sink is not None, tlen is not None) == "seesaw"
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    got = seesaw(q, kv, idx, sink, tlen)
    compare(got, want, f"d512 seesaw {case} s_q={s_q} s_kv={s_kv}")
    compare(K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen), want,
            f"d512 auto {case}")
    if tlen is not None:
        check_empty_rows(got, tlen)


# (s_q at H = 128, SMs the launch sees (None: the device's), persistent)
WALKS = {"more_items_than_sms": (600, None, True), "fewer_items_than_sms": (24, None, True),
         "7_programs": (600, 7, True), "one_program_per_item": (600, None, False)}


@pytest.mark.parametrize("walk", list(WALKS))
@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_d512_topk_length_walk_over_rows_of_mixed_lengths(walk, with_sink, monkeypatch):
    s_q, sms, persistent = WALKS[walk]
    if sms is not None:
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    q, kv, idx, tlen = walk_case(s_q, 2048, seed=210 + s_q)
    sink = hostile_sink(128, seed=7) if with_sink else None
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    got = seesaw(q, kv, idx, sink, tlen, persistent=persistent)
    compare(got, want, f"d512 {walk}, sink={with_sink}")
    check_empty_rows(got, tlen)


@pytest.mark.parametrize("with_sink", [False, True], ids=["topk_length", "topk_length+sink"])
def test_d512_topk_length_with_the_last_wave_split(with_sink):
    """s_q = SMs/2 + 4 at H = 128: the full wave on the persistent d512 topk_length kernel, the
    tail tokens as its topk pieces with their own lengths, merged, the sink applied once."""
    from tle_kernels.tail_split import plan_tail_split

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s_q = sms // 2 + 4
    assert plan_tail_split(s_q, 2, 2048, sms, api.TOPK_STEP["seesaw"]) is not None
    row_lengths = [min(WALK_LENGTHS[(5 * s) % len(WALK_LENGTHS)], 2048)
                   for s in range(s_q - 4)] + [0, 700, 2048, 129]
    q, kv, idx, tlen = walk_case(s_q, 2048, seed=272, row_lengths=row_lengths)
    sink = hostile_sink(128, seed=8) if with_sink else None
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    compare(seesaw(q, kv, idx, sink, tlen), want, "d512 topk_length, split")
    compare(seesaw(q, kv, idx, sink, tlen, tail_split=False), want, "d512 topk_length, unsplit")


def test_d512_sink_with_the_last_wave_split():
    """The full wave on the persistent d512 sink kernel, the tail tokens as d512 plain-seesaw
    pieces, merged, then scaled by the sink once; unsplit and one program per item too."""
    from tle_kernels.tail_split import plan_tail_split

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s_q = sms // 2 + 4
    assert plan_tail_split(s_q, 2, 2048, sms, api.TOPK_STEP["seesaw"]) is not None
    q, kv, idx = make_case(s_q, 128, 2048, 8192, d_qk=D, seed=270)
    idx[s_q - 2, 0] = -1                      # a tail row with no valid index
    sink = hostile_sink(128, seed=3)
    sink[6:] += 2.0                           # a large share of the denominator
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink)
    compare(seesaw(q, kv, idx, sink), want, "d512 sink, split")
    compare(seesaw(q, kv, idx, sink, tail_split=False), want, "d512 sink, unsplit")
    compare(seesaw(q, kv, idx, sink, persistent=False), want, "d512 sink, one program per item")


def test_d512_full_topk_length_is_the_d512_seesaw():
    """topk_length = topk everywhere: the d512 topk_length kernel computes what the d512 kernel
    does."""
    q, kv, idx = make_case(64, 128, 2048, 8192, d_qk=D, seed=271)
    tlen = torch.full((64,), 2048, device="cuda", dtype=torch.int32)
    plain = poisoned(q)
    assert api.launch("seesaw", q, kv, idx, SCALE, *plain, tail_split=False) == "seesaw"
    compare(seesaw(q, kv, idx, None, tlen), tuple(x.float() for x in plain),
            "d512 topk_length = topk vs the d512 seesaw")


def test_d512_views_of_576_wide_rows_with_sink_and_topk_length():
    """q and kv as the first 512 dims of 576-wide rows: only the last dims are contiguous."""
    q0, kv0, idx = make_case(32, 128, 1024, 900, d_qk=576, seed=273)
    q, kv = q0[..., :D], kv0[..., :D]
    assert not q.is_contiguous() and api.rows_aligned(q, kv, idx)
    sink = hostile_sink(128, seed=9)
    tlen = lengths(32, 1024, seed=10)
    want = K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    compare(seesaw(q, kv, idx, sink, tlen), want, "d512 views, both")
    compare(seesaw(q, kv, idx, sink), K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink),
            "d512 views, sink")


def test_d512_batched_layout_with_topk_length_and_sink():
    B, s_q, h_q, topk, s_kv = 2, 64, 128, 512, 1024
    parts = [make_case(s_q, h_q, topk, s_kv, d_qk=D, seed=280 + b) for b in range(B)]
    q, kv, idx = (torch.stack([p[i] for p in parts]) for i in range(3))
    tlen = torch.stack([lengths(s_q, topk, seed=290 + b) for b in range(B)])
    sink = hostile_sink(h_q, seed=4)
    got = K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    compare(got, K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen),
            "d512 batched, auto")


@pytest.mark.parametrize("with_lengths", [False, True], ids=["sink", "sink+topk_length"])
def test_d512_cuda_graph_capture_and_replay(with_lengths):
    """Captured once, replayed with new q and (read on the device) new lengths."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    s_q = sms // 2 + 4  # the last wave is split inside the graph
    q, kv, idx = make_case(s_q, 128, 2048, 4096, d_qk=D, seed=300)
    sink = hostile_sink(128, seed=5)
    tlen = lengths(s_q, 2048, seed=6) if with_lengths else None
    K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)  # compile first
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = K.sparse_mla_prefill(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen)
    for seed in (301, 302):
        q.copy_(make_case(s_q, 128, 2048, 4096, d_qk=D, seed=seed)[0])
        if tlen is not None:
            tlen.copy_(lengths(s_q, 2048, seed=seed))
        graph.replay()
        torch.cuda.synchronize()
        compare(outs, K.sparse_mla_reference(q, kv, idx, SCALE, attn_sink=sink, topk_length=tlen),
                f"d512 graph, replay {seed}")
