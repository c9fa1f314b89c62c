"""One walk of a run-time loop nest (ir/loop_counter.py) for both i32 checks of loop counters:
the i32 check of a Program's loops at the values it checks (passes/i32_range.py) and the
endless-loop check of data loops whose bounds read a value no checked value stands for
(frontend/loop_ends.counter_wraps, over that value's domain).

Before they shared it, each computed the values a loop variable takes and the next value of the
compiled counter on its own, and they disagreed on two kinds of nest; the i32 check was right
both times, by Python's range and Triton's scf.for (the oracle below):

1. An outer loop of single-valued bounds and a step > 1: counter_wraps read `range(0, 10, 4)`
   as 0..9 where it gives 0, 4, 8, so `for j in range(0, N + i, 2)` under it, N assumed at most
   2^31 - 10, was refused (endless-loop, "carries the counter to 2147483648"); its counter ends
   at most at 2^31 - 1 (N + 8 <= 2^31 - 2). The same nest with N checked was verified.
2. An outer loop that runs no iteration (`range(0, 0)`, `range(10, 5)`): counter_wraps went on
   into the loop inside it with an empty interval and refused it; that loop never runs.
"""

from __future__ import annotations

import random

import pytest

from tle_compiler.frontend.loop_ends import counter_wraps
from tle_compiler.ir.expr import Affine
from tle_compiler.ir.i32 import I32_MAX, I32_MIN
from tle_compiler.ir.loop_counter import innermost_next_counter, iterations
from tle_compiler.ir.nodes import For
from tle_compiler.passes.i32_range import _Walk

from .adversarial_support import FIXED_EVENTS, STORE, data_loop, dump, expect


def compiled_counter(start: int, stop: int, step: int) -> range:
    """The values of the counter Triton 3.6's scf.for steps for `range(start, stop, step)`: the
    variable for a positive step; for a negative one visit_For swaps the bounds and negates the
    step, a counter from the stop up to the start (the variable is `start - counter + stop`)."""
    return range(start, stop, step) if step > 0 else range(stop, start, -step)


def compiled_next(start: int, stop: int, step: int):
    """The counter's value the compiled loop computes after its last iteration (before it
    compares: past 2^31 - 1 it wraps below the bound and the loop never ends); None where the
    loop runs no iteration."""
    c = compiled_counter(start, stop, step)
    return c[-1] + abs(step) if c else None


@pytest.mark.parametrize("step", [1, 2, 3, 7, -1, -2, -3, -7])
def test_the_compiled_counter_gives_pythons_range(step):
    """The oracle's model of scf.for: its variable runs through Python's range."""
    for start in range(-9, 10):
        for stop in range(-9, 10):
            variables = [c if step > 0 else start - c + stop
                         for c in compiled_counter(start, stop, step)]
            assert variables == list(range(start, stop, step))


def loop(var: str, start, stop, step: int, *body: For) -> For:
    return For(var, Affine.of(start), Affine.of(stop), step, tuple(body))


def oracle_next(nest: For, point: dict) -> list:
    """The compiled next counter value of the innermost loop of ``nest`` at every iteration of
    the loops around it, the params at ``point``, by Python's range."""
    start, stop = nest.start.eval(point), nest.stop.eval(point)
    inner = [s for s in nest.body if isinstance(s, For)]
    if not inner:
        n = compiled_next(start, stop, nest.step)
        return [] if n is None else [n]
    return [x for v in range(start, stop, nest.step)
            for x in oracle_next(inner[0], {**point, nest.var: v})]


def i32_walk_finds(nest: For, env: dict):
    """The value the i32 check of a Program's loops reports outside i32 for ``nest``, or None."""
    walk = _Walk()
    if walk.body((nest,), dict(env)):
        return None
    return int(walk.found.rsplit(" ", 1)[1])


#: nests where the two walks disagreed before: (nest, N's interval, the oracle's greatest next)
DISAGREED = {
    "a stepped outer loop": (
        loop("i", 0, 10, 4, loop("j", 0, Affine.of("N") + "i", 2)), (I32_MAX - 40, I32_MAX - 9)),
    "an outer loop of no iteration": (
        loop("i", 0, 0, 1, loop("j", 0, Affine.of("N") + "i", 3)), (I32_MAX - 40, I32_MAX)),
    "an outer loop backwards of no iteration": (
        loop("i", 10, 5, 1, loop("j", 0, Affine.of("N") + "i", 3)), (I32_MAX - 40, I32_MAX - 4)),
}


@pytest.mark.parametrize("name", list(DISAGREED))
def test_both_checks_read_the_nest_as_python_runs_it(name):
    """Before: counter_wraps said 2147483648 (2147483649 for the loops of no iteration); Python
    and Triton's loop keep every next counter inside i32, and the i32 check found none."""
    nest, n = DISAGREED[name]
    tops = [x for v in range(n[0], n[1] + 1) for x in oracle_next(nest, {"N": v})]
    assert all(x <= I32_MAX for x in tops)
    assert counter_wraps(nest, {"N": n}) is None
    assert i32_walk_finds(nest, {"N": n}) is None


def random_nest(rng: random.Random) -> tuple[For, tuple[int, int]]:
    """Two loops: an outer one of small single-valued bounds, an inner one whose bound reads N
    (near 2^31 - 1) and the outer variable, either way up; its bounds stay inside i32 (the i32
    check reports a bound outside first, which the endless-loop check reads as any i32 value)."""
    while True:
        a = rng.randint(-3, 6)
        outer = (a, a + rng.randint(-2, 12), rng.choice([1, 2, 3, 4, 5]))
        near = Affine.of("N") + Affine.of("i").scale(rng.choice([0, 1, -1])) - rng.randint(0, 20)
        step = rng.choice([1, 2, 3, 5, -1, -2, -3, -5])
        inner = loop("j", 0, near, step) if step > 0 else loop("j", near, 0, step)
        hi = I32_MAX - rng.randint(0, 30)
        n = (hi - rng.randint(0, 10), hi)
        it = iterations(loop("i", *outer), {})
        span = near.span({"N": n, "i": it.values if it else (0, 0)})
        if I32_MIN <= span[0] and span[1] <= I32_MAX:
            return loop("i", *outer, inner), n


@pytest.mark.parametrize("seed", range(40))
def test_the_two_checks_agree_and_cover_what_python_runs(seed):
    """Over random nests: the endless-loop check and the i32 check of checked values report the
    same counter value, it is the walk's, and a next counter past 2^31 - 1 that Python's range
    reaches at some value of N is never missed."""
    rng = random.Random(seed)
    for _ in range(25):
        nest, n = random_nest(rng)
        env = {"N": n}
        top = innermost_next_counter(nest, env)
        wraps = counter_wraps(nest, env)
        assert wraps == (top[1] if top is not None and top[1] > I32_MAX else None)
        assert i32_walk_finds(nest, env) == wraps, nest
        tops = [x for v in range(n[0], n[1] + 1) for x in oracle_next(nest, {"N": v})]
        if any(x > I32_MAX for x in tops):
            assert wraps is not None and wraps >= max(tops), nest
        if not tops:  # no iteration of the innermost loop at any value
            assert wraps is None, nest


def test_iterations_of_single_valued_bounds_are_pythons():
    """Where every bound has one value, the walk's variable and counter intervals are exactly
    the least and greatest of Python's range and of the compiled counter."""
    for step in (1, 2, 3, 7, -1, -2, -3, -7):
        for start in range(-12, 13):
            for stop in range(-12, 13):
                it = iterations(loop("i", start, stop, step), {})
                values, counter = range(start, stop, step), compiled_counter(start, stop, step)
                if not values:
                    assert it is None
                    continue
                assert it.values == (min(values), max(values))
                assert it.counter == (counter[0], counter[-1])
                assert it.next_counter[1] == compiled_next(start, stop, step)


def test_a_bound_outside_i32_is_any_i32_value():
    """The GPU computes a bound in i32: one that may leave it may be any i32 value."""
    it = iterations(loop("i", 0, Affine.of("N") + 4, 3), {"N": (0, I32_MAX)})
    assert it.values == (0, I32_MAX - 1) and it.next_counter == (3, I32_MAX + 2)
    it = iterations(loop("i", Affine.of("N") - 4, 0, -1), {"N": (I32_MIN, 0)})
    assert it.counter == (0, I32_MAX - 1)


# ------------------------------------------------------------------ the same, read by tle-dump

_ENDLESS = ("rejected", "[endless-loop]", "this loop may never end")
_STEPPED = ("for i in range(0, 10, 4):\n    for j in range(0, N + i, 2):\n"
            "        tl.store(y_ptr, 1.0)\n")
KERNELS = {
    # disagreement 1: N <= 2^31 - 10 keeps N + 8 at 2^31 - 2, the counter at most at 2^31 - 1
    "stepped outer, N assumed to 2^31 - 10": (
        data_loop(_STEPPED, FIXED_EVENTS, body="tle.assume(N <= 2147483638)\n"), (), "verified"),
    "stepped outer, N assumed to 2^31 - 9": (
        data_loop(_STEPPED, FIXED_EVENTS, body="tle.assume(N <= 2147483639)\n"), (),
        _ENDLESS + ("2147483648",)),
    "stepped outer, N checked at 2^31 - 10": (
        data_loop(_STEPPED), ("--param", "N=2147483638"), "verified"),
    "stepped outer, N checked at 2^31 - 9": (
        data_loop(_STEPPED), ("--param", "N=2147483639"), ("bounded", "2147483648")),
    # disagreement 2: the loop inside a loop of no iteration never runs
    "inside range(0, 0)": (
        data_loop("for i in range(0, 0):\n    for j in range(0, N + i, 3):\n" + "    " + STORE,
                  FIXED_EVENTS), (), "verified"),
    "inside range(10, 5)": (
        data_loop("for i in range(10, 5):\n    for j in range(0, N + i, 3):\n" + "    " + STORE,
                  FIXED_EVENTS), (), "verified"),
    "inside range(0, 1)": (
        data_loop("for i in range(0, 1):\n    for j in range(0, N + i, 3):\n" + "    " + STORE,
                  FIXED_EVENTS), (), _ENDLESS + ("2147483649",)),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_tle_dump_reads_the_nest_as_python_runs_it(tmp_path, capsys, name):
    """Before: the first (N assumed) and the two of no iteration were refused (endless-loop)."""
    text, flags, want = KERNELS[name]
    code, err = dump(tmp_path, capsys, text, *flags)
    expect(code, err, want)
