"""How long `tle-dump --graph` (and, with --ttgir, `tle-dump --ttgir`) takes on the bundled kernels,
end to end (a fresh process each run: interpreter start, imports, frontend, all passes, rendering;
for --ttgir the whole compile, with an empty Triton cache). Prints the median of N runs.

    python benchmarks/tle_dump_latency.py [-n 7] [--bundled] [--ttgir] [--baseline DIR]

--bundled: every bundled kernel file (tle_kernels/*.py that calls tle.gpu.warp_specialize), the
bar's whole scope, rather than the default set.

--baseline DIR: another checkout of the repository (e.g. `git worktree add DIR <commit>`); each
run times it and this checkout interleaved, on the same inputs, and prints both and their ratio.
Bytecode is cached as an installed package caches it (PYTHONDONTWRITEBYTECODE is cleared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["tle_kernels/sparse_mla_pipe.py", "tle_kernels/sparse_mla_seesaw.py",
           "tle_kernels/sparse_mla_pipe.pipe", "tle_kernels/sparse_mla_seesaw.pipe",
           "tle_kernels/mla_decode_seesaw.py", "tle_kernels/sparse_decode_seesaw_fp8.py",
           "benchmarks/tle_dump_nested.pipe"]  # two nested loops over N, capacity 8 (bar: < 5 s)
TTGIR_TARGETS = ["tle_kernels/sparse_mla_pipe.py", "tle_kernels/sparse_mla_seesaw.py"]


def bundled() -> list[str]:
    """The bundled kernel files: those of tle_kernels/ that call tle.gpu.warp_specialize."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tle_kernels").glob("*.py")
                  if "tle.gpu.warp_specialize(" in p.read_text(encoding="utf-8"))


def run_once(root: Path, flag: str, target: str) -> float:
    """Seconds of one `tle-dump FLAG TARGET` in a fresh process of the checkout at ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if flag == "--ttgir":
        env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="tle_latency_")  # the whole compile
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", flag, target], cwd=root,
                       env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode not in (0, 3):  # proved, or bounded (the nested target)
        sys.exit(f"{root}: tle-dump {flag} {target} exited {r.returncode}\n{r.stderr}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=7, help="runs per target (default 7)")
    ap.add_argument("--bundled", action="store_true",
                    help="time every bundled kernel file (tle_kernels/*.py) and the .pipe targets")
    ap.add_argument("--ttgir", action="store_true", help="also time --ttgir on the .py kernels")
    ap.add_argument("--baseline", type=Path, help="another checkout, timed interleaved")
    args = ap.parse_args()
    targets = TARGETS if not args.bundled else \
        bundled() + [t for t in TARGETS if not t.endswith(".py")]
    cases = [("--graph", t) for t in targets]
    if args.ttgir:
        cases += [("--ttgir", t) for t in TTGIR_TARGETS]
    roots = {"this": ROOT}
    if args.baseline:
        roots = {"baseline": args.baseline.resolve(), "this": ROOT}
    width = max(44, max(len(f"{f} {t}") for f, t in cases))
    if args.baseline:
        print(f"{'command':{width}} {'baseline s':>10} {'this s':>8} {'this/baseline':>13}")
    else:
        print(f"{'command':{width}} {'median s':>9} {'min s':>7} {'max s':>7}")
    for flag, t in cases:
        times: dict[str, list[float]] = {k: [] for k in roots}
        for _ in range(args.n):
            for k, root in roots.items():
                times[k].append(run_once(root, flag, t))
        what = f"{flag} {t}"
        if args.baseline:
            b, h = statistics.median(times["baseline"]), statistics.median(times["this"])
            print(f"{what:{width}} {b:10.3f} {h:8.3f} {h / b:13.3f}", flush=True)
        else:
            xs = times["this"]
            print(f"{what:{width}} {statistics.median(xs):9.3f} {min(xs):7.3f} {max(xs):7.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
