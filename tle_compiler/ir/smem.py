"""A Hopper CTA's shared memory, as every check of a kernel's declarations counts it: the
frontend's budget of fields, buffers and mbarriers (frontend/shared_memory.py), verify-protocol's
capacity and pipe checks (passes/verify_protocol.py) and the .kir reader's barrier check
(cli/print_ir.py) use these, so they agree on what fits."""

from __future__ import annotations

#: Shared memory per block on Hopper: 227 KB.
SMEM_BYTES = 232448


def barrier_bytes(pipe) -> int:
    """The bytes of a pipe's mbarriers (any pipe declaration with ``capacity``, ``one_shot`` and
    ``named``): a full and an empty one, 8 bytes each, a stage; a full one only for a one-shot
    pipe; none for a pipe whose hand-off is a hardware named barrier."""
    return 0 if pipe.named else pipe.capacity * (8 if pipe.one_shot else 16)
