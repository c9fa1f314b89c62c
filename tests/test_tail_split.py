"""tle_kernels/tail_split.py on the CPU: which launches get split, that the pieces (token t's topk in
chunks) merged by ``combine`` give exactly the unsplit answer (the fp32 reference as the kernel),
and the Triton merge kernel, run in Triton's interpreter, against the PyTorch merge."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tle_kernels.reference import sparse_mla_reference  # noqa: E402
from tle_kernels.tail_split import (OVERHEAD_TILES, TailSplit, combine_reference,  # noqa: E402
                                plan_tail_split, run_split)

ROOT = Path(__file__).resolve().parent.parent


def test_headline_shape_splits_its_eight_tail_items_into_one_pair_each():
    # SQ=4096, H=128 on 132 SMs: 8,192 items = 62 waves + 8 items (4 tokens x 2 head blocks)
    assert plan_tail_split(4096, 2, 2048, 132, 128) == TailSplit(main_tokens=4092, chunks=16)
    assert plan_tail_split(4096, 2, 2048, 132, 64) == TailSplit(main_tokens=4092, chunks=16)


def test_a_launch_under_one_wave_runs_all_its_tokens_as_pieces():
    # a sparse decode step of 4 query rows x 128 heads: 8 items on 132 SMs, 16 pairs each, becomes
    # 8 x 16 pieces of one pair; 60 rows (120 items) cannot take two pieces each and stays whole
    assert plan_tail_split(4, 2, 2048, 132, 128) == TailSplit(main_tokens=0, chunks=16)
    assert plan_tail_split(1, 1, 2048, 132, 128) == TailSplit(main_tokens=0, chunks=16)
    assert plan_tail_split(60, 2, 2048, 132, 128) is None


@pytest.mark.parametrize("s_q, n_hb, topk, sms, granule, why", [
    (4092, 2, 2048, 132, 128, "whole waves"),
    (60, 2, 2048, 132, 128, "120 items under one wave: no room for two pieces each"),
    (4096, 2, 256, 132, 128, "two pairs: a piece costs more than it saves"),
    (4096 + 60, 2, 2048, 132, 128, "128 tail items: no room for two pieces each"),
    (4096, 2, 2000, 132, 128, "topk not a multiple of the granule"),
])
def test_no_split_when_it_cannot_pay(s_q, n_hb, topk, sms, granule, why):
    assert plan_tail_split(s_q, n_hb, topk, sms, granule) is None, why


@settings(max_examples=300, deadline=None)
@given(s_q=st.integers(1, 20000), n_hb=st.sampled_from([1, 2, 4]), tiles=st.integers(1, 64),
       sms=st.integers(1, 200), granule=st.sampled_from([64, 128]))
def test_a_split_fills_at_most_every_sm_once_and_cuts_topk_on_the_granule(s_q, n_hb, tiles, sms,
                                                                          granule):
    topk = tiles * granule
    split = plan_tail_split(s_q, n_hb, topk, sms, granule)
    n_items = s_q * n_hb
    if split is None:
        return
    assert n_items % sms != 0
    assert split.main_tokens > 0 or n_items < sms  # no main launch only under one wave
    assert 0 <= split.main_tokens < s_q
    assert split.main_tokens * n_hb <= n_items // sms * sms  # the main launch: whole waves only
    assert (s_q - split.main_tokens) * n_hb * split.chunks <= sms  # the tail: one wave
    assert split.chunks >= 2 and tiles % split.chunks == 0
    assert tiles // split.chunks + OVERHEAD_TILES <= tiles // 2


def _reference_runner(sm_scale, calls):
    def run(q, kv, indices, out, max_logits, lse):
        calls.append((q.shape[0], indices.shape[-1]))
        o, m, l_ = sparse_mla_reference(q, kv, indices, sm_scale)
        out.copy_(o), max_logits.copy_(m), lse.copy_(l_)
    return run


@pytest.mark.parametrize("dtype, strided", [(torch.float32, False), (torch.bfloat16, False),
                                            (torch.float32, True)])
def test_split_run_equals_the_unsplit_problem(dtype, strided):
    g = torch.Generator().manual_seed(7)
    s_q, h, d, s_kv, topk = 7, 16, 576, 300, 256
    q = (torch.randn(s_q, h, d, generator=g) / 10).to(dtype)
    kv = (torch.randn(s_kv, 1, d, generator=g) / 10).to(dtype)
    idx = torch.randint(-5, s_kv + 5, (s_q, 1, topk), generator=g, dtype=torch.int32)
    if strided:  # only the last dims contiguous, as the API allows
        q = torch.cat([q, q[:, :4]], 1)[:, :h]
        idx = torch.cat([idx, idx[..., :64]], -1)[..., :topk]
        assert not q.is_contiguous() and not idx.is_contiguous()
    idx[5, 0, :] = -1                        # a tail token with no valid index at all
    idx[6, 0, 64:] = s_kv                    # a tail token whose last three pieces are empty
    idx[4, 0, :64] = idx[4, 0, 64:128]       # duplicates across pieces
    sm_scale = d ** -0.5
    want = sparse_mla_reference(q, kv, idx, sm_scale)
    calls = []
    out = torch.full((s_q, h, 512), float("nan"), dtype=dtype)
    ml = torch.full((s_q, h), float("nan"))
    lse = torch.full((s_q, h), float("nan"))
    run_split(_reference_runner(sm_scale, calls), q, kv, idx, out, ml, lse, TailSplit(4, 4))
    assert calls == [(4, topk), (3 * 4, topk // 4)]
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    torch.testing.assert_close(out.float(), want[0], atol=tol, rtol=tol)
    torch.testing.assert_close(ml, want[1])
    torch.testing.assert_close(lse, want[2], atol=1e-5, rtol=1e-5)
    assert (out[5] == 0).all() and torch.isposinf(lse[5]).all() and torch.isneginf(ml[5]).all()


def test_reference_merge_applies_the_sink_once_to_the_merged_row():
    # one row of two pieces, lse log 1 and log 3: lse log 4; a sink of log 4 doubles the
    # denominator (out halves), lse unchanged; a sink of +inf zeroes out, -inf changes nothing
    out_p = torch.tensor([[[[4.0]], [[8.0]]]])
    lse_p = torch.tensor([[[0.0], [float(torch.log(torch.tensor(3.0)))]]])
    ml_p = torch.zeros(1, 2, 1)
    for sink, want in ((float(torch.log(torch.tensor(4.0))), 3.5), (float("inf"), 0.0),
                       (float("-inf"), 7.0)):
        out, _, lse = combine_reference(out_p, ml_p, lse_p, torch.tensor([sink]))
        assert out.item() == pytest.approx(want), sink
        assert lse.item() == pytest.approx(float(torch.log(torch.tensor(4.0))))


def test_reference_merge_weights_pieces_by_their_mass():
    # two pieces of one row: lse 0 and log 3 -> weights 1/4 and 3/4
    out_p = torch.tensor([[[[4.0]], [[8.0]]]])
    lse_p = torch.tensor([[[0.0], [float(torch.log(torch.tensor(3.0)))]]])
    ml_p = torch.tensor([[[1.0], [2.0]]])
    out, ml, lse = combine_reference(out_p, ml_p, lse_p)
    assert out.item() == pytest.approx(7.0) and ml.item() == 2.0
    assert lse.item() == pytest.approx(float(torch.log(torch.tensor(4.0))))


CHECK = r'''
import sys, torch
sys.path.insert(0, sys.argv[1])
from tle_kernels.tail_split import combine_reference, combine_triton
g = torch.Generator().manual_seed(3)
T, C, H, D = 2, 4, 32, 256
out_p = torch.randn(T, C, H, D, generator=g).to(torch.bfloat16)
lse_p = torch.randn(T, C, H, generator=g) * 4
ml_p = torch.randn(T, C, H, generator=g)
lse_p[0, 1] = float("inf")          # an empty piece
lse_p[1, :, 3] = float("inf")       # a row with no valid index in any piece
ml_p[1, :, 3] = float("-inf")
want = combine_reference(out_p, ml_p, lse_p)
out = torch.full((T + 1, H, D), 7.0).to(torch.bfloat16)[1:]  # a strided view of a bigger buffer
ml = torch.full((T, H), 7.0)
lse = torch.full((T, H), 7.0)
combine_triton(out_p, ml_p, lse_p, out, ml, lse)
# both merge in fp32 and round to bf16 once; the summation order may move that rounding by 1 ulp
torch.testing.assert_close(out.float(), want[0].float(), atol=1e-2, rtol=8e-3)
assert torch.allclose(lse, want[2], atol=1e-5, rtol=1e-5), (lse, want[2])
assert torch.equal(ml, want[1])
assert (out[1, 3] == 0).all() and torch.isposinf(lse[1, 3])
# with attn_sink: the merge scales by 1 / (1 + exp(sink - lse)) in fp32, +-inf sinks included
sink = torch.randn(H, generator=g) * 2
sink[0], sink[1] = float("inf"), float("-inf")
want_s = combine_reference(out_p, ml_p, lse_p, sink)
plain = out.clone()
combine_triton(out_p, ml_p, lse_p, out, ml, lse, sink)
torch.testing.assert_close(out.float(), want_s[0].float(), atol=1e-2, rtol=8e-3)
assert (out[:, 0] == 0).all() and torch.equal(out[:, 1], plain[:, 1])
assert (out[1, 3] == 0).all() and torch.isposinf(lse[1, 3]) and not out.isnan().any()
assert torch.allclose(lse, want[2], atol=1e-5, rtol=1e-5)  # lse stays that of the scores
# pieces stored piece-major ([C, T, H, D], as sparse_decode_extra.py stores its two launches'):
# the same merge through the strides
pm = out_p.permute(1, 0, 2, 3).contiguous().permute(1, 0, 2, 3)
lpm = lse_p.permute(1, 0, 2).contiguous().permute(1, 0, 2)
mpm = ml_p.permute(1, 0, 2).contiguous().permute(1, 0, 2)
assert not pm.is_contiguous() and torch.equal(pm, out_p)
out2, ml2, lse2 = torch.zeros_like(out), torch.zeros_like(ml), torch.zeros_like(lse)
combine_triton(pm, mpm, lpm, out2, ml2, lse2, sink)
assert torch.equal(out2, out) and torch.equal(lse2, lse) and torch.equal(ml2, ml)
print("OK")
'''


def test_triton_merge_kernel_matches_the_reference_merge_in_the_interpreter():
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, "-c", CHECK, str(ROOT)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr



def test_min_speedup_lets_a_decode_batch_take_two_pieces():
    # 32 rows x 2 head blocks = 64 items on 132 SMs: room for two pieces of 16 tiles each (topk
    # 2048 on 64-token tiles); 16 + OVERHEAD_TILES is not half of 32 (the prefill's rule) but is
    # 1.45x shorter, so the decode's 1.25 takes it; 1.5 would not
    assert plan_tail_split(32, 2, 2048, 132, 64) is None
    assert plan_tail_split(32, 2, 2048, 132, 64, min_speedup=1.25) == TailSplit(0, 2)
    assert plan_tail_split(32, 2, 2048, 132, 64, min_speedup=1.5) is None
    # the default is the prefill's rule, unchanged
    assert plan_tail_split(4096, 2, 2048, 132, 128, min_speedup=2.0) == TailSplit(4092, 16)


def test_round_split_takes_pieces_over_rounds_only_where_they_pay():
    """plan_round_split, with the FP8 decode's model (3 tiles fixed per piece or item, 1.04x): at
    h_q 128 on 132 SMs, topk 2048 on 64-token tiles, b 34-49 (68-98 items: no split fits one
    round) take four pieces per row in three rounds; b 50-66, where four pieces need four
    rounds, none; where a one-round split exists it agrees with plan_tail_split's; the rounds are
    bounded by max_rounds."""
    from tle_kernels.tail_split import plan_round_split

    def rounds(b, **kw):
        return plan_round_split(b, 2, 2048, 132, 64, 3, 1.04, **kw)

    assert all(plan_tail_split(b, 2, 2048, 132, 64, min_speedup=1.25) is None
               and rounds(b) == TailSplit(0, 4) for b in range(34, 50))
    assert all(rounds(b) is None for b in range(50, 67))
    for b in (1, 2, 4, 8, 16, 24, 32, 33, 67, 80):
        assert rounds(b) == plan_tail_split(b, 2, 2048, 132, 64, min_speedup=1.25), b
    assert rounds(100) == TailSplit(66, 4)            # a wave of main tokens, then the tail's
    assert rounds(40, max_rounds=2) is None
    assert plan_round_split(132, 1, 2048, 132, 64, 3, 1.04) is None  # whole waves
    assert plan_round_split(40, 2, 2000, 132, 64, 3, 1.04) is None   # topk off the granule
    for s_q in range(1, 200):                          # a tail never runs more than max_rounds
        split = plan_round_split(s_q, 2, 2048, 132, 64, 3, 1.04)
        if split is not None:
            tail_items = (s_q - split.main_tokens) * 2
            assert -(-tail_items * split.chunks // 132) <= 4 and split.main_tokens % 66 == 0


@pytest.mark.parametrize("main", [0, 4])
def test_shared_q_gives_the_runner_each_token_once_and_q_div(main):
    """With shared_q the pieces get the tail tokens' q as it is and q_div = chunks (piece v reads
    q row v // q_div); the merged result equals the copying path's."""
    g = torch.Generator().manual_seed(3)
    s_q, h, d, s_kv, topk = 7, 16, 576, 300, 256
    q = torch.randn(s_q, h, d, generator=g) / 10
    kv = torch.randn(s_kv, 1, d, generator=g) / 10
    idx = torch.randint(-5, s_kv + 5, (s_q, 1, topk), generator=g, dtype=torch.int32)
    sm_scale = d ** -0.5
    seen = []

    def run(q_in, kv_, indices, out, max_logits, lse, q_div=1):
        seen.append((q_in.shape[0], indices.shape[0], q_div))
        rows = q_in.repeat_interleave(q_div, dim=0)     # what the kernel's q_div addressing reads
        o, m, l_ = sparse_mla_reference(rows, kv_, indices, sm_scale)
        out.copy_(o), max_logits.copy_(m), lse.copy_(l_)

    outs = []
    for shared in (False, True):
        out = torch.full((s_q, h, 512), float("nan"))
        ml = torch.full((s_q, h), float("nan"))
        lse = torch.full((s_q, h), float("nan"))
        run_split(run, q, kv, idx, out, ml, lse, TailSplit(main, 4), shared_q=shared)
        outs.append((out, ml, lse))
    tail = s_q - main
    main_call = [(main, main, 1)] if main else []            # the main tokens: whole, once each
    copied = main_call + [(tail * 4, tail * 4, 1)]              # q copied per piece
    assert seen == copied + main_call + [(tail, tail * 4, 4)]   # then shared: q_div = 4
    for a, b in zip(*outs):
        torch.testing.assert_close(a, b)
