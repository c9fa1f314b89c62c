"""Run every decode implementation once on hostile inputs, for compute-sanitizer:

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 scripts/decode_memcheck.py

Each implementation (naive, pipe, seesaw) runs unsplit and split (n_split 3), and the seesaws also
one program per request (their own loop, which full batches take; the batch here is small
enough to run balanced otherwise), on a batch that mixes
empty, one-token, page-edge and multi-page requests, causal on and off, s_q 1 and 2, h_q 16 and 128,
with the cache poisoned past every request's seqlen (NaN rows, out-of-range block ids in unused
block-table entries: tle_kernels/decode_reference.make_decode_inputs). Outputs are poisoned with
NaN before each launch and compared with the fp32 reference afterwards by the GPU tests' check
(tests/gpu/decode_checks.py), so an unwritten element or a read past seqlen fails the run even
where memcheck sees nothing. Exit status 1 on a mismatch.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.gpu.decode_checks import check  # noqa: E402
from tle_kernels.decode_api import SCHEDULED_IMPLS, launch, supported_impls  # noqa: E402
from tle_kernels.mla_decode_launch import BALANCE_ENV  # noqa: E402
from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference  # noqa: E402

SEQLENS = [0, 1, 63, 64, 65, 200, 1000]
CASES = [(1, 16, False), (1, 128, False), (2, 128, True), (2, 16, True)]  # (s_q, h_q, causal)


def main() -> int:
    import torch

    bad = 0
    for s_q, h_q, causal in CASES:
        q, k, bt, sl = make_decode_inputs(len(SEQLENS), s_q, h_q, 1, SEQLENS, device="cuda", seed=s_q)
        ref_o, ref_l = mla_decode_reference(q, k, bt, sl, causal=causal)
        runs = [(impl, n_split, None) for impl in supported_impls(s_q, h_q, 1)
                for n_split in (1, 3)]
        runs += [(impl, 1, "0") for impl in supported_impls(s_q, h_q, 1)
                 if impl in SCHEDULED_IMPLS]
        for impl, n_split, balance in runs:
            what = f"s_q={s_q} h_q={h_q} causal={causal} {impl} n_split={n_split}"
            if balance is not None:
                what += f" {BALANCE_ENV}={balance}"
                os.environ[BALANCE_ENV] = balance
            else:
                os.environ.pop(BALANCE_ENV, None)
            out = torch.full((q.shape[0], s_q, h_q, 512), float("nan"), device="cuda",
                             dtype=torch.bfloat16)
            lse = torch.full((q.shape[0], h_q, s_q), float("nan"), device="cuda")
            launch(impl, q, k, bt, sl, 576 ** -0.5, causal, n_split, out, lse)
            torch.cuda.synchronize()
            try:  # the GPU tests' check: FlashMLA-class tolerances, empty rows exact
                check(out, lse, ref_o, ref_l, what)
                print(f"{what}: ok", flush=True)
            except AssertionError as e:
                bad += 1
                print(f"MISMATCH {e}", flush=True)
    print("decode memcheck run:", "all matched" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
