"""The FP8 sparse MLA decode with the math split by output half (tle_kernels/sparse_decode_split_fp8.py,
and its attn_sink variant sparse_decode_split_fp8_sink.py, launched by
tle_kernels/sparse_decode_split_fp8_launch.py) on the CPU:

- their protocol: tle-dump proves it for every ROUNDS (read specialised to TOPK);
- their lowering: PTX for sm_90a with no spills and wgmmas ptxas does not serialize, at the
  [192, 160] worker budgets that leave the dequantizing producer 152 registers;
- its math, run by the CPU emulator (tle_compiler/testing/emulator.py) through the launcher
  against the fp32 reference (tle_kernels/sparse_decode_reference.py) with FlashMLA's
  sparse-decode tolerances: hostile indices (-1, the int32 extremes, past the cache) whose
  unnamed tokens are NaN, pages of 1, 16 and 61 tokens and a padded block stride, s_q 1 and 2,
  several persistent rounds, h_q 8 / 32 / 64 / 128 (rows past h_q masked in the kernel), rows
  with no valid slot, topk_length, max_logits; and a kernel whose right warp group skips the
  rescale of its accumulator fails that comparison;
- attn_sink the same way: sinks of both signs, large ones, +inf and -inf, with empty rows, at
  h_q 32 and 128, through a tail split (pieces without the sink, the merge with it) with and
  without main tokens; lse and max_logits stay the scores'; a sink kernel whose right half
  ignores the sink fails.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_decode_split_fp8 as kmod  # noqa: E402
import tle_kernels.sparse_decode_split_fp8_sink as smod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels import sparse_decode_api as A  # noqa: E402
from tle_kernels.sparse_decode_reference import (gather_tokens,  # noqa: E402
                                                  make_sparse_decode_inputs,
                                                  sparse_decode_reference)
from tle_kernels.sparse_decode_split_fp8_launch import (  # noqa: E402
    launch_sparse_split_fp8, run_split_rows, sparse_split_fp8_unsupported_reason)

# FlashMLA's test scale, its sparse-decode tolerances and its element-wise check
from .gpu.test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL,  # noqa: E402
                                     SCALE, close)

KERNEL = kmod.__file__
SINK_KERNEL = smod.__file__
ARGS = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


# ------------------------------------------------------------------------ protocol and lowering

@pytest.mark.parametrize("path", [KERNEL, SINK_KERNEL], ids=["plain", "sink"])
def test_tle_dump_graph_verifies_for_every_round_count(capsys, path):
    from tle_compiler.cli.dump import main

    code = main(["--graph", path])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "read specialised to BLOCK_H=64, QTMA=0, TOPK=2048" in err
    assert "# verdict: verified for every value of ROUNDS (every integer ROUNDS)" in out
    assert "split_fp8_producer --kv(kv_r)--> left, right    capacity 2" in out
    assert "left --prob(alpha, probs, sum_exp)--> right    capacity 1" in out


@pytest.mark.parametrize("path", [KERNEL, SINK_KERNEL], ids=["plain", "sink"])
def test_tle_dump_verifies_the_q_copy_by_tma(capsys, path):
    """With QTMA = 1 the q slot is filled by three TMA boxes and committed with an expect-tx of
    their 73,728 bytes (one arrive): still verified for every round count."""
    from tle_compiler.cli.dump import main

    code = main(["-q", "--param", "QTMA=1", path])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "verified for every value of ROUNDS" in err and "QTMA = 1" in err
    assert main(["--param", "QTMA=1", "--gluon", path]) == 0
    out = capsys.readouterr().out
    assert out.count("tma.async_copy_global_to_shared(q_desc, ") == 2
    assert out.count("tma.async_copy_global_to_shared(q_tail_desc, ") == 1
    assert "mbarrier.expect(q_full0.index(0), 73728)" in out
    assert "mbarrier.init(q_full0.index(0), count=1)" in out


def test_the_left_may_release_q_after_the_items_last_scores_and_no_sooner(tmp_path, capsys):
    """The left frees the q slot after an item's last tile (measured faster than sooner); freed
    as soon as the item's last S is computed, before that tile's softmax and P·V_L, the protocol
    is still verified, while one tile earlier (before that S) is a read of a released slot,
    which tle-dump rejects."""
    from tests.test_kernels import kernel_copy
    from tle_compiler.cli.dump import main

    late = "        qr.release(r)\n"
    at_max = "            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)\n"

    def moved(k: str) -> list:
        return [(late, ""), (at_max, at_max + f"            if k == {k}:\n"
                                      f"                qr.release(r)\n")]

    last = kernel_copy("sparse_decode_split_fp8", tmp_path / "last.py", moved("NT - 1"))
    assert main(["-q", str(last)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    early = kernel_copy("sparse_decode_split_fp8", tmp_path / "early.py", moved("NT - 2"))
    assert main(["-q", str(early)]) != 0
    assert "rejected" in capsys.readouterr().err


@pytest.mark.parametrize("out_type", ["*bf16", "*fp32"])
@pytest.mark.parametrize("mod,name", [(kmod, "sparse_decode_split_fp8"),
                                      (smod, "sparse_decode_split_fp8_sink")],
                         ids=["plain", "sink"])
def test_compiles_for_sm90a_without_spills_or_serialized_wgmmas(mod, name, out_type):
    check_compiles(mod, name, out_type, qtma=0)


@pytest.mark.parametrize("mod,name", [(kmod, "sparse_decode_split_fp8"),
                                      (smod, "sparse_decode_split_fp8_sink")],
                         ids=["plain", "sink"])
def test_the_q_copy_by_tma_compiles_with_at_most_a_few_spilled_bytes(mod, name):
    """With QTMA = 1 the producer's tile loop is the same code, yet ptxas allocates it
    differently and (Triton 3.6) spills 12 / 16 bytes there, two or three 32-bit offsets per tile:
    one reason the gather stays the default (sparse_decode_split_fp8_launch.Q_TMA_BY_DEFAULT).
    The three boxes are bulk tensor copies; the wgmmas stay asynchronous."""
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    cfg = mod.DEFAULT_CONFIG
    compiled = compile_kernel(getattr(mod, name), dict(cfg["signature"]),
                              dict(cfg["constexprs"], QTMA=1))
    st = ptxas_stats(compiled)
    assert st["ok"] and not st["wgmma_serialized"], st["log"]
    assert st["spill_stores"] <= 16, st["log"]
    ptx = compiled.asm["ptx"]
    assert ptx.count("cp.async.bulk.tensor.2d") == 3


def check_compiles(mod, name, out_type, qtma):
    """The workers at [192, 160] registers leave the producer 152 (of 3 x 168), enough for a whole
    tile's FP8 bytes in flight; nothing spills and ptxas keeps the wgmmas asynchronous (the sink
    kernel's left too, with its per-tile sink term), with bf16 outputs and with the fp32 ones the
    extra-cache path gives it (its stores take out's dtype: no bf16 rounding in the fp32 PTX)."""
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    cfg = mod.DEFAULT_CONFIG
    compiled = compile_kernel(getattr(mod, name), dict(cfg["signature"], out_ptr=out_type),
                              dict(cfg["constexprs"], QTMA=qtma))
    # fp32 outputs: the output halves are not rounded to bf16 (only P is: half the bf16x2
    # conversions of the bf16 kernel remain) and are stored as fp32 pairs, not 16-byte bf16 rows
    ptx = compiled.asm["ptx"]
    cvt = ptx.count("cvt.rn.bf16x2.f32")
    if out_type == "*fp32":
        assert cvt == 128 and "st.global.v2.b32" in ptx and "st.global.v4" not in ptx, cvt
    else:
        assert cvt == 256 and "st.global.v4" in ptx, cvt
    st = ptxas_stats(compiled)
    assert st["ok"] and st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"], st["log"]  # ptxas C7512 / C7515
    assert "[4, 4], [192, 160])" in compiled.tle_generated.source


# ------------------------------------------------------------------------------ emulated math

@pytest.fixture
def emulated(monkeypatch):
    """The launcher runs the emulated kernels (plain and sink) on ``sms`` persistent programs
    (default 3); ``emulated(path)`` / ``emulated(sink_path=...)`` puts the kernel of another
    file in the plain / sink kernel's place."""
    from tle_compiler.testing.emulator import load_kernel_module

    def use(path=None, sms=3, sink_path=None):
        emu = load_kernel_module(path or KERNEL, dot_dtypes=(torch.bfloat16,))
        monkeypatch.setattr(kmod, "sparse_decode_split_fp8", emu.sparse_decode_split_fp8)
        emu = load_kernel_module(sink_path or SINK_KERNEL, dot_dtypes=(torch.bfloat16,))
        monkeypatch.setattr(smod, "sparse_decode_split_fp8_sink",
                            emu.sparse_decode_split_fp8_sink)
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    use()
    return use


def run_and_check(x, what=""):
    """The launcher into NaN-poisoned outputs, against the reference."""
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 *(x[k] for k in ARGS))
    out, lse = A.empty_outputs(x["q"])
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    launch_sparse_split_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse,
                            *(x[k] for k in ARGS))
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
    return out, lse


def hostile(b, s_q, h_q, topk, seed, page=16, invalid=0.3, **kw):
    """FlashMLA's distribution with 30 % invalid slots, unnamed tokens NaN, on the CPU."""
    return make_sparse_decode_inputs(b, s_q, h_q, topk, page=page, device="cpu", seed=seed,
                                     invalid=invalid, **kw)


@pytest.mark.parametrize("b,s_q,topk,page", [(3, 1, 128, 16), (2, 2, 256, 61), (1, 2, 64, 1)],
                         ids=["b3-sq1-topk128", "b2-sq2-topk256-page61", "b1-sq2-topk64-page1"])
def test_matches_the_reference_on_hostile_indices(emulated, b, s_q, topk, page):
    """h_q 64: b * s_q items on 3 programs (several rounds, the last one repeating an item);
    s_q 1 writes lse in place, s_q 2 through the transposing scratch; topk 64 is one tile (the
    producer's index prefetch clamps to it)."""
    run_and_check(hostile(b, s_q, 64, topk, seed=b * 10 + s_q, page=page))


@pytest.mark.parametrize("h_q", [8, 32])
def test_head_counts_under_64_are_masked_rows(emulated, h_q):
    """h_q 8 / 32 run as one block of 64 head rows whose rows past h_q load q as 0 and store
    nothing (out is [.., h_q, 512] itself: a store past it would fail the emulator's bounds
    check), with an empty row and s_q 2."""
    x = hostile(3, 2, h_q, 192, seed=h_q)
    x["indices"][2, 1] = -1
    out, lse = run_and_check(x, f"h_q={h_q}")
    assert (out[2, 1] == 0).all() and (lse[2, :, 1] == float("inf")).all()


def test_two_head_blocks_mostly_invalid_rows_and_max_logits(emulated):
    """h_q 128 (two head blocks per row) with 90 % invalid slots and one row with none valid:
    out 0, lse +inf, max_logits -inf there; elsewhere max_logits is the largest scaled score."""
    x = hostile(2, 1, 128, 192, seed=5, invalid=0.9)
    x["indices"][1, 0] = -1
    t, topk = 2, 192
    q3, idx2 = x["q"].view(t, 128, 576), x["indices"].view(t, topk)
    out3 = torch.full((t, 128, 512), float("nan"), dtype=torch.bfloat16)
    lse2 = torch.full((t, 128), float("nan"))
    max_logits = torch.full((t, 128), float("nan"))
    run_split_rows(q3, x["k_cache"], idx2, out3, lse2, max_logits, SCALE)

    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE)
    close("out", out3, want_out.view(t, 128, 512).to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close("lse", lse2, want_lse[:, :, 0], LSE_ABS, LSE_REL)
    for i in range(t):
        kv, valid = gather_tokens(x["k_cache"], x["indices"][i], None)    # [1, topk, 576]
        scores = (q3[i].float() @ kv[0].T) * SCALE
        want_max = scores.masked_fill(~valid[0][None, :], float("-inf")).amax(-1)
        if valid.any():
            torch.testing.assert_close(max_logits[i], want_max, atol=1e-4, rtol=1e-4)
        else:
            assert (max_logits[i] == float("-inf")).all()
            assert (out3[i] == 0).all() and (lse2[i] == float("inf")).all()


def test_padded_block_stride_float8_cache_and_topk_length(emulated):
    """The cache's bytes as float8_e4m3fn, its blocks 48 NaN bytes apart more than their tokens
    need (read through the block stride, no copy); per-request lengths around the tile boundaries
    (slots past a length name NaN tokens, so reading one shows)."""
    lengths = [0, 1, 64, 65, 200, -5]
    x = hostile(len(lengths), 1, 64, 192, seed=7, topk_length=lengths)
    kc = x["k_cache"]
    n_blocks, page = kc.shape[:2]
    padded = torch.full((n_blocks, page * 656 + 48), 0xFF, dtype=torch.uint8)  # NaN bytes
    padded[:, :page * 656] = kc.reshape(n_blocks, page * 656)
    x["k_cache"] = padded[:, :page * 656].view(n_blocks, page, 1, 656).view(torch.float8_e4m3fn)
    assert x["k_cache"].stride(0) == page * 656 + 48
    out, lse = run_and_check(x)
    for i in (0, 5):
        assert (out[i] == 0).all() and (lse[i] == float("inf")).all()


def test_a_right_half_without_the_rescale_fails(emulated, tmp_path):
    """The same kernel with the right warp group's ``O_r * alpha`` dropped fails the comparison:
    the check sees the rescale factors handed over with P (the left's half alone stays right)."""
    from tests.test_kernels import kernel_copy

    edit = ("            acc = tle.gpu.scale_rows(acc, alpha)\n"
            "            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.probs)),",
            "            acc = tl.dot(tl.load(tle.gpu.local_ptr(pres.slot.probs)),")
    emulated(kernel_copy("sparse_decode_split_fp8", tmp_path / "no_rescale.py", [edit]))
    with pytest.raises(AssertionError, match="elements off|cosine"):
        run_and_check(hostile(2, 1, 64, 256, seed=11))


# ----------------------------------------------------------------------------------- support

def test_unsupported_calls_say_why():
    meta = dict(device="meta")
    q = torch.empty(2, 1, 64, 576, dtype=torch.bfloat16, **meta)
    kc = torch.empty(4, 64, 1, 656, dtype=torch.uint8, **meta)
    idx = torch.empty(2, 1, 192, dtype=torch.int32, **meta)
    assert sparse_split_fp8_unsupported_reason(q, kc, idx, True) is None
    bf16 = torch.empty(4, 64, 1, 576, dtype=torch.bfloat16, **meta)
    assert "FP8 cache only" in sparse_split_fp8_unsupported_reason(q, bf16, idx, False)
    assert "extra cache" in sparse_split_fp8_unsupported_reason(q, kc, idx, True,
                                                                extra_k_cache=kc)
    sink = torch.empty(64, **meta)
    assert sparse_split_fp8_unsupported_reason(q, kc, idx, True, attn_sink=sink) is None
    idx96 = torch.empty(2, 1, 96, dtype=torch.int32, **meta)
    assert "multiple of 64" in sparse_split_fp8_unsupported_reason(q, kc, idx96, True)
    with pytest.raises(NotImplementedError, match="'split-fp8' cannot run"):
        launch_sparse_split_fp8(q, kc, idx96, SCALE, True, None, None)


def test_auto_takes_it_for_the_fp8_cache_with_and_without_attn_sink():
    import tle_kernels.sparse_decode_api as A

    meta = dict(device="meta")
    call = dict(q=torch.empty(2, 1, 128, 576, dtype=torch.bfloat16, **meta),
                k_cache=torch.empty(4, 64, 1, 656, dtype=torch.uint8, **meta),
                indices=torch.empty(2, 1, 2048, dtype=torch.int32, **meta), is_fp8=True,
                attn_sink=None, topk_length=None, extra_k_cache=None, extra_indices=None,
                extra_topk_length=None)
    assert "split-fp8" in A.built_impls()
    assert A.select_sparse_impl("auto", call) == "split-fp8"
    assert A.select_sparse_impl("auto", dict(call, topk_length=torch.empty(
        2, dtype=torch.int32, **meta))) == "split-fp8"
    sink = torch.empty(128, **meta)
    # the sink kernel (sparse_decode_split_fp8_sink.py), named or as auto's choice
    assert A.select_sparse_impl("split-fp8", dict(call, attn_sink=sink)) == "split-fp8"
    assert A.select_sparse_impl("auto", dict(call, attn_sink=sink)) == "split-fp8"
    # an extra cache: two launches of the kernel merged by lse (sparse_decode_extra.py), the
    # sink in the merge, named or as auto's choice; an extra cache the kernel cannot read is
    # refused naming that launch (and "auto" then takes the naive kernel)
    extra = dict(call, extra_k_cache=call["k_cache"],
                 extra_indices=torch.empty(2, 1, 128, dtype=torch.int32, **meta))
    assert A.select_sparse_impl("split-fp8", dict(extra, attn_sink=sink)) == "split-fp8"
    assert A.select_sparse_impl("auto", dict(extra, attn_sink=sink)) == "split-fp8"
    bad = dict(extra, extra_indices=torch.empty(2, 1, 96, dtype=torch.int32, **meta))
    with pytest.raises(NotImplementedError, match="'split-fp8' cannot run this call: split-fp8 "
                                                  "with an extra cache: the extra cache's launch: "
                                                  "split-fp8 needs topk a positive multiple of 64"):
        A.select_sparse_impl("split-fp8", bad)
    assert A.select_sparse_impl("auto", bad) == "naive"
    with pytest.raises(NotImplementedError, match="'split-fp8' cannot run this call: .*extra"):
        launch_sparse_split_fp8(call["q"], call["k_cache"], call["indices"], SCALE, True,
                                *A.empty_outputs(call["q"]), None, None, call["k_cache"],
                                extra["extra_indices"], None)


def test_a_batch_under_one_wave_runs_as_merged_topk_pieces(emulated, monkeypatch):
    """Two rows on 8 programs: the rows run as 4 topk pieces each (tail_split.py), merged by
    lse; the merge must give the unsplit answer (invalid indices in every piece)."""
    import tle_kernels.head_padding as hp

    emulated(sms=8)
    calls = []
    real = hp.run_split_any_heads
    monkeypatch.setattr(hp, "run_split_any_heads",
                        lambda *a, **kw: calls.append(a[-1]) or real(*a, **kw))
    run_and_check(hostile(1, 2, 64, 2048, seed=7, invalid=0.5), "tail split")
    assert len(calls) == 1 and calls[0].chunks == 4


def test_a_tail_over_half_a_wave_runs_as_pieces_over_several_rounds(emulated, monkeypatch):
    """Five rows of one head block on 8 programs: two pieces per row would not fit one round
    (10 > 8), so the one-round split finds none; four pieces per row in three rounds
    (tail_split.plan_round_split) are modelled 1.06x shorter and taken. The programs run their
    pieces k, k + 8, k + 16 and the merge gives the unsplit answer (invalid indices, an empty
    piece)."""
    import tle_kernels.head_padding as hp
    from tle_kernels.tail_split import plan_tail_split

    emulated(sms=8)
    assert plan_tail_split(5, 1, 2048, 8, 64, min_speedup=1.25) is None
    calls = []
    real = hp.run_split_any_heads
    monkeypatch.setattr(hp, "run_split_any_heads",
                        lambda *a, **kw: calls.append(a[-1]) or real(*a, **kw))
    x = hostile(5, 1, 64, 2048, seed=11, invalid=0.5)
    x["indices"][3, 0, 512:1024] = -1                 # row 3's second piece has no valid slot
    run_and_check(x, "round split")
    assert len(calls) == 1 and (calls[0].main_tokens, calls[0].chunks) == (0, 4)
    # at a head count that is no multiple of 16 the pieces would run over padded copies of q and
    # the outputs (head_padding.py), which the model leaves out: the rows run unsplit
    run_and_check(hostile(5, 1, 40, 2048, seed=12, invalid=0.5), "h_q 40 unsplit")
    assert len(calls) == 1


# -------------------------------------------------------------------------------------- attn_sink

def with_sinks(x, h_q, seed):
    """``x`` with attn_sink [h_q]: randn of both signs, and cycling through the heads +inf, -inf,
    +-40 and +-1e6 (a row scaled to about 0, or left as is) and values near a row's lse (about
    log(topk) + its scores: a factor well inside (0, 1))."""
    g = torch.Generator().manual_seed(seed)
    sink = torch.randn(h_q, generator=g) * 3
    special = torch.tensor([float("inf"), float("-inf"), 40.0, -40.0, 1e6, -1e6, 6.0, 8.0])
    sink[::3] = special.repeat(h_q // 24 + 1)[:len(sink[::3])]
    assert (sink > 0).any() and (sink < 0).any()
    x["attn_sink"] = sink
    return x


@pytest.mark.parametrize("h_q,b,s_q,topk,invalid", [(32, 3, 2, 192, 0.3), (128, 2, 1, 256, 0.5)],
                         ids=["h_q32-masked-rows", "h_q128-two-head-blocks"])
def test_sink_matches_the_reference(emulated, h_q, b, s_q, topk, invalid):
    """The sink kernel (several persistent rounds on 3 programs) with empty rows: out 0 and lse
    +inf whatever the sink; elsewhere out scaled by exp(lse) / (exp(lse) + exp(sink)), lse the
    scores' (both from the reference); a +inf sink zeroes its head's rows."""
    x = with_sinks(hostile(b, s_q, h_q, topk, seed=40 + h_q, invalid=invalid), h_q, seed=h_q)
    x["indices"][1, s_q - 1] = -1                   # one row with no valid slot
    out, lse = run_and_check(x, f"sink h_q={h_q}")
    assert (out[1, s_q - 1] == 0).all() and (lse[1, :, s_q - 1] == float("inf")).all()
    plus_inf = torch.isposinf(x["attn_sink"])
    assert plus_inf.any() and (out[:, :, plus_inf] == 0).all()
    assert torch.isfinite(lse[0]).all()             # request 0 has valid slots in every row


def test_sink_keeps_lse_and_max_logits_of_the_scores(emulated):
    """run_split_rows with and without the sink: the same lse and max_logits; out differs by
    exactly the sink's factor (per row, both halves), 0 where the sink is +inf and in the row
    with no valid slot."""
    h_q, t, topk = 64, 2, 128
    x = with_sinks(hostile(t, 1, h_q, topk, seed=9), h_q, seed=9)
    x["indices"][1] = -1                            # row 1: no valid slot
    q3, idx2 = x["q"].view(t, h_q, 576), x["indices"].view(t, topk)
    runs = []
    for sink in (None, x["attn_sink"]):
        out3 = torch.full((t, h_q, 512), float("nan"), dtype=torch.bfloat16)
        lse2, ml = torch.full((t, h_q), float("nan")), torch.full((t, h_q), float("nan"))
        run_split_rows(q3, x["k_cache"], idx2, out3, lse2, ml, SCALE, sink)
        runs.append((out3, lse2, ml))
    (o0, l0, m0), (o1, l1, m1) = runs
    assert torch.equal(l0, l1) and torch.equal(m0, m1)
    # exp(lse) / (exp(lse) + exp(sink)); an empty row (lse +inf) is 0 with or without the sink
    factor = torch.sigmoid(l0.masked_fill(torch.isposinf(l0), 0.0) - x["attn_sink"][None, :])
    torch.testing.assert_close(o1.float(), o0.float() * factor[..., None], atol=2e-2, rtol=2e-2)
    assert (o1[:, torch.isposinf(x["attn_sink"])] == 0).all() and (o1[1] == 0).all()


@pytest.mark.parametrize("rows,h_q", [(2, 64), (10, 64), (2, 8)],
                         ids=["pieces-only", "main-tokens-and-pieces", "h_q8-padded-merge"])
def test_sink_through_a_tail_split(emulated, monkeypatch, rows, h_q):
    """On 8 programs at topk 2048 the rows past the whole waves run as 4 topk pieces each: the
    pieces without the sink (the plain kernel), the merge with it; with 10 rows the first 8 run
    the sink kernel as the main launch; at h_q 8 the merge runs over 16-head copies."""
    import tle_kernels.head_padding as hp

    emulated(sms=8)
    calls, kernels = [], []
    real = hp.run_split_any_heads
    monkeypatch.setattr(hp, "run_split_any_heads",
                        lambda *a, **kw: calls.append((a[-1], kw)) or real(*a, **kw))
    for mod, name in ((kmod, "sparse_decode_split_fp8"), (smod, "sparse_decode_split_fp8_sink")):
        k = getattr(mod, name)
        monkeypatch.setattr(mod, name, _Counted(k, name, kernels))
    x = with_sinks(hostile(rows, 1, h_q, 2048, seed=rows + h_q, invalid=0.5), h_q, seed=rows)
    x["indices"][rows - 1, 0, :1024] = -1           # a tail row with two empty pieces
    run_and_check(x, "sink tail split")
    (split, kw), = calls
    assert split.chunks == 4 and kw["sink"] is not None and kw["run_main"] is not None
    assert kw["shared_q"]                            # the pieces read their token's q in place
    want = ["sparse_decode_split_fp8"] if rows == 2 else ["sparse_decode_split_fp8_sink",
                                                         "sparse_decode_split_fp8"]
    assert kernels == want


class _Counted:
    """A kernel whose launches (``kernel[grid](...)``) are recorded by name in ``seen``."""

    def __init__(self, kernel, name, seen):
        self.kernel, self.name, self.seen = kernel, name, seen

    def __getitem__(self, grid):
        self.seen.append(self.name)
        return self.kernel[grid]


def test_a_sink_kernel_whose_right_half_ignores_the_sink_fails(emulated, tmp_path):
    """The sink kernel with the left handing the right its plain row sum (no sink term) fails
    the comparison: the check sees the right's half scaled by the sink (the left's half alone
    stays right)."""
    from tests.test_kernels import kernel_copy

    edit = ("pslot.sum_exp), l_i + tl.exp2(sink_t - m_use))", "pslot.sum_exp), l_i)")
    emulated(sink_path=kernel_copy("sparse_decode_split_fp8_sink", tmp_path / "no_sink_r.py",
                                   [edit]))
    x = hostile(2, 1, 64, 256, seed=12)
    x["attn_sink"] = torch.linspace(2.0, 8.0, 64)   # factors well inside (0, 1)
    with pytest.raises(AssertionError, match="elements off|cosine"):
        run_and_check(x, "right without sink")


# ------------------------------------------------------------------------------------ Q by TMA

def test_q_tma_rules_and_descriptors(monkeypatch):
    """The launcher copies Q by TMA where q's rows flatten into [T * h_q, 576] with 16-byte rows
    (``q_tma_reason``), when Q_TMA, or else TLE_SPARSE_DECODE_QTMA, asks for it (the default is
    Q_TMA_BY_DEFAULT); asked for on a q it cannot box, it says why. The descriptors view q3 as
    rows, boxes [64, 256] and [64, 64]; without, q3 stands in their places."""
    import tle_kernels.sparse_decode_split_fp8_launch as L

    monkeypatch.delenv(L.QTMA_ENV, raising=False)
    q3 = torch.zeros(3, 128, 576, dtype=torch.bfloat16)
    assert L.q_tma_reason(q3) is None
    assert L.use_q_tma(q3) is L.Q_TMA_BY_DEFAULT
    monkeypatch.setenv(L.QTMA_ENV, "1")
    assert L.use_q_tma(q3)
    monkeypatch.setenv(L.QTMA_ENV, "0")
    assert not L.use_q_tma(q3)
    monkeypatch.setattr(L, "Q_TMA", True)
    assert L.use_q_tma(q3)
    strided = torch.zeros(3, 130, 576, dtype=torch.bfloat16)[:, :128]   # rows do not flatten
    assert "do not flatten" in L.q_tma_reason(strided)
    assert L.q_tma_reason(strided[:1]) is None                           # one row: they do
    assert "not contiguous" in L.q_tma_reason(torch.zeros(3, 576, 64).transpose(1, 2))
    assert "16-byte" in L.q_tma_reason(torch.zeros(3, 64, 580, dtype=torch.bfloat16)[:, :, :576])
    with pytest.raises(ValueError, match="cannot copy Q with TMA: .*do not flatten"):
        L.use_q_tma(strided)
    desc, tail = L.q_descriptors(q3, True)
    assert (desc.shape, desc.strides, desc.block_shape) == ([384, 576], [576, 1], [64, 256])
    assert (tail.shape, tail.block_shape) == ([384, 576], [64, 64])
    assert L.q_descriptors(q3, False) == (q3, q3)


@pytest.fixture
def q_tma(monkeypatch, emulated):
    """The emulated kernels with Q copied by TMA boxes (the launcher forced to it)."""
    import tle_kernels.sparse_decode_split_fp8_launch as L

    monkeypatch.setattr(L, "Q_TMA", True)
    return emulated


@pytest.mark.parametrize("b,s_q,h_q,topk", [(3, 2, 32, 192), (2, 1, 128, 128), (3, 1, 100, 64)],
                         ids=["h32-sq2", "h128", "h100"])
def test_q_by_tma_matches_the_reference(q_tma, b, s_q, h_q, topk):
    """The boxes of a head block past the real heads hold the next token's q rows (h_q 32 / 100)
    or zeros past q's end (the last token): the real rows match the reference, nothing else is
    stored (out is [.., h_q, 512] itself, bounds-checked by the emulator)."""
    x = hostile(b, s_q, h_q, topk, seed=h_q + b)
    x["indices"][0, 0] = -1
    out, lse = run_and_check(x, f"q by TMA h_q={h_q}")
    assert (out[0, 0] == 0).all() and (lse[0, :, 0] == float("inf")).all()


def test_q_by_tma_through_a_tail_split_and_with_attn_sink(q_tma, monkeypatch):
    """Pieces of one token read its q rows in place (q_div > 1: box row (t // q_div) * h_q + h0),
    and the sink kernel takes the same boxes."""
    import tle_kernels.head_padding as hp

    q_tma(sms=8)
    calls = []
    real = hp.run_split_any_heads
    monkeypatch.setattr(hp, "run_split_any_heads",
                        lambda *a, **kw: calls.append(a[-1]) or real(*a, **kw))
    run_and_check(hostile(1, 2, 64, 2048, seed=7, invalid=0.5), "tail split, q by TMA")
    assert len(calls) == 1 and calls[0].chunks == 4
    run_and_check(with_sinks(hostile(2, 2, 32, 128, seed=8), 32, seed=9), "sink, q by TMA")


def test_a_q_box_one_row_off_fails(q_tma, tmp_path):
    """The check sees the rows the boxes copy: boxes starting one row late fail it."""
    from tests.test_kernels import kernel_copy

    edit = ("            row0 = ((pid_s // q_div) * n_heads + h0).to(tl.int32)\n",
            "            row0 = ((pid_s // q_div) * n_heads + h0 + 1).to(tl.int32)\n")
    q_tma(kernel_copy("sparse_decode_split_fp8", tmp_path / "q_off.py", [edit]))
    with pytest.raises(AssertionError, match="elements off|cosine"):
        run_and_check(hostile(2, 1, 64, 128, seed=13))
