"""A/B of the seesaw prefill with FlashMLA's optional features against the plain seesaw: each
call through ``tle_kernels.api.launch("seesaw", ...)`` plain, with ``attn_sink`` (randn(H)), with
``topk_length`` equal to topk on every row (the per-row kernel doing all the work), and with both,
interleaved in one process at the headline shape; medians of ``--reps`` do_bench runs.

    python3 benchmarks/ab_prefill_features.py [--skv 8192 32768 131072] [--reps 3]
                                              [--warmup 25] [--rep 100]

What it answers: what attn_sink and topk_length cost when they change nothing about the work
(the sparse decode work's bar: each >= 0.97x the plain seesaw).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--skv", type=int, nargs="+", default=[8192, 32768, 131072])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=25, help="do_bench warm-up, ms")
    ap.add_argument("--rep", type=int, default=100, help="do_bench timing, ms")
    ap.add_argument("--sq", type=int, default=4096)
    ap.add_argument("--h", type=int, default=128)
    ap.add_argument("--topk", type=int, default=2048)
    args = ap.parse_args(argv)

    import torch

    from benchmarks.interleaved import interleaved_tflops
    from tle_kernels import api
    from tle_kernels.bench_sparse_mla import flops
    from tle_kernels.reference import make_inputs

    sm_scale = 1 / math.sqrt(576)
    fl = flops(args.sq, args.h, args.topk)
    for skv in args.skv:
        q, kv, idx = make_inputs(args.sq, skv, args.h, args.topk, seed=3)
        bufs = api.empty_outputs(q)
        sink = torch.randn(args.h, device=q.device, generator=torch.Generator(
            device=q.device).manual_seed(5))
        full = torch.full((args.sq,), args.topk, dtype=torch.int32, device=q.device)
        options = {"plain": {}, "attn_sink": dict(attn_sink=sink),
                   "topk_length full": dict(topk_length=full),
                   "both": dict(attn_sink=sink, topk_length=full)}
        cases = {name: (lambda kw=kw: api.launch("seesaw", q, kv, idx, sm_scale, *bufs, **kw))
                 for name, kw in options.items()}
        res = interleaved_tflops(cases, fl, args.reps, f"skv={skv}: ", args.warmup, args.rep)
        plain = statistics.median(res["plain"])
        for name in options:
            m = statistics.median(res[name])
            print(f"skv={skv}: {name:16s} {m:6.1f} TFLOP/s {[round(x, 1) for x in res[name]]}  "
                  f"x{m / plain:.3f} of plain", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
