"""Names bound to a number by a plain assignment compute as the tensor Triton 3.6 makes of them.

Triton's code generator (visit_Assign) turns a number a kernel function assigns to a name into a
scalar tensor: an int an i32 (u32 / i64 beyond i32's range), a float an fp32; ``b =
tl.constexpr(100)`` is unwrapped and made one too, while ``b: tl.constexpr = 100`` stays a
constexpr. Such a tensor promotes a narrower tile (``t + b`` of an int8 tile is an i32 sum, ``t *
s`` of a bf16 tile an fp32 product), where the number written in place takes the tile's type.
The frontend folds such a name to its value (loop bounds, conditions and event indices read it)
and reads it as ``to_tensor(value)`` in the kernel IR, which the lowering spells
``gl.to_tensor(value)`` (tests/test_lowering_adversarial_5.py pins the first cases; these are
the edge cases around them). Each case is compared with plain Triton's TTIR of the same code.
"""

from __future__ import annotations

import importlib.util
import re
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleVerificationWarning  # noqa: E402
from tests.triton_diff import PLAIN  # noqa: E402
from tests.test_lowering_adversarial_5 import (  # noqa: E402
    HEAD, _compiled, _dump, _line_of, _reg, _triton_ttir, _write)

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

T2 = "tensor<32x64x"

# plain Triton's reading of the same consumer body (``t`` a [32, 64] tile loaded per ``p``):
# tests/triton_diff.py's PLAIN, with its helper ``add``

SIGS = {"int8": "i8", "int32": "i32", "bfloat16": "bf16", "uint8": "u8"}


def _plain_ttir(tmp_path: Path, body: str, dt: str, ys: str) -> str:
    """Plain Triton's TTIR of ``body`` as the consumer's loop body (``t`` a tile of ``dt``)."""
    path = tmp_path / "plain_ref.py"
    path.write_text(PLAIN.replace("BODY", textwrap.indent(textwrap.dedent(body).strip("\n"),
                                                          " " * 8)))
    spec = importlib.util.spec_from_file_location(f"plain_ref_{abs(hash(body))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return _triton_ttir(mod.ref, {"x_ptr": f"*{SIGS[dt]}", "y_ptr": f"*{ys}", "N": "i32",
                                  "M": "i32"})


def _tle(body: str, dt: str, ys: str) -> str:
    return _reg(body, dt=dt, ys=ys).replace(
        "\n\nDEFAULT_CONFIG", "\n\ndef add(x, y):\n    return x + y\n\n\nDEFAULT_CONFIG")


CASES = [
    # a float name times a bf16 tile: an fp32 product (the name is kept, never folded)
    ("float-name-times-bf16", "bfloat16", "fp32",
     "s = 0.1\ntl.store(y_ptr + p * 2048 + offs, t * s)",
     rf"arith\.mulf .*: {T2}f32", rf"arith\.mulf .*: {T2}bf16"),
    # the same name a loop bound and an operand: the loop runs its 2 iterations, the sum is i32
    ("loop-bound-and-operand", "int8", "i32", """
        n = 2
        for j in range(n):
            tl.store(y_ptr + p * 2048 + offs + j * 0, t + n)
        """, rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    # rebound in a loop (not folded: a variable, a tensor in the Gluon as in Triton)
    ("rebound-in-loop", "int8", "i32", """
        b = 100
        for j in range(2):
            b = b + 1
        tl.store(y_ptr + p * 2048 + offs, t + b)
        """, rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    # a name computed from one (`c = b * 2` folds to 200): a tensor too
    ("derived-name", "int8", "i32", "b = 100\nc = b * 2\ntl.store(y_ptr + p * 2048 + offs, t + c)",
     rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    # through a helper's result
    ("helper-result", "int8", "i32", "b = 100\ntl.store(y_ptr + p * 2048 + offs, add(b, t))",
     rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    # a float name made from an int one: `b * 1.5` is an fp32 tensor, the product with bf16 fp32
    ("float-of-int-name", "bfloat16", "fp32",
     "b = 2\nc = b * 1.5\ntl.store(y_ptr + p * 2048 + offs, t * c)",
     rf"arith\.mulf .*: {T2}f32", rf"arith\.mulf .*: {T2}bf16"),
    # `b: tl.constexpr = 100` stays a constexpr: the sum stays i8, as the literal's
    ("annotated-constexpr-stays-narrow", "int8", "i8",
     "b: tl.constexpr = 100\ntl.store(y_ptr + p * 2048 + offs, t + b)",
     rf"arith\.addi .*: {T2}i8", r"arith\.extsi"),
    # a u32 name compared with an int32 tile: Triton compares unsigned
    ("u32-name-compare", "int32", "i32",
     "b = 3000000000\ntl.store(y_ptr + p * 2048 + offs, (t < b).to(tl.int32))",
     r"arith\.cmpi ult", r"arith\.cmpi slt"),
    # tl.cdiv of the i32 tensor, Python's builtin min of it (Triton's builtin_min: tl.minimum),
    # and a subtraction: each an i32 tensor beside the int8 tile
    ("cdiv", "int8", "i32", "b = 7\ntl.store(y_ptr + p * 2048 + offs, tl.cdiv(b, 2) + t)",
     rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    ("builtin-min", "int8", "i32", "b = 7\ntl.store(y_ptr + p * 2048 + offs, min(b, 3) + t)",
     rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    ("negative-subtrahend", "int8", "i32", "b = -100\ntl.store(y_ptr + p * 2048 + offs, t - b)",
     rf"arith\.subi .*: {T2}i32", rf"arith\.subi .*: {T2}i8"),
    # tl.full of the tensor casts it to the dtype asked (300 is 44 in int8): the sum stays i8
    ("full-casts", "int8", "i32",
     "b = 300\ntl.store(y_ptr + p * 2048 + offs, tl.full([32, 64], b, tl.int8) + t)",
     rf"dense<44> : {T2}i8", r"dense<300>"),
    # tuples a plain assignment binds: each number item is a tensor (nested ones too, and
    # through unpacking); an item of a tuple written in place is what it was there (`(b, 1)[0]`
    # b's tensor, `(b, 1)[1]` the constexpr 1: the sum stays i8)
    ("tuple-item", "int8", "i32", "pr = (100, 1)\ntl.store(y_ptr + p * 2048 + offs, t + pr[0])",
     rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    ("nested-tuple-item", "int8", "i32",
     "pr = ((100, 2), 1)\ntl.store(y_ptr + p * 2048 + offs, t + pr[0][0])",
     rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    ("unpacked-tuple", "int8", "i32",
     "pr = (100, 1)\na, c = pr\ntl.store(y_ptr + p * 2048 + offs, t + a)",
     rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    ("item-written-in-place", "int8", "i32",
     "b = 100\ntl.store(y_ptr + p * 2048 + offs, add(t, (b, 1)[0]))",
     rf"arith\.addi .*: {T2}i32", rf"arith\.addi .*: {T2}i8"),
    ("constexpr-item-written-in-place", "int8", "i32",
     "b = 100\ntl.store(y_ptr + p * 2048 + offs, add(t, (b, 1)[1]))",
     rf"arith\.addi .*: {T2}i8", r"arith\.extsi .*, %"),
    # tl.maximum with a name: made a tensor either way, i32
    ("maximum", "int8", "i32", "b = 100\ntl.store(y_ptr + p * 2048 + offs, tl.maximum(t, b))",
     rf"arith\.maxsi .*: {T2}i32", rf"arith\.maxsi .*: {T2}i8"),
]


@pytest.mark.parametrize("dt,ys,body,good,bad", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_plain_assigned_number_computes_as_triton_computes(tmp_path, dt, ys, body, good, bad):
    ttir = _plain_ttir(tmp_path, body, dt, ys)
    assert re.search(good, ttir), ttir  # the reference
    assert not re.search(bad, ttir), ttir
    ttgir = _compiled(tmp_path, _tle(body, dt, ys)).asm["ttgir"]
    assert re.search(good, ttgir), ttgir
    assert not re.search(bad, ttgir), ttgir


KERNEL_BODY = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    NB = 2
    B = 0.5
    T = (100, 1)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.DT))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)),
                             (consume, (kv, y_ptr, N, NB, B, T, (NB, 1)))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, N, NB, B, T, W):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        for j in range(NB):
            tl.store(y_ptr + p * 64 + tl.arange(0, 64) + j * 0, EXPR)
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*XS", "y_ptr": "*YS", "N": "i32"}}
'''


@pytest.mark.parametrize("dt,ys,expr,good,bad", [
    ("int8", "i32", "t + NB", r"arith\.addi .*: tensor<64xi32[,>]",
     r"arith\.addi .*: tensor<64xi8[,>]"),
    ("int8", "i32", "t + T[0]", r"arith\.addi .*: tensor<64xi32[,>]",
     r"arith\.addi .*: tensor<64xi8[,>]"),
    ("int8", "i32", "t + W[0]", r"arith\.addi .*: tensor<64xi32[,>]",
     r"arith\.addi .*: tensor<64xi8[,>]"),
    ("bfloat16", "fp32", "tl.where(t > 0, t, B)", r"arith\.select .*tensor<64xf32[,>]",
     r"arith\.select .*tensor<64xbf16[,>]"),
], ids=["int-loop-bound-and-operand", "tuple-item", "item-of-a-tuple-in-the-call",
        "float-where-branch"])
def test_a_kernel_body_number_is_a_tensor_in_the_partition(tmp_path, dt, ys, expr, good, bad):
    """A kernel-body ``NB = 2`` handed to a partition bounds its loop and is an i32 operand
    there, and so are the items of ``T = (100, 1)`` and item 0 of ``(NB, 1)`` written in the
    call; ``B = 0.5`` an fp32 branch of a bf16 tl.where (plain Triton's jit call, the
    reference)."""
    ref = tmp_path / "plain_body_ref.py"
    ref.write_text(textwrap.dedent(f"""
        import triton
        import triton.language as tl


        @triton.jit
        def part(x_ptr, y_ptr, NB, B, T, W):
            t = tl.load(x_ptr + tl.arange(0, 64))
            for j in range(NB):
                tl.store(y_ptr + tl.arange(0, 64) + j * 0, {expr})


        @triton.jit
        def body(x_ptr, y_ptr):
            NB = 2
            B = 0.5
            T = (100, 1)
            part(x_ptr, y_ptr, NB, B, T, (NB, 1))
        """))
    spec = importlib.util.spec_from_file_location(f"plain_body_ref_{abs(hash(expr))}", ref)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = {"int8": "i8", "bfloat16": "bf16"}[dt]
    ttir = _triton_ttir(mod.body, {"x_ptr": f"*{sig}", "y_ptr": f"*{ys}"})
    assert re.search(good, ttir), ttir
    assert not re.search(bad, ttir), ttir
    text = KERNEL_BODY.replace("tl.DT", f"tl.{dt}").replace("XS", sig).replace("YS", ys) \
        .replace("EXPR", expr)
    ttgir = _compiled(tmp_path, text).asm["ttgir"]
    assert re.search(good, ttgir), ttgir
    assert not re.search(bad, ttgir), ttgir


def test_a_folded_name_still_bounds_an_event_loop(tmp_path):
    """Folding still serves the protocol: ``NB = 2`` bound in both partitions bounds the loop of
    their events (a verdict for every N), and ``t + NB`` in the reader is computed in i32."""
    text = HEAD + '''
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int8))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    NB = 2
    for p in range(N):
        for j in range(NB):
            slot = w.acquire(p * NB + j)
            tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + tl.arange(0, 64)))
            w.commit(p * NB + j)


def consume(kv, y_ptr, N):
    r = kv.reader()
    NB = 2
    for p in range(N):
        for j in range(NB):
            res = r.wait(p * NB + j)
            t = tl.load(tle.gpu.local_ptr(res.slot.tile))
            tl.store(y_ptr + p * 64 + tl.arange(0, 64), t + NB)
            r.release(p * NB + j)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*i8", "y_ptr": "*i32", "N": "i32"}}
'''
    ttgir = _compiled(tmp_path, text).asm["ttgir"]
    assert re.search(r"arith\.addi .*: tensor<64xi32,", ttgir), ttgir


@pytest.mark.parametrize("bind,use", [
    ("b = 64", "tl.arange(0, b)"),
    ("b = 1", "tl.sum(t, b)"),
], ids=["arange-bound", "reduction-axis"])
def test_a_plain_assigned_number_where_triton_needs_a_constexpr_is_refused(tmp_path, bind, use):
    """Where Triton takes compile-time values only, the tensor a plain assignment makes is
    refused (Triton: "arange's arguments must be of type tl.constexpr"; a reduction's axis
    compares the tensor), at the use's line."""
    text = _tle(f"{bind}\nu = {use}\ntl.store(y_ptr + p, tl.sum(u * 0))", "int32", "")
    path = _write(tmp_path, text)
    rc, out = _dump(path)
    line = _line_of(path, f"u = {use}")
    if rc == 1:
        assert f"kernel.py:{line}: error" in out, out
        return
    from tle_compiler.diagnostics import TleError
    from tle_compiler.lowering.compile import compile_kernel

    with pytest.raises(TleError) as e:
        compile_kernel((str(path), "k"), {"x_ptr": "*i32", "y_ptr": "*i32", "N": "i32",
                                          "M": "i32"}, {})
    assert f"kernel.py:{line}: error" in str(e.value), str(e.value)


STEP = HEAD + """
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(0 <= N <= 6)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N))], [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    BIND
    for q in range(N, 0, S):
        slot = w.acquire(N - q)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + q * 64 + tl.arange(0, 64)))
        w.commit(N - q)


def consume(kv, y_ptr, N):
    r = kv.reader()
    for p in range(N):
        res = r.wait(p)
        tl.store(y_ptr + p * 64 + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32"}}
"""


def test_a_negative_step_of_a_plain_assigned_number_is_refused(tmp_path):
    """`S = -1` then `range(N, 0, S)`: S is an i32 tensor, and Triton reverses a loop only for a
    constexpr step; the loop it builds from a tensor step runs no iteration (plain Triton's TTIR
    has no loop left), where the folded reading ran N. Refused at the loop;
    `S: tl.constexpr = -1` is reversed by Triton and verified."""
    import triton
    import triton.language as tl

    @triton.jit
    def tensor_step(x_ptr, N):
        S = -1
        for q in range(N, 0, S):
            tl.store(x_ptr + q, q)

    @triton.jit
    def constexpr_step(x_ptr, N):
        S: tl.constexpr = -1
        for q in range(N, 0, S):
            tl.store(x_ptr + q, q)

    sig = {"x_ptr": "*i32", "N": "i32"}
    assert "scf.for" not in _triton_ttir(tensor_step, sig)
    assert "scf.for" in _triton_ttir(constexpr_step, sig)
    path = _write(tmp_path, STEP.replace("BIND", "S = -1"))
    rc, out = _dump(path)
    line = _line_of(path, "for q in range(N, 0, S):")
    assert rc == 1 and f"kernel.py:{line}: error" in out and "[bad-loop]" in out \
        and "runs no iteration" in out, out
    _compiled(tmp_path, STEP.replace("BIND", "S: tl.constexpr = -1"))


@pytest.mark.parametrize("expr,triton_error", [
    ("b or N", "Cannot bitcast"), ("N and b", "Cannot bitcast"), ("N + (not b)", "Cannot bitcast"),
    ("N * b ** 2", "__pow__")], ids=["or", "and", "not", "power"])
def test_a_kernel_body_number_in_truth_and_power_is_refused(tmp_path, expr, triton_error):
    """The kernel body's `b = 1` is an i32 tensor as a partition's is: `b or N`, `N and b`, `not
    b` bitcast it to i1 and `b ** 2` has no `__pow__` in Triton 3.6 (checked on its compile);
    each was verified with the constant folded. Refused at the line, as in a partition."""
    import triton  # noqa: F401

    ref = tmp_path / "plain_body.py"
    ref.write_text(textwrap.dedent(f"""
        import triton
        import triton.language as tl


        @triton.jit
        def kern(x_ptr, N):
            b = 1
            M = {expr}
            for q in range(M):
                tl.store(x_ptr + q, q)
        """))
    spec = importlib.util.spec_from_file_location(f"plain_body_{abs(hash(expr))}", ref)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(Exception) as e:
        _triton_ttir(mod.kern, {"x_ptr": "*i32", "N": "i32"})
    assert triton_error in repr(e.value), repr(e.value)
    text = HEAD + f"""
@tle.jit
def k(x_ptr, y_ptr, N):
    tle.assume(N >= 0)
    b = 1
    M = {expr}
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, M)), (consume, (kv, y_ptr, M))], [4], [232])


def produce(kv, x_ptr, M):
    w = kv.writer()
    for p in range(M):
        s = w.acquire(p)
        tl.store(tle.gpu.local_ptr(s.tile), tl.load(x_ptr + tl.arange(0, 64)))
        w.commit(p)


def consume(kv, y_ptr, M):
    r = kv.reader()
    for p in range(M):
        res = r.wait(p)
        tl.store(y_ptr + tl.arange(0, 64), tl.load(tle.gpu.local_ptr(res.slot.tile)))
        r.release(p)
"""
    path = _write(tmp_path, text)
    rc, out = _dump(path)
    line = _line_of(path, f"M = {expr}")
    assert rc == 1 and f"kernel.py:{line}: error" in out and "`b`" in out \
        and "[unsupported-expression]" in out, out
