"""z3 for the memory-race check (frontend/global_races.py, race_order.py): the terms of one check
in a z3 context of their own, and each query's budget in z3's resource units, so that the
verdict is a function of the kernel, not of the machine's load or of what the process did before.

**A context of its own.** z3 numbers the terms of a context in the order they are made, and its
search follows those numbers (which atom it splits on first, which instance it tries); in z3's
global context a query would be another query after unrelated terms made earlier in the process
(another kernel, an earlier test), and take another path, decided or not. Each check makes its
terms in a fresh context (:class:`InContext`, the check's ``model.z3``).

**Budgets in resource units.** z3 counts the work of a check in resource units (its ``rlimit``):
the same count for the same query in the same context, however busy the machine is. A check
given ``rlimit`` N stops, unknown, once it has spent N units more than the context had spent
when it started (the limit is relative to the context's count, not a total), and the solver's
statistics (``rlimit count``) give the context's count, before the check and after it; what a
check spent is their difference. The budgets (global_races.ATTEMPTS, PAIR_RLIMIT,
KERNEL_RLIMIT, race_order.MONOTONE_RLIMIT) are in units, :data:`UNITS_PER_MS` to a millisecond
of z3's time on these queries on an idle machine. A wall-clock limit of :data:`BACKSTOP` times
a budget's milliseconds stays on each check, as a safety net against a query whose work z3
counts slowly (a runaway): its hit depends on the machine, and is reported as such
(:data:`BACKSTOP_HIT`), apart from a budget spent.
"""

from __future__ import annotations

import time

#: z3's resource units to a millisecond of z3's time on an idle machine, on the long queries of
#: the memory-race check (nonlinear integer arithmetic, quantified hand-offs), those a budget
#: stops: a budget of ``ms`` milliseconds is ``ms * UNITS_PER_MS`` units. (z3 counts units at
#: different rates on different queries; a short query's rate is lower, and it is far inside
#: any budget.)
UNITS_PER_MS = 5000
#: The wall-clock safety net of a check: this many times its budget's milliseconds
BACKSTOP = 10
#: :meth:`Budget.check`'s word for an unknown answer where the wall-clock safety net stopped z3
BACKSTOP_HIT = "backstop"
#: ... where the check spent its resource units
SPENT = "spent"


class Unproved(Exception):
    """z3 could not decide a query of the memory-race check (a nonlinear term, its resource
    budget, the wall-clock safety net): the kernel is not proved."""

    def __init__(self, message: str, loc):
        super().__init__(message)
        self.message, self.loc = message, loc


def backstop_words(limit: int) -> str:
    """What a hit of the wall-clock safety net of a check of ``limit`` units says."""
    return (f"z3 ran past the wall-clock safety limit of a query, "
            f"{BACKSTOP * limit / UNITS_PER_MS / 1000:g} s, {BACKSTOP} times its budget of z3's "
            f"time: a runaway query, or an overloaded machine")


def units(ms: float) -> int:
    """The resource units of a budget of ``ms`` milliseconds."""
    return int(ms * UNITS_PER_MS)


class InContext:
    """The z3 module with its constructors bound to the context ``ctx``: ``model.z3`` of one
    check. Every function that makes a term from no term (a symbol, a number, a conjunction of
    none) or a solver takes the context; the others (``Not``, ``If``, ``simplify``, ...) take it
    from their arguments and pass through."""

    def __init__(self, z3, ctx=None):
        self._z3 = z3
        self.ctx = ctx if ctx is not None else z3.Context()

    def __getattr__(self, name):
        return getattr(self._z3, name)

    def Int(self, name):
        return self._z3.Int(name, self.ctx)

    def Ints(self, names):
        return self._z3.Ints(names, self.ctx)

    def Bool(self, name):
        return self._z3.Bool(name, self.ctx)

    def IntVal(self, v):
        return self._z3.IntVal(v, self.ctx)

    def BoolVal(self, b):
        return self._z3.BoolVal(b, self.ctx)

    def And(self, *args):
        return self._z3.And(*args, self.ctx)

    def Or(self, *args):
        return self._z3.Or(*args, self.ctx)

    def Solver(self):
        return self._z3.Solver(ctx=self.ctx)


def spent_so_far(solver) -> int:
    """The resource units the solver's context has spent (z3's statistic ``rlimit count``)."""
    stats = solver.statistics()
    for key in stats.keys():
        if key == "rlimit count":
            return stats.get_key_value(key)
    return 0


class Budget:
    """The resource units the checks of one kernel may spend together (``total``), and the
    wall-clock safety net of them all (``BACKSTOP`` times ``total``'s milliseconds)."""

    def __init__(self, total: int):
        self.total = total
        self.spent = 0
        self.deadline = time.monotonic() + BACKSTOP * total / UNITS_PER_MS / 1000

    def left(self) -> int:
        """The units the kernel's checks may still spend (0 or less: none)."""
        return self.total - self.spent

    def wall_left_ms(self) -> int:
        """The milliseconds the kernel's safety net leaves (0 or less: none)."""
        return int((self.deadline - time.monotonic()) * 1000)

    def check(self, solver, limit: int, solve=None):
        """``solve(solver)`` (``solver.check()``) with ``limit`` resource units at most, and
        no more than the kernel has left: z3's answer and, where it is unknown, why
        (:data:`SPENT`, :data:`BACKSTOP_HIT`, or z3's own reason). The units it spent are the
        kernel's. ``limit`` is above 0 (z3 reads an rlimit of 0 as none)."""
        limit = max(1, min(limit, self.left()))
        wall = max(1, min(int(BACKSTOP * limit / UNITS_PER_MS), self.wall_left_ms()))
        solver.set("rlimit", limit)
        solver.set("timeout", wall)
        before = spent_so_far(solver)
        got = solver.check() if solve is None else solve(solver)
        used = spent_so_far(solver) - before
        self.spent += max(used, 0)
        import z3

        if got != z3.unknown:
            return got, None
        if used >= limit:
            return got, SPENT
        reason = solver.reason_unknown()
        if reason == "timeout":
            return got, BACKSTOP_HIT
        return got, reason
