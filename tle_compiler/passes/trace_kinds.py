"""The event kinds of an instance's traces and the Problem a broken rule is reported as: shared by
the instance checker (passes/instances.py) and the rules it calls (passes/named_release.py)."""

from __future__ import annotations

from typing import Optional

from ..ir.record import record

ACQ, COMMIT, CLOSE, WAIT, RELEASE, WRITE, READ, READBACK, MAY_WRITE = range(9)
# The fast path's kind of a write whose field some readback of the program reads: it also notes
# the window it wrote in (kept apart from WRITE so programs without readbacks pay nothing)
TRACKED_WRITE = 9
_KIND = {"acquire": ACQ, "commit": COMMIT, "close": CLOSE, "wait": WAIT, "release": RELEASE}


@record
class Problem:
    """A rule broken at ``at`` = (partition number, position in its trace); ``related`` points at
    the other event involved (e.g. the release that closed a window), ``notes`` are extra
    ``(at, text)`` lines (a deadlock's cycle)."""

    check: str
    message: str
    at: tuple[int, int]
    related: Optional[tuple[int, int]] = None
    notes: tuple = ()
