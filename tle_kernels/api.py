"""Drop-in SparseMLA prefill for PyTorch: FlashMLA's ``flash_mla_sparse_fwd`` interface.

    out, max_logits, lse = sparse_mla_prefill(q, kv, indices, sm_scale, d_v=512,
                                              attn_sink=None, topk_length=None, impl="auto")

- q [s_q, h_q, d_qk] bf16, kv [s_kv, 1, d_qk] bf16, indices [s_q, 1, topk] int32 (only the last dim
  of each needs to be contiguous), or the batched layout q [B, SQ, H, d_qk], kv [B, SKV, 1, d_qk],
  indices [B, SQ, 1, topk] (indices are positions within the batch's own kv).
- out [.., h_q, 512] bf16, max_logits and lse [.., h_q] fp32 in natural-log units. Semantics of
  invalid indices, empty rows, attn_sink and topk_length: tle_kernels/reference.py and docs/sparse_mla.md.
- impl: "naive" (plain Triton), "pipe" (TLE-Pipe), "seesaw" (TLE-FlashMLA; d_qk = 512 runs
  tle_kernels/sparse_mla_seesaw_d512.py and its attn_sink / topk_length variants), "narrow"
  (h_q <= 32: tle_kernels/sparse_mla_narrow.py, the heads as the wgmma N, nothing padded; d_qk 576
  or 512), or
  "auto" (the first implementation in ``PREFERENCE`` that supports the call).
- h_q: any count >= 1. The seesaw runs an h_q that is not a multiple of 64 itself: its last
  head block's rows past h_q are masked (q read as 0, nothing stored), so it computes the head
  rows of the next multiple of 64 (tle_kernels/head_padding.py: 8 / 16 / 32 -> 64, 96 -> 128);
  "auto" takes it there only where that pays against the naive kernel (``auto_pads``: h_q > 16
  today), and ``impl="seesaw"`` runs it on request at any h_q.

Everything is validated before any launch (and before anything needs CUDA): a ValueError or
TypeError names the argument and what was expected. The work runs in the custom op
``torch.ops.tle_kernels.sparse_mla_prefill`` (with a fake implementation), so calls trace under
``torch.compile`` and can be captured in a CUDA graph.
"""

from __future__ import annotations

import math
from typing import Callable, Dict, List, Optional, Tuple

import torch

from .data_pointers import ALIGN, strides_aligned
from .head_padding import (auto_pads, launch_padded_prefill, naive_head_rows, padded_heads,
                           run_split_any_heads)

D_V = 512
D_QK_CHOICES = (512, 576)
IMPLS = ("naive", "pipe", "seesaw", "narrow")
NARROW_MAX_HEADS = 32  # the widest head block (wgmma N) the narrow-head kernel is compiled for

# "auto" takes the first implementation in this order that supports the call. The narrow kernel
# takes only h_q <= 32, where it computes no padded head rows (docs/BENCHMARKS.md, head counts
# below 64); the seesaw is the fastest at every SKV of the headline shape (603.7 vs 549.8 TFLOP/s
# at 8K, 542.9 vs 505.8 at 128K) and at topk % 128 == 64 too, where it computes one masked K tile
# per item more than the pipe kernel (1.00x / 1.07x / 1.06x the pipe kernel at topk 64 / 576 /
# 2112, docs/BENCHMARKS.md); the naive kernel covers everything else.
PREFERENCE: Tuple[str, ...] = ("narrow", "seesaw", "pipe", "naive")

# Implementations whose kernels take any h_q in blocks of 64 heads, the last one masked: they
# compute padded_heads(h_q) head rows (tle_kernels/head_padding.py); "auto" takes them at an
# h_q % 64 != 0 only where auto_pads(h_q).
PADS_HEADS: Tuple[str, ...] = ("seesaw",)


# ---------------------------------------------------------------------------------------------
# What each implementation supports
# ---------------------------------------------------------------------------------------------

def _tle_limits(name: str, topk_multiple: int, sink: bool = False, topk_length: bool = False,
                widths: Tuple[int, ...] = (576,), max_heads: Optional[int] = None,
                aligned_what: str = "q, kv and indices"):
    """What a TLE kernel family takes: h_q % 64 == 0 (any h_q for a family in ``PADS_HEADS``,
    whose kernels mask the heads past h_q; with ``max_heads``, any h_q up to it instead), d_qk one
    of ``widths``, topk % ``topk_multiple`` == 0, attn_sink / topk_length where ``sink`` /
    ``topk_length`` say so (at every width it takes), and 16-byte aligned rows of
    ``aligned_what``."""
    def why_not(h_q: int, d_qk: int, topk: int, has_sink: bool, has_topk_length: bool,
                aligned: bool = True) -> Optional[str]:
        if max_heads is not None:
            if h_q > max_heads:
                return f"{name} needs h_q <= {max_heads} (got h_q={h_q})"
        elif kernel_heads(name, h_q) % 64 != 0:
            return f"{name} needs h_q % 64 == 0 (got h_q={h_q})"
        if d_qk not in widths:
            want = " or ".join(str(w) for w in widths)
            return f"{name} needs d_qk == {want} (got d_qk={d_qk})"
        if topk % topk_multiple != 0:
            return f"{name} needs topk % {topk_multiple} == 0 (got topk={topk})"
        if has_sink and not sink:
            return f"{name} does not support attn_sink yet"
        if has_topk_length and not topk_length:
            return f"{name} does not support topk_length yet"
        if not aligned:
            return f"{name} needs 16-byte aligned {aligned_what} (data_ptr and row strides)"
        return None
    return why_not


def _naive_why_not(h_q: int, d_qk: int, topk: int, has_sink: bool, has_topk_length: bool,
                   aligned: bool = True) -> Optional[str]:
    return None  # anything that passes validation


SUPPORT: Dict[str, Callable[..., Optional[str]]] = {
    "naive": _naive_why_not,
    "pipe": _tle_limits("pipe", 64),
    # d_qk 512: tle_kernels/sparse_mla_seesaw_d512.py; attn_sink / topk_length at either width:
    # tle_kernels/sparse_mla_seesaw_sink_topk_launch.py
    # topk % 128 == 64: the last K-tile pair's second tile is masked (sparse_mla_seesaw.producer)
    "seesaw": _tle_limits("seesaw", 64, sink=True, topk_length=True, widths=(576, 512)),
    # h_q <= 32 (NARROW_MAX_HEADS); q and the outputs it takes unaligned, over aligned copies
    # (tle_kernels/sparse_mla_narrow_launch.py): only kv and indices must be aligned
    "narrow": _tle_limits("narrow", 64, sink=True, topk_length=True, max_heads=NARROW_MAX_HEADS,
                          widths=(576, 512), aligned_what="kv, indices and topk_length"),
}


def kernel_heads(impl: str, h_q: int) -> int:
    """The head rows ``impl``'s kernel computes for a call of ``h_q`` heads: the seesaw's (any
    ``PADS_HEADS``) blocks of 64 heads, the rows past h_q in the last one masked
    (tle_kernels/head_padding.py), h_q itself for the others (the naive kernel's last head block
    is masked too, but its blocks are sized to h_q: ``naive_head_rows``)."""
    return padded_heads(h_q) if impl in PADS_HEADS else h_q


def unsupported_reason(impl: str, h_q: int, d_qk: int, topk: int, has_sink: bool = False,
                       has_topk_length: bool = False, aligned: bool = True) -> Optional[str]:
    """None when ``impl`` handles the call (``kernel_heads`` says at how many heads), else why
    not."""
    if impl not in SUPPORT:
        raise ValueError(f"impl: expected one of {('auto',) + IMPLS}, got {impl!r}")
    return SUPPORT[impl](h_q, d_qk, topk, has_sink, has_topk_length, aligned)


def auto_passes_over(impl: str, h_q: int) -> Optional[str]:
    """Why "auto" does not take ``impl`` for a call it supports, or None: a kernel computing
    more head rows than h_q (``kernel_heads(impl, h_q) != h_q``) where that does not pay
    (head_padding.auto_pads)."""
    heads = kernel_heads(impl, h_q)
    if heads != h_q and not auto_pads(h_q):
        return (f"{impl} would run h_q={h_q} as {heads} head rows, "
                f"{heads // naive_head_rows(h_q)}x the head rows of the naive kernel, which is "
                f"about as fast then")
    return None


def select_impl(impl: str, h_q: int, d_qk: int, topk: int, has_sink: bool = False,
                has_topk_length: bool = False, aligned: bool = True) -> str:
    """The implementation that runs a call: ``impl`` itself (ValueError saying why when it cannot
    handle the shape), or for "auto" the first of ``PREFERENCE`` that can and that padding does
    not slow down (``auto_passes_over``)."""
    if impl == "auto":
        for cand in PREFERENCE:
            if (unsupported_reason(cand, h_q, d_qk, topk, has_sink, has_topk_length, aligned)
                    is None and auto_passes_over(cand, h_q) is None):
                return cand
        raise ValueError("impl='auto': no implementation supports this call")  # pragma: no cover
    why = unsupported_reason(impl, h_q, d_qk, topk, has_sink, has_topk_length, aligned)
    if why is not None:
        raise ValueError(f"impl={impl!r} cannot run this call: {why}")
    return impl


def supported_impls(h_q: int, d_qk: int, topk: int, has_sink: bool = False,
                    has_topk_length: bool = False) -> List[str]:
    return [n for n in IMPLS if unsupported_reason(n, h_q, d_qk, topk, has_sink, has_topk_length) is None]


# ---------------------------------------------------------------------------------------------
# Validation (no CUDA needed: works on CPU and meta tensors, runs before any launch)
# ---------------------------------------------------------------------------------------------

def type_name(x) -> str:
    """The type of ``x`` as an error message names it: a builtin by its bare name, any other type
    qualified by its module, so that numpy's bool or float32 (whose bare names read as Python's
    own types) shows as numpy.bool / numpy.float32."""
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def int_type_note(x) -> str:
    """What an error about an integer argument adds when ``x`` is no Python int: its type, so that
    ``expected 512, got np.int64(512)`` (or ``tensor(512)``, ``512.0``) does not read as if the
    value were wrong (shared by ``d_v`` and the decodes' ``head_dim_v``)."""
    if type(x) is int:
        return ""
    if isinstance(x, bool):
        return " (a bool, not an int)"
    return f" (a {type_name(x)}, not a Python int)"


def finite_positive(x) -> bool:
    """Whether the number ``x`` (an int or float) is finite and positive as the float the kernels
    take: an int too large for a float (10 ** 400) is not, rather than an OverflowError that
    names no argument."""
    try:
        return math.isfinite(x) and x > 0
    except OverflowError:
        return False


def check_tensor(name: str, x, ranks: Tuple[int, ...], dtype: torch.dtype, what: str) -> None:
    """A tensor argument of one of ``ranks``, of ``dtype``, its last dim contiguous; the error names
    the argument and what was expected (shared by the prefill and decode entry points)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor {what}, got {type_name(x)}")
    if x.dim() not in ranks:
        raise ValueError(f"{name}: expected rank {' or '.join(map(str, ranks))} ({what}), got rank "
                         f"{x.dim()} with shape {tuple(x.shape)}")
    if x.dtype != dtype:
        raise TypeError(f"{name}: expected dtype {dtype} ({what}), got {x.dtype}")
    if x.numel() > 0 and x.shape[-1] > 1 and x.stride(-1) != 1:
        raise ValueError(f"{name}: the last dim must be contiguous (stride 1), got strides "
                         f"{tuple(x.stride())}")


def validate(q, kv, indices, sm_scale, d_v=D_V, attn_sink=None, topk_length=None,
             impl="auto") -> dict:
    """Check every argument; return the problem's sizes. Raises TypeError / ValueError naming the
    argument. Device checks come last, so CPU / meta tensors exercise every other rule."""
    if not isinstance(impl, str) or impl not in ("auto",) + IMPLS:
        raise ValueError(f"impl: expected one of {('auto',) + IMPLS}, got {impl!r}")
    if isinstance(sm_scale, bool) or not isinstance(sm_scale, (int, float)):
        raise TypeError(f"sm_scale: expected a Python float, got {type_name(sm_scale)}")
    if not finite_positive(sm_scale):
        # a softmax scale (1/sqrt(d)); the seesaw takes row maxima before scaling, which is right
        # only for a positive scale
        raise ValueError(f"sm_scale: expected a finite positive float, got {sm_scale!r}")
    if isinstance(d_v, bool) or not isinstance(d_v, int) or d_v != D_V:
        raise ValueError(f"d_v: expected {D_V} (the V dims are kv[..., :512]), got {d_v!r}"
                         f"{int_type_note(d_v)}")
    check_tensor("q", q, (3, 4), torch.bfloat16, "[s_q, h_q, d_qk] or [B, SQ, H, d_qk] bf16")
    batched = q.dim() == 4
    if batched:
        check_tensor("kv", kv, (4,), torch.bfloat16, "[B, SKV, 1, d_qk] bf16 (q is batched)")
        check_tensor("indices", indices, (4,), torch.int32, "[B, SQ, 1, topk] int32 (q is batched)")
        B, s_q, h_q, d_qk = q.shape
        if kv.shape[0] != B or indices.shape[0] != B:
            raise ValueError(f"kv/indices: batch size must match q's {B}, got kv {tuple(kv.shape)}, "
                             f"indices {tuple(indices.shape)}")
        s_kv, h_kv, d_kv = kv.shape[1:]
        i_sq, i_hkv, topk = indices.shape[1:]
    else:
        check_tensor("kv", kv, (3,), torch.bfloat16, "[s_kv, 1, d_qk] bf16")
        check_tensor("indices", indices, (3,), torch.int32, "[s_q, 1, topk] int32")
        B = None
        s_q, h_q, d_qk = q.shape
        s_kv, h_kv, d_kv = kv.shape
        i_sq, i_hkv, topk = indices.shape
    if d_qk not in D_QK_CHOICES:
        raise ValueError(f"q: d_qk (last dim) must be one of {D_QK_CHOICES}, got {d_qk}")
    if h_q < 1:
        raise ValueError(f"q: h_q must be at least 1, got {h_q}")
    if h_kv != 1:
        raise ValueError(f"kv: h_kv must be 1 (MLA shares one latent kv head), got kv shape "
                         f"{tuple(kv.shape)}")
    if d_kv != d_qk:
        raise ValueError(f"kv: last dim must equal q's d_qk={d_qk}, got {d_kv}")
    if s_kv < 1:
        raise ValueError(f"kv: s_kv must be at least 1, got {s_kv}")
    if i_sq != s_q or i_hkv != 1:
        raise ValueError(f"indices: expected shape {'[B, ' if batched else '['}{s_q}, 1, topk] "
                         f"matching q, got {tuple(indices.shape)}")
    if topk < 1:
        raise ValueError(f"indices: topk (last dim) must be at least 1, got {topk}")
    if (B or 1) * s_kv >= 2**31:
        raise ValueError(f"kv: {'B * SKV' if batched else 's_kv'} must be < 2**31 (int32 indices)")
    if attn_sink is not None:
        check_tensor("attn_sink", attn_sink, (1,), torch.float32, "[h_q] fp32")
        if attn_sink.shape[0] != h_q:
            raise ValueError(f"attn_sink: expected shape [{h_q}] (h_q), got {tuple(attn_sink.shape)}")
    if topk_length is not None:
        if batched:
            check_tensor("topk_length", topk_length, (2,), torch.int32, "[B, SQ] int32")
            ok = tuple(topk_length.shape) == (B, s_q)
        else:
            check_tensor("topk_length", topk_length, (1,), torch.int32, "[s_q] int32")
            ok = topk_length.shape[0] == s_q
        if not ok:
            raise ValueError(f"topk_length: expected shape {[B, s_q] if batched else [s_q]}, got "
                             f"{tuple(topk_length.shape)}")
    if impl != "auto":  # an explicit impl that cannot handle the shape fails here, before launch
        select_impl(impl, h_q, d_qk, topk, attn_sink is not None, topk_length is not None)
    named = [("q", q), ("kv", kv), ("indices", indices), ("attn_sink", attn_sink),
             ("topk_length", topk_length)]
    for name, x in named:
        if x is not None and x.device.type != "cuda":
            raise ValueError(f"{name}: expected a CUDA tensor, got device {x.device}")
    for name, x in named[1:]:
        if x is not None and x.device != q.device:
            raise ValueError(f"{name}: expected the same device as q ({q.device}), got {x.device}")
    return dict(batched=batched, B=B, s_q=s_q, h_q=h_q, d_qk=d_qk, s_kv=s_kv, topk=topk)


# ---------------------------------------------------------------------------------------------
# Launching (on validated tensors, outputs given)
# ---------------------------------------------------------------------------------------------

def rows_aligned(*xs: torch.Tensor) -> bool:
    """Whether every row (last dim) of each tensor starts on a 16-byte boundary (what the TLE
    kernels' 16-byte loads need): its data pointer and its strides (data_pointers.py, whose
    ``rows_aligned_where_known`` is this rule where the address may not be readable)."""
    return all(x.data_ptr() % ALIGN == 0 and strides_aligned(x) for x in xs)


def aligned(x: torch.Tensor) -> torch.Tensor:
    """``x`` itself when its rows start on 16-byte boundaries (``rows_aligned``), else a
    contiguous copy (a fresh allocation, which is aligned)."""
    return x if rows_aligned(x) else x.clone(memory_format=torch.contiguous_format)


def launch(impl: str, q, kv, indices, sm_scale: float, out, max_logits, lse, attn_sink=None,
           topk_length=None, tail_split: bool = True, persistent: bool = True,
           tail_min_speedup: float = 2.0) -> str:
    """Run one 3-D (unbatched) call into given outputs; ``impl`` may be "auto". Returns the impl
    that ran. For benchmarks: no allocation, no validation beyond impl support. ``tail_split``:
    let a TLE kernel's last partial wave run as topk pieces on every SM (tle_kernels/tail_split.py)
    when the model says that makes it ``tail_min_speedup`` times shorter (the prefill's 2; the
    sparse decode, a launch under one wave, asks for less:
    sparse_decode_seesaw_launch.SEESAW_DECODE_MIN_SPEEDUP).
    ``persistent=False``: the seesaw runs one program per (query token, head block) item instead of
    one per SM (``PerCtaLaunch``), leaving SMs to other work as its programs finish."""
    s_q, h_q, d_qk = q.shape
    topk = indices.shape[-1]
    direct = rows_aligned(q, kv, indices, out, max_logits,
                          *(x for x in (attn_sink, topk_length) if x is not None))
    if h_q % 64 == 0:
        aligned = direct
    else:  # the seesaw runs q, the outputs and the sink as they are when aligned, else copies
        aligned = rows_aligned(kv, indices, *(x for x in (topk_length,) if x is not None))
    name = select_impl(impl, h_q, d_qk, topk, attn_sink is not None, topk_length is not None,
                       aligned)
    if s_q == 0:
        return name
    if kernel_heads(name, h_q) != h_q and not direct:
        # q, an output or the sink is not 16-byte aligned where the kernels read or write it:
        # over aligned copies padded to 64 heads (tle_kernels/head_padding.py)
        def run_padded(*args):
            launch(name, *args, tail_split=tail_split, persistent=persistent,
                   tail_min_speedup=tail_min_speedup)

        launch_padded_prefill(run_padded, q, kv, indices, sm_scale, out, max_logits, lse,
                              attn_sink, topk_length)
        return name
    if name == "narrow":
        from .sparse_mla_narrow_launch import launch_narrow

        launch_narrow(q, kv, indices, sm_scale, out, max_logits, lse, attn_sink, topk_length)
        return name
    if name == "naive":
        from .sparse_mla_naive import sparse_mla_naive

        sparse_mla_naive(q, kv, indices, sm_scale, out, max_logits, lse, attn_sink, topk_length)
        return name
    if name == "pipe":
        from .sparse_mla_pipe import sparse_mla_pipe as kernel
    else:  # persistent: one program per SM, ROUNDS (query token, head block) items each
        kernel = PerCtaLaunch(seesaw_kernel(d_qk), persistent)

    def run(q, kv, indices, out, max_logits, lse, q_div=1):
        # the head count of this launch's q (a split's tail pieces may run padded heads); q_div:
        # index row v reads q row v // q_div (a tail split's pieces of one token share its q row;
        # the 576-dim seesaw only)
        assert max_logits.stride() == lse.stride()
        extra = {"n_heads": q.shape[1]} if name == "seesaw" else {}  # the seesaw masks past it
        if q_div != 1:
            extra["q_div"] = q_div
        kernel[(indices.shape[0], -(-q.shape[1] // 64))](
            q, kv, indices, out, lse, max_logits, q.stride(0), q.stride(1), kv.stride(0),
            indices.stride(0), out.stride(0), out.stride(1), lse.stride(0), kv.shape[0],
            float(sm_scale), TOPK=indices.shape[-1], BLOCK_H=64, **extra)

    if name == "seesaw" and (attn_sink is not None or topk_length is not None):
        from .sparse_mla_seesaw_sink_topk_launch import launch_sink_topk

        launch_sink_topk(run, q, kv, indices, sm_scale, out, max_logits, lse, attn_sink,
                         topk_length, tail_split, persistent, tail_min_speedup,
                         shared_q=shares_q(name, d_qk))
        return name
    split = None
    if tail_split and name in SPLITS_TAIL and persistent:
        from .tail_split import plan_tail_split

        split = plan_tail_split(s_q, -(-h_q // 64), topk, sm_count(q.device), TOPK_STEP[name],
                                min_speedup=tail_min_speedup)
    if split is None:
        run(q, kv, indices, out, max_logits, lse)
    else:
        run_split_any_heads(run, q, kv, indices, out, max_logits, lse, split,
                            shared_q=shares_q(name, d_qk))
    return name


def shares_q(name: str, d_qk: int) -> bool:
    """Whether ``name``'s plain kernel at ``d_qk`` reads a tail split's pieces' q in place (its
    ``q_div`` argument: sparse_mla_seesaw.py) rather than from a copy of q per piece."""
    return name == "seesaw" and d_qk == 576


def seesaw_kernel(d_qk: int):
    """The plain seesaw kernel of a d_qk: rows with the RoPE tail (576) or without (512). Looked
    up in its module at call time, so that a test can put an emulated kernel there."""
    if d_qk == 512:
        from .sparse_mla_seesaw_d512 import sparse_mla_seesaw_d512

        return sparse_mla_seesaw_d512
    from .sparse_mla_seesaw import sparse_mla_seesaw

    return sparse_mla_seesaw


# topk indices per loop step of each TLE kernel (the granule of a tail piece's topk). Only the
# persistent seesaw splits its last wave: its programs without an item of their own recompute the
# last one, so that wave costs a whole round of all SMs' time and power; the per-CTA pipe kernel's
# idle SMs just wait (its split measured +0.7 % / -0.8 % at SKV 8K / 128K).
TOPK_STEP = {"pipe": 64, "seesaw": 128}
SPLITS_TAIL = ("seesaw",)
_SMS: Dict[torch.device, int] = {}


def sm_count(device) -> int:
    """The SM count of a CUDA device (asked once per device: persistent launches need it per call)."""
    if device not in _SMS:
        _SMS[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return _SMS[device]


def launch_args(s_q: int, h_q: int, programs: int, block_h: int = 64):
    """(grid, n_items, n_hb, rounds) of a persistent kernel (tle_kernels/sparse_mla_seesaw.py): s_q
    query tokens of h_q heads as (token, head block) items on ``programs`` programs (the number of
    SMs: one persistent program each), ROUNDS items per program; n_hb = ceil(h_q / block_h) (the
    last block's heads past h_q are masked by the kernel)."""
    n_hb = -(-h_q // block_h)
    n_items = s_q * n_hb
    progs = max(1, min(n_items, programs))
    return (progs,), n_items, n_hb, -(-n_items // progs)


def is_persistent(module) -> bool:
    """Whether a kernel module's kernel is launched as a persistent kernel (its DEFAULT_CONFIG's
    grid is ("programs",))."""
    return tuple(getattr(module, "DEFAULT_CONFIG", {}).get("grid", ())) == ("programs",)


class PerCtaLaunch:
    """``PerCtaLaunch(kernel)[(s_q, n_hb)](*args, TOPK=, BLOCK_H=, **extra)``: a persistent kernel
    launched with the per-CTA kernels' grid and arguments (the benchmarks' and the A/B harness's
    calling convention): one program per SM, the item count, head blocks and rounds appended to
    ``args``. ``persistent=False``: one program per item (ROUNDS = 1), the per-CTA schedule (what
    benchmarks/seesaw_timeline.py --per-cta traces). A kernel that takes ``n_heads`` (the real
    head count, the rows past it masked) gets ``extra``'s, or n_hb * BLOCK_H when it gives none
    (an earlier version of a kernel without it, as the A/B harness runs, gets none)."""

    def __init__(self, kernel, persistent: bool = True):
        self.kernel = kernel
        self.persistent = persistent

    def __getitem__(self, grid):
        def run(*args, TOPK, BLOCK_H, **extra):
            items = grid[0] * grid[1]
            programs = sm_count(args[0].device) if self.persistent else items
            g, n_items, n_hb, rounds = launch_args(grid[0], grid[1] * BLOCK_H, programs, BLOCK_H)
            if "n_heads" not in extra and takes_argument(self.kernel, "n_heads"):
                extra["n_heads"] = grid[1] * BLOCK_H
            if "q_div" not in extra and takes_argument(self.kernel, "q_div"):
                extra["q_div"] = 1
            self.kernel[g](*args, n_items, n_hb, rounds, TOPK=TOPK, BLOCK_H=BLOCK_H, **extra)
        return run


def takes_argument(kernel, name: str) -> bool:
    """Whether ``kernel`` (a tle.jit kernel or its CPU emulation: its Python function is
    ``kernel.fn``) has an argument ``name``; True for a wrapper without ``fn`` (it passes the
    arguments on)."""
    import inspect

    fn = getattr(kernel, "fn", None)
    return fn is None or name in inspect.signature(fn).parameters


def empty_outputs(q: torch.Tensor, d_v: int = D_V):
    lead = tuple(q.shape[:-1])
    return (q.new_empty(lead + (d_v,), dtype=torch.bfloat16),
            q.new_empty(lead, dtype=torch.float32),
            q.new_empty(lead, dtype=torch.float32))


# ---------------------------------------------------------------------------------------------
# The custom op
# ---------------------------------------------------------------------------------------------

def _sparse_mla_prefill_impl(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor,
                          sm_scale: float, d_v: int, attn_sink: Optional[torch.Tensor],
                          topk_length: Optional[torch.Tensor],
                          impl: str) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """3-D layout only (the Python wrapper flattens batches). Returns (out, max_logits, lse)."""
    validate(q, kv, indices, sm_scale, d_v, attn_sink, topk_length, impl)
    out, max_logits, lse = empty_outputs(q, d_v)
    launch(impl, q, kv, indices, sm_scale, out, max_logits, lse, attn_sink, topk_length)
    return out, max_logits, lse


def _sparse_mla_prefill_fake(q, kv, indices, sm_scale, d_v, attn_sink, topk_length, impl):
    return empty_outputs(q, d_v)


def _register():
    # The package is importable as ``tle_kernels`` (installed) and as ``kernels`` (repository on the
    # path); whichever module registers first owns the op, the other reuses it.
    try:
        return getattr(torch.ops.tle_kernels, "sparse_mla_prefill")
    except (AttributeError, RuntimeError):
        pass
    op = torch.library.custom_op("tle_kernels::sparse_mla_prefill", mutates_args=())(
        _sparse_mla_prefill_impl)
    op.register_fake(_sparse_mla_prefill_fake)
    return op


sparse_mla_prefill_op = _register()


def sparse_mla_prefill(q: torch.Tensor, kv: torch.Tensor, indices: torch.Tensor, sm_scale: float,
                       d_v: int = D_V, attn_sink: Optional[torch.Tensor] = None,
                       topk_length: Optional[torch.Tensor] = None,
                       impl: str = "auto") -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """SparseMLA prefill (FlashMLA ``flash_mla_sparse_fwd`` semantics): each query token attends
    to the ``topk`` kv rows its indices name.

    Args:
        q: [s_q, h_q, d_qk] bf16, or batched [B, SQ, H, d_qk]; d_qk is 576 (512 + a 64-dim RoPE
            tail) or 512; any h_q >= 1.
        kv: [s_kv, 1, d_qk] bf16 (batched: [B, SKV, 1, d_qk]); one latent head, its first 512
            dims are V.
        indices: [s_q, 1, topk] int32 (batched: [B, SQ, 1, topk], positions within the batch's
            own kv); an index < 0 or >= s_kv is skipped.
        sm_scale: the softmax scale, a positive Python float (usually d_qk ** -0.5).
        d_v: 512, the only V width.
        attn_sink: optional [h_q] fp32, one sink logit per head.
        topk_length: optional [s_q] int32 (batched: [B, SQ]): row t uses its first
            clamp(topk_length[t], 0, topk) slots.
        impl: "auto" (default), "naive", "pipe", "seesaw" or "narrow" (tle_kernels.api module
            docstring: which takes what).

    Returns:
        (out, max_logits, lse): out [.., h_q, 512] bf16; max_logits and lse [.., h_q] fp32 in
        natural-log units (a row that sees nothing: out 0, max_logits -inf, lse +inf; exact
        rules in tle_kernels/reference.py).

    Raises:
        TypeError / ValueError naming the argument, before any launch: every rule is checked on
        CPU or meta tensors too; the tensors must then be on one CUDA device.
    """
    info = validate(q, kv, indices, sm_scale, d_v, attn_sink, topk_length, impl)
    sm_scale = float(sm_scale)
    if not info["batched"]:
        return torch.ops.tle_kernels.sparse_mla_prefill(q, kv, indices, sm_scale, d_v, attn_sink,
                                                        topk_length, impl)
    B, s_q, h_q, d_qk, s_kv, topk = (info[k] for k in ("B", "s_q", "h_q", "d_qk", "s_kv", "topk"))
    # Flatten the batches into one token axis: kv rows of batch b start at b * SKV. An invalid
    # index stays invalid (-1) instead of landing in another batch's rows.
    qf = q.reshape(B * s_q, h_q, d_qk)
    kvf = kv.reshape(B * s_kv, 1, d_qk)
    offs = (torch.arange(B, device=indices.device, dtype=torch.int32) * s_kv).view(B, 1, 1, 1)
    valid = (indices >= 0) & (indices < s_kv)
    idxf = torch.where(valid, indices + offs, torch.full_like(indices, -1)).reshape(B * s_q, 1, topk)
    tlf = None if topk_length is None else topk_length.reshape(B * s_q)
    out, max_logits, lse = torch.ops.tle_kernels.sparse_mla_prefill(qf, kvf, idxf, sm_scale, d_v,
                                                                    attn_sink, tlf, impl)
    return (out.view(B, s_q, h_q, d_v), max_logits.view(B, s_q, h_q), lse.view(B, s_q, h_q))
