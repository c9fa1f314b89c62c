"""lowering/instrument.py: probes and tests change the lowering only inside a ``with`` block, and
what they change never reaches a compile made outside it (the runtime's cache keys on it).
The gather probe's ``skip_fills`` is tested with its benchmark (tests/test_gather_probe.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import gluon_source, instrument  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RING = (str(ROOT / "tle_kernels/examples/ring.py"), "ring_sum")


def _inits(src: str) -> dict[str, list[int]]:
    """barrier array → its mbarrier.init counts, in stage order."""
    out: dict[str, list[int]] = {}
    for var, count in re.findall(r"mbarrier\.init\((\w+)\.index\(\d+\), count=(\d+)\)", src):
        out.setdefault(var, []).append(int(count))
    return out


def test_plan_hook_changes_the_barriers_only_inside_the_block():
    seen = []

    def double_empty_counts(plans):  # a deliberately broken barrier, as tests/gpu/test_debug_waits.py
        seen.append(sorted(plans))
        for arr in plans["ring"].empty():
            assert arr.init_counts  # set before the hook runs
            arr.init_counts = [2 * c for c in arr.init_counts]

    base = _inits(gluon_source(RING).source)
    with instrument.plan_hook(double_empty_counts):
        broken = _inits(gluon_source(RING).source)
    assert seen == [["ring"]]
    empty = [v for v in base if "empty" in v]
    assert empty and all(broken[v] == [2 * c for c in base[v]] for v in empty)
    assert all(broken[v] == base[v] for v in base if v not in empty)
    assert _inits(gluon_source(RING).source) == base  # the hook is gone after the block


def test_hooks_nest_and_run_outermost_first():
    order = []
    with instrument.plan_hook(lambda plans: order.append("outer")):
        with instrument.plan_hook(lambda plans: order.append("inner")):
            gluon_source(RING)
        gluon_source(RING)
    gluon_source(RING)
    assert order == ["outer", "inner", "outer"]


def test_runtime_cache_keeps_instrumented_compiles_apart(monkeypatch):
    torch = pytest.importorskip("torch")
    from tle_kernels.examples.ring import ring_sum

    compiles = []

    def fake_compile(target, sig, cx, **kw):  # what the lowering would see: the active instruments
        compiles.append(instrument.key(ring_sum.file))
        return compiles[-1]

    monkeypatch.setattr("tle_compiler.lowering.compile.compile_kernel", fake_compile)
    rt = ring_sum.runtime
    monkeypatch.setattr(rt, "cache", {})  # other tests may have compiled ring_sum already
    bound = rt.bind((torch.zeros(64, 64), torch.zeros(64, 64), 64, 1), {})
    plain = rt.compile(bound)
    with instrument.skip_fills("ring", path=ring_sum.file):
        probe = rt.compile(bound)
        assert rt.compile(bound) is probe
    with instrument.skip_fills("ring", path="elsewhere.py"):  # another file's probe: the plain kernel
        assert rt.compile(bound) is plain
    assert rt.compile(bound) is plain
    assert plain == () and probe == ((), ("ring",)) and len(compiles) == 2
