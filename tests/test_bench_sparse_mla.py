"""tle_kernels/bench_sparse_mla.py on the CPU: the d_qk of each ``--case``, the TFLOP/s formula,
and ``main --case d512 --check`` end to end with the GPU pieces stood in for (inputs on the CPU,
a launch that writes the reference's result or NaN, a fixed time): it checks and times the
implementations that take d_qk = 512 on 512-wide rows, at 1/sqrt(512), counting 512 + 512 dims,
and says that no FlashMLA anchor runs at that width."""

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
    assert [B.case_d_qk(c) for c in B.CASES] == [576, 576, 576, 512]
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
