"""A seventeenth set of adversarial kernels, on integer and float operations the verifier reads
with Python's numbers where the lowered kernel (as Triton) computes in i32, uint32 or fp32:
shifts by 32 bits or more (or by a negative or unknown amount) of a name bound to a
compile-time number, compile-time integers outside i32 beside an i32 computed at run time
(which Triton refuses), names Triton holds as uint32 and comparisons it makes unsigned, i32
division overflow and `tl.cdiv`'s inner sum, comparisons Triton makes in fp32; then constructs
the earlier rounds did not pin: helpers holding pipe events called twice, in loops or under a
condition, recursion, `return` inside a loop, `tl.static_range` with negative, zero and constexpr
steps, `and` / `or` with a compile-time operand beside a run-time one (Triton's short circuit),
and events on a rare path only (an `if` on a param value far from the checked ones). Each kernel
is read by tle-dump and its verdict and exit code pinned (the check name of a rejection);
verified ones also have their generated Gluon's barrier operations checked against the verified
events (tests/adversarial_oracles.py lowering_problems), and what Triton computes (or refuses)
for the constructs at stake is checked on Triton itself.

Wrong before the fixes that came with this file (tle_compiler/frontend/local_tensors.py:
shift_out_of_i32, WalkRules.tensor_shift / tensor_overflow, refusal's "shift";
tle_compiler/frontend/protocol.py: Walker.scalar_out_of_range / run_time_i32 /
unsigned_reason / fp32_compare / tensor_unsigned / cdiv / compare, PrologueWalker.tensor_shift
/ tensor_unsigned / tensor_overflow / refuse_c_division / refuse_run_time_cond), each verified
with exit 0 and now refused (unsupported-expression, exit 1):
- verified, while the lowered kernel shifts an i32 by the width or more (undefined: Triton only
  warns "Value 40 exceeds the maximum bitwidth (32) for type 'int32'. This may result in
  undefined behavior", and emits `arith.shrsi` by 40, LLVM's poison; the compiled kernel
  computed 0 where Python's -1 >> 40 is -1): a kernel-body `M = -1`, then a writer looping `N +
  1 + (M >> 40)` times against a reader's N (the GPU's writer commits one tile nobody waits
  for); the same through `K = M >> 40`, an `if (M >> 40) < 0:` of the kernel body, `M << 32` of
  M = 0 (whose result 0 fits in i32, so round 16's overflow check let it pass), `N >> M` with M =
  40, and in a partition for `q = -1` bound twice (not folded: a tensor), directly or in a
  helper given q. Round 16 refused `+`, `-`, `*`, `<<` whose result leaves i32; a shift whose
  Python result fits was not looked at. Now refused (unsupported-expression) where it reaches
  run-time code, as round 16's overflow is; so is a shift of such a name by a constexpr
  (`M >> (C * 13)`: 39 bits at C = 3, which the verifier made a derived param computed with
  Python's shift; a conservative refusal where the constexpr keeps it in range).
- verified, while Triton (and the lowering's compile) refuses the kernel with "Scalar 4294967296
  is out of range for type int32": an i32 computed at run time (a kernel argument the
  DEFAULT_CONFIG types i32, a loop variable, an affine value of them) or a name bound to a
  compile-time number, beside a compile-time integer outside i32 in `+`, `-`, `*`, `//`, `%`,
  `&`, `|`, `^`, `<<`, `>>`: a writer looping `N + 4294967296 - 4294967296` times (the sum
  cancelled), `M & 4294967295` or `M | 2147483648` of M = -7 (a compile-time value to the
  verifier), `N - 2147483648 + 2147483648`, and a store offset `+ (N + 4294967296)` or `+ p *
  4294967296` (data the verdict does not read). Triton converts such a scalar to the tensor's
  type (semantic.binary_op_type_checking_impl); a comparison converts it to a tensor of its own
  type first, so `M == 4294967296` compiles and stays verified, as do a pointer plus such a
  scalar and an operand widened `.to(tl.int64)` first. A loop bound that keeps the constant
  (`range(N + 4294967296)`) keeps round 12's verdict (unknown: the i32 check of loop bounds).
- verified, while the lowered kernel computes unsigned: a name bound to an integer in [2**31,
  2**32) is a uint32 tensor in Triton (semantic.to_tensor), so `M = 3000000000`, then `N + ((M -
  3000000001) < 0)` is N on the GPU (the difference wraps to 4294967295), where the verifier
  read Python's N + 1 against a reader's N + 1; and a comparison of an i32 tensor name with such
  a constant is unsigned (`M < 3000000000` of M = -1 is false there). In the kernel body too
  (refused where it reaches run-time code) and for a partition's name bound twice.
- verified, while the lowered kernel's i32 arithmetic overflows: `M // -1` of M = -2147483648
  (Python's 2147483648 > 0; the GPU's `arith.divsi` overflows, undefined: Triton keeps it
  unfolded) and `tl.cdiv(M, -1)`, whose `M + (-1 - 1)` wraps in i32 before the division
  (Triton's cdiv is `(x + div - 1) // div`: 2147483646 // -1 < 0 on the GPU). Round 16's
  overflow check took `+`, `-`, `*`, `<<` and the unary `-`; now `//` and cdiv's sum too, in
  the kernel body and for a partition's name bound twice.
- verified, while Triton compares in fp32: a name bound to a float is an fp32 tensor, and an
  i32 one beside a float is converted to fp32, so `M = 16777217.0`, then `N + (M > 16777216)`
  (or `M = 16777217`, then `M > 16777216.5`) is N on the GPU (16777217 rounds to 16777216),
  where Python's doubles made it N + 1 against a reader's N + 1. Now refused where the fp32
  comparison differs from Python's (or the float operand is computed from such a name).
Their twins that the lowering computes as the verifier does (a constexpr-annotated name, a
literal, a value inside i32 or exact in fp32, a name passed whole to a partition, which the
Gluon holds as a constexpr of Python's value) stay verified. Conservative refusals pinned: a
shift by a constexpr amount that keeps it in range (`M >> (C * 13)` at C = 2).

Left open: an argument the file gives no DEFAULT_CONFIG type is not taken for an i32 by the
second check (it may be a pointer or a float, which take such scalars), so `N + 4294967296 -
4294967296` in a file without a signature is still verified; Triton refuses it at the launch's
compile, so no wrong kernel runs.
"""

from __future__ import annotations


import pytest

from .adversarial_oracles import lowers_to_its_events, triton_compile_error, triton_ttir
from .adversarial_support import run_dump, verdict, write_kernel
from .adversarial_support import triton_k as _k
from .test_adversarial_python_semantics import CONFIG, reader, ring, writer


def body(pre: str, warg: str = "N", rarg: str = "N", extra: str = "") -> str:
    """The ring of tests/test_adversarial_python_semantics.py with the kernel body ``pre``; the
    writer loops ``warg`` times, the reader ``rarg`` times."""
    return ring(warg=warg, rarg=rarg, kernel_pre=pre, extra=extra) + CONFIG


def _part_reader(expr: str, pre: str = "q = -1\nq = -1", extra: str = "") -> str:
    rbody = reader(f"for p in range({expr}):")
    rbody = "".join(f"    {line}\n" for line in pre.splitlines()) + rbody
    return ring(writer(), rbody, extra=extra) + CONFIG


_WNC = ("rejected", "[wait-never-committed]")
_UNC = ("rejected", "[unconsumed]")
_BODY_SHIFT = ("rejected", "[unsupported-expression]", "shifts the i32 by",
               "undefined there from 32 bits")

# ------------------------------------------ shifts by the width or more of kernel-body constants

BODY_SHIFTS = {
    # Python: -1 >> 40 is -1, the writer loops N; the GPU: undefined (0 there), N + 1 (a tile
    # nobody waits for)
    "N + 1 + (M >> 40) with M = -1": (body("M = -1\n", warg="N + 1 + (M >> 40)"),
                                      _BODY_SHIFT + ("by 40 bits", "`M >> 40`")),
    "N + 1 + (M >> 32) with M = -1": (body("M = -1\n", warg="N + 1 + (M >> 32)"), _BODY_SHIFT),
    # 0 << 32 is 0 in Python and fits in i32: round 16's overflow check let it pass
    "N + 1 + (M << 32) with M = 0": (body("M = 0\n", warg="N + 1 + (M << 32)", rarg="N + 1"),
                                     _BODY_SHIFT),
    "K = M >> 40, then N + 1 + K": (body("M = -1\nK = M >> 40\n", warg="N + 1 + K"),
                                    ("rejected", "[unsupported-expression]", "`K`, computed")),
    "if (M >> 40) < 0 around the trip count": (
        body("M = -1\nK = N + 1\nif (M >> 40) < 0:\n    K = N\n", warg="K"), _BODY_SHIFT),
    # the amount is the tensor: N >> 40 (was bounded, `only for N in {}`)
    "N + (N >> M) with M = 40": (body("M = 40\n", warg="N + (N >> M)"), _BODY_SHIFT),
    "N + (M >> -1) with M = 4": (body("M = 4\n", warg="N + 2 + (M >> -1)"),
                                 _BODY_SHIFT + ("by -1 bits",)),
    # a constexpr amount: 39 bits at C = 3, which the verifier made a derived param computed
    # with Python's shift (`M_C_13 = -1`)
    "N + 1 + (M >> (C * 13)) with M = -1": (
        body("M = -1\n", warg="N + 1 + (M >> (C * 13))"),
        ("rejected", "[unsupported-expression]", "a compile-time number the verifier does not "
                                                 "know to lie in [0, 31]")),
    # the twins the lowering computes as the verifier does
    "M >> 3 with M = -16": (body("M = -16\n", warg="N + 2 + (M >> 3)"), "verified"),
    "M: tl.constexpr = -1, then M >> 40": (
        body("M: tl.constexpr = -1\n", warg="N + 1 + (M >> 40)"), "verified"),
    "the literal -1 >> 40": (body("", warg="N + 1 + (-1 >> 40)"), "verified"),
    "(M << 31) >> 31 with M = 1": (body("M = 1\n", warg="N + 2 + ((M << 30) >> 30) - 3"),
                                   "verified"),
}


@pytest.mark.parametrize("name", list(BODY_SHIFTS))
def test_shifts_of_kernel_body_constants(tmp_path, capsys, name):
    text, expect = BODY_SHIFTS[name]
    path = verdict(tmp_path, capsys, text, expect, params=("C=3",))
    if expect == "verified":
        lowers_to_its_events(path)


def test_a_constexpr_shift_amount_in_range_is_refused_conservatively(tmp_path, capsys):
    """A conservative refusal: at C = 2 the shift is by 26 bits, defined (and Python's), but the
    reading keeps C a param and cannot tell; `M: tl.constexpr` is the way to write it."""
    verdict(tmp_path, capsys, body("M = -1\n", warg="N + 1 + (M >> (C * 13))"),
             ("rejected", "[unsupported-expression]", "`M >> C * 13`"), params=("C=2",))


_PART_SHIFT = ("rejected", "[unsupported-expression]", "outside [0, 31]",
               "undefined there from 32 bits on")

PARTITION_SHIFTS = {
    "q = -1 bound twice, N + 1 + (q >> 40)": (
        _part_reader("N + 1 + (q >> 40)"), _PART_SHIFT + ("`q` in `q >> 40`", "shifts by 40")),
    "q bound twice, shifted in a helper": (
        _part_reader("N + 1 + sh(q)", extra="\n\ndef sh(x):\n    return x >> 40\n"),
        _PART_SHIFT + ("`x >> 40`",)),
    "q = 0 bound twice, q << 32": (
        _part_reader("N + 1 + (q << 32) - 1", "q = 0\nq = 0"), _PART_SHIFT),
    "q >> (C * 13)": (_part_reader("N + 1 + (q >> (C * 13))"),
                      ("rejected", "[unsupported-expression]", "by `C * 13`")),
    # bound once: folded, it was read (and the Gluon shifted the constexpr -1) as Python's -1,
    # where Triton shifts the i32 tensor by 40 (undefined): refused as the names bound twice
    # are (local_tensors.BuildRules.folded_arithmetic)
    "q = -1 bound once": (_part_reader("N + 1 + (q >> 40) - 1", "q = -1"),
                          _PART_SHIFT + ("`q` in `q >> 40`", "by 40, outside [0, 31]")),
    "q = -1 bound once, the right count": (_part_reader("N + 1 + (q >> 40)", "q = -1"),
                                           _PART_SHIFT + ("by 40, outside [0, 31]",)),
    "q = -1 bound twice, q >> 31": (_part_reader("N + 1 + (q >> 31)"), "verified"),
}


@pytest.mark.parametrize("name", list(PARTITION_SHIFTS))
def test_shifts_of_partition_names(tmp_path, capsys, name):
    text, expect = PARTITION_SHIFTS[name]
    path = verdict(tmp_path, capsys, text, expect, params=("C=3",))
    if expect == "verified":
        lowers_to_its_events(path)


def _handed(pre: str, wloop: str) -> str:
    text = ring(writer(wloop), reader(), kernel_pre=pre)
    text = text.replace("(produce, (kv, x_ptr, N, C))", "(produce, (kv, x_ptr, N, M))")
    text = text.replace("def produce(kv, x_ptr, N, C: tl.constexpr):",
                        "def produce(kv, x_ptr, N, D):")
    return text + CONFIG


def test_a_constant_handed_whole_and_shifted_in_the_partition(tmp_path, capsys):
    """`M = -1` passed whole reaches the partition as a constexpr of Python's value in the Gluon
    (`D: gl.constexpr = -1`), where Triton's warp_specialize hands it the i32 tensor the plain
    assignment made, and `D >> 40` of it is an i32 shift by 40 (undefined): refused as the
    partition's own names are (local_tensors.BuildRules.folded_arithmetic, Frame.body_tensors).
    It was verified with Python's -1 before."""
    verdict(tmp_path, capsys, _handed("M = -1\n", "for p in range(N + 1 + (D >> 40)):"),
            _PART_SHIFT + ("`D` in `D >> 40`",), params=("C=3",))


@pytest.mark.parametrize("pre,bits", [("M = -1\nx = M >> 40", 40), ("M = 0\nx = M << 32", 32),
                                      ("q = -1\nq = -1\nx = (q >> 32) + 1", 32)])
def test_what_triton_does_with_a_shift_by_the_width(tmp_path, monkeypatch, pre, bits):
    """Triton keeps the shift of the i32 tensor by the constant (it does not fold Python's value;
    a compile that is not cached also warns "This may result in undefined behavior"): MLIR's
    arith shifts by the width or more are poison."""
    ttir = triton_ttir(tmp_path, monkeypatch, _k(pre + "\ntl.store(x_ptr + x, 1.0)"), "shift17")
    assert f"arith.constant {bits} : i32" in ttir and ("arith.shrsi" in ttir
                                                       or "arith.shli" in ttir), ttir


# --------------------------------------- compile-time integers outside i32 beside a run-time i32

_SCALAR = ("rejected", "[unsupported-expression]", "is out of range for type int32")


def _store_at(offset: str) -> str:
    return ring(writer(), reader().replace("tl.store(y_ptr + tl.arange(0, 64), t)",
                                           f"tl.store(y_ptr + tl.arange(0, 64) + {offset}, t)"))


SCALARS = {
    # the sum cancels to N for the verifier; Triton refuses the `+` (and the lowering's compile)
    "a writer looping N + 4294967296 - 4294967296": (
        body("", warg="N + 4294967296 - 4294967296"), _SCALAR + ("Scalar 4294967296",)),
    "N - 2147483648 + 2147483648": (body("", warg="N - 2147483648 + 2147483648"), _SCALAR),
    "M & 4294967295 with M = -7": (
        body("M = -7\n", warg="N + ((M & 4294967295) > M)", rarg="N + 1"),
        _SCALAR + ("a plain assignment binds to a compile-time number",)),
    "M | 2147483648 with M = 1": (
        body("M = 1\n", warg="N + ((M | 2147483648) > 0)", rarg="N + 1"), _SCALAR),
    "M &= 4294967295 (augmented)": (
        body("M = -7\nM &= 4294967295\n", warg="N + (M > 0)", rarg="N + 1"), _SCALAR),
    "q & 4294967295, q bound twice": (
        _part_reader("N + ((q & 4294967295) > q)", "q = -7\nq = -7"), _SCALAR),
    "an index p + 4294967296": (ring(writer(idx="p + 4294967296")) + CONFIG, _SCALAR),
    # data the verdict does not read: the kernel still does not compile
    "a store offset N + 4294967296": (_store_at("(N + 4294967296)") + CONFIG, _SCALAR),
    "a store offset p * 4294967296": (_store_at("p * 4294967296") + CONFIG, _SCALAR),
    # what Triton compiles: a comparison (the scalar becomes an i64 tensor), an operand widened
    # first, a pointer plus the scalar, a scalar inside i32
    "M == 4294967296 with M = 0": (body("M = 0\n", warg="N + (M == 4294967296)"), "verified"),
    "N.to(tl.int64) + 4294967296 - 4294967296": (
        body("", warg="(N.to(tl.int64) + 4294967296 - 4294967296).to(tl.int32)"), "verified"),
    "a pointer plus 4294967296 - 4294967296": (
        _store_at("0").replace("y_ptr + tl.arange(0, 64) + 0",
                               "y_ptr + 4294967296 - 4294967296 + tl.arange(0, 64)") + CONFIG,
        "verified"),
    "N + 2147483647 - 2147483647": (body("", warg="N + 2147483647 - 2147483647"), "verified"),
    # round 12's loop bound past i32 kept its verdict (unknown: the i32 check of the bound, no
    # claim) until lowering adversarial round 19: Triton 3.6 refuses the bound, and the
    # lowering, which types N, refuses it at its line in Triton's words
    "range(N + 4294967296)": (ring(writer("for p in range(N + 4294967296):")) + CONFIG,
                              ("rejected", "Scalar 4294967296 is out of range for type int32")),
}


@pytest.mark.parametrize("name", list(SCALARS))
def test_integers_outside_i32_beside_run_time_values(tmp_path, capsys, name):
    text, expect = SCALARS[name]
    path = verdict(tmp_path, capsys, text, expect)
    if expect == "verified" and "to(tl.int64)" not in name:
        lowers_to_its_events(path)


def test_without_a_signature_the_argument_is_not_taken_for_an_i32(tmp_path, capsys):
    """Left open (see the module docstring): without DEFAULT_CONFIG, N may be a pointer or a
    float, which take such a scalar; the verdict stands, Triton refuses it at the launch."""
    verdict(tmp_path, capsys, ring(warg="N + 4294967296 - 4294967296"), "verified")


@pytest.mark.parametrize("pre,refused", [
    ("x = N + 4294967296 - 4294967296", True),
    ("x = N - 2147483648 + 2147483648", True),
    ("M = -7\nx = ((M & 4294967295) > M).to(tl.int32)", True),
    ("M = 1\nx = ((M | 2147483648) > 0).to(tl.int32)", True),
    ("x = N * 4294967296", True),
    ("x = (N >> 4294967296)", True),
    ("x = (N % 4294967296)", True),
    ("M = 0\nx = (M == 4294967296).to(tl.int32)", False),
    ("x = (N < 4294967296).to(tl.int32)", False),
    ("x = (N.to(tl.int64) + 4294967296 - 4294967296)", False),
    ("x = N + 2147483647 - 2147483647", False),
])
def test_what_triton_does_with_a_scalar_outside_i32(tmp_path, monkeypatch, pre, refused):
    err = triton_compile_error(tmp_path, monkeypatch, _k(pre + "\ntl.store(x_ptr + x, 1.0)"),
                               "scalar17")
    if refused:
        assert err is not None and "out of range for type int32" in str(err), err
    else:
        assert err is None, err


def test_the_lowering_of_a_cancelled_sum_does_not_compile(tmp_path):
    """What the verdict used to claim: the Gluon lowered from the writer's `N + 4294967296 -
    4294967296` keeps the expression, and its compile for sm_90a fails with Triton's error (the
    partition argument is computed in the kernel's i32)."""
    pytest.importorskip("triton.experimental.gluon")
    from tle_compiler.diagnostics import TleError
    from tle_compiler.frontend import read_kernels
    from tle_compiler.lowering import compile_kernel

    path = write_kernel(tmp_path, ring(warg="N + 4294967296 - 4294967296"))  # no signature: read
    info = next(iter(read_kernels(str(path), name="k")))
    with pytest.raises(TleError, match="out of range for type int32"):
        compile_kernel(info, {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}, {"C": 3})


# --------------------------------------------- names Triton holds as uint32, unsigned comparisons

_U32 = ("rejected", "[unsupported-expression]", "uint32")

UNSIGNED = {
    # M = 3000000000 is a uint32 tensor: M - 3000000001 wraps to 4294967295, not < 0 (the GPU's
    # writer loops N against the reader's N + 1, a hang); Python's -1 < 0 verified it
    "M - 3000000001 < 0 with M = 3000000000": (
        body("M = 3000000000\n", warg="N + ((M - 3000000001) < 0)", rarg="N + 1"),
        _U32 + ("`M` is 3000000000 there",)),
    "(M - 3000000001) // 2 + 1 with M = 3000000000": (
        body("M = 3000000000\n", warg="N + 1 + (M - 3000000001) // 2"),
        ("rejected", "[unsupported-expression]")),
    # an i32 tensor against a constant Triton makes a uint32: -1 < 3000000000 is false there
    "M < 3000000000 with M = -1": (body("M = -1\n", warg="N + (M < 3000000000)", rarg="N + 1"),
                                   _U32 + ("compares the i32 tensor `M` with it unsigned",)),
    "an if on M < 3000000000": (
        body("M = -1\nK = N\nif M < 3000000000:\n    K = N + 1\n", warg="K", rarg="N + 1"),
        _U32),
    "q = 3000000000 bound twice in a partition": (
        _part_reader("N + ((q - 3000000001) < 0)", "q = 3000000000\nq = 3000000000"), _U32),
    # the twins: a constexpr (Python's integers in the Gluon), an i64 constant (signed), a
    # constant inside i32
    "M: tl.constexpr = 3000000000": (
        body("M: tl.constexpr = 3000000000\n", warg="N + ((M - 3000000001) < 0)",
             rarg="N + 1"), "verified"),
    "M < 4294967296 with M = -1": (body("M = -1\n", warg="N + (M < 4294967296)", rarg="N + 1"),
                                   "verified"),
    "M < 2147483647 with M = -1": (body("M = -1\n", warg="N + (M < 2147483647)", rarg="N + 1"),
                                   "verified"),
    "M - 4294967297 < 0 with M = 4294967296 (an i64)": (
        body("M = 4294967296\n", warg="N + ((M - 4294967297) < 0)", rarg="N + 1"), "verified"),
}


_PUT_IF = ("if COND:\n    slot = w.acquire(p)\n    tl.store(tle.gpu.local_ptr(slot.tile), "
           "tl.load(x_ptr + tl.arange(0, 64)))\n    w.commit(p)\n")


@pytest.mark.parametrize("pre,expect", [
    # q bound twice: an i32 tensor, -1 < 3000000000 false on the GPU: no commit (a hang)
    ("q = -1\nq = -1\n", _U32 + ("`q < 3000000000`",)),
    # bound once: folded, it was read (and the Gluon compared the constexpr -1) as Python's
    # True; Triton compares the i32 tensor, with 3000000000 wrapped into i32 (False: no commit,
    # a hang): refused since local_tensors.BuildRules.folded_arithmetic
    ("q = -1\n", ("rejected", "[unsupported-expression]", "`q` in `q < 3000000000`",
                  "as False")),
])
def test_an_unsigned_comparison_around_a_partitions_events(tmp_path, capsys, pre, expect):
    text = ring(writer(pre=pre, body=_PUT_IF.replace("COND", "q < 3000000000"))) + CONFIG
    path = verdict(tmp_path, capsys, text, expect)
    if expect == "verified":
        lowers_to_its_events(path)


@pytest.mark.parametrize("name", list(UNSIGNED))
def test_unsigned_tensors_and_comparisons(tmp_path, capsys, name):
    text, expect = UNSIGNED[name]
    path = verdict(tmp_path, capsys, text, expect, params=("C=3",))
    if expect == "verified" and "4294967296" not in name:
        lowers_to_its_events(path)


def test_a_uint32_constant_handed_whole(tmp_path, capsys):
    """`M = 3000000000` passed whole is a constexpr of Python's value in the Gluon, so the
    partition's `D - 3000000001 < 0` was Python's True there and in the verdict; Triton hands the
    partition the u32 tensor the assignment made, whose difference wraps (False: one tile fewer
    than the reader waits). Refused since local_tensors.BuildRules.folded_arithmetic follows a
    kernel-body name into the partition (Frame.body_tensors)."""
    text = ring(writer("for p in range(N + ((D - 3000000001) < 0)):"),
                reader("for p in range(N + 1):"), kernel_pre="M = 3000000000\n")
    text = text.replace("(produce, (kv, x_ptr, N, C))", "(produce, (kv, x_ptr, N, M))")
    text = text.replace("def produce(kv, x_ptr, N, C: tl.constexpr):",
                        "def produce(kv, x_ptr, N, D):")
    verdict(tmp_path, capsys, text + CONFIG,
            ("rejected", "[unsupported-expression]", "`D` in `D - 3000000001`", "uint32"))


@pytest.mark.parametrize("pre,true", [
    ("M = 3000000000\nx = ((M - 3000000001) < 0).to(tl.int32)", False),
    ("M = -1\nx = (M < 3000000000).to(tl.int32)", False),
    ("M = -1\nx = (M < 4294967296).to(tl.int32)", True),
    ("M = 4294967296\nx = ((M - 4294967297) < 0).to(tl.int32)", True),
])
def test_what_triton_computes_for_uint32_constants(tmp_path, monkeypatch, pre, true):
    """The comparison folds to a constant: the store's offset is 1 (an addptr) exactly when it
    holds on the GPU."""
    ttir = triton_ttir(tmp_path, monkeypatch, _k(pre + "\ntl.store(x_ptr + x, 1.0)"), "u32_17")
    assert ("tt.addptr" in ttir) == true, ttir


# ------------------------------------------------------ helpers, loops and paths around events

_H_PUT = """

def put(w, x_ptr, p, n):
    if p < n:
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)
"""
_H_MANY = """

def put_many(w, x_ptr, lo, hi):
    for p in range(lo, hi):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)
"""
_H_REC = """

def rec(w, x_ptr, p, n):
    if p < n:
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)
        rec(w, x_ptr, p + 1, n)
"""
_H_TAKE = """

def take(r, y_ptr, p, LAST: tl.constexpr = False):
    res = r.wait(p)
    t = tl.load(tle.gpu.local_ptr(res.slot.tile))
    if not LAST:
        r.release(p)
    tl.store(y_ptr + tl.arange(0, 64), t)
"""
_PUT = ("slot = w.acquire(p)\ntl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + "
        "tl.arange(0, 64)))\nw.commit(p)\n")

AROUND_EVENTS = {
    # a helper whose events run under its own condition on a param
    "a helper committing p < N": (ring(writer(body="put(w, x_ptr, p, N)\n"), extra=_H_PUT),
                                  "verified"),
    "a helper committing p < N - 1": (ring(writer(body="put(w, x_ptr, p, N - 1)\n"),
                                           extra=_H_PUT), _WNC),
    # the same helper twice per iteration (indices 2p, 2p + 1): not in the cutoff fragment
    "a helper called twice, one short": (
        ring(writer(body="put(w, x_ptr, 2 * p, 2 * N)\nput(w, x_ptr, 2 * p + 1, 2 * N - 1)\n"),
             reader("for p in range(2 * N):"), extra=_H_PUT), _WNC),
    "a helper called twice": (
        ring(writer(body="put(w, x_ptr, 2 * p, 2 * N)\nput(w, x_ptr, 2 * p + 1, 2 * N)\n"),
             reader("for p in range(2 * N):"), extra=_H_PUT), ("bounded",)),
    # a helper holding a loop, called for two ranges that overlap by one index
    "a looping helper over overlapping ranges": (
        ring("    put_many(w, x_ptr, 0, 2)\n    put_many(w, x_ptr, 1, N)\n", extra=_H_MANY),
        ("rejected", "[order-mismatch]")),
    "recursion": (ring("    rec(w, x_ptr, 0, 3)\n", reader("for p in range(3):"), extra=_H_REC),
                  ("rejected", "[recursion]")),
    # the release skipped by a constexpr keyword: a release missing, or reads past the window
    "a helper skipping its release (LAST=C > 2)": (
        ring(writer(), "    for p in range(N):\n        take(r, y_ptr, p, LAST=C > 2)\n",
             extra=_H_TAKE), ("rejected", "[missing-release]")),
    "a helper skipping its release (data LAST)": (
        ring(writer(), "    for p in range(N):\n        take(r, y_ptr, p, p == N)\n",
             extra=_H_TAKE), ("rejected", "[non-affine-if]")),
    # `return` inside a loop: Triton refuses it
    "return in the writer's loop": (
        ring(writer(body=_PUT + "if p == N - 1:\n    return\n")),
        ("rejected", "[unsupported-control-flow]", "`return` inside a loop")),
    "return after a release": (
        ring(writer(), reader().replace("        r.release(p)\n", "        r.release(p)\n"
                                        "        if p == 2:\n            return\n")),
        ("rejected", "[unsupported-control-flow]")),
    # (round FR20: read as an if / else, the writer skipping every commit the reader waits)
    "an early return before the events": (ring(writer(pre="if N > 3:\n    return\n")),
                                          ("rejected", "[wait-never-committed]", "when N=4")),
    # static_range steps
    "static_range(3, -1, -1)": (ring(writer("for p in tl.static_range(3, -1, -1):"),
                                     reader("for p in range(4):")),
                                ("rejected", "[order-mismatch]")),
    "static_range step C - 3 (zero)": (ring(writer("for p in tl.static_range(0, 4, C - 3):"),
                                            reader("for p in range(4):")),
                                       ("rejected", "[bad-loop]", "got 0")),
    "range step C - 3 (zero)": (ring(writer("for p in range(0, N, C - 3):")),
                                ("rejected", "[bad-loop]")),
    "static_range(4, 0)": (ring(writer("for p in tl.static_range(4, 0):"),
                                reader("for p in range(0):")), "verified"),
    # Triton's short circuit: `N or 5` is 5 (the constexpr decides), as the verifier reads it
    "N or 5 against 5": (ring(warg="5", rarg="(N or 5)"), "verified"),
    "N or 5 against N": (ring(rarg="(N or 5)"), _WNC),
    # events on a rare path: a commit more at N = 1000, a release more, an acquire left open
    "a second commit at N == 1000": (ring(writer(body=_PUT + "if N == 1000:\n    w.commit(p)\n")),
                                     ("rejected", "[commit-without-acquire]", "N=1000")),
    "a second release at N == 1000": (
        ring(writer(), reader().replace("        r.release(p)\n", "        r.release(p)\n"
                                        "        if N == 1000:\n            r.release(p)\n")),
        ("rejected", "[release-without-wait]", "N=1000")),
    "no commit at the last index when N >= 500": (
        ring(writer(body=_PUT.replace("w.commit(p)\n", "if (p != N - 1) | (N < 500):\n"
                                                        "    w.commit(p)\n"))),
        ("rejected", "[uncommitted-acquire]", "N=500")),
}


@pytest.mark.parametrize("name", list(AROUND_EVENTS))
def test_helpers_loops_and_paths_around_events(tmp_path, capsys, name):
    text, expect = AROUND_EVENTS[name]
    path = verdict(tmp_path, capsys, text + CONFIG, expect, params=("C=3",))
    if expect == "verified":
        lowers_to_its_events(path)


# --------------------------------------------------- i32 division overflow and tl.cdiv's sum

_MIN = "M = -2147483648\n"

DIVISION_OVERFLOW = {
    "N + (M // -1 > 0) with M = -2**31": (
        body(_MIN, warg="N + (M // -1 > 0)", rarg="N + 1"),
        ("rejected", "[unsupported-expression]", "the i32 division overflows")),
    "N + (tl.cdiv(M, -1) > 0) with M = -2**31": (
        body(_MIN, warg="N + (tl.cdiv(M, -1) > 0)", rarg="N + 1"),
        ("rejected", "[unsupported-expression]", "adds `div - 1` first")),
    "q // -1, q bound twice": (
        _part_reader("N + (q // -1 > 0) - 1", "q = -2147483648\nq = -2147483648"),
        ("rejected", "[unsupported-expression]", "`q` in `q // -1`", "2147483648")),
    "tl.cdiv(q, -1), q bound twice": (
        _part_reader("N + (tl.cdiv(q, -1) > 0) - 1", "q = -2147483648\nq = -2147483648"),
        ("rejected", "[unsupported-expression]", "`tl.cdiv(q, -1)`", "-2147483650")),
    # the twins: C's and Python's agree inside i32; M % -1 is 0 in both (Triton folds it)
    "M // -1 with M = -2**31 + 1": (body("M = -2147483647\n", warg="N + (M // -1 > 0)",
                                         rarg="N + 1"), "verified"),
    "M % -1 with M = -2**31": (body(_MIN, warg="N + 1 + M % -1", rarg="N + 1"), "verified"),
    "tl.cdiv(M, 1) with M = -2**31": (body(_MIN, warg="N + (tl.cdiv(M, 1) < 0)", rarg="N + 1"),
                                      "verified"),
}


@pytest.mark.parametrize("name", list(DIVISION_OVERFLOW))
def test_division_overflow_of_compile_time_names(tmp_path, capsys, name):
    text, expect = DIVISION_OVERFLOW[name]
    path = verdict(tmp_path, capsys, text, expect, params=("C=3",))
    if expect == "verified":
        lowers_to_its_events(path)


@pytest.mark.parametrize("pre,kept", [
    ("M = -2147483648\nx = ((M // -1) > 0).to(tl.int32)", True),
    ("M = -2147483648\nx = (tl.cdiv(M, -1) > 0).to(tl.int32)", False),
])
def test_what_triton_computes_for_division_overflow(tmp_path, monkeypatch, pre, kept):
    """`M // -1` stays an `arith.divsi` of the i32 minimum by -1 (undefined; no fold to Python's
    value); the cdiv's wrapped sum folds to a comparison that is false (no addptr)."""
    ttir = triton_ttir(tmp_path, monkeypatch, _k(pre + "\ntl.store(x_ptr + x, 1.0)"), "div17")
    if kept:
        assert "arith.divsi" in ttir and "-2147483648 : i32" in ttir, ttir
    else:
        assert "tt.addptr" not in ttir, ttir


# ------------------------------------------------------ comparisons Triton computes in fp32

_FP32 = ("rejected", "[unsupported-expression]", "fp32")

FP32_COMPARISONS = {
    "M > 16777216 with M = 16777217.0": (
        body("M = 16777217.0\n", warg="N + (M > 16777216)", rarg="N + 1"), _FP32),
    "M > 16777216.5 with M = 16777217": (
        body("M = 16777217\n", warg="N + (M > 16777216.5)", rarg="N + 1"), _FP32),
    "an if on M > 16777216": (
        body("M = 16777217.0\nK = N\nif M > 16777216:\n    K = N + 1\n", warg="K",
             rarg="N + 1"), _FP32),
    "q = 16777217.0 bound twice in a partition": (
        _part_reader("N + (q > 16777216) - 1", "q = 16777217.0\nq = 16777217.0"),
        _FP32 + ("`q > 16777216`", "16777216.0")),
    # the twins: exact in fp32, or constexprs (Python's doubles in the Gluon too)
    "M > 2 with M = 2.5": (body("M = 2.5\n", warg="N + (M > 2)", rarg="N + 1"), "verified"),
    "M > 2.5 with M = 3": (body("M = 3\n", warg="N + (M > 2.5)", rarg="N + 1"), "verified"),
    "M: tl.constexpr = 16777217.0": (
        body("M: tl.constexpr = 16777217.0\n", warg="N + (M > 16777216)", rarg="N + 1"),
        "verified"),
    "the literal 16777217.0 > 16777216": (body("", warg="N + (16777217.0 > 16777216)",
                                               rarg="N + 1"), "verified"),
}


@pytest.mark.parametrize("name", list(FP32_COMPARISONS))
def test_comparisons_triton_computes_in_fp32(tmp_path, capsys, name):
    text, expect = FP32_COMPARISONS[name]
    path = verdict(tmp_path, capsys, text, expect, params=("C=3",))
    if expect == "verified":
        lowers_to_its_events(path)


@pytest.mark.parametrize("pre,true", [
    ("M = 16777217.0\nx = (M > 16777216).to(tl.int32)", False),
    ("M = 16777217\nx = (M > 16777216.5).to(tl.int32)", False),
    ("M = 2.5\nx = (M > 2).to(tl.int32)", True),
    ("M: tl.constexpr = 16777217.0\nx = (M > 16777216) + 0 * N", True),
])
def test_what_triton_computes_for_fp32_comparisons(tmp_path, monkeypatch, pre, true):
    ttir = triton_ttir(tmp_path, monkeypatch, _k(pre + "\ntl.store(x_ptr + x, 1.0)"), "fp32_17")
    assert ("tt.addptr" in ttir) == true, ttir
