"""A forty-third adversarial round (adversarial round 43): the intervals of race_spans.py, the
address wrap of race_wraps.address_wrap and the int64 wrap of race_wraps.in_type, attacked with
shifts by 63, right shifts and remainders of negative values, choices and minima of a wrapped
and a small value, products of program counts, and the values that are no integers at all:
floats. Each case is a small kernel written to a file and read by tle-dump's main(); where the
case is about what Triton 3.6 computes, the same statement is compiled in a plain
``@triton.jit`` kernel for sm_90a on the CPU (tests/adversarial_oracles.py) and its TTIR read.

Bugs found, one line each:

- a float converted to an integer was read as integer arithmetic of its operands: the store at
  ``y_ptr + (t / 2 * 4).to(tl.int32)`` (Triton: ``sitofp``, ``divf``, ``mulf``, ``fptosi``:
  2 at t = 1) was read as 4 times an unknown, never 2, and verified beside a store at
  ``y_ptr + 2``; FIXED.
- the same through a scalar argument the signature types ``fp32`` (``(S * 2).to(tl.int32)``
  is 5 at S = 2.5; the check read S as an int32, ``2 * S`` even), through a value loaded from
  an ``*fp32`` pointer or from a pointer no signature types, and through a float constexpr
  DEFAULT_CONFIG gives (``"SCALE": 0.5``): verified beside a store at ``y_ptr + 5``; FIXED.
- a comparison of floats was read as one of integers: ``tl.where(v * 2 == 5, 0, 1)`` of a
  loaded fp32 ``v`` (Triton: ``cmpf oeq``) was always 1, and ``if S * 2 == 5:`` (and its
  ``else``) of an ``fp32`` argument never (or always) taken: verified; FIXED.
- the interval of a cast of a float to int64 was the int32 range of its operand's kind
  (race_spans), so ``g * g`` of ``g = S.to(tl.int64)`` was taken never to leave int64, never
  negative: ``tl.where(g * g < 0, 0, 1)`` (negative at S = 3037000704.0) verified; FIXED.
- a constexpr the kernel is read with a number past int32 (``--param C=1099511627776``) was
  bounded by int32's range (race_kinds typed it int32, race_spans took that type's range), so
  ``(t.to(tl.int64) + 1) * C``, ``2 ** 64`` at t = 2 ** 24 - 1, never wrapped: a store there
  beside an int8 store at ``y_ptr + 0`` verified; FIXED: such a constexpr has the kind of the
  number it is (int64), its span that number.
- a free constexpr is read as an int32, as the integer arguments are, so a DEFAULT_CONFIG giving
  it ``2 ** 40`` (which the lowering compiles with) left the configured kernel outside the
  proof: the same race verified; FIXED: tle-dump checks the kernel again with the
  DEFAULT_CONFIG constexprs past int32.
- a shift by the width of its type or more was read as a product (or a quotient) by
  ``2 ** c``: ``(t << 40) + 3`` of an int32 t as ``3`` (``t * 2 ** 40`` wrapped into int32 is
  0), and ``t >> 40`` as 0 or -1, where LLVM makes them poison (the store's address is
  ``ptr addrspace(1) poison``, any address): verified beside a store at ``y_ptr + 5``, as were
  an int8 shifted by 8 and an int32 by 32; FIXED: a shift by the bits of its type (race_wraps.
  bits: 8, 16, 32, or 32 for a value of unknown width; 64 as before for 64-bit values) or more
  is an unknown.

FIXED (floats): race_terms.floating says where a value may be a float (a float number, ``/``, a cast
or fill to a float type, a load through a pointer the signature does not type as an integer
one, an ``fp*`` / ``bf16`` argument or a float constexpr, an op the model does not read, and
arithmetic, choices and names of them); a cast of one to an integer type is any value of the
type (unknown ``fcast``: the GPU truncates and saturates), a comparison of one a truth the
model does not read (``fcompare``), and race_spans bounds such a cast by its type only. The
witness says a float's value allows it. The cost: a float the check could compute is refused
too (``(t.to(tl.float32) * 2).to(tl.int32)`` is even, but a store of it beside ``y_ptr + 5``
is refused); no bundled kernel changes its verdict.

Checked and found right: an int32 shifted left by 31 (0 or -2 ** 31) stays read, and an
int64 shifted left by 63 and back (``-1`` or ``0``), a remainder
of a negative int64 (C's sign), a choice between a wrapped product and a small number, a
``min`` with a side past int64, a product of ``tl.num_programs`` by ``2 ** 62`` divided back,
all refused where they reach the other store and verified where they cannot; the integer part
of an fp32 argument times 2 (``S.to(tl.int32) * 2``) stays even; a value loaded through an
``*i32`` pointer keeps its integer reading (``2 * v`` is never 5); a ``u64`` argument and int8
arithmetic past int8 are refused before the race check (the signature's rule, Triton's).
"""

from __future__ import annotations

import warnings

import pytest

from .adversarial_oracles import _triton_compile, triton_ttir
from .adversarial_support import TRITON_K, dump, expect
from .test_global_races import ring

RACE = ("rejected", "[memory-race]", "can reach the same global address")

#: the clause a witness through a float's value carries
FLOAT = "where a float converted to an integer, or compared, has a value that allows it"

#: the signature of round 25's ring with every pointer fp32 and the integers i32
SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "S": "i32"}

#: 2 ** 62, written as Triton reads it: an int64 number
P62 = "4611686018427387904"


def config(text: str, **types: str) -> str:
    """``text`` with a DEFAULT_CONFIG whose signature is :data:`SIG` with ``types`` in place."""
    return text + '\nDEFAULT_CONFIG = {"signature": ' + repr({**SIG, **types}) + "}\n"


def pair(writer: str, reader: str) -> str:
    """The writer's store at ``y_ptr + writer`` after its commit against the reader's at ``y_ptr
    + reader`` after its release: unordered (round 38's ring of test_global_races)."""
    return ring(after=f"tl.store(y_ptr + {writer}, 1.0)", late=f"tl.store(y_ptr + {reader}, 2.0)")


def _ttir(tmp_path, monkeypatch, statement: str, tag: str) -> str:
    """The TTIR Triton compiles ``statement`` in ``for t in range(N)`` of ``k`` to."""
    source = TRITON_K + f"    for t in range(N):\n        {statement}\n"
    return triton_ttir(tmp_path, monkeypatch, source, tag)


# ------------------------------------------------------------------ the bug: floats read as ints

def test_a_true_division_converted_to_an_integer(tmp_path, capsys, monkeypatch):
    """`t / 2 * 4` is 2.0 at t = 1. Before: verified (read as 4 times an unknown)."""
    offset = "(t / 2 * 4).to(tl.int32)"
    ttir = _ttir(tmp_path, monkeypatch, f"tl.store(x_ptr + {offset}, 1.0)", "r43_div")
    assert "arith.divf" in ttir and "arith.fptosi" in ttir
    assert int(1 / 2 * 4) == 2
    code, err = dump(tmp_path, capsys, pair(offset, "2"))
    expect(code, err, RACE)
    assert "`y_ptr` + 2" in err and FLOAT in err


def test_an_fp32_argument_converted_to_an_integer(tmp_path, capsys, monkeypatch):
    """`(S * 2).to(tl.int32)` of an fp32 S is 5 at S = 2.5. Before: verified (S read as an
    int32, `2 * S` even)."""
    source = TRITON_K + "    tl.store(x_ptr + (N * 2).to(tl.int32), 1.0)\n"
    ttir = _triton_compile(tmp_path, monkeypatch, source, "r43_arg", catch=False,
                           signature={"x_ptr": "*fp32", "N": "fp32", "C": "constexpr"}).asm["ttir"]
    assert "arith.mulf %N" in ttir and "arith.fptosi" in ttir
    code, err = dump(tmp_path, capsys, config(pair("(S * 2).to(tl.int32)", "5"), S="fp32"))
    expect(code, err, RACE)
    assert FLOAT in err
    # the integer part taken first: even, whatever S is (found right)
    expect(*dump(tmp_path, capsys, config(pair("S.to(tl.int32) * 2", "5"), S="fp32")),
           "verified")


@pytest.mark.parametrize("typed", [True, False])
def test_a_loaded_float_converted_to_an_integer(tmp_path, capsys, typed):
    """A value loaded through an *fp32 pointer (or one no signature types: any element type)
    times 2 is 5 at 2.5. Before: verified both ways."""
    text = pair("(tl.load(x_ptr + t) * 2).to(tl.int32)", "5")
    expect(*dump(tmp_path, capsys, config(text) if typed else text), RACE)


def test_a_float_constexpr(tmp_path, capsys):
    """SCALE = 0.5 (DEFAULT_CONFIG): `t * 2 * SCALE` is t, 5 at t = 5. Before: verified (SCALE
    read as an integer)."""
    text = pair("(t * 2 * SCALE).to(tl.int32)", "5").replace("N, S)", "N, S, SCALE)").replace(
        "def k(x_ptr, y_ptr, N, S, SCALE)", "def k(x_ptr, y_ptr, N, S, SCALE: tl.constexpr)")
    code, err = dump(tmp_path, capsys,
                     text + '\nDEFAULT_CONFIG = {"constexprs": {"SCALE": 0.5}}\n')
    expect(code, err, RACE)
    assert FLOAT in err


def test_a_comparison_of_floats(tmp_path, capsys, monkeypatch):
    """`v * 2 == 5` holds at v = 2.5: row 0. Before: verified (never, as of integers)."""
    offset = "tl.where(tl.load(x_ptr + t) * 2 == 5, 0, 1)"
    ttir = _ttir(tmp_path, monkeypatch, f"tl.store(x_ptr + {offset}, 1.0)", "r43_cmp")
    assert "arith.cmpf oeq" in ttir
    expect(*dump(tmp_path, capsys, config(pair(offset, "0"))), RACE)
    # row 1 (v != 2.5) and never row 2
    expect(*dump(tmp_path, capsys, config(pair(offset, "1"))), RACE)
    expect(*dump(tmp_path, capsys, config(pair(offset, "2"))), "verified")


@pytest.mark.parametrize("branch", ["if", "else"])
def test_a_branch_on_a_float_comparison(tmp_path, capsys, branch):
    """`S * 2 == 5` of an fp32 S: the `if` is taken at S = 2.5, its `else` at S = 0. Before:
    verified (never taken; the else always, read as `S * 2 != 5` of integers: so `S * 2 != 5`'s
    else branch never)."""
    test = "S * 2 == 5" if branch == "if" else "S * 2 != 5"
    after = f"if {test}:\n            tl.store(y_ptr + 3, 1.0)" if branch == "if" else \
        f"if {test}:\n            pass\n        else:\n            tl.store(y_ptr + 3, 1.0)"
    text = config(ring(after=after, late="tl.store(y_ptr + 3, 2.0)"), S="fp32")
    expect(*dump(tmp_path, capsys, text), RACE)


def test_a_float_cast_to_int64_may_leave_int32(tmp_path, capsys):
    """`g = S.to(tl.int64)` of an fp32 S = 3037000704.0 (a multiple of 256: exact in fp32):
    g * g is past 2 ** 63, negative in int64. Before: verified (g bounded by int32's range, so
    g * g never wrapped)."""
    g = 3037000704
    assert g % 256 == 0 and g < 2 ** 32 and ((g * g + 2 ** 63) % 2 ** 64) - 2 ** 63 < 0
    text = ring(after="g = S.to(tl.int64)\n"
                      "        tl.store(y_ptr + tl.where(g * g < 0, 0, 1), 1.0)",
                late="tl.store(y_ptr + 0, 2.0)")
    code, err = dump(tmp_path, capsys, config(text, S="fp32"))
    expect(code, err, RACE)
    # an i32 S: g * g stays in int64, never negative
    expect(*dump(tmp_path, capsys, config(text)), "verified")


def test_float_arithmetic_is_not_computed(tmp_path, capsys):
    """The cost of the fix: `t.to(tl.float32) * 2` is an even integer (never 5), but the check
    does not compute floats, so the pair is refused, the witness naming the float."""
    code, err = dump(tmp_path, capsys, pair("(t.to(tl.float32) * 2).to(tl.int32)", "5"))
    expect(code, err, RACE)
    assert FLOAT in err


#: a store at `(t + 1) * C` of an int8 y_ptr after the writer's commit (under `if C > 0`) against
#: the reader's at y_ptr + 0: C a constexpr argument of the kernel
WIDE_C = ring(after="if C > 0:\n            tl.store(y_ptr + (t.to(tl.int64) + 1) * C, 1)",
              late="tl.store(y_ptr + 0, 2)").replace("N, S)", "N, S, C)").replace(
    "def k(x_ptr, y_ptr, N, S, C)", "def k(x_ptr, y_ptr, N, S, C: tl.constexpr)")

#: 2 ** 40: (t + 1) * it is 2 ** 64 at t = 2 ** 24 - 1
P40 = 1099511627776


def test_a_constexpr_past_int32(tmp_path, capsys, monkeypatch):
    """Before: verified (C bounded by int32's range, the product never past int64)."""
    ttir = _ttir(tmp_path, monkeypatch, f"tl.store(x_ptr + (t.to(tl.int64) + 1) * {P40}, 1.0)",
                 "r43_wide")
    assert f"{P40} : i64" in ttir and "arith.muli" in ttir
    assert (2 ** 24) * P40 == 2 ** 64
    code, err = dump(tmp_path, capsys, config(WIDE_C, y_ptr="*i8"), "--param", f"C={P40}")
    expect(code, err, RACE)
    assert "at t = 16777215" in err and "(the byte address wraps around modulo 2 ** 64)" in err


def test_a_default_config_constexpr_past_int32(tmp_path, capsys):
    """DEFAULT_CONFIG's C = 2 ** 40, C free otherwise (read as an int32, never wrapping the
    product). Before: verified. C = 1000 there: the int32 reading covers it, verified."""
    text = config(WIDE_C, y_ptr="*i8").replace('"signature"', '"constexprs": {"C": ' +
                                                 str(P40) + '}, "signature"')
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, RACE)
    assert f"C = {P40} (constexpr)" in err
    expect(*dump(tmp_path, capsys, text.replace(str(P40), "1000")), "verified")


#: shifts by the width of their type or more: LLVM's poison
POISON = {"an int32 shifted left by 40": "(t << 40) + 3", "an int32 shifted right by 40":
          "(t >> 40) + 3", "an int32 shifted left by 32": "(t << 32) + 3",
          "an int8 shifted left by 8": "(t.to(tl.int8) << 8).to(tl.int32) + 3"}


@pytest.mark.parametrize("case", list(POISON))
def test_a_shift_past_the_width_is_poison(tmp_path, capsys, case):
    """Before: verified (read as a product by 2 ** c, wrapped to 0, or a quotient)."""
    expect(*dump(tmp_path, capsys, pair(POISON[case], "5")), RACE)


@pytest.mark.parametrize("op", ["<<", ">>"])
def test_llvm_makes_a_shift_past_int32_poison(tmp_path, monkeypatch, op):
    """The oracle: Triton computes `t << 40` / `t >> 40` in int32 (warning, where it compiles
    it afresh, that the shift "may result in undefined behavior"), and LLVM folds the store's
    address to poison."""
    source = TRITON_K + f"    for t in range(N):\n        tl.store(x_ptr + (t {op} 40) + 3, 1.0)\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = _triton_compile(tmp_path, monkeypatch, source, f"r43_poison{op == '<<'}",
                              catch=False)
    assert "%c40_i32" in got.asm["ttir"]
    assert "ptr addrspace(1) poison" in got.asm["llir"]


def test_a_shift_short_of_the_width_is_read(tmp_path, capsys):
    """`t << 31` of an int32 is 0 or -2 ** 31: 3 or -2 ** 31 + 3, never 5."""
    expect(*dump(tmp_path, capsys, pair("(t << 31) + 3", "5")), "verified")
    expect(*dump(tmp_path, capsys, pair("(t << 31) + 3", "3")), RACE)


# ------------------------------------------------------------------ checked and found right

def test_an_integer_load_keeps_its_reading(tmp_path, capsys):
    """A value loaded through an *i32 pointer is an integer: `2 * v` is never 5, and no float
    unknown is made for it."""
    text = pair("(tl.load(x_ptr + t) * 2).to(tl.int64)", "5").replace(
        "tl.load(x_ptr + t * 64 + offs))", "tl.load(x_ptr + t * 64 + offs).to(tl.float32))")
    expect(*dump(tmp_path, capsys, config(text, x_ptr="*i32")), "verified")
    expect(*dump(tmp_path, capsys, config(text.replace("+ 5,", "+ 6,"), x_ptr="*i32")), RACE)


#: (offset, a store it reaches, a store it never reaches)
SPANS = {
    # t even: 0 >> 63 = 0, t odd: -2 ** 63 >> 63 = -1; plus 3
    "a shift by 63 and back": ("(((t.to(tl.int64) << 63) >> 63) + 3)", "2", "4"),
    # C's remainder: -5 % 4 is -1 (not Python's 3), so 8 + it is in [5, 11]
    "a remainder of a negative int64": ("(((t.to(tl.int64) - 5) % 4) + 8)", "7", "12"),
    # t * 2 ** 64 is 0 modulo 2 ** 64: 7 where t > 3, 8 elsewhere
    "a choice of a wrapped product and a number":
        (f"(tl.where(t > 3, t.to(tl.int64) * {P62} * 4, 1) + 7)", "7", "9"),
    # t * 2 ** 63 is 0 or -2 ** 63: min with 5 is one of them, plus 1 (the check takes a
    # min of 64-bit values to be either side, so it does not prove 6 apart)
    "a min with a side past int64": (f"(tl.minimum(t.to(tl.int64) * {P62} * 2, 5) + 1)", "1",
                                     "3"),
    # nprog * 2 ** 62 wraps where nprog >= 2: its quotient by 2 ** 62 is in [-2, 1]
    "a product of the program count":
        (f"((tl.num_programs(0).to(tl.int64) * {P62}) // {P62} + 2)", "0", "4"),
}


@pytest.mark.parametrize("case", list(SPANS))
def test_spans_of_wrapped_int64_values(tmp_path, capsys, case):
    offset, reached, apart = SPANS[case]
    expect(*dump(tmp_path, capsys, pair(offset, reached)), RACE)
    expect(*dump(tmp_path, capsys, pair(offset, apart)), "verified")


def test_arguments_of_other_widths_are_refused_first(tmp_path, capsys):
    """A u64 argument (unsigned shifts the check does not read) is refused by the signature's
    rule; int8 arithmetic with a number past int8 by Triton's."""
    code, err = dump(tmp_path, capsys, config(pair("(S >> 62)", "3"), S="u64"))
    expect(code, err, ("rejected", "typed u64 in the signature"))
    code, err = dump(tmp_path, capsys, config(pair("(S * 64 + 256)", "128"), S="i8"))
    expect(code, err, ("rejected", "Scalar 256 is out of range for type int8"))
