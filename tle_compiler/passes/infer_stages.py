"""infer-stages: the stage, phase and wait parity of every pipe event, as formulas of its index.

stage = i mod C selects the slot and its barriers; phase = ⌊i / C⌋ mod 2 is the parity a reader
waits for on ``full``; a writer's acquire waits on ``empty`` at the opposite parity (φ ^ 1), because
a freshly initialised mbarrier reports parity 1 as already complete, which lets the first C acquires
pass without any release. That the phases alternate along each stage (so a parity wait can never be
satisfied by a stale phase) is checked per instance by verify-protocol (check "phase-aliasing").
"""

from __future__ import annotations

from typing import Optional

from ..ir.expr import Affine
from ..ir.nodes import Event, walk_events
from ..ir.record import record
from .context import PassContext


@record
class StageInfo:
    stage: str  # formula (or number) for the slot
    phase: str  # formula for ⌊i/C⌋ mod 2
    parity: Optional[str]  # parity waited at, None for events that do not wait
    barrier: Optional[str]  # "full" / "empty" / None: which barrier the event waits on


def _wrap(e: Affine) -> str:
    s = str(e)
    return s if (e.is_const or (not e.const and len(e.terms) == 1 and e.terms[0][1] == 1)) else f"({s})"


def stage_info(event: Event, capacity: int, one_shot: bool) -> StageInfo:
    i = event.index
    if one_shot:
        # A one-shot pipe has one stage and its full barrier completes once: parity 0 always.
        return StageInfo("0", "0", "0" if event.verb == "wait" else None,
                         "full" if event.verb == "wait" else None)
    if i.is_const:
        v = i.const
        stage, phase = str(v % capacity), str((v // capacity) % 2)
    else:
        w = _wrap(i)
        stage = "0" if capacity == 1 else f"{w} % {capacity}"
        phase = f"{w} & 1" if capacity == 1 else f"({w} // {capacity}) & 1"
    if event.verb in ("acquire", "close"):
        if one_shot:
            return StageInfo(stage, phase, None, None)
        parity = str(1 - int(phase)) if phase.isdigit() else f"({phase}) ^ 1"
        return StageInfo(stage, phase, parity, "empty")
    if event.verb == "wait":
        return StageInfo(stage, phase, phase, "full")
    return StageInfo(stage, phase, None, None)


@record
class InferStages:
    name: str = "infer-stages"

    def apply(self, ctx: PassContext) -> None:
        out: dict[Event, StageInfo] = {}
        for part in ctx.program.partitions:
            for ev in walk_events(part.body):
                p = ctx.program.pipe(ev.pipe)
                if p is not None:
                    out[ev] = stage_info(ev, p.capacity, p.one_shot)
        ctx.stages = out
