"""The static verifier against the executable semantics, on protocols nobody wrote by hand.

For every generated program and every small param assignment, the verdict of the passes
(verify-protocol + verify-deadlock on that instance) must equal the simulator's, which explores
every interleaving over real mbarrier parity semantics. Shrunk counterexamples found here are kept
in tests/regressions/ as .pipe files and replayed by test_regressions.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, note, settings, strategies as st

from tle_compiler.ir.printer import print_program
from tle_compiler.passes import run_pipeline, verify
from tle_compiler.semantics.simulator import StructuralError, simulate

from .protocol_gen import mutated, protocols

#: Param values compared per program (every combination).
SMALL = range(0, 4)


def static_ok(program, params) -> bool:
    return run_pipeline(program, params=params).ok


def assert_agree(program, in_hypothesis: bool = True) -> tuple[int, int]:
    """Compare both verdicts on every small instance; returns (#ok, #rejected) instances."""
    if in_hypothesis:
        note(print_program(program))
    counts = [0, 0]
    names = [p.name for p in program.params]
    for values in itertools.product(SMALL, repeat=len(names)):
        params = dict(zip(names, values))
        try:
            sim = simulate(program, params)
        except StructuralError as e:  # pragma: no cover - the generators build valid structures
            assert not static_ok(program, params), f"simulator refused a program the passes accept: {e}"
            counts[1] += 1
            continue
        assert sim.complete, f"state limit hit for {params}"
        st_ok = static_ok(program, params)
        assert st_ok == sim.ok, (
            f"static={'ok' if st_ok else 'rejected'} simulator={'ok' if sim.ok else 'rejected'} "
            f"for {params}\nsimulator: {[str(e) for e in sim.errors]}\n"
            f"static: {[str(d) for d in run_pipeline(program, params=params).diagnostics]}")
        counts[0 if sim.ok else 1] += 1
    return counts[0], counts[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(protocols())
def test_generated_protocols_agree_with_simulator(program):
    assert_agree(program)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_protocols_agree_with_simulator(program):
    assert_agree(program)


def test_generator_yields_both_verdicts():
    """The property above is only meaningful if both verdicts occur often."""
    ok = bad = 0

    @settings(max_examples=120, deadline=None, derandomize=True, database=None)
    @given(st.one_of(protocols(), mutated()))
    def sample(program):
        nonlocal ok, bad
        a, b = assert_agree(program)
        ok += a > 0
        bad += b > 0

    sample()
    assert ok >= 20 and bad >= 20, (ok, bad)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(protocols(), mutated()))
def test_bound_is_sufficient(program):
    """Checking up to the computed bound gives the same verdict as checking much further."""
    from tle_compiler.passes.bound import compute_bound

    auto = verify(program)
    info = compute_bound(program)
    if not info.bound or not info.sufficient:
        return
    if len(info.bound) > 1:
        return  # a 2-D grid twice as far is too slow for CI; the 1-D case carries the argument
    (name, b), = info.bound.items()
    far = verify(program, bound=2 * (b - info.minimum[name]) + 3)
    assert auto.ok == far.ok, [str(d) for d in far.diagnostics]
