"""A thirty-ninth adversarial round (adversarial round 39): the integer types of loop-carried
names beyond int32 / int64 (uint32, uint64, the narrow types), spelt every way a kernel can
give a value a type (``.to``, ``tl.cast``, ``.cast``, ``tl.full``, a range loop's bounds, a
``while`` loop, an ``if``, tuple unpacking, ``tl.where`` / ``tl.maximum``, unary minus), and the
memory-race proof's reading of a value loaded through a pointer of a narrow element type. Each
case is a small kernel written to a file and read by tle-dump's main(); where the case is about
what Triton 3.6 compiles, the same statements are compiled in a plain ``@triton.jit`` kernel
for sm_90a on the CPU (tests/adversarial_oracles.py), and the verdict follows Triton's answer.

Bugs found, one line each:
1. A loop-carried int32 rebound to a uint32 (``u = 0``, then ``u = u + N.to(tl.uint32)`` in a
   loop; ``tl.cast``, ``.cast``, ``tl.full([], 3, tl.uint32)``, a ``>>`` or ``^`` of one, a
   ``while`` loop) or an int64 rebound to a uint64 was verified; Triton refuses it
   ("Loop-carried variable u has initial type int32 but is re-assigned to uint32 in loop").
   FIXED: Triton's integer promotion of scalars (triton_rules.scalar_int_type, binop_int_type),
   and the refusal quotes Triton's words.
2. The variable of a ``range`` over a uint32 bound (``range(N.to(tl.uint32))``, ``range(
   3000000000, 3000000005)``, a nested ``range(i)`` of such an ``i``) is a uint32 in Triton;
   ``u = i`` or ``u = u + i`` of an int32 ``u`` was verified. FIXED: range_variable_type.
3. ``a, b = b, a + N.to(tl.uint32)``, ``tl.where(c, N, N.to(tl.uint32))``, ``tl.maximum(u,
   N.to(tl.uint32))``, ``-N.to(tl.uint32)`` and a value loaded through a ``*u32`` pointer were
   verified as above. FIXED: the promotion of where / maximum / minimum operands, unary minus,
   a tuple's temporaries no longer stop the carried name's reading (carried_kind).
4. Inside a loop carrying ``u = 0``: ``if i > 2: u = i.to(tl.uint32)`` (Triton: "initial value
   for `u` is of type int32[], but the then block redefines it as uint32[]"), ``u + 3000000000``
   ("Scalar 3000000000 is out of range for type int32") and ``u // N.to(tl.uint32)`` ("...
   different signedness") were verified: the carried name was poison there, of no type. FIXED:
   its type is the one it had before the loop (triton_rules.carried_type).
5. The memory-race proof took a loaded value to have 32 bits or more. ``(tl.load(i_ptr + t) *
   0 + 100) * 2 + 56`` of an ``*i8`` table is 0 in int8 (-56 + 56), read as 256, so a race with
   a store at ``y + 0`` was verified (an ``*i16`` and a ``*u8`` table likewise). FIXED: a load
   has its pointer's element type where the signature types the one argument it is based on
   (race_wraps._load_kind), and narrow arithmetic wraps exactly in its type (it was any value
   of the narrow types, which would have refused the aligned halves of a row below).
6. A value loaded through an ``*i32`` or ``*u32`` table was taken to be possibly 64-bit, so
   ``(tl.load(i_ptr + t) + 1) * 64`` beside a store at ``y + 2 ** 32`` was refused, though in
   32 bits it never reaches ``2 ** 32``: a false rejection. FIXED as 5.

Checked and found right: Triton compiles a tuple whose items change type in a loop (``q = (N,
N)``, then ``q = (q[0] + N.to(tl.uint32), q[1])``: it checks the tuple's type, not its items'),
which stays verified; an int64 name plus a uint32 stays int64; a loop over an int8 or uint16
bound counts in int32.
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_compile_error
from .adversarial_support import TRITON, dump, expect, judged_as_triton, reader_does
from .test_global_races import ring

STORE = "tl.store(y_ptr + tl.arange(0, 64), (t + u).to(tl.float32))"


def _stored(stmt: str) -> str:
    return f"{stmt}\n{STORE}"


def _loop_words(name: str, was: str, now: str) -> str:
    return f"Loop-carried variable {name} has initial type {was} but is re-assigned to {now} in loop"


#: statements Triton 3.6 refuses for a loop-carried type change -> the words tle-dump quotes
CARRIED = {
    "x.to(tl.uint32)": ("u = 0\nfor i in range(N):\n    u = u + N.to(tl.uint32)",
                        _loop_words("u", "int32", "uint32")),
    "tl.cast(x, tl.uint32)": ("u = 0\nfor i in range(N):\n    u = u + tl.cast(N, tl.uint32)",
                              _loop_words("u", "int32", "uint32")),
    "x.cast(tl.uint32)": ("u = 0\nfor i in range(N):\n    u = u + N.cast(tl.uint32)",
                          _loop_words("u", "int32", "uint32")),
    "a uint32 fill": ("u = 0\nfor i in range(N):\n    u = u + tl.full([], 3, tl.uint32)",
                      _loop_words("u", "int32", "uint32")),
    "an int64 made a uint64": ("u = N.to(tl.int64)\nfor i in range(N):\n"
                               "    u = u + N.to(tl.uint64)", _loop_words("u", "int64", "uint64")),
    "a uint32 shifted": ("u = 0\nfor i in range(N):\n    u = u + (N.to(tl.uint32) >> 1)",
                         _loop_words("u", "int32", "uint32")),
    "a xor with a uint32": ("u = 0\nfor i in range(N):\n    u = u ^ N.to(tl.uint32)",
                            _loop_words("u", "int32", "uint32")),
    "a uint32 negated": ("u = 0\nfor i in range(N):\n    u = -N.to(tl.uint32)",
                         _loop_words("u", "int32", "uint32")),
    "a where of int32 and uint32": (
        "u = 0\nfor i in range(N):\n    u = u + tl.where(N > 0, N, N.to(tl.uint32))",
        _loop_words("u", "int32", "uint32")),
    "a maximum of int32 and uint32": (
        "u = 0\nfor i in range(N):\n    u = tl.maximum(u, N.to(tl.uint32))",
        _loop_words("u", "int32", "uint32")),
    "a range over a uint32 bound": ("u = 0\nfor i in range(N.to(tl.uint32)):\n    u = u + i",
                                    _loop_words("u", "int32", "uint32")),
    "a uint32 loop variable bound": ("u = 0\nfor i in range(N.to(tl.uint32)):\n    u = i",
                                     _loop_words("u", "int32", "uint32")),
    "a range of numbers past int32": ("u = 0\nfor i in range(3000000000, 3000000005):\n    u = i",
                                      _loop_words("u", "int32", "uint32")),
    "a nested range over a uint32 variable": (
        "u = 0\nfor i in range(N.to(tl.uint32)):\n    for j in range(i):\n        u = u + j",
        _loop_words("u", "int32", "uint32")),
    "a uint32 number rebound to an int32": ("u = 3000000000\nfor i in range(N):\n    u = N",
                                            _loop_words("u", "uint32", "int32")),
    "a while loop": ("u = 0\nk = 0\nwhile k < N:\n    u = u + N.to(tl.uint32)\n    k += 1",
                     _loop_words("u", "int32", "uint32")),
    "a while loop inside a for": (
        "u = 0\nfor i in range(N):\n    k = 0\n    while k < N:\n"
        "        u = u + N.to(tl.uint32)\n        k += 1", _loop_words("u", "int32", "uint32")),
    "tuple unpacking": ("u = 0\nb = 0\nfor i in range(N):\n    u, b = b, u + N.to(tl.uint32)",
                        _loop_words("b", "int32", "uint32")),
    "an if inside the loop": (
        "u = 0\nfor i in range(N):\n    if i > 2:\n        u = i.to(tl.uint32)",
        "initial value for `u` is of type int32[], but the then block redefines it as uint32[]"),
}


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_loop_carried_int_given_another_type_is_rejected(tmp_path, capsys, monkeypatch, name):
    """Before: verified (the width rule followed int64 only). Triton 3.6 refuses each."""
    stmt, words = CARRIED[name]
    text = _stored(stmt)
    error = triton_compile_error(tmp_path, monkeypatch,
                                 TRITON.replace("STMT", "".join(f"    {x}\n"
                                                                for x in text.splitlines())),
                                 "r39_carried")
    assert error is not None and words in str(error)
    code, err = dump(tmp_path, capsys, reader_does(text))
    expect(code, err, ("rejected", words, "Triton 3.6 refuses a name whose type",
                       "[unsupported-expression]"))


#: statements in a loop carrying an int32 that Triton 3.6 refuses otherwise -> the words
OTHER = {
    "a number out of the carried type's range": (
        "u = 0\nfor i in range(N):\n    u = u + 3000000000",
        "Scalar 3000000000 is out of range for type int32"),
    "a division by a uint32": ("u = 0\nfor i in range(N):\n    u = u // N.to(tl.uint32)",
                               "because they have different signedness"),
    "a negative number beside a uint32 loop variable": (
        "u = 0\nfor i in range(N.to(tl.uint32)):\n    u = u + (i + -1).to(tl.int32)",
        "Cannot perform a binary operation between an unsigned tensor and a negative scalar"),
}


@pytest.mark.parametrize("name", list(OTHER))
def test_what_triton_refuses_beside_a_carried_name_is_rejected(tmp_path, capsys, monkeypatch,
                                                               name):
    """Before: verified (the carried name was of no type inside the loop, the loop variable an
    int32)."""
    stmt, words = OTHER[name]
    text = _stored(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r39_other", True,
                     ("rejected", words, "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "u = N.to(tl.int64)\nfor i in range(N):\n    u = u + N.to(tl.uint32)",
    "u = N.to(tl.uint32)\nfor i in range(N):\n    u = u + 1",
    "u = N.to(tl.uint32)\nfor i in range(N):\n    u = u + N",
    "u = 3000000000\nfor i in range(N):\n    u = u + N",
    "u = 0\nfor i in range(N.to(tl.int8)):\n    u = i",
    "u = 0\nfor i in range(N.to(tl.uint16)):\n    u = u + i",
    "u = 0\nfor i in range(N.to(tl.uint32)):\n    u = u + i.to(tl.int32)",
    "u = N.to(tl.uint32)\nfor i in range(N.to(tl.uint32)):\n    u = u + i",
    "u = 0\nfor i in range(N.to(tl.uint32)):\n    for j in range(N):\n        u = u + j",
    "u = 0\nfor i in range(N):\n    u = u + (N.to(tl.uint32) > 3)",
    "u = 0\nfor i in range(N):\n    u = u + N.to(tl.uint16)",
    "u = N.to(tl.uint32)\nk = 0\nwhile k < N:\n    u = u + N\n    k += 1",
    # Triton checks a carried tuple's type, not its items'
    "q = (N, N)\nfor i in range(N):\n    q = (q[0] + N.to(tl.uint32), q[1])\nu = q[0]",
    "q = (0, 0)\nfor i in range(N):\n    q = (q[1], q[0] + N.to(tl.uint32))\nu = q[1]",
])
def test_a_loop_carried_int_of_one_type_is_verified(tmp_path, capsys, monkeypatch, stmt):
    text = _stored(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r39_same", False,
                     "verified")


def test_a_value_loaded_through_a_u32_pointer_carried_into_an_int32_is_rejected(
        tmp_path, capsys, monkeypatch):
    """The loaded value has the pointer's element type (DEFAULT_CONFIG's `*u32`)."""
    stmt = _stored("u = 0\nfor i in range(N):\n    u = u + tl.load(y_ptr + i)")
    source = TRITON.replace("STMT", "".join(f"    {x}\n" for x in stmt.splitlines()))
    signature = {"x_ptr": "*u32", "N": "i32", "C": "constexpr"}
    error = triton_compile_error(tmp_path, monkeypatch, source, "r39_u32", signature)
    words = _loop_words("u", "int32", "uint32")
    assert error is not None and words in str(error)
    text = reader_does(stmt).replace('"y_ptr": "*fp32"', '"y_ptr": "*u32"')
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", words))
    # the same loop over an int32 table compiles and is verified
    error = triton_compile_error(tmp_path, monkeypatch, source, "r39_i32",
                                 dict(signature, x_ptr="*i32"))
    assert error is None
    code, err = dump(tmp_path, capsys, text.replace('"y_ptr": "*u32"', '"y_ptr": "*i32"'))
    expect(code, err, "verified")


# ----------------------------------------------- loaded values of narrow types in addresses

RACE = ("rejected", "[memory-race]", "can reach the same global address")


def _wrap(v: int, bits: int, signed: bool = True) -> int:
    """``v`` in a ``bits``-wide integer type, as the GPU computes it (two's complement)."""
    v %= 2 ** bits
    return v - 2 ** bits if signed and v >= 2 ** (bits - 1) else v


def table_pair(writer_offset: str, reader_offset: str, element: str) -> str:
    """The writer's store at ``y + writer_offset + offs`` after its commit against the reader's
    at ``y + reader_offset + offs`` after its release, unordered; ``i_ptr`` an index table the
    signature types ``*element``."""
    text = ring(after=f"tl.store(y_ptr + {writer_offset} + offs, tl.load(x_ptr + offs))",
                late=f"tl.store(y_ptr + {reader_offset} + offs, v)")
    return text.replace(", S)", ", i_ptr)") + (
        '\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", '
        f'"i_ptr": "*{element}"}}}}\n')


#: name -> (writer's offset, reader's offset, table type, the writer's real offset, the
#: reader's): each was verified before this round (the narrow arithmetic read as 32-bit)
NARROW_RACES = {
    "an int8 table": ("(tl.load(i_ptr + t) * 0 + 100) * 2 + 56", "0", "i8",
                      _wrap(_wrap(100 * 2, 8) + 56, 8), 0),
    "an int16 table": ("(tl.load(i_ptr + t) * 0 + 200) * 200", "-25536", "i16",
                       _wrap(200 * 200, 16), -25536),
    "a uint8 table": ("(tl.load(i_ptr + t) * 0 + 200) * 2", "144", "u8",
                      _wrap(400, 8, signed=False), 144),
}


@pytest.mark.parametrize("name", list(NARROW_RACES))
def test_a_race_through_narrow_loaded_arithmetic_is_rejected(tmp_path, capsys, name):
    writer, reader, element, real_writer, real_reader = NARROW_RACES[name]
    assert real_writer == real_reader  # the two stores meet
    code, err = dump(tmp_path, capsys, table_pair(writer, reader, element))
    expect(code, err, RACE)


def test_the_same_arithmetic_of_an_int32_table_is_verified(tmp_path, capsys):
    """In int32 `(x * 0 + 100) * 2 + 56` is 256, a row past the reader's."""
    code, err = dump(tmp_path, capsys,
                     table_pair("(tl.load(i_ptr + t) * 0 + 100) * 2 + 56", "0", "i32"))
    expect(code, err, "verified")


@pytest.mark.parametrize("element", ["i8", "u8", "i16", "i32", "u32", "i64"])
def test_column_halves_of_a_row_of_a_typed_table_are_verified(tmp_path, capsys, element):
    """`x * 64` wrapped in a narrow type stays a multiple of 64 (its modulus is one), so the two
    halves of one row stay apart: read as any value of the narrow types, they met."""
    text = ring(after="h = tl.arange(0, 32)\n"
                      "        tl.store(y_ptr + tl.load(i_ptr + t) * 64 + h, tl.load(x_ptr + h))",
                late="h = tl.arange(0, 32)\n"
                     "        tl.store(y_ptr + tl.load(i_ptr + t) * 64 + 32 + h, "
                     "tl.load(x_ptr + h))")
    text = text.replace(", S)", ", i_ptr)") + (
        '\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", '
        f'"i_ptr": "*{element}"}}}}\n')
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")


@pytest.mark.parametrize("element,want", [("i8", "verified"), ("i32", "verified"),
                                          ("u32", "verified"), ("i64", RACE)])
def test_a_32_bit_table_never_reaches_past_int32(tmp_path, capsys, element, want):
    """`(x + 1) * 64` of an int8, int32 or uint32 table wraps in its type and never reaches
    `2 ** 32` (a uint32 in [0, 2 ** 32)); of an int64 table it does at x = 2 ** 26 - 1. Before,
    each was read as possibly 64-bit and refused."""
    assert (2 ** 26 - 1 + 1) * 64 == 2 ** 32
    code, err = dump(tmp_path, capsys,
                     table_pair("(tl.load(i_ptr + t) + 1) * 64", "4294967296", element))
    expect(code, err, want)
