"""A/B of the seesaw prefill with FlashMLA's optional features against the plain seesaw: each
call through ``tle_kernels.api.launch("seesaw", ...)`` plain, with ``attn_sink`` (randn(H)), with
``topk_length`` equal to topk on every row (the per-row kernel doing all the work), and with both,
interleaved in one process at the headline shape; medians of ``--reps`` do_bench runs.

    python3 benchmarks/ab_prefill_features.py [--skv 8192 32768 131072] [--reps 3]
                                              [--warmup 25] [--rep 100] [--anchor LIB]

What it answers: what attn_sink and topk_length cost when they change nothing about the work
(the sparse decode work's bar: each >= 0.97x the plain seesaw).

With ``--anchor LIB`` (FlashMLA's sm90 sparse prefill, built by
benchmarks/anchor/build_flashmla_prefill_anchor.sh and loaded by
benchmarks/anchor_flashmla_prefill.py) it first checks the anchor against the fp32 reference on
small cases, then times FlashMLA with the same arguments in the same rounds: the four cases above,
and at d_qk = 512 (rows without the RoPE tail, sm_scale 1/sqrt(512)) the plain seesaw against
FlashMLA at h_q 64 / topk 512 and h_q 128 / topk 1024. Both get preallocated outputs, so each
timing is one kernel launch. It ends with one line per bar: TLE / FlashMLA >= 1.0, met or not met.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# FlashMLA's features at the headline shape: name -> which optional arguments the call passes
OPTIONS = {"plain": (), "attn_sink": ("attn_sink",), "topk_length full": ("topk_length",),
           "both": ("attn_sink", "topk_length")}
# d_qk = 512 shapes timed against FlashMLA: (h_q, topk)
D512_SHAPES = ((64, 512), (128, 1024))
BAR = 1.0  # TLE / FlashMLA, for each case


def bar_line(label: str, tle: float, flashmla: float, bar: float = BAR) -> str:
    """One bar's verdict: the TLE / FlashMLA ratio of two median TFLOP/s figures, met when it is
    at least ``bar``."""
    ratio = tle / flashmla
    verdict = "met" if ratio >= bar else "not met"
    return (f"bar {label}: TLE {tle:.1f} / FlashMLA {flashmla:.1f} TFLOP/s = {ratio:.3f} "
            f"(>= {bar:.2f}: {verdict})")


def check_anchor(anchor) -> bool:
    """The anchor against the fp32 reference on one small case of each kernel it runs here
    (benchmarks/anchor_flashmla_prefill.py ``check_case``); prints a line per case."""
    from benchmarks.anchor_flashmla_prefill import check_case

    ok = True
    for h_q, topk, d_qk, sink, lengths in ((128, 256, 576, False, False),
                                           (128, 256, 576, True, True),
                                           (64, 512, 512, False, False),
                                           (128, 1024, 512, False, False)):
        good, line = check_case(anchor, 64, 4096, h_q, topk, d_qk, sink, lengths, seed=7)
        print(f"anchor check {line}", flush=True)
        ok &= good
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skv", type=int, nargs="+", default=[8192, 32768, 131072])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=25, help="do_bench warm-up, ms")
    ap.add_argument("--rep", type=int, default=100, help="do_bench timing, ms")
    ap.add_argument("--sq", type=int, default=4096)
    ap.add_argument("--h", type=int, default=128)
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--anchor", metavar="LIB", default=None,
                    help="FlashMLA's sparse prefill library (benchmarks/"
                         "anchor_flashmla_prefill.py): time it with the same arguments and print "
                         "TLE / FlashMLA per bar")
    args = ap.parse_args(argv)

    import torch

    from benchmarks.interleaved import interleaved_tflops
    from tle_kernels import api
    from tle_kernels.bench_sparse_mla import flops
    from tle_kernels.reference import make_inputs

    anchor = None
    if args.anchor:
        from benchmarks.anchor_flashmla_prefill import load_prefill_anchor

        anchor = load_prefill_anchor(args.anchor)
        if not check_anchor(anchor):
            print("the FlashMLA anchor does not match the fp32 reference: no timings",
                  file=sys.stderr)
            return 1
    bars = []
    sm_scale = 1 / math.sqrt(576)
    fl = flops(args.sq, args.h, args.topk)
    for skv in args.skv:
        q, kv, idx = make_inputs(args.sq, skv, args.h, args.topk, seed=3)
        bufs = api.empty_outputs(q)
        sink = torch.randn(args.h, device=q.device, generator=torch.Generator(
            device=q.device).manual_seed(5))
        full = torch.full((args.sq,), args.topk, dtype=torch.int32, device=q.device)
        values = {"attn_sink": sink, "topk_length": full}
        options = {name: {k: values[k] for k in keys} for name, keys in OPTIONS.items()}
        cases = {name: (lambda kw=kw: api.launch("seesaw", q, kv, idx, sm_scale, *bufs, **kw))
                 for name, kw in options.items()}
        if anchor is not None:
            abufs = api.empty_outputs(q)
            for name, kw in options.items():
                cases[f"FlashMLA {name}"] = (lambda kw=kw: anchor(q, kv, idx, sm_scale,
                                                                  outputs=abufs, **kw))
        res = interleaved_tflops(cases, fl, args.reps, f"skv={skv}: ", args.warmup, args.rep)
        plain = statistics.median(res["plain"])
        for name in options:
            m = statistics.median(res[name])
            line = (f"skv={skv}: {name:16s} {m:6.1f} TFLOP/s {[round(x, 1) for x in res[name]]}  "
                    f"x{m / plain:.3f} of plain")
            if anchor is not None:
                a = res[f"FlashMLA {name}"]
                line += (f"; FlashMLA {statistics.median(a):6.1f} TFLOP/s "
                         f"{[round(x, 1) for x in a]}")
                bars.append(bar_line(f"skv={skv} d_qk=576 h_q={args.h} topk={args.topk} {name}",
                                     m, statistics.median(a)))
            print(line, flush=True)
        del q, kv, idx, bufs
        torch.cuda.empty_cache()
        if anchor is not None:
            bars += d512_bars(anchor, skv, args, interleaved_tflops)
    for line in bars:
        print(line, flush=True)
    return 0


def d512_bars(anchor, skv: int, args, interleaved_tflops) -> list:
    """The plain seesaw against FlashMLA at d_qk = 512, each shape of ``D512_SHAPES`` in its own
    interleaved rounds; prints each figure and returns the bar lines."""
    import torch

    from tle_kernels import api
    from tle_kernels.bench_sparse_mla import flops
    from tle_kernels.reference import make_inputs

    sm_scale = 1 / math.sqrt(512)
    bars = []
    for h_q, topk in D512_SHAPES:
        q, kv, idx = make_inputs(args.sq, skv, h_q, topk, 512, seed=11)
        bufs, abufs = api.empty_outputs(q), api.empty_outputs(q)
        tag = f"d_qk=512 h_q={h_q} topk={topk}"
        cases = {"seesaw": lambda: api.launch("seesaw", q, kv, idx, sm_scale, *bufs),
                 "FlashMLA": lambda: anchor(q, kv, idx, sm_scale, outputs=abufs)}
        res = interleaved_tflops(cases, flops(args.sq, h_q, topk, 512), args.reps,
                                 f"skv={skv} {tag}: ", args.warmup, args.rep)
        tle, ref = (statistics.median(res[k]) for k in ("seesaw", "FlashMLA"))
        print(f"skv={skv}: {tag}: seesaw {tle:6.1f} TFLOP/s {[round(x, 1) for x in res['seesaw']]}"
              f"; FlashMLA {ref:6.1f} TFLOP/s {[round(x, 1) for x in res['FlashMLA']]}",
              flush=True)
        bars.append(bar_line(f"skv={skv} {tag} plain", tle, ref))
        del q, kv, idx, bufs, abufs
        torch.cuda.empty_cache()
    return bars


if __name__ == "__main__":
    sys.exit(main())
