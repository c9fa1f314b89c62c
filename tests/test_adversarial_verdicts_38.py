"""A thirty-eighth adversarial round (adversarial round 38): the memory-race proof's fixed-width
arithmetic (frontend/race_wraps.py) on casts, fills, loaded values, ``tl.where`` and ``min`` /
``max``; round 37's open cases (a ``range`` variable of an int64 bound carried into an int32
name, the message of a member math call of an fp16 tile, a member call's receiver printed as
the whole chain, a ``tl.static_range`` over a helper's statements). Each case is a small kernel
written to a file and read by tle-dump's main(); the exit code and the verdict's words are
pinned. Where a case is a race, the addresses the two accesses really compute are worked out
in two's-complement arithmetic (``_wrap``) at the iteration that makes them meet, so the test
shows the race it expects; where it is safe, every address of the writer is checked against
the reader's over the iterations that wrap.

Bugs found, one line each:
1. A cast spelt otherwise than ``x.to(T)`` with a positional type (``x.cast(tl.int64)``,
   ``tl.cast(x, tl.int64)``, ``x.to(dtype=tl.int64)``) and a typed fill (``tl.full([64], t,
   tl.int64)``, ``tl.zeros([64], tl.int64) + t``) were read as int32 values, and products of
   them wrapped into int32: ``(t + 1).cast(tl.int64) * 67108864`` never reached ``y + 2 ** 32``
   in the model, and a race with a store there was verified. FIXED: race_casts.py reads all
   four spellings and the fills' dtype (race_terms._cast, race_kinds._kind).
2. ``tl.full([64], 100, tl.int8) * 2`` was read as 200; Triton computes it in int8, -56, and a
   race with a store at ``y - 56`` was verified. FIXED as 1 (the fill is its value cast to the
   fill's type, and int8 arithmetic any value of the narrow types).
3. A value loaded from memory, a reduction or any op the model does not read was taken to be an
   int32 in arithmetic: ``(tl.load(i_ptr + t) + 1) * 64`` was wrapped into int32, though an int64
   index table computes it in int64 (``y + 2 ** 32`` at index ``2 ** 26 - 1``): verified. FIXED:
   such a value is of 32 bits or more, its arithmetic either wrapped (int32 / uint32) or not
   (64-bit) (race_kinds.ANY).
4. ``tl.where(c, a, b)`` took its branches' raw terms: an int32 branch beside an int64 one was
   not wrapped before the promotion, so ``tl.where(t >= 0, (t + 1) * 67108864, t.to(tl.int64)
   + 64)``, 0 at t = 63, was read as ``2 ** 32``: verified. FIXED: each branch in its own type
   (race_terms._choice).
5. ``max((t + 1) * 67108864, 64)`` (Python's builtin, which Triton folds to tl.maximum) was an
   unknown of any value, and ``tl.maximum`` any one of its operands, so a store at ``y + max(...,
   64)`` beside one at ``y + 0 .. 63`` was refused; ``tl.where(t < 31, (t + 1) * 67108864, 64)``
   likewise (the condition was not read). False rejections. FIXED: min / max of int32 operands
   are exact (race_terms._min_max, race_wraps.ordered), and a where's condition is read.
6. ``u = 0``, then ``u = u + i`` in ``for i in range(N.to(tl.int64))`` was verified; Triton 3.6
   gives the variable the bounds' type and refuses it ("Loop-carried variable u has initial type
   int32 but is re-assigned to int64"). FIXED: the variable of a loop with an int64 bound is
   marked i64 (triton_rules.range_variable_width).
7. A member math call of an fp16 tile (``t.to(tl.float16).sqrt()``) was refused with "Triton
   3.6 refuses it"; Triton compiles the member form (it skips the element-type check), only the
   lowering's gl.sqrt refuses it. FIXED: the message says so (triton_rules.member_form).
8. A message about a member call whose receiver is itself a member call printed the outermost
   call of the chain as the receiver (``tl.cdiv(t.to(tl.int32).cdiv(2.5).to(tl.float32),
   2.5)`` for ``t.to(tl.int32).cdiv(2.5)``): the source lookup matched the first call at the
   receiver's place. FIXED: a member call's receiver is matched too (protocol._member_of).

Checked and found right: int32 products, shifts, ``//``, ``%``, ``>>`` of wrapped values, uint32
products (wrapped into [0, 2 ** 32)), int8 / int16 casts and arithmetic, a loop of an int64 bound
in an address (64-bit), a uint8 tile times a number out of its range (refused: Triton computes
it in uint8), a static_range over a helper (its statements are counted: the helper is inlined).

Left open: a loop-carried int32 made a uint32 (``u = 0``, then ``u = u + N.to(tl.uint32)``) or
an int64 made a uint64 is verified; Triton 3.6 refuses both (the width rule tracks int64 only).
The memory-race proof takes a loaded value to have 32 bits or more (an int8 table's arithmetic
wraps in int8).
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, judged_as_triton, reader_does, stored_after
from .test_global_races import ring

RACE = ("rejected", "[memory-race]", "can reach the same global address")


def _wrap(v: int, bits: int, signed: bool = True) -> int:
    """``v`` in a ``bits``-wide integer type, as the GPU computes it (two's complement)."""
    v %= 2 ** bits
    return v - 2 ** bits if signed and v >= 2 ** (bits - 1) else v


def late_pair(writer_offset: str, reader_offset: str = "0") -> str:
    """The writer's store at ``y + writer_offset + offs`` after its commit against the reader's
    store at ``y + reader_offset + offs`` after its release: unordered, a race exactly where
    the two meet (``offs`` the 64 lanes)."""
    text = ring(after=f"tl.store(y_ptr + {writer_offset} + offs, tl.load(x_ptr + offs))",
                late=f"tl.store(y_ptr + {reader_offset} + offs, v)")
    # an index table beside the data (the ring's S argument, unused otherwise)
    return text.replace(", S)", ", i_ptr)")


#: name -> (writer's offset, reader's offset, the writer's real offset at the meeting, the
#: reader's): each was verified before this round
RACES = {
    "x.cast(tl.int64)": ("(t + 1).cast(tl.int64) * 67108864", "4294967296",
                         64 * 67108864, 2 ** 32),
    "tl.cast(x, tl.int64)": ("tl.cast(t + 1, tl.int64) * 67108864", "4294967296",
                             64 * 67108864, 2 ** 32),
    "x.to(dtype=tl.int64)": ("(t + 1).to(dtype=tl.int64) * 67108864", "4294967296",
                             64 * 67108864, 2 ** 32),
    # tl.full(shape, t + 1, tl.int64) is t + 1 made an int64 (Triton's make_scalar)
    "an int64 fill": ("tl.full([64], t + 1, tl.int64) * 67108864", "4294967296",
                      64 * 67108864, 2 ** 32),
    "an int64 zeros beside int32 values": ("(tl.zeros([64], tl.int64) + t + 1) * 67108864",
                                           "4294967296", 64 * 67108864, 2 ** 32),
    # 100 * 2 in int8
    "an int8 fill": ("tl.full([64], 100, tl.int8) * 2", "-56", _wrap(200, 8), -56),
    # an int64 index table holding 2 ** 26 - 1
    "a loaded index": ("(tl.load(i_ptr + t) + 1) * 64", "4294967296", (2 ** 26) * 64, 2 ** 32),
    # the sum of four int64 values t = 63, computed in int64
    "an int64 reduction": ("(tl.sum(tl.full([4], t, tl.int64), 0) + 4) * 16777216",
                           "4294967296", (4 * 63 + 4) * 16777216, 2 ** 32),
    # the int32 branch wraps to 0 at t = 63 before the promotion to int64
    "an int32 branch of a where beside an int64 one": (
        "tl.where(t >= 0, (t + 1) * 67108864, t.to(tl.int64) + 64)", "0",
        _wrap(64 * 67108864, 32), 0),
}


@pytest.mark.parametrize("name", list(RACES))
def test_a_race_through_a_typed_offset_is_rejected(tmp_path, capsys, name):
    writer, reader, real_writer, real_reader = RACES[name]
    assert real_writer == real_reader  # the two stores meet
    code, err = dump(tmp_path, capsys, late_pair(writer, reader))
    expect(code, err, RACE)


#: still races: the exact min / max and the where's condition keep the value that wraps to 0
STILL_RACES = {
    "a min of a wrapped product": "min((t + 1) * 67108864, 64)",
    "a tl.minimum of a wrapped product": "tl.minimum((t + 1) * 67108864, 64)",
    "a where whose condition holds at t = 63": "tl.where(t < 64, (t + 1) * 67108864, 64)",
    "a where whose condition is a name": "tl.where(small, (t + 1) * 67108864, 64)",
}


@pytest.mark.parametrize("name", list(STILL_RACES))
def test_a_min_or_where_reaching_a_wrapped_zero_is_rejected(tmp_path, capsys, name):
    assert _wrap(64 * 67108864, 32) == 0  # at t = 63
    text = late_pair(STILL_RACES[name]).replace(
        "        w.commit(t)\n", "        w.commit(t)\n        small = t < 64\n")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, RACE)


#: name -> (writer's offset, its real value at t): each was refused before this round
SAFE = {
    "a builtin max": ("max((t + 1) * 67108864, 64)",
                      lambda t: max(_wrap((t + 1) * 67108864, 32), 64)),
    "a builtin max of three": ("max((t + 1) * 67108864, 64, 128)",
                               lambda t: max(_wrap((t + 1) * 67108864, 32), 64, 128)),
    "a tl.maximum": ("tl.maximum((t + 1) * 67108864, 64)",
                     lambda t: max(_wrap((t + 1) * 67108864, 32), 64)),
    # (t + 1) * 2 ** 26 stays below 2 ** 31 for t < 31
    "a where on t < 31": ("tl.where(t < 31, (t + 1) * 67108864, 64)",
                          lambda t: _wrap((t + 1) * 67108864, 32) if t < 31 else 64),
}


@pytest.mark.parametrize("name", list(SAFE))
def test_offsets_kept_apart_by_min_max_or_where_are_verified(tmp_path, capsys, name):
    writer, real = SAFE[name]
    # every iteration's row starts at 64 or later (the reader's is y[0:64]); the values repeat
    # with period 64 in t
    assert all(real(t) >= 64 for t in range(4 * 64))
    code, err = dump(tmp_path, capsys, late_pair(writer))
    expect(code, err, "verified")


def test_column_halves_of_a_loaded_row_are_verified(tmp_path, capsys):
    """A row index read from a table (of any width) still keeps its 64-element alignment, so
    the two halves of one row are apart, wrapped or not."""
    text = ring(after="h = tl.arange(0, 32)\n"
                      "        tl.store(y_ptr + tl.load(i_ptr + t) * 64 + h, tl.load(x_ptr + h))",
                late="h = tl.arange(0, 32)\n"
                     "        tl.store(y_ptr + tl.load(i_ptr + t) * 64 + 32 + h, "
                     "tl.load(x_ptr + h))")
    code, err = dump(tmp_path, capsys, text.replace(", S)", ", i_ptr)"))
    expect(code, err, "verified")


# ------------------------------------------- a range variable of an int64 bound, carried




@pytest.mark.parametrize("stmt", [
    "u = 0\nfor i in range(N.to(tl.int64)):\n    u = u + i",
    "u = 0\nfor i in range(0, N.to(tl.int64)):\n    u = i",
    "u = 0\nfor i in tl.range(N.to(tl.int64), 0, -1):\n    u = u + i * 2",
])
def test_an_int64_loop_variable_carried_into_an_int32_is_rejected(tmp_path, capsys, monkeypatch,
                                                                  stmt):
    """Before: verified. Triton 3.6: "Loop-carried variable u has initial type int32 but is
    re-assigned to int64 in loop"."""
    text = stored_after(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r38_i64_range", True,
                     ("rejected", "is a scalar int (int32) before the", "a scalar int (int64)",
                      "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "u = N.to(tl.int64)\nfor i in range(N.to(tl.int64)):\n    u = u + i",
    "u = 0\nfor i in range(N.to(tl.int64)):\n    u = u + 1",
    "u = 0\nfor i in range(N):\n    u = u + i",
])
def test_a_loop_variable_of_the_carried_width_is_verified(tmp_path, capsys, monkeypatch, stmt):
    text = stored_after(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r38_i64_range_ok", False,
                     "verified")


# ---------------------------------------------------------------- messages of member calls


@pytest.mark.parametrize("member", ["sqrt", "exp2", "rsqrt", "log"])
def test_a_member_math_call_of_fp16_names_the_lowering(tmp_path, capsys, monkeypatch, member):
    """Triton 3.6 compiles `x.sqrt()` of an fp16 tile (the member skips _check_dtype); the
    lowering's gl.sqrt refuses it, and the message says which refuses it."""
    text = stored_after(f"u = t.to(tl.float16).{member}()", "u")
    err = judged_as_triton(tmp_path, capsys, monkeypatch, text, "r38_member_math", False,
                           ("rejected", f"`t.to(tl.float16).{member}()`",
                            f"member `.{member}()` skips the element-type check",
                            f"the lowering's gl.{member} refuses it", "[unsupported-expression]"))
    assert "Triton 3.6 refuses it" not in err


def test_the_tl_form_of_fp16_math_is_what_triton_refuses(tmp_path, capsys, monkeypatch):
    text = stored_after("u = tl.sqrt(t.to(tl.float16))", "u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r38_tl_math", True,
                     ("rejected", "`tl.sqrt(t.to(tl.float16))`: Triton 3.6 refuses it",
                      "Expected dtype"))


@pytest.mark.parametrize("stmt,shown", [
    ("tl.store(y_ptr + tl.arange(0, 64), t.to(tl.int32).cdiv(2.5).to(tl.float32))",
     "`t.to(tl.int32).cdiv(2.5)`:"),
    ("u = (t * 2 + 1).cdiv(2.0)\ntl.store(y_ptr + tl.arange(0, 64), u)",
     "`(t * 2 + 1).cdiv(2.0)`:"),
    ("tl.store(y_ptr + tl.arange(0, 64), t.to(tl.float16).exp2().to(tl.float32))",
     "`t.to(tl.float16).exp2()`:"),
])
def test_a_member_call_is_printed_as_written(tmp_path, capsys, stmt, shown):
    """Before: the receiver's place held the outer calls of the chain too, and the message
    printed `tl.cdiv(t.to(tl.int32).cdiv(2.5).to(tl.float32), 2.5)`."""
    code, err = dump(tmp_path, capsys, reader_does(stmt))
    expect(code, err, ("rejected", shown))


# ------------------------------------------------ a tl.static_range over a helper's statements

HELPER = '''

def bump(u):
    u = u + 1.0
    u = u * 0.5
    u = u - 1.0
    return u
'''


@pytest.mark.parametrize("stmt,count", [
    ("u = 0.0\nfor i in tl.static_range(6000):\n    u = bump(u)", "6000 iterations of 4"),
    ("u = 0.0\nfor i in tl.static_range(3000):\n    u = bump(bump(u))", "3000 iterations of 7"),
])
def test_a_static_range_counts_a_helpers_statements(tmp_path, capsys, stmt, count):
    """The helper's body is inlined where it is called, so the unroll bound counts it: 6000
    iterations of one call of a three-statement helper unroll 24000 statements."""
    code, err = dump(tmp_path, capsys, reader_does(stored_after(stmt, "u")) + HELPER)
    expect(code, err, ("rejected", count, "more than 16384", "[bad-loop]"))


def test_a_static_range_over_a_small_helper_is_verified(tmp_path, capsys):
    stmt = "u = 0.0\nfor i in tl.static_range(4000):\n    u = bump(u)"
    code, err = dump(tmp_path, capsys, reader_does(stored_after(stmt, "u")) + HELPER)
    expect(code, err, "verified")
