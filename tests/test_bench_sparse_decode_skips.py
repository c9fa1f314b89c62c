"""tle_kernels/bench_sparse_decode.py runs each built implementation only where it supports the
case (sparse_decode_api's ``sparse_unsupported_reason``): with the seesaw built, it is checked and
timed on the bf16 cache at 16 / 128 heads and skipped, with its reason, on the FP8 cache and on
the features batch (an extra cache); the naive kernel runs everywhere. ``main`` end to end on the
CPU with the GPU pieces stood in for (tests/test_bench_sparse_decode.py's)."""

from __future__ import annotations

import json

from tle_kernels import bench_sparse_decode as B
from tle_kernels import sparse_decode_api as A

from .test_bench_sparse_decode import reference_launch
from .test_bench_sparse_decode import cpu_stand_ins as stand_ins  # noqa: F401 (a fixture)


def test_seesaw_runs_where_it_is_supported(stand_ins, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(A, "built_impls", lambda: ("naive", "seesaw"))
    launched = []
    launch = reference_launch(stand_ins)

    def recording(impl, q, *rest):
        launched.append((impl, tuple(q.shape)))
        return launch(impl, q, *rest)

    monkeypatch.setattr(A, "launch_sparse", recording)
    out = tmp_path / "r.json"
    rc = B.main(["--shape", "b64_s1_h128", "b128_s1_h16", "--topk", "128", "--s-kv", "256",
                 "--impl", "naive", "seesaw", "--json", str(out), "--plot", ""])
    text = capsys.readouterr().out
    assert rc == 0, text
    res = json.loads(out.read_text())
    ran = {(label, impl) for label, v in res["check"].items() for impl in v}
    # h_q 16 runs on the seesaw padded to 64 heads (head_padding.py)
    for label in ("b64_s1_h128 bf16 first 16", "b128_s1_h16 bf16 first 16"):
        assert (label, "seesaw") in ran, label
    for label in ("b64_s1_h128 fp8 first 16", "b128_s1_h16 fp8 first 16", "features bf16"):
        assert (label, "seesaw") not in ran and (label, "naive") in ran, label
    assert "seesaw     skip: seesaw reads a bf16 cache only" in text
    assert "skip: seesaw with an extra cache: its kernels store bf16 outputs only" in text
    timed = {(r["shape"], r["cache"], r["impl"]) for r in res["bench"] if "tflops" in r}
    assert {t for t in timed if t[2] == "seesaw"} == {("b64_s1_h128", "bf16", "seesaw"),
                                                      ("b128_s1_h16", "bf16", "seesaw")}
    assert sum(1 for t in timed if t[2] == "naive") == 4
    assert {s for i, s in launched if i == "seesaw"} == {(16, 1, 128, 576), (64, 1, 128, 576),
                                                         (16, 1, 16, 576), (128, 1, 16, 576)}
    assert "| b64_s1_h128 | bf16 | seesaw |" in res["table_markdown"]
