"""``a if c else b`` in a partition on a runtime condition (lowering/translate.conditional).

The frontend verifies such a kernel (a conditional expression holds no pipe event) and folds one
on a compile-time condition. The lowering emits Gluon's own conditional expression for scalar
operands, which Triton compiles to an ``scf.if`` that evaluates the chosen operand only (a scalar
load in the other operand does not run); it refuses, naming what to write instead, tensor
operands (their layouts would have to agree) and a tensor condition. Before, every runtime
conditional expression was verified and then refused by the lowering ("`ifexp` is not
supported")."""

from __future__ import annotations

import re

import pytest

from tle_compiler.diagnostics import TleError

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.lowering import compile_kernel  # noqa: E402
from tle_compiler.lowering.compile import gluon_source  # noqa: E402

KERNEL = '''
import triton.language as tl
import tle_compiler as tle


@tle.jit(num_warps=4)
def k(x_ptr, y_ptr, N, M):
    ch = tle.pipe(capacity=2, x=tle.gpu.alloc([2, 64], tl.float32))
    tle.gpu.warp_specialize([(fill, (ch, x_ptr, N, M)), (drain, (ch, y_ptr, N))], [4], [232])


def fill(ch, x_ptr, N, M):
    w = ch.writer()
    offs = tl.arange(0, 64)
    for i in range(N):
        v = VALUE
        slot = w.acquire(i)
        tl.store(tle.gpu.local_ptr(slot.x), v)
        w.commit(i)


def drain(ch, y_ptr, N):
    rd = ch.reader()
    offs = tl.arange(0, 64)
    for i in range(N):
        res = rd.wait(i)
        tl.store(y_ptr + i * 64 + offs, tl.load(tle.gpu.local_ptr(res.slot.x)))
        rd.release(i)
'''
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": "i32", "M": "i32"}
ROW = "tl.load(x_ptr + i * 64 + offs)"


def _path(tmp_path, value):
    path = tmp_path / "k.py"
    path.write_text(KERNEL.replace("VALUE", value))
    return str(path)


def _fill(path):
    src = gluon_source((path, "k")).source
    start = src.index("def fill(")
    return src[start:src.index("@gluon.jit", start)]


def test_a_scalar_conditional_expression_is_gluons_own(tmp_path):
    path = _path(tmp_path, f"{ROW} * (2 if i > M else 1)")
    assert "(2 if (i > M) else 1)" in _fill(path)
    ttgir = compile_kernel((path, "k"), SIGNATURE).asm["ttgir"]
    assert re.search(r"scf\.if %\w+ -> \(i32\)", ttgir), ttgir


def test_a_scalar_load_runs_only_when_chosen(tmp_path):
    """The load stays inside the expression, not hoisted to a statement before it (which would
    read x_ptr whichever operand is chosen)."""
    path = _path(tmp_path, f"{ROW} * (tl.load(x_ptr) if i < M else 0.0)")
    fill = _fill(path)
    assert "(gl.load(x_ptr) if (i < M) else 0.0)" in fill, fill
    assert fill.count("gl.load(x_ptr)") == 1, fill
    ttgir = compile_kernel((path, "k"), SIGNATURE).asm["ttgir"]
    assert re.search(r"scf\.if %\w+ -> \(f32\)", ttgir), ttgir


@pytest.mark.parametrize("value,where", [
    (f"{ROW} if i < M else tl.zeros([64], tl.float32)", "tl.load(x_ptr"),
    (f"{ROW} * (1.0 if offs < M else 2.0)", "1.0 if"),
])
def test_tensor_operands_or_conditions_are_refused_naming_tl_where(tmp_path, value, where):
    path = _path(tmp_path, value)
    with pytest.raises(TleError) as e:
        gluon_source((path, "k"))
    assert "tl.where(c, x, y)" in str(e.value), str(e.value)
    line = KERNEL.splitlines().index("        v = VALUE") + 1
    assert e.value.loc.line == line, (e.value.loc, line)
