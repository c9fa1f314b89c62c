"""SparseMLA prefill benchmark: every implementation in one process, TFLOP/s and ratios to naive.

    python3 -m tle_kernels.bench_sparse_mla [--check] [--skv 8192 131072] [--impl naive pipe]
                                            [--json results.json] [--plot sparse_mla.png] [--quick]
                                            [--case plain|sink|topk_length|d512|h16|h32]

Headline shape (docs/sparse_mla.md): B=1, SQ=4096, H=128, HKV=1, d_qk=576, d_v=512, topk=2048,
SKV in {8K, 32K, 64K, 96K, 128K}; q, kv = randn/10 bf16; query t attends to [0, t + SKV - SQ],
indices = topk distinct random positions of that window, invalid slots = SKV.
TFLOP/s = 2*SQ*H*topk*(576+512) / median time (``triton.testing.do_bench``, warmup 50 ms,
rep 200 ms). Outputs are allocated once per configuration, outside the timed region.
--check first compares every implementation with the fp32 reference (out rel Frobenius <= 3e-3,
max abs <= 1e-2, lse / max_logits abs <= 1e-4) on a small shape and on the first SKV's first queries.

Each timing also reports the GPU's median SM clock over the timed call (NVML, when the nvidia-ml-py
package is there): the H200 runs these kernels at its 700 W cap, so the clock, not only the
schedule, moves a figure, and a short timing (--quick) catches the 1980 MHz boost before the cap
bites (docs/BENCHMARKS.md, "Method"). For watts and energy per FLOP, which need seconds of steady
load, use benchmarks/energy_probe.py.

--case sink adds attn_sink = randn(H); --case topk_length gives each query a topk_length uniform
in [1, topk] and counts TFLOP/s on the slots it uses (2*H*sum(min(len, topk))*(576+512)): what a
per-row early stop saves is not counted as work. Implementations that do not take them are
skipped (``case_args``). --case d512 runs the shape with d_qk = 512 (q and kv rows without the
RoPE tail, FlashMLA's "MODEL1" layout; the seesaw runs tle_kernels/sparse_mla_seesaw_d512.py):
TFLOP/s = 2*SQ*H*topk*(512+512), sm_scale = 1/sqrt(512). FlashMLA's own kernel is timed against
the plain case by benchmarks/anchor_flashmla.py, and with attn_sink, topk_length and at
d_qk = 512 by benchmarks/ab_prefill_features.py --anchor LIB (the library:
benchmarks/anchor_flashmla_prefill.py).

--case h16 / h32: the tensor-parallel head counts (DeepSeek's 128 heads over 8 / 4 GPUs) at
S 4096, topk 2048, SKV 32K (unless --skv), H = 16 / 32: the seesaw runs its 64-head blocks with
the rows past H masked (q read as 0, nothing stored); TFLOP/s counts the real heads. With --check the run states the bar for these counts (``head_count_bars``): the
seesaw >= 2x the naive kernel of the same run, and above FlashMLA's kernel run on q padded to 64
heads (``FLASHMLA_PADDED_TFLOPS``), each as met or not met.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from typing import Optional

import torch

from .api import IMPLS, empty_outputs, launch, sm_count, supported_impls
from .bench_output import (bench_parser, finish_axes, gpu_missing, output_path, positive, save_plot,
                           write_json)
from .reference import make_inputs, sparse_mla_reference

SKVS = (8192, 32768, 65536, 98304, 131072)
SQ, H, TOPK, D_QK, D_V = 4096, 128, 2048, 576, 512
OUT_REL, OUT_ABS, LSE_ABS = 3e-3, 1e-2, 1e-4
CASES = ("plain", "sink", "topk_length", "d512", "h16", "h32")
# --case h16 / h32: H of the case, and its SKV when --skv is not given
HEAD_CASES = {"h16": 16, "h32": 32}
HEAD_CASE_SKV = 32768
# FlashMLA's sm90 sparse prefill with q padded to 64 heads, TFLOP/s on the real heads, recorded
# on an H200 at S 4096, topk 2048, SKV 32K (the padded-head bar's second half)
FLASHMLA_PADDED_TFLOPS = {16: 142.0, 32: 267.0}
BAR_OVER_NAIVE = 2.0


def case_d_qk(case: str) -> int:
    """The q / kv row width of a benchmark case: 512 for --case d512, else 576."""
    return 512 if case == "d512" else D_QK


def case_args(case, sq, h, topk, device="cuda", seed=5) -> dict:
    """The optional arguments of a benchmark case: ``attn_sink`` [h] (--case sink),
    ``topk_length`` [sq] uniform in [1, topk] (--case topk_length), or none."""
    if case not in ("sink", "topk_length"):
        return {}
    g = torch.Generator(device=device).manual_seed(seed)
    if case == "sink":
        return dict(attn_sink=torch.randn(h, device=device, generator=g))
    return dict(topk_length=torch.randint(1, topk + 1, (sq,), device=device, generator=g,
                                          dtype=torch.int32))


class ClockSampler:
    """While the ``with`` block runs, the SM clock every 10 ms (NVML, device 0); ``clock_mhz`` is
    their median, or None where NVML is not available (the benchmark runs the same without it).
    (Board power is not sampled here: NVML's power and energy readings update too coarsely for a
    250 ms timing.) ``nvml`` is for tests."""

    def __init__(self, nvml=None, period_s: float = 0.01):
        self.clock_mhz = None
        self.period_s = period_s
        self.nvml = nvml
        if self.nvml is None:
            try:
                import pynvml

                pynvml.nvmlInit()
                self.nvml = pynvml
            except Exception:
                self.nvml = None
        self.handle = self.nvml.nvmlDeviceGetHandleByIndex(0) if self.nvml else None

    def __enter__(self):
        if self.nvml is None:
            return self
        import threading

        self._clocks, self._stop = [], threading.Event()

        def run():
            while not self._stop.is_set():
                self._clocks.append(self.nvml.nvmlDeviceGetClockInfo(self.handle,
                                                                     self.nvml.NVML_CLOCK_SM))
                self._stop.wait(self.period_s)

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        if self.nvml is not None:
            self._stop.set()
            self._thread.join()
            if self._clocks:
                self.clock_mhz = sorted(self._clocks)[len(self._clocks) // 2]
        return False

    def note(self) -> str:
        return "" if self.clock_mhz is None else f"  (SM clock {self.clock_mhz:.0f} MHz)"


def head_count_bars(table, h, sq, topk, d_qk, case) -> list:
    """The bar of the tensor-parallel head counts for a run at H 16 or 32, S 4096, topk 2048,
    d_qk 576 without attn_sink / topk_length that timed a TLE kernel (the narrow-head kernel or
    the seesaw; the faster one counts) at SKV 32K: its TFLOP/s at least ``BAR_OVER_NAIVE`` x the
    naive kernel's of the same run, and above FlashMLA padded to 64 heads
    (``FLASHMLA_PADDED_TFLOPS``). ``table``: {(skv, impl): result with "tflops"}.
    Returns [one dict with both verdicts], or [] when the run is not such a run."""
    if (h not in FLASHMLA_PADDED_TFLOPS or sq != SQ or topk != TOPK or d_qk != D_QK
            or case in ("sink", "topk_length")):
        return []
    timed = [(table[(HEAD_CASE_SKV, i)]["tflops"], i) for i in ("narrow", "seesaw")
             if (HEAD_CASE_SKV, i) in table]
    if not timed:
        return []
    best, impl = max(timed)
    naive = table.get((HEAD_CASE_SKV, "naive"))
    ratio = best / naive["tflops"] if naive else None
    anchor = FLASHMLA_PADDED_TFLOPS[h]
    return [dict(h=h, skv=HEAD_CASE_SKV, impl=impl, tle_tflops=best,
                 naive_tflops=naive["tflops"] if naive else None, over_naive=ratio,
                 over_naive_met=ratio is not None and ratio >= BAR_OVER_NAIVE,
                 flashmla_padded_tflops=anchor, over_flashmla_padded_met=best > anchor)]


def bar_lines(bars) -> list:
    """``head_count_bars``'s verdicts as printed lines."""
    lines = []
    for b in bars:
        met = {True: "met", False: "not met"}
        naive = ("no naive timing in this run" if b["over_naive"] is None else
                 f"{b['over_naive']:.2f}x naive ({b['naive_tflops']:.1f})")
        lines.append(f"bar h_q={b['h']} skv={b['skv']}: {b['impl']} {b['tle_tflops']:.1f} TFLOP/s = "
                     f"{naive}, bar >= {BAR_OVER_NAIVE:g}x naive: {met[b['over_naive_met']]}; "
                     f"FlashMLA padded to 64 heads {b['flashmla_padded_tflops']:.0f} (recorded), "
                     f"bar above it: {met[b['over_flashmla_padded_met']]}")
    return lines


def flops(sq, h, topk, d_qk=D_QK):
    return 2 * sq * h * topk * (d_qk + D_V)


def check_one(impl, q, kv, idx, sm_scale, **extra):
    want = sparse_mla_reference(q, kv, idx, sm_scale, **extra)
    out, ml, lse = (x.fill_(float("nan")) for x in empty_outputs(q))
    launch(impl, q, kv, idx, sm_scale, out, ml, lse, **extra)
    torch.cuda.synchronize()
    d = out.float() - want[0]
    rel = (d.norm() / want[0].norm()).item()
    mx = d.abs().max().item()
    errs = {}
    for name, a, b in (("max_logits", ml, want[1]), ("lse", lse, want[2])):
        fin = torch.isfinite(b)
        same_inf = torch.equal(a[~fin], b[~fin])
        errs[name] = (a[fin] - b[fin]).abs().max().item() if fin.any() else 0.0
        if not same_inf:
            errs[name] = float("inf")
    nan = bool(torch.isnan(out).any() or torch.isnan(lse).any() or torch.isnan(ml).any())
    ok = rel <= OUT_REL and mx <= OUT_ABS and max(errs.values()) <= LSE_ABS and not nan
    return ok, dict(out_rel=rel, out_max_abs=mx, lse_abs=errs["lse"],
                    max_logits_abs=errs["max_logits"], nan=nan)


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's flags (``python3 -m tle_kernels --help`` checks its arguments with it
    too, on a machine without a GPU)."""
    ap = bench_parser("tle_kernels.bench_sparse_mla", __doc__)
    ap.add_argument("--skv", type=positive, nargs="+", default=None,
                    help=f"the SKVs to time (default {' '.join(map(str, SKVS))}; --quick: 8192 "
                         f"131072; --case h16/h32: {HEAD_CASE_SKV})")
    ap.add_argument("--impl", nargs="+", default=list(IMPLS), choices=IMPLS,
                    help="implementations to time (default: all; those that do not support the "
                         "shape or case are skipped, saying why)")
    ap.add_argument("--check", action="store_true",
                    help="compare every implementation with the fp32 reference first; a failure "
                         "makes the exit status 1")
    ap.add_argument("--json", default=None, type=output_path, help="write the results to this path")
    ap.add_argument("--plot", default="sparse_mla_bench.png", type=output_path,
                    help="PNG path (default sparse_mla_bench.png; '' = no plot)")
    ap.add_argument("--quick", action="store_true",
                    help="fast subset: SKV 8K and 128K, warmup 10 ms, rep 50 ms")
    ap.add_argument("--sq", type=positive, default=SQ,
                    help=f"query tokens S (default {SQ})")
    ap.add_argument("--h", type=positive, default=None,
                    help=f"query heads H (default {H}; --case h16 / h32 set it to 16 / 32)")
    ap.add_argument("--topk", type=positive, default=TOPK,
                    help=f"index slots per query token (default {TOPK}; the TLE kernels take "
                         f"multiples of 64, others are skipped)")
    ap.add_argument("--no-tail-split", action="store_true",
                    help="run the TLE kernels' last partial wave unsplit (tle_kernels/tail_split.py)")
    ap.add_argument("--case", choices=CASES, default="plain",
                    help="with attn_sink, with per-query topk_length, at d_qk = 512, or at H 16 / "
                         "32 (default plain; see below)")
    return ap


def parse_args(argv=None, ap: Optional[argparse.ArgumentParser] = None) -> argparse.Namespace:
    """The benchmark's arguments (``ap``: ``build_parser()`` unless given), ``--h`` resolved:
    --case h16 / h32 sets H, and an --h that says otherwise is a usage error (exit 2) rather than
    dropped."""
    ap = build_parser() if ap is None else ap
    args = ap.parse_args(argv)
    if args.case in HEAD_CASES:
        heads = HEAD_CASES[args.case]
        if args.h is not None and args.h != heads:
            ap.error(f"--h {args.h}: --case {args.case} times H = {heads}; leave --h out")
        args.h = heads
    elif args.h is None:
        args.h = H
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if gpu_missing():
        return 2
    skvs = args.skv or ([HEAD_CASE_SKV] if args.case in HEAD_CASES else
                        [8192, 131072] if args.quick else list(SKVS))
    warmup, rep = (10, 50) if args.quick else (50, 200)
    split = not args.no_tail_split
    import triton.testing

    d_qk = case_d_qk(args.case)
    sm_scale = 1.0 / math.sqrt(d_qk)
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  triton "
          f"{__import__('triton').__version__}", flush=True)
    if d_qk != D_QK:
        print(f"note: no FlashMLA anchor at d_qk = {d_qk} (benchmarks/anchor_flashmla.py's "
              f"library runs FlashMLA's d_qk = {D_QK} kernel only)", flush=True)
    impls = [i for i in args.impl if i in supported_impls(args.h, d_qk, args.topk,
                                                         args.case == "sink",
                                                         args.case == "topk_length")]
    for i in args.impl:
        if i not in impls:
            print(f"skip {i}: does not support h={args.h}, topk={args.topk}, case {args.case}",
                  flush=True)
    results = {"shape": dict(B=1, SQ=args.sq, H=args.h, HKV=1, d_qk=d_qk, d_v=D_V, topk=args.topk),
               "case": args.case,
               "do_bench": dict(warmup=warmup, rep=rep, return_mode="median"),
               "tail_split": split, "check": {}, "bench": []}
    failed = False
    if args.check:
        cases = [("small", make_inputs(128, 2304, args.h, args.topk, d_qk, seed=1))]
        q, kv, idx = make_inputs(args.sq, skvs[0], args.h, args.topk, d_qk, seed=2)
        cases.append((f"skv={skvs[0]} first 256 queries", (q[:256], kv, idx[:256])))
        # a token count whose last wave the seesaw's launch splits into topk pieces
        # (tle_kernels/tail_split.py)
        per_wave = max(1, sm_count(q.device) // max(1, args.h // 64))
        n = per_wave * max(1, 256 // per_wave) + 4
        cases.append((f"skv={skvs[0]} {n} queries (split)", (q[:n], kv, idx[:n])))
        for label, (q, kv, idx) in cases:
            extra = case_args(args.case, q.shape[0], args.h, args.topk)
            for impl in impls:
                t0 = time.time()
                try:
                    ok, info = check_one(impl, q, kv, idx, sm_scale, **extra)
                except Exception:
                    ok, info = False, dict(error=traceback.format_exc())
                failed |= not ok
                results["check"].setdefault(label, {})[impl] = dict(ok=ok, **info)
                print(f"check {label:28s} {impl:7s} {'ok  ' if ok else 'FAIL'} " +
                      "  ".join(f"{k} {v:.2e}" if isinstance(v, float) else f"{k} {v}"
                                for k, v in info.items()) + f"  ({time.time() - t0:.1f} s)",
                      flush=True)
        del q, kv, idx
    extra = case_args(args.case, args.sq, args.h, args.topk)
    fl = flops(args.sq, args.h, args.topk, d_qk)
    if "topk_length" in extra:  # the slots the queries use
        fl = fl * extra["topk_length"].clamp(0, args.topk).sum().item() / (args.sq * args.topk)
    for skv in skvs:
        q, kv, idx = make_inputs(args.sq, skv, args.h, args.topk, d_qk, seed=3)
        bufs = empty_outputs(q)
        for impl in impls:
            try:
                launch(impl, q, kv, idx, sm_scale, *bufs, tail_split=split, **extra)  # compile
                torch.cuda.synchronize()
                with ClockSampler() as clock:
                    ms = triton.testing.do_bench(
                        lambda: launch(impl, q, kv, idx, sm_scale, *bufs, tail_split=split,
                                       **extra),
                        warmup=warmup, rep=rep, return_mode="median")
                tf = fl / ms / 1e9
                results["bench"].append(dict(skv=skv, impl=impl, ms=ms, tflops=tf,
                                             sm_clock_mhz=clock.clock_mhz))
                print(f"bench skv={skv:6d} {impl:7s} {ms:8.3f} ms {tf:7.1f} TFLOP/s{clock.note()}",
                      flush=True)
            except Exception:
                failed = True
                results["bench"].append(dict(skv=skv, impl=impl, error=traceback.format_exc()))
                print(f"bench skv={skv} {impl}: FAILED\n{traceback.format_exc()}", flush=True)
        del q, kv, idx, bufs
        torch.cuda.empty_cache()

    table = {(r["skv"], r["impl"]): r for r in results["bench"] if "tflops" in r}
    head = "| SKV | " + " | ".join(f"{i} ms | {i} TFLOP/s" for i in impls)
    ratio_impls = [i for i in impls if i != "naive"] if "naive" in impls else []
    head += "".join(f" | {i}/naive" for i in ratio_impls) + " |"
    lines = [head, "|---:|" + "---:|" * (2 * len(impls) + len(ratio_impls))]
    for skv in skvs:
        cells = []
        for i in impls:
            r = table.get((skv, i))
            cells += [f"{r['ms']:.3f}", f"{r['tflops']:.1f}"] if r else ["-", "-"]
        for i in ratio_impls:
            r, n = table.get((skv, i)), table.get((skv, "naive"))
            cells.append(f"{r['tflops'] / n['tflops']:.2f}x" if r and n else "-")
        lines.append(f"| {skv} | " + " | ".join(cells) + " |")
    if any(r.get("sm_clock_mhz") for r in table.values()):
        lines.append("")
        lines.append("| SKV | " + " | ".join(f"{i} SM clock MHz (median)" for i in impls) + " |")
        lines.append("|---:|" + "---:|" * len(impls))
        for skv in skvs:
            cells = []
            for i in impls:
                r = table.get((skv, i))
                cells.append(f"{r['sm_clock_mhz']:.0f}" if r and r.get("sm_clock_mhz") else "-")
            lines.append(f"| {skv} | " + " | ".join(cells) + " |")
    print(f"\nSparseMLA prefill, B=1 SQ={args.sq} H={args.h} topk={args.topk}, case {args.case}, "
          f"TFLOP/s = 2*SQ*H*topk*({d_qk}+{D_V})/median\n" + "\n".join(lines), flush=True)
    results["table_markdown"] = "\n".join(lines)
    if args.check:
        results["bars"] = head_count_bars(table, args.h, args.sq, args.topk, d_qk, args.case)
        for line in bar_lines(results["bars"]):
            print(line, flush=True)

    if args.json:
        write_json(args.json, results)
    if args.plot and table:
        def draw(plt):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for i in impls:
                xs = [s for s in skvs if (s, i) in table]
                ax.plot([s // 1024 for s in xs], [table[(s, i)]["tflops"] for s in xs], "o-", label=i)
            finish_axes(ax, "SKV (K tokens)", "TFLOP/s",
                        f"SparseMLA prefill, SQ={args.sq} H={args.h} topk={args.topk}")
            return fig

        save_plot(args.plot, draw)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
