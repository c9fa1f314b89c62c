"""The balanced decode schedule (tle_kernels/decode_schedule.py) and the scheduled combine
(tle_kernels/mla_decode_combine.py): properties of the Python reference over random batches (empty,
short and long requests, any part count), and the combine kernel run by Triton's CPU interpreter
on a random schedule against a torch merge, and compiled for sm_90a."""

from __future__ import annotations

import torch
from hypothesis import given, settings, strategies as st

from tle_kernels import decode_schedule as S

from .triton_cpu import compile_for_sm90, run_in_triton_interpreter

# ---------------------------------------------------------------------------------------------
# The reference schedule
# ---------------------------------------------------------------------------------------------


def test_pairs_counts_128_token_chunks_and_at_least_one():
    assert [S.pairs(n) for n in (0, 1, 64, 128, 129, 192, 256, 257, 1000)] == \
        [1, 1, 1, 1, 2, 2, 2, 3, 8]


def test_hand_worked_schedule():
    # pairs 1, 4, 1, 8, 2, 1, 16: X = 33, P_eff = 8, cuts 0 4 8 12 16 20 24 28 33
    seqlens = [0, 500, 3, 1000, 129, 0, 2000]
    assert S.flat_starts(seqlens) == [0, 1, 5, 6, 14, 16, 17, 33]
    assert S.cuts(33, 8) == [0, 4, 8, 12, 16, 20, 24, 28, 33]
    got = [(s.part, s.request, s.pair_lo, s.pair_hi, s.whole, s.slot)
           for s in S.segments(seqlens, 8)]
    assert got == [(0, 0, 0, 1, True, None),
                   (0, 1, 0, 3, False, 1), (1, 1, 3, 4, False, 2),    # [1, 5) crosses cut 4
                   (1, 2, 0, 1, True, None),
                   (1, 3, 0, 2, False, 4), (2, 3, 2, 6, False, 5), (3, 3, 6, 8, False, 6),
                   (3, 4, 0, 2, True, None),
                   (4, 5, 0, 1, True, None),
                   (4, 6, 0, 3, False, 10), (5, 6, 3, 7, False, 11), (6, 6, 7, 11, False, 12),
                   (7, 6, 11, 16, False, 13)]
    # few pairs (X <= FINE_PARTS): a part per pair; more: X // 2 parts of two pairs or more,
    # never fewer than FINE_PARTS of them
    assert S.p_eff(5, 100) == 5 and S.p_eff(1, 100) == 1 and S.p_eff(3, 1) == 1
    assert S.p_eff(16, 100) == 16 and S.p_eff(24, 100) == 16 and S.p_eff(32, 100) == 16
    assert S.p_eff(33, 100) == 16 and S.p_eff(34, 100) == 17 and S.p_eff(64, 20) == 20
    assert [cut[1] - cut[0] for cut in [S.cuts(8, 66)]] == [1] and S.cuts(32, 66)[:2] == [0, 2]
    assert [(s.part, s.whole) for s in S.segments([0], 64)] == [(0, True)]
    assert S.segments([], 4) == []


seqlen_values = st.one_of(st.just(0), st.integers(1, 200), st.integers(201, 4096),
                          st.integers(4097, 200_000))


@settings(max_examples=200, deadline=None)
@given(seqlens=st.lists(seqlen_values, min_size=1, max_size=300), P=st.integers(1, 200))
def test_schedule_properties(seqlens, P):
    B = len(seqlens)
    starts = S.flat_starts(seqlens)
    X = starts[-1]
    n = S.p_eff(X, P)
    cut = S.cuts(X, P)
    segs = S.segments(seqlens, P)
    assert S.p_eff(X, n) == n and len(cut) == n + 1 and 1 <= n <= P
    assert cut[0] == 0 and cut[-1] == X

    # every flat pair in exactly one segment: the segments, in order, tile [0, X) with no gap
    flat = [(starts[s.request] + s.pair_lo, starts[s.request] + s.pair_hi) for s in segs]
    assert all(lo < hi for lo, hi in flat)
    assert flat[0][0] == 0 and flat[-1][1] == X
    assert all(a[1] == b[0] for a, b in zip(flat, flat[1:]))
    assert all(0 <= s.pair_lo < s.pair_hi <= S.pairs(seqlens[s.request]) for s in segs)

    # each part < P_eff walks exactly [cut_k, cut_{k+1}) in request order; parts >= P_eff idle
    by_part: dict[int, list[int]] = {}
    for i, s in enumerate(segs):
        by_part.setdefault(s.part, []).append(i)
    assert sorted(by_part) == list(range(n))
    for k, idx in by_part.items():
        assert idx == list(range(idx[0], idx[-1] + 1))             # contiguous in flat order
        reqs = [segs[i].request for i in idx]
        assert reqs == sorted(set(reqs))
        assert flat[idx[0]][0] == cut[k] and flat[idx[-1]][1] == cut[k + 1]

    # balanced: part sizes differ by at most one pair; every busy part has a pair; none walks
    # fewer than MIN_PAIRS once the batch has pairs enough for FINE_PARTS parts of that size;
    # and a batch of few pairs is spread over min(P, X, FINE_PARTS) parts at least
    sizes = [cut[k + 1] - cut[k] for k in range(n)]
    assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1
    if X >= S.MIN_PAIRS * S.FINE_PARTS:
        assert min(sizes) >= S.MIN_PAIRS
    assert n >= min(P, X, S.FINE_PARTS)

    # whole iff the request has one segment; split segments own distinct slots b + k < B + P
    per_request: dict[int, list] = {}
    for s in segs:
        per_request.setdefault(s.request, []).append(s)
    assert sorted(per_request) == list(range(B))
    for b, own in per_request.items():
        assert all(s.whole == (len(own) == 1) for s in own)
        assert [s.part for s in own] == list(range(own[0].part, own[-1].part + 1))
        if seqlens[b] <= 2 * S.BLOCK_K:                             # one pair: never split
            assert len(own) == 1
    slots = [s.slot for s in segs if not s.whole]
    assert all(s.slot is None for s in segs if s.whole)
    assert all(s.slot == s.request + s.part for s in segs if not s.whole)
    assert len(set(slots)) == len(slots) and all(0 <= x < B + P for x in slots)

    # part_of agrees with the cuts for every flat pair (vectorised: X may be large)
    x = torch.arange(X, dtype=torch.int64)
    part = ((x + 1) * n - 1) // X
    cut_t = torch.tensor(cut, dtype=torch.int64)
    assert bool((cut_t[part] <= x).all()) and bool((x < cut_t[part + 1]).all())
    for probe in {0, X - 1, X // 2, *[c for c in cut[1:-1]], *[c - 1 for c in cut[1:-1]]}:
        assert S.part_of(probe, X, P) == int(part[probe])


def test_partial_buffers_shapes():
    o_part, lse_part = S.partial_buffers(5, 2, 16, 7, "cpu")
    assert tuple(o_part.shape) == (12, 2, 16, 512) and tuple(lse_part.shape) == (12, 2, 16)
    assert o_part.dtype == lse_part.dtype == torch.float32


# ---------------------------------------------------------------------------------------------
# The scheduled combine in Triton's interpreter (fp32 output: numpy has no bf16)
# ---------------------------------------------------------------------------------------------

INTERPRETED = r'''
import math, torch
from tle_kernels.decode_schedule import segments
from tle_kernels.mla_decode_combine import mla_decode_combine_scheduled

nan, inf = float("nan"), float("inf")
OUT_SENTINEL, LSE_SENTINEL = 7.25, -3.5

def torch_merge(o, l):
    """o [n, s_q, h_q, 512], l [n, s_q, h_q]: natural-log merge; a row with no live slot -> 0, +inf."""
    live = l > -inf
    m = torch.where(live, l, torch.tensor(-inf)).amax(0)
    any_live = m > -inf
    w = torch.where(live, torch.exp(l - torch.where(any_live, m, 0.0)), 0.0)
    total = w.sum(0)
    w = w / torch.where(any_live, total, 1.0)
    out = (w[..., None] * torch.where(live[..., None], o, 0.0)).sum(0)
    lse = torch.where(any_live, torch.log(torch.where(any_live, total, 1.0)) + m, inf)
    return out, lse

def run(seqlens, P, s_q, h_q, seed, chunk, expect_split):
    g = torch.Generator().manual_seed(seed)
    B = len(seqlens)
    segs = segments(seqlens, P)
    split = {}
    for s in segs:
        if not s.whole:
            split.setdefault(s.request, []).append(s.slot)
    assert bool(split) == expect_split, (seqlens, P, split)
    o_part = torch.full((B + P, s_q, h_q, 512), nan)
    lse_part = torch.full((B + P, s_q, h_q), nan)          # every slot not written stays NaN
    for b, slots in split.items():
        for slot in slots:
            o_part[slot] = torch.randn(s_q, h_q, 512, generator=g)
            lse_part[slot] = torch.randn(s_q, h_q, generator=g) * 4
            dead = torch.rand(s_q, h_q, generator=g) < 0.25   # rows of the segment with no key
            lse_part[slot][dead] = -inf
            o_part[slot][dead] = nan                          # must not be read
    first_split = min(split) if split else None
    if first_split is not None:                               # one row empty in every segment
        for slot in split[first_split]:
            lse_part[slot, 0, h_q - 1] = -inf
            o_part[slot, 0, h_q - 1] = nan
    out = torch.full((B, s_q, h_q, 512), nan)
    lse = torch.full((B, h_q, s_q), nan)
    whole = [b for b in range(B) if b not in split]
    out[whole] = OUT_SENTINEL
    lse[whole] = LSE_SENTINEL
    sl = torch.tensor(seqlens, dtype=torch.int32)
    mla_decode_combine_scheduled(o_part, lse_part, out, lse, sl, P, seqlen_chunk=chunk)
    assert bool((out[whole] == OUT_SENTINEL).all()) and bool((lse[whole] == LSE_SENTINEL).all())
    for b, slots in split.items():
        assert slots == list(range(slots[0], slots[-1] + 1))
        want_o, want_l = torch_merge(o_part[slots], lse_part[slots])
        got_l = lse[b].transpose(0, 1)                        # [h_q, s_q] -> [s_q, h_q]
        assert torch.allclose(out[b], want_o, atol=1e-5, rtol=1e-5), (seqlens, P, b)
        fin = torch.isfinite(want_l)
        assert torch.equal(got_l[~fin], want_l[~fin]), (seqlens, P, b)
        assert torch.allclose(got_l[fin], want_l[fin], atol=1e-5), (seqlens, P, b)
    if first_split is not None:
        assert bool((out[first_split, 0, h_q - 1] == 0).all())
        assert lse[first_split, h_q - 1, 0] == inf
    return len(split)

g = torch.Generator().manual_seed(0)
mix = [0, 5, 64, 129, 300, 700, 1500, 3000, 9000]
seqlens = [mix[int(i)] for i in torch.randint(len(mix), (37,), generator=g)]
seqlens[3], seqlens[20] = 0, 20000
run(seqlens, 24, 2, 20, 1, 16, True)          # 37 requests over three 16-request scan chunks
run(seqlens, 24, 1, 3, 2, 1024, True)         # s_q = 1, 3 heads (a 4-wide head block)
run([300, 0, 5000], 200, 2, 16, 3, 1024, True)  # P > X / 2: P_eff = X // 2
run([129, 0, 70], 5, 1, 16, 4, 1024, True)    # X = 4: four parts of one pair, request 0 split
run([64, 0, 70], 5, 1, 16, 4, 1024, False)    # X = 3: three parts, every request whole
run(seqlens[:20], 1, 1, 16, 5, 16, False)     # one part: nothing split, nothing written
# The forced variants below run on the first requests of the mix (the scan over several
# chunks is the runs' above): each program costs the interpreter alike, whatever the variant.
import os                                     # whole 512-column rows and 128-column blocks
for forced in ("512", "128"):                 # (these few rows get 64 by default)
    os.environ["TLE_COMBINE_BLOCK_D"] = forced
    run(seqlens[:12], 8, 2, 20, 6, 16, True)  # requests 0 / 4 / 5 / 6 / 10 split, 2-3 slots
    run([300, 0, 5000], 200, 2, 16, 7, 1024, True)
os.environ.pop("TLE_COMBINE_BLOCK_D")
for stages in ("0", "4"):                     # the plain and the pipelined slot loop, forced
    os.environ["TLE_COMBINE_STAGES"] = stages
    run(seqlens[:7], 8, 2, 20, 8, 16, True)   # request 0 over 5 slots: more than 4 stages
    run([129, 0, 70], 5, 1, 16, 9, 1024, True)
os.environ.pop("TLE_COMBINE_STAGES")
print("INTERPRETED OK")
'''


def test_scheduled_combine_in_triton_interpreter(tmp_path):
    run_in_triton_interpreter(INTERPRETED, tmp_path, timeout=300)


SCHEDULED_INTS = ["stride_op_slot", "stride_op_s", "stride_op_h", "stride_lp_slot", "stride_lp_s",
                  "stride_lp_h", "stride_o_b", "stride_o_s", "stride_o_h", "stride_l_b",
                  "stride_l_h", "stride_l_s", "s_q", "h_q", "batch", "n_parts"]


def test_scheduled_combine_compiles_for_sm90():
    from tle_kernels import mla_decode_combine as C

    sig = {"o_part_ptr": "*fp32", "lse_part_ptr": "*fp32", "out_ptr": "*bf16", "lse_ptr": "*fp32",
           "seqlens_ptr": "*i32", **{n: "i32" for n in SCHEDULED_INTS}}
    cx = dict(D_V=512, BLOCK_H=16, BLOCK_D=128, SPLIT_P2=128, SEQLEN_CHUNK=1024,
              BLOCK_K=C.BLOCK_K, MIN_PAIRS=C.MIN_PAIRS, FINE_PARTS=C.FINE_PARTS, PDL=True,
              STAGES=4)
    k = compile_for_sm90(C.mla_decode_combine_scheduled_kernel, sig, cx, num_warps=4)
    ptx = k.asm["ptx"]
    assert "mla_decode_combine_scheduled_kernel" in ptx
    assert "cp.async" in ptx                    # the slot loop software-pipelined
    unpiped = compile_for_sm90(C.mla_decode_combine_scheduled_kernel, sig, dict(cx, STAGES=0),
                               num_warps=4)
    assert "cp.async" not in unpiped.asm["ptx"]
    # launched as a programmatic dependent, it waits for the decode kernel's writes once, after
    # the scan of cache_seqlens and before its first read of a partial
    assert ptx.count("griddepcontrol.wait") == 1
    assert ptx.index("griddepcontrol.wait") > ptx.index("ld.global")
    plain = compile_for_sm90(C.mla_decode_combine_scheduled_kernel, sig, dict(cx, PDL=False),
                             num_warps=4)
    assert "griddepcontrol" not in plain.asm["ptx"]
    # a launch with s_q = 1, one request or P = 1 passes those ints as the constexpr 1 (Triton
    # specialises integer arguments equal to 1): that variant must compile as well
    ones = ["s_q", "batch", "n_parts", "stride_l_h", "stride_l_s"]
    sig1 = {k_: v for k_, v in sig.items() if k_ not in ones}
    k1 = compile_for_sm90(C.mla_decode_combine_scheduled_kernel, sig1,
                          dict(cx, SPLIT_P2=2, SEQLEN_CHUNK=16, **{o: 1 for o in ones}), num_warps=4)
    assert "mla_decode_combine_scheduled_kernel" in k1.asm["ptx"]


def test_combines_launch_as_programmatic_dependents_on_a_gpu_only(monkeypatch):
    """Both combines pass launch_pdl (and PDL, their griddepcontrol.wait) exactly when they run
    on a CUDA device outside the interpreter and TLE_DECODE_PDL is not 0."""
    from tle_kernels import mla_decode_combine as C

    seen = []

    class Kernel:
        def __getitem__(self, grid):
            return lambda *args, **kw: seen.append((kw["PDL"], kw["launch_pdl"]))

    monkeypatch.setattr(C, "mla_decode_combine_kernel", Kernel())
    monkeypatch.setattr(C, "mla_decode_combine_scheduled_kernel", Kernel())
    b, s_q, h_q, P = 3, 1, 16, 2
    out = torch.empty(b, s_q, h_q, 512, dtype=torch.bfloat16)
    lse = torch.empty(b, h_q, s_q)

    def run():
        C.mla_decode_combine(torch.empty(b, 2, s_q, h_q, 512), torch.empty(b, 2, s_q, h_q),
                             out, lse)
        C.mla_decode_combine_scheduled(torch.empty(b + P, s_q, h_q, 512),
                                       torch.empty(b + P, s_q, h_q), out, lse,
                                       torch.ones(b, dtype=torch.int32), P)

    run()
    assert seen == [(False, False)] * 2          # CPU tensors: nothing to overlap
    seen.clear()
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))
    monkeypatch.delenv("TLE_DECODE_PDL", raising=False)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    run()
    assert seen == [(True, True)] * 2
    for env, value in (("TLE_DECODE_PDL", "0"), ("TRITON_INTERPRET", "1")):
        seen.clear()
        monkeypatch.setenv(env, value)
        run()
        assert seen == [(False, False)] * 2, env
        monkeypatch.delenv(env)


def test_schedule_constants_agree():
    from tle_kernels import mla_decode_combine as C

    assert (C.BLOCK_K, C.MIN_PAIRS, C.FINE_PARTS, C.D_V) == (S.BLOCK_K, S.MIN_PAIRS,
                                                             S.FINE_PARTS, S.D_V)
    from tle_kernels import mla_decode_parts as K   # the decode kernel's copies (constexprs)

    assert (K.MIN_PAIRS.value, K.FINE_PARTS.value) == (S.MIN_PAIRS, S.FINE_PARTS)
