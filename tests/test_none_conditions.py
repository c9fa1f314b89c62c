"""A conditional expression on the constant None (``x if None else y``), on ``not None``, or on
a name bound to None: Triton 3.6's visit_IfExp takes a NoneType test as a compile-time false
one (its condition types are bool, int and NoneType; visit_Assign makes numbers tensors, not
None) and evaluates only the chosen operand, as an ``if None:`` statement takes its else
branch. The builder left the test undecided, and the kernel was refused because its operands
were tensors the lowering does not choose between (adversarial round 63's open item); ``not
None`` did not fold at all. Now each is read and lowered as the operand Python chooses: the
same verdict and the same Gluon as the kernel written with that operand alone."""

from __future__ import annotations

import pytest

from .adversarial_support import reader_does, run_dump, write_kernel

CASES = [
    # (the kernel's statements, the same with the chosen operand written alone)
    ("q = t if None else t * 2.0", "q = t * 2.0"),
    ("q = t * 2.0 if None else t", "q = t"),
    ("q = t if not None else t * 2.0", "q = t"),
    ("q = (t if None else t * 2.0) + (t * 3.0 if not None else t)", "q = (t * 2.0) + (t * 3.0)"),
    ("if not None:\n    t = t * 3.0\nq = t", "t = t * 3.0\nq = t"),
    # a name bound to None (Triton's visit_Assign makes numbers tensors, not None)
    ("c = None\nq = t if c else t * 2.0", "c = None\nq = t * 2.0"),
    ("c = None\nq = t * 2.0 if c else t + 1.0", "c = None\nq = t + 1.0"),
]


@pytest.mark.parametrize("stmt, chosen", CASES, ids=[c[0].split("\n")[0] for c in CASES])
def test_a_none_test_is_read_as_the_operand_python_chooses(tmp_path, capsys, stmt, chosen):
    store = "\ntl.store(y_ptr + tl.arange(0, 64), q)"
    path = write_kernel(tmp_path, reader_does(stmt + store))
    code, got, err = run_dump(capsys, "--gluon", str(path))
    assert code == 0, err
    write_kernel(tmp_path, reader_does(chosen + store))
    code, want, err = run_dump(capsys, "--gluon", str(path))
    assert code == 0, err
    assert got == want


def test_a_static_assert_of_not_none_holds_and_of_none_fails(tmp_path, capsys):
    """``tl.static_assert(not None)`` holds in Triton 3.6 (the lowering refused it as a
    condition not known at compile time); ``tl.static_assert(None)`` and ``(not not None)``
    fail, and stay refused at their line."""
    store = "\ntl.store(y_ptr + tl.arange(0, 64), t)"
    path = write_kernel(tmp_path, reader_does("tl.static_assert(not None)" + store))
    code, got, err = run_dump(capsys, "--gluon", str(path))
    assert code == 0, err
    write_kernel(tmp_path, reader_does("tl.static_assert(True)" + store))
    assert run_dump(capsys, "--gluon", str(path))[1] == got
    for cond in ("None", "not not None"):
        write_kernel(tmp_path, reader_does(f"tl.static_assert({cond})" + store))
        code, _, err = run_dump(capsys, "-q", str(path))
        assert code == 1 and "the static assertion is false" in err and "kernel.py:31" in err, err
