"""Where the global-memory accesses and the pipe events of a partition stand (the memory-race
check, frontend/global_races.py): each as a :class:`Site`, the path from the partition's body
through loops and branches down to the node, which is what program order and "surely runs" are
read from (frontend/race_order.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..ir import kernel as K


ATOMIC_PREFIX = "tl.atomic_"


@dataclass(frozen=True)
class Site:
    """Where a node stands in a partition: the path from the body, each step ``("at", i, k)``
    (statement i of a list, k-th node of its expressions in evaluation order), ``("for", i,
    loop)``, ``("while", i, loop)`` (into a loop's body; a while's condition is inside it) or
    ``("if", i, stmt, branch)``."""

    path: tuple

    def loops(self) -> list[tuple[int, object]]:
        """(depth, loop statement) of each loop on the path, outermost first."""
        return [(d, s[2]) for d, s in enumerate(self.path) if s[0] in ("for", "while")]


@dataclass
class Access:
    kind: str  # load | store | atomic
    op: K.Op
    site: Site
    #: a load whose value a store puts in a pipe slot's field (``tl.store(local_ptr(slot.f),
    #: tl.load(ptrs))``), which the lowering may gather by cp.async: the acquire event that gave
    #: the slot (None where no single acquire in the partition is known to)
    gather: Optional[object] = None
    gathered: bool = False
    #: the slot fields such a load may fill: a commit orders the copy only for a reader whose
    #: view holds them (its wait is on the full barrier the copy's per-thread arrive counts)
    gather_fields: frozenset = frozenset()


@dataclass
class PipeEvent:
    event: K.Event
    site: Site


@dataclass
class Part:
    """A partition with its accesses, events, and what its names are assigned."""

    kp: K.KPartition
    accesses: list[Access] = field(default_factory=list)
    events: list[PipeEvent] = field(default_factory=list)
    #: name -> [(value, site of the assignment)]
    assigns: dict[str, list] = field(default_factory=dict)
    loop_vars: set = field(default_factory=set)
    early_return: bool = False
    #: how the partition, a pipe's writer, may fill each slot field: (pipe, field) -> kinds,
    #: "async" (a store of a loaded tile, which the lowering may make a cp.async gather; pipe
    #: None where the slot's acquire is not known), "plain" (a register store) or "tma"; the
    #: lowering's commit arrives per thread alone (no release) where a field group holds only
    #: the first (lowering/plan.py ``arrive_mode``): race_order.releases
    fills: dict = field(default_factory=dict)
    #: the pipes the partition closes (a closed flag is a register store: an elected arrive)
    closes: set = field(default_factory=set)
    #: (tle.gpu.tma_load op, its site) of each TMA copy into a slot
    copies: list = field(default_factory=list)


def _post(e: K.Expr) -> Iterator[K.Expr]:
    for c in K.children(e):
        yield from _post(c)
    yield e


def pointer_of(op: K.Op) -> Optional[K.Expr]:
    return op.args[0] if op.args else op.kw("pointer")


def access_kind(op: K.Op) -> Optional[str]:
    if op.name == "tl.load":
        return "load"
    if op.name == "tl.store":
        return "store"
    if op.name.startswith(ATOMIC_PREFIX):
        return "atomic"
    return None


def collect(kp: K.KPartition) -> Part:
    part = Part(kp)

    def nodes(exprs, prefix, i):
        k = 0
        for e in exprs:
            for x in _post(e):
                if isinstance(x, K.Op) and access_kind(x):
                    part.accesses.append(Access(access_kind(x), x, Site(prefix + (("at", i, k),))))
                elif isinstance(x, K.Event):
                    part.events.append(PipeEvent(x, Site(prefix + (("at", i, k),))))
                    if x.verb == "close" and x.handle.side == "writer":
                        part.closes.add(x.handle.pipe)
                elif isinstance(x, K.Op) and x.name == "tle.gpu.tma_load" and x.args \
                        and isinstance(x.args[0], K.SlotField):
                    part.copies.append((x, Site(prefix + (("at", i, k),))))
                k += 1

    def walk(stmts, prefix, top):
        for i, st in enumerate(stmts):
            if isinstance(st, (K.Assign, K.Eval)):
                nodes([st.value], prefix, i)
                if isinstance(st, K.Assign):
                    part.assigns.setdefault(st.target, []).append(
                        (st.value, Site(prefix + (("at", i, 0),))))
            elif isinstance(st, K.Return):
                if st.value is not None:
                    nodes([st.value], prefix, i)
                if not (top and i == len(stmts) - 1):
                    part.early_return = True
            elif isinstance(st, K.For):
                nodes([st.start, st.stop, st.step], prefix, i)
                part.loop_vars.add(st.var)
                walk(st.body, prefix + (("for", i, st),), False)
            elif isinstance(st, K.If):
                nodes([st.cond], prefix, i)
                walk(st.then, prefix + (("if", i, st, "then"),), False)
                walk(st.orelse, prefix + (("if", i, st, "else"),), False)
            elif isinstance(st, K.While):
                inner = prefix + (("while", i, st),)
                nodes([st.cond], inner, -1)
                walk(st.body, inner, False)

    walk(kp.body, (), True)
    _mark_gathers(part)
    return part


def _mark_gathers(part: Part) -> None:
    """Mark each load whose value a store writes into a pipe slot's field, directly or through
    a name assigned it once: the lowering may turn the pair into a cp.async copy, whose read of
    global memory completes only by the time the slot's ring is committed (the commit's arrive
    waits for the partition's copies), not at the load's own line (race_order.ordered). The
    store's pointer is followed as the lowering follows its value (lowering/translate.py
    ``_cp_async_form`` takes the pointer's value, not its spelling): ``local_ptr(slot.f)``
    written in the store, or reached through names (``dst = local_ptr(slot.f)``, an inlined
    helper's parameter), a tuple's item, ``+ 0`` or a choice between pointers. Until adversarial
    round 71 only the first spelling was marked, and a gather through ``dst`` was taken as read
    at its line, ordered by another pipe's hand-off the copy may outlast. Also records how the
    partition fills each slot field (``Part.fills``), which decides whether a commit of it is a
    release (race_order.releases)."""
    by_op = {id(a.op): a for a in part.accesses if a.kind == "load"}
    for op, site in part.copies:
        sf = op.args[0]
        acq = _acquire_of(part, sf.slot.id, site) if isinstance(sf.slot, K.Name) else None
        if acq is not None:
            part.fills.setdefault((acq.handle.pipe, sf.field), set()).add("tma")
    for acc in part.accesses:
        if acc.kind != "store":
            continue
        targets = _slot_targets(part, pointer_of(acc.op), acc.site, set())
        if not targets:
            continue
        value = acc.op.args[1] if len(acc.op.args) > 1 else acc.op.kw("value")
        if isinstance(value, K.Name) and len(part.assigns.get(value.id, ())) == 1:
            value = part.assigns[value.id][0][0]
        load = by_op.get(id(value))
        # the acquire that gave the slot, of each field the pointer may be
        acquires = [_acquire_of(part, sf.slot.id, site) if isinstance(sf.slot, K.Name) else None
                    for sf, site in targets]
        for (sf, _), acq in zip(targets, acquires):
            pipe = acq.handle.pipe if acq is not None else None
            if load is not None:
                part.fills.setdefault((pipe, sf.field), set()).add("async")
            elif pipe is not None:
                # (a register store of a slot whose pipe is not known counts for none: it
                # would make a commit of a pipe it may not fill a release)
                part.fills.setdefault((pipe, sf.field), set()).add("plain")
        if load is None:
            continue
        load.gathered = True
        load.gather_fields = load.gather_fields | {sf.field for sf, _ in targets}
        # none known where they are not all acquires of one pipe (then no hand-off orders the
        # load)
        if all(a is not None for a in acquires) and \
                len({a.handle.pipe for a in acquires}) == 1:
            load.gather = acquires[0]


#: functions whose value is their pointer argument (or one of their pointer arguments): a slot
#: pointer passed through them is still the slot's (tl.where / a conditional expression choose)
_POINTER_THROUGH = frozenset({"tl.where", "ifexp", "tl.multiple_of", "tl.max_contiguous",
                              "tl.max_constancy"})


def _slot_targets(part: Part, e, site: Site, seen: set) -> list:
    """(slot field, site of the expression naming it) of each ``tle.gpu.local_ptr(slot.f)`` the
    pointer expression ``e`` (standing at ``site``) may be: the op itself, every assignment of a
    name (each at its own site), the items of a tuple a subscript picks from, either side of a
    ``+`` / ``-`` and the pointer operands of a choice. Empty where it reaches none."""
    if isinstance(e, K.Op) and e.name == "tle.gpu.local_ptr":
        return [(e.args[0], site)] if e.args and isinstance(e.args[0], K.SlotField) else []
    if isinstance(e, K.Name):
        if e.id in seen:
            return []
        seen = seen | {e.id}
        return [t for value, at in part.assigns.get(e.id, ())
                for t in _slot_targets(part, value, at, seen)]
    if isinstance(e, K.Subscript):
        return _slot_targets(part, e.value, site, seen)
    if isinstance(e, K.TupleExpr):
        return [t for item in e.items for t in _slot_targets(part, item, site, seen)]
    if isinstance(e, K.BinOp) and e.op in ("+", "-"):
        return _slot_targets(part, e.lhs, site, seen) + _slot_targets(part, e.rhs, site, seen)
    if isinstance(e, K.Op) and e.name in _POINTER_THROUGH:
        return [t for a in e.args for t in _slot_targets(part, a, site, seen)]
    return []


def _acquire_of(part: Part, name: str, at: Site) -> Optional[K.Event]:
    """The acquire that gave slot ``name`` where a store at ``at`` uses it: where every
    assignment of the name is an acquire of one pipe, any of them (only the pipe is read);
    else the assignment nearest before ``at`` in its own statement list, when it is an acquire
    and no statement between them binds the name in a nested block; None otherwise (no commit
    then orders the gathered load: race_order.ordered)."""
    given = part.assigns.get(name, ())
    acquires = [v for v, _ in given if isinstance(v, K.Event) and v.verb == "acquire"]
    if acquires and len(acquires) == len(given) and \
            len({v.handle.pipe for v in acquires}) == 1:
        return acquires[0]
    depth, here = len(at.path) - 1, at.path[-1][1]
    before = [(site.path[-1][1], v) for v, site in given
              if site.path[:-1] == at.path[:-1] and site.path[-1][1] < here]
    if not before:
        return None
    last, value = max(before, key=lambda x: x[0])
    # an assignment inside a statement between the two (an `if` that may bind another slot)
    if any(site.path[:depth] == at.path[:depth] and len(site.path) > depth + 1
           and last < site.path[depth][1] < here for _, site in given):
        return None
    return value if isinstance(value, K.Event) and value.verb == "acquire" else None
