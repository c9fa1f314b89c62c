"""tle_kernels/bench_sparse_decode.py on the CPU: its arguments and ``--help``, the TFLOP/s and
GB/s formulas, FlashMLA's sparse-decode tolerances in ``errors``, the bars against FlashMLA's
recorded figures or an anchor, the ``--anchor`` hook (a clear exit when its script is missing),
and ``main`` end to end with the GPU pieces stood in for (inputs on the CPU, a launch that writes
the reference's result or NaN, a fixed time)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tle_kernels import bench_sparse_decode as B
from tle_kernels import sparse_decode_api as A
from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference

ROOT = Path(__file__).resolve().parent.parent


def test_help_without_a_gpu():
    r = subprocess.run([sys.executable, "-m", "tle_kernels.bench_sparse_decode", "--help"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for word in ("--shape", "--cache", "--impl", "--anchor", "--check", "b128_s1_h64", "fp8"):
        assert word in r.stdout, word


def test_arguments():
    a = B.parse_args([])
    assert a.shape == list(B.SHAPES) and a.cache == ["fp8", "bf16"] and a.impl == list(A.IMPLS)
    assert (a.topk, a.s_kv, a.reps, a.anchor, a.check) == (2048, 32768, 1, None, False)
    assert B.SHAPES["b64_s2_h128"] == (64, 2, 128) and B.SHAPES["b128_s1_h16"] == (128, 1, 16)
    a = B.parse_args(["--shape", "b64_s1_h128", "--cache", "fp8", "--impl", "naive", "--topk",
                      "512", "--check", "--no-graph", "--plot", ""])
    assert a.shape == ["b64_s1_h128"] and a.cache == ["fp8"] and a.impl == ["naive"]
    assert a.topk == 512 and a.check and a.no_graph and a.plot == ""
    for bad in (["--topk", "100"], ["--topk", "0"], ["--shape", "b1"], ["--cache", "fp16"],
                ["--impl", "flash"], ["--reps", "0"], ["--shape", "b0_s1_h128"],
                ["--shape", "b4_s1_h128x"]):
        with pytest.raises(SystemExit):
            B.parse_args(bad)
    # a shape spelled out (small batches): any bB_sS_hH
    a = B.parse_args(["--shape", "b1_s1_h128", "b4_s2_h64"])
    assert [B.parse_shape(n) for n in a.shape] == [(1, 1, 128), (4, 2, 64)]
    assert all(B.parse_shape(n) == v for n, v in B.SHAPES.items())


def test_flop_and_byte_formulas():
    # 2 * b * s_q * h_q * topk * (576 + 512)
    assert B.flops(64, 1, 128, 2048) == 2 * 64 * 128 * 2048 * 1088 == 36_507_222_016
    assert B.flops(64, 2, 128, 2048) == 2 * B.flops(64, 1, 128, 2048)
    assert B.flops(128, 1, 16, 2048) == B.flops(64, 2, 128, 2048) / 8
    # at FlashMLA's recorded 387 TFLOP/s, b64_s1_h128 takes 94.3 us
    assert math.isclose(B.flops(64, 1, 128, 2048) / 387.0e12 * 1e6, 94.33, rel_tol=1e-3)
    # token rows as stored (656 / 1152 bytes) plus bf16 q and out
    assert B.bytes_moved(2, 1, 16, 64, "fp8") == 2 * 64 * 656 + 2 * 2 * 16 * 1088
    assert B.bytes_moved(2, 1, 16, 64, "bf16") == 2 * 64 * 1152 + 2 * 2 * 16 * 1088


def test_errors_use_flashmla_tolerances():
    want_out = torch.randn(2, 1, 4, 512)
    want_lse = torch.randn(2, 4, 1)
    want_lse[1, 0, 0] = math.inf
    want_out[1, 0, 0] = 0
    ok, info = B.errors(want_out.bfloat16(), want_lse.clone(), (want_out, want_lse))
    assert ok and info["out_off"] == 0 and info["lse_off"] == 0
    out = want_out.bfloat16()
    out[0, 0, 0, 0] += 0.5                              # one element far off
    assert not B.errors(out, want_lse.clone(), (want_out, want_lse))[0]
    lse = want_lse.clone()
    lse[0, 1, 0] += 1e-3 * abs(lse[0, 1, 0]).item() + 1e-5   # beyond 8/65536 relative and 1e-6
    assert B.errors(want_out.bfloat16(), lse, (want_out, want_lse))[1]["lse_off"] == 1
    lse = want_lse.clone()
    lse[1, 0, 0] = 3.0                                  # +inf where the reference has it: no
    assert B.errors(want_out.bfloat16(), lse, (want_out, want_lse))[1].get("lse_inf_mismatch")
    nan = want_out.bfloat16()
    nan[0, 0, 1, 3] = float("nan")
    ok, info = B.errors(nan, want_lse.clone(), (want_out, want_lse))
    assert not ok and info["out_nan"]



def test_dense_and_sparse_benchmarks_keep_their_own_out_tolerance():
    """Both benchmarks check through bench_output.flashmla_errors with their FlashMLA test's
    tolerances: an out element 9e-4 off (relative error past 2/128) passes the sparse decode's
    abs 1e-3 and fails the dense decode's 8e-4."""
    from tle_kernels import bench_mla_decode as D

    want_out = torch.full((1, 1, 2, 512), 0.03125)
    want_lse = torch.zeros(1, 2, 1)
    out = want_out.bfloat16()
    out[0, 0, 0, 0] = 0.03125 + 0.0009765625            # exact in bf16: 2^-10 off, 3 % relative
    ok_sparse, info = B.errors(out, want_lse.clone(), (want_out, want_lse))
    ok_dense, info_dense = D.errors(out, want_lse.clone(), (want_out, want_lse))
    assert info["out_off"] == 0 and info_dense["out_off"] == 1
    assert info_dense["out_max_abs"] == info["out_max_abs"] == 0.0009765625
    assert ok_sparse is True and ok_dense is False

def rows(*entries):
    return [dict(shape=s, cache=c, impl=i, tflops=t) for s, c, i, t in entries]


def test_bars_against_recorded_figures():
    lines = dict((t.split(":")[0], (t, met)) for t, met in B.bar_lines(rows(
        ("b64_s1_h128", "fp8", "naive", 200.0), ("b64_s1_h128", "fp8", "seesaw", 400.0),
        ("b64_s1_h128", "fp8", "pipe", 380.0), ("b128_s1_h128", "fp8", "pipe", 300.0),
        ("b64_s2_h128", "bf16", "seesaw", 999.0)), anchored=False))
    assert len(lines) == 4
    text, met = lines["TLE sparse decode >= 1.0x FlashMLA, b64_s1_h128 fp8"]
    assert met and "seesaw 400.0 vs 387.0" in text and "recorded" in text      # best TLE kernel
    text, met = lines["TLE sparse decode >= 1.0x FlashMLA, b128_s1_h128 fp8"]
    assert met is False and "pipe 300.0 vs 406.0" in text and "0.739x" in text
    text, met = lines["TLE sparse decode >= 1.0x FlashMLA, b64_s2_h128 fp8"]    # bf16 not a bar
    assert met is None and "no TLE sparse decode kernel run" in text
    assert lines["TLE sparse decode >= 1.0x FlashMLA, b128_s1_h64 fp8"][1] is None


def test_bars_against_an_anchor():
    bars = B.bar_lines(rows(("b64_s1_h128", "fp8", "seesaw", 400.0),
                            ("b64_s1_h128", "fp8", B.ANCHOR, 420.0),
                            ("b128_s1_h128", "fp8", "seesaw", 400.0)), anchored=True)
    assert bars[0][1] is False and "400.0 vs 420.0" in bars[0][0] and "measured here" in bars[0][0]
    assert bars[1][1] is None and "FlashMLA (--anchor) not run" in bars[1][0]


def test_anchor_hook(tmp_path):
    with pytest.raises(SystemExit, match=r"^--anchor: .*none\.py not found"):
        B.load_anchor("libflash.so", tmp_path / "none.py")
    script = tmp_path / "anchor.py"
    script.write_text("def load_sparse_decode_anchor(lib):\n    return ('anchor', lib)\n")
    assert B.load_anchor("libflash.so", script) == ("anchor", "libflash.so")
    assert B.ANCHOR_SCRIPT == ROOT / "benchmarks" / "anchor_flashmla_sparse_decode.py"


@pytest.fixture
def cpu_stand_ins(monkeypatch):
    """The GPU pieces of main() stood in for: inputs made on the CPU, a fixed 0.1 ms time, no
    device name / synchronisation; ``launched`` records (impl, cache format) of every launch.
    The launch itself is set by each test. main() turns TF32 matmuls off; the setting is put back
    afterwards by hand (it is a property of torch's cuBLAS module, which pytest's monkeypatch
    cannot restore on every pytest version: 9.2 deletes it at teardown)."""
    launched = []
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "stand-in")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda *a: None)
    tf32 = torch.backends.cuda.matmul.allow_tf32

    def inputs(*a, **kw):
        kw["device"] = "cpu"
        return make_sparse_decode_inputs(*a, **kw)

    monkeypatch.setattr(B, "make_sparse_decode_inputs", inputs)
    monkeypatch.setattr(A, "built_impls", lambda: ("naive",))
    monkeypatch.setattr(B, "time_ms", lambda f, graph, warmup, rep: (f(), (0.1, "graph"))[1])
    yield launched
    torch.backends.cuda.matmul.allow_tf32 = tf32


def reference_launch(launched, poison=False):
    def launch(impl, q, k_cache, indices, sm_scale, is_fp8, out, lse, *rest):
        launched.append((impl, is_fp8))
        o, l = sparse_decode_reference(q, k_cache, indices, 512, sm_scale, *rest)
        out.copy_(o)
        lse.copy_(l)
        if poison:
            out[0, 0, 0, 0] = float("nan")
        return impl
    return launch


def test_main_end_to_end(cpu_stand_ins, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(A, "launch_sparse", reference_launch(cpu_stand_ins))
    out = tmp_path / "r.json"
    rc = B.main(["--shape", "b64_s1_h128", "b128_s1_h16", "--topk", "64", "--s-kv", "128",
                 "--impl", "naive", "seesaw", "--check", "--json", str(out), "--plot", ""])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "skip seesaw: the sparse decode has no 'seesaw' kernel yet" in text
    res = json.loads(out.read_text())
    # checks: 2 shapes x 2 caches, as timed and with attn_sink, + a features batch per cache,
    # all passing
    firsts = [f"{s} {c} first 16{k}" for s in ("b64_s1_h128", "b128_s1_h16")
              for c in ("fp8", "bf16") for k in ("", " sink")]
    assert sorted(res["check"]) == sorted(firsts + ["features fp8", "features bf16"])
    assert all(v["naive"]["ok"] for v in res["check"].values())
    bench = {(r["shape"], r["cache"]): r for r in res["bench"]}
    assert set(bench) == {(s, c) for s in ("b64_s1_h128", "b128_s1_h16") for c in ("fp8", "bf16")}
    r = bench[("b64_s1_h128", "fp8")]
    assert r["impl"] == "naive" and r["ms"] == 0.1 and r["timing"] == "graph"
    assert math.isclose(r["tflops"], B.flops(64, 1, 128, 64) / 0.1 / 1e9)
    assert math.isclose(bench[("b128_s1_h16", "bf16")]["gbps"],
                        B.bytes_moved(128, 1, 16, 64, "bf16") / 0.1 / 1e6)
    assert "| b64_s1_h128 | fp8 | naive | 0.1000 |" in res["table_markdown"]
    assert "(recorded)" in res["table_markdown"]          # b64_s1_h128 fp8 against FlashMLA's
    assert [b["met"] for b in res["bars"]] == [None] * 4   # no TLE sparse kernel is built yet
    assert {c for _, c in cpu_stand_ins} == {True, False}
    assert "bars:" in text and "check features fp8" in text


def test_extra_topk_times_the_extra_cache_path(cpu_stand_ins, monkeypatch, tmp_path, capsys):
    """--extra-topk N: the timed inputs carry an extra cache of N valid slots per row, TFLOP/s
    counts topk + N slots, and the anchor (which takes no extra cache) is not timed."""
    timed_inputs = []
    launch = reference_launch(cpu_stand_ins)

    def recording(impl, q, k_cache, indices, sm_scale, is_fp8, out, lse, *rest):
        timed_inputs.append(rest[2:4])                    # extra_k_cache, extra_indices
        return launch(impl, q, k_cache, indices, sm_scale, is_fp8, out, lse, *rest)

    monkeypatch.setattr(A, "launch_sparse", recording)
    monkeypatch.setattr(B, "load_anchor", lambda lib: lambda *a: pytest.fail("anchor timed"))
    out = tmp_path / "r.json"
    rc = B.main(["--shape", "b128_s1_h16", "b64_s1_h128", "--cache", "fp8", "--topk", "64",
                 "--s-kv", "128", "--extra-topk", "128", "--anchor", "stand-in", "--check",
                 "--json", str(out), "--plot", ""])
    text = capsys.readouterr().out
    assert rc == 0, text
    res = json.loads(out.read_text())
    assert res["extra_topk"] == 128
    r = next(r for r in res["bench"] if r["shape"] == "b128_s1_h16")
    assert math.isclose(r["tflops"], B.flops(128, 1, 16, 64 + 128) / 0.1 / 1e9)
    # the timed launches (b = 128 rows) got an extra cache and 128 extra slots per row
    timed = [(xk, xi) for xk, xi in timed_inputs if xi is not None and xi.shape[0] == 128]
    assert timed and all(xk is not None and xi.shape == (128, 1, 128) for xk, xi in timed)
    assert "an extra cache, 128 slots of 256 tokens" in text
    # FlashMLA's figures are without an extra cache: no ratio to them, no bar measured
    assert "(recorded)" not in res["table_markdown"]
    assert [b["met"] for b in res["bars"]] == [None] * 4
    assert all("--extra-topk" in b["bar"] for b in res["bars"])
    for bad in (["--extra-topk", "100"], ["--extra-topk", "-64"]):
        with pytest.raises(SystemExit):
            B.parse_args(bad)


def test_topk_length_times_rows_of_that_length(cpu_stand_ins, monkeypatch, tmp_path, capsys):
    """--topk-length N: every timed row carries topk_length N, TFLOP/s counts N slots, and the
    anchor (which takes no topk_length here) is not timed and no bar is measured."""
    timed_lengths = []
    launch = reference_launch(cpu_stand_ins)

    def recording(impl, q, k_cache, indices, sm_scale, is_fp8, out, lse, *rest):
        if indices.shape[0] == 128:                       # the timed batch (b = 128)
            timed_lengths.append(rest[1])                 # topk_length
        return launch(impl, q, k_cache, indices, sm_scale, is_fp8, out, lse, *rest)

    monkeypatch.setattr(A, "launch_sparse", recording)
    monkeypatch.setattr(B, "load_anchor", lambda lib: lambda *a: pytest.fail("anchor timed"))
    out = tmp_path / "r.json"
    rc = B.main(["--shape", "b128_s1_h16", "--cache", "fp8", "bf16", "--topk", "64", "--s-kv",
                 "128", "--topk-length", "40", "--anchor", "stand-in", "--check", "--json",
                 str(out), "--plot", ""])
    text = capsys.readouterr().out
    assert rc == 0, text
    res = json.loads(out.read_text())
    assert res["topk_length"] == 40
    assert all(math.isclose(r["tflops"], B.flops(128, 1, 16, 40) / 0.1 / 1e9)
               for r in res["bench"])
    assert timed_lengths and all(t is not None and t.tolist() == [40] * 128
                                 for t in timed_lengths)
    assert "topk_length 40 on every row" in text
    assert "(recorded)" not in res["table_markdown"]
    assert [b["met"] for b in res["bars"]] == [None] * 4
    assert all("--topk-length" in b["bar"] for b in res["bars"])
    for bad in (["--topk-length", "4096"], ["--topk-length", "-1"]):
        with pytest.raises(SystemExit):
            B.parse_args(bad)


def test_main_fails_on_a_wrong_result(cpu_stand_ins, monkeypatch, capsys):
    monkeypatch.setattr(A, "launch_sparse", reference_launch(cpu_stand_ins, poison=True))
    rc = B.main(["--shape", "b128_s1_h16", "--cache", "fp8", "--topk", "64", "--s-kv", "128",
                 "--plot", ""])
    text = capsys.readouterr().out
    assert rc == 1 and "FAIL out_nan True" in text


class Recorder:
    """Stands in for a matplotlib object: records every method call as (name, args, kwargs)."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))


def test_plot_panels():
    axes = [Recorder(), Recorder()]

    class Plt:
        @staticmethod
        def subplots(rows, cols, figsize, squeeze):
            assert (rows, cols, squeeze) == (1, 2, False)
            return "fig", [axes]

    table = {(s, c, i): dict(tflops=t) for s, c, i, t in [
        ("b64_s1_h128", "fp8", "naive", 150.0), ("b128_s1_h16", "fp8", "naive", 40.0),
        ("b64_s1_h128", "bf16", "naive", 140.0)]}
    shapes = {k: B.SHAPES[k] for k in ("b64_s1_h128", "b128_s1_h16")}
    assert B.draw(Plt, table, shapes, ["fp8", "bf16"], ["naive", "seesaw", B.ANCHOR], True) == "fig"
    bars = [c for c in axes[0].calls if c[0] == "bar"]
    assert len(bars) == 1 and bars[0][1][1] == [150.0, 40.0] and bars[0][2]["label"] == "naive"
    marks = [c for c in axes[0].calls if c[0] == "plot"]
    assert len(marks) == 1 and marks[0][1][:2] == ([0], [387.0])   # FlashMLA's, fp8 panel only
    assert not [c for c in axes[1].calls if c[0] == "plot"]
    assert [c[1][1] for c in axes[1].calls if c[0] == "bar"] == [[140.0]]
    assert ("set_title", ("sparse decode, bf16 cache",), {}) in axes[1].calls
