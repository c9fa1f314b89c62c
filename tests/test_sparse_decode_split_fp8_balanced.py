"""The balanced split FP8 sparse decode (tle_kernels/sparse_decode_split_fp8_balanced.py, launched
by tle_kernels/sparse_decode_split_fp8_balanced_launch.py) on the CPU: tle-dump proves its
protocol for every tile count NG; it compiles for sm_90a without spills or serialized wgmmas;
the cut points and the piece count agree with a brute-force walk; and, run by the CPU emulator
through the launcher against the fp32 reference with FlashMLA's sparse-decode tolerances,
segments that start and end inside items, on hostile indices (their unnamed tokens NaN), with
rows that have no valid slot, h_q not a multiple of 64, s_q 2 and attn_sink, merge to the
unsplit answer, and pieces no segment writes are not read."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tle_kernels.sparse_decode_split_fp8_balanced as bmod  # noqa: E402
from tle_kernels import api  # noqa: E402
from tle_kernels import sparse_decode_api as A  # noqa: E402
from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,  # noqa: E402
                                                  sparse_decode_reference)
from tle_kernels.sparse_decode_rows import RowOutputs, token_rows  # noqa: E402
from tle_kernels.sparse_decode_split_fp8_balanced_launch import (  # noqa: E402
    balanced_cuts, pieces_per_item, run_balanced)

from .gpu.test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL,  # noqa: E402
                                     SCALE, close)


def test_tle_dump_verifies_for_every_tile_count(capsys):
    from tle_compiler.cli.dump import main

    code = main(["--graph", bmod.__file__])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "# verdict: verified for every value of NG (every integer NG)" in out
    assert "producer --q(q_l, q_r, q_t)--> left    capacity 1" in out


def test_compiles_for_sm90a_without_spills_or_serialized_wgmmas():
    from tle_compiler.lowering import compile_kernel, ptxas_stats

    cfg = bmod.DEFAULT_CONFIG
    compiled = compile_kernel(bmod.sparse_decode_split_fp8_balanced, dict(cfg["signature"]),
                              dict(cfg["constexprs"]))
    st = ptxas_stats(compiled)
    assert st["ok"] and st["spill_stores"] == 0 and st["spill_loads"] == 0, st["log"]
    assert not st["wgmma_serialized"], st["log"]
    assert "[4, 4], [192, 160])" in compiled.tle_generated.source


@pytest.mark.parametrize("items,nt,programs", [(72, 32, 132), (128, 32, 132), (200, 32, 132),
                                               (5, 8, 8), (3, 8, 8), (9, 4, 7), (1, 2, 2)])
def test_cuts_and_pieces_per_item_match_a_walk(items, nt, programs):
    x = items * nt
    cuts = balanced_cuts(x, programs, "cpu").tolist()
    assert cuts[0] == 0 and cuts[-1] == x and all(a <= b for a, b in zip(cuts, cuts[1:]))
    owners = {}
    for p in range(programs):
        for tile in range(cuts[p], cuts[p + 1]):
            owners.setdefault(tile // nt, set()).add(p)
    assert pieces_per_item(items, nt, programs) == max(len(v) for v in owners.values())
    # each item's programs are consecutive, so piece j = p - first program is below J
    assert all(max(v) - min(v) + 1 == len(v) for v in owners.values())


@pytest.fixture
def emulated(monkeypatch):
    """The balanced kernel replaced by its CPU emulation; ``use(sms)`` sets the SM count."""
    from tle_compiler.testing.emulator import load_kernel_module

    emu = load_kernel_module(bmod.__file__, dot_dtypes=(torch.bfloat16,))
    monkeypatch.setattr(bmod, "sparse_decode_split_fp8_balanced",
                        emu.sparse_decode_split_fp8_balanced)

    def use(sms):
        monkeypatch.setattr(api, "sm_count", lambda device: sms)
    return use


def run(x, sink=None):
    q, indices = x["q"], x["indices"]
    b, s_q = q.shape[:2]
    t = b * s_q
    out, lse = A.empty_outputs(q)
    out.fill_(float("nan"))
    lse.fill_(float("nan"))
    rows = RowOutputs(out, lse)
    run_balanced(token_rows(q, t), x["k_cache"], token_rows(indices, t), rows.out3, rows.lse2,
                 rows.max_logits, SCALE, sink)
    rows.finish()
    return out, lse


@pytest.mark.parametrize("b,s_q,h_q,topk,sms,sink", [
    (5, 1, 64, 512, 8, False),     # 40 tiles on 8 programs: segments of 5 across items
    (3, 2, 100, 256, 7, False),    # 2 head blocks, rows past h_q masked; 48 tiles on 7
    (4, 1, 128, 192, 5, True),     # attn_sink applied by the merge; 3 tiles per item on 5
], ids=["b5-h64", "b3-sq2-h100", "b4-h128-sink"])
def test_matches_the_reference(emulated, b, s_q, h_q, topk, sms, sink):
    emulated(sms)
    x = make_sparse_decode_inputs(b, s_q, h_q, topk, page=16, device="cpu", seed=b * 10 + h_q,
                                  invalid=0.3, attn_sink=sink)
    x["indices"][b - 1, s_q - 1] = -1            # a row with no valid slot: out 0, lse +inf
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 x["attn_sink"])
    out, lse = run(x, x["attn_sink"])
    close("out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close("lse", lse, want_lse, LSE_ABS, LSE_REL)
    assert (out[b - 1, s_q - 1] == 0).all() and (lse[b - 1, :, s_q - 1] == float("inf")).all()


def test_use_balanced_takes_batches_just_over_half_a_wave():
    import tle_kernels.sparse_decode_split_fp8_launch as L

    assert [b for b in range(1, 140) if L.use_balanced(2 * b, 132, 128)] == list(range(34, 41))
    assert not L.use_balanced(80, 132, 100)          # h_q % 16: the merge's head blocks
    assert L.use_balanced(80, 132, 64) and not L.use_balanced(82, 132, 64)


def test_the_launcher_runs_it_where_its_rule_says(emulated, monkeypatch):
    """Nine rows of one head block on 16 SMs (9 items: more than half, at most 0.62 of them, so
    no split fits one round): launch_sparse_split_fp8 runs the balanced kernel, with s_q 2 (lse
    through the launcher's transposed rows) and topk_length (slots past it as -1); the result
    is the reference's."""
    import tle_kernels.sparse_decode_split_fp8_launch as L

    emulated(16)
    ran = []
    real = bmod.sparse_decode_split_fp8_balanced
    monkeypatch.setattr(bmod, "sparse_decode_split_fp8_balanced",
                        type("Spy", (), {"__getitem__": lambda self, g: ran.append(g) or real[g]})())
    x = make_sparse_decode_inputs(3, 3, 64, 256, page=16, device="cpu", seed=5, invalid=0.3,
                                  topk_length=[256, 100, 7])
    want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, SCALE,
                                                 None, x["topk_length"])
    out, lse = A.empty_outputs(x["q"])
    L.launch_sparse_split_fp8(x["q"], x["k_cache"], x["indices"], SCALE, True, out, lse, None,
                              x["topk_length"])
    assert ran == [(1, 16)]
    close("out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL, OUT_COS)
    close("lse", lse, want_lse, LSE_ABS, LSE_REL)
