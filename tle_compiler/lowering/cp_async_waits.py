"""Which cp.async copies a partition may still have in flight, and where it must wait for them.

A cp.async gather (``tl.store(local_ptr(slot.f), tl.load(ptrs))``) lands in shared memory
asynchronously. The commit's per-thread arrive publishes it to the reader, but the writer may
touch its slot again inside its acquire..commit window (docs/semantics.md, rule 7) and nothing
orders that access after the copy: a read sees the old bytes, a store or a second gather into the
same field may be overwritten by the first copy landing late (PTX gives two cp.async copies no
order without a wait). So before such an access the partition commits its copies as a group and
waits for all of them (``cp.async.commit_group``; ``cp.async.wait_group 0``).

The state is a set of copies that may be in flight, each ``(ring var, window)``: the ring the copy
fills, and the acquire (one number per acquire the walk translates) whose slot it fills. A read or
a register/TMA store of a ring waits for any copy into that ring; a gather waits only for an
earlier copy of its own window (a gather into the next window's slot of the same ring is a
different buffer: the pipelined producer issues it without waiting). Joins take the union, and
only a wait empties the set (a commit does not: the writer may hold several slots).

Loops: the body's copies reach its head over the back-edge, but the walk translates the body once,
so what they are is known only at its end, whatever the spelling of the pointers that named the
rings (a ``dst = local_ptr(slot.f)`` held in a name, a helper's parameter, a tuple). The head adds
a token standing for the loop's back-edge; an access that finds no copy of its ring in the set but
a token emits a placeholder line. At the loop's end the token resolves to the set at the body's
end (its copies, and the tokens of enclosing loops still open) and every placeholder waiting on it
becomes the wait if its ring is among them, or disappears once no token is left. A gather's own
window is acquired anew each iteration of a loop around its acquire, so for a gather only the
tokens of loops opened after that acquire count. A placeholder that turns into a wait leaves the
tracked set as it was (a larger set than the real one: at worst a later wait more, never one less).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(eq=False)
class BackEdge:
    """The copies a loop's back-edge brings to its head (resolved at the loop's end); ``serial``
    orders tokens by when their loop was entered."""

    serial: int


@dataclass(eq=False)
class Deferred:
    """A wait that depends on loops not yet translated to their end: ``marker`` is its
    placeholder line, ``ring``/``window`` the access (window None: any copy into the ring),
    ``tokens`` the open loops whose back-edges may bring such a copy."""

    marker: str
    ring: str
    window: Optional[int]
    born: int
    tokens: set = field(default_factory=set)
    what: str = ""
    #: a wait for global writes (``ring`` None): the placeholder before it in the same
    #: straight-line code with no gather between, whose wait (if it fires) already waited for
    #: every copy, with the barrier Triton places before the shared-memory access it guards
    covered_by: Optional["Deferred"] = None
    fired: bool = False


class CpAsyncInFlight:
    """The partition's cp.async copies that may be in flight; emits the waits through the
    translator ``tr`` (its ``emit`` and ``lines``)."""

    def __init__(self, tr) -> None:
        self.tr = tr
        self.pending: set = set()  # (ring var, window) pairs and BackEdge tokens
        self.deferred: list[Deferred] = []
        self.window_born: dict[int, int] = {}  # acquire -> serial of the next loop token
        self._serial = 0
        self._windows = 0
        self._markers = 0
        #: the latest placeholder in the current straight-line code, no gather since (None
        #: after a gather, a loop's head or end, a join)
        self._last: Optional[Deferred] = None

    # ------------------------------------------------------------- what the walk reports
    def new_window(self) -> int:
        """An acquire: the number of its window (its slot's gathers carry it)."""
        self._windows += 1
        self.window_born[self._windows] = self._serial
        return self._windows

    def gathered(self, ring: str, window: Optional[int]) -> None:
        self.pending.add((ring, window))
        self._last = None

    def access(self, ring: Optional[str], what: str, window: Optional[int] = None,
               any_ring: bool = False) -> None:
        """Before the partition touches ``ring``: wait if a copy into it may be in flight (for a
        gather, ``window``: a copy of that window only). ``any_ring``: a copy into any ring
        (``ring`` None)."""
        if ring is None and not any_ring:
            return
        if any(self._matches(x, ring, window) for x in self.pending
               if not isinstance(x, BackEdge)):
            self._emit_wait(ring, what)
            self.pending.clear()
            return
        born = self.window_born.get(window, 0) if window is not None else 0
        tokens = {x for x in self.pending if isinstance(x, BackEdge) and x.serial >= born}
        if tokens:
            self._markers += 1
            marker = f"#<cp.async wait {self._markers}>"
            self.tr.emit(marker)
            covered = self._last if any_ring and self._last is not None \
                and self._last.tokens == tokens else None
            self._last = Deferred(self.tr.lines[-1], ring, window, born, tokens, what, covered)
            self.deferred.append(self._last)

    def access_global(self, what: str) -> None:
        """Before the partition writes global memory (a store, an atomic): wait if any copy may
        be in flight. A copy reads its global source asynchronously, and nothing orders that
        read before a later write of the same thread or of another thread of the partition: a
        store zeroing the source after its gather (``tl.store(ptrs, 0.0)``, which Triton runs
        after the load completed) could be copied in place of the data."""
        self.access(None, what, any_ring=True)

    def loop_head(self) -> BackEdge:
        self._last = None
        token = BackEdge(self._serial)
        self._serial += 1
        self.pending.add(token)
        return token

    def loop_end(self, token: BackEdge, at_head: set) -> None:
        """The body was translated: the back-edge brings what is in flight at its end."""
        self._last = None
        back = self.pending - {token}
        self._resolve(token, back)
        self.pending = (at_head | back) - {token}  # (the loop may run no iteration)

    def snapshot(self) -> set:
        return set(self.pending)

    def join(self, *states: set) -> None:
        self._last = None
        self.pending = set().union(*states)

    # ------------------------------------------------------------- resolution
    @staticmethod
    def _matches(item, ring: Optional[str], window: Optional[int]) -> bool:
        """Whether in-flight copy ``item`` is one into ``ring`` (None: any ring) of ``window``
        (None: any window)."""
        return (ring is None or item[0] == ring) and (window is None or item[1] == window)

    def _resolve(self, token: BackEdge, back: set) -> None:
        for d in [d for d in self.deferred if token in d.tokens]:
            d.tokens.discard(token)
            fire = False
            for x in back:
                if isinstance(x, BackEdge):
                    if x.serial >= d.born:
                        d.tokens.add(x)
                elif self._matches(x, d.ring, d.window):
                    fire = True
            if fire or not d.tokens:
                self.deferred.remove(d)
                d.fired = fire and not (d.covered_by is not None and d.covered_by.fired)
                self._place(d, d.fired)

    def _place(self, d: Deferred, wait: bool) -> None:
        lines = self.tr.lines
        i = next(i for i in range(len(lines) - 1, -1, -1) if lines[i] == d.marker)
        if not wait:
            del lines[i]
            return
        ind = d.marker[:len(d.marker) - len(d.marker.lstrip())]
        lines[i:i + 1] = [ind + text for text in self._wait_lines(d.ring, d.what)]

    def _emit_wait(self, ring: str, what: str) -> None:
        for text in self._wait_lines(ring, what):
            self.tr.emit(text)

    @staticmethod
    def _wait_lines(ring: str, what: str) -> list[str]:
        if ring is None:
            # each thread waits for its own copies; the barrier orders every thread's write
            # after all of them (Triton's barrier pass orders shared memory only)
            return ["async_copy.commit_group()",
                    f"async_copy.wait_group(0)  # the cp.async copies read their global sources "
                    f"before the partition {what}",
                    "gl.thread_barrier()"]
        return ["async_copy.commit_group()",
                f"async_copy.wait_group(0)  # the cp.async copies into {ring} land before the "
                f"partition {what} it"]
