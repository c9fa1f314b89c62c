"""verify-deadlock: prove that every interleaving of the partitions runs to the end.

For each param value of the plan (cutoff.py), the event traces are *run* (passes/instances.py):
every partition advances while its next event is enabled — a wait once the k-th commit of its
stage ran, an acquire once every reader released the stage's previous use. Under the protocol
rules verify-protocol checked, that is Kahn's algorithm on the happens-before graph of
docs/semantics.md (program order; the k-th commit of a stage → every reader's k-th wait; every
reader's (k−1)-th release → the writer's k-th acquire), and each event blocks exactly until its
predecessors in that graph ran (the parity argument: every waiter is within one phase of its
barrier). So some interleaving deadlocks iff the run gets stuck, and then the stuck partitions
wait for each other in a cycle, reported as its cross-partition hand-offs with their lines.
The pass also records the run's verdict (passes/verdict.py): what the plan's values prove.
"""

from __future__ import annotations


from ..ir.record import record
from .context import PassContext
from .sweep import sweep


@record
class VerifyDeadlock:
    name: str = "verify-deadlock"

    def apply(self, ctx: PassContext) -> None:
        sw = sweep(ctx)
        sw.report_deadlock(ctx)
        # a claim needs both passes: alone, this one does not report broken protocol rules
        if "verify-protocol" in ctx.passes_run:
            ctx.checked_verdict = sw.verdict(ctx)
