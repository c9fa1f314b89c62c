"""Run every decode implementation once on hostile inputs, for compute-sanitizer:

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 scripts/decode_memcheck.py

Each implementation (naive, pipe, seesaw) runs unsplit and split (n_split 3) on a batch that mixes
empty, one-token, page-edge and multi-page requests, causal on and off, s_q 1 and 2, h_q 16 and 128,
with the cache poisoned past every request's seqlen (NaN rows, out-of-range block ids in unused
block-table entries: tle_kernels/decode_reference.make_decode_inputs). Outputs are poisoned with
NaN before each launch and compared with the fp32 reference afterwards, so an unwritten element or
a read past seqlen fails the run even where memcheck sees nothing. Exit status 1 on a mismatch.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from tle_kernels.decode_api import launch, supported_impls  # noqa: E402
from tle_kernels.decode_reference import make_decode_inputs, mla_decode_reference  # noqa: E402

SEQLENS = [0, 1, 63, 64, 65, 200, 1000]
CASES = [(1, 16, False), (1, 128, False), (2, 128, True), (2, 16, True)]  # (s_q, h_q, causal)


def main() -> int:
    bad = 0
    for s_q, h_q, causal in CASES:
        q, k, bt, sl = make_decode_inputs(len(SEQLENS), s_q, h_q, 1, SEQLENS, device="cuda", seed=s_q)
        ref_o, ref_l = mla_decode_reference(q, k, bt, sl, causal=causal)
        scale = 576 ** -0.5
        for impl in supported_impls(s_q, h_q, 1):
            for n_split in (1, 3):
                out = torch.full((q.shape[0], s_q, h_q, 512), float("nan"), device="cuda",
                                 dtype=torch.bfloat16)
                lse = torch.full((q.shape[0], h_q, s_q), float("nan"), device="cuda")
                launch(impl, q, k, bt, sl, scale, causal, n_split, out, lse)
                torch.cuda.synchronize()
                o_err = (out.float() - ref_o).abs().nan_to_num(float("inf")).max().item()
                finite = torch.isfinite(ref_l)
                l_err = (lse - ref_l)[finite].abs().nan_to_num(float("inf")).max().item()
                inf_ok = bool((lse[~finite] == ref_l[~finite]).all())
                ok = o_err < 2e-2 and l_err < 1e-3 and inf_ok
                bad += not ok
                print(f"s_q={s_q} h_q={h_q} causal={causal} {impl:6s} n_split={n_split}: "
                      f"out err {o_err:.2e}, lse err {l_err:.2e}, empty rows "
                      f"{'ok' if inf_ok else 'WRONG'} -> {'ok' if ok else 'MISMATCH'}", flush=True)
    print("decode memcheck run:", "all matched" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
