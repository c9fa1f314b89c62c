"""The executable semantics (tle_compiler.semantics): correct protocols pass, each dynamic error kind
is reported at the right line, slot accesses are checked against their window and against the
slot they touch, param domains bound the values run, and programs outside the model raise
StructuralError."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tle_compiler.ir import (Access, Affine, Compare, Event, For, If, Loc, ModCompare, Param,
                             Partition, Pipe, Program)
from tle_compiler.ir.parser import parse_file
from tle_compiler.semantics import SimResult, StructuralError, simulate, simulate_range
from tle_compiler.semantics.simulator import _expand

A = Affine.of
FILE = "t.pipe"


def L(line: int) -> Loc:
    return Loc(FILE, line)


def ev(verb, pipe, idx, line, reader=None, fields=None):
    return Event(verb, pipe, A(idx), reader, fields, L(line))


def loop(var, stop, body, line=0, start=0, step=1):
    return For(var, A(start), A(stop), step, tuple(body), L(line))


def prog(pipes, parts, params=("N",)):
    return Program("k", tuple(Param(p) for p in params), tuple(pipes),
                   tuple(Partition(name, tuple(body), default=(k == 0))
                         for k, (name, body) in enumerate(parts)))


def errs(r: SimResult, kind: str):
    return [e for e in r.errors if e.kind == kind]


def only(r: SimResult, kind: str, line: int):
    """Assert ``r`` reports ``kind`` at ``line`` (other kinds may be reported too)."""
    found = errs(r, kind)
    assert found, f"expected {kind}, got {[(e.kind, e.loc.line, e.message) for e in r.errors]}"
    assert line in {e.loc.line for e in found}, [(e.loc.line, e.message) for e in found]
    return found


def ring(capacity, *, reader_idx="i", release=True, one_shot=False):
    """Producer/consumer over one SPSC pipe: writer lines 2-3, reader lines 11-12."""
    wbody = [loop("i", "N", [ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)], 1)]
    rinner = [ev("wait", "p", reader_idx, 11)]
    if release:
        rinner.append(ev("release", "p", reader_idx, 12))
    rbody = [loop("i", "N", rinner, 10)]
    return prog([Pipe("p", capacity, ("x",), one_shot=one_shot)],
                [("producer", wbody), ("consumer", rbody)])


# ------------------------------------------------------------------------------- correct programs

@pytest.mark.parametrize("capacity", [1, 2, 3, 4])
def test_spsc_ring_ok(capacity):
    for n in sorted({0, 1, capacity, capacity + 1, 7}):
        r = simulate(ring(capacity), {"N": n})
        assert r.ok and r.complete, (n, r.errors)
        assert r.params == {"N": n}


def sparse_mla():
    pipes = (Pipe("q", 1, ("q_l", "q_r", "q_tail"), ("left", "right"), one_shot=True),
             Pipe("kv", 2, ("kv_l", "kv_r", "tkv", "valid"), ("left", "right")),
             Pipe("score", 1, ("alpha", "sum_exp")))
    producer = [ev("acquire", "q", 0, 1), ev("commit", "q", 0, 2),
                loop("ck", "NK", [ev("acquire", "kv", "ck", 4), ev("commit", "kv", "ck", 5)], 3)]
    left = [ev("wait", "q", 0, 10, "left"),
            loop("ck", "NK", [ev("wait", "kv", "ck", 12, "left"),
                              ev("acquire", "score", "ck", 13), ev("commit", "score", "ck", 14),
                              ev("release", "kv", "ck", 15, "left")], 11)]
    right = [ev("wait", "q", 0, 20, "right"),
             loop("ck", "NK", [ev("wait", "kv", "ck", 22, "right", ("kv_r",)),
                               ev("wait", "score", "ck", 23), ev("release", "score", "ck", 24),
                               ev("release", "kv", "ck", 25, "right")], 21)]
    return prog(pipes, [("producer", producer), ("left", left), ("right", right)], ("NK",))


def test_spmc_with_field_view_ok():
    results = simulate_range(sparse_mla(), 6)
    assert [r.params["NK"] for r in results] == list(range(7))
    for r in results:
        assert r.ok and r.complete, (r.params, r.errors)
    assert results[-1].states > results[1].states > 1


def test_spmc_reader_of_some_fields_releases_only_its_group():
    # right sees only kv_r, left sees everything: groups {kv_l}:(left,) and {kv_r}:(left,right).
    # right never touches the left-only group, and the writer still may not overwrite before
    # left released.
    pipes = [Pipe("kv", 1, ("kv_l", "kv_r"), ("left", "right"))]
    w = [loop("i", "N", [ev("acquire", "kv", "i", 2), ev("commit", "kv", "i", 3)], 1)]
    lft = [loop("i", "N", [ev("wait", "kv", "i", 11, "left"),
                           ev("release", "kv", "i", 12, "left")], 10)]
    rgt = [loop("i", "N", [ev("wait", "kv", "i", 21, "right", ("kv_r",)),
                           ev("release", "kv", "i", 22, "right")], 20)]
    p = prog(pipes, [("w", w), ("l", lft), ("r", rgt)])
    for n in range(5):
        assert simulate(p, {"N": n}).ok


def test_one_shot_ok():
    pipes = [Pipe("q", 1, ("a", "b"), ("l", "r"), one_shot=True)]
    w = [ev("acquire", "q", 0, 1), ev("commit", "q", 0, 2)]
    lft = [ev("wait", "q", 0, 11, "l"), ev("release", "q", 0, 12, "l")]
    rgt = [ev("wait", "q", 0, 21, "r", ("b",))]  # one-shot release is optional
    r = simulate(prog(pipes, [("w", w), ("l", lft), ("r", rgt)], ()), {})
    assert r.ok and r.complete


def test_one_shot_close_ok():
    pipes = [Pipe("q", 1, ("a",), one_shot=True)]
    r = simulate(prog(pipes, [("w", [ev("close", "q", 0, 1)]),
                              ("r", [ev("wait", "q", 0, 11)])], ()), {})
    assert r.ok


def test_close_ends_a_stream_ok():
    # indices 0..N-1 committed, then close(N); reader waits 0..N
    w = [loop("i", "N", [ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)], 1),
         ev("close", "p", "N", 4)]
    rd = [loop("i", A("N") + 1, [ev("wait", "p", "i", 11), ev("release", "p", "i", 12)], 10)]
    p = prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)])
    for n in range(6):
        assert simulate(p, {"N": n}).ok, n


def test_three_stage_pipeline_and_two_pipes_in_lockstep_ok():
    pipes = [Pipe("a", 2, ("x",)), Pipe("b", 3, ("y",))]
    p0 = [loop("i", "N", [ev("acquire", "a", "i", 2), ev("commit", "a", "i", 3)], 1)]
    p1 = [loop("i", "N", [ev("wait", "a", "i", 5), ev("acquire", "b", "i", 6),
                          ev("commit", "b", "i", 7), ev("release", "a", "i", 8)], 4)]
    p2 = [loop("i", "N", [ev("wait", "b", "i", 10), ev("release", "b", "i", 11)], 9)]
    p = prog(pipes, [("p0", p0), ("p1", p1), ("p2", p2)])
    assert all(r.ok for r in simulate_range(p, 8))


def test_strided_indices_ok():
    # indices 0, 2, 4, ... at capacity 2: stage 0 only, phases alternate 0,1,0,... (legal)
    w = [loop("i", "N", [ev("acquire", "p", A("i").scale(2), 2),
                         ev("commit", "p", A("i").scale(2), 3)], 1)]
    rd = [loop("i", "N", [ev("wait", "p", A("i").scale(2), 11),
                          ev("release", "p", A("i").scale(2), 12)], 10)]
    p = prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)])
    assert all(r.ok for r in simulate_range(p, 6))


def test_negative_step_and_if_ok():
    # a descending loop whose index still ascends (N-1-i), and a branch on parity: odd indices
    # go through pipe b, even ones through pipe a; the reader mirrors it with a reversed loop.
    idx = A("N") - 1 - A("i")
    even = ModCompare(idx, 2, "==", 0)
    w = [loop("i", -1, [If(even, (ev("acquire", "a", idx, 2), ev("commit", "a", idx, 3)),
                           (ev("acquire", "b", idx, 4), ev("commit", "b", idx, 5)), L(6))],
              1, start=A("N") - 1, step=-1)]
    rd = [loop("j", "N", [If(ModCompare(A("j"), 2, "!=", 0),
                              (ev("wait", "b", "j", 12), ev("release", "b", "j", 13)),
                              (ev("wait", "a", "j", 14), ev("release", "a", "j", 15)), L(16))],
               10)]
    p = prog([Pipe("a", 2, ("x",)), Pipe("b", 2, ("y",))], [("w", w), ("r", rd)])
    for r in simulate_range(p, 7):
        assert r.ok, (r.params, r.errors)


def test_interpreter_range_semantics():
    # Python's range, including negative steps, empty ranges and shadowed loop variables
    for start, stop, step in [(5, 0, -2), (0, 5, 2), (3, 3, 1), (0, -4, -1), (2, 9, 3), (4, 1, 1)]:
        out = []
        _expand((loop("i", stop, [ev("acquire", "p", "i", 1)], start=start, step=step),), {}, out)
        assert [i for _, i in out] == list(range(start, stop, step))
    out = []
    inner = loop("i", 2, [ev("acquire", "p", A("i") + 10, 1)])
    _expand((loop("i", 2, [inner, ev("acquire", "p", "i", 2)]),), {}, out)
    assert [i for _, i in out] == [10, 11, 0, 10, 11, 1]
    out = []
    cond = Compare(A("i"), ">=", A("N") - 1)
    _expand((loop("i", "N", [If(cond, (ev("commit", "p", "i", 1),), (ev("acquire", "p", "i", 2),))]),),
            {"N": 3}, out)
    assert [(e.verb, i) for e, i in out] == [("acquire", 0), ("acquire", 1), ("commit", 2)]


# ---------------------------------------------------------------------------------- dynamic errors

def test_deadlock_two_partition_cycle():
    # A waits b(0) before committing a(0); B waits a(0) before committing b(0)
    pipes = [Pipe("a", 1, ("x",)), Pipe("b", 1, ("y",))]
    pa = [ev("wait", "b", 0, 2), ev("acquire", "a", 0, 3), ev("commit", "a", 0, 4),
          ev("release", "b", 0, 5)]
    pb = [ev("wait", "a", 0, 12), ev("acquire", "b", 0, 13), ev("commit", "b", 0, 14),
          ev("release", "a", 0, 15)]
    r = simulate(prog(pipes, [("A", pa), ("B", pb)], ()), {})
    assert [e.kind for e in r.errors] == ["deadlock"]
    d = r.errors[0]
    assert d.loc.line in (2, 12)
    assert set(d.blocked) == {("A", L(2)), ("B", L(12))}
    assert "'A'" in d.message and "'B'" in d.message


def test_deadlock_reports_only_unfinished_partitions():
    # reader never releases and the writer needs the slot back: writer stuck, reader finished
    pipes = [Pipe("p", 1, ("x",))]
    w = [ev("acquire", "p", 0, 1), ev("commit", "p", 0, 2),
         ev("acquire", "p", 1, 3), ev("commit", "p", 1, 4)]
    rd = [ev("wait", "p", 0, 11)]
    r = simulate(prog(pipes, [("w", w), ("r", rd)], ()), {})
    d = only(r, "deadlock", 3)[0]
    assert d.blocked == (("w", L(3)),)


def test_release_twice_is_release_without_wait():
    w = [loop("i", "N", [ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)], 1)]
    rd = [loop("i", "N", [ev("wait", "p", "i", 11), ev("release", "p", "i", 12),
                          ev("release", "p", "i", 13)], 10)]
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)]), {"N": 2})
    e = only(r, "release-without-wait", 13)[0]
    assert "'p'" in e.message and "release(0)" in e.message


def test_reader_never_releases():
    p = ring(2, release=False)
    only(simulate(p, {"N": 2}), "missing-release", 11)   # fits in the ring: ends holding
    only(simulate(p, {"N": 3}), "wait-on-held-stage", 11)  # wraps onto the stage it holds
    # an SPMC reader that stops after index 0 without releasing: the writer gets stuck on the
    # slot, the reader itself finished
    pipes = [Pipe("kv", 1, ("a",), ("l", "r"))]
    w = [loop("i", "N", [ev("acquire", "kv", "i", 2), ev("commit", "kv", "i", 3)], 1)]
    lft = [loop("i", "N", [ev("wait", "kv", "i", 11, "l"), ev("release", "kv", "i", 12, "l")], 10)]
    rgt = [ev("wait", "kv", 0, 21, "r")]
    r = simulate(prog(pipes, [("w", w), ("L", lft), ("R", rgt)]), {"N": 2})
    d = only(r, "deadlock", 2)[0]
    assert d.blocked == (("w", L(2)), ("L", L(11)))


def test_reader_off_by_one():
    # reader waits i+1: at capacity 1 the wait of index 1 passes on a fresh barrier (parity 1)
    r = simulate(ring(1, reader_idx=A("i") + 1), {"N": 3})
    e = only(r, "stale-read", 11)[0]
    assert "wait(1)" in e.message
    for c in (2, 3):
        for n in (1, 2, 4):
            assert not simulate(ring(c, reader_idx=A("i") + 1), {"N": n}).ok, (c, n)


def test_capacity1_release_after_waiting_next_index():
    # wait(0); loop { wait(i+1); release(i) }: at capacity 1 the reader waits the stage it holds.
    # Under the contract the hold is checked before the wait blocks, so this is
    # wait-on-held-stage (on hardware the wait would block forever: a deadlock).
    w = [loop("i", "N", [ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)], 1)]
    rd = [ev("wait", "p", 0, 10),
          loop("i", A("N") - 1, [ev("wait", "p", A("i") + 1, 12), ev("release", "p", "i", 13)], 11),
          ev("release", "p", A("N") - 1, 14)]
    p = prog([Pipe("p", 1, ("x",))], [("w", w), ("r", rd)])
    r = simulate(p, {"N": 3})
    only(r, "wait-on-held-stage", 12)
    assert simulate(p, {"N": 1}).ok
    # at capacity 2 the same reader is correct
    p2 = prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)])
    assert all(r.ok for r in simulate_range(p2, 5, {"N": 1}))


def test_capacity1_hold_then_wait_other_pipe_deadlocks():
    # The deadlock flavour: the reader holds a(i) and waits b(i), which the writer commits only
    # after acquiring a(i+1) -- a slot the reader will release only after b(i).
    pipes = [Pipe("a", 1, ("x",)), Pipe("b", 1, ("y",))]
    w = [loop("i", "N", [ev("acquire", "a", "i", 2), ev("commit", "a", "i", 3),
                         ev("acquire", "a", A("i") + 1, 4), ev("commit", "a", A("i") + 1, 5),
                         ev("acquire", "b", "i", 6), ev("commit", "b", "i", 7)], 1)]
    rd = [ev("wait", "a", 0, 11), ev("wait", "b", 0, 12)]
    r = simulate(prog(pipes, [("w", w), ("r", rd)]), {"N": 1})
    d = only(r, "deadlock", 4)[0]
    assert set(d.blocked) == {("w", L(4)), ("r", L(12))}


def test_phase_aliasing_is_rejected():
    # capacity 2: indices 0 and 4 are both stage 0 at phase 0; the parity cannot tell them apart
    w = [ev("acquire", "p", 0, 1), ev("commit", "p", 0, 2),
         ev("acquire", "p", 4, 3), ev("commit", "p", 4, 4)]
    rd = [ev("wait", "p", 0, 11), ev("release", "p", 0, 12),
          ev("wait", "p", 4, 13), ev("release", "p", 4, 14)]
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)], ()), {})
    assert not r.ok
    only(r, "overwrite", 3)       # acquire(4) passes the fresh empty barrier before the read of 0
    only(r, "stale-read", 13)     # wait(4) passes on the completion of commit(0)
    # the reader released 0 and its wait(4) does not block, so no interleaving deadlocks here;
    # without the reader's second round the writer is stuck at the wrong parity forever
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd[:2])], ()), {})
    only(r, "overwrite", 3)
    d = only(r, "deadlock", 3)[0]
    assert d.blocked == (("w", L(3)),)


def test_one_shot_in_a_loop_of_two():
    r = simulate(ring(1, one_shot=True), {"N": 2})
    only(r, "one-shot-reuse", 2)
    only(r, "one-shot-reuse", 11)
    assert simulate(ring(1, one_shot=True), {"N": 1}).ok


def test_stale_read():
    # the reader waits index 1 first: at capacity 1 its parity-1 wait passes on a fresh barrier
    w = [ev("acquire", "p", 0, 1), ev("commit", "p", 0, 2)]
    rd = [ev("wait", "p", 1, 11), ev("release", "p", 1, 12)]
    r = simulate(prog([Pipe("p", 1, ("x",))], [("w", w), ("r", rd)], ()), {})
    e = only(r, "stale-read", 11)[0]
    assert "'r'" in e.message and "p.wait(1)" in e.message


def test_overwrite():
    # the writer skips index 1: acquire(2) at capacity 1 is phase 0 again and passes at once
    w = [ev("acquire", "p", 0, 1), ev("commit", "p", 0, 2),
         ev("acquire", "p", 2, 3), ev("commit", "p", 2, 4)]
    rd = [ev("wait", "p", 0, 11), ev("release", "p", 0, 12),
          ev("wait", "p", 2, 13), ev("release", "p", 2, 14)]
    r = simulate(prog([Pipe("p", 1, ("x",))], [("w", w), ("r", rd)], ()), {})
    e = only(r, "overwrite", 3)[0]
    assert "acquire(2)" in e.message


def test_overwrite_names_the_lagging_reader_of_an_spmc_pipe():
    pipes = [Pipe("kv", 1, ("a",), ("l", "r"))]
    w = [ev("acquire", "kv", 0, 1), ev("commit", "kv", 0, 2),
         ev("acquire", "kv", 2, 3), ev("commit", "kv", 2, 4)]
    lft = [ev("wait", "kv", 0, 11, "l"), ev("release", "kv", 0, 12, "l")]
    rgt = [ev("wait", "kv", 0, 21, "r"), ev("release", "kv", 0, 22, "r")]
    r = simulate(prog(pipes, [("w", w), ("L", lft), ("R", rgt)], ()), {})
    msgs = " ".join(e.message for e in errs(r, "overwrite"))
    assert "reader 'l'" in msgs and "reader 'r'" in msgs


def test_commit_without_acquire():
    w = [ev("acquire", "p", 0, 1), ev("commit", "p", 1, 2)]
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w), ("r", [ev("wait", "p", 1, 11)])], ()), {})
    only(r, "commit-without-acquire", 2)


def test_double_acquire():
    w = [ev("acquire", "p", 0, 1), ev("acquire", "p", 2, 2), ev("commit", "p", 0, 3)]
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w)], ()), {})
    only(r, "double-acquire", 2)


def test_wait_on_held_stage():
    w = [loop("i", 4, [ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)], 1)]
    rd = [ev("wait", "p", 0, 11), ev("wait", "p", 2, 12)]
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)], ()), {})
    only(r, "wait-on-held-stage", 12)


def test_event_after_close():
    w = [ev("close", "p", 0, 1), ev("acquire", "p", 1, 2), ev("commit", "p", 1, 3)]
    rd = [ev("wait", "p", 0, 11), ev("release", "p", 0, 12)]
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)], ()), {})
    only(r, "event-after-close", 2)


def test_negative_index():
    w = [loop("i", "N", [ev("acquire", "p", A("i") - 1, 2), ev("commit", "p", A("i") - 1, 3)], 1)]
    rd = [loop("i", "N", [ev("wait", "p", "i", 11), ev("release", "p", "i", 12)], 10)]
    p = prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)])
    e = only(simulate(p, {"N": 2}), "negative-index", 2)[0]
    assert "-1" in e.message
    only(simulate(p, {"N": 2}), "negative-index", 2)
    assert simulate(p, {"N": 0}).ok


def test_uncommitted_acquire():
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", [ev("acquire", "p", 0, 1)])], ()), {})
    assert [(e.kind, e.loc.line) for e in r.errors] == [("uncommitted-acquire", 1)]


def test_unconsumed():
    w = [loop("i", 2, [ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)], 1)]
    rd = [ev("wait", "p", 0, 11), ev("release", "p", 0, 12)]
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rd)], ()), {})
    e = only(r, "unconsumed", 3)[0]
    assert "index 1" in e.message
    # a declared reader that no partition performs never consumes anything
    pipes = [Pipe("q", 1, ("a",), ("l", "r"), one_shot=True)]
    r = simulate(prog(pipes, [("w", [ev("acquire", "q", 0, 1), ev("commit", "q", 0, 2)]),
                              ("L", [ev("wait", "q", 0, 11, "l")])], ()), {})
    assert [(e.kind, e.loc.line) for e in r.errors] == [("unconsumed", 2)]
    assert "reader 'r'" in r.errors[0].message


def test_missing_release_loc_is_the_wait():
    r = simulate(ring(3, release=False), {"N": 1})
    assert [(e.kind, e.loc.line) for e in r.errors] == [("missing-release", 11)]


# ------------------------------------------------------------------------------ structural errors

def _raises(p, match, params=None):
    with pytest.raises(StructuralError, match=match) as ei:
        simulate(p, params if params is not None else {"N": 1})
    assert FILE in str(ei.value)
    return ei.value


def test_undeclared_reader():
    pipes = [Pipe("kv", 2, ("a",), ("l", "r"))]
    p = prog(pipes, [("w", []), ("x", [ev("wait", "kv", 0, 7, "zz")])])
    assert _raises(p, "not a declared reader").loc == L(7)
    p = prog([Pipe("p", 1, ("a",))], [("w", []), ("x", [ev("wait", "p", 0, 8, "zz")])])
    assert _raises(p, "not a declared reader").loc == L(8)


def test_other_structural_errors():
    spmc = [Pipe("kv", 2, ("a", "b"), ("l", "r"))]
    spsc = [Pipe("p", 2, ("a",))]
    _raises(prog(spmc, [("x", [ev("wait", "kv", 0, 3)])]), "names no reader")
    _raises(prog(spsc, [("x", [ev("acquire", "p", 0, 1)]), ("y", [ev("commit", "p", 0, 2)])]),
            "written from partitions")
    _raises(prog(spmc, [("x", [ev("wait", "kv", 0, 1, "l")]), ("y", [ev("release", "kv", 0, 2, "l")])]),
            "read from partitions")
    _raises(prog(spsc, [("x", [ev("wait", "p", 0, 1)]), ("y", [ev("release", "p", 0, 2)])]),
            "read from partitions")
    _raises(prog(spsc, [("x", [ev("wait", "nope", 0, 1)])]), "unknown pipe")
    _raises(prog(spmc, [("x", [ev("wait", "kv", 0, 1, "l", ("c",))])]), "unknown field")
    _raises(prog(spmc, [("x", [ev("wait", "kv", 0, 1, "l", ("a",)),
                               ev("release", "kv", 0, 2, "l", ("b",))])]), "disagree")
    # views that agree as sets (and events without a view) are fine
    ok = prog(spmc, [("w", [ev("acquire", "kv", 0, 1), ev("commit", "kv", 0, 2)]),
                     ("x", [ev("wait", "kv", 0, 3, "l", ("a", "b")),
                            ev("release", "kv", 0, 4, "l", ("b", "a"))]),
                     ("y", [ev("wait", "kv", 0, 5, "r"), ev("release", "kv", 0, 6, "r")])])
    assert simulate(ok, {"N": 0}).ok
    with pytest.raises(StructuralError, match="no value"):
        simulate(ring(1), {})


# ------------------------------------------------------------------------------------ exploration

def test_state_limit_marks_incomplete():
    r = simulate(sparse_mla(), {"NK": 6}, max_states=10)
    assert not r.complete and r.states <= 10 and r.ok


def test_speed_three_partitions_forty_events():
    # each partition writes its own deep pipe and reads it back: all 41^3 pc vectors are reachable
    pipes = [Pipe(n, 64, ("x",)) for n in "abc"]
    parts = [("p" + n, [loop("i", "N", [ev("acquire", n, "i", 2), ev("commit", n, "i", 3)], 1),
                        loop("i", "N", [ev("wait", n, "i", 5), ev("release", n, "i", 6)], 4)])
             for n in "abc"]
    t = time.perf_counter()
    r = simulate(prog(pipes, parts), {"N": 10})
    dt = time.perf_counter() - t
    assert r.ok and r.complete and r.states == 41 ** 3
    assert dt < 2.0, dt


# ------------------------------------------------------------------------------------- properties

@settings(max_examples=60, deadline=None)
@given(caps=st.lists(st.integers(1, 3), min_size=1, max_size=3), n=st.integers(0, 5),
       drop=st.integers(0, 10 ** 6))
def test_chain_is_ok_and_dropping_any_event_is_caught(caps, n, drop):
    """A chain of partitions linked by rings is correct; removing any single event from it is not
    (every event of a correct chain is necessary)."""
    k = len(caps)
    parts = []
    for j in range(k + 1):
        inner = []
        if j > 0:
            inner.append(ev("wait", f"p{j - 1}", "i", 100 * j + 1))
        if j < k:
            inner += [ev("acquire", f"p{j}", "i", 100 * j + 2), ev("commit", f"p{j}", "i", 100 * j + 3)]
        if j > 0:
            inner.append(ev("release", f"p{j - 1}", "i", 100 * j + 4))
        parts.append((f"s{j}", inner))
    pipes = [Pipe(f"p{j}", c, ("x",)) for j, c in enumerate(caps)]
    good = prog(pipes, [(name, [loop("i", "N", inner, 1000)]) for name, inner in parts])
    assert simulate(good, {"N": n}).ok
    if n == 0:
        return
    flat = [(pj, e) for pj, (_, inner) in enumerate(parts) for e in inner]
    pj, victim = flat[drop % len(flat)]
    mutated = [(name, [loop("i", "N", [e for e in inner if e is not victim], 1000)])
               for name, inner in parts]
    assert not simulate(prog(pipes, mutated), {"N": n}).ok


def test_pipe_without_fields_is_a_signal_and_unseen_fields_get_no_barrier():
    # no fields at all: still one group of every reader, so the wait really waits for the commit
    w = [loop("i", "N", [ev("acquire", "s", "i", 2), ev("commit", "s", "i", 3)], 1)]
    rd = [loop("i", "N", [ev("wait", "s", "i", 11), ev("release", "s", "i", 12)], 10)]
    assert all(r.ok for r in simulate_range(prog([Pipe("s", 1, ())], [("w", w), ("r", rd)]), 4))
    # field c is seen by nobody: no barrier for it, the protocol is unaffected
    pipes = [Pipe("kv", 2, ("a", "b", "c"), ("l", "r"))]
    w = [loop("i", "N", [ev("acquire", "kv", "i", 2), ev("commit", "kv", "i", 3)], 1)]
    lft = [loop("i", "N", [ev("wait", "kv", "i", 11, "l", ("a",)), ev("release", "kv", "i", 12, "l")], 10)]
    rgt = [loop("i", "N", [ev("wait", "kv", "i", 21, "r", ("b",)), ev("release", "kv", "i", 22, "r")], 20)]
    assert all(r.ok for r in simulate_range(prog(pipes, [("w", w), ("L", lft), ("R", rgt)]), 5))


def test_simulate_range_bounds():
    p = Program("k", (Param("N", 1), Param("M")), (Pipe("p", 1, ("x",)),),
                (Partition("w", (), default=True),))
    got = [r.params for r in simulate_range(p, 2)]
    assert got == [{"N": n, "M": m} for n in (1, 2) for m in (0, 1, 2)]
    got = [r.params for r in simulate_range(p, 2, {"N": 2, "M": 1})]
    assert got == [{"N": 2, "M": 1}, {"N": 2, "M": 2}]


def test_error_cap():
    pipes = [Pipe(f"p{k}", 1, ("x",)) for k in range(30)]
    parts = [(f"w{k}", [ev("commit", f"p{k}", 0, k + 1)]) for k in range(30)]
    r = simulate(prog(pipes, parts, ()), {})
    assert len(r.errors) == 20 and not r.complete
    assert {e.kind for e in r.errors} == {"commit-without-acquire"}


def test_simulator_is_independent_of_unroll_and_passes():
    import tle_compiler.semantics.simulator as sim
    src = open(sim.__file__).read()
    imports = [ln for ln in src.splitlines() if ln.startswith(("import ", "from "))]
    assert not [ln for ln in imports if "unroll" in ln or "passes" in ln], imports


# ---------------------------------------------------------------------------------- slot accesses

def wr(pipe, idx, field, line):
    return Access("writer", pipe, field, A(idx), None, "tl.store", L(line))


def rd(pipe, idx, field, line, reader=None):
    return Access("reader", pipe, field, A(idx), reader, "tl.load", L(line))


def ring_with(writer_body, reader_body, capacity=1, fields=("x",), params=("N",)):
    """One SPSC pipe p: the writer partition runs ``writer_body`` and the reader ``reader_body``
    inside ``for i in range(N)`` (lines 1 and 10)."""
    return prog([Pipe("p", capacity, fields)],
                [("w", [loop("i", "N", writer_body, 1)]), ("r", [loop("i", "N", reader_body, 10)])],
                params)


def test_accesses_inside_their_windows_ok():
    p = ring_with([ev("acquire", "p", "i", 2), wr("p", "i", "x", 3), wr("p", "i", "y", 4),
                   ev("commit", "p", "i", 5)],
                  [ev("wait", "p", "i", 11), rd("p", "i", "y", 12), rd("p", "i", "x", 13),
                   ev("release", "p", "i", 14)], capacity=2, fields=("x", "y"))
    for r in simulate_range(p, 5):
        assert r.ok and r.complete, (r.params, r.errors)


def test_late_release_window_spans_two_iterations_ok():
    # wait(i); read(i - 1) before release(i - 1): tile i - 1 is still held (capacity 2)
    w = [loop("i", "N", [ev("acquire", "p", "i", 2), wr("p", "i", "x", 3),
                         ev("commit", "p", "i", 4)], 1)]
    rdr = [loop("i", "N", [ev("wait", "p", "i", 11), rd("p", "i", "x", 12),
                           If(Compare(A("i"), ">=", A(1)),
                              (rd("p", A("i") - 1, "x", 13), ev("release", "p", A("i") - 1, 14)),
                              (), L(15))], 10),
           If(Compare(A("N"), ">=", A(1)), (rd("p", A("N") - 1, "x", 16),
                                            ev("release", "p", A("N") - 1, 17)), (), L(18))]
    p = prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rdr)])
    for r in simulate_range(p, 5):
        assert r.ok, (r.params, r.errors)


def test_spmc_reads_of_each_readers_view_ok():
    pipes = [Pipe("kv", 2, ("kv_l", "kv_r"), ("left", "right"))]
    w = [loop("i", "N", [ev("acquire", "kv", "i", 2), wr("kv", "i", "kv_l", 3),
                         wr("kv", "i", "kv_r", 4), ev("commit", "kv", "i", 5)], 1)]
    lft = [loop("i", "N", [ev("wait", "kv", "i", 11, "left"), rd("kv", "i", "kv_l", 12, "left"),
                           rd("kv", "i", "kv_r", 13, "left"),
                           ev("release", "kv", "i", 14, "left")], 10)]
    rgt = [loop("i", "N", [ev("wait", "kv", "i", 21, "right", ("kv_r",)),
                           rd("kv", "i", "kv_r", 22, "right"),
                           ev("release", "kv", "i", 23, "right")], 20)]
    for r in simulate_range(prog(pipes, [("w", w), ("L", lft), ("R", rgt)]), 4):
        assert r.ok, (r.params, r.errors)


def test_one_shot_reader_without_release_reads_to_the_end_ok():
    pipes = [Pipe("q", 1, ("a",), one_shot=True), Pipe("p", 1, ("x",))]
    w = [ev("acquire", "q", 0, 1), wr("q", 0, "a", 2), ev("commit", "q", 0, 3),
         loop("i", "N", [ev("acquire", "p", "i", 5), ev("commit", "p", "i", 6)], 4)]
    rdr = [ev("wait", "q", 0, 11),
           loop("i", "N", [ev("wait", "p", "i", 13), rd("q", 0, "a", 14),
                           ev("release", "p", "i", 15)], 12),
           rd("q", 0, "a", 16)]
    for r in simulate_range(prog(pipes, [("w", w), ("r", rdr)]), 4):
        assert r.ok, (r.params, r.errors)


def test_read_after_release_is_outside_its_window_and_can_read_the_next_tile():
    p = ring_with([ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)],
                  [ev("wait", "p", "i", 11), ev("release", "p", "i", 12), rd("p", "i", "x", 13)])
    assert simulate(p, {"N": 0}).ok
    e = only(simulate(p, {"N": 1}), "access-outside-window", 13)[0]
    assert "p.read(0, x)" in e.message and "release(0) at t.pipe:12 closed its window" in e.message
    # alone, nothing refills the slot; with a second tile the producer may be writing it already
    assert simulate(p, {"N": 1}).kinds == {"access-outside-window"}
    s = only(simulate(p, {"N": 2}), "stale-read", 13)[0]
    assert "being written (index 1)" in s.message


def test_write_after_commit_races_with_the_reader():
    p = ring_with([ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3), wr("p", "i", "x", 4)],
                  [ev("wait", "p", "i", 11), ev("release", "p", "i", 12)])
    r = simulate(p, {"N": 1})
    e = only(r, "access-outside-window", 4)[0]
    assert "commit(0) at t.pipe:3 closed its window" in e.message
    (o,) = only(r, "overwrite", 4)  # one message per kind and line: the first interleaving found
    assert "has not waited index 0" in o.message or "still holds stage 0 (index 0)" in o.message


def test_read_before_wait_can_read_an_uncommitted_slot():
    p = ring_with([ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)],
                  [rd("p", "i", "x", 11), ev("wait", "p", "i", 12), ev("release", "p", "i", 13)])
    r = simulate(p, {"N": 1})
    assert "no p.wait(0) is open here" in only(r, "access-outside-window", 11)[0].message
    (s,) = only(r, "stale-read", 11)
    assert s.message.endswith(("nothing was committed on this stage",
                               "the slot is being written (index 0)"))


def test_write_before_acquire_can_overwrite_the_tile_being_read():
    p = ring_with([wr("p", "i", "x", 2), ev("acquire", "p", "i", 3), ev("commit", "p", "i", 4)],
                  [ev("wait", "p", "i", 11), ev("release", "p", "i", 12)])
    r = simulate(p, {"N": 2})
    assert "no p.acquire(0) is open here" in only(r, "access-outside-window", 2)[0].message
    only(r, "overwrite", 2)


def test_read_of_a_neighbouring_index_names_what_the_stage_holds():
    # capacity 1: the reader holds index i and reads index i + 1 of the same stage
    p = ring_with([ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)],
                  [ev("wait", "p", "i", 11), rd("p", A("i") + 1, "x", 12),
                   ev("release", "p", "i", 13)])
    r = simulate(p, {"N": 1})
    e = only(r, "access-outside-window", 12)[0]
    assert "stage 0 is held for index 0" in e.message and "not 1" in e.message
    assert "the slot holds index 0" in only(r, "stale-read", 12)[0].message


def test_negative_access_index():
    p = ring_with([ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)],
                  [ev("wait", "p", "i", 11), rd("p", A("i") - 1, "x", 12),
                   ev("release", "p", "i", 13)], capacity=2)
    only(simulate(p, {"N": 1}), "negative-index", 12)


def test_write_after_close_is_outside_its_window():
    w = [ev("close", "p", 0, 1), wr("p", 0, "x", 2)]
    rdr = [ev("wait", "p", 0, 11), ev("release", "p", 0, 12)]
    r = simulate(prog([Pipe("p", 1, ("x",))], [("w", w), ("r", rdr)], ()), {})
    e = only(r, "access-outside-window", 2)[0]
    assert "close(0) at t.pipe:1 closed its window" in e.message


def test_one_shot_read_after_release_is_outside_its_window_but_reads_the_right_tile():
    pipes = [Pipe("q", 1, ("a",), one_shot=True)]
    w = [ev("acquire", "q", 0, 1), ev("commit", "q", 0, 2)]
    rdr = [ev("wait", "q", 0, 11), ev("release", "q", 0, 12), rd("q", 0, "a", 13)]
    r = simulate(prog(pipes, [("w", w), ("r", rdr)], ()), {})
    # a one-shot slot is never refilled: the only fault is the window
    assert [(e.kind, e.loc.line) for e in r.errors] == [("access-outside-window", 13)]


def test_write_checks_only_the_readers_of_its_field():
    # the producer writes kv_l after the commit: left (which sees kv_l) may still be reading it,
    # right (only kv_r) is not affected by that write
    pipes = [Pipe("kv", 1, ("kv_l", "kv_r"), ("left", "right"))]
    w = [ev("acquire", "kv", 0, 1), ev("commit", "kv", 0, 2), wr("kv", 0, "kv_l", 3)]
    lft = [ev("wait", "kv", 0, 11, "left"), ev("release", "kv", 0, 12, "left")]
    rgt = [ev("wait", "kv", 0, 21, "right", ("kv_r",)), ev("release", "kv", 0, 22, "right")]
    r = simulate(prog(pipes, [("w", w), ("L", lft), ("R", rgt)], ()), {})
    msgs = [e.message for e in only(r, "overwrite", 3)]
    assert all("reader 'left'" in m and "reader 'right'" not in m for m in msgs), msgs


def test_in_window_accesses_of_a_broken_protocol_add_no_error_of_their_own():
    # phase aliasing (indices 0 and 4 on a capacity-2 ring): acquire(4) passes while the reader
    # still needs index 0 and is reported there; a partition stops at its error, so the write
    # of 4 in its window runs only where the acquire was legal and races with nothing
    w = [ev("acquire", "p", 0, 1), wr("p", 0, "x", 6), ev("commit", "p", 0, 2),
         ev("acquire", "p", 4, 3), wr("p", 4, "x", 4), ev("commit", "p", 4, 5)]
    rdr = [ev("wait", "p", 0, 11), rd("p", 0, "x", 12), ev("release", "p", 0, 13),
           ev("wait", "p", 4, 14), ev("release", "p", 4, 15)]
    r = simulate(prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rdr)], ()), {})
    only(r, "overwrite", 3)
    only(r, "stale-read", 14)
    assert {e.loc.line for e in r.errors} == {3, 14}


def test_a_reader_name_on_a_write_means_nothing():
    # as Access.endpoint has it: a write is the writer's whatever reader it names
    named = Access("writer", "p", "x", A("i"), "someone", "", L(3))
    p = ring_with([ev("acquire", "p", "i", 2), named, ev("commit", "p", "i", 4)],
                  [ev("wait", "p", "i", 11), ev("release", "p", "i", 12)])
    assert all(r.ok for r in simulate_range(p, 3))


def test_access_in_a_partition_of_no_endpoint_is_outside_its_window():
    # pipe q's reader lives nowhere, so a read of it has no owner to be structurally wrong about;
    # when it runs, no window is open there
    pipes = [Pipe("q", 1, ("a",))]
    w = [ev("acquire", "q", 0, 1), ev("commit", "q", 0, 2)]
    r = simulate(prog(pipes, [("w", w), ("x", [rd("q", 0, "a", 11)])], ()), {})
    assert "access-outside-window" in r.kinds


def test_access_structural_errors():
    spmc = [Pipe("kv", 2, ("a", "b"), ("l", "r"))]
    spsc = [Pipe("p", 2, ("a",))]
    wring = [ev("acquire", "p", 0, 1), ev("commit", "p", 0, 2)]
    _raises(prog(spsc, [("x", [rd("nope", 0, "a", 1)])]), "unknown pipe")
    _raises(prog(spsc, [("x", [rd("p", 0, "zz", 1)])]), "unknown field 'zz'")
    _raises(prog(spsc, [("x", [Access("both", "p", "a", A(0), None, "", L(1))])]), "side")
    _raises(prog(spmc, [("x", [rd("kv", 0, "a", 1)])]), "names no reader")
    _raises(prog(spmc, [("x", [rd("kv", 0, "a", 1, "zz")])]), "not a declared reader")
    _raises(prog(spsc, [("x", [rd("p", 0, "a", 1, "zz")])]), "declares none")
    # the endpoint lives in another partition: the same fault as its events in two partitions
    e = _raises(prog(spsc, [("w", wring), ("x", [wr("p", 0, "a", 3)])]),
                "the writer of pipe 'p' is partition 'w'")
    assert e.loc == L(3)
    _raises(prog(spsc, [("w", wring), ("r", [ev("wait", "p", 0, 4), ev("release", "p", 0, 5)]),
                        ("x", [rd("p", 0, "a", 6)])]), "partition 'r'")
    _raises(prog(spmc, [("w", [ev("acquire", "kv", 0, 1), ev("commit", "kv", 0, 2)]),
                        ("x", [ev("wait", "kv", 0, 3, "l", ("a",)), rd("kv", 0, "b", 4, "l"),
                               ev("release", "kv", 0, 5, "l")])]), "outside the view")


def test_read_of_a_field_no_write_fills_is_unwritten_field():
    # the writer fills x only; the reader reads y: uninitialised shared memory in every window
    p = ring_with([ev("acquire", "p", "i", 2), wr("p", "i", "x", 3), ev("commit", "p", "i", 4)],
                  [ev("wait", "p", "i", 11), rd("p", "i", "y", 12), ev("release", "p", "i", 13)],
                  fields=("x", "y"))
    assert simulate(p, {"N": 0}).ok  # the read never runs: no fault
    r = simulate(p, {"N": 2})
    assert r.kinds == {"unwritten-field"}  # inside its window, on the right index: only that
    (e,) = only(r, "unwritten-field", 12)
    assert "p.read(0, y)" in e.message and "partition 'r'" in e.message
    assert "no write of pipe 'p' fills it" in e.message and "fill only x" in e.message


def test_unwritten_field_names_the_reader_of_a_spmc_pipe():
    pipes = [Pipe("kv", 1, ("a", "b"), ("left", "right"))]
    w = [loop("i", "N", [ev("acquire", "kv", "i", 2), wr("kv", "i", "a", 3),
                         ev("commit", "kv", "i", 4)], 1)]
    lft = [loop("i", "N", [ev("wait", "kv", "i", 11, "left"), rd("kv", "i", "a", 12, "left"),
                           ev("release", "kv", "i", 13, "left")], 10)]
    rgt = [loop("i", "N", [ev("wait", "kv", "i", 21, "right", ("b",)),
                           rd("kv", "i", "b", 22, "right"),
                           ev("release", "kv", "i", 23, "right")], 20)]
    r = simulate(prog(pipes, [("w", w), ("L", lft), ("R", rgt)]), {"N": 1})
    (e,) = r.errors
    assert (e.kind, e.loc.line) == ("unwritten-field", 22)
    assert "reader 'right' of 'kv' (partition 'R')" in e.message and "field 'b'" in e.message


def test_reads_of_a_pipe_without_writes_are_checked_against_windows_only():
    # a protocol skeleton: no write access at all, so no field is "unwritten"
    p = ring_with([ev("acquire", "p", "i", 2), ev("commit", "p", "i", 3)],
                  [ev("wait", "p", "i", 11), rd("p", "i", "y", 12), ev("release", "p", "i", 13)],
                  fields=("x", "y"))
    assert all(r.ok for r in simulate_range(p, 3))


def test_a_slot_keeps_its_contents_between_windows():
    # x is written at the first index only and read at every index (a Q tile filled once): the
    # rule asks for a write of the field somewhere, not one in every window it is read in
    first = If(Compare(A("i"), "==", A(0)), (wr("p", "i", "x", 3),), (), L(4))
    p = ring_with([ev("acquire", "p", "i", 2), first, ev("commit", "p", "i", 5)],
                  [ev("wait", "p", "i", 11), rd("p", "i", "x", 12), ev("release", "p", "i", 13)])
    assert all(r.ok for r in simulate_range(p, 3))


def test_each_stage_keeps_its_own_copy_of_a_field():
    # capacity 2, x written at index 0 only (stage 0) and read at every index: stage 1's copy of x
    # is never written, so the read at index 1 finds uninitialised shared memory
    first = If(Compare(A("i"), "==", A(0)), (wr("p", "i", "x", 3),), (), L(4))
    p = ring_with([ev("acquire", "p", "i", 2), first, ev("commit", "p", "i", 5)],
                  [ev("wait", "p", "i", 11), rd("p", "i", "x", 12), ev("release", "p", "i", 13)],
                  capacity=2)
    assert simulate(p, {"N": 1}).ok
    for n in (2, 3):
        r = simulate(p, {"N": n})
        assert r.kinds == {"unwritten-field"}, r.errors
        (e,) = only(r, "unwritten-field", 12)
        assert "p.read(1, x)" in e.message and "(stage 1)" in e.message
        assert "field 'x' of stage 1 was never written" in e.message
        assert "its writes fill stage 0" in e.message


def test_a_field_written_once_on_every_stage_is_kept():
    once = If(Compare(A("i"), "<", A(2)), (wr("p", "i", "x", 3),), (), L(4))
    p = ring_with([ev("acquire", "p", "i", 2), once, ev("commit", "p", "i", 5)],
                  [ev("wait", "p", "i", 11), rd("p", "i", "x", 12), ev("release", "p", "i", 13)],
                  capacity=2)
    assert all(r.ok for r in simulate_range(p, 5))


def test_a_stage_written_only_after_the_read_is_unwritten_at_the_read():
    # stage 0 is first written at index 2: the read at index 0 comes before any fill
    late = If(Compare(A("i"), ">=", A(1)), (wr("p", "i", "x", 3),), (), L(4))
    p = ring_with([ev("acquire", "p", "i", 2), late, ev("commit", "p", "i", 5)],
                  [ev("wait", "p", "i", 11), rd("p", "i", "x", 12), ev("release", "p", "i", 13)],
                  capacity=2)
    assert simulate(p, {"N": 0}).ok
    for n in (1, 3):
        r = simulate(p, {"N": n})
        (e,) = only(r, "unwritten-field", 12)
        assert "p.read(0, x)" in e.message and "(stage 0)" in e.message


def test_a_tma_copy_fills_its_field_and_a_close_window_fills_nothing():
    # the writer copies x by TMA in each committed window and closes at N; the reader reads x in
    # every window, the close's included: stage N % 2 holds a copy only once index N - 2 ran
    tma = Access("writer", "p", "x", A("i"), None, "", L(3), tma=True, nbytes=256)
    w = [loop("i", "N", [ev("acquire", "p", "i", 2), tma, ev("commit", "p", "i", 4)], 1),
         ev("close", "p", "N", 5)]
    rdr = [loop("i", A("N") + 1, [ev("wait", "p", "i", 11), rd("p", "i", "x", 12),
                                  ev("release", "p", "i", 13)], 10)]
    p = prog([Pipe("p", 2, ("x",))], [("w", w), ("r", rdr)])
    for n in (0, 1):
        r = simulate(p, {"N": n})
        assert r.kinds == {"unwritten-field"}, (n, r.errors)
        (e,) = only(r, "unwritten-field", 12)
        assert f"p.read({n}, x)" in e.message and f"(stage {n})" in e.message
    for n in (2, 3, 4):
        assert simulate(p, {"N": n}).ok, n


def test_an_unwritten_read_in_code_that_never_runs_is_no_fault():
    never = If(Compare(A("i"), "<", A(0)), (rd("p", "i", "y", 12),), (), L(14))
    p = ring_with([ev("acquire", "p", "i", 2), wr("p", "i", "x", 3), ev("commit", "p", "i", 4)],
                  [ev("wait", "p", "i", 11), never, ev("release", "p", "i", 13)],
                  fields=("x", "y"))
    assert all(r.ok for r in simulate_range(p, 3))


@pytest.mark.parametrize("case, physical", [
    ("read_after_release", "stale-read"), ("write_after_commit", "overwrite"),
    ("read_before_wait", "stale-read"), ("read_of_wrong_index", "stale-read"),
    ("write_before_acquire", "overwrite"), ("one_shot_read", None)])
def test_each_misplaced_access_case_shows_its_race(case, physical):
    """The window rule is not arbitrary: each bad case of tests/cases/ races on the slot in some
    interleaving (a one-shot slot is never refilled, so its late read only breaks the window)."""
    path = Path(__file__).parent / "cases" / f"{case}.bad.pipe"
    line = int(path.read_text().splitlines()[0].rsplit(" ", 1)[1])
    (program,) = parse_file(path).kernels
    kinds = set()
    for r in simulate_range(program, 3):
        kinds |= {e.kind for e in r.errors if e.loc.line == line}
    assert kinds == {"access-outside-window"} | ({physical} if physical else set())


# ---------------------------------------------------------------------------------- param domains

def test_simulate_range_follows_param_domains():
    def params_of(*ps, **kw):
        p = Program("k", tuple(ps), (), (Partition("w", (), default=True),))
        return [r.params for r in simulate_range(p, 2, **kw)]

    assert params_of(Param("N", None)) == [{"N": n} for n in (-2, -1, 0, 1, 2)]
    assert params_of(Param("N", None), low=-4)[0] == {"N": -4}
    assert params_of(Param("N", 0, max=1)) == [{"N": 0}, {"N": 1}]
    assert params_of(Param("N", None, max=-1)) == [{"N": -2}, {"N": -1}]
    assert params_of(Param("N", 1, max=5), min_values={"N": 0}) == [{"N": 1}, {"N": 2}]
    assert params_of(Param("N", None), min_values={"N": -3})[0] == {"N": -3}


def test_value_outside_the_domain_is_refused():
    p = Program("k", (Param("N", 1, max=3),), (), (Partition("w", (), default=True),))
    for n in (0, 4):
        with pytest.raises(ValueError, match="outside its domain"):
            simulate(p, {"N": n})
    assert simulate(p, {"N": 3}).ok


def test_negative_params_and_c_remainder():
    # for i in range(N, 0) runs over negative values. The producer commits index i - N for the
    # odd i, selected by C's remainder (rem(i, 2) == -1); the consumer selects them by Python's
    # j % 2 == 1, the same set for negative j: correct for every N <= 0.
    def program(writer_cond):
        idx = A("i") - A("N")
        w = [loop("i", 0, [If(writer_cond, (ev("acquire", "a", idx, 2), ev("commit", "a", idx, 3)),
                              (), L(4))], 1, start="N")]
        jdx = A("j") - A("N")
        rdr = [loop("j", 0, [If(ModCompare(A("j"), 2, "==", 1),
                                (ev("wait", "a", jdx, 12), ev("release", "a", jdx, 13)),
                                (), L(14))], 11, start="N")]
        return Program("k", (Param("N", None, max=0),), (Pipe("a", 2, ("x",)),),
                       (Partition("w", tuple(w), default=True), Partition("r", tuple(rdr))))

    results = simulate_range(program(ModCompare(A("i"), 2, "==", -1, c=True)), 3, low=-6)
    assert [r.params["N"] for r in results] == list(range(-6, 1))
    assert all(r.ok for r in results), [(r.params, r.errors) for r in results if not r.ok]
    # rem(i, 2) == 1 never holds for a negative i: nothing is committed, the consumer hangs as
    # soon as the range holds an odd value
    never = ModCompare(A("i"), 2, "==", 1, c=True)
    bad = {r.params["N"]: r.ok for r in simulate_range(program(never), 3, low=-3)}
    assert bad == {-3: False, -2: False, -1: False, 0: True}
