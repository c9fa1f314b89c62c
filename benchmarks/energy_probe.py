"""Energy per call and the SM clock of SparseMLA kernels at the H200's power cap.

    python3 benchmarks/energy_probe.py tle_kernels/sparse_mla_seesaw.py [MORE.py ...]
                                       [--skv 8192 131072] [--secs 4] [--no-matmul] [--states]

Each kernel file (as benchmarks/ab_sparse_mla.py takes them: a bundled kernel, a variant, a gather
probe copy) runs back to back at the headline shape for 1 s to reach steady power and then for
``--secs`` seconds while NVML's total-energy counter and SM clock are read; a bf16 8192³ matmul
runs first as the reference. Printed per kernel: ms per call, TFLOP/s, average watts, mJ per call,
pJ per FLOP and the median SM clock. ``--states`` also times each kernel the way the benchmark does
(``triton.testing.do_bench``, 50 ms warm-up, 200 ms) after 5 s idle, right after 2 s of matmul and
after 4 s of itself: how much a single figure depends on the power state before it.

Why it exists (docs/BENCHMARKS.md, "Method"): every SparseMLA kernel and the matmul
run at the board's 700 W limit (NVML throttle reason "SW power cap"): the seesaw at ~1.69 GHz
(8K) and ~1.56 GHz (128K), not at its 1.98 GHz boost. Under the cap TFLOP/s = watts / (energy per
FLOP), so a change that saves energy (fewer bytes fetched from L2, fewer instructions) gains even
when it removes no stall, and a change that only removes stalls gains less than its cycle count
suggests (the clock drops as the work per cycle rises).
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def busy(fn, secs: float) -> None:
    """Run ``fn`` back to back for ``secs`` seconds."""
    import torch

    t0 = time.time()
    while time.time() - t0 < secs:
        fn()
        torch.cuda.synchronize()


def probe(name: str, fn, flop: float, secs: float) -> dict:
    """Run ``fn`` back to back (1 s to settle, then ``secs`` measured) and read NVML meanwhile:
    the energy counter at both ends of the measured run, the SM clock during it (the benchmark's
    ClockSampler)."""
    import pynvml
    import torch

    from tle_kernels.bench_sparse_mla import ClockSampler

    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    fn()
    torch.cuda.synchronize()
    time.sleep(2)  # the same start for every kernel
    busy(fn, 1.0)
    with ClockSampler(nvml=pynvml, period_s=0.02) as clock:
        e0, t0, n = pynvml.nvmlDeviceGetTotalEnergyConsumption(h), time.time(), 0
        while time.time() - t0 < secs:
            for _ in range(4):
                fn()
            n += 4
            torch.cuda.synchronize()
        dt, e1 = time.time() - t0, pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
    joules = (e1 - e0) / 1e3 / n  # the counter is in mJ
    r = dict(name=name, ms=dt / n * 1e3, tflops=flop / (dt / n) / 1e12, watts=(e1 - e0) / 1e3 / dt,
             mj=joules * 1e3, pj_per_flop=joules / flop * 1e12, clock_mhz=clock.clock_mhz)
    print(f"{name:34s} {r['ms']:7.3f} ms/call {r['tflops']:6.1f} TFLOP/s {r['watts']:5.0f} W "
          f"{r['mj']:7.1f} mJ/call {r['pj_per_flop']:5.3f} pJ/FLOP  SM clock median "
          f"{r['clock_mhz']:.0f} MHz", flush=True)
    return r


def states(name: str, fn, flop: float, matmul) -> None:
    """The benchmark's timing of ``fn`` after three different histories."""
    import triton.testing

    for label, before in (("after 5 s idle", lambda: time.sleep(5)),
                          ("after 2 s of matmul", lambda: busy(matmul, 2)),
                          ("after 4 s of itself", lambda: busy(fn, 4))):
        before()
        ms = triton.testing.do_bench(fn, warmup=50, rep=200, return_mode="median")
        print(f"{name:34s} do_bench {label:22s} {flop / ms / 1e9:6.1f} TFLOP/s", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="kernel files (see benchmarks/ab_sparse_mla.py)")
    ap.add_argument("--skv", type=int, nargs="*", default=[8192])
    ap.add_argument("--secs", type=float, default=4.0, help="measured seconds per kernel")
    ap.add_argument("--no-matmul", action="store_true", help="skip the bf16 matmul reference")
    ap.add_argument("--states", action="store_true",
                    help="also time each kernel with do_bench after idle / matmul / itself")
    args = ap.parse_args(argv)

    import pynvml
    import torch

    from benchmarks.ab_sparse_mla import load
    from benchmarks.sparse_mla_smoke import TOPK, outputs, run
    from tle_kernels.reference import make_inputs

    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    print(f"{pynvml.nvmlDeviceGetName(h)}: power limit "
          f"{pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000:.0f} W, max SM clock "
          f"{pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)} MHz", flush=True)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    matmul = lambda: a @ b  # noqa: E731
    if not args.no_matmul:
        probe("matmul 8192^3 (torch)", matmul, 2 * 8192 ** 3, args.secs)
    kernels = {p: load(p) for p in args.paths}
    sm_scale = 1.0 / math.sqrt(576)
    flop = 2 * 4096 * 128 * TOPK * (576 + 512)
    for skv in args.skv:
        q, kv, idx = make_inputs(4096, skv, 128, TOPK, seed=3)
        bufs = outputs(q)
        for p, k in kernels.items():
            fn = functools.partial(run, k, q, kv, idx, sm_scale, TOPK, bufs)
            probe(f"{Path(p).name} skv={skv}", fn, flop, args.secs)
            if args.states:
                states(f"{Path(p).name} skv={skv}", fn, flop, matmul)
        del q, kv, idx, bufs
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
