"""After an `if`, a name that one path left a constant and the other assigned anything else is a
runtime value: the lowering must neither fold the constant into later uses nor leave the name
unbound on the path that did not assign it (the scheduled seesaw decode's kernel body,
`x_lo = 0` on one branch of `if BALANCE:` and a computed start on the other, compiled with every
later use of x_lo as the constant 0 before this rule)."""

from __future__ import annotations

import pytest

pytest.importorskip("triton.experimental.gluon")

from .tle_snippets import HEADER, TILE_FILL  # noqa: E402
from tle_compiler.lowering import compile_kernel, gluon_source  # noqa: E402

SRC = HEADER + '''


@tle.jit(num_warps=4)
def start_at(x_ptr, y_ptr, n_ptr, NT, WIDE: tl.constexpr):
    if WIDE:
        base = tl.load(n_ptr)
    else:
        base = 0
    lo = 0
    if NT > 3:
        lo = tl.load(n_ptr + 1)
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, NT)), (drain, (p, y_ptr, NT, base, lo))], [4], [128])


''' + TILE_FILL + '''


def drain(p, y_ptr, NT, base, lo):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    r = p.reader()
    for i in range(NT):
        res = r.wait(i)
        v = tl.load(tle.gpu.local_ptr(res.slot.t))
        r.release(i)
        tl.store(y_ptr + (base + lo + i) * 4096 + offs, v)
'''

SIG = {"x_ptr": "*bf16", "y_ptr": "*bf16", "n_ptr": "*i32", "NT": "i32", "WIDE": "constexpr"}


@pytest.fixture(scope="module")
def kernel_file(tmp_path_factory):
    f = tmp_path_factory.mktemp("if_merge") / "start_at.py"
    f.write_text(SRC)
    return f


@pytest.mark.parametrize("wide", [False, True])
def test_a_name_assigned_on_both_paths_is_passed_not_folded(kernel_file, wide):
    gen = gluon_source((str(kernel_file), "start_at"), {"WIDE": wide}).source
    body = gen.split("def start_at(", 1)[1]
    drain = gen.split("def drain(", 1)[1].split("\n@gluon.jit", 1)[0]
    # neither base nor lo reaches the partition as a constant
    assert "base: gl.constexpr" not in drain and "lo: gl.constexpr" not in drain
    # the `if` without an else binds lo on the path that skips it as well
    assert "lo = " in body.split("if (NT > 3):", 1)[0] or "else:" in body.split("if (NT > 3):", 1)[1]


@pytest.mark.parametrize("wide", [False, True])
def test_it_compiles_for_sm90a(kernel_file, wide):
    """Both paths bind the same generated names with one type: Triton accepts the scf.if."""
    compile_kernel((str(kernel_file), "start_at"), SIG, {"WIDE": wide})
