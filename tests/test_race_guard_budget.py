"""The memory-race check's proof that a run-time divisor is neither 0 nor -1
(frontend/race_terms._implied) spends the kernel's z3 budget (race_solver.Budget), as every
query of the check does: a kernel of many run-time divisors cannot keep tle-dump busy past
the budget it states, and where no units are left the divisor is not taken as proved (each
quotient any value where it may fail), so a verdict never rests on a proof that was not run."""

from __future__ import annotations

from tle_compiler.frontend import race_solver, race_terms

from .adversarial_support import dump, expect
from .test_adversarial_verdicts_75 import two_stores

#: `s // d` of the two partitions one value where `d >= 1` is proved: verified
SHARED = two_stores("tl.store(y_ptr + s // d, 1.0)", "tl.store(y_ptr + s // d + 1, 2.0)") \
    .replace("    kv = tle.pipe", "    tle.assume(d >= 1)\n    kv = tle.pipe")


def test_the_guard_proof_is_charged_to_the_kernel_budget(tmp_path, capsys, monkeypatch):
    calls: list[int] = []
    check = race_solver.Budget.check

    def counting(self, solver, limit, solve=None):
        calls.append(limit)
        return check(self, solver, limit, solve)

    monkeypatch.setattr(race_solver.Budget, "check", counting)
    code, err = dump(tmp_path, capsys, SHARED)
    expect(code, err, "verified")
    assert race_terms.GUARD_RLIMIT in calls, calls


def test_no_units_left_keeps_the_verdicts(tmp_path, capsys, monkeypatch):
    """With no units left for the guard's query, each quotient is `If(d not in {0, -1}, q,
    any)`: the pair's own query still reads `d >= 1` (verified) and `d >= 0` (rejected at
    d = 0) as with the guard proved; only the shortcut is lost."""
    left = race_solver.Budget.left

    def spent_on_guards(self):
        import inspect

        return 0 if inspect.stack()[1].function == "_implied" else left(self)

    monkeypatch.setattr(race_solver.Budget, "left", spent_on_guards)
    code, err = dump(tmp_path, capsys, SHARED)
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, SHARED.replace("d >= 1", "d >= 0"))
    expect(code, err, ("rejected", "kernel.py:28: error: partitions 'produce'", "[memory-race]"))
