"""The fast path resumed from a recent clean instance (passes/clean_resume.py) answers as the fast
path walking every event does, and as the wording path: on generated and mutated protocols, for
one param's values in the sweep's order (0, 1, -1, 2, -2, ...), where most traces extend the
traces of a value checked two steps before; and on the bundled kernels' programs, whose sweeps
resume from the value before."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

from tle_compiler.ir.parser import parse_module
from tle_compiler.ir.tracegen import compile_program
from tle_compiler.passes.context import PassContext
from tle_compiler.passes.instances import Checker
from tle_compiler.passes.verify_protocol import check_structure

from .protocol_gen import mutated, protocols

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _sweep_order(program, top: int = 6):
    """Assignments in the sweep's order: the first param 0, 1, -1, 2, -2, ..., the others at
    a few small values each."""
    first = [0] + [v for n in range(1, top + 1) for v in (n, -n)]
    ranges = []
    for k, p in enumerate(program.params):
        vals = [v for v in (first if k == 0 else range(0, 3)) if p.contains(v)]
        ranges.append(vals or [p.min if p.min is not None else p.max])
    for combo in itertools.product(*ranges[1:]):
        for v in ranges[0] if ranges else [None]:
            yield dict(zip((p.name for p in program.params), ((v,) if ranges else ()) + combo))


def _agree(program, top: int = 6, in_hypothesis: bool = True) -> int:
    """Checks every assignment with a resuming checker, a checker that walks every event and
    the wording path; returns how many instances the resuming checker resumed."""
    ctx = PassContext(program)
    check_structure(ctx)
    if in_hypothesis:
        assume(ctx.ok)
    assert ctx.ok
    cp = compile_program(program)
    resuming, whole = Checker(cp, ctx.roles()), Checker(cp, ctx.roles())
    whole.resumes = None
    resumed = 0
    for params in _sweep_order(program, top):
        traces = cp.run(params, 50_000)
        found = resuming.resumes.find(resuming.without_closed_reads(traces)) \
            if resuming.resumes is not None else None
        resumed += found is not None
        got = resuming.clean(traces)
        assert got == whole.clean(traces), params
        res = whole.check(traces)
        assert got == (not res.problems and res.deadlock is None), params
    assert resuming.named_hops == whole.named_hops
    return resumed


@SETTINGS
@given(protocols(accesses=True))
def test_resumed_fast_path_agrees_on_generated_protocols(program):
    _agree(program)


@SETTINGS
@given(mutated())
def test_resumed_fast_path_agrees_on_mutated_protocols(program):
    _agree(program)


def test_generated_protocols_resume():
    """The generator's programs do resume (the comparison above is not vacuous)."""
    total = 0

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(protocols(accesses=True))
    def sample(program):
        nonlocal total
        total += _agree(program)

    sample()
    assert total >= 50, total


RING = """kernel ring
param N
pipe c capacity=2 fields=(x, y)
partition w default {
  for i in range(N) {
    c.acquire(i)
    c.write(i, x)
    if i > 0 {
      c.write(i, y)
    }
    c.commit(i)
  }
}
partition r {
  for i in range(N) {
    c.wait(i)
    c.read(i, x)
    c.release(i)
  }
}
"""


def test_a_ring_resumes_from_the_value_before():
    program = parse_module(RING).kernels[0]
    assert _agree(program, in_hypothesis=False) >= 5


@pytest.mark.parametrize("name", ["sparse_mla_pipe.pipe", "sparse_mla_seesaw.pipe"])
def test_bundled_pipe_kernels_resume(name):
    program = parse_module((ROOT / "tle_kernels" / name).read_text(encoding="utf-8")).kernels[0]
    assert _agree(program, top=8, in_hypothesis=False) >= 6


def test_a_fault_after_a_clean_prefix_is_found():
    """The events appended at N = 3 read a field written only from N = 3 on: a resumed walk of
    the new events finds it."""
    program = parse_module(RING.replace("c.read(i, x)", "c.read(i, x)\n    if i == 2 {\n"
                                        "      c.read(i, y)\n    }")
                           .replace("if i > 0", "if i > 2")).kernels[0]
    ctx = PassContext(program)
    check_structure(ctx)
    cp = compile_program(program)
    checker = Checker(cp, ctx.roles())
    assert [checker.clean(cp.run({"N": n}, 10_000)) for n in range(5)] == \
        [True, True, True, False, False]
    assert checker.resumes is not None and checker.resumes.kept
