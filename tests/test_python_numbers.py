"""Python numbers that reach a tensor (frontend/python_numbers.py): Triton 3.6 computes arithmetic
on constexprs in Python, with integers of any size, and makes a tensor of a number where it meets
one: a plain assignment, an operand beside a tensor, an argument of `tl.where` / `tl.maximum` /
`tl.minimum` / `tl.full`, what `tl.cdiv` or a helper returns. A tensor cannot hold an integer
outside [-2**63, 2**64) ("Nonrepresentable integer"), so such a kernel does not compile, and
each case below was verified by tle-dump before (the reading folded the arithmetic and checked
the protocol with it). A constexpr the generic reading leaves unbound is read at DEFAULT_CONFIG's
value (C = 5 in round 25's ring), and the kernel is then read specialised to it.

Each refusal rests on Triton refusing the same statement in a plain @triton.jit kernel compiled
to TTIR for sm_90a (C = 3 there), and each twin on Triton compiling it.
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, reader_does, triton_refuses

Y = "y_ptr + tl.arange(0, 64)"

REFUSED = {
    "tl.where of 2**70": f"tl.store({Y}, tl.where(t > 0, 2**70, 0).to(tl.float32))",
    "tl.where of C << 70": f"tl.store({Y}, tl.where(t > 0, C << 70, 0).to(tl.float32))",
    "tl.maximum of a tile and 2**70":
        f"tl.store({Y}, tl.maximum(t.to(tl.int32), 2**70).to(tl.float32))",
    "tl.minimum of two numbers": f"b = tl.minimum(2**70, C)\ntl.store({Y}, t)",
    "tl.full of C << 70": f"tl.store({Y}, tl.full([64], C << 70, tl.int64).to(tl.float32))",
    "a tile compared with 2**70": f"tl.store({Y}, (t.to(tl.int32) < 2**70).to(tl.float32))",
    "N plus C << 70": f"x = N + (C << 70)\ntl.store({Y}, t)",
    "b = C << 256": f"b = C << 256\ntl.store({Y}, t)",
    "tl.cdiv of 2**70": f"b = tl.cdiv(2**70, C) + N\ntl.store({Y}, t)",
    "tl.abs of 2**70": f"b = tl.abs(2**70)\ntl.store({Y}, t)",
    "an if comparing N with 2**70": f"if 2**70 > N:\n    tl.store({Y}, t)",
    "a while comparing with 2**70": f"i = 0\nwhile i < N and N < 2**70:\n    i += 1\n"
                                    f"tl.store({Y}, t)",
    "a range bound of 2**70": f"for i in range(2**70, 2**70 + 1):\n    tl.store({Y}, t)",
    "a tuple holding C << 70": f"b = (C << 70, 1)\ntl.store({Y}, t)",
    "a run-time choice of C << 70": f"b = (C << 70) if N > 0 else 1\ntl.store({Y}, t)",
    "C << 70 * i of a static_range variable":
        f"for i in tl.static_range(2):\n    tl.store({Y}, t + (C << (70 * i)))",
    "b = C << i * 70 of a static_range variable":
        f"for i in tl.static_range(2):\n    b = C << (i * 70)\n    tl.store({Y}, t)",
    "a stored C << 70": "tl.store(y_ptr, C << 70)",
    "an atomic of C << 70": "tl.atomic_add(y_ptr, C << 70)",
    "a load's other of C << 70": f"tl.store({Y}, tl.load({Y}, mask=t > 0, other=C << 70))",
    "a printed C << 70": f"tl.device_print('x', C << 70)\ntl.store({Y}, t)",
    "min of C << 70 and N": f"b = min(C << 70, N)\ntl.store({Y}, t)",
    "an int32 tile times C << 40": f"tl.store(y_ptr + tl.arange(0, 64) * (C << 40), t)",
    # past the 64 powers and shifts the reading computed before (it read `2 ** 5000` as
    # no number, and verified it)
    "b = 2 ** 5000": f"b = 2 ** 5000\ntl.store({Y}, t)",
    "b = C << 5000": f"b = C << 5000\ntl.store({Y}, t)",
    "tl.where of 2**5000": f"tl.store({Y}, tl.where(t > 0, 2**5000, 0).to(tl.float32))",
}
TWINS = {
    "tl.where of 2**40": f"tl.store({Y}, tl.where(t > 0, 2**40, 0).to(tl.float32))",
    "tl.minimum of two numbers within i64": f"b = tl.minimum(2**40, C)\ntl.store({Y}, t)",
    "arithmetic of numbers only": f"b = (C << 256) >> 250\ntl.store({Y}, t)",
    "a wide number bound as a constexpr": f"b: tl.constexpr = C << 256\ntl.store({Y}, t)",
    "a tile compared with 2**40": f"tl.store({Y}, (t.to(tl.int64) < 2**40).to(tl.float32))",
    "a compile-time choice of C << 70": f"b = (C << 70) if C > 100 else 1\ntl.store({Y}, t)",
    "C << 30 * i of a static_range variable":
        f"for i in tl.static_range(2):\n    tl.store({Y}, t + (C << (30 * i)))",
    "a static_range of wide numbers": f"for i in tl.static_range(2**70, 2**70 + 1):\n"
                                      f"    tl.store({Y}, t)",
    "min of two wide numbers": f"b: tl.constexpr = min(C << 70, C << 71)\ntl.store({Y}, t)",
    "a stored C << 20": "tl.store(y_ptr, C << 20)",
    "2 ** 5000 shifted back into i64": f"b = (2 ** 5000) >> 4990\ntl.store({Y}, t)",
}


def test_a_cast_of_number_arithmetic_is_refused(tmp_path, capsys, monkeypatch):
    """`(C << 70).to(tl.int64)`: the arithmetic of numbers is a constexpr in Triton 3.6, which
    has no `.to`; the rule of a cast of a compile-time number read its value, which the
    shift of an unbound constexpr is not, and verified it. Triton refuses it."""
    stmt = f"b = (C << 70).to(tl.int64)\ntl.store({Y}, t)"
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", "has no `.to`"))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "pynumcast")


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_number_no_tensor_can_hold_is_refused_where_it_meets_one(tmp_path, capsys, name):
    """(`N + (C << 70)` and an int32 tile times `C << 40` are refused by the rule of a scalar
    beside an i32 first: "out of range for type int32".)"""
    code, err = dump(tmp_path, capsys, reader_does(REFUSED[name]))
    expect(code, err, ("rejected",))
    assert "outside i64 and u64" in err or "out of range for type int32" in err, err


@pytest.mark.parametrize("name", list(TWINS))
def test_a_number_a_tensor_can_hold_or_kept_a_number_is_verified(tmp_path, capsys, name):
    code, err = dump(tmp_path, capsys, reader_does(TWINS[name]))
    expect(code, err, "verified")


@pytest.mark.parametrize("name", list(REFUSED) + list(TWINS))
def test_triton_itself_refuses_the_refused_forms(tmp_path, monkeypatch, name):
    stmt = REFUSED.get(name, TWINS.get(name))
    assert triton_refuses(tmp_path, monkeypatch, stmt, "pynum") == (name in REFUSED), name


def test_a_constexpr_out_of_range_at_the_config_reads_the_kernel_at_the_values_given(
        tmp_path, capsys):
    """`C << 62` fits u64 at C = 3 and not at the file's C = 5: the generic reading stops at the
    config's value, and the kernel is read specialised to the value it is compiled with
    (DEFAULT_CONFIG's, or a --param's), where the number decides."""
    text = reader_does(f"b = C << 62\ntl.store({Y}, t)")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "Nonrepresentable integer", "read specialised to C = 5"))
    code, err = dump(tmp_path, capsys, text, "--param", "C=3")
    expect(code, err, "verified")
    assert "with C = 3 (read specialised)" in err


@pytest.mark.parametrize("stmt", ["b = ((2 ** 4096) ** 4096) ** 4096",
                                  "b: tl.constexpr = ((2 ** 4096) ** 4096) ** 4096",
                                  "b: tl.constexpr = C << (1 << 40)",
                                  "b: tl.constexpr = (C << 5000) * (C << 5000)"])
def test_a_number_too_wide_to_compute_is_refused_not_computed(tmp_path, capsys, stmt):
    """Triton computes constexpr arithmetic in Python, and `((2 ** 4096) ** 4096) ** 4096` is a
    number Python does not finish computing (Triton's compile hangs, and so did tle-dump). The
    reading computes integers of up to ir/big_ints.MAX_BITS bits and refuses a wider one,
    measuring a shift or a power before it computes it; the refusal says it is the reading's
    bound, not a verdict."""
    code, err = dump(tmp_path, capsys, reader_does(f"{stmt}\ntl.store({Y}, t)"))
    expect(code, err, ("rejected", "the reading computes integers of up to 8192 bits only"))


def test_a_module_constant_too_wide_to_compute_is_refused_at_its_line(tmp_path, capsys):
    """A module-level `BIG = ((2 ** 4096) ** 4096) ** 4096`: Python does not finish importing
    the module, and the reading of its constants stopped the same way. Refused at the
    constant's line; `(2 ** 5000) >> 4998` beside it is 4, a constant the reading keeps."""
    text = reader_does(f"tl.store({Y}, t + SMALL)").replace(
        "import triton.language as tl\n", "import triton.language as tl\n"
        "SMALL = (2 ** 5000) >> 4998\nBIG = ((2 ** 4096) ** 4096) ** 4096\n", 1)
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", ".py:3: error: a number is an integer of 16777217 bits"))
    code, err = dump(tmp_path, capsys, text.replace("BIG = ((2 ** 4096) ** 4096) ** 4096\n", ""))
    expect(code, err, "verified")
