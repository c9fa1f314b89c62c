"""How long `tle-dump --graph` takes on the bundled kernels, end to end (a fresh process each run:
interpreter start, imports, frontend, all passes, rendering). Prints the median of N runs.

    python benchmarks/tle_dump_latency.py [-n 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["tle_kernels/sparse_mla_pipe.py", "tle_kernels/sparse_mla_seesaw.py",
           "tle_kernels/sparse_mla_pipe.pipe", "tle_kernels/sparse_mla_seesaw.pipe",
           "benchmarks/tle_dump_nested.pipe"]  # two nested loops over N, capacity 8 (bar: < 5 s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=7, help="runs per target (default 7)")
    args = ap.parse_args()
    print(f"{'target':34} {'median s':>9} {'min s':>7} {'max s':>7}")
    for t in TARGETS:
        times = []
        for _ in range(args.n):
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, "-m", "tle_compiler.cli.dump", "--graph", t], cwd=ROOT,
                               capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if r.returncode not in (0, 3):  # proved, or bounded (the nested target)
                sys.exit(f"{t}: tle-dump exited {r.returncode}\n{r.stderr}")
        print(f"{t:34} {statistics.median(times):9.3f} {min(times):7.3f} {max(times):7.3f}", flush=True)


if __name__ == "__main__":
    main()
