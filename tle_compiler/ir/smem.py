"""A Hopper CTA's shared memory, as every check of a kernel's declarations counts it: the
frontend's budget of fields, buffers and mbarriers (frontend/shared_memory.py), verify-protocol's
capacity and pipe checks (passes/verify_protocol.py) and the .kir reader's barrier check
(cli/print_ir.py) use these, so they agree on what fits; and which TMA box fills a slot field
(box_fits_field: the frontend's and the compile's one rule)."""

from __future__ import annotations

from typing import Callable, Optional

#: Shared memory per block on Hopper: 227 KB.
SMEM_BYTES = 232448


def barrier_bytes(pipe) -> int:
    """The bytes of a pipe's mbarriers (any pipe declaration with ``capacity``, ``one_shot`` and
    ``named``): a full and an empty one, 8 bytes each, a stage; a full one only for a one-shot
    pipe; none for a pipe whose hand-off is a hardware named barrier."""
    return 0 if pipe.named else pipe.capacity * (8 if pipe.one_shot else 16)


def pipes_past_smem(kernel: str, pipes, slot_bytes: Callable[[object], int] = lambda p: 0
                    ) -> Optional[tuple[object, str]]:
    """The first of ``pipes`` (in declaration order) up to which their mbarriers and the slot
    bytes the program states (``slot_bytes(pipe)``: all of a pipe's stages; none by default) no
    longer fit in :data:`SMEM_BYTES`, with the refusal naming kernel ``kernel``; None when they
    all fit. verify-protocol and the .kir reader refuse with it (check ``bad-capacity``)."""
    used = slots = 0
    for p in pipes:
        used += barrier_bytes(p)
        slots += slot_bytes(p)
        if used + slots > SMEM_BYTES:
            what = (f"{used} bytes of full and empty mbarriers (16 bytes a stage, 8 for a "
                    f"one-shot pipe)" if not slots else
                    f"{used + slots} bytes of shared memory ({used} of full and empty "
                    f"mbarriers, 16 bytes a stage, 8 for a one-shot pipe; {slots} of slots "
                    f"filled by TMA copies, the bytes each copy states times the pipe's "
                    f"capacity)")
            return p, (f"the pipes of kernel '{kernel}' up to '{p.name}' have {what}, beyond "
                       f"Hopper's 227 KB of shared memory per block ({SMEM_BYTES} bytes)")
    return None


def box_fits_field(box: list[int], field: list[int]) -> bool:
    """Whether a TMA box fills a slot field of shape ``field``: the box is the field's shape
    with extra dimensions of size 1 inserted anywhere but after the last (none: the box is the
    field's shape), so both hold the same elements in the same row-major order and their rows
    are as wide (the swizzle of the box's layout is the field's)."""
    if len(box) < len(field) or (field and box[-1] != field[-1]):
        return False
    i = 0
    for d in box:  # the field's dimensions in order; a box dimension that is not the next one is 1
        if i < len(field) and d == field[i]:
            i += 1
        elif d != 1:
            return False
    return i == len(field)
