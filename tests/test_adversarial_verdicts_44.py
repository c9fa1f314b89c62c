"""A forty-fourth adversarial round (adversarial round 44): what Triton 3.6 makes of the values
the memory-race proof reads (frontend/race_terms.py, race_wraps.py) where its typing differs
from the plain reading of the Python: the axis of ``tl.program_id`` given by keyword or by a
constexpr, comparisons of a signed and an unsigned value, and a pointer minus an offset. Each
case is a small kernel written to a file and read by tle-dump's main(); where the case is about
what Triton 3.6 computes, the same statement is compiled in a plain ``@triton.jit`` kernel for
sm_90a on the CPU (tests/adversarial_oracles.py) and its TTIR read.

Bugs found, one line each (all verified, exit 0, before the fixes that came with this file):

- ``tl.program_id(axis=1)`` (and ``tl.num_programs(axis=1)``) was read as axis 0: the race proof
  took the axis from the first positional argument only, so ``y_ptr + tl.program_id(0) -
  tl.program_id(axis=1)`` was ``y_ptr + 0`` and a store there verified beside another
  partition's store at ``y_ptr + 5`` (the CTA at program ids (5, 0) stores both); FIXED.
- ``tl.program_id(A)`` of a constexpr axis the kernel is read without a number for: every such
  call was one symbol (``pid:None``), so ``tl.program_id(A) - tl.program_id(B)`` was 0 for any
  A and B, verified beside ``y_ptr + 5`` (also with DEFAULT_CONFIG's A = 0, B = 1, which the
  lowering compiles); FIXED: it is the program id of the axis it names, A in [0, 2].
- a comparison of an int32 with a uint32 was read as one of integers, where Triton converts the
  int32 to uint32 and compares unsigned (``icmp ult``): ``m < u`` of ``m = -1`` and ``u = 3``
  is false on the GPU, true in the proof, so a store at ``tl.where(m < u, 0, 5)`` (or under
  ``if m < u: ... else:``, or masked by ``m >= u``) verified beside ``y_ptr + 5``; likewise
  ``u > -1`` (Triton makes the -1 a tensor first, then a uint32: never true); FIXED: a
  comparison is read in the type Triton promotes its operands to (a signed value beside an
  unsigned one at least as wide taken modulo ``2 ** bits``), and one of an operand of unknown
  width or signedness is a truth the proof does not read.
- a pointer minus an offset was read as the subtraction, where Triton computes ``ptr + (0 -
  off)``, the negation in the offset's own type (semantic.sub, minus) and an unsigned result
  zero-extended: ``y_ptr + 300 - u`` of a uint8 1 is ``y_ptr + 555``, of an int8 -128
  ``y_ptr + 172``, ``y_ptr + 5 - u`` of a uint32 1 is ``y_ptr + 4294967300``, and ``y_ptr -
  2147483648`` (a uint32 number) is ``y_ptr + 2147483648``: stores there verified beside
  another partition's store at the address Triton computes; FIXED (race_wraps.settle).

- a Python integer outside the type of an integer tile beside it as one of ``tl.where``'s two
  values (``tl.where(c, u, -1)`` of a uint32 ``u``, ``tl.where(c, x8, 300)`` of an int8 one,
  ``tl.where(c, t, 3000000000)`` of an int32 loop variable) was verified, where Triton 3.6
  refuses it as it refuses the same number in ``+`` (semantic.where converts the two values
  with binary_op_type_checking_impl) and ``--ttgir`` refused the lowered kernel; FIXED: the
  rules of operators' Python integers apply to them (frontend/protocol.py); likewise
  ``tl.cdiv(x8, 300)``, ``tl.cdiv(u, -2)``, ``tl.cdiv(t, 3000000000)``: Triton's cdiv is the jit
  function ``(x + (div - 1)) // div``, so ``div - 1`` and ``div`` meet ``x``'s type; FIXED.

- a pointer read from a table (``q = tl.load(tab_ptr)`` in the kernel body) minus a uint8 1 was
  read as ``q - 1`` where Triton computes ``q + 255``; FIXED with the above (a loaded value, of
  unknown kind, minus such an offset is either form).
- an atomic through a pointer whose element type Triton 3.6 refuses for it (``tl.atomic_add``
  of int8, ``tl.atomic_xchg`` of int16, ``tl.atomic_max`` of uint8 or fp16, ``tl.atomic_cas`` of
  int8: "atomic_add does not support int8", "atomic_cas only supports elements with width {16,
  32, 64}") was verified, and ``--ttgir`` refused the lowered kernel; FIXED: the lowering refuses
  it by the signature's element type (lowering/more_ops.py atomic_dtype_refusal), so tle-dump's
  translation does.

Pins beside them: the program id is below its axis's count (``program_id(0) -
num_programs(0)`` is negative: refused before with a witness no grid gives, program_id(0) = 6
with one program); an int64 minus a uint8 is the integer difference (Triton promotes to int64).

Checked and found right (not pinned): ``tl.range(0, N, step=2)`` / ``tl.range(arg1=N)`` /
``tl.static_range(0, 6, step=2)`` and pipe verbs with ``i=`` keywords are read with their
keywords; a pointer argument rebound in the kernel body (``y_ptr = x_ptr``, a tuple swap, a
``tl.where``, under an ``if``) is based on what it is bound to; the negation, inversion and
``^`` of unsigned and narrow values wrap; unsigned arithmetic with a negative literal and int32
arithmetic with a number past int32 are refused, as Triton refuses them; spin loops through a
pointer loaded from a table are refused (endless-loop or memory-wait); ``tl.make_block_ptr``,
``tl.pointer_type`` casts and tensor descriptors are refused or their accesses taken to reach
anywhere; a second warp_specialize and statements after it are refused.
"""

from __future__ import annotations

import pytest

from .adversarial_oracles import triton_compile_error, triton_ttir
from .adversarial_support import TRITON_K, dump, expect
from .test_global_races import ring

RACE = ("rejected", "[memory-race]", "can reach the same global address")


def pair(writer: str, reader: str, before: str = "") -> str:
    """The writer's store at ``y_ptr + writer`` after its commit (``before`` first) against the
    reader's at ``y_ptr + reader`` after its release: unordered (round 38's ring)."""
    stmts = "".join(f"{s}\n        " for s in before.splitlines())
    return ring(after=f"{stmts}tl.store(y_ptr + {writer}, 1.0)",
                late=f"tl.store(y_ptr + {reader}, 2.0)")


def _ttir(tmp_path, monkeypatch, statements: str, tag: str) -> str:
    """The TTIR Triton compiles ``statements`` (lines) in ``for t in range(N)`` of ``k`` to."""
    body = "".join(f"        {s}\n" for s in statements.splitlines())
    return triton_ttir(tmp_path, monkeypatch, TRITON_K + f"    for t in range(N):\n{body}", tag)


def with_constexprs(text: str, *names: str) -> str:
    """Round 38's ring with the constexpr arguments ``names`` added to the kernel and passed
    to both partitions."""
    text = text.replace("N, S)", f"N, S, {', '.join(names)})")
    sig = ", ".join(f"{n}: tl.constexpr" for n in names)
    return text.replace(f"def k(x_ptr, y_ptr, N, S, {', '.join(names)})",
                        f"def k(x_ptr, y_ptr, N, S, {sig})")


# ------------------------------------------------------------ the axis of tl.program_id

@pytest.mark.parametrize("fn", ["program_id", "num_programs"])
def test_an_axis_given_by_keyword(tmp_path, capsys, fn):
    """`tl.program_id(axis=1)` is the y axis: `pid(0) - pid(1)` is 5 at program ids (5, 0).
    Before: verified (read as axis 0, the difference 0)."""
    code, err = dump(tmp_path, capsys, pair(f"tl.{fn}(0) - tl.{fn}(axis=1)", "5"))
    expect(code, err, RACE)
    assert f"{fn}(1) = " in err
    # the same axis both ways: 0, never 5
    expect(*dump(tmp_path, capsys, pair(f"tl.{fn}(0) - tl.{fn}(axis=0)", "5")), "verified")


def test_axes_given_by_constexprs(tmp_path, capsys):
    """`tl.program_id(A) - tl.program_id(B)` of two constexpr axes: 5 at A = 0, B = 1 and
    program ids (5, 0). Before: verified (both one symbol), with DEFAULT_CONFIG's A = 0, B = 1
    too."""
    text = with_constexprs(pair("tl.program_id(A) - tl.program_id(B)", "5"), "A", "B")
    expect(*dump(tmp_path, capsys, text), RACE)
    config = '\nDEFAULT_CONFIG = {"constexprs": {"A": 0, "B": 1}}\n'
    code, err = dump(tmp_path, capsys, text + config)
    expect(code, err, RACE)
    assert "program_id(0) = 5, program_id(1) = 0" in err
    # one axis: 0 wherever it is
    code, err = dump(tmp_path, capsys, text, "--param", "A=1", "--param", "B=1")
    expect(code, err, "verified")


def test_a_program_id_is_below_its_count(tmp_path, capsys):
    """`pid - nprog` is in [-nprog, -1]: never 5 (before: refused, the witness a grid of one
    program with program id 6), and -1 at the last program."""
    expect(*dump(tmp_path, capsys, pair("tl.program_id(0) - tl.num_programs(0)", "5")),
           "verified")
    code, err = dump(tmp_path, capsys, pair("tl.program_id(0) - tl.num_programs(0) + 6", "5"))
    expect(code, err, RACE)


# ------------------------------------------------------------ signed beside unsigned

#: m is -1 at t = 0 (int32), u a uint32 3
MU = "u = (t * 0 + 3).to(tl.uint32)\nm = tl.minimum(t, 1) - 1"


def test_triton_compares_an_int32_beside_a_uint32_unsigned(tmp_path, monkeypatch):
    """The oracle: `m < u` is `arith.cmpi ult` (m converted to uint32: false at m = -1), and
    `u > -1` compares with the -1 made a uint32, never true: Triton folds the choice to 1."""
    ttir = _ttir(tmp_path, monkeypatch, MU + "\ntl.store(x_ptr + tl.where(m < u, 0, 5), 1.0)\n"
                 "tl.store(x_ptr + tl.where(u > -1, 0, 1), 2.0)", "r44_ult")
    assert "arith.cmpi ult" in ttir and "arith.cmpi slt" not in ttir
    assert "tt.addptr %x_ptr, %c1_i32" in ttir


CHOICES = {
    "tl.where": ("tl.store(y_ptr + tl.where(m < u, 0, 5), 1.0)", "5"),
    "an if's else": ("if m < u:\n    pass\nelse:\n    tl.store(y_ptr + 5, 1.0)", "5"),
    "a mask": ("tl.store(y_ptr + 5 + offs * 0, tl.zeros([64], tl.float32), mask=m >= u)", "5"),
    "a negative literal": ("tl.store(y_ptr + tl.where(u > -1, 0, 1), 1.0)", "1"),
}


@pytest.mark.parametrize("case", list(CHOICES))
def test_an_unsigned_comparison(tmp_path, capsys, case):
    """Each reaches y_ptr + 5 (+ 1) at t = 0, where `m < u` is false on the GPU. Before:
    verified (read as -1 < 3, true)."""
    stmt, reached = CHOICES[case]
    text = ring(after="\n        ".join((MU + "\n" + stmt).splitlines()),
                late=f"tl.store(y_ptr + {reached}, 2.0)")
    expect(*dump(tmp_path, capsys, text), RACE)


def test_an_unsigned_comparison_of_the_same_signedness(tmp_path, capsys):
    """Both operands uint32 (`m.to(tl.uint32) < u`): read exactly, as before (4294967295 < 3
    is false: y_ptr + 5 at t = 0); both int32 (`m < 3`): true, never y_ptr + 5."""
    text = pair("tl.where(m.to(tl.uint32) < u, 0, 5)", "5", before=MU)
    expect(*dump(tmp_path, capsys, text), RACE)
    expect(*dump(tmp_path, capsys, pair("tl.where(m < 3, 0, 5)", "5", before=MU)), "verified")


# ------------------------------------------------------------ a pointer minus an offset

MINUS = {
    # (the offset's binding, the store's pointer, the offset from y_ptr where Triton puts it)
    "a uint8 1": ("u = (t * 0 + 1).to(tl.uint8)", "y_ptr + 300 - u", 555),
    "an int8 -128": ("u = (t * 0 - 128).to(tl.int8)", "y_ptr + 300 - u", 172),
    "a uint32 1": ("u = (t * 0 + 1).to(tl.uint32)", "y_ptr + 5 - u", 4294967300),
    "the uint32 number 2 ** 31": ("pass", "y_ptr - 2147483648", 2147483648),
}


def test_triton_negates_the_offset_in_its_type(tmp_path, monkeypatch):
    """The oracle: `x_ptr + 300 - u` adds 300, then 255 (i64: the uint8 negation zero-extended),
    and `x_ptr + 300 - x` of an int8 -128 adds -128 (i8); `x_ptr - 2147483648` adds
    2147483648."""
    ttir = _ttir(tmp_path, monkeypatch,
                 "u = (t * 0 + 1).to(tl.uint8)\ntl.store(x_ptr + 300 - u, 1.0)\n"
                 "x = (t * 0 - 128).to(tl.int8)\ntl.store(x_ptr + 300 - x, 2.0)\n"
                 "tl.store(x_ptr - 2147483648, 3.0)", "r44_minus")
    assert "arith.constant 255 : i64" in ttir and "arith.constant -128 : i8" in ttir
    assert "arith.constant 2147483648 : i64" in ttir


@pytest.mark.parametrize("case", list(MINUS))
def test_a_pointer_minus_an_offset(tmp_path, capsys, case):
    """Before: verified (read as y_ptr + 299, + 428, + 4, - 2147483648)."""
    bind, pointer, at = MINUS[case]
    text = ring(after=f"{bind}\n        tl.store({pointer}, 1.0)",
                late=f"tl.store(y_ptr + {at}, 2.0)")
    expect(*dump(tmp_path, capsys, text), RACE)


def test_the_subtraction_triton_does_not_compute(tmp_path, capsys):
    """The address the plain subtraction gives is never reached: y_ptr + 299 of `300 - u`
    (uint8 1), y_ptr + 4 of `5 - u` (uint32 1); an int64 minus a uint8 is the difference
    (Triton promotes it to int64): y_ptr + 299, never + 555."""
    u8 = "u = (t * 0 + 1).to(tl.uint8)"
    expect(*dump(tmp_path, capsys, pair("300 - u", "299", before=u8)), "verified")
    u32 = "u = (t * 0 + 1).to(tl.uint32)"
    expect(*dump(tmp_path, capsys, pair("5 - u", "4", before=u32)), "verified")
    wide = "(t.to(tl.int64) * 0 + 300 - u)"
    expect(*dump(tmp_path, capsys, pair(wide, "555", before=u8)), "verified")
    expect(*dump(tmp_path, capsys, pair(wide, "299", before=u8)), RACE)


# ------------------------------------------------------------ tl.where's and tl.cdiv's numbers

#: a uint32 tile u, an int8 tile x8
TILES = "u = (t * 0 + 3).to(tl.uint32)\nx8 = (t * 0 + 3).to(tl.int8)"

#: (the choice, the words of Triton's refusal)
WHERE = {
    "a uint32 tile beside -1": ("tl.where(t > 0, u, -1)", "negative scalar"),
    "an int8 tile beside 300": ("tl.where(t > 0, x8, 300)", "Scalar 300 is out of range"),
    "an int32 beside 3000000000": ("tl.where(t > 0, t, 3000000000)",
                                   "Scalar 3000000000 is out of range"),
    "by keyword": ("tl.where(t > 0, x=u, y=-1)", "negative scalar"),
    # tl.cdiv(x, div) is Triton's jit function (x + (div - 1)) // div
    "tl.cdiv of an int8 tile by 300": ("tl.cdiv(x8, 300)", "Scalar 299 is out of range"),
    "tl.cdiv of a uint32 tile by -2": ("tl.cdiv(u, -2)", "negative scalar"),
    "tl.cdiv of an int32 by 3000000000": ("tl.cdiv(t, 3000000000)",
                                          "Scalar 2999999999 is out of range"),
}

#: round 38's ring's signature (the lowering types the arguments by it)
SIGNATURE = ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", '
             '"S": "i32"}}\n')


def where_store(choice: str) -> str:
    """The writer's statements: the tiles of :data:`TILES`, a store at ``y_ptr + choice``."""
    return "\n        ".join(TILES.splitlines()) + f"\n        tl.store(y_ptr + {choice}, 1.0)"


@pytest.mark.parametrize("case", list(WHERE))
def test_triton_refuses_a_number_outside_the_tiles_type_in_where(tmp_path, monkeypatch, case):
    """The oracle: semantic.where converts its two values as a binary operator's."""
    choice, words = WHERE[case]
    body = "".join(f"        {s}\n" for s in TILES.splitlines())
    source = TRITON_K + f"    for t in range(N):\n{body}        tl.store(x_ptr + {choice}, 1.0)\n"
    err = triton_compile_error(tmp_path, monkeypatch, source, f"r44_where{len(choice)}")
    assert err is not None
    # (a refusal inside the jit function tl.cdiv is the cause of the one at the call)
    texts = []
    while err is not None:
        texts.append(str(err))
        err = err.__cause__ or err.__context__
    assert any(words in t for t in texts), texts


@pytest.mark.parametrize("case", list(WHERE))
def test_a_number_outside_the_tiles_type_in_where(tmp_path, capsys, case):
    """Before: verified (and `--ttgir` refused the lowered Gluon with Triton's words)."""
    choice, words = WHERE[case]
    text = ring(after=where_store(choice))
    code, err = dump(tmp_path, capsys, text + SIGNATURE)
    expect(code, err, ("rejected", "[unsupported-expression]", words))


@pytest.mark.parametrize("choice", ["tl.where(t > 0, u, 1)", "tl.where(t > 0, x8, 100)",
                                    "tl.where(t > 0, 5, -1)", "tl.where(t > 0, t, -1)",
                                    "tl.cdiv(x8, 100)", "tl.cdiv(u, 2)", "tl.maximum(x8, 300)"])
def test_a_number_of_the_tiles_type_in_where(tmp_path, capsys, choice):
    """Numbers the tile's type holds (or two numbers: int32 tensors both) compile; so does
    `tl.maximum(x8, 300)` (Triton makes a tensor of the 300 first)."""
    text = ring(after=where_store(choice))
    expect(*dump(tmp_path, capsys, text + SIGNATURE), "verified")


#: a pointer loaded from a table in the kernel body, handed to both partitions: the writer
#: stores at `q - u` (u a uint8 1: Triton's q + 255), the reader at `q + AT`
TABLE = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(tab_ptr, N):
    q = tl.load(tab_ptr)
    kv = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, q, N)), (consume, (kv, q, N))], [4], [232])


def produce(kv, q, N):
    w = kv.writer()
    for t in range(N):
        s = w.acquire(t)
        tl.store(tle.gpu.local_ptr(s.a), tl.zeros([64], tl.float32))
        w.commit(t)
        u = (t * 0 + 1).to(tl.uint8)
        tl.store(q - u, 1.0)


def consume(kv, q, N):
    r = kv.reader()
    for t in range(N):
        res = r.wait(t)
        v = tl.load(tle.gpu.local_ptr(res.slot.a))
        r.release(t)
        tl.store(q + AT, 2.0)

DEFAULT_CONFIG = {"signature": {"tab_ptr": "**fp32", "N": "i32"}}
'''


def test_a_loaded_pointer_minus_an_offset(tmp_path, capsys):
    """A pointer read from a table (a value of unknown kind) minus a uint8 1 is `q + 255` too.
    Before: verified beside the reader's store at q + 255."""
    code, err = dump(tmp_path, capsys, TABLE.replace("AT", "255"))
    expect(code, err, RACE)


# ------------------------------------------------------------ atomics of narrow element types

#: (the store pointer's signature type, the atomic, the words of Triton's refusal)
ATOMICS = {
    "tl.atomic_add of int8": ("*i8", "tl.atomic_add(y_ptr + 4096 + t, 1)",
                              "atomic_add does not support int8"),
    "tl.atomic_xchg of int16": ("*i16", "tl.atomic_xchg(y_ptr + 4096 + t, 1)",
                                "atomic_xchg does not support int16"),
    "tl.atomic_max of uint8": ("*u8", "tl.atomic_max(y_ptr + 4096 + t, 1)",
                               "atomic_max does not support uint8"),
    "tl.atomic_max of fp16": ("*fp16", "tl.atomic_max(y_ptr + 4096 + t, 1.0)",
                              "atomic_max does not support fp16"),
    "tl.atomic_cas of int8": ("*i8", "tl.atomic_cas(y_ptr + 4096 + t, c8, c8)",
                              "atomic_cas only supports elements with width {16, 32, 64}"),
}

#: an int8 comparand and value (Triton's atomic_cas converts neither)
C8 = "c8 = (t * 0 + 1).to(tl.int8)"


def _chain(err) -> list[str]:
    """The messages of ``err`` and the errors it was raised from."""
    out = []
    while err is not None:
        out.append(str(err))
        err = err.__cause__ or err.__context__
    return out


@pytest.mark.parametrize("case", list(ATOMICS))
def test_triton_refuses_an_atomic_of_a_narrow_type(tmp_path, monkeypatch, case):
    """The oracle (semantic.atom_red_typechecking_impl, atomic_cas)."""
    pointee, atomic, words = ATOMICS[case]
    source = TRITON_K + f"    for t in range(N):\n        {C8}\n        " + \
        atomic.replace("y_ptr + 4096", "x_ptr") + "\n"
    err = triton_compile_error(tmp_path, monkeypatch, source, f"r44_atomic{len(case)}",
                               signature={"x_ptr": pointee, "N": "i32", "C": "constexpr"})
    assert err is not None and any(words in t for t in _chain(err))


@pytest.mark.parametrize("case", list(ATOMICS))
def test_an_atomic_of_a_narrow_type(tmp_path, capsys, case):
    """Before: verified, and `--ttgir` refused the lowered kernel with Triton's words."""
    pointee, atomic, words = ATOMICS[case]
    text = ring(after=f"{C8}\n        {atomic}") + SIGNATURE.replace('"y_ptr": "*fp32"',
                                                                   f'"y_ptr": "{pointee}"')
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, ("rejected", "[lowering]", words))


@pytest.mark.parametrize("pointee, atomic", [
    ("*i32", "tl.atomic_add(y_ptr + 4096 + t, 1)"),
    ("*fp16", "tl.atomic_add(y_ptr + 4096 + t, 1.0)"),
    ("*bf16", "tl.atomic_add(y_ptr + 4096 + t, 1.0)"),
    ("*i16", "tl.atomic_cas(y_ptr + 4096 + t, c16, c16)")])
def test_an_atomic_triton_compiles(tmp_path, capsys, pointee, atomic):
    """32-bit integers; fp16 and bf16 for add; a compare-and-swap of 16 bits."""
    text = ring(after=f"c16 = (t * 0 + 1).to(tl.int16)\n        {atomic}") + \
        SIGNATURE.replace('"y_ptr": "*fp32"', f'"y_ptr": "{pointee}"')
    expect(*dump(tmp_path, capsys, text), "verified")
