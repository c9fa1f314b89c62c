"""ir/big_ints.int_op: Python's integer arithmetic (the constexpr arithmetic Triton 3.6 computes
in Python), bounded in width: equal to Python's wherever the result is within MAX_BITS, None
where Python gives no integer, NumberTooWide (a refusal) past the bound, decided before a shift
or a power is computed."""

from __future__ import annotations

import operator
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tle_compiler.diagnostics import TleError
from tle_compiler.ir.big_ints import MAX_BITS, NumberTooWide, PythonRaises, int_op

PY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
      "%": operator.mod, "<<": operator.lshift, ">>": operator.rshift, "**": operator.pow,
      "&": operator.and_, "|": operator.or_, "^": operator.xor}
wide = st.integers(min_value=-(2 ** 300), max_value=2 ** 300)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(PY)), wide, st.integers(min_value=-70, max_value=9000))
def test_int_op_is_pythons_within_the_bound(op, a, b):
    if op in ("*", "&", "|", "^", "+", "-", "//", "%"):
        b = b * 12345678901234567 + 3  # a wide right operand too
    try:
        expected = PY[op](a, b)
    except (ZeroDivisionError, ValueError):
        # Python raises (a negative shift count, a division by zero, 0 to a negative power),
        # and so does Triton's compile of such constexpr arithmetic: refused (round 29)
        with pytest.raises(PythonRaises):
            int_op(op, a, b)
        return
    if isinstance(expected, float):  # a negative power
        expected = None
    if expected is not None and expected.bit_length() > MAX_BITS:
        with pytest.raises(NumberTooWide):
            int_op(op, a, b)
        return
    assert int_op(op, a, b) == expected


def test_bools_stay_bools():
    assert int_op("&", True, True) is True and int_op("|", False, False) is False


@pytest.mark.parametrize("op, a, b", [("<<", 1, 1 << 60), ("**", 3, 10 ** 30),
                                      ("**", 2 ** MAX_BITS - 1, 2), ("<<", -5, MAX_BITS)])
def test_a_result_past_the_bound_is_refused_before_it_is_computed(op, a, b):
    start = time.perf_counter()
    with pytest.raises(NumberTooWide) as refused:
        int_op(op, a, b)
    assert time.perf_counter() - start < 1.0
    assert isinstance(refused.value, TleError) and refused.value.check == "unsupported-expression"
    assert refused.value.bits > MAX_BITS


@pytest.mark.parametrize("op, a, b, expected", [("**", 1, 10 ** 30, 1), ("**", -1, 10 ** 30 + 1, -1),
                                                ("**", 0, 10 ** 30, 0), (">>", 5, 1 << 100, 0),
                                                ("<<", 0, 1 << 60, 0)])
def test_huge_operands_with_small_results_are_computed(op, a, b, expected):
    assert int_op(op, a, b) == expected
