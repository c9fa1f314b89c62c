"""FlashMLA's own sparse prefill kernel, timed in one process with this project's kernels.

    python3 benchmarks/anchor_flashmla.py --lib PATH/libanchor_flashmla_sparse.so [--skv 8192 131072]
                                          [--reps 3]

The anchor is not part of this repository: ``--lib`` is a shared library built from FlashMLA's
public sm90 sparse prefill source (its kernel file unchanged) that exports one C function,

    int anchor_sparse_prefill(void *q, void *kv, void *indices, void *out, void *max_logits,
                              void *lse, int s_q, int s_kv, int h_q, int topk, int stride_q_s,
                              int stride_q_h, int stride_kv_s, float sm_scale, void *stream)

which fills FlashMLA's ``SparsePrefillParams`` and calls its ``run_fwd_kernel``:
benchmarks/anchor/flashmla_glue.cu, built with FlashMLA's kernel by
benchmarks/anchor/build_flashmla_anchor.sh (which FlashMLA files, and from where: its header and
docs/BENCHMARKS.md). The script checks the anchor against
the fp32 reference on the first 256 queries, then times the anchor, the seesaw, the pipe kernel and
the naive baseline at the headline shape (SQ = 4096, H = 128, topk = 2048), interleaved, medians
of ``--reps`` `do_bench` runs (warm-up 50 ms, 200 ms: the benchmark's protocol), and prints each
against the anchor. A ratio from one process is what the machine-instance spread (~2 %) cannot
blur.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def load_anchor(path: str):
    lib = ctypes.CDLL(path)
    fn = lib.anchor_sparse_prefill
    fn.argtypes = [ctypes.c_void_p] * 6 + [ctypes.c_int] * 7 + [ctypes.c_float, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="the anchor shared library (see the docstring)")
    ap.add_argument("--skv", type=int, nargs="+", default=[8192, 131072])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--impl", nargs="+", default=["seesaw", "pipe", "naive"],
                    choices=["seesaw", "pipe", "naive"])
    args = ap.parse_args(argv)

    import torch

    from tle_kernels.api import empty_outputs, launch
    from benchmarks.interleaved import interleaved_tflops
    from tle_kernels.bench_sparse_mla import flops
    from tle_kernels.reference import make_inputs, sparse_mla_reference

    anchor = load_anchor(args.lib)
    sm_scale = 1 / math.sqrt(576)
    sq, h, topk = 4096, 128, 2048

    def flashmla(q, kv, idx, out, ml, lse):
        anchor(q.data_ptr(), kv.data_ptr(), idx.data_ptr(), out.data_ptr(), ml.data_ptr(),
               lse.data_ptr(), q.shape[0], kv.shape[0], q.shape[1], idx.shape[-1], q.stride(0),
               q.stride(1), kv.stride(0), sm_scale, torch.cuda.current_stream().cuda_stream)

    fl = flops(sq, h, topk)
    print(f"device: {torch.cuda.get_device_name()}", flush=True)
    for skv in args.skv:
        q, kv, idx = make_inputs(sq, skv, h, topk, seed=3)
        n = 256
        want = sparse_mla_reference(q[:n], kv, idx[:n], sm_scale)
        o, m, l_ = empty_outputs(q[:n])
        o.fill_(float("nan"))
        flashmla(q[:n].contiguous(), kv, idx[:n].contiguous(), o, m, l_)
        torch.cuda.synchronize()
        rel = ((o.float() - want[0]).norm() / want[0].norm()).item()
        # FlashMLA's kernel writes lse in log2 units (its Python wrapper converts)
        lse_err = (l_ * math.log(2) - want[2]).abs().max().item()
        print(f"skv={skv}: anchor check on {n} queries: out rel {rel:.2e}, lse max abs err "
              f"{lse_err:.1e}", flush=True)
        bufs = empty_outputs(q)
        cases = {"FlashMLA (anchor)": lambda: flashmla(q, kv, idx, *bufs)}
        for impl in args.impl:
            cases[impl] = (lambda impl=impl: launch(impl, q, kv, idx, sm_scale, *bufs))
        res = interleaved_tflops(cases, fl, args.reps, f"skv={skv}: ")
        a = statistics.median(res["FlashMLA (anchor)"])
        for k, v in res.items():
            med = statistics.median(v)
            print(f"skv={skv}: {k:18s} {med:6.1f} TFLOP/s {[round(x, 1) for x in v]}  "
                  f"/anchor {med / a:.3f}", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
