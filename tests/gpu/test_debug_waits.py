"""Debug waits on the GPU (docs/lowering.md, "Debug waits"): a deliberately broken lowering traps
within the bound with the pipe name and index in its output instead of hanging, and a correct kernel
with the option on still computes the right result.

The broken kernel: ring.py's ring_sum (capacity 3) compiled inside ``instrument.plan_hook``
(tle_compiler/lowering/instrument.py) so that the ring's empty barriers are initialised with count 2
while the single reader arrives once per release: the producer's acquire(3) (stage 0, parity 0) can
never complete (and so the consumer's wait(3) neither). Each case runs in a subprocess under a timeout: a trapped
kernel poisons the CUDA context of its process. Run: ``python3 -m pytest -m gpu -v
tests/gpu/test_debug_waits.py`` (about 20 s, most of it compiling)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 0.5
TIMEOUT_S = 120  # a hang would hit this; the bounded wait must fail long before

PRELUDE = textwrap.dedent("""
    import sys, time
    import torch
    from tle_compiler.lowering import compile_kernel, instrument
    from tle_kernels.examples.ring import ring_sum
    SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "stride_x": "i32", "N_TILES": "i32"}
    n = int(sys.argv[1])
    x = torch.randn(n * 64, 64, device="cuda")
    out = torch.full((64, 64), float("nan"), device="cuda")
""")

BROKEN = PRELUDE + textwrap.dedent("""
    def double_empty_counts(plans):  # the deliberate lowering bug
        for arr in plans["ring"].empty():
            arr.init_counts = [2 * c for c in arr.init_counts]
    with instrument.plan_hook(double_empty_counts):
        c = compile_kernel(ring_sum, SIG, debug_waits=sys.argv[2])
    print("TLE-LAUNCH", flush=True)
    t0 = time.time()
    try:
        c[(1, 1, 1)](x, out, x.stride(0), n)
        torch.cuda.synchronize()
    except Exception as e:  # the trap: CUDA error (illegal instruction / launch failure)
        print(f"TLE-TRAPPED after {time.time() - t0:.3f} s: {type(e).__name__}: {e}", flush=True)
        sys.exit(3)
    print("TLE-NO-TRAP", flush=True)
""")

CORRECT = PRELUDE + textwrap.dedent("""
    ring_sum[(1,)](x, out, x.stride(0), n, debug_waits=True)
    torch.cuda.synchronize()
    ref = x.view(n, 64, 64).sum(0)
    ok = torch.allclose(out, ref, rtol=1e-5, atol=1e-4)
    print("TLE-RESULT", "ok" if ok else f"WRONG max err {(out - ref).abs().max().item()}", flush=True)
    sys.exit(0 if ok else 1)
""")


def _run(script: str, *args: str):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("TLE_DEBUG_WAITS", None)
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as e:  # pragma: no cover - the failure this feature prevents
        pytest.fail(f"the kernel hung (no trap within {TIMEOUT_S} s): {e.stdout!r} {e.stderr!r}")
    return r, time.time() - t0


def test_broken_barrier_traps_with_pipe_and_index():
    n = 4  # acquire(3) needs the release of index 0 to complete empty[0]: count 2 never is
    r, _ = _run(BROKEN, str(n), f"{BOUND_S}s")
    out = r.stdout + r.stderr
    assert "TLE-LAUNCH" in out, out[-4000:]
    assert "TLE-NO-TRAP" not in out, out[-4000:]
    assert r.returncode != 0, out[-4000:]
    # the launch failed within the bound (plus the trap's 20 ms hold and slack), not a timeout
    assert "TLE-TRAPPED after" in out, out[-4000:]
    elapsed = float(out.split("TLE-TRAPPED after ")[1].split(" s")[0])
    assert elapsed < BOUND_S + 10, out[-4000:]
    # the printf line: kernel, partition, pipe, verb, index, stage, parity
    lines = [ln for ln in out.splitlines() if "tle debug-waits" in ln]
    assert lines, out[-4000:]
    assert all("kernel ring_sum" in ln and "pipe ring" in ln for ln in lines), lines
    producer = [ln for ln in lines if "acquire(t) on empty[g0]" in ln]
    consumer = [ln for ln in lines if "wait(t) on full[g0]" in ln]
    assert producer or consumer, lines
    for ln in producer:  # acquire(3): stage 3 % 3 = 0, parity (3 // 3 & 1) ^ 1 = 0
        assert "stage 0, parity 0; index" in ln and ln.rstrip().endswith(" 3"), ln
    for ln in consumer:  # wait(3): stage 0, parity 1
        assert "stage 0, parity 1; index" in ln and ln.rstrip().endswith(" 3"), ln


def test_correct_kernel_with_debug_waits_is_right():
    r, _ = _run(CORRECT, "7")
    out = r.stdout + r.stderr
    assert r.returncode == 0 and "TLE-RESULT ok" in out, out[-4000:]
    assert "tle debug-waits" not in out, out[-4000:]
