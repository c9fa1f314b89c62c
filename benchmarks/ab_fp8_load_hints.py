"""A/B of cache hints on the FP8 sparse decode's token loads: each variant is a copy of
tle_kernels (under /tmp/variants, imported as its own package) whose ``fp8_half`` gives its three
loads (the NoPE bytes and the two scales) the variant's ``tl.load`` keywords, so every variant and
FlashMLA run in one process. Each is checked against the fp32 reference, then timed as CUDA-graph
replays, interleaved, medians of ``--reps`` rounds (do_bench, warm-up 10 ms, 50 ms).

    python3 benchmarks/ab_fp8_load_hints.py [--variants base ef cg el] [--anchor LIB] [--reps 5]
    python3 benchmarks/ab_fp8_load_hints.py --cpu        # ptxas report and the PTX load forms only

Variants: base (no hint), ef (eviction_policy="evict_first"), cg (cache_modifier=".cg": L2 only),
el (eviction_policy="evict_last"). A cache_modifier and an eviction_policy together are refused
by the frontend (no instruction takes both).
"""
import os, re, shutil, statistics, sys, importlib
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VARIANTS = {
    "base": None,
    "ef": 'eviction_policy="evict_first"',
    "cg": 'cache_modifier=".cg"',
    "el": 'eviction_policy="evict_last"',
}

def patched_copy(name, hint, where):
    """A copy of tle_kernels at ``where``/tk_``name`` whose fp8_half gives its three loads the
    keywords ``hint`` (a string of Python keyword arguments); returns the copy's folder."""
    dst = Path(where) / f"tk_{name}"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(ROOT / "tle_kernels", dst, ignore=shutil.ignore_patterns("__pycache__"))
    f = dst / "sparse_decode_seesaw_fp8.py"
    src = f.read_text()
    a = src.index("def fp8_half"); b = src.index("def dequantized")
    body = src[a:b]
    n = body.count("other=0.0)")
    if n != 3:
        raise SystemExit(f"fp8_half has {n} loads ending in other=0.0), not 3: update this script")
    f.write_text(src[:a] + body.replace("other=0.0)", f"other=0.0, {hint})") + src[b:])
    return dst


def make(name, hint, where="/tmp/variants"):
    """The package of variant ``name``: tle_kernels itself for no hint, else a patched copy."""
    if hint is None:
        return importlib.import_module("tle_kernels")
    patched_copy(name, hint, where)
    if where not in sys.path:
        sys.path.insert(0, where)
    return importlib.import_module(f"tk_{name}")


def cpu(names):
    from tle_compiler.lowering import compile_kernel, ptxas_stats
    import collections
    for n in names:
        pkg = make(n, VARIANTS[n])
        mod = importlib.import_module(pkg.__name__ + ".sparse_decode_split_fp8")
        cfg = mod.DEFAULT_CONFIG
        c = compile_kernel(mod.sparse_decode_split_fp8, cfg["signature"], cfg["constexprs"])
        ptx = c.asm["ptx"]
        st = ptxas_stats(c)
        print(n, f"registers {st['registers']}, spills {st['spill_stores']} / {st['spill_loads']} B,",
              collections.Counter(re.findall(r"\b(ld\.global[\w.:]*)", ptx)), flush=True)

def gpu(names, shapes, reps, anchor_lib):
    import torch
    from benchmarks.interleaved import graph_replay_ms
    from tle_kernels.bench_sparse_decode import load_anchor, parse_shape
    from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs, sparse_decode_reference
    pkgs = {n: make(n, VARIANTS[n]) for n in names}
    apis = {n: importlib.import_module(p.__name__ + ".sparse_decode_api") for n, p in pkgs.items()}
    anchor = load_anchor(anchor_lib) if anchor_lib else None
    scale = 576 ** -0.5
    for name in shapes:
        b, s_q, h_q = parse_shape(name)
        x = make_sparse_decode_inputs(b, s_q, h_q, 2048, s_kv=32768, is_fp8=True, seed=b,
                                      invalid=0.0, poison=False)
        want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, scale)
        cases = {}
        for n, A in apis.items():
            out, lse = A.empty_outputs(x["q"])
            ran = A.launch_sparse("auto", x["q"], x["k_cache"], x["indices"], scale, True, out, lse)
            err = (out.float() - want[0].float()).abs().max().item()
            lerr = (lse - want[1]).nan_to_num(0.0).abs().max().item()
            print(f"{name} {n} ran {ran}: out err {err:.2e} lse err {lerr:.2e}", flush=True)
            assert err < 1e-2 and lerr < 1e-4
            cases[n] = (lambda A=A, out=out, lse=lse: A.launch_sparse(
                "auto", x["q"], x["k_cache"], x["indices"], scale, True, out, lse))
        if anchor is not None and h_q in (64, 128):
            cases["FlashMLA"] = lambda: anchor(x["q"], x["k_cache"], x["indices"], scale)
        t = {k: [] for k in cases}
        for _ in range(reps):
            for k, f in cases.items():
                t[k].append(graph_replay_ms(f, warmup=10, rep=50))
        us = {k: statistics.median(v) * 1e3 for k, v in t.items()}
        flop = 2 * b * s_q * h_q * 2048 * (576 + 512)
        line = f"{name}: " + ", ".join(f"{k} {v:.1f}us {flop / v / 1e6:.1f}TF" for k, v in us.items())
        if "base" in us:
            line += " | base/x: " + ", ".join(f"{k} {us['base'] / v:.3f}" for k, v in us.items() if k != "base")
        if "FlashMLA" in us:
            line += " | x/FM: " + ", ".join(f"{k} {us['FlashMLA'] / v:.3f}" for k, v in us.items() if k != "FlashMLA")
        print(line, flush=True)
        del x
        torch.cuda.empty_cache()

if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="store_true", help="compile each variant for sm_90a and print its loads")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--shapes", nargs="+", metavar="bB_sS_hH",
                    default=["b128_s1_h128", "b64_s1_h128", "b64_s2_h128", "b128_s1_h64"])
    ap.add_argument("--reps", type=int, default=5, help="interleaved rounds (median reported)")
    ap.add_argument("--anchor", default=None, help="FlashMLA sparse decode anchor library")
    a = ap.parse_args()
    if a.cpu:
        cpu(a.variants)
    else:
        gpu(a.variants, a.shapes, a.reps, a.anchor)
