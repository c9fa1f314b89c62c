"""Launching the TLE MLA decode kernels (mla_decode_pipe.py, mla_decode_seesaw.py) on given
tensors: the shape rules, the row-alignment check, the argument lists and the launches.

The pipe decode: one program per (request, kv head, row block, split), ``decode_call`` /
``launch_decode`` (its launcher module mla_decode_pipe_launch.py names the pair of functions
:func:`launcher` makes, which tle_kernels/decode_api.py looks up). The seesaw decode walks a
schedule (mla_decode_parts.py): ``scheduled_call`` / ``launch_scheduled``, P = :func:`parts_for`
programs per (kv head, row block), balanced over the batch's K-tile pairs or walking runs of
whole requests (:func:`use_balance`; the run length :func:`run_length`), with the scheduled
combine after a balanced launch.

The seesaw kernel has two producers, chosen by its ``TMA`` constexpr: cp.async row gathers, or
TMA boxes from two host tensor descriptors over k_cache (:func:`k_descriptors`). A launch uses TMA
wherever the descriptors can be made (:func:`tma_unavailable_reason`), unless the keyword or the
environment variable ``TLE_DECODE_TMA`` (``0`` / ``1``) says otherwise; the keyword wins over the
variable, so a benchmark can run both producers side by side.

The ``*_call`` functions return ``(grid, args, constexprs)``; the launches run
``kernel[grid](*args, **constexprs)``, and the CPU emulation tests launch the emulated kernel with
exactly the same tuple. Nothing here synchronises with the GPU, so a decode step captures in a
CUDA graph.
"""

from __future__ import annotations

import importlib
import os
from typing import Callable, Optional

import torch

from .api import rows_aligned

BLOCK_H = 64   # query rows per program (the kernels' BLOCK_H)
D_QK = 576     # q / k_cache row: 512 main dims (also V) + 64 RoPE dims
D_V = 512
PAGE = 64      # tokens per k_cache block: one K tile of the kernels
SCHED_CHUNK = 128  # requests per prefix-sum chunk of the scheduled kernels (mla_decode_parts.py)
D_HALF = 256   # width of a TMA box of the main dims (half of them)
D_TAIL = 64    # width of the RoPE tail's TMA box

# Kernels with a TMA producer: a ``TMA`` constexpr (0: cp.async, 1: TMA; an integer, so the
# compiler reads the kernel specialised to it) and the descriptor arguments k_desc, tail_desc
# after k_ptr.
TMA_KERNELS = ("seesaw", "pipe")
TMA_ENV = "TLE_DECODE_TMA"


def unsupported_reason(kernel: str, s_q: int, h_q: int, h_kv: int) -> Optional[str]:
    """Why the decode kernel ``kernel`` cannot run a call with these head counts, or None when it
    can. Any row count s_q * h_q / h_kv works (a partial block of 64 rows is masked)."""
    if s_q < 1:
        return f"{kernel} needs s_q >= 1 (got s_q={s_q})"
    if h_kv < 1 or h_q < 1:
        return f"{kernel} needs h_q >= 1 and h_kv >= 1 (got h_q={h_q}, h_kv={h_kv})"
    if h_q % h_kv != 0:
        return f"{kernel} needs h_q to be a multiple of h_kv (got h_q={h_q}, h_kv={h_kv})"
    return None


def row_blocks(s_q: int, h_q: int, h_kv: int) -> int:
    """Blocks of BLOCK_H rows of one kv head's s_q * (h_q / h_kv) query rows."""
    return -(-(s_q * (h_q // h_kv)) // BLOCK_H)


def decode_grid(b: int, s_q: int, h_q: int, h_kv: int, n_split: int) -> tuple:
    """The launch grid: axis 0 (request, kv head, block of 64 query rows), row block fastest;
    axis 1 the split."""
    return (b * h_kv * row_blocks(s_q, h_q, h_kv), n_split)


def check_row_alignment(kernel: str, **tensors: torch.Tensor) -> None:
    """The kernels copy q and k_cache rows with 16-byte cp.async: each row must start on a
    16-byte boundary and be contiguous."""
    for name, x in tensors.items():
        if x.stride(-1) != 1:
            raise ValueError(f"{name}: the last dim must be contiguous (stride {x.stride(-1)})")
        if not rows_aligned(x):
            raise ValueError(f"{name}: the {kernel} decode kernel needs 16-byte aligned rows "
                             f"(data_ptr {x.data_ptr()}, strides {tuple(x.stride())})")


def tma_layout_unavailable_reason(k_cache: torch.Tensor) -> Optional[str]:
    """The shape and stride part of :func:`tma_unavailable_reason` (no data pointer read, so
    validation can ask it while torch.compile traces): a tensor descriptor needs every dim
    non-empty (Triton's TensorDescriptor asserts it), the last dim contiguous and every other
    stride a multiple of 16 bytes, those of dims of one entry too (unlike the row alignment of
    the cp.async producer, data_pointers.strides_aligned, which skips them)."""
    if k_cache.numel() == 0:
        return f"k_cache is empty (shape {tuple(k_cache.shape)})"
    if k_cache.stride(-1) != 1:
        return "k_cache's last dim is not contiguous"
    if any((s * k_cache.element_size()) % 16 != 0 for s in k_cache.stride()[:-1]):
        return (f"k_cache's strides are not multiples of 16 bytes (strides "
                f"{tuple(k_cache.stride())})")
    return None


def tma_unavailable_reason(k_cache: torch.Tensor) -> Optional[str]:
    """None when k_cache's pages can be copied with TMA boxes (a tensor descriptor needs
    :func:`tma_layout_unavailable_reason`'s shape and strides, a 16-byte aligned base, and
    Triton's host TensorDescriptor), else why not."""
    why = tma_layout_unavailable_reason(k_cache)
    if why is not None:
        return why
    if k_cache.data_ptr() % 16 != 0:
        return (f"k_cache is not 16-byte aligned (data_ptr {k_cache.data_ptr()}, strides "
                f"{tuple(k_cache.stride())})")
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: F401
    except ImportError:  # pragma: no cover
        return "triton.tools.tensor_descriptor is not available"
    return None


def env_switch(name: str) -> Optional[bool]:
    """The environment variable ``name`` as a switch: unset or empty None, "0" False, "1" True;
    anything else a ValueError naming it."""
    env = os.environ.get(name, "")
    if env not in ("", "0", "1"):
        raise ValueError(f"{name} must be 0 or 1 (got {env!r})")
    return None if env == "" else env == "1"


def use_tma(kernel: str, k_cache: torch.Tensor, tma: Optional[bool] = None) -> bool:
    """Whether a launch of ``kernel`` copies K pages with TMA: ``tma`` if given (True refused,
    naming why, when the descriptors cannot be made), else ``TLE_DECODE_TMA`` if set (0 or 1),
    else whenever k_cache allows the descriptors (the TMA producer measured faster than the
    cp.async one on the H200, docs/decode.md). A kernel without a TMA producer: False (True
    refused)."""
    if kernel not in TMA_KERNELS:
        if tma:
            raise ValueError(f"the {kernel} decode kernel has no TMA producer")
        return False
    if tma is None:
        tma = env_switch(TMA_ENV)
    why = tma_unavailable_reason(k_cache)
    if tma is None:
        return why is None
    if tma and why is not None:
        raise ValueError(f"the {kernel} decode kernel cannot copy K pages with TMA: {why}")
    return bool(tma)


def k_descriptors(k_cache: torch.Tensor) -> tuple:
    """The two host tensor descriptors of the TMA producer over k_cache [num_blocks, 64, h_kv,
    576]: box [1, 64, 1, 256] (a 256-wide half of a page's main dims, kv head g) and box
    [1, 64, 1, 64] (the RoPE tail). Coordinates [page, token, head, column]."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    shape, strides = list(k_cache.shape), list(k_cache.stride())
    return (TensorDescriptor(k_cache, shape, strides, [1, PAGE, 1, D_HALF]),
            TensorDescriptor(k_cache, shape, strides, [1, PAGE, 1, D_TAIL]))


QTMA_ENV = "TLE_DECODE_QTMA"
# Kernels whose producer can copy Q with TMA boxes (a ``QTMA`` constexpr, 0 / 1) and how many
# descriptors over q they take after k_cache's: [64, 256] boxes of the main dims, and for the
# pipe decode, whose q slot holds the RoPE tail too, [64, 64] boxes of it.
Q_TMA_KERNELS = {"seesaw": 1, "pipe": 2}
# Whether a launch that leaves the choice open copies Q with TMA: the seesaw's was measured
# faster and runs the GPU suite so (docs/BENCHMARKS.md, "Levers measured"); the pipe decode's
# measured no faster than its gather, so it is taken when asked for (q_tma=True,
# TLE_DECODE_QTMA=1).
Q_TMA_BY_DEFAULT = {"seesaw": True, "pipe": False}


def q_tma_reason(q: torch.Tensor, h_kv: int) -> Optional[str]:
    """None when a decode kernel can copy a row block's Q with TMA boxes of q viewed as rows
    [b * s_q * h_q, 576] (:func:`q_args`), else why not: a block's rows (query j,
    head) of one kv head are consecutive there only with h_kv == 1 or s_q == 1, and the view
    needs q's first three dims to flatten into one with a 16-byte row stride, the last dim
    contiguous and a 16-byte aligned base. Shapes and strides only, then the data pointer."""
    b, s_q, h_q, _ = q.shape
    if h_kv != 1 and s_q != 1:
        return f"a row block's q rows are not consecutive (h_kv={h_kv}, s_q={s_q})"
    if q.numel() == 0:
        return "q is empty"
    if q.stride(3) != 1:
        return "q's last dim is not contiguous"
    strides = tuple(q.stride())
    if (s_q > 1 and q.stride(1) != h_q * q.stride(2)) or \
            (b > 1 and q.stride(0) != s_q * h_q * q.stride(2)):
        return f"q's (batch, query, head) dims do not flatten into rows (strides {strides})"
    if (q.stride(2) * q.element_size()) % 16 != 0 or q.data_ptr() % 16 != 0:
        return f"q's rows are not 16-byte aligned (data_ptr {q.data_ptr()}, strides {strides})"
    return None


def use_q_tma(q: torch.Tensor, h_kv: int, q_tma: Optional[bool] = None,
              by_default: bool = True, env: str = QTMA_ENV) -> bool:
    """Whether a decode kernel's producer copies Q with TMA boxes (:func:`q_tma_reason`): ``q_tma``
    if given (True refused, naming why, when it cannot), else the switch ``env`` (0 / 1; the
    dense kernels' ``TLE_DECODE_QTMA``) if set, else whenever it can where ``by_default``
    (Q_TMA_BY_DEFAULT)."""
    if q_tma is None:
        q_tma = env_switch(env)
    why = q_tma_reason(q, h_kv)
    if q_tma is None:
        return by_default and why is None
    if q_tma and why is not None:
        raise ValueError(f"the decode kernel cannot copy Q with TMA: {why}")
    return bool(q_tma)


def q_args(kernel: str, q: torch.Tensor, h_kv: int, q_tma: bool) -> tuple:
    """The kernel's Q descriptor arguments (none for a kernel without a Q copy by TMA): the host
    tensor descriptors over q viewed as rows [b * s_q * h_q, 576] (row stride q.stride(2);
    coordinates [row, column]) with boxes [64, 256] and, for the pipe decode, [64, 64]; q in
    their places when ``q_tma`` is off (unused). ``q_tma`` where :func:`q_tma_reason` refuses
    the rows: ValueError naming why."""
    n = Q_TMA_KERNELS.get(kernel, 0)
    if not q_tma:
        return (q,) * n
    why = q_tma_reason(q, h_kv)
    if why is not None:
        raise ValueError(f"{kernel}: cannot copy Q with TMA: {why}")
    return q_row_descriptors(q, n)


def q_row_descriptors(q: torch.Tensor, n: int) -> tuple:
    """Host tensor descriptors over q [b, s_q, h_q, 576] viewed as rows [b * s_q * h_q, 576] (row
    stride q.stride(2); coordinates [row, column]): boxes [64, 256] and, with ``n`` 2, [64, 64]
    (the RoPE tail). The rows as :func:`q_tma_reason` allows them (unchecked here)."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    b, s_q, h_q, d = q.shape
    boxes = ([BLOCK_H, D_HALF], [BLOCK_H, D_TAIL])[:n]
    return tuple(TensorDescriptor(q, [b * s_q * h_q, d], [q.stride(2), 1], box) for box in boxes)


def check_shapes(kernel: str, q, k_cache) -> None:
    """The head counts ``kernel`` runs (:func:`unsupported_reason`), rows of 576 and pages of 64
    tokens; ValueError naming what is wrong."""
    _, s_q, h_q, d = q.shape
    _, page, h_kv, d_k = k_cache.shape
    why = unsupported_reason(kernel, s_q, h_q, h_kv)
    if why is not None:
        raise ValueError(why)
    if d != D_QK or d_k != D_QK or page != PAGE:
        raise ValueError(f"{kernel} needs q and k_cache rows of {D_QK} and pages of {PAGE} tokens "
                         f"(got q {tuple(q.shape)}, k_cache {tuple(k_cache.shape)})")


def k_cache_args(kernel: str, k_cache, tma: bool) -> tuple:
    """The kernel's K-cache arguments: k_cache, then for a kernel with a TMA producer its two
    descriptors (:func:`k_descriptors`) or, for the cp.async producer, k_cache in their places
    (unused)."""
    if kernel in TMA_KERNELS:
        return (k_cache, *(k_descriptors(k_cache) if tma else (k_cache, k_cache)))
    if tma:
        raise ValueError(f"the {kernel} decode kernel has no TMA producer")
    return (k_cache,)


def decode_call(kernel: str, q, k_cache, block_table, cache_seqlens, sm_scale: float,
                causal: bool, n_split: int, out, lse, o_part=None, lse_part=None,
                tma: bool = False, q_tma: bool = False):
    """``(grid, args, constexprs)`` of a launch of the decode kernel ``kernel`` (None when there
    is nothing to run: b == 0), after checking shapes. ``q_tma``: its Q rows copied with TMA
    boxes (:func:`q_args`).

    ``n_split == 1``: the kernel writes out [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32.
    ``n_split > 1``: it writes o_part [b, n_split, s_q, h_q, 512] fp32 and lse_part
    [b, n_split, s_q, h_q] fp32 instead (out and lse are the combine's to write).
    ``tma``: the seesaw's TMA producer (descriptors from :func:`k_descriptors`); the cp.async
    producer gets k_cache in the descriptors' places (unused)."""
    b, s_q, h_q, _ = q.shape
    h_kv = k_cache.shape[2]
    check_shapes(kernel, q, k_cache)
    if n_split < 1:
        raise ValueError(f"n_split must be >= 1 (got {n_split})")
    if n_split == 1:
        o, l = out, lse
        # lse is [b, h_q, s_q]: its strides go in as (batch, split, query, head)
        o_strides = (o.stride(0), 0, o.stride(1), o.stride(2))
        l_strides = (l.stride(0), 0, l.stride(2), l.stride(1))
    else:
        if o_part is None or lse_part is None:
            raise ValueError("n_split > 1 needs o_part and lse_part")
        if tuple(o_part.shape) != (b, n_split, s_q, h_q, D_V) or o_part.dtype != torch.float32:
            raise ValueError(f"o_part must be fp32 {(b, n_split, s_q, h_q, D_V)} "
                             f"(got {o_part.dtype} {tuple(o_part.shape)})")
        if tuple(lse_part.shape) != (b, n_split, s_q, h_q) or lse_part.dtype != torch.float32:
            raise ValueError(f"lse_part must be fp32 {(b, n_split, s_q, h_q)} "
                             f"(got {lse_part.dtype} {tuple(lse_part.shape)})")
        o, l = o_part, lse_part
        o_strides = (o.stride(0), o.stride(1), o.stride(2), o.stride(3))
        l_strides = (l.stride(0), l.stride(1), l.stride(2), l.stride(3))
    if o.stride(-1) != 1:
        raise ValueError("the output's last dim must be contiguous")
    if b == 0:
        return None
    k_args = k_cache_args(kernel, k_cache, tma)
    q_tma = bool(q_tma) and kernel in Q_TMA_KERNELS
    args = (q, *k_args, *q_args(kernel, q, h_kv, q_tma), block_table, cache_seqlens, o, l,
            q.stride(0), q.stride(1), q.stride(2),
            k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), block_table.stride(0),
            *o_strides, *l_strides,
            s_q, h_kv, h_q // h_kv, float(sm_scale))
    # causal only masks anything with more than one query
    constexprs = dict(BLOCK_H=BLOCK_H, CAUSAL=bool(causal) and s_q > 1, SPLIT=n_split > 1)
    if kernel in TMA_KERNELS:
        constexprs["TMA"] = int(bool(tma))
    if kernel in Q_TMA_KERNELS:
        constexprs["QTMA"] = int(q_tma)
    return decode_grid(b, s_q, h_q, h_kv, n_split), args, constexprs


# Kernels that walk the balanced schedule of mla_decode_parts.py (grid (h_kv * row blocks, P),
# partial slots [b + P]) rather than one program per (request, split).
SCHEDULED_KERNELS = ("seesaw",)
BALANCE_ENV = "TLE_DECODE_BALANCE"


def parts_for(b: int, s_q: int, h_q: int, h_kv: int, sms: int) -> int:
    """P, the programs per (kv head, row block) of a balanced launch: as many as fill the SMs
    once (at least 1; a program holds a whole SM's shared memory)."""
    items = h_kv * row_blocks(s_q, h_q, h_kv)
    return max(1, sms // items)


# A balanced launch ran at 0.93-0.97x one program per request on batches that fill whole waves
# (H200: its partials and combine cost more than the last wave's idle SMs), so it is chosen only
# where one program per request would leave more than this share of the SMs' time idle.
PER_REQUEST_MIN_OCCUPANCY = 0.9


def use_balance(balance: Optional[bool] = None, requests: int = 0, parts: int = 1) -> bool:
    """Whether a scheduled launch balances the batch's pairs over ``parts`` programs per (kv
    head, row block) (True) or runs one program per request (False): ``balance`` if given, else
    ``TLE_DECODE_BALANCE`` (0 / 1) if set, else balanced when one program per request would keep
    the SMs busy less than PER_REQUEST_MIN_OCCUPANCY of the time: ``requests`` programs in waves
    of ``parts`` fill requests / (parts * ceil(requests / parts)) of them (128 requests on 132
    SMs: 0.97, one program each; 7 requests: balanced; 140 requests on 132: two waves, 0.53,
    balanced)."""
    if balance is None:
        balance = env_switch(BALANCE_ENV)
    if balance is not None:
        return bool(balance)
    return per_request_leaves_sms_idle(requests, parts)


RUN_ENV = "TLE_DECODE_RUN"


def run_length(requests: int, parts: int, run: Optional[int] = None) -> int:
    """The requests each program walks in an unbalanced launch (mla_decode_parts.py, RUN): ``run``
    if given, else ``TLE_DECODE_RUN`` if set (a positive integer), else 1, one program per
    request. A run of R whole requests per program, ceil(requests / R) programs, keeps the waves
    of one program per request when R = ceil(requests / parts), and lets each program stage a
    request's Q and first pair while it finishes the one before."""
    if run is None:
        env = os.environ.get(RUN_ENV, "")
        if env == "":
            return 1
        if not env.isdigit() or int(env) < 1:
            raise ValueError(f"{RUN_ENV} must be a positive integer (got {env!r})")
        run = int(env)
    if run < 1:
        raise ValueError(f"run must be >= 1 (got {run})")
    return max(1, min(run, requests))


def per_request_leaves_sms_idle(requests: int, parts: int) -> bool:
    """Whether one program per request, in waves of ``parts``, keeps the SMs busy less than
    PER_REQUEST_MIN_OCCUPANCY of the time (requests / (parts * ceil(requests / parts)))."""
    if requests <= 0:
        return False
    waves = -(-requests // parts)
    return requests / (parts * waves) < PER_REQUEST_MIN_OCCUPANCY


def scheduled_call(kernel: str, q, k_cache, block_table, cache_seqlens, sm_scale: float,
                   causal: bool, out, lse, parts: int, o_part=None, lse_part=None,
                   tma: bool = False, balance: bool = True, run: int = 1, q_tma: bool = False):
    """``(grid, args, constexprs)`` of a launch of the scheduled decode kernel ``kernel`` (None
    when b == 0), after checking shapes. ``q_tma``: one program per request copies its Q rows
    with TMA boxes (:func:`q_args`; only without a walk, balance False and run 1: the walk
    stages Q under a run-time `if`, which an expect-tx commit cannot follow); otherwise q stands
    in the descriptor's place (unused). ``balance``: P = ``parts`` programs per (kv head, row
    block) walk equal shares of the batch's K-tile pairs; requests wholly inside one program are
    written to out / lse, the others' segments to o_part [b + P, s_q, h_q, 512] and lse_part
    [b + P, s_q, h_q] (fp32) for mla_decode_combine_scheduled. Not ``balance``: each program
    walks ``run`` whole requests (P = ceil(b / run); run = 1: one program per request),
    everything written to out / lse, no partials."""
    b, s_q, h_q, _ = q.shape
    h_kv = k_cache.shape[2]
    check_shapes(kernel, q, k_cache)
    # the kernel derives the outputs' strides from s_q and h_q (fewer registers per consumer)
    for name, x in (("out", out), ("lse", lse)):
        if not x.is_contiguous():
            raise ValueError(f"{kernel}: {name} must be contiguous")
    if balance:
        if parts < 1:
            raise ValueError(f"parts must be >= 1 (got {parts})")
        want = (b + parts, s_q, h_q, D_V)
        if o_part is None or lse_part is None:
            raise ValueError("a balanced launch needs o_part and lse_part")
        if (tuple(o_part.shape) != want or o_part.dtype != torch.float32
                or not o_part.is_contiguous()):
            raise ValueError(f"o_part must be contiguous fp32 {want} (got {o_part.dtype} "
                             f"{tuple(o_part.shape)})")
        if (tuple(lse_part.shape) != want[:3] or lse_part.dtype != torch.float32
                or not lse_part.is_contiguous()):
            raise ValueError(f"lse_part must be contiguous fp32 {want[:3]} (got "
                             f"{lse_part.dtype} {tuple(lse_part.shape)})")
        op, lp = o_part, lse_part
    else:
        if run < 1:
            raise ValueError(f"run must be >= 1 (got {run})")
        parts = -(-b // run)
        op, lp = lse, lse  # never written: every request is whole in its program
    if b == 0:
        return None
    k_args = k_cache_args(kernel, k_cache, tma)
    q_tma = bool(q_tma) and not balance and run == 1
    args = (q, *k_args, *q_args(kernel, q, h_kv, q_tma), block_table, cache_seqlens, out, lse,
            op, lp,
            q.stride(0), q.stride(1), q.stride(2),
            k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), block_table.stride(0),
            b, -(-b // SCHED_CHUNK), s_q, h_kv, h_q // h_kv, float(sm_scale))
    # BALANCE an integer (0 / 1), as RUN: the kernel's partitions branch on BALANCE + RUN - 1
    # (walk or one whole request), which a reading binds only where both are integers
    constexprs = dict(BLOCK_H=BLOCK_H, CAUSAL=bool(causal) and s_q > 1,
                      BALANCE=int(bool(balance)), RUN=1 if balance else int(run), QTMA=int(q_tma))
    if kernel in TMA_KERNELS:
        constexprs["TMA"] = int(bool(tma))
    return (h_kv * row_blocks(s_q, h_q, h_kv), parts), args, constexprs


def launch_scheduled(kernel: str, q, k_cache, block_table, cache_seqlens, sm_scale: float,
                     causal: bool, out, lse, parts: int, tma: Optional[bool] = None,
                     balance: Optional[bool] = None, run: Optional[int] = None,
                     q_tma: Optional[bool] = None) -> None:
    """One decode step of the scheduled kernel ``kernel`` into out / lse: the kernel, and with
    balance the scheduled combine of the split requests (partials in fresh buffers, so a CUDA
    graph captures both launches); without, runs of :func:`run_length` whole requests.
    ``q_tma``: :func:`use_q_tma` (one program per request only)."""
    check_row_alignment(kernel, q=q, k_cache=k_cache)
    b, s_q, h_q, _ = q.shape
    balance = use_balance(balance, b, parts)
    o_part = lse_part = None
    if balance:
        o_part = q.new_empty((b + parts, s_q, h_q, D_V), dtype=torch.float32)
        lse_part = q.new_empty((b + parts, s_q, h_q), dtype=torch.float32)
    call = scheduled_call(kernel, q, k_cache, block_table, cache_seqlens, sm_scale, causal, out,
                          lse, parts, o_part, lse_part, use_tma(kernel, k_cache, tma), balance,
                          1 if balance else run_length(b, parts, run),
                          use_q_tma(q, k_cache.shape[2], q_tma, Q_TMA_BY_DEFAULT[kernel]))
    if call is None:
        return
    grid, args, constexprs = call
    jit_kernel(kernel)[grid](*args, **constexprs)
    if balance:
        from .mla_decode_combine import mla_decode_combine_scheduled

        mla_decode_combine_scheduled(o_part, lse_part, out, lse, cache_seqlens, parts)


def jit_kernel(kernel: str):
    """The tle.jit kernel ``mla_decode_<kernel>`` of tle_kernels/mla_decode_<kernel>.py,
    imported at its first launch (a launcher module imports without the compiler's frontend)."""
    name = f"mla_decode_{kernel}"
    return getattr(importlib.import_module(f".{name}", __package__), name)


def launch_decode(kernel: str, q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor,
                  cache_seqlens: torch.Tensor, sm_scale: float, causal: bool, n_split: int,
                  out: torch.Tensor, lse: torch.Tensor, o_part: Optional[torch.Tensor] = None,
                  lse_part: Optional[torch.Tensor] = None, tma: Optional[bool] = None,
                  q_tma: Optional[bool] = None) -> None:
    """One decode step of the TLE decode kernel ``kernel`` on validated inputs.

    q [b, s_q, h_q, 576] bf16; k_cache [num_blocks, 64, h_kv, 576] bf16 (V = its first 512 dims);
    block_table [b, max_blocks] int32; cache_seqlens [b] int32. ``n_split == 1``: writes out
    [b, s_q, h_q, 512] bf16 and lse [b, h_q, s_q] fp32 (natural log; a row without a token: out 0,
    lse +inf). ``n_split > 1``: writes o_part [b, n_split, s_q, h_q, 512] fp32 and lse_part
    [b, n_split, s_q, h_q] fp32 (a split without a token for a row: 0 and -inf) and leaves out and
    lse alone, for tle_kernels/mla_decode_combine.py to merge (so the split kernel and the combine
    can be launched, captured and timed separately); split s of request b covers positions
    [s * chunk, min(seqlen, (s + 1) * chunk)), chunk = ceil(ceil(seqlen / n_split) / 64) * 64.
    ``tma``: the K producer (:func:`use_tma`; None: TMA when possible); ``q_tma``: the Q copy
    by TMA boxes (:func:`use_q_tma`; None: as Q_TMA_BY_DEFAULT says)."""
    check_row_alignment(kernel, q=q, k_cache=k_cache)
    call = decode_call(kernel, q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split,
                       out, lse, o_part, lse_part, use_tma(kernel, k_cache, tma),
                       kernel in Q_TMA_KERNELS and use_q_tma(q, k_cache.shape[2], q_tma,
                                                             Q_TMA_BY_DEFAULT[kernel]))
    if call is not None:
        grid, args, constexprs = call
        jit_kernel(kernel)[grid](*args, **constexprs)


def launcher(kernel: str) -> tuple[Callable[..., None], Callable[[int, int, int], Optional[str]]]:
    """``(launch, unsupported)`` of the TLE decode kernel ``kernel``: ``launch(q, k_cache,
    block_table, cache_seqlens, sm_scale, causal, n_split, out, lse, o_part=None, lse_part=None,
    tma=None)`` is :func:`launch_decode` for it, ``unsupported(s_q, h_q, h_kv)`` is
    :func:`unsupported_reason` for it (None, or why it cannot run a call with these head
    counts)."""

    def launch(q: torch.Tensor, k_cache: torch.Tensor, block_table: torch.Tensor,
               cache_seqlens: torch.Tensor, sm_scale: float, causal: bool, n_split: int,
               out: torch.Tensor, lse: torch.Tensor, o_part: Optional[torch.Tensor] = None,
               lse_part: Optional[torch.Tensor] = None, tma: Optional[bool] = None,
               q_tma: Optional[bool] = None) -> None:
        launch_decode(kernel, q, k_cache, block_table, cache_seqlens, sm_scale, causal, n_split,
                      out, lse, o_part, lse_part, tma, q_tma)

    def unsupported(s_q: int, h_q: int, h_kv: int) -> Optional[str]:
        return unsupported_reason(kernel, s_q, h_q, h_kv)

    launch.__name__ = launch.__qualname__ = f"launch_decode_{kernel}"
    launch.__doc__ = f"One decode step of the {kernel} decode kernel: see launch_decode."
    unsupported.__name__ = unsupported.__qualname__ = f"{kernel}_unsupported_reason"
    unsupported.__doc__ = (f"Why the {kernel} decode kernel cannot run a call with these head "
                           f"counts, or None: see unsupported_reason.")
    return launch, unsupported
