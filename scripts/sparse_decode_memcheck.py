"""Run every sparse decode implementation once on hostile inputs, for compute-sanitizer:

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 scripts/sparse_decode_memcheck.py

Each built implementation that takes the call (the naive kernel, the bf16 seesaw, the FP8
seesaw) runs on FP8 and bf16 caches with indices of every invalid kind (-1, -2, -123456, the int32
extremes, past the cache: tle_kernels/sparse_decode_reference.make_sparse_decode_inputs, 30 % of
the slots), every token no valid slot names poisoned with NaN, h_q 16 (padded to 64 by the
seesaws) and 128, s_q 1 and 2, with attn_sink and topk_length, one batch small enough to run as
topk pieces and one that is not; and batches with an extra cache (page 2, its own hostile
indices and lengths), which the TLE kernels run as two launches merged by lse.
``--extra-only`` runs the extra-cache batches alone. Outputs are NaN before each launch and
compared with the fp32 reference by the GPU tests' check (tests/gpu/test_sparse_decode.py), so an
unwritten element or a read of an unnamed token fails the run even where memcheck sees nothing.
Exit status 1 on a mismatch.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ARGS = ("attn_sink", "topk_length", "extra_k_cache", "extra_indices", "extra_topk_length")
CASES = [(1, 2, 128), (7, 1, 16), (3, 2, 16), (40, 1, 128)]  # (b, s_q, h_q)
EXTRA_CASES = [(3, 2, 128), (7, 1, 16), (2, 1, 8)]            # (b, s_q, h_q), with an extra cache
TOPK = 2048
EXTRA_TOPK = 512


def main() -> int:
    import torch

    from tests.gpu.test_sparse_decode import (LSE_ABS, LSE_REL, OUT_ABS, OUT_COS, OUT_REL,
                                              SCALE, close)
    from tle_kernels import sparse_decode_api as A
    from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,
                                                     sparse_decode_reference)

    torch.backends.cuda.matmul.allow_tf32 = False
    bad = 0
    extra_only = "--extra-only" in sys.argv[1:]
    cases = [(c, False) for c in CASES if not extra_only] + [(c, True) for c in EXTRA_CASES]
    for is_fp8 in (True, False):
        for (b, s_q, h_q), extra in cases:
            lengths = ([0, 700, TOPK, 65, 129, -3, 5000] * (b // 7 + 1))[:b]
            extra_lengths = ([EXTRA_TOPK, 0, 3, 511, -1, 600, 64] * (b // 7 + 1))[:b]
            x = make_sparse_decode_inputs(b, s_q, h_q, TOPK, is_fp8=is_fp8, device="cuda",
                                          seed=b + 10 * s_q + h_q, invalid=0.3, attn_sink=True,
                                          topk_length=lengths,
                                          extra_topk=EXTRA_TOPK if extra else None, extra_page=2,
                                          extra_topk_length=extra_lengths if extra else None)
            want_out, want_lse = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512,
                                                         SCALE, *(x[k] for k in ARGS))
            call = dict(q=x["q"], k_cache=x["k_cache"], indices=x["indices"], is_fp8=is_fp8,
                        **{k: x[k] for k in ARGS})
            for impl in A.built_impls():
                if A.sparse_unsupported_reason(impl, **call) is not None:
                    continue
                tag = " extra" if extra else ""
                what = f"fp8={is_fp8} b={b} s_q={s_q} h_q={h_q}{tag} {impl}"
                out, lse = A.empty_outputs(x["q"])
                out.fill_(float("nan"))
                lse.fill_(float("nan"))
                A.launch_sparse(impl, x["q"], x["k_cache"], x["indices"], SCALE, is_fp8, out, lse,
                                *(x[k] for k in ARGS))
                torch.cuda.synchronize()
                try:
                    close(f"{what} out", out, want_out.to(torch.bfloat16), OUT_ABS, OUT_REL,
                          OUT_COS)
                    close(f"{what} lse", lse, want_lse, LSE_ABS, LSE_REL)
                    print(f"{what}: ok", flush=True)
                except AssertionError as e:
                    bad += 1
                    print(f"MISMATCH {e}", flush=True)
    print("sparse decode memcheck run:", "all matched" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
