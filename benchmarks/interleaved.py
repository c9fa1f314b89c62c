"""Interleaved timing of several callables in one process: each repetition times every case once
(`triton.testing.do_bench`, warm-up 50 ms, 200 ms: the benchmark's protocol), so a slow stretch of
the machine hits all cases alike; the medians over repetitions are what the A/B scripts compare."""

from __future__ import annotations

from typing import Callable, Dict, List


def interleaved_tflops(cases: Dict[str, Callable[[], None]], flop: float, reps: int,
                       label: str = "", warmup: int = 50, rep: int = 200) -> Dict[str, List[float]]:
    """TFLOP/s of every case in every repetition (``flop`` per call). Each case runs once first,
    outside the timing (compilation); a progress line per repetition. ``warmup`` / ``rep``:
    do_bench's milliseconds (the benchmark's 50 / 200 unless a script says otherwise)."""
    import torch
    import triton.testing

    for f in cases.values():
        f()
    torch.cuda.synchronize()
    res: Dict[str, List[float]] = {k: [] for k in cases}
    for i in range(reps):
        for k, f in cases.items():
            res[k].append(flop / triton.testing.do_bench(f, warmup=warmup, rep=rep) / 1e9)
        print(f"{label}rep {i + 1}/{reps} done", flush=True)
    return res


def graph_replay_ms(fn: Callable[[], None], warmup: int, rep: int) -> float:
    """Milliseconds of one call of ``fn`` replayed from a CUDA graph (do_bench's median), the graph
    captured after one call outside it (compilation, first-call metadata)."""
    import torch
    import triton.testing

    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return triton.testing.do_bench(g.replay, warmup=warmup, rep=rep)
