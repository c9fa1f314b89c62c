"""What a kernel's shared-memory declarations must be for Triton to compile and launch it.

- **Slot shapes.** A pipe field's slot (its shape after the leading, per-stage dimension) is what a
  partition loads, stores or feeds to a wgmma whole, a Triton tensor, and Triton's tensors and
  Gluon's shared-memory allocations take power-of-two dimensions only: a field `[2, 48]` was
  verified and its Gluon refused ("shape must have power-of-2 and non-zero dimensions"). The
  leading dimension (the capacity) may be any count, as Gluon allocates rings of 3 or 5 stages.
  Nor can a slot hold int1 elements: the lowered kernel's compile fails on their first store.
- **The budget.** Every pipe field, free buffer and mbarrier is allocated for the whole kernel,
  so their bytes together must fit in a CTA's shared memory, 227 KB (232448 bytes) on Hopper: a
  pipe of 1024 stages of `[64]` fp32 (256 KB) was verified and compiles to a kernel whose launch
  Triton refuses (out of resources: 278592 bytes). Dimensions still named by a constexpr are
  not counted, nor Triton's own scratch and alignment, so only a kernel that surely does not fit
  is refused.

Both are errors at the declaration (check ``bad-pipe`` for a slot shape, ``shared-memory`` at the
pipe field or buffer whose bytes pass the budget).
"""

from __future__ import annotations

import dataclasses
import math

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.smem import SMEM_BYTES, barrier_bytes


#: Bytes per element of each dtype in shared memory (an int1 takes a byte).
_ELEMENT_BYTES = {
    "int1": 1, "int8": 1, "uint8": 1, "fp8e4b15": 1, "fp8e4b8": 1, "fp8e4nv": 1, "fp8e5": 1,
    "fp8e5b16": 1, "int16": 2, "uint16": 2, "fp16": 2, "bf16": 2, "int32": 4, "uint32": 4,
    "fp32": 4, "int64": 8, "uint64": 8, "fp64": 8,
}


def check_slot_shape(pipe: str, buf: K.Buffer) -> None:
    """A pipe field's slot dimensions that are integers are powers of two, and its elements are
    no int1 (Triton's shared-memory lowering of 1-bit elements fails on any store or load of
    the slot: an assertion in ConvertTritonGPUToLLVM; bools are kept as tl.int8)."""
    if buf.dtype == "int1":
        raise TleError(f"pipe '{pipe}': field '{buf.name}' holds int1 elements, which Triton "
                       f"cannot store in or load from shared memory (its compile fails); store "
                       f"them as tl.int8 (`(x > 0).to(tl.int8)`) and compare after the load",
                       buf.loc, check="bad-pipe")
    for d in buf.shape[1:]:
        if isinstance(d, int) and d <= 0:
            raise TleError(f"pipe '{pipe}': field '{buf.name}' has slot shape "
                           f"[{', '.join(map(str, buf.shape[1:]))}]: dimension {d} is not "
                           f"positive (a slot is a Triton tensor: every dimension a power of "
                           f"two)", buf.loc, check="bad-pipe")
        if isinstance(d, int) and d & (d - 1):
            raise TleError(f"pipe '{pipe}': field '{buf.name}' has slot shape "
                           f"[{', '.join(map(str, buf.shape[1:]))}]: dimension {d} is not a power "
                           f"of two, and a slot is a Triton tensor, whose dimensions are (Gluon "
                           f"refuses the allocation)", buf.loc, check="bad-pipe")


def _bytes(buf: K.Buffer) -> int:
    """The buffer's bytes, counting 0 for a dimension still named by a constexpr."""
    if not all(isinstance(d, int) for d in buf.shape):
        return 0
    return math.prod(buf.shape) * _ELEMENT_BYTES.get(buf.dtype, 0)


def check_shared_memory(kernel: K.Kernel) -> None:
    """The pipes' fields and barriers and the free buffers fit in :data:`SMEM_BYTES` together;
    a TleError at the first allocation (in declaration order, pipes first) past it."""
    used, parts = 0, []

    def add(buf: K.Buffer, name: str, what: str) -> None:
        nonlocal used
        n = _bytes(buf)
        used += n
        parts.append(f"{name} {n}")
        if used > SMEM_BYTES:
            _over(kernel, used, parts, buf, what)

    for p in kernel.pipes:
        used += barrier_bytes(p)
        for f in p.fields:
            add(f, f"{p.name}.{f.name}", f"field '{f.name}' of pipe '{p.name}'")
    for b in kernel.buffers:
        add(b, b.name, f"buffer '{b.name}'")


def _over(kernel: K.Kernel, used: int, parts: list[str], buf: K.Buffer, what: str) -> None:
    raise TleError(f"kernel '{kernel.name}' needs at least {used} bytes of shared memory up to "
                   f"{what} ({', '.join(parts)}, with the mbarriers), beyond Hopper's 227 KB "
                   f"per block ({SMEM_BYTES} bytes): Triton compiles the kernel but no launch "
                   f"can run it; fewer stages or smaller tiles", buf.loc, check="shared-memory")


def check_bound_shapes(kernel: K.Kernel, bind: dict) -> None:
    """The two rules again on a read specialised to constexpr values (`--param C=3`, a
    DEFAULT_CONFIG binding): a dimension the kernel names by a constexpr (`[2, C]`) is a number
    there. At C = 3 the slot `[3]` was verified for that value while its Gluon allocation was
    refused; a C that makes the rings outgrow shared memory likewise."""
    def bound(b: K.Buffer) -> K.Buffer:
        dims = tuple(bind[d] if isinstance(d, str) and isinstance(bind.get(d), int)
                     and not isinstance(bind.get(d), bool) else d for d in b.shape)
        return dataclasses.replace(b, shape=dims)

    if not any(isinstance(d, str) for b in kernel.buffers for d in b.shape) and not any(
            isinstance(d, str) for p in kernel.pipes for f in p.fields for d in f.shape):
        return  # nothing named: the build checked these already
    pipes = tuple(dataclasses.replace(p, fields=tuple(bound(f) for f in p.fields))
                  for p in kernel.pipes)
    for p in pipes:
        for f in p.fields:
            check_slot_shape(p.name, f)
    check_shared_memory(dataclasses.replace(kernel, pipes=pipes,
                                            buffers=tuple(bound(b) for b in kernel.buffers)))

