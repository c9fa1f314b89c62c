"""The benchmarks of the bundled kernels refuse to start without a CUDA GPU: one line naming what
is missing and exit status 2, where they used to fail inside torch with a traceback. Run
in-process with torch's CUDA reported unavailable, so the test means the same on a GPU machine."""

from __future__ import annotations

import importlib

import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("module", ["bench_mla_decode", "bench_sparse_decode", "bench_sparse_mla"])
def test_a_benchmark_without_a_gpu_exits_2_with_one_line(module, monkeypatch, capsys):
    bench = importlib.import_module(f"tle_kernels.{module}")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert bench.main(["--quick"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: this benchmark needs a CUDA GPU"), err


def test_help_still_works_without_a_gpu(monkeypatch, capsys):
    bench = importlib.import_module("tle_kernels.bench_mla_decode")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit) as e:
        bench.main(["--help"])
    assert e.value.code == 0 and "--anchor" in capsys.readouterr().out
