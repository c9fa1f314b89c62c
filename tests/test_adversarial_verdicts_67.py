"""A sixty-seventh adversarial round (adversarial round 67): round 66's unrolled and specialised
readings (a tl.static_range read unrolled where a pipe index divides its variable or a value it
chooses picks a handle, a handle a constexpr index picks from a tuple read specialised), tried
for false claims. Each case is a small kernel read by tle-dump's main().

False refusals, fixed:

- ``for p in tl.static_range(-4, 0): s = w.acquire(stage(p)) ...`` with ``def stage(i): return
  i % 4`` (also ``k = stage(p)`` first, a helper returning ``stage(i + 0)``, or one binding ``j
  = i`` and returning ``j % 4``), a correct ring, was refused, non-affine ("`i % 4` divides (or
  takes a remainder of) a variable"): ``divides`` followed pipe events into helpers but not a
  value a helper returns, so the loop was built once with ``p`` a name, where Triton 3.6
  unrolls it, specialises the helper to each iteration's constexpr and returns Python's
  number. FIXED: frontend/build_loops.py ``returns_divided`` (called by ``divides``): such a
  call unrolls the loop; ``return i // 2`` over ``tl.static_range(4)`` is found
  (phase-aliasing), and ``j = i`` then ``j % 4`` over negative ``p`` is refused as the C
  remainder Triton takes of the tensor ``j``; a `range` loop's ``stage(p)`` stays non-affine.
- ``for i in tl.static_range(4): for j in tl.static_range(i): w.acquire(i * (i - 1) // 2 + j //
  1)`` (a triangle), ``for j in tl.static_range(i - 1, i)`` over ``w.acquire(j // 1)``, ``for j
  in range(i // 2)`` over ``w.acquire(i - 2 + j)``, and ``for j in tl.static_range(0)`` over
  ``w.acquire(j // 2)``, correct rings, were refused, non-affine or non-affine-loop: the outer
  loop was read unrolled only for an index dividing its own variable, so the inner one had
  the bound ``i // 2`` of a name, or could not be unrolled with bounds read from ``i``; and a
  tl.static_range of no iteration whose body divides its variable was built once, where
  Triton 3.6 visits it no time. FIXED: frontend/build_loops.py ``divides`` unrolls a loop
  whose inner loop (with pipe events or helper calls) has bounds dividing its variable, or
  bounds reading it and a body read unrolled itself; ``s_For`` builds such a loop of no
  iteration as no statement (a `range` loop of none keeps its refusal, as Triton builds its
  body). ``i + j // 1`` (phase-aliasing) and ``range(i // 2)`` over ``i - 2``
  (wait-never-committed) are found.
- ``for p in tl.static_range(2 * C - 2): if p % 2 == 0: w.acquire(p // 2)`` (round 66's open
  item), a correct ring at C = 5, was refused, non-affine, at any C: the generic reading has
  no value of C, so the loop was not unrolled. FIXED: frontend/build_loops.py ``s_For`` stops
  the generic reading there (``needs_constexprs``, as a pipe capacity of constexprs does), and
  the kernel is read specialised to C, the loop unrolled: verified at C = 5, the missing window
  found at ``--param C=3``; without a value of C, refused asking for one.
- ``h = wa; g = wb`` then ``for j in tl.static_range(2): if j == 1: h, g = g, h`` before
  ``h.acquire(p)`` of two correct rings was refused ("`h` holds different values on different
  paths"): round 66 unrolled a loop whose `if` on its variable binds a name to a name, not to a
  tuple of names. FIXED: frontend/build_loops.py ``indexes_by`` takes a tuple of names too;
  ``if j == 0:`` (``wb`` twice) is found (phase-aliasing, wait-never-committed).

Checked and held (no false verdict found): a body rebinding the variable (``p = p * 0``,
``p = p - 4``, ``p -= 4``, ``j = 1 - j``, ``j = j`` before a choice: the faults found, or
refused as C's remainder of a tensor, unknown-handle, constexpr-if); a name bound from the
variable (``q = p - 4``, ``q, r = p - 4, 0``, ``k = p // 1`` then a helper's ``i % 2``) divided
as C does, in an index, a condition or a helper (refused where C's and Python's differ, as
``half(k)`` of even ``k`` is verified where they agree; ``q & 1`` and ``q >> 1`` read as the
tensor's); helpers that rebind their parameter or pass it to another helper; ``(j - 4 + N *
0) // 2`` and ``2 * i + (j - 4 + i * 0) // 2`` (C's division of a tensor: the fault found);
nested static_ranges (``tl.static_range(i)`` under ``i * (i - 1) // 2``: verified; under ``i
// 2``: found); ``2 * i + j // 2`` under a `range` loop; ``tl.static_range(100000)`` (bad-loop,
Triton's unrolled size), negative steps and starts (``tl.static_range(7, -1, -2)`` reversed:
found), a step of 0 or a float bound (bad-loop), ``tl.static_range(True, 3)`` and ``step=2``;
`return` and `continue` in the body (refused); a zero-trip body's variable read after it
(unknown-name) or bound before it (its value kept); choices kept from the previous iteration
(``if j == 0: h = wa`` without else: ``wa`` twice, found; ``h = h if j == 0 else wa``), a
helper rebinding a handle parameter under ``if j == 1`` (``pick_r``: found), ``hs[k]`` with
``k = j % 2`` a tensor (refused, as in Triton); ``(wa, wb)[j]`` over ``tl.static_range(-1,
1)`` (lowered in Python's order); ``(wa, wb)[C - 5]`` with the reader's indices, its loop's start,
its own handle or a static_range's index shifted by C (found), at ``--param C=4`` / ``6``
(found); a partition's or helper's constexpr parameter given ``C + 1`` or a literal 6 (read
at its own value: found). D's constexpr bounds: ``C = 3`` in the partition or the kernel body
(a tensor: refused), a partition parameter given ``N`` (bad-loop) or ``C - 1`` (read at 4:
the missing window found), DEFAULT_CONFIG's ``"C": True`` (refused: no integer).

Left open: a `range` loop of no iteration whose body divides its variable stays refused
(Triton builds its body); a tl.static_range of constexpr bounds is read specialised only where
its variable is divided (D), not where it picks a tuple's item or chooses a handle.
"""

from __future__ import annotations

import pytest

from .adversarial_support import FILL, dump, expect, get, kernel, loop, put, run_dump
from .test_adversarial_verdicts_66 import CHOSEN_WINDOW, TWO_PIPES, TWO_WINDOWS

# ------------------------------- A: a helper returning a quotient of a tl.static_range variable

READ4 = loop("for p in range(4):", get("p"))
STAGES = '''

def stage(i):
    return i % 4


def half(i):
    return i // 2


def stage_copy(i):
    j = i
    return j % 4


def stage_of_stage(i):
    return stage(i + 0)
'''
RETURNED = {
    "remainder": ("-4, 0", put("stage(p)"), "verified"),
    "through-a-name": ("-4, 0", "k = stage(p)\n" + put("k"), "verified"),
    "through-a-second-helper": ("-4, 0", put("stage_of_stage(p)"), "verified"),
    "copied-parameter": ("0, 4", put("stage_copy(p)"), "verified"),
    "each-index-twice": ("0, 4", put("half(p)"), ("rejected", "[phase-aliasing]")),
    "copied-parameter-negative": ("-4, 0", put("stage_copy(p)"),
                                  ("rejected", "[unsupported-expression]", "C does")),
}


@pytest.mark.parametrize("name", RETURNED)
def test_a_helper_returning_a_quotient_of_a_static_range_variable(tmp_path, capsys, name):
    """Before: rejected in all, non-affine ("`i % 4` divides (or takes a remainder of) a
    variable"). Now the loop is unrolled: Python's remainder of each constexpr where the helper
    divides its parameter, C's of the tensor a plain assignment makes (`j = i`)."""
    bounds, writer, want = RETURNED[name]
    text = kernel(loop(f"for p in tl.static_range({bounds}):", writer), READ4, extra=STAGES)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
    if want == "verified":
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        produce = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert produce.count("mbarrier.arrive(kv_full0") == 4, produce
        assert "static_range" not in produce, produce


def test_held_a_helper_returning_a_quotient_of_a_range_variable_stays_refused(tmp_path,
                                                                               capsys):
    text = kernel(loop("for p in range(4):", put("stage(p)")), READ4, extra=STAGES)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[non-affine]"))


# ------------------------- B: nested loops whose bounds read a tl.static_range variable

NESTED = {
    "triangle": (loop("for i in tl.static_range(4):", loop(
        "for j in tl.static_range(i):", put("i * (i - 1) // 2 + j // 1"))), 6, "verified"),
    "triangle-each-index-twice": (loop("for i in tl.static_range(4):", loop(
        "for j in tl.static_range(i):", put("i + j // 1"))), 6, ("rejected", "[phase-aliasing]")),
    "bounds-read-the-variable": (loop("for i in tl.static_range(1, 3):", loop(
        "for j in tl.static_range(i - 1, i):", put("j // 1"))), 2, "verified"),
    "range-bound-divides-it": (loop("for i in tl.static_range(4):", loop(
        "for j in range(i // 2):", put("i - 2 + j"))), 2, "verified"),  # (4 loops lowered)
    "range-bound-divides-it-badly": (loop("for i in tl.static_range(4):", loop(
        "for j in range(i // 2):", put("i - 2"))), 3, ("rejected", "[wait-never-committed]")),
    "no-iteration": (loop("for j in tl.static_range(0):", put("j // 2")) + put("0") + put("1"),
                     2, "verified"),
}


@pytest.mark.parametrize("name", NESTED)
def test_nested_loops_whose_bounds_read_a_static_range_variable(tmp_path, capsys, name):
    """Before: rejected in all, non-affine or non-affine-loop: the outer loop, built once with
    `i` a name, gave the inner one bounds no affine term holds (`i // 2`), or an inner
    tl.static_range of a bound read from `i` could not be unrolled (`j // 1` non-affine), and a
    tl.static_range of no iteration (the first of `tl.static_range(i)`) was built once, where
    Triton 3.6 visits it no time. Now the outer loop is unrolled, and the empty one is empty."""
    writer, n, want = NESTED[name]
    code, err = dump(tmp_path, capsys, kernel(writer, loop(f"for p in range({n}):", get("p"))))
    expect(code, err, want)
    if want == "verified":
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        produce = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        arrives = 4 if name == "range-bound-divides-it" else n  # (one per loop)
        assert produce.count("mbarrier.arrive(kv_full0") == arrives, produce


def test_held_a_range_loop_of_no_iteration_stays_refused(tmp_path, capsys):
    """Triton builds a `range` loop's body even where it runs no iteration: `j // 2` of it
    stays non-affine."""
    writer = loop("for j in range(0):", put("j // 2")) + put("0") + put("1")
    code, err = dump(tmp_path, capsys, kernel(writer, loop("for p in range(2):", get("p"))))
    expect(code, err, ("rejected", "[non-affine]"))


# --------------------------- C: two pipe handles swapped under a tl.static_range variable's test

SWAPPED = TWO_PIPES.replace(TWO_WINDOWS, CHOSEN_WINDOW.replace("CHOICE", "SWAP")).replace(
    "    for p in range(N):\n        for j", "    h = wa\n    g = wb\n    p = 0\n    if True:\n"
    "        for j").replace("    for p in range(N):\n        res", "    p = 0\n    if True:\n"
                            "        res")


@pytest.mark.parametrize("j, want", [
    ("1", "verified"),
    ("0", ("rejected", "[phase-aliasing]", "[wait-never-committed]")),
], ids=["swapped-after-the-first", "swapped-before-the-first"])
def test_handles_swapped_under_a_static_range_variables_test(tmp_path, capsys, j, want):
    """`if j == J: h, g = g, h` then `h.acquire(p)` in `for j in tl.static_range(2)`: before,
    rejected ("`h` holds different values on different paths"), where each unrolled iteration's
    `h` is one handle; now the loop is unrolled (J = 1: `wa` then `wb`, as the reader waits;
    J = 0: `wb` twice, found)."""
    assert "SWAP" in SWAPPED and "range(N)" not in SWAPPED
    text = SWAPPED.replace("SWAP", f"            if j == {j}:\n                h, g = g, h\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)


# ------------------------ D: a tl.static_range of constexpr bounds whose variable is divided

BY_C = kernel(loop("for p in tl.static_range(2 * C - 2):", loop("if p % 2 == 0:", put("p // 2"))),
              loop("for p in range(4):", get("p")))


@pytest.mark.parametrize("flags, want", [
    ((), "verified"),
    (("--param", "C=3"), ("rejected", "[wait-never-committed]")),
], ids=["config-C-5", "param-C-3"])
def test_a_static_range_of_constexpr_bounds_divided_in_a_pipe_index(tmp_path, capsys, flags,
                                                                    want):
    """Round 66's open item: `for p in tl.static_range(2 * C - 2)` over `w.acquire(p // 2)`
    under `if p % 2 == 0:` was refused, non-affine, at any C (the generic reading has no value
    of C, so the loop was built once). Now read specialised to C and unrolled: 4 windows at
    C = 5 (verified, lowered with 4 commits), 2 at C = 3 (the reader's third wait found)."""
    code, err = dump(tmp_path, capsys, BY_C, *flags)
    expect(code, err, want)
    assert "read specialised to C=" in err, err
    if want == "verified":
        code, gluon, err = run_dump(capsys, "--gluon", str(tmp_path / "kernel.py"))
        assert code == 0, err
        produce = gluon.split("def produce(", 1)[1].split("@gluon.jit", 1)[0]
        assert produce.count("mbarrier.arrive(kv_full0") == 4, produce


def test_held_a_static_range_of_constexpr_bounds_without_a_value_is_refused(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, BY_C.replace('"constexprs": {"C": 5}', '"constexprs": {}'))
    expect(code, err, ("rejected", "[constexpr-operand]", "give it a value"))


# ----------------------------------------------------------------------------- held

HALVES = '''

def odd_half(w, x_ptr, i):
    if i % 2 == 1:
        s = w.acquire(i // 2 + 2)
        FILL
        w.commit(i // 2 + 2)
'''.replace("FILL", FILL)


@pytest.mark.parametrize("writer, want", [
    ("odd_half(w, x_ptr, p)", "verified"),
    ("k = p // 1\nodd_half(w, x_ptr, k)", ("rejected", "[unsupported-expression]", "C does")),
], ids=["the-constexpr", "a-tensor-of-it"])
def test_held_a_helpers_remainder_of_a_tensor_bound_from_the_variable(tmp_path, capsys,
                                                                     writer, want):
    """Over `tl.static_range(-4, 0)`: the helper given `p` (a constexpr) takes Python's
    remainder and quotient (p = -3, -1: indices 0, 1); given `k = p // 1` (a tensor, as a plain
    assignment makes it) it takes C's, `-3 % 2` is -1 and no event runs: refused."""
    text = kernel(loop("for p in tl.static_range(-4, 0):", writer),
                  loop("for p in range(2):", get("p")), extra=HALVES)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, want)
