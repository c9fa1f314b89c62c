"""PyTorch entry point of the DeepSeek-V3.2 sparse MLA decode: what FlashMLA's
``flash_mla_with_kvcache`` does when it is given ``indices`` (with ``is_fp8_kvcache=True``), plus
a bf16 cache.

    out, lse = sparse_decode(q, k_cache, indices, 512, softmax_scale, is_fp8, attn_sink,
                             topk_length, extra_k_cache, extra_indices, extra_topk_length,
                             impl="auto")

- q [b, s_q, h_q, 576] bf16, h_q one of ``H_Q``, s_q >= 1; b = 0 gives empty outputs.
- k_cache: ``is_fp8`` -> [num_blocks, page_block_size, 1, 656] uint8 / int8 / float8_e4m3fn in
  the FP8 layout (tle_kernels/fp8_kvcache.py), each block's tokens back to back (stride(1) =
  656), 16-byte aligned (data pointer and block stride); else [num_blocks, page_block_size, 1,
  576] bf16. Any page_block_size >= 1.
- indices [b, s_q, topk] int32, topk a positive multiple of 64 (FlashMLA's tile): token =
  block * page_block_size + offset; an index < 0 or past the cache is skipped, never read.
- attn_sink [h_q] fp32; topk_length [b] int32; extra_k_cache (same format as k_cache, its own
  page_block_size), extra_indices [b, s_q, extra_topk] (extra_topk a positive multiple of 64),
  extra_topk_length [b] int32: as tle_kernels/sparse_decode_reference.py defines them.
- out [b, s_q, h_q, 512] bf16, lse [b, h_q, s_q] fp32 (natural log); a row without a valid slot
  gives out 0 and lse +inf. softmax_scale defaults to 576 ** -0.5.
- impl: the decode API's names ("naive", "pipe", "seesaw", "seesaw-tma") or "auto", the first of
  ``PREFERENCE`` that is built and supports the call (``sparse_unsupported_reason``). Built: the
  naive Triton kernel (tle_kernels/sparse_decode_naive.py, every call); "seesaw", the bf16
  cache run by the seesaw SparseMLA prefill kernels (tle_kernels/sparse_decode_seesaw_launch.py:
  h_q 64 / 128, or 8 / 16 / 32 padded to 64 heads, topk % 64 == 0, evenly spaced token rows);
  "seesaw-fp8", the FP8 cache read by a dequantizing producer feeding the same consumers (tle_kernels/sparse_decode_seesaw_fp8_launch.py); and "split-fp8", the FP8
  cache with the math split by output half between the consumers so that the dequantizing
  producer gets 152 registers (tle_kernels/sparse_decode_split_fp8_launch.py; attn_sink too).
  A TLE kernel joins by its launcher module in ``LAUNCHERS``. A TLE launcher reads one cache: a
  call with an extra cache runs it once per cache into fp32 partials merged by lse
  (tle_kernels/sparse_decode_extra.py), where the launcher's kernels store out in out's dtype
  (``FP32_OUT``: "split-fp8"), named or as "auto"'s choice; other calls with an extra cache
  run on the naive kernel.

``validate_sparse`` checks every argument before anything needs CUDA (CPU and meta tensors reach
every rule but the device check, which is last); an error names the argument, with FlashMLA's
name in parentheses where it differs.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from typing import Dict, Optional, Tuple

import torch

from .api import check_tensor, finite_positive, int_type_note, type_name
from .data_pointers import address_known
from .fp8_kvcache import BYTES_PER_TOKEN, CACHE_DTYPES, D_NOPE, D_QK
from .sparse_decode_extra import extra_unsupported_reason, launch_with_extra

D_V = D_NOPE
H_Q = (8, 16, 32, 64, 128)      # heads per query (DeepSeek's 128 split over 1 to 16 GPUs)
TOPK_TILE = 64                  # topk and extra_topk are multiples of this
ALIGN = 16                      # bytes: FP8 cache base and block stride

# "seesaw" reads a bf16 cache through the seesaw SparseMLA prefill kernels, "seesaw-fp8" the FP8
# cache through the same consumers with a dequantizing producer; each refuses the other's cache,
# so "auto" takes whichever reads the call's cache. "split-fp8" reads the FP8 cache with the math
# split by output half (its producer gets 152 registers: 1.07x FlashMLA at h_q 64 on the H200,
# where seesaw-fp8 runs 0.84x); "auto" prefers it. "narrow" reads a bf16 cache at h_q <= 32
# through the narrow-head prefill kernel (no head rows padded, where "seesaw" computes 64); "auto"
# takes it first where it applies.
IMPLS = ("naive", "pipe", "seesaw", "seesaw-tma", "seesaw-fp8", "split-fp8", "narrow")
PREFERENCE: Tuple[str, ...] = ("narrow", "seesaw", "split-fp8", "seesaw-fp8", "pipe", "naive")
# The TLE sparse decode kernels: impl -> (module of this package, launch function, support
# function). The launch function takes sparse_decode_naive's arguments (q, k_cache, indices,
# sm_scale, is_fp8, out, lse, attn_sink, topk_length, extra_k_cache, extra_indices,
# extra_topk_length) and writes out and lse; the support function takes the same call without
# sm_scale, out and lse (``SUPPORT_ARGS``, reading shapes, strides and data pointers only) and
# returns None or why it cannot run it.
LAUNCHERS: Dict[str, Tuple[str, str, str]] = {
    "seesaw": ("sparse_decode_seesaw_launch", "launch_sparse_seesaw",
               "sparse_seesaw_unsupported_reason"),
    "seesaw-fp8": ("sparse_decode_seesaw_fp8_launch", "launch_sparse_seesaw_fp8",
                   "sparse_seesaw_fp8_unsupported_reason"),
    "split-fp8": ("sparse_decode_split_fp8_launch", "launch_sparse_split_fp8",
                  "sparse_split_fp8_unsupported_reason"),
    "narrow": ("sparse_decode_narrow_launch", "launch_sparse_narrow",
               "sparse_narrow_unsupported_reason"),
}
SUPPORT_ARGS = ("q", "k_cache", "indices", "is_fp8", "attn_sink", "topk_length", "extra_k_cache",
                "extra_indices", "extra_topk_length")

# Where this module's argument names differ from FlashMLA's flash_mla_with_kvcache.
FLASH_MLA_NAMES = {"is_fp8": "is_fp8_kvcache", "extra_indices": "extra_indices_in_kvcache"}


def _label(name: str) -> str:
    other = FLASH_MLA_NAMES.get(name)
    return f"{name} ({other})" if other else name


def launcher_module(impl: str):
    """The launcher module of a TLE implementation, or None while it is not written (not in
    ``LAUNCHERS`` or its file absent). A file that exists but fails to import raises."""
    if impl not in LAUNCHERS:
        return None
    name = f"{__package__}.{LAUNCHERS[impl][0]}"
    loaded = sys.modules.get(name)  # torch.compile traces a dict read, not importlib
    if loaded is not None:
        return loaded
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


def built_impls() -> Tuple[str, ...]:
    return tuple(n for n in IMPLS if n == "naive" or launcher_module(n) is not None)


def sparse_unsupported_reason(impl: str, q, k_cache, indices, is_fp8: bool, attn_sink=None,
                              topk_length=None, extra_k_cache=None, extra_indices=None,
                              extra_topk_length=None) -> Optional[str]:
    """None when ``impl`` is built and runs this (validated) call, else why not. Nothing is read
    from the device: a CUDA-graph capture may ask."""
    if impl not in IMPLS:
        raise ValueError(f"impl: expected one of {('auto',) + IMPLS}, got {impl!r}")
    if impl == "naive":
        return None  # anything that passes validation
    module = launcher_module(impl)
    if module is None:
        return f"the sparse decode has no {impl!r} kernel yet"
    support = getattr(module, LAUNCHERS[impl][2])
    if extra_k_cache is not None:
        # two launches of the kernel, one per cache, merged by lse (sparse_decode_extra.py)
        why = extra_unsupported_reason(support, getattr(module, "FP32_OUT", False), q, k_cache,
                                       indices, is_fp8, topk_length, extra_k_cache,
                                       extra_indices, extra_topk_length)
        return None if why is None else f"{impl} with an extra cache: {why}"
    return support(q, k_cache, indices, is_fp8, attn_sink, topk_length, None, None, None)


def select_sparse_impl(impl: str, call: Optional[dict] = None) -> str:
    """The implementation that runs ``call`` (``sparse_unsupported_reason``'s arguments by name,
    ``SUPPORT_ARGS``): ``impl`` itself, or for "auto" the first of ``PREFERENCE`` that is built and
    supports it (the naive kernel supports every call). Without ``call`` (the tensors not checked
    yet) only the name is checked, and that an explicit impl is built; "auto" stays "auto". An
    explicit impl that is not built, or cannot run the call, raises NotImplementedError saying
    why."""
    if not isinstance(impl, str) or impl not in ("auto",) + IMPLS:
        raise ValueError(f"impl: expected one of {('auto',) + IMPLS}, got {impl!r}")
    if impl == "auto":
        if call is None:
            return impl
        return next(n for n in PREFERENCE if sparse_unsupported_reason(n, **call) is None)
    built = built_impls()
    if impl not in built:
        raise NotImplementedError(f"impl: the sparse decode has no {impl!r} kernel yet; built: "
                                  f"{built}")
    if call is not None:
        why = sparse_unsupported_reason(impl, **call)
        if why is not None:
            raise NotImplementedError(f"impl: {impl!r} cannot run this call: {why}")
    return impl


def _check_cache(name: str, cache, is_fp8: bool) -> None:
    label = _label(name)
    if is_fp8:
        what = f"[num_blocks, page_block_size, 1, {BYTES_PER_TOKEN}] uint8 (FP8 layout)"
        if not isinstance(cache, torch.Tensor):
            raise TypeError(f"{label}: expected a torch.Tensor {what}, got {type_name(cache)}")
        if cache.dtype not in CACHE_DTYPES:
            # named by both spellings of the flag (this module's is_fp8, FlashMLA's
            # is_fp8_kvcache), and a bf16 cache told how it is read: FlashMLA's sparse decode
            # needs is_fp8_kvcache=True, so code ported from it sets the flag for a bf16 cache
            bf16 = (f"; a bf16 cache [num_blocks, page_block_size, 1, {D_QK}] is read with "
                    "is_fp8_kvcache=False" if cache.dtype == torch.bfloat16 else "")
            raise TypeError(f"{label}: with is_fp8 the cache holds bytes (is_fp8_kvcache=True: "
                            f"FlashMLA's FP8 layout [num_blocks, page_block_size, 1, {BYTES_PER_TOKEN}]): expected dtype uint8, int8 or "
                            f"float8_e4m3fn, got {cache.dtype}{bf16}")
        if cache.dim() != 4:
            raise ValueError(f"{label}: expected rank 4 ({what}), got shape {tuple(cache.shape)}")
        if cache.shape[3] != BYTES_PER_TOKEN:
            raise ValueError(f"{label}: last dim must be {BYTES_PER_TOKEN} bytes per token "
                             f"(512 fp8, 4 fp32 scales, 64 bf16), got {cache.shape[3]}")
    else:
        what = f"[num_blocks, page_block_size, 1, {D_QK}] bf16"
        if isinstance(cache, torch.Tensor) and cache.dtype in CACHE_DTYPES:
            # bytes: FlashMLA's FP8 layout, which a FlashMLA call always flags
            raise TypeError(f"{label}: a {cache.dtype} cache is the FP8 layout: pass "
                            f"is_fp8_kvcache=True (is_fp8_kvcache=False reads a bf16 cache "
                            f"{what})")
        check_tensor(label, cache, (4,), torch.bfloat16, what)
        if cache.shape[3] != D_QK:
            raise ValueError(f"{label}: head dim (last dim) must be {D_QK}, got {cache.shape[3]}")
    if cache.shape[1] < 1:
        raise ValueError(f"{label}: page_block_size (dim 1) must be at least 1, got "
                         f"{cache.shape[1]}")
    if cache.shape[2] != 1:
        raise ValueError(f"{label}: the sparse decode has one kv head (dim 2 must be 1), got "
                         f"{cache.shape[2]}")
    if cache.stride(3) != 1:
        raise ValueError(f"{label}: the last dim must be contiguous (stride 1), got strides "
                         f"{tuple(cache.stride())}")
    if is_fp8:
        if cache.shape[1] > 1 and cache.stride(1) != BYTES_PER_TOKEN:
            raise ValueError(f"{label}: a block's tokens must be back to back (stride(1) = "
                             f"{BYTES_PER_TOKEN}), got strides {tuple(cache.stride())}")
        if cache.shape[0] > 1 and cache.stride(0) % ALIGN != 0:
            raise ValueError(f"{label}: the block stride must be a multiple of {ALIGN} bytes, got "
                             f"{cache.stride(0)}")
        if address_known(cache):
            check_cache_address(name, cache)


def check_cache_address(name: str, cache) -> None:
    """The FP8 cache's data starts on a 16-byte boundary. Checked by validation where the address
    can be read (data_pointers.address_known), and again by the custom op on the real tensors,
    since under torch.compile validation is traced and cannot read it."""
    if cache.data_ptr() % ALIGN != 0:
        raise ValueError(f"{_label(name)}: the data must start on a {ALIGN}-byte boundary")


def _check_indices(name: str, x, b: int, s_q: int) -> int:
    label = _label(name)
    check_tensor(label, x, (3,), torch.int32, "[b, s_q, topk] int32")
    if tuple(x.shape[:2]) != (b, s_q):
        raise ValueError(f"{label}: expected shape [{b}, {s_q}, topk] (q's b and s_q), got "
                         f"{tuple(x.shape)}")
    topk = x.shape[2]
    if topk < TOPK_TILE or topk % TOPK_TILE != 0:
        raise ValueError(f"{label}: topk (last dim) must be a positive multiple of {TOPK_TILE}, "
                         f"got {topk}")
    return topk


def _check_vector(name: str, x, n: int, dtype: torch.dtype, what: str) -> None:
    check_tensor(name, x, (1,), dtype, what)
    if x.shape[0] != n:
        raise ValueError(f"{name}: expected shape [{n}] ({what}), got {tuple(x.shape)}")
    if n > 1 and x.stride(0) != 1:
        raise ValueError(f"{name}: must be contiguous, got stride {x.stride(0)}")


def validate_sparse(q, k_cache, indices, head_dim_v=D_V, softmax_scale=None, is_fp8=True,
                    attn_sink=None, topk_length=None, extra_k_cache=None, extra_indices=None,
                    extra_topk_length=None, impl="auto") -> dict:
    """Check every argument of ``sparse_decode``; return the sizes, the softmax scale and the impl
    that will run. TypeError / ValueError / NotImplementedError name the argument."""
    name = select_sparse_impl(impl)
    if not isinstance(is_fp8, bool):
        raise TypeError(f"{_label('is_fp8')}: expected a bool, got {type_name(is_fp8)}")
    if isinstance(head_dim_v, bool) or not isinstance(head_dim_v, int) or head_dim_v != D_V:
        raise ValueError(f"head_dim_v: expected {D_V} (V = the first 512 dims of K), got "
                         f"{head_dim_v!r}{int_type_note(head_dim_v)}")
    if softmax_scale is not None:
        if isinstance(softmax_scale, bool) or not isinstance(softmax_scale, (int, float)):
            raise TypeError(f"softmax_scale: expected a Python float or None, got "
                            f"{type_name(softmax_scale)}")
        if not finite_positive(softmax_scale):
            raise ValueError(f"softmax_scale: expected a finite positive float, got "
                             f"{softmax_scale!r}")

    check_tensor("q", q, (4,), torch.bfloat16, f"[b, s_q, h_q, {D_QK}] bf16")
    b, s_q, h_q, d = q.shape
    if d != D_QK:
        raise ValueError(f"q: head dim (last dim) must be {D_QK}, got {d}")
    if s_q < 1:  # b = 0 is an empty batch (empty outputs), as the dense decode takes it
        raise ValueError(f"q: s_q must be at least 1, got shape {tuple(q.shape)}")
    if h_q not in H_Q:
        raise ValueError(f"q: h_q (dim 2) must be one of {H_Q}, got {h_q}")
    _check_cache("k_cache", k_cache, is_fp8)
    topk = _check_indices("indices", indices, b, s_q)
    if attn_sink is not None:
        _check_vector("attn_sink", attn_sink, h_q, torch.float32, "[h_q] fp32")
    if topk_length is not None:
        _check_vector("topk_length", topk_length, b, torch.int32, "[b] int32")
    extra_topk = 0
    if extra_k_cache is not None:
        _check_cache("extra_k_cache", extra_k_cache, is_fp8)
        if extra_indices is None:
            raise ValueError(f"{_label('extra_indices')}: required with extra_k_cache")
        extra_topk = _check_indices("extra_indices", extra_indices, b, s_q)
        if extra_topk_length is not None:
            _check_vector("extra_topk_length", extra_topk_length, b, torch.int32, "[b] int32")
    else:
        if extra_indices is not None:
            raise ValueError(f"{_label('extra_indices')}: given without extra_k_cache")
        if extra_topk_length is not None:
            raise ValueError("extra_topk_length: given without extra_k_cache")

    # an explicit impl that cannot run the call fails here, before the device check. While
    # torch.compile traces the call, "auto" stays "auto": which kernel runs can depend on data
    # pointers (row alignment), which a trace cannot read; the custom op resolves it on the real
    # tensors (launch_sparse). An explicit impl is checked here on what the trace can read.
    if not (name == "auto" and torch.compiler.is_compiling()):
        name = select_sparse_impl(name, dict(zip(SUPPORT_ARGS, (
            q, k_cache, indices, is_fp8, attn_sink, topk_length, extra_k_cache, extra_indices,
            extra_topk_length))))
    named = [("q", q), ("k_cache", k_cache), ("indices", indices), ("attn_sink", attn_sink),
             ("topk_length", topk_length), ("extra_k_cache", extra_k_cache),
             ("extra_indices", extra_indices), ("extra_topk_length", extra_topk_length)]
    for arg, x in named:
        if x is None:
            continue
        if x.device.type != "cuda":
            raise ValueError(f"{_label(arg)}: expected a CUDA tensor, got device {x.device}")
        if x.device != q.device:
            raise ValueError(f"{_label(arg)}: expected the same device as q ({q.device}), got "
                             f"{x.device}")
    scale = float(D_QK ** -0.5 if softmax_scale is None else softmax_scale)
    return dict(b=b, s_q=s_q, h_q=h_q, topk=topk, extra_topk=extra_topk, softmax_scale=scale,
                impl=name)


def empty_outputs(q: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32, uninitialised."""
    b, s_q, h_q, _ = q.shape
    return (q.new_empty((b, s_q, h_q, D_V), dtype=torch.bfloat16),
            q.new_empty((b, h_q, s_q), dtype=torch.float32))


def launch_sparse(impl: str, q, k_cache, indices, sm_scale: float, is_fp8: bool, out, lse,
                  attn_sink=None, topk_length=None, extra_k_cache=None, extra_indices=None,
                  extra_topk_length=None) -> str:
    """Run one sparse decode into given outputs (validated tensors); ``impl`` may be "auto".
    Returns the impl that ran. For benchmarks and tests. "auto" is resolved against the call; an
    explicit impl is checked to be built here and to support the call by its launcher (which
    refuses a call it cannot run, NotImplementedError naming why), so a call validate_sparse
    resolved is not checked twice before it runs."""
    call = dict(zip(SUPPORT_ARGS, (q, k_cache, indices, is_fp8, attn_sink, topk_length,
                                   extra_k_cache, extra_indices, extra_topk_length)))
    name = select_sparse_impl(impl, call if impl == "auto" else None)
    if q.shape[0] == 0:  # an empty batch: nothing to compute, no kernel launched on an empty grid
        return name
    if name == "naive":
        from .sparse_decode_naive import sparse_decode_naive as run
    else:
        run = getattr(launcher_module(name), LAUNCHERS[name][1])
        if extra_k_cache is not None:  # a TLE kernel reads one cache per launch
            run = functools.partial(launch_with_extra, run)
    run(q, k_cache, indices, sm_scale, is_fp8, out, lse, attn_sink, topk_length, extra_k_cache,
        extra_indices, extra_topk_length)
    return name


def sparse_decode(q: torch.Tensor, k_cache: torch.Tensor, indices: torch.Tensor,
                  head_dim_v: int = D_V, softmax_scale: Optional[float] = None,
                  is_fp8: bool = True, attn_sink: Optional[torch.Tensor] = None,
                  topk_length: Optional[torch.Tensor] = None,
                  extra_k_cache: Optional[torch.Tensor] = None,
                  extra_indices: Optional[torch.Tensor] = None,
                  extra_topk_length: Optional[torch.Tensor] = None,
                  impl: str = "auto") -> Tuple[torch.Tensor, torch.Tensor]:
    """Sparse MLA decode (DeepSeek-V3.2): ``flash_mla_with_kvcache`` with ``indices``, without
    the scheduler metadata.

    q [b, s_q, h_q, 576] bf16 (h_q one of 8, 16, 32, 64, 128); k_cache: with ``is_fp8`` (the
    default) FlashMLA's FP8 cache [num_blocks, page_block_size, 1, 656] bytes
    (tle_kernels/fp8_kvcache.py), else a bf16 cache [num_blocks, page_block_size, 1, 576];
    indices [b, s_q, topk] int32, topk a multiple of 64, token = block * page_block_size +
    offset (an index < 0 or past the cache is skipped); head_dim_v 512; softmax_scale a positive
    float (default 576 ** -0.5); optional attn_sink [h_q] fp32, topk_length [b] int32, and a
    second cache: extra_k_cache, extra_indices [b, s_q, extra_topk] int32, extra_topk_length [b]
    int32; impl "auto" or one of ``IMPLS``. Returns (out [b, s_q, h_q, 512] bf16, lse [b, h_q,
    s_q] fp32, natural log). Errors name the argument, before any launch (the module docstring
    has the whole contract). The work runs in the custom op
    ``torch.ops.tle_kernels.sparse_mla_decode``, as ``flash_mla_with_kvcache``'s does, so a call
    traces under ``torch.compile`` and runs on FakeTensors (its fake implementation gives the
    outputs' shapes) instead of launching a kernel there."""
    info = validate_sparse(q, k_cache, indices, head_dim_v, softmax_scale, is_fp8, attn_sink,
                           topk_length, extra_k_cache, extra_indices, extra_topk_length, impl)
    from . import decode_api  # registers the custom op (decode_api imports this module first)

    return decode_api.sparse_mla_decode_op(q, k_cache, indices, info["softmax_scale"], is_fp8,
                                           attn_sink, topk_length, extra_k_cache, extra_indices,
                                           extra_topk_length, info["impl"])


def _import_launchers() -> None:
    """Import the launchers whose files exist, with this module: a call torch.compile traces then
    finds them in ``sys.modules`` (launcher_module), since importlib cannot be traced."""
    for impl in LAUNCHERS:
        launcher_module(impl)


_import_launchers()
