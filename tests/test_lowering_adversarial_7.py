"""What is verified is what is lowered, seventh round (lowering adversarial round 7): integer
and bool arithmetic, casts, fp8, volatile loads, slot stores of other shapes, constexpr dtypes,
errors Triton raises inside partitions.

Tried (each kernel a small TLE source that tle-dump verifies, lowered with compile_kernel for
sm_90a, compared with plain Triton 3.6's TTIR of the same source): ``//`` and ``%`` of tiles and
runtime scalars by negative numbers and of unsigned types, shifts by 33 / 40 / -1, unsigned
comparisons with negative numbers, i1 arithmetic (``+ - * / // << ~``, unary minus), a sweep of
12 operators x 9 dtypes x 4 operand kinds; ``.to`` of out-of-range floats, ``bitcast=True``, fp8
round trips, ``fp_downcast_rounding``; tl.exp / sqrt / rsqrt / log / sin / erf / floor of fp16 and
bf16 (Triton refuses them, so does the lowering at the line); tl.abs of unsigned; tl.where with
scalar conditions and numbers; tl.clamp / sort / flip / argmax / cumsum / permute / join /
interleave / inline_asm_elementwise (refused by tle-dump at the line, naming what to write);
tl.reshape / ravel / broadcast_to / zeros_like / tl.full with ``t.dtype``; program_id(1) /
num_programs; constexpr arithmetic (Python's floor division, cdiv), static_range /
static_assert / static_print; loops carrying dtype changes (Triton's refusal, at the loop);
while loops on reductions; helpers returning tuples and numbers; atomics of narrow and float
types; fp8 slots, dots and arithmetic; dots of odd shapes; volatile loads with cache hints in
partitions and in the kernel body; slot stores of expanded / transposed tiles; constexpr
dtypes and float constexprs handed to partitions; loop-carried constants.

Wrong and fixed:
* test_a_volatile_load_with_a_cache_hint_is_refused_at_its_line (bfd41bd): ``tl.load(...,
  cache_modifier=".cg", volatile=True)`` (".ca", an eviction policy, positional): verified, and
  ptxas failed ("'.volatile' cannot be combined with '.cg'") at the kernel's first line
  (frontend/partition_rules.py ``check_cache_hints``).
* test_a_float_stored_into_an_fp8_slot_is_rounded_as_tl_store_rounds,
  test_a_masked_fp8_slot_load_casts_its_float_other (32a85de): a float constant stored into an
  fp8 field, a masked fp8 slot load's float ``other``: Gluon cannot build an fp8 constant ("no
  attribute 'get_fp8e4nv'"); now splat in fp32 and cast (ir/promotion.py ``number_fits``).
* test_arithmetic_in_fp8_is_refused_at_its_line, test_an_fp8_dot_of_fp8_arithmetic_is_refused_
  at_its_line (32a85de): ``t + t``, ``-t``, ``t < u``, ``t * 2.0``, tl.fma, tl.sum of fp8 tiles
  and fp8-to-fp8 conversions: verified, then Triton's backend failed at the kernel's first line
  (plain Triton fails alike); refused at the line (promotion ``fp8_refusal``).
* test_a_slot_store_of_an_expanded_or_transposed_tile_is_refused_where_read,
  test_a_slot_store_of_another_shape_the_frontend_does_not_follow_is_refused_at_its_line
  (45492e4): ``tl.expand_dims(tl.sum(x, 1), 1)`` or ``tl.trans(x)`` stored into a slot of another
  shape was verified (the bad-store check did not follow them) and Gluon refused the store
  (frontend/protocol.py ``block_dims``; translate.py ``store``).
* test_a_dtype_given_as_a_constexpr_is_a_dtype (37954ab): ``DT=tl.float16`` handed to a
  partition was spelled ``triton.language.float16`` (NameError at the kernel's first line);
  ``tl.zeros(shape, DT)`` an AttributeError traceback (translate.py ``constant``, walks.py).
* test_an_if_on_a_float_constexpr_is_refused_at_its_line (37954ab),
  test_an_error_inside_a_triton_library_function_is_reported_at_the_call (50b0138): ``if S:``
  of S = 0.0, tl.xor_sum / reduce_or / cdiv of a float tile: Triton's refusal (an
  UnsupportedLanguageConstruct; a static_assert inside its library) was reported at the
  kernel's first line (compile.py ``_refused_gluon_line``).
* test_a_kernel_body_load_with_hints_ptxas_refuses_is_refused_at_its_line (98575ed): the kernel
  body's loads were not checked for the hints a partition's are refused for (build.py).

* test_a_helpers_returned_number_computes_as_the_i32_tensor_triton_returns: ``t + hlp()`` with
  ``hlp`` returning 100 added in i8 where Triton's returned i32 tensor makes it i32 (so too
  ``t * hlp(100)``, ``c = hlp(); t + c`` and ``hlp()[0]``). An inlined helper's returned number
  is now ``to_tensor`` in the kernel IR, as a plain assignment's is (build.py ``inline``), and
  ``tl.arange(0, hlp())``, which Triton refuses, is refused (local_tensors ``_is_local_tensor``:
  a helper's call named before its arguments are built).

Found right (kept as test_integer_bool_and_cast_arithmetic_lowers_as_triton_computes and the
fp8 / volatile neighbours): every case of the arithmetic sweep agrees with Triton's TTIR (a few
splat a runtime scalar before converting it, the same values); fp8 dots (maxNumImpreciseAcc
2^30), dots of M < 64 or K too small refused at the line; atomics agree or are refused as
Triton refuses them.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tle_compiler.diagnostics import TleError, TleVerificationWarning  # noqa: E402
from tle_compiler.lowering.compile import compile_kernel  # noqa: E402

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

# the kernel templates and helpers of lowering rounds 5 and 6, shared
from tests.test_lowering_adversarial_5 import (  # noqa: E402,F401
    HEAD, REG, SIG, _compiled, _config, _dump, _line_of, _reg, _write)
from tests.test_lowering_adversarial_6 import _refused_at, _triton  # noqa: E402,F401

STORE = "tl.store(y_ptr + p * 2048 + offs, {})"


def _error_at(tmp_path: Path, text: str, line_text: str, words: str) -> None:
    """``text`` is refused by tle-dump, or by the lowering (Triton's own words on the lowered
    statement included), at the line holding ``line_text``, the message containing ``words``:
    never at another line, never a traceback."""
    path = _write(tmp_path, text)
    line = _line_of(path, line_text)
    rc, out = _dump(path)
    if rc == 1:
        assert f"kernel.py:{line}: error" in out and words in out, out
        return
    assert rc == 0, out
    config = _config(path)
    with pytest.raises(TleError) as e:
        compile_kernel((str(path), "k"), config["signature"], config.get("constexprs", {}))
    assert f"kernel.py:{line}: error" in str(e.value) and words in str(e.value), str(e.value)


# ------------------------------------------------------------------ volatile loads with hints
def test_plain_triton_cannot_compile_a_volatile_load_with_a_cache_hint():
    """The reference: ``tl.load(..., cache_modifier=".cg", volatile=True)`` (".ca", an
    eviction policy, or the hints given positionally) fails in ptxas ("Modifier '.volatile'
    cannot be combined with modifier '.cg'"); ``.cv`` with volatile compiles."""
    import triton
    import triton.language as tl

    @triton.jit
    def vol(x_ptr, y_ptr, C: tl.constexpr):
        offs = tl.arange(0, 64)
        if C == 0:
            u = tl.load(x_ptr + offs, cache_modifier=".cg", volatile=True)
        elif C == 1:
            u = tl.load(x_ptr + offs, eviction_policy="evict_first", volatile=True)
        else:
            u = tl.load(x_ptr + offs, cache_modifier=".cv", volatile=True)
        tl.store(y_ptr + offs, u)

    sig = {"x_ptr": "*i32", "y_ptr": "*i32", "C": "constexpr"}
    for c in (0, 1):
        with pytest.raises(Exception, match="PTXAS"):
            _triton(vol, sig, {"C": c})
    assert "ld.volatile" in _triton(vol, sig, {"C": 2}).asm["ptx"]


@pytest.mark.parametrize("load", [
    'tl.load(y_ptr + p * 2048 + offs, cache_modifier=".cg", volatile=True)',
    'tl.load(y_ptr + p * 2048 + offs, cache_modifier=".ca", volatile=True)',
    'tl.load(y_ptr + p * 2048 + offs, eviction_policy="evict_last", volatile=True)',
    'tl.load(y_ptr + p * 2048 + offs, None, None, None, None, ".cg", "", True)',
])
def test_a_volatile_load_with_a_cache_hint_is_refused_at_its_line(tmp_path, load):
    """tle-dump verified a volatile load with a ``.ca`` / ``.cg`` cache modifier or an eviction
    policy, and the compile failed in ptxas, reported at the kernel's first line ("Triton failed
    to compile the lowered kernel 'k' ...: PTXASError"); plain Triton fails alike. Now refused
    where the kernel is read (partition_rules.check_cache_hints), at the load's line."""
    _refused_at(tmp_path, _reg(f"u = {load}\n" + STORE.format("t + u")), "u = tl.load",
                "a volatile load takes no cache hint")


def test_a_volatile_load_with_cv_compiles(tmp_path):
    """``cache_modifier=".cv"`` with ``volatile=True`` is one ``ld.volatile`` in both."""
    compiled = _compiled(tmp_path, _reg(
        'u = tl.load(y_ptr + p * 2048 + offs, cache_modifier=".cv", volatile=True)\n'
        + STORE.format("t + u")))
    assert "ld.volatile.global" in compiled.asm["ptx"]


# ------------------------------------------------------------------ fp8 constants
from tests.test_lowering_adversarial_5 import FILL as FILL5  # noqa: E402

FP8 = {"float8e4nv": ("fp8e4nv", "f8E4M3FN"), "float8e5": ("fp8e5", "f8E5M2")}


def _fp8_fill(dt: str, value: str) -> str:
    return (FILL5.replace("tl.DT", f"tl.{dt}").replace("VALUE", value).replace("XS", "fp32")
            .replace("YS", FP8[dt][0]))


def _fp8_reg(body: str, dt: str = "float8e4nv") -> str:
    return (REG.replace("CONSUME", textwrap.indent(body, " " * 8)).replace("tl.FDT", f"tl.{dt}")
            .replace("XS", FP8[dt][0]).replace("YS", "fp32"))


def test_plain_triton_stores_a_float_into_fp8_by_rounding_it():
    """The reference: ``tl.store(fp8_ptr, 1000.0)`` casts the fp32 constant with
    ``tt.fp_to_fp ... rounding = rtne``; an integer (1, True, a runtime i32) Triton refuses to
    cast to fp8 ("cannot cast int32 ... to fp8e4nv")."""
    import triton
    import triton.language as tl

    @triton.jit
    def st(y_ptr, M, C: tl.constexpr):
        offs = tl.arange(0, 64)
        if C == 0:
            tl.store(y_ptr + offs, 1000.0)
        else:
            tl.store(y_ptr + offs, M)

    for ptr, elt in FP8.values():
        ttir = _triton(st, {"y_ptr": f"*{ptr}", "M": "i32", "C": "constexpr"}, {"C": 0}).asm["ttir"]
        assert re.search(rf"tt.fp_to_fp %\w+, rounding = rtne : f32 -> {elt}", ttir), ttir
        with pytest.raises(Exception, match="cannot cast int32"):
            _triton(st, {"y_ptr": f"*{ptr}", "M": "i32", "C": "constexpr"}, {"C": 1})


@pytest.mark.parametrize("dt", sorted(FP8))
@pytest.mark.parametrize("value", ["1000.0", "0.1", "-2.5"])
def test_a_float_stored_into_an_fp8_slot_is_rounded_as_tl_store_rounds(tmp_path, dt, value):
    """``tl.store(local_ptr(slot.tile), 1000.0)`` into an fp8 field: tle-dump verified it and
    the lowering splat the constant as ``gl.full(shape, 1000.0, gl.float8e4nv)``, which Gluon
    cannot build ("'GluonOpBuilder' object has no attribute 'get_fp8e4nv'"). Now splat in fp32
    and cast (ir/promotion.py ``number_fits``: no number fits an fp8 type), the rtne
    ``tt.fp_to_fp`` tl.store makes."""
    ttgir = _compiled(tmp_path, _fp8_fill(dt, value)).asm["ttgir"]
    elt = FP8[dt][1]
    assert re.search(rf"tt.fp_to_fp %\w+, rounding = rtne : tensor<32x64xf32, #\w+> -> "
                     rf"tensor<32x64x{elt}", ttgir), ttgir


@pytest.mark.parametrize("value", ["1", "True", "M"])
def test_an_integer_stored_into_an_fp8_slot_is_refused_at_its_line(tmp_path, value):
    """An integer (a constant, True, a runtime i32) stored into an fp8 field: Triton refuses the
    cast ("cannot cast int32 ... to fp8e4nv"), and so does the lowering, at the store's line."""
    _error_at(tmp_path, _fp8_fill("float8e4nv", value), "tl.store(tle.gpu.local_ptr(slot",
              "cannot cast")


@pytest.mark.parametrize("other", ["1000.0", "0.1", "M * 0.5", None])
def test_a_masked_fp8_slot_load_casts_its_float_other(tmp_path, other):
    """``tl.load(local_ptr(slot.tile), mask=m, other=1000.0)`` of an fp8 tile: lowered as
    ``gl.where(m, tile, 1000.0)``, which Gluon cannot build (no fp8 constant). Now ``other``
    is cast to fp8 first (rtne, as tl.load casts it); without ``other`` the fill is 0.0."""
    kw = f", other={other}" if other else ""
    ttgir = _compiled(tmp_path, _fp8_reg(
        f"u = tl.load(tle.gpu.local_ptr(res.slot.tile), mask=offs < M{kw})\n"
        + STORE.format("u.to(tl.float32)"))).asm["ttgir"]
    assert re.search(r"arith.select .* tensor<32x64xf8E4M3FN", ttgir), ttgir
    if other:
        assert re.search(r"tt.fp_to_fp %\w+, rounding = rtne : f32 -> f8E4M3FN", ttgir), ttgir


# ------------------------------------------------------------------ a helper's returned number
HELPERS = {
    "return-100": ("t + hlp()", "def hlp():\n    return 100\n"),
    "return-parameter": ("t * hlp(100)", "def hlp(v):\n    return v\n"),
    "bound-first": ("t + c", "def hlp():\n    return 100\n"),
    "tuple-item": ("t + hlp()[0]", "def hlp():\n    return 100, 2\n"),
}


def _helper_kernel(expr: str, helper: str) -> str:
    body = ("c = hlp()\n" if expr == "t + c" else "") + STORE.format(expr)
    return (_reg(body, "int8", "i32")
            .replace("\nDEFAULT_CONFIG", "\n" + helper + "\n\nDEFAULT_CONFIG"))


def _adds_in_i32(ir: str) -> bool:
    """The int8 tile is widened to i32 and no addition or product is made in i8."""
    return (re.search(r"arith.extsi %\w+ : tensor<32x64xi8(, #\w+)?> to tensor<32x64xi32", ir)
            is not None and re.search(r"arith.(addi|muli) .*: tensor<32x64xi8", ir) is None)


def test_plain_triton_returns_a_helpers_number_as_an_i32_tensor(tmp_path):
    """The reference: a jit function's returned number is a tensor (visit_Return's
    ``to_tensor``), so ``t + hlp()`` of an int8 ``t`` and ``hlp`` returning 100 adds in i32
    (200 stays 200), as ``t + hlp()[0]`` and ``t * hlp(100)`` (a parameter returned) do."""
    import importlib.util

    for name, (expr, helper) in HELPERS.items():
        src = (HEAD.replace("import tle_compiler as tle", "import triton") + "\n@triton.jit\n"
               + helper + "\n\n@triton.jit\ndef ref(x_ptr, y_ptr):\n"
               "    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]\n"
               "    t = tl.load(x_ptr + offs)\n"
               + ("    c = hlp()\n" if expr == "t + c" else "")
               + f"    tl.store(y_ptr + offs, {expr})\n")
        path = tmp_path / f"ref_{name.replace('-', '_')}.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        ttir = _triton(mod.ref, {"x_ptr": "*i8", "y_ptr": "*i32"}).asm["ttir"]
        assert _adds_in_i32(ttir), (name, ttir)


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_a_helpers_returned_number_computes_as_the_i32_tensor_triton_returns(tmp_path, name):
    """``t + hlp()`` with ``hlp`` returning 100, on an int8 tile stored into an int32 output:
    Triton adds in i32 (t + 100 up to 227), and so does the lowered Gluon (it added ``t + 100``
    in i8, which wraps to -29 for t = 127). So too a returned parameter (``hlp(100)``), a name
    bound to the result and a tuple item."""
    expr, helper = HELPERS[name]

    def check(compiled):
        assert _adds_in_i32(compiled.asm["ttgir"]), compiled.asm["ttgir"]

    from tests.test_lowering_adversarial_5 import _computed_or_refused
    _computed_or_refused(tmp_path, _helper_kernel(expr, helper), STORE.format(expr)[:30], check)


# ------------------------------------------------------------------ arithmetic in fp8
def test_plain_triton_does_no_arithmetic_in_fp8():
    """The reference: ``t + t`` (``-t``, ``t < u``, tl.sum) of an fp8e4nv tile computes in fp8
    and fails Triton's backend ("'llvm.fadd' op operand #0 must be floating point ... but got
    'i8'"), ``t * 2.0`` its builder ("no attribute 'get_fp8e4nv'"), ``t.to(tl.float8e5)`` its
    backend (no rounding mode for an fp8 to fp8 conversion); ``t + t.to(tl.float16)`` and
    ``tl.max`` (float32) compile."""
    import triton
    import triton.language as tl

    @triton.jit
    def f8(x_ptr, y_ptr, C: tl.constexpr):
        offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
        t = tl.load(x_ptr + offs)
        if C == 0:
            v = (t + t).to(tl.float32)
        elif C == 1:
            v = (t * 2.0).to(tl.float32)
        elif C == 2:
            v = t.to(tl.float8e5).to(tl.float32)
        elif C == 3:
            v = (t + t.to(tl.float16)).to(tl.float32)
        else:
            v = tl.max(t, 1)[:, None] + tl.zeros([32, 64], tl.float32)
        tl.store(y_ptr + offs, v)

    sig = {"x_ptr": "*fp8e4nv", "y_ptr": "*fp32", "C": "constexpr"}
    for c in (0, 1, 2):
        with pytest.raises(Exception):
            _triton(f8, sig, {"C": c})
    for c in (3, 4):
        assert "tt.fp_to_fp" in _triton(f8, sig, {"C": c}).asm["ttir"]


FP8_REFUSED = [
    ("(t + t).to(tl.float32)", "`+` computed in float8e4nv"),
    ("(t * u).to(tl.float32)", "`*` computed in float8e4nv"),
    ("(t / u).to(tl.float32)", "`/` computed in float8e4nv"),
    ("(t * 2.0).to(tl.float32)", "`*` computed in float8e4nv"),
    ("(t > u).to(tl.float32)", "`>` computed in float8e4nv"),
    ("(t == u).to(tl.float32)", "`==` computed in float8e4nv"),
    ("(-t).to(tl.float32)", "unary `-` computed in float8e4nv"),
    ("tl.fma(t, u, u).to(tl.float32)", "`tl.fma` computed in float8e4nv"),
    ("tl.sum(t, 1)[:, None] + tl.zeros([32, 64], tl.float32)", "tl.sum computed in float8e4nv"),
    ("t.to(tl.float8e5).to(tl.float32)", "a conversion from float8e4nv to float8e5"),
    ("tl.cast(t, tl.float8e5).to(tl.float32)", "a conversion from float8e4nv to float8e5"),
]


@pytest.mark.parametrize("expr,words", FP8_REFUSED)
def test_arithmetic_in_fp8_is_refused_at_its_line(tmp_path, expr, words):
    """``t + t`` of an fp8e4nv slot tile (``-t``, ``t > u``, tl.fma, tl.sum, a conversion to
    float8e5): tle-dump verified it and the compile failed in Triton's backend ("'llvm.fadd' op
    operand #0 must be floating point", "Rounding mode must be specified for convertsions to
    fp8"), reported at the kernel's first line; plain Triton fails alike. Now refused by the
    lowering at the line (ir/promotion.py ``fp8_refusal``, ``fp8_conversion_refusal``)."""
    _refused_at(tmp_path, _fp8_reg("u = tl.where(offs < M, t, t)\n" + STORE.format(expr)),
                STORE.format(expr)[:40], words)


@pytest.mark.parametrize("expr", [
    "(t + u.to(tl.float16)).to(tl.float32)",
    "(t + u.to(tl.float8e5, bitcast=True)).to(tl.float32)",
    "tl.maximum(t, u).to(tl.float32)",
    "tl.abs(t).to(tl.float32)",
    "tl.sum(t, 1, dtype=tl.float32)[:, None] + tl.zeros([32, 64], tl.float32)",
    "tl.max(t, 1)[:, None] + tl.zeros([32, 64], tl.float32)",
    "t.to(tl.float16).to(tl.float8e5).to(tl.float32)",
])
def test_fp8_values_converted_first_compile(tmp_path, expr):
    """The neighbours Triton compiles: an fp8e4nv tile with an fp16 one (fp16), with an
    fp8e5 one (fp16: two fp8 kinds promote to it), tl.maximum / tl.abs / tl.max, a sum in
    float32, a conversion to float8e5 through float16."""
    _compiled(tmp_path, _fp8_reg("u = tl.where(offs < M, t, t)\n" + STORE.format(expr)))


@pytest.mark.parametrize("call", ["tl.dot(a * 2, b)", "tl.dot(a.to(tl.float8e5), b)"])
def test_an_fp8_dot_of_fp8_arithmetic_is_refused_at_its_line(tmp_path, call):
    """A tl.dot of fp8e4nv slot tiles compiles as Triton's (an f8E4M3FN wgmma,
    maxNumImpreciseAcc = 2^30); its A operand ``a * 2`` (Gluon's builder failed at the dot's
    line with "no attribute 'get_fp8e4nv'") or ``a.to(tl.float8e5)`` (the backend's assertion,
    reported at the kernel's first line) is refused at the dot's line."""
    from tests.test_lowering_adversarial_6 import DOT
    text = (DOT.replace("DOTCALL", call).replace("tl.DT", "tl.float8e4nv")
            .replace("SIG", "fp8e4nv").replace("YS", "fp32"))
    _refused_at(tmp_path, text, "acc = tl.dot", "fp8")


def test_an_fp8_dot_compiles_as_tritons(tmp_path):
    """tl.dot of two fp8e4nv slot tiles: one wgmma of f8E4M3FN operands into float32 with
    maxNumImpreciseAcc = 2^30, as plain Triton's."""
    from tests.test_lowering_adversarial_6 import DOT
    text = (DOT.replace("DOTCALL", "tl.dot(a, b)").replace("tl.DT", "tl.float8e4nv")
            .replace("SIG", "fp8e4nv").replace("YS", "fp32"))
    ttgir = _compiled(tmp_path, text).asm["ttgir"]
    assert re.search(r"ttng.warp_group_dot .*maxNumImpreciseAcc = 1073741824 .*"
                     r"memdesc<64x64xf8E4M3FN.* -> tensor<64x64xf32", ttgir), ttgir


# ------------------------------------------------------------------ slot stores of another shape
from tests.test_lowering_adversarial_6 import FILL as FILL6  # noqa: E402


def _fill6(value: str) -> str:
    return FILL6.replace("tl.DT", "tl.int32").replace("VALUE", value).replace("XS", "i32")


@pytest.mark.parametrize("value", [
    "tl.expand_dims(tl.sum(x, 1), 1)",
    "tl.expand_dims(tl.sum(x, 1), axis=1)",
    "tl.expand_dims(tl.sum(x, 0), (0,))",
    "tl.trans(x)",
])
def test_a_slot_store_of_an_expanded_or_transposed_tile_is_refused_where_read(tmp_path, value):
    """``tl.store(local_ptr(slot.tile), tl.expand_dims(tl.sum(x, 1), 1))`` (a [32, 1] tile)
    or ``tl.trans(x)`` (a [64, 32] one) into a [32, 64] field: tle-dump refuses a store of
    another shape where it follows the value's (check bad-store), but did not follow
    tl.expand_dims or tl.trans, verified these, and Gluon refused the lowered store ("source
    shape ... and destination shape [32, 64] must match"). Now followed (frontend/protocol.py
    ``block_dims``): refused by tle-dump at the store."""
    path = _write(tmp_path, _fill6(value))
    rc, out = _dump(path)
    line = _line_of(path, "tl.store(tle.gpu.local_ptr(slot.tile)")
    assert rc == 1 and f"kernel.py:{line}: error" in out and "[bad-store]" in out, out


def test_a_slot_store_of_another_shape_the_frontend_does_not_follow_is_refused_at_its_line(
        tmp_path):
    """``x.T`` (a [64, 32] tile) into a [32, 64] field, a shape tle-dump does not follow: the
    lowering refuses the store at its line in the words of the frontend's check, not with
    Gluon's error."""
    _refused_at(tmp_path, _fill6("x.T"), "tl.store(tle.gpu.local_ptr(slot.tile)",
                "takes the slot's shape only")


@pytest.mark.parametrize("value", ["tl.expand_dims(tl.sum(x, 1), -1) + x",
                                   "tl.trans(tl.reshape(x, 64, 32))"])
def test_a_slot_store_of_an_expanded_tile_of_the_slots_shape_compiles(tmp_path, value):
    """An expanded tile broadcast back to the slot's shape, a transpose of a [64, 32] view:
    stored as they are."""
    ttgir = _compiled(tmp_path, _fill6(value)).asm["ttgir"]
    assert re.search(r"ttg.local_store %\w+, %\w+ : tensor<32x64xi32", ttgir), ttgir


# ------------------------------------------------------------------ constexpr dtypes and floats
DTYPE_PARAM = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N, DT: tl.constexpr, S: tl.constexpr):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 32, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N, DT, S))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile),
                 tl.load(x_ptr + p * 2048 + tl.arange(0, 32)[:, None] * 64
                         + tl.arange(0, 64)[None, :]))
        w.commit(p)


def consume(kv, y_ptr, N, DT: tl.constexpr, S: tl.constexpr):
    r = kv.reader()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
BODY
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}}
'''


def _dtype_param(tmp_path: Path, body: str, dt, s, ys: str):
    """Verify the DTYPE_PARAM kernel with ``body`` and compile it with DT = ``dt`` (a tl dtype)
    and S = ``s``, storing to a ``ys`` pointer."""
    path = _write(tmp_path, DTYPE_PARAM.replace("BODY", textwrap.indent(body, " " * 8)))
    rc, out = _dump(path)
    assert rc == 0 and "k: verified for every value" in out, out
    sig = {"x_ptr": "*fp32", "y_ptr": f"*{ys}", "N": "i32", "DT": "constexpr", "S": "constexpr"}
    return path, lambda: compile_kernel((str(path), "k"), sig, {"DT": dt, "S": s})


@pytest.mark.parametrize("body,dt,ys,want", [
    ("t.to(DT)", "float16", "fp16", r"arith.truncf %\w+ : tensor<32x64xf32, #\w+> to "
                                    r"tensor<32x64xf16"),
    ("t.to(DT, bitcast=True)", "int32", "i32", r"tt.bitcast %\w+ : tensor<32x64xf32, #\w+> -> "
                                               r"tensor<32x64xi32"),
    ("tl.full([32, 64], S, DT)", "int8", "i8", r"arith.constant dense<44> : tensor<32x64xi8"),
    ("tl.zeros([32, 64], DT) + t", "bfloat16", "fp32", r"arith.addf .*tensor<32x64xf32"),
    ("t.to(DT) + S", "int8", "i8", r"arith.addi .*tensor<32x64xi8"),
])
def test_a_dtype_given_as_a_constexpr_is_a_dtype(tmp_path, body, dt, ys, want):
    """A partition given a constexpr DT that a launch binds to a dtype (``DT=tl.float16``):
    the lowering spelled it ``DT: gl.constexpr = triton.language.float16`` (Gluon: "NameError:
    name 'triton' is not defined", at the kernel's first line), and ``tl.zeros(shape, DT)`` or
    ``t.to(DT) + S`` failed with an AttributeError traceback ('dtype' object has no attribute
    'startswith'). Now the dtype it names (translate.py ``constant``, walks.py ``bindings``),
    computed as Triton computes ``t.to(tl.float16)``."""
    import triton.language as tl

    _, compile_ = _dtype_param(tmp_path, STORE.format(body), getattr(tl, dt), 300 if dt == "int8"
                               and "full" in body else 1, ys)
    ttgir = compile_().asm["ttgir"]
    assert re.search(want, ttgir), ttgir


def test_an_if_on_a_float_constexpr_is_refused_at_its_line(tmp_path):
    """``if S:`` with S = 0.0: Triton refuses an ``if`` of a float ("`if` conditionals can only
    accept values of type {NoneType, bool, int}"); the lowering reported it at the kernel's
    first line as the warp_specialize call's error, since the partition's error was an
    UnsupportedLanguageConstruct, a subclass of CompilationError that compile.py's
    ``_refused_gluon_line`` did not look for. Now at the ``if``'s line, with Triton's words."""
    import triton.language as tl

    path, compile_ = _dtype_param(tmp_path, "if S:\n    " + STORE.format("t"), tl.int32, 0.0,
                                  "fp32")
    with pytest.raises(TleError) as e:
        compile_()
    line = _line_of(path, "if S:")
    assert f"kernel.py:{line}: error" in str(e.value) and "`if` conditionals" in str(e.value), \
        str(e.value)


# ------------------------------------------------------------------ kernel-body loads with hints
@pytest.mark.parametrize("load,words", [
    ('tl.load(x_ptr + 1, cache_modifier=".cg", volatile=True)',
     "a volatile load takes no cache hint"),
    ('tl.load(x_ptr + 1, cache_modifier=".cs")', "Triton 3.6 refuses this cache modifier"),
    ('tl.load(x_ptr + 1, eviction_policy="evict_first", cache_modifier=".cg")',
     "no instruction takes both"),
])
def test_a_kernel_body_load_with_hints_ptxas_refuses_is_refused_at_its_line(tmp_path, load,
                                                                           words):
    """A load in the kernel body (before warp_specialize, its value handed to a partition)
    with the hints a partition's load is refused for (check_cache_hints: a volatile load with
    ``.cg``, a load's ``.cs``, a cache modifier with an eviction policy): tle-dump verified it
    (the check walked the partitions only) and the compile failed in ptxas at the kernel's
    first line or in Triton's frontend. Now the kernel body is checked too (build.py)."""
    text = (_reg(STORE.format("t + L"))
            .replace("    tle.assume(N >= 0)\n", f"    tle.assume(N >= 0)\n    L = {load}\n", 1)
            .replace("(consume, (kv, y_ptr, N, M))", "(consume, (kv, y_ptr, N, M, L))")
            .replace("def consume(kv, y_ptr, N, M):", "def consume(kv, y_ptr, N, M, L):"))
    path = _write(tmp_path, text)
    rc, out = _dump(path)
    line = _line_of(path, "L = tl.load")
    assert rc == 1 and f"kernel.py:{line}: error" in out and words in out, out


# tl.xor_sum of a float is refused where the kernel is read since round 26 (the frontend's
# operand_dtype_rule, at the same line); the other two reach the lowering's library call
@pytest.mark.parametrize("fn,words", [("tl.xor_sum", "tl.xor_sum takes integer operands"),
                                      ("tl.reduce_or", "only supported for integers"),
                                      ("tl.cdiv", "unexpected type fp32")])
def test_an_error_inside_a_triton_library_function_is_reported_at_the_call(tmp_path, fn, words):
    """``tl.xor_sum(a, 1)`` / ``tl.reduce_or`` / ``tl.cdiv`` of a float tile: Triton refuses it
    inside its standard library ("xor_sum only supported for integers"). The
    lowering reported it at the kernel's first line as the warp_specialize call's error: the
    partition's CompilationError carries no message of its own, and the innermost one names
    the library function. Now the innermost error raised in a function of the generated
    module gives the line, the innermost message the words (compile.py
    ``_refused_gluon_line``)."""
    if fn == "tl.cdiv":  # of a float tile: Triton's cdiv floor-divides, integers only
        body = f"v = {fn}(t.to(tl.float32), 3)\n" + STORE.format("v")
    else:
        body = f"v = {fn}(t.to(tl.float32), 1)\ntl.store(y_ptr + p * 32 + tl.arange(0, 32), v)"
    _error_at(tmp_path, _reg(body), f"v = {fn}", words)


# ------------------------------------------------------------------ integer and bool arithmetic
REF_BODY = '''
import triton
import triton.language as tl


@triton.jit
def ref(x_ptr, y_ptr, N, M):
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    p = 0
    t = tl.load(x_ptr + offs)
    tl.store(y_ptr + p * 2048 + offs, EXPR)
'''

ARITHMETIC = [  # expr, tile dtype, output pointer
    ("t // -3", "int32", "i32"), ("t % -3", "int32", "i32"), ("t // 3", "uint8", "u8"),
    ("t >> 40", "int32", "i32"), ("t << 33", "int32", "i32"), ("t >> 3", "uint8", "u8"),
    ("(t < -1).to(tl.int32)", "uint8", "i32"), ("t.to(tl.uint32) > -1", "int32", "i8"),
    ("(t > 0) + (t > 1)", "int8", "i8"), ("(t > 0) - (t > 1)", "int8", "i8"),
    ("-(t > 0)", "int8", "i8"), ("(t > 0) * 3", "int8", "i32"), ("(t > 0) << 3", "int8", "i32"),
    ("tl.minimum(t, 200)", "uint8", "u8"), ("t.to(tl.uint16) + t.to(tl.int8)", "int32", "i32"),
    ("t + M // -3", "int32", "i32"), ("t + ((M > 0) + (M > 1))", "int8", "i8"),
    ("tl.where(M > 0, t, 1.5)", "int32", "fp32"), ("t.to(tl.int8)", "float32", "i8"),
    ("t.to(tl.float8e4nv).to(tl.float32)", "float32", "fp32"),
    ("t.to(tl.float16, fp_downcast_rounding='rtz')", "float32", "fp16"),
]


def _tile_ops(ir: str) -> list[tuple[str, str]]:
    """The (operation, element type) of each operation producing a [32, 64] tensor of ``ir``,
    in order, but for the offsets' (named ``%offs``), the loads, splats, broadcasts and
    pointer arithmetic, which differ between a partition's tile and plain Triton's load."""
    out = []
    for line in ir.splitlines():
        m = re.search(r"(%[\w.]+) = ([a-z_]+\.\w+) .*tensor<32x64x(\w+)", line)
        if m and not m.group(1).startswith("%offs") and m.group(2) not in (
                "tt.splat", "tt.broadcast", "tt.addptr", "tt.load", "ttg.local_load",
                "ttg.convert_layout", "tt.expand_dims", "arith.constant"):
            out.append((m.group(2), m.group(3)))
    return out


@pytest.mark.parametrize("expr,dt,ys", ARITHMETIC)
def test_integer_bool_and_cast_arithmetic_lowers_as_triton_computes(tmp_path, expr, dt, ys):
    """Division and modulo by negative numbers (C's truncation) and of unsigned types, shifts
    by the bit width or more, comparisons of unsigned tiles with negative numbers, i1
    arithmetic, mixed signedness, runtime scalars with C division, tl.where with a scalar
    condition, float-to-int and fp8 casts, a downcast rounding mode: the lowered TTGIR makes
    the same operations in the same types as plain Triton's TTIR of the same source."""
    import importlib.util

    path = tmp_path / "ref_arith.py"
    path.write_text(REF_BODY.replace("EXPR", expr))
    spec = importlib.util.spec_from_file_location("ref_arith", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = {"x_ptr": f"*{SIG[dt]}", "y_ptr": f"*{ys}", "N": "i32", "M": "i32"}
    want = _tile_ops(_triton(mod.ref, sig).asm["ttir"])
    (tmp_path / "tle").mkdir()
    got = _tile_ops(_compiled(tmp_path / "tle", _reg(STORE.format(expr), dt, ys)).asm["ttgir"])
    assert got == want, (got, want)


def test_a_helpers_number_where_triton_takes_constexprs_is_refused(tmp_path):
    """``tl.arange(0, hlp())`` with ``hlp`` returning 64: Triton 3.6 returns the number as a
    tensor and refuses it ("arange's arguments must be of type tl.constexpr"); the call is named
    before its arguments are built, so it is refused at the line as a name bound to 64 is.
    ``range(hlp())``, which Triton compiles, stays verified."""
    import triton
    import triton.language as tl

    @triton.jit
    def hlp():
        return 64

    @triton.jit
    def ref(y_ptr):
        tl.store(y_ptr + tl.arange(0, hlp()), tl.zeros([64], tl.int32))

    with pytest.raises(Exception, match="arange's arguments must be of type tl.constexpr"):
        _triton(ref, {"y_ptr": "*i32"})
    helper = "def hlp():\n    return 64\n"
    base = _helper_kernel("t + 0", helper)
    store = "tl.store(y_ptr + p * 2048 + offs, t + 0)"
    bad = base.replace(store, "tl.store(y_ptr + p * 64 + tl.arange(0, hlp()), tl.sum(t, 0))")
    code, out = _dump(_write(tmp_path, bad), "-q")
    assert code == 1 and "`hlp()` in `tl.arange(0, hlp())`" in out, out
    ok = base.replace(store, "for i in range(hlp()):\n            "
                             "tl.store(y_ptr + p * 2048 + offs, t + i)")
    code, out = _dump(_write(tmp_path, ok), "-q")
    assert code == 0, out
