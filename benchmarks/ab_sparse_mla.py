"""A/B two or more versions of a SparseMLA kernel in one process, interleaved, to tell a real
change from run-to-run noise (one run of the benchmark moves by up to ~10 %).

    python3 benchmarks/ab_sparse_mla.py PATH_A.py PATH_B.py [PATH_C.py ...] [--skv 8192 131072]
                                        [--reps 3]

Each file must define a kernel with the signature of tle_kernels/sparse_mla_pipe.py (the function
named after the file's stem, or `sparse_mla_pipe` / `sparse_mla_seesaw`): a `@tle.jit` kernel, or
a hand-edited `@gluon.jit` module (e.g. `tle-dump --gluon` output changed by hand) when trying a
lowering change before implementing it. A file inside a package (a copy next to the bundled
kernels, e.g. tle_kernels/sparse_mla_seesaw_b.py) is imported as a module of it, so its relative
imports (``from .sparse_mla_common import ...``) resolve. A persistent kernel (DEFAULT_CONFIG grid ("programs",),
e.g. tle_kernels/sparse_mla_seesaw.py) is launched through tle_kernels.api.PerCtaLaunch. Every version is
checked against the fp32 reference first; the ratios printed are against the first file.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.sparse_mla_smoke import TOPK, make_inputs, outputs, reference, run  # noqa: E402


def load(path: str):
    from tle_compiler.frontend.modules import module_name_of

    p = Path(path).resolve()
    # a file inside packages (tle_kernels/...) is imported as their module: its relative imports
    # resolve; the folder above the outermost package goes on sys.path
    name, package = module_name_of(str(p))
    if package:
        sys.path.insert(0, str(p.parents[name.count(".")]))
        mod = importlib.import_module(name)
    else:
        spec = importlib.util.spec_from_file_location(p.stem, p)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    from tle_kernels.api import PerCtaLaunch, is_persistent

    for name in (Path(path).stem, "sparse_mla_pipe", "sparse_mla_seesaw"):
        if hasattr(mod, name):
            kernel = getattr(mod, name)
            # a persistent kernel (one program per SM) takes the per-CTA launch through an adapter
            return PerCtaLaunch(kernel) if is_persistent(mod) else kernel
    raise SystemExit(f"{path}: no kernel found")


def main() -> None:
    import torch
    import triton.testing

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="kernel files; the first is the baseline (A)")
    ap.add_argument("--skv", type=int, nargs="*", default=[8192, 131072])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    if len(args.paths) < 2:
        ap.error("give at least two kernel files")
    names = [chr(ord("A") + i) for i in range(len(args.paths))]
    kernels = {n: load(p) for n, p in zip(names, args.paths)}
    for n, p in zip(names, args.paths):
        print(f"{n} = {p}", flush=True)
    sm_scale = 1.0 / math.sqrt(576)
    q, kv, idx = make_inputs(128, 2304, 128, TOPK, seed=1)
    ref = reference(q, kv, idx, sm_scale)
    for k, fn in kernels.items():
        out, lse, ml = run(fn, q, kv, idx, sm_scale, TOPK)
        torch.cuda.synchronize()
        rel = ((out.float() - ref[0]).norm() / ref[0].norm()).item()
        fin = torch.isfinite(ref[1])
        dl = (lse[fin] - ref[1][fin]).abs().max().item()
        print(f"check {k}: out rel {rel:.2e}, lse max abs err {dl:.1e}"
              f"{'' if rel <= 3e-3 and dl <= 1e-4 else '  <-- WRONG'}", flush=True)
    flops = 2 * 4096 * 128 * TOPK * (576 + 512)
    for skv in args.skv:
        q, kv, idx = make_inputs(4096, skv, 128, TOPK, seed=2)
        bufs = outputs(q)
        got = {k: [] for k in kernels}
        for _ in range(args.reps):
            for k, fn in kernels.items():
                ms = triton.testing.do_bench(lambda: run(fn, q, kv, idx, sm_scale, TOPK, bufs),
                                             warmup=50, rep=200, return_mode="median")
                got[k].append(flops / ms / 1e9)
        a = statistics.median(got["A"])
        for k, xs in got.items():
            m = statistics.median(xs)
            print(f"skv={skv}: {k} {m:.1f} TFLOP/s {[round(x, 1) for x in xs]}  {k}/A {m / a:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
