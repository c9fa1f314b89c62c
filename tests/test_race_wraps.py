"""Int32 wraparound in the memory-race check (frontend/race_wraps.py): Triton computes an offset
of int32 operands in int32, so ``y_ptr + (t + 1) * 67108864`` is ``y_ptr + 0`` at ``t = 63``.
The check read addresses as unbounded integers, so a race through a wrapped offset was verified;
it now wraps each int32 sum, difference, product and shift of an address, of its mask and of
the conditions of the ``if``s around it (and a counter a loop carries), and a kernel whose
offsets stay in int32 shows it by bounding its arguments (``tle.assume``) or computing them in
int64 (``.to(tl.int64)`` before the arithmetic).
"""

from __future__ import annotations

import pytest

from tle_compiler.frontend.race_wraps import pointer_arguments

from .adversarial_support import dump, expect
from .test_adversarial_verdicts_34 import body, ring as ring34
from .test_global_races import ring

WRAPS = "where int32 offset arithmetic wraps around"
RACE = ("rejected", "[memory-race]", "can reach the same global address")


def bounded(text: str, bound: str = "N <= 1048576") -> str:
    return text.replace("def k(x_ptr, y_ptr, N, S):\n",
                        f"def k(x_ptr, y_ptr, N, S):\n    tle.assume({bound})\n")


#: the writer's store after its commit against the reader's store of y[0:64] after its
#: release: unordered, so a race exactly where the two addresses meet
def late_pair(writer_offset: str, reader_offset: str = "0") -> str:
    return ring(after=f"tl.store(y_ptr + {writer_offset} + offs, tl.load(x_ptr + offs))",
                late=f"tl.store(y_ptr + {reader_offset} + offs, v)")


RACES = {
    # 64 * 2 ** 26 = 2 ** 32: row 0 again at t = 63
    "a product past int32": late_pair("(t + 1) * 67108864"),
    "a shift past int32": late_pair("((t + 1) << 26)"),
    # the product wraps before the cast widens it
    "an int64 cast after the product": late_pair("((t + 1) * 67108864).to(tl.int64)"),
    # computed in int64, then cut to int32: wrapped there
    "an int64 product cut to int32": late_pair(
        "((t + 1).to(tl.int64) * 67108864).to(tl.int32)"),
    # the kernel body's value, shared by the partitions: (N + 1) * 65536 of N = 65535
    "a kernel-body offset": bounded(late_pair("far"), "N >= 0").replace(
        "def produce(kv, x_ptr, y_ptr, N, S):\n",
        "def produce(kv, x_ptr, y_ptr, N, S):\n    far = (N + 1) * 65536\n"),
    # an integer argument both added to a pointer and multiplied: the product is int32
    # arithmetic (2 * N of N = 2 ** 31 - 32 is -64)
    "an argument added to a pointer and multiplied": bounded(
        late_pair("(t % 2 + 1) * N", "-64"), "N >= 1").replace(
        "        s = w.acquire(t)\n",
        "        s = w.acquire(t)\n        u = tl.load(y_ptr + N + offs)\n"),
    # a counter the loop carries (off += 64): 64 + off is 0 again at t = 2 ** 26 - 1
    "a carried counter": ring34(
        wpre="off = 0", after="tl.store(y_ptr + 64 + off + offs, tl.load(x_ptr + offs))\n"
                              "        off += 64",
        late="tl.store(y_ptr + offs, v)"),
    # the condition of the `if` around the store wraps too: (t + 1) * 2 ** 26 is -2 ** 31 at
    # t = 31, so the else branch's store runs
    "a wrapped condition": ring34(
        after=body("if (t + 1) * 67108864 > 0:", "    pass", "else:",
                   "    tl.store(y_ptr + offs, tl.load(x_ptr + offs))"),
        late="tl.store(y_ptr + offs, v)"),
    # ... and a mask
    "a wrapped mask": late_pair("0").replace(
        "tl.load(x_ptr + offs))", "tl.load(x_ptr + offs), mask=(t + 1) * 67108864 + offs < 0)"),
    # round 34's correct kernels, N unbounded: t * 64 of t = 2 ** 26 is row 0
    "rows t >= 3 of an else branch": ring(
        after="if t < 3:\n            pass\n        else:\n"
              "            tl.store(y_ptr + t * 64 + offs, tl.zeros([64], tl.float32))",
        late="tl.store(y_ptr + offs, v)"),
}


@pytest.mark.parametrize("name", list(RACES))
def test_a_race_through_a_wrapped_offset_is_rejected(tmp_path, capsys, name):
    code, err = dump(tmp_path, capsys, RACES[name])
    expect(code, err, RACE + (WRAPS,))


SAFE = {
    # widened before the arithmetic: computed in int64
    "an int64 cast before the product": late_pair("(t + 1).to(tl.int64) * 67108864"),
    "an int64 name": ring(
        after="r = (t + 1).to(tl.int64)\n"
              "        tl.store(y_ptr + r * 67108864 + offs, tl.load(x_ptr + offs))",
        late="tl.store(y_ptr + offs, v)"),
    # N bounded: (t + 1) * 64 stays in int32, never 0
    "a bounded argument": bounded(late_pair("(t + 1) * 64")),
    "a bounded argument, the else branch": bounded(RACES["rows t >= 3 of an else branch"]),
    # the condition computed in int64: never negative, the else branch never runs
    "a condition in int64": ring34(
        after=body("if (t + 1).to(tl.int64) * 67108864 > 0:", "    pass", "else:",
                   "    tl.store(y_ptr + offs, tl.load(x_ptr + offs))"),
        late="tl.store(y_ptr + offs, v)"),
    # uint32 offsets are zero-extended where a pointer adds them (Triton's addptr of an
    # unsigned offset): t + 3e9 wraps into [0, 2 ** 32), never onto y - 1294967296
    "a uint32 offset": late_pair("(t.to(tl.uint32) + 3000000000)", "-1294967296"),
    # a pointer advanced by 64 each iteration: 64-bit arithmetic, never back at row 0
    "an advancing pointer": ring34(
        after="tl.store(y_ptr + 64 + offs, tl.load(x_ptr + offs))\n        y_ptr += 64",
        late="tl.store(y_ptr + offs, v)"),
    # rows through a stride stay apart (the stride rule takes a tensor's rows not to overlap)
    "column halves through a stride": ring(
        after="rows = tl.arange(0, 16)\n        cols = tl.arange(0, 64)\n"
              "        tl.store(y_ptr + rows[:, None] * S + cols[None, :], "
              "tl.zeros([16, 64], tl.float32))",
        late="rows = tl.arange(0, 16)\n        cols = tl.arange(0, 64)\n"
             "        tl.store(y_ptr + rows[:, None] * S + 64 + cols[None, :], "
             "tl.zeros([16, 64], tl.float32))"),
}


@pytest.mark.parametrize("name", list(SAFE))
def test_offsets_that_cannot_wrap_onto_each_other_are_verified(tmp_path, capsys, name):
    code, err = dump(tmp_path, capsys, SAFE[name])
    expect(code, err, "verified")


def test_int8_arithmetic_is_any_int8_value(tmp_path, capsys):
    """int8 arithmetic wraps at 8 bits (32 * 4 is -128 in int8): the model takes any value of
    the narrow types for it, so the store may reach y - 128 (the witness's t is any)."""
    code, err = dump(tmp_path, capsys, late_pair("((t % 64).to(tl.int8) * 4)", "-128"))
    expect(code, err, RACE)


def test_int8_arithmetic_promoted_to_int32_keeps_its_wrap(tmp_path, capsys):
    """(t % 64).to(tl.int8) * 4 is computed in int8 before + offs promotes it: -128 at 32."""
    code, err = dump(tmp_path, capsys, late_pair("((t % 64).to(tl.int8) * 4 + 0 * t)", "-128"))
    expect(code, err, RACE)


def test_a_race_without_a_wrap_gets_the_plain_witness(tmp_path, capsys):
    """Where the addresses meet without a wrap too, the witness is that one (t = 0 here), not
    one of a wrapped offset."""
    code, err = dump(tmp_path, capsys, late_pair("t * 64"))
    expect(code, err, RACE + ("at t = 0",))
    assert WRAPS not in err, err


def test_an_unbounded_offset_names_the_way_out(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, RACES["a product past int32"])
    expect(code, err, RACE + ("at t = 63", "tle.assume", ".to(tl.int64)"))


def test_an_integer_added_to_a_pointer_and_multiplied_is_no_pointer(tmp_path):
    """N is added to y_ptr (a base candidate of that load) and multiplied: an integer, whose
    products wrap; y_ptr and x_ptr are only ever added to: pointers (64-bit)."""
    from tle_compiler.cli.dump import load

    path = tmp_path / "k.py"
    path.write_text(RACES["an argument added to a pointer and multiplied"])
    kern = load(path).infos["k"].kir
    assert pointer_arguments(kern, {"x_ptr", "y_ptr", "N"}) == {"x_ptr", "y_ptr"}


def with_signature(text: str, **types: str) -> str:
    """``text`` with a DEFAULT_CONFIG whose signature gives ``types`` (the others i32 / *fp32)."""
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "S": "i32", **types}
    return text + f"""

DEFAULT_CONFIG = {{"signature": {sig!r}, "constexprs": {{}}, "num_warps": 4, "grid": (1,)}}
"""


def test_the_signature_says_which_arguments_are_integers(tmp_path, capsys):
    """S only ever added (`y_ptr + (S + t * 64)`) reads as a pointer without a signature; with
    one typing it i32, S + t * 64 is int32 arithmetic, which wraps past 2 ** 31 onto y - 64."""
    text = bounded(late_pair("(S + t * 64)", "-64"), "S >= 0")
    code, err = dump(tmp_path, capsys, with_signature(text))
    expect(code, err, RACE + (WRAPS,))


def test_a_64_bit_integer_argument_does_not_wrap(tmp_path, capsys):
    """S typed i64: S * 67108864 is 64-bit arithmetic, never back at row 0 for 1 <= S <= 2 **
    30 (at most 2 ** 56 fp32 elements, 2 ** 58 bytes). Without the upper bound it is, at S =
    2 ** 36 (adversarial round 42): 2 ** 62 fp32 elements are 2 ** 64 bytes, and the byte
    address wraps modulo 2 ** 64 (before round 42 this was verified)."""
    text = bounded(bounded(late_pair("S * 67108864"), "S <= 1073741824"), "S >= 1")
    code, err = dump(tmp_path, capsys, with_signature(text, S="i64"))
    expect(code, err, "verified")
    code, err = dump(tmp_path, capsys, with_signature(text))  # i32: 64 * 2 ** 26 wraps to 0
    expect(code, err, RACE + (WRAPS,))
    text = bounded(late_pair("S * 67108864"), "S >= 1")
    code, err = dump(tmp_path, capsys, with_signature(text, S="i64"))
    expect(code, err, RACE + ("the byte address wraps around modulo 2 ** 64",))
