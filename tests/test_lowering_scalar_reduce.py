"""A whole 1-D tensor reduced over its only axis is a scalar in the lowering: every thread of the
partition holds the same value, so it can drive an `if` (the seesaw's lazy rescale:
`if tl.max((r_new != ref).to(tl.int32), 0) > 0: acc = acc * alpha[:, None]`)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("triton.experimental.gluon")

from .tle_snippets import HEADER, TILE_FILL  # noqa: E402
from tle_compiler.lowering import compile_kernel, gluon_source  # noqa: E402

SRC = HEADER + '''


@tle.jit(num_warps=4)
def lazy_scale(x_ptr, y_ptr, NT):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, NT)), (drain, (p, y_ptr, NT))], [4], [128])


''' + TILE_FILL + '''


def drain(p, y_ptr, NT):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = p.reader()
    ref = tl.full([64], float("-inf"), tl.float32)
    acc = tl.zeros([64, 64], tl.float32)
    for i in range(NT):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t)).to(tl.float32)
        r.release(i)
        m = tl.maximum(ref, tl.max(v, 1))
        if tl.max((m != ref).to(tl.int32), 0) > 0:
            acc = acc * tl.exp2(ref - m)[:, None]
        acc = acc + tl.exp2(v - m[:, None])
        ref = m
    tl.store(y_ptr + offs, acc.to(tl.bfloat16))
'''


@pytest.fixture(scope="module")
def kernel_file(tmp_path_factory):
    f = tmp_path_factory.mktemp("scalar_reduce") / "lazy_scale.py"
    f.write_text(SRC)
    return f


def test_full_reduction_is_a_scalar_condition(kernel_file):
    gen = gluon_source((str(kernel_file), "lazy_scale"), {}).source
    drain = gen.split("def drain(", 1)[1]
    # the row max stays a tensor (axis 1 of a 2-D tensor); the flag is a scalar `if`
    assert re.search(r"m = gl\.maximum\(ref, gl\.max\(v, 1\)\)", drain)
    assert re.search(r"\n\s+if \(gl\.max\(\(m != ref\)\.to\(gl\.int32\), 0\) > 0\):\n", drain)


def test_full_reduction_condition_compiles(kernel_file):
    from tle_compiler.frontend import read_kernels

    info = read_kernels(str(kernel_file), name="lazy_scale")[0]
    c = compile_kernel(info, {"x_ptr": "*bf16", "y_ptr": "*bf16", "NT": "i32"})
    assert "ttg.warp_specialize" in c.asm["ttgir"]
    assert re.search(r"scf\.if", c.asm["ttgir"])  # the branch survived as control flow


def test_reduction_of_a_2d_tensor_over_one_axis_is_still_a_tensor(tmp_path):
    """`if tl.max(v, 1) > 0` stays an error: a 2-D tensor reduced over one axis is a tensor."""
    from tle_compiler.diagnostics import TleError

    f = tmp_path / "bad.py"
    f.write_text(SRC.replace("if tl.max((m != ref).to(tl.int32), 0) > 0:", "if tl.max(v, 1) > 0:"))
    with pytest.raises(TleError, match="an `if` condition must be a scalar"):
        gluon_source((str(f), "lazy_scale"), {})


def test_a_1d_reduction_over_a_missing_axis_is_an_error(tmp_path):
    f = tmp_path / "bad_axis.py"
    f.write_text(SRC.replace("if tl.max((m != ref).to(tl.int32), 0) > 0:",
                             "if tl.max((m != ref).to(tl.int32), 1) > 0:"))
    from tle_compiler.diagnostics import TleError

    with pytest.raises(TleError, match="1-D tensor: axis must be 0"):
        gluon_source((str(f), "lazy_scale"), {})
