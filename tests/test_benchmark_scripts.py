"""The benchmark scripts that need a GPU still explain themselves on a machine without one (their
imports of torch and triton are inside main, after argument parsing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("script, words", [
    ("benchmarks/ab_tail_split.py", ("tail_split", "--reps", "--impl")),
    ("benchmarks/ab_prefill_features.py", ("attn_sink", "topk_length", "--reps", "--warmup")),
    ("benchmarks/anchor_flashmla.py", ("--lib", "FlashMLA", "--skv")),
    ("benchmarks/run_flashmla_decode_test.py", ("--tests", "--sample", "FlashMLA")),
])
def test_help_without_a_gpu(script, words):
    r = subprocess.run([sys.executable, str(ROOT / script), "--help"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for w in words:
        assert w in r.stdout, (w, r.stdout)


def test_anchor_script_needs_its_library():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks/anchor_flashmla.py")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--lib" in r.stderr


def test_flashmla_test_runner_needs_the_test_folder(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks/run_flashmla_decode_test.py"),
                        "--tests", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "test_flash_mla_dense_decoding.py" in r.stderr


def test_flashmla_test_runner_lists_the_tests_cases():
    """The runner rebuilds the test's case lists from its TestParam: a stand-in TestParam shows the
    sample is drawn from the correctness cases (only h_q divisible by h_kv) and every corner case
    is kept."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import run_flashmla_decode_test as R
    finally:
        sys.path.pop(0)

    class T:
        @staticmethod
        def TestParam(*a, **k):
            return (a, tuple(sorted(k.items())))

    sampled, corner, n_all = R.cases(T, 50, 0)
    assert n_all == 2304 and len(sampled) == 50 and len(set(sampled)) == 50
    assert len(corner) == 32
    assert all(dict(k)["h_q"] % dict(k)["h_kv"] == 0 for _, k in sampled + corner)
    assert R.cases(T, 50, 0)[0] == sampled and R.cases(T, 50, 1)[0] != sampled
