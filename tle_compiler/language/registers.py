"""The register rule for ``warp_specialize``.

Each worker's request must be what PTX ``setmaxnreg`` accepts: a multiple of 8 in [24, 256]. The
whole register file (65,536 32-bit registers per SM, one CTA) is shared: the workers take
``warps * 32 * regs`` each, and the default partition gets what is left,

    default_regs = (65536 - Σ worker_warps·32·regs) / (default_warps·32), rounded down to 8,

which must be at least 24 (setmaxnreg's minimum) — otherwise a TleError at the warp_specialize
call. ``@tle.jit(maxnreg=R)`` caps every thread at R registers at launch (PTX ``.maxnreg``), so
several CTAs can share an SM: the pool is then R · 32 · (all warps) instead of the whole file, and
the default partition's share is computed from that pool (setmaxnreg moves registers within the
CTA's pool; it never grows it). (The default partition's actual use is estimated by this budget, not measured: ptxas reports
registers per kernel, not per partition.) Workers without a request are not constrained.
"""

from __future__ import annotations

from ..diagnostics import TleError

REGISTER_FILE = 65536
MIN_REGS, MAX_REGS = 24, 256


def register_pool(info) -> int:
    """Registers one CTA may use: the whole file, or ``maxnreg`` per thread when the kernel sets it."""
    cap = maxnreg_of(info)
    if cap is None:
        return REGISTER_FILE
    return cap * 32 * sum(p.warps for p in info.partitions)


def maxnreg_of(info):
    cap = (getattr(info, "options", None) or {}).get("maxnreg")
    if cap is None:
        return None
    if not isinstance(cap, int) or cap % 8 or not MIN_REGS <= cap <= MAX_REGS:
        raise TleError(f"@tle.jit(maxnreg={cap!r}): PTX .maxnreg here must be a multiple of 8 in "
                       f"[{MIN_REGS}, {MAX_REGS}]", info.program.loc, check="registers")
    return cap


def default_budget(info) -> int:
    workers = [p for p in info.partitions if not p.default]
    default = next(p for p in info.partitions if p.default)
    used = sum(p.warps * 32 * p.regs for p in workers if p.regs)
    left = (register_pool(info) - used) // (default.warps * 32)
    return min(MAX_REGS, left - left % 8)


def check_registers(info, at=None) -> int:
    """The default partition's budget, or a TleError for a request setmaxnreg refuses or for
    requests that leave the default partition less than its minimum. ``at``: the location of
    the warp_specialize call, which holds the requests (the frontend's reading): the errors
    are there, as this module says; without it (a kernel IR's partitions), at the partition
    asking, and at the default partition for the budget left. The budget's error was at the
    default partition's ``def`` line even where the call was known."""
    for p in info.partitions:
        if p.regs is not None and (p.regs % 8 or not MIN_REGS <= p.regs <= MAX_REGS):
            raise TleError(f"partition '{p.name}' asks for {p.regs} registers: setmaxnreg needs a "
                           f"multiple of 8 in [{MIN_REGS}, {MAX_REGS}]", at or p.loc,
                           check="registers")
    budget = default_budget(info)
    if budget < MIN_REGS:
        ws = ", ".join(f"{p.name}: {p.warps} warps x {p.regs}" for p in info.partitions
                       if not p.default and p.regs)
        raise TleError(f"the workers' registers ({ws}) leave {max(budget, 0)} per thread for the "
                       f"default partition (pool {register_pool(info)} registers); it needs at least "
                       f"{MIN_REGS}: lower the workers' requests",
                       at or info.partitions[0].loc, check="registers")
    return budget
