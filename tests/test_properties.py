"""The static verifier against the executable semantics, on protocols nobody wrote by hand.

For every generated program and every small param assignment in the params' domains, the verdict
of the passes (``verify(program, params=...)``: verify-protocol + verify-deadlock on that
instance) must equal the simulator's, which explores every interleaving over real mbarrier parity
semantics and runs slot accesses against the slot they touch. Shrunk counterexamples found here are
kept in tests/regressions/ as .pipe files and replayed by test_regressions.

The last tests enumerate exhaustively, for fixed small protocols, every placement of one slot
access among a partition's statement positions, and hold both verdicts to a one-line rule for
which placements are inside the access's window; and, for a ring whose writer fills some fields
at some indices, hold both verdicts to the rule that a read that runs must find its field written
on its stage (by a window of an index no later than the read's).
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import HealthCheck, given, note, settings, strategies as st

from tle_compiler.ir import (Access, Affine, Compare, Event, For, If, Loc, Param, Partition, Pipe,
                             Program)
from tle_compiler.ir.nodes import walk_accesses
from tle_compiler.ir.printer import print_program
from tle_compiler.passes import verify
from tle_compiler.semantics.simulator import StructuralError, simulate

from .protocol_gen import mutated, protocols

#: Param values compared per program (every combination), cut to each param's domain.
SMALL = range(-2, 4)


def static_ok(program, params) -> bool:
    return verify(program, params=params).ok


def sim_ok(program, params) -> bool:
    """The simulator's verdict; a program outside its model (StructuralError) is rejected."""
    try:
        sim = simulate(program, params)
    except StructuralError:
        return False
    assert sim.complete, f"state limit hit for {params}"
    return sim.ok


def instances(program):
    names = [p.name for p in program.params]
    for values in itertools.product(*([v for v in SMALL if p.contains(v)] for p in program.params)):
        yield dict(zip(names, values))


def assert_agree(program, in_hypothesis: bool = True) -> tuple[int, int]:
    """Compare both verdicts on every small instance; returns (#ok, #rejected) instances."""
    if in_hypothesis:
        note(print_program(program))
    counts = [0, 0]
    for params in instances(program):
        try:
            sim = simulate(program, params)
        except StructuralError as e:
            assert not static_ok(program, params), f"simulator refused a program the passes accept: {e}"
            counts[1] += 1
            continue
        if not sim.complete:
            # a generated program of several multi-reader pipes in nested loops may have more
            # interleavings than the default budget (up to about 600,000 states were seen);
            # such a rare one is explored again with a larger budget rather than dropped
            sim = simulate(program, params, max_states=4_000_000)
        assert sim.complete, f"state limit hit for {params}"
        st_ok = static_ok(program, params)
        assert st_ok == sim.ok, (
            f"static={'ok' if st_ok else 'rejected'} simulator={'ok' if sim.ok else 'rejected'} "
            f"for {params}\nsimulator: {[str(e) for e in sim.errors]}\n"
            f"static: {[str(d) for d in verify(program, params=params).diagnostics]}")
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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(protocols(accesses=True, domains=True))
def test_protocols_with_accesses_in_their_windows_agree_with_simulator(program):
    assert_agree(program)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(protocols(fault=True, domains=True))
def test_protocols_with_a_misplaced_access_agree_with_simulator(program):
    assert_agree(program)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(protocols(accesses=True)))
def test_mutated_protocols_with_accesses_agree_with_simulator(program):
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


def test_access_generators_yield_clean_programs_and_window_faults():
    """The access properties are only meaningful if the generators give both programs with
    accesses that the simulator accepts everywhere and programs where an access runs outside its
    window or reads a field no write fills (not only structural faults or deadlocks)."""
    clean = windowed = unwritten = 0

    faulty = protocols(fault=True, domains=True)

    @settings(max_examples=100, deadline=None, derandomize=True, database=None)
    @given(st.one_of(protocols(accesses=True, domains=True), faulty, faulty))
    def sample(program):
        nonlocal clean, windowed, unwritten
        if not any(True for p in program.partitions for _ in walk_accesses(p.body)):
            return
        try:
            kinds = set().union(*(simulate(program, params).kinds for params in instances(program)))
        except StructuralError:
            return
        clean += not kinds
        windowed += "access-outside-window" in kinds
        unwritten += "unwritten-field" in kinds

    sample()
    assert clean >= 10 and windowed >= 10 and unwritten >= 10, (clean, windowed, unwritten)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(protocols(), mutated(), protocols(fault=True, domains=True)))
def test_bound_is_sufficient(program):
    """A "proved" verdict is not contradicted by values beyond those it checked: the next 20 on
    each open side of the checked range and 2·hi + 3 (one param; a grid is too slow for CI)."""
    v = verify(program).verdict()
    if v is None or v.kind != "proved" or len(program.params) != 1:
        return
    (p,) = program.params
    (checked,) = v.checked.values()  # "[lo, hi]" or "{value}"
    ends = [int(x) for x in checked.strip("[]{}").split(",")]
    lo, hi = ends[0], ends[-1]
    beyond = [*range(hi + 1, hi + 21), 2 * hi + 3, *range(lo - 20, lo)]
    beyond = [n for n in beyond if p.contains(n)]
    bad = [n for n in beyond if not verify(program, params={p.name: n}).ok]
    assert not bad, f"proved for every value ({v.describe()}) but rejected at {p.name} = {bad}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(protocols(accesses=True, domains=True), protocols(fault=True, domains=True),
                 mutated(protocols(accesses=True))))
def test_proved_verdicts_hold_in_the_simulator(program):
    """A "proved" verdict claims every value of the domain: the simulator must find no race or hang
    at any value from -6 to 12 (one param) or -2 to 5 (two), beyond the small instances above."""
    v = verify(program).verdict()
    if v is None or v.kind != "proved":
        return
    values = range(-6, 13) if len(program.params) == 1 else range(-2, 6)
    names = [p.name for p in program.params]
    for combo in itertools.product(*([n for n in values if p.contains(n)] for p in program.params)):
        params = dict(zip(names, combo))
        assert sim_ok(program, params), f"{v.describe()}, but the simulator fails at {params}"


# ------------------------------------------------------------------ exhaustive access placement

A = Affine.of


def _ev(verb, pipe, i, reader=None, fields=None):
    return Event(verb, pipe, A(i), reader, fields, Loc("x.pipe", 1))


def _prog(pipes, parts, params=()):
    return Program("k", tuple(Param(p) for p in params), tuple(pipes),
                   tuple(Partition(n, tuple(b), default=(k == 0))
                         for k, (n, b) in enumerate(parts)))


#: Loop-free protocols, each correct without accesses; every index is used once per endpoint.
FLAT = {
    # capacity 2, the reader releases tile i after waiting tile i + 1 (two windows overlap)
    "spsc_late_release": _prog(
        [Pipe("kv", 2, ("k",))],
        [("w", [_ev(v, "kv", i) for i in range(3) for v in ("acquire", "commit")]),
         ("r", [_ev("wait", "kv", 0), _ev("wait", "kv", 1), _ev("release", "kv", 0),
                _ev("wait", "kv", 2), _ev("release", "kv", 1), _ev("release", "kv", 2)])]),
    # right sees only kv_r: its reads of kv_l are outside its view
    "spmc_views": _prog(
        [Pipe("kv", 1, ("kv_l", "kv_r"), ("left", "right"))],
        [("w", [_ev(v, "kv", i) for i in range(2) for v in ("acquire", "commit")]),
         ("L", [_ev(v, "kv", i, "left") for i in range(2) for v in ("wait", "release")]),
         ("R", [_ev(v, "kv", i, "right", ("kv_r",) if v == "wait" else None)
                for i in range(2) for v in ("wait", "release")])]),
    # left releases its one-shot slot, right never does (its window runs to its end)
    "one_shot": _prog(
        [Pipe("q", 1, ("a", "b"), ("left", "right"), one_shot=True)],
        [("w", [_ev("acquire", "q", 0), _ev("commit", "q", 0)]),
         ("L", [_ev("wait", "q", 0, "left"), _ev("release", "q", 0, "left")]),
         ("R", [_ev("wait", "q", 0, "right")])]),
}


def _endpoints(program):
    """(side, reader, owner partition, view) of every endpoint, from the events."""
    (pipe,) = program.pipes
    out = [("writer", None, next(p.name for p in program.partitions
                                 if any(e.verb == "acquire" for e in p.body)), pipe.fields)]
    for r in pipe.reader_names:
        part = next(p for p in program.partitions
                    if any(e.verb == "wait" and (e.reader or "") == r for e in p.body))
        view = next(e.fields for e in part.body if e.verb == "wait") or pipe.fields
        out.append(("reader", r or None, part.name, view))
    return out


def _flat_placements(name):
    program = FLAT[name]
    (pipe,) = program.pipes
    top = max(e.index.const for p in program.partitions for e in p.body) + 1
    for side, reader, owner, view in _endpoints(program):
        for part, field, i in itertools.product(program.partitions, pipe.fields, range(top + 1)):
            for pos in range(len(part.body) + 1):
                yield program, side, reader, owner, view, part, field, i, pos


def _inside(body, side, reader, field, view, i, pos, own) -> bool:
    """The window rule: the endpoint's own partition, a field of its view, after its
    acquire(i) / wait(i) and no later than its commit(i) / release(i) (or the end, without)."""
    at = {e.verb: k for k, e in enumerate(body)
          if e.index.const == i and (e.reader or None) == reader}
    opener, closer = ("acquire", "commit") if side == "writer" else ("wait", "release")
    end = len(body)
    return own and field in view and at.get(opener, end + 1) < pos <= at.get(closer, end)


@pytest.mark.parametrize("name", sorted(FLAT))
def test_every_placement_of_one_access_matches_the_window_rule(name):
    program = FLAT[name]
    assert sim_ok(program, {}) and static_ok(program, {})
    inside = 0
    for program, side, reader, owner, view, part, field, i, pos in _flat_placements(name):
        access = Access(side, program.pipes[0].name, field, A(i), reader, "", Loc("x.pipe", 99))
        body = part.body[:pos] + (access,) + part.body[pos:]
        placed = dataclasses.replace(program, partitions=tuple(
            dataclasses.replace(p, body=body) if p is part else p for p in program.partitions))
        rule = _inside(part.body, side, reader, field, view, i, pos, part.name == owner)
        where = f"{side} {reader} {field} index {i} in {part.name} at {pos}"
        assert sim_ok(placed, {}) == rule, where
        assert static_ok(placed, {}) == rule, where
        if not rule and part.name == owner and field in view:
            # outside the window in its own partition: the window error, not only a symptom
            assert "access-outside-window" in simulate(placed, {}).kinds, where
        inside += rule
    assert inside > 0


def _ring(capacity=2):
    """for i in range(N): acquire(i); commit(i)  /  for i in range(N): wait(i); release(i)."""
    loop = lambda verbs: (For("i", A(0), A("N"), 1, tuple(_ev(v, "kv", "i") for v in verbs)),)
    return _prog([Pipe("kv", capacity, ("k",))],
                 [("w", loop(("acquire", "commit"))), ("r", loop(("wait", "release")))], ("N",))


@pytest.mark.parametrize("capacity", [1, 2])
def test_every_placement_of_one_access_in_a_loop_matches_the_window_rule(capacity):
    """Positions before and after the loop (constant index) and in its body (index i + d): only
    the body slot between the endpoint's two events with d = 0 is inside, or any body slot when
    the loop never runs (N = 0)."""
    program = _ring(capacity)
    for side, part in itertools.product(("writer", "reader"), program.partitions):
        own = part.name == ("w" if side == "writer" else "r")
        (loop,) = part.body
        spots = [(("top", 0), c) for c in (0, 1)] + [(("top", 1), c) for c in (0, 1)]
        spots += [(("body", k), A("i") + d) for k in range(3) for d in (-1, 0, 1)]
        for (where, k), idx in spots:
            access = Access(side, "kv", "k", A(idx), None, "", Loc("x.pipe", 99))
            if where == "top":
                body = (access, loop) if k == 0 else (loop, access)
            else:
                body = (dataclasses.replace(loop, body=loop.body[:k] + (access,) + loop.body[k:]),)
            placed = dataclasses.replace(program, partitions=tuple(
                dataclasses.replace(p, body=body) if p is part else p for p in program.partitions))
            for n in range(4):
                rule = own and where == "body" and (n == 0 or (idx == A("i") and k == 1))
                what = f"{side} in {part.name} {where} {k} index {idx} N={n}"
                assert sim_ok(placed, {"N": n}) == rule, what
                assert static_ok(placed, {"N": n}) == rule, what


# ------------------------------------------------------------------ reads of unwritten fields

_NEVER = Compare(A("i"), "<", A(0))


def _filled_ring(writes, read, read_cond=None, capacity=2):
    """``for i in range(N)``: the writer fills ``writes`` ((field, condition or None) pairs) of
    pipe kv (fields x, y, ``capacity`` stages) between acquire(i) and commit(i); the reader
    reads ``read`` at line 99 between wait(i) and release(i), under ``read_cond`` if given."""
    def under(cond, stmt):
        return stmt if cond is None else If(cond, (stmt,), (), Loc("x.pipe", 2))

    wbody = [_ev("acquire", "kv", "i")]
    wbody += [under(c, Access("writer", "kv", f, A("i"), None, "", Loc("x.pipe", 3)))
              for f, c in writes]
    wbody.append(_ev("commit", "kv", "i"))
    rd = Access("reader", "kv", read, A("i"), None, "", Loc("x.pipe", 99))
    rbody = [_ev("wait", "kv", "i"), under(read_cond, rd), _ev("release", "kv", "i")]
    loop = lambda body: (For("i", A(0), A("N"), 1, tuple(body)),)
    return _prog([Pipe("kv", capacity, ("x", "y"))], [("w", loop(wbody)), ("r", loop(rbody))],
                 ("N",))


@pytest.mark.parametrize("writes, read_cond, faulty", [
    ((("x", None),), None, True),  # y is read, only x is ever filled
    ((), None, False),  # no write at all: a protocol skeleton, windows only
    ((("y", None),), None, False),
    ((("x", None), ("y", None)), None, False),
    ((("x", None),), _NEVER, False),  # the unwritten read never runs
])
def test_reads_of_unwritten_fields_match_the_rule(writes, read_cond, faulty):
    """Both engines reject exactly the instances where a read of a field that no write of the
    pipe fills runs (N >= 1), the verifier with check unwritten-field at the read's line."""
    program = _filled_ring(writes, "y", read_cond)
    for n in range(4):
        rule = not (faulty and n >= 1)
        assert sim_ok(program, {"N": n}) == rule, n
        ctx = verify(program, params={"N": n})
        assert ctx.ok == rule, (n, [str(d) for d in ctx.diagnostics])
        if not rule:
            assert {(d.check, d.loc.line) for d in ctx.errors} == {("unwritten-field", 99)}
            assert simulate(program, {"N": n}).kinds == {"unwritten-field"}
    v = verify(program).verdict()
    assert v.kind == ("rejected" if faulty else "proved"), v.describe()


_OPS = {"==": lambda a, b: a == b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b}


@pytest.mark.parametrize("capacity", [1, 2, 3])
@pytest.mark.parametrize("op", sorted(_OPS))
@pytest.mark.parametrize("c", [0, 1, 2, 3])
def test_reads_find_their_field_written_on_their_stage(capacity, op, c):
    """y is written only at the indices j with ``j OP c`` and read at every index i: both engines
    reject exactly the N where some read at i < N has no write at an index j <= i of its stage
    (j = i mod capacity): each stage keeps its own copy of y, filled once it was written there."""
    program = _filled_ring((("y", Compare(A("i"), op, A(c))),), "y", capacity=capacity)
    held = _OPS[op]

    def faulty(n):
        return any(not any(held(j, c) for j in range(i % capacity, i + 1, capacity))
                   for i in range(n))

    for n in range(8):
        rule = not faulty(n)
        assert sim_ok(program, {"N": n}) == rule, n
        ctx = verify(program, params={"N": n})
        assert ctx.ok == rule, (n, [str(d) for d in ctx.diagnostics])
        if not rule:
            assert {(d.check, d.loc.line) for d in ctx.errors} == {("unwritten-field", 99)}
            assert simulate(program, {"N": n}).kinds == {"unwritten-field"}
            first = min(i for i in range(n)
                        if not any(held(j, c) for j in range(i % capacity, i + 1, capacity)))
            assert f"stage {first % capacity}" in ctx.errors[0].message
    v = verify(program).verdict()
    assert v.kind == ("rejected" if faulty(8) else "proved"), v.describe()
