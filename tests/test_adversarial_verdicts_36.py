"""A thirty-sixth adversarial round (adversarial round 36): Triton language features inside a
partition's window (scans, sorts, histograms, gathers, joins / splits / permutes of 3-D
tensors, tl.dot's options, load and store options, libdevice calls, math of fp16 / bf16 / fp64
values, loop-carried names) and tle-dump's command line on odd inputs. Each case is a small
kernel written to a file and read by tle-dump's main(); the exit code and the verdict's words
are pinned, and the plain Triton form a case rests on is compiled by Triton itself to TTIR (no
GPU needed).

Bugs found, one line each:
1. Round 33's element-type rules (`tl.exp2` / `tl.sqrt` / ... of fp32 or fp64 only,
   `tl.sqrt_rn` of fp32 only, ...) did not see through a name bound to a value computed from a
   tile loaded from a slot: `x = t.to(tl.float16); tl.exp2(x)` was verified, while Triton 3.6
   refuses it ("Expected dtype ['fp32', 'fp64'] but got fp16") and so does Gluon's gl.exp2 the
   lowering writes. FIXED: the element type of a register value computed from a loaded slot
   tile is its expression's, as for any other value (frontend/protocol.py tile_dtype).
2. A libdevice call (`tl.extra.cuda.libdevice.exp2(x)`, `.abs`, `.sin`, `.rsqrt`, ... ) was
   lowered by its last name to gl.exp2 / gl.abs / ...: another function, of other element
   types (libdevice.abs of an fp16 or bf16 tile, which Triton 3.6 refuses:
   "(triton.language.bfloat16)", was verified, and libdevice.exp2 of an int32 or fp16 tile
   behind a name, before bug 1's fix) and precision (libdevice.sin is __nv_sinf, gl.sin is
   sin.approx; libdevice.exp2 of fp32 __nv_exp2f, gl.exp2 ex2.approx). FIXED: the lowering refuses every `tl.extra.*` call in its
   own name, as it refused libdevice.pow (lowering/translate.py call_builtin).
3. A loop-carried integer made a float by arithmetic (`u = 0; for i in range(4): u = u + 1.5`,
   `u = N; ... u = u * 1.5`) was verified; Triton 3.6 refuses it ("Loop-carried variable u has
   initial type int32 but is re-assigned to fp32 in loop"). The loop's second walk reads `u` as
   data whose kind was not followed. FIXED: the sum, difference, product and quotient of an
   integer and a float is a float (`/` of integers too), a value the source spells a float
   (Data.floating) is one whatever its shape, and an integer become a float is a type change
   whatever the shapes (frontend/triton_rules.py operand_type, same_types, types_differ).

Left open (not fixed): a loop-carried int32 made an int64 (`u = 0; for ...: u = u +
N.to(tl.int64)`) is still verified, which Triton 3.6 refuses (the frontend does not follow the
element type of a scalar); `tl.static_range(0, 100000)` around `u = u + 1.0` is verified, and
Triton 3.6 crashes compiling it (a segmentation fault; 10000 compiles); a worker's register
request that leaves the default partition fewer than 24 registers is refused (`registers`), while
Triton's AllocateWarpGroups then emits no setmaxnreg and compiles the kernel.

Checked and found right (pinned below where marked): tl.cumsum, tl.cumprod, tl.sort,
tl.histogram, tl.gather, tl.clamp, tl.split, tl.join, tl.permute, tl.rand / randint / randn,
tl.make_block_ptr, tl.inline_asm_elementwise (refused by the lowering, in their own names:
pinned for a few); tl.trans of a 3-D tensor, with and without dims (verified, lowered to the
permutation Triton takes: the last two axes swapped without dims), `.T` of a 3-D tensor
(refused); tl.dot with input_precision, max_num_imprecise_acc, out_dtype, an fp16 accumulator,
3-D operands and tiles under 64 rows (refused); tl.load with padding_option / boundary_check on
a tensor of pointers, `other` without a mask, integer or float masks, volatile not a literal,
cache modifier and eviction policy pairs ptxas refuses, stores of a pointer or a tile through a
scalar pointer, bad store cache modifiers and eviction policies (refused, as Triton refuses
them); tl.device_print / device_assert / static_print (verified), device_print without a
prefix string and static_assert false or of a run-time value (refused); tl.math functions of
fp16 / bf16 / int32 (refused); fp16 + bf16 and fp64 * bf16 (verified, as Triton promotes
them); loops: tl.static_range with a zero step, of a run-time bound or a float bound,
range with a float step, for-else, break, a loop changing a tile's type or shape, a branch
making an int a float (refused); helpers with defaults (verified), keyword-only parameters,
*args, **kwargs, a list default, recursion (refused). The command line: a kernel file
importing a missing module or raising at import (exit 1, bad-import), a UTF-8 BOM with CRLF
line endings (verified, pinned), `num_warps` 1 / 2 / 3 (refused), 8 / 16 (verified), a
DEFAULT_CONFIG num_warps that differs from the kernel's (exit 2), a partition of 3 warps, a
register budget not a multiple of 8 in [24, 256], a CTA of more than 32 warps (refused), ten
partitions of 4 + 4 + 8 x 1 warps (verified).
"""

from __future__ import annotations

import pytest

from .adversarial_support import dump, expect, judged_as_triton, reader_does, ring, stored_after
from .test_adversarial_verdicts_26 import triton_refuses



def _stored(stmt: str, value: str = "u") -> str:
    return stored_after(stmt, value)


# ------------------------------------------- bug 1: an element type behind a name of a slot tile

@pytest.mark.parametrize("stmt", [
    "x = t.to(tl.float16)\nu = tl.exp2(x)",
    "x = t.to(tl.int32)\nu = tl.sqrt(x)",
    "x = t.to(tl.float64)\nu = tl.sqrt_rn(x)",
    "x = t.to(tl.bfloat16)\ny = x\nu = tl.math.cos(y)",
])
def test_the_element_type_of_a_name_bound_to_a_loaded_tile_is_followed(tmp_path, capsys,
                                                                       monkeypatch, stmt):
    """Before: verified. Triton 3.6 refuses the math of that element type, through a name as in
    place."""
    text = _stored(stmt)
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r36_name_dtype", True,
                     ("rejected", "Triton 3.6 refuses it", "Expected dtype",
                      "[unsupported-expression]"))


def test_math_of_fp32_behind_a_name_is_still_verified(tmp_path, capsys, monkeypatch):
    text = _stored("x = t.to(tl.float64)\nu = tl.exp2(x * 2.0)")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r36_name_fp64", False,
                     "verified")


# ----------------------------------------------- bug 2: a libdevice call lowered by its last name

@pytest.mark.parametrize("stmt,triton_ok", [
    ("u = tl.extra.cuda.libdevice.abs(t.to(tl.bfloat16))", False),
    ("x = t.to(tl.float16)\nu = tl.extra.cuda.libdevice.abs(x)", False),
    ("u = tl.extra.cuda.libdevice.sin(t)", True),
    ("u = tl.extra.cuda.libdevice.rsqrt(t.to(tl.float64))", True),
])
def test_a_libdevice_call_is_refused_by_the_lowering(tmp_path, capsys, monkeypatch, stmt,
                                                     triton_ok):
    """Before: verified, lowered to gl.<name> (another function: Triton refuses libdevice.abs of
    fp16 and bf16, and gl.sin is not __nv_sinf)."""
    text = _stored(stmt)
    assert triton_refuses(tmp_path, monkeypatch, text, "r36_libdevice") is not triton_ok
    code, err = dump(tmp_path, capsys, reader_does(text))
    expect(code, err, ("rejected", "libdevice", "is not supported by the lowering",
                       "a libdevice function is not lowered", "[lowering]"))


# ------------------------------------------------ bug 3: a loop-carried integer made a float

@pytest.mark.parametrize("stmt", [
    "u = 0\nfor i in range(4):\n    u = u + 1.5",
    "u = N\nfor i in range(4):\n    u = u * 1.5",
    "u = 0\nfor i in range(N):\n    u = u + 1.5",
    "u = N\nfor i in range(4):\n    u = u / 2",
])
def test_a_loop_making_an_integer_a_float_is_rejected(tmp_path, capsys, monkeypatch, stmt):
    """Before: verified. Triton 3.6: "Loop-carried variable u has initial type int32 but is
    re-assigned to fp32 in loop"."""
    text = _stored(stmt, "t + u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r36_carried", True,
                     ("rejected", "is a scalar int before the loop", "float",
                      "refuses a name whose type a loop or a branch", "[unsupported-expression]"))


@pytest.mark.parametrize("stmt", [
    "u = 0.0\nfor i in range(4):\n    u = u + 1",
    "u = 0\nfor i in range(4):\n    u = u + i * 2",
    "u = t\ni = 0\nwhile i < 4:\n    u = u + i\n    i += 1",
])
def test_a_loop_keeping_its_types_is_verified(tmp_path, capsys, monkeypatch, stmt):
    text = _stored(stmt, "t + u")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r36_carried_ok", False,
                     "verified")


# --------------------------------------------------------------- checked and found right

@pytest.mark.parametrize("stmt,name", [
    ("u = tl.cumsum(t, 0)", "tl.cumsum"),
    ("u = tl.sort(t)", "tl.sort"),
    ("u = tl.histogram(t.to(tl.int32), 16)", "tl.histogram"),
    ("u = tl.gather(t, t.to(tl.int32) & 63, 0)", "tl.gather"),
])
def test_unlowered_language_features_are_refused_in_their_own_name(tmp_path, capsys, stmt,
                                                                   name):
    value = "tl.sum(u, 0)" if "histogram" in stmt else "u"
    code, err = dump(tmp_path, capsys, reader_does(_stored(stmt, value)))
    expect(code, err, ("rejected", f"`{name}` is not supported by the lowering",
                       "[unlowered-call]"))


@pytest.mark.parametrize("dims", ["", ", 2, 0, 1"])
def test_a_transpose_of_a_3d_tensor_is_verified(tmp_path, capsys, monkeypatch, dims):
    text = (f"u = tl.trans(tl.reshape(t, (4, 4, 4)){dims})\n"
            "tl.store(y_ptr + tl.arange(0, 64), tl.reshape(u, (64,)))")
    judged_as_triton(tmp_path, capsys, monkeypatch, text, "r36_trans3", False,
                     "verified")


def test_a_kernel_file_with_a_bom_and_crlf_line_endings_is_verified(tmp_path, capsys):
    from .adversarial_support import run_dump
    path = tmp_path / "kernel.py"
    path.write_bytes(b"\xef\xbb\xbf" + ring().replace("\n", "\r\n").encode())
    code, _, err = run_dump(capsys, "-q", str(path))
    expect(code, err, "verified")


def test_a_kernel_file_importing_a_missing_module_is_rejected(tmp_path, capsys):
    code, err = dump(tmp_path, capsys, "import no_such_module_r36\n" + ring())
    expect(code, err, ("rejected", "no module named 'no_such_module_r36'", "[bad-import]"))
