"""What is verified is what is lowered, lowering adversarial round 18 (round 58 overall): what lies
between the partitions, the kernel body before warp_specialize and the partition argument
lists, the Gluon read against plain Triton 3.6 for the same code.

Tried (a kernel whose body binds a value and hands it to the reader of round 5's template,
which adds it to the [32, 64] fp32 tile it loads from the slot; the lowered Gluon compiled for
sm_90a on the CPU beside a plain Triton 3.6 kernel that binds the same value and adds it to the
same tile; the mbarrier operations of the lowered kernel checked against the verified events
as test_generated_barrier_operations_are_the_verified_events does): the same scalar passed
twice; i64 / fp16 / uint8 / i1 / true-division scalars computed in the body; a pointer offset
in the body (``y_ptr + M``) and by ``tl.program_id(0)`` arithmetic; a constexpr computed from
numbers (``C: tl.constexpr = 4 * 8``); a scalar loaded in the body; tuples mixing a run-time
scalar, a pointer and numbers (``tp = (M, y_ptr, 3)``, nested, unpacked); the writer and
reader handles made in the body and handed to the partitions; a partition function with a
default argument left out of the tuple; slots of int8 [64], of fp8e4nv [2, 16, 32] (3-D) beside
an int8 [32] field, their loads and a masked store of their sum; warp_specialize's lists
``[2], [232]`` and ``[8], [24]`` (lowered, barrier counts those of the units), ``[3]`` and
registers 233 / 260 (refused, as Triton's warp_specialize and setmaxnreg refuse them).

Wrong and fixed:
* test_a_number_item_of_a_body_tuple_computes_as_triton_does: ``tp = (M, 7)`` in the kernel
  body (a tuple with a run-time item; ``tp = ((M, 7), 2)``), then ``tp[1] // -2`` handed to a
  partition: Triton 3.6's visit_Assign makes each item of the tuple a tensor (an i32 7), so the
  division is C's, -3; the lowering spelt the item as the literal 7 and Gluon folded ``7 //
  -2`` in Python, -4. Alike ``tp[1] % 4`` of ``tp = (M, -7)`` (1 for Triton's -3), ``tp[1] *
  1e30`` of ``tp = (M, 1e-50)`` (fp32 for Triton's fp64), and ``tp[1] + M`` of ``tp = (M,
  3000000000)``
  (Triton's uint32 sum, converted unsigned; the lowered kernel failed to compile, "Scalar
  3000000000 is out of range for type int32", away from the line). The frontend already read
  these items as run-time values (PrologueWalker._s_Assign); the lowering now spells each
  number item of such a tuple as the tensor Triton makes of it, ``gl.to_tensor(7)``
  (lowering/translate.py ``bound_items``).

Held (the same values and types as Triton, the barrier operations the verified events, or
refused as Triton refuses them): the rest of the probes above. ``tp[1] + 2147483647`` of ``tp =
(M, 7)`` was handed as the wrapped i32 -2147483642 before the fix too (kept in the test).
``tl.arange(0, tp[1])`` of such a tuple is refused at its line (Triton: "arange's arguments
must be of type tl.constexpr"), as are ``tp = (3, 7); tp = (tp[0], tp[1] // -2)`` and ``a, b
= M, 7`` then ``b // -2`` handed to a partition (the frontend's C-division refusal).

Left open (refused at the line): a partition function's default argument left out of its
tuple (``def consume(kv, y_ptr, N, M=3)`` given three arguments) unless annotated
``tl.constexpr`` with a number default.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re
import sys
from pathlib import Path

import pytest

from tle_compiler.cli.dump import main as tle_dump
from tle_compiler.diagnostics import TleVerificationWarning

from tests.test_lowering_events import Runs, param_grid

pytestmark = pytest.mark.filterwarnings(f"ignore::{TleVerificationWarning.__module__}."
                                        f"{TleVerificationWarning.__name__}")

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "M": "i32"}

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
BODY
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 32, 64], tl.float32))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, CARGS)],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        tl.store(tle.gpu.local_ptr(slot.tile),
                 tl.load(x_ptr + p * 2048 + tl.arange(0, 32)[:, None] * 64
                         + tl.arange(0, 64)[None, :]))
        w.commit(p)


def consume(CPARAMS):
    r = kv.reader()
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(y_ptr + p * 2048 + offs, STORED)
        r.release(p)


DEFAULT_CONFIG = {"signature": SIGNATURE}
'''.replace("SIGNATURE", repr(SIG))

PLAIN = '''
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, N, M):
BODY
    v = VALUE
    offs = tl.arange(0, 32)[:, None] * 64 + tl.arange(0, 64)[None, :]
    for p in range(N):
        t = tl.load(x_ptr + p * 2048 + offs)
        tl.store(y_ptr + p * 2048 + offs, t + v)
'''


def _indent(body: str) -> str:
    return "\n".join("    " + s for s in body.splitlines())


def _kernel(body: str, cargs: str = "(kv, y_ptr, N, M)", cparams: str = "kv, y_ptr, N, M",
            stored: str = "t + M") -> str:
    return (KERNEL.replace("BODY", _indent(body) if body else "").replace("CARGS", cargs)
            .replace("CPARAMS", cparams).replace("STORED", stored))


def _write(tmp_path: Path, text: str, name: str = "kernel") -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return path


def _dump(path: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = tle_dump([*argv, str(path)])
    return rc, out.getvalue()


def _lowered_ttgir(tmp_path: Path, text: str) -> str:
    from tle_compiler.lowering.compile import compile_kernel

    path = _write(tmp_path, text)
    rc, out = _dump(path, "-q")
    assert rc == 0, out
    return compile_kernel((str(path), "k"), SIG, {}).asm["ttgir"]


def _plain_ttgir(tmp_path: Path, body: str, value: str) -> str:
    """Plain Triton 3.6 binding ``body`` and adding ``value`` to the loaded tile: its TTGIR."""
    import triton
    from triton.backends.compiler import GPUTarget

    name = f"plain18_{abs(hash((body, value)))}"
    path = _write(tmp_path, PLAIN.replace("BODY", _indent(body)).replace("VALUE", value), name)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
        return triton.compile(triton.compiler.ASTSource(mod.k, SIG, {}),
                              target=GPUTarget("cuda", 90, 32)).asm["ttgir"]
    finally:
        sys.modules.pop(name, None)


def _barriers_are_the_verified_events(path: Path) -> None:
    config = ast.literal_eval(path.read_text().split("DEFAULT_CONFIG =", 1)[1].strip())
    runs = Runs(path, "k", config)
    grid = param_grid(runs.base.program)
    assert len(grid) >= 3
    problems = []
    for values in grid:
        problems += runs.check(values)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ number items of a tuple

# (the tuple, the value handed to the reader, what the lowered kernel's TTGIR must hold, what
# plain Triton's must hold: the same value, of the same type)
ITEMS = [
    ("tp = (M, 7)", "tp[1] // -2", r"arith\.constant -3 : i32", r"dense<-3\.0+e\+00>"),
    ("tp = ((M, 7), 2)", "tp[0][1] // -2", r"arith\.constant -3 : i32", r"dense<-3\.0+e\+00>"),
    ("tp = (M, -7)", "tp[1] % 4", r"arith\.constant -3 : i32", r"dense<-3\.0+e\+00>"),
    ("tp = (M, 7)", "tp[1] + 2147483647", r"arith\.constant -2147483642 : i32",
     r"dense<-2\.14748365E\+9>"),
    ("tp = (M, 1e-50)", "tp[1] * 1e30", r"arith\.addf .* tensor<32x64xf64",
     r"arith\.addf .* tensor<32x64xf64"),
    ("tp = (M, 3000000000)", "tp[1] + M", r"arith\.uitofp", r"arith\.uitofp"),
]


@pytest.mark.parametrize("bind, value, ours, theirs", ITEMS,
                         ids=["floordiv", "nested", "mod", "wrap", "fp64", "uint32"])
def test_a_number_item_of_a_body_tuple_computes_as_triton_does(tmp_path, bind, value, ours,
                                                                theirs):
    """Triton makes each item of an assigned tuple a tensor: the item's arithmetic is the
    tensor's (C's division, i32 wraps, fp64 and uint32 by range), not Python's."""
    text = _kernel(bind, cargs=f"(kv, y_ptr, N, {value})")
    gluon = _dump(_write(tmp_path, text), "-q", "--gluon")[1]
    assert "gl.to_tensor(" in gluon and "(7 // (-2))" not in gluon, gluon
    lowered = _lowered_ttgir(tmp_path, text)
    plain = _plain_ttgir(tmp_path, bind, value)
    assert re.search(theirs, plain), plain
    assert re.search(ours, lowered), lowered
    assert "arith.constant -4 : i32" not in lowered, lowered


def test_a_number_item_handed_alone_is_the_same_value(tmp_path):
    """``tp[1]`` of ``tp = (M, 7)`` handed as it is: the i32 7, as before."""
    lowered = _lowered_ttgir(tmp_path, _kernel("tp = (M, 7)", cargs="(kv, y_ptr, N, tp[1])"))
    assert "arith.constant 7 : i32" in lowered, lowered


def test_the_barriers_of_a_tuple_item_kernel_are_the_verified_events(tmp_path):
    _barriers_are_the_verified_events(
        _write(tmp_path, _kernel("tp = (M, 7)", cargs="(kv, y_ptr, N, tp[1] // -2)")))


# ------------------------------------------------------------------ refused as Triton refuses

@pytest.mark.parametrize("body, value, where, words", [
    ("tp = (M, 64)\nz = tl.arange(0, tp[1])", "M", "z = tl.arange",
     "the arguments of tl.arange must be compile-time values"),
    ("tp = (3, 7)\ntp = (tp[0], tp[1] // -2)", "tp[1]", "(consume, (kv",
     "is not the value the verifier reads"),
    ("a, b = M, 7", "b // -2", "(consume, (kv", "takes C's division (truncating)"),
], ids=["arange", "rebound-division", "unpacked-division"])
def test_items_of_body_tuples_stay_refused_where_triton_or_c_differs(tmp_path, body, value,
                                                                      where, words):
    text = _kernel(body, cargs=f"(kv, y_ptr, N, {value})")
    line = next(i for i, s in enumerate(text.splitlines(), 1) if where in s)
    rc, out = _dump(_write(tmp_path, text), "-q", "--gluon")
    assert rc == 1 and f"kernel.py:{line}: error" in out and words in out, out


def test_an_arange_of_a_tuple_item_is_refused_by_triton(tmp_path):
    with pytest.raises(Exception) as info:
        _plain_ttgir(tmp_path, "tp = (M, 64)\nz = tl.arange(0, tp[1])", "M")
    e, texts = info.value, []
    while e is not None:
        texts.append(str(e))
        e = e.__cause__ or e.__context__
    assert "constexpr" in "\n".join(texts), texts


# ------------------------------------------------------------------ held: the kernel body

HELD = {
    "twice": ("", "(kv, y_ptr, N, M, M)", "kv, y_ptr, N, M, M2", "t + M + M2"),
    "i64": ("s = M.to(tl.int64) * 3000000000", "(kv, y_ptr, N, s)", "kv, y_ptr, N, s", "t + s"),
    "ptr": ("yp = y_ptr + M", "(kv, yp, N, M)", "kv, y_ptr, N, M", "t"),
    "pid": ("q = tl.program_id(0) * 2048 * N", "(kv, y_ptr + q, N, M)", "kv, y_ptr, N, M", "t"),
    "constexpr": ("C: tl.constexpr = 4 * 8", "(kv, y_ptr, N, C)",
                  "kv, y_ptr, N, M: tl.constexpr", "t + M"),
    "load": ("v = tl.load(x_ptr + M)", "(kv, y_ptr, N, v)", "kv, y_ptr, N, v", "t + v"),
    "mixed": ("tp = (M, y_ptr, 3)", "(kv, tp[1], N, tp[0] + tp[2])", "kv, y_ptr, N, M",
              "t + M"),
    "fp16": ("h = M.to(tl.float16)", "(kv, y_ptr, N, h)", "kv, y_ptr, N, h", "t + h"),
    "uint8": ("h = M.to(tl.uint8)", "(kv, y_ptr, N, h)", "kv, y_ptr, N, h", "t + h"),
    "i1": ("h = M > 3", "(kv, y_ptr, N, h)", "kv, y_ptr, N, h", "t + h"),
    "truediv": ("h = M / 3", "(kv, y_ptr, N, h)", "kv, y_ptr, N, h", "t + h"),
}

# what plain Triton's TTGIR holds for the same value (the lowered kernel's must hold it too)
HELD_OPS = {
    "i64": r"arith\.sitofp .*i64",
    "fp16": r"arith\.extf .*f16",
    "uint8": r"arith\.uitofp .*i8",
    "truediv": r"arith\.divf",
}


@pytest.mark.parametrize("name", sorted(HELD))
def test_values_of_the_kernel_body_are_handed_as_triton_computes_them(tmp_path, name):
    body, cargs, cparams, stored = HELD[name]
    lowered = _lowered_ttgir(tmp_path, _kernel(body, cargs, cparams, stored))
    if name in HELD_OPS:
        plain = _plain_ttgir(tmp_path, body, stored.replace("t + ", "", 1))
        assert re.search(HELD_OPS[name], plain), plain
        assert re.search(HELD_OPS[name], lowered), lowered


@pytest.mark.parametrize("name", ["twice", "pid", "mixed"])
def test_the_barriers_of_body_value_kernels_are_the_verified_events(tmp_path, name):
    _barriers_are_the_verified_events(_write(tmp_path, _kernel(*HELD[name])))


def test_a_partition_default_argument_left_out_stays_refused_at_its_line(tmp_path):
    # (a number default, `M=3`, is a constexpr since lowering adversarial round 19, as Triton
    # binds it: tests/test_lowering_adversarial_19.py; one that is no number stays refused)
    text = _kernel("", cargs="(kv, y_ptr, N)", cparams="kv, y_ptr, N, M=None")
    rc, out = _dump(_write(tmp_path, text), "-q")
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "(consume, (kv" in s)
    assert rc == 1 and f"kernel.py:{line}: error" in out, out
    assert "takes 4 positional argument(s), 3 given" in out, out


# ------------------------------------------------------------------ held: handles and slots

HANDLES = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, tile=tle.gpu.alloc([2, 64], tl.int8))
    w = kv.writer()
    r = kv.reader()
    tle.gpu.warp_specialize([(produce, (w, x_ptr, N)), (consume, (r, y_ptr, N))],
                            [4], [232])


def produce(w, x_ptr, N):
    for p in range(N):
        slot = w.acquire(p)
        o = tl.arange(0, 64)
        tl.store(tle.gpu.local_ptr(slot.tile), tl.load(x_ptr + p * 64 + o))
        w.commit(p)


def consume(r, y_ptr, N):
    o = tl.arange(0, 64)
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.tile))
        tl.store(y_ptr + p * 64 + o, t + 1)
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*i8", "y_ptr": "*i8", "N": "i32", "M": "i32"}}
'''

SLOTS = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit
def k(x_ptr, y_ptr, N, M):
    tle.assume(N >= 0)
    kv = tle.pipe(capacity=2, a=tle.gpu.alloc([2, 2, 16, 32], tl.float8e4nv),
                  b=tle.gpu.alloc([2, 32], tl.int8))
    tle.gpu.warp_specialize([(produce, (kv, x_ptr, N)), (consume, (kv, y_ptr, N, M))],
                            [4], [232])


def produce(kv, x_ptr, N):
    w = kv.writer()
    for p in range(N):
        slot = w.acquire(p)
        o = (tl.arange(0, 2)[:, None, None] * 512 + tl.arange(0, 16)[None, :, None] * 32
             + tl.arange(0, 32)[None, None, :])
        tl.store(tle.gpu.local_ptr(slot.a), tl.load(x_ptr + p * 1024 + o).to(tl.float8e4nv))
        tl.store(tle.gpu.local_ptr(slot.b), tl.arange(0, 32).to(tl.int8))
        w.commit(p)


def consume(kv, y_ptr, N, M):
    r = kv.reader()
    o = (tl.arange(0, 2)[:, None, None] * 512 + tl.arange(0, 16)[None, :, None] * 32
         + tl.arange(0, 32)[None, None, :])
    for p in range(N):
        res = r.wait(p)
        t = tl.load(tle.gpu.local_ptr(res.slot.a))
        b = tl.load(tle.gpu.local_ptr(res.slot.b))
        tl.store(y_ptr + p * 1024 + o, t.to(tl.float32) + b[None, None, :], mask=o < M)
        r.release(p)


DEFAULT_CONFIG = {"signature": {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "M": "i32"}}
'''


@pytest.mark.parametrize("text", [HANDLES, SLOTS], ids=["handles-in-body", "fp8-3d-slots"])
def test_handles_and_slot_shapes_lower_with_the_verified_barriers(tmp_path, text):
    path = _write(tmp_path, text)
    rc, out = _dump(path)
    assert rc == 0 and "k: verified for every value" in out, out
    gluon = _dump(path, "-q", "--gluon")[1]
    # one init per barrier of each of the two stages, and the waits and arrives of the events
    assert gluon.count("mbarrier.init(") == 4, gluon
    assert gluon.count("mbarrier.wait(") == 2 and gluon.count("mbarrier.arrive(") == 2, gluon
    _barriers_are_the_verified_events(path)


# ------------------------------------------------------------------ warps and registers

@pytest.mark.parametrize("lists", ["[2], [232]", "[8], [24]"], ids=["2-warps", "8-warps-24"])
def test_other_warp_and_register_lists_lower_with_the_verified_barriers(tmp_path, lists):
    text = _kernel(*HELD["twice"]).replace("[4], [232])", f"{lists})")
    path = _write(tmp_path, text)
    gluon = _dump(path, "-q", "--gluon")[1]
    warps, regs = lists.strip("[]").split("], [")
    assert f"], [{warps}], [{regs}])" in gluon, gluon
    # the reader arrives once per partition, the writer's 128 threads each
    assert "mbarrier.init(kv_full0.index(0), count=128)" in gluon, gluon
    assert "mbarrier.init(kv_empty0.index(0), count=1)" in gluon, gluon
    _barriers_are_the_verified_events(path)


@pytest.mark.parametrize("lists, words", [
    ("[3], [232]", "takes a power of two per partition"),
    ("[4], [233]", "is not a multiple of 8 in [24, 256]"),
    ("[4], [260]", "is not a multiple of 8 in [24, 256]"),
])
def test_warp_and_register_lists_triton_refuses_are_refused(tmp_path, lists, words):
    text = _kernel(*HELD["twice"]).replace("[4], [232])", f"{lists})")
    rc, out = _dump(_write(tmp_path, text), "-q")
    assert rc == 1 and words in out, out
