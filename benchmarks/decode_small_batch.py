"""The dense decode at small batches: the seesaw (as ``impl="seesaw"`` runs it: its balanced
schedule, partials and combine where a batch leaves SMs idle), the pipe decode split as the
decode API's metadata splits it, and FlashMLA's dense decode, in one process.

    python3 benchmarks/decode_small_batch.py --anchor LIB [--batches 1 2 4 8 16 32 64]
        [--lengths 1024 4096 16384] [--causal-batches 4 16] [--reps 3]

Each point is timed as tle_kernels.bench_mla_decode times its shapes (CUDA-graph replays, the
implementations interleaved, the median of ``--reps`` rounds; warm-up 25 ms, 100 ms a timing),
on the same inputs (h_kv 1, h_q 128, seqlens L + 2i, random block tables); s_q 1, and s_q 2
causal at L = 4096 for the ``--causal-batches`` (b 4 and 16). Prints a Markdown table of
TFLOP/s and the ratios; what ``impl="auto"`` runs at each point (decode_api.auto_prefers_split)
is in the last column. LIB: FlashMLA's dense decode library, built as docs/BENCHMARKS.md
describes (Method).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchor", required=True, help="FlashMLA's dense decode library")
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 64])
    ap.add_argument("--lengths", type=int, nargs="+", default=[1024, 4096, 16384])
    ap.add_argument("--causal-batches", type=int, nargs="*", default=[4, 16],
                    help="batches also timed at s_q 2 causal, L 4096")
    ap.add_argument("--reps", type=int, default=3, help="interleaved rounds (median reported)")
    args = ap.parse_args(argv)

    import torch

    from tle_kernels import bench_mla_decode as B
    from tle_kernels import decode_api as D
    from tle_kernels.decode_reference import make_decode_inputs

    anchor = B.load_anchor(args.anchor)
    scale = 576 ** -0.5
    points = [(b, 1, False, L) for b in args.batches for L in args.lengths]
    points += [(b, 2, True, 4096) for b in args.causal_batches]
    sms = D.sm_count(torch.device("cuda"))
    print("| b | s_q | L | seesaw | pipe | FlashMLA | pipe / seesaw | seesaw / FlashMLA | "
          "pipe / FlashMLA | auto |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for b, s_q, causal, L in points:
        seqlens = B.seqlens_for(b, L)
        q, k, bt, sl = make_decode_inputs(b, s_q, 128, 1, seqlens, seed=1, poison=False)
        flop = B.flops(s_q, 128, seqlens)
        runs = {i: B.runner(i, None, q, k, bt, sl, causal, scale) for i in ("seesaw", "pipe")}
        runs["fm"] = B.runner(B.ANCHOR, anchor, q, k, bt, sl, causal, scale)
        t = {i: flop / ms / 1e9 for i, (ms, _, _) in
             B.time_interleaved(runs, args.reps, True, 25, 100).items()}
        auto = D.select_impl("auto", s_q, 128, 1, b=b, sms=sms)
        print(f"| {b} | {s_q} | {L} | {t['seesaw']:.1f} | {t['pipe']:.1f} | {t['fm']:.1f} | "
              f"{t['pipe'] / t['seesaw']:.3f} | {t['seesaw'] / t['fm']:.3f} | "
              f"{t['pipe'] / t['fm']:.3f} | {auto} |", flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
