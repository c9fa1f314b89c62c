"""A thirty-seventh adversarial round (adversarial round 37): round 36's open cases (a
loop-carried integer made wider, a huge tl.static_range) and tensor member calls (``x.sum(1)``,
``ptr.store(v)``, ...). Each case is a small kernel written to a file and read by tle-dump's
main(); the exit code and the verdict's words are pinned, and the plain Triton form a case
rests on is compiled by Triton itself to TTIR (no GPU needed).

Bugs found, one line each:
1. A loop-carried int32 scalar made an int64 (`u = 0` or `u = N`, then in a loop or a branch
   `u = u + N.to(tl.int64)`) was verified; Triton 3.6 refuses it ("Loop-carried variable u has
   initial type int32 but is re-assigned to int64 in loop"). FIXED: where the walk knows a
   scalar integer's width (a number of i32, an i32 / i64 kernel argument, a value of i64
   width: values.I64), a change of it is a type change, the body's value read with the names
   the loop carries at their types before it (frontend/triton_rules.py int_width,
   carried_kind).
2. `tl.static_range(0, 100000)` was verified; Triton 3.6 unrolls it in the kernel's source, its
   compile time grows with the square of the statements unrolled (10000 iterations of one add on
   a tile: 15 s, 30000: 150 s) and 100000 end in a segmentation fault. FIXED: a nest of
   tl.static_range loops unrolling to more than 16384 statements (iterations times the body's
   statements) is refused, `bad-loop` (frontend/triton_rules.py static_range_rule). Round 28's
   100000-iteration case is now 5000, and round 29's 200 x 200 nest is refused by this rule
   first.
3. `tl.cdiv` of a float (`t.cdiv(2.0)`, `tl.cdiv(t, 2)` of an fp32 tile, `N.cdiv(2.5)`) was
   verified; Triton 3.6's cdiv is `(x + (div - 1)) // div`, and `//` of a float is refused
   ("unexpected type fp32"), by the lowering's gl.cdiv too. FIXED: refused where an operand is
   a float and not all are Python numbers (frontend/triton_rules.py operand_dtype_rule).
4. The element type of `x.cast(dtype)` / `tl.cast(x, dtype)` was not followed (only `x.to`'s
   was): `x = t.cast(tl.float16); tl.exp2(x)` was verified (Triton 3.6 refuses it),
   `t.cast(tl.float16).exp2()` was verified and the lowering's gl.exp2 then failed, and
   `u = 0; for ...: u = u + N.cast(tl.int64)` was verified. FIXED: tile_dtype reads tl.cast as
   `to`, and an int32 beside an int64 is an int64 (frontend/protocol.py tile_dtype).
5. `x.cast(tl.int16, bitcast=True)` of an fp32 tile and `x.cast(tl.int32,
   fp_downcast_rounding="rtz")` were verified; Triton 3.6 refuses both ("Cannot bitcast
   data-type of size 32 to data-type of size 16", "fp_downcast_rounding should be set only for
   truncating fp conversions"): the checks of `x.to`'s bitcast and rounding mode did not read
   tl.cast. FIXED: bitcast_rule reads tl.cast (frontend/triton_rules.py), and the lowering's
   tl.cast takes x.to's rounding-mode refusals (lowering/rounding.py, moved from translate.py).
6. Float conversions Triton 3.6 accepts and its NVIDIA backend cannot lower (ConvertTritonGPU
   ToLLVM fails; the TTGIR compiles, so `--ttgir` did not see it): fp_downcast_rounding="rtz"
   other than float32 -> float16 / bfloat16 / float8e5 (float32 -> float8e4nv, float16 /
   bfloat16 -> fp8, float64 -> anything), and any conversion between float64 and an fp8 type,
   were verified. Round 31 pinned `t.to(tl.float8e4nv, fp_downcast_rounding="rtz")` as
   verified because its Triton oracle left `u` unused (the conversion was dead code); that case
   is now float8e5. FIXED: lowering/rounding.py RTZ_CONVERSIONS, ir/promotion.py
   fp8_conversion_refusal.
7. A member call of a tl.static_range variable (`i.cdiv(2)`, `(i * 2).abs()`,
   `i.to(tl.int64)`) was verified; Triton 3.6 unrolls the loop binding the variable to a Python
   int ("'int' object has no attribute 'cdiv'"), and the lowered `i.to(gl.int64)` failed so.
   FIXED: refused as a member of a constexpr (frontend/build.py member_call, and the `to` rule
   of frontend/protocol.py through python_number).
8. A name bound by both branches of an `if` on a run-time value, unbound before it, to values
   of two types (`if N > 2: u = N.to(tl.int64) else: u = 0`, `u = t` / `u = N`, an fp16 / fp32
   tile) was verified; Triton 3.6 refuses it ("Mismatched type for u between then block (int64)
   and else block (int32)"). FIXED: the branches' types are compared
   (frontend/triton_rules.py same_branch_types).

Left open (not fixed): Triton 3.6's member math functions (`x.exp2()`, `x.sqrt()`, `x.sin()`,
...) skip the element-type check their `tl.` form makes (math.py applies `_check_dtype` outside
`_tensor_member_fn`), so `t.to(tl.float16).exp2()` compiles in Triton; tle-dump refuses it
(rightly: the lowering's gl.exp2 checks), but its message says "Triton 3.6 refuses it". An
error message about a member call prints the receiver's whole source line in place of the
receiver (`tl.cdiv(t.to(tl.int32).cdiv(2.5).to(tl.float32), 2.5)`). The integer-width rule
follows numbers, i32 / i64 kernel arguments and casts only: a `range` variable of an i64 bound,
a uint64 value beside an int64, or a loop-carried sum with an i64 argument (`u = 0; for ...: u
= u + N64`) are not followed (missed refusals, never wrong ones). The static_range bound counts
the statements written in the loop body, not those of helpers it calls. The memory-race proof
does not read store masks (disjoint masks are a race to it: refused, conservatively).

Checked and found right: members of pipe handles, slots, wait results, `res.slot.tile`, tuples
and pipes (refused), a local named like a module (`math = t; math.exp()`: read as the tensor's
member), a member call with an event in its receiver (`local_ptr(w.acquire(p).tile).store(v)`,
verified) or a commit in its arguments (refused), `x.store` / `x.sum` through a slot pointer
after its release or commit (access-outside-window), `x.atomic_add` on shared memory
(refused), member stores, atomics (`atomic_add`, `atomic_xchg`, `atomic_cas`, positional mask
and sem) and reshaped / broadcast pointers in the memory-race proof (races found), member
reductions with keep_dims (lowered to what Triton computes), `x.trans()` and `.T` of a 2-D
tile (verified), `x.permute`, `x.argmax`, `x.softmax`, `x.split`, `x.sigmoid`, `x.view`,
`x.reshape(..., can_reorder=True)` (refused by the lowering in their own names), `x.sum(0,
False, tl.float64)` (positional arguments the lowering would bind otherwise: refused),
`N.cdiv(4)` in the kernel body (the same params and domains as `tl.cdiv(N, 4)`).
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, judged_as_triton, reader_does, stored_after




# ----------------------------------------- bug 1: a loop-carried integer made an int64

@pytest.mark.parametrize("stmt", [
    "u = 0\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = N\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = N * 2 + 1\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = 0\nfor i in range(N):\n    u = u * 2 + i.to(tl.int64)",
    "u = 0\nfor i in range(4):\n    v = N.to(tl.int64)\n    u = u + v",
    "u = 0\ni = 0\nwhile i < N:\n    u = u - N.to(tl.int64)\n    i += 1",
    "u = 0\nif N > 2:\n    u = N.to(tl.int64)",
])
def test_an_int32_made_an_int64_is_rejected(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified. Triton 3.6: "Loop-carried variable u has initial type int32 but is
    re-assigned to int64 in loop" ("... the then block redefines it as int64[]")."""
    text = stored_after(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_carried_i64", True,
                     ("rejected", "is a scalar int (int32) before the", "a scalar int (int64)",
                      "refuses a name whose type a loop or a branch", "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "u = 0\nfor i in range(4):\n    u = u + N",
    "u = N.to(tl.int64)\nfor i in range(4):\n    u = u + 1",
    "u = N.to(tl.int64)\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = 0\nfor i in range(4):\n    u = (u + N.to(tl.int64)).to(tl.int32)",
    "u = 0.0\nfor i in range(4):\n    u = u + N.to(tl.int64)",
    "u = 5000000000\nfor i in range(4):\n    u = u + N.to(tl.int64)",
])
def test_a_loop_keeping_its_integer_width_is_verified(tmp_path, capsys, monkeypatch, stmt):
    text = stored_after(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_carried_ok", False,
                     "verified")


# ----------------------------------------------------- bug 2: a huge tl.static_range

@pytest.mark.parametrize("stmt,count", [
    ("u = 0.0\nfor i in tl.static_range(0, 100000):\n    u = u + 1.0", "100000 statements"),
    ("u = 0.0\nfor i in tl.static_range(10**9):\n    u = u + 1.0", "1000000000 statements"),
    ("u = 0.0\nfor i in tl.static_range(200):\n    for j in tl.static_range(200):\n"
     "        u = u + 1.0", "40000 statements"),
    ("u = 0.0\nfor i in tl.static_range(6000):\n    u = u + 1.0\n    u = u * 0.5\n"
     "    u = u - 1.0", "18000 statements"),
])
def test_a_static_range_unrolling_too_many_statements_is_rejected(tmp_path, capsys, stmt,
                                                                  count):
    """Before: verified (and Triton 3.6 crashed on the first: a segmentation fault)."""
    code, err = dump(tmp_path, capsys, reader_does(stored_after(stmt)))
    expect(code, err, ("rejected", "unrolls", count, "more than 16384", "[bad-loop]"))


@pytest.mark.parametrize("stmt", [
    "u = 0.0\nfor i in tl.static_range(16384):\n    u = u + 1.0",
    "u = 0.0\nfor i in tl.static_range(64):\n    for j in tl.static_range(256):\n"
    "        u = u + 1.0",
    "u = 0.0\nfor i in tl.static_range(2**70, 2**70 + 2):\n    u = u + 1.0",
])
def test_a_static_range_within_the_bound_is_verified(tmp_path, capsys, stmt):
    code, err = dump(tmp_path, capsys, reader_does(stored_after(stmt)))
    expect(code, err, "verified")


# --------------------------------------------------------- bug 3: tl.cdiv of a float

@pytest.mark.parametrize("stmt", [
    "tl.store(y_ptr + tl.arange(0, 64), t.cdiv(2.0))",
    "tl.store(y_ptr + tl.arange(0, 64), tl.cdiv(t, 2))",
    "x = t * 2\ntl.store(y_ptr + tl.arange(0, 64), x.cdiv(4))",
    "tl.store(y_ptr + tl.arange(0, 64), t.to(tl.int32).cdiv(2.5).to(tl.float32))",
    "u = N.cdiv(2.5)\ntl.store(y_ptr + tl.arange(0, 64), t + u)",
])
def test_a_cdiv_of_a_float_is_rejected(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified. Triton 3.6's cdiv is `(x + (div - 1)) // div`: "unexpected type
    fp32"; the lowering's gl.cdiv fails alike."""
    judged_as_triton(tmp_path, capsys, monkeypatch, stmt, "r37_cdiv", True,
                     ("rejected", "tl.cdiv computes", "unexpected type fp32",
                      "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "u = N.cdiv(2)\ntl.store(y_ptr + tl.arange(0, 64), t + u)",
    "u = t.to(tl.int32).cdiv(2)\ntl.store(y_ptr + tl.arange(0, 64), t + u)",
    "u = tl.cdiv(C, 2.5)\ntl.store(y_ptr + tl.arange(0, 64), t + u)",
])
def test_a_cdiv_of_integers_or_of_numbers_is_verified(tmp_path, capsys, monkeypatch, stmt):
    judged_as_triton(tmp_path, capsys, monkeypatch, stmt, "r37_cdiv_ok", False,
                     "verified")


# ------------------------------------ bug 4: the element type of x.cast(...) / tl.cast(x, ...)

@pytest.mark.parametrize("stmt", [
    "x = t.cast(tl.float16)\nu = tl.exp2(x)",
    "u = tl.exp2(tl.cast(t, tl.float16))",
    "u = tl.sqrt_rn(t.cast(dtype=tl.float64))",
])
def test_math_of_a_cast_tile_is_checked(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified. Triton 3.6: "Expected dtype ['fp32', 'fp64'] but got fp16" (the
    frontend followed the element type of `x.to(...)` only)."""
    text = stored_after(stmt, "u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_cast_math", True,
                     ("rejected", "Triton 3.6 refuses it", "Expected dtype",
                      "[unsupported-expression]"))


def test_a_member_math_call_of_a_cast_fp16_tile_is_rejected(tmp_path, capsys, monkeypatch):
    """Before: verified, and the lowering's gl.exp2 of the fp16 tile does not compile
    ("Expected dtype ['fp32', 'fp64'] but got fp16"). Triton 3.6's member `x.exp2()` itself
    skips that check (math.py applies _check_dtype outside _tensor_member_fn), so only the
    lowering refuses it; the frontend refuses it as it refuses tl.exp2 of fp16, its message saying
    so (round 38: it said "Triton 3.6 refuses it")."""
    text = stored_after("u = t.cast(tl.float16).exp2()", "u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_member_exp2", False,
                     ("rejected", "`t.cast(tl.float16).exp2()`", "skips the element-type check",
                      "the lowering's gl.exp2 refuses it", "Expected dtype",
                      "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "u = 0\nfor i in range(4):\n    u = u + N.cast(tl.int64)",
    "u = t.to(tl.int32)\nfor i in range(4):\n    u = u.cast(tl.int16)",
])
def test_a_loop_changing_a_type_by_cast_is_rejected(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified; Triton 3.6: "Loop-carried variable u has initial type int32 but is
    re-assigned to int64 in loop"."""
    text = stored_after(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_cast_carried", True,
                     ("rejected", "before the loop", "refuses a name whose type a loop",
                      "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "u = N.cast(tl.int64)\nfor i in range(4):\n    u = u + N",
    "u = 0\nfor i in range(4):\n    u = (u + N.cast(tl.int64)).to(tl.int32)",
    "x = t.cast(tl.float64)\nu = tl.exp2(x * 2.0)",
    "u = t.cast(tl.int32, bitcast=True)",
])
def test_a_cast_triton_compiles_is_verified(tmp_path, capsys, monkeypatch, stmt):
    text = stored_after(stmt, "t + u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_cast_ok", False,
                     "verified")


# ------------------------------ bug 5: x.cast's bitcast and rounding mode, as x.to's are checked

@pytest.mark.parametrize("stmt,words", [
    ("u = t.cast(tl.int16, bitcast=True)", ("Cannot bitcast data-type of size 32 to data-type "
                                            "of size 16", "[unsupported-expression]")),
    ("u = tl.cast(t, tl.int16, None, True)", ("Cannot bitcast data-type of size 32",
                                              "[unsupported-expression]")),
    ('u = t.cast(tl.int32, fp_downcast_rounding="rtz")', ("only for a float narrowed to a float",
                                                          "[lowering]")),
    ('u = t.to(tl.float16).cast(tl.bfloat16, fp_downcast_rounding="rtne")', (
        "only for a float narrowed to a float", "[lowering]")),
])
def test_a_cast_triton_refuses_is_rejected(tmp_path, capsys, monkeypatch, stmt, words):
    """Before: verified (the checks of `x.to(..., bitcast=True)` and of its rounding mode did
    not read tl.cast, which `x.cast(...)` is); Triton 3.6 refuses each."""
    text = stored_after(stmt, "u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_cast_bad", True,
                     ("rejected", *words))


# ---------------------- bug 6: float conversions Triton accepts and its backend cannot lower

@pytest.mark.parametrize("stmt", [
    'u = t.to(tl.float8e4nv, fp_downcast_rounding="rtz")',
    'u = t.cast(tl.float8e4nv, fp_downcast_rounding="rtz")',
    'u = t.to(tl.float16).to(tl.float8e5, fp_downcast_rounding="rtz")',
    'u = t.to(tl.bfloat16).to(tl.float8e4nv, fp_downcast_rounding="rtz")',
    'u = t.to(tl.float64).to(tl.float16, fp_downcast_rounding="rtz")',
    'u = t.to(tl.float64).cast(tl.float32, fp_downcast_rounding="rtz")',
])
def test_a_rounding_toward_zero_the_backend_lacks_is_rejected(tmp_path, capsys, monkeypatch,
                                                              stmt):
    """Before: verified (and its TTGIR compiles); Triton 3.6's LLVM lowering fails
    ("Unsupported rounding mode for conversion")."""
    text = stored_after(stmt, "u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_rtz", True,
                     ("rejected", "fp_downcast_rounding='rtz'", "has no such conversion",
                      "[lowering]"))


@pytest.mark.parametrize("stmt", [
    "u = t.to(tl.float64).to(tl.float8e4nv)",
    'u = t.to(tl.float64).cast(tl.float8e5, fp_downcast_rounding="rtne")',
    "u = t.to(tl.float8e5).to(tl.float64)",
])
def test_a_conversion_between_fp8_and_float64_is_rejected(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified; Triton 3.6's LLVM lowering fails ("Unsupported conversion")."""
    text = stored_after(stmt, "u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_fp8_fp64", True,
                     ("rejected", "converts no fp8 type to or from float64", "[lowering]"))


@pytest.mark.parametrize("stmt", [
    'u = t.to(tl.float16, fp_downcast_rounding="rtz")',
    'u = t.cast(tl.bfloat16, fp_downcast_rounding="rtz")',
    'u = t.to(tl.float8e5, fp_downcast_rounding="rtz")',
    'u = t.to(tl.float64).to(tl.float16, fp_downcast_rounding="rtne")',
    'u = t.to(tl.float16).cast(tl.float8e4nv, fp_downcast_rounding="rtne")',
])
def test_a_rounding_the_backend_has_is_verified(tmp_path, capsys, monkeypatch, stmt):
    text = stored_after(stmt, "u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_round_ok", False,
                     "verified")


# ------------------------- bug 7: a member of a tl.static_range variable (a Python int)

@pytest.mark.parametrize("stmt,member", [
    ("for i in tl.static_range(4):\n    tl.store(y_ptr + i, t.sum(0) + i.cdiv(2))", "cdiv"),
    ("for i in tl.static_range(4):\n    tl.store(y_ptr + i, t.sum(0) + (i * 2).abs())", "abs"),
    ("for i in tl.static_range(4):\n    tl.store(y_ptr + i.to(tl.int64), t.sum(0))", "to"),
])
def test_a_member_of_a_static_range_variable_is_rejected(tmp_path, capsys, monkeypatch, stmt,
                                                         member):
    """Before: verified. Triton 3.6 unrolls the loop binding the variable to a Python int:
    "'int' object has no attribute 'cdiv'" (and the lowered `i.to(gl.int64)` fails alike)."""
    judged_as_triton(tmp_path, capsys, monkeypatch, stmt, "r37_static_member", True,
                     ("rejected", "the constexpr `i", "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "for i in tl.static_range(4):\n    j = i * 2\n    tl.store(y_ptr + i, t.sum(0) + "
    "j.to(tl.float32))",
    "for i in range(4):\n    tl.store(y_ptr + i.to(tl.int64), t.sum(0) + i.cdiv(2))",
])
def test_a_member_of_a_tensor_loop_value_is_verified(tmp_path, capsys, monkeypatch, stmt):
    """A name a plain assignment binds is a tensor in Triton 3.6, and so is a range variable."""
    judged_as_triton(tmp_path, capsys, monkeypatch, stmt, "r37_static_member_ok", False,
                     "verified")


# ------------------------- bug 8: the two branches of an `if` binding a new name to two types

@pytest.mark.parametrize("stmt", [
    "if N > 2:\n    u = N.to(tl.int64)\nelse:\n    u = 0",
    "if N > 2:\n    u = N * 1.5\nelse:\n    u = N",
    "if N > 2:\n    u = t\nelse:\n    u = N",
    "if N > 2:\n    u = t.to(tl.float16)\nelse:\n    u = t",
])
def test_branches_binding_a_name_to_two_types_are_rejected(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified (only a name bound before the `if` was compared with each branch).
    Triton 3.6: "Mismatched type for u between then block (int64) and else block (int32)"."""
    text = stored_after(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_branches", True,
                     ("rejected", "by the then branch of the `if`", "by its else branch",
                      "Mismatched type for u", "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "if N > 2:\n    u = t * 2\nelse:\n    u = t + 1.0",
    "if N > 2:\n    u = N + 1\nelse:\n    u = 0",
    "if N > 2:\n    u = N.to(tl.int64)\nelse:\n    u = (N * 2).to(tl.int64)",
    "if C > 2:\n    u = t.to(tl.float16)\nelse:\n    u = t",  # constexpr: one branch is kept
])
def test_branches_binding_a_name_to_one_type_are_verified(tmp_path, capsys, monkeypatch, stmt):
    text = stored_after(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r37_branches_ok", False,
                     "verified")
