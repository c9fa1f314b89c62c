"""``tle.gpu``: shared-memory buffers and the warp-specialization entry point.

At Python runtime only :func:`alloc` does something (it describes a buffer and checks it);
:func:`local_ptr`, :func:`tma_load` and :func:`warp_specialize` are markers that tle_compiler reads from the kernel's
source, and calling them outside a compiled kernel raises a :class:`TleError` saying so.

The rules for ``alloc`` and ``warp_specialize`` live here (:func:`validate_alloc`,
:func:`validate_warp_specialize`) and are shared with the frontend, which calls them with the
literal values it reads from the kernel's AST.
"""

from __future__ import annotations

import sys
from dataclasses import field
from typing import Mapping, Optional, Sequence, Union

from ..diagnostics import TleError
from ..ir.nodes import Loc
from ..ir.record import record

#: The CTA's shared memory: the only scope of buffers (and pipe fields) in this version.
smem = "smem"
SCOPES = (smem,)

#: Triton's canonical dtype names (``str(tl.bfloat16) == "bf16"``) and the ``tl.<attr>`` aliases.
_DTYPE_ALIASES = {
    "bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "float64": "fp64",
    "float8e4b15": "fp8e4b15", "float8e4b8": "fp8e4b8", "float8e4nv": "fp8e4nv",
    "float8e5": "fp8e5", "float8e5b16": "fp8e5b16",
}
DTYPES = frozenset(
    ["int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
     "fp8e4b15", "fp8e4b8", "fp8e4nv", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"])

#: PTX ``setmaxnreg``: the per-thread register count is in [24, 256] and a multiple of 8.
MIN_REGS, MAX_REGS, REGS_MULTIPLE = 24, 256, 8


class Unevaluated:
    """A value the frontend could not read as a literal (its source text), for error messages."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def describe(value: object) -> str:
    """How a value is shown in an error message."""
    if isinstance(value, Unevaluated):
        return f"`{value.text}`"
    if isinstance(value, SharedBuffer):
        return repr(value)
    if isinstance(value, (int, str, tuple, list, bool, type(None))):
        return repr(value)
    return f"a {type(value).__name__}"


def caller_loc(depth: int = 1) -> Loc:
    """The source location of the caller ``depth`` frames above the function calling this."""
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:  # pragma: no cover - not that deep
        return Loc(None, 0)
    return Loc(frame.f_code.co_filename, frame.f_lineno)


def normalize_dtype(dtype: object) -> Optional[str]:
    """Triton's name of a dtype given as a triton dtype (``tl.bfloat16``) or a string
    (``"bf16"``, ``"bfloat16"``); None when it is not one."""
    if isinstance(dtype, str):
        name = dtype
    elif type(dtype).__name__ == "dtype" and isinstance(getattr(dtype, "name", None), str):
        name = dtype.name  # triton.language.dtype (also Gluon's, the same class)
    else:
        return None
    name = _DTYPE_ALIASES.get(name, name)
    return name if name in DTYPES else None


@record
class SharedBuffer:
    """A shared-memory buffer ``shape`` x ``dtype``. In kernels read by the frontend, shape entries
    that are not compile-time integers stay as their source text (a name, usually).

    ``index(s)`` is the per-stage view of a pipe field: the buffer without its leading dimension.
    """

    shape: tuple[Union[int, str], ...]
    dtype: str
    scope: str = smem
    stage: Optional[int] = field(default=None, compare=False)

    def index(self, stage: int) -> "SharedBuffer":
        return SharedBuffer(self.shape[1:], self.dtype, self.scope, stage)

    def __repr__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        at = f" stage {self.stage}" if self.stage is not None else ""
        return f"alloc([{dims}], {self.dtype}, scope={self.scope}){at}"


def validate_alloc(shape: object, dtype: object, scope: object, loc: Loc,
                   symbolic_ok: bool = False) -> SharedBuffer:
    """The rules of ``tle.gpu.alloc``; returns the buffer. ``symbolic_ok`` lets shape entries be
    names (the frontend passes unresolved names as strings)."""
    if not isinstance(shape, (list, tuple)) or not shape:
        raise TleError(f"tle.gpu.alloc: shape must be a non-empty list of dimensions, got "
                       f"{describe(shape)}", loc, check="bad-alloc")
    dims: list[Union[int, str]] = []
    for d in shape:
        if isinstance(d, int) and not isinstance(d, bool):
            if d < 1:
                raise TleError(f"tle.gpu.alloc: dimension {d} of shape {list(shape)} must be >= 1",
                               loc, check="bad-alloc")
            dims.append(d)
        elif symbolic_ok and isinstance(d, str):
            dims.append(d)
        else:
            raise TleError(f"tle.gpu.alloc: dimensions must be positive integers, got "
                           f"{describe(d)}", loc, check="bad-alloc")
    name = normalize_dtype(dtype)
    if name is None:
        raise TleError(f"tle.gpu.alloc: {describe(dtype)} is not a dtype (use a triton dtype such "
                       f"as tl.bfloat16, or its name)", loc, check="bad-alloc")
    if scope not in SCOPES:
        raise TleError(f"tle.gpu.alloc: scope must be tle.gpu.smem, got {describe(scope)}", loc,
                       check="bad-alloc")
    return SharedBuffer(tuple(dims), name, str(scope))


#: The default partition's warp count when ``@tle.jit`` gives no ``num_warps``.
DEFAULT_NUM_WARPS = 4


def check_num_warps(num_warps: object, loc: Loc) -> int:
    """``num_warps`` of ``@tle.jit``: the default partition's warp count, a power of two from 4
    (a tle kernel is warp-specialized, and Triton compiles a warp-specialized kernel only for
    whole warp groups in its default partition: "warp-specialized kernels requires num_warps to
    be a multiple of 4"). Checked here, with the other declarations, so that the decorator and
    the frontend (which reads ``@tle.jit(num_warps=...)`` from the source) give the same error."""
    if (not isinstance(num_warps, int) or isinstance(num_warps, bool) or num_warps < 4
            or num_warps & (num_warps - 1)):
        raise TleError(f"@tle.jit: num_warps must be a power of two >= 4 (the default partition "
                       f"of a warp-specialized kernel is whole warp groups), got "
                       f"{describe(num_warps)}", loc, check="bad-jit")
    return num_warps


def validate_warp_specialize(n_partitions: int, warps: object, regs: object, loc: Loc,
                             arg_locs: Optional[Mapping[str, Loc]] = None
                             ) -> tuple[tuple[int, ...], tuple[Optional[int], ...]]:
    """The rules of ``warp_specialize``: one warp count and one register budget per worker
    partition (every partition but the first, the default). ``regs`` may be None (no budget)."""
    arg_locs = arg_locs or {}
    workers = n_partitions - 1
    if n_partitions < 1:
        raise TleError("warp_specialize needs at least one (function, args) entry", loc,
                       check="bad-warp-specialize")
    wloc = arg_locs.get("warps", loc)
    if not isinstance(warps, (list, tuple)):
        raise TleError(f"warp_specialize: the worker warp counts must be a list of integer "
                       f"literals, got {describe(warps)}", wloc, check="bad-warp-specialize")
    if len(warps) != workers:
        raise TleError(f"warp_specialize: {len(warps)} warp counts for {workers} worker "
                       f"partition(s) (the first entry is the default partition, which runs on the "
                       f"kernel's num_warps)", wloc, check="bad-warp-specialize")
    for w in warps:
        if not isinstance(w, int) or isinstance(w, bool) or w < 1:
            raise TleError(f"warp_specialize: warp counts must be integer literals >= 1, got "
                           f"{describe(w)}", wloc, check="bad-warp-specialize")
    if regs is None:
        return tuple(warps), (None,) * workers
    rloc = arg_locs.get("regs", loc)
    if not isinstance(regs, (list, tuple)):
        raise TleError(f"warp_specialize: the worker register budgets must be a list of integer "
                       f"literals, got {describe(regs)}", rloc, check="bad-warp-specialize")
    if len(regs) != workers:
        raise TleError(f"warp_specialize: {len(regs)} register budgets for {workers} worker "
                       f"partition(s)", rloc, check="bad-warp-specialize")
    for r in regs:
        if not isinstance(r, int) or isinstance(r, bool):
            raise TleError(f"warp_specialize: register budgets must be integer literals, got "
                           f"{describe(r)}", rloc, check="bad-warp-specialize")
        if not (MIN_REGS <= r <= MAX_REGS) or r % REGS_MULTIPLE:
            raise TleError(f"warp_specialize: register budget {r} is not a multiple of "
                           f"{REGS_MULTIPLE} in [{MIN_REGS}, {MAX_REGS}] (setmaxnreg)", rloc,
                           check="bad-warp-specialize")
    return tuple(warps), tuple(regs)


def alloc(shape: Sequence[int], dtype: object, scope: str = smem) -> SharedBuffer:
    """A shared-memory buffer of ``shape`` x ``dtype`` (a triton dtype or its name)."""
    return validate_alloc(shape, dtype, scope, caller_loc())


def _only_in_kernel(what: str) -> TleError:
    return TleError(f"{what} is only meaningful inside a @tle.jit kernel compiled by tle_compiler "
                    f"(the compiler reads it from the kernel's source); it cannot run as plain "
                    f"Python", caller_loc(2), check="not-in-kernel")


def local_ptr(buf: SharedBuffer, indices: object = None) -> None:
    """A pointer tensor into a shared-memory buffer, for ``tl.load`` / ``tl.store`` (kernel only)."""
    raise _only_in_kernel("tle.gpu.local_ptr")


def scale_rows(x: object, factor: object) -> None:
    """``x * factor[:, None]`` for a 2-D ``x`` and one factor per row (kernel only). On a wgmma
    accumulator the lowering skips the multiplies of every warp whose factors are all exactly 1
    (lowering/lazy_scale.py): an online-softmax rescale that is free when the max did not move."""
    raise _only_in_kernel("tle.gpu.scale_rows")


def tma_load(dst: object, desc: object, offsets: object) -> None:
    """Copy the box of ``desc`` (a kernel argument that is a tensor descriptor) at ``offsets``
    (one integer per dimension) into ``dst``, a slot field of the writer (``slot.kv_l``), with
    the Tensor Memory Accelerator (kernel only). The box is the field's slot shape. The copy
    lands asynchronously: the commit of the slot's window arrives on its full barrier with the
    bytes of every TMA copy of the window as expect-tx, so a reader's ``wait`` passes only once
    they have landed (docs/semantics.md). The writer may not touch the field otherwise."""
    raise _only_in_kernel("tle.gpu.tma_load")


def prefetch_l2(ptr: object, nbytes: object, mask: object = None) -> None:
    """Ask the GPU to bring ``nbytes`` of global memory at each address of ``ptr`` into the L2
    cache, without waiting and without touching registers or shared memory (kernel only): a
    bulk L2 prefetch (``cp.async.bulk.prefetch.L2``) per element, skipped where ``mask`` is
    False. ``nbytes`` is a compile-time multiple of 16 and every address must be 16-byte
    aligned. It has no meaning for the pipe protocol; it only makes later loads of those bytes
    (TMA copies, cp.async gathers, register loads) find them in L2 rather than in memory, so a
    producer can start the memory latency of a tile it will load later."""
    raise _only_in_kernel("tle.gpu.prefetch_l2")


def launch_dependents() -> None:
    """Let the kernel launched after this one as its programmatic dependent start now (kernel
    body or a partition): ``griddepcontrol.launch_dependents``. A dependent launched with
    programmatic dependent launch (``launch_pdl=True``) is scheduled once every program of this
    kernel has issued this or exited, instead of once all have exited, so its launch overlaps
    this kernel's last programs. It changes no ordering of memory: a dependent still reads this
    kernel's results only after its ``griddepcontrol.wait``, which waits for this whole kernel to
    complete. No meaning for the pipe protocol."""
    raise _only_in_kernel("tle.gpu.launch_dependents")


#: Bytes per element of the dtypes a TMA copy can move (shared memory holds them unpacked).
DTYPE_BYTES = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
               "int64": 8, "uint64": 8, "fp8e4b15": 1, "fp8e4b8": 1, "fp8e4nv": 1, "fp8e5": 1,
               "fp8e5b16": 1, "fp16": 2, "bf16": 2, "fp32": 4, "fp64": 8}


def slot_bytes(shape: Sequence[object], dtype: str) -> Optional[int]:
    """The bytes of one slot of a pipe field of ``shape`` (capacity first) and ``dtype``: what a
    TMA copy of the whole field moves; None when a dimension is not an integer (a constexpr the
    read did not bind) or the dtype has no TMA element size."""
    size = DTYPE_BYTES.get(dtype)
    if size is None:
        return None
    for d in list(shape)[1:]:
        if not isinstance(d, int) or isinstance(d, bool):
            return None
        size *= d
    return size


def warp_specialize(functions_and_args: object, worker_num_warps: object = None,
                    worker_num_regs: object = None) -> None:
    """Run each (function, args) entry on its own warp group (kernel only)."""
    raise _only_in_kernel("tle.gpu.warp_specialize")
