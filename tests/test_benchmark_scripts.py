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
    ("benchmarks/anchor_flashmla.py", ("--lib", "FlashMLA", "--skv")),
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
