"""A/B of the last-wave split (tle_kernels/tail_split.py): each TLE kernel launched through
``tle_kernels.api.launch`` with ``tail_split=False`` and ``True``, interleaved in one process at the
headline shape, medians of ``--reps`` do_bench runs (warm-up 50 ms, 200 ms, as the benchmark).

    python3 benchmarks/ab_tail_split.py [--impl seesaw pipe] [--skv 8192 131072] [--reps 3]

``api.SPLITS_TAIL`` says which kernels split by default; this forces the split for every impl
given, so that a kernel left out can be measured again.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", nargs="+", default=["seesaw", "pipe"], choices=["seesaw", "pipe"])
    ap.add_argument("--skv", type=int, nargs="+", default=[8192, 131072])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sq", type=int, default=4096)
    ap.add_argument("--h", type=int, default=128)
    ap.add_argument("--topk", type=int, default=2048)
    args = ap.parse_args(argv)

    import torch

    from tle_kernels import api
    from benchmarks.interleaved import interleaved_tflops
    from tle_kernels.bench_sparse_mla import flops
    from tle_kernels.reference import make_inputs

    api.SPLITS_TAIL = tuple(args.impl)
    sm_scale = 1 / math.sqrt(576)
    fl = flops(args.sq, args.h, args.topk)
    for skv in args.skv:
        q, kv, idx = make_inputs(args.sq, skv, args.h, args.topk, seed=3)
        bufs = api.empty_outputs(q)
        cases = {f"{impl}{' split' if split else ''}":
                 (lambda impl=impl, split=split:
                  api.launch(impl, q, kv, idx, sm_scale, *bufs, tail_split=split))
                 for impl in args.impl for split in (False, True)}
        res = interleaved_tflops(cases, fl, args.reps, f"skv={skv}: ")
        for impl in args.impl:
            a, b = statistics.median(res[impl]), statistics.median(res[impl + " split"])
            print(f"skv={skv}: {impl:7s} {a:6.1f} TFLOP/s {[round(x, 1) for x in res[impl]]}  "
                  f"split {b:6.1f} {[round(x, 1) for x in res[impl + ' split']]}  "
                  f"split/unsplit {b / a:.3f}", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
