"""emit-gluon's side of the wgmma waits: print, at each point of the walk, the waits
schedule-wgmma wrote there (lowering/schedule_wgmma.py decides them; nothing here tracks what is
in flight).

A partition's waits are the ``wgmma_waits`` attributes of its nodes (the partition, its loops,
operations and events); each names its point by ``place`` and a ``path`` relative to the node
that carries it (ir/attrs.py WgmmaWait). Their dependencies are in KIR terms: a name of the
partition is the generated name of the same spelling (the translator keeps the KIR's names), ``result
of PATH`` / ``A operand of PATH`` the generated name of the ``tl.dot`` at PATH's result or
register A operand, known once the walk has issued it (or, for a wgmma a pipelined loop carries,
from the loop's ``wgmma_carried``). Every wait must be reached: one whose point the walk never
passes is an internal error, not a wait left out.
"""

from __future__ import annotations

import re

from ..diagnostics import TleError
from ..ir import kernel as K
from ..ir.attrs import WgmmaRewrap, WgmmaWait
from . import kir_paths
from .wgmma_sites import WgmmaWaits

PLACES = ("before", "after", "end")
#: a value the kernel does not name, in a wait's deps or why
_TERM = re.compile(r"(?:result|A operand) of [\w.\[\]]+")


class ScheduledWaits(WgmmaWaits):
    """The waits schedule-wgmma wrote into one partition, printed where the walk reaches them."""

    active = True

    def __init__(self, kpart: K.KPartition):
        if K.get_attr(kpart, "wgmma_waits") is None:
            raise TleError(f"internal: partition '{kpart.name}' reaches emit-gluon without "
                           f"schedule-wgmma's wgmma_waits", kpart.loc, check="lowering")
        self.partition = kpart
        self.sites: dict[tuple, list[WgmmaWait]] = {}  # (place, path) -> waits, in order
        for path, node in kir_paths.carriers(kpart).items():
            for w in K.get_attr(node, "wgmma_waits", ()) or ():
                if not isinstance(w, (WgmmaWait, WgmmaRewrap)) or w.place not in PLACES:
                    raise TleError(f"internal: partition '{kpart.name}': {w!r} in the "
                                   f"wgmma_waits of {path or 'the partition'} is not a WgmmaWait "
                                   f"or WgmmaRewrap placed {' / '.join(PLACES)}", kpart.loc,
                                   check="lowering")
                self.sites.setdefault((w.place, kir_paths.join(path, w.path)), []).append(w)
        self.names: dict[str, str] = {}  # "result of PATH" / "A operand of PATH" -> generated

    def issued(self, tr, path, result, a_operand, rings, reg_types) -> None:
        self.names[f"result of {path}"] = result
        if a_operand is not None:
            self.names[f"A operand of {path}"] = a_operand

    def loop_head(self, tr, loop, carried: tuple) -> None:
        for c in carried:
            for r in c.regs:
                self.names[f"A operand of {c.wgmma}"] = r

    def at(self, tr, place: str, path, need) -> None:
        for w in self.sites.pop((place, path), ()):
            why = _TERM.sub(lambda m: self.names.get(m.group(0), m.group(0)), w.why)
            if isinstance(w, WgmmaRewrap):
                for n in (self._generated(tr, d, w) for d in w.names):
                    tr.emit(f"{n} = warpgroup_mma_init({n})  # {why}")
                continue
            deps = tuple(self._generated(tr, d, w) for d in w.deps)
            tr.print_wait(w.pending, deps, why)

    def finish(self, tr, kpart) -> None:
        if self.sites:
            left = "; ".join(f"{w.why!r} {place} {path}" for (place, path), ws in self.sites.items()
                             for w in ws)
            raise TleError(f"internal: partition '{kpart.name}': schedule-wgmma's wgmma waits at "
                           f"points the lowering never reaches (the IR changed after it ran?): "
                           f"{left}", kpart.loc, check="lowering")

    def _generated(self, tr, dep: str, w: WgmmaWait) -> str:
        """The generated name of a dependency (KIR terms, ir/attrs.py WgmmaWait)."""
        if _TERM.fullmatch(dep):
            name = self.names.get(dep)
            if name is None:
                raise TleError(f"internal: partition '{self.partition.name}': the wait "
                               f"{w.why!r} depends on the {dep}, which the walk has not issued "
                               f"there", self.partition.loc, check="lowering")
            return name
        if dep not in tr.env:
            raise TleError(f"internal: partition '{self.partition.name}': the wait {w.why!r} "
                           f"depends on '{dep}', which names nothing there",
                           self.partition.loc, check="lowering")
        return tr.prefix + dep
