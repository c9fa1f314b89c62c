"""``python3 -m tle_kernels``: the main job, wherever you are.

On a machine with a CUDA GPU, the SparseMLA prefill benchmark with its correctness check first
(``python3 -m tle_kernels.bench_sparse_mla --check``). Without one, what a CPU can do: dump and
verify the barrier graph of the bundled TLE-Pipe kernel (``tle-dump --graph``) and compile it for
sm_90a to show its TTGIR's warp_specialize and barriers. Extra arguments go to the benchmark.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        import torch

        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if gpu:
        from . import bench_sparse_mla

        return bench_sparse_mla.main(["--check", *argv]) or 0
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
