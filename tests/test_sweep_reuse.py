"""A sweep is reused only for the same check (passes/sweep.py): an equal program (read again
from the same text), params, bound and budget. A reused sweep gives the same verdict and
diagnostics as a fresh one; any difference in the check, even a moved location, runs it afresh."""

from __future__ import annotations

from pathlib import Path

import pytest

from tle_compiler.ir.parser import parse_module
from tle_compiler.passes import run_pipeline
from tle_compiler.passes import sweep as sweep_mod

CASES = Path(__file__).resolve().parent / "cases"


def program(name: str, shift_lines: int = 0):
    text = (CASES / name).read_text()
    # blank lines in front move every location, leaving the structure as it is
    return parse_module("\n" * shift_lines + text, str(CASES / name)).kernels[0]


def diagnostics(ctx):
    return [(d.loc.line, d.message) for d in ctx.diagnostics]


@pytest.fixture(autouse=True)
def fresh_cache():
    sweep_mod._RECENT.clear()
    yield
    sweep_mod._RECENT.clear()


@pytest.mark.parametrize("name", ["acquire_ahead.ok.pipe", "acquire_ahead.bad.pipe",
                                  "coefficient_nest.bad.pipe"])
def test_reused_sweep_reports_as_a_fresh_one(name):
    first = run_pipeline(program(name))
    assert len(sweep_mod._RECENT) == 1
    again = run_pipeline(program(name))  # read again: an equal program, another object
    assert again.sweep is first.sweep
    sweep_mod._RECENT.clear()
    fresh = run_pipeline(program(name))
    assert fresh.sweep is not first.sweep
    assert again.verdict() == fresh.verdict()
    assert diagnostics(again) == diagnostics(fresh)
    # the sweep's plan and problems name lines: a moved program is checked again
    moved = run_pipeline(program(name, shift_lines=3))
    assert moved.sweep is not fresh.sweep
    assert moved.verdict().kind == fresh.verdict().kind
    assert len(diagnostics(moved)) == len(diagnostics(fresh))
    assert all(a == b + 3 for (a, _), (b, _) in zip(diagnostics(moved), diagnostics(fresh)))


def test_a_different_check_runs_again():
    base = run_pipeline(program("acquire_ahead.ok.pipe"))
    other = run_pipeline(program("acquire_ahead.bad.pipe"))
    assert other.sweep is not base.sweep
    assert other.verdict() != base.verdict()
    bounded = run_pipeline(program("acquire_ahead.ok.pipe"), bound=3)
    assert bounded.sweep is not base.sweep
    small = run_pipeline(program("acquire_ahead.ok.pipe"), budget=10)
    assert small.sweep is not base.sweep
