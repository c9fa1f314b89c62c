"""A/B of the FP8 sparse decode's split over several rounds (tail_split.plan_round_split, taken
by tle_kernels/sparse_decode_split_fp8_launch.py where no split fits one round): the launcher
with it and without it (``plan_round_split`` returning None: the rows unsplit), and FlashMLA's
sm90 sparse FP8 decode with ``--anchor LIB``, checked against the fp32 reference first, then
timed as CUDA-graph replays, interleaved, medians of ``--reps`` rounds (do_bench, warm-up 10 ms,
50 ms).

    python3 benchmarks/ab_round_split.py [--shapes b40_s1_h128 b48_s1_h128 ...] [--topk 2048]
                                         [--anchor LIB] [--reps 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHAPES = ["b36_s1_h128", "b40_s1_h128", "b48_s1_h128", "b20_s2_h128", "b56_s1_h128",
          "b100_s1_h128"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="+", default=SHAPES, metavar="bB_sS_hH")
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--s-kv", type=int, default=32768)
    ap.add_argument("--anchor", default=None, help="FlashMLA sparse decode anchor library")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)

    import torch

    from benchmarks.interleaved import graph_replay_ms
    import tle_kernels.sparse_decode_api as A
    import tle_kernels.tail_split as ts
    from tle_kernels.bench_sparse_decode import load_anchor, parse_shape
    from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,
                                                     sparse_decode_reference)

    anchor = load_anchor(args.anchor) if args.anchor else None
    plan_round_split = ts.plan_round_split
    scale = 576 ** -0.5

    import tle_kernels.sparse_decode_split_fp8_launch as L

    def step(x, out, lse, rounds, balance=False):
        ts.plan_round_split = plan_round_split if rounds else (lambda *a, **k: None)
        L.BALANCE = balance
        try:
            A.launch_sparse("split-fp8", x["q"], x["k_cache"], x["indices"], scale, True, out,
                            lse)
        finally:
            ts.plan_round_split = plan_round_split
            L.BALANCE = None

    def graph_ms(fn):
        return graph_replay_ms(fn, warmup=10, rep=50)

    print(f"device: {torch.cuda.get_device_name()}; FP8 cache, topk {args.topk} of {args.s_kv} "
          "tokens; microseconds per decode step", flush=True)
    for name in args.shapes:
        b, s_q, h_q = parse_shape(name)
        x = make_sparse_decode_inputs(b, s_q, h_q, args.topk, s_kv=args.s_kv, is_fp8=True,
                                      seed=b, invalid=0.0, poison=False)
        want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, scale)
        bufs = {r: A.empty_outputs(x["q"]) for r in (False, True, "balanced")}
        for rounds, (out, lse) in bufs.items():
            step(x, out, lse, rounds is True, rounds == "balanced")
            err = (out.float() - want[0].float()).abs().max().item()
            lse_err = (lse - want[1]).nan_to_num(0.0).abs().max().item()
            if not (err < 1e-2 and lse_err < 1e-4):
                print(f"{name} rounds={rounds}: out err {err:.2e}, lse err {lse_err:.2e}: FAIL")
                return 1
        cases = {"unsplit": lambda: step(x, *bufs[False], False),
                 "rounds": lambda: step(x, *bufs[True], True),
                 "balanced": lambda: step(x, *bufs["balanced"], False, True)}
        if anchor is not None and h_q in (64, 128):
            cases["FlashMLA"] = lambda: anchor(x["q"], x["k_cache"], x["indices"], scale)
        times = {k: [] for k in cases}
        for _ in range(args.reps):
            for k, f in cases.items():
                times[k].append(graph_ms(f))
        us = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        line = (f"{name}: without {us['unsplit']:7.1f} us, with {us['rounds']:7.1f} us, "
                f"without / with {us['unsplit'] / us['rounds']:.3f}")
        line += (f"; balanced {us['balanced']:7.1f} us, without / balanced "
                 f"{us['unsplit'] / us['balanced']:.3f}")
        if "FlashMLA" in us:
            fm = us["FlashMLA"]
            line += (f"; FlashMLA {fm:7.1f} us, x FlashMLA without {fm / us['unsplit']:.3f} "
                     f"with {fm / us['rounds']:.3f} balanced {fm / us['balanced']:.3f}")
        print(line, flush=True)
        del x, bufs
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
