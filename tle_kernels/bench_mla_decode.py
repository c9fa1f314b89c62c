"""Dense MLA decode benchmark: every implementation in one process, interleaved; TFLOP/s, GB/s,
ratios to the naive kernel and to FlashMLA, and the decode bars as met / not met.

    python3 -m tle_kernels.bench_mla_decode [--check] [--quick] [--shape b128_s1 ...] [--L 4096 ...]
                                            [--impl naive pipe] [--anchor LIB] [--reps 3] [--no-graph]
                                            [--json results.json] [--plot mla_decode.png]

Shapes (FlashMLA's decode benchmark): paged KV cache of 64-token pages, one kv head, d = 576,
dv = 512, random non-contiguous block tables, request i of a batch holds L + 2i tokens:
  b128_s1         b = 128, s_q = 1, h_q = 128, L = 1K, 4K, 8K, 16K, 32K   (compute-bound)
  b64_s2_causal   b = 64, s_q = 2 (causal), h_q = 128, the same L        (speculative decoding)
  b128_s1_h16     b = 128, s_q = 1, h_q = 16, L = 8K                      (memory-bound, TP8)
Few query rows per kv head (where "auto" runs the pipe decode), timed only when named:
  b32_s1_h16 (L 1K, 8K), b64_s1_h16 (4K), b128_s1_h32 (1K, 8K, 32K), b128_s2_h16_causal (8K, 32K)
TFLOP/s = 2 * s_q * sum(seqlens) * h_q * (576 + 512) / t (the causal mask's savings not deducted);
GB/s = (K cache rows read: sum(seqlens) * h_kv * 576 * 2 B, + q + out) / t. t is the time of one
call replayed from a CUDA graph (``triton.testing.do_bench_cudagraph``: ~200 ms of back-to-back
calls captured once, the median of 10 replays), as a serving engine replays its decode step: a
0.1 ms kernel is then not timed together with the Python that launches it. ``--no-graph`` times
plain launches (``triton.testing.do_bench``, warm-up 50 ms, 200 ms, median) instead, as does an
implementation whose call cannot be captured. The median over ``--reps`` rounds is reported; in
each round every implementation is timed once at a shape before the next shape, so a slow stretch
of the machine hits them alike. The TLE and naive kernels are timed through ``decode_api.launch``
(what ``flash_mla_with_kvcache`` runs, with the split count its metadata would choose, outputs
allocated once); the FlashMLA anchor through its callable.

Implementations: decode_api.IMPLS. "seesaw" runs its launcher's choices (TMA wherever k_cache
allows it, one program per request unless the batch leaves SMs idle), "seesaw-tma" always the TMA
producer; an interleaved A/B of the seesaw's two producers is

    TLE_DECODE_TMA=0 python3 -m tle_kernels.bench_mla_decode --impl seesaw seesaw-tma ...

and of its two schedules TLE_DECODE_BALANCE=0 / 1 (one run each).

Before any timing, every implementation is checked against the fp32 reference on the first 16
requests of each shape's first L and on a batch of mixed seqlens (0 / 1 / 63 / 64 / 65 / 4096),
with FlashMLA's decode-test tolerances; a failure makes the exit status 1.

``--anchor LIB``: FlashMLA's own dense decode, built from its source outside this repository,
through benchmarks/anchor_flashmla_decode.py's ``load_decode_anchor(LIB)`` (a callable
``(q, k_cache, block_table, cache_seqlens, causal, sm_scale) -> (out, lse)``), timed in the same
rounds. Without it, the bars against FlashMLA use its figures recorded on an H200 (``RECORDED``)
and say so.

``--check`` prints each bar of the decode work as met / not met with its figures: TLE-FlashMLA
("seesaw") >= 1.0x FlashMLA at every L of b128_s1 and b64_s2_causal; its GB/s >= 0.95x FlashMLA's
at b128_s1_h16; TLE-Pipe >= 0.85x FlashMLA at b128_s1 for L >= 4K; both TLE kernels >= 2x the
naive kernel at every compute-bound point.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

from . import decode_api as D
from .bench_output import (bench_parser, finish_axes, flashmla_errors, gpu_missing, output_path,
                           positive, save_plot, write_json)
from .bench_sparse_mla import ClockSampler
from .decode_reference import make_decode_inputs, mla_decode_reference

LS = (1024, 4096, 8192, 16384, 32768)
SHAPES = {  # name: (b, s_q, h_q, causal, Ls)
    "b128_s1": (128, 1, 128, False, LS),
    "b64_s2_causal": (64, 2, 128, True, LS),
    "b128_s1_h16": (128, 1, 16, False, (8192,)),
    # few query rows per kv head (where "auto" runs the pipe decode: decode_api.FEW_ROWS); timed
    # only when named
    "b32_s1_h16": (32, 1, 16, False, (1024, 8192)),
    "b64_s1_h16": (64, 1, 16, False, (4096,)),
    "b128_s1_h32": (128, 1, 32, False, (1024, 8192, 32768)),
    "b128_s2_h16_causal": (128, 2, 16, True, (8192, 32768)),
}
#: The shapes timed when --shape is not given (FlashMLA's decode benchmark).
DEFAULT_SHAPES = ("b128_s1", "b64_s2_causal", "b128_s1_h16")
D_QK, D_V, H_KV = 576, 512, 1
CHECK_B = 16
MIXED = [0, 1, 63, 64, 65, 4096, 4097, 130]

# FlashMLA's dense decode measured on an H200 through its own interface (TFLOP/s by the formula
# above), used for the bars when --anchor is not given.
RECORDED = {
    "b128_s1": dict(zip(LS, (427.0, 560.0, 573.0, 585.0, 591.0))),
    "b64_s2_causal": dict(zip(LS, (416.0, 599.0, 566.0, 596.0, 606.0))),
}
ANCHOR = "flashmla"

# FlashMLA's decode-test tolerances (an element passes within abs_tol or rel_tol)
OUT_ABS, OUT_REL, OUT_COS = 8e-4, 2.01 / 128, 5e-6
LSE_ABS, LSE_REL = 1e-6, 8.01 / 65536


def seqlens_for(b: int, L: int):
    return [L + 2 * i for i in range(b)]


def flops(s_q: int, h_q: int, seqlens) -> float:
    return 2.0 * s_q * sum(seqlens) * h_q * (D_QK + D_V)


def bytes_moved(b: int, s_q: int, h_q: int, seqlens) -> float:
    return 2.0 * (sum(seqlens) * H_KV * D_QK + b * s_q * h_q * (D_QK + D_V))


def errors(out, lse, want):
    """(ok, details) with FlashMLA's decode-test tolerances (bench_output.flashmla_errors)."""
    return flashmla_errors(out, lse, want, OUT_ABS, OUT_REL, OUT_COS, LSE_ABS, LSE_REL)


def load_anchor(lib: str):
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "anchor_flashmla_decode.py"
    if not script.exists():
        raise SystemExit(f"--anchor: {script} not found (the anchor hook lives in a checkout's "
                         "benchmarks/, not in the installed package)")
    spec = importlib.util.spec_from_file_location("anchor_flashmla_decode", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_decode_anchor(lib)


def time_ms(f, graph: bool, warmup: int, rep: int):
    """(milliseconds per call, how it was timed): CUDA-graph replay unless ``graph`` is False or
    the call cannot be captured."""
    import triton.testing

    if graph:
        try:
            return triton.testing.do_bench_cudagraph(f, rep=rep, return_mode="median"), "graph"
        except Exception:
            torch.cuda.synchronize()
    return triton.testing.do_bench(f, warmup=warmup, rep=rep, return_mode="median"), "do_bench"


def time_interleaved(runs: dict, reps: int, graph: bool, warmup: int, rep: int,
                     timer=None) -> dict:
    """``{impl: (median ms, how it was timed, median SM clock in MHz or None)}`` for the callables
    ``runs``, timed in ``reps`` interleaved rounds (each round times every one once, so a slow
    stretch of the machine hits them alike) with ``timer`` (default :func:`time_ms`, same
    signature), the SM clock sampled during each timing."""
    timer = time_ms if timer is None else timer
    times = {i: [] for i in runs}
    clocks = {i: [] for i in runs}
    how = {}
    for _ in range(reps):
        for impl, f in runs.items():
            with ClockSampler() as clock:
                ms, how[impl] = timer(f, graph, warmup, rep)
                times[impl].append(ms)
            if clock.clock_mhz is not None:
                clocks[impl].append(clock.clock_mhz)
    return {impl: (statistics.median(times[impl]), how[impl],
                   statistics.median(clocks[impl]) if clocks[impl] else None) for impl in runs}


def runner(impl, anchor, q, k, bt, sl, causal, sm_scale):
    """A no-argument callable running one decode with ``impl`` (or the anchor)."""
    if impl == ANCHOR:
        return lambda: anchor(q, k, bt, sl, causal, sm_scale)
    b, s_q, h_q, _ = q.shape
    n_split = 1
    if impl in D.SPLIT_IMPLS:
        n_split = D.choose_n_split(b, H_KV, D.row_blocks(s_q, h_q, H_KV), D.sm_count(q.device))
    out, lse = D.empty_outputs(q)
    return lambda: D.launch(impl, q, k, bt, sl, sm_scale, causal, n_split, out, lse)


def check_one(impl, anchor, q, k, bt, sl, causal, sm_scale):
    want = mla_decode_reference(q, k, bt, sl, causal=causal, softmax_scale=sm_scale)
    if impl == ANCHOR:
        out, lse = anchor(q, k, bt, sl, causal, sm_scale)
    else:
        b, s_q, h_q, _ = q.shape
        n_split = D.choose_n_split(b, H_KV, D.row_blocks(s_q, h_q, H_KV), D.sm_count(q.device)) \
            if impl in D.SPLIT_IMPLS else 1
        out, lse = (x.fill_(float("nan")) for x in D.empty_outputs(q))
        D.launch(impl, q, k, bt, sl, sm_scale, causal, n_split, out, lse)
    torch.cuda.synchronize()
    return errors(out, lse, want)


def bar_lines(results, impls, anchored):
    """Each bar as (text, met: True / False / None = not measured)."""
    t = {(r["shape"], r["L"], r["impl"]): r for r in results if "tflops" in r}
    src = "FlashMLA measured here" if anchored else "FlashMLA's recorded figure (no --anchor)"

    def ref_tflops(shape, L):
        if anchored:
            r = t.get((shape, L, ANCHOR))
            return r["tflops"] if r else None
        return RECORDED.get(shape, {}).get(L)

    lines = []
    for shape in ("b128_s1", "b64_s2_causal"):
        for L in SHAPES[shape][4]:
            r, ref = t.get((shape, L, "seesaw")), ref_tflops(shape, L)
            label = f"TLE-FlashMLA >= 1.0x FlashMLA, {shape} L={L}"
            if r is None or ref is None:
                lines.append((f"{label}: not measured ({'seesaw' if r is None else 'FlashMLA'} "
                              "not run)", None))
            else:
                x = r["tflops"] / ref
                lines.append((f"{label}: {r['tflops']:.1f} vs {ref:.1f} TFLOP/s ({src}) = "
                              f"{x:.3f}x", x >= 1.0))
    r = t.get(("b128_s1_h16", 8192, "seesaw"))
    a = t.get(("b128_s1_h16", 8192, ANCHOR))
    label = "TLE-FlashMLA >= 0.95x FlashMLA's GB/s, b128_s1_h16 L=8192"
    if r is None or a is None:
        lines.append((f"{label}: not measured ({'seesaw' if r is None else 'FlashMLA (--anchor)'}"
                      " not run)", None))
    else:
        x = r["gbps"] / a["gbps"]
        lines.append((f"{label}: {r['gbps']:.0f} vs {a['gbps']:.0f} GB/s = {x:.3f}x", x >= 0.95))
    for L in SHAPES["b128_s1"][4]:
        if L < 4096:
            continue
        r, ref = t.get(("b128_s1", L, "pipe")), ref_tflops("b128_s1", L)
        label = f"TLE-Pipe >= 0.85x FlashMLA, b128_s1 L={L}"
        if r is None or ref is None:
            lines.append((f"{label}: not measured ({'pipe' if r is None else 'FlashMLA'} not run)",
                          None))
        else:
            x = r["tflops"] / ref
            lines.append((f"{label}: {r['tflops']:.1f} vs {ref:.1f} TFLOP/s ({src}) = {x:.3f}x",
                          x >= 0.85))
    for impl in ("seesaw", "pipe"):
        pts = [(shape, L) for shape in ("b128_s1", "b64_s2_causal") for L in SHAPES[shape][4]]
        ratios = [(t[(s, L, impl)]["tflops"] / t[(s, L, "naive")]["tflops"], s, L) for s, L in pts
                  if (s, L, impl) in t and (s, L, "naive") in t]
        label = f"{'TLE-FlashMLA' if impl == 'seesaw' else 'TLE-Pipe'} >= 2x naive"
        if not ratios:
            lines.append((f"{label}: not measured ({impl} or naive not run)", None))
        else:
            worst = min(ratios)
            lines.append((f"{label}: worst {worst[0]:.2f}x at {worst[1]} L={worst[2]} over "
                          f"{len(ratios)} points", worst[0] >= 2.0))
    return lines


def build_parser() -> argparse.ArgumentParser:
    """The benchmark's flags."""
    ap = bench_parser("tle_kernels.bench_mla_decode", __doc__)
    ap.add_argument("--shape", nargs="+", default=list(DEFAULT_SHAPES), choices=list(SHAPES),
                    help=f"shapes to time (default: {' '.join(DEFAULT_SHAPES)}; see below)")
    ap.add_argument("--L", type=positive, nargs="+", default=None,
                    help="the L list of b128_s1 and b64_s2_causal (default "
                         f"{' '.join(map(str, LS))}; --quick: 1024 8192; b128_s1_h16 is L = 8192)")
    ap.add_argument("--impl", nargs="+", default=list(D.IMPLS), choices=D.IMPLS,
                    help="implementations to time (default: all; one that supports none of the "
                         "shapes is skipped, saying why)")
    ap.add_argument("--anchor", default=None, metavar="LIB",
                    help="FlashMLA's own dense decode built from LIB, timed in the same rounds "
                         "(see below)")
    ap.add_argument("--reps", type=positive, default=1,
                    help="interleaved rounds (default 1; the median is reported)")
    ap.add_argument("--check", action="store_true", help="print each decode bar as met / not met")
    ap.add_argument("--quick", action="store_true", help="L = 1K and 8K, warmup 10 ms, rep 50 ms")
    ap.add_argument("--no-graph", action="store_true",
                    help="time plain launches (do_bench) instead of CUDA-graph replays")
    ap.add_argument("--json", default=None, type=output_path, help="write the results to this path")
    ap.add_argument("--plot", default="mla_decode_bench.png", type=output_path,
                    help="PNG path (default mla_decode_bench.png; '' = no plot)")
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.L and not any(len(SHAPES[name][4]) > 1 and name in DEFAULT_SHAPES
                          for name in args.shape):
        # --L sets the L list of the shapes that have one; given only shapes of one L it would
        # be dropped without a word
        ap.error(f"--L: sets the L of {' and '.join(n for n in DEFAULT_SHAPES if len(SHAPES[n][4]) > 1)}"
                 f"; --shape {' '.join(args.shape)} times L = "
                 f"{', '.join(' / '.join(map(str, SHAPES[n][4])) for n in args.shape)} only")
    if gpu_missing():
        return 2
    import triton

    warmup, rep = (10, 50) if args.quick else (50, 200)
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  triton "
          f"{triton.__version__}  SMs {D.sm_count(dev)}", flush=True)
    anchor = load_anchor(args.anchor) if args.anchor else None
    shapes = {}
    for name in args.shape:
        b, s_q, h_q, causal, ls = SHAPES[name]
        if len(ls) > 1 and args.L and name in DEFAULT_SHAPES:
            ls = tuple(args.L)
        elif len(ls) > 1 and args.quick and name in DEFAULT_SHAPES:
            ls = (1024, 8192)
        shapes[name] = (b, s_q, h_q, causal, ls)
    impls = []
    for i in args.impl:
        why = [D.unsupported_reason(i, s[1], s[2], H_KV) for s in shapes.values()]
        if all(w is not None for w in why):
            print(f"skip {i}: {next(w for w in why if w)}", flush=True)
        else:
            impls.append(i)
    if anchor is not None:
        impls.append(ANCHOR)
    sm_scale = D_QK ** -0.5
    results = {"shapes": {k: dict(zip(("b", "s_q", "h_q", "causal", "L"), v)) for k, v in shapes.items()},
               "timing": dict(graph=not args.no_graph, warmup=warmup, rep=rep, return_mode="median",
                              reps=args.reps),
               "check": {}, "bench": []}
    failed = False

    def supports(impl, s_q, h_q):
        return impl == ANCHOR or D.unsupported_reason(impl, s_q, h_q, H_KV) is None

    # correctness first: the first CHECK_B requests of each shape's first L, and mixed seqlens
    cases = []
    for name, (b, s_q, h_q, causal, ls) in shapes.items():
        q, k, bt, sl = make_decode_inputs(b, s_q, h_q, H_KV, seqlens_for(b, ls[0]), seed=1)
        n = min(b, CHECK_B)
        cases.append((f"{name} L={ls[0]} first {n}", (q[:n], k, bt[:n], sl[:n]), s_q, h_q, causal))
        qm, km, btm, slm = make_decode_inputs(len(MIXED), s_q, h_q, H_KV, MIXED, seed=2)
        cases.append((f"{name} mixed seqlens", (qm, km, btm, slm), s_q, h_q, causal))
    for label, tensors, s_q, h_q, causal in cases:
        for impl in impls:
            if not supports(impl, s_q, h_q):
                continue
            t0 = time.time()
            try:
                ok, info = check_one(impl, anchor, *tensors, causal, sm_scale)
            except Exception:
                ok, info = False, dict(error=traceback.format_exc())
            failed |= not ok
            results["check"].setdefault(label, {})[impl] = dict(ok=ok, **info)
            print(f"check {label:32s} {impl:8s} {'ok  ' if ok else 'FAIL'} " +
                  "  ".join(f"{k} {v:.2e}" if isinstance(v, float) else f"{k} {v}"
                            for k, v in info.items()) + f"  ({time.time() - t0:.1f} s)", flush=True)
    del cases
    torch.cuda.empty_cache()

    for name, (b, s_q, h_q, causal, ls) in shapes.items():
        for L in ls:
            lens = seqlens_for(b, L)
            q, k, bt, sl = make_decode_inputs(b, s_q, h_q, H_KV, lens, seed=3)
            fl, by = flops(s_q, h_q, lens), bytes_moved(b, s_q, h_q, lens)
            runs = {}
            for impl in impls:
                if not supports(impl, s_q, h_q):
                    continue
                try:
                    f = runner(impl, anchor, q, k, bt, sl, causal, sm_scale)
                    f()   # compile outside the timing
                    runs[impl] = f
                except Exception:
                    failed = True
                    results["bench"].append(dict(shape=name, L=L, impl=impl,
                                                 error=traceback.format_exc()))
                    print(f"bench {name} L={L} {impl}: FAILED\n{traceback.format_exc()}", flush=True)
            torch.cuda.synchronize()
            timed = time_interleaved(runs, args.reps, not args.no_graph, warmup, rep)
            for impl, (ms, how, clock_mhz) in timed.items():
                row = dict(shape=name, L=L, impl=impl, ms=ms, tflops=fl / ms / 1e9,
                           gbps=by / ms / 1e6, timing=how, sm_clock_mhz=clock_mhz)
                results["bench"].append(row)
                note = f"  (SM clock {row['sm_clock_mhz']:.0f} MHz)" if row["sm_clock_mhz"] else ""
                print(f"bench {name:14s} L={L:6d} {impl:8s} {ms:8.4f} ms {row['tflops']:7.1f} TFLOP/s "
                      f"{row['gbps']:7.0f} GB/s ({how}){note}", flush=True)
            del q, k, bt, sl, runs
            torch.cuda.empty_cache()

    table = {(r["shape"], r["L"], r["impl"]): r for r in results["bench"] if "tflops" in r}
    lines = ["| shape | L | impl | ms | TFLOP/s | GB/s | x naive | x FlashMLA |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for name, (_, _, _, _, ls) in shapes.items():
        for L in ls:
            for impl in impls:
                r = table.get((name, L, impl))
                if r is None:
                    continue
                n, a = table.get((name, L, "naive")), table.get((name, L, ANCHOR))
                x_n = f"{r['tflops'] / n['tflops']:.2f}" if n else "-"
                if a:
                    x_a = f"{r['tflops'] / a['tflops']:.3f}"
                elif RECORDED.get(name, {}).get(L):
                    x_a = f"{r['tflops'] / RECORDED[name][L]:.3f} (recorded)"
                else:
                    x_a = "-"
                lines.append(f"| {name} | {L} | {impl} | {r['ms']:.4f} | {r['tflops']:.1f} | "
                             f"{r['gbps']:.0f} | {x_n} | {x_a} |")
    print("\nMLA decode, h_kv=1 d=576 dv=512 page 64, seqlens L+2i; TFLOP/s = "
          "2*s_q*sum(seqlens)*h_q*(576+512)/t\n" + "\n".join(lines), flush=True)
    results["table_markdown"] = "\n".join(lines)

    if args.check:
        bars = bar_lines(results["bench"], impls, anchor is not None)
        print("\nbars:")
        for text, met in bars:
            print(f"  [{'met' if met else 'NOT MET' if met is False else 'not measured'}] {text}")
        results["bars"] = [dict(bar=text, met=met) for text, met in bars]

    if args.json:
        write_json(args.json, results)
    if args.plot and table:
        def draw(plt):
            fig, axes = plt.subplots(1, len(shapes), figsize=(5.5 * len(shapes), 4.2), squeeze=False)
            for ax, (name, (b, s_q, h_q, causal, ls)) in zip(axes[0], shapes.items()):
                key = "gbps" if h_q < 64 else "tflops"
                for impl in impls:
                    xs = [L for L in ls if (name, L, impl) in table]
                    ax.plot([L // 1024 for L in xs], [table[(name, L, impl)][key] for L in xs],
                            "o-", label=impl)
                ax.set_xscale("log", base=2)
                finish_axes(ax, "L (K tokens)", "GB/s" if key == "gbps" else "TFLOP/s",
                            f"b={b} s_q={s_q} h_q={h_q}{' causal' if causal else ''}")
            return fig

        save_plot(args.plot, draw)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
