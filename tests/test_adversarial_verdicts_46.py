"""A forty-sixth adversarial round (adversarial round 46), on the memory-race side: numbers past
int32 in Python's arithmetic, the stride rule's columns and what it assumes, constexprs of no
value that the protocol reads, tensor descriptors' stores, comparisons the proof does not
compute, and a division of mixed signedness. Each case is a small kernel written to a file and
read by tle-dump's main(); where the case is about what Triton 3.6 does, a plain
``@triton.jit`` kernel is compiled for sm_90a on the CPU and its TTIR or refusal read.

Bugs found, one line each (before the fixes that came with this file):

- FIXED (false verified): arithmetic of numbers alone with one past int32 was typed by that
  number: `y_ptr + -2147483648` (Python's -2 ** 31, an int32 constant in Triton's TTIR) was read
  as the uint32 negation of 2147483648, `y_ptr + 2 ** 31`, and verified beside `y_ptr + (t -
  2147483647) - 1` and `y_ptr + -2147483647 - 1`, which reach it at t = 0; now typed by its
  value (race_kinds._python_value); `-2147483648` beside `2147483648` is proved apart, and
  round 45's witness for `y_ptr + C * 2 + 2` no longer says that int32 arithmetic wraps.
- FIXED (false verified): the stride rule took `(t + 1) * S - 1` (row t's last element, written
  as column -1 of row t + 1) apart from `t * S + offs`, `offs < 64`, which it meets at S = 64;
  the rule now holds only where z3 proves both columns not negative (global_races.
  _columns_from_zero: a row of S elements holds columns 0 to S - 1), the columns both addresses
  hold (a row's start) left out.
- FIXED (the assumption unseen): a verdict the stride rule proved said nothing of what it took
  of the launch (a stride at least the width of the columns beside it, rows that do not wrap);
  tle-dump now says it on stderr, in the text report (``# memory-race:``) and in the JSON
  report (``"assumed"``), naming the strides.
- FIXED (false verified): a constexpr of no value that the protocol reads (``if p < SCALE and
  p > SCALE - 1`` around a commit, never true of an integer SCALE, true at p = 2 of SCALE =
  2.5) was "verified for every value of SCALE (every integer SCALE)", exit 0, where the race
  proof (round 45) reads such a constexpr as a float; now bounded to the integers (exit 3),
  naming the constexpr (cli/kernel_checks.py check_float_constexprs), unless a value is given or the
  kernel proves it an integer.
- FIXED (false rejection, wrong words): a tensor descriptor's ``d.store(offsets, value)`` was
  read as ``tl.store(d, offsets, value)``, its value a mask ("its mask `v` is a float, not a
  bool"); now refused as what it is, a store the lowering does not translate (unlowered-call).
- FIXED (false rejection): complementary masks on one value loaded through an untyped or float
  pointer in the kernel body (``n > 0``, ``n <= 0``) were each a truth of its own; now the
  comparisons of one value with one number are related (at most one of less, equal, greater:
  race_terms._unread_compare), whatever the type.

- FIXED (false verified): a number beside an int1 was taken to keep the int1 type (as it does
  beside int8): `y_ptr + t.to(tl.int1) * 5` was read modulo 2 (0 or 1) and verified beside
  `y_ptr + 5`, where Triton zero-extends the int1 to int32 (`extui`, `muli`: 5 at t != 0);
  now an int32 (race_kinds._join).
- FIXED (false verified): a run-time argument no signature types was read as an integer by the
  race proof, though a launch may pass a Python float (Triton's JIT types it fp32):
  `(t * 2 * S).to(tl.int32)`, a mask or a `tl.where` on `t * 2 * S == 1` verified beside a
  store at `y_ptr + 5` (exit 0; S = 0.5 stores there at t = 5, t = 1); now read as a float
  unless the kernel proves it none (a loop bound, a pointer's offset:
  constexpr_kinds.integer_arguments), the refusal naming it. (A protocol that reads such an
  argument is verified for its integer values, as the verdict's domain says: "every integer
  S".)

Checked and found right (pinned): Triton 3.6 refuses ``t // u`` of an int32 and a uint32
("different signedness"), and the proof reads ``(t - 1) // n`` of a loaded n as any value.
Checked and found right (not pinned): C's truncating ``//`` and ``%`` of negative operands,
int1 sums and negations in an address, an atomic's old value as an offset, ``tl.where`` and a
conditional expression choosing pointers, a pointer cast (refused), ``tl.store`` by keyword, a
negative loop step, a run-time step (refused at 0), a helper that stores, a pointer carried
through a loop, int8 and int16 arithmetic that wraps, a uint32 division.
"""

from __future__ import annotations

import json

import pytest

from .adversarial_support import dump, expect, run_dump, write_kernel
from .test_adversarial_verdicts_44 import pair, with_constexprs

RACE = ("rejected", "[memory-race]", "can reach the same global address")


# ------------------------------------------------------------ numbers past int32

def test_triton_folds_a_negated_number(tmp_path, monkeypatch):
    """`x_ptr + -2147483648` and `x_ptr + -2147483647 - 1`: the int32 constant -2 ** 31."""
    from .adversarial_oracles import triton_ttir
    from .adversarial_support import triton_k

    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(
        "tl.store(x_ptr + -2147483648, 1.0)\ntl.store(x_ptr + -2147483647 - 1, 2.0)"), "r46n")
    assert "arith.constant -2147483648 : i32" in ttir
    assert "2147483648 : i64" not in ttir and "arith.constant 2147483648" not in ttir


@pytest.mark.parametrize("reader", ["(t - 2147483647) - 1", "-2147483647 - 1",
                                    "(2147483648 - 1) * -1 - 1"])
def test_a_negated_number_past_int32(tmp_path, capsys, reader):
    """Both at `y_ptr - 2 ** 31` (t = 0). Before: verified (the writer read at `+ 2 ** 31`)."""
    code, err = dump(tmp_path, capsys, pair("-2147483648", reader))
    expect(code, err, RACE)
    assert "`y_ptr` + -2147483648" in err and "wraps" not in err


def test_numbers_past_int32_apart(tmp_path, capsys):
    """`-2147483648` and `2147483648` (a uint32 number) are 2 ** 32 elements apart. Before:
    refused, both read at `+ 2 ** 31`."""
    expect(*dump(tmp_path, capsys, pair("-2147483648", "2147483648")), "verified")


def test_a_constexpr_sum_beside_a_negated_number(tmp_path, capsys):
    """Round 45's `y_ptr + C * 2 + 2` beside `y_ptr + -2147483648`: met at C = -1073741825,
    adding term by term with no wrap (before: "where int32 offset arithmetic wraps around",
    C = 1073741823 and the address `+ 2147483648`)."""
    code, err = dump(tmp_path, capsys, with_constexprs(pair("C * 2 + 2", "-2147483648"), "C"))
    expect(code, err, RACE)
    assert "`y_ptr` + -2147483648 (with C = -1073741825)" in err and "wraps" not in err


# ------------------------------------------------------------ the stride rule

def test_a_negative_column(tmp_path, capsys):
    """`(t + 1) * S - 1` is row t's last element: it meets `t * S + offs` (offs < 64) at S =
    64. Before: verified by the stride rule (rows t + 1 and t, columns -1 and offs)."""
    expect(*dump(tmp_path, capsys, pair("(t + 1) * S - 1", "t * S + offs")), RACE)
    # a column that may be negative by a loaded offset's sign likewise
    expect(*dump(tmp_path, capsys, pair("t * S - 64 + offs", "t * S + offs")), RACE)


NOTE = "global memory proved apart taking the rows of the stride argument S not to overlap"


def test_the_stride_rule_is_said(tmp_path, capsys):
    """Rows `t * S` with columns 0..63 and 64..127: verified, saying what it assumes of S."""
    text = pair("t * S + offs", "t * S + 64 + offs")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    assert NOTE in err and "a launch with a smaller stride" in err
    path = write_kernel(tmp_path, text)
    code, out, err = run_dump(capsys, str(path))
    assert code == 0 and f"# memory-race: {NOTE}" in out, out
    code, out, err = run_dump(capsys, "--format", "json", str(path))
    got = json.loads(out)["kernels"][0]
    assert code == 0 and NOTE in got["assumed"], out


def test_no_stride_rule_no_note(tmp_path, capsys):
    """Addresses apart by constants: nothing assumed, nothing said."""
    code, err = dump(tmp_path, capsys, pair("t * 0 + 6", "5"))
    expect(code, err, "verified")
    assert "proved apart taking the rows" not in err


# ------------------------------------------------------------ a constexpr the protocol reads

FLOAT_EVENTS = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, SCALE: tl.constexpr):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, SCALE)),
                             (consume, (kv, y_ptr, N, SCALE))], [4], [232])


def produce(kv, x_ptr, N, SCALE: tl.constexpr):
    w = kv.writer()
    HEADfor p in range(4):
        if p < SCALE and p > SCALE - 1:
            s = w.acquire(p)
            tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
            w.commit(p)


def consume(kv, y_ptr, N, SCALE: tl.constexpr):
    r = kv.reader()
    for p in range(0):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
'''


def test_triton_compares_a_float_constexpr(tmp_path, monkeypatch):
    """`p < C and p > C - 1` of C = 2.5: Triton compares in floats (true at p = 2: a commit
    no reader waits for), where no integer C makes it true."""
    from .test_adversarial_verdicts_45 import _compile

    got = _compile(tmp_path, monkeypatch, "    for p in range(4):\n"
                   "        if p < C and p > C - 1:\n            tl.store(x_ptr + p, 1.0)",
                   2.5, "r46f")
    assert not isinstance(got, Exception), got
    # (compared in floats, then canonicalised to integers: 1 < p <= 2)
    ttir = got.asm["ttir"]
    assert "arith.cmpi sle, %p, %c2_i32" in ttir and "arith.cmpi sgt, %p, %c1_i32" in ttir


def test_a_constexpr_of_no_value_in_an_event_condition(tmp_path, capsys):
    """Bounded to the integers (exit 3), naming SCALE. Before: "verified for every value of
    SCALE (every integer SCALE)", exit 0."""
    code, err = dump(tmp_path, capsys, FLOAT_EVENTS.replace("HEAD", ""))
    expect(code, err, ("bounded", "only for SCALE in the integers",
                       "SCALE: a constexpr of no value here, which the protocol reads and a "
                       "launch may give as a float"))


@pytest.mark.parametrize("how", ["--param", "config", "range"])
def test_a_constexpr_with_a_value_or_proved_an_integer(tmp_path, capsys, how):
    """Given a value (--param, DEFAULT_CONFIG) or used as a range bound: verified."""
    text = FLOAT_EVENTS.replace("HEAD", "for j in range(SCALE):\n        pass\n    "
                                if how == "range" else "")
    flags = ("--param", "SCALE=2") if how == "--param" else ()
    if how == "config":
        text += '\nDEFAULT_CONFIG = {"constexprs": {"SCALE": 2}}\n'
    expect(*dump(tmp_path, capsys, text, *flags), "verified")


# ------------------------------------------------------------ a descriptor's store

DESC = '''import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_desc, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_desc, N))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_desc, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        v = tl.load(tle.gpu.local_ptr(res.slot.tile))
        r.release(p)
        STORE

DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_desc": "tensordesc<fp32[64]>",
                                "N": "i32"}, "constexprs": {}}
'''


@pytest.mark.parametrize("store", ["y_desc.store([p * 64], v)", "y_desc.store((0,), v)",
                                   "y_desc.atomic_add([0], v)"])
def test_a_descriptor_store(tmp_path, capsys, store):
    """Refused as a descriptor's store the lowering does not translate. Before: "its mask `v`
    is a float, not a bool" (the value read as tl.store's mask)."""
    code, err = dump(tmp_path, capsys, DESC.replace("STORE", store))
    assert code == 1 and "a tensor descriptor's" in err and "[unlowered-call]" in err, err
    assert "its mask" not in err


# ------------------------------------------------------------ comparisons of one loaded value

def loaded_masks(wmask: str, rmask: str, pointer: str = "") -> str:
    """Round 44's pair, both storing at `y_ptr + 5` under ``wmask`` / ``rmask``, of `n` loaded
    in the kernel body through `n_ptr` (typed ``pointer`` by a signature, untyped without)."""
    text = pair("0", "5").replace("N, S)", "N, S, n)").replace(
        "def k(x_ptr, y_ptr, N, S, n)", "def k(x_ptr, y_ptr, N, S, n_ptr)").replace(
        "    kv = tle.pipe", "    n = tl.load(n_ptr)\n    kv = tle.pipe").replace(
        "tl.store(y_ptr + 0, 1.0)", f"tl.store(y_ptr + 5, 1.0, mask={wmask})").replace(
        "tl.store(y_ptr + 5, 2.0)", f"tl.store(y_ptr + 5, 2.0, mask={rmask})")
    if pointer:
        text += ('\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", '
                 f'"N": "i32", "S": "i32", "n_ptr": "{pointer}"}}}}\n')
    return text


@pytest.mark.parametrize("pointer", ["", "*fp32", "*fp16"])
@pytest.mark.parametrize("masks", [("n > 0", "n <= 0"), ("0 < n", "n <= 0"),
                                   ("n == 3", "n != 3")])
def test_complementary_masks_on_one_loaded_value(tmp_path, capsys, pointer, masks):
    """Never both true, of an integer of any width and signedness or of a float (NaN: both
    false). Before: refused (each comparison a truth of its own)."""
    expect(*dump(tmp_path, capsys, loaded_masks(*masks, pointer)), "verified")


@pytest.mark.parametrize("masks", [("n > 0", "n < -1"), ("n > 0", "n != 0"),
                                   ("n > 0", "n <= 0.0"), ("n.to(tl.int32) > 0", "n <= 0")])
def test_masks_that_may_both_hold(tmp_path, capsys, masks):
    """`n > 0` and `n < -1` both hold of a uint32 (`-1` its greatest value) and of no int32;
    `n != 0` beside `n > 0`; a float number, a cast: each read on its own."""
    expect(*dump(tmp_path, capsys, loaded_masks(*masks)), RACE)


def test_masks_on_two_loads(tmp_path, capsys):
    """Each partition loading n itself: two loads, which may read two values."""
    text = pair("0", "5").replace("N, S)", "N, S, n_ptr)").replace(
        "tl.store(y_ptr + 0, 1.0)", "n = tl.load(n_ptr)\n        "
        "tl.store(y_ptr + 5, 1.0, mask=n > 0)").replace(
        "tl.store(y_ptr + 5, 2.0)", "n = tl.load(n_ptr)\n        "
        "tl.store(y_ptr + 5, 2.0, mask=n <= 0)")
    expect(*dump(tmp_path, capsys, text), RACE)


# ------------------------------------------------------------ a division of mixed signedness

def test_triton_refuses_a_division_of_mixed_signedness(tmp_path, monkeypatch):
    from .adversarial_oracles import triton_compile_error
    from .adversarial_support import triton_k

    got = triton_compile_error(tmp_path, monkeypatch, triton_k(
        "u = (N * 0 + 3).to(tl.uint32)\nfor t in range(N):\n    tl.store(x_ptr + (t - 1) // u, "
        "1.0)"), "r46d")
    assert got is not None and "different signedness" in str(got)


def test_a_division_by_a_loaded_value(tmp_path, capsys):
    """`(t - 1) // n` of a loaded n: any value (5 among them)."""
    text = loaded_masks("t >= 0", "t >= 0").replace(
        "tl.store(y_ptr + 5, 1.0, mask=t >= 0)", "tl.store(y_ptr + (t - 1) // n, 1.0)")
    expect(*dump(tmp_path, capsys, text), RACE)


# ------------------------------------------------------------ an int1 beside a number

def test_triton_widens_an_int1_beside_a_number(tmp_path, monkeypatch):
    from .adversarial_oracles import triton_ttir
    from .adversarial_support import triton_k

    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(
        "for t in range(N):\n    tl.store(x_ptr + t.to(tl.int1) * 5, 1.0)"), "r46b")
    assert "arith.extui" in ttir and "i1 to i32" in ttir and "arith.muli" in ttir


@pytest.mark.parametrize("writer", ["t.to(tl.int1) * 5", "(t.to(tl.int1) + 4) * 1",
                                    "tl.full([1], t, tl.int1) * 5"])
def test_an_int1_beside_a_number(tmp_path, capsys, writer):
    """5 at t != 0. Before: verified (read modulo 2)."""
    expect(*dump(tmp_path, capsys, pair(writer, "5")), RACE)
    expect(*dump(tmp_path, capsys, pair(writer, "6")), "verified")


def test_triton_adds_a_bool_to_an_int1_in_int1(tmp_path, monkeypatch):
    from .adversarial_oracles import triton_ttir
    from .adversarial_support import triton_k

    ttir = triton_ttir(tmp_path, monkeypatch, triton_k(
        "for t in range(N):\n    tl.store(x_ptr + 5 + (t.to(tl.int1) + True), 1.0)"), "r46t")
    assert "arith.addi" in ttir and ": i1" in ttir.split("arith.addi", 1)[1].split("\n")[0]


@pytest.mark.parametrize("reader", ["5", "6"])
def test_an_int1_plus_a_bool(tmp_path, capsys, reader):
    """`t.to(tl.int1) + True` is an int1 sum (0 at t != 0, 1 at t = 0): `y_ptr + 5 + (...)`
    reaches 5 and 6 (a Python bool is an int1 beside a tensor, not a number made an int32)."""
    expect(*dump(tmp_path, capsys, pair("5 + (t.to(tl.int1) + True)", reader)), RACE)


# ------------------------------------------------------------ an untyped run-time argument

def test_triton_takes_a_float_argument(tmp_path, monkeypatch):
    """`(t * 2 * S).to(tl.int32)` of an fp32 S compiles (sitofp, fptosi); a pointer plus a
    float, or a loop bound of one, does not."""
    from .adversarial_oracles import _triton_compile, triton_compile_error

    head = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
            "def k(x_ptr, N, S, C: tl.constexpr):\n")
    sig = {"x_ptr": "*fp32", "N": "i32", "S": "fp32", "C": "constexpr"}
    got = _triton_compile(tmp_path, monkeypatch, head + "    for t in range(N):\n"
                          "        tl.store(x_ptr + (t * 2 * S).to(tl.int32), 1.0)\n", "r46s",
                          catch=False, signature=sig)
    assert "arith.sitofp" in got.asm["ttir"] and "arith.fptosi" in got.asm["ttir"]
    for body in ("    for t in range(N):\n        tl.store(x_ptr + t * S, 1.0)\n",
                 "    for t in range(S):\n        tl.store(x_ptr + t, 1.0)\n"):
        assert triton_compile_error(tmp_path, monkeypatch, head + body, "r46u",
                                    signature=sig) is not None


UNTYPED = "S: an argument no DEFAULT_CONFIG signature types, which a launch may pass as a float"


@pytest.mark.parametrize("writer", ["(t * 2 * S).to(tl.int32)",
                                    "tl.where(t * 2 * S == 1, 5, 0)"])
def test_an_untyped_argument_may_be_a_float(tmp_path, capsys, writer):
    """Stores at 5 with S = 0.5 (t = 5; t = 1). Before: verified, exit 0."""
    code, err = dump(tmp_path, capsys, pair(writer, "5"))
    expect(code, err, RACE)
    assert UNTYPED in err


def test_an_untyped_argument_in_a_mask(tmp_path, capsys):
    text = pair("0", "5").replace("tl.store(y_ptr + 0, 1.0)",
                                  "tl.store(y_ptr + 5, 1.0, mask=t * 2 * S == 1)")
    expect(*dump(tmp_path, capsys, text), RACE)


@pytest.mark.parametrize("how", [
    "tl.store(y_ptr + (t * 2 * S).to(tl.int32) + S * 0, 1.0)",  # S in a pointer's offset
    "u = tl.load(x_ptr + S)\n        tl.store(y_ptr + (t * 2 * S).to(tl.int32), 1.0)",
    "for j in range(S):\n            pass\n        tl.store(y_ptr + (t * 2 * S).to(tl.int32), 1.0)",
    "signature",
])
def test_an_argument_proved_no_float(tmp_path, capsys, how):
    """An integer S (a float would not compile there, or the signature says i32): `2 * t * S`
    is even, never 5."""
    if how == "signature":
        text = pair("(t * 2 * S).to(tl.int32)", "5") + (
            '\nDEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", '
            '"N": "i32", "S": "i32"}}\n')
    else:
        text = pair("0", "5").replace("tl.store(y_ptr + 0, 1.0)", how)
    expect(*dump(tmp_path, capsys, text), "verified")


def test_an_untyped_argument_in_an_event_condition(tmp_path, capsys):
    """The protocol reads SCALE, a run-time argument now: verified for its integer values, as
    the verdict's domain says ("every integer SCALE", docs/semantics.md), as before."""
    text = FLOAT_EVENTS.replace("HEAD", "").replace("SCALE: tl.constexpr", "SCALE")
    code, err = dump(tmp_path, capsys, text)
    expect(code, err, "verified")
    assert "(every integer SCALE)" in err


@pytest.mark.parametrize("use", ["for j in range((SCALE - 1000) // 8 + 200):\n        pass\n    ",
                                 "u = tl.load(x_ptr + SCALE * 0)\n    "])
def test_a_constexpr_proved_no_float_by_its_arithmetic(tmp_path, capsys, use):
    """A float SCALE makes a float loop bound or pointer offset, which Triton refuses: verified."""
    expect(*dump(tmp_path, capsys, FLOAT_EVENTS.replace("HEAD", use)), "verified")
