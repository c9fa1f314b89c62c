"""`tle.gpu.scale_rows(x, factor)` (lowering/lazy_scale.py): x * factor[:, None], lowered on a
wgmma accumulator to per-warp inline asm that votes over the warp's rows and branches around its
multiplies when every factor is 1; elsewhere a plain multiply. The CPU emulator runs it as the
multiply; tests/gpu/test_sparse_mla.py checks the skip on the H200 with moving row maxima."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("triton.experimental.gluon")

from tle_compiler.diagnostics import TleError  # noqa: E402
from .tle_snippets import HEADER, TILE_FILL  # noqa: E402
from tle_compiler.lowering import compile_kernel, gluon_source, lazy_scale  # noqa: E402

SRC = HEADER + '''


@tle.jit(num_warps=4)
def rescaled(x_ptr, y_ptr, f_ptr, NT):
    p = tle.pipe(capacity=2, t=tle.gpu.alloc([2, 64, 64], tl.bfloat16))
    tle.gpu.warp_specialize([(fill, (p, x_ptr, NT)), (drain, (p, y_ptr, f_ptr, NT))], [4], [168])


''' + TILE_FILL + '''


def drain(p, y_ptr, f_ptr, NT):
    offs = tl.arange(0, 64)[:, None] * 64 + tl.arange(0, 64)[None, :]
    rows = tl.arange(0, 64)
    r = p.reader()
    acc = tl.zeros([64, 64], tl.float32)
    for i in range(NT):
        res = r.wait(i)
        a = tl.load(tle.gpu.local_ptr(res.slot.t))
        acc = tle.gpu.scale_rows(acc, tl.load(f_ptr + i * 64 + rows))
        acc = tl.dot(a, tl.trans(a), acc)
        r.release(i)
    BLOCKED
    tl.store(y_ptr + offs, acc.to(tl.bfloat16))
'''


def _write(tmp_path, blocked="", name="rescaled.py", src=SRC):
    f = tmp_path / name
    f.write_text(src.replace("BLOCKED", blocked or "pass"))
    return f


def test_pack_only_for_one_16_row_tile_per_warp():
    assert lazy_scale.pack_for(("mma", (4, 1), (16, 256, 16)), (64, 256), "fp32") == 32
    assert lazy_scale.pack_for(("mma", (4, 1), (16, 64, 16)), (64, 64), "float32") == 32
    assert lazy_scale.pack_for(("mma", (4, 1), (16, 8, 16)), (64, 8), "fp32") == 4
    assert lazy_scale.pack_for(("mma", (4, 1), (16, 64, 16)), (128, 64), "fp32") is None  # 2 tiles/warp
    assert lazy_scale.pack_for(("mma", (2, 2), (16, 64, 16)), (32, 128), "fp32") is None  # warps on N
    assert lazy_scale.pack_for(("mma", (4, 1), (16, 64, 16)), (64, 64), "bf16") is None
    assert lazy_scale.pack_for(("blocked", (1, 8), (4, 8), (4, 1), (1, 0)), (64, 64), "fp32") is None


def test_asm_votes_then_branches_around_every_multiply():
    ptx, cons = lazy_scale.asm(8)
    # factors of rows r and r + 8 are the block's 1st and 3rd ($16, $18); outputs tied to inputs
    assert "setp.neu.f32 p, $16, 0f3F800000;" in ptx and "setp.neu.f32 q, $18, 0f3F800000;" in ptx
    assert ptx.index("vote.sync.any.pred") < ptx.index("@!p bra.uni SKIP;") < ptx.index("mul.f32")
    assert [m for m in re.findall(r"mul\.f32 \$(\d+), \$(\d+), \$(\d+);", ptx)] == \
        [(str(i), str(8 + i), str(16 + i)) for i in range(8)]
    assert cons.split(",") == ["=f"] * 8 + [str(i) for i in range(8)] + ["f"] * 8


def test_scale_rows_on_a_wgmma_accumulator_is_the_lazy_helper(tmp_path):
    f = _write(tmp_path)
    gen = gluon_source((str(f), "rescaled"), {}).source
    assert "def _tle_scale_rows_lazy32(x, factor):" in gen
    assert re.search(r"acc = _tle_scale_rows_lazy32\(acc, ", gen.split("def drain(", 1)[1])
    from tle_compiler.frontend import read_kernels

    info = read_kernels(str(f), name="rescaled")[0]
    c = compile_kernel(info, {"x_ptr": "*bf16", "y_ptr": "*bf16", "f_ptr": "*fp32", "NT": "i32"})
    ptx = c.asm["ptx"]
    assert ptx.count("vote.sync.any.pred") == 1  # 64x64 fp32: 32 per thread, one block of 32
    assert ptx.count("mul.f32") >= 32


def test_scale_rows_elsewhere_is_a_plain_multiply(tmp_path):
    # a [64, 32] tile of its own: no wgmma near it, so the solver leaves it a blocked layout
    extra = ("o2 = tl.arange(0, 64)[:, None] * 32 + tl.arange(0, 32)[None, :]\n"
             "    extra = tle.gpu.scale_rows(tl.load(y_ptr + o2).to(tl.float32), tl.load(f_ptr + rows))\n"
             "    tl.store(y_ptr + 4096 + o2, extra.to(tl.bfloat16))")
    gen = gluon_source((str(_write(tmp_path, extra)), "rescaled"), {}).source
    drain = gen.split("def drain(", 1)[1]
    assert drain.count("_tle_scale_rows_lazy32(") == 1          # the accumulator only
    assert re.search(r"extra = \(_v\d+\.to\(gl\.float32\) \* _v\d+\[:, None\]\)", drain)  # x * f


@pytest.mark.parametrize("call,why", [("tle.gpu.scale_rows(acc)", "takes two arguments"),
                                      ("tle.gpu.scale_rows(acc, acc)", "one value per row"),
                                      ("tle.gpu.scale_rows(acc, rows.to(tl.float32) * 0 + 1.0)[0]",
                                       None)])
def test_scale_rows_arguments_are_checked(tmp_path, call, why):
    src = SRC.replace("acc = tle.gpu.scale_rows(acc, tl.load(f_ptr + i * 64 + rows))",
                      f"acc = {call}" if why else "acc = acc")
    f = _write(tmp_path, src=src)
    if why is None:  # control: the plain kernel lowers
        gluon_source((str(f), "rescaled"), {})
        return
    with pytest.raises(TleError, match=why):
        gluon_source((str(f), "rescaled"), {})


def test_emulator_runs_it_as_the_multiply():
    torch = pytest.importorskip("torch")
    from tle_compiler.testing.emulator import make_language

    _tl, tle = make_language()
    x, f = torch.randn(4, 3), torch.tensor([1.0, 2.0, 0.5, -1.0])
    assert torch.equal(tle.gpu.scale_rows(x, f), x * f[:, None])


def test_outside_a_kernel_it_says_so():
    import tle_compiler as tle

    with pytest.raises(TleError, match="scale_rows"):
        tle.gpu.scale_rows(None, None)
