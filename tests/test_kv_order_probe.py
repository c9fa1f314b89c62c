"""benchmarks/kv_order_probe.py's bucket order (a counting sort of each query's indices by KV
position bucket), run in Triton's interpreter on the CPU: a permutation of every row, buckets in
increasing order, the original order kept inside a bucket, invalid indices in the last bucket.
It runs in a subprocess: the interpreter patches triton.language, which the CPU emulator of the
other tests also does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent

CHECK = r'''
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("kv_order_probe", sys.argv[1])
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)
for s_kv, topk, nb in [(1000, 256, 16), (70000, 2048, 8), (300, 576, 4), (5, 64, 32)]:
    g = torch.Generator().manual_seed(s_kv)
    idx = torch.randint(-3, s_kv + 3, (5, 1, topk), generator=g, dtype=torch.int32)
    idx[0] = torch.iinfo(torch.int32).min
    idx[1, 0, :5] = 2**31 - 1
    out = probe.kv_bucket_order(idx, s_kv, nb)

    def buckets(x):
        valid = (x >= 0) & (x < s_kv)
        return torch.where(valid, x.long() * nb // s_kv, nb - 1)

    assert torch.equal(out.sort(-1).values, idx.sort(-1).values), "not a permutation"
    b = buckets(out)
    assert (b[..., 1:] >= b[..., :-1]).all(), "buckets out of order"
    for r in range(idx.shape[0]):
        for k in range(nb):
            assert torch.equal(idx[r, 0][buckets(idx[r, 0]) == k], out[r, 0][b[r, 0] == k]), \
                "order inside a bucket changed"
try:
    probe.kv_bucket_order(torch.zeros(1, 1, 64, dtype=torch.int32), 10, 6)
    raise SystemExit("n_buckets=6 was accepted")
except ValueError as e:
    assert "n_buckets" in str(e)
print("OK")
'''


def test_bucket_order_is_a_stable_bucket_sort():
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, "-c", CHECK, str(ROOT / "benchmarks/kv_order_probe.py")],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), r.stdout + r.stderr
