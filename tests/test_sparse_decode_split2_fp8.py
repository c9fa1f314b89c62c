"""The two-producer split FP8 sparse MLA decode (tle_kernels/sparse_decode_split2_fp8.py, launched
by tle_kernels/sparse_decode_split2_fp8_launch.py) on the CPU:

- its protocol: tle-dump proves it for every ROUNDS (read specialised to TOPK), with the even and
  odd tile pipes each written by its own producer and read by both consumers;
- its lowering: the Gluon module comes out, but ptxas cannot compile it today: it allocates every
  partition's code under the launch's .maxnreg, 65,536 / 512 threads = 128 per thread for four
  warp groups (setmaxnreg moves registers at run time only), and the left's P·V_L wgmma (a
  [64, 256] fp32 accumulator, P in registers) needs 158. The test holds that fact (strict xfail:
  it fails loudly once the kernel compiles);
- its math, run by the CPU emulator (tle_compiler/testing/emulator.py) through the launcher
  against the fp32 reference with FlashMLA's sparse-decode tolerances: hostile indices (-1, the
  int32 extremes, past the cache) whose unnamed tokens are NaN, h_q 64 and 128, s_q 1 and 2,
  several persistent rounds, a row with no valid slot; a kernel whose odd-tile producer fills
  the even tiles' indices fails that comparison.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_decode_split2_fp8 as kmod  # noqa: E402
from tle_compiler.diagnostics import TleError  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels import sparse_decode_api as A  # noqa: E402
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,  # noqa: E402
                                                  sparse_decode_reference)
from tle_kernels.sparse_decode_split2_fp8_launch import (  # noqa: E402
    launch_sparse_split2_fp8, sparse_split2_fp8_unsupported_reason)

# FlashMLA's test scale, its sparse-decode tolerances and its element-wise check
from .gpu.test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL,  # noqa: E402
                                     SCALE, close)

KERNEL = kmod.__file__
ARGS = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


# ------------------------------------------------------------------------ protocol and lowering

def test_tle_dump_graph_verifies_for_every_round_count(capsys):
    from tle_compiler.cli.dump import main

    code = main(["--graph", KERNEL])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "read specialised to BLOCK_H=64, TOPK=2048" in err
    assert "# verdict: verified for every value of ROUNDS (every integer ROUNDS)" in out
    assert "producer_even --kv_even(kv_r)--> left, right    capacity 1" in out
    assert "producer_odd --kv_odd(kv_r)--> left, right    capacity 1" in out
    assert "producer_even --q(q_l, q_r, q_t)--> left    capacity 1" in out
    assert "left --prob(alpha, probs, sum_exp)--> right    capacity 1" in out


@pytest.mark.xfail(strict=True, raises=TleError,
                   reason="ptxas allocates every partition under the launch's .maxnreg (128 for "
                          "four warp groups); the left's P·V_L wgmma needs 158")
def test_compiles_for_sm90a_without_spills_or_serialized_wgmmas():
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    cfg = kmod.DEFAULT_CONFIG
    try:
        compiled = compile_kernel(kmod.sparse_decode_split2_fp8, dict(cfg["signature"]),
                                  dict(cfg["constexprs"]))
    except TleError as e:
        assert "Insufficient registers (128)" in str(e), e  # the reason named above, no other
        raise
    st = ptxas_stats(compiled)
    assert st["ok"] and st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"], st["log"]


def test_lowers_to_gluon_with_four_warp_groups():
    """Up to the Gluon module the lowering is whole: four partitions of 4 warps, the three
    workers' register requests, and producer A (the default) gets the 80 left of 4 x 128."""
    from tle_compiler.lowering.compile import gluon_source, kernel_info_of
    from tle_compiler.lowering.regs import default_budget

    cx = kmod.DEFAULT_CONFIG["constexprs"]
    src = gluon_source((KERNEL, "sparse_decode_split2_fp8"), cx, debug_waits=False).source
    assert "[4, 4, 4], [192, 160, 80])" in src
    assert default_budget(kernel_info_of((KERNEL, "sparse_decode_split2_fp8"), cx)) == 80


# ------------------------------------------------------------------------------ emulated math

@pytest.fixture
def emulated(monkeypatch):
    """The launcher runs the emulated kernel on ``sms`` persistent programs (default 3);
    ``emulated(path)`` puts the kernel of another file in its place."""
    from tle_compiler.testing.emulator import load_kernel_module

    def use(path=None, sms=3):
        emu = load_kernel_module(path or KERNEL, dot_dtypes=(torch.bfloat16,))
        monkeypatch.setattr(kmod, "sparse_decode_split2_fp8", emu.sparse_decode_split2_fp8)
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
    launch_sparse_split2_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse,
                             *(x[k] for k in ARGS))
    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
    return out, lse


def hostile(b, s_q, h_q, topk, seed, page=16, invalid=0.3, **kw):
    """FlashMLA's distribution with 30 % invalid slots, unnamed tokens NaN, on the CPU."""
    return make_sparse_decode_inputs(b, s_q, h_q, topk, page=page, device="cpu", seed=seed,
                                     invalid=invalid, **kw)


@pytest.mark.parametrize("b,s_q,h_q,topk", [(3, 1, 64, 256), (2, 2, 64, 128), (2, 1, 128, 384),
                                            (1, 2, 128, 128)],
                         ids=["b3-sq1-h64-topk256", "b2-sq2-h64-topk128", "b2-sq1-h128-topk384",
                              "b1-sq2-h128-topk128"])
def test_matches_the_reference_on_hostile_indices(emulated, b, s_q, h_q, topk):
    """b * s_q * h_q / 64 items on 3 programs (several rounds, the last repeating an item);
    s_q 1 writes lse in place, s_q 2 through the transposing scratch; topk 128 is one tile pair
    (both producers' index prefetches clamp to their own tile)."""
    run_and_check(hostile(b, s_q, h_q, topk, seed=b * 100 + s_q * 10 + h_q + topk))


def test_a_row_with_no_valid_index_and_page_61(emulated):
    """Mostly invalid slots, one row with none (out 0, lse +inf), pages of 61 tokens."""
    x = hostile(3, 2, 64, 256, seed=5, page=61, invalid=0.9)
    x["indices"][1, 0] = -1
    out, lse = run_and_check(x, "empty row")
    assert (out[1, 0] == 0).all() and (lse[1, :, 0] == float("inf")).all()


def test_an_odd_producer_on_the_even_tiles_fails(emulated, tmp_path):
    """The same kernel with producer B loading tile 2p's indices instead of tile 2p + 1's fails
    the comparison: the check sees which tiles each producer fills."""
    from tests.test_kernels import kernel_copy

    edit = ("            t_next = tl.load(idx_row + (2 * tl.minimum(p + 1, NP - 1) + 1) * BK + "
            "offs_k)",
            "            t_next = tl.load(idx_row + (2 * tl.minimum(p + 1, NP - 1)) * BK + offs_k)")
    emulated(kernel_copy("sparse_decode_split2_fp8", tmp_path / "odd_on_even.py", [edit]))
    with pytest.raises(AssertionError, match="elements off|cosine"):
        run_and_check(hostile(2, 1, 64, 512, seed=11))


# ----------------------------------------------------------------------------------- support

def test_unsupported_calls_say_why():
    meta = dict(device="meta")
    q = torch.empty(2, 1, 64, 576, dtype=torch.bfloat16, **meta)
    kc = torch.empty(4, 64, 1, 656, dtype=torch.uint8, **meta)
    idx = torch.empty(2, 1, 256, dtype=torch.int32, **meta)
    assert sparse_split2_fp8_unsupported_reason(q, kc, idx, True) is None
    for topk in (0, 64, 192):   # not a whole number of tile pairs
        odd = torch.empty(2, 1, topk, dtype=torch.int32, **meta)
        assert "multiple of 128" in sparse_split2_fp8_unsupported_reason(q, kc, odd, True)
    bf16 = torch.empty(4, 64, 1, 576, dtype=torch.bfloat16, **meta)
    assert sparse_split2_fp8_unsupported_reason(q, bf16, idx, False).startswith(
        "split2-fp8 reads the FP8 cache only")
    sink = torch.empty(64, **meta)
    assert "attn_sink" in sparse_split2_fp8_unsupported_reason(q, kc, idx, True, attn_sink=sink)
    with pytest.raises(NotImplementedError, match="'split2-fp8' cannot run"):
        launch_sparse_split2_fp8(q, kc, torch.empty(2, 1, 192, dtype=torch.int32, **meta),
                                 SCALE, True, None, None)


def test_a_batch_under_one_wave_runs_as_merged_pieces_of_whole_pairs(emulated, monkeypatch):
    """One row on 8 programs: it runs as 8 topk pieces of 2 tile pairs each (tail_split.py),
    merged by lse; the merge must give the unsplit answer (invalid indices in every piece)."""
    import tle_kernels.head_padding as hp

    emulated(sms=8)
    calls = []
    real = hp.run_split_any_heads
    monkeypatch.setattr(hp, "run_split_any_heads",
                        lambda *a, **kw: calls.append(a[-1]) or real(*a, **kw))
    run_and_check(hostile(1, 1, 64, 2048, seed=7, invalid=0.5), "tail split")
    assert len(calls) == 1 and calls[0].chunks == 8   # 2048 / 8 = 256: 2 pairs a piece
