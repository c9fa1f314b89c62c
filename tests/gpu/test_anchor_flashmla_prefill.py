"""FlashMLA's sm90 sparse prefill through the anchor library (benchmarks/anchor_flashmla_prefill.py)
against the fp32 reference, so that a benchmark's TLE / FlashMLA ratio is known to time FlashMLA
driven correctly: each of its four kernels (d_qk 512 / 576, without / with topk_length), with and
without attn_sink, at h_q 64 and 128, on the inputs of tests/gpu/test_sparse_mla.py (invalid
indices of every kind, rows with no valid index, duplicates) with the same tolerances and
NaN-poisoned outputs; topk_length with empty, one-slot, full and random rows; q and kv as views
with padded strides; the call on a side stream.

The library is built outside the repository (benchmarks/anchor/build_flashmla_prefill_anchor.sh);
the tests skip without it. Where it is: $TLE_FLASHMLA_PREFILL_ANCHOR, else
.anchor/libanchor_flashmla_prefill.so in the repository.

    python3 -m pytest -q -m gpu tests/gpu/test_anchor_flashmla_prefill.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

import tle_kernels as K

from .test_sparse_mla import compare, make_case, poisoned

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
LIB = Path(os.environ.get("TLE_FLASHMLA_PREFILL_ANCHOR",
                          ROOT / ".anchor/libanchor_flashmla_prefill.so"))


@pytest.fixture(scope="module")
def anchor():
    if not LIB.is_file():
        pytest.skip(f"no FlashMLA prefill anchor library at {LIB}")
    from benchmarks.anchor_flashmla_prefill import load_prefill_anchor

    return load_prefill_anchor(LIB)


def lengths(s_q: int, topk: int, seed: int):
    """topk_length: row 0 empty, row 1 one slot, row 2 full, the rest uniform in [0, topk]."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    tl = torch.randint(0, topk + 1, (s_q,), device="cuda", generator=g, dtype=torch.int32)
    tl[:3] = torch.tensor([0, 1, topk], dtype=torch.int32)
    return tl


def sink_values(h_q: int, seed: int):
    """attn_sink: randn, with a -inf head (no effect) and a large one (out near 0)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    sink = torch.randn(h_q, device="cuda", generator=g)
    sink[0], sink[1] = float("-inf"), 6.0
    return sink


def run(anchor, q, kv, idx, sm_scale, what, **extra):
    want = K.sparse_mla_reference(q, kv, idx, sm_scale, **extra)
    bufs = poisoned(q)
    got = anchor(q, kv, idx, sm_scale, outputs=bufs, **extra)
    assert all(g is b for g, b in zip(got, bufs))
    torch.cuda.synchronize()
    compare(got, want, what)
    fresh = anchor(q, kv, idx, sm_scale, **extra)  # outputs allocated by the anchor
    torch.cuda.synchronize()
    compare(fresh, want, f"{what} (fresh outputs)")


@pytest.mark.parametrize("d_qk", [576, 512])
@pytest.mark.parametrize("h_q, topk, s_kv", [(64, 512, 1000), (128, 256, 3000), (128, 1024, 700)])
@pytest.mark.parametrize("sink, with_lengths", [(False, False), (True, False), (False, True),
                                                (True, True)])
def test_anchor_matches_the_reference(anchor, d_qk, h_q, topk, s_kv, sink, with_lengths):
    s_q = 37
    q, kv, idx = make_case(s_q, h_q, topk, s_kv, d_qk, seed=d_qk + h_q + topk)
    extra = {}
    if sink:
        extra["attn_sink"] = sink_values(h_q, seed=h_q)
    if with_lengths:
        extra["topk_length"] = lengths(s_q, topk, seed=topk)
    run(anchor, q, kv, idx, d_qk ** -0.5,
        f"FlashMLA d_qk={d_qk} h_q={h_q} topk={topk} sink={sink} topk_length={with_lengths}",
        **extra)


@pytest.mark.parametrize("d_qk", [576, 512])
def test_anchor_reads_strided_views_and_runs_on_the_current_stream(anchor, d_qk):
    """q and kv as views of wider rows (row strides d_qk + 64), q's heads padded too, indices a
    view of wider rows; launched on a side stream, which the outputs must be ready on."""
    s_q, h_q, topk, s_kv = 29, 64, 384, 2000
    qw, kvw, idxw = make_case(s_q, h_q + 8, topk + 128, s_kv, d_qk + 64, seed=3)
    q, kv, idx = qw[:, 4:h_q + 4, :d_qk], kvw[..., :d_qk], idxw[..., :topk]
    assert q.stride()[:2] == ((h_q + 8) * (d_qk + 64), d_qk + 64) and not idx.is_contiguous()
    extra = dict(attn_sink=sink_values(h_q, seed=1), topk_length=lengths(s_q, topk, seed=2))
    want = K.sparse_mla_reference(q, kv, idx, d_qk ** -0.5, **extra)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        bufs = poisoned(q)
        got = anchor(q, kv, idx, d_qk ** -0.5, outputs=bufs, **extra)
        side.synchronize()
        compare(got, want, f"FlashMLA views d_qk={d_qk} on a side stream")


def test_anchor_agrees_with_the_tle_prefill_on_the_benchmark_inputs(anchor):
    """The benchmark's own inputs (tle_kernels.reference.make_inputs) at the headline head count
    and topk, 256 queries: FlashMLA and tle_kernels.sparse_mla_prefill both within the reference's
    tolerance, with attn_sink and every row's topk_length full (the benchmark's feature cases)."""
    from tle_kernels.reference import make_inputs

    q, kv, idx = make_inputs(256, 8192, 128, 2048, seed=3)
    extra = dict(attn_sink=sink_values(128, seed=5),
                 topk_length=torch.full((256,), 2048, dtype=torch.int32, device="cuda"))
    sm_scale = 576 ** -0.5
    want = K.sparse_mla_reference(q, kv, idx, sm_scale, **extra)
    got = anchor(q, kv, idx, sm_scale, **extra)
    tle = K.sparse_mla_prefill(q, kv, idx, sm_scale, **extra)
    torch.cuda.synchronize()
    compare(got, want, "FlashMLA benchmark inputs")
    compare(tle, want, "TLE benchmark inputs")


def test_a_head_count_flashmla_refuses_raises_before_any_launch(anchor):
    q, kv, idx = make_case(4, 32, 128, 100)
    with pytest.raises(ValueError, match="FlashMLA prefill anchor: q: h_q must be 64 or 128"):
        anchor(q, kv, idx, 0.1)
