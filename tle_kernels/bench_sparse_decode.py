"""Sparse MLA decode (DeepSeek-V3.2) benchmark: every built implementation in one process, at
the shapes and caches it supports (the seesaws: h_q 64 / 128, and 8 / 16 / 32 on a 64-head block
with the rows past h_q masked), interleaved; TFLOP/s, GB/s, ratios to the naive kernel and to
FlashMLA, and the sparse decode bars as met / not met.

    python3 -m tle_kernels.bench_sparse_decode [--check] [--quick] [--shape b64_s1_h128 ...]
                                               [--cache fp8 bf16] [--impl naive ...] [--anchor LIB]
                                               [--extra-topk 512] [--topk-length 1024]
                                               [--reps 3] [--no-graph]
                                               [--json results.json] [--plot sparse_decode.png]

Shapes (b, s_q, h_q), one kv head, topk = 2048 index slots per query row naming distinct tokens of
the request's 32K-token cache (``--topk``, ``--s-kv``), pages of 64 tokens handed out at random:
  b64_s1_h128, b128_s1_h128, b64_s2_h128 (MTP), b128_s1_h64   the shapes FlashMLA was measured at
  b128_s1_h32, b128_s1_h16                                     DeepSeek's 128 heads over 4 / 8 GPUs
each with the FP8 cache (656-byte tokens, tle_kernels/fp8_kvcache.py) and the bf16 cache.
TFLOP/s = 2 * b * s_q * h_q * topk * (576 + 512) / t; GB/s = (b * s_q * topk token rows of 656 or
1152 bytes, + q + out) / t. t is the time of one call replayed from a CUDA graph (the timing of
tle_kernels/bench_mla_decode.py, ``time_ms``), ``--no-graph`` plain launches; the median over
``--reps`` rounds, every implementation timed once at a shape before the next one. The kernels
are timed through ``sparse_decode_api.launch_sparse`` (what ``flash_mla_with_kvcache`` runs with
``indices``), outputs allocated once.

Before any timing, every implementation is checked against the fp32 reference with FlashMLA's
sparse-decode test tolerances on the first 16 requests of each shape and cache (10 % invalid
slots, attention sinks with +-inf) and on a batch with every feature (topk_length, an extra cache
of page size 2 with its own lengths, 60 % invalid slots); a failure makes the exit status 1.

``--extra-topk N`` (a multiple of 64): every timed case also gets an extra cache (page 64) and N
extra_indices slots per query row, each valid, naming distinct tokens of a 2N-token extra cache;
TFLOP/s and GB/s then count topk + N slots. The anchor takes no extra cache, so it is not timed
then.

``--topk-length N`` (1 to topk): every timed query row gets FlashMLA's topk_length = N, so only
its first N slots count; TFLOP/s and GB/s count N (+ the extra) slots. The anchor takes no
topk_length here, so it is not timed then and no bar is measured.

``--anchor LIB``: FlashMLA's sparse decode built from its source outside this repository, through
benchmarks/anchor_flashmla_sparse_decode.py's ``load_sparse_decode_anchor(LIB)`` (a callable
``(q, k_cache, indices, sm_scale) -> (out, lse)`` on the FP8 cache), timed in the same rounds on
the FP8 cache. Without it the bars use FlashMLA's figures recorded on an H200 (``RECORDED``) and
say so.

``--check`` prints each bar as met / not met with its figures: the fastest TLE sparse decode
kernel measured >= 1.0x FlashMLA's TFLOP/s at each of FlashMLA's four shapes, FP8 cache.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import time
import traceback
from pathlib import Path

import torch

from . import sparse_decode_api as A
from .bench_mla_decode import time_interleaved, time_ms
from .bench_output import (bench_parser, finish_axes, flashmla_errors, gpu_missing, output_path,
                           save_plot, write_json)
from .fp8_kvcache import BYTES_PER_TOKEN
from .sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference

D_QK, D_V = 576, 512
TOPK = 2048
S_KV = 32768              # tokens of each request's cache
SHAPES = {                # name: (b, s_q, h_q)
    "b64_s1_h128": (64, 1, 128),
    "b128_s1_h128": (128, 1, 128),
    "b64_s2_h128": (64, 2, 128),
    "b128_s1_h64": (128, 1, 64),
    "b128_s1_h32": (128, 1, 32),
    "b128_s1_h16": (128, 1, 16),
}
SHAPE_RE = re.compile(r"b(\d+)_s(\d+)_h(\d+)")


def parse_shape(name: str) -> tuple:
    """(b, s_q, h_q) of a shape name bB_sS_hH (SHAPES' names and any other, e.g. b1_s1_h128):
    B, S >= 1 and H one of the sparse decode's head counts (sparse_decode_api.H_Q), which
    flash_mla_with_kvcache refuses others of (the naive kernel would time them all the same)."""
    m = SHAPE_RE.fullmatch(name)
    if not m or min(int(x) for x in m.groups()) < 1:
        raise ValueError(f"shape {name!r}: expected bB_sS_hH with B, S, H >= 1 (e.g. b4_s1_h128)")
    b, s_q, h_q = (int(x) for x in m.groups())
    if h_q not in A.H_Q:
        raise ValueError(f"shape {name!r}: H must be one of {', '.join(map(str, A.H_Q))} (the "
                         f"sparse decode's head counts), got {h_q}")
    return b, s_q, h_q


def shape_name(text: str) -> str:
    """argparse type of --shape: the name, checked."""
    try:
        parse_shape(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


CACHES = ("fp8", "bf16")
TOKEN_BYTES = {"fp8": BYTES_PER_TOKEN, "bf16": 2 * D_QK}
CHECK_B = 16

# FlashMLA's sparse decode (FP8 cache, topk 2048 from a 32K-token cache per request) measured on
# an H200 through its own interface, TFLOP/s by the formula above; the bars use them when
# --anchor is not given.
RECORDED = {"b64_s1_h128": 387.0, "b128_s1_h128": 406.0, "b64_s2_h128": 408.8,
            "b128_s1_h64": 296.7}
ANCHOR = "flashmla"
ANCHOR_SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / \
    "anchor_flashmla_sparse_decode.py"
TLE_IMPLS = tuple(i for i in A.IMPLS if i != "naive")

# FlashMLA's sparse-decode test tolerances (an element passes within abs_tol or rel_tol)
OUT_ABS, OUT_REL, OUT_COS = 1e-3, 2.01 / 128, 5e-6
LSE_ABS, LSE_REL = 1e-6, 8.01 / 65536


def flops(b: int, s_q: int, h_q: int, topk: int) -> float:
    return 2.0 * b * s_q * h_q * topk * (D_QK + D_V)


def bytes_moved(b: int, s_q: int, h_q: int, topk: int, cache: str) -> float:
    """Each query row's topk token rows as stored, plus q and out (bf16)."""
    return float(b * s_q * topk * TOKEN_BYTES[cache] + 2 * b * s_q * h_q * (D_QK + D_V))


def errors(out, lse, want):
    """(ok, details) with FlashMLA's sparse-decode test tolerances (bench_output.flashmla_errors)."""
    return flashmla_errors(out, lse, want, OUT_ABS, OUT_REL, OUT_COS, LSE_ABS, LSE_REL)


def load_anchor(lib: str, script: Path = ANCHOR_SCRIPT):
    """FlashMLA's sparse decode as ``(q, k_cache, indices, sm_scale) -> (out, lse)``, from the
    anchor hook script (SystemExit naming it when the checkout does not have it)."""
    if not script.exists():
        raise SystemExit(f"--anchor: {script} not found (the FlashMLA sparse decode anchor hook, "
                         "load_sparse_decode_anchor, lives in a checkout's benchmarks/, not in the "
                         "installed package; without --anchor the bars use FlashMLA's recorded "
                         "figures)")
    spec = importlib.util.spec_from_file_location("anchor_flashmla_sparse_decode", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_sparse_decode_anchor(lib)


OPTIONAL = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")


def runner(impl, anchor, x, is_fp8: bool, sm_scale: float):
    """A no-argument callable running one decode of inputs ``x`` with ``impl`` (or the anchor)
    into outputs allocated once."""
    if impl == ANCHOR:
        return lambda: anchor(x["q"], x["k_cache"], x["indices"], sm_scale)
    out, lse = A.empty_outputs(x["q"])
    rest = [x[k] for k in OPTIONAL]
    return lambda: A.launch_sparse(impl, x["q"], x["k_cache"], x["indices"], sm_scale, is_fp8, out,
                                   lse, *rest)


def check_one(impl, anchor, x, is_fp8: bool, sm_scale: float):
    want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], D_V, sm_scale,
                                   *(x[k] for k in OPTIONAL))
    if impl == ANCHOR:
        out, lse = anchor(x["q"], x["k_cache"], x["indices"], sm_scale)
    else:
        out, lse = (t.fill_(float("nan")) for t in A.empty_outputs(x["q"]))
        A.launch_sparse(impl, x["q"], x["k_cache"], x["indices"], sm_scale, is_fp8, out, lse,
                        *(x[k] for k in OPTIONAL))
    torch.cuda.synchronize()
    return errors(out, lse, want)


def skip_reason(impl, x, is_fp8: bool):
    """Why a built implementation does not run inputs ``x`` (sparse_decode_api's
    ``sparse_unsupported_reason``: the seesaw takes the bf16 cache only, seesaw-fp8 the FP8 one), or
    None; the anchor's rule is ``anchor_takes``."""
    if impl == ANCHOR:
        return None
    return A.sparse_unsupported_reason(impl, x["q"], x["k_cache"], x["indices"], is_fp8,
                                       *(x[k] for k in OPTIONAL))


ANCHOR_H_Q = (64, 128)  # FlashMLA's sm90 sparse FP8 decode has kernels for these head counts only


def anchor_takes(x, cache: str) -> bool:
    """The anchor runs FlashMLA's FP8 path, without the optional tensors, at the head counts
    FlashMLA's sm90 kernels serve (engines pad 8-32 heads to 64 for it)."""
    return (cache == "fp8" and all(x[k] is None for k in OPTIONAL)
            and int(x["q"].shape[2]) in ANCHOR_H_Q)


def bar_lines(results, anchored: bool, extra_topk: int = 0, topk_length: int = 0):
    """Each bar as (text, met: True / False / None = not measured). With an extra cache or a
    topk_length in the timed cases (``extra_topk``, ``topk_length``) no bar is measured:
    FlashMLA's figures are for calls without."""
    t = {(r["shape"], r["cache"], r["impl"]): r for r in results if "tflops" in r}
    src = "FlashMLA measured here" if anchored else "FlashMLA's recorded figure (no --anchor)"
    lines = []
    for shape in RECORDED:
        label = f"TLE sparse decode >= 1.0x FlashMLA, {shape} fp8"
        if extra_topk or topk_length:
            flag, what = (("--extra-topk", "an extra cache") if extra_topk
                          else ("--topk-length", "topk_length"))
            lines.append((f"{label}: not measured ({flag}: the bars are for calls without "
                          f"{what})", None))
            continue
        ref = t[(shape, "fp8", ANCHOR)]["tflops"] if (shape, "fp8", ANCHOR) in t else None
        if not anchored:
            ref = RECORDED[shape]
        tle = [(t[(shape, "fp8", i)]["tflops"], i) for i in TLE_IMPLS if (shape, "fp8", i) in t]
        if not tle or ref is None:
            why = "no TLE sparse decode kernel run" if not tle else "FlashMLA (--anchor) not run"
            lines.append((f"{label}: not measured ({why})", None))
            continue
        best, impl = max(tle)
        x = best / ref
        lines.append((f"{label}: {impl} {best:.1f} vs {ref:.1f} TFLOP/s ({src}) = {x:.3f}x",
                      x >= 1.0))
    return lines


def parse_args(argv=None):
    ap = bench_parser("tle_kernels.bench_sparse_decode", __doc__)
    ap.add_argument("--shape", nargs="+", default=list(SHAPES), type=shape_name,
                    metavar="bB_sS_hH",
                    help="shapes to time: any bB_sS_hH, H one of "
                         + ", ".join(map(str, A.H_Q)) + " (e.g. b4_s1_h128); default "
                         + " ".join(SHAPES))
    ap.add_argument("--cache", nargs="+", default=list(CACHES), choices=CACHES,
                    help="KV caches to time (default: fp8 bf16)")
    ap.add_argument("--impl", nargs="+", default=list(A.IMPLS), choices=A.IMPLS,
                    help="implementations to time (default: all; those not built are skipped)")
    ap.add_argument("--topk", type=int, default=TOPK, help=f"index slots per query row (default {TOPK}; a multiple of {A.TOPK_TILE})")
    ap.add_argument("--s-kv", type=int, default=S_KV,
                    help=f"tokens of each request's cache (default {S_KV}; at least --topk)")
    ap.add_argument("--extra-topk", type=int, default=0,
                    help="extra cache slots per query row in the timed cases (default 0: none; see below)")
    ap.add_argument("--topk-length", type=int, default=0,
                    help="every timed query row's topk_length (1 to --topk; default 0: none; see below)")
    ap.add_argument("--anchor", default=None, metavar="LIB",
                    help="FlashMLA's own sparse decode built from LIB, timed in the same rounds "
                         "(see below)")
    ap.add_argument("--reps", type=int, default=1, help="interleaved rounds (default 1; the median is reported)")
    ap.add_argument("--check", action="store_true", help="print each bar as met / not met")
    ap.add_argument("--quick", action="store_true", help="warmup 10 ms, rep 50 ms")
    ap.add_argument("--no-graph", action="store_true",
                    help="time plain launches (do_bench) instead of CUDA-graph replays")
    ap.add_argument("--json", default=None, type=output_path, help="write the results to this path")
    ap.add_argument("--plot", default="sparse_decode_bench.png", type=output_path,
                    help="PNG path (default sparse_decode_bench.png; '' = no plot)")
    args = ap.parse_args(argv)
    if args.topk < A.TOPK_TILE or args.topk % A.TOPK_TILE:
        ap.error(f"--topk: a positive multiple of {A.TOPK_TILE}, got {args.topk}")
    if args.extra_topk < 0 or args.extra_topk % A.TOPK_TILE:
        ap.error(f"--extra-topk: 0 or a positive multiple of {A.TOPK_TILE}, got "
                 f"{args.extra_topk}")
    if not 0 <= args.topk_length <= args.topk:
        ap.error(f"--topk-length: 1 to --topk ({args.topk}), or 0 for none; got "
                 f"{args.topk_length}")
    if args.s_kv < 1 or args.reps < 1:
        ap.error("--s-kv and --reps must be at least 1")
    if args.s_kv < args.topk:
        # the timed slots name distinct tokens of the request's cache; with fewer tokens than
        # slots the rest would be invalid (-1) and skipped, yet counted in TFLOP/s and GB/s
        ap.error(f"--s-kv {args.s_kv}: each query row's {args.topk} slots (--topk) name distinct "
                 f"tokens of its request's cache, so --s-kv must be at least --topk")
    return args


def check_cases(shapes, caches, topk):
    """(label, cache, inputs) of the checks: the first CHECK_B requests of each shape and cache,
    as timed (no optional tensors) and with attn_sink, then one batch with every feature per
    cache. Every implementation timed is checked on the inputs it is timed on."""
    for cache in caches:
        fp8 = cache == "fp8"
        for name, (b, s_q, h_q) in shapes.items():
            n = min(b, CHECK_B)
            for sink in (False, True):
                x = make_sparse_decode_inputs(n, s_q, h_q, topk, is_fp8=fp8, device="cuda",
                                              seed=1, attn_sink=sink)
                yield f"{name} {cache} first {n}{' sink' if sink else ''}", cache, x
        lengths = [0, 1, topk // 3, topk, topk + 100, 64, topk - 1, 5]
        x = make_sparse_decode_inputs(8, 2, 128, topk, is_fp8=fp8, device="cuda", seed=2,
                                      invalid=0.6, attn_sink=True, topk_length=lengths,
                                      extra_topk=512, extra_page=2,
                                      extra_topk_length=[512, 0, 3, 512, 100, 511, 256, 9])
        yield f"features {cache}", cache, x


def main(argv=None) -> int:
    args = parse_args(argv)
    if gpu_missing():
        return 2
    anchor = load_anchor(args.anchor) if args.anchor else None
    import triton

    torch.backends.cuda.matmul.allow_tf32 = False       # the fp32 reference in full fp32
    warmup, rep = (10, 50) if args.quick else (50, 200)
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  triton "
          f"{triton.__version__}", flush=True)
    built = A.built_impls()
    impls = []
    for i in args.impl:
        if i in built:
            impls.append(i)
        else:
            print(f"skip {i}: the sparse decode has no {i!r} kernel yet (built: {built})",
                  flush=True)
    shapes = {name: parse_shape(name) for name in args.shape}
    sm_scale = D_QK ** -0.5
    results = {"shapes": {k: dict(zip(("b", "s_q", "h_q"), v)) for k, v in shapes.items()},
               "topk": args.topk, "extra_topk": args.extra_topk, "s_kv": args.s_kv,
               "topk_length": args.topk_length,
               "caches": list(args.cache),
               "timing": dict(graph=not args.no_graph, warmup=warmup, rep=rep,
                              return_mode="median", reps=args.reps),
               "check": {}, "bench": []}
    failed = False

    for label, cache, x in check_cases(shapes, args.cache, args.topk):
        # the anchor is timed, not checked: the checks are of this package's kernels
        for impl in impls:
            why = skip_reason(impl, x, cache == "fp8")
            if why is not None:
                print(f"check {label:28s} {impl:10s} skip: {why}", flush=True)
                continue
            t0 = time.time()
            try:
                ok, info = check_one(impl, anchor, x, cache == "fp8", sm_scale)
            except Exception:
                ok, info = False, dict(error=traceback.format_exc())
            failed |= not ok
            results["check"].setdefault(label, {})[impl] = dict(ok=ok, **info)
            print(f"check {label:28s} {impl:10s} {'ok  ' if ok else 'FAIL'} " +
                  "  ".join(f"{k} {v:.2e}" if isinstance(v, float) else f"{k} {v}"
                            for k, v in info.items()) + f"  ({time.time() - t0:.1f} s)",
                  flush=True)
        del x
    torch.cuda.empty_cache()

    for name, (b, s_q, h_q) in shapes.items():
        for cache in args.cache:
            # every slot valid (the work FlashMLA was measured on); tokens no slot names are
            # never read, so they are left as they are (no NaN poison to write)
            x = make_sparse_decode_inputs(b, s_q, h_q, args.topk, s_kv=args.s_kv,
                                          is_fp8=cache == "fp8", device=dev, seed=3,
                                          invalid=0.0, poison=False,
                                          extra_topk=args.extra_topk or None,
                                          topk_length=([args.topk_length] * b
                                                       if args.topk_length else None))
            slots = (args.topk_length or args.topk) + args.extra_topk
            fl = flops(b, s_q, h_q, slots)
            by = bytes_moved(b, s_q, h_q, slots, cache)
            runs = {}
            for impl in impls + ([ANCHOR] if anchor is not None and anchor_takes(x, cache)
                                 else []):
                if skip_reason(impl, x, cache == "fp8") is not None:
                    continue    # said at the checks
                try:
                    f = runner(impl, anchor, x, cache == "fp8", sm_scale)
                    f()   # compile outside the timing
                    runs[impl] = f
                except Exception:
                    failed = True
                    results["bench"].append(dict(shape=name, cache=cache, impl=impl,
                                                 error=traceback.format_exc()))
                    print(f"bench {name} {cache} {impl}: FAILED\n{traceback.format_exc()}",
                          flush=True)
            torch.cuda.synchronize()
            timed = time_interleaved(runs, args.reps, not args.no_graph, warmup, rep,
                                     timer=time_ms)
            for impl, (ms, how, clock_mhz) in timed.items():
                row = dict(shape=name, cache=cache, impl=impl, ms=ms, tflops=fl / ms / 1e9,
                           gbps=by / ms / 1e6, timing=how, sm_clock_mhz=clock_mhz)
                results["bench"].append(row)
                note = f"  (SM clock {row['sm_clock_mhz']:.0f} MHz)" if row["sm_clock_mhz"] else ""
                print(f"bench {name:13s} {cache:4s} {impl:10s} {ms:8.4f} ms "
                      f"{row['tflops']:7.1f} TFLOP/s {row['gbps']:7.0f} GB/s ({how}){note}",
                      flush=True)
            del x, runs
            torch.cuda.empty_cache()

    table = {(r["shape"], r["cache"], r["impl"]): r for r in results["bench"] if "tflops" in r}
    lines = ["| shape | cache | impl | ms | TFLOP/s | GB/s | x naive | x FlashMLA |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for name in shapes:
        for cache in args.cache:
            for impl in impls + [ANCHOR]:
                r = table.get((name, cache, impl))
                if r is None:
                    continue
                n, a = table.get((name, cache, "naive")), table.get((name, cache, ANCHOR))
                x_n = f"{r['tflops'] / n['tflops']:.2f}" if n else "-"
                if a:
                    x_a = f"{r['tflops'] / a['tflops']:.3f}"
                elif (cache == "fp8" and name in RECORDED and not args.extra_topk
                      and not args.topk_length):
                    x_a = f"{r['tflops'] / RECORDED[name]:.3f} (recorded)"
                else:
                    x_a = "-"
                lines.append(f"| {name} | {cache} | {impl} | {r['ms']:.4f} | {r['tflops']:.1f} | "
                             f"{r['gbps']:.0f} | {x_n} | {x_a} |")
    extra = (f" + an extra cache, {args.extra_topk} slots of {2 * args.extra_topk} tokens"
             if args.extra_topk else "")
    if args.topk_length:
        extra += f", topk_length {args.topk_length} on every row"
    print(f"\nSparse MLA decode, h_kv=1 d=576 dv=512 page 64, topk {args.topk} of {args.s_kv} "
          f"tokens per request{extra}; TFLOP/s = 2*b*s_q*h_q*slots*(576+512)/t\n"
          + "\n".join(lines), flush=True)
    results["table_markdown"] = "\n".join(lines)

    if args.check:
        bars = bar_lines(results["bench"], anchor is not None, args.extra_topk,
                         args.topk_length)
        print("\nbars:")
        for text, met in bars:
            print(f"  [{'met' if met else 'NOT MET' if met is False else 'not measured'}] {text}")
        results["bars"] = [dict(bar=text, met=met) for text, met in bars]

    if args.json:
        write_json(args.json, results)
    if args.plot and table:
        save_plot(args.plot, lambda plt: draw(plt, table, shapes, args.cache,
                                              impls + [ANCHOR],
                                              anchor is None and not args.extra_topk
                                              and not args.topk_length))
    return 1 if failed else 0


def draw(plt, table, shapes, caches, impls, recorded: bool):
    """One panel per cache format: TFLOP/s per shape, a bar per implementation; FlashMLA's
    recorded figures as marks on the FP8 panel when it was not run here."""
    fig, axes = plt.subplots(1, len(caches), figsize=(1.6 * len(shapes) * len(caches) + 2, 4.2),
                             squeeze=False)
    names = list(shapes)
    for ax, cache in zip(axes[0], caches):
        present = [i for i in impls if any((n, cache, i) in table for n in names)]
        width = 0.8 / max(1, len(present))
        for k, impl in enumerate(present):
            xs = [j for j, n in enumerate(names) if (n, cache, impl) in table]
            ax.bar([j + (k - (len(present) - 1) / 2) * width for j in xs],
                   [table[(names[j], cache, impl)]["tflops"] for j in xs], width, label=impl)
        if recorded and cache == "fp8":
            xs = [j for j, n in enumerate(names) if n in RECORDED]
            ax.plot(xs, [RECORDED[names[j]] for j in xs], "k_", markersize=18, mew=2,
                    label="FlashMLA (recorded)")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=20)
        finish_axes(ax, "shape (b, s_q, h_q)", "TFLOP/s", f"sparse decode, {cache} cache")
    return fig


if __name__ == "__main__":
    sys.exit(main())
