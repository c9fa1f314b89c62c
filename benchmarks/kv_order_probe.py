"""Probe: does walking each query's indices in KV order make the seesaw's gathers hit L2?

At long SKV the KV cache (SKV * 1,152 B: 151 MB at 128K) is 3x the H200's L2, and indices in the
order an indexer's top-k returns them (by score: random positions) make every CTA read rows from
all of it at once. Ordered by position, tile j of every query holds rows from the j-th stretch of
the cache, and the CTAs of a persistent launch, which start their items together, would gather
from one stretch at a time. A full sort is not needed: a counting sort into NB position buckets
(stable inside a bucket) costs one read and one write of the indices.

Interleaved timings of the bundled seesaw on: the given indices, fully sorted indices, bucketed
indices (NB = 8, 16, 32), and bucket order + kernel; then the reorder kernels alone.

    python3 benchmarks/kv_order_probe.py [--skv 8192 32768 131072] [--reps 3]

What it shows on the H200: not worth it. Sorted or bucketed indices gain at most ~1.5 % at
SKV = 128K (a full sort measured 1.000 in one run and 1.076 in another, buckets 1.015) and nothing at
8K-32K, while the reorder costs 140-420 us (a Triton `tl.sort` of 2,048 keys per row 570 us,
torch.sort 260 us) against a ~4.7 ms kernel. The CTAs do not stay in step long enough for one
stretch of the cache to serve them all.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

FIELD_BITS = tl.constexpr(16)   # a bucket's running count in a packed int64 (topk < 65,536)


@triton.jit
def _kv_bucket_order(src, dst, stride_src, stride_dst, s_kv, topk,
                     BLOCK: tl.constexpr, GROUPS: tl.constexpr):
    """One program per query row. Buckets are packed four to an int64 (16-bit counts), so a
    bucket's inclusive running count is one field of one of GROUPS int64 prefix sums."""
    NB: tl.constexpr = 4 * GROUPS
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    inb = offs < topk
    x = tl.load(src + row * stride_src + offs, mask=inb, other=-1)
    valid = (x >= 0) & (x < s_kv)
    b = tl.where(valid, ((x.to(tl.int64) * NB) // s_kv).to(tl.int32), NB - 1)
    shift = ((b % 4) * FIELD_BITS).to(tl.int64)
    one = tl.full([BLOCK], 1, tl.int64) << shift
    rank = tl.zeros([BLOCK], tl.int32)
    base = tl.zeros([BLOCK], tl.int32)
    for k in tl.static_range(GROUPS):
        mine = inb & (b // 4 == k)
        onehot = tl.where(mine, one, 0)
        running = tl.cumsum(onehot, 0)
        total = tl.sum(onehot, 0)
        rank = tl.where(mine, ((running >> shift) & 0xFFFF).to(tl.int32) - 1, rank)
        for f in tl.static_range(4):
            count = ((total >> (f * FIELD_BITS)) & 0xFFFF).to(tl.int32)
            base += tl.where(b > 4 * k + f, count, 0)
    tl.store(dst + row * stride_dst + base + rank, x, mask=inb)


def kv_bucket_order(indices: torch.Tensor, s_kv: int, n_buckets: int = 16,
                    out: torch.Tensor | None = None) -> torch.Tensor:
    """``indices`` [s_q, 1, topk] int32 (last dim contiguous) → a copy whose rows are ordered by
    KV position bucket (``n_buckets`` a multiple of 4, at most 64). ``out``: where to write it."""
    if n_buckets % 4 or not 4 <= n_buckets <= 64:
        raise ValueError(f"n_buckets: expected a multiple of 4 in [4, 64], got {n_buckets}")
    s_q, _, topk = indices.shape
    if topk >= 1 << 16:
        raise ValueError(f"indices: topk must be below 65,536 for kv ordering, got {topk}")
    if out is None:
        out = torch.empty((s_q, 1, topk), dtype=indices.dtype, device=indices.device)
    if s_q and topk:
        _kv_bucket_order[(s_q,)](indices, out, indices.stride(0), out.stride(0), s_kv, topk,
                                 BLOCK=triton.next_power_of_2(topk), GROUPS=n_buckets // 4)
    return out


def main() -> None:
    import triton.testing

    from benchmarks.sparse_mla_smoke import TOPK, make_inputs, outputs, reference, run
    from tle_kernels.api import PerCtaLaunch
    from tle_kernels.sparse_mla_seesaw import sparse_mla_seesaw

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skv", type=int, nargs="*", default=[8192, 32768, 131072])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    kern = PerCtaLaunch(sparse_mla_seesaw)
    sm_scale = 1.0 / math.sqrt(576)
    q, kv, idx = make_inputs(128, 2304, 128, TOPK, seed=1)
    srt = kv_bucket_order(idx, kv.shape[0], 16)
    ref = reference(q, kv, idx, sm_scale)
    out, lse, _ = run(kern, q, kv, srt, sm_scale, TOPK)
    rel = ((out.float() - ref[0]).norm() / ref[0].norm()).item()
    fin = torch.isfinite(ref[1])
    err = (lse[fin] - ref[1][fin]).abs().max().item()
    print(f"check bucket-ordered: out rel {rel:.2e}, lse {err:.1e}", flush=True)
    flops = 2 * 4096 * 128 * TOPK * (576 + 512)
    for skv in args.skv:
        q, kv, idx = make_inputs(4096, skv, 128, TOPK, seed=2)
        srt = idx.sort(-1).values
        bufs = outputs(q)
        orders = {f"b{nb}": kv_bucket_order(idx, skv, nb) for nb in (8, 16, 32)}
        scratch = torch.empty_like(idx)
        cases = {"random": lambda: run(kern, q, kv, idx, sm_scale, TOPK, bufs),
                 "sorted": lambda: run(kern, q, kv, srt, sm_scale, TOPK, bufs)}
        for name, ordered in orders.items():
            cases[name] = (lambda o: lambda: run(kern, q, kv, o, sm_scale, TOPK, bufs))(ordered)
        cases["b16+order"] = lambda: run(kern, q, kv, kv_bucket_order(idx, skv, 16, scratch),
                                         sm_scale, TOPK, bufs)
        got = {k: [] for k in cases}
        for _ in range(args.reps):
            for k, fn in cases.items():
                ms = triton.testing.do_bench(fn, warmup=50, rep=200, return_mode="median")
                got[k].append(flops / ms / 1e9)
        us_b = {nb: triton.testing.do_bench(lambda: kv_bucket_order(idx, skv, nb, scratch),
                                            warmup=20, rep=100) * 1e3 for nb in (8, 16, 32)}
        us_torch = triton.testing.do_bench(lambda: idx.sort(-1), warmup=20, rep=100) * 1e3
        base = statistics.median(got["random"])
        for k, xs in got.items():
            m = statistics.median(xs)
            print(f"skv={skv}: {k:12s} {m:6.1f} TFLOP/s {[round(x, 1) for x in xs]}  "
                  f"x{m / base:.3f}", flush=True)
        print(f"skv={skv}: bucket order {us_b} us, torch.sort {us_torch:.1f} us", flush=True)


if __name__ == "__main__":
    main()
