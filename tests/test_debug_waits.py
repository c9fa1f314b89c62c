"""Debug waits on the CPU (lowering/debug.py, docs/lowering.md "Debug waits"): with the option on,
every mbarrier wait the lowering emits is a bounded ``mbarrier.try_wait.parity`` loop (the bound in
the PTX) followed by a printf naming the wait and a ``trap``; with it off, nothing changes. The GPU
half (a broken kernel traps with the pipe and index instead of hanging) is
tests/gpu/test_debug_waits.py."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.cli.dump import main as dump_main  # noqa: E402
from tle_compiler.frontend import read_kernels  # noqa: E402
from tle_compiler.lowering import compile_kernel, gluon_source  # noqa: E402
from tle_compiler.lowering.debug import Bound, barrier_offsets, parse_bound  # noqa: E402
from tle_compiler.lowering.compile import kernel_info_of  # noqa: E402
from tle_compiler.lowering.dumping import default_config  # noqa: E402

from .test_lowering import KERNELS  # noqa: E402  (the lowered kernels: one table for both files)

ROOT = Path(__file__).resolve().parent.parent
_cache: dict = {}


def _info_cfg(key):
    path, name = KERNELS[key]
    cfg = default_config(str(ROOT / path), name)
    return kernel_info_of((str(ROOT / path), name), cfg.get("constexprs", {})), cfg


def compiled(key: str, debug_waits):
    k = (key, str(debug_waits))
    if k not in _cache:
        info, cfg = _info_cfg(key)
        _cache[k] = compile_kernel(info, cfg["signature"], cfg.get("constexprs", {}),
                                   num_warps=cfg.get("num_warps"), debug_waits=debug_waits)
    return _cache[k]


def printf_formats(ptx: str) -> list[str]:
    """The printf format strings of a PTX module (``.global .b8 printfFormat_N[] = {...}``)."""
    out = []
    for m in re.finditer(r"printfFormat_\d+\[\d+\] = \{([\d, ]+)\}", ptx):
        out.append(bytes(int(x) for x in m.group(1).split(",")).decode(errors="replace"))
    return out


def test_parse_bound():
    assert parse_bound(None) is None and parse_bound(False) is None
    assert parse_bound("") is None and parse_bound("0") is None and parse_bound("off") is None
    assert parse_bound(True) == Bound("ns", 2_000_000_000) == parse_bound("1") == parse_bound(1)
    assert parse_bound("500ms") == Bound("ns", 500_000_000)
    assert parse_bound("0.25s") == Bound("ns", 250_000_000) == parse_bound(0.25)
    assert parse_bound("3") == Bound("ns", 3_000_000_000)
    assert parse_bound("1000000polls") == Bound("polls", 1_000_000)
    assert parse_bound("1e6polls") == Bound("polls", 1_000_000)
    with pytest.raises(ValueError):
        parse_bound("soon")


@pytest.mark.parametrize("spec", ["1e400s", "1e400", 1e300, float("inf"), "18446744073709551616ns",
                                  "1e30s"])
def test_a_bound_past_what_the_wait_counts_is_too_large(spec):
    # outside tle-dump (compile_kernel, launches under $TLE_DEBUG_WAITS) too: infinity was an
    # OverflowError of int(), and a bound past 64 bits of nanoseconds went into the PTX literal
    with pytest.raises(OverflowError, match="too large"):
        parse_bound(spec)
    assert parse_bound("1000000000s") == Bound("ns", 10**18)  # 31 years: still counted


def test_off_changes_nothing(monkeypatch):
    monkeypatch.delenv("TLE_DEBUG_WAITS", raising=False)
    info, cfg = _info_cfg("ring")
    plain = gluon_source(info, cfg.get("constexprs", {})).source
    assert plain == gluon_source(info, cfg.get("constexprs", {}), debug_waits=False).source
    assert "_tle" not in plain and "try_wait" not in plain
    assert plain.count("mbarrier.wait(") == 4
    off = compiled("ring", False)
    assert "ttng.wait_barrier" in off.asm["ttgir"]
    assert "trap;" not in off.asm["ptx"] and "%globaltimer" not in off.asm["ptx"]


def test_ring_bounded_waits_in_ptx():
    c = compiled("ring", True)
    gen = c.tle_generated
    ptx, ttgir = c.asm["ptx"], c.asm["ttgir"]
    # every wait site: acquire(t), close(N_TILES), wait(t), wait(N_TILES)
    assert len(gen.wait_sites) == 4
    assert "ttng.wait_barrier" not in ttgir  # no unbounded wait left
    assert "waitLoop" not in ptx  # Triton's own (unbounded) wait loop
    assert ptx.count("mbarrier.try_wait.parity.shared::cta.b64") == 4
    assert ptx.count("%globaltimer") >= 4 and "2000000000" in ptx  # the bound: 2 s
    assert ptx.count("trap;") >= 4
    fmts = [f for f in printf_formats(ptx) if "tle debug-waits" in f]
    for needle in ("partition load_tiles: pipe ring: acquire(t) on empty[g0] (line 28)",
                   "partition load_tiles: pipe ring: close(N_TILES) on empty[g0] (line 31)",
                   "partition sum_tiles: pipe ring[-]: wait(t) on full[g0] (line 40)",
                   "partition sum_tiles: pipe ring[-]: wait(N_TILES) on full[g0] (line 43)"):
        site = [f for f in fmts if needle in f]
        assert len(site) == 6, needle  # one per (stage, parity) at capacity 3: one line each
        assert all("kernel ring_sum" in f and "timed out after 2 s" in f for f in site)
        assert {re.search(r"stage (\d), parity (\d)", f).groups() for f in site} == \
            {(str(s), str(p)) for s in range(3) for p in (0, 1)}
        assert all(f.rstrip().endswith("index: (operand 0) %i") or "index" in f for f in site)


def test_offsets_are_the_allocators():
    c = compiled("ring", True)
    offs = barrier_offsets(c.asm["ttgir"])
    src = c.tle_generated.source
    for var in ("ring_full0", "ring_empty0"):
        assert f"_TLE_OFF_{var} = gl.constexpr({offs[var]})" in src
        assert offs[var] > 0


def test_poll_bound_and_cache_key():
    a = compiled("ring", "1000polls")
    assert "setp.lt.u32" in a.asm["ptx"] and ", 1000;" in a.asm["ptx"]
    assert "%globaltimer" in a.asm["ptx"]  # only in the trap's 20 ms hold
    b, off = compiled("ring", True), compiled("ring", False)
    assert len({a.hash, b.hash, off.hash}) == 3  # distinct Triton cache entries


def test_runtime_key_includes_the_bound(monkeypatch):
    from tle_kernels.examples.ring import ring_sum
    from tle_compiler.lowering import runtime

    seen = []
    monkeypatch.setattr("tle_compiler.lowering.compile.compile_kernel",
                        lambda *a, **k: seen.append(k["debug_waits"]) or object())
    rt = runtime.Runtime(ring_sum)
    bound = {"x_ptr": 1, "out_ptr": 2, "stride_x": 64, "N_TILES": 4}
    monkeypatch.setattr(runtime, "arg_type", lambda n, v, k, loc=None: "i32")
    monkeypatch.delenv("TLE_DEBUG_WAITS", raising=False)
    rt.compile(bound)
    rt.compile(bound, debug_waits=True)
    monkeypatch.setenv("TLE_DEBUG_WAITS", "500ms")
    rt.compile(bound)
    rt.compile(bound, debug_waits=False)
    assert len(rt.cache) == 3
    assert seen == [False, Bound("ns", 2_000_000_000), Bound("ns", 500_000_000)]


@pytest.mark.parametrize("key", list(KERNELS))
def test_every_kernel_compiles_with_debug_waits(key):
    c = compiled(key, True)
    gen = c.tle_generated
    plain = gluon_source(*[_info_cfg(key)[0], _info_cfg(key)[1].get("constexprs", {})],
                         debug_waits=False).source
    n_waits = plain.count("mbarrier.wait(")
    assert len(gen.wait_sites) == n_waits > 0
    assert gen.source.count("_tle_try_wait(_TLE_OFF_") == n_waits
    assert "mbarrier.wait(" not in gen.source
    assert "ttng.wait_barrier" not in c.asm["ttgir"]
    ptx = c.asm["ptx"]
    assert ptx.count("mbarrier.try_wait.parity.shared::cta.b64") >= n_waits
    assert "trap;" in ptx
    fmts = "\n".join(printf_formats(ptx))
    for site in gen.wait_sites:
        pipe = site.split(":")[0]  # "pipe <name>" or "pipe <name>[<reader>]"
        assert pipe in fmts


def test_tle_dump_debug_waits():
    path = str(ROOT / KERNELS["ring"][0])
    out = io.StringIO()
    with redirect_stdout(out):
        assert dump_main(["--ttgir", "--debug-waits", path]) == 0
    text = out.getvalue()
    assert "mbarrier.try_wait.parity" in text and "ttng.wait_barrier" not in text
    out = io.StringIO()
    with redirect_stdout(out):
        assert dump_main(["--gluon", "--debug-waits", "--wait-bound", "500ms", path]) == 0
    assert "500000000" in out.getvalue() and "_TLE_OFF_ring_full0 = gl.constexpr(0)" not in \
        out.getvalue()
    out = io.StringIO()
    with redirect_stdout(out):
        assert dump_main(["--ttgir", path]) == 0
    assert "ttng.wait_barrier" in out.getvalue()
