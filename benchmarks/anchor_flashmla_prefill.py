"""FlashMLA's own sm90 sparse prefill (attn_sink, topk_length, d_qk 512 and 576), loaded from a
shared library, to time in one process with this project's prefill kernels.

    python3 benchmarks/anchor_flashmla_prefill.py --lib PATH/libanchor_flashmla_prefill.so

The anchor is not part of this repository: ``--lib`` is a shared library built from FlashMLA's
public source (its sm90 sparse prefill dispatcher and its four kernel instantiations, d_qk 512 /
576 without / with topk_length, unchanged) with the C entry point of
benchmarks/anchor/flashmla_prefill_glue.cu, by benchmarks/anchor/build_flashmla_prefill_anchor.sh
(which FlashMLA files and commit, and how: its header):

    FLASHMLA_SRC=PATH/FlashMLA NVCC_THREADS=2 bash \\
        benchmarks/anchor/build_flashmla_prefill_anchor.sh .anchor/libanchor_flashmla_prefill.so

``load_prefill_anchor(path)`` returns a callable with FlashMLA's ``flash_mla_sparse_fwd``
interface, the 3-D layout ``tle_kernels.sparse_mla_prefill`` takes:

    anchor(q, kv, indices, sm_scale, d_v=512, attn_sink=None, topk_length=None, outputs=None)
        -> (out, max_logits, lse)

q [s_q, h_q, d_qk] bf16 (h_q 64 or 128, d_qk 512 or 576), kv [s_kv, 1, d_qk] bf16, indices
[s_q, 1, topk] int32 (topk a multiple of 128; an index outside [0, s_kv) is an empty slot),
attn_sink [h_q] fp32, topk_length [s_q] int32 (each value in [0, topk]: FlashMLA's kernel reads
index slots up to it, and the anchor does not read device memory to check); out [s_q, h_q, 512]
bf16, max_logits and lse [s_q, h_q] fp32 in natural-log units. It does on each call what FlashMLA's
binding does: fresh torch outputs (or ``outputs``, three contiguous tensors of those shapes, for
a benchmark that times the kernel alone, as it does this project's) and one kernel launch on the
current CUDA stream. A call FlashMLA refuses (another head count, topk % 128 != 0, a 4-D batched
layout, strides its TMA load of q or its 16-byte gathers of kv cannot take) raises ValueError
naming the argument, before any launch.

``__main__`` checks the anchor against tle_kernels.reference (fp32) on small cases of each of its
kernels, with and without attn_sink and topk_length, with FlashMLA's own test tolerances
(out abs 8e-4 or rel 3.01/128 per element; lse and max_logits abs 1e-4 here, as the prefill
benchmark's check); benchmarks/ab_prefill_features.py --anchor LIB times it.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import math
import sys
from pathlib import Path

D_V = 512                 # V is the first 512 dims of each kv row
D_QK_CHOICES = (512, 576)  # with the 64 RoPE dims (576, DeepSeek-V3.2) or without (512)
HEADS = (64, 128)         # the query head counts FlashMLA's binding takes
TOPK_GRANULE = 128        # the kernel walks topk in pairs of 64-slot blocks
INT32_MAX = 2 ** 31 - 1

# The library's exported C functions: name -> (restype, argtypes). tests/test_anchor_flashmla_
# prefill.py checks these against the prototypes in benchmarks/anchor/flashmla_prefill_glue.cu.
SIGNATURES = {
    "anchor_prefill_last_error": (ctypes.c_char_p, []),
    "anchor_sparse_prefill": (ctypes.c_int, [ctypes.c_void_p] * 6 + [ctypes.c_int] * 5
                              + [ctypes.c_longlong] * 4 + [ctypes.c_float]
                              + [ctypes.c_void_p] * 2 + [ctypes.c_int, ctypes.c_void_p]),
}


def bind(lib):
    """Set restype/argtypes of the C functions on a loaded library (ctypes.CDLL) and return it; a
    library without one of them raises AttributeError naming it."""
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def _sibling(name: str):
    """The module of benchmarks/NAME.py next to this file (loaded by path, so that benchmarks/
    need not be importable)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _refuse(name: str, what: str) -> None:
    raise ValueError(f"FlashMLA prefill anchor: {name}: {what}")


def _check_vector(name, t, n: int, dtype) -> None:
    """attn_sink / topk_length: [n] of dtype, contiguous (the kernel indexes them by head / row)."""
    if tuple(t.shape) != (n,) or t.dtype != dtype:
        _refuse(name, f"must be [{n}] {dtype}, got {tuple(t.shape)} {t.dtype}")
    if n > 1 and t.stride(0) != 1:
        _refuse(name, "must be contiguous")


def _check_outputs(outputs, s_q: int, h_q: int, device) -> None:
    """Given outputs: out [s_q, h_q, 512] bf16, max_logits and lse [s_q, h_q] fp32, contiguous
    (the kernel stores them through a tensor map and bulk copies of these layouts)."""
    import torch
    if len(outputs) != 3:
        _refuse("outputs", f"must be (out, max_logits, lse), got {len(outputs)} tensors")
    want = (((s_q, h_q, D_V), torch.bfloat16), ((s_q, h_q), torch.float32),
            ((s_q, h_q), torch.float32))
    for name, t, (shape, dtype) in zip(("out", "max_logits", "lse"), outputs, want):
        if tuple(t.shape) != shape or t.dtype != dtype or not t.is_contiguous():
            _refuse("outputs", f"{name} must be a contiguous {list(shape)} {dtype}, got "
                    f"{tuple(t.shape)} {t.dtype}{'' if t.is_contiguous() else ' (strided)'}")
        if t.device != device:
            _refuse("outputs", f"{name} must be on {device}, got {t.device}")
        if t.data_ptr() % 16:
            _refuse("outputs", f"{name} must be 16-byte aligned")


def validate(q, kv, indices, sm_scale, d_v=D_V, attn_sink=None, topk_length=None) -> None:
    """FlashMLA's binding's checks (csrc/api/sparse_fwd.h), each naming the argument, and what its
    kernel assumes without checking: q loaded by TMA (data 16-byte aligned, strides multiples of 8
    elements), kv gathered in 16-byte pieces (the same of its row stride), int32 strides."""
    import torch
    if isinstance(sm_scale, bool) or not isinstance(sm_scale, (int, float)) \
            or not math.isfinite(sm_scale):
        _refuse("sm_scale", f"must be a finite float, got {sm_scale!r}")
    if d_v != D_V:
        _refuse("d_v", f"must be {D_V}, got {d_v!r}")
    for name, t in (("q", q), ("kv", kv), ("indices", indices)):
        if not isinstance(t, torch.Tensor):
            _refuse(name, f"must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 3:
            _refuse(name, f"must be 3-D (FlashMLA takes no batch dimension: flatten batches into "
                    f"s_kv and offset the indices), got shape {tuple(t.shape)}")
    s_q, h_q, d_qk = q.shape
    if q.dtype != torch.bfloat16:
        _refuse("q", f"must be bfloat16, got {q.dtype}")
    if d_qk not in D_QK_CHOICES:
        _refuse("q", f"d_qk must be 512 or 576, got {d_qk}")
    if h_q not in HEADS:
        _refuse("q", f"h_q must be 64 or 128 (FlashMLA's sparse prefill), got {h_q}")
    if s_q <= 0:
        _refuse("q", "s_q must be positive")
    if q.stride(2) != 1:
        _refuse("q", "last dimension must be contiguous")
    if any(s % 8 or s > INT32_MAX for s in q.stride()[:2]) or q.data_ptr() % 16:
        _refuse("q", "strides must be multiples of 8 elements below 2^31 and its data 16-byte "
                "aligned (FlashMLA loads q by TMA)")
    if kv.dtype != torch.bfloat16:
        _refuse("kv", f"must be bfloat16, got {kv.dtype}")
    if kv.shape[1] != 1 or kv.shape[2] != d_qk:
        _refuse("kv", f"must be [s_kv, 1, {d_qk}], got {tuple(kv.shape)}")
    if kv.shape[0] <= 0 or kv.shape[0] > INT32_MAX:
        _refuse("kv", f"s_kv must be in 1..2^31-1, got {kv.shape[0]}")
    if kv.stride(2) != 1:
        _refuse("kv", "last dimension must be contiguous")
    if kv.stride(0) % 8 or kv.stride(0) > INT32_MAX or kv.data_ptr() % 16:
        _refuse("kv", "row stride must be a multiple of 8 elements below 2^31 and its data "
                "16-byte aligned (FlashMLA gathers rows in 16-byte pieces)")
    if indices.dtype != torch.int32:
        _refuse("indices", f"must be int32, got {indices.dtype}")
    if indices.shape[0] != s_q or indices.shape[1] != 1:
        _refuse("indices", f"must be [{s_q}, 1, topk], got {tuple(indices.shape)}")
    topk = indices.shape[2]
    if topk <= 0 or topk % TOPK_GRANULE:
        _refuse("indices", f"topk must be a positive multiple of {TOPK_GRANULE}, got {topk}")
    if indices.stride(2) != 1 or indices.stride(0) > INT32_MAX:
        _refuse("indices", "last dimension must be contiguous, the row stride below 2^31")
    if attn_sink is not None:
        _check_vector("attn_sink", attn_sink, h_q, torch.float32)
    if topk_length is not None:
        _check_vector("topk_length", topk_length, s_q, torch.int32)
    for name, t in (("kv", kv), ("indices", indices), ("attn_sink", attn_sink),
                    ("topk_length", topk_length)):
        if t is not None and t.device != q.device:
            _refuse(name, f"must be on {q.device}, got {t.device}")


class FlashMLAPrefillAnchor:
    """FlashMLA's sparse prefill behind a Python callable (see the module docstring)."""

    def __init__(self, lib, device=None):
        self._lib = lib
        self._device = device if device is not None else _sibling("anchor_flashmla_decode") \
            .CudaDevice()

    def __call__(self, q, kv, indices, sm_scale, d_v: int = D_V, attn_sink=None,
                 topk_length=None, outputs=None):
        import torch
        validate(q, kv, indices, sm_scale, d_v, attn_sink, topk_length)
        s_q, h_q, d_qk = q.shape
        device = q.device
        if outputs is None:
            outputs = (torch.empty((s_q, h_q, D_V), dtype=torch.bfloat16, device=device),
                       torch.empty((s_q, h_q), dtype=torch.float32, device=device),
                       torch.empty((s_q, h_q), dtype=torch.float32, device=device))
        else:
            _check_outputs(outputs, s_q, h_q, device)
        out, max_logits, lse = outputs
        with self._device.guard(device) if q.is_cuda else contextlib.nullcontext():
            rc = self._lib.anchor_sparse_prefill(
                q.data_ptr(), kv.data_ptr(), indices.data_ptr(), out.data_ptr(),
                max_logits.data_ptr(), lse.data_ptr(), s_q, kv.shape[0], h_q, d_qk,
                indices.shape[2], q.stride(0), q.stride(1), kv.stride(0), indices.stride(0),
                float(sm_scale), None if attn_sink is None else attn_sink.data_ptr(),
                None if topk_length is None else topk_length.data_ptr(),
                self._device.num_sms(device), self._device.stream(device))
        if rc != 0:
            msg = self._lib.anchor_prefill_last_error()
            msg = msg.decode() if isinstance(msg, bytes) else str(msg)
            raise ValueError(f"FlashMLA prefill anchor: anchor_sparse_prefill refused: {msg}")
        return out, max_logits, lse


def load_prefill_anchor(path) -> FlashMLAPrefillAnchor:
    """The anchor callable from the shared library at `path` (see the module docstring); a path
    that holds no file raises FileNotFoundError saying how to build one."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"FlashMLA prefill anchor: no library at {path} (build it with "
                                f"benchmarks/anchor/build_flashmla_prefill_anchor.sh)")
    return FlashMLAPrefillAnchor(bind(ctypes.CDLL(str(path))))


# ---------------------------------------------------------------------------------------------
# The script: the anchor against the fp32 reference.

OUT_ABS, OUT_REL, LOG_ABS = 8e-4, 3.01 / 128, 1e-4


def check_case(anchor, s_q, s_kv, h_q, topk, d_qk, sink: bool, lengths: bool, seed: int = 0):
    """(ok, line): one case against tle_kernels.reference, with FlashMLA's out tolerance (each
    element within OUT_ABS or OUT_REL relative) and LOG_ABS on lse and max_logits (compared where
    finite; +-inf at the same places). Indices include invalid slots (-1 and s_kv)."""
    import torch

    from tle_kernels.reference import make_inputs, sparse_mla_reference

    q, kv, idx = make_inputs(s_q, s_kv, h_q, topk, d_qk, seed=seed)
    g = torch.Generator(device=q.device).manual_seed(seed + 1)
    idx = idx.clone()
    idx[:, :, 1::17] = -1
    extra = {}
    if sink:
        extra["attn_sink"] = torch.randn(h_q, device=q.device, generator=g)
    if lengths:
        tl = torch.randint(0, topk + 1, (s_q,), device=q.device, generator=g, dtype=torch.int32)
        tl[:3] = torch.tensor([0, topk, 1], dtype=torch.int32)  # empty, full, one slot
        extra["topk_length"] = tl
    sm_scale = d_qk ** -0.5
    got = anchor(q, kv, idx, sm_scale, **extra)
    want = sparse_mla_reference(q, kv, idx, sm_scale, **extra)
    torch.cuda.synchronize()
    err = (got[0].float() - want[0]).abs()
    out_ok = bool(((err <= OUT_ABS) | (err <= OUT_REL * want[0].abs())).all())
    log_errs = []
    for g_, w in zip(got[1:], want[1:]):
        same_inf = torch.equal(torch.isinf(g_) & (g_ > 0), torch.isinf(w) & (w > 0)) and \
            torch.equal(torch.isinf(g_) & (g_ < 0), torch.isinf(w) & (w < 0))
        fin = torch.isfinite(w)
        log_errs.append((g_[fin] - w[fin]).abs().max().item() if same_inf and fin.any()
                        else (0.0 if same_inf else math.inf))
    ok = out_ok and max(log_errs) <= LOG_ABS
    line = (f"s_q={s_q} s_kv={s_kv} h_q={h_q} topk={topk} d_qk={d_qk} attn_sink={sink} "
            f"topk_length={lengths}: out max abs err {err.max().item():.1e}, max_logits "
            f"{log_errs[0]:.1e}, lse {log_errs[1]:.1e} {'ok' if ok else 'FAIL'}")
    return ok, line


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="the anchor shared library (see the docstring)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import torch

    anchor = load_prefill_anchor(args.lib)
    print(f"device: {torch.cuda.get_device_name()}", flush=True)
    all_ok = True
    for d_qk in D_QK_CHOICES:
        for h_q, topk in ((64, 512), (128, 256)):
            for sink in (False, True):
                for lengths in (False, True):
                    ok, line = check_case(anchor, 70, 3000, h_q, topk, d_qk, sink, lengths,
                                          seed=d_qk + h_q)
                    all_ok &= ok
                    print(line, flush=True)
    if not all_ok:
        print("the anchor does not match the fp32 reference", file=sys.stderr)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
