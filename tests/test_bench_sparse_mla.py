"""tle_kernels/bench_sparse_mla.py on the CPU: the d_qk of each ``--case``, the TFLOP/s formula,
and ``main --case d512 --check`` end to end with the GPU pieces stood in for (inputs on the CPU,
a launch that writes the reference's result or NaN, a fixed time): it checks and times the
implementations that take d_qk = 512 on 512-wide rows, at 1/sqrt(512), counting 512 + 512 dims,
and says that no FlashMLA anchor runs at that width; ``--case h16 / h32`` runs H 16 / 32 at SKV
32K and ``--check`` states the head-count bar (>= 2x naive, above FlashMLA padded to 64 heads) as
met or not met from the run's own timings."""

from __future__ import annotations

import json
import math
import sys

import pytest

torch = pytest.importorskip("torch")

from tle_kernels import bench_sparse_mla as B  # noqa: E402
from tle_kernels.reference import make_inputs, sparse_mla_reference  # noqa: E402


def test_case_widths_and_flops():
    assert "d512" in B.CASES
    assert [B.case_d_qk(c) for c in B.CASES] == [576, 576, 576, 512, 576, 576]
    assert B.flops(4096, 128, 2048) == 2 * 4096 * 128 * 2048 * 1088
    assert B.flops(4096, 128, 2048, 512) == 2 * 4096 * 128 * 2048 * 1024
    assert B.case_args("d512", 8, 64, 128) == {} and B.case_args("plain", 8, 64, 128) == {}


@pytest.fixture
def cpu_stand_ins(monkeypatch):
    """main() on the CPU: inputs made on the CPU, CUDA calls and NVML stubbed, do_bench calling
    the function once and reporting 2 ms; ``calls`` records each launch's (impl, d_qk,
    sm_scale)."""
    import triton.testing

    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "stand-in")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda *a: None)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(B, "make_inputs", lambda *a, **kw: make_inputs(*a, device="cpu", **kw))
    monkeypatch.setattr(B, "sm_count", lambda device: 132)
    monkeypatch.setattr(triton.testing, "do_bench", lambda f, **kw: (f(), 2.0)[1])
    calls = []

    def launch(poison):
        def run(impl, q, kv, idx, sm_scale, out, ml, lse, **kw):
            calls.append((impl, q.shape[-1], kv.shape[-1], sm_scale))
            r_out, r_ml, r_lse = sparse_mla_reference(q, kv, idx, sm_scale)
            out.copy_(r_out.to(out.dtype)), ml.copy_(r_ml), lse.copy_(r_lse)
            if poison and impl == "seesaw":
                out.fill_(float("nan"))
            return impl
        monkeypatch.setattr(B, "launch", run)
    return calls, launch


def _main(tmp_path, *extra):
    js = tmp_path / "r.json"
    code = B.main(["--case", "d512", "--sq", "8", "--h", "64", "--topk", "128", "--skv", "300",
                   "--plot", "", "--json", str(js), *extra])
    return code, js


def test_main_times_the_d512_case(cpu_stand_ins, tmp_path, capsys):
    calls, launch = cpu_stand_ins
    launch(poison=False)
    code, js = _main(tmp_path, "--check")
    out = capsys.readouterr().out
    assert code == 0, out
    assert "note: no FlashMLA anchor at d_qk = 512" in out
    assert "skip pipe: does not support" in out
    assert {c[0] for c in calls} == {"naive", "seesaw"}
    assert all(c[1:] == (512, 512, 1 / math.sqrt(512)) for c in calls)
    res = json.loads(js.read_text())
    assert res["shape"]["d_qk"] == 512 and res["case"] == "d512"
    assert all(v["ok"] for per in res["check"].values() for v in per.values())
    tf = {r["impl"]: r["tflops"] for r in res["bench"]}
    assert tf == pytest.approx({"naive": 2 * 8 * 64 * 128 * 1024 / 2.0 / 1e9,
                                "seesaw": 2 * 8 * 64 * 128 * 1024 / 2.0 / 1e9})
    assert "TFLOP/s = 2*SQ*H*topk*(512+512)/median" in out


def test_main_fails_when_the_d512_check_fails(cpu_stand_ins, tmp_path, capsys):
    _, launch = cpu_stand_ins
    launch(poison=True)
    code, js = _main(tmp_path, "--check")
    assert code == 1
    check = json.loads(js.read_text())["check"]
    assert not any(per["seesaw"]["ok"] for per in check.values())
    assert all(per["naive"]["ok"] for per in check.values())


# --------------------------------------------------------------- the tensor-parallel head counts

def row(tflops):
    return dict(tflops=tflops)


def test_head_count_bars_from_the_run():
    table = {(32768, "naive"): row(138.0), (32768, "seesaw"): row(290.0),
             (8192, "seesaw"): row(999.0)}
    (bar,) = B.head_count_bars(table, 16, 4096, 2048, 576, "h16")
    assert bar["over_naive"] == pytest.approx(290 / 138) and bar["over_naive_met"]
    assert bar["over_flashmla_padded_met"] and bar["flashmla_padded_tflops"] == 142.0
    (bar,) = B.head_count_bars(table, 32, 4096, 2048, 576, "plain")
    assert bar["over_naive_met"] and bar["over_flashmla_padded_met"]  # 290 > 267
    table[(32768, "seesaw")] = row(150.0)
    (bar,) = B.head_count_bars(table, 32, 4096, 2048, 576, "h32")
    assert not bar["over_naive_met"] and not bar["over_flashmla_padded_met"]
    (line,) = B.bar_lines([bar])
    assert line == ("bar h_q=32 skv=32768: seesaw 150.0 TFLOP/s = 1.09x naive (138.0), bar >= 2x "
                    "naive: not met; FlashMLA padded to 64 heads 267 (recorded), bar above it: "
                    "not met")
    del table[(32768, "naive")]
    (bar,) = B.head_count_bars(table, 16, 4096, 2048, 576, "h16")
    assert bar["over_naive"] is None and not bar["over_naive_met"]
    assert "no naive timing in this run" in B.bar_lines([bar])[0]
    # other shapes, features or head counts have no such bar
    for args in ((64, 4096, 2048, 576, "plain"), (16, 1024, 2048, 576, "h16"),
                 (16, 4096, 1024, 576, "h16"), (16, 4096, 2048, 512, "d512"),
                 (16, 4096, 2048, 576, "sink")):
        assert B.head_count_bars(table, *args) == []
    assert B.head_count_bars({(8192, "seesaw"): row(1.0)}, 16, 4096, 2048, 576, "h16") == []
    # the faster of the narrow-head kernel and the seesaw counts, by name
    table = {(32768, "naive"): row(200.0), (32768, "seesaw"): row(290.0),
             (32768, "narrow"): row(410.0)}
    (bar,) = B.head_count_bars(table, 32, 4096, 2048, 576, "h32")
    assert bar["impl"] == "narrow" and bar["over_naive"] == pytest.approx(2.05)
    assert bar["over_naive_met"] and B.bar_lines([bar])[0].startswith(
        "bar h_q=32 skv=32768: narrow 410.0 TFLOP/s = 2.05x naive (200.0), bar >= 2x naive: met")
    table[(32768, "narrow")] = row(280.0)
    assert B.head_count_bars(table, 32, 4096, 2048, 576, "h32")[0]["impl"] == "seesaw"
    assert B.head_count_bars({(32768, "narrow"): row(1.0)}, 16, 4096, 2048, 576, "h16")[0][
        "impl"] == "narrow"


def test_main_h16_times_16_heads_at_32k_and_states_the_bar(cpu_stand_ins, tmp_path, capsys,
                                                           monkeypatch):
    """--case h16 --check (S shrunk to 8 tokens, the bar's shape set to match): H 16 at SKV 32K
    unless --skv; the seesaw timed 2.5x faster than the naive kernel meets the first half of the
    bar, and at a few TFLOP/s misses the second."""
    import triton.testing

    calls, launch = cpu_stand_ins
    launch(poison=False)
    monkeypatch.setattr(B, "SQ", 8)
    ms = {"naive": 2.5, "seesaw": 1.0}
    monkeypatch.setattr(triton.testing, "do_bench", lambda f, **kw: (f(), ms[calls[-1][0]])[1])
    js = tmp_path / "r.json"
    code = B.main(["--case", "h16", "--sq", "8", "--plot", "", "--json", str(js), "--check",
                   "--impl", "naive", "seesaw"])
    out = capsys.readouterr().out
    assert code == 0, out
    res = json.loads(js.read_text())
    assert res["shape"]["H"] == 16 and {r["skv"] for r in res["bench"]} == {32768}
    (bar,) = res["bars"]
    assert bar["over_naive"] == pytest.approx(2.5) and bar["over_naive_met"]
    assert not bar["over_flashmla_padded_met"]
    assert "bar h_q=16 skv=32768: seesaw " in out and "bar >= 2x naive: met;" in out
    assert "FlashMLA padded to 64 heads 142 (recorded), bar above it: not met" in out
