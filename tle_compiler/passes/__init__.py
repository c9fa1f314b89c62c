"""The pass pipeline. Passes are small named objects with ``apply(ctx)``; a pipeline is a
comma-separated string of pass names, so the CLI and the tests compose them the same way:

    run_pipeline(program, "verify-protocol,infer-stages,infer-barriers,verify-deadlock")
"""

from __future__ import annotations

from typing import Mapping, Optional

from ..ir.nodes import Program
from .context import PassContext
from .fixed_params import with_single_values
from .infer_barriers import Barrier, InferBarriers
from .infer_stages import InferStages, StageInfo
from .verify_deadlock import VerifyDeadlock
from .verify_protocol import VerifyProtocol

PASSES = {p.name: p for p in (VerifyProtocol(), InferStages(), InferBarriers(), VerifyDeadlock())}
DEFAULT_PIPELINE = "verify-protocol,infer-stages,infer-barriers,verify-deadlock"


def parse_pipeline(spec: str) -> list:
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise ValueError(f"unknown pass '{unknown[0]}' (passes: {', '.join(PASSES)})")
    return [PASSES[n] for n in names]


def run_pipeline(program: Program, pipeline: str = DEFAULT_PIPELINE, bound: Optional[int] = None,
                 params: Optional[Mapping[str, int]] = None,
                 budget: Optional[int] = None) -> PassContext:
    """Run the passes in order; after a structural error (unknown pipe, undeclared reader, ...) the
    passes that pair events are skipped, the inference passes need only the structure. ``params``: check only these
    values of these params; ``bound``: no value beyond it in magnitude; ``budget``: the events the
    instance checks may expand (PassContext.budget)."""
    ctx = PassContext(program, bound=bound, fixed_params=with_single_values(program, params))
    if budget is not None:
        ctx.budget = budget
    for p in parse_pipeline(pipeline):
        # verify-deadlock still runs after protocol errors: the sweep only runs the values whose
        # protocol is well formed, so a deadlock at a smaller value than a protocol fault is real
        # and is reported too; after a structural error neither pass can pair events
        if ctx.structure_failed:
            continue
        p.apply(ctx)
        ctx.passes_run.append(p.name)
    return ctx


def verify(program: Program, **kw) -> PassContext:
    """The full default pipeline."""
    return run_pipeline(program, DEFAULT_PIPELINE, **kw)


__all__ = ["PASSES", "DEFAULT_PIPELINE", "PassContext", "Barrier", "StageInfo", "run_pipeline",
           "parse_pipeline", "verify"]
