"""How many ``barrier="named"`` pipes a kernel can have: the hardware named-barrier ids left to
them.

A CTA has :data:`NAMED_BARRIERS` hardware barriers (``bar.sync`` / ``bar.arrive`` ids 0-15).
Triton's warp specialization takes the low ids: 0 for the CTA and the default warp group, 1, and
one per worker partition from 2 (ids up to P for P partitions); two more are kept spare. The
lowering gives each named pipe's barrier an id from 15 down (lowering/kir_passes.py,
``named_barrier_allocs``), so at most :func:`named_budget` of them fit. Both the verifier's
structural check (passes/verify_protocol.py, check ``named-budget``) and the lowering read the
budget and the refusal from here, so a kernel the verifier accepts gets its ids, and one that does
not fit is refused by both with one message at the pipe that does not fit.
"""

from __future__ import annotations

#: The hardware named barriers (bar.sync / bar.arrive ids) of an SM's CTA.
NAMED_BARRIERS = 16


def reserved_ids(partitions: int) -> int:
    """The ids below this stay Triton's, for a kernel of ``partitions`` partitions: 0, 1 and one
    per worker partition from 2 (P - 1 of them, up to id P), and two to spare (P + 1, P + 2)."""
    return 3 + partitions


def named_budget(partitions: int) -> int:
    """The most named-pipe barriers a kernel of ``partitions`` partitions can have."""
    return max(NAMED_BARRIERS - reserved_ids(partitions), 0)


def named_barrier_id(k: int, partitions: int):
    """The hardware id of the ``k``-th named barrier (0-based, in the pipes' declaration order),
    or None when it does not fit."""
    return NAMED_BARRIERS - 1 - k if k < named_budget(partitions) else None


def too_many_named(pipe: str, partitions: int) -> str:
    """The refusal of pipe ``pipe``, the first named pipe whose barrier gets no id."""
    return (f"pipe '{pipe}': too many barrier=\"named\" pipes: a CTA has {NAMED_BARRIERS} hardware "
            f"barriers and Triton's warp specialization keeps ids below "
            f"{reserved_ids(partitions)} for this kernel's {partitions} partitions, so at most "
            f"{named_budget(partitions)} named pipes fit; give the others mbarriers")
