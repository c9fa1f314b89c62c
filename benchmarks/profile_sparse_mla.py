"""Launch one SparseMLA kernel a few times at one shape, for a profiler to capture (Nsight Compute):

    ncu --kernel-name regex:sparse_mla --launch-skip 2 --launch-count 1 --set full \\
        --import-source yes -o seesaw python3 benchmarks/profile_sparse_mla.py seesaw --sq 1024
    ncu -i seesaw.ncu-rep --page source --csv --print-source sass > seesaw_sass.csv
    python3 benchmarks/stall_report.py seesaw_sass.csv      # where each partition's warps wait

KERNEL: `pipe`, `seesaw`, `narrow`, `naive`, or a kernel file as benchmarks/ab_sparse_mla.py
takes; `--h` sets the head count (the narrow-head kernel takes h_q <= 32).
Inputs as in docs/sparse_mla.md (the headline shape by default, SQ reduced to keep the replay short).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.ab_sparse_mla import load  # noqa: E402
from benchmarks.sparse_mla_smoke import TOPK, make_inputs, outputs, run  # noqa: E402


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernel", help="pipe | seesaw | narrow | naive | PATH.py")
    ap.add_argument("--h", type=int, default=128, help="query heads (default 128)")
    ap.add_argument("--sq", type=int, default=1024)
    ap.add_argument("--skv", type=int, default=8192)
    ap.add_argument("--launches", type=int, default=3)
    args = ap.parse_args()
    q, kv, idx = make_inputs(args.sq, args.skv, args.h, TOPK, seed=2)
    sm_scale = 1.0 / math.sqrt(576)
    if args.kernel in ("pipe", "seesaw", "narrow", "naive"):
        from tle_kernels.api import sparse_mla_prefill

        def go():
            sparse_mla_prefill(q, kv, idx, sm_scale, impl=args.kernel)
    else:
        fn = load(args.kernel)
        bufs = outputs(q)

        def go():
            run(fn, q, kv, idx, sm_scale, TOPK, bufs)
    for _ in range(args.launches):
        go()
    torch.cuda.synchronize()
    print(f"{args.kernel}: {args.launches} launches at SQ={args.sq} SKV={args.skv}", flush=True)


if __name__ == "__main__":
    main()
