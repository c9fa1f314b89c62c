"""The memory-race check's budgets are z3 resource units, not wall-clock time
(frontend/race_solver.py): a verdict is a function of the kernel, however loaded the machine and
whatever the process made in z3 before. Adversarial round 34's counter over two loops
(tests/test_adversarial_verdicts_34.py TILES), one query of which z3 decides in about 420,000
units (about 0.1 s of z3's time on an idle machine), came back `unknown` in a CI run beside
another heavy process while the budgets were milliseconds, and its kernel "not proved" where it
is verified on an idle machine."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tle_compiler.frontend import global_races, race_solver

from .adversarial_support import dump, expect
from .test_adversarial_verdicts_34 import RACE, TILES

#: round 34's kernel whose reader loads its own row (verified: the hard query is unsat) and the
#: one whose reader loads the next tile's first row at kk == 3 (a race)
OWN = TILES.replace("READ", "u = tl.load(y_ptr + it * 64 + offs)")
NEXT = TILES.replace(
    "READ", "if kk == 3:\n                u = tl.load(y_ptr + (it + 1) * 64 + offs)")
NEXT_RACE = RACE + ("(store at line 19 at tile = 1, kk = 0)",
                    "(load at line 34 at tile = 0, kk = 3)")


@pytest.fixture
def spent(monkeypatch):
    """The resource units each kernel's checks spent (race_solver.Budget), in order."""
    got = []
    check = race_solver.Budget.check

    def counting(self, *args, **kwargs):
        out = check(self, *args, **kwargs)
        if not got or got[-1][0] is not self:
            got.append([self, 0])
        got[-1][1] = self.spent
        return out

    monkeypatch.setattr(race_solver.Budget, "check", counting)
    return got


def test_a_clock_running_fast_changes_no_verdict(tmp_path, capsys, monkeypatch):
    """A machine so loaded that every reading of the clock is 25 s after the one before (with
    budgets in milliseconds the kernel's 60 s were spent by the third query, and the kernel was
    "not proved"): the same verdicts, the race at the same iterations."""
    real = time.monotonic
    jumps = []

    def fast():
        jumps.append(1)
        return real() + 25.0 * len(jumps)

    monkeypatch.setattr(time, "monotonic", fast)
    code, err = dump(tmp_path, capsys, OWN)
    expect(code, err, "verified")
    assert len(jumps) > 3  # the clock was read, and ran past 60 s
    code, err = dump(tmp_path, capsys, NEXT)
    expect(code, err, NEXT_RACE)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="CPU affinity is Linux's")
def test_z3_slowed_down_changes_no_verdict(tmp_path, capsys, spent, monkeypatch):
    """The check sharing its core with three busy processes (z3 a quarter of the core, or less
    beside a loaded test run): the same verdict, with the same resource units spent as alone.
    The wall-clock safety net is moved out of the way: on a machine slow enough it stops a short
    attempt, which is what it is for, and the units then differ (the verdict does not)."""
    monkeypatch.setattr(race_solver, "BACKSTOP", 10_000)
    code, err = dump(tmp_path, capsys, OWN)
    expect(code, err, "verified")
    alone = [n for _, n in spent]
    spent.clear()
    cpus = os.sched_getaffinity(0)
    cpu = min(cpus)
    busy = [subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, "
                              f"{{{cpu}}})\nwhile True:\n    pass"]) for _ in range(3)]
    try:
        os.sched_setaffinity(0, {cpu})
        code, err = dump(tmp_path, capsys, OWN)
    finally:
        os.sched_setaffinity(0, cpus)
        for p in busy:
            p.kill()
            p.wait()
    expect(code, err, "verified")
    assert [n for _, n in spent] == alone
    assert max(alone) > 400_000  # the hard query was asked, and decided in its budget


def test_the_units_spent_do_not_depend_on_what_the_process_made_before(tmp_path, capsys,
                                                                         spent):
    """Terms of z3's global context, and another kernel's check, before the kernel's check: its
    queries spend the same units (each check's terms are of a context of its own)."""
    import z3

    code, err = dump(tmp_path, capsys, OWN)
    expect(code, err, "verified")
    first = [n for _, n in spent]
    spent.clear()
    xs = z3.Ints(" ".join(f"a:y_ptr inc0x.n{i} lane#{i} B.n{i}" for i in range(40)))
    s = z3.Solver()
    s.add(*(x * y > 3 for x, y in zip(xs, xs[1:])))
    s.check()
    code, err = dump(tmp_path, capsys, NEXT)
    expect(code, err, NEXT_RACE)
    spent.clear()
    code, err = dump(tmp_path, capsys, OWN)
    expect(code, err, "verified")
    assert [n for _, n in spent] == first


def test_a_query_past_its_resource_budget_is_not_proved(tmp_path, capsys, monkeypatch):
    """The hard query needs about 420,000 units with z3's default seed: in 2,000,000 it is
    decided, in 50,000 it is not proved (exit 3), the budget named; the same on every run."""
    monkeypatch.setattr(global_races, "ATTEMPTS", ())
    monkeypatch.setattr(global_races, "PAIR_RLIMIT", 2_000_000)
    code, err = dump(tmp_path, capsys, OWN)
    expect(code, err, "verified")
    monkeypatch.setattr(global_races, "PAIR_RLIMIT", 50_000)
    for _ in range(2):
        code, err = dump(tmp_path, capsys, OWN)
        expect(code, err, ("unknown", "was not decided (z3 spent the budget of a query, 50000 "
                                      "resource units"))


def test_the_kernels_resource_budget(tmp_path, capsys, monkeypatch):
    """The kernel's queries share KERNEL_RLIMIT units: past them it is not proved, the kernel's
    budget named, wherever they run out (here in the hard query)."""
    monkeypatch.setattr(global_races, "KERNEL_RLIMIT", 300_000)
    code, err = dump(tmp_path, capsys, OWN)
    expect(code, err, ("unknown", "the memory-race check's budget for the kernel (300000 z3 "
                                  "resource units"))


def test_the_wall_clock_safety_net_is_named(tmp_path, capsys, monkeypatch):
    """The wall-clock limits stay only as a safety net against a runaway query: a hit says so,
    apart from a budget spent (here a net of 1 ms a check, and of none for the kernel)."""
    monkeypatch.setattr(race_solver.Budget, "wall_left_ms", lambda self: 1)
    code, err = dump(tmp_path, capsys, OWN)
    expect(code, err, ("unknown", "was not decided (z3 ran past the wall-clock safety limit of "
                                  "a query"))
    assert "spent the budget" not in err
    monkeypatch.setattr(race_solver.Budget, "wall_left_ms", lambda self: 0)
    code, err = dump(tmp_path, capsys, OWN)
    expect(code, err, ("unknown", "ran past its wall-clock safety limit for the kernel"))
