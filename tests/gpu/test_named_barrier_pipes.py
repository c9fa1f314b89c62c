"""Named-barrier pipes (``tle.pipe(barrier="named")``) on the GPU: the verified kernels of
tests/fixtures/named_barrier/ lowered and run, their results compared element-exact with torch.

The bundled seesaw kernels hand their exchanges over named barriers of 256 threads (two 4-warp
consumers); these kernels also cover a default partition as the writer (hop_commit, exchange),
a hop through an mbarrier pipe's commit, and a pipe between a 2-warp and a 4-warp partition
(three_partitions: ``bar.arrive`` / ``bar.sync`` over 192 threads). A wrong thread count or id
hangs or races, so the trip counts include a long run. The same kernels run on the CPU emulator
in tests/test_named_barrier_emulator.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "named_barrier"


def _load(stem: str):
    """The fixture file as a module of its own (its kernel lowered from its source)."""
    name = "named_barrier_" + stem.replace(".", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, FIXTURES / f"{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _rows(n: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(max(n, 1) * 64, generator=g).cuda()


def _nan_like(x):
    return torch.full_like(x, float("nan"))


@pytest.mark.parametrize("n", [0, 1, 2, 1000])
def test_hop_commit(n):
    mod = _load("hop_commit.ok")
    x = _rows(n, 0)
    y, z = _nan_like(x), _nan_like(x)
    mod.hop_commit[(1,)](x, y, z, n)
    torch.cuda.synchronize()
    k = n * 64
    assert torch.equal(y[:k], x[:k] + 1.0) and torch.equal(z[:k], x[:k] * 3.0)
    assert y[k:].isnan().all() and z[k:].isnan().all()


@pytest.mark.parametrize("n", [0, 1, 3, 1000])
def test_exchange(n):
    mod = _load("exchange.ok")
    a, b = _rows(n, 1), _rows(n, 2)
    out_a, out_b = _nan_like(a), _nan_like(a)
    mod.exchange[(1,)](a, b, out_a, out_b, n)
    torch.cuda.synchronize()
    k = n * 64
    assert torch.equal(out_a[:k], torch.maximum(a, b)[:k])
    assert torch.equal(out_b[:k], torch.maximum(a, b)[:k])
    assert out_a[k:].isnan().all() and out_b[k:].isnan().all()


@pytest.mark.parametrize("n", [0, 1, 4, 1000])
def test_three_partitions_with_a_192_thread_barrier(n):
    mod = _load("three_partitions.ok")
    x, z = _rows(n, 3), _rows(n, 4)
    out_a, out_c = _nan_like(x), _nan_like(x)
    mod.three[(1,)](x, z, out_a, out_c, n)
    torch.cuda.synchronize()
    k = n * 64
    assert torch.equal(out_a[:k], (x + z)[:k]) and torch.equal(out_c[:k], (x - z)[:k])
    assert out_a[k:].isnan().all() and out_c[k:].isnan().all()
