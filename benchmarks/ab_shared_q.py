"""A/B of the tail split's shared q (``api.shares_q``): a bf16 sparse decode step at small
batches, whose rows run as topk pieces merged by lse (tle_kernels/tail_split.py), with the pieces
reading their token's q row in place (the kernel's ``q_div``) against a copy of q per piece.
Both are checked against the fp32 reference first, then timed as CUDA-graph replays, interleaved,
medians of ``--reps`` rounds (do_bench, warm-up 25 ms, 100 ms).

    python3 benchmarks/ab_shared_q.py [--batches 1 2 4 8 16 32] [--heads 128] [--topk 2048]
                                      [--topk-length random|full|none] [--reps 3]

``--topk-length random`` (default) gives each request a topk_length drawn from [topk / 2, topk]
(the topk_length kernel's pieces); ``full`` every row topk; ``none`` no topk_length (the plain
seesaw's pieces).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    ap.add_argument("--heads", type=int, default=128)
    ap.add_argument("--topk", type=int, default=2048)
    ap.add_argument("--s-kv", type=int, default=32768)
    ap.add_argument("--topk-length", choices=["random", "full", "none"], default="random")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)

    import torch

    from benchmarks.interleaved import graph_replay_ms
    import tle_kernels as tk
    import tle_kernels.api as api
    from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,
                                                     sparse_decode_reference)

    shares_q = api.shares_q

    def step(x, shared, meta):
        api.shares_q = shares_q if shared else (lambda *a: False)
        try:
            return tk.flash_mla_with_kvcache(x["q"], x["k_cache"], None, None, 512, meta,
                                             is_fp8_kvcache=False, indices=x["indices"],
                                             topk_length=x["topk_length"])
        finally:
            api.shares_q = shares_q

    def graph_ms(fn):
        return graph_replay_ms(fn, warmup=25, rep=100)

    print(f"device: {torch.cuda.get_device_name()}; h_q {args.heads}, s_q 1, topk {args.topk} "
          f"of {args.s_kv} tokens, topk_length {args.topk_length}", flush=True)
    for b in args.batches:
        gen = torch.Generator().manual_seed(b)
        lengths = {"random": [int(v) for v in torch.randint(args.topk // 2, args.topk + 1, (b,),
                                                              generator=gen)],
                   "full": [args.topk] * b, "none": None}[args.topk_length]
        x = make_sparse_decode_inputs(b, 1, args.heads, args.topk, s_kv=args.s_kv, is_fp8=False,
                                      seed=b, invalid=0.0, topk_length=lengths, poison=False)
        want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], 512, 576 ** -0.5,
                                       None, x["topk_length"])
        metas = {s: tk.get_mla_metadata()[0] for s in (False, True)}
        for shared in (False, True):
            out, lse = step(x, shared, metas[shared])
            err = (out.float() - want[0].float()).abs().max().item()
            lse_err = (lse - want[1]).nan_to_num(0.0).abs().max().item()
            if not (err < 1e-2 and lse_err < 1e-4):
                print(f"b={b} shared={shared}: out err {err:.2e}, lse err {lse_err:.2e}: FAIL")
                return 1
        times = {False: [], True: []}
        for _ in range(args.reps):
            for shared in (False, True):
                times[shared].append(graph_ms(lambda: step(x, shared, metas[shared])))
        a, s = statistics.median(times[False]), statistics.median(times[True])
        print(f"b={b:3d}: copy of q per piece {a * 1e3:7.1f} us, shared q {s * 1e3:7.1f} us, "
              f"copy / shared {a / s:.3f}", flush=True)
        del x
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
