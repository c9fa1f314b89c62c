"""Interleaved timing of several callables in one process: each repetition times every case once
(`triton.testing.do_bench`, warm-up 50 ms, 200 ms: the benchmark's protocol), so a slow stretch of
the machine hits all cases alike; the medians over repetitions are what the A/B scripts compare."""

from __future__ import annotations

from typing import Callable, Dict, List


def interleaved_tflops(cases: Dict[str, Callable[[], None]], flop: float, reps: int,
                       label: str = "") -> Dict[str, List[float]]:
    """TFLOP/s of every case in every repetition (``flop`` per call). Each case runs once first,
    outside the timing (compilation); a progress line per repetition."""
    import torch
    import triton.testing

    for f in cases.values():
        f()
    torch.cuda.synchronize()
    res: Dict[str, List[float]] = {k: [] for k in cases}
    for rep in range(reps):
        for k, f in cases.items():
            res[k].append(flop / triton.testing.do_bench(f, warmup=50, rep=200) / 1e9)
        print(f"{label}rep {rep + 1}/{reps} done", flush=True)
    return res
