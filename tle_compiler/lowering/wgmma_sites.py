"""The points of a translation walk where a ``warpgroup_mma_wait`` may go, and what the walk
tells about its wgmmas (docs/lowering.md, "Async wgmma").

Every ``tl.dot`` is an async wgmma; the translator (lowering/translate.py) reports each one it
issues and stops at every point where a wait may be needed, saying what the point needs:

=============================  =============================================================
site (place, path)             need
=============================  =============================================================
after  an expression           :class:`Read`: its value is read in registers (an operand, a
                               value converted to another layout as it is assigned)
before a store / a release     :class:`Overwrite`: shared memory of these rings is written
                               or handed back
before a loop / an ``if``      :class:`Drain`: nothing in flight across the boundary; before
                               an ``if`` that keeps wgmmas in flight: :class:`ReadBoth` (its
                               two branches read these values) or nothing
end    a block                 :class:`Drain` (loop back-edge, end of a branch, end of the
                               partition) or :class:`BackEdge` (a pipelined loop)
after  a pipelined loop        :class:`Drain` (the wgmmas the loop carried)
=============================  =============================================================

``path`` names the node (or statement list) in the partition (lowering/kir_paths.py). A point
whose need is None (a ``release``-only ``if`` of a pipelined loop, a loop exit without carried
wgmmas) may still hold a wait that the KIR gives it.

Two ``after`` points also say what the value read there becomes, reported just before the point
itself (so a wait decided then goes before the point's own): the right-hand side of an
assignment about to be bound to its name (:meth:`WgmmaWaits.assigning`: an accumulator reset
in a branch), and a ``tl.dot``'s A operand about to be rebuilt as its register A operand
(:meth:`WgmmaWaits.rebuilding_a_operand`: the carried wgmma of the same dot still reads the
previous one).

The walk hands these to a :class:`WgmmaWaits`: the base does nothing (assign-layouts' walk, the
kernel prologue); schedule-wgmma's tracker (lowering/schedule_wgmma.py) decides the waits there
and writes them into the KIR; emit-gluon's printer (lowering/scheduled_waits.py) prints the waits
the KIR holds at each point it passes.
"""

from __future__ import annotations


from ..ir.record import record
from .values import V


@record
class Read:
    """The value of the expression is read in registers."""

    value: V


@record
class ReadBoth:
    """Before an ``if`` that keeps wgmmas in flight (translate.py st_If) and has an ``else``:
    ``values`` are read in both branches. They are waited for before the ``if``, not in each
    branch: then neither branch rebinds an in-flight result, so neither has to make it in flight
    again at its end, and both leave the ``if`` with it retired. (A wait in each branch, the
    result made in flight again at the branch's end and waited for once more after the ``if``
    leaves non-wgmma definitions of an accumulator inside a wgmma pipeline stage, and ptxas then
    serializes every wgmma of the kernel: its warning C7515.)"""

    values: tuple


@record
class Overwrite:
    """Shared memory of ``rings`` (:func:`ring_key` pairs; ``(None, None)``: a buffer the
    lowering cannot name) is about to be written or handed back."""

    rings: frozenset
    why: str


# ----------------------------------------------------------------------------------------------
# Which slot of a ring a wgmma reads and a store or release touches.
#
# A ring is a pipe field's [capacity, ...] allocation; an access picks the slot ``stage`` of it,
# the event's infer-stages attribute: ``index % C`` with the index affine in the partition's loop
# variables and params (ir/attrs.py), or the int 0 of a capacity-1 ring. Keys pair the ring
# variable with that stage (None: a stage the walk cannot tell, such as a wgmma carried across a
# pipelined loop's back-edge, whose stage was computed in an earlier iteration). Two accesses of
# one ring may overlap unless their stages provably differ: both are taken in the same iteration
# of every loop around them (a loop drains its wgmmas at entry and at its back-edge, except those
# a pipelined loop carries, whose stage is unknown), so their indices' variables hold the same
# values, and ``(c1 + Σ a·v) % C`` and ``(c2 + Σ a·v) % C`` differ exactly when C does not
# divide c1 - c2. So a release of tile k - 1 waits for the previous tile's P·V but not for the
# QK just issued on tile k (docs/lowering.md, "Async wgmma").

def ring_key(var, stage=None) -> tuple:
    """The key of an access to ring ``var`` (None: a buffer the lowering cannot name) at
    ``stage`` (an infer-stages attribute, None: unknown)."""
    return (var, stage if var is not None else None)


def ring_var(key: tuple):
    """The ring variable of a key (what a pipelined loop's CarriedWgmma records)."""
    return key[0]


def _stage_form(stage):
    """``(terms, const, C)`` of a stage ``AffineIndex % C``, ``((), s, None)`` of a constant
    stage, None for anything else."""
    from ..ir.attrs import AffineIndex, Mod

    if isinstance(stage, int) and not isinstance(stage, bool):
        return ((), stage, None)
    if isinstance(stage, Mod) and isinstance(stage.operand, AffineIndex) and stage.k > 0:
        return (tuple(stage.operand.terms), stage.operand.const, stage.k)
    return None


def stages_differ(a, b) -> bool:
    """Whether two stages of one ring are provably different slots."""
    fa, fb = _stage_form(a), _stage_form(b)
    if fa is None or fb is None:
        return False
    (ta, ca, ka), (tb, cb, kb) = fa, fb
    if ka is None and kb is None:
        return ca != cb
    if ka is None or kb is None:  # a constant slot against an index: only a constant index
        k = ka if ka is not None else kb
        t, c, s = (ta, ca, cb) if ka is not None else (tb, cb, ca)
        return not t and c % k != s
    return ka == kb and ta == tb and (ca - cb) % ka != 0


def rings_overlap(reads, writes) -> bool:
    """Whether an access to ``writes`` may touch shared memory a wgmma reading ``reads`` reads
    (both sets of :func:`ring_key` pairs): a buffer neither names, or one ring at stages not
    provably different."""
    for rv, rs in reads:
        for wv, ws in writes:
            if rv is None and wv is None:
                return True
            if rv is not None and rv == wv and not stages_differ(rs, ws):
                return True
    return False


@record
class Drain:
    """No wgmma may stay in flight past this point."""

    why: str


@record
class BackEdge:
    """The end of a pipelined loop's body: all but the wgmmas the loop carries retire
    (``carried``: the loop's ``wgmma_carried``, as the translator read it)."""

    loop: object
    carried: tuple


class BranchEnd:
    """The end of a branch of an ``if`` that keeps wgmmas in flight (translate.py st_If): what
    the branch rebound of the results in flight at the ``if`` (``snapshot``: the walk's state
    there) is made in flight again, and the walk goes on from the state before the branch."""

    def __init__(self, snapshot, why: str):
        self.snapshot, self.why = snapshot, why


class WgmmaWaits:
    """What a walk does with its wgmmas: nothing (the base, for walks that only collect layouts)."""

    #: whether the walk calls :meth:`at` (the translator skips naming the site otherwise)
    active = False

    def issued(self, tr, path: str, result: str, a_operand, rings: frozenset,
               reg_types: list) -> None:
        """The wgmma of the ``tl.dot`` at ``path`` was issued: its result is the generated name
        ``result``, its register A operand ``a_operand`` (None: A is in shared memory)."""

    def renamed(self, tr, value: V, name: str, moved: bool = False) -> None:
        """``value`` was assigned to the generated name ``name``; ``moved``: this was the last
        read of the name ``value`` holds (translate.py ``moves_a_temporary``)."""

    def assigning(self, tr, path: str, name: str, value) -> None:
        """The tensor of the assignment's right-hand side ``value`` (the KIR expression at
        ``path``) is about to be bound to the generated name ``name``; reported just before the
        point ``("after", path)``. The old value of ``name`` dies here: a wgmma still in flight
        that writes it (the accumulator, reset in a branch: ``if t % 4 == 0: acc =
        tl.zeros(...)``) must retire before new registers take its place."""

    def rebuilding_a_operand(self, tr, dot_path: str, path: str) -> None:
        """The A operand of the ``tl.dot`` at ``dot_path`` (the KIR expression at ``path``) was
        read in registers and is about to be converted into that wgmma's register A operand;
        reported just before the point ``("after", path)``. The registers of the previous
        operand of the same ``tl.dot`` may still be read by its wgmma, carried in flight across
        a pipelined loop's back-edge, which must retire before they change."""

    def accumulates(self, tr, node, acc: V, converted: bool) -> None:
        """``acc`` is the accumulator of the ``tl.dot`` ``node`` (``converted``: to another
        layout, which would read its registers)."""

    def loop_head(self, tr, loop, carried: tuple) -> None:
        """A pipelined loop's body begins with ``carried`` (CarriedWgmma attributes) in flight."""

    def at(self, tr, place: str, path: str, need) -> None:
        """The walk is at ``(place, path)``, which needs ``need`` (None: nothing)."""

    def finish(self, tr, function) -> None:
        """The walk of ``function`` (a KPartition) is done."""

    def is_pending(self, v: V) -> bool:
        """Whether ``v`` is the result of a wgmma that may still be in flight here."""
        return False

    def snapshot(self):
        """The walk's wgmma state at an ``if`` that keeps wgmmas in flight (BranchEnd)."""
        return None
