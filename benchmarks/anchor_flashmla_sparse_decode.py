"""FlashMLA's own sparse MLA decode on the DeepSeek-V3.2 FP8 KV cache, loaded from a shared
library, to time in one process with this project's sparse decode kernels.

    python3 benchmarks/anchor_flashmla_sparse_decode.py --lib PATH/lib.so
        [--batch 64 128] [--s-q 1] [--heads 128] [--topk 2048] [--s-kv 32768] [--no-graph]
        [--no-check]

The anchor is not part of this repository: ``--lib`` is a shared library built outside it from
FlashMLA's public source (its decoding metadata kernel, its sm90 sparse FP8 split-KV decode kernel
for the V3.2 cache at 64 and 128 heads, and its combine kernel, unchanged; which commit:
docs/BENCHMARKS.md) with C entry points that fill in FlashMLA's parameters as its PyTorch binding
does, from raw pointers (``SIGNATURES`` below). ``load_sparse_decode_anchor(path)`` returns a
callable

    anchor(q, k_cache, indices, sm_scale=None, attn_sink=None) -> (out, lse)

with q [b, s_q, h_q, 576] bf16 (h_q 64 or 128), k_cache [num_blocks, page_block_size, 1, 656]
uint8 / int8 / float8_e4m3fn in the V3.2 FP8 layout (tle_kernels/fp8_kvcache.py; a block's
tokens back to back), indices [b, s_q, topk] int32 (topk a multiple of 64, index = block *
page_block_size + offset, -1 for an empty slot), attn_sink [h_q] fp32 or None; out
[b, s_q, h_q, 512] bf16, lse [b, h_q, s_q] fp32 (natural log, +inf for a row without a valid
slot). It does on each call what FlashMLA's ``flash_mla_with_kvcache`` does with ``indices`` and
``is_fp8_kvcache=True`` on sm90: fresh torch allocations of the outputs and the split partials,
the split-KV kernel and the combine kernel on the current CUDA stream. The scheduler metadata
depends only on (b, s_q, topk) here (no topk_length), so it is computed on the first call of a
shape and reused afterwards, as FlashMLA's ``FlashMLASchedMeta`` is.

FlashMLA's V3.2 kernel takes -1 as the only empty slot: it reads any other index as a token, so
an index past the cache or below -1 reads outside it. ``flashmla_indices(indices, n_tokens)``
maps every index that names no token to -1 (this project's kernels and reference skip them all).

``__main__`` checks the anchor against tle_kernels.sparse_decode_reference with the sparse decode
benchmark's tolerances (FlashMLA's own: tle_kernels/bench_sparse_decode.py ``errors``), then times
it at the benchmark's inputs (every slot valid, topk distinct tokens of each request's s_kv-token
cache, pages of 64 handed out at random) as that benchmark does: one call replayed from a CUDA
graph (``--no-graph``: plain launches), ``triton.testing`` warm-up 50 ms, 200 ms, median; prints
TFLOP/s = 2·b·s_q·h_q·topk·(576 + 512) / t and GB/s (b·s_q·topk tokens of 656 bytes, q and out).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import sys
from collections import OrderedDict
from pathlib import Path

HEAD_DIM_K = 576        # q rows: 512 NoPE + 64 RoPE
HEAD_DIM_V = 512        # V is the NoPE part of the same cache
BYTES_PER_TOKEN = 656   # 512 fp8 NoPE, 4 fp32 scales, 64 bf16 RoPE
HEADS = (64, 128)       # the query head counts FlashMLA's sm90 sparse decode is built for
TOPK_BLOCK = 64         # index slots per step of FlashMLA's kernel: topk is a multiple of it
MAX_CACHED_SCHEDULES = 16
INT32_MAX = 2 ** 31 - 1

# The library's exported C functions: name -> (restype, argtypes). Each returns 0, or nonzero
# after which anchor_sparse_decode_last_error() says which argument it refused.
SIGNATURES = {
    "anchor_sparse_decode_last_error": (ctypes.c_char_p, []),
    "anchor_sparse_decode_sched_meta_ints": (ctypes.c_int, []),
    "anchor_sparse_decode_num_sm_parts": (ctypes.c_int, [ctypes.c_int] * 3),
    "anchor_sparse_decode_metadata": (ctypes.c_int, [ctypes.c_void_p] * 2 + [ctypes.c_int] * 4
                                      + [ctypes.c_void_p]),
    "anchor_sparse_decode": (ctypes.c_int, [ctypes.c_void_p] * 10 + [ctypes.c_int] * 7
                             + [ctypes.c_float] + [ctypes.c_int] * 7 + [ctypes.c_void_p]),
}


def bind(lib):
    """Set restype/argtypes of the C functions on a loaded library (ctypes.CDLL) and return
    it; a library without one of them raises AttributeError naming it."""
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def _sibling(name: str):
    """The module of benchmarks/NAME.py next to this file (the benchmark loads this script by
    path, so benchmarks/ need not be importable)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _refuse(name: str, what: str) -> None:
    raise ValueError(f"FlashMLA sparse decode anchor: {name}: {what}")


def flashmla_indices(indices, n_tokens: int):
    """A copy of ``indices`` with every value outside [0, n_tokens) set to -1, the only empty slot
    FlashMLA's V3.2 kernel knows."""
    import torch
    bad = (indices < 0) | (indices >= n_tokens)
    return torch.where(bad, torch.full_like(indices, -1), indices)


class FlashMLASparseDecodeAnchor:
    """FlashMLA's sparse FP8 decode behind a Python callable (see the module docstring)."""

    def __init__(self, lib, device=None):
        self._lib = lib
        self._device = device if device is not None else _sibling("anchor_flashmla_decode") \
            .CudaDevice()
        self._meta_ints = int(lib.anchor_sparse_decode_sched_meta_ints())
        self._schedules: OrderedDict = OrderedDict()

    def clear_schedules(self) -> None:
        """Forget every computed schedule: the next call computes the metadata again."""
        self._schedules.clear()

    def _raise_if_refused(self, rc: int, fn: str) -> None:
        if rc != 0:
            msg = self._lib.anchor_sparse_decode_last_error()
            msg = msg.decode() if isinstance(msg, bytes) else str(msg)
            raise ValueError(f"FlashMLA sparse decode anchor: {fn} refused: {msg}")

    @staticmethod
    def _validate(q, k_cache, indices, attn_sink) -> None:
        """FlashMLA's binding's checks for this path, each naming the argument, and what its
        kernel assumes without checking (q loaded by TMA: 16-byte aligned strides and data; the
        int32 strides of its parameters). Messages are built only on failure."""
        import torch
        qs, ks, ids = q.shape, k_cache.shape, indices.shape
        if len(qs) != 4 or qs[3] != HEAD_DIM_K:
            _refuse("q", f"must be [b, s_q, h_q, {HEAD_DIM_K}], got {tuple(qs)}")
        if q.dtype != torch.bfloat16:
            _refuse("q", f"must be bfloat16, got {q.dtype}")
        if qs[0] <= 0 or qs[1] <= 0:
            _refuse("q", "batch and s_q must be positive")
        if qs[2] not in HEADS:
            _refuse("q", f"h_q must be 64 or 128 (FlashMLA's sm90 sparse decode), got {qs[2]}")
        if q.stride(3) != 1:
            _refuse("q", "last dimension must be contiguous")
        if any(s % 8 or s > INT32_MAX for s in q.stride()[:3]) or q.data_ptr() % 16:
            _refuse("q", "strides must be multiples of 8 elements below 2^31 and its data 16-byte "
                    "aligned (FlashMLA loads q by TMA)")
        if len(ks) != 4 or ks[2] != 1 or ks[3] != BYTES_PER_TOKEN:
            _refuse("k_cache", f"must be [num_blocks, page_block_size, 1, {BYTES_PER_TOKEN}], got "
                    f"{tuple(ks)}")
        if k_cache.dtype not in (torch.uint8, torch.int8, torch.float8_e4m3fn):
            _refuse("k_cache", f"must be uint8, int8 or float8_e4m3fn, got {k_cache.dtype}")
        if ks[0] <= 0 or ks[1] <= 0:
            _refuse("k_cache", "has no tokens")
        if k_cache.stride(3) != 1 or k_cache.stride(1) != BYTES_PER_TOKEN:
            _refuse("k_cache", "the tokens of a block must be contiguous (656 bytes apart)")
        if k_cache.stride(0) > INT32_MAX or ks[0] * ks[1] > INT32_MAX:
            _refuse("k_cache", "block stride and token count must be below 2^31")
        if len(ids) != 3 or ids[0] != qs[0] or ids[1] != qs[1]:
            _refuse("indices", f"must be [{qs[0]}, {qs[1]}, topk], got {tuple(ids)}")
        if indices.dtype != torch.int32:
            _refuse("indices", f"must be int32, got {indices.dtype}")
        if ids[2] <= 0 or ids[2] % TOPK_BLOCK:
            _refuse("indices", f"topk must be a positive multiple of {TOPK_BLOCK}, got {ids[2]}")
        if indices.stride(2) != 1 or any(s % 2 or s > INT32_MAX for s in indices.stride()[:2]):
            _refuse("indices", "last dimension must be contiguous, other strides even")
        if attn_sink is not None:
            if attn_sink.shape != (qs[2],) or attn_sink.dtype != torch.float32:
                _refuse("attn_sink", f"must be [{qs[2]}] float32, got {tuple(attn_sink.shape)} "
                        f"{attn_sink.dtype}")
            if not attn_sink.is_contiguous():
                _refuse("attn_sink", "must be contiguous")
        device = q.device
        for name, t in (("k_cache", k_cache), ("indices", indices), ("attn_sink", attn_sink)):
            if t is not None and t.device != device:
                _refuse(name, f"must be on {device}, got {t.device}")

    def _schedule(self, device, b: int, s_q: int, topk: int, num_sm_parts: int, stream: int):
        """(sched_meta, num_splits) for this shape, computed by FlashMLA's metadata kernel on the
        first call and reused while (device, b, s_q, topk, num_sm_parts) stay the same."""
        import torch
        key = (str(device), b, s_q, topk, num_sm_parts)
        hit = self._schedules.get(key)
        if hit is not None:
            self._schedules.move_to_end(key)
            return hit
        meta = torch.empty((num_sm_parts, self._meta_ints), dtype=torch.int32, device=device)
        splits = torch.empty((b + 1,), dtype=torch.int32, device=device)
        rc = self._lib.anchor_sparse_decode_metadata(meta.data_ptr(), splits.data_ptr(), b, s_q,
                                                     topk, num_sm_parts, stream)
        self._raise_if_refused(rc, "anchor_sparse_decode_metadata")
        self._schedules[key] = (meta, splits)
        while len(self._schedules) > MAX_CACHED_SCHEDULES:
            self._schedules.popitem(last=False)
        return meta, splits

    def __call__(self, q, k_cache, indices, sm_scale: float | None = None, attn_sink=None):
        import torch
        self._validate(q, k_cache, indices, attn_sink)
        if sm_scale is None:
            sm_scale = HEAD_DIM_K ** -0.5
        b, s_q, h_q, _ = q.shape
        num_blocks, page = k_cache.shape[:2]
        topk = indices.shape[2]
        device = q.device
        with self._device.guard(device) if q.is_cuda else contextlib.nullcontext():
            stream = self._device.stream(device)
            num_sm_parts = int(self._lib.anchor_sparse_decode_num_sm_parts(
                self._device.num_sms(device), s_q, h_q))
            meta, splits = self._schedule(device, b, s_q, topk, num_sm_parts, stream)
            out = torch.empty((b, s_q, h_q, HEAD_DIM_V), dtype=torch.bfloat16, device=device)
            lse = torch.empty((b, s_q, h_q), dtype=torch.float32, device=device)
            total_splits = b + num_sm_parts
            lse_accum = torch.empty((total_splits, s_q, h_q), dtype=torch.float32, device=device)
            out_accum = torch.empty((total_splits, s_q, h_q, HEAD_DIM_V), dtype=torch.float32,
                                    device=device)
            rc = self._lib.anchor_sparse_decode(
                q.data_ptr(), k_cache.data_ptr(), indices.data_ptr(),
                attn_sink.data_ptr() if attn_sink is not None else None,
                meta.data_ptr(), splits.data_ptr(), out.data_ptr(), lse.data_ptr(),
                lse_accum.data_ptr(), out_accum.data_ptr(),
                b, s_q, h_q, num_blocks, page, topk, num_sm_parts, float(sm_scale),
                *q.stride()[:3], *k_cache.stride()[:2], *indices.stride()[:2], stream)
            self._raise_if_refused(rc, "anchor_sparse_decode")
        return out, lse.transpose(1, 2)


def load_sparse_decode_anchor(path: str) -> FlashMLASparseDecodeAnchor:
    """The anchor callable from the shared library at `path` (see the module docstring); a
    missing file raises FileNotFoundError naming it, a library without those functions
    AttributeError naming the first one missing."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"FlashMLA sparse decode anchor library {path} not found (built "
                                "from FlashMLA's source outside this repository; see "
                                "docs/BENCHMARKS.md)")
    return FlashMLASparseDecodeAnchor(bind(ctypes.CDLL(str(path))))


# ---------------------------------------------------------------------------------------------
# The script: a correctness check against the fp32 reference, then a timing.

CHECK_CASES = (  # (b, s_q, h_q, topk, fraction of empty slots, attn_sink)
    (16, 1, 128, 2048, 0.1, False),
    (16, 2, 128, 2048, 0.1, False),
    (16, 1, 64, 2048, 0.1, False),
    (9, 1, 128, 512, 0.6, True),
    (9, 2, 64, 128, 1.0, True),     # every slot empty: out 0, lse +inf
)


def check(anchor) -> bool:
    """The anchor against tle_kernels.sparse_decode_reference (poisoned caches: tokens no slot
    names are NaN) with the benchmark's tolerances; prints one line per case."""
    import torch
    from tle_kernels.bench_sparse_decode import errors
    from tle_kernels.sparse_decode_reference import (make_sparse_decode_inputs,
                                                     sparse_decode_reference)
    all_ok = True
    for b, s_q, h_q, topk, invalid, sink in CHECK_CASES:
        x = make_sparse_decode_inputs(b, s_q, h_q, topk, is_fp8=True, device="cuda",
                                      seed=b * 100 + s_q * 10 + h_q, invalid=invalid,
                                      attn_sink=sink)
        n_tokens = x["k_cache"].shape[0] * x["k_cache"].shape[1]
        indices = flashmla_indices(x["indices"], n_tokens)
        sm_scale = HEAD_DIM_K ** -0.5
        out, lse = anchor(x["q"], x["k_cache"], indices, sm_scale, x["attn_sink"])
        want = sparse_decode_reference(x["q"], x["k_cache"], x["indices"], HEAD_DIM_V, sm_scale,
                                       x["attn_sink"])
        torch.cuda.synchronize()
        ok, info = errors(out, lse, want)
        all_ok &= ok
        print(f"check b={b} s_q={s_q} h_q={h_q} topk={topk} empty={invalid:.0%} sink={sink}: "
              f"{'ok' if ok else 'FAIL'} " + "  ".join(
                  f"{k} {v:.2e}" if isinstance(v, float) else f"{k} {v}" for k, v in info.items()),
              flush=True)
    return all_ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="the anchor shared library (see the docstring)")
    ap.add_argument("--batch", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--s-q", type=int, default=1)
    ap.add_argument("--heads", type=int, default=128, choices=HEADS)
    ap.add_argument("--topk", type=int, default=2048, help="index slots per query row")
    ap.add_argument("--s-kv", type=int, default=32768, help="tokens of each request's cache")
    ap.add_argument("--no-graph", action="store_true",
                    help="time plain launches (do_bench) instead of CUDA-graph replays")
    ap.add_argument("--no-check", action="store_true", help="skip the fp32 check")
    args = ap.parse_args(argv)
    if args.topk <= 0 or args.topk % TOPK_BLOCK:
        ap.error(f"--topk: a positive multiple of {TOPK_BLOCK}, got {args.topk}")

    root = str(Path(__file__).resolve().parents[1])  # tle_kernels from this checkout
    if root not in sys.path:
        sys.path.insert(0, root)
    import torch
    from tle_kernels.bench_mla_decode import time_ms
    from tle_kernels.sparse_decode_reference import make_sparse_decode_inputs

    try:
        anchor = load_sparse_decode_anchor(args.lib)
    except (OSError, AttributeError) as e:
        ap.error(f"--lib: {e}")
    print(f"device: {torch.cuda.get_device_name()}", flush=True)
    if not args.no_check and not check(anchor):
        print("the anchor does not match the fp32 reference", file=sys.stderr)
        return 1
    s_q, h_q, topk = args.s_q, args.heads, args.topk
    for b in args.batch:
        x = make_sparse_decode_inputs(b, s_q, h_q, topk, s_kv=args.s_kv, is_fp8=True,
                                      device="cuda", seed=3, invalid=0.0, poison=False)
        fn = lambda: anchor(x["q"], x["k_cache"], x["indices"])  # noqa: E731
        fn()  # the first call computes the schedule, as in serving
        t_ms, how = time_ms(fn, not args.no_graph, 50, 200)
        flop = 2 * b * s_q * h_q * topk * (HEAD_DIM_K + HEAD_DIM_V)
        nbytes = b * s_q * topk * BYTES_PER_TOKEN + 2 * b * s_q * h_q * (HEAD_DIM_K + HEAD_DIM_V)
        print(f"b={b} s_q={s_q} h_q={h_q} topk={topk} s_kv={args.s_kv}: {t_ms * 1e3:8.1f} us  "
              f"{flop / t_ms / 1e9:6.1f} TFLOP/s  {nbytes / t_ms / 1e6:7.1f} GB/s ({how})",
              flush=True)
        del x
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
