"""What is verified is what is lowered, fifth round: dtypes.

Tried (each kernel a small TLE source that tle-dump verifies; the lowered Gluon compiled for
sm_90a with compile_kernel, the reading a launch makes, and compared with what plain Triton 3.6
computes for the same source, read on its TTIR where the reference matters): integer tiles of
int8 / uint8 / int32 mixed with Python ints and floats, names bound to constants, kernel-body
constants handed to partitions, scalar and masked slot stores and loads of another type, tensors
of two dtypes, implicit broadcasting of a lower-rank operand, gathers of another element type,
``tl.math.*`` spellings, cache hints of stores, atomics with ``sem=`` / ``scope=``,
``tle.gpu.scale_rows`` factors of other dtypes, reshapes / transposes / reductions of 3-D views,
``.shape`` / ``.dtype`` of tensors, names that clash with the generated module's, tl.dot operand
and accumulator types, folded names (i32 wraps, fp32 rounding, C's tl.cdiv, i1 arithmetic) in
conditions and indices of pipe events, directly, through kernel-body bindings and tuple items;
then the fixes of this round (9817bfe, 8b932bd) with other spellings of the same constructs.

Wrong and fixed in this round (9817bfe, 8b932bd, 53914c6, 7f4029d, a3b80f0; the two tensor-
promotion twins by 2d021a9):
* test_a_scalar_slot_store_casts_as_tl_store_does: ``tl.store(local_ptr(slot.f), 2.7)`` into an
  int32 field, ``-1`` into a uint8 one: tl.store casts (2, 255); the lowering splats with
  ``gl.full(shape, 2.7, gl.int32)``, which Triton refuses (``get_int32(): incompatible function
  arguments``) (translate.py ``store``, the scalar splat).
* test_a_masked_slot_load_casts_other_first: ``tl.load(local_ptr(slot.tile), mask=m, other=1.5)``
  on an int32 tile is lowered ``gl.where(m, tile, 1.5).to(gl.int32)``: the tile goes through fp32
  (sitofp / fptosi), so unmasked values above 2^24 change; ``other=-1`` on uint8 and ``other=300``
  on int8 (tl.load casts them: 255, 44) fail Triton's compile (translate.py ``_masked_tile``: cast
  ``other`` to the tile's dtype before the where).
* test_a_slot_store_of_a_promoted_tensor_converts[sum-of-int8]: a tl.sum of an int8 tile plus an
  int8 tile stored into an int8 slot: the translator types the sum as its input (int8; Triton sums
  in int32), so the store is not converted and Gluon refuses it (translate.py ``_reduce``). Its
  bf16 + fp32 and int8 + int32 twins, found here with the same refusal (an elementwise result typed
  as its first operand), pass since 2d021a9 (lowering/promotion.py) and stay as plain tests.
* test_a_lower_rank_operand_broadcasts_as_in_triton: ``t + tl.arange(0, 64)`` on a [32, 64] tile, a
  1-D mask of a 2-D store or load, a 1-D mask of a masked slot load: Triton prepends the missing
  axes (broadcast_impl_value), Gluon refuses ("Cannot broadcast, rank mismatch") (translate.py
  ``_elementwise``, ``load``, ``store``, ``_masked_tile``, more_ops.py ``atomic``: expand the
  operand).
* test_a_gather_of_another_element_type_converts: an int32 (bf16, fp16) pointer handed to the
  writer in a tuple, loaded and stored whole into an fp32 (fp32, bf16) slot field: lowered as a
  cp.async gather, which copies the bytes (3 becomes 4.2e-45; 2-byte elements land in 4-byte ones)
  where tl.store converts; the frontend's bad-store check refuses the same store with the pointer
  passed alone, but does not see a tuple item's type (translate.py ``_cp_async_form`` checks the
  field's width, not the pointer's element type; frontend bad-store check).
* test_tl_math_spellings_lower_as_their_tl_names: ``tl.math.fma`` / ``umulhi`` / ``div_rn`` /
  ``sqrt_rn`` / ``fdiv`` (Triton's own tl.fma ...), verified by tle-dump, refused by the lowering
  as "`tl.fma` is not supported", though tl.fma is (translate.py ``call_builtin`` looks
  ``more_ops.HANDLED`` up by the full name).
* test_an_accumulator_store_keeps_its_cache_hint: ``tl.store(ptrs, acc, cache_modifier=".cs")`` (or
  an eviction_policy) of a wgmma accumulator takes the 16-byte store helper, whose inline PTX drops
  the hint (translate.py ``_acc_store`` does not look at the cache keywords).
* test_scale_rows_converts_an_integer_factor: ``tle.gpu.scale_rows(acc, f)`` of a wgmma accumulator
  with an int32 ``f``: the lazy multiply's inline asm takes the int32 bits as f32 operands (a
  factor of 1 multiplies by 1.4e-45), where ``acc * f[:, None]`` converts f (lowering/lazy_scale.py
  ``pack_for`` checks x's dtype, not the factor's; translate.py ``_scale_rows``).
* test_scale_rows_of_a_16_bit_factor_does_not_abort: the same with a bf16 / fp16 factor: LLVM
  aborts the whole process while compiling the lowered kernel ("number of input constraints does
  not match number of parameters", UNREACHABLE; same place).
* test_shape_and_dtype_of_a_register_tensor_lower[to]: ``(t * 2.5).to(t.dtype)`` of a register
  tile, verified by tle-dump, was refused by the lowering as "`.dtype` of something that is not a
  pipe slot" (translate.py, the attribute read of slots only).
* test_a_dot_triton_refuses_is_refused_at_its_line[uint8-operands, int8-into-float32]: tl.dot of
  uint8 slot tiles (Triton: "only int8 supported!") compiled as a signed s8 wgmma (200 read as
  -56); an int8 dot into a float32 accumulator reached Triton's backend (an assertion, "WGMMA type
  or shape is not supported", and an MLIR dump, reported at the kernel's first line) (translate.py
  ``dot``).
* test_a_name_bound_to_an_int_computes_as_the_i32_tensor_triton_makes[product-wraps, shift-wraps,
  fp32-compare, to-of-product, cdiv-negative, bool-plus-bool] (8b932bd, refused at the use now):
  ``b = 65536; t + b * b`` and ``b = 3; t + (b << 30)`` (i32 wraps in Triton) folded to Python's
  2^32 / 3 * 2^30, which Gluon refused ("Scalar 4294967296 is out of range for type int32"); ``t *
  0 + (b > 16777216.5)`` with b = 16777217 stored 1 (Python's comparison) where Triton's fp32 one
  stores 0; ``(b * 1.0).to(tl.int32)`` folded to a float literal, which has no ``.to``; ``b = -4; t
  + tl.cdiv(b, 3)`` stored t - 1 (Python's floor) where Triton's C division gives t + 0; ``b =
  True; t + (b + b)`` t + 2 where Triton's i1 sum is 0 (frontend/local_tensors.py
  ``folded_arithmetic``).
* test_a_folded_condition_around_events_is_read_as_triton_computes: ``b = 16777217`` then ``if b >
  16777216.5:`` (or ``b * 1.0 > 16777216``; ``b = 100000001``, ``b * 1.0 != 100000000``; ``b = 3``,
  ``b * 0.1 != 0.3``, ``(b << 30) > 0``; ``b = 65536``, ``b * b > 0``; ``b = -4``, ``tl.cdiv(b, 3)
  != 0``; ``b = True``, ``b + b == 2``, ``~b``, ``-b == -1``) around a writer's acquire and commit
  (refused at the use since 8b932bd): the frontend folds b and evaluates the condition with
  Python's doubles and unbounded ints (True), verifies and lowers the events unconditionally;
  Triton holds b as an i32 tensor and computes in fp32 / i32 (False: no commit, the reader waits
  forever); the i32 wrap is refused for names bound twice (docs/language.md) but not in a folded
  condition (frontend folding of a folded name's arithmetic, frontend/folding.py /
  local_tensors.py; a ``b = 0.1`` name is refused there as data-dependent).
* test_a_folded_event_index_is_read_as_triton_computes: ``b = -4`` then ``w.acquire(p + 1 +
  tl.cdiv(b, 3))`` and its commit (or ``b = True``, ``p + 2 - (b + b)``): verified as index p
  (Python's -1 / 2) and lowered as ``gl.cdiv(-4, 3)`` on constexprs (the same p); Triton's i32 / i1
  tensors give p + 1 / p + 2, so the reader's wait(0) never completes (the same fold as above, in
  the protocol view: frontend/folding.py). Refused at the use since 8b932bd.
* test_shape_and_dtype_of_a_register_tensor_lower[arange, add] (7f4029d): ``tl.arange(0,
  t.shape[1])``, ``t + t.shape[0]``: was refused by the lowering as "`.shape` of something that is
  not a pipe slot"; since 02a8059 the frontend refuses it as "`t.shape` is no tuple (Triton 3.6
  refuses an integer index of a tensor ...)", though Triton reads a tensor's .shape as a tuple of
  constexprs and compiles both (frontend/protocol.py ``_e_Subscript``).
* test_a_dot_triton_refuses_is_refused_at_its_line[bf16-into-bf16, fp16-into-fp16, fp32-into-fp16,
  bf16-times-fp16, fp64-into-fp64] (53914c6): a bf16 dot into a bf16 accumulator, an fp32-operand
  dot into fp16, a bf16 x fp16 dot and an fp64 dot into fp64 (Triton refuses each) still reach
  Triton's backend ("LLVM ERROR: Unsupported mma result type found" or the WGMMA assertion,
  reported at the kernel's first line); an fp16 dot into an fp16 accumulator (Triton:
  AssertionError, out_dtype is float32) compiles (translate.py ``dot``: the float accumulator and
  operand types are not checked).
* test_a_load_whose_mask_outranks_its_pointer_broadcasts_or_is_refused (7f4029d: refused at the
  line): ``tl.load(y_ptr + tl.arange(0, 64), mask=offs < M, other=0)`` with a [32, 64] mask (Triton
  broadcasts the [64] pointers and loads a [32, 64] tile): the lowering fails with an
  AssertionError traceback in the layout solver (layouts.py ``layout``, depth 16); with a [32, 1]
  mask Gluon refuses the lowered load ("tensor shape and layout rank mismatch"); a 2-D ``other`` of
  a 1-D pointer and mask (which Triton refuses) is the same traceback (translate.py ``load`` types
  the result by the pointer's shape and layout variable; the rank broadcasting of 9817bfe covers
  operands of elementwise ops, not a load's pointer).
* test_a_libdevice_call_is_refused_in_its_own_name (a3b80f0): ``tl.extra.cuda.libdevice.pow(x,
  2.0)``, verified by tle-dump, is refused by the lowering as "`tl.pow` is not supported by the
  lowering", a name the kernel never wrote (translate.py ``call_builtin`` keeps the last component
  of the dotted name); it should be lowered or refused naming the call.
* test_a_gather_through_another_spelling_of_the_pointer_converts (fixed since): the int32 pointer
  of the tuple gather reached through a nested tuple (``xa[0][0]``), ``tl.where(c, xa[0], xa[1])``,
  a conditional expression or ``tl.multiple_of(xa[0], 16)``: still a cp.async of its int32 bits
  into the fp32 field after 9817bfe, whose pointee check follows only a tuple item (translate.py
  ``_cp_async_form``: an unknown element type should not gather).

Left as strict xfails by this round, FIXED since (the frontend reads such a name as
``to_tensor(value)`` in the kernel IR, which folding and the protocol view read through and the
lowering spells ``gl.to_tensor(value)``, the scalar tensor Triton makes: frontend/build.py
``Builder.tensor_number``; tests/test_plain_assigned_numbers.py holds the edge cases):
* test_a_name_bound_to_an_int_computes_as_the_i32_tensor_triton_makes[add, mul, helper-argument,
  where-branch, full-value, to-of-quotient, constexpr-call, u32-name, i64-name]: ``b = 100`` then
  ``t + b`` on an int8 tile: Triton makes ``b`` an i32 tensor, so the sum is i32 (200); the
  frontend folds ``b`` to the literal and the lowered Gluon adds in i8 (wraps to -56); so too ``t *
  b``, a helper given ``b`` and ``b = tl.constexpr(100)`` (a plain assignment too); ``tl.where(c,
  t, z)`` / ``tl.full(shape, b, tl.uint8)`` with z = 1000 / b = -1, ``t + b`` with b = 3000000000
  (a u32 tensor in Triton) or 2**40 (i64), which Gluon refuses (out of the tile's range;
  get_uint8(-1)); ``b = 7; (b / 2).to(tl.int32)`` folds to ``(7 / 2).to(...)``, a float with no
  ``.to`` (Python's 3.5 is fp32's, so 8b932bd's check lets it through) (frontend/build.py's fold of
  a name bound to a constant, which translate.py spells as the literal; the promotion of an i32
  tensor is lost even where the value agrees).
* test_a_kernel_body_constant_handed_to_a_partition_is_a_tensor: ``B = 0.1`` / ``I = 100`` in the
  kernel body passed to a partition become ``gl.constexpr``s, so a bf16 tile times B is computed in
  bf16 (Triton: fp32) and an int8 tile plus I in i8 (Triton: i32) (lowering/walks.py ``bindings``,
  the ``const`` branch).
* test_a_kernel_body_name_in_a_condition_around_events_is_read_as_triton_computes: ``B = 65536``
  (``True``, ``16777217``) in the kernel body, ``if B * B > 0:`` (``~B``, ``B > 16777216.5``)
  around a partition's events: B reaches the partition as a constexpr, so the verifier and the
  Gluon both compute Python's True where Triton's i32 / i1 / fp32 arithmetic on the tensor the
  assignment made is False (lowering/walks.py ``bindings`` and the frontend's kernel-body fold).
  FIXED by a7f303a (refused at the condition's line); a plain test now.
* test_a_folded_tuple_item_around_events_is_read_as_triton_computes: ``b = 65536`` handed to a
  helper as ``(b, 1)`` (or ``pr = (65536, 1)``; ``(True, 1)`` with ``~b[0]``; ``(16777217,)`` with
  ``b[0] > 16777216.5``; ``(-4, 0)`` with ``tl.cdiv(b[0], 3) != 0``) whose condition guards the
  writer's events: verified with Python's values, where Triton holds the tuple items as i32 / i1
  tensors (the condition is False, the reader hangs); 8b932bd's refusal of a folded name's
  arithmetic does not follow a tuple item (frontend/local_tensors.py ``folded_arithmetic``, the
  subscript of a folded tuple).

Found right (no case here): a name bound to a float (``s = 0.1``, kept a name, promotes as in
Triton); scalar slot stores of ints out of range (300 into int8: 44, 2**31 into int32, -200,
True), a runtime fp32 / i32 scalar into int / fp16 fields; loads of int8 tiles converted
through tl.sum (i32, as Triton); tuple swaps ``a, b = b, a + b`` and tuples carried through
``range`` / ``tl.static_range`` / ``while`` loops; a [32, 1] mask of a cp.async gather; u32
arguments (refused by tle-dump); an atomic_add of 1.5 into int32 (1, with sem= / scope=);
reshapes to 3-D and reductions of them, tl.trans with dims, expand_dims / broadcast_to, reductions
with axis None; kernel-body reductions and loads handed to partitions as scalars (a kernel-body
tensor refused at the binding); locals named gl / mbarrier / warpgroup_mma ... (refused);
conditions on floats around events (refused); helper arguments given a literal (a constexpr in
Triton too); ``u8 > b`` with b = -1 (i32 compare, as Triton); method calls ``t.sum(1)`` ...
(refused by the frontend); after 9817bfe, rank broadcasts into 3-D views, runtime scalars of
other types stored into slots, tensor / bool ``other=`` of masked slot loads, a uint8 operand
reached by ``.to`` or a register load (refused). Refused at the line, which the rule allows
(noted, no case): ``x[:, None, None]`` and ``x[:, :]`` by the lowering ("expand exactly one
dimension per subscript"), though Triton takes both; ``(b * 2).to(tl.int8)`` of a name bound to
7 by tle-dump, whose message says Triton refuses it too (it does not: the name is a tensor).
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.cli.dump import main as tle_dump  # noqa: E402
from tle_compiler.diagnostics import TleError, TleVerificationWarning  # noqa: E402
from tle_compiler.lowering.compile import compile_kernel  # noqa: E402

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

HEAD = '''
import triton.language as tl
import tle_compiler as tle

'''

# A writer filling [32, 64] tiles of FDT, a reader whose loop body is the case's (``t`` the tile
# loaded from the slot).
REG = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 32, 64], tl.FDT))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N, M))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile),
                 tl.load(x_ptr + p * 2048 + tl.arange(0, 32)[:, None] * 64
                         + tl.arange(0, 64)[None, :]))
        w.commit(p)


def consume(kv, y_ptr, N, M):
    r = kv.reader()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
CONSUME
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*XS", "y_ptr": "*YS", "N": "i32", "M": "i32"}}
'''

# A writer storing VALUE into a [32, 64] slot of DT; the reader copies the slot out.
FILL = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 32, 64], tl.DT))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N, M)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N, M):
    w = kv.writer()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), VALUE)
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 2048 + offs, tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*XS", "y_ptr": "*YS", "N": "i32", "M": "i32"}}
'''

NEVER = r"(?!)"  # a pattern that matches nothing

SIG = {"int8": "i8", "uint8": "u8", "int16": "i16", "int32": "i32", "bfloat16": "bf16",
       "float16": "fp16", "float32": "fp32"}


def _reg(body: str, dt: str = "int32", ys: str = "") -> str:
    return (REG.replace("CONSUME", textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 8))
            .replace("tl.FDT", f"tl.{dt}").replace("XS", SIG[dt]).replace("YS", ys or SIG[dt]))


def _fill(dt: str, value: str, xs: str = "") -> str:
    return (FILL.replace("tl.DT", f"tl.{dt}").replace("VALUE", value)
            .replace("XS", xs or SIG[dt]).replace("YS", SIG[dt]))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(text)
    return path


def _dump(path: Path, *argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = tle_dump([*argv, str(path)])
    return rc, out.getvalue() + err.getvalue()


def _config(path: Path) -> dict:
    return ast.literal_eval(path.read_text().split("DEFAULT_CONFIG =", 1)[1].strip())


def _line_of(path: Path, text: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if text in t)


def _compiled(tmp_path: Path, text: str):
    """The kernel ``k`` of ``text``, verified by tle-dump for every value and compiled for sm_90a
    (the error of the compile, a TleError, propagates)."""
    path = _write(tmp_path, text)
    rc, out = _dump(path)
    assert rc == 0 and "k: verified for every value" in out, out
    config = _config(path)
    compiled = compile_kernel((str(path), "k"), config["signature"], config.get("constexprs", {}))
    assert ".target sm_90a" in compiled.asm["ptx"] and compiled.asm["cubin"]
    return compiled


def _computed_or_refused(tmp_path: Path, text: str, line_text: str, check=None) -> None:
    """``text`` is verified and either compiles for sm_90a, ``check(compiled)`` holding (what
    Triton computes), or tle-dump / the lowering refuses it at the line holding ``line_text``
    (the project's rule: compute what Triton computes or refuse the construct at its line). A
    refusal elsewhere, or Triton's own error on the lowered kernel, is neither."""
    path = _write(tmp_path, text)
    line = _line_of(path, line_text)
    rc, out = _dump(path)
    if rc == 1:
        assert f"kernel.py:{line}: error" in out, out
        return
    assert rc == 0 and "k: verified for every value" in out, out
    config = _config(path)
    try:
        compiled = compile_kernel((str(path), "k"), config["signature"],
                                  config.get("constexprs", {}))
    except TleError as e:
        assert f"kernel.py:{line}: error: lowering" in str(e), str(e)
        return
    assert ".target sm_90a" in compiled.asm["ptx"] and compiled.asm["cubin"]
    if check is not None:
        check(compiled)


def _promoted_or_refused(tmp_path: Path, text: str, line_text: str, bad: str, good: str) -> None:
    """:func:`_computed_or_refused` whose check is that ``bad`` does not match the TTGIR and
    ``good`` does."""
    def check(compiled):
        ttgir = compiled.asm["ttgir"]
        assert not re.search(bad, ttgir, re.M), ttgir
        assert re.search(good, ttgir), ttgir

    _computed_or_refused(tmp_path, text, line_text, check)


def _triton_ttir(fn, signature: dict) -> str:
    """Plain Triton's TTIR of ``fn`` (a @triton.jit function) for sm_90a: the reference."""
    import triton
    from triton.backends.compiler import GPUTarget

    return triton.compile(triton.compiler.ASTSource(fn, signature, {}),
                          target=GPUTarget("cuda", 90, 32)).asm["ttir"]


# ------------------------------------------------------------------ names bound to constants
def test_plain_triton_promotes_a_narrow_tile_by_a_name_bound_to_an_int():
    """The reference: ``b = 100`` makes b an i32 tensor (visit_Assign), so ``t + b`` of an int8
    tile is extended and added in i32; the literal ``t + 100`` stays i8. A kernel-body ``B = 0.1``
    handed to a jit function is an fp32 tensor there: bf16 * B is fp32."""
    import triton
    import triton.language as tl

    @triton.jit
    def named(x_ptr, y_ptr):
        offs = tl.arange(0, 64)
        t = tl.load(x_ptr + offs)
        b = 100
        tl.store(y_ptr + offs, t + b)

    @triton.jit
    def literal(x_ptr, y_ptr):
        offs = tl.arange(0, 64)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs) + 100)

    sig = {"x_ptr": "*i8", "y_ptr": "*i32"}
    assert re.search(r"arith\.addi .*: tensor<64xi32>", _triton_ttir(named, sig))
    assert re.search(r"arith\.addi .*: tensor<64xi8>", _triton_ttir(literal, sig))

    @triton.jit
    def part(x_ptr, y_ptr, B):
        t = tl.load(x_ptr + tl.arange(0, 64))
        tl.store(y_ptr + tl.arange(0, 64), t * B)

    @triton.jit
    def body(x_ptr, y_ptr):
        B = 0.1
        part(x_ptr, y_ptr, B)

    ttir = _triton_ttir(body, {"x_ptr": "*bf16", "y_ptr": "*fp32"})
    assert re.search(r"arith\.mulf .*: tensor<64xf32>", ttir), ttir


def _fold(dt, bind, stored, bad, good, id_):
    """A case of test_a_name_bound_to_an_int_computes_as_the_i32_tensor_triton_makes: ``bind``
    then ``tl.store(y_ptr + p * 2048 + offs, stored)`` on a tile of ``dt``."""
    return pytest.param(dt, f"{bind}\ntl.store(y_ptr + p * 2048 + offs, {stored})", bad, good,
                        id=id_)


ADDI8, ADDI32 = r"arith\.addi .*: tensor<32x64xi8", r"arith\.addi .*: tensor<32x64xi32"


@pytest.mark.parametrize("dt,body,bad,good", [
    _fold("int8", "b = 100", "t + b", ADDI8, ADDI32, "add"),
    _fold("int8", "b = 3", "t * b", r"arith\.muli .*: tensor<32x64xi8",
          r"arith\.muli .*: tensor<32x64xi32", "mul"),
    _fold("int8", "b = 100", "add(t, b)", ADDI8, ADDI32, "helper-argument"),
    _fold("int8", "z = 1000", "tl.where(t > 0, t, z)", r"arith\.select .*tensor<32x64xi8",
          r"arith\.select .*tensor<32x64xi32", "where-branch"),
    _fold("uint8", "b = -1", "t + tl.full([32, 64], b, tl.uint8)", NEVER,
          r"dense<-1> : tensor<32x64xi8", "full-value"),
    # i32 arithmetic that wraps in Triton (0, -2^30), Python's big numbers folded in (refused
    # since 8b932bd)
    _fold("int32", "b = 65536", "t + b * b", NEVER, "", "product-wraps"),
    _fold("int32", "b = 3", "t + (b << 30)", NEVER, "", "shift-wraps"),
    # an fp32 comparison (False in Triton) folded with Python's doubles (True)
    _fold("int32", "b = 16777217", "t * 0 + (b > 16777216.5)", r"dense<1> : tensor<32x64xi32",
          "", "fp32-compare"),
    # a tensor's .to of a folded expression: `(16777217 * 1.0).to(...)`, a float has no .to
    _fold("int32", "b = 16777217", "t + (b * 1.0).to(tl.int32)", NEVER, "", "to-of-product"),
    _fold("int32", "b = 7", "t + (b / 2).to(tl.int32)", NEVER, "", "to-of-quotient"),
    # Triton's tl.cdiv of the i32 tensor -4 by 3 is C's (-4 + 2) / 3 = 0; Python's folds -1
    _fold("int32", "b = -4", "t + tl.cdiv(b, 3)", r"dense<-1> : tensor<32x64xi32", "",
          "cdiv-negative"),
    # True + True of two i1 tensors is i1 0 in Triton; Python's True + True is 2
    _fold("int32", "b = True", "t + (b + b)", r"dense<2> : tensor<32x64xi32", "",
          "bool-plus-bool"),
    # `b = tl.constexpr(100)` is a plain assignment too: Triton unwraps and makes a tensor
    _fold("int8", "b = tl.constexpr(100)", "t + b", ADDI8, ADDI32, "constexpr-call"),
    # Triton makes 3e9 a u32 tensor and 2**40 an i64 one: t + b is computed (u32 / i64), where
    # the folded literal is out of the int32 tile's range and Gluon refuses it
    _fold("int32", "b = 3000000000", "t + b", NEVER, "", "u32-name"),
    _fold("int32", "b = 2**40", "(t + b).to(tl.int32)", NEVER, "", "i64-name"),
])
def test_a_name_bound_to_an_int_computes_as_the_i32_tensor_triton_makes(tmp_path, dt, body, bad,
                                                                        good):
    """docs/language.md: "Triton holds such a name as a scalar tensor of that value"; the folded
    literal is a Python scalar, which takes the tile's type. Computing as Triton does, or a
    refusal at the use (as for `//` of such a name), is right."""
    text = _reg(body, dt=dt, ys="i32" if dt == "int8" else "").replace(
        "\n\nDEFAULT_CONFIG", "\n\ndef add(x, y):\n    return x + y\n\n\nDEFAULT_CONFIG")
    _promoted_or_refused(tmp_path, text, body.split("\n")[1], bad, good)


BODY = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    B = 0.1
    I = 100
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.DT))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N, B, I))], [4],
                            [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N, B, I):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), EXPR)
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*XS", "y_ptr": "*YS", "N": "i32"}}
'''


@pytest.mark.parametrize("dt,ys,expr,bad,good", [
    ("bfloat16", "fp32", "t * B", r"arith\.mulf .*: tensor<64xbf16",
     r"arith\.mulf .*: tensor<64xf32"),
    ("int8", "i32", "t + I", r"arith\.addi .*: tensor<64xi8", r"arith\.addi .*: tensor<64xi32")],
    ids=["float-times-bf16", "int-plus-int8"])
def test_a_kernel_body_constant_handed_to_a_partition_is_a_tensor(tmp_path, dt, ys, expr, bad,
                                                                   good):
    """A plain assignment in the kernel body makes a tensor (Triton's and Gluon's visit_Assign):
    warp_specialize hands B = 0.1 to the partition as an fp32 scalar, so a bf16 tile times B is
    fp32. docs/language.md folds such names into constexprs where a compile-time value is needed
    (``NT = TOPK // BK`` as a loop bound); in arithmetic the folded literal takes the tile's type
    instead. Computing as Triton does, or a refusal at the use, is right."""
    _promoted_or_refused(tmp_path, BODY.replace("tl.DT", f"tl.{dt}").replace("XS", SIG[dt])
                         .replace("YS", ys).replace("EXPR", expr), expr, bad, good)


# ------------------------------------------------------------------ slot stores and loads
@pytest.mark.parametrize("dt,value,stored", [("int32", "2.7", "dense<2> : tensor<32x64xi32"),
                                             ("uint8", "-1", "dense<-1> : tensor<32x64xi8"),
                                             ("int8", "-1.5", "dense<-1> : tensor<32x64xi8")])
def test_a_scalar_slot_store_casts_as_tl_store_does(tmp_path, dt, value, stored):
    def check(compiled):
        assert stored in compiled.asm["ttgir"], compiled.asm["ttgir"]

    _computed_or_refused(tmp_path, _fill(dt, value), "tl.store(tle.gpu.local_ptr(slot.tile)",
                         check)


@pytest.mark.parametrize("dt,other", [("int32", "1.5"), ("int32", "M * 0.5"), ("uint8", "-1"),
                                      ("int8", "300")])
def test_a_masked_slot_load_casts_other_first(tmp_path, dt, other):
    def check(compiled):
        ttgir = compiled.asm["ttgir"]
        # the tile's values are selected as they are: never converted to a float and back
        assert not re.search(r"arith\.(si|ui)tofp .*tensor<32x64", ttgir), ttgir

    _computed_or_refused(tmp_path, _reg(f'''
        u = tl.load(tle.gpu.local_ptr(res.slot.tile), mask=offs < M, other={other})
        tl.store(y_ptr + p * 2048 + offs, u)
    ''', dt=dt), "u = tl.load(tle.gpu.local_ptr(res.slot.tile)", check)


@pytest.mark.parametrize("dt,xs,value", [
    ("bfloat16", "fp32", "tl.zeros([32, 64], tl.bfloat16) + tl.load(x_ptr + p * 2048 + offs)"),
    ("int8", "i32", "tl.full([32, 64], 1, tl.int8) + tl.load(x_ptr + p * 2048 + offs)"),
    ("int8", "i8", "tl.sum(tl.load(x_ptr + p * 2048 + offs), 1)[:, None] "
                   "+ tl.zeros([32, 64], tl.int8)")],
    ids=["bf16-plus-fp32", "int8-plus-int32", "sum-of-int8"])
def test_a_slot_store_of_a_promoted_tensor_converts(tmp_path, dt, xs, value):
    _computed_or_refused(tmp_path, _fill(dt, value, xs=xs),
                         "tl.store(tle.gpu.local_ptr(slot.tile)")


# ------------------------------------------------------------------ broadcasting
@pytest.mark.parametrize("body", [
    "tl.store(y_ptr + p * 2048 + offs, t + tl.arange(0, 64))",
    "tl.store(y_ptr + p * 2048 + offs, tl.where(tl.arange(0, 64) < M, t, 0))",
    "tl.store(y_ptr + p * 2048 + offs, t, mask=tl.arange(0, 64) < M)",
    "tl.store(y_ptr + p * 2048 + offs, tl.load(y_ptr + offs, mask=tl.arange(0, 64) < M, other=0))",
    "tl.store(y_ptr + p * 2048 + offs, tl.load(tle.gpu.local_ptr(res.slot.tile), "
    "mask=tl.arange(0, 64) < M, other=0))",
    # (an atomic adds no axis, Triton 3.6 refuses it: "Cannot broadcast, rank mismatch";
    # refused at its line since lowering adversarial round 13, which this test allows)
    "tl.atomic_add(y_ptr + offs, t, mask=tl.arange(0, 64) < M)",
], ids=["add", "where", "store-mask", "load-mask", "slot-load-mask", "atomic-mask"])
def test_a_lower_rank_operand_broadcasts_as_in_triton(tmp_path, body):
    _computed_or_refused(tmp_path, _reg(body), body)


# ------------------------------------------------------------------ a gather of another type
TUPLE_GATHER = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 32, 64], tl.DT))
    tle.gpu.warp_specialize([(produce, (kv, (x_ptr, M), N)), (consume, (kv, y_ptr, N))], [4],
                            [232])


def produce(kv, xa, N):
    w = kv.writer()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(xa[0] + p * 2048 + offs))
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 2048 + offs, tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*XS", "y_ptr": "*YS", "N": "i32", "M": "i32"}}
'''


@pytest.mark.parametrize("dt,xs", [("float32", "i32"), ("float32", "bf16"), ("bfloat16", "fp16")],
                         ids=["i32-into-fp32", "bf16-into-fp32", "fp16-into-bf16"])
def test_a_gather_of_another_element_type_converts(tmp_path, dt, xs):
    """``tl.store(local_ptr(slot.tile), tl.load(xa[0] + offs))`` with ``xa = (x_ptr, M)`` and
    x_ptr of another element type than the fp32 / bf16 field: Triton loads the values and
    tl.store converts them (3 -> 3.0); the lowered cp.async copies the int32 bits into the
    float field (3 -> 4.2e-45), or 2-byte elements into 4-byte ones. The frontend refuses the
    same store with x_ptr passed alone ("cast it first"); either that refusal or a conversion
    is right, a raw copy is not."""
    def check(compiled):
        copies = re.findall(r"ttg\.async_copy_global_to_local .*!tt\.ptr<(\w+)>.*-> <[\dx]+x(\w+),",
                            compiled.asm["ttgir"])
        assert all(src == dst for src, dst in copies), copies

    _computed_or_refused(tmp_path, TUPLE_GATHER.replace("tl.DT", f"tl.{dt}").replace("XS", xs)
                         .replace("YS", SIG[dt]), "tl.store(tle.gpu.local_ptr(slot.tile)", check)


@pytest.mark.parametrize("arg,ptr", [
    ("((x_ptr, M), N)", "xa[0][0]"),
    ("(x_ptr, x_ptr)", "tl.where(offs < M, xa[0], xa[1])"),
    ("(x_ptr, x_ptr)", "(xa[0] if M > 0 else xa[1])"),
    ("(x_ptr, x_ptr)", "tl.multiple_of(xa[0], 16)")],
    ids=["nested-tuple", "where", "conditional", "multiple-of"])
def test_a_gather_through_another_spelling_of_the_pointer_converts(tmp_path, arg, ptr):
    """The int32 pointer of test_a_gather_of_another_element_type_converts reached through a
    nested tuple, ``tl.where`` of two tuple items, a conditional expression or
    ``tl.multiple_of``: still lowered as a cp.async gather of the int32 bits into the fp32 field
    (``ttg.async_copy_global_to_local ... !tt.ptr<i32> -> ...xf32``), where tl.store converts."""
    def check(compiled):
        copies = re.findall(r"ttg\.async_copy_global_to_local .*!tt\.ptr<(\w+)>.*-> <[\dx]+x(\w+),",
                            compiled.asm["ttgir"])
        assert all(src == dst for src, dst in copies), copies

    text = (TUPLE_GATHER.replace("tl.DT", "tl.float32").replace("XS", "i32").replace("YS", "fp32")
            .replace("(produce, (kv, (x_ptr, M), N))", f"(produce, (kv, {arg}, N, M))")
            .replace("def produce(kv, xa, N):", "def produce(kv, xa, N, M):")
            .replace("tl.load(xa[0] + p * 2048 + offs)", f"tl.load({ptr} + p * 2048 + offs)"))
    assert ptr in text
    _computed_or_refused(tmp_path, text, "tl.store(tle.gpu.local_ptr(slot.tile)", check)


# ------------------------------------------------------------------ tl.math spellings
@pytest.mark.parametrize("expr", [
    "tl.math.umulhi(t, 3)",
    "tl.math.fma(t.to(tl.float32), 2.0, 1.0).to(tl.int32)",
    "tl.math.div_rn(t.to(tl.float32), 3.0).to(tl.int32)",
    "tl.math.sqrt_rn(t.to(tl.float32)).to(tl.int32)",
    "tl.math.fdiv(t.to(tl.float32), 3.0).to(tl.int32)"],
    ids=["umulhi", "fma", "div_rn", "sqrt_rn", "fdiv"])
def test_tl_math_spellings_lower_as_their_tl_names(tmp_path, expr):
    """tle-dump verifies these (``tl.math.X`` is Triton's ``tl.X``), and ``tl.X`` lowers; the
    lowering refused ``tl.math.X`` with "`tl.X` is not supported by the lowering"."""
    _compiled(tmp_path, _reg(f"tl.store(y_ptr + p * 2048 + offs, {expr})"))


# ------------------------------------------------------------------ cache hints of a store
ACC = HEAD + '''
@tle.jit
def k(x_ptr, b_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 64, 64], tl.bfloat16),
                  b=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(consume, (kv, y_ptr, N)), (produce, (kv, x_ptr, b_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, b_ptr, N):
    w = kv.writer()
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(x_ptr + p * 4096 + offs))
        tl.store(tle.gpu.local_ptr(slot.b), tl.load(b_ptr + p * 4096 + offs))
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    rows = tl.arange(0, 64)
    cols = tl.arange(0, 64)
    for p in range(N):
        res = r.wait(p)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)), tl.load(tle.gpu.local_ptr(res.slot.b)))
        r.release(p)
        tl.store(y_ptr + p * 4096 + rows[:, None] * 64 + cols[None, :], acc, HINT)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*bf16", "b_ptr": "*bf16", "y_ptr": "*bf16", "N": "i32"}}
'''


@pytest.mark.parametrize("hint,ptx", [('cache_modifier=".cs"', "st.global.cs"),
                                      ('eviction_policy="evict_first"', "evict_first")])
def test_an_accumulator_store_keeps_its_cache_hint(tmp_path, hint, ptx):
    """``tl.store(ptrs, acc, cache_modifier=".cs")`` of a wgmma accumulator: Triton emits
    ``st.global.cs``; the lowered kernel's stores are the helper's plain ``st.global.v4.b32`` /
    ``st.global.b16``, the hint gone (a store without a hint still takes the helper)."""
    compiled = _compiled(tmp_path, ACC.replace("HINT", hint))
    assert ptx in compiled.asm["ptx"], sorted(set(re.findall(r"st\.global[.\w]*",
                                                             compiled.asm["ptx"])))


# ------------------------------------------------------------------ tle.gpu.scale_rows factors
SCALE = ACC.replace("tl.store(y_ptr + p * 4096 + rows[:, None] * 64 + cols[None, :], acc, HINT)",
                    "acc = tle.gpu.scale_rows(acc, FACTOR)\n"
                    "        tl.store(y_ptr + p * 4096 + rows[:, None] * 64 + cols[None, :], acc)"
                    ).replace('"y_ptr": "*bf16"', '"y_ptr": "*fp32"')


def test_scale_rows_converts_an_integer_factor(tmp_path):
    """``tle.gpu.scale_rows(acc, f)`` with ``f`` an int32 vector of ones is ``acc * f[:, None]``,
    acc itself; the lowered lazy multiply compares and multiplies the int32 bits as floats."""
    text = SCALE.replace("FACTOR", "tl.full([64], 1, tl.int32) + rows * 0")
    try:
        compiled = _compiled(tmp_path, text)
    except TleError as e:  # a refusal at the call's line is right too
        line = _line_of(tmp_path / "kernel.py", "tle.gpu.scale_rows(")
        assert f"kernel.py:{line}: error: lowering" in str(e), str(e)
        return
    asm = [line for line in compiled.asm["ttgir"].splitlines()
           if "tt.elementwise_inline_asm" in line and "mul.f32" in line]
    assert asm, compiled.asm["ttgir"]
    for line in asm:
        operands = line.split("} ", 1)[1].split(" -> ")[0]
        assert "xi32" not in operands, line  # every operand of the f32 multiply is f32


@pytest.mark.parametrize("factor", ["(rows * 0 + 1).to(tl.bfloat16)",
                                    "(rows * 0 + 2).to(tl.float16)"], ids=["bf16", "fp16"])
def test_scale_rows_of_a_16_bit_factor_does_not_abort(tmp_path, factor):
    """Verified by tle-dump; compiling the lowered kernel kills the Python process (LLVM's
    UNREACHABLE), so it is compiled in a subprocess here. Triton computes acc * factor in fp32."""
    import os
    import subprocess
    import sys

    path = _write(tmp_path, SCALE.replace("FACTOR", factor))
    line = _line_of(path, "tle.gpu.scale_rows(")
    rc, out = _dump(path)
    if rc == 1:  # refused where the kernel is read, at the call: right
        assert f"kernel.py:{line}: error" in out, out
        return
    assert rc == 0, out
    root = Path(__file__).resolve().parent.parent
    code = ("from tle_compiler.diagnostics import TleError\n"
            "from tle_compiler.lowering.compile import compile_kernel\n"
            "try:\n"
            f"    compile_kernel(({str(path)!r}, 'k'), {_config(path)['signature']!r}, {{}})\n"
            "except TleError as e:\n"
            "    print('REFUSED', e)\n")
    env = dict(os.environ, PYTHONPATH=str(root))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    if "REFUSED" in run.stdout:  # a refusal at the call's line is right too
        assert f"kernel.py:{line}: error: lowering" in run.stdout, run.stdout


# ------------------------------------------------------------------ .shape / .dtype of a tensor
@pytest.mark.parametrize("expr", [
    pytest.param("t + tl.arange(0, t.shape[1])[None, :]", id="arange"),
    pytest.param("t + t.shape[0]", id="add"),
    pytest.param("(t * 2.5).to(t.dtype)", id="to")])
def test_shape_and_dtype_of_a_register_tensor_lower(tmp_path, expr):
    """``t.shape[1]`` (64) and ``t.dtype`` (int32) of a tile loaded from a slot are compile-time
    values in Triton; tle-dump verifies the kernel and the lowering refuses it."""
    _compiled(tmp_path, _reg(f"tl.store(y_ptr + p * 2048 + offs, {expr})"))


# ------------------------------------------------------------------ integer tl.dot corners
IDOT = HEAD + '''
@tle.jit
def k(x_ptr, b_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 64, 64], tl.DT),
                  b=tle.gpu.alloc([2, 64, 64], tl.DB))
    tle.gpu.warp_specialize([(consume, (kv, y_ptr, N)), (produce, (kv, x_ptr, b_ptr, N))],
                            [4], [232])


def produce(kv, x_ptr, b_ptr, N):
    w = kv.writer()
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(x_ptr + p * 4096 + offs))
        tl.store(tle.gpu.local_ptr(slot.b), tl.load(b_ptr + p * 4096 + offs))
        w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    acc = tl.zeros([64, 64], tl.ACC)
    for p in range(N):
        res = r.wait(p)
        acc = tl.dot(tl.load(tle.gpu.local_ptr(res.slot.a)),
                     tl.trans(tl.load(tle.gpu.local_ptr(res.slot.b))), acc)
        r.release(p)
    tl.store(y_ptr + offs, acc)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*SIG", "b_ptr": "*SB", "y_ptr": "*YS", "N": "i32"}}
'''


def test_plain_triton_refuses_these_dots():
    """The reference: Triton 3.6 refuses tl.dot of uint8 tiles ("only int8 supported!") and a
    dot whose accumulator is not of the product's type (float32 for float operands, int32 for
    int8) unless out_dtype says so: an int8 dot into float32 (the module it builds fails
    verification), bf16 into bf16, fp16 into fp16 (an AssertionError: out_dtype is float32)."""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def dot(x_ptr, y_ptr, ACC: tl.constexpr):
        offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
        a = tl.load(x_ptr + offs)
        acc = tl.zeros([64, 64], ACC)
        acc = tl.dot(a, a, acc)
        tl.store(y_ptr + offs, acc)

    for x, y, acc in (("*u8", "*i32", tl.int32), ("*i8", "*fp32", tl.float32),
                      ("*bf16", "*bf16", tl.bfloat16), ("*fp16", "*fp16", tl.float16)):
        with pytest.raises(Exception):
            triton.compile(triton.compiler.ASTSource(dot, {"x_ptr": x, "y_ptr": y,
                                                           "ACC": "constexpr"}, {"ACC": acc}),
                           target=GPUTarget("cuda", 90, 32))


@pytest.mark.parametrize("dt,sig,acc,ys", [
    pytest.param("uint8", "u8", "int32", "i32", id="uint8-operands"),
    pytest.param("int8", "i8", "float32", "fp32", id="int8-into-float32"),
    pytest.param("bfloat16", "bf16", "bfloat16", "bf16", id="bf16-into-bf16"),
    pytest.param("float16", "fp16", "float16", "fp16", id="fp16-into-fp16"),
    pytest.param("float32", "fp32", "float16", "fp16", id="fp32-into-fp16"),
    pytest.param("bfloat16/float16", "bf16/fp16", "float32", "fp32", id="bf16-times-fp16"),
    pytest.param("float64", "fp64", "float64", "fp64", id="fp64-into-fp64")])
def test_a_dot_triton_refuses_is_refused_at_its_line(tmp_path, dt, sig, acc, ys):
    """All verified by tle-dump. The uint8 product compiles and multiplies 200 as -56 (an s8
    wgmma); the fp16 accumulator compiles (Triton asks for out_dtype=tl.float16, which the
    lowering refuses); the others fail in the backend with an MLIR dump. Each should be an error
    at the tl.dot's line."""
    da, db = (dt.split("/") * 2)[:2]
    sa, sb = (sig.split("/") * 2)[:2]
    path = _write(tmp_path, IDOT.replace("tl.DT", f"tl.{da}").replace("tl.DB", f"tl.{db}")
                  .replace("SIG", sa).replace("SB", sb).replace("tl.ACC", f"tl.{acc}")
                  .replace("YS", ys))
    rc, out = _dump(path)
    if rc == 1:  # refused where the kernel is read: right if at the dot
        assert f"kernel.py:{_line_of(path, 'acc = tl.dot(')}: error" in out, out
        return
    with pytest.raises(TleError, match=rf"kernel\.py:{_line_of(path, 'acc = tl.dot(')}: error: "):
        compile_kernel((str(path), "k"), _config(path)["signature"], {})


# ------------------------------------------------------------------ float conditions around events
FLOAT_IF = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    BIND
    for p in range(N):
        if COND:
            slot = w.acquire(p)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
            w.commit(p)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32"}}
'''


def test_plain_triton_computes_an_int_name_in_i32_and_fp32():
    """The reference: ``b = 16777217`` is an i32 tensor, and ``b > 16777216.5`` / ``b * 1.0 >
    16777216`` / ``b2 * 1.0 != 100000000`` (b2 = 100000001) compare in fp32, where b rounds to
    2^24 (1e8): all false, so none of their stores is emitted; the integer ``b2 != 100000000``
    is true."""
    import triton
    import triton.language as tl

    @triton.jit
    def f(y_ptr):
        b = 16777217
        if b > 16777216.5:
            tl.store(y_ptr, 1)
        if b * 1.0 > 16777216:
            tl.store(y_ptr + 1, 1)
        b2 = 100000001
        if b2 * 1.0 != 100000000:
            tl.store(y_ptr + 2, 1)
        if b2 != 100000000:
            tl.store(y_ptr + 3, 1)
        c = 3
        if (c << 30) > 0:  # i32: -2^30
            tl.store(y_ptr + 4, 1)
        if c * 0.1 != 0.3:  # fp32: 0.3f == 0.3f
            tl.store(y_ptr + 5, 1)
        d = 65536
        if d * d > 0:  # i32: 0
            tl.store(y_ptr + 6, 1)
        e = -4
        if tl.cdiv(e, 3) != 0:  # C's (-4 + 2) / 3 = 0
            tl.store(y_ptr + 7, 1)
        f = True
        if f + f == 2:  # i1: 0
            tl.store(y_ptr + 8, 1)
        if ~f:  # i1: False (Python's ~True is -2)
            tl.store(y_ptr + 9, 1)
        if -f == -1:  # i1: -True is True, not -1
            tl.store(y_ptr + 10, 1)

    stores = [line for line in _triton_ttir(f, {"y_ptr": "*i32"}).splitlines()
              if "tt.store" in line]
    assert len(stores) == 1, stores


@pytest.mark.parametrize("bind,cond", [("b = 16777217", "b > 16777216.5"),
                                       ("b = 16777217", "b * 1.0 > 16777216"),
                                       ("b = 100000001", "b * 1.0 != 100000000"),
                                       ("b = 3", "b * 0.1 != 0.3"),
                                       ("b = 3", "(b << 30) > 0"),
                                       ("b = 65536", "b * b > 0"),
                                       ("b = -4", "tl.cdiv(b, 3) != 0"),
                                       ("b = True", "b + b == 2"),
                                       ("b = True", "~b"),
                                       ("b = True", "-b == -1")],
                         ids=["compare", "times-one", "not-equal", "times-a-tenth", "shift-wraps",
                              "product-wraps", "cdiv-negative", "bool-plus-bool", "invert-bool",
                              "negate-bool"])
def test_a_folded_condition_around_events_is_read_as_triton_computes(tmp_path, bind, cond):
    """``b = 16777217`` then ``if b > 16777216.5:`` around the writer's events: tle-dump folds the
    condition to True (Python), verifies the kernel and the lowered Gluon commits every index,
    where Triton's fp32 comparison is False (the test above), so the reader would wait for an
    index never committed. tle-dump should reject it (the wait never committed, or the float
    condition as it refuses ``b * 10 > 1`` of ``b = 0.1``)."""
    path = _write(tmp_path, FLOAT_IF.replace("BIND", bind).replace("COND", cond))
    rc, out = _dump(path)
    assert rc == 1, out


FOLDED_INDEX = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    BIND
    for p in range(N):
        slot = w.acquire(IDX)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(IDX)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32"}}
'''


@pytest.mark.parametrize("bind,idx", [("b = -4", "p + 1 + tl.cdiv(b, 3)"),
                                      ("b = True", "p + 2 - (b + b)")],
                         ids=["cdiv-negative", "bool-plus-bool"])
def test_a_folded_event_index_is_read_as_triton_computes(tmp_path, bind, idx):
    """``b = -4`` then ``w.acquire(p + 1 + tl.cdiv(b, 3))`` / ``w.commit(...)``: Triton's
    tl.cdiv of the i32 tensor -4 by 3 is 0 (C's division), so the writer commits p + 1 and the
    reader's wait(0) never completes; tle-dump reads Python's -1, verifies index p, and the
    lowered ``gl.cdiv(-4, 3)`` (constexprs) agrees with it, not with Triton. Likewise
    ``p + 2 - (b + b)`` with b = True (i1: True + True is 0). tle-dump should reject or refuse."""
    path = _write(tmp_path, FOLDED_INDEX.replace("BIND", bind).replace("IDX", idx))
    rc, out = _dump(path)
    assert rc == 1, out


BODY_IF = FOLDED_INDEX.replace('''    tle.assume(N >= 0)
    kv = tle.pipe(''', '''    tle.assume(N >= 0)
    BIND
    kv = tle.pipe(''').replace("(produce, (kv, x_ptr, N))", "(produce, (kv, x_ptr, N, B))").replace(
    '''def produce(kv, x_ptr, N):
    w = kv.writer()
    BIND
    for p in range(N):
        slot = w.acquire(IDX)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(IDX)''', '''def produce(kv, x_ptr, N, B):
    w = kv.writer()
    for p in range(N):
        if COND:
            slot = w.acquire(p)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
            w.commit(p)''')


# fixed by a7f303a (local_tensors.BuildRules._folded_tensor follows a kernel-body name into the
# partition, Frame.body_tensors): refused at the condition's line
@pytest.mark.parametrize("bind,cond", [("B = 65536", "B * B > 0"), ("B = True", "~B"),
                                       ("B = 16777217", "B > 16777216.5")],
                         ids=["product-wraps", "invert-bool", "fp32-compare"])
def test_a_kernel_body_name_in_a_condition_around_events_is_read_as_triton_computes(
        tmp_path, bind, cond):
    """``B = 65536`` in the kernel body, ``if B * B > 0:`` around the writer's events: verified
    (Python's 2^32 > 0) and lowered as a constexpr (the same); Triton computes B * B in i32 (0),
    so the writer never commits (test_plain_triton_computes_an_int_name_in_i32_and_fp32 holds the
    same arithmetic in a function). tle-dump should reject or refuse."""
    path = _write(tmp_path, BODY_IF.replace("BIND", bind).replace("COND", cond))
    assert "if COND" not in path.read_text() and "def produce(kv, x_ptr, N, B)" in path.read_text()
    rc, out = _dump(path)
    assert rc == 1, out


# ------------------------------------------------------------------ a load whose mask outranks it
@pytest.mark.parametrize("load", [
    "tl.load(y_ptr + tl.arange(0, 64), mask=offs < M, other=0)",
    "tl.load(y_ptr + tl.arange(0, 64), mask=tl.arange(0, 32)[:, None] < M, other=0)",
    "tl.load(y_ptr + tl.arange(0, 64), mask=tl.arange(0, 64) < M, other=t)"],
    ids=["mask-2d", "mask-column", "other-2d"])
def test_a_load_whose_mask_outranks_its_pointer_broadcasts_or_is_refused(tmp_path, load):
    """``tl.load(y_ptr + tl.arange(0, 64), mask=offs < M, other=0)`` with a [32, 64] mask: Triton
    broadcasts the [64] pointers to the mask's shape (broadcast_impl_value prepends the axis) and
    loads a [32, 64] tile (so with a [32, 1] mask). Verified by tle-dump; the lowering fails with
    an AssertionError traceback in the layout solver (layouts.py ``layout``), or compiles Gluon
    that Triton refuses ("tensor shape and layout rank mismatch"). A 2-D ``other`` of a 1-D
    pointer and mask Triton refuses too ("mask type matches ptr type"): that one must be a
    refusal at the line, not a traceback."""
    _computed_or_refused(tmp_path, _reg(f"tl.store(y_ptr + p * 2048 + offs, t + {load})"), load)


def test_a_libdevice_call_is_refused_in_its_own_name(tmp_path):
    """tle-dump verifies ``tl.extra.cuda.libdevice.pow(x, 2.0)``; the lowering refused it as
    "`tl.pow` is not supported by the lowering", which the kernel does not call. Lowering it, or
    refusing it at its line by the name written, is right."""
    expr = "tl.extra.cuda.libdevice.pow(t.to(tl.float32), 2.0).to(tl.int32)"
    path = _write(tmp_path, _reg(f"tl.store(y_ptr + p * 2048 + offs, {expr})"))
    rc, out = _dump(path)
    assert rc in (0, 1), out
    try:
        compile_kernel((str(path), "k"), _config(path)["signature"], {})
    except TleError as e:
        assert f"kernel.py:{_line_of(path, expr)}: error" in str(e), str(e)
        assert "libdevice.pow" in str(e), str(e)


TUPLE_IF = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def put(w, x_ptr, p, b):
    if COND:
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def produce(kv, x_ptr, N):
    w = kv.writer()
    BIND
    for p in range(N):
        put(w, x_ptr, p, ARG)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32"}}
'''


def test_plain_triton_computes_a_tuple_item_as_a_tensor():
    """The reference: a name bound to 65536 (True) handed to a function inside a tuple, and a
    tuple of constants bound to a name, hold i32 (i1) tensors: ``b[0] * b[0] > 0`` wraps to 0
    and ``~b[0]`` of True is False, so none of the stores is emitted."""
    import triton
    import triton.language as tl

    @triton.jit
    def put(y_ptr, b):
        if b[0] * b[0] > 0:
            tl.store(y_ptr, 1)

    @triton.jit
    def put_not(y_ptr, b):
        if ~b[0]:
            tl.store(y_ptr, 1)

    @triton.jit
    def f(y_ptr):
        c = 65536
        put(y_ptr, (c, 1))
        pr = (65536, 1)
        if pr[0] * pr[0] > 0:
            tl.store(y_ptr + 2, 1)
        d = True
        put_not(y_ptr + 4, (d, 1))

    stores = [line for line in _triton_ttir(f, {"y_ptr": "*i32"}).splitlines()
              if "tt.store" in line]
    assert not stores, stores


@pytest.mark.parametrize("bind,arg,cond", [
    ("b = 65536", "(b, 1)", "b[0] * b[0] > 0"),
    ("pr = (65536, 1)", "pr", "b[0] * b[0] > 0"),
    ("b = True", "(b, 1)", "~b[0]"),
    ("b = 16777217", "(b,)", "b[0] > 16777216.5"),
    ("b = -4", "(b, 0)", "tl.cdiv(b[0], 3) != 0")],
    ids=["product-wraps", "tuple-of-constants", "invert-bool", "fp32-compare", "cdiv-negative"])
def test_a_folded_tuple_item_around_events_is_read_as_triton_computes(tmp_path, bind, arg, cond):
    """``b = 65536`` handed to a helper as ``(b, 1)``, whose ``if b[0] * b[0] > 0:`` guards the
    writer's acquire and commit: verified (Python's 2^32 > 0) and lowered unconditionally, where
    Triton's i32 product is 0 and the writer never commits (the test above). The same arithmetic
    on ``b`` itself is refused since 8b932bd; through a tuple item it is not."""
    path = _write(tmp_path, TUPLE_IF.replace("BIND", bind).replace("ARG", arg)
                  .replace("COND", cond))
    rc, out = _dump(path)
    assert rc == 1, out
