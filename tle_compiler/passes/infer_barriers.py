"""infer-barriers: every mbarrier the lowering must allocate, with its count, arrivers and waiters.

Per pipe, field group g and stage s (roles.py defines the groups):
  full[g][s]  — count 1: the writer partition arrives once per commit (close included);
                waited by every reader whose view contains g, at parity φ.
  empty[g][s] — count = readers of g: each arrives once per release; waited by the writer's
                acquire at parity φ ^ 1. One-shot pipes have no empty barriers.
  named[g][0] — a pipe declared ``barrier="named"``: one hardware named barrier instead of both
                arrays, count 2 (the writer partition and the reader partition; the lowering
                counts their threads): the writer's commit arrives (``bar.arrive``), the reader's
                wait syncs (``bar.sync``); acquire and release touch no barrier (verify-protocol
                proves each release implied, passes/named_release.py).
Counts are in partition units (one elected arrive per partition); the lowering scales them when an
arrive is per thread. A full barrier whose group holds a field read by wgmma needs the
generic→async proxy fence before the arrive (``fence``). A group with fields the writer fills by
TMA copies (``tma``: ``PIPE.tma(i, f, BYTES)`` accesses) has ``expect_tx``: the bytes one commit's
window copies into them (every such field exactly once per window, which verify-protocol checks),
which the commit's arrive declares as expect-tx, so the phase completes only once they landed.
A byte count the Pipe IR does not know (a field shape that depends on an unbound constexpr) is 0
here; the kernel IR's infer-barriers computes it from the field's shape (passes/kir_protocol.py).
"""

from __future__ import annotations


from ..ir.nodes import Program, walk_accesses, walk_events
from ..ir.record import record
from .context import PassContext
from .roles import PipeRoles, reader_name


@record
class Endpoint:
    partition: str
    verb: str  # "commit"/"close"/"release" for arrivers, "acquire"/"close"/"wait" for waiters
    reader: str | None = None
    parity: str | None = None  # formula, for waiters
    lines: tuple[int, ...] = ()

    def to_json(self) -> dict:
        d = {"partition": self.partition, "verb": self.verb, "lines": list(self.lines)}
        if self.reader is not None:
            d["reader"] = self.reader
        if self.parity is not None:
            d["parity"] = self.parity
        return d


@record
class Barrier:
    pipe: str
    kind: str  # "full" | "empty" | "named"
    group: int
    fields: tuple[str, ...]
    stage: int
    count: int
    arrivers: tuple[Endpoint, ...]
    waiters: tuple[Endpoint, ...]
    fence: str | None = None  # "async-proxy" when a wgmma reads the slot after this barrier
    expect_tx: int = 0  # bytes a commit's TMA copies bring (full barriers of TMA-filled groups)
    tma: tuple[str, ...] = ()  # the group's fields the writer fills by TMA copies

    @property
    def label(self) -> str:
        return f"{self.pipe}.{self.kind}[g{self.group}][{self.stage}]"

    def to_json(self) -> dict:
        return {"pipe": self.pipe, "kind": self.kind, "group": self.group, "fields": list(self.fields),
                "stage": self.stage, "count": self.count,
                "arrivers": [a.to_json() for a in self.arrivers],
                "waiters": [w.to_json() for w in self.waiters],
                "fence": self.fence,
                # null: TMA-filled fields whose shape is not bound yet (a constexpr), which the
                # text table prints as "?"; 0 would read as a group without TMA copies
                "expect_tx": None if self.tma and not self.expect_tx else self.expect_tx,
                "tma": list(self.tma)}


def tma_fields(program: Program) -> dict[str, dict[str, int]]:
    """Per pipe, the fields its writer fills by TMA copies, with the bytes of one slot (0 when
    the Pipe IR does not know them)."""
    out: dict[str, dict[str, int]] = {}
    for part in program.partitions:
        for a in walk_accesses(part.body):
            if a.tma:
                sizes = out.setdefault(a.pipe, {})
                sizes[a.field] = max(sizes.get(a.field, 0), a.nbytes)
    return out


def infer_barriers(program: Program, roles: dict[str, PipeRoles], stages: dict) -> list[Barrier]:
    # Gather, per (pipe, endpoint, verb), the lines of the events, and per parity formula the
    # lines of the events that wait at it. One endpoint's events may wait at several parities
    # (``acquire(2 * i)`` and ``acquire(2 * i + 1)`` on a one-slot ring): a waiter is listed once
    # per formula, each with its own lines; one formula for all of them (the first event's) named
    # a parity the other events do not wait at.
    lines: dict[tuple, list[int]] = {}
    parity: dict[tuple, dict[str | None, list[int]]] = {}
    for part in program.partitions:
        for ev in walk_events(part.body):
            r = roles.get(ev.pipe)
            if r is None:
                continue
            who = None if ev.is_writer else reader_name(ev, r.pipe)
            key = (ev.pipe, part.name, who, ev.verb)
            lines.setdefault(key, []).append(ev.loc.line)
            info = stages.get(ev)
            phi = info.parity if info is not None else None
            parity.setdefault(key, {}).setdefault(phi, []).append(ev.loc.line)

    def endpoints(pipe: str, partition: str | None, reader: str | None, verbs: tuple[str, ...],
                  with_parity: bool) -> list[Endpoint]:
        out = []
        for v in verbs:
            key = (pipe, partition, reader, v)
            if key not in lines:
                continue
            known = {phi: ls for phi, ls in parity[key].items() if phi is not None}
            if not with_parity or len(known) <= 1:
                phi = next(iter(known), None) if with_parity else None
                out.append(Endpoint(partition, v, reader, phi, tuple(sorted(set(lines[key])))))
                continue
            for phi, ls in parity[key].items():
                out.append(Endpoint(partition, v, reader, phi, tuple(sorted(set(ls)))))
        return out

    barriers: list[Barrier] = []
    tma = tma_fields(program)
    for p in program.pipes:
        r = roles[p.name]
        if r.writer is None:
            continue
        for g in r.groups:
            readers = [(name, r.readers.get(name)) for name in g.readers]
            fence = "async-proxy" if any(f in p.mma for f in g.fields) else None
            copied = tma.get(p.name, {})
            tma_group = tuple(f for f in g.fields if f in copied)
            tx = sum(copied[f] for f in tma_group)
            if p.named:  # one hardware named barrier, no empty side (passes/named_release.py)
                arr = endpoints(p.name, r.writer, None, ("commit",), False)
                wait = [e for name, part in readers if part
                        for e in endpoints(p.name, part, name, ("wait",), False)]
                barriers.append(Barrier(p.name, "named", g.index, g.fields, 0, 2, tuple(arr),
                                        tuple(wait), fence))
                continue
            for s in range(p.capacity):
                full_arr = endpoints(p.name, r.writer, None, ("commit", "close"), False)
                full_wait = [e for name, part in readers if part
                             for e in endpoints(p.name, part, name, ("wait",), True)]
                barriers.append(Barrier(p.name, "full", g.index, g.fields, s, 1, tuple(full_arr),
                                        tuple(full_wait), fence, tx, tma_group))
                if p.one_shot:
                    continue
                empty_arr = [e for name, part in readers if part
                             for e in endpoints(p.name, part, name, ("release",), False)]
                empty_wait = endpoints(p.name, r.writer, None, ("acquire", "close"), True)
                barriers.append(Barrier(p.name, "empty", g.index, g.fields, s, len(g.readers),
                                        tuple(empty_arr), tuple(empty_wait)))
    return barriers


@record
class InferBarriers:
    name: str = "infer-barriers"

    def apply(self, ctx: PassContext) -> None:
        roles = ctx.roles()
        if ctx.stages is None:
            from .infer_stages import InferStages

            InferStages().apply(ctx)
        ctx.barriers = infer_barriers(ctx.program, roles, ctx.stages)
