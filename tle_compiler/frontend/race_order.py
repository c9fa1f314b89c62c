"""Happens-before through pipe hand-offs, for the memory-race check (frontend/global_races.py):
program order of two instances of one partition (:func:`precedes`), whether an event surely runs
in a run where an access ran (:func:`surely`), and the z3 formula saying that one access happens
before another through a commit -> wait of one index or a release -> acquire a capacity later
(:func:`ordered`)."""

from __future__ import annotations

from typing import Iterator, Optional

from ..ir import kernel as K
from .race_sites import Part, Site
from .race_solver import BACKSTOP_HIT, Budget, Unproved, backstop_words, units
from .race_terms import Instance, Model, instance, term


def precedes(z3, x: Instance, y: Instance):
    """Whether ``x`` runs before ``y`` in one partition: a z3 formula over their iterations."""
    px, py = x.site.path, y.site.path
    eqs, ors = [], []
    for sx, sy in zip(px, py):
        if sx == sy and sx[0] in ("for", "while"):
            nx, ny = x.iters[id(sx[2])][0], y.iters[id(sy[2])][0]
            ors.append(z3.And(*eqs, nx < ny))
            eqs.append(nx == ny)
            continue
        if sx == sy:
            continue  # the same branch, or (a leaf) the same node
        if sx[1] != sy[1]:
            static = sx[1] < sy[1]
        elif sx[0] == "at" and sy[0] == "at":
            static = sx[2] < sy[2]
        elif sx[0] == "at":
            static = True  # a header (a for's range, an if's condition) before its body
        elif sy[0] == "at":
            static = False
        else:
            static = False  # two branches of one if: never both at one iteration
        if static:
            ors.append(z3.And(*eqs))
        return z3.Or(*ors) if ors else z3.BoolVal(False)
    return z3.Or(*ors) if ors else z3.BoolVal(False)


def surely(z3, ev: Instance, acc: Instance):
    """The condition under which event ``ev`` surely runs in a run where ``acc`` ran: every
    ``if`` on its path holds ``acc`` too, at the same iterations of the loops above it; None
    where an ``if`` that does not hold ``acc``, or a ``while``, stands on its path."""
    conds = []
    for d, s in enumerate(ev.site.path):
        if s[0] == "while":
            return None
        if s[0] == "if":
            if acc.site.path[:d + 1] != ev.site.path[:d + 1]:
                return None
            for _, loop in Site(ev.site.path[:d]).loops():
                conds.append(ev.iters[id(loop)][0] == acc.iters[id(loop)][0])
    return z3.And(*conds)


def hb_pairs(kern: K.Kernel, first: Part, second: Part) -> Iterator[tuple]:
    """(event of ``first``, event of ``second``, offset) pairs whose hand-off orders what
    ``first`` did before its event before what ``second`` does after its own: a commit or close
    and a wait of the same index (offset 0); a release and an acquire of the index plus the
    capacity, on a pipe with mbarriers."""
    if first.early_return:
        return
    for e in first.events:
        he = e.event.handle
        pipe = kern.pipe(he.pipe)
        if pipe is None:
            continue
        for w in second.events:
            hw = w.event.handle
            if hw.pipe != he.pipe:
                continue
            if he.side == "writer" and e.event.verb in ("commit", "close") and \
                    hw.side == "reader" and w.event.verb == "wait":
                yield e, w, 0
            elif he.side == "reader" and e.event.verb == "release" and not pipe.named and \
                    not pipe.one_shot and hw.side == "writer" and w.event.verb == "acquire":
                # (a one-shot pipe's acquire and release wait and arrive on nothing)
                yield e, w, pipe.capacity


#: the resource units z3 may spend to decide whether a writer's indices increase (race_solver.py:
#: about 4 s of an idle machine), out of the kernel's budget (Model.budget) where it has one
MONOTONE_RLIMIT = units(4000)


def increasing(model: Model, writer: Part, pipe: str) -> bool:
    """Whether the indices of ``writer``'s acquires and closes of ``pipe`` strictly increase in
    its program order (any two instances, the later one of a greater index), so that each
    index is used once and a stage's next use after index i is i + capacity, if that index is
    used at all. The protocol admits others (`acquire(4 - 2 * t)`, or index 0 used again after
    2: phases alternate either way), where a wait of index i may pass on another use of i than
    the commit a hand-off names, and an acquire of i + capacity may come before the release of
    i; a hand-off of such a pipe is no evidence of an order. Unknown indices, or z3 unsure: no."""
    key = ("increasing", writer.kp.name, pipe)
    cached = model.cache.get(key)
    if cached is not None:
        return cached
    z3 = model.z3
    budget = getattr(model, "budget", None) or Budget(MONOTONE_RLIMIT)
    events = [e for e in writer.events if e.event.handle.pipe == pipe
              and e.event.handle.side == "writer" and e.event.verb in ("acquire", "close")]
    ok = True
    for i, e1 in enumerate(events):
        for e2 in events[i:]:
            for x, y in ((e1, e2), (e2, e1)) if e1 is not e2 else ((e1, e1),):
                ix = instance(model, writer, x.site, f"inc{i}x")
                iy = instance(model, writer, y.site, f"inc{i}y")
                tx, ty = term(model, x.event.index, ix), term(model, y.event.index, iy)
                solver = z3.Solver()
                solver.add(*ix.constraints, *iy.constraints, precedes(z3, ix, iy), ty <= tx,
                           *model.facts)
                got, why = (None, None) if budget.left() <= 0 else \
                    budget.check(solver, MONOTONE_RLIMIT)
                if why == BACKSTOP_HIT:
                    # (undecided for the machine's sake alone: no verdict rests on it)
                    raise Unproved(
                        f"whether partition '{writer.kp.name}' uses each index of pipe `{pipe}` "
                        f"once, in increasing order, was not decided "
                        f"({backstop_words(MONOTONE_RLIMIT)})", x.event.loc)
                if got != z3.unsat:
                    ok = False
                    break
            if not ok:
                break
        if not ok:
            break
    model.cache[key] = ok
    return ok


#: element types of a slot field the lowering never gathers by cp.async (it copies 16 and
#: 32-bit elements: lowering/plan.py BITS), in the spellings a pipe field's dtype takes
NO_GATHER_DTYPES = frozenset({
    "float64", "fp64", "int64", "i64", "uint64", "u64", "int8", "i8", "uint8", "u8", "int1",
    "i1", "float8e4nv", "fp8e4nv", "float8e5", "fp8e5", "float8e4b15", "fp8e4b15"})


def _reader_views(kern: K.Kernel, pipe: str) -> dict:
    """reader name (None: SPSC) -> its field view (None: every field), from the reader events
    of every partition."""
    views: dict = {}
    for kp in kern.partitions:
        for st in K.walk_stmts(kp.body):
            for x in K.stmt_exprs(st):
                for e in K.walk_expr(x):
                    if isinstance(e, K.Event) and e.handle.pipe == pipe \
                            and e.handle.side == "reader":
                        views.setdefault(e.handle.reader, e.handle.view)
    return views


def may_copy(kern: K.Kernel, pipe: str, f: str, views: Optional[dict] = None) -> bool:
    """Whether the lowering may gather a loaded tile into field ``f`` of ``pipe`` by cp.async: a
    pipe with mbarriers, a slot of two dimensions or more and 16 or 32-bit elements that some
    reader's view holds (translate.py ``_cp_async_source`` / ``_cp_async_form``); else it loads
    the tile into registers and stores it, and the load completes at its line. ``views``: the
    pipe's :func:`_reader_views`, where the caller has them."""
    decl = kern.pipe(pipe)
    if decl is None:
        return True
    b = next((x for x in decl.fields if x.name == f), None)
    if b is None:
        return True
    if decl.named or len(b.shape) < 3 or b.dtype in NO_GATHER_DTYPES:
        return False
    views = _reader_views(kern, pipe) if views is None else views
    return any(v is None or f in v for v in views.values())


def unmark_register_stores(kern: K.Kernel, part: Part) -> None:
    """A load race_sites marked as gathered into fields the lowering never gathers into
    (:func:`may_copy`: a field no reader's view holds, a 1-D slot, 8 or 64-bit elements, a
    named pipe) is a register load: complete at its line, ordered as any other access (until
    adversarial round 72 it was taken as a copy no hand-off orders, and the message said so)."""
    views: dict = {}  # pipe -> its reader views, read from the kernel once
    for acc in part.accesses:
        if not acc.gathered or acc.gather is None:
            continue
        pipe = acc.gather.handle.pipe
        if pipe not in views:
            views[pipe] = _reader_views(kern, pipe)
        kept = frozenset(f for f in acc.gather_fields if may_copy(kern, pipe, f, views[pipe]))
        if not kept:
            acc.gathered, acc.gather, acc.gather_fields = False, None, frozenset()
        else:
            acc.gather_fields = kept


def releases(model: Model, kern: K.Kernel, writer: Part, pipe: str, reader) -> bool:
    """Whether a commit of ``pipe`` by ``writer`` is a release for the reader of handle
    ``reader``: some field group of the reader's view gets an elected arrive (after the
    partition's bar.sync, with release semantics) or a named barrier's bar.arrive, which order
    every access of the writer's threads before the commit. A group whose fields the writer
    fills only with loaded tiles (cp.async gathers: ``Part.fills``), in a pipe it never closes,
    is arrived on per thread by ``cp.async.mbarrier.arrive`` alone (lowering/plan.py
    ``arrive_mode`` "thread"), which tracks the thread's copies, not its other accesses (as
    docs/lowering.md says of rule 10's hops): waiting it orders only those copies. Until
    adversarial round 71 every commit counted."""
    key = ("releases", writer.kp.name, pipe, reader.reader, reader.view)
    cached = model.cache.get(key)
    if cached is not None:
        return cached
    decl = kern.pipe(pipe)
    fields = [b.name for b in decl.fields] if decl is not None else []
    if decl is None or decl.named or pipe in writer.closes:
        model.cache[key] = True
        return True
    views = _reader_views(kern, pipe)

    def group(f: str) -> frozenset:
        return frozenset(r for r, v in views.items() if v is None or f in v)

    def kinds_of(f: str) -> set:
        kinds = writer.fills.get((pipe, f), set()) | writer.fills.get((None, f), set())
        if "async" in kinds and not may_copy(kern, pipe, f, views):
            kinds = (kinds - {"async"}) | {"plain"}  # the lowering stores it from registers
        return kinds

    mine = [f for f in fields if reader.view is None or f in reader.view]
    out = False
    for g in {group(f) for f in mine}:
        kinds: set = set()
        for f in fields:
            if group(f) == g:
                kinds |= kinds_of(f)
        if kinds - {"async"} or "async" not in kinds:
            out = True  # a register store, a TMA copy, or nothing gathered: an elected arrive
            break
    model.cache[key] = out
    return out


def unreleased(model: Model, kern: K.Kernel, first: Part, second: Part) -> list[str]:
    """The pipes whose commits by ``first`` a wait of ``second`` matches, but which are no
    release for that reader (:func:`releases`): what a memory-race message names."""
    return sorted({e.event.handle.pipe for e, w, offset in hb_pairs(kern, first, second)
                   if offset == 0 and not releases(model, kern, first, e.event.handle.pipe,
                                                   w.event.handle)})


def ordered(model: Model, kern: K.Kernel, a: Instance, b: Instance, pa: Part, pb: Part,
            gathered: bool = False, gather=None, fields: frozenset = frozenset()):
    """z3: ``a`` happens before ``b`` through some hand-off (existential over the events'
    iterations). ``gathered``: ``a`` is a load the lowering may copy into a slot by cp.async
    (race_sites.Access.gathered), whose global read is complete only when a commit of that
    slot's ring (the acquire ``gather``) after it arrives (the ring's commits arrive through
    cp.async.mbarrier.arrive, which waits for every copy the thread issued before): only such a
    commit orders it, not another pipe's commit or release, which the copy may outlast; none
    does where the acquire is not known. ``fields``: the slot fields such a load fills; the
    commit orders it only for a reader whose view holds them all: the copy's per-thread arrive
    is on the full barrier of its field's group, and a reader of other fields waits another
    group's barrier, which the elected arrive completes with the copy still reading (until
    adversarial round 71 any wait of the ring counted)."""
    z3 = model.z3
    alts = []
    for e, w, offset in hb_pairs(kern, pa, pb):
        if gathered and (gather is None or offset != 0
                         or e.event.handle.pipe != gather.handle.pipe
                         or w.event.handle.view is not None
                         and not set(fields) <= set(w.event.handle.view)):
            continue
        if not increasing(model, pa if offset == 0 else pb, e.event.handle.pipe):
            continue  # an index may be used twice, or out of order: no one use to match
        if offset == 0 and not gathered and \
                not releases(model, kern, pa, e.event.handle.pipe, w.event.handle):
            continue  # the commit arrives per thread for its copies alone: no release
        ie = instance(model, pa, e.site, f"{a.label}>{len(alts)}e")
        iw = instance(model, pb, w.site, f"{b.label}<{len(alts)}w")
        se, sw = surely(z3, ie, a), surely(z3, iw, b)
        if se is None or sw is None:
            continue
        iters = {str(n) for i in (ie, iw) for n, _ in i.iters.values()}
        xe = term(model, e.event.index, ie)
        xw = term(model, w.event.index, iw)
        if ie.unsure or iw.unsure or any(str(v) not in iters for v in ie.fresh + iw.fresh):
            # an index (or a range) with an unknown in it: z3 could choose its value, so the
            # pair is no evidence of an order
            continue
        body = z3.And(*ie.constraints, *iw.constraints, precedes(z3, a, ie), se,
                      precedes(z3, iw, b), sw, xw == xe + offset)
        bound = ie.fresh + iw.fresh
        alts.append(z3.Exists(bound, body) if bound else body)
    return z3.Or(*alts) if alts else z3.BoolVal(False)
