"""What is verified is what is lowered, lowering adversarial round 17 (round 57 overall): integer
corners of index arithmetic, pointers, masks, atomics, prints, hints and the kernel body before
warp_specialize, the Gluon read against plain Triton 3.6 for the same code.

Tried (round 13's harness: each a statement ``S`` in the reader of round 5's template, ``t`` the
[32, 64] tile loaded from the slot; the lowered Gluon compiled for sm_90a on the CPU and the same
``S`` in a plain Triton 3.6 kernel compiled alike, the operations of each TTGIR compared once
those of a store of ``t`` are taken away, and the splatted constants, which the operation
counts leave out (test_folded_constants_are_tritons); for scalar code the scalar operations
compared too; for the kernel body the same statements before warp_specialize, their result
handed to the reader): i32 / i64 / uint32 / uint8 index arithmetic past 2^31 (``offs * stride`` widened and
not, ``<<`` by 32, 33, 40 and a run-time amount, ``>>`` by -1, uint32 ``//`` / ``%`` / unary
``-``, uint32 compared with -1 and with 3000000000), pointer offsets of int8 / uint8 / int16 /
uint32 / uint64 / bool tiles and scalars, ``ptr - u8`` (Triton negates in 8 bits and widens
unsigned: the same operations), ``tl.where`` of pointers (tile and scalar conditions); masks of
other shapes (``[32, 1]``, ``[64]``, a scalar) and of no booleans, ``other=`` of another dtype,
out of range (300 into int8, 2**40, NaN, inf into fp16) and a run-time scalar; stores of fp32
into int8 / uint8 / i1 / fp8e5 / fp16 / bf16 / i64 / u32 pointers; scalar loads with masks and
others; atomics ``add`` / ``max`` / ``xchg`` / ``cas`` / ``min`` with ``sem`` / ``scope`` and
their old values, in partitions and in the kernel body; ``tl.device_print`` (``hex``) /
``tl.static_print`` there too; ``tl.multiple_of`` / ``tl.max_contiguous`` / ``tl.max_constancy``
of tiles and scalars; ``tl.program_id`` / ``tl.num_programs`` of each axis (3 and -1 refused as
Triton refuses them); ``tl.arange`` of non-powers of two, negative, reversed and huge bounds;
``tl.full`` / ``tl.zeros_like`` / ``tl.cast(bitcast=True)`` between widths; fp8 casts with
``fp_downcast_rounding``; bools as operands of ``+ - * // / << -``; chained comparisons and
``and`` / ``or`` of tiles; ``**`` of tiles, scalars and numbers; ``abs`` (Python's, refused
as Triton refuses it) and ``tl.abs`` of int8; float ``%`` / ``//``; ``tl.math`` functions;
``tl.extra.cuda.libdevice.rsqrt``; tuple concatenation, slicing and negative indices; helpers
rebinding their parameters, shadowing the caller's names, with defaults and tuples; augmented
assignments; loops over uint8 / int8 / int1 / int64 / uint32 bounds, ``while`` loops,
``tl.static_range`` past 2^31; loop-carried scalars changing type; plain names bound to
numbers outside i32 beside run-time i32s.

Wrong and fixed:
* test_an_arange_bound_in_the_upper_half_of_u32_is_refused_at_its_line: ``tl.arange(2**31 -
  64, 2**31)`` (``tl.arange(2147483584, 2147483648)``): Triton 3.6's check shifts each bound by
  32 bits, so a bound in [2^31, 2^32) passes it, and its builder (``create_make_range``, two
  i32s) refuses it ("incompatible function arguments"); tle-dump verified the kernel, and in
  the kernel body, unused, the lowered kernel even compiled. Refused at the line
  (frontend/triton_rules.py ``block_shape_rule``).
* test_a_bound_or_shape_written_as_arithmetic_is_checked_as_triton_checks_it: ``tl.arange(
  -2**31 - 64, -2**31)``, ``t + tl.arange(2**4, 2**5)[None, :]``, ``t + tl.zeros([32, 2**4],
  tl.int32)``: Triton computes ``2**4`` on constexprs and checks the bound or the shape at its
  value; the reading checked literals only, so it verified them and the compile failed in
  Triton's code generator. The rules now read arithmetic of literal integers as Python does
  (triton_rules.py ``literal_expr_int``, in ``block_shape_rule`` and ``block_dims``).
* test_a_broadcast_to_is_checked_beside_the_operands_it_meets: ``t + tl.broadcast_to(r, (16,
  64))`` of a [32, 64] ``t``: the reading did not follow broadcast_to's shape, verified the sum
  Triton refuses ("Cannot make_shape_compatible"), and the compile failed (triton_rules.py
  ``block_dims``: the shape it is given, as reshape's).
* test_a_shape_given_as_a_name_a_plain_assignment_bound_is_refused_at_its_line: ``s =
  t.shape`` (or ``s = (32, 64)``) then ``tl.zeros(s, tl.int32)`` / ``tl.full(s, ...)`` /
  ``tl.reshape(t, s)`` / ``tl.broadcast_to(t, s)`` (``tl.reshape(t, 32, a)`` of ``a = 64``):
  Triton 3.6's visit_Assign makes each item of the tuple a tensor, and a shape takes
  constexprs ("Shape element 0 must have type `constexpr[int]`"); the reading folded the name,
  and the lowered kernel compiled. Refused at the line as a local tensor where a constexpr is
  required, for every shape operand of those calls (frontend/build_calls.py, the builder's
  ``constexpr_operands`` of a call; tl.zeros / tl.full's literal lists were checked before).
* test_a_pointer_tensor_in_a_comparison_or_arithmetic_is_refused_at_its_line: ``(y_ptr +
  offs) < (y_ptr + 5)``, ``y_ptr + offs > 0``, ``(y_ptr + offs) - y_ptr``, ``q * 2`` of ``q =
  y_ptr + offs``: Triton 3.6 takes a pointer only in ``ptr + int``, ``int + ptr`` and ``ptr -
  int`` ("invalid operands of type pointer"); the reading refused a pointer argument there but
  not a pointer tensor whose offsets' kind it does not follow, verified it, and the compile
  failed. A pointer plus anything is now a pointer (or an operation Triton refuses) for these
  rules (frontend/triton_rules.py ``surely_pointer``, ``operand_kind_rule``;
  walk_conditions.py ``_e_Compare``).
* test_a_name_bound_to_a_number_outside_i32_is_refused_in_true_words: ``x = 2**31`` then ``M +
  x`` (``x = 2**63 - 1``, ``x = 2**40`` with ``*``, ``//``, ``&``, ``tl.where``) was refused
  saying that Triton refuses the scalar, which it does not: a plain assignment makes a tensor
  of the number (uint32, int64 or uint64 by range), and Triton computes in the promoted type.
  The refusal stays (the verifier reads Python's integers, the GPU wraps), in true words
  (frontend/walk_arithmetic.py ``scalar_out_of_range``); a literal or a ``tl.constexpr`` name
  keeps Triton's own refusal.

Held (the same operations, types and attributes as Triton, or refused as Triton refuses them):
the rest of the probes above. ``ptr + offs + u32`` and ``ptr + offs - u8`` widen (and negate)
the splatted offset where Triton's canonicalizer does it on the scalar first: the same values.
``tl.load(..., other=M)`` of an int8 pointer truncates the splatted other (round 14's held
form). The whole reduction of a 1-D tensor reduces it where Triton reshapes it to the same
shape first.

Left open (refused at the line, as before): an item of a name bound to a shape (``s =
t.shape`` then ``s[0]``; test_an_item_of_a_name_bound_to_a_shape_stays_refused_at_its_line):
read as data, as ``t.shape[0]`` is, it lowered, and the lowering reads the item as a Python
number where Triton holds an i32 tensor (``s[0] // -3`` was -11 for Triton's -10, a product
past i32 failed to compile), so the refusal stays until the lowering spells such an item as
a tensor; tuple concatenation and slicing (``(1, 2) + (3,)``, ``a[1:]``), ``tl.cumsum`` /
``tl.clamp`` / ``tl.extra.cuda.libdevice`` functions,
``tl.range``'s ``num_stages``, ``c = -7; c // 2`` (documented), a helper returning a number
outside i32 added to a run-time i32 (``M + h()``: Triton makes a tensor of the returned
number, the reading inlines the literal and refuses it in Triton's words for a literal), and a
name bound to a number outside i32 beside a run-time i32 (above: refused, the verifier reads
Python's integers).
"""

from __future__ import annotations

import re

import pytest

from tle_compiler.diagnostics import TleVerificationWarning  # noqa: E402

from tests.test_lowering_adversarial_5 import REG, _dump, _write  # noqa: E402
from tests.test_lowering_adversarial_13 import (S, _plain, _plain_refuses,  # noqa: E402
                                                _refused_at_line, _same_as_triton, _tle)

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")


# ------------------------------------------------------------------ arange bounds past i32

@pytest.mark.parametrize("arange", ["tl.arange(2**31 - 64, 2**31)",
                                    "tl.arange(2147483584, 2147483648)",
                                    "tl.arange(2**31, 2**31 + 64)"])
def test_an_arange_bound_in_the_upper_half_of_u32_is_refused_at_its_line(tmp_path, arange):
    """Triton's own check lets a bound in [2^31, 2^32) through and its builder refuses it: the
    reading refuses it at the line (tle-dump had verified it)."""
    body = S % f"t + {arange}[None, :]"
    _plain_refuses(tmp_path, body, "int32", "incompatible function arguments")
    _refused_at_line(tmp_path, body, "int32", "create_make_range(): incompatible function")


def test_an_unused_arange_of_the_kernel_body_past_i32_is_refused(tmp_path):
    """An unused ``x = tl.arange(2**31 - 64, 2**31)`` before warp_specialize: plain Triton
    refuses the kernel; the lowered kernel compiled (and tle-dump verified it)."""
    text = REG.replace("    tle.assume(N >= 0)\n", "    tle.assume(N >= 0)\n"
                       "    x = tl.arange(2**31 - 64, 2**31)\n", 1)
    text = text.replace("tl.FDT", "tl.int32").replace("XS", "i32").replace("YS", "i32")
    text = text.replace("CONSUME", "        tl.store(y_ptr + p * 2048 + offs, t)")
    path = _write(tmp_path, text)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "x = tl.arange" in s)
    rc, out = _dump(path, "-q")
    assert rc == 1 and f"kernel.py:{line}: error" in out, out
    assert "create_make_range(): incompatible function arguments" in out, out


# ------------------------------------------------------------------ shapes as arithmetic

@pytest.mark.parametrize("body, theirs, ours", [
    (S % "t + tl.arange(-2**31 - 64, -2**31)[None, :]", "arange must fit in int32",
     "arange must fit in int32"),
    (S % "t + tl.arange(2**4, 2**5)[None, :]", "incompatible dimensions",
     "do not broadcast"),
    (S % "t + tl.zeros([32, 2**4], tl.int32)", "incompatible dimensions", "do not broadcast"),
    (S % "t + tl.zeros([2**5, 2**6 - 1], tl.int32)", "must be a power of 2",
     "Shape element 1 must be a power of 2"),
], ids=["arange-negative", "arange-shape", "zeros-shape", "zeros-power"])
def test_a_bound_or_shape_written_as_arithmetic_is_checked_as_triton_checks_it(
        tmp_path, body, theirs, ours):
    """``2**4`` is a compile-time integer in Triton, checked at its value: refused at the line
    as literals are (the reading checked literals only, and the compile failed)."""
    _plain_refuses(tmp_path, body, "int32", theirs)
    _refused_at_line(tmp_path, body, "int32", ours)


def test_shapes_written_as_arithmetic_still_lower(tmp_path):
    _same_as_triton(tmp_path, S % "t + tl.zeros([32, 2**6], tl.int32)"
                                  " + tl.arange(2**5, 2**5 + 64)[None, :]", "int32")


# ------------------------------------------------------------------ broadcast_to's shape

def test_a_broadcast_to_is_checked_beside_the_operands_it_meets(tmp_path):
    body = S % "t + tl.broadcast_to(tl.arange(0, 64)[None, :], (16, 64))"
    _plain_refuses(tmp_path, body, "int32", "incompatible dimensions")
    _refused_at_line(tmp_path, body, "int32", "do not broadcast")


@pytest.mark.parametrize("shape", ["(32, 64)", "32, 64", "[2**5, 64]", "t.shape"])
def test_a_broadcast_to_of_the_operands_shape_still_lowers(tmp_path, shape):
    _same_as_triton(tmp_path, S % f"t + tl.broadcast_to(tl.arange(0, 64)[None, :], {shape})",
                    "int32")


# ------------------------------------------------------------------ names bound to big numbers

@pytest.mark.parametrize("bind, expr, kind", [
    ("x = 2**31", "M + x", "a uint32 tensor"),
    ("x = 2**31", "x + M", "a uint32 tensor"),
    ("x = 2**63 - 1", "M + x", "an int64 tensor"),
    ("x = 2**63", "M + x", "a uint64 tensor"),
    ("x = 2**40", "M * x", "an int64 tensor"),
    ("x = 2**40", "tl.where(M > 0, M, x)", "an int64 tensor"),
])
def test_a_name_bound_to_a_number_outside_i32_is_refused_in_true_words(tmp_path, bind, expr,
                                                                        kind):
    """Triton makes a tensor of the number a plain assignment binds and compiles the
    operation; the refusal (the verifier reads Python's integers) no longer says that Triton
    refuses the scalar."""
    body = f"{bind}\ntl.store(y_ptr + p, ({expr}).to(tl.int32))"
    _plain(tmp_path, body, "int32")  # compiles
    out = _refused_at_line(tmp_path, body, "int32", f"which Triton 3.6 holds as {kind}",
                           where="tl.store(y_ptr + p")
    assert "refuses the scalar" not in out, out


@pytest.mark.parametrize("body", [
    "x: tl.constexpr = 2**31\ntl.store(y_ptr + p, (M + x).to(tl.int32))",
    "tl.store(y_ptr + p, (M + 2**31).to(tl.int32))",
])
def test_a_number_triton_keeps_a_number_keeps_tritons_refusal(tmp_path, body):
    _plain_refuses(tmp_path, body, "int32", "Scalar 2147483648 is out of range for type int32")
    _refused_at_line(tmp_path, body, "int32", "refuses the scalar (\"Scalar 2147483648 is out "
                     "of range for type int32\")", where="tl.store(y_ptr + p")


def test_a_comparison_with_a_name_bound_outside_i32_still_lowers(tmp_path):
    _same_as_triton(tmp_path, "x = 2**40\n" + S % "t + (M < x).to(tl.int32)", "int32")


# ------------------------------------------------------------------ held

HELD = [
    ("int32", S % "t.to(tl.uint32) << 40"),
    ("int32", S % "t.to(tl.uint32) // 3 + t.to(tl.uint32) % 7"),
    ("int32", S % "t.to(tl.uint32) < -1"),
    ("int32", S % "t + tl.program_id(0) * tl.num_programs(0) + tl.program_id(2)"),
    ("float32", "tl.store(tl.where(t > 0, y_ptr + offs, y_ptr + offs + 1), t)"),
    ("int32", "tl.store(y_ptr + (offs - M.to(tl.uint8)), t)"),
    ("float32", S % "t + tl.load(y_ptr + offs, mask=offs < M, other=float('nan'))"),
    ("int32", S % "t + tl.atomic_cas(y_ptr + p * 2048 + offs, t, t + 1, sem='acquire')"),
    ("float32", S % "tl.math.div_rn(t, 3.0) + tl.math.fdiv(t, t)"),
]


@pytest.mark.parametrize("dt, body", HELD)
def test_integer_pointer_and_atomic_corners_compute_as_triton_does(tmp_path, dt, body):
    _same_as_triton(tmp_path, body, dt)


# ------------------------------------------------------------------ shapes bound to names

@pytest.mark.parametrize("body", [
    "s = t.shape\nx = tl.zeros(s, tl.int32)\n" + S % "t + x",
    "s = t.shape\n" + S % "tl.full(s, 1, tl.int32) + t",
    "s = t.shape\n" + S % "tl.reshape(t, s)",
    "s = (32, 64)\n" + S % "tl.broadcast_to(t, s)",
    "a = 64\n" + S % "tl.reshape(t, 32, a)",
], ids=["zeros", "full", "reshape", "broadcast-to", "reshape-item"])
def test_a_shape_given_as_a_name_a_plain_assignment_bound_is_refused_at_its_line(tmp_path,
                                                                                   body):
    """Triton makes the items of a tuple a plain assignment binds tensors, and refuses them as
    a shape; the lowered kernel compiled (the name folded)."""
    _plain_refuses(tmp_path, body, "int32", "must have type `constexpr[int]`")
    line = next(x for x in body.splitlines() if "tl.zeros(s" in x or "tl.store" in x)
    _refused_at_line(tmp_path, body, "int32", "which Triton 3.6 makes", where=line.strip())


@pytest.mark.parametrize("body, helpers", [
    (S % "tl.reshape(t, t.shape) + tl.zeros(t.shape, tl.int32)"
         " + tl.full(shape=t.shape, value=1, dtype=tl.int32) + tl.broadcast_to(t, t.shape)", ""),
    ("a: tl.constexpr = 64\n" + S % "tl.reshape(t, 32, a) + 1", ""),
    ("x = tl.zeros(t.shape, tl.int32)\n" + S % "t * 3 + h(x, t.shape)",
     "\ndef h(x, s):\n    return x + tl.zeros(s, tl.int32)\n"),
], ids=["shape-attribute", "constexpr-name", "helper-parameter"])
def test_a_shape_triton_keeps_constexpr_still_lowers(tmp_path, body, helpers):
    _same_as_triton(tmp_path, body, "int32", helpers=helpers)


@pytest.mark.parametrize("body", [
    "s = t.shape\n" + S % "t + s[-1] + s[0]",
    "s = t.shape\n" + S % "t + s[0] // -3",
    "s = t.shape\n" + S % "t + s[0] * s[1] * 2**20",
])
def test_an_item_of_a_name_bound_to_a_shape_computes_as_triton_does(tmp_path, body):
    """``s = t.shape`` then ``s[0]``: Triton holds the items as i32 tensors (``s[0] // -3`` is
    C's -10, ``s[0] * s[1] * 2**20`` wraps in i32), where the lowering read them as Python
    numbers (-11; a product past i32 it could not compile), so it was refused at the line;
    since lowering adversarial round 19 the lowering spells each item as that tensor
    (``gl.to_tensor(32)``) and it is lowered with Triton's values."""
    _same_as_triton(tmp_path, body, "int32")


# ------------------------------------------------------------------ pointer tensors

@pytest.mark.parametrize("body, where", [
    (S % "t + ((y_ptr + offs) < (y_ptr + 5)).to(tl.int32)", ""),
    (S % "t + (y_ptr + offs > 0).to(tl.int32)", ""),
    (S % "t + ((y_ptr + offs) - y_ptr).to(tl.int32)", ""),
    ("q = y_ptr + offs\n" + S % "t + (q * 2).to(tl.int64).to(tl.int32)", "tl.store(y_ptr"),
], ids=["compare-pointers", "compare-number", "pointer-difference", "product"])
def test_a_pointer_tensor_in_a_comparison_or_arithmetic_is_refused_at_its_line(tmp_path, body,
                                                                               where):
    _plain_refuses(tmp_path, body, "int32", "invalid operands of type pointer")
    _refused_at_line(tmp_path, body, "int32", "Triton 3.6 refuses", where=where)


@pytest.mark.parametrize("body", [
    "q = offs + y_ptr\ntl.store(q + 1, t * 2)",
    "q = y_ptr + offs\ntl.store(q - 1 + p * 2048, t * 2)",
    "tl.store(tl.where(t > 0, y_ptr + offs, y_ptr + offs + 1), t * 2)",
])
def test_a_pointer_tensor_plus_or_minus_integers_still_lowers(tmp_path, body):
    _same_as_triton(tmp_path, body, "int32")


# ------------------------------------------------------------------ folded constants

def _dense_constants(ir: str) -> list:
    """The splatted constants of a TTGIR with their element types: the operation counts the
    other tests compare leave constants out, and a value both compiles fold (``s[0] // -3``
    above) differs only there."""
    return sorted(set(re.findall(r"arith\.constant dense<([^>]*)> : tensor<[^,>]*?(\w+)[,>]",
                                 ir)))


@pytest.mark.parametrize("body", [
    S % "t + 7 // -2 + 7 % -2 + (-7) // 2",
    S % "t + t.shape[-1] // -3 + t.shape[-2] % -5",
    S % "tl.minimum(t.to(tl.uint8), -1)",
    S % "tl.where(t > 0, 2**40, 2)",
    "u = t\nfor i in tl.static_range(-3, 0):\n    u = u + i // 2 + i % 2\n" + S % "u",
])
def test_folded_constants_are_tritons(tmp_path, body):
    tle, ref = _dense_constants(_tle(tmp_path, body, "int32")), \
        _dense_constants(_plain(tmp_path, body, "int32"))
    assert tle == ref and tle, (tle, ref)
