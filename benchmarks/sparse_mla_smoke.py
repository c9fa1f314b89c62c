"""Smoke run of the SparseMLA pipe kernels on a GPU: correctness on a small shape against an fp32
gather reference, then TFLOP/s at the headline shape (B=1, SQ=4096, H=128, topk=2048) for a few SKV.
Inputs as in docs/sparse_mla.md: q, kv = randn/10 bf16; query t attends to positions [0, t + SKV - SQ],
indices are distinct random positions in that window, invalid slots = SKV.

    python benchmarks/sparse_mla_smoke.py [--skv 8192 131072] [--impl pipe seesaw]

The full benchmark, with the naive baseline and plots, is ``python3 -m tle_kernels.bench_sparse_mla``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback

import torch

from tle_kernels.reference import make_inputs, sparse_mla_reference

D_QK, D_V, TOPK = 576, 512, 2048


def reference(q, kv, idx, sm_scale):
    """tle_kernels/reference.py's fp32 gather reference, returned as (out, lse, max_logits)."""
    out, max_logits, lse = sparse_mla_reference(q, kv, idx, sm_scale)
    return out, lse, max_logits


def outputs(q):
    """Poisoned outputs: an element the kernel does not write stays NaN."""
    sq, h, _ = q.shape
    return (torch.full((sq, h, D_V), float("nan"), device=q.device, dtype=torch.bfloat16),
            torch.full((sq, h), float("nan"), device=q.device),
            torch.full((sq, h), float("nan"), device=q.device))


def run(kernel, q, kv, idx, sm_scale, topk, bufs=None):
    sq, h, _ = q.shape
    out, lse, ml = bufs if bufs is not None else outputs(q)
    kernel[(sq, h // 64)](q, kv, idx, out, lse, ml, q.stride(0), q.stride(1), kv.stride(0), idx.stride(0),
                          out.stride(0), out.stride(1), lse.stride(0), kv.shape[0], sm_scale,
                          TOPK=topk, BLOCK_H=64)
    return out, lse, ml


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skv", type=int, nargs="*", default=[8192, 131072])
    ap.add_argument("--impl", nargs="*", default=["pipe", "seesaw"])
    args = ap.parse_args()
    from tle_kernels.sparse_mla_pipe import sparse_mla_pipe
    from tle_kernels.api import PerCtaLaunch
    from tle_kernels.sparse_mla_seesaw import sparse_mla_seesaw
    impls = {"pipe": sparse_mla_pipe, "seesaw": PerCtaLaunch(sparse_mla_seesaw)}  # persistent
    import triton.testing

    sm_scale = 1.0 / math.sqrt(D_QK)
    print(f"device: {torch.cuda.get_device_name()}", flush=True)
    # Correctness on a small shape (invalid slots included: SKV < SQ + topk leaves some empty).
    q, kv, idx = make_inputs(128, 2304, 128, TOPK, seed=1)
    ref = reference(q, kv, idx, sm_scale)
    for name in args.impl:
        try:
            t0 = time.time()
            out, lse, ml = run(impls[name], q, kv, idx, sm_scale, TOPK)
            torch.cuda.synchronize()
            rel = ((out.float() - ref[0]).norm() / ref[0].norm()).item()
            fin = torch.isfinite(ref[1])
            lse_err = (lse[fin] - ref[1][fin]).abs().max().item()
            print(f"check {name:7s} out rel {rel:.2e}  max abs {(out.float() - ref[0]).abs().max().item():.2e}  "
                  f"lse abs {lse_err:.2e}  nan {torch.isnan(out).any().item()}  ({time.time() - t0:.1f} s "
                  f"incl. compile)", flush=True)
        except Exception:
            print(f"check {name}: FAILED\n{traceback.format_exc()}", flush=True)
    flops_per = 2 * 4096 * 128 * TOPK * (D_QK + D_V)
    rows = []
    for skv in args.skv:
        q, kv, idx = make_inputs(4096, skv, 128, TOPK, seed=2)
        for name in args.impl:
            try:
                bufs = outputs(q)
                ms = triton.testing.do_bench(lambda: run(impls[name], q, kv, idx, sm_scale, TOPK, bufs),
                                             warmup=50, rep=200, return_mode="median")
                rows.append((skv, name, ms, flops_per / ms / 1e9))
                print(f"bench skv={skv:6d} {name:7s} {ms:8.3f} ms  {flops_per / ms / 1e9:7.1f} TFLOP/s", flush=True)
            except Exception:
                print(f"bench {name} skv={skv}: FAILED\n{traceback.format_exc()}", flush=True)
    print("\n| SKV | impl | ms | TFLOP/s |\n|---:|---|---:|---:|")
    for skv, name, ms, tf in rows:
        print(f"| {skv} | {name} | {ms:.3f} | {tf:.1f} |")


if __name__ == "__main__":
    sys.exit(main())
