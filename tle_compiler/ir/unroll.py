"""Instantiate a Pipe IR program for concrete param values: one event trace per partition.

Control flow in the Pipe IR depends only on loop variables and params, never on data, so a
partition's sequence of pipe events is fully determined by the param values. The static passes
check these traces (and the happens-before graph built on them) for every param value up to a bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from ..diagnostics import TleError
from .nodes import Access, Event, For, If, Program, Stmt

#: Refuse to expand a partition beyond this many events (a guard against runaway bounds).
MAX_TRACE = 200_000


@dataclass(slots=True, eq=False)
class Instance:
    """One dynamic execution of an event: the node, its evaluated index, and the loop variables.
    (A plain slotted class compared by identity: millions are made when checking a bound.)"""

    event: "Event | Access"
    index: int
    partition: str
    pos: int  # position in the partition's trace
    env: tuple[tuple[str, int], ...]  # loop variables at this point (outermost first)

    def where(self) -> str:
        """``at ck=3`` style suffix for diagnostics (empty outside loops)."""
        return ("at " + ", ".join(f"{k}={v}" for k, v in self.env)) if self.env else ""


def unroll_body(body: tuple[Stmt, ...], env: dict[str, int], partition: str, out: list[Instance],
                loop_vars: tuple[str, ...] = (), limit: Optional[int] = MAX_TRACE) -> None:
    for s in body:
        if isinstance(s, (Event, Access)):
            out.append(Instance(s, s.index.eval(env), partition, len(out),
                                tuple((v, env[v]) for v in loop_vars)))
            if limit is not None and len(out) > limit:
                raise TleError(f"partition '{partition}' expands to more than {limit} events",
                               s.loc)
        elif isinstance(s, For):
            start, stop = s.start.eval(env), s.stop.eval(env)
            trips = len(range(start, stop, s.step))
            if limit is not None and trips > limit:
                # Also guards loops without events, which would otherwise spin for ages.
                raise TleError(f"loop over {s.var} runs {trips} times, more than the {limit} "
                               f"the verifier expands", s.loc)
            saved = env.get(s.var)
            for v in range(start, stop, s.step):
                env[s.var] = v
                unroll_body(s.body, env, partition, out, loop_vars + (s.var,), limit)
            if saved is None:
                env.pop(s.var, None)
            else:
                env[s.var] = saved
        elif isinstance(s, If):
            unroll_body(s.then if s.cond.eval(env) else s.orelse, env, partition, out, loop_vars,
                        limit)


def unroll(program: Program, params: Mapping[str, int],
           limit: Optional[int] = MAX_TRACE) -> dict[str, list[Instance]]:
    """Partition name → its event trace for the given param values (at most ``limit`` events per
    partition; None: no limit, for a value whose traces were already expanded within a budget)."""
    traces: dict[str, list[Instance]] = {}
    for part in program.partitions:
        out: list[Instance] = []
        unroll_body(part.body, dict(params), part.name, out, (), limit)
        traces[part.name] = out
    return traces
