"""A forty-second adversarial round (adversarial round 42): round 41's open question, 64-bit
arithmetic read as unbounded integers by the memory-race proof. Each case is a small kernel
written to a file and read by tle-dump's main(); where the case is about what Triton 3.6
computes, the same statement is compiled in a plain ``@triton.jit`` kernel for sm_90a on the CPU
(tests/adversarial_oracles.py) and its TTIR (or LLVM IR, for the byte address) is read.

Bug found: the race proof read int64 arithmetic as the integer result, where Triton computes it
modulo ``2 ** 64``, and an address as the base plus the offset, where the GPU adds the offset
times the element's size modulo ``2 ** 64`` bytes. A store at ``y_ptr + (t.to(tl.int64) + 1) *
2 ** 62 * 4`` (a product by ``2 ** 64``, which Triton folds to ``y_ptr``) against another
partition's store at ``y_ptr + 0`` was verified; so were a comparison (``tl.where(x > 0, 0,
1)`` of ``x = (t + 1) * 2 ** 63``, which is never positive), a ``//`` and a ``>>`` of such an
overflowed value, and an fp32 store at ``y_ptr + 2 ** 62``, whose byte offset ``2 ** 64`` is
``y_ptr`` itself. FIXED: a conservative interval of each integer expression (race_spans.span:
numbers, the ranges of 32-bit and narrower values, interval arithmetic of ``+``, ``-``, ``*``,
``<<``, casts; an ``i64`` argument or a 64-bit load has none) decides where a 64-bit value may
leave int64: where an op that is no ring operation takes one that may (a comparison, ``//``,
``%``, ``>>``, ``min`` / ``max``, a choice, a cast), it is wrapped into int64 (race_wraps.in_type,
unknown ``i64wrap``); and where the offsets of two accesses off one base may leave ``[-m / 2, m
/ 2)`` for ``m = 2 ** 64 / size`` (the size from DEFAULT_CONFIG's signature, 8 bytes where none
is given), the two meet where their offsets agree modulo ``m`` (race_wraps.address_wrap). Values
whose intervals stay within int64 are read as before, so z3 gets no unknown more for them. The
witness says the offsets wrap.

Checked and found right: the same offsets one step short of the wrap stay verified (the int64
shift of a value that wrapped reaches 0 and 2 only, never the 4 the integer reading reached, so a
store at ``y_ptr + 4`` beside it, refused before, is verified); a kernel whose int64 offsets
overflow by multiples of ``2 ** 64`` (``t.to(tl.int64) * 2 ** 62 * 4 + 64 + offs``) beside a
store of ``y_ptr + offs`` is verified (they agree modulo the address's modulus nowhere), and the
same without the ``64`` is refused; the element size decides a wrap (``2 ** 62`` elements of fp32
are ``y_ptr``, of fp16 ``2 ** 63`` bytes past it); ordinary int64 offsets
(``pid.to(tl.int64) * S`` of int32 strides, two such products summed) stay verified, and z3 gets
no int64 wrap of a value for them (only a bounded multiple of the address's modulus where the
elements are wider than a byte).
"""

from __future__ import annotations

import pytest

from tle_compiler.frontend import race_terms

from .adversarial_oracles import _triton_compile, triton_ttir
from .adversarial_support import TRITON_K, dump, expect
from .test_global_races import ring

RACE = ("rejected", "[memory-race]", "can reach the same global address")

#: 2 ** 62, written as Triton reads it: an int64 number
P62 = "4611686018427387904"


def pair(writer: str, reader: str, y: str = "") -> str:
    """The writer's store at ``y_ptr + writer`` after its commit against the reader's at ``y_ptr
    + reader`` after its release: unordered (round 38's ring of test_global_races); ``y``: the
    pointer type DEFAULT_CONFIG's signature gives ``y_ptr`` (none: no DEFAULT_CONFIG)."""
    text = ring(after=f"tl.store(y_ptr + {writer}, 1.0)", late=f"tl.store(y_ptr + {reader}, 2.0)")
    if y:
        text += ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "' + y +
                 '", "N": "i32", "S": "i32"}}\n')
    return text


def _ttir(tmp_path, monkeypatch, offset: str, tag: str) -> str:
    """The TTIR Triton compiles a store at ``x_ptr + offset`` in ``for t in range(N)`` to."""
    source = TRITON_K + f"    for t in range(N):\n        tl.store(x_ptr + ({offset}), 1.0)\n"
    return triton_ttir(tmp_path, monkeypatch, source, tag)


@pytest.fixture
def made(monkeypatch):
    """The tags of the unknowns the race proof makes (race_terms.Model.fresh), in order."""
    tags: list[str] = []
    fresh = race_terms.Model.fresh

    def record(self, tag, inst):
        tags.append(tag)
        return fresh(self, tag, inst)

    monkeypatch.setattr(race_terms.Model, "fresh", record)
    return tags


# ------------------------------------------------------------------ the bug: 64-bit wraps

def test_a_product_by_2_to_the_64_is_zero(tmp_path, capsys, monkeypatch):
    """Before: verified (the offset read as `(t + 1) * 2 ** 64`, never 0)."""
    offset = f"(t.to(tl.int64) + 1) * {P62} * 4"
    ttir = _ttir(tmp_path, monkeypatch, offset, "r42_prod")
    assert "tt.store %x_ptr," in ttir and "arith.muli" not in ttir  # folded to x_ptr + 0
    code, err = dump(tmp_path, capsys, pair(f"({offset})", "0"))
    expect(code, err, RACE)
    assert "`y_ptr` + 0" in err and "wraps around modulo 2 ** 64" in err


def test_a_comparison_of_an_overflowed_int64(tmp_path, capsys, monkeypatch):
    """`(t + 1) * 2 ** 63` is -2 ** 63 or 0 in int64, never > 0: the row is always 1. Before:
    verified (the product read as positive, the row 0)."""
    offset = f"tl.where((t.to(tl.int64) + 1) * {P62} * 2 > 0, 0, 1)"
    ttir = _ttir(tmp_path, monkeypatch, offset, "r42_cmp")
    assert "-9223372036854775808 : i64" in ttir and "arith.cmpi" in ttir
    code, err = dump(tmp_path, capsys, pair(offset, "1"))
    expect(code, err, RACE)
    assert "64-bit offset arithmetic wraps around modulo 2 ** 64" in err
    expect(*dump(tmp_path, capsys, pair(offset, "0")), "verified")


def test_a_mask_of_an_overflowed_int64(tmp_path, capsys):
    """`< 0` at every even t: the masked store runs. Before: verified (never negative)."""
    text = ring(after=f"tl.store(y_ptr + 5, 1.0, mask=(t.to(tl.int64) + 1) * {P62} * 2 < 0)",
                late="tl.store(y_ptr + 5, 2.0)")
    expect(*dump(tmp_path, capsys, text), RACE)


def test_an_if_on_an_overflowed_int64(tmp_path, capsys):
    text = ring(after=f"if (t.to(tl.int64) + 1) * {P62} * 2 < 0:\n"
                      "            tl.store(y_ptr + 3, 1.0)",
                late="tl.store(y_ptr + 3, 2.0)")
    expect(*dump(tmp_path, capsys, text), RACE)


#: an overflowed int64 divided or shifted: -2 ** 63 (t even) or 0 (t odd), so 0 or 2 with the
#: 2 added
DIVIDED = {
    ">>": f"((((t.to(tl.int64) + 1) * {P62} * 2) >> 62) + 2)",
    "//": f"((((t.to(tl.int64) + 1) * {P62} * 2) // {P62}) + 2)",
}


@pytest.mark.parametrize("op", list(DIVIDED))
def test_a_division_or_shift_of_an_overflowed_int64(tmp_path, capsys, monkeypatch, op):
    """Before: verified (read as `2 * (t + 1) + 2`, at least 4)."""
    offset = DIVIDED[op]
    if op == ">>":
        ttir = _ttir(tmp_path, monkeypatch, offset, "r42_shr")
        assert "-9223372036854775808 : i64" in ttir and "arith.shrsi" in ttir
    assert (-2 ** 63 >> 62) + 2 == 0 and int(-2 ** 63 / 2 ** 62) + 2 == 0
    expect(*dump(tmp_path, capsys, pair(offset, "0")), RACE)


@pytest.mark.parametrize("op", list(DIVIDED))
def test_where_the_wrapped_quotient_never_reaches_the_store_it_is_verified(tmp_path, capsys, op):
    """0 and 2 only: a store at `y_ptr + 4` (which the integer reading reached at t = 0, and
    refused) and one at `y_ptr + 1` are apart from it."""
    for reader in ("4", "1"):
        expect(*dump(tmp_path, capsys, pair(DIVIDED[op], reader)), "verified")


def test_the_element_size_decides_the_wrap(tmp_path, capsys, monkeypatch):
    """An offset of 2 ** 62 elements: 2 ** 64 bytes of fp32 (the base itself: LLVM folds the
    address to the pointer argument), 2 ** 63 bytes of fp16. Before: verified both ways."""
    offset = f"(t.to(tl.int64) * 0 + 1) * {P62}"
    source = TRITON_K + f"    for t in range(N):\n        tl.store(x_ptr + ({offset}), 1.0)\n"
    llir = {}
    for t in ("*fp32", "*fp16"):
        got = _triton_compile(tmp_path, monkeypatch, source, f"r42_bytes{t[3:]}", catch=False,
                              signature={"x_ptr": t, "N": "i32", "C": "constexpr"})
        llir[t] = got.asm["llir"]
    assert "getelementptr" not in llir["*fp32"]  # the store's address is x_ptr
    assert "i64 -9223372036854775808" in llir["*fp16"]
    code, err = dump(tmp_path, capsys, pair(f"({offset})", "0", "*fp32"))
    expect(code, err, RACE)
    assert "meet modulo 2 ** 62 (the byte address wraps around modulo 2 ** 64)" in err
    expect(*dump(tmp_path, capsys, pair(f"({offset})", "0", "*fp16")), "verified")
    # no signature: an element of up to 8 bytes, so 2 ** 62 elements may be 2 ** 65 bytes
    expect(*dump(tmp_path, capsys, pair(f"({offset})", "0")), RACE)


# ------------------------------------------------------------------ checked and found right

def test_offsets_that_overflow_by_multiples_of_the_modulus_are_apart(tmp_path, capsys):
    """`t * 2 ** 64 + 64 + offs` is `64 + offs` modulo 2 ** 64: never `y_ptr + offs`."""
    writer = f"(t.to(tl.int64) * {P62} * 4 + 64 + offs)"
    expect(*dump(tmp_path, capsys, pair(writer, "offs")), "verified")
    expect(*dump(tmp_path, capsys, pair(writer, "offs", "*fp32")), "verified")
    code, err = dump(tmp_path, capsys, pair(writer.replace(" + 64", ""), "offs"))
    expect(code, err, RACE)


def test_int64_values_that_stay_in_range_are_not_wrapped(tmp_path, capsys, made):
    """An int64 comparison of a value whose bounds stay in int64 is read as before: no wrap."""
    writer = "tl.where(t.to(tl.int64) * 1024 > 5, 0, 1)"
    expect(*dump(tmp_path, capsys, pair(writer, "2")), "verified")
    expect(*dump(tmp_path, capsys, pair(writer, "1")), RACE)
    assert "i64wrap" not in made and "addrwrap" not in made


ROWS = ("tl.program_id(0).to(tl.int64) * S + tl.program_id(1).to(tl.int64) * N + {col} + offs")


@pytest.mark.parametrize("y", ["*i8", "*fp32", ""])
def test_ordinary_int64_offsets_stay_verified(tmp_path, capsys, made, y):
    """Two products of int32 values in int64 (rows by a program id and a stride argument): the
    sum stays in int64. Bytes of one element: the address stays in range, no unknown; wider
    elements: a bounded multiple of the address's modulus (z3 rules it out from the columns),
    still no wrap of a value."""
    text = pair(ROWS.format(col=0), ROWS.format(col=64), y)
    expect(*dump(tmp_path, capsys, text), "verified")
    wraps = [t for t in made if t in ("i64wrap", "addrwrap", "opaque")]
    if y == "*i8":
        assert wraps == []
    else:
        assert wraps and set(wraps) == {"addrwrap"}
    made.clear()
    expect(*dump(tmp_path, capsys, pair(ROWS.format(col=0), ROWS.format(col=32), y)), RACE)


def test_an_i64_argument_has_no_bounds(tmp_path, capsys):
    """`K * 2` of an i64 `K >= 1` is negative for K = 2 ** 62 (no upper bound is assumed), so
    `> 0` may be false; with `K <= 2 ** 40` it is positive. Before: verified either way."""
    offset = "tl.where(S * 2 > 0, 0, 1)"
    text = pair(offset, "1", "*fp32").replace('"S": "i32"', '"S": "i64"')
    old = "def k(x_ptr, y_ptr, N, S):\n"
    code, err = dump(tmp_path, capsys, text.replace(old, old + "    tle.assume(S >= 1)\n"))
    expect(code, err, RACE)
    assert "64-bit offset arithmetic wraps around modulo 2 ** 64" in err
    text = text.replace(old, old + "    tle.assume(S >= 1)\n    tle.assume(S <= 1099511627776)\n")
    expect(*dump(tmp_path, capsys, text), "verified")


def test_a_comparison_of_pointers_whose_offsets_overflow(tmp_path, capsys):
    """Two pointers off y_ptr compared, one's offset past int64: not read (either row)."""
    offset = f"tl.where(y_ptr + (t.to(tl.int64) + 1) * {P62} * 4 > y_ptr + 8, 0, 1)"
    expect(*dump(tmp_path, capsys, pair(offset, "0")), RACE)
    expect(*dump(tmp_path, capsys, pair(offset, "1")), RACE)
    expect(*dump(tmp_path, capsys, pair(offset, "2")), "verified")
