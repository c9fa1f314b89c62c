"""schedule-wgmma: where the kernel waits for its async wgmmas, written into the kernel IR. The
only place that decides a ``warpgroup_mma_wait``: emit-gluon prints what this pass wrote.

Every ``tl.dot`` is an async wgmma (``is_async=True``); a ``warpgroup_mma_wait(n)`` lets at most
``n`` of them stay in flight (they retire in issue order). :class:`InflightWgmmas` tracks what is
in flight through a translation walk of a partition (lowering/walks.py, translate.py) and waits
where it must (docs/lowering.md, "Async wgmma"): before a register read of a result, before
shared memory a wgmma reads is released or overwritten, at loop entry, back-edge and exit, around
an ``if``, at the end of the partition; with ``@tle.jit(wgmma_pipeline=True)`` a loop keeps the
wgmmas whose results only loop-carried names hold in flight across its back-edge.

The pass walks each partition twice with assign-layouts' layouts:
  1. collecting (as assign-layouts' walk; pipelined kernels only): what stays in flight at each
     pipelined loop's back-edge, written on the loop: ``wgmma_carried = (CarriedWgmma(names,
     rings, regs, reg_types, wgmma), ...)`` (the loop head starts with them in flight);
  2. emitting, with those sets: every wait, written on the node it goes before or after
     (lowering/wgmma_sites.py lists the points): ``wgmma_waits = (WgmmaWait(pending, deps, why,
     line, place, path), ...)`` in emission order on the innermost node that carries attributes
     (the ``tl.dot`` whose result is read, the release, the store, the loop, the partition), with
     ``path`` the position below it where that node has none (a name that is read, an ``if``, a
     branch). Every partition gets ``wgmma_waits``, () when it has none of its own.
Dependencies are named in KIR terms (lowering/scheduled_waits.py maps them to generated names).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.attrs import CarriedWgmma, WgmmaRewrap, WgmmaWait
from ..ir.nodes import NOLOC
from ..ir.record import record
from ..passes.kir_module import KirModule
from ..passes.kir_rewrite import with_node_attrs
from . import kir_paths, walks
from .layouts import layout_attr, layout_tuple
from .wgmma_sites import (BackEdge, BranchEnd, Drain, Overwrite, Read, ReadBoth, WgmmaWaits,
                          ring_key, ring_var, rings_overlap)

#: a path inside a branch of an ``if`` (lowering/kir_paths.py)
_IN_BRANCH = re.compile(r"(?:^|\.)(?:then|orelse)\[")


class InflightWgmmas(WgmmaWaits):
    """The wgmmas issued and not yet waited for in one walk of a partition, in issue order, and
    the waits they need, recorded at the points of the walk (``waits``: ``(place, path,
    WgmmaWait)`` in emission order)."""

    active = True

    def __init__(self):
        #: {"seq", "rings": the (ring, stage) keys it reads (wgmma_sites.ring_key), "regs":
        #: register A operands (generated names), "reg_types": their (shape, dtype, layout
        #: tuple), "wgmma": the path of its tl.dot}
        self.inflight: list[dict] = []
        self.pending: dict[str, int] = {}  # generated name -> seq of the wgmma producing it
        self.seq = 0
        #: generated names of values the kernel does not name -> "result of PATH" / "A operand of
        #: PATH" (the tl.dot at PATH)
        self.terms: dict[str, str] = {}
        self.waits: list[tuple] = []
        self.passed: set = set()  # the points passed so far
        self.entry_names: list[set] = []  # per enclosing pipelined loop: tensors before its head
        self.head_seqs: list[set] = []  # per enclosing pipelined loop: seqs of its carried wgmmas
        self.carried_found: list[tuple] = []  # (For node, CarriedWgmma tuple) of a collecting walk

    # ------------------------------------------------------------ what the walk reports
    def is_pending(self, v) -> bool:
        return (v.kind == "tensor" and v.text in self.pending
                and any(e["seq"] == self.pending[v.text] for e in self.inflight))

    def issued(self, tr, path, result, a_operand, rings, reg_types) -> None:
        self.seq += 1
        regs = [a_operand] if a_operand is not None else []
        self.inflight.append({"seq": self.seq, "rings": set(rings), "regs": regs,
                              "reg_types": list(reg_types), "wgmma": path})
        self.pending[result] = self.seq
        self.terms[result] = f"result of {path}"
        if a_operand is not None:
            self.terms[a_operand] = f"A operand of {path}"

    def renamed(self, tr, value, name: str, moved: bool = False) -> None:
        """``name = value``. A result the kernel does not name (the ``tl.dot``'s temporary), or
        a name read for the last time (``moved``: a builder temporary), moves to ``name``; a
        name of the kernel (``o = acc``) stays in flight along with its alias, since either may
        be read next: a read of either waits, and the wait rebinds both (with only ``o``
        tracked, ``acc`` was read unwaited, an accumulator object)."""
        pend = self.pending[value.text] if self.is_pending(value) else None
        self.pending.pop(name, None)
        if pend is not None:
            if value.text in self.terms or moved:
                del self.pending[value.text]
            self.pending[name] = pend

    def accumulates(self, tr, node, acc, converted: bool) -> None:
        if converted and self.is_pending(acc):
            raise tr.err("internal: an in-flight accumulator needs a layout conversion", node)

    def loop_head(self, tr, loop, carried: tuple) -> None:
        """The head of a pipelined loop: its carried wgmmas (the ``wgmma_carried`` attribute)
        are in flight; the tensors named before it are what may carry a result across."""
        self.entry_names.append({v.text for v in tr.env.values() if v.kind == "tensor"})
        self.head_seqs.append({self.seq + 1 + i for i in range(len(carried))})
        for c in carried:
            self.seq += 1
            # its stages were taken in an earlier iteration: any stage of its rings
            self.inflight.append({"seq": self.seq, "rings": {ring_key(v) for v in c.rings},
                                  "regs": list(c.regs),
                                  "reg_types": [(tuple(sh), dt, layout_tuple(lay))
                                                for sh, dt, lay in c.reg_types],
                                  "wgmma": c.wgmma})
            for n in c.names:
                self.pending[n] = self.seq
            for r in c.regs:
                self.terms[r] = f"A operand of {c.wgmma}"

    def at(self, tr, place: str, path: Optional[str], need) -> None:
        key = (place, path)
        if isinstance(need, Read):
            v = need.value
            if self.is_pending(v):
                q = self.pending[v.text]
                pos = next(i for i, e in enumerate(self.inflight) if e["seq"] == q)
                self._wait_through(tr, key, pos, f"{self.term(v.text)} is read")
        elif isinstance(need, ReadBoth):
            pend = [v for v in need.values if self.is_pending(v)]
            pos = max((next(i for i, e in enumerate(self.inflight)
                            if e["seq"] == self.pending[v.text]) for v in pend), default=-1)
            self._wait_through(tr, key, pos, " and ".join(self.term(v.text) for v in pend)
                               + " read in both branches of the if")
        elif isinstance(need, Overwrite):
            pos = max((i for i, e in enumerate(self.inflight)
                       if rings_overlap(e["rings"], need.rings)), default=-1)
            self._wait_through(tr, key, pos, need.why)
        elif isinstance(need, Drain):
            self._wait_through(tr, key, len(self.inflight) - 1, need.why)
        elif isinstance(need, BackEdge):
            self._back_edge(tr, key, need)
        elif isinstance(need, BranchEnd):
            self._branch_end(tr, key, need)
        elif need is not None:
            raise TypeError(f"internal: unknown wgmma need {need!r}")
        self.passed.add(key)

    def snapshot(self):
        return [dict(e) for e in self.inflight], dict(self.pending)

    def rebuilding_a_operand(self, tr, dot_path: Optional[str], path: Optional[str]) -> None:
        """The A operand of the ``tl.dot`` at ``dot_path`` is read, about to be converted into
        its register operand ``_aN``, while the wgmma that dot issued in the previous iteration
        (carried across the back-edge) still reads the previous ``_aN``: wait for that wgmma
        first, at the point after the read (PTX: the registers of a wgmma's A operand must not
        change before a wait retires it; defined anyway, ptxas serialises every wgmma of the
        kernel, its warning C7515)."""
        if path is None:
            return
        pos = max((i for i, e in enumerate(self.inflight) if e["regs"] and e["wgmma"] == dot_path),
                  default=-1)
        self._wait_through(tr, ("after", path), pos, f"the register A operand of {dot_path} is "
                                                     f"redefined while its previous wgmma is in "
                                                     f"flight")

    def assigning(self, tr, path: Optional[str], name: str, value) -> None:
        """``name = value`` inside a branch of an ``if``, where ``name`` is the last name holding
        an in-flight result and ``value`` is neither a wgmma's result nor another name (an
        accumulator reset, ``if t % 4 == 0: acc = tl.zeros(...)``): wait for that wgmma before
        the assignment. The branch's end makes ``name`` an in-flight accumulator again
        (WgmmaRewrap) and the ``if``'s join merges it with the in-flight result of the path that
        skipped the branch, so their registers coalesce; unwaited, the new value is defined in
        registers an in-flight wgmma still writes (undefined in PTX), and ptxas serialises every
        wgmma of the kernel instead (its warning C7514)."""
        if path is None or not _IN_BRANCH.search(path):
            return
        if (isinstance(value, K.Op) and value.name == "tl.dot") or isinstance(value, K.Name):
            return  # a new wgmma's result or an alias: renamed() follows it
        if name not in self.pending or not any(e["seq"] == self.pending[name]
                                               for e in self.inflight):
            return
        q = self.pending[name]
        if any(k != name and p == q for k, p in self.pending.items()):
            return  # another name still holds the result (and its registers)
        pos = next(i for i, e in enumerate(self.inflight) if e["seq"] == q)
        self._wait_through(tr, ("after", path), pos, f"{self.term(name)} is replaced in a branch "
                                                     f"while its wgmma is in flight")

    def _branch_end(self, tr, key: tuple, need: BranchEnd) -> None:
        """The end of a branch of an ``if`` that keeps wgmmas in flight: the names in flight at
        the ``if`` that the branch rebound (a wait retired them, or an assignment replaced them)
        are made in-flight accumulators again (WgmmaRewrap), and the walk goes on from the state
        at the ``if``: over the path that skips the branch everything is still in flight, and the
        later waits are what that path needs (on this one they find the wgmmas retired).
        A name the branch made an alias of an in-flight result (``if last: o = acc``) is waited
        for first: after the ``if`` the path that skipped the branch has ``o`` as it was, not in
        flight, so the taken path must leave it a plain tensor too (re-wrapping only what was
        in flight at the ``if``)."""
        inflight, pending = need.snapshot
        aliases = [k for k, q in self.pending.items() if pending.get(k) != q]
        if aliases:
            pos = max(next(i for i, e in enumerate(self.inflight) if e["seq"] == self.pending[k])
                      for k in aliases)
            self._wait_through(tr, key, pos, " and ".join(self.term(k) for k in sorted(aliases))
                               + " became an alias of an in-flight result in the branch")
        names = tuple(sorted(k for k, q in pending.items() if self.pending.get(k) != q))
        if names:
            self.waits.append((*key, WgmmaRewrap(tuple(self.term(n) for n in names), need.why,
                                                 tr.line)))
        self.inflight = [dict(e) for e in inflight]
        self.pending = dict(pending)

    # ------------------------------------------------------------ decisions
    def term(self, name: str) -> str:
        """A generated name in KIR terms: a name of the partition is itself."""
        return self.terms.get(name, name)

    def _wait_through(self, tr, key: tuple, pos: int, why: str) -> None:
        """Wait so that inflight[0..pos] are complete (wgmma groups retire in issue order):
        ``pending`` = the wgmmas issued after inflight[pos]. Every name holding a result of a
        completed wgmma, and every register A operand it read, is a dep (rebound to the wait's
        result: later reads are ordered after the wait; registers stay alive until it)."""
        if pos < 0:
            return
        if key[1] is None or key in self.passed:
            where = "a node the kernel IR does not hold" if key[1] is None else \
                f"{key[0]} {key[1]}, which the walk passed before"
            st = tr.statement
            raise TleError(f"internal: schedule-wgmma needs a wgmma wait at {where} ({why})",
                           st.loc if st is not None else NOLOC, check="lowering")
        done = self.inflight[:pos + 1]
        seqs = {e["seq"] for e in done}
        n = len(self.inflight) - 1 - pos
        if tr.in_place_waits:
            # inside a release-only `if` (translate.py st_If): wait without rebinding anything
            # and leave the in-flight list as it is, since the path that skips the `if` waits for
            # nothing
            self.waits.append((*key, WgmmaWait(n, (), why, tr.line)))
            return
        names = [k for k, q in self.pending.items() if q in seqs]
        regs = [r for e in done for r in e["regs"] if r not in names]
        deps = tuple(self.term(d) for d in names + regs)
        self.waits.append((*key, WgmmaWait(n, deps, why, tr.line)))
        self.inflight = self.inflight[pos + 1:]
        for k in names:
            del self.pending[k]

    def _back_edge(self, tr, key: tuple, need: BackEdge) -> None:
        """Keep in flight the longest suffix of the wgmmas the body issued that are still in
        flight and whose results are held only by loop-carried names (defined before the loop);
        wait for the rest (in-order retirement). A wgmma the loop head carried in that no wait of
        the body retired (its result only accumulated into the body's wgmma, or its name rebound:
        ``if t > 0: r.release(t - 1)`` waits in place, then ``acc = tl.dot(.., acc)``) is among
        the rest: the collecting walk, which enters the body with nothing in flight, never sees
        it, and keeping it would add one entry per walk (no fixpoint). A collecting walk records
        what stays in flight (``carried_found``); an emitting walk checks it is what the loop
        head assumed."""
        entry_names = self.entry_names.pop()
        head_seqs = self.head_seqs.pop()

        def names(e):
            return [k for k, q in self.pending.items() if q == e["seq"]]

        keep = 0
        for e in reversed(self.inflight):
            if (e["seq"] in head_seqs or not all(dt for _, dt, _ in e["reg_types"])
                    or not all(n in entry_names for n in names(e))):
                break
            keep += 1
        self._wait_through(tr, key, len(self.inflight) - 1 - keep,
                           "loop back-edge: wait for all but the carried wgmmas")
        got = tuple(CarriedWgmma(tuple(sorted(names(e))),
                                 tuple(sorted({ring_var(k) for k in e["rings"]}, key=str)),
                                 tuple(e["regs"]),
                                 tuple((tuple(sh), dt, layout_attr(lay))
                                       for sh, dt, lay in e["reg_types"]),
                                 e["wgmma"])
                    for e in self.inflight)
        if not tr.emitting:
            self.carried_found.append((need.loop, got))
            return
        if got != tuple(need.carried):
            raise TleError(f"lowering: internal: the wgmmas in flight at a loop back-edge ({got}) "
                           f"differ from the loop head's ({tuple(need.carried)})",
                           need.loop.loc, check="lowering")


def placed_waits(kpart: K.KPartition, waits: list) -> dict[str, tuple]:
    """The waits of one walk of ``kpart`` (``(place, path, WgmmaWait)`` in emission order), each
    given its place and its path relative to the innermost node that carries attributes and
    contains ``path``: carrier path → its waits."""
    carrier_paths = list(kir_paths.carriers(kpart))
    out: dict[str, list] = {}
    for place, path, w in waits:
        carrier, rest = kir_paths.carrier_of(path, carrier_paths)
        out.setdefault(carrier, []).append(replace(w, place=place, path=rest))
    return {c: tuple(ws) for c, ws in out.items()}


def with_waits(kernel: K.Kernel, waits: dict[str, list]) -> K.Kernel:
    """``kernel`` with each partition's waits (partition name → a walk's waits) written on the
    nodes that carry them; a partition always gets ``wgmma_waits`` (() when none are its own),
    and a node that held waits of an earlier run and gets none now is left with ()."""
    node_attrs: dict[int, dict] = {}
    own: dict[str, tuple] = {}
    for kpart in kernel.partitions:
        placed = placed_waits(kpart, waits.get(kpart.name, []))
        own[kpart.name] = placed.pop("", ())
        for path, node in kir_paths.carriers(kpart).items():
            if path and (path in placed or K.get_attr(node, "wgmma_waits") is not None):
                node_attrs[id(node)] = {"wgmma_waits": placed.get(path, ())}
    kernel = with_node_attrs(kernel, node_attrs)
    parts = tuple(K.with_attrs(p, wgmma_waits=own[p.name]) for p in kernel.partitions)
    return replace(kernel, partitions=parts)


def schedule_wgmma(module: KirModule) -> KirModule:
    info = walks.module_info(module)
    low = walks.prepare(info, dict(module.constexprs), module, **module.lowering)
    if low.ctx.wgmma_pipeline:
        ks = walks.assigned(low.kir, "the kernel prologue")
        kt = walks.prologue(low, True, ks)
        loops: dict[int, dict] = {}
        for pinfo, kpart in zip(info.partitions, low.kir.partitions):
            b = walks.bindings(low, kt, kpart)
            solver = walks.assigned(kpart, f"partition '{kpart.name}'")
            tracker = InflightWgmmas()
            walks.partition(low, pinfo, kpart, b.env, False, solver, tracker)
            for loop, found in tracker.carried_found:
                loops[id(loop)] = {"wgmma_carried": found}
        module.kernel = with_node_attrs(module.kernel, loops)
        low = walks.prepare(info, dict(module.constexprs), module, **module.lowering)
    trackers: dict[str, InflightWgmmas] = {}

    def tracker(kpart):
        return trackers.setdefault(kpart.name, InflightWgmmas())

    for _ in walks.emitting_walks(low, tracker):
        pass
    module.kernel = with_waits(module.kernel, {n: t.waits for n, t in trackers.items()})
    return module


@record
class ScheduleWgmma:
    name: str = "schedule-wgmma"
    requires: tuple = ("assign-layouts",)

    def run(self, module: KirModule) -> KirModule:
        return schedule_wgmma(module)
