"""FlashMLA's own dense decode test, run against tle_kernels (`import tle_kernels as flash_mla`).

    python3 benchmarks/run_flashmla_decode_test.py --tests FLASHMLA/tests [--sample 120] [--seed 0]
        [--shard K/N]

FlashMLA's tests folder (its test_flash_mla_dense_decoding.py and the kernelkit package beside it)
is not part of this repository: pass a checkout's. The test file is imported unchanged, with a
module named ``flash_mla`` that re-exports ``tle_kernels`` put first on the path. It runs a seeded
sample of the test's correctness cases (all 2,304 take long) and every one of its corner cases
(requests with no tokens); its performance cases time FlashMLA's own kernel by name, so they are
left out. The test asserts FlashMLA's tolerances on every case; the exit status is 1 on the first
failure (its traceback names the case). ``--shard K/N`` runs every N-th case from the K-th, so N
processes sharing one GPU run them all between them.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIM = ("from tle_kernels import *  # noqa: F401,F403\n"
        "from tle_kernels import flash_mla_sparse_fwd, flash_mla_with_kvcache, get_mla_metadata"
        "  # noqa: F401\n")


def cases(T, sample: int, seed: int):
    """(sampled correctness cases, corner cases), as the test's own main() lists them."""
    corr = [T.TestParam(b, s_q, s_k, varlen, causal, test_performance=False, block_size=64,
                        h_q=h_q, h_kv=h_kv)
            for b in [1, 2, 6, 64] for s_q in [1, 2, 4] for s_k in [20, 140, 4096]
            for h_q in [1, 3, 9, 63, 64, 126, 128] for h_kv in [1, 2, 3, 8]
            for varlen in [False, True] for causal in [False, True] if h_q % h_kv == 0]
    corner = [T.TestParam(128, 2, 4096, is_varlen=True, is_causal=causal, test_performance=False,
                          have_zero_seqlen_k=True, h_q=h_q, h_kv=h_kv)
              for h_q in [1, 3, 9, 63, 64, 126, 128] for h_kv in [1, 2, 3, 8]
              for causal in [False, True] if h_q % h_kv == 0]
    return random.Random(seed).sample(corr, min(sample, len(corr))), corner, len(corr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", required=True, help="FlashMLA's tests folder")
    ap.add_argument("--sample", type=int, default=120, help="correctness cases to run")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--shard", default="0/1", metavar="K/N",
                    help="run the cases K, K + N, K + 2N, ... (default 0/1: all)")
    args = ap.parse_args(argv)
    from run_flashmla_sparse_decode_test import parse_shard

    shard_k, shard_n = parse_shard(ap, args.shard)
    tests = Path(args.tests).resolve()
    if not (tests / "test_flash_mla_dense_decoding.py").is_file():
        ap.error(f"--tests: {tests} has no test_flash_mla_dense_decoding.py")
    shim = Path(tempfile.mkdtemp(prefix="tle_flash_mla_"))
    (shim / "flash_mla.py").write_text(SHIM)
    sys.path[:0] = [str(shim), str(ROOT), str(tests)]
    import torch

    import test_flash_mla_dense_decoding as T

    device = torch.device("cuda:0")
    torch.set_default_dtype(torch.bfloat16)
    torch.set_default_device(device)
    torch.cuda.set_device(device)
    sampled, corner, n_all = cases(T, args.sample, args.seed)
    mine = (sampled + corner)[shard_k::shard_n]
    t0 = time.time()
    for n, case in enumerate(mine, 1):
        T.test_flash_mla(case)
        print(f"[{n}/{len(mine)}] passed", flush=True)
    print(f"FlashMLA dense decode test with tle_kernels: {len(mine)} cases passed "
          f"({len(sampled)} of its {n_all} correctness cases, seed {args.seed}; all {len(corner)} "
          f"corner cases" + (f"; shard {shard_k}/{shard_n} of them" if shard_n > 1 else "")
          + f") in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
