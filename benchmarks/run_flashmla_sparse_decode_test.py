"""FlashMLA's own sparse decode test, run against tle_kernels (`import tle_kernels as flash_mla`).

    python3 benchmarks/run_flashmla_sparse_decode_test.py --tests FLASHMLA/tests [--sample 80]
        [--seed 0] [--all] [--production] [--fail-fast] [--list] [--shard K/N]

FlashMLA's tests folder (its test_flash_mla_sparse_decoding.py with lib.py, ref.py, quant.py and
the kernelkit package beside it) is not part of this repository: pass a checkout's. The test file
is imported unchanged, with a module named ``flash_mla`` that re-exports ``tle_kernels`` put first
on the path (and, where the ``rich`` package is not installed, a stand-in for it: only the test's
main() prints with it, and main() is not called). Its case list is the test's own
``gen_testcase()``, of which only the DeepSeek-V3.2 cases (d_qk = 576, the 656-byte FP8 layout)
are run: the d_qk = 512 ones are FlashMLA's MODEL1 layout, which tle_kernels does not read.

Of those, the runner takes a seeded sample of the correctness cases (``--sample``; ``--all``: every
one) and every corner case (all indices invalid, requests with no tokens, no attention sink). The
test's performance cases time FlashMLA's own kernels by name, so they are left out, or with
``--production`` run as correctness checks only (the V3.2 production batches, topk 2048 from a
32K-token cache, and the peak-throughput case, topk 16384). Each case gets the seed FlashMLA's
main() gives it (its position in the full case list), and the tolerances are the test's own. The
exit status is 1 when a case fails (its output, traceback and parameters are printed; the
summary lists every failed case); ``--list`` prints the chosen cases without running them (no GPU
needed). ``--shard K/N`` runs every N-th of the chosen cases from the K-th (K = 0 .. N - 1), so N
processes sharing one GPU run the whole choice between them.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import tempfile
import time
import traceback
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_FILE = "test_flash_mla_sparse_decoding.py"
D_QK = 576          # DeepSeek-V3.2: 512 NoPE dims (FP8) + 64 RoPE dims (bf16)
SHIM = ("from tle_kernels import *  # noqa: F401,F403\n"
        "from tle_kernels import flash_mla_sparse_fwd, flash_mla_with_kvcache, get_mla_metadata"
        "  # noqa: F401\n")


def install_rich_stand_in() -> None:
    """Modules ``rich``, ``rich.console`` and ``rich.table`` whose Console / Table accept what the
    test's main() does with them, when rich is not installed (the test imports them at the top)."""
    try:
        import rich.console  # noqa: F401
        import rich.table  # noqa: F401
        return
    except ImportError:
        pass

    class Anything:
        def __init__(self, *args, **kwargs):
            pass

        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    rich = types.ModuleType("rich")
    console, table = types.ModuleType("rich.console"), types.ModuleType("rich.table")
    console.Console, table.Table = Anything, Anything
    rich.console, rich.table = console, table
    sys.modules.update({"rich": rich, "rich.console": console, "rich.table": table})


def load_test(tests: Path):
    """FlashMLA's test module, importing ``flash_mla`` as tle_kernels."""
    shim = Path(tempfile.mkdtemp(prefix="tle_flash_mla_"))
    (shim / "flash_mla.py").write_text(SHIM)
    sys.path[:0] = [str(shim), str(ROOT), str(tests)]
    install_rich_stand_in()
    import test_flash_mla_sparse_decoding as T

    return T


def is_corner(raw) -> bool:
    """A corner case of the test: all indices invalid, requests with no tokens, or no sink (its
    correctness cases all have a sink and neither of the others)."""
    return raw.is_all_indices_invalid or raw.have_zero_seqlen_k or not raw.enable_attn_sink


def select(raw_cases, sample: int, seed: int, everything: bool = False, production: bool = False):
    """The cases to run as (index in the full list, raw case), and the counts of the list's
    kinds. Only d_qk = 576 cases that check correctness; a seeded sample of the correctness cases
    (all with ``everything``), every corner case, the performance cases with ``production``."""
    v32 = [(i, r) for i, r in enumerate(raw_cases) if r.d_qk == D_QK and r.check_correctness]
    checks = [(i, r) for i, r in v32 if r.num_runs == 0]
    performance = [(i, r) for i, r in v32 if r.num_runs != 0]
    corner = [(i, r) for i, r in checks if is_corner(r)]
    correctness = [(i, r) for i, r in checks if not is_corner(r)]
    if everything:
        picked = correctness
    else:
        picked = sorted(random.Random(seed).sample(correctness, min(sample, len(correctness))),
                        key=lambda c: c[0])
    chosen = picked + corner + (performance if production else [])
    counts = dict(correctness=len(correctness), corner=len(corner), performance=len(performance),
                  other=len(raw_cases) - len(v32))
    return chosen, counts


def as_run(raw, index: int):
    """The raw case as this runner runs it: no timing runs (correctness only), and, when the test
    leaves the seed to its main(), the seed main() would give it."""
    return dataclasses.replace(raw, num_runs=0, seed=index if raw.seed == -1 else raw.seed)


def describe(raw) -> str:
    extra = ""
    if raw.extra_topk is not None:
        extra = f" extra_topk={raw.extra_topk} extra_block={raw.extra_block_size}"
    flags = [name for name in ("is_varlen", "have_topk_length", "enable_attn_sink",
                               "is_all_indices_invalid", "have_zero_seqlen_k")
             if getattr(raw, name)]
    return (f"b={raw.b} s_q={raw.s_q} h_q={raw.h_q} s_k={raw.s_kv} topk={raw.topk} "
            f"block={raw.block_size}{extra} {' '.join(flags)}").rstrip()


def run(T, chosen, fail_fast: bool):
    """Run the chosen cases with the settings of the test's main(); returns how many ran and the
    failures as (index, raw case, traceback or None)."""
    import torch

    device = torch.device("cuda:0")
    torch.set_default_dtype(torch.bfloat16)
    torch.set_default_device(device)
    torch.cuda.set_device(device)
    torch.set_float32_matmul_precision("high")
    failed, n = [], 0
    for n, (index, raw) in enumerate(chosen, 1):
        t0 = time.time()
        err = None
        try:
            ok = bool(T.test_flash_mla(as_run(raw, index).to_test_param()).is_correct)
        except Exception:
            ok, err = False, traceback.format_exc()
        print(f"[{n}/{len(chosen)}] case {index} {'passed' if ok else 'FAILED'} "
              f"({describe(raw)}; {time.time() - t0:.1f} s)", flush=True)
        if not ok:
            if err:
                print(err, flush=True)
            failed.append((index, raw, err))
            if fail_fast:
                break
    return n, failed


def parse_shard(ap, text: str) -> tuple:
    """(K, N) of ``--shard K/N``; an argparse error unless 0 <= K < N."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        ap.error(f"--shard: expected K/N, e.g. 0/4 (got {text!r})")
    if not 0 <= k < n:
        ap.error(f"--shard: expected 0 <= K < N (got {text!r})")
    return k, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", required=True, help="FlashMLA's tests folder")
    ap.add_argument("--sample", type=int, default=80, help="correctness cases to run (seeded)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--all", action="store_true", help="every correctness case (no sample)")
    ap.add_argument("--production", action="store_true",
                    help="also the V3.2 performance cases, as correctness checks")
    ap.add_argument("--fail-fast", action="store_true", help="stop at the first failure")
    ap.add_argument("--list", action="store_true", help="print the chosen cases, run nothing")
    ap.add_argument("--shard", default="0/1", metavar="K/N",
                    help="run the chosen cases K, K + N, K + 2N, ... (default 0/1: all)")
    args = ap.parse_args(argv)
    if args.sample < 0:
        ap.error("--sample: expected a count >= 0")
    shard_k, shard_n = parse_shard(ap, args.shard)
    tests = Path(args.tests).resolve()
    if not (tests / TEST_FILE).is_file():
        ap.error(f"--tests: {tests} has no {TEST_FILE}")
    T = load_test(tests)
    chosen, counts = select(T.gen_testcase(), args.sample, args.seed, args.all, args.production)
    chosen = chosen[shard_k::shard_n]
    n_corr = sum(1 for _, r in chosen if r.num_runs == 0 and not is_corner(r))
    what = (f"{n_corr} of its {counts['correctness']} correctness cases"
            + ("" if args.all else f" (seed {args.seed})")
            + f", all {counts['corner']} corner cases"
            + (f", all {counts['performance']} performance cases as correctness checks"
               if args.production else f" (its {counts['performance']} performance cases left "
                                       "out)")
            + f"; {counts['other']} cases of other head dims not run"
            + (f"; shard {shard_k}/{shard_n} of them" if shard_n > 1 else ""))
    if args.list:
        for index, raw in chosen:
            print(f"case {index}: {describe(as_run(raw, index))}")
        print(f"{len(chosen)} cases: {what}")
        return 0
    t0 = time.time()
    ran, failed = run(T, chosen, args.fail_fast)
    print(f"\nFlashMLA sparse decode test (d_qk {D_QK}) with tle_kernels: "
          f"{ran - len(failed)}/{ran} cases passed ({what}) in {time.time() - t0:.0f} s")
    for index, raw, _ in failed:
        print(f"  FAILED case {index}: {describe(raw)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
