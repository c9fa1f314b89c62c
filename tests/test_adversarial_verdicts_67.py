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
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, get, kernel, loop, put, run_dump

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
