"""A forty-first adversarial round (adversarial round 41): round 39's open questions (an affine
value that cancels a uint32 loop variable, ``i - i``; a ``//`` or ``%`` of int32 by uint32 outside
a loop-carried name) and the memory-race proof's reading of 64-bit offsets, unsigned values,
hints, assumptions, masks, atomics and pointer comparisons. Each case is a small kernel written
to a file and read by tle-dump's main(); where the case is about what Triton 3.6 compiles or the
value it computes, the same statements are compiled in a plain ``@triton.jit`` kernel for sm_90a
on the CPU (tests/adversarial_oracles.py) and the TTIR is read, and the verdict follows it.

Bugs found, one line each:
1. A uint64 made from a negative value (``(t - 1).to(tl.uint64)``, ``t.to(tl.uint64) - 1``, a
   value loaded through a ``*u64`` table) was read as the negative number by ``>>``, ``//``,
   ``%`` and ``tl.cdiv``; Triton shifts and divides the unsigned value (``shrui``, ``divui``):
   ``y_ptr + ((t - 1).to(tl.uint64) >> 60)`` is ``y_ptr + 15`` at t = 0, read as -1 or 0, so a
   race with a store at ``y_ptr + 15`` was verified. FIXED: a uint64 has a kind of its own
   (race_kinds.U64) and a division or right shift reads it in ``[0, 2 ** 64)``
   (race_wraps.unsigned). Its other side was a false rejection: the same shift beside a store at
   ``y_ptr - 1``, which it never reaches (15 or 0), was refused.
   A value loaded through a pointer no signature types (of 32 bits or more, round 38) was read
   signed there too, though it may be a uint64: now either.
2. ``tl.cdiv(x, 64)`` was read as ``(x + 63) // 64`` of integers; Triton computes ``x + 63`` in
   ``x``'s type, where it wraps (int32 ``x = 2147483600``: ``-2147483633 // 64``, C's division,
   -33554431), so a race with a store at ``y_ptr - 33554431`` was verified. FIXED: the sum is
   wrapped in ``x``'s type (race_wraps.in_type), as the ``//`` written out already was.

Checked and found right: ``u = u + (i - i)`` (and ``i + j - i``, ``v = i - i``, ``i * 0``) of
a uint32 ``i`` in a loop carrying an int32 ``u`` is refused with Triton's words (round 39's rule
types the loop variable, not the affine sum); a race through ``y_ptr + (i - i - 1)`` of such an
``i`` (``2 ** 32 - 1``) is refused; a ``//`` or ``%`` of int32 by uint32 in a partition, a mask,
an ``if`` or a stored value is refused by the lowering that tle-dump runs on a kernel with a
DEFAULT_CONFIG, with Triton's reason (without one, nothing is lowered and the verdict says it
is the protocol's alone); ``(t * 67108864 + 64).to(tl.int64)`` wraps before the widening;
``tl.multiple_of``, ``tl.max_contiguous`` and ``tl.assume`` are no facts to the race proof
(only ``tle.assume``, which the verdict names); int8 / uint8 offsets wrap; masks that hold for
some N only; ``cache_modifier=``; two atomics are no race (docs/semantics.md), an atomic
against a store or a load is; ``tl.where`` of two pointer arguments; pointer comparisons (read
where DEFAULT_CONFIG types the pointers).

Left open: a 64-bit offset past ``2 ** 63`` (``(t.to(tl.int64) + 1) * 2 ** 62 * 4``, which Triton
folds to 0) is read as the integer, not wrapped modulo ``2 ** 64``; such an offset is past any
allocation unless it wraps back into one. (Fixed in round 42:
tests/test_adversarial_verdicts_42.py.)
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_ttir
from .adversarial_support import TRITON_K, dump, expect, reader_does
from .test_global_races import ring

RACE = ("rejected", "[memory-race]", "can reach the same global address")


def pair(writer: str, reader: str, signature: str = "") -> str:
    """The writer's store at ``y_ptr + writer`` after its commit against the reader's at
    ``y_ptr + reader`` after its release: unordered (round 38's ring of test_global_races)."""
    text = ring(after=f"tl.store(y_ptr + {writer}, 1.0)", late=f"tl.store(y_ptr + {reader}, 2.0)")
    if signature:
        text = text.replace(", S)", ", i_ptr)") + (
            '\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", '
            f'"i_ptr": "{signature}"}}}}\n')
    return text


def _ttir_ops(tmp_path, monkeypatch, offset: str, tag: str) -> str:
    """The TTIR Triton compiles a store at ``x_ptr + offset`` in ``for t in range(N)`` to."""
    source = TRITON_K + f"    for t in range(N):\n        tl.store(x_ptr + ({offset}), 1.0)\n"
    return triton_ttir(tmp_path, monkeypatch, source, tag)


#: offset -> the op Triton divides or shifts it with (unsigned), the address it reaches at t = 0
UNSIGNED = {
    "(t - 1).to(tl.uint64) >> 60": ("arith.shrui", 15),
    "(t.to(tl.uint64) - 1) >> 60": ("arith.shrui", 15),
    "(t - 1).to(tl.uint64) // 1152921504606846976": ("arith.divui", 15),
    "tl.cdiv((t - 100).to(tl.uint64), 64) >> 54": ("arith.divui", 15),
}


@pytest.mark.parametrize("offset", list(UNSIGNED))
def test_a_uint64_of_a_negative_value_is_divided_unsigned(tmp_path, capsys, monkeypatch, offset):
    """Before: verified (the uint64 read as -1, which `>> 60` makes -1 or 0)."""
    op, reached = UNSIGNED[offset]
    assert op in _ttir_ops(tmp_path, monkeypatch, offset, "r41_u64")
    assert (2 ** 64 - 1) >> 60 == 15 and (2 ** 64 - 100 + 63) // 64 >> 54 == 15
    expect(*dump(tmp_path, capsys, pair(f"({offset})", str(reached))), RACE)


@pytest.mark.parametrize("offset", ["(t - 1).to(tl.int64) >> 60", "(t - 1).to(tl.uint64) >> 60"])
def test_where_the_shifted_value_never_reaches_the_store_it_is_verified(tmp_path, capsys, offset):
    """An int64 -1 shifts to -1 (arithmetic), so `+ 15` is never reached; the uint64 one
    reaches 15 and 0 only, never -1."""
    reader = "15" if "int64" in offset and "uint64" not in offset else "-1"
    expect(*dump(tmp_path, capsys, pair(f"({offset})", reader)), "verified")


def test_a_u64_table_is_shifted_unsigned(tmp_path, capsys):
    """A value loaded through a `*u64` table: `x * 0 - 1` is `2 ** 64 - 1`, `>> 60` is 15."""
    offset = "((tl.load(i_ptr + t) * 0 - 1) >> 60)"
    expect(*dump(tmp_path, capsys, pair(offset, "15", "*u64")), RACE)
    expect(*dump(tmp_path, capsys, pair(offset, "15", "*i64")), "verified")


def test_a_table_of_unknown_type_may_be_a_u64(tmp_path, capsys):
    """Without a signature the table `S` points into may hold uint64 values."""
    text = ring(after="tl.store(y_ptr + ((tl.load(S + t) * 0 - 1) >> 60), 1.0)",
                late="tl.store(y_ptr + 15, 2.0)")
    expect(*dump(tmp_path, capsys, text), RACE)


def test_cdiv_adds_in_its_operands_type(tmp_path, capsys, monkeypatch):
    """`tl.cdiv(i + 2147483600, 64)`: Triton adds 63 in int32 (folded to `i - 2147483633`) and
    divides signed, so at i = 0 it is -33554431; before, read as 33554432, verified."""
    offset = "tl.cdiv(i + 2147483600, 64)"
    source = TRITON_K + f"    for i in range(40):\n        tl.store(x_ptr + {offset}, 1.0)\n"
    ttir = triton_ttir(tmp_path, monkeypatch, source, "r41_cdiv")
    assert "-2147483633 : i32" in ttir and "arith.divsi" in ttir
    wrapped = (2147483600 + 63 + 2 ** 31) % 2 ** 32 - 2 ** 31
    assert wrapped == -2147483633 and int(wrapped / 64) == -33554431
    text = ring(after=f"for i in range(40):\n            tl.store(y_ptr + {offset}, 1.0)",
                late="tl.store(y_ptr - 33554431, 2.0)")
    expect(*dump(tmp_path, capsys, text), RACE)
    # 100 less: the sum stays in int32 and never reaches a negative row
    text = text.replace("2147483600", "2147483500")
    expect(*dump(tmp_path, capsys, text), "verified")


# ------------------------------------------------------------------ checked and found right

def test_a_cancelled_uint32_loop_variable_in_an_address_is_a_uint32(tmp_path, capsys):
    """`i - i - 1` of a uint32 `i` is `2 ** 32 - 1` (a pointer adds it zero-extended)."""
    text = ring(after="for i in range(N.to(tl.uint32)):\n"
                      "            tl.store(y_ptr + (i - i - 1), 1.0)",
                late="tl.store(y_ptr + 4294967295, 2.0)")
    expect(*dump(tmp_path, capsys, text), RACE)


@pytest.mark.parametrize("stmt", ["u = u + (i - i)", "v = i - i\n    u = u + v",
                                  "u = u + (i * 0)"])
def test_a_cancelled_uint32_loop_variable_keeps_its_type(tmp_path, capsys, stmt):
    text = ("u = 0\nfor i in range(N.to(tl.uint32)):\n    " + stmt +
            "\ntl.store(y_ptr + tl.arange(0, 64), (t + u).to(tl.float32))")
    expect(*dump(tmp_path, capsys, reader_does(text)),
           ("rejected", "Loop-carried variable u has initial type int32 but is re-assigned to "
                        "uint32 in loop"))


# (the second was `tl.max_contiguous(tl.multiple_of(N, 64), 64)`, which Triton 3.6 refuses: one
# value per dimension, none of a scalar; refused at its line since lowering adversarial round 13)
@pytest.mark.parametrize("hint", ["tl.multiple_of(N, 64)", "tl.multiple_of(N, (64,)) + 0"])
def test_a_hint_is_no_fact(tmp_path, capsys, hint):
    expect(*dump(tmp_path, capsys, pair(hint, "1")), RACE)


def test_tl_assume_is_no_fact_and_tle_assume_is_named(tmp_path, capsys):
    text = pair("N", "1")
    old = "    kv = tle.pipe"
    expect(*dump(tmp_path, capsys, text.replace(old, "    tl.assume(N > 5)\n" + old)), RACE)
    code, err = dump(tmp_path, capsys, text.replace(old, "    tle.assume(N > 5)\n" + old))
    expect(code, err, "verified")
    assert "(N >= 6)" in err


@pytest.mark.parametrize("writer,reader,want", [
    ("tl.atomic_add(y_ptr + offs, 1.0)", "tl.atomic_add(y_ptr + offs, 2.0)", "verified"),
    ("tl.atomic_add(y_ptr + offs, 1.0)", "tl.store(y_ptr + 5, 2.0)", RACE),
    ("tl.atomic_add(y_ptr + offs, 1.0)", "u = tl.load(y_ptr + 5)", RACE),
    ("tl.store(y_ptr + offs, tl.load(x_ptr + offs), cache_modifier='.cs')",
     "tl.store(y_ptr + 8, 1.0, cache_modifier='.wt')", RACE),
    ("tl.store(y_ptr + offs, tl.load(x_ptr + offs), mask=offs < N)",
     "tl.store(y_ptr + offs, v, mask=offs > N - 2)", RACE),
    ("tl.store(y_ptr + offs.to(tl.int8) * 4, tl.load(x_ptr + offs))",
     "tl.store(y_ptr - 128, 2.0)", RACE),
    ("tl.store(y_ptr + offs.to(tl.int8) * 4, tl.load(x_ptr + offs))",
     "tl.store(y_ptr + 128, 2.0)", "verified"),
])
def test_accesses_of_other_kinds(tmp_path, capsys, writer, reader, want):
    expect(*dump(tmp_path, capsys, ring(after=writer, late=reader)), want)
