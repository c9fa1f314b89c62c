"""Drop-in MLA decode for PyTorch: FlashMLA's decode interface, so that code written for FlashMLA
runs with ``import tle_kernels as flash_mla``. One entry point serves the dense decode and, when
``indices`` is given, the DeepSeek-V3.2 sparse decode.

    sched_meta, _ = get_mla_metadata()          # empty; filled on the first call, reused after
    out, lse = flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens, head_dim_v, sched_meta,
                                      num_splits=None, softmax_scale=None, causal=False, ...,
                                      impl="auto")

Dense (``indices`` None):

- q [b, s_q, h_q, 576] bf16; k_cache [num_blocks, 64, h_kv, 576] bf16 (K and V are one cache:
  V = the first 512 dims); block_table [b, max_blocks] int32; cache_seqlens [b] int32 (0 allowed);
  h_q a multiple of h_kv (query head h reads kv head h // (h_q // h_kv)). Only the last dim of q,
  k_cache and block_table needs to be contiguous. b = 0 gives empty outputs (the sparse call too);
  b > 0 needs num_blocks >= 1 (the TMA producer's descriptor cannot cover an empty cache).
  The caller's precondition (FlashMLA's; not checked: it would read device memory):
  cache_seqlens[i] <= block_table.shape[1] * 64 and each entry a request uses is a block of
  k_cache.
- out [b, s_q, h_q, 512] bf16, lse [b, h_q, s_q] fp32 (natural log); a row that sees no token gives
  out 0 and lse +inf. causal: query j sees positions < seqlen - s_q + j + 1. softmax_scale defaults
  to 576 ** -0.5. Semantics in full: tle_kernels/decode_reference.py.
- impl (keyword only, not FlashMLA's): "naive" (plain Triton), "pipe" (TLE-Pipe split-KV),
  "seesaw" (TLE-FlashMLA: K pages as TMA boxes wherever k_cache allows tensor descriptors, else
  cp.async; TLE_DECODE_TMA=0/1 forces either; its own schedule, mla_decode_parts.py),
  "seesaw-tma" (the same, TMA forced: k_cache's strides, one-entry dims' too, multiples of 16
  bytes, checked before the metadata is filled), or "auto": the first of ``PREFERENCE`` that
  exists and supports the shape (and, for a TLE kernel, whose q and k_cache rows are 16-byte
  aligned), except at a small batch of two or more row blocks per kv head, where the split pipe
  decode runs ahead of the balanced seesaw and "auto" takes it (``auto_prefers_split``), and at
  32 or more requests of at most 32 query rows per kv head (h_q 16 or 32 at s_q 1), where the
  pipe decode runs ahead of the seesaw (``auto_prefers_few_rows``). A TLE
  kernel exists once its launcher module (``LAUNCHERS``) is in the package.
- The sparse arguments (attn_sink, extra_k_cache, extra_indices_in_kvcache, topk_length,
  extra_topk_length) must be None, as FlashMLA requires (ValueError); is_fp8_kvcache=True without
  indices raises NotImplementedError (the FP8 cache is read by the sparse decode only).

Sparse (``indices`` given; tle_kernels/sparse_decode_api.py validates and launches):

- q [b, s_q, h_q, 576] bf16 with h_q one of 8, 16, 32, 64, 128; indices [b, s_q, topk] int32
  (token = block * page_block_size + offset; an index < 0 or past the cache is skipped); k_cache
  with ``is_fp8_kvcache=True`` [num_blocks, page_block_size, 1, 656] bytes in the FP8 layout
  (tle_kernels/fp8_kvcache.py), any page_block_size. attn_sink [h_q] fp32, topk_length [b] int32,
  extra_k_cache / extra_indices_in_kvcache / extra_topk_length: as
  tle_kernels/sparse_decode_reference.py defines them. Same outputs as the dense decode.
- causal must be False (ValueError), as FlashMLA requires; block_table and cache_seqlens are not
  read (FlashMLA's tests pass None; any value is accepted and ignored, as FlashMLA does).
- Beyond FlashMLA (which requires the FP8 cache here): ``is_fp8_kvcache=False`` reads a bf16
  cache [num_blocks, page_block_size, 1, 576].
- impl: sparse_decode_api.IMPLS ("naive", "pipe", "seesaw", "seesaw-tma", "seesaw-fp8",
  "split-fp8", "narrow": a bf16 cache at h_q <= 32 through the narrow-head prefill kernel) or
  "auto"; the dense call refuses the sparse-only names. "seesaw" runs a bf16 cache through the seesaw SparseMLA prefill kernels
  (tle_kernels/sparse_decode_seesaw_launch.py: h_q 64 / 128, 8 / 16 / 32 padded to 64, no extra
  cache); "naive" (the plain
  Triton kernel, tle_kernels/sparse_decode_naive.py) runs everything, FP8 included;
  "seesaw-fp8" the FP8 cache through the same consumers with a dequantizing producer; "auto"
  takes the seesaw (bf16) or the FP8 seesaw where one can run the call, else the naive kernel;
  an explicit impl that cannot run it raises NotImplementedError naming why.

Scheduler metadata. ``get_mla_metadata`` returns an empty ``DecodeSchedMeta``; the first call fills
it from the call's shapes and the device's SM count: the split count ``n_split`` of the pipe
decode, chosen from the number of (request, kv head, 64-row block) work items against the SMs
(1 for a sparse call: its kernels run unsplit). The seesaw schedules itself: P programs per (kv
head, row block), P from the SM count, walk either one request each or, when the batch does not
fill the SMs once, equal shares of the batch's K-tile pairs computed in the kernel from
cache_seqlens (tle_kernels/mla_decode_parts.py, its combine after it). A call on FakeTensors
(FakeTensorMode) with a torch built without CUDA, which has no SM count to read, fills n_split 1:
the custom ops' fake implementations give the outputs' shapes, which do not depend on it.
Nothing reads cache_seqlens on the host, so filling the metadata needs no host synchronisation and
every launch's grid is a function of shapes alone: a whole decode step captures in a CUDA graph
and replays with new cache_seqlens. A later call with other shapes (or another causal; for a sparse call another
is_fp8_kvcache, topk, extra page size or extra topk) raises ValueError, FlashMLA's rule (reuse a
metadata object only with the same shapes and cache_seqlens); so does a sparse call on metadata a
dense call filled, and the reverse. A call that fails validation leaves the metadata as it was.

Everything is validated before any launch (and before anything needs CUDA: CPU and meta tensors
reach every rule but the device check, which comes after the shape rules); errors name the
argument. The work runs in the custom ops ``torch.ops.tle_kernels.mla_decode`` and
``torch.ops.tle_kernels.sparse_mla_decode`` (each with a fake implementation), so a call traces
under ``torch.compile(fullgraph=True)``: validation reads no data pointer there (the address rules
and "auto"'s choice run inside the ops on the real tensors, data_pointers.py) and finds the
launchers in ``sys.modules``.

``flash_mla_sparse_fwd`` is the SparseMLA prefill (tle_kernels/api.py) under FlashMLA's name.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
from typing import Dict, List, Optional, Tuple

import torch

from . import sparse_decode_api as sparse_api
from .api import check_tensor, finite_positive, int_type_note, rows_aligned, sm_count, sparse_mla_prefill, type_name
from .data_pointers import FakeTensor, rows_aligned_where_known
from .mla_decode_launch import (TMA_ENV, TMA_KERNELS, env_switch, parts_for,
                                per_request_leaves_sms_idle, row_blocks,
                                tma_layout_unavailable_reason)

D_QK = 576
D_V = 512
PAGE = 64          # tokens per KV-cache page (FlashMLA's dense decode supports only 64)
MAX_SPLIT = 64     # most splits of one request's positions

# "seesaw" copies K pages with TMA wherever k_cache allows tensor descriptors, else with cp.async
# (TLE_DECODE_TMA=0/1 forces either); "seesaw-tma" always with TMA (docs/decode.md).
IMPLS = ("naive", "pipe", "seesaw", "seesaw-tma")
# "auto" takes the first implementation in this order that exists and supports the call.
PREFERENCE: Tuple[str, ...] = ("seesaw", "pipe", "naive")
# The TLE kernels' launchers: module of this package, launch function, support function. The
# launch function takes (q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split, out,
# lse, o_part, lse_part): with n_split == 1 it writes out and lse; with n_split > 1 it writes the
# splits' o_part / lse_part (tle_kernels/mla_decode_combine.py's inputs) and the combine runs
# after it. The support function takes (s_q, h_q, h_kv) and returns None or why not.
LAUNCHERS: Dict[str, Tuple[str, str, str]] = {
    "pipe": ("mla_decode_pipe_launch", "launch_decode_pipe", "pipe_unsupported_reason"),
    "seesaw": ("mla_decode_seesaw_launch", "launch_decode_seesaw", "seesaw_unsupported_reason"),
    "seesaw-tma": ("mla_decode_seesaw_launch", "launch_decode_seesaw_tma",
                   "seesaw_unsupported_reason"),
}
# Implementations that take the metadata's n_split; the naive baseline always runs unsplit.
SPLIT_IMPLS = ("pipe",)
# Implementations that schedule themselves (mla_decode_parts.py: balanced over the SMs, their own
# partials and combine): their launch function takes (q, k_cache, block_table, cache_seqlens,
# sm_scale, causal, out, lse, sms) and writes out and lse.
SCHEDULED_IMPLS = ("seesaw", "seesaw-tma")
# Implementations that always copy K pages with TMA (mla_decode_seesaw_launch.py): validation
# checks k_cache's layout against the tensor descriptors' rules before the metadata is filled.
FORCED_TMA_IMPLS = ("seesaw-tma",)



# ---------------------------------------------------------------------------------------------
# Implementations: which exist, which support a shape
# ---------------------------------------------------------------------------------------------

def launcher_module(impl: str):
    """The launcher module of a TLE implementation, or None while its file does not exist. A file
    that exists but fails to import raises: a broken kernel is an error, not a missing one. A
    module already imported is read from ``sys.modules`` (a dict read torch.compile traces; it
    cannot trace importlib): the launchers are imported with this module (``_import_launchers``)."""
    name = f"{__package__}.{LAUNCHERS[impl][0]}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


def unsupported_reason(impl: str, s_q: int, h_q: int, h_kv: int,
                       aligned: bool = True) -> Optional[str]:
    """None when ``impl`` handles the shape, else why not. ``aligned``: whether every row of q and
    k_cache starts on a 16-byte boundary (the TLE kernels copy rows with 16-byte cp.async / TMA)."""
    if impl not in IMPLS:
        raise ValueError(f"impl: expected one of {('auto',) + IMPLS}, got {impl!r}")
    if impl == "naive":
        return None  # anything that passes validation
    module = launcher_module(impl)
    if module is None:
        return f"{impl} is not available: tle_kernels/{LAUNCHERS[impl][0]}.py does not exist yet"
    if not aligned:
        return f"{impl} needs 16-byte aligned rows of q and k_cache (data_ptr and strides)"
    return getattr(module, LAUNCHERS[impl][2])(s_q, h_q, h_kv)


# A batch of at least this many (request, kv head, 64-row block) work items and requests, and
# fewer items than the SMs, runs on the split pipe decode under "auto" (``auto_prefers_split``).
SPLIT_MIN_ITEMS = 4
SPLIT_MIN_REQUESTS = 2


def auto_prefers_split(b: int, s_q: int, h_q: int, h_kv: int, sms: int) -> bool:
    """Whether "auto" runs a batch on the split pipe decode rather than the seesaw: when its work
    items (request, kv head, 64-row block) are at least ``SPLIT_MIN_ITEMS`` and fewer than the
    SMs, it has at least ``SPLIT_MIN_REQUESTS`` requests, the seesaw would run its balanced
    schedule there (one program per request would leave SMs idle: mla_decode_launch.use_balance's
    rule), and each kv head has two or more row blocks (h_q / h_kv * s_q >= 128 rows). Measured
    on the H200 (docs/BENCHMARKS.md, "MLA decode at small batches", h_q 128): the pipe decode
    split over the SMs ran 1.00-1.30x the balanced seesaw from 4 to 64 items (b 2-32 at s_q 1,
    b 2-16 at s_q 2), and at one request 0.64-0.81x it (s_q 1, L 1K / 4K; 1.07x at 16K) and
    0.97x (s_q 2, 4K); at b 64 (128 items, one seesaw program per request) 0.94-0.99x. Shapes
    only, as the metadata."""
    blocks = row_blocks(s_q, h_q, h_kv)
    items = b * h_kv * blocks
    if blocks < 2 or b < SPLIT_MIN_REQUESTS or not SPLIT_MIN_ITEMS <= items < sms:
        return False
    return per_request_leaves_sms_idle(b, parts_for(b, s_q, h_q, h_kv, sms))


# A kv head with at most this many query rows (s_q * h_q / h_kv) in a batch of at least
# ``FEW_ROWS_MIN_BATCH`` requests runs on the pipe decode under "auto" (``auto_prefers_few_rows``).
FEW_ROWS = 32
FEW_ROWS_MIN_BATCH = 32


def auto_prefers_few_rows(b: int, s_q: int, h_q: int, h_kv: int) -> bool:
    """Whether "auto" runs a batch on the pipe decode rather than the seesaw because each kv
    head has few query rows (at most ``FEW_ROWS`` of the 64-row block both pad to). Measured on
    the H200 (docs/BENCHMARKS.md, "MLA decode at few heads"): the pipe decode ran 1.006-1.05x the
    seesaw at b 128 (h_q 16 and 32 at s_q 1, h_q 16 at s_q 2 causal; L 1K to 32K) and 1.14-1.17x
    at b 32 / 64 (h_q 16, s_q 1), where the seesaw ran 0.86-0.87x FlashMLA; at 64 rows (h_q 64)
    0.975x, so the seesaw keeps those. Shapes only, as the metadata."""
    return b >= FEW_ROWS_MIN_BATCH and s_q * (h_q // h_kv) <= FEW_ROWS


def select_impl(impl: str, s_q: int, h_q: int, h_kv: int, aligned: bool = True,
                b: Optional[int] = None, sms: Optional[int] = None) -> str:
    """The implementation that runs a call: ``impl`` itself (ValueError saying why when it cannot),
    or for "auto" the first of ``PREFERENCE`` that can, or the pipe decode where
    ``auto_prefers_split`` or ``auto_prefers_few_rows`` says so (given the batch ``b`` and the SM
    count ``sms``)."""
    if impl == "auto":
        if (b is not None and sms is not None
                and (auto_prefers_split(b, s_q, h_q, h_kv, sms)
                     or auto_prefers_few_rows(b, s_q, h_q, h_kv))
                and unsupported_reason("pipe", s_q, h_q, h_kv, aligned) is None):
            return "pipe"
        for cand in PREFERENCE:
            if unsupported_reason(cand, s_q, h_q, h_kv, aligned) is None:
                return cand
        raise ValueError("impl='auto': no implementation supports this call")  # pragma: no cover
    why = unsupported_reason(impl, s_q, h_q, h_kv, aligned)
    if why is not None:
        raise ValueError(f"impl={impl!r} cannot run this call: {why}")
    return impl


def supported_impls(s_q: int, h_q: int, h_kv: int, aligned: bool = True) -> List[str]:
    return [n for n in IMPLS if unsupported_reason(n, s_q, h_q, h_kv, aligned) is None]


# ---------------------------------------------------------------------------------------------
# Scheduler metadata
# ---------------------------------------------------------------------------------------------

def choose_n_split(b: int, h_kv: int, blocks: int, sms: int, max_split: int = MAX_SPLIT) -> int:
    """Splits per request for a split-KV kernel whose grid is (b * h_kv * blocks, n_split): 1 when
    the work items alone fill the SMs, else as many as fit in one wave (at most ``max_split``).
    Shapes only: the seqlens are never read (no host synchronisation, a CUDA-graph-stable grid)."""
    items = b * h_kv * blocks
    if items <= 0 or items >= sms:
        return 1
    return max(1, min(max_split, sms // items))


@dataclasses.dataclass
class DecodeSchedMeta:
    """The scheduler metadata of ``flash_mla_with_kvcache``: empty from ``get_mla_metadata``,
    filled by the first call (``config``: the shapes it serves; ``n_split``; ``sm_count``)."""

    @dataclasses.dataclass(frozen=True)
    class Config:
        """The shapes a filled metadata object serves: FlashMLA's config fields. ``topk`` is None
        for a dense call and the indices' last dim for a sparse one."""
        b: int
        s_q: int
        h_q: int
        page_block_size: int
        h_kv: int
        causal: bool
        is_fp8_kvcache: bool = False
        topk: Optional[int] = None
        extra_page_block_size: Optional[int] = None
        extra_topk: Optional[int] = None

        @property
        def sparse(self) -> bool:
            return self.topk is not None

        @property
        def h_k(self) -> int:
            """``h_kv`` under the name FlashMLA's ``FlashMLASchedMeta.Config`` gives it, so code
            that reads a filled metadata's config as FlashMLA's finds every field."""
            return self.h_kv

        @classmethod
        def of(cls, q: torch.Tensor, k_cache: torch.Tensor, causal: bool) -> "DecodeSchedMeta.Config":
            return cls(int(q.shape[0]), int(q.shape[1]), int(q.shape[2]), int(k_cache.shape[1]),
                       int(k_cache.shape[2]), bool(causal))

        @classmethod
        def of_sparse(cls, q: torch.Tensor, k_cache: torch.Tensor, indices: torch.Tensor,
                      is_fp8_kvcache: bool, extra_k_cache: Optional[torch.Tensor] = None,
                      extra_indices: Optional[torch.Tensor] = None) -> "DecodeSchedMeta.Config":
            has_extra = extra_k_cache is not None
            return cls(int(q.shape[0]), int(q.shape[1]), int(q.shape[2]), int(k_cache.shape[1]),
                       int(k_cache.shape[2]), False, bool(is_fp8_kvcache), int(indices.shape[-1]),
                       int(extra_k_cache.shape[1]) if has_extra else None,
                       int(extra_indices.shape[-1]) if has_extra else None)

    have_initialized: bool = False
    config: Optional[Config] = None
    n_split: Optional[int] = None
    sm_count: Optional[int] = None

    def fill(self, config: Config, sms: Optional[int]) -> None:
        """Fill from the first call's shapes and the SM count of its device. A sparse call gets
        n_split 1: the sparse decode kernels run unsplit (one program per request, query row and
        head block). ``sms`` None: the count cannot be read (FakeTensors on a torch without CUDA,
        ``fill_sm_count``); n_split is then 1, which the custom ops' fake outputs do not depend
        on, and no kernel can run on that torch to use it."""
        self.config = config
        self.sm_count = None if sms is None else int(sms)
        if config.sparse or sms is None:
            self.n_split = 1
        else:
            self.n_split = choose_n_split(config.b, config.h_kv,
                                          row_blocks(config.s_q, config.h_q, config.h_kv),
                                          self.sm_count)
        self.have_initialized = True

    def check_kind(self, sparse: bool) -> None:
        """ValueError when a filled metadata object was filled by the other kind of call (dense
        or sparse): their configs never match, so this is said before any shape is read."""
        if self.have_initialized and sparse != self.config.sparse:
            kind = {False: "dense (indices None)", True: "sparse (indices given)"}
            raise ValueError(
                f"tile_scheduler_metadata: it was filled by a {kind[self.config.sparse]} call and "
                f"this call is {kind[sparse]}; one metadata object serves one kind of call with "
                "the same shapes, as FlashMLA requires: call get_mla_metadata() again for this "
                "call")

    def check(self, config: Config) -> None:
        """ValueError unless a filled metadata object serves ``config``: the same kind of call
        (dense or sparse) and the same shapes."""
        self.check_kind(config.sparse)
        if self.have_initialized and config != self.config:
            diff = ", ".join(f"{f.name} {getattr(self.config, f.name)!r} -> {getattr(config, f.name)!r}"
                             for f in dataclasses.fields(config)
                             if getattr(config, f.name) != getattr(self.config, f.name))
            raise ValueError(
                f"tile_scheduler_metadata: it was filled by a call with other shapes ({diff}); "
                "reuse a metadata object only with the same shapes and cache_seqlens, as FlashMLA "
                "requires: call get_mla_metadata() again for this shape")


def fill_sm_count(q: torch.Tensor) -> Optional[int]:
    """The SM count a first call fills the metadata with: that of q's device, or None for
    FakeTensors (FakeTensorMode's shape propagation) on a torch built without CUDA, which has no
    device to ask (torch.cuda raises 'Torch not compiled with CUDA enabled')."""
    if isinstance(q, FakeTensor) and not torch.cuda.is_available():
        return None
    return sm_count(q.device)


def get_mla_metadata(*args, **kwargs) -> Tuple[DecodeSchedMeta, None]:
    """An empty ``DecodeSchedMeta`` (filled by the first ``flash_mla_with_kvcache`` call) and None,
    as FlashMLA's current interface returns: ``sched_meta, _ = get_mla_metadata()``. Arguments are
    accepted and ignored (FlashMLA's older interface took cache_seqlens and head counts). Use one
    metadata object per decode shape: a call with other shapes raises ValueError naming what
    changed."""
    return DecodeSchedMeta(), None


# ---------------------------------------------------------------------------------------------
# Validation (no CUDA needed: works on CPU and meta tensors, runs before any launch)
# ---------------------------------------------------------------------------------------------

_SPARSE_ARGS = ("attn_sink", "extra_k_cache", "extra_indices_in_kvcache", "topk_length",
                "extra_topk_length")


def check_metadata_type(meta) -> None:
    """TypeError unless ``meta`` is a ``DecodeSchedMeta``. The pair get_mla_metadata() returns,
    passed whole (a new user's slip: FlashMLA returns a tuple too), is told to be unpacked."""
    if isinstance(meta, DecodeSchedMeta):
        return
    unpack = ""
    if isinstance(meta, tuple) and meta and isinstance(meta[0], DecodeSchedMeta):
        unpack = (" (the pair get_mla_metadata() returns: pass its first item, "
                  "sched_meta, _ = get_mla_metadata())")
    raise TypeError("tile_scheduler_metadata: expected the DecodeSchedMeta returned by "
                    f"tle_kernels.get_mla_metadata(), got {type_name(meta)}{unpack}")


def validate(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
             num_splits=None, softmax_scale=None, causal=False, is_fp8_kvcache=False, indices=None,
             attn_sink=None, extra_k_cache=None, extra_indices_in_kvcache=None, topk_length=None,
             extra_topk_length=None, impl="auto") -> dict:
    """Check every argument of ``flash_mla_with_kvcache``; return ``sparse`` (whether ``indices``
    was given), the problem's sizes, the softmax scale and the metadata config (for a sparse call
    also the impl that will run). TypeError / ValueError / NotImplementedError name the argument.
    Device checks come after the shape checks, so CPU / meta tensors exercise every other rule."""
    if not isinstance(is_fp8_kvcache, bool):
        raise TypeError(f"is_fp8_kvcache: expected a bool, got {type_name(is_fp8_kvcache)}")
    if indices is not None:  # the sparse decode's impl names (sparse_decode_api.IMPLS) are checked there
        return validate_sparse_call(q, k_cache, head_dim_v, tile_scheduler_metadata, num_splits,
                                    softmax_scale, causal, is_fp8_kvcache, indices, attn_sink,
                                    extra_k_cache, extra_indices_in_kvcache, topk_length,
                                    extra_topk_length, impl)
    if not isinstance(impl, str) or impl not in ("auto",) + IMPLS:
        sparse_only = (f" ({impl!r} is a sparse decode impl: it needs indices)"
                       if impl in sparse_api.IMPLS else "")
        raise ValueError(f"impl: expected one of {('auto',) + IMPLS}, got {impl!r}{sparse_only}")
    if is_fp8_kvcache:
        raise NotImplementedError("is_fp8_kvcache: the FP8 KV cache is read by the sparse decode "
                                  "only (pass indices); the dense decode reads a bf16 cache "
                                  "(is_fp8_kvcache=False)")
    given = dict(attn_sink=attn_sink, extra_k_cache=extra_k_cache,
                 extra_indices_in_kvcache=extra_indices_in_kvcache, topk_length=topk_length,
                 extra_topk_length=extra_topk_length)
    for name in _SPARSE_ARGS:
        if given[name] is not None:
            raise ValueError(f"{name}: belongs to the sparse decode (pass indices); the dense "
                             "decode (indices None) requires None, as FlashMLA does")
    check_metadata_type(tile_scheduler_metadata)
    tile_scheduler_metadata.check_kind(sparse=False)
    if num_splits is not None:
        raise ValueError(f"num_splits: must be None (a placeholder of FlashMLA's interface; the "
                         f"split count lives in the metadata), got {num_splits!r}")
    if isinstance(head_dim_v, bool) or not isinstance(head_dim_v, int) or head_dim_v != D_V:
        raise ValueError(f"head_dim_v: expected {D_V} (V = k_cache[..., :512]), got {head_dim_v!r}"
                         f"{int_type_note(head_dim_v)}")
    if softmax_scale is not None:
        if isinstance(softmax_scale, bool) or not isinstance(softmax_scale, (int, float)):
            raise TypeError(f"softmax_scale: expected a Python float or None, got "
                            f"{type_name(softmax_scale)}")
        if not finite_positive(softmax_scale):
            raise ValueError(f"softmax_scale: expected a finite positive float, got {softmax_scale!r}")
    if not isinstance(causal, bool):
        raise TypeError(f"causal: expected a bool, got {type_name(causal)}")

    check_tensor("q", q, (4,), torch.bfloat16, "[b, s_q, h_q, 576] bf16")
    b, s_q, h_q, d = q.shape
    if d != D_QK:
        raise ValueError(f"q: head dim (last dim) must be {D_QK}, got {d}")
    if s_q < 1 or h_q < 1:
        raise ValueError(f"q: s_q and h_q must be at least 1, got shape {tuple(q.shape)}")
    if isinstance(k_cache, torch.Tensor) and k_cache.dtype in sparse_api.CACHE_DTYPES:
        # FlashMLA's FP8 cache layout (bytes): a clearer word than the dtype rule's
        raise TypeError(f"k_cache: a {k_cache.dtype} cache is the FP8 layout, which only the "
                        "sparse decode reads (pass indices and is_fp8_kvcache=True); the dense "
                        "decode reads a bf16 cache [num_blocks, 64, h_kv, 576]")
    check_tensor("k_cache", k_cache, (4,), torch.bfloat16, "[num_blocks, 64, h_kv, 576] bf16")
    num_blocks, page, h_kv, d_k = k_cache.shape
    if page != PAGE:
        raise ValueError(f"k_cache: page_block_size (dim 1) must be {PAGE}, got {page}")
    if d_k != D_QK:
        raise ValueError(f"k_cache: head dim (last dim) must be {D_QK} like q's, got {d_k}")
    if h_kv < 1 or h_q % h_kv != 0:
        raise ValueError(f"k_cache: h_kv (dim 2) must divide q's h_q={h_q}, got h_kv={h_kv}")
    if num_blocks < 1 and b > 0:
        # the TLE kernels' TMA producer builds tensor descriptors over k_cache, which an empty
        # tensor cannot have (Triton asserts every dim positive); an empty batch launches nothing
        raise ValueError(f"k_cache: num_blocks (dim 0) must be at least 1 for a batch of {b}, "
                         f"got shape {tuple(k_cache.shape)}")
    check_tensor("block_table", block_table, (2,), torch.int32, "[b, max_blocks] int32")
    if block_table.shape[0] != b:
        raise ValueError(f"block_table: expected {b} rows (q's batch), got shape "
                         f"{tuple(block_table.shape)}")
    check_tensor("cache_seqlens", cache_seqlens, (1,), torch.int32, "[b] int32")
    if cache_seqlens.shape[0] != b:
        raise ValueError(f"cache_seqlens: expected shape [{b}] (q's batch), got "
                         f"{tuple(cache_seqlens.shape)}")
    if impl != "auto":
        # an explicit impl that cannot run the call (its shape, or rows of q / k_cache that are not
        # 16-byte aligned) fails here, before the metadata is filled. Where the data pointers
        # cannot be read (torch.compile tracing, fake tensors) the strides are checked here and
        # the address in the custom op, which checks the whole rule again on the real tensors.
        select_impl(impl, s_q, h_q, h_kv, rows_aligned_where_known(q, k_cache))
        by_env = impl in TMA_KERNELS and env_switch(TMA_ENV) is True
        if (impl in FORCED_TMA_IMPLS or by_env) and b > 0:
            # TMA forced (by the impl, or by TLE_DECODE_TMA=1 for a kernel with a TMA producer):
            # its tensor descriptors need every stride of k_cache but the last a multiple of 16
            # bytes, those of its dims of one entry too, which the row alignment above does not
            # ask (the launcher would refuse it after the metadata is filled)
            why = tma_layout_unavailable_reason(k_cache)
            if why is not None:
                forced = f" ({TMA_ENV}=1)" if by_env else ""
                raise ValueError(f"impl={impl!r} cannot run this call: it copies K pages with "
                                 f"TMA{forced}, and {why}")
    config = DecodeSchedMeta.Config.of(q, k_cache, causal)
    tile_scheduler_metadata.check(config)
    named = [("q", q), ("k_cache", k_cache), ("block_table", block_table),
             ("cache_seqlens", cache_seqlens)]
    for name, x in named:
        if x.device.type != "cuda":
            raise ValueError(f"{name}: expected a CUDA tensor, got device {x.device}")
    for name, x in named[1:]:
        if x.device != q.device:
            raise ValueError(f"{name}: expected the same device as q ({q.device}), got {x.device}")
    scale = float(D_QK ** -0.5 if softmax_scale is None else softmax_scale)
    return dict(sparse=False, b=b, s_q=s_q, h_q=h_q, h_kv=h_kv, softmax_scale=scale,
                config=config)


def validate_sparse_call(q, k_cache, head_dim_v, tile_scheduler_metadata, num_splits,
                         softmax_scale, causal, is_fp8_kvcache, indices, attn_sink, extra_k_cache,
                         extra_indices_in_kvcache, topk_length, extra_topk_length, impl) -> dict:
    """The sparse call's rules: FlashMLA's (metadata not filled by a dense call, num_splits None,
    causal False), then every rule of ``sparse_decode_api.validate_sparse`` (its device check
    last), then the metadata's shapes. block_table and cache_seqlens are not taken: FlashMLA
    ignores them here."""
    check_metadata_type(tile_scheduler_metadata)
    tile_scheduler_metadata.check_kind(sparse=True)
    if num_splits is not None:
        raise ValueError(f"num_splits: must be None (a placeholder of FlashMLA's interface), got "
                         f"{num_splits!r}")
    if not isinstance(causal, bool):
        raise TypeError(f"causal: expected a bool, got {type_name(causal)}")
    if causal:
        raise ValueError("causal: must be False with indices (the sparse decode has no causal "
                         "mask: each query row's indices name what it sees), as FlashMLA requires")
    info = sparse_api.validate_sparse(q, k_cache, indices, head_dim_v, softmax_scale,
                                      is_fp8_kvcache, attn_sink, topk_length, extra_k_cache,
                                      extra_indices_in_kvcache, extra_topk_length, impl)
    config = DecodeSchedMeta.Config.of_sparse(q, k_cache, indices, is_fp8_kvcache, extra_k_cache,
                                              extra_indices_in_kvcache)
    tile_scheduler_metadata.check(config)
    return dict(info, sparse=True, config=config)


# ---------------------------------------------------------------------------------------------
# Launching (on validated tensors, outputs given)
# ---------------------------------------------------------------------------------------------

def empty_outputs(q: torch.Tensor, d_v: int = D_V) -> Tuple[torch.Tensor, torch.Tensor]:
    b, s_q, h_q, _ = q.shape
    return (q.new_empty((b, s_q, h_q, d_v), dtype=torch.bfloat16),
            q.new_empty((b, h_q, s_q), dtype=torch.float32))


def empty_partials(q: torch.Tensor, n_split: int, d_v: int = D_V) -> Tuple[torch.Tensor, torch.Tensor]:
    """o_part [b, n_split, s_q, h_q, 512] and lse_part [b, n_split, s_q, h_q], fp32."""
    b, s_q, h_q, _ = q.shape
    return (q.new_empty((b, n_split, s_q, h_q, d_v), dtype=torch.float32),
            q.new_empty((b, n_split, s_q, h_q), dtype=torch.float32))


def launch(impl: str, q, k_cache, block_table, cache_seqlens, sm_scale: float, causal: bool,
           n_split: int, out, lse) -> str:
    """Run one decode into given outputs; ``impl`` may be "auto". Returns the impl that ran. For
    benchmarks and tests: no validation beyond impl support. ``n_split`` > 1 runs the kernel
    split-KV (partials in fresh buffers) and the combine after it, whichever kernel it is (the
    API passes the metadata's n_split to the TLE kernels and 1 to the naive one)."""
    b, s_q, h_q, _ = q.shape
    h_kv = k_cache.shape[2]
    sms = sm_count(q.device) if q.device.type == "cuda" else None
    name = select_impl(impl, s_q, h_q, h_kv, rows_aligned(q, k_cache), b=b, sms=sms)
    if q.numel() == 0:
        return name
    if name in SCHEDULED_IMPLS:
        run = getattr(launcher_module(name), LAUNCHERS[name][1])
        run(q, k_cache, block_table, cache_seqlens, sm_scale, causal, out, lse, sm_count(q.device))
        return name
    o_part = lse_part = None
    if n_split > 1:
        o_part, lse_part = empty_partials(q, n_split)
    if name == "naive":
        from .mla_decode_naive import mla_decode_naive

        if n_split > 1:
            mla_decode_naive(q, k_cache, block_table, cache_seqlens, sm_scale, causal, o_part,
                             lse_part, n_split=n_split)
        else:
            mla_decode_naive(q, k_cache, block_table, cache_seqlens, sm_scale, causal, out, lse)
    else:
        run = getattr(launcher_module(name), LAUNCHERS[name][1])
        run(q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split, out, lse, o_part,
            lse_part)
    if n_split > 1:
        from .mla_decode_combine import mla_decode_combine

        mla_decode_combine(o_part, lse_part, out, lse)
    return name


# ---------------------------------------------------------------------------------------------
# The custom op
# ---------------------------------------------------------------------------------------------

def _mla_decode_impl(q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor,
                     cache_seqlens: torch.Tensor, softmax_scale: float, causal: bool, n_split: int,
                     impl: str) -> Tuple[torch.Tensor, torch.Tensor]:
    """Validated tensors, the scale resolved; ``n_split`` from the metadata, used by the split-KV
    implementations (the naive baseline runs unsplit). Returns (out, lse)."""
    out, lse = empty_outputs(q)
    b, s_q, h_q, _ = q.shape
    sms = sm_count(q.device) if q.device.type == "cuda" else None
    name = select_impl(impl, s_q, h_q, k_cache.shape[2], rows_aligned(q, k_cache), b=b, sms=sms)
    launch(name, q, k_cache, block_table, cache_seqlens, softmax_scale, causal,
           n_split if name in SPLIT_IMPLS else 1, out, lse)
    return out, lse


def _mla_decode_fake(q, k_cache, block_table, cache_seqlens, softmax_scale, causal, n_split, impl):
    return empty_outputs(q)


def _sparse_mla_decode_impl(q: torch.Tensor, k_cache: torch.Tensor, indices: torch.Tensor,
                            softmax_scale: float, is_fp8_kvcache: bool,
                            attn_sink: Optional[torch.Tensor], topk_length: Optional[torch.Tensor],
                            extra_k_cache: Optional[torch.Tensor],
                            extra_indices: Optional[torch.Tensor],
                            extra_topk_length: Optional[torch.Tensor],
                            impl: str) -> Tuple[torch.Tensor, torch.Tensor]:
    """Validated tensors (sparse_decode_api.validate_sparse), the scale resolved. Returns
    (out, lse). The FP8 caches' address rule is checked again here: under torch.compile,
    validation is traced and cannot read data pointers (data_pointers.address_known)."""
    if is_fp8_kvcache:
        sparse_api.check_cache_address("k_cache", k_cache)
        if extra_k_cache is not None:
            sparse_api.check_cache_address("extra_k_cache", extra_k_cache)
    out, lse = sparse_api.empty_outputs(q)
    sparse_api.launch_sparse(impl, q, k_cache, indices, softmax_scale, is_fp8_kvcache, out, lse,
                         attn_sink, topk_length, extra_k_cache, extra_indices, extra_topk_length)
    return out, lse


def _sparse_mla_decode_fake(q, k_cache, indices, softmax_scale, is_fp8_kvcache, attn_sink,
                            topk_length, extra_k_cache, extra_indices, extra_topk_length, impl):
    return sparse_api.empty_outputs(q)


def _register(name: str, impl, fake):
    # Registered once per process, whichever import of the package gets here first.
    try:
        return getattr(torch.ops.tle_kernels, name)
    except (AttributeError, RuntimeError):
        pass
    op = torch.library.custom_op(f"tle_kernels::{name}", mutates_args=())(impl)
    op.register_fake(fake)
    return op


def _import_launchers() -> None:
    """Import the launchers whose files exist, with this module: a call torch.compile traces then
    finds them in ``sys.modules`` (launcher_module), since importlib cannot be traced."""
    for impl in LAUNCHERS:
        launcher_module(impl)


_import_launchers()
mla_decode_op = _register("mla_decode", _mla_decode_impl, _mla_decode_fake)
sparse_mla_decode_op = _register("sparse_mla_decode", _sparse_mla_decode_impl,
                                 _sparse_mla_decode_fake)


def flash_mla_with_kvcache(q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor,
                           cache_seqlens: torch.Tensor, head_dim_v: int,
                           tile_scheduler_metadata: DecodeSchedMeta, num_splits: None = None,
                           softmax_scale: Optional[float] = None, causal: bool = False,
                           is_fp8_kvcache: bool = False, indices: Optional[torch.Tensor] = None,
                           attn_sink: Optional[torch.Tensor] = None,
                           extra_k_cache: Optional[torch.Tensor] = None,
                           extra_indices_in_kvcache: Optional[torch.Tensor] = None,
                           topk_length: Optional[torch.Tensor] = None,
                           extra_topk_length: Optional[torch.Tensor] = None, *,
                           impl: str = "auto") -> Tuple[torch.Tensor, torch.Tensor]:
    """MLA decode (FlashMLA ``flash_mla_with_kvcache`` semantics): dense over a paged bf16 KV
    cache, or the DeepSeek-V3.2 sparse decode when ``indices`` is given.

        sched_meta, _ = get_mla_metadata()
        out, lse = flash_mla_with_kvcache(q, k_cache, block_table, cache_seqlens, 512, sched_meta,
                                          causal=True)

    Args (dense):
        q: [b, s_q, h_q, 576] bf16.
        k_cache: [num_blocks, 64, h_kv, 576] bf16 (V is its first 512 dims); h_kv divides h_q.
        block_table: [b, max_blocks] int32, the pages of each request.
        cache_seqlens: [b] int32, the tokens of each request (0 allowed).
        head_dim_v: 512.
        tile_scheduler_metadata: the ``DecodeSchedMeta`` of ``get_mla_metadata()`` (filled by the
            first call; reuse it only with the same shapes).
        num_splits: None (FlashMLA's placeholder).
        softmax_scale: a positive Python float, default 576 ** -0.5.
        causal: query j sees positions < seqlen - s_q + j + 1.
        impl (keyword only): "auto" (default), "naive", "pipe", "seesaw", "seesaw-tma".
    Args (sparse, ``indices`` given; block_table and cache_seqlens are ignored):
        indices: [b, s_q, topk] int32, topk a multiple of 64; an index < 0 or past the cache is
            skipped. h_q one of 8, 16, 32, 64, 128.
        is_fp8_kvcache: True for FlashMLA's FP8 cache [num_blocks, page_block_size, 1, 656] bytes
            (tle_kernels/fp8_kvcache.py); False reads a bf16 cache [.., 1, 576].
        attn_sink: optional [h_q] fp32; topk_length: optional [b] int32; extra_k_cache,
            extra_indices_in_kvcache, extra_topk_length: an optional second cache
            (tle_kernels/sparse_decode_reference.py). causal must be False.
        impl: also "seesaw-fp8", "split-fp8", "narrow" (tle_kernels.sparse_decode_api.IMPLS).

    Returns:
        (out [b, s_q, h_q, 512] bf16, lse [b, h_q, s_q] fp32, natural log; a row that sees no
        token: out 0, lse +inf).

    Raises:
        TypeError / ValueError / NotImplementedError naming the argument, before any launch and
        before the metadata is filled: every rule is checked on CPU or meta tensors too; the
        tensors must then be on one CUDA device. The module docstring (tle_kernels.decode_api)
        has the whole contract.
    """
    info = validate(q, k_cache, block_table, cache_seqlens, head_dim_v, tile_scheduler_metadata,
                    num_splits, softmax_scale, causal, is_fp8_kvcache, indices, attn_sink,
                    extra_k_cache, extra_indices_in_kvcache, topk_length, extra_topk_length, impl)
    meta = tile_scheduler_metadata
    if not meta.have_initialized:
        meta.fill(info["config"], fill_sm_count(q))
    if info["sparse"]:
        return torch.ops.tle_kernels.sparse_mla_decode(
            q, k_cache, indices, info["softmax_scale"], is_fp8_kvcache, attn_sink, topk_length,
            extra_k_cache, extra_indices_in_kvcache, extra_topk_length, info["impl"])
    return torch.ops.tle_kernels.mla_decode(q, k_cache, block_table, cache_seqlens,
                                            info["softmax_scale"], causal, meta.n_split, impl)


def flash_mla_sparse_fwd(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor, sm_scale: float,
                         d_v: int = 512, attn_sink: Optional[torch.Tensor] = None,
                         topk_length: Optional[torch.Tensor] = None, *,
                         impl: str = "auto") -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """FlashMLA's ``flash_mla_sparse_fwd``: the SparseMLA prefill, ``sparse_mla_prefill`` under
    FlashMLA's name (``impl`` keyword only here).

    q [s_q, h_q, d_qk] bf16 (d_qk 576 or 512), kv [s_kv, 1, d_qk] bf16, indices [s_q, 1, topk]
    int32, sm_scale a positive float, d_v 512, optional attn_sink [h_q] fp32 and topk_length
    [s_q] int32 (or the batched layout: ``help(tle_kernels.sparse_mla_prefill)``). Returns
    (out [s_q, h_q, 512] bf16, max_logits [s_q, h_q] fp32, lse [s_q, h_q] fp32). Errors name the
    argument, before any launch."""
    return sparse_mla_prefill(q, kv, indices, sm_scale, d_v, attn_sink, topk_length, impl=impl)
