"""``python3 -m tle_kernels``: the main job, wherever you are.

On a machine with a CUDA GPU, the SparseMLA prefill benchmark with its correctness check first
(``python3 -m tle_kernels.bench_sparse_mla --check``). Without one, what a CPU can do: dump and
verify the barrier graph of the bundled TLE-Pipe kernel (``tle-dump --graph``) and compile it for
sm_90a to show its TTGIR's warp_specialize and barriers. Extra arguments go to the benchmark.
"""

from __future__ import annotations

import sys
from pathlib import Path

USAGE = """\
usage: python3 -m tle_kernels [-h] [BENCHMARK ARGUMENTS ...]

The main job of the bundled kernels.
  On a CUDA GPU (Hopper): the SparseMLA prefill benchmark with its correctness check first,
    python3 -m tle_kernels.bench_sparse_mla --check [BENCHMARK ARGUMENTS ...]
    (its flags: python3 -m tle_kernels.bench_sparse_mla --help).
  Without one: verify the bundled TLE-Pipe kernel's pipe protocol and print its barrier graph
    (tle-dump --graph tle_kernels/sparse_mla_pipe.py), then compile it for sm_90a (no GPU
    needed) and show its TTGIR's warp_specialize and barriers. Benchmark arguments are checked
    and, with no GPU to run the benchmark on, ignored (a note on stderr says so).

exit status: 0 done; 1 the kernel is rejected or a benchmark check failed; 2 a bad argument; 3 the
kernel is not proved (tle-dump's statuses, tle-dump --help).

The other entry points: tle-dump --help; python3 -m tle_kernels.bench_mla_decode --help;
python3 -m tle_kernels.bench_sparse_decode --help; the Python API: help(tle_kernels).
"""


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE, end="")
        return 0
    try:
        import torch

        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if gpu:
        from . import bench_sparse_mla

        return bench_sparse_mla.main(["--check", *argv]) or 0
    if argv:
        # checked as the benchmark would check them (a bad flag: its usage error, exit 2), then
        # ignored: a CPU runs no benchmark, and silence would look as if they had been used
        from .bench_sparse_mla import build_parser, parse_args

        ap = build_parser()
        ap.prog = "python3 -m tle_kernels"
        parse_args(["--check", *argv], ap)
        print(f"python3 -m tle_kernels: note: no CUDA GPU here, so no benchmark runs and its "
              f"arguments ({' '.join(argv)}) are ignored", file=sys.stderr, flush=True)
    from tle_compiler.cli.dump import main as tle_dump

    kernel = str(Path(__file__).with_name("sparse_mla_pipe.py"))
    print(f"No CUDA GPU here: verifying the bundled kernel's pipe protocol instead.\n$ tle-dump --graph {kernel}",
          flush=True)
    code = tle_dump(["--graph", kernel])
    if code:
        return code
    print("\nCompiling it for sm_90a (no GPU needed); its TTGIR's warp_specialize and barriers:", flush=True)
    from tle_compiler.lowering import compile_kernel

    from . import sparse_mla_pipe as mod

    c = compile_kernel(mod.sparse_mla_pipe, mod.DEFAULT_CONFIG["signature"], mod.DEFAULT_CONFIG["constexprs"])
    for line in c.asm["ttgir"].splitlines():
        if "ttng.init_barrier" in line or "ttg.warp_specialize(" in line:
            print("  " + line.strip()[:160])
    print("\nOn a Hopper GPU the same command runs the SparseMLA benchmark (docs/BENCHMARKS.md).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
